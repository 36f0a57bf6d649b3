"""The verdict on one entry: what every answer collected for it says, and its words.

:func:`decide` is a pure function of the entry and its answers (:class:`Asked`), sorted
first, so the verdict, its messages ("in Semantic Scholar, OpenAlex, …") and the audit
trail do not depend on which host answered first. A failed or unavailable source
on the way makes an unresolved entry ``UNVERIFIED``, never ``NOT_FOUND``, unless it is one
whose answers are evidence only (OpenAlex's, priced against a daily budget:
``plan.evidence_only``) and every source the plan needs for "not found" answered
(``plan.not_found_needs``): a spent budget changes neither the verdict nor its class. Why it
is unverified is :attr:`Verification.unverified` (an :class:`Unverified`), so no reader
has to parse the summary. The scheduler (:mod:`citelens.verify.scheduler`) collects the
answers and calls :func:`decide`; the verdicts it makes itself (an internal error, the
deadline) are :func:`internal_error` and :func:`deadline_reached`.

This module is the one writer of a :class:`Verification` (frozen: nothing changes one once
made): everything a verdict says is an input of :func:`decide`, the print of a PDF's
reference (``EntryView.printed``), the answers of the local snapshot (named in the summary:
"Verified in OpenAlex (local snapshot of 2025-10-01)") and the retraction signal of a paper
S2 alone found (``signal``) included; the notices of the paper's records are merged here.
The same verdict for another entry of the same content (the drivers' one store) or of the
same shape (offline) is :func:`for_entry`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from citelens.core.codes import CODE_OF_STATUS, Code
from citelens.core.fields import IDENTIFIER_FIELDS, IDENTIFIER_LABELS, Field
from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.core.severity import Severity
from citelens.core.source_names import Source
from citelens.core.titles import normalize_title
from citelens.sources.names import SOURCE_NAMES, listed_rank, source_list, source_name
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.verify import classes, plan, retraction
from citelens.verify.identity import Identifiers, identifiers
from citelens.verify.match import printed
from citelens.verify.match.compare import (
    CANDIDATE_FLOOR,
    compare,
    identifier_conflict,
    is_confident_match,
    own_papers,
)
from citelens.verify.match.discrepancy import Discrepancy, Kind
from citelens.verify.match.titles import record_title_similarity
from citelens.verify.status import S2_NOT_FOUND, AuditStep, Status, Unverified, Verification

MAX_CANDIDATES = 5

_FIELD_LABEL = IDENTIFIER_LABELS
_FIELD_ORDER: tuple[str, ...] = IDENTIFIER_FIELDS
_FAILED = (Outcome.FAILED, Outcome.UNAVAILABLE)


@dataclass(slots=True)
class Asked:
    """One answer collected for an entry: from which tier, about which identifier."""

    lookup: Lookup
    field: str | None  # "doi" | "arxiv" | "pmid" | "s2" for identifier lookups; None: title
    value: str  # the identifier or title asked about
    cached: bool = False


def _asked_order(a: Asked) -> tuple[int, int, str, str, str]:
    f = _FIELD_ORDER.index(a.field) if a.field in _FIELD_ORDER else len(_FIELD_ORDER)
    return (
        f,
        listed_rank(a.lookup.source),
        a.lookup.source,
        a.lookup.method,
        a.value,
    )


def same_paper(view: EntryView, rec: PaperRecord, settings: Settings) -> bool:
    """A title-search hit is the entry's paper: a verified-level title, or a close title
    with a shared identifier or the same authors and year (then the title itself is the
    discrepancy). A marginal title by other authors in another year is another paper,
    for books too (their disagreements are reported leniently, not ignored)."""
    return is_confident_match(
        view, rec, settings.title_verified_threshold, settings.title_candidate_threshold
    )


def _record_id(rec: PaperRecord) -> tuple[str, str]:
    return rec.source, (rec.s2_paper_id or rec.doi or rec.arxiv_id or rec.pmid or rec.title.casefold())


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
    extra = ", ".join(
        x for x in (who + (" et al." if len(rec.authors) > 1 else ""), str(rec.year or "")) if x
    )
    return f"“{rec.title}”" + (f" ({extra})" if extra else "")


def _sources_list(asked: Sequence[Asked]) -> str:
    names = list(dict.fromkeys(source_name(a.lookup.source) for a in asked))
    return ", ".join(names)


#: How a lookup that failed for lack of a network connection describes itself
#: (sources/http.py: "connection failed: [Errno -2] ...", "<host> unavailable", timeouts).
_NETWORK_DETAILS = (
    "connection failed",
    "connection reset",
    "connection closed",
    "network error",
    "unavailable",
)


def is_network_failure(outcome: str, detail: str) -> bool:
    """A failed lookup that never reached the source (no DNS, no route, reset...); a host
    cut off by its circuit breaker ("answered HTTP 429 or 5xx ...") did answer."""
    return (
        outcome in {o.value for o in _FAILED}
        and "answered HTTP" not in detail
        and any(d in detail for d in _NETWORK_DETAILS)
    )


_OFFLINE = "offline, and no cached answer for this entry"
_OFFLINE_SUMMARY = f"Not verified: {_OFFLINE}"  # one string for every such entry


def _failure_text(asked: Sequence[Asked]) -> str:
    failed = [a for a in asked if a.lookup.outcome in _FAILED]
    if failed and all("offline" in a.lookup.detail for a in failed):
        return _OFFLINE
    unreachable: dict[str, None] = {}
    parts = []
    for name in dict.fromkeys(source_name(a.lookup.source) for a in failed):
        mine = [a.lookup for a in failed if source_name(a.lookup.source) == name]
        if all(is_network_failure(x.outcome.value, x.detail) for x in mine):
            unreachable[name] = None  # the errno text is the same for every entry: not here
            continue
        detail = next((x.detail for x in mine if x.detail), "")
        parts.append(f"{name} ({detail})" if detail else name)
    if unreachable:
        parts.insert(0, ", ".join(_in_source_order(unreachable)) + " (unreachable)")
    return "could not ask " + "; ".join(parts)


def _in_source_order(names: Iterable[str]) -> list[str]:
    order = list(SOURCE_NAMES.values())
    return sorted(set(names), key=lambda n: (order.index(n) if n in order else len(order), n))


def offline_summary(verifications: Iterable[Verification]) -> str | None:
    """ "offline: n entries unverified; sources unreachable: ..." when network failures left
    entries UNVERIFIED (sources in SOURCE_NAMES order), else None."""
    count = 0
    down: set[str] = set()
    failed: dict[tuple[str, str], bool] = {}  # audit steps repeat: (outcome, detail) once
    for v in verifications:
        if v.status is not Status.UNVERIFIED:
            continue
        hit = set()
        for a in v.audit:
            k = (a.outcome, a.detail)
            network = failed.get(k)
            if network is None:
                network = failed[k] = is_network_failure(a.outcome, a.detail)
            if network:
                hit.add(a.source)
        if hit:
            count += 1
            down |= hit
    if not count:
        return None
    names = _in_source_order(source_name(s) for s in down)
    return (
        f"offline: {count} {'entry' if count == 1 else 'entries'} unverified; "
        f"sources unreachable: {', '.join(names)}"
    )


def decide(
    view: EntryView,
    asked: Sequence[Asked],
    settings: Settings,
    *,
    chash: str = "",
    checked_at: str = "",
    ids: Identifiers | None = None,
    signal: Asked | None = None,
) -> Verification:
    """The verdict on one entry from every answer collected for it. Pure.
    ``ids`` are the entry's identifiers when the caller has them (``identity.identifiers``).
    ``signal``: the answer about the found paper's retraction status when none of its
    records could tell (:func:`citelens.verify.retraction.signal_doi`: a paper S2 alone
    found), asked once the verdict without it named the paper; its step ends the audit."""
    informational = plan.is_informational(view)
    # Answers arrive in whatever order the hosts answered: sort them, so the verdict, its
    # messages ("in Semantic Scholar, OpenAlex, …") and the audit trail are the same each run.
    asked = sorted(asked, key=_asked_order)
    audit = [_step(a) for a in asked]

    def make(status: Status, summary: str, **kw: Any) -> Verification:
        """The verdict, with the code of its findings (its status's unless its rules named
        another) and the notices of the paper's records (and of the signal)."""
        kw.setdefault("code", _code(status, kw.get("unverified")))
        notices = retraction.merge(retraction.records_of(status, kw.get("match"), kw.get("versions", ())))
        if signal is not None:
            lk = signal.lookup
            detail = lk.detail or "retraction check"
            audit.append(AuditStep(lk.method, lk.source, lk.outcome.value, detail, signal.cached))
            if lk.outcome is Outcome.FOUND:
                notices = retraction.combine([notices, *(r.notices for r in lk.records[:1])])
        return Verification(
            key=view.key,
            status=status,
            summary=summary,
            audit=audit,
            checked_at=checked_at,
            content_hash=chash,
            informational=informational,
            notices=notices,
            **kw,
        )

    if view.printed is not None:  # read from a PDF: the print is read with the answers
        reading = printed.title_reading(view.printed, [r for a in asked for r in a.lookup.records])
        if reading is not None:
            view = dataclasses.replace(view, title=reading)
    elif not view.title.strip():
        return make(
            Status.UNVERIFIED,
            "The entry has no title, so it cannot be checked against scholarly sources",
            unverified=Unverified.NO_TITLE,
        )
    ans = _answers(view, asked, settings, identifiers(view) if ids is None else ids)
    bad_fields = [f for f in _FIELD_ORDER if f in ans.conflicts and f not in ans.same_fields]
    if bad_fields:  # an identifier names another paper
        status, summary, kw = _mismatch(ans, bad_fields)
    elif ans.same_by_id or ans.same_by_title:  # the paper was found
        status, summary, kw = _found(ans, audit)
    else:
        status, summary, kw = _nothing_matched(ans, informational)
    if status in (Status.NOT_FOUND, Status.DOI_MISMATCH):  # what the class reads
        kw["pointers"] = classes.pointers(view, checked_at)
        kw["refuted"] = _refuted(asked)
    return make(status, summary, **kw)


