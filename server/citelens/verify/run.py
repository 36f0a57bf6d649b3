"""The verification engine: ask the scholarly sources about entries, cheapest first.

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

The verdict (:func:`decide`) is a pure function of the entry and every answer
collected for it. A failed or unavailable source anywhere on the way makes an
unresolved entry ``UNVERIFIED``, never ``NOT_FOUND``.
"""

from __future__ import annotations

import asyncio
import bisect
import datetime
import functools
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from citelens.core.findings import Severity
from citelens.core.model import BibEntry, EntryView
from citelens.core.normalize import source_name
from citelens.core.settings import Settings
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.sources.transport import Sources
from citelens.verify import tiers as plan
from citelens.verify.cache import VerificationCache, lookup_key, open_cache
from citelens.verify.match.compare import (
    Discrepancy,
    compare,
    identifier_conflict,
    title_similarity,
)
from citelens.verify.status import S2_NOT_FOUND, AuditStep, Status, Verification

Log = Callable[[str], None]
Progress = Callable[[int, int], None]

#: Changes when verdict rules change, so content hashes of old results no longer match.
ENGINE_VERSION = "1"
#: Title similarity for a search hit to be offered as a "Replace with" candidate.
CANDIDATE_FLOOR = 0.5
MAX_CANDIDATES = 5

_FIELD_LABEL = {"doi": "DOI", "arxiv": "arXiv id", "pmid": "PMID", "s2": "Semantic Scholar id"}
_FIELD_ORDER = ("doi", "arxiv", "pmid", "s2")
_FAILED = (Outcome.FAILED, Outcome.UNAVAILABLE)


def _no_log(_message: str) -> None:
    return None


# ====================================================================== content hash


def content_hash(item: EntryView | BibEntry) -> str:
    """A short hash of what an entry says (not its key): unchanged entries keep their result."""
    payload: object
    if isinstance(item, BibEntry):
        payload = [item.entry_type.lower(),
                   sorted((name, f.value) for name, f in item.fields.items())]
    else:
        payload = [item.entry_type.lower(), item.title,
                   [[n.first, n.von, n.last, n.jr] for n in item.authors],
                   item.authors_truncated, item.year, item.venue, item.doi, item.arxiv_id,
                   item.pmid, item.s2_id, item.url]
    raw = json.dumps([ENGINE_VERSION, payload], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:20]


# ====================================================================== the answers


@dataclass(slots=True)
class Asked:
    """One answer collected for an entry: from which tier, about which identifier."""

    lookup: Lookup
    field: str | None  # "doi" | "arxiv" | "pmid" | "s2" for identifier lookups; None: title
    value: str  # the identifier or title asked about
    cached: bool = False


def _same_paper(view: EntryView, rec: PaperRecord, settings: Settings) -> bool:
    """A title-search hit is the entry's paper: a verified-level title, or a close title
    with the same authors and year (then the title itself is the discrepancy)."""
    score = title_similarity(view.title, rec.title or "")
    if score >= settings.title_verified_threshold:
        return True
    if score < settings.title_candidate_threshold:
        return False
    ids = plan.identifiers(view)
    if (ids.doi and rec.doi and ids.doi == rec.doi.lower()) or (
            ids.arxiv and rec.arxiv_id and ids.arxiv == rec.arxiv_id.lower()):
        return True
    if not view.authors or not rec.authors or view.year is None or rec.year is None:
        return False
    cmp = compare(view, [rec], verified_threshold=settings.title_verified_threshold,
                  candidate_threshold=settings.title_candidate_threshold)
    return not any(d.field in ("authors", "year") and d.severity is Severity.WARNING
                   for d in cmp.discrepancies)


def _record_id(rec: PaperRecord) -> tuple[str, str]:
    return rec.source, (rec.s2_paper_id or rec.doi or rec.arxiv_id or rec.pmid
                        or rec.title.casefold())


def _dedupe(records: Sequence[PaperRecord]) -> list[PaperRecord]:
    seen: set[tuple[str, str]] = set()
    out = []
    for r in records:
        k = _record_id(r)
        if k not in seen:
            seen.add(k)
            out.append(r)
    return out


def _describe(rec: PaperRecord) -> str:
    who = rec.authors[0].split()[-1] if rec.authors and rec.authors[0].split() else ""
    extra = ", ".join(x for x in (who + (" et al." if len(rec.authors) > 1 else ""),
                                  str(rec.year or "")) if x)
    return f"“{rec.title}”" + (f" ({extra})" if extra else "")


