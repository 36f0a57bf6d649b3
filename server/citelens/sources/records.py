"""What every scholarly source returns: one small common shape.

A source function never raises for a remote problem. It returns a
:class:`Lookup` whose ``outcome`` tells "the source answered and has it",
"the source answered and does not have it" and "the source failed" apart:
only the second may ever lead to a ``NOT_FOUND`` verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Outcome(str, Enum):
    FOUND = "found"  # the source answered with at least one record
    NOT_FOUND = "not_found"  # the source answered: it has no such paper
    FAILED = "failed"  # timeout, 5xx, 429 after retries, garbage body, network error
    UNAVAILABLE = "unavailable"  # source marked down for this run (not even asked)


@dataclass(slots=True)
class PaperRecord:
    """A paper as one source describes it. Strings are plain Unicode."""

    source: str  # "s2" | "crossref" | "doi" | "openalex" | "arxiv" | "pubmed"
    title: str
    authors: list[str] = field(default_factory=list)  # display names: "Ashish Vaswani"
    year: int | None = None
    venue: str | None = None  # journal / proceedings / container title
    venue_alternates: list[str] = field(default_factory=list)  # S2 publicationVenue names
    doi: str | None = None  # lower-cased, bare (10.x/...)
    arxiv_id: str | None = None  # without version: "1706.03762", "astro-ph/0601001"
    pmid: str | None = None
    pmcid: str | None = None
    s2_paper_id: str | None = None
    corpus_id: int | None = None
    url: str | None = None
    abstract: str | None = None
    publication_types: list[str] = field(default_factory=list)  # S2 / Crossref / OpenAlex type
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    publisher: str | None = None
    citation_count: int | None = None
    open_access_pdf: str | None = None
    is_preprint: bool = False  # arXiv / posted-content / S2 venue "ArXiv"
    #: Editorial notices about the paper, as this source states them (Crossref ``updated-by``,
    #: OpenAlex ``is_retracted``, PubMed "Retracted Publication"): plain string dicts with
    #: ``kind`` ("retraction", "correction", ...), ``source`` and optional ``doi``, ``date``
    #: (YYYY-MM-DD), ``label``, ``record_id``, ``pmid``. See :mod:`citelens.verify.retraction`.
    notices: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__slots__}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> PaperRecord:
        known = set(cls.__slots__)
        return cls(**{k: v for k, v in data.items() if k in known})  # type: ignore[arg-type]


@dataclass(slots=True)
class Lookup:
    """The answer of one request (or one id within a batch) to one source."""

    source: str
    method: str  # "s2_doi_lookup", "s2_batch", "s2_title_match", "crossref_doi", ...
    outcome: Outcome
    records: list[PaperRecord] = field(default_factory=list)
    detail: str = ""  # human readable; never contains API keys
    elapsed_ms: float = 0.0

    @property
    def record(self) -> PaperRecord | None:
        return self.records[0] if self.records else None

    def to_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "method": self.method,
            "outcome": self.outcome.value,
            "records": [r.to_json() for r in self.records],
            "detail": self.detail,
            "elapsed_ms": round(self.elapsed_ms, 1),
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Lookup:
        recs = data.get("records") or []
        assert isinstance(recs, list)
        return cls(
            source=str(data["source"]),
            method=str(data["method"]),
            outcome=Outcome(str(data["outcome"])),
            records=[PaperRecord.from_json(r) for r in recs],
            detail=str(data.get("detail", "")),
            elapsed_ms=float(data.get("elapsed_ms", 0.0)),  # type: ignore[arg-type]
        )