def _code(status: Status, unverified: Unverified | None) -> Code | None:
    """The code of a verdict's findings: its status's (``core/codes.CODE_OF_STATUS``), or
    REFERENCE_NOT_READ for a reference read from a PDF without confidence that no source
    recognised (the reader's failure: never NOT_FOUND)."""
    if status is Status.UNVERIFIED and unverified is Unverified.UNREAD:
        return Code.REFERENCE_NOT_READ
    return CODE_OF_STATUS.get(status)


def _refuted(asked: Sequence[Asked]) -> tuple[str, ...]:
    """The identifiers their own registry answered "no such id" for (``classes.REGISTRY``:
    doi.org for a DOI, arXiv, PubMed), in field order."""
    return tuple(
        f
        for f, registry in classes.REGISTRY.items()
        if any(
            a.field == f and a.lookup.source == registry and a.lookup.outcome is Outcome.NOT_FOUND
            for a in asked
        )
    )


#: Discrepancies another version of the same paper can explain: its year (a preprint a year
#: or two before the journal paper), its venue (a conference paper and its journal
#: extension, a venue's other names), its title (the preprint's title, the published one).
VERSION_KINDS = frozenset(
    {Kind.YEAR, Kind.VENUE, Kind.VENUE_UNPUBLISHED, Kind.PREPRINT_STATUS, Kind.TITLE_WORDS, Kind.TITLE}
)