def _sources_list(asked: Sequence[Asked]) -> str:
    names = list(dict.fromkeys(source_name(a.lookup.source) for a in asked))
    return ", ".join(names)


def _failure_text(asked: Sequence[Asked]) -> str:
    failed = [a for a in asked if a.lookup.outcome in _FAILED]
    if failed and all("offline" in a.lookup.detail for a in failed):
        return "offline, and no cached answer for this entry"
    parts = []
    for name in dict.fromkeys(source_name(a.lookup.source) for a in failed):
        detail = next((a.lookup.detail for a in failed
                       if source_name(a.lookup.source) == name and a.lookup.detail), "")
        parts.append(f"{name} ({detail})" if detail else name)
    return "could not ask " + "; ".join(parts)


def decide(
    view: EntryView,
    asked: Sequence[Asked],
    settings: Settings,
    *,
    chash: str = "",
    checked_at: str = "",
) -> Verification:
    """The verdict on one entry from every answer collected for it. Pure; never raises."""
    informational = plan.is_informational(view)
    audit = [AuditStep(a.lookup.method, a.lookup.source, a.lookup.outcome.value,
                       a.lookup.detail, a.cached) for a in asked]

    def make(status: Status, summary: str, **kw: Any) -> Verification:
        return Verification(key=view.key, status=status, summary=summary, audit=audit,
                            checked_at=checked_at, content_hash=chash,
                            informational=informational, **kw)

    if not view.title.strip():
        return make(Status.UNVERIFIED, "The entry has no title, so it cannot be checked "
                    "against scholarly sources")
    cand_t, ver_t = settings.title_candidate_threshold, settings.title_verified_threshold

    same_by_id: list[tuple[Asked, PaperRecord]] = []
    conflicts: dict[str, list[PaperRecord]] = {}
    same_fields: set[str] = set()
    for a in asked:
        if a.field is None or a.lookup.outcome is not Outcome.FOUND:
            continue
        for rec in a.lookup.records[:1]:
            if identifier_conflict(view, rec, cand_t):
                conflicts.setdefault(a.field, []).append(rec)
            else:
                same_by_id.append((a, rec))
                same_fields.add(a.field)
    title_hits = [(a, r) for a in asked if a.field is None and a.lookup.outcome is Outcome.FOUND
                  for r in a.lookup.records]
    same_by_title = [(a, r) for a, r in title_hits if _same_paper(view, r, settings)]
    all_records = _dedupe([r for a in asked for r in a.lookup.records])
    ids = plan.identifiers(view)

    def candidates(exclude: Sequence[PaperRecord] = ()) -> list[PaperRecord]:
        skip = {_record_id(r) for r in exclude}
        scored = [(title_similarity(view.title, r.title or ""), r) for r in all_records
                  if _record_id(r) not in skip and not any(r in v for v in conflicts.values())]
        scored = [(s, r) for s, r in scored if s >= CANDIDATE_FLOOR]
        scored.sort(key=lambda sr: -sr[0])
        return [r for _, r in scored[:MAX_CANDIDATES]]

    # ---- an identifier names another paper
    bad_fields = [f for f in _FIELD_ORDER if f in conflicts and f not in same_fields]
    if bad_fields:
        f = bad_fields[0]
        rec = conflicts[f][0]
        value = getattr(ids, f) or ""
        where = ", ".join(dict.fromkeys(source_name(r.source) for r in conflicts[f]))
        msg = (f"{_FIELD_LABEL[f]} {value} belongs to a different paper: {_describe(rec)} "
               f"in {where}, not “{view.title}”")
        discrepancies = [Discrepancy(f, "identifier", Severity.ERROR,
                                     f"{f}: {value} in the entry is {_describe(rec)} in {where}",
                                     value, rec.title, rec.source)]
        for g in bad_fields[1:]:
            r2 = conflicts[g][0]
            v2 = getattr(ids, g) or ""
            discrepancies.append(Discrepancy(g, "identifier", Severity.ERROR,
                                             f"{g}: {v2} in the entry is {_describe(r2)}",
                                             v2, r2.title, r2.source))
        right = _dedupe([r for _, r in same_by_id] + [r for _, r in same_by_title])
        first = next((a for a in asked if a.field == f and a.lookup.outcome is Outcome.FOUND),
                     None)
        return make(
            Status.DOI_MISMATCH, msg, match=rec,
            score=title_similarity(view.title, rec.title or ""),
            method=first.lookup.method if first else "", discrepancies=discrepancies,
            candidates=right + candidates(right))

    # ---- the paper was found
    same = same_by_id + same_by_title
    if same:
        def rank(item: tuple[Asked, PaperRecord]) -> tuple[bool, float, bool]:
            a, r = item
            return (a.field is not None, title_similarity(view.title, r.title or ""),
                    r.source == "s2")

        best_asked, match = max(same, key=rank)
        versions = [r for r in _dedupe([r for _, r in same]) if _record_id(r) != _record_id(match)]
        cmp = compare(view, [match, *versions], verified_threshold=ver_t,
                      candidate_threshold=cand_t)
        found = list(cmp.discrepancies)
        found += _unresolvable_ids(view, asked, match, same_fields)
        if any(a.lookup.source == "s2" and a.lookup.outcome is Outcome.NOT_FOUND
               for a in asked) and match.source != "s2":
            audit.append(AuditStep(S2_NOT_FOUND, "s2", S2_NOT_FOUND,
                                   f"Semantic Scholar does not know this paper; found in "
                                   f"{source_name(match.source)}"))
        where = source_name(match.source)
        if found:
            shown = "; ".join(d.message for d in found[:2])
            more = f" (+{len(found) - 2} more)" if len(found) > 2 else ""
            status, summary = Status.PARTIAL, f"Found in {where}, but {shown}{more}"
        else:
            status, summary = Status.VERIFIED, f"Verified in {where}: {_describe(match)}"
        return make(
            status, summary, match=match, versions=versions,
            score=title_similarity(view.title, match.title or ""),
            method=best_asked.lookup.method, discrepancies=found)

    # ---- nothing matched
    cands = candidates()
    if any(a.lookup.outcome in _FAILED for a in asked):
        return make(Status.UNVERIFIED, f"Not verified: {_failure_text(asked)}",
                    candidates=cands)
    if not asked:
        return make(Status.UNVERIFIED, "Not verified: no source was asked")
    dead = [f for f in _FIELD_ORDER if getattr(ids, f)
            and any(a.field == f for a in asked)]
    closest = f"; closest: {_describe(cands[0])}" if cands else ""
    if dead:
        f = dead[0]
        value = getattr(ids, f) or ""
        asked_f = [a for a in asked if a.field == f]
        summary = (f"{_FIELD_LABEL[f]} {value} resolves nowhere ({_sources_list(asked_f)}): "
                   f"the identifier looks fabricated, and no paper with this title was found"
                   f"{closest}")
    else:
        summary = (f"No paper with this title in {_sources_list(asked)}{closest}")
    if informational:
        summary += " (common for books, theses, reports, software and web pages)"
    return make(Status.NOT_FOUND, summary, candidates=cands)


