"""Comparing a bibliography entry with the scholarly records of a paper.

* :func:`title_similarity` scores two titles 0..1. Case, punctuation, LaTeX
  braces, accents and British/American spellings do not count; a subtitle on
  one side only still scores as the same paper; but a content word changed,
  added or dropped keeps the score below the "verified" threshold.
* :func:`best_candidate` picks the record a title search most likely meant.
* :func:`compare` lists what the entry gets wrong against all versions of a
  paper (Semantic Scholar, Crossref, OpenAlex, arXiv...), using their spread
  as tolerance: an arXiv year one off, a venue abbreviation, initials for first
  names, "and others" are not discrepancies.
* :func:`identifier_conflict` tells that an identifier resolved to another paper.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from citelens.core.fields import Field
from citelens.core.identifiers import (
    ARXIV_DOI_START,
    PREPRINT_DOI_PREFIXES,
    arxiv_in_view,
    normalize_arxiv,
    normalize_doi,
)
from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.core.severity import Severity
from citelens.core.titles import words
from citelens.sources.records import PaperRecord
from citelens.verify.coverage import disagreement_is_information
from citelens.verify.match import printed
from citelens.verify.match.authors import compare_authors
from citelens.verify.match.discrepancy import FABRICATED, Discrepancy, Kind, source_of
from citelens.verify.match.titles import (
    describe_word_changes,
    record_title_similarity,
    title_similarity,
    title_word_changes,
    title_words_changed,
)
from citelens.verify.match.venues import is_preprint_record, is_preprint_venue, same_venue

_DEFAULTS = Settings()


CANDIDATE_THRESHOLD: float = _DEFAULTS.title_candidate_threshold


VERIFIED_THRESHOLD: float = _DEFAULTS.title_verified_threshold


@dataclass(slots=True)
class Comparison:
    """An entry compared with all versions of one paper."""

    title_score: float
    discrepancies: list[Discrepancy] = field(default_factory=list)
    source: str = ""  # the source of the version whose title matched best

    @property
    def severity(self) -> Severity | None:
        """The most severe discrepancy, or None when the entry agrees with the records."""
        if not self.discrepancies:
            return None
        return max((d.severity for d in self.discrepancies), key=lambda sev: sev.rank)

    @property
    def kinds(self) -> list[str]:
        return list(dict.fromkeys(d.kind for d in self.discrepancies))

    def at_least(self, severity: Severity) -> list[Discrepancy]:
        floor = severity.rank
        return [d for d in self.discrepancies if d.severity.rank >= floor]

    def to_json(self) -> dict[str, object]:
        return {
            "title_score": round(self.title_score, 4),
            "source": self.source,
            "discrepancies": [d.to_json() for d in self.discrepancies],
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Comparison:
        raw = data.get("discrepancies") or []
        items = raw if isinstance(raw, list) else []
        score = data.get("title_score", 0.0)
        return cls(
            title_score=float(score) if isinstance(score, int | float | str) else 0.0,
            discrepancies=[Discrepancy.from_json(d) for d in items if isinstance(d, dict)],
            source=str(data.get("source", "")),
        )


def _year_ok(view: EntryView, record: PaperRecord) -> bool:
    return view.year is None or record.year is None or abs(view.year - record.year) <= 1


def best_candidate(
    view: EntryView,
    records: Iterable[PaperRecord],
    threshold: float = CANDIDATE_THRESHOLD,
    verified: float = VERIFIED_THRESHOLD,
) -> tuple[PaperRecord, float] | None:
    """The record a title search most likely meant, with its title score, or None.

    Among records scoring at least ``threshold``, a verified-level title wins,
    then a year within one of the entry's, then the higher score.
    """
    best: tuple[tuple[bool, bool, float], PaperRecord, float] | None = None
    for rec in records:
        try:
            score = record_title_similarity(view.title, rec.title or "")
        except Exception:  # a bad record never breaks a search
            continue
        if score < threshold:
            continue
        key = (score >= verified, _year_ok(view, rec), score)
        if best is None or key > best[0]:
            best = (key, rec, score)
    return (best[1], best[2]) if best else None


def is_same_paper(
    view: EntryView,
    record: PaperRecord,
    verified: float = VERIFIED_THRESHOLD,
    candidate: float = CANDIDATE_THRESHOLD,
) -> bool:
    """The record describes the entry's paper by its title or an identifier (:func:`match_reason`
    "title" or "identifier"): the bar of a field fix that is safe to apply."""
    return match_reason(view, record, verified, candidate) in (MatchReason.TITLE, MatchReason.IDENTIFIER)


#: Title similarity for a search hit to be offered as a candidate ("Replace with", the
#: closest papers of a NOT_FOUND), for the APIs' answers and the snapshot's alike.
CANDIDATE_FLOOR = 0.5


def own_papers(
    view: EntryView, candidates: Iterable[PaperRecord], wrong_doi: str | None, verified: float
) -> list[PaperRecord]:
    """A DOI_MISMATCH's own papers, in ``candidates``' order: the entry's title at the
    verified threshold, and not the paper the wrong identifier names. The one rule: the
    verdict's ``right_papers`` and the DOI fix read it (a fix offers no paper the verdict
    did not count as the entry's)."""
    wrong = wrong_doi.lower() if wrong_doi else None
    return [
        c
        for c in candidates
        if title_similarity(view.title, c.title or "") >= verified
        and not (wrong and c.doi and c.doi.lower() == wrong)
    ]