def wants_versions(v: Verification) -> bool:
    """The paper was found and its only differences from the entry are ones another version
    could explain (:data:`VERSION_KINDS`: a year one off, a preprint's venue, a venue's other
    name, title words): it is not decided until the versions every source knows have
    answered. A title the sources do not share at all (an error), wrong authors or
    identifiers stand whatever other versions say."""
    ds = v.discrepancies
    return (
        v.status is Status.PARTIAL
        and bool(ds)
        and all(d.kind in VERSION_KINDS and d.severity is not Severity.ERROR for d in ds)
    )


def _step(a: Asked) -> AuditStep:
    lk = a.lookup
    return _shared_step(lk.method, lk.source, lk.outcome.value, lk.detail, a.cached)


#: Audit steps are plain data no one changes: equal ones are shared (an offline run over
#: 68,000 entries would otherwise hold 600,000 copies of "offline: not in the cache").
@lru_cache(maxsize=4096)
def _shared_step(method: str, source: str, outcome: str, detail: str, cached: bool) -> AuditStep:
    return AuditStep(method, source, outcome, detail, cached)


@dataclass(slots=True)
class _Answers:
    """What the (sorted) answers for one entry say about it."""

    view: EntryView
    asked: list[Asked]
    settings: Settings
    ids: Identifiers
    same_by_id: list[tuple[Asked, PaperRecord]] = field(default_factory=list)
    conflicts: dict[str, list[PaperRecord]] = field(default_factory=dict)
    same_fields: set[str] = field(default_factory=set)
    same_by_title: list[tuple[Asked, PaperRecord]] = field(default_factory=list)
    all_records: list[PaperRecord] = field(default_factory=list)

    def candidates(self, exclude: Sequence[PaperRecord] = ()) -> list[PaperRecord]:
        skip = {_record_id(r) for r in exclude}
        scored = [
            (record_title_similarity(self.view.title, r.title or ""), r)
            for r in self.all_records
            if _record_id(r) not in skip and not any(r in v for v in self.conflicts.values())
        ]
        scored = [(s, r) for s, r in scored if s >= CANDIDATE_FLOOR]
        scored.sort(key=lambda sr: -sr[0])
        return [r for _, r in scored[:MAX_CANDIDATES]]


