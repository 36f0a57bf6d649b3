"""Retractions, expressions of concern and corrections of a verified paper.

The signals come from records the verification fetches anyway (no extra request):
Crossref ``updated-by`` (publisher notices and, since 2023, Retraction Watch),
OpenAlex ``is_retracted``, PubMed "Retracted Publication" and its
``CommentsCorrections``. Each :class:`~citelens.sources.records.PaperRecord` carries
them as ``notices``; this module merges the notices of every record of the paper,
ranks them, and words them.

A paper matched through Semantic Scholar (or arXiv) alone needs one signal more
(S2 has no retraction field): the engine asks for its DOI (:func:`signal_doi`), 50
DOIs per request, from Crossref (``/works?filter=doi:a,doi:b``: every notice, with
its DOI and date) or, for DataCite DOIs Crossref does not hold, OpenAlex (a flag).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from urllib.parse import quote

from citelens.core.codes import NOTICE_CODES, Code, notice_of
from citelens.core.identifiers import arxiv_doi
from citelens.core.source_names import Source
from citelens.sources.names import source_name
from citelens.sources.records import PaperRecord
from citelens.verify.status import Status, Verification

#: Notice kinds, by the diagnostic they lead to (Crossref update types, PubMed reference types).
RETRACTION_KINDS = frozenset({"retraction", "withdrawal", "removal", "partial_retraction"})
CONCERN_KINDS = frozenset({"expression_of_concern"})
CORRECTION_KINDS = frozenset({"correction", "corrigendum", "erratum", "addendum", "clarification"})
#: Diagnostic code per class, most serious first (the code registry's notice codes).
CODES = NOTICE_CODES
#: Sources whose records say whether a paper was retracted (an absent notice means none).
SIGNAL_SOURCES = frozenset({Source.CROSSREF, Source.OPENALEX, Source.PUBMED})
_FOUND = (Status.VERIFIED, Status.PARTIAL)
_KIND_NAMES = {
    "retraction": "retraction",
    "withdrawal": "withdrawal",
    "removal": "removal",
    "partial_retraction": "partial retraction",
    "expression_of_concern": "expression of concern",
    "correction": "correction",
    "corrigendum": "corrigendum",
    "erratum": "erratum",
    "addendum": "addendum",
    "clarification": "clarification",
}


def code_of(notice: dict[str, str]) -> Code | None:
    """The diagnostic code of one notice (None for updates that change nothing)."""
    kind = notice.get("kind", "")
    if kind in RETRACTION_KINDS:
        return Code.RETRACTED
    if kind in CONCERN_KINDS:
        return Code.EXPRESSION_OF_CONCERN
    if kind in CORRECTION_KINDS:
        return Code.CORRECTION
    return None


def _rank(notice: dict[str, str]) -> tuple[int, int, str]:
    code = code_of(notice)
    detail = 0 if notice.get("doi") else 1 if notice.get("pmid") else 2
    return (CODES.index(code) if code else len(CODES), detail, notice.get("date", ""))


def merge(records: Iterable[PaperRecord | None]) -> list[dict[str, str]]:
    """Every notice of one paper from all its records, most serious first, without
    repeats: the same notice DOI from two sources is kept once (Retraction Watch first),
    and a bare flag (OpenAlex, PubMed without a notice id) only when nothing of its class
    names the notice."""
    return combine(rec.notices for rec in records if rec is not None)


def combine(groups: Iterable[Iterable[dict[str, str]]]) -> list[dict[str, str]]:
    """:func:`merge` for notices already taken from their records."""
    everything = [n for group in groups for n in group]
    found = [n for n in everything if code_of(n) is not None]
    reinstated = max((n.get("date", "") for n in everything if n.get("kind") == "reinstatement"), default="")
    if reinstated:  # a retraction undone later no longer stands
        found = [n for n in found if not (code_of(n) is Code.RETRACTED and n.get("date", "") <= reinstated)]
    found.sort(key=lambda n: (_rank(n)[0], n.get("source") != Source.RETRACTION_WATCH, _rank(n)[1]))
    out: list[dict[str, str]] = []
    seen: set[tuple[str | None, str]] = set()
    for n in found:
        ident = n.get("doi") or n.get("pmid") or ""
        key = (code_of(n), ident.lower())
        if key in seen or (not ident and any(code_of(o) == code_of(n) for o in out)):
            continue
        seen.add(key)
        out.append(dict(n))
    out.sort(key=_rank)
    return out


def worst(notices: Sequence[dict[str, str]]) -> dict[str, str] | None:
    """The notice that decides the diagnostic (the first of :func:`merge`'s order)."""
    return notices[0] if notices and code_of(notices[0]) else None


def paper_records(v: Verification) -> list[PaperRecord]:
    """The records of the entry's own paper (none for a mismatch or a miss)."""
    return records_of(v.status, v.match, v.versions)


def records_of(
    status: Status, match: PaperRecord | None, versions: Sequence[PaperRecord]
) -> list[PaperRecord]:
    """:func:`paper_records` of a verdict being decided (its status, match and versions)."""
    if status not in _FOUND or match is None:
        return []
    return [match, *versions]


def has_signal(records: Sequence[PaperRecord]) -> bool:
    return any(r.source in SIGNAL_SOURCES for r in records)


def _unnamed_flag(records: Sequence[PaperRecord]) -> bool:
    """The records flag a notice (OpenAlex's ``is_retracted``) but none names it, and
    Crossref's record, which would, is not among them: Crossref is asked for the notice
    (whichever source the plan read first, the verdict names the same notice)."""
    notices = [n for r in records for n in r.notices]
    return (
        bool(notices)
        and not any(n.get("doi") or n.get("pmid") for n in notices)
        and not any(r.source == Source.CROSSREF for r in records)
    )


def signal_doi(v: Verification) -> str | None:
    """The DOI to ask OpenAlex about when no record of the paper can tell (S2, arXiv,
    doi.org only); None when a record already tells, or there is nothing to ask."""
    records = paper_records(v)
    if not records or (has_signal(records) and not _unnamed_flag(records)):
        return None
    return paper_doi(records)


def paper_doi(records: Sequence[PaperRecord]) -> str | None:
    """The paper's DOI as its records name it, else its arXiv DOI (lower case); None when
    they name neither: the DOI the notice and retraction questions are asked about."""
    doi = next((r.doi for r in records if r.doi), None)
    if doi is None:
        arxiv = next((r.arxiv_id for r in records if r.arxiv_id), None)
        doi = arxiv_doi(arxiv) if arxiv else None
    return doi.lower() if doi else None


def notice_url(notice: dict[str, str]) -> str | None:
    """Where the notice can be read: its DOI, else its PubMed record."""
    if notice.get("doi"):
        return "https://doi.org/" + quote(notice["doi"], safe="/:;.-_~")
    if notice.get("pmid"):
        return f"https://pubmed.ncbi.nlm.nih.gov/{quote(notice['pmid'], safe='')}/"
    return None


def notice_source(notice: dict[str, str]) -> str:
    """Who reports the notice: Retraction Watch, the publisher, OpenAlex, PubMed."""
    return source_name(notice.get("source"), "unknown source")


def kind_name(notice: dict[str, str]) -> str:
    kind = notice.get("kind", "")
    return _KIND_NAMES.get(kind, kind.replace("_", " "))


def describe(notice: dict[str, str]) -> str:
    """``retraction notice 10.x/y (2010-02-02, Retraction Watch)``: what, which, when, who."""
    what = kind_name(notice)
    ident = notice.get("doi") or (f"PMID {notice['pmid']}" if notice.get("pmid") else "")
    when = ", ".join(x for x in (notice.get("date", ""), f"per {notice_source(notice)}") if x)
    if ident:
        return f"{what} notice {ident} ({when})"
    return f"{what} ({when}; the notice is not named)"


def headline(notice: dict[str, str], code: Code) -> str:
    """What a notice of ``code`` says of the paper: "Retracted", "Withdrawn", "Corrected"…
    (the message's and the hover's first word)."""
    if notice.get("kind") == "withdrawal":
        return "Withdrawn"
    if notice.get("kind") == "partial_retraction":
        return "Partially retracted"
    return notice_of(code).headline


def message(notices: Sequence[dict[str, str]]) -> str:
    """The diagnostic message for a paper's notices (the most serious one decides)."""
    top = worst(notices)
    code = code_of(top) if top is not None else None
    if top is None or code is None:
        return ""
    head = headline(top, code)
    tail = notice_of(code).consequence
    more = [n for n in notices[1:] if code_of(n) == code]
    extra = f" (+{len(more)} more)" if more else ""
    return f"{head}: {describe(top)}{extra}{tail}"
