"""The verification scheduler: ask the scholarly sources about entries, cheapest first.

Each entry goes its own way through the plan (``verify/plan.py``), as soon as its own
answers allow, never waiting for another entry's:

1. An entry with identifiers (DOI, arXiv id, PMID, S2 id / CorpusId) asks Semantic
   Scholar's ``/paper/batch``; an identifier S2 does not resolve to the entry's paper goes
   down its chain: OpenAlex (DOIs), Crossref and doi.org (one per DOI), arXiv, PubMed.
   A found paper whose verdict depends on its other versions (``verdict.wants_versions``)
   gets them by its identifiers (OpenAlex, Crossref, arXiv) before any title search.
2. An entry still unresolved (title only, identifiers that resolve nowhere, versions that
   did not settle it) goes to the title tiers: OpenAlex and Crossref search, S2's title
   match (S2's search when those failed), PubMed for biomedical-looking entries. Each host
   has a queue of entries by priority (cited first) and takes the next one as soon as its
   rate limiter lets it, so slow S2 (1 request/s) never holds up the others.
3. Its verdict (:func:`citelens.verify.verdict.decide`, a pure function of the entry and
   the answers read in plan order) is recorded, and handed to ``on_verdict``, at once;
   a paper S2 alone matched first gets its retraction signal (Crossref, else OpenAlex).

Requests by identifier are batched across entries (:class:`_Batcher`): the values of
every entry wait while their host has no free slot and leave together, up to the tier's
batch size, so N entries that need arXiv versions cost ⌈N/100⌉ requests, and an entry
waits for its host's next slot, not for the other entries. Every answer goes through the
cache (:mod:`citelens.verify.cache`), so a second run over an unchanged bibliography
sends no request at all.

:func:`verify_entries` runs a fixed set of entries under one deadline
(``verifyDeadlineS``); :class:`VerifyStream` takes entries as they come (a venue's papers),
every host working on all of them at its own rate.
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.snapshot.store import Snapshot
from citelens.sources.records import Lookup, Outcome
from citelens.sources.transport import Sources
from citelens.verify import offline, plan, retraction
from citelens.verify import snapshot as snapshot_tier
from citelens.verify.cache import VerificationCache, default_cache_dir, lookup_key, open_cache
from citelens.verify.identity import Identifiers, content_hash, identifiers
from citelens.verify.status import Verification
from citelens.verify.verdict import (
    Asked,
    deadline_reached,
    decide,
    for_entry,
    identifier_hits,
    internal_error,
    same_paper,
    wants_versions,
)

Log = Callable[[str], None]
Progress = Callable[[int, int], None]
#: Called with each verdict as soon as it is decided (the editor publishes it at once).
OnVerdict = Callable[[Verification], None]
Answer = tuple[Lookup, bool]  # a lookup's answer, and whether it came from the cache

#: Runs of at least this many entries read the cache's keys once (VerificationCache.remember_keys).
_REMEMBER_KEYS_FROM = 1000
#: A batch request that failed as a whole is asked again in halves, this many levels deep.
_BATCH_SPLITS = 2
#: A batched tier whose host is asked at most every this many seconds (arXiv: 3.3 s) holds
#: its first value a quarter of that spacing (at most ``_LINGER_MAX_S``) for others to join:
#: a request that leaves with one id uses a slot that could have carried a hundred.
_LINGER_FROM_S = 2.0
_LINGER_MAX_S = 1.0
#: While its host is busy (its next slot not free yet), a batch not yet full waits for more
#: values up to this long from its oldest: a host kept busy by other requests (a venue's
#: title searches) spends a slot on 50 DOIs, not on the two that came meanwhile. A check
#: (the editor, ``citelens check``) waits 1 s at most; a venue's stream, where the hosts'
#: throughput is the run's bound and no one watches one entry, 10 s (at 100,000 references
#: Crossref's DOI filters left with 5 DOIs each: 1,248 requests, 16% of its slots).
_HOLD_BUSY_S = 1.0
_HOLD_BUSY_STREAM_S = 10.0


def _no_log(_message: str) -> None:
    return None


# ====================================================================== the run


@dataclass(slots=True, eq=False)
class _Entry:
    index: int
    view: EntryView
    ids: Identifiers
    chash: str
    settled: asyncio.Future[Verification]  # its verdict, once recorded
    asked: list[Asked] = field(default_factory=list)  # identifier lookups and versions
    #: title tier -> its answer (and the full version it fetched), whenever it came
    titles: dict[plan.Tier, list[Asked]] = field(default_factory=dict)
    #: the title tiers whose answers the verdict reads, in plan order (plan.next_title_step)
    read: tuple[plan.Tier, ...] = ()
    #: host -> the title tier it is asked (in the host's queue, or on its way)
    asking: dict[str, plan.Tier] = field(default_factory=dict)
    candidates_only: bool = False  # its own paper is looked for (for "Replace with")
    #: found by an identifier, in the pool for the paper's other versions (verdict.wants_versions)
    found_by_id: bool = False
    versions_asked: bool = False  # the found paper's records by its other identifiers were asked
    verdict: Verification | None = None  # decided from the answers read when they settled it
    waiting: Verification | None = None  # decided, waiting for its retraction signal
    task: asyncio.Task[None] | None = None  # its way through the plan
    done: bool = False  # decided (perhaps still waiting for its retraction signal)

    def answers(self) -> list[Asked]:
        """What the verdict reads: the identifier lookups, then the title answers read in
        plan order (an answer that came early from a later tier is not read)."""
        return self.asked + [a for t in self.read for a in self.titles[t]]

    def everything(self) -> list[Asked]:
        """Every answer collected so far (the audit of an entry the deadline cut off)."""
        return self.asked + [a for got in self.titles.values() for a in got]


class _Batcher:
    """The lookups of one batched tier (S2's batch, OpenAlex's DOIs, arXiv, PubMed,
    Crossref's DOIs), from every entry, coalesced: a value waits while the tier's host has
    no free slot, then leaves with every value waiting then (``tier.batch`` per request).
    A value asked while it waits or is on its way is not asked again."""

    def __init__(self, run: _Run, tier: plan.IdTier) -> None:
        self.run = run
        self.tier = tier
        self.host = run.sources.hosts().get(tier.host)
        self.futures: dict[str, asyncio.Future[Answer]] = {}  # asked, not answered yet
        self.unread: dict[str, None] = {}  # a database's cache: not read yet (read together)
        self.waiting: dict[str, None] = {}  # to ask the host, in the order asked
        self.since = 0.0  # when the oldest value waiting was asked
        spacing = self.host.rate.min_interval_s if self.host is not None else 0.0
        self.linger = min(spacing / 4, _LINGER_MAX_S) if spacing >= _LINGER_FROM_S else 0.0
        self.wake = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    def key(self, value: str) -> str:
        return lookup_key(self.tier.source, self.tier.kind, value)

    async def ask(self, value: str) -> Answer:
        run = self.run
        fut = self.futures.get(value)
        if fut is None:
            if not run.cache.remote:
                hit = run.cache.get(self.key(value))
                if hit is not None:
                    return hit, True
                if run.settings.offline:
                    return run.offline_answer(self.tier.source, self.tier.method), False
                self._wait(value)
            else:
                self.unread[value] = None
            fut = asyncio.get_running_loop().create_future()
            self.futures[value] = fut
            self.wake.set()
            if self.task is None or self.task.done():
                self.task = run.spawn(self._send())
        return await asyncio.shield(fut)

    def _answer(self, value: str, answer: Answer) -> None:
        fut = self.futures.pop(value, None)
        if fut is not None and not fut.done():
            fut.set_result(answer)

    async def _moment(self) -> None:
        """Let the values asked in this same moment (entries woken by one answer) join."""
        for _ in range(8):
            n = len(self.unread) + len(self.waiting)
            await asyncio.sleep(0)
            if len(self.unread) + len(self.waiting) == n:
                return

    async def _read_cache(self) -> None:
        """A database's cached answers of the values asked, read in one statement."""
        values, self.unread = list(self.unread), {}
        hits = await self.run.cache_many([self.key(v) for v in values])
        for v in values:
            hit = hits.get(self.key(v))
            if hit is not None:
                self._answer(v, (hit, True))
            elif self.run.settings.offline:
                self._answer(v, (self.run.offline_answer(self.tier.source, self.tier.method), False))
            else:
                self._wait(v)

    def _wait(self, value: str) -> None:
        if not self.waiting:
            self.since = time.monotonic()
        self.waiting[value] = None

    async def _send(self) -> None:
        tier = self.tier
        call = functools.partial(tier.ask, self.run.sources)
        while True:
            if not self.unread and not self.waiting:
                self.wake.clear()
                await self.wake.wait()
            await self._moment()
            part: list[str] = []
            try:
                if self.unread:
                    await self._read_cache()
                wait = self.host.next_slot_in() if self.host is not None else 0.0
                if len(self.waiting) < tier.batch:
                    hold = max(self.linger, self.run.hold_busy_s if wait > 0 else 0.0)
                    wait = max(wait, self.since + hold - time.monotonic())
                if self.waiting and wait > 0:
                    await asyncio.sleep(wait)  # more values join while the host is busy
                    if self.unread:
                        await self._read_cache()
                part = list(itertools.islice(self.waiting, tier.batch))
                for v in part:
                    del self.waiting[v]
                if not part:
                    continue
                got = await self.run.batch(tier.source, tier.method, call, part, _BATCH_SPLITS)
                await self.run.cache_put({self.key(v): a for v, a in got.items()})
                for v in part:
                    self._answer(v, (got[v], False))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # never leave an entry waiting for an answer
                why = f"internal error: {type(exc).__name__}"
                for v in [*part, *self.unread, *self.waiting]:
                    self._answer(v, (Lookup(tier.source, tier.method, Outcome.FAILED, [], why), False))
                self.unread, self.waiting = {}, {}


class _Run:
    """The entries being verified and the request plan's state: per-host title queues,
    a batcher per batched tier, the title workers. Entries join with :meth:`verify` (one
    call for :func:`verify_entries`, many for a :class:`VerifyStream`)."""

    def __init__(
        self,
        settings: Settings,
        sources: Sources,
        cache: VerificationCache,
        log: Log,
        progress: Progress | None = None,
        on_verdict: OnVerdict | None = None,
        snapshot: Snapshot | None = None,
    ) -> None:
        self.settings = settings
        self.snapshot = snapshot
        self.snapshot_answered = 0  # entries the snapshot settled (no request)
        self.on_verdict = on_verdict
        self.sources = sources
        self.cache = cache
        self.log = log
        self.progress = progress
        self.now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        self._index = itertools.count()
        self.live: dict[tuple[str, str], _Entry] = {}  # (key, content hash) -> entry not decided yet
        self.total = 0  # entries joined
        self.recorded = 0  # of those, with a verdict
        self._offline_answers: dict[tuple[str, str], Lookup] = {}
        self.queues: dict[str, list[tuple[int, _Entry]]] = {}  # host -> heap by priority
        self._ready: dict[str, asyncio.Condition] = {}  # host -> its queue got an entry
        self.batchers: dict[plan.IdTier, _Batcher] = {}
        self._inflight: dict[str, asyncio.Future[Answer]] = {}  # single lookups on their way
        self.tasks: set[asyncio.Task[Any]] = set()  # everything this run started
        self.fewer = asyncio.Event()  # set as verdicts are recorded (VerifyStream.fewer_than)
        self._workers = False
        self.hold_busy_s = _HOLD_BUSY_S  # (a venue's stream holds longer: VerifyStream)

    # ------------------------------------------------------------------ tasks

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """A task of this run: cancelled by :meth:`close`."""
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def _start_workers(self) -> None:
        if self._workers:
            return
        self._workers = True
        hosts = self.sources.hosts()
        for name in plan.TITLE_HOSTS:
            h = hosts.get(name)
            n = max(1, min(4, h.rate.max_concurrency)) if h is not None else 1
            for _ in range(n):
                self.spawn(self.title_worker(name))

    async def close(self) -> None:
        """Stop every task of the run (workers, batchers, entries still on their way)."""
        tasks = list(self.tasks)
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------------ helpers

    def _verdict(self, e: _Entry, asked: list[Asked], signal: Asked | None = None) -> Verification:
        """:func:`decide` on ``asked`` (and the retraction ``signal``); never raises (an
        error is an UNVERIFIED verdict)."""
        try:
            return decide(
                e.view, asked, self.settings, chash=e.chash, checked_at=self.now, ids=e.ids, signal=signal
            )
        except Exception as exc:
            return self._internal_error(e, exc)

    def _internal_error(self, e: _Entry, exc: Exception) -> Verification:
        """The verdict on ``e`` when deciding it raised ``exc``: UNVERIFIED, never lost."""
        return internal_error(
            e.view.key, exc, chash=e.chash, checked_at=self.now, informational=plan.is_informational(e.view)
        )

    def finish(self, e: _Entry, v: Verification | None = None) -> None:
        """Decide ``e`` (``v``: already decided from ``e.answers()``) and record the verdict,
        once its retraction signal is in when it needs one."""
        if e.done:
            return
        e.done = True
        if v is None:
            v = self._verdict(e, e.answers())
        v = self._signalled(e, v)
        if v is not None:
            self.record(e, v)

    def _signalled(self, e: _Entry, v: Verification, doi: str | None = None) -> Verification | None:
        """``v`` decided again with its cached retraction signal, or ``v`` when it needs
        none, or None: the signal is asked for, and the verdict recorded when it comes
        (``doi``: the one to ask about, when the caller knows better than its records)."""
        doi = doi or retraction.signal_doi(v)
        if doi is None:
            return v
        if not self.cache.remote:  # (a database's: read in batches, off the loop)
            hit = None
            for tier in plan.signal_tiers(doi):
                hit = self.cache.get(lookup_key(tier.source, tier.kind, doi))
                if hit is None or hit.outcome is Outcome.FOUND:
                    break
            if hit is not None:
                return self._verdict(e, e.answers(), Asked(hit, None, doi, True))
            if self.settings.offline:
                return v
        e.waiting = v
        self.spawn(self._signal(e, v, doi))
        return None

    def record(self, e: _Entry, v: Verification) -> None:
        """The one place a verdict is recorded (decided, cut off by the deadline, signalled)."""
        if e.settled.done():
            return
        e.done = True
        e.waiting = None
        e.settled.set_result(v)
        if self.live.get((e.view.key, e.chash)) is e:
            del self.live[(e.view.key, e.chash)]
            self.fewer.set()
        self.recorded += 1
        if self.on_verdict is not None:
            try:
                self.on_verdict(v)
            except Exception:
                pass
        if self.progress is not None:
            try:
                self.progress(self.recorded, self.total)
            except Exception:
                pass

    def offline_answer(self, source: str, method: str) -> Lookup:
        """The answer of a source not asked (offline): one per source and method."""
        lk = self._offline_answers.get((source, method))
        if lk is None:
            lk = Lookup(source, method, Outcome.UNAVAILABLE, [], "offline: not in the cache")
            self._offline_answers[(source, method)] = lk
        return lk

    async def _guard(self, source: str, method: str, call: Awaitable[Lookup]) -> Lookup:
        try:
            return await call
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return Lookup(source, method, Outcome.FAILED, [], f"internal error: {type(exc).__name__}")

    async def one(
        self, key: str, source: str, method: str, call: Callable[[], Awaitable[Lookup]]
    ) -> Answer:
        """One cached lookup: (answer, came from the cache). The same lookup on its way for
        another entry is awaited, not asked again."""
        mine = self._inflight.get(key)
        if mine is not None:
            return await asyncio.shield(mine)
        hit = await self._cache_get(key)
        if hit is not None:
            return hit, True
        if self.settings.offline:
            return self.offline_answer(source, method), False
        mine = self._inflight.get(key)  # (asked meanwhile, while the cache was read)
        if mine is not None:
            return await asyncio.shield(mine)
        fut: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._inflight[key] = fut
        try:
            answer = await self._guard(source, method, call())
            await self.cache_put({key: answer})
            fut.set_result((answer, False))
        finally:
            del self._inflight[key]
            if not fut.done():
                fut.cancel()
        return answer, False

    async def batched(self, tier: plan.IdTier, value: str) -> Answer:
        """One value of a batched tier, asked together with every other entry's."""
        b = self.batchers.get(tier)
        if b is None:
            b = self.batchers[tier] = _Batcher(self, tier)
        return await b.ask(value)

    async def _cache_get(self, key: str) -> Lookup | None:
        """A cached answer; a database's read is made in a thread, off the event loop."""
        if self.cache.remote:
            return await asyncio.to_thread(self.cache.get, key)
        return self.cache.get(key)

    async def cache_many(self, keys: Sequence[str]) -> dict[str, Lookup]:
        """Cached answers of ``keys``: a database's in one statement, in a thread."""
        if self.cache.remote:
            return await asyncio.to_thread(self.cache.get_many, keys)
        return {k: hit for k in keys if (hit := self.cache.get(k)) is not None}

    async def cache_put(self, answers: Mapping[str, Lookup]) -> None:
        if self.cache.remote:
            await asyncio.to_thread(self.cache.put_many, answers)
        else:
            self.cache.put_many(answers)

    async def batch(
        self,
        source: str,
        method: str,
        call: Callable[[list[str]], Awaitable[Mapping[str, Lookup]]],
        part: list[str],
        splits: int,
    ) -> dict[str, Lookup]:
        """One batch request. A batch that failed as a whole (every value FAILED after the
        transport's retries, the host not down) is split in two and each half asked again,
        ``splits`` levels deep: one bad answer never drops a hundred entries."""
        try:
            answers = dict(await call(part))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            answers = {
                v: Lookup(source, method, Outcome.FAILED, [], f"internal error: {type(exc).__name__}")
                for v in part
            }
        lowered = {k.lower(): a for k, a in answers.items()}
        got = {
            v: answers.get(v)
            or lowered.get(v.lower())
            or Lookup(source, method, Outcome.FAILED, [], "no answer for this id")
            for v in part
        }
        if splits > 0 and len(part) > 1 and all(a.outcome is Outcome.FAILED for a in got.values()):
            half = len(part) // 2
            got = {
                **await self.batch(source, method, call, part[:half], splits - 1),
                **await self.batch(source, method, call, part[half:], splits - 1),
            }
        return got

    def _after_ids(self, e: _Entry) -> plan.AfterIds:
        """What the identifier answers settle (plan.after_identifiers), from the fields
        resolving to the entry's paper and those a source resolved to another paper."""
        same_fields: set[str] = set()
        conflict_fields: set[str] = set()
        for _a, f, _rec, other_paper in identifier_hits(e.view, e.asked, self.settings):
            (conflict_fields if other_paper else same_fields).add(f)
        return plan.after_identifiers(same_fields, conflict_fields)

    def _needs(self, e: _Entry, f: str) -> bool:
        """Whether identifier ``f`` of ``e`` still needs another source (plan.chain_needs):
        read from S2's batch and ``f``'s own chain only, never from another identifier's
        chain running at the same time (which one answers first is timing)."""
        same = False
        conflicts: set[str] = set()
        found_by_batch = False
        for a, g, _rec, other_paper in identifier_hits(e.view, e.asked, self.settings):
            batch = a.lookup.method == plan.FIRST_ID_TIER.method
            if batch and not other_paper:
                found_by_batch = True
            if g != f:
                continue
            if other_paper:
                conflicts.add(a.lookup.source)
            else:
                same = True
        has_value = bool(getattr(e.ids, f))
        return plan.chain_needs(
            has_value=has_value, same=same, conflicts=len(conflicts), found_by_batch=found_by_batch
        )

    # ------------------------------------------------------------------ one entry's way

    async def _flow(self, e: _Entry) -> None:
        """``e``'s way through the plan: its identifiers, then (when they do not settle it)
        its title; its verdict is recorded as soon as its own answers settle it."""
        try:
            if not e.view.title.strip() and e.view.printed is None:
                self.finish(e)
            elif not e.ids:
                await self.add_to_pool(e)
            else:
                await self._by_identifiers(e)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.record(e, self._internal_error(e, exc))

    async def _by_identifiers(self, e: _Entry) -> None:
        """S2's batch, each identifier's chain (at the same time), the found paper's other
        versions; then the verdict, or the title tiers."""
        pairs = plan.FIRST_ID_TIER.values(e.ids)
        got = await asyncio.gather(*(self.batched(plan.FIRST_ID_TIER, bid) for _f, bid in pairs))
        e.asked += [Asked(lk, f, bid, cached) for (f, bid), (lk, cached) in zip(pairs, got, strict=True)]
        await asyncio.gather(*(self._chain(e, chain) for chain in plan.ID_CHAINS))
        await self._other_versions(e)
        after = self._after_ids(e)
        if after.titles:
            await self.add_to_pool(e, candidates_only=after.candidates_only)
            return
        v = self._verdict(e, e.answers())
        if wants_versions(v):
            # the cheapest versions first: the paper's own identifiers, batched, before any
            # title search; the title tiers only when they do not settle it
            if await self._id_versions(e, v):
                v = self._verdict(e, e.answers())
            if wants_versions(v):
                await self.add_to_pool(e, found_by_id=True)
                return
        self.finish(e, v)

    async def _chain(self, e: _Entry, chain: Sequence[plan.IdTier]) -> None:
        """The tiers of one identifier, one after the other, while ``e`` still needs another
        source for it (:meth:`_needs`)."""
        for tier in chain:
            f = tier.field or ""
            if not self._needs(e, f):
                return
            values = [value for _f, value in tier.values(e.ids)]
            if not values:
                continue
            if tier.batch == 1:
                got = await asyncio.gather(*(self._each(tier, v) for v in values))
            else:
                got = await asyncio.gather(*(self.batched(tier, v) for v in values))
            e.asked += [Asked(lk, f, v, cached) for v, (lk, cached) in zip(values, got, strict=True)]

    async def _each(self, tier: plan.IdTier, value: str) -> Answer:
        """A lookup by a tier of batch 1 (one request per value)."""

        async def ask() -> Lookup:
            return (await tier.ask(self.sources, [value]))[value]

        return await self.one(lookup_key(tier.source, tier.kind, value), tier.source, tier.method, ask)

    async def _other_versions(self, e: _Entry) -> None:
        """More versions of the paper found by an identifier (plan.identifier_versions),
        batched with every other entry's; offline, what the cache holds."""
        if not self._after_ids(e).versions:
            return
        records = [
            r
            for a in e.asked
            if a.field is not None and a.lookup.outcome is Outcome.FOUND
            for r in a.lookup.records[:1]
        ]
        asked = {a.lookup.source for a in e.asked}
        await self._ask_versions(e, plan.identifier_versions(e.view, e.ids, records, asked))

    async def _id_versions(self, e: _Entry, v: Verification) -> bool:
        """The found paper's records by its other identifiers (plan.version_lookups). True
        when an answer was added (the verdict is then decided anew)."""
        records = [r for r in (v.match, *v.versions) if r is not None]
        have = {(a.lookup.source, a.value.lower()) for a in e.everything()}
        return await self._ask_versions(e, plan.version_lookups(e.ids, records, have))

    async def _ask_versions(self, e: _Entry, wanted: Sequence[plan.VersionAsk]) -> bool:
        """Ask each tier about its values, batched with other entries', and add the answers
        to ``e`` as versions (in the plan's table order); True when one was added."""
        wanted = list(dict.fromkeys(wanted))
        if not wanted:
            return False
        got = await asyncio.gather(*(self.batched(tier, value) for tier, value in wanted))
        added = False
        for tier in plan.VERSION_TIERS:
            for (t, value), (lk, cached) in zip(wanted, got, strict=True):
                if t is tier and (cached or not self.settings.offline):
                    e.asked.append(Asked(lk, None, value, cached))  # a version, not the cited id
                    added = True
        return added

    # ------------------------------------------------------------------ retraction signal

    async def _signal(self, e: _Entry, v: Verification, doi: str) -> None:
        """Ask about the paper S2 alone matched (Crossref for the DOIs it registers:
        ``updated-by`` names every notice, also Retraction Watch's; OpenAlex's
        ``is_retracted`` for the others and for what Crossref could not answer), batched
        with other entries'; then record the verdict decided with it (``v`` without it,
        if the check failed)."""
        try:
            for tier in plan.signal_tiers(doi):
                lk, cached = await self.batched(tier, doi)
                if lk.outcome is Outcome.FOUND:
                    break
            if self.settings.offline and not cached:  # (a database's cache had no signal)
                self.record(e, v)
                return
            v = decide(
                e.view,
                e.answers(),
                self.settings,
                chash=e.chash,
                checked_at=self.now,
                ids=e.ids,
                signal=Asked(lk, None, doi, cached),
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never lose a verdict over its retraction check
            self.log(f"citelens: retraction check failed: {type(exc).__name__}")
        self.record(e, v)

    # ------------------------------------------------------------------ title tiers

    async def add_to_pool(
        self, e: _Entry, *, candidates_only: bool = False, found_by_id: bool = False
    ) -> None:
        e.candidates_only = candidates_only
        e.found_by_id = found_by_id
        e.titles = {}
        if found_by_id and not self.settings.offline:
            # its versions did not settle it: the title tiers it reads whatever they answer
            # are asked at once (still read in plan order), so a slow host (S2's match at
            # 1/s) is not asked only after the others answered
            tiers = plan.title_tiers_read(e.view)
            hosts = {t.host for t in tiers[:1]}
            for tier in tiers[1:]:
                if tier.host in hosts:
                    continue  # one tier of a host at a time (a PDF's reference: two of Crossref's)
                hosts.add(tier.host)
                if await self._cache_get(plan.title_cache_key(tier, e.view)) is None:
                    await self._queue(e, tier)
        await self._advance(e)

    def _settled(self, e: _Entry, read: tuple[plan.Tier, ...]) -> bool:
        """Whether the title answers ``read`` (in plan order) settle the entry: the paper was
        found with confidence (by an identifier, or by one of them), and no warning is left
        that another version could explain (verdict.wants_versions). For a mismatched
        identifier: one of them found the entry's own paper (whichever tier holds it, so
        its class does not depend on the plan's order)."""
        if e.candidates_only:
            return self._found(e, read)
        same = functools.partial(same_paper, e.view, settings=self.settings)
        confident = any(plan.confident(e.view, a.lookup, same) for t in read for a in e.titles[t])
        if not (e.found_by_id or confident):
            return False
        v = self._verdict(e, e.asked + [a for t in read for a in e.titles[t]])
        if not plan.titles_settle(found_by_id=e.found_by_id, confident_answer=confident,
                                  wants_versions=wants_versions(v)):
            return False
        e.verdict = v
        return True

    def _found(self, e: _Entry, read: tuple[plan.Tier, ...]) -> bool:
        """Whether the entry's paper was found (by an identifier, or in the title answers
        ``read``): then OpenAlex's priced title search is not asked for it."""
        if e.found_by_id:
            return True
        return any(
            same_paper(e.view, r, self.settings)
            for t in read
            for a in e.titles[t]
            if a.lookup.outcome is Outcome.FOUND
            for r in a.lookup.records
        )

    async def _answered(self, e: _Entry, tier: plan.Tier, answer: Lookup, cached: bool) -> None:
        extra = await self._full_version(e, answer)
        e.titles[tier] = [Asked(answer, None, e.view.title, cached), *([extra] if extra else [])]

    async def _advance(self, e: _Entry) -> None:
        """Read the entry's title answers in plan order (plan.next_title_step): decide it when
        they settle it or none is left, else answer the next tier from the cache (offline:
        unavailable) or put the entry in that tier's host queue."""
        while not e.done:
            step = plan.next_title_step(
                e.view,
                {t: got[0].lookup for t, got in e.titles.items()},
                functools.partial(self._settled, e),
                functools.partial(self._found, e),
            )
            e.read = step.read
            tier = step.ask
            if step.settled and not e.candidates_only:
                self.finish(e, e.verdict)
                return
            if tier is None:
                if not e.versions_asked and not e.candidates_only:
                    e.versions_asked = True
                    v = self._verdict(e, e.answers())
                    if wants_versions(v) and await self._id_versions(e, v):
                        continue
                self.finish(e)
                return
            if e.asking.get(tier.host) is tier:
                return  # asked already: its answer advances the entry
            hit = await self._cache_get(plan.title_cache_key(tier, e.view))
            if hit is not None:
                await self._answered(e, tier, hit, True)
            elif self.settings.offline and e.found_by_id:  # versions: what the cache holds
                self.finish(e)
                return
            elif self.settings.offline:  # no worker would ask anyone
                e.titles[tier] = [Asked(self.offline_answer(tier.host, tier.name), None, e.view.title)]
            else:
                await self._queue(e, tier)
                return

    async def _queue(self, e: _Entry, tier: plan.Tier) -> None:
        """Put ``e`` in ``tier``'s host queue, by priority."""
        e.asking[tier.host] = tier
        ready = self._ready_of(tier.host)
        async with ready:
            heapq.heappush(self.queues.setdefault(tier.host, []), (e.index, e))
            ready.notify()

    def _ready_of(self, host: str) -> asyncio.Condition:
        ready = self._ready.get(host)
        if ready is None:
            ready = self._ready[host] = asyncio.Condition()
        return ready

    def _pick(self, host: str) -> _Entry | None:
        """The first entry (by priority) waiting for a tier of ``host``."""
        queue = self.queues.get(host)
        while queue:
            e = heapq.heappop(queue)[1]
            if not e.done and host in e.asking:
                return e
        return None

    async def _full_version(self, e: _Entry, answer: Lookup) -> Asked | None:
        """The record ``plan.full_version`` names for a title answer (a paper found only under
        a title its index cut off), batched with other entries'."""
        if e.candidates_only:
            return None
        same = functools.partial(same_paper, e.view, settings=self.settings)
        wanted = plan.full_version(e.view, answer, same, {(a.lookup.source, a.value) for a in e.asked})
        if wanted is None:
            return None
        tier, ax = wanted
        lk, cached = await self.batched(tier, ax)
        return Asked(lk, None, ax, cached) if cached or not self.settings.offline else None

    async def title_worker(self, host: str) -> None:
        """Asks ``host``'s title tiers, entry after entry by priority. An entry waits in one
        queue at a time (its next tier's), so each entry's answers come in plan order while
        every host works on other entries at the same time."""
        ready = self._ready_of(host)
        while True:
            async with ready:
                while (e := self._pick(host)) is None:
                    await ready.wait()
                tier = e.asking[host]
            try:
                lk, cached = await self.one(
                    plan.title_cache_key(tier, e.view),
                    tier.host,
                    tier.name,
                    functools.partial(tier.ask, self.sources, e.view),
                )
                await self._answered(e, tier, lk, cached)
                if e.asking.get(host) is tier:
                    del e.asking[host]
                await self._advance(e)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.record(e, self._internal_error(e, exc))

    # ------------------------------------------------------------------ entries join

    def _join(self, views: Iterable[EntryView]) -> tuple[list[_Entry], list[_Entry]]:
        """(this call's entries, one per key, in priority order; those new to the run). An
        entry the run is verifying already (same key and content) is shared, not asked again."""
        mine: list[_Entry] = []
        new: list[_Entry] = []
        seen: set[str] = set()
        loop = asyncio.get_running_loop()
        for view in views:
            if view.key in seen:
                continue
            seen.add(view.key)
            chash = content_hash(view)
            e = self.live.get((view.key, chash))
            if e is None:
                e = _Entry(next(self._index), view, identifiers(view), chash, loop.create_future())
                self.live[(view.key, chash)] = e
                self.total += 1
                new.append(e)
            mine.append(e)
        return mine, new

    async def verify(self, views: Sequence[EntryView]) -> dict[str, Verification]:
        """A verdict per entry key of ``views`` (priority order: cited first), each recorded
        (and handed to ``on_verdict``) as soon as it is decided; within the deadline
        (``verifyDeadlineS``), after which what is undecided is UNVERIFIED."""
        mine, new = self._join(views)
        limit = self.settings.verify_deadline_s
        deadline = asyncio.timeout(limit if limit > 0 else None)
        try:
            async with deadline:
                await self._start(new)
                if mine:
                    await asyncio.wait([e.settled for e in mine])
        except TimeoutError:
            if not deadline.expired():
                raise
            self._stop_at_deadline(mine, limit)
        for e in mine:  # anything left (cannot happen, but never lose an entry)
            if not e.settled.done():
                self.record(e, e.waiting or self._verdict(e, e.answers()))
        return {e.view.key: e.settled.result() for e in mine}

    async def _start(self, new: list[_Entry]) -> None:
        """The snapshot's and the offline shortcut's verdicts, then every other entry on its
        way through the plan."""
        await self.snapshot_first(new)
        self.settle_offline_misses(new)
        self._start_workers()
        for e in new:
            if not e.done:
                e.task = self.spawn(self._flow(e))

    def _stop_at_deadline(self, mine: Sequence[_Entry], limit: float) -> None:
        """The call took ``limit`` seconds: every entry not decided yet is UNVERIFIED; a verdict
        that was only waiting for its retraction check is kept without it."""
        left = [e for e in mine if not e.settled.done()]
        undecided = [e for e in left if e.waiting is None]
        if undecided:
            self.log(
                f"verification stopped at its deadline ({limit:g} s, verifyDeadlineS): "
                f"{len(undecided)} of {len(mine)} entries not decided, left UNVERIFIED"
            )
        for e in left:
            if e.waiting is not None:
                self.record(e, e.waiting)
            else:
                v = deadline_reached(e.view, e.everything(), limit, chash=e.chash, checked_at=self.now)
                self.record(e, v)
            if e.task is not None:
                e.task.cancel()

    def settle_offline_misses(self, entries: Sequence[_Entry]) -> None:
        """Offline: decide each entry none of whose lookups can be in the cache without the
        request plan (``verify/offline.py``). Its verdict depends only on which lookups it
        has (its shape): one is decided per shape and copied for the other entries."""
        kinds = self.cache.kinds()
        if not self.settings.offline or kinds is None:
            return
        made: dict[tuple[object, ...], Verification] = {}
        for e in entries:
            if e.done or not e.view.title.strip():
                continue
            if kinds and offline.may_be_cached(
                e.view, offline.lookups(e.view, e.ids), kinds, self.cache.may_hold
            ):
                continue
            shape = offline.shape(e.view, e.ids)
            first = made.get(shape)
            if first is None:
                planned = offline.lookups(e.view, e.ids)
                e.asked = [Asked(self.offline_answer(p.source, p.method), p.field, p.value) for p in planned]
                self.finish(e)
                if e.settled.done():  # (not waiting for a retraction check)
                    made[shape] = e.settled.result()
                continue
            self.record(e, for_entry(first, e.view.key, e.chash))

    async def snapshot_first(self, entries: Sequence[_Entry]) -> None:
        """Entries the local snapshot holds with confidence are decided from it alone
        (``verify/snapshot.py``); the others go on to the APIs untouched. Lookups run in a
        thread, 256 entries at a time, so an editor's event loop is not held."""
        snap = self.snapshot
        if snap is None:
            return
        todo = [e for e in entries if not e.done and (e.view.title.strip() or e.view.printed)]
        for start in range(0, len(todo), 256):
            part = todo[start : start + 256]
            settled = await asyncio.to_thread(self._snapshot_verdicts, snap, part)
            for e, asked, v in settled:
                e.asked = asked
                e.done = True
                self.snapshot_answered += 1
                doi = plan.snapshot_signal_doi(v)  # None: its records name every notice
                if doi is not None:
                    lk = snapshot_tier.signal(snap, doi)  # the snapshot's Crossref record
                    if lk is not None:
                        v = self._verdict(e, asked, Asked(lk, None, doi))
                    elif (signalled := self._signalled(e, v, doi)) is None:
                        continue
                    else:
                        v = signalled
                self.record(e, v)

    def _snapshot_verdicts(
        self, snap: Snapshot, part: Sequence[_Entry]
    ) -> list[tuple[_Entry, list[Asked], Verification]]:
        out = []
        for e in part:
            try:
                answers = snapshot_tier.ask(snap, e.view, e.ids, self.settings)
                if answers is None:
                    continue
                asked = [Asked(lk, f, value) for f, value, lk in answers]
                v = decide(e.view, asked, self.settings, chash=e.chash, checked_at=self.now, ids=e.ids)
            except Exception:  # a damaged snapshot row: the APIs decide
                continue
            if not plan.snapshot_settles(v.status, wants_versions(v)):
                continue  # the APIs decide
            out.append((e, asked, v))
        return out


class VerifyStream:
    """Entries verified as they come (a venue's papers, one call of :meth:`verify` each)
    through one run: every host works on all of them at its own rate and concurrency, the
    batched tiers fill their requests from every call's entries, and a call returns as soon
    as its own entries are decided (no batch of papers waits for its slowest entry). An
    entry another call is verifying (same key and content) is awaited, not asked again."""

    def __init__(
        self,
        settings: Settings,
        *,
        sources: Sources,
        cache: VerificationCache,
        snapshot: Snapshot | None = None,
        log: Log = _no_log,
        expected: int = 0,
    ) -> None:
        self._run = _Run(settings, sources, cache, log, snapshot=snapshot)
        self._run.hold_busy_s = _HOLD_BUSY_STREAM_S
        self._remembered = expected >= _REMEMBER_KEYS_FROM
        self._remember = 20 * expected if self._remembered else 0  # keys read at the first call

    @property
    def snapshot_answered(self) -> int:
        return self._run.snapshot_answered

    @property
    def waiting(self) -> int:
        """Entries joined and not decided yet (the venue feeds more while this is low)."""
        return len(self._run.live)

    @property
    def joined(self) -> int:
        """Distinct entries that joined the stream so far (each verified once)."""
        return self._run.total

    async def fewer_than(self, n: int) -> None:
        """Until fewer than ``n`` entries wait for their verdicts."""
        run = self._run
        while len(run.live) >= n:
            run.fewer.clear()
            await run.fewer.wait()

    async def verify(self, views: Sequence[EntryView]) -> dict[str, Verification]:
        if self._remember:  # most lookups of a big run are misses
            n, self._remember = self._remember, 0
            await _remember_keys(self._run.cache, n)
        return await self._run.verify(views)

    async def aclose(self) -> None:
        await self._run.close()
        if self._remembered:
            self._run.cache.forget_keys()


async def verify_entries(
    views: Sequence[EntryView],
    settings: Settings,
    *,
    sources: Sources | None = None,
    cache: VerificationCache | None = None,
    log: Log = _no_log,
    progress: Progress | None = None,
    info: Log | None = None,
    on_verdict: OnVerdict | None = None,
    snapshot: Snapshot | None = None,
) -> dict[str, Verification]:
    """Verify entries (priority order: cited first) against the scholarly sources.

    ``on_verdict`` gets each entry's verdict as soon as it is decided, before the run ends.

    Returns one :class:`Verification` per entry key. Never raises, except
    :class:`asyncio.CancelledError` when the caller cancels (the editor does for
    stale checks). ``sources`` and ``cache`` default to ones built from
    ``settings`` (and closed again before returning). ``log`` gets problems (a source
    unreachable, ...); ``info`` the end-of-run summary (``log`` when not given).
    """
    own_sources = sources is None
    own_cache = cache is None
    own_snapshot = snapshot is None
    src: Sources | None = sources
    store: VerificationCache | None = cache
    snap = snapshot
    try:
        if store is None:
            store = open_cache(settings, log)
        if src is None:
            src = Sources.from_settings(settings, log, state_dir=default_cache_dir(settings))
        if snap is None:
            snap = snapshot_tier.open_snapshot(settings, log)
        run = _Run(settings, src, store, log, progress, on_verdict, snap)
        remember = len(views) >= _REMEMBER_KEYS_FROM
        if remember:  # most lookups of a big run are misses
            await _remember_keys(store, 20 * len(views))
        try:
            results = await run.verify(views)
        finally:
            await run.close()
            if remember:
                store.forget_keys()
        _log_summary(info or log, results, src, run.snapshot_answered if snap is not None else None)
        return results
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log(f"citelens: verification failed: {type(exc).__name__}: {exc}")
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        return {
            v.key: internal_error(
                v.key, exc, chash=content_hash(v), checked_at=now, informational=plan.is_informational(v)
            )
            for v in views
        }
    finally:
        if own_sources and src is not None:
            await asyncio.shield(src.aclose())
        if own_cache and store is not None:
            store.close()
        if own_snapshot and snap is not None:
            snap.close()


async def _remember_keys(cache: VerificationCache, max_keys: int) -> None:
    """``cache.remember_keys``; a database's keys are read in a thread, off the loop."""
    if cache.remote:
        await asyncio.to_thread(cache.remember_keys, max_keys=max_keys)
    else:
        cache.remember_keys(max_keys=max_keys)


def _log_summary(
    log: Log, results: Mapping[str, Verification], sources: Sources, from_snapshot: int | None = None
) -> None:
    counts: dict[str, int] = {}
    for v in results.values():
        counts[v.status.value] = counts.get(v.status.value, 0) + 1
    reqs = ", ".join(f"{k} {n}" for k, n in sources.request_counts().items() if n)
    too_many = ", ".join(f"{k} {n}" for k, n in sources.too_many_counts().items() if n)
    log(
        f"verified {len(results)} entries: "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        + (f"; {from_snapshot} answered by the local snapshot" if from_snapshot is not None else "")
        + f"; requests so far: {reqs or 'none'}"
        + (f" (answered 429: {too_many})" if too_many else "")
    )