_Verdict = tuple[Status, str, dict[str, Any]]


def identifier_hits(
    view: EntryView, asked: Iterable[Asked], settings: Settings
) -> Iterator[tuple[Asked, str, PaperRecord, bool]]:
    """Each identifier lookup that found a record: (the answer, its field, the record,
    whether the record is another paper than the entry's). The scheduler asks the next
    source by these, and :func:`decide` judges by them."""
    threshold = settings.title_candidate_threshold
    for a in asked:
        if a.field is None or a.lookup.outcome is not Outcome.FOUND:
            continue
        for rec in a.lookup.records[:1]:
            yield a, a.field, rec, identifier_conflict(view, rec, threshold)


def _answers(view: EntryView, asked: list[Asked], settings: Settings, ids: Identifiers) -> _Answers:
    ans = _Answers(view, asked, settings, ids)
    for a, f, rec, other_paper in identifier_hits(view, asked, settings):
        if other_paper:
            ans.conflicts.setdefault(f, []).append(rec)
        else:
            ans.same_by_id.append((a, rec))
            ans.same_fields.add(f)
    title_hits = [
        (a, r)
        for a in asked
        if a.field is None and a.lookup.outcome is Outcome.FOUND
        for r in a.lookup.records
    ]
    ans.same_by_title = [(a, r) for a, r in title_hits if same_paper(view, r, settings)]
    ans.all_records = _dedupe([r for a in asked for r in a.lookup.records])
    return ans