def contradicted_fields(view: EntryView, record: PaperRecord, current_year: int | None = None) -> set[str]:
    """``"authors"`` / ``"year"`` where ``record`` contradicts the entry (warning level),
    for every entry type alike: a book's lenient *reporting* does not make another
    paper's record the book's."""
    year_now = current_year if current_year is not None else datetime.date.today().year
    found = compare_authors(view, [record]) + _compare_year(view, [record], year_now)
    return {d.field for d in found if d.severity is Severity.WARNING}


class MatchReason(StrEnum):
    """Why a record is the entry's paper (:func:`match_reason`)."""

    TITLE = "title"  # a verified-level title
    IDENTIFIER = "identifier"  # a candidate-level title and a shared DOI, arXiv id, PMID or S2 id
    AUTHORS_YEAR = "authors_year"  # a candidate-level title, authors and year not contradicting
    PRINTED = "printed"  # read from a PDF: its title, first authors and year are in the print


def match_reason(
    view: EntryView,
    record: PaperRecord,
    verified: float = VERIFIED_THRESHOLD,
    candidate: float = CANDIDATE_THRESHOLD,
) -> MatchReason | None:
    """Whether ``record`` is the entry's paper, and why: the one rule "is this the same
    paper" of the verdict (:func:`is_confident_match`: any reason), the snapshot, and the
    field fix (:func:`is_same_paper`: by title or identifier only); None: another paper."""
    score = record_title_similarity(view.title, record.title or "")
    if score >= verified:
        return MatchReason.TITLE
    if view.printed is not None and printed.confirms(view.printed.text, [record]):
        return MatchReason.PRINTED  # whatever title the PDF reader made of the print
    if score < candidate:
        return None
    if _shares_identifier(view, record):
        return MatchReason.IDENTIFIER
    if not view.authors or not record.authors or view.year is None or record.year is None:
        return None
    return None if contradicted_fields(view, record) else MatchReason.AUTHORS_YEAR


def is_confident_match(
    view: EntryView,
    record: PaperRecord,
    verified: float = VERIFIED_THRESHOLD,
    candidate: float = CANDIDATE_THRESHOLD,
) -> bool:
    """``record`` is the entry's paper, safe to copy metadata from: a verified-level title;
    or a candidate-level title with a shared identifier, or with authors and year present
    on both sides and neither contradicting the entry (:func:`match_reason`)."""
    return match_reason(view, record, verified, candidate) is not None


def identifier_conflict(view: EntryView, record: PaperRecord, threshold: float = CANDIDATE_THRESHOLD) -> bool:
    """The entry's identifier resolved to ``record`` but its title is another paper's (for a
    reference read from a PDF: and the print does not name ``record``'s paper)."""
    if not view.title.strip() or not (record.title or "").strip():
        return False
    read = view.printed
    if read is not None and (not read.confident or printed.names_paper(read, [record])):
        return False  # a title not read with confidence says nothing against the identifier
    return record_title_similarity(view.title, record.title) < threshold


def _shares_identifier(view: EntryView, rec: PaperRecord) -> bool:
    doi = _doi_of(view.doi)
    ax = arxiv_in_view(view)
    return bool(
        (doi and doi == _doi_of(rec.doi))
        or (ax and ax == _arxiv_of(rec.arxiv_id))
        or (view.pmid and view.pmid.strip() == (rec.pmid or "").strip())
        or (view.s2_id and view.s2_id == rec.s2_paper_id)
    )


