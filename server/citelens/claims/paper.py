"""Which paper a claim is checked against: the one verification accepted, nothing else.

The claim check never looks for the cited paper on its own (a second matcher with its
own threshold could read a similar-looking paper the verification section calls "not
this paper"). It reads the verdict: VERIFIED names the paper, and so does PARTIAL when
the entry's authors and title agree with it (a wrong year, venue, pages or identifier is a
real paper cited carelessly); its record (with the other versions verification found of
it) is what the abstract and full-text cascades start from. A PARTIAL entry whose authors
or title disagree (a placeholder author, no shared author, a title with words added or
changed) may not be that paper at all: a verdict on it would look more certain than the
citation is. Every other verdict gets one line saying why there is no check, and no
abstract.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from citelens.core.fields import IDENTIFIER_LABELS, Field
from citelens.core.identifiers import normalize_arxiv, normalize_doi
from citelens.sources.records import PaperRecord
from citelens.verify.match.discrepancy import Discrepancy, Kind
from citelens.verify.status import Status, Verification

ACCEPTED = frozenset({Status.VERIFIED, Status.PARTIAL})

WAITING = "Claim check: starts once the cited paper is identified."
_WHY_NOT = {
    Status.NOT_FOUND: "No claim check: verification found no paper for this entry (NOT_FOUND), "
    "so there is no abstract of the cited paper to read.",
    Status.UNVERIFIED: "No claim check: the cited paper could not be identified (UNVERIFIED: "
    "a source failed, or offline); it is checked once verification succeeds.",
}
#: How a DOI_MISMATCH names the identifier that resolved to another paper.
_IDENTIFIER = IDENTIFIER_LABELS
#: Discrepancy kinds that put the cited paper in doubt: its authors or its title disagree.
#: ("authors_missing"/"authors_incomplete": the named authors are the paper's, some left out.)
DOUBTFUL_KINDS = frozenset({Kind.AUTHORS, Kind.PLACEHOLDER_AUTHOR, Kind.TITLE, Kind.TITLE_WORDS})
NOT_VERIFIED = (
    "No claim check: verification is off (verificationEnabled), so the cited paper is not identified."
)


@dataclass(frozen=True, slots=True)
class CitedPaper:
    """The decision for one entry: the accepted record, or why there is none."""

    record: PaperRecord | None
    reason: str = ""  # one line, when ``record`` is None
    waiting: bool = False  # verification is still running: the check comes later


def cited_paper(verdict: Verification | None, *, verifying: bool = False) -> CitedPaper:
    """The record verification accepted as the cited paper (its abstract filled from
    another version of the same paper when it has none), or the reason there is none."""
    if verdict is None or (verifying and verdict.status not in ACCEPTED):
        if verifying:
            return CitedPaper(None, WAITING, waiting=True)
        return CitedPaper(None, NOT_VERIFIED)
    if verdict.status is Status.DOI_MISMATCH:
        return CitedPaper(None, mismatch_reason(verdict))
    if verdict.status not in ACCEPTED or verdict.match is None:
        return CitedPaper(None, _WHY_NOT.get(verdict.status, f"No claim check ({verdict.status.value})."))
    doubt = doubtful(verdict)
    if doubt:
        return CitedPaper(None, doubt_reason(doubt))
    record = verdict.match
    if not (record.abstract or "").strip():
        other = next((v for v in verdict.versions if (v.abstract or "").strip()), None)
        if other is not None:
            record = replace(record, abstract=other.abstract, source=other.source)
    return CitedPaper(record)


def mismatch_reason(verdict: Verification) -> str:
    """The DOI_MISMATCH line, naming the identifier that resolved to another paper (the
    DOI, the arXiv id, the PMID...), read from the verdict's identifier discrepancies."""
    fields = [d.field for d in verdict.discrepancies if d.kind == Kind.IDENTIFIER and d.field in _IDENTIFIER]
    names = list(dict.fromkeys(_IDENTIFIER[f] for f in fields)) or ["DOI"]
    which = " and ".join(names)
    verb = "name" if len(names) > 1 else "names"
    return (
        f"No claim check: the entry's {which} {verb} another paper (DOI_MISMATCH); "
        "fix the entry first, then the claim is checked against the paper it names."
    )


def doubtful(verdict: Verification) -> list[Discrepancy]:
    """The discrepancies that put a PARTIAL entry's paper in doubt (authors, title)."""
    if verdict.status is not Status.PARTIAL:
        return []
    return [d for d in verdict.discrepancies if d.kind in DOUBTFUL_KINDS]


def doubt_reason(found: list[Discrepancy]) -> str:
    """One line: no claim check, because the entry's authors or title disagree."""
    fields = list(dict.fromkeys("authors" if d.field == Field.AUTHORS else "title" for d in found))
    what = " and ".join(fields)
    verb = "disagree" if len(fields) > 1 or fields == ["authors"] else "disagrees"
    return (
        f"No claim check: the entry's {what} {verb} with the paper verification found (PARTIAL), "
        "so it may not be the cited paper; fix the entry first."
    )


def same_paper(found: PaperRecord, accepted: PaperRecord) -> bool:
    """``found`` (a search result) is the accepted paper: they share an identifier."""
    pairs = (
        (normalize_doi(found.doi), normalize_doi(accepted.doi)),
        (normalize_arxiv(found.arxiv_id), normalize_arxiv(accepted.arxiv_id)),
        (found.pmid, accepted.pmid),
        ((found.s2_paper_id or "").lower() or None, (accepted.s2_paper_id or "").lower() or None),
    )
    return any(a is not None and a == b for a, b in pairs)
