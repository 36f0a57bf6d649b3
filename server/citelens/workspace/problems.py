"""The same finding twice is one (:func:`distinct`, for the editor and for reports); and
each problem once, for reports: the editor shows a wrong entry at the ``.bib`` and at
every citation of it, and both entries of a duplicate pair; ``citelens check`` prints and
counts the problem once, at one place, with its other places as related locations.

* a finding at a citation that points at its entry (``checks/verification._at_citation``)
  joins the finding of the same code on that entry;
* the findings of one duplicate pair (``DUPLICATE_ENTRY``) or of one key defined several
  times (``DUPLICATE_KEY``) are one problem: each names the others as related already.
"""

from __future__ import annotations

from collections.abc import Iterable

from citelens.core.codes import REGISTRY
from citelens.core.findings import Finding, Related

#: Codes whose findings at citations repeat a finding on the entry (the registry says).
_ALSO_AT_CITATIONS = frozenset(c for c, row in REGISTRY.items() if row.joins_entry)
_SETS = frozenset(c for c, row in REGISTRY.items() if row.one_per_set)


def _at_citation(f: Finding) -> bool:
    return (
        f.code in _ALSO_AT_CITATIONS
        and f.key is not None
        and len(f.related) == 1
        and f.related[0].path != f.path
        and f.data.get("bib") == f.related[0].path
    )


def distinct(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` without repeats, in their order: a finding at the same place with the
    same code and message as an earlier one (two projects sharing a .bib find its
    problems twice) is dropped. The one de-duplication of findings: the editor's
    (``Engine.findings``) and ``citelens check``'s."""
    seen: set[tuple[str, int, int, str, str]] = set()
    out: list[Finding] = []
    for f in findings:
        k = (f.path, f.span.start, f.span.end, f.code, f.message)
        if k not in seen:
            seen.add(k)
            out.append(f)
    return out


def by_place(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` sorted by file, place, code and message (a report's order)."""
    return sorted(findings, key=lambda f: (f.path, f.span.start, f.span.end, f.code, f.message))


def one_per_problem(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` (sorted by place) with each problem once: the first place of each
    problem keeps it (its severity the highest of the places), the others become related
    locations. The findings given are not changed."""
    out: list[Finding] = []
    anchors: dict[tuple[str, str, str], int] = {}  # (code, key, .bib) -> index in out
    pending: list[Finding] = []  # citations, joined once every entry finding is known
    sets: dict[tuple[str, frozenset[tuple[str, int]]], int] = {}
    for f in findings:
        if _at_citation(f):
            pending.append(f)
            continue
        if f.code in _SETS:
            places = frozenset([(f.path, f.span.start), *((r.path, r.span.start) for r in f.related)])
            at = sets.get((f.code, places))
            if at is not None:
                out[at] = _join(out[at], f, f.message)
                continue
            sets[(f.code, places)] = len(out)
        elif f.key is not None and f.code in _ALSO_AT_CITATIONS:
            anchors.setdefault((f.code, f.key, f.path), len(out))
        out.append(f)
    for f in pending:
        k = (f.code, f.key or "", f.related[0].path)
        at = anchors.get(k)
        if at is None:
            anchors[k] = len(out)
            out.append(f)
        else:
            out[at] = _join(out[at], f, "cited here")
    return out


def _join(primary: Finding, other: Finding, message: str) -> Finding:
    """``primary`` with ``other``'s place as a related location (once)."""
    have = {(primary.path, primary.span.start), *((r.path, r.span.start) for r in primary.related)}
    related = list(primary.related)
    if (other.path, other.span.start) not in have:
        related.append(Related(other.path, other.span, message))
    severity = other.severity if other.severity.rank > primary.severity.rank else primary.severity
    p = primary
    return Finding(p.path, p.span, p.code, p.message, severity, p.key, related, p.data)