def _unresolvable_ids(view: EntryView, asked: Sequence[Asked], match: PaperRecord,
                      same_fields: set[str]) -> list[Discrepancy]:
    """Identifiers of a found paper that every source asked answered "no such id" for."""
    ids = plan.identifiers(view)
    out = []
    for f in _FIELD_ORDER:
        value = getattr(ids, f)
        tries = [a for a in asked if a.field == f]
        if not value or f in same_fields or len(tries) < 2:
            continue
        if all(a.lookup.outcome is Outcome.NOT_FOUND for a in tries):
            known = {"doi": match.doi, "arxiv": match.arxiv_id, "pmid": match.pmid,
                     "s2": match.s2_paper_id}[f]
            tail = f"; the paper's {_FIELD_LABEL[f]} is {known}" if known else ""
            out.append(Discrepancy(
                f, "identifier", Severity.WARNING,
                f"{f}: {value} in the entry resolves nowhere ({_sources_list(tries)}){tail}",
                value, known or "", match.source))
    return out


# ====================================================================== the run


@dataclass(slots=True)
class _Entry:
    index: int
    view: EntryView
    ids: plan.Identifiers
    chash: str
    asked: list[Asked] = field(default_factory=list)
    tiers: list[plan.Tier] = field(default_factory=list)  # title tiers still to ask
    candidates_only: bool = False  # stop at the first title answer (for "Replace with")
    busy: bool = False
    done: bool = False


