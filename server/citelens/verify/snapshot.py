"""The snapshot tier: a local copy of the indexes answers before any API.

An entry the snapshot holds with confidence costs no request: every identifier it carries
(DOI, arXiv id, PMID) resolves in the snapshot to the entry's paper, or, with none, a title
lookup finds a confident match. Anything less (an identifier the snapshot lacks or gives
to another paper, a Semantic Scholar id, a title it does not hold) leaves the entry to the
APIs exactly as without a snapshot: a snapshot is a copy of the past, so what it does not
hold is never NOT_FOUND on its word (papers newer than it, fields it left out).

A title alone decides only when the snapshot is sure (``plan.snapshot_title_settles``, the
plan's rule for its first tier): the title is
not one many works share ("Preface", "Introduction", "Editorial", ...: another volume's
"Preface" is not the entry's), the entry is not from the snapshot's year or later (the
paper may be newer than the snapshot, and an older paper of the same authors with a
similar title is not it), a matching record's year and authors agree with the entry's, and
no second paper matches as well. Otherwise the APIs are asked, as without a snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from citelens.core.fields import Field
from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.core.source_names import Source
from citelens.snapshot.store import Snapshot, SnapshotError
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.verify import plan
from citelens.verify.identity import Identifiers
from citelens.verify.match import printed
from citelens.verify.match.compare import CANDIDATE_FLOOR, identifier_conflict
from citelens.verify.match.titles import title_similarity

SOURCE = Source.SNAPSHOT
#: The identifiers the snapshot is asked about, and the method of its answer for each.
_FIELDS = {
    Field.DOI: Method.SNAPSHOT_DOI,
    Field.ARXIV: Method.SNAPSHOT_ARXIV,
    Field.PMID: Method.SNAPSHOT_PMID,
}
#: (field or None for the title, the value asked about, the snapshot's answer)
Answer = tuple[str | None, str, Lookup]


def open_snapshot(settings: Settings, log: Callable[[str], None]) -> Snapshot | None:
    """The snapshot the ``snapshot`` setting names, or None (logged when it cannot be read)."""
    if not settings.snapshot:
        return None
    try:
        return Snapshot(settings.snapshot, log)
    except SnapshotError as exc:
        log(f"snapshot not used: {exc}")
        return None


def describe(snap: Snapshot) -> str:
    """ "local snapshot of 2025-10-01" — how a verdict names the tier and its date (its
    answers' detail opens with these words: ``verify/verdict.decide`` reads them)."""
    return f"local snapshot of {snap.info.date}" if snap.info.date else "local snapshot"


def _lookup(snap: Snapshot, method: str, records: list[PaperRecord]) -> Lookup:
    detail = f"{describe(snap)} ({snap.info.sources})" if snap.info.sources else describe(snap)
    outcome = Outcome.FOUND if records else Outcome.NOT_FOUND
    return Lookup(SOURCE, method, outcome, records, detail)


def ask(snap: Snapshot, view: EntryView, ids: Identifiers, settings: Settings) -> list[Answer] | None:
    """The snapshot's answers for an entry when they settle it, else None (ask the APIs). A
    reference read from a PDF whose title does not settle it: the works whose title, first
    authors and year its printed string holds (:func:`printed_search`)."""
    if ids.s2:
        return None
    if not view.title.strip():
        return printed_search(snap, view) if view.printed is not None else None
    out: list[Answer] = []
    for f, method in _FIELDS.items():
        value = getattr(ids, f)
        if not value:
            continue
        recs = snap.by_id(f, value)
        if not recs or identifier_conflict(view, recs[0], settings.title_candidate_threshold):
            return None  # not held, or another paper's: the APIs say which
        out.append((f, value, _lookup(snap, method, recs)))
    if out:
        return out
    hits: list[PaperRecord] = []
    if plan.snapshot_title_may_settle(view, snapshot_year(snap)):
        hits = [r for _s, r in snap.by_title(view.title, title_similarity, CANDIDATE_FLOOR)]
    if not hits or not plan.snapshot_title_settles(view, hits, settings):
        return printed_search(snap, view) if view.printed is not None else None
    return [(None, view.title, _lookup(snap, Method.SNAPSHOT_TITLE, hits))]


def printed_search(snap: Snapshot, view: EntryView) -> list[Answer] | None:
    """Works of the snapshot that a PDF reference's printed string names (its title, first
    authors and year are printed: ``verify/match/printed.confirms``), found by its title index
    asked with each field of the print that could be the title; None when none is."""
    if view.printed is None:
        return None
    raw = view.printed.text
    text = printed.folded(raw)

    def score(_query: str, title: str) -> float:
        return 1.0 if len(printed.compact(title)) >= 8 and printed.phrase(title, text) else 0.0

    for segment in _title_like(raw):
        found = [r for _s, r in snap.by_title(segment, score, 0.5, 5) if printed.confirms(raw, [r])]
        if found:
            return [(None, raw, _lookup(snap, Method.SNAPSHOT_REFERENCE, found))]
    return None


_FIELD_BREAK = re.compile(r"[“”\"]|(?<=[a-z0-9)?])[.?]\s+(?=[A-Z0-9“\"])|\(\s*(?:1[89]|20)\d\d[a-z]?\s*\)\.?")


def _title_like(raw: str) -> list[str]:
    """The fields of a printed reference that could be its title (between quotes, full stops
    or the year in parentheses; three words or more), longest first, at most four."""
    parts = [p.strip(" ,.;:") for p in _FIELD_BREAK.split(raw)]
    fields = [p for p in parts if 3 <= len(p.split()) <= 60]
    return sorted(fields, key=len, reverse=True)[:4]


def snapshot_year(snap: Snapshot) -> int | None:
    date = snap.info.date
    return int(date[:4]) if date[:4].isdigit() else None


def signal(snap: Snapshot, doi: str) -> Lookup | None:
    """The snapshot's Crossref record of the paper with ``doi`` (a snapshot built with
    Crossref data carries its notices); None when it holds none: the APIs are asked."""
    recs = [r for r in snap.by_id(Field.DOI, doi) if r.source == Source.CROSSREF]
    return _lookup(snap, Method.SNAPSHOT_DOI, recs[:1]) if recs else None