def _mismatch(ans: _Answers, bad_fields: list[str]) -> _Verdict:
    view, ids, conflicts = ans.view, ans.ids, ans.conflicts
    f = bad_fields[0]
    rec = conflicts[f][0]
    value = getattr(ids, f) or ""
    where = ", ".join(dict.fromkeys(source_name(r.source) for r in conflicts[f]))
    msg = (
        f"{_FIELD_LABEL[f]} {value} belongs to a different paper: {_describe(rec)} "
        f"in {where}, not “{view.title}”"
    )
    discrepancies = [
        Discrepancy(
            Field(f),
            Kind.IDENTIFIER,
            Severity.ERROR,
            f"{f}: {value} in the entry is {_describe(rec)} in {where}",
            value,
            rec.title,
            rec.source,
        )
    ]
    for g in bad_fields[1:]:
        r2 = conflicts[g][0]
        v2 = getattr(ids, g) or ""
        discrepancies.append(
            Discrepancy(
                Field(g),
                Kind.IDENTIFIER,
                Severity.ERROR,
                f"{g}: {v2} in the entry is {_describe(r2)}",
                v2,
                r2.title,
                r2.source,
            )
        )
    right = _dedupe([r for _, r in ans.same_by_id] + [r for _, r in ans.same_by_title])
    candidates = right + ans.candidates(right)
    threshold = ans.settings.title_verified_threshold
    first = next((a for a in ans.asked if a.field == f and a.lookup.outcome is Outcome.FOUND), None)
    return (
        Status.DOI_MISMATCH,
        msg,
        dict(
            match=rec,
            score=record_title_similarity(view.title, rec.title or ""),
            method=first.lookup.method if first else "",
            discrepancies=discrepancies,
            candidates=candidates,
            right_papers=own_papers(view, candidates, rec.doi, threshold),
        ),
    )


def _found(ans: _Answers, audit: list[AuditStep]) -> _Verdict:
    view, asked, settings = ans.view, ans.asked, ans.settings
    same = ans.same_by_id + ans.same_by_title

    def rank(item: tuple[Asked, PaperRecord]) -> tuple[bool, float, bool]:
        a, r = item
        return (
            a.field is not None,
            record_title_similarity(view.title, r.title or ""),
            r.source == Source.S2,
        )

    best_asked, match = max(same, key=rank)
    versions = [r for r in _dedupe([r for _, r in same]) if _record_id(r) != _record_id(match)]
    if view.printed is not None:  # the print read again where the paper's title is printed
        view = printed.anchored(view, [match, *versions]) or view
    cmp = compare(
        view,
        [match, *versions],
        verified_threshold=settings.title_verified_threshold,
        candidate_threshold=settings.title_candidate_threshold,
    )
    # an identifier no source resolves is one problem, said once: "resolves nowhere; the
    # paper's DOI is ..." stands for the comparison's "the paper has another DOI"
    unresolved = _unresolvable_ids(view, asked, match, ans.same_fields)
    said = {d.field for d in unresolved}
    found = [d for d in cmp.discrepancies if not (d.kind is Kind.IDENTIFIER and d.field in said)]
    found += unresolved
    slipped = False
    if view.printed is not None:  # a difference the print does not make is the reader's
        misread = record_title_similarity(view.title, match.title or "") < settings.title_candidate_threshold
        found += printed.elided_last_author(view.printed, [match, *versions])
        read = printed.slips(view.printed, [match, *versions], found, misread=misread)
        slipped = any(a is not b for a, b in zip(read, found, strict=True))
        found = read
    if (
        any(a.lookup.source == Source.S2 and a.lookup.outcome is Outcome.NOT_FOUND for a in asked)
        and match.source != Source.S2
    ):
        audit.append(
            AuditStep(
                S2_NOT_FOUND,
                Source.S2,
                S2_NOT_FOUND,
                f"Semantic Scholar does not know this paper; found in {source_name(match.source)}",
            )
        )
    # every source that holds the paper, in the defined order: the same words whichever
    # answered first (the record compared against is still the best match)
    where = ", ".join(source_list(r.source for _, r in same))
    serious = any(d.severity.rank >= Severity.WARNING.rank for d in found)
    if serious and view.printed is not None and not view.printed.confident:
        # fields not read with confidence, differences the print does not explain: the
        # reader's failure, not the author's (never an accusation from a misread)
        return (
            Status.UNVERIFIED,
            printed.unread_summary(view.printed),
            dict(candidates=[match, *versions][:MAX_CANDIDATES], unverified=Unverified.UNREAD),
        )
    if slipped and not serious:
        status, summary = (
            Status.VERIFIED,
            f"Verified in {where}: {_describe(match)} (the differences are the PDF reader's: "
            f"the printed reference has the paper's)",
        )
    elif found:
        shown = "; ".join(d.message for d in found[:2])
        more = f" (+{len(found) - 2} more)" if len(found) > 2 else ""
        status, summary = Status.PARTIAL, f"Found in {where}, but {shown}{more}"
    else:
        status, summary = Status.VERIFIED, f"Verified in {where}: {_describe(match)}"
    if best_asked.lookup.source == Source.SNAPSHOT:
        summary = _snapshot_named(summary, best_asked.lookup, match)
    return (
        status,
        summary,
        dict(
            match=match,
            versions=versions,
            score=record_title_similarity(view.title, match.title or ""),
            method=best_asked.lookup.method,
            discrepancies=found,
        ),
    )