class _Run:
    """One call of :func:`verify_entries`: the entries' state and the request plan."""

    def __init__(self, views: Sequence[EntryView], settings: Settings, sources: Sources,
                 cache: VerificationCache, log: Log, progress: Progress | None) -> None:
        self.settings = settings
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
            self.entries.append(_Entry(len(self.entries), view, plan.identifiers(view),
                                       content_hash(view)))
        self.results: dict[str, Verification] = {}
        self.pool: list[_Entry] = []
        self.pool_open = True
        self.changed = asyncio.Condition()
        self.s2_batch_sent = asyncio.Event()

    # ------------------------------------------------------------------ helpers

    def finish(self, e: _Entry) -> None:
        if e.view.key in self.results:
            return
        e.done = True
        try:
            v = decide(e.view, e.asked, self.settings, chash=e.chash, checked_at=self.now)
        except Exception as exc:
            v = Verification(e.view.key, Status.UNVERIFIED,
                             f"Not verified: internal error ({type(exc).__name__})",
                             checked_at=self.now, content_hash=e.chash,
                             informational=plan.is_informational(e.view))
        self.results[e.view.key] = v
        if self.progress is not None:
            try:
                self.progress(len(self.results), len(self.entries))
            except Exception:
                pass

    def _offline(self, source: str, method: str) -> Lookup:
        return Lookup(source, method, Outcome.UNAVAILABLE, [], "offline: not in the cache")

    async def _guard(self, source: str, method: str, call: Awaitable[Lookup]) -> Lookup:
        try:
            return await call
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return Lookup(source, method, Outcome.FAILED, [], f"internal error: "
                          f"{type(exc).__name__}")

    async def one(self, key: str, source: str, method: str,
                  call: Callable[[], Awaitable[Lookup]]) -> tuple[Lookup, bool]:
        """One cached lookup: (answer, came from the cache)."""
        hit = self.cache.get(key)
        if hit is not None:
            return hit, True
        if self.settings.offline:
            return self._offline(source, method), False
        answer = await self._guard(source, method, call())
        self.cache.put(key, answer)
        return answer, False

    async def many(self, source: str, method: str, kind: str, values: Sequence[str],
                   call: Callable[[list[str]], Awaitable[Mapping[str, Lookup]]],
                   chunk: int) -> dict[str, tuple[Lookup, bool]]:
        """Cached batch lookups: only values missing from the cache are requested."""
        out: dict[str, tuple[Lookup, bool]] = {}
        missing: list[str] = []
        for v in dict.fromkeys(values):
            hit = self.cache.get(lookup_key(source, kind, v))
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
            part = missing[start:start + chunk]
            try:
                answers = dict(await call(part))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                answers = {v: Lookup(source, method, Outcome.FAILED, [],
                                     f"internal error: {type(exc).__name__}") for v in part}
            lowered = {k.lower(): a for k, a in answers.items()}
            for v in part:
                a = answers.get(v) or lowered.get(v.lower()) or Lookup(
                    source, method, Outcome.FAILED, [], "no answer for this id")
                self.cache.put(lookup_key(source, kind, v), a)
                out[v] = (a, False)
        return out

    def _state(self, e: _Entry) -> tuple[bool, set[str], dict[str, set[str]]]:
        """(found the paper by an identifier, fields resolving to it, field -> sources
        naming another paper)."""
        same_fields: set[str] = set()
        conflict: dict[str, set[str]] = {}
        for a in e.asked:
            if a.field is None or a.lookup.outcome is not Outcome.FOUND:
                continue
            rec = a.lookup.records[0] if a.lookup.records else None
            if rec is None:
                continue
            if identifier_conflict(e.view, rec, self.settings.title_candidate_threshold):
                conflict.setdefault(a.field, set()).add(a.lookup.source)
            else:
                same_fields.add(a.field)
        return bool(same_fields), same_fields, conflict

    def _needs(self, e: _Entry, f: str) -> bool:
        """Whether identifier ``f`` of ``e`` still needs another source."""
        if not getattr(e.ids, f):
            return False
        found, same_fields, conflict = self._state(e)
        if f in same_fields:
            return False
        if f in conflict:
            return len(conflict[f]) < 2  # a second source confirms a mismatch
        return not found

    # ------------------------------------------------------------------ identifier tiers

    async def identifier_tiers(self) -> None:
        try:
            todo = [e for e in self.entries if e.ids and e.view.title.strip()]
            wanted: dict[str, list[tuple[_Entry, str]]] = {}
            for e in todo:
                for f, bid in e.ids.s2_batch_ids().items():
                    wanted.setdefault(bid, []).append((e, f))
            if wanted:
                got = await self.many("s2", "s2_batch", "id", list(wanted),
                                      lambda ids: plan.s2_batch(self.sources, ids), 500)
                for bid, pairs in wanted.items():
                    lk, cached = got[bid]
                    for e, f in pairs:
                        e.asked.append(Asked(lk, f, bid, cached))
            self.s2_batch_sent.set()
            await asyncio.gather(self._doi_chain(todo), self._arxiv(todo), self._pubmed(todo))
            for i, e in enumerate(todo):
                if i % 16 == 15:
                    # Verdicts are CPU work: let other hosts' requests go out on time
                    # instead of in a burst after a long stretch without the event loop.
                    await asyncio.sleep(0)
                found, same_fields, conflict = self._state(e)
                if found and not any(f not in same_fields for f in conflict):
                    self.finish(e)
                else:
                    await self.add_to_pool(e, candidates_only=bool(conflict))
        finally:
            self.s2_batch_sent.set()
            async with self.changed:
                self.pool_open = False
                self.changed.notify_all()

    async def _doi_chain(self, todo: Sequence[_Entry]) -> None:
        need = [e for e in todo if self._needs(e, "doi")]
        if not need:
            return
        dois = [e.ids.doi or "" for e in need]
        got = await self.many("openalex", "openalex_dois", "doi", dois,
                              lambda vs: plan.openalex_dois(self.sources, vs), plan.OPENALEX_BATCH)
        for e in need:
            lk, cached = got[e.ids.doi or ""]
            e.asked.append(Asked(lk, "doi", e.ids.doi or "", cached))

        need = [e for e in need if self._needs(e, "doi") and not plan.is_datacite(e.ids.doi or "")]

        async def crossref(e: _Entry) -> None:
            d = e.ids.doi or ""
            lk, cached = await self.one(lookup_key("crossref", "doi", d), "crossref",
                                        "crossref_doi", lambda: plan.crossref_doi(self.sources, d))
            e.asked.append(Asked(lk, "doi", d, cached))

        await asyncio.gather(*(crossref(e) for e in need))

        async def csl(e: _Entry) -> None:
            d = e.ids.doi or ""
            lk, cached = await self.one(lookup_key("doi", "csl", d), "doi", "doi_csl",
                                        lambda: plan.doi_csl(self.sources, d))
            e.asked.append(Asked(lk, "doi", d, cached))

        await asyncio.gather(*(csl(e) for e in todo if self._needs(e, "doi")))

    async def _arxiv(self, todo: Sequence[_Entry]) -> None:
        need = [e for e in todo if self._needs(e, "arxiv")]
        if not need:
            return
        got = await self.many("arxiv", "arxiv_id", "id", [e.ids.arxiv or "" for e in need],
                              lambda vs: plan.arxiv_ids(self.sources, vs), plan.ARXIV_BATCH)
        for e in need:
            lk, cached = got[e.ids.arxiv or ""]
            e.asked.append(Asked(lk, "arxiv", e.ids.arxiv or "", cached))

    async def _pubmed(self, todo: Sequence[_Entry]) -> None:
        need = [e for e in todo if self._needs(e, "pmid")]
        if not need:
            return
        got = await self.many("pubmed", "pubmed_id", "pmid", [e.ids.pmid or "" for e in need],
                              lambda vs: plan.pubmed_ids(self.sources, vs), plan.PUBMED_BATCH)
        for e in need:
            lk, cached = got[e.ids.pmid or ""]
            e.asked.append(Asked(lk, "pmid", e.ids.pmid or "", cached))

    # ------------------------------------------------------------------ title tiers

    async def add_to_pool(self, e: _Entry, *, candidates_only: bool = False) -> None:
        e.tiers = plan.title_tiers(e.view)
        e.candidates_only = candidates_only
        # Answers already cached are used first, whichever host gave them: which host
        # answered an entry last time depended on timing, and a warm run asks nobody.
        for tier in list(e.tiers):
            hit = self.cache.get(plan.title_cache_key(tier, e.view))
            if hit is None:
                continue
            e.tiers.remove(tier)
            e.asked.append(Asked(hit, None, e.view.title, True))
            if self._title_done(e, hit):
                e.tiers.clear()
                self.finish(e)
                return
        if not e.tiers:
            self.finish(e)
            return
        async with self.changed:
            bisect.insort(self.pool, e, key=lambda x: x.index)
            self.changed.notify_all()

    def _pick(self, host: str) -> tuple[_Entry, plan.Tier] | None:
        for e in self.pool:
            if e.done or e.busy:
                continue
            tier = next((t for t in e.tiers if t.host == host), None)
            if tier is not None:
                return e, tier
        return None

    def _waiting_for(self, host: str) -> bool:
        return self.pool_open or any(
            not e.done and any(t.host == host for t in e.tiers) for e in self.pool)

    def _title_done(self, e: _Entry, answer: Lookup) -> bool:
        if not e.tiers:
            return True
        if answer.outcome is not Outcome.FOUND:
            return False
        if e.candidates_only:
            return True
        return any(_same_paper(e.view, r, self.settings) for r in answer.records)

    async def title_worker(self, host: str) -> None:
        if host == "s2":
            await self.s2_batch_sent.wait()  # the batch goes first: it answers many entries
        while True:
            async with self.changed:
                while True:
                    picked = self._pick(host)
                    if picked is not None:
                        break
                    if not self._waiting_for(host):
                        return
                    await self.changed.wait()
                e, tier = picked
                e.busy = True
                e.tiers.remove(tier)
            try:
                view = e.view
                lk, cached = await self.one(
                    plan.title_cache_key(tier, view), tier.host, tier.name,
                    functools.partial(plan.run_title_tier, self.sources, tier, view))
            except BaseException:
                async with self.changed:
                    e.busy = False
                    self.changed.notify_all()
                raise
            async with self.changed:
                e.busy = False
                e.asked.append(Asked(lk, None, view.title, cached))
                if self._title_done(e, lk):
                    e.tiers.clear()
                    self.finish(e)
                self.changed.notify_all()

    # ------------------------------------------------------------------ the whole run

    async def run(self) -> dict[str, Verification]:
        for e in self.entries:
            if not e.view.title.strip():
                self.finish(e)
            elif not e.ids:
                await self.add_to_pool(e)
        hosts = self.sources.hosts()
        workers = []
        for name in plan.TITLE_HOSTS:
            h = hosts.get(name)
            n = max(1, min(4, h.rate.max_concurrency)) if h is not None else 1
            workers += [self.title_worker(name) for _ in range(n)]
        await asyncio.gather(self.identifier_tiers(), *workers)
        for e in self.entries:  # anything left (cannot happen, but never lose an entry)
            self.finish(e)
        return {e.view.key: self.results[e.view.key] for e in self.entries}