def _doi_of(value: str | None) -> str:
    return normalize_doi(value) or ""


def _arxiv_of(value: str | None) -> str:
    return normalize_arxiv(value) or ""


def _compare_year(view: EntryView, versions: Sequence[PaperRecord], current_year: int) -> list[Discrepancy]:
    if view.year is None:
        return []
    dated = [v for v in versions if v.year is not None]
    others = sorted({(v.year, source_of(v)) for v in dated}, key=lambda t: (t[0] or 0, t[1]))
    where = ", ".join(f"{y} in {s}" for y, s in others)
    if view.year > current_year:
        # the paper's own year, when its records give one, is what to write instead
        known = [v for v in dated if (v.year or 0) <= current_year]
        closest = max(known, key=lambda v: v.year or 0) if known else None
        return [
            Discrepancy(
                Field.YEAR,
                Kind.YEAR_FUTURE,
                Severity.WARNING,
                f"year: {view.year} in the entry is in the future" + (f"; {where}" if known else ""),
                str(view.year),
                str(closest.year) if closest is not None else "",
                closest.source if closest is not None else "",
            )
        ]
    if not dated:
        return []
    closest = min(dated, key=lambda v: abs((v.year or 0) - view.year))  # type: ignore[operator]
    gap = abs((closest.year or 0) - view.year)
    if gap == 0:
        return []
    severity = Severity.INFORMATION if gap == 1 else Severity.WARNING
    return [
        Discrepancy(
            Field.YEAR,
            Kind.YEAR,
            severity,
            f"year: {view.year} in the entry, {where}",
            str(view.year),
            str(closest.year),
            closest.source,
        )
    ]


#: Venue fields that say the paper is not (yet) published anywhere.
_NOT_YET_PUBLISHED = re.compile(
    r"\b(preprint|submitted|under review|in review|in press|to appear|forthcoming|accepted"
    r"|in preparation|manuscript|working paper|unpublished)\b",
    re.IGNORECASE,
)


def _publisher_doi(doi: str | None) -> bool:
    """A DOI that is not a preprint server's (arXiv 10.48550, Zenodo, bioRxiv/medRxiv's
    10.1101 are preprints or data)."""
    d = _doi_of(doi)
    return bool(d) and not d.startswith(PREPRINT_DOI_PREFIXES)


def _compare_venue(view: EntryView, versions: Sequence[PaperRecord]) -> list[Discrepancy]:
    venue = (view.venue or "").strip()
    if not venue:
        return []
    paper_arxiv = {_arxiv_of(v.arxiv_id) for v in versions if v.arxiv_id}
    cited_arxiv = arxiv_in_view(view)
    arxiv_conflict = bool(cited_arxiv and paper_arxiv and cited_arxiv not in paper_arxiv)
    published = [v for v in versions if v.venue and not is_preprint_record(v)]
    if is_preprint_venue(venue):
        if not published:
            return []
        v = published[0]
        sev = Severity.WARNING if arxiv_conflict else Severity.INFORMATION
        msg = f"venue: the entry cites a preprint ({venue}); the paper is published in {v.venue}"
        if arxiv_conflict:
            ids = ", ".join(sorted(paper_arxiv))
            msg += f", and arXiv:{cited_arxiv} is not its arXiv id ({ids})"
        return [
            Discrepancy(
                Field.VENUE,
                Kind.PREPRINT_STATUS,
                sev,
                msg + f" ({source_of(v)})",
                venue,
                v.venue or "",
                v.source,
            )
        ]
    if any(
        same_venue(venue, v.venue or "", v.venue_alternates)
        for v in versions
        if v.venue or v.venue_alternates
    ):
        return []
    if not published:
        pre = [v for v in versions if is_preprint_record(v)]
        if not (pre or paper_arxiv) or _NOT_YET_PUBLISHED.search(venue):
            return []
        if any(_publisher_doi(v.doi) for v in versions):
            return []  # a DOI of a publisher: a published version exists, venue unknown
        known = f"arXiv:{sorted(paper_arxiv)[0]}" if paper_arxiv else f"a preprint ({pre[0].venue})"
        return [
            Discrepancy(
                Field.VENUE,
                Kind.VENUE_UNPUBLISHED,
                Severity.WARNING,
                f"venue: no source shows this paper published in {venue}; the sources know it as "
                f"{known} (a paper accepted recently may not be indexed yet)",
                venue,
                known,
                (pre or versions)[0].source,
            )
        ]
    names = list(dict.fromkeys(f"{v.venue} in {source_of(v)}" for v in published))
    return [
        Discrepancy(
            Field.VENUE,
            Kind.VENUE,
            Severity.WARNING,
            f"venue: {venue} in the entry; {'; '.join(names[:3])}",
            venue,
            published[0].venue or "",
            published[0].source,
        )
    ]


