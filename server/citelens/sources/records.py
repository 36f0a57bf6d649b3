"""What every scholarly source returns: one small common shape.

A source function never raises for a remote problem. It returns a
:class:`Lookup` whose ``outcome`` tells "the source answered and has it",
"the source answered and does not have it" and "the source failed" apart:
only the second may ever lead to a ``NOT_FOUND`` verdict.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from enum import Enum

from citelens.core.titles import MARKUP_TAG


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
    #: The DOI as the source writes it (case kept: ``10.1103/PhysRevE.49.4145``), what a
    #: fix writes; None when the source gave none (read ``doi`` to compare).
    doi_written: str | None = None
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
    #: The source's author list is cut short ("et al.", "others", removed from ``authors``).
    authors_truncated: bool = False
    #: The source's title is cut short (it ended in "..." or "…", removed from ``title``).
    title_truncated: bool = False

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


# ---------------------------------------------------------------------- what sources write

_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|\u2026)\s*$")
#: Author names that say the list goes on ("et al.", "others", "and others").
_MORE_AUTHORS = frozenset({"et al", "et al.", "others", "and others", "et. al.", "et al.."})


def plain_title(raw: str | None) -> tuple[str, bool]:
    """(the title as plain text, whether the source cut it short): markup tags removed,
    HTML entities decoded (``&amp;`` is "&", not the word "amp"), spaces collapsed, a
    trailing ellipsis removed and reported."""
    text = raw or ""
    if "<" in text:
        text = MARKUP_TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)
    text = " ".join(text.split())
    cut = _ELLIPSIS.search(text)
    if cut is not None and cut.start() > 0:
        return text[: cut.start()].rstrip(" ,;:-"), True
    return text, False


def full_title(title: str | None, subtitle: str | None) -> str:
    """A title whose subtitle the source keeps apart (Crossref's ``subtitle``) as one title.
    A generic title ("ERRATUM", "Correction") with the real title in the subtitle is the
    subtitle's title."""
    head, tail = (title or "").strip(), (subtitle or "").strip()
    if not tail or tail.casefold() in head.casefold():
        return head
    if not head or head.strip(" .:").casefold() in _GENERIC_TITLES:
        return tail
    return f"{head}: {tail}"


_GENERIC_TITLES = frozenset({"erratum", "errata", "corrigendum", "correction", "addendum"})


def author_list(names: list[str]) -> tuple[list[str], bool]:
    """(the names, whether the list is cut short): "et al." / "others" removed and reported."""
    out = [n for n in names if n.strip().casefold() not in _MORE_AUTHORS]
    return out, len(out) < len(names)