async def verify_entries(
    views: Sequence[EntryView],
    settings: Settings,
    *,
    sources: Sources | None = None,
    cache: VerificationCache | None = None,
    log: Log = _no_log,
    progress: Progress | None = None,
) -> dict[str, Verification]:
    """Verify entries (priority order: cited first) against the scholarly sources.

    Returns one :class:`Verification` per entry key. Never raises, except
    :class:`asyncio.CancelledError` when the caller cancels (the editor does for
    stale checks). ``sources`` and ``cache`` default to ones built from
    ``settings`` (and closed again before returning).
    """
    own_sources = sources is None
    own_cache = cache is None
    src: Sources | None = sources
    store: VerificationCache | None = cache
    try:
        if store is None:
            store = open_cache(settings, log)
        if src is None:
            src = Sources.from_settings(settings, log)
        run = _Run(views, settings, src, store, log, progress)
        results = await run.run()
        _log_summary(log, results, src)
        return results
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log(f"citelens: verification failed: {type(exc).__name__}: {exc}")
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        return {v.key: Verification(v.key, Status.UNVERIFIED,
                                    f"Not verified: internal error ({type(exc).__name__})",
                                    checked_at=now, content_hash=content_hash(v),
                                    informational=plan.is_informational(v)) for v in views}
    finally:
        if own_sources and src is not None:
            await asyncio.shield(src.aclose())
        if own_cache and store is not None:
            store.close()


def _log_summary(log: Log, results: Mapping[str, Verification], sources: Sources) -> None:
    counts: dict[str, int] = {}
    for v in results.values():
        counts[v.status.value] = counts.get(v.status.value, 0) + 1
    reqs = {k: n for k, n in sources.request_counts().items() if n}
    log(f"verified {len(results)} entries: "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        + f"; requests so far: {reqs or 'none'}")