def _snapshot_named(summary: str, answer: Lookup, match: PaperRecord) -> str:
    """The summary of a paper the local snapshot answered for, saying so and of when:
    "Verified in OpenAlex (local snapshot of 2025-10-01): …" (its answers' detail opens with
    those words: ``verify/snapshot.describe``)."""
    where = source_name(match.source)
    tier = answer.detail.split(" (", 1)[0]
    if where and f"in {where}" in summary:
        return summary.replace(f"in {where}", f"in {where} ({tier})", 1)
    return f"{summary} ({tier})"


def _failed_for_good(ans: _Answers) -> bool:
    """A failed answer stands in the way of "not found": one of a source the entry needs, or
    any while a need of the plan is unmet (``plan.not_found_needs``); a source whose answers
    are evidence only (``plan.evidence_only``) does not, when every need was met."""
    failed = [a for a in ans.asked if a.lookup.outcome in _FAILED]
    if not failed:
        return False
    if any(not plan.evidence_only(a.lookup.source) for a in failed):
        return True
    answered = ((a.field, a.lookup.method, a.lookup.outcome) for a in ans.asked)
    return bool(plan.unmet_needs(ans.view, ans.ids, answered))


def _nothing_matched(ans: _Answers, informational: bool) -> _Verdict:
    asked, ids, all_records = ans.asked, ans.ids, ans.all_records
    cands = ans.candidates()
    if _failed_for_good(ans):
        why = _failure_text(asked)
        if why is _OFFLINE:
            return Status.UNVERIFIED, _OFFLINE_SUMMARY, dict(candidates=cands, unverified=Unverified.OFFLINE)
        return (
            Status.UNVERIFIED,
            f"Not verified: {why}",
            dict(candidates=cands, unverified=Unverified.LOOKUP_FAILED),
        )
    if not asked:
        return (
            Status.UNVERIFIED,
            "Not verified: no source was asked",
            dict(unverified=Unverified.NOTHING_ASKED),
        )
    view = ans.view
    if view.printed is not None and not view.printed.confident:  # the reader's failure, not a miss
        return (
            Status.UNVERIFIED,
            printed.unread_summary(view.printed),
            dict(candidates=cands, unverified=Unverified.UNREAD),
        )
    dead = [f for f in _FIELD_ORDER if getattr(ids, f) and any(a.field == f for a in asked)]
    closest = f"; closest candidate: {_describe(cands[0])}" if cands else ""
    if all_records:  # the searches answered, with other papers: say so, not just "not found"
        n = len({normalize_title(r.title or "") for r in all_records})  # papers, not records
        closest = f"; searched: {n} candidate{'s' if n > 1 else ''}, none is this paper" + closest
    answered = [a for a in asked if a.lookup.outcome not in _FAILED]  # (not the skipped ones)
    if dead:
        f = dead[0]
        value = getattr(ids, f) or ""
        asked_f = [a for a in answered if a.field == f]
        summary = (
            f"{_FIELD_LABEL[f]} {value} resolves nowhere ({_sources_list(asked_f)}), "
            f"and no paper with this title was found{closest}"
        )
    else:
        summary = f"Not found in {_sources_list(answered)}: no paper with this title{closest}"
    if informational:
        summary += " (common for books, theses, reports, software and web pages)"
    return Status.NOT_FOUND, summary, dict(candidates=cands)


