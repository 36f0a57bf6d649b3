"""The verification scheduler: ask the scholarly sources about entries, cheapest first.

Plan (per run, for all entries at once):

1. Entries with identifiers (DOI, arXiv id, PMID, S2 id / CorpusId) go to
   Semantic Scholar in one ``/paper/batch`` request per 500 ids.
2. Identifiers S2 does not resolve to the entry's paper go, concurrently per host,
   to OpenAlex (50 DOIs per request), then Crossref (one per DOI) and doi.org
   (CSL-JSON; DataCite DOIs such as arXiv's 10.48550/*), to arXiv (all ids in one
   request) and to PubMed (all PMIDs in one request).
3. Entries still unresolved (title only, or identifiers that resolve nowhere) go
   to the title tiers: S2 title match, S2 search, Crossref and OpenAlex search,
   PubMed for biomedical-looking entries. The title tiers of all hosts run at
   once: each host takes the next unresolved entry (cited first) as soon as its
   rate limiter lets it, so slow S2 (1 request/s) never holds up the others.

Every answer goes through the cache (:mod:`citelens.verify.cache`), so a second
run over an unchanged bibliography sends no request at all.

The scheduler runs the plan: one queue per host (a heap by priority, cited entries
first), one deadline for the run (``verifyDeadlineS``). The verdict on each entry is
:func:`citelens.verify.verdict.decide`'s, a pure function of the entry and every answer
collected for it.
"""

from __future__ import annotations

import asyncio
import datetime
import functools
import heapq
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.snapshot.store import Snapshot
from citelens.sources.records import Lookup, Outcome
from citelens.sources.transport import Sources
from citelens.verify import offline, plan, retraction
from citelens.verify import snapshot as snapshot_tier
from citelens.verify.cache import VerificationCache, lookup_key, open_cache
from citelens.verify.identity import Identifiers, content_hash, identifiers
from citelens.verify.match.authors import record_authors_cut
from citelens.verify.match.titles import title_cut_off
from citelens.verify.status import AuditStep, Status, Verification
from citelens.verify.verdict import (
    Asked,
    deadline_reached,
    decide,
    identifier_hits,
    internal_error,
    same_paper,
    wants_versions,
)

Log = Callable[[str], None]
Progress = Callable[[int, int], None]
#: Called with each verdict as soon as it is decided (the editor publishes it at once).
OnVerdict = Callable[[Verification], None]

#: Runs of at least this many entries read the cache's keys once (VerificationCache.remember_keys).
_REMEMBER_KEYS_FROM = 1000
#: A batch request that failed as a whole is asked again in halves, this many levels deep.
_BATCH_SPLITS = 2


def _no_log(_message: str) -> None:
    return None


def _signal_tier(doi: str) -> plan.IdTier:
    """Who is asked whether the paper with this DOI was retracted, corrected, ..."""
    return plan.OPENALEX_DOIS if plan.is_datacite(doi) or "," in doi else plan.CROSSREF_DOIS


# ====================================================================== the run


@dataclass(slots=True)
class _Entry:
    index: int
    view: EntryView
    ids: Identifiers
    chash: str
    asked: list[Asked] = field(default_factory=list)  # identifier lookups and versions
    #: title tier -> its answer (and the full version it fetched), whenever it came
    titles: dict[plan.Tier, list[Asked]] = field(default_factory=dict)
    #: the title tiers whose answers the verdict reads, in plan order (plan.next_title_step)
    read: tuple[plan.Tier, ...] = ()
    asking: plan.Tier | None = None  # the title tier asked now (in its host's queue)
    candidates_only: bool = False  # stop at the first title answer (for "Replace with")
    #: found by an identifier, in the pool for the paper's other versions (verdict.wants_versions)
    found_by_id: bool = False
    versions_asked: bool = False  # the found paper's records by its other identifiers were asked
    verdict: Verification | None = None  # decided from the answers read when they settled it
    pooled: bool = False  # in the title pool, not finished yet
    done: bool = False

    def answers(self) -> list[Asked]:
        """What the verdict reads: the identifier lookups, then the title answers read in
        plan order (an answer that came early from a later tier is not read)."""
        return self.asked + [a for t in self.read for a in self.titles[t]]

    def everything(self) -> list[Asked]:
        """Every answer collected so far (the audit of an entry the deadline cut off)."""
        return self.asked + [a for got in self.titles.values() for a in got]


