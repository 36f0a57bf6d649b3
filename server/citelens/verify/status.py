"""The verdict on one bibliography entry, and everything that led to it.

A :class:`Verification` is plain, frozen data, made in one module: ``verify/verdict.py``
(:func:`~citelens.verify.verdict.decide`, from the answers; the verdicts it makes when there
is nothing to decide from; the same verdict for another entry of the same content). The CLI
puts :meth:`Verification.to_json` into its JSON report, the three drivers keep it in their
one store (``workspace/verdicts.py``), and :mod:`citelens.checks.verification` turns it into
diagnostics; nothing changes it once made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from citelens.core.codes import CODE_OF_STATUS, Code
from citelens.core.severity import Severity
from citelens.core.statuses import Status
from citelens.sources.names import source_list
from citelens.sources.records import Outcome, PaperRecord
from citelens.verify.classes import class_text, verdict_class
from citelens.verify.match.discrepancy import FABRICATED, WRONG_METADATA, Discrepancy

__all__ = [
    "FABRICATED",
    "S2_NOT_FOUND",
    "WRONG_METADATA",
    "AuditStep",
    "Discrepancy",
    "Status",
    "Unverified",
    "Verification",
]


class Unverified(StrEnum):
    """Why a verdict is UNVERIFIED (:attr:`Verification.unverified`)."""

    NO_TITLE = "no_title"  # nothing to check: stays so until the entry changes
    LOOKUP_FAILED = "lookup_failed"  # a source failed or was unreachable: may pass later
    OFFLINE = "offline"  # offline, and no cached answer
    NOTHING_ASKED = "nothing_asked"
    DEADLINE = "deadline"  # the run reached verifyDeadlineS first
    INTERNAL_ERROR = "internal_error"
    #: read from a PDF without confidence, and no source recognised its printed text: the
    #: reader's failure, never the author's (stays so until the PDF changes)
    UNREAD = "unread"


#: Why a verdict stays UNVERIFIED until the entry (or the PDF) changes.
_FOR_GOOD = frozenset({Unverified.NO_TITLE, Unverified.UNREAD})

#: Codes in the audit trail that are not plain source outcomes.
S2_NOT_FOUND = "S2_NOT_FOUND"


@dataclass(slots=True)
class AuditStep:
    """One tier tried for an entry: which request, and what it answered."""

    method: str  # "s2_batch", "crossref_doi", ... or S2_NOT_FOUND
    source: str
    outcome: str  # an Outcome value, or S2_NOT_FOUND / "cached" markers
    detail: str = ""
    cached: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "source": self.source,
            "outcome": self.outcome,
            "detail": self.detail,
            "cached": self.cached,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuditStep:
        return cls(
            method=str(data.get("method", "")),
            source=str(data.get("source", "")),
            outcome=str(data.get("outcome", "")),
            detail=str(data.get("detail", "")),
            cached=bool(data.get("cached", False)),
        )

    @property
    def answered(self) -> bool:
        return self.outcome in (Outcome.FOUND.value, Outcome.NOT_FOUND.value)


@dataclass(slots=True, frozen=True)
class Verification:
    """One entry's verdict. Frozen: ``verify/verdict.py`` is its one writer (tests/test_architecture.py)."""

    key: str
    status: Status
    summary: str  # one line a researcher can act on
    match: PaperRecord | None = None
    versions: list[PaperRecord] = field(default_factory=list)  # other records of the same paper
    score: float = 0.0  # title similarity of the match (0-1)
    method: str = ""  # the tier that decided: "s2_batch", "crossref_doi", ...
    discrepancies: list[Discrepancy] = field(default_factory=list)
    audit: list[AuditStep] = field(default_factory=list)
    candidates: list[PaperRecord] = field(default_factory=list)  # close real papers
    checked_at: str = ""  # ISO 8601, UTC
    content_hash: str = ""
    informational: bool = False  # a miss is information only (books, theses, software, ...)
    #: Retraction / expression of concern / correction notices of the matched paper, most
    #: serious first (see :mod:`citelens.verify.retraction`).
    notices: list[dict[str, str]] = field(default_factory=list)
    #: Why the verdict is UNVERIFIED (None for the other statuses, and for a verdict read
    #: back from JSON); read this, never the summary's words.
    unverified: Unverified | None = None
    #: DOI_MISMATCH: the candidates that are the entry's own paper (its title at the
    #: verified threshold, not the wrong identifier's paper), best first; the "Fix DOI"
    #: and "Replace entry" quick fixes read these instead of scoring titles again.
    right_papers: list[PaperRecord] = field(default_factory=list)
    #: NOT_FOUND and DOI_MISMATCH: what in the entry points to a copy the indexes may not
    #: hold ("url", "doi", "arxiv", "pmid", "recent": ``verify/classes.pointers``).
    pointers: tuple[str, ...] = ()
    #: NOT_FOUND and DOI_MISMATCH: the entry's identifiers their own registry said do not
    #: exist ("doi": doi.org, "arxiv", "pmid": ``verify/classes.REGISTRY``): evidence, not leads.
    refuted: tuple[str, ...] = ()
    #: The code of the verdict's findings (None for VERIFIED), named by the verdict
    #: (``verify/verdict.decide``: its status's, or another its rules chose, such as
    #: REFERENCE_NOT_READ); not in the JSON, where the findings carry it. Unnamed: its
    #: status's (``core/codes.CODE_OF_STATUS``).
    code: Code | None = None

    def __post_init__(self) -> None:
        if self.code is None:
            object.__setattr__(self, "code", CODE_OF_STATUS.get(self.status))

    @property
    def worth_retrying(self) -> bool:
        """UNVERIFIED for a reason a later run may not have (a source failed, the deadline, an
        internal error, offline): every UNVERIFIED verdict but one on an entry with no title."""
        return self.status is Status.UNVERIFIED and self.unverified not in _FOR_GOOD

    @property
    def klass(self) -> str | None:
        """The verdict's class, decided in one place (``verify/classes.verdict_class``):
        ``fabricated`` (the evidence says invented), ``wrong-metadata`` (a real paper cited
        with wrong details, another paper's DOI included), ``not-found`` (the indexes do not
        hold it: a book, a URL or identifier elsewhere, a recent paper), or None."""
        worst: list[Discrepancy] = []
        if self.status is Status.PARTIAL:
            serious = [d for d in self.discrepancies if d.severity in (Severity.WARNING, Severity.ERROR)]
            worst = serious or self.discrepancies
        return verdict_class(
            self.status,
            informational=self.informational,
            own_paper_found=bool(self.right_papers),
            discrepancy_classes=[d.klass for d in worst],
            pointers=self.pointers,
            refuted=self.refuted,
        )

    @property
    def class_text(self) -> str:
        """The class in words ("not found in Semantic Scholar, OpenAlex, Crossref, which
        miss many books, …"), "" for a verdict without a class."""
        klass = self.klass
        if not klass:
            return ""
        sources = source_list(a.source for a in self.audit if a.answered)
        return class_text(klass, self.status, sources, self.pointers, self.refuted)

    def to_json(self, *, audit: bool = True) -> dict[str, Any]:
        """Every field; ``audit=False``: without the audit trail (a report writes it apart)."""
        return {
            "key": self.key,
            "status": self.status.value,
            "class": self.klass,
            "summary": self.summary,
            "match": self.match.to_json() if self.match else None,
            "versions": [r.to_json() for r in self.versions],
            "score": round(self.score, 3),
            "method": self.method,
            "discrepancies": [d.to_json() for d in self.discrepancies],
            "audit": [a.to_json() for a in self.audit] if audit else [],
            "candidates": [r.to_json() for r in self.candidates],
            "checked_at": self.checked_at,
            "content_hash": self.content_hash,
            "informational": self.informational,
            "notices": [dict(n) for n in self.notices],
            "pointers": list(self.pointers),
            "refuted": list(self.refuted),
        }

    def compact_json(self) -> dict[str, Any]:
        """``to_json(audit=False)`` without the key and without the empty and default fields,
        in the same order: what a report writes for each of 68,000 entries (building every
        field to drop most of them was half of the JSON report's time)."""
        out: dict[str, Any] = {"status": self.status.value}
        klass = self.klass
        if klass:
            out["class"] = klass
        if self.summary:
            out["summary"] = self.summary
        if self.match:
            out["match"] = self.match.to_json()
        if self.versions:
            out["versions"] = [r.to_json() for r in self.versions]
        score = round(self.score, 3)
        if score:
            out["score"] = score
        if self.method:
            out["method"] = self.method
        if self.discrepancies:
            out["discrepancies"] = [d.to_json() for d in self.discrepancies]
        if self.candidates:
            out["candidates"] = [r.to_json() for r in self.candidates]
        stamps = (("checked_at", self.checked_at), ("content_hash", self.content_hash))
        out.update((k, v) for k, v in stamps if v)
        if self.informational:
            out["informational"] = True
        if self.notices:
            out["notices"] = [dict(n) for n in self.notices]
        out.update((k, list(v)) for k, v in (("pointers", self.pointers), ("refuted", self.refuted)) if v)
        if self.unverified is Unverified.UNREAD:  # the venue counts these apart
            out["unverified"] = self.unverified.value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verification:
        match = data.get("match")
        return cls(
            key=str(data["key"]),
            status=Status(str(data["status"])),
            summary=str(data.get("summary", "")),
            match=PaperRecord.from_json(match) if isinstance(match, dict) else None,
            versions=[PaperRecord.from_json(r) for r in _dicts(data.get("versions"))],
            score=float(data.get("score") or 0.0),
            method=str(data.get("method", "")),
            discrepancies=[Discrepancy.from_json(d) for d in _dicts(data.get("discrepancies"))],
            audit=[AuditStep.from_json(a) for a in _dicts(data.get("audit"))],
            candidates=[PaperRecord.from_json(r) for r in _dicts(data.get("candidates"))],
            checked_at=str(data.get("checked_at", "")),
            content_hash=str(data.get("content_hash", "")),
            informational=bool(data.get("informational", False)),
            notices=[{str(k): str(x) for k, x in n.items()} for n in _dicts(data.get("notices"))],
            pointers=tuple(p for p in data.get("pointers") or () if isinstance(p, str)),
            refuted=tuple(p for p in data.get("refuted") or () if isinstance(p, str)),
        )


def _dicts(value: object) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
