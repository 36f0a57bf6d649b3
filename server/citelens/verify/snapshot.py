"""The snapshot tier: a local copy of the indexes answers before any API.

An entry the snapshot holds with confidence costs no request: every identifier it carries
(DOI, arXiv id, PMID) resolves in the snapshot to the entry's paper, or, with none, a title
lookup finds a confident match. Anything less (an identifier the snapshot lacks or gives
to another paper, a Semantic Scholar id, a title it does not hold) leaves the entry to the
APIs exactly as without a snapshot: a snapshot is a copy of the past, so what it does not
hold is never NOT_FOUND on its word (papers newer than it, fields it left out).
"""

from __future__ import annotations

from collections.abc import Callable

from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.core.source_names import Source, source_name
from citelens.snapshot.store import Snapshot, SnapshotError
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.verify.identity import Identifiers
from citelens.verify.match.compare import identifier_conflict, is_confident_match
from citelens.verify.match.titles import title_similarity

SOURCE = Source.SNAPSHOT
#: The identifiers the snapshot is asked about, and the method of its answer for each.
_FIELDS = {"doi": Method.SNAPSHOT_DOI, "arxiv": Method.SNAPSHOT_ARXIV, "pmid": Method.SNAPSHOT_PMID}
_CANDIDATE_FLOOR = 0.5

#: (field or None for the title, the value asked about, the snapshot's answer)
Answer = tuple[str | None, str, Lookup]


def open_snapshot(settings: Settings, log: Callable[[str], None]) -> Snapshot | None:
    """The snapshot the ``snapshot`` setting names, or None (logged when it cannot be read)."""
    if not settings.snapshot:
        return None
    try:
        return Snapshot(settings.snapshot, log)
    except SnapshotError as exc:
        log(f"citelens: snapshot not used: {exc}")
        return None


def describe(snap: Snapshot) -> str:
    """ "local snapshot of 2025-10-01" — how a verdict names the tier and its date."""
    return f"local snapshot of {snap.info.date}" if snap.info.date else "local snapshot"


def _lookup(snap: Snapshot, method: str, records: list[PaperRecord]) -> Lookup:
    detail = f"{describe(snap)} ({snap.info.sources})" if snap.info.sources else describe(snap)
    outcome = Outcome.FOUND if records else Outcome.NOT_FOUND
    return Lookup(SOURCE, method, outcome, records, detail)


def ask(snap: Snapshot, view: EntryView, ids: Identifiers, settings: Settings) -> list[Answer] | None:
    """The snapshot's answers for an entry when they settle it, else None (ask the APIs)."""
    if not view.title.strip() or ids.s2:
        return None
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
    hits = snap.by_title(view.title, title_similarity, _CANDIDATE_FLOOR)
    recs = [r for _s, r in hits]
    if not any(
        is_confident_match(view, r, settings.title_verified_threshold, settings.title_candidate_threshold)
        for r in recs
    ):
        return None
    return [(None, view.title, _lookup(snap, Method.SNAPSHOT_TITLE, recs))]


def signal(snap: Snapshot, doi: str) -> Lookup | None:
    """The snapshot's OpenAlex or Crossref record of the paper with ``doi``, whose notices
    are its retraction flags (``is_retracted``, ``updated-by``); None when it holds neither."""
    recs = [r for r in snap.by_id("doi", doi) if r.source in (Source.OPENALEX, Source.CROSSREF)]
    return _lookup(snap, Method.SNAPSHOT_DOI, recs[:1]) if recs else None


def name_tier(summary: str, snap: Snapshot, match: PaperRecord | None) -> str:
    """The verdict's summary, saying that the local snapshot answered and of when."""
    where = source_name(match.source) if match is not None else ""
    tier = describe(snap)
    if where and f"in {where}" in summary:
        return summary.replace(f"in {where}", f"in {where} ({tier})", 1)
    return f"{summary} ({tier})"