class _Run:
    """One call of :func:`verify_entries`: the entries' state and the request plan."""

    def __init__(
        self,
        views: Sequence[EntryView],
        settings: Settings,
        sources: Sources,
        cache: VerificationCache,
        log: Log,
        progress: Progress | None,
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
        self.entries: list[_Entry] = []
        seen: set[str] = set()
        for view in views:
            if view.key in seen:
                continue
            seen.add(view.key)
            self.entries.append(_Entry(len(self.entries), view, identifiers(view), content_hash(view)))
        self.results: dict[str, Verification] = {}
        self._offline_answers: dict[tuple[str, str], Lookup] = {}
        self.queues: dict[str, list[tuple[int, _Entry]]] = {}  # host -> heap by priority
        self.pool_open = True
        self.changed = asyncio.Condition()
        self.s2_batch_sent = asyncio.Event()
        # Verdicts waiting for a retraction signal (papers S2 alone matched): (entry,
        # verdict, DOI to ask Crossref or OpenAlex), sent 50 per request by signal_worker.
        self.awaiting: list[tuple[_Entry, Verification, str]] = []
        self.deferred: set[str] = set()  # keys waiting or being asked about
        self.signal_wake = asyncio.Event()
        self.identifiers_done = False  # flush what the identifier tiers left waiting
        self.undone = len(self.entries)  # entries not finished yet
        self.pooled = 0  # entries in the title pool not finished yet

    # ------------------------------------------------------------------ helpers

    def _verdict(self, e: _Entry, asked: list[Asked]) -> Verification:
        """:func:`decide` on ``asked``; never raises (an error is an UNVERIFIED verdict)."""
        try:
            return decide(e.view, asked, self.settings, chash=e.chash, checked_at=self.now, ids=e.ids)
        except Exception as exc:
            return self._internal_error(e, exc)

    def _internal_error(self, e: _Entry, exc: Exception) -> Verification:
        """The verdict on ``e`` when deciding it raised ``exc``: UNVERIFIED, never lost."""
        return internal_error(
            e.view.key, exc, chash=e.chash, checked_at=self.now, informational=plan.is_informational(e.view)
        )

    def finish(self, e: _Entry, v: Verification | None = None) -> None:
        """Record the verdict on ``e`` (``v``: already decided from ``e.answers()``)."""
        if e.view.key in self.results or e.view.key in self.deferred:
            return
        self._mark_done(e)
        if v is None:
            v = self._verdict(e, e.answers())
        try:
            v.notices = retraction.merge(retraction.paper_records(v))
        except Exception as exc:
            v = self._internal_error(e, exc)
        if not self._defer_for_signal(e, v):
            self.record(e, v)

    def _defer_for_signal(self, e: _Entry, v: Verification, doi: str | None = None) -> bool:
        """Complete a verdict from a cached retraction signal, or queue it for asking
        (``doi``: the one to ask about, when the caller knows better than its records)."""
        doi = doi or retraction.signal_doi(v)
        if doi is None:
            return False
        if self.cache.remote and not self.settings.offline:
            # a database: read with the others, 50 at a time, by the signal worker
            self.awaiting.append((e, v, doi))
            self.deferred.add(e.view.key)
            return True
        tier = _signal_tier(doi)
        hit = self.cache.get(lookup_key(tier.source, tier.kind, doi))
        if hit is not None and hit.outcome is not Outcome.FOUND:
            hit = self.cache.get(lookup_key(plan.OPENALEX_DOIS.source, plan.OPENALEX_DOIS.kind, doi))
        if hit is not None:
            self._with_signal(v, hit, True)
            return False
        if self.settings.offline:
            return False
        self.awaiting.append((e, v, doi))  # asked with others, 50 at a time
        self.deferred.add(e.view.key)
        return True

    def _mark_done(self, e: _Entry) -> None:
        if not e.done:
            self.undone -= 1
        e.done = True
        self.signal_wake.set()
        if e.pooled:
            e.pooled = False
            self.pooled -= 1

    def record(self, e: _Entry, v: Verification) -> None:
        """The one place a verdict is recorded (decided, cut off by the deadline, signalled)."""
        self._mark_done(e)
        self.deferred.discard(e.view.key)
        self.results[e.view.key] = v
        if self.on_verdict is not None:
            try:
                self.on_verdict(v)
            except Exception:
                pass
        if self.progress is not None:
            try:
                self.progress(len(self.results), len(self.entries))
            except Exception:
                pass

    def _offline(self, source: str, method: str) -> Lookup:
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
    ) -> tuple[Lookup, bool]:
        """One cached lookup: (answer, came from the cache)."""
        hit = await self._cache_get(key)
        if hit is not None:
            return hit, True
        if self.settings.offline:
            return self._offline(source, method), False
        answer = await self._guard(source, method, call())
        await self._cache_put({key: answer})
        return answer, False

    async def _cache_get(self, key: str) -> Lookup | None:
        """A cached answer; a database's read is made in a thread, off the event loop."""
        if self.cache.remote:
            return await asyncio.to_thread(self.cache.get, key)
        return self.cache.get(key)

    async def _cache_many(self, keys: Sequence[str]) -> dict[str, Lookup]:
        """Cached answers of ``keys``: a database's in one statement, in a thread."""
        if self.cache.remote:
            return await asyncio.to_thread(self.cache.get_many, keys)
        return {k: hit for k in keys if (hit := self.cache.get(k)) is not None}

    async def _cache_put(self, answers: Mapping[str, Lookup]) -> None:
        if self.cache.remote:
            await asyncio.to_thread(self.cache.put_many, answers)
        else:
            self.cache.put_many(answers)

    async def many(
        self,
        source: str,
        method: str,
        kind: str,
        values: Sequence[str],
        call: Callable[[list[str]], Awaitable[Mapping[str, Lookup]]],
        chunk: int,
    ) -> dict[str, tuple[Lookup, bool]]:
        """Cached batch lookups: only values missing from the cache are requested."""
        out: dict[str, tuple[Lookup, bool]] = {}
        missing: list[str] = []
        keys = {v: lookup_key(source, kind, v) for v in dict.fromkeys(values)}
        hits = await self._cache_many(list(keys.values()))
        for v, key in keys.items():
            hit = hits.get(key)
            if hit is not None:
                out[v] = (hit, True)
            else:
                missing.append(v)
        if not missing:
            return out
        if self.settings.offline:
            out.update({v: (self._offline(source, method), False) for v in missing})
            return out
        for start in range(0, len(missing), chunk):
            part = missing[start : start + chunk]
            got = await self._batch(source, method, call, part, _BATCH_SPLITS)
            await self._cache_put({lookup_key(source, kind, v): a for v, a in got.items()})
            out.update((v, (a, False)) for v, a in got.items())
        return out

    async def _batch(
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
                **await self._batch(source, method, call, part[:half], splits - 1),
                **await self._batch(source, method, call, part[half:], splits - 1),
            }
        return got

    async def ask_ids(self, tier: plan.IdTier, values: Sequence[str]) -> dict[str, tuple[Lookup, bool]]:
        """Cached lookups of ``values`` by an identifier ``tier``, ``tier.batch`` per request."""
        return await self.many(
            tier.source, tier.method, tier.kind, values, functools.partial(tier.ask, self.sources), tier.batch
        )

    async def ask_each(self, tier: plan.IdTier, pairs: Sequence[tuple[_Entry, str]]) -> None:
        """One cached lookup per entry and value by a ``tier`` of batch 1, all at once."""

        async def ask(value: str) -> Lookup:
            return (await tier.ask(self.sources, [value]))[value]

        async def each(e: _Entry, value: str) -> None:
            lk, cached = await self.one(
                lookup_key(tier.source, tier.kind, value), tier.source, tier.method, lambda: ask(value)
            )
            e.asked.append(Asked(lk, tier.field, value, cached))

        await asyncio.gather(*(each(e, v) for e, v in pairs))

    def _state(self, e: _Entry) -> tuple[bool, set[str], dict[str, set[str]]]:
        """(found the paper by an identifier, fields resolving to it, field -> sources
        naming another paper)."""
        same_fields: set[str] = set()
        conflict: dict[str, set[str]] = {}
        for a, f, _rec, other_paper in identifier_hits(e.view, e.asked, self.settings):
            if other_paper:
                conflict.setdefault(f, set()).add(a.lookup.source)
            else:
                same_fields.add(f)
        return bool(same_fields), same_fields, conflict

    def _needs(self, e: _Entry, f: str) -> bool:
        """Whether identifier ``f`` of ``e`` still needs another source (plan.chain_needs):
        read from S2's batch and ``f``'s own chain only, never from another identifier's
        chain running at the same time (which one answers first is timing)."""
        same = False
        conflicts: set[str] = set()
        found_by_batch = False
        for a, g, _rec, other_paper in identifier_hits(e.view, e.asked, self.settings):
            batch = a.lookup.method == plan.S2_BATCH.method
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

    # ------------------------------------------------------------------ identifier tiers

    async def identifier_tiers(self) -> None:
        try:
            todo = [e for e in self.entries if e.ids and not e.done and e.view.title.strip()]
            wanted: dict[str, list[tuple[_Entry, str]]] = {}
            for e in todo:
                for f, bid in plan.S2_BATCH.values(e.ids):
                    wanted.setdefault(bid, []).append((e, f))
            if wanted:
                got = await self.ask_ids(plan.S2_BATCH, list(wanted))
                for bid, pairs in wanted.items():
                    lk, cached = got[bid]
                    for e, f in pairs:
                        e.asked.append(Asked(lk, f, bid, cached))
            self.s2_batch_sent.set()
            await asyncio.gather(*(self._chain(todo, chain) for chain in plan.ID_CHAINS))
            await self._other_versions(todo)
            for i, e in enumerate(todo):
                if i % 16 == 15:
                    # Verdicts are CPU work: let other hosts' requests go out on time
                    # instead of in a burst after a long stretch without the event loop.
                    await asyncio.sleep(0)
                found, same_fields, conflict = self._state(e)
                if found and not any(f not in same_fields for f in conflict):
                    v = self._verdict(e, e.answers())
                    if wants_versions(v):  # not decided before the other versions answer
                        await self.add_to_pool(e, found_by_id=True)
                    else:
                        self.finish(e, v)
                else:
                    await self.add_to_pool(e, candidates_only=bool(conflict))
        finally:
            self.s2_batch_sent.set()
            self.identifiers_done = True
            self.signal_wake.set()
            async with self.changed:
                self.pool_open = False
                self.changed.notify_all()

    async def _chain(self, todo: Sequence[_Entry], chain: Sequence[plan.IdTier]) -> None:
        """The tiers of one identifier, one after the other, for the entries that still need
        another source for it (:meth:`_needs`)."""
        need = list(todo)
        for tier in chain:
            field = tier.field or ""
            need = [e for e in need if self._needs(e, field)]
            pairs = [(e, value) for e in need for _f, value in tier.values(e.ids)]
            if not pairs:
                continue
            if tier.batch == 1:
                await self.ask_each(tier, pairs)
                continue
            got = await self.ask_ids(tier, [value for _e, value in pairs])
            for e, value in pairs:
                lk, cached = got[value]
                e.asked.append(Asked(lk, field, value, cached))

    async def _other_versions(self, todo: Sequence[_Entry]) -> None:
        """More versions of the papers found by an identifier (plan.identifier_versions),
        batched: one request per source for all entries; offline, what the cache holds."""
        wanted: dict[plan.IdTier, list[tuple[_Entry, str]]] = {}
        for e in todo:
            found, _same, conflict = self._state(e)
            if not found or conflict:
                continue
            records = [
                r
                for a in e.asked
                if a.field is not None and a.lookup.outcome is Outcome.FOUND
                for r in a.lookup.records[:1]
            ]
            asked = {a.lookup.source for a in e.asked}
            for tier, value in plan.identifier_versions(e.view, e.ids, records, asked):
                wanted.setdefault(tier, []).append((e, value))
        await self._ask_versions(wanted)

    async def _ask_versions(self, wanted: Mapping[plan.IdTier, Sequence[tuple[_Entry, str]]]) -> bool:
        """Ask each tier about its values (one batch per tier, in the plan's table order) and
        add the answers to their entries as versions; True when one was added."""
        added = False
        for tier in (plan.ARXIV_IDS, plan.CROSSREF_DOIS, plan.OPENALEX_DOIS):
            pairs = wanted.get(tier)
            if not pairs:
                continue
            got = await self.ask_ids(tier, list(dict.fromkeys(v for _e, v in pairs)))
            for e, value in pairs:
                lk, cached = got[value]
                if cached or not self.settings.offline:
                    e.asked.append(Asked(lk, None, value, cached))  # a version, not the cited id
                    added = True
        return added

    # ------------------------------------------------------------------ retraction signal

    def _with_signal(self, v: Verification, answer: Lookup, cached: bool) -> None:
        """Add the notices of Crossref's (or OpenAlex's) record of the matched paper."""
        v.audit.append(
            AuditStep(
                answer.method,
                answer.source,
                answer.outcome.value,
                answer.detail or "retraction check",
                cached,
            )
        )
        if answer.outcome is Outcome.FOUND:
            v.notices = retraction.combine([v.notices, *(r.notices for r in answer.records[:1])])

    async def signal_worker(self) -> None:
        """Ask about the papers S2 alone matched, 50 DOIs per request: when 50 wait, when
        the identifier tiers are through, and when nothing else can come."""
        while True:
            self.signal_wake.clear()
            more = self.undone > 0
            n = len(self.awaiting)
            if n >= plan.CROSSREF_DOIS.batch or (n and (not more or self.identifiers_done)):
                self.identifiers_done = False
                batch, self.awaiting = self.awaiting, []
                await self._signals(batch)  # 50 DOIs per request
                continue
            if not n and not more:
                return
            await self.signal_wake.wait()

    async def _signals(self, batch: Sequence[tuple[_Entry, Verification, str]]) -> None:
        """Crossref for the DOIs it registers (``updated-by`` names every notice, also
        Retraction Watch's); OpenAlex's ``is_retracted`` for the others (DataCite) and for
        what Crossref could not answer."""
        try:
            got = await self._signal_answers([d for _e, _v, d in batch])
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never lose a verdict over its retraction check
            self.log(f"citelens: retraction check failed: {type(exc).__name__}")
            got = {}
        for e, v, doi in batch:
            if doi in got:
                lk, cached = got[doi]
                self._with_signal(v, lk, cached)
            self.record(e, v)

    async def _signal_answers(self, dois: list[str]) -> dict[str, tuple[Lookup, bool]]:
        crossref = [d for d in dois if _signal_tier(d) is plan.CROSSREF_DOIS]
        got = await self.ask_ids(plan.CROSSREF_DOIS, crossref)
        rest = [d for d in dois if d not in got or got[d][0].outcome is not Outcome.FOUND]
        if rest:
            got.update(await self.ask_ids(plan.OPENALEX_DOIS, rest))
        return got

    # ------------------------------------------------------------------ title tiers

    async def add_to_pool(
        self, e: _Entry, *, candidates_only: bool = False, found_by_id: bool = False
    ) -> None:
        e.candidates_only = candidates_only
        e.found_by_id = found_by_id
        e.titles = {}
        e.pooled = True
        self.pooled += 1
        await self._advance(e)

    def _settled(self, e: _Entry, read: tuple[plan.Tier, ...]) -> bool:
        """Whether the title answers ``read`` (in plan order) settle the entry: the paper was
        found with confidence (by an identifier, or by one of them), and no warning is left
        that another version could explain (verdict.wants_versions). For a mismatched
        identifier: the last one found anything."""
        if e.candidates_only:
            return e.titles[read[-1]][0].lookup.outcome is Outcome.FOUND
        if not e.found_by_id and not any(self._confident(e, a.lookup) for t in read for a in e.titles[t]):
            return False
        asked = e.asked + [a for t in read for a in e.titles[t]]
        v = self._verdict(e, asked)
        if wants_versions(v):
            return False
        e.verdict = v
        return True

    def _confident(self, e: _Entry, answer: Lookup) -> bool:
        if answer.outcome is not Outcome.FOUND:
            return False
        # a title an index cut off cannot tell whether the cited title's last words are
        # right, nor an author list cut short whether the cited further authors are
        cited = len(e.view.authors)
        return any(
            same_paper(e.view, r, self.settings)
            and not title_cut_off(e.view.title, r)
            and not record_authors_cut(r, cited)
            for r in answer.records
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
                e.view, {t: got[0].lookup for t, got in e.titles.items()}, functools.partial(self._settled, e)
            )
            e.read = step.read
            tier = step.ask
            if step.settled and not e.candidates_only:
                self.finish(e, e.verdict)
                break
            if tier is None:
                if not e.versions_asked and not e.candidates_only:
                    e.versions_asked = True
                    v = self._verdict(e, e.answers())
                    if wants_versions(v) and await self._id_versions(e, v):
                        continue
                self.finish(e)
                break
            hit = await self._cache_get(plan.title_cache_key(tier, e.view))
            if hit is not None:
                await self._answered(e, tier, hit, True)
            elif self.settings.offline and e.found_by_id:  # versions: what the cache holds
                self.finish(e)
                break
            elif self.settings.offline:  # no worker would ask anyone
                e.titles[tier] = [Asked(self._offline(tier.host, tier.name), None, e.view.title)]
            else:
                e.asking = tier
                async with self.changed:
                    heapq.heappush(self.queues.setdefault(tier.host, []), (e.index, e))
                    self.changed.notify_all()
                return
        async with self.changed:
            self.changed.notify_all()  # a worker may be waiting for the last pooled entry

    async def _id_versions(self, e: _Entry, v: Verification) -> bool:
        """The found paper's records by its other identifiers (plan.version_lookups). True
        when an answer was added (the verdict is then decided anew)."""
        records = [r for r in (v.match, *v.versions) if r is not None]
        have = {(a.lookup.source, a.value.lower()) for a in e.everything()}
        wanted: dict[plan.IdTier, list[tuple[_Entry, str]]] = {}
        for tier, value in plan.version_lookups(e.ids, records, have):
            wanted.setdefault(tier, []).append((e, value))
        return await self._ask_versions(wanted)

    def _pick(self, host: str) -> _Entry | None:
        """The first entry (by priority) waiting for a tier of ``host``."""
        queue = self.queues.get(host)
        while queue:
            e = heapq.heappop(queue)[1]
            if not e.done and e.asking is not None and e.asking.host == host:
                return e
        return None

    async def _full_version(self, e: _Entry, answer: Lookup) -> Asked | None:
        """When a title search found the paper only under a title its index cut off: the
        arXiv record (by the paper's arXiv id), whose full title can confirm or contradict
        the cited title's last words."""
        if answer.outcome is not Outcome.FOUND or e.candidates_only:
            return None
        same = [r for r in answer.records if same_paper(e.view, r, self.settings)]
        if not same or not all(title_cut_off(e.view.title, r) for r in same):
            return None
        ax = next((r.arxiv_id for r in same if r.arxiv_id), None)
        if ax is None or any(a.lookup.source == plan.ARXIV_IDS.source and a.value == ax for a in e.asked):
            return None
        got = await self.ask_ids(plan.ARXIV_IDS, [ax])
        lk, cached = got[ax]
        return Asked(lk, None, ax, cached) if cached or not self.settings.offline else None

    async def title_worker(self, host: str) -> None:
        """Asks ``host``'s title tiers, entry after entry by priority. An entry waits in one
        queue at a time (its next tier's), so each entry's answers come in plan order while
        every host works on other entries at the same time."""
        if host == plan.S2_BATCH.host:
            await self.s2_batch_sent.wait()  # the batch goes first: it answers many entries
        while True:
            async with self.changed:
                while True:
                    e = self._pick(host)
                    if e is not None:
                        break
                    if not self.pool_open and not self.pooled:
                        return
                    await self.changed.wait()
                tier = e.asking
                e.asking = None
            assert tier is not None
            lk, cached = await self.one(
                plan.title_cache_key(tier, e.view),
                tier.host,
                tier.name,
                functools.partial(tier.ask, self.sources, e.view),
            )
            await self._answered(e, tier, lk, cached)
            await self._advance(e)

    # ------------------------------------------------------------------ the whole run

    async def run(self) -> dict[str, Verification]:
        limit = self.settings.verify_deadline_s
        deadline = asyncio.timeout(limit if limit > 0 else None)
        if len(self.entries) >= _REMEMBER_KEYS_FROM:  # most lookups of a big run are misses
            self.cache.remember_keys(max_keys=20 * len(self.entries))
        try:
            async with deadline:
                await self._ask()
        except TimeoutError:
            if not deadline.expired():
                raise
            self._stop_at_deadline(limit)
        finally:
            self.cache.forget_keys()
        for e in self.entries:  # anything left (cannot happen, but never lose an entry)
            self.finish(e)
        if self.awaiting:
            batch, self.awaiting = self.awaiting, []
            await self._signals(batch)
        return {e.view.key: self.results[e.view.key] for e in self.entries}

    def _stop_at_deadline(self, limit: float) -> None:
        """The run took ``limit`` seconds: every entry not decided yet is UNVERIFIED; a verdict
        that was only waiting for its retraction check is kept without it."""
        for e, v, _doi in self.awaiting:
            self.record(e, v)
        self.awaiting = []
        left = [e for e in self.entries if e.view.key not in self.results]
        self.log(
            f"verification stopped at its deadline ({limit:g} s, verifyDeadlineS): "
            f"{len(left)} of {len(self.entries)} entries not decided, left UNVERIFIED"
        )
        for e in left:
            v = deadline_reached(e.view, e.everything(), limit, chash=e.chash, checked_at=self.now)
            self.record(e, v)

    def settle_offline_misses(self) -> None:
        """Offline: decide each entry none of whose lookups can be in the cache without the
        request plan (``verify/offline.py``). Its verdict depends only on which lookups it
        has (its shape): one is decided per shape and copied for the other entries."""
        kinds = self.cache.kinds()
        if not self.settings.offline or kinds is None:
            return
        made: dict[tuple[object, ...], Verification] = {}
        for e in self.entries:
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
                e.asked = [Asked(self._offline(p.source, p.method), p.field, p.value) for p in planned]
                self.finish(e)
                if e.view.key in self.results:  # (not waiting for a retraction check)
                    made[shape] = self.results[e.view.key]
                continue
            self.record(
                e,
                replace(
                    first,
                    key=e.view.key,
                    content_hash=e.chash,
                    audit=list(first.audit),
                    candidates=list(first.candidates),
                    right_papers=list(first.right_papers),
                    notices=list(first.notices),
                ),
            )

    async def snapshot_first(self) -> None:
        """Entries the local snapshot holds with confidence are decided from it alone
        (``verify/snapshot.py``); the others go on to the APIs untouched. Lookups run in a
        thread, 256 entries at a time, so an editor's event loop is not held."""
        snap = self.snapshot
        if snap is None:
            return
        todo = [e for e in self.entries if not e.done and (e.view.title.strip() or e.view.printed)]
        for start in range(0, len(todo), 256):
            part = todo[start : start + 256]
            settled = await asyncio.to_thread(self._snapshot_verdicts, snap, part)
            for e, asked, v in settled:
                e.asked = asked
                self._mark_done(e)
                self.snapshot_answered += 1
                doi = snapshot_tier.notice_doi(v)  # None: its records name every notice
                if doi is not None:
                    lk = snapshot_tier.signal(snap, doi)  # the snapshot's Crossref record
                    if lk is not None:
                        self._with_signal(v, lk, False)
                    elif self._defer_for_signal(e, v, doi):
                        continue
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
            if v.status not in (Status.VERIFIED, Status.PARTIAL) or wants_versions(v):
                continue  # the APIs decide (a difference another version may explain, too)
            v.summary = snapshot_tier.name_tier(v.summary, snap, v.match)
            v.notices = retraction.merge(retraction.paper_records(v))
            out.append((e, asked, v))
        return out

    async def _ask(self) -> None:
        await self.snapshot_first()
        self.settle_offline_misses()
        for e in self.entries:
            if e.done:
                continue
            if not e.view.title.strip() and e.view.printed is None:
                self.finish(e)
            elif not e.ids:
                await self.add_to_pool(e)
        hosts = self.sources.hosts()
        workers = []
        for name in plan.TITLE_HOSTS:
            h = hosts.get(name)
            n = max(1, min(4, h.rate.max_concurrency)) if h is not None else 1
            workers += [self.title_worker(name) for _ in range(n)]
        await asyncio.gather(self.identifier_tiers(), self.signal_worker(), *workers)


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
            src = Sources.from_settings(settings, log)
        if snap is None:
            snap = snapshot_tier.open_snapshot(settings, log)
        run = _Run(views, settings, src, store, log, progress, on_verdict, snap)
        results = await run.run()
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