def _unresolvable_ids(
    view: EntryView, asked: Sequence[Asked], match: PaperRecord, same_fields: set[str]
) -> list[Discrepancy]:
    """Identifiers of a found paper that every source asked answered "no such id" for."""
    ids = identifiers(view)
    out = []
    for f in _FIELD_ORDER:
        value = getattr(ids, f)
        tries = [  # a source whose answers are evidence only and that failed does not count
            a
            for a in asked
            if a.field == f and not (a.lookup.outcome in _FAILED and plan.evidence_only(a.lookup.source))
        ]
        if not value or f in same_fields or len(tries) < 2:
            continue
        if all(a.lookup.outcome is Outcome.NOT_FOUND for a in tries):
            known = {"doi": match.doi, "arxiv": match.arxiv_id, "pmid": match.pmid, "s2": match.s2_paper_id}[
                f
            ]
            tail = f"; the paper's {_FIELD_LABEL[f]} is {known}" if known else ""
            out.append(
                Discrepancy(
                    Field(f),
                    Kind.IDENTIFIER,
                    Severity.WARNING,
                    f"{f}: {value} in the entry resolves nowhere ({_sources_list(tries)}){tail}",
                    value,
                    known or "",
                    match.source,
                )
            )
    return out


def for_entry(v: Verification, key: str, chash: str | None = None) -> Verification:
    """``v``, the verdict on an entry of the same content, as the verdict on the entry of
    ``key`` (the drivers' one store keeps one verdict per content: ``workspace/verdicts.py``);
    with ``chash``, on an entry of another content but the same shape, offline, where no
    answer could be read (``verify/offline.py``: the verdict depends on the shape alone)."""
    if chash is None:
        return v if v.key == key else dataclasses.replace(v, key=key)
    return dataclasses.replace(
        v,
        key=key,
        content_hash=chash,
        audit=list(v.audit),
        candidates=list(v.candidates),
        right_papers=list(v.right_papers),
        notices=list(v.notices),
    )


def internal_error(
    key: str, exc: BaseException, *, chash: str, checked_at: str, informational: bool
) -> Verification:
    """The verdict on an entry whose decision raised (never lost: UNVERIFIED)."""
    return Verification(
        key,
        Status.UNVERIFIED,
        f"Not verified: internal error ({type(exc).__name__})",
        checked_at=checked_at,
        content_hash=chash,
        informational=informational,
        unverified=Unverified.INTERNAL_ERROR,
        code=Code.UNVERIFIED,
    )


def deadline_reached(
    view: EntryView, asked: Sequence[Asked], limit: float, *, chash: str, checked_at: str
) -> Verification:
    """The verdict on an entry the run's deadline (``verifyDeadlineS``) left undecided."""
    audit = [
        AuditStep(a.lookup.method, a.lookup.source, a.lookup.outcome.value, a.lookup.detail, a.cached)
        for a in asked
    ]
    return Verification(
        view.key,
        Status.UNVERIFIED,
        f"Not verified: the check reached its time limit ({limit:g} s) before this "
        "entry was decided; answers so far are cached, so the next check continues",
        audit=audit,
        checked_at=checked_at,
        content_hash=chash,
        informational=plan.is_informational(view),
        unverified=Unverified.DEADLINE,
        code=Code.UNVERIFIED,
    )