#: The entry types whose pages a paper's record gives.
PAGED_TYPES = frozenset({"article", "inproceedings", "incollection", "conference", "inbook"})
_PAGE_PART = re.compile(r"[0-9A-Za-z]+")


def page_parts(pages: str) -> tuple[str, ...]:
    """``"90--95"`` -> ``("90", "95")``: the page numbers of a range, however written."""
    return tuple(p.lower() for p in _PAGE_PART.findall(pages))


def pages_agree(mine: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """The same first page, and the same last page when both give one (``90`` and
    ``90--95`` agree; an article number agrees with itself)."""
    if not mine or not theirs:
        return True
    return mine[0] == theirs[0] and (len(mine) == 1 or len(theirs) == 1 or mine == theirs)


def paged_versions(versions: Sequence[PaperRecord]) -> list[PaperRecord]:
    """The versions of a paper that give its pages (a preprint's are its own)."""
    return [v for v in versions if v.pages and page_parts(v.pages) and not is_preprint_record(v)]


def _compare_pages(view: EntryView, versions: Sequence[PaperRecord]) -> list[Discrepancy]:
    """Pages no version of the paper has (information: the paper is the one cited)."""
    mine = page_parts(view.pages or "")
    paged = paged_versions(versions)
    if not mine or not paged or view.entry_type.lower() not in PAGED_TYPES:
        return []
    if any(pages_agree(mine, page_parts(v.pages or "")) for v in paged):
        return []
    best = paged[0]
    where = "; ".join(dict.fromkeys(f"{v.pages} in {source_of(v)}" for v in paged[:3]))
    return [
        Discrepancy(
            Field.PAGES,
            Kind.PAGES,
            Severity.INFORMATION,
            f"pages: {view.pages} in the entry, {where}",
            view.pages or "",
            best.pages or "",
            best.source,
        )
    ]


def _compare_identifiers(view: EntryView, versions: Sequence[PaperRecord]) -> list[Discrepancy]:
    out: list[Discrepancy] = []
    doi = _doi_of(view.doi)
    known = {_doi_of(v.doi): v for v in versions if v.doi}
    arxiv_known = {_arxiv_of(v.arxiv_id) for v in versions if v.arxiv_id}
    if doi and known and doi not in known:
        arxiv_doi = doi.startswith(ARXIV_DOI_START) and doi.removeprefix(ARXIV_DOI_START) in arxiv_known
        if not arxiv_doi:
            v = next(iter(known.values()))
            out.append(
                Discrepancy(
                    Field.DOI,
                    Kind.IDENTIFIER,
                    Severity.WARNING,
                    f"doi: {doi} in the entry; {source_of(v)} has {_doi_of(v.doi)} for this paper",
                    doi,
                    _doi_of(v.doi),
                    v.source,
                )
            )
    ax = _arxiv_of(view.arxiv_id) if view.arxiv_id else ""
    if ax and arxiv_known and ax not in arxiv_known and not is_preprint_venue(view.venue or ""):
        v = next(v for v in versions if v.arxiv_id)
        out.append(
            Discrepancy(
                Field.ARXIV,
                Kind.IDENTIFIER,
                Severity.WARNING,
                f"arxiv: {ax} in the entry; {source_of(v)} has {_arxiv_of(v.arxiv_id)} for this paper",
                ax,
                _arxiv_of(v.arxiv_id),
                v.source,
            )
        )
    pmids = {(v.pmid or "").strip(): v for v in versions if v.pmid}
    if view.pmid and pmids and view.pmid.strip() not in pmids:
        v = next(iter(pmids.values()))
        out.append(
            Discrepancy(
                Field.PMID,
                Kind.IDENTIFIER,
                Severity.WARNING,
                f"pmid: {view.pmid} in the entry; {source_of(v)} has {v.pmid} for this paper",
                view.pmid,
                v.pmid or "",
                v.source,
            )
        )
    return out


#: A title that stops on these was cut there ("Computing environments for reproducibility:").
_DANGLING = (":", "-", "\u2013", "\u2014", ",", "\u2026", "...")


def _dangling_title(view: EntryView, versions: Sequence[PaperRecord]) -> list[Discrepancy]:
    """A title cut after its main part ("…: ") where the paper's goes on: it matches as the
    paper's title, but the entry's own text says a part is missing (information)."""
    title = view.title.strip()
    if not title.endswith(_DANGLING):
        return []
    mine = words(title)
    for v in versions:
        theirs = words(v.title or "")
        if v.title and not v.title_truncated and len(mine) < len(theirs) and theirs[: len(mine)] == mine:
            return [
                Discrepancy(
                    Field.TITLE,
                    Kind.TITLE_WORDS,
                    Severity.INFORMATION,
                    f"title: cut short after “{title}” (the paper is “{v.title}” in {source_of(v)})",
                    view.title,
                    v.title,
                    v.source,
                )
            ]
    return []


def _compare_title(
    view: EntryView, versions: Sequence[PaperRecord], verified: float, candidate: float
) -> tuple[float, str, list[Discrepancy]]:
    scored = [(record_title_similarity(view.title, v.title or ""), v) for v in versions if v.title]
    if not scored or not view.title.strip():
        return 0.0, "", []
    score, best = max(scored, key=lambda t: t[0])
    if score >= verified:
        changed = title_words_changed(view.title, versions)
        if changed is None:
            return score, best.source, _dangling_title(view, versions)
        rec, only_entry, only_rec = changed
        msg = (
            f"title: {describe_word_changes(only_entry, only_rec)} "
            f"(the paper is “{rec.title}” in {source_of(rec)})"
        )
        return (
            score,
            best.source,
            [
                Discrepancy(
                    Field.TITLE, Kind.TITLE_WORDS, Severity.WARNING, msg, view.title, rec.title, rec.source
                )
            ],
        )
    only_entry, only_rec = title_word_changes(view.title, best.title)
    detail = ""
    if only_entry or only_rec:
        parts = []
        if only_entry:
            parts.append(f"entry has “{' '.join(only_entry)}”")
        if only_rec:
            parts.append(f"{source_of(best)} has “{' '.join(only_rec)}”")
        detail = " (" + "; ".join(parts) + ")"
    sev = Severity.WARNING if score >= candidate else Severity.ERROR
    msg = f"title: “{view.title}” in the entry; {source_of(best)} has “{best.title}”{detail}"
    category = FABRICATED if sev is Severity.ERROR else ""
    return (
        score,
        best.source,
        [Discrepancy(Field.TITLE, Kind.TITLE, sev, msg, view.title, best.title, best.source, category)],
    )


def compare(
    view: EntryView,
    versions: Sequence[PaperRecord],
    *,
    verified_threshold: float = VERIFIED_THRESHOLD,
    candidate_threshold: float = CANDIDATE_THRESHOLD,
    current_year: int | None = None,
) -> Comparison:
    """Compare an entry with every record describing its paper (one per source/version).

    Placeholder authors and years in the future are reported even without records.
    Entries of informal types (books, theses, reports, software, web pages) get
    information-level discrepancies, except placeholder authors and future years.
    Never raises.
    """
    year_now = current_year if current_year is not None else datetime.date.today().year
    try:
        score, source, found = _compare_title(view, versions, verified_threshold, candidate_threshold)
        found += compare_authors(view, versions)
        found += _compare_year(view, versions, year_now)
        found += _compare_venue(view, versions)
        found += _compare_pages(view, versions)
        found += _compare_identifiers(view, versions)
    except Exception as exc:  # bad input becomes a result, not a crash
        return Comparison(
            0.0,
            [
                Discrepancy(
                    Field.ENTRY,
                    Kind.ERROR,
                    Severity.INFORMATION,
                    f"could not compare the entry: {type(exc).__name__}",
                )
            ],
        )
    if disagreement_is_information(view):
        # Sources index books, theses and software badly: their disagreements are
        # information. A placeholder author or a year in the future is wrong anywhere.
        found = [d if d.kind in _ALWAYS_WARN else _as_information(d) for d in found]
    return Comparison(score, found, source)


_ALWAYS_WARN = frozenset({Kind.PLACEHOLDER_AUTHOR, Kind.YEAR_FUTURE})


def _as_information(d: Discrepancy) -> Discrepancy:
    if d.severity.rank <= Severity.INFORMATION.rank:
        return d
    return Discrepancy(
        d.field, d.kind, Severity.INFORMATION, d.message, d.entry_value, d.source_value, d.source
    )
