"""The field fix: the fields of an entry that the paper the verdict identified has
differently, or that the entry lacks, set from that paper's records, and nothing else.

The paper is the verdict's settled record (``Verification.match`` for a found paper, the
first of ``Verification.right_papers`` for an identifier of another paper), never
whichever source answered first. A field is changed only when no version of the paper
agrees with it (an arXiv year one off, a venue abbreviation, initials, a page range written
with one dash are not wrong), and a field the entry has right is never touched: the note,
the URL, the abstract, a correct DOI, a name spelled as the user spells it stay as written.

Which fields: ``doi`` (another paper's, or missing), ``year``, the venue field the entry
uses (``journal``/``booktitle``/``journaltitle``), ``title`` (wrong words, cut off),
``author`` (a wrong, misspelled, dropped or swapped name: the list in the paper's order,
names the user wrote right kept as written), ``pages`` (wrong, or missing)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz.distance import Levenshtein

from citelens.core.fields import Field
from citelens.core.identifiers import ARXIV_DOI_START, PREPRINT_DOI_PREFIXES, normalize_doi
from citelens.core.model import BibEntry, EntryView, Name
from citelens.core.settings import Settings
from citelens.core.titles import words
from citelens.documents.bibtex.names import split_names
from citelens.documents.bibtex.render import bibtex_author, given_first_author, latex_escape
from citelens.sources.names import source_name
from citelens.sources.records import PaperRecord
from citelens.verify.match.authors import family_key, record_authors_cut
from citelens.verify.match.compare import (
    PAGED_TYPES,
    contradicted_fields,
    is_same_paper,
    match_reason,
    own_papers,
    paged_versions,
)
from citelens.verify.match.discrepancy import FABRICATED, Kind
from citelens.verify.match.venues import is_preprint_record, is_preprint_venue
from citelens.verify.status import Status, Verification
from citelens.workspace.bibstyle import FileStyle, venue_as_written

_VENUE_FIELDS = ("journal", "booktitle", "journaltitle")


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field to set (``new``: a raw BibTeX value) or remove (``new`` None)."""

    name: str
    old: str | None  # the value as the entry has it (None: the field is missing)
    new: str | None
    label: str  # what changed, for a person: "year 2019 -> 2020"


@dataclass(frozen=True, slots=True)
class FieldFix:
    """The changes of one entry, the record they come from, and whether they are safe."""

    record: PaperRecord
    changes: tuple[FieldChange, ...]
    safe: bool
    #: the record is the entry's paper (``verify/match/compare.match_reason``): only then may
    #: a batch command apply the fix, safe or not
    same_paper: bool = True

    @property
    def title(self) -> str:
        names = [c.name for c in self.changes]
        if names == ["doi"]:
            new = self.changes[0].new
            return (
                f"Fix DOI: {new}"
                if new and self.changes[0].old
                else f"Add DOI: {new}"
                if new
                else "Remove DOI"
            )
        if names == ["title"] and self.changes[0].new:
            return f"Use the paper's title: “{self.record.title}”"
        if len(names) == 1 and names[0] in _VENUE_FIELDS:
            return f"Change {names[0]} to {self.record_venue}"
        verb = "Add" if all(c.old is None for c in self.changes) else "Fix"
        return f"{verb} {', '.join(names)} from {source_name(self.record.source)}"

    @property
    def record_venue(self) -> str:
        c = next((c for c in self.changes if c.name in _VENUE_FIELDS), None)
        return (c.new or "") if c else ""


def settled_record(
    v: Verification, view: EntryView, settings: Settings
) -> tuple[PaperRecord, list[PaperRecord], bool] | None:
    """The record the verdict identified as the entry's paper, the paper's other versions,
    and whether the match is confident; None when the verdict names no paper of the entry."""
    if v.status in (Status.VERIFIED, Status.PARTIAL) and v.match is not None:
        versions = [v.match, *v.versions]
        cut = cut_title(view.title, v.match) and not contradicted_fields(view, v.match)
        # an author list "not this paper's" is judged name by name by the author fix (a
        # misspelled single author is a typo, not another paper)
        doubtful = [d for d in v.discrepancies if d.klass == FABRICATED and d.field != Field.AUTHORS]
        confident = cut or (
            not doubtful
            and is_same_paper(
                view, v.match, settings.title_verified_threshold, settings.title_candidate_threshold
            )
        )
        return v.match, versions, confident
    if v.status is Status.DOI_MISMATCH:
        right = right_papers(v, view, settings)
        if right:
            paper = right[0]
            return paper, right, not contradicted_fields(view, paper)
        # the entry's title cut short of the title of the paper its DOI names, the authors
        # and year agreeing: the DOI is the paper's own (the title is what is wrong)
        if v.match is not None and cut_title(view.title, v.match) and view.authors and view.year:
            if not contradicted_fields(view, v.match):
                return v.match, [v.match, *v.versions], True
        return None
    if v.status is Status.NOT_FOUND and not v.informational:
        # a title cut short finds no paper, but a candidate whose title it begins, by the
        # same authors in the same year, is the entry's own
        for c in v.candidates:
            if cut_title(view.title, c) and view.year == c.year and _same_authors(view, c):
                return c, [c], True
    return None


def _same_authors(view: EntryView, record: PaperRecord) -> bool:
    """Every author the entry names is one of the record's (by family name)."""
    names = [n for n in view.authors if not n.is_others]
    theirs = {w for a in record.authors for w in family_key(a).split()}
    return bool(names) and all(_family(n) in theirs for n in names)


def cut_title(title: str, record: PaperRecord) -> bool:
    """``title`` is the first words of the record's (at least three, and at least 40% of
    it): a title cut short, not another paper's."""
    mine, theirs = words(title), words(record.title or "")
    return (
        not record.title_truncated
        and 3 <= len(mine) < len(theirs)
        and len(mine) * 5 >= len(theirs) * 2
        and theirs[: len(mine)] == mine
    )


def right_papers(v: Verification, view: EntryView, settings: Settings) -> list[PaperRecord]:
    """A DOI_MISMATCH's own papers: the verdict's ``right_papers``, else the candidates verify
    holds to be the entry's paper (a verdict read back from the cache has no list)."""
    if v.right_papers:
        return list(v.right_papers)
    wrong = v.match.doi if v.match is not None else None
    return own_papers(view, v.candidates, wrong, settings.title_verified_threshold)


def field_fix(
    entry: BibEntry,
    view: EntryView,
    v: Verification,
    settings: Settings,
    *,
    add_missing: bool = False,
    style: FileStyle | None = None,
) -> FieldFix | None:
    """The field fix of ``entry`` from its verdict, or None when nothing is to change: the
    fields its findings name (a fix answers a finding: a verified entry has none to fix);
    with ``add_missing``, also the DOI and pages it lacks (a separate, named choice: the
    editor's *Add …* fix, ``citelens check --fix --add-missing``)."""
    settled = settled_record(v, view, settings)
    if settled is None:
        return None
    record, versions, confident = settled
    changes: list[FieldChange] = []
    safe = confident
    for change in (
        _doi(entry, view, v, record, versions),
        _year(entry, v, record, versions),
        _venue(entry, v, style or FileStyle()),
        _title(entry, view, v, record),
        _pages(entry, v, record, versions, add_missing),
    ):
        if change is not None:
            changes.append(change)
    authors = _authors(entry, record, versions)
    if authors is not None:
        change, badly = authors
        changes.append(change)
        safe = safe and not badly
    changes = [c for c in changes if (add_missing if c.old is None else answers(v, c.name))]
    if not changes:
        return None
    order = ("title", "author", "year", *_VENUE_FIELDS, "pages", "doi")
    changes.sort(key=lambda c: order.index(c.name) if c.name in order else len(order))
    same = (
        confident
        or match_reason(view, record, settings.title_verified_threshold, settings.title_candidate_threshold)
        is not None
    )
    return FieldFix(record, tuple(changes), safe and same, same)


#: The field a change of each BibTeX field answers (a discrepancy's ``field``).
_FIELD_OF = {
    "doi": Field.DOI,
    "year": Field.YEAR,
    "journal": Field.VENUE,
    "booktitle": Field.VENUE,
    "journaltitle": Field.VENUE,
    "title": Field.TITLE,
    "author": Field.AUTHORS,
    "pages": Field.PAGES,
}


def answers(v: Verification, name: str) -> bool:
    """Whether changing the field ``name`` answers one of the verdict's findings: a finding
    about the whole entry (not found, a DOI of another paper), or a discrepancy on that
    field; a verified entry has no finding, so nothing to change."""
    if v.status in (Status.NOT_FOUND, Status.DOI_MISMATCH):
        return True
    field = _FIELD_OF.get(name)
    return v.status is Status.PARTIAL and any(d.field == field for d in v.discrepancies)


# --------------------------------------------------------------------------- fields


def _value(entry: BibEntry, name: str) -> str | None:
    f = entry.fields.get(name)
    return f.value if f is not None else None


def written_doi(doi: str, records: Sequence[PaperRecord]) -> str:
    """``doi`` as the registry writes it (its case), when a record has it so."""
    key = doi.lower()
    best = [r for r in records if r.doi_written and r.doi_written.lower() == key]
    best.sort(key=lambda r: r.source not in ("crossref", "doi"))
    return best[0].doi_written if best and best[0].doi_written else doi


def _doi(
    entry: BibEntry, view: EntryView, v: Verification, record: PaperRecord, versions: Sequence[PaperRecord]
) -> FieldChange | None:
    old = _value(entry, "doi")
    known = {r.doi for r in versions if r.doi}
    if old is not None:
        mine = normalize_doi(old)
        wrong = v.status is Status.DOI_MISMATCH and any(
            d.field == Field.DOI and d.kind == Kind.IDENTIFIER for d in v.discrepancies
        )
        if (not wrong and (mine is None or mine in known or not known or not record.doi)) or (
            mine is not None and mine == record.doi
        ):
            return None
        if (
            mine is not None
            and mine.startswith(ARXIV_DOI_START)
            and any(r.arxiv_id and mine.endswith(r.arxiv_id.lower()) for r in versions)
        ):
            return None
        if record.doi:
            new = written_doi(record.doi, versions)
            return FieldChange("doi", old, new, f"doi {old} -> {new}")
        return FieldChange("doi", old, None, f"doi {old} removed (it names another paper)")
    # a preprint server's or data archive's DOI is never added to an entry as "its" DOI
    if "doi" in entry.fields or not record.doi or record.doi.startswith(PREPRINT_DOI_PREFIXES):
        return None
    if is_preprint_venue(view.venue or "") or is_preprint_record(record):
        return None  # the entry cites the preprint: the published DOI is another version's
    new = written_doi(record.doi, versions)
    return FieldChange("doi", None, new, f"doi {new} added")


#: The year discrepancies a fix answers: another year, and a year in the future when the
#: paper's records give its year.
_YEAR_KINDS = frozenset({Kind.YEAR, Kind.YEAR_FUTURE})


def _year(
    entry: BibEntry, v: Verification, record: PaperRecord, versions: Sequence[PaperRecord]
) -> FieldChange | None:
    """The year most versions of the paper give (a Crossref online year one before the
    print year is outvoted), the settled record's on a tie."""
    d = next((d for d in v.discrepancies if d.kind in _YEAR_KINDS and d.field == Field.YEAR), None)
    old = _value(entry, "year")
    if d is None or old is None or (d.kind is Kind.YEAR_FUTURE and not d.source_value):
        return None
    cap = int(d.source_value) if d.kind is Kind.YEAR_FUTURE and d.source_value.isdigit() else None
    years = Counter(r.year for r in versions if r.year and (cap is None or r.year <= cap))
    if not years:
        return None
    top = max(years.values())
    tied = [y for y, n in years.items() if n == top]
    year = record.year if record.year in tied else tied[0]
    return FieldChange("year", old, str(year), f"year {old} -> {year}")


def _venue(entry: BibEntry, v: Verification, style: FileStyle) -> FieldChange | None:
    """The paper's venue, written as the file writes venues (``CVPR`` in a file of acronyms)."""
    d = next((d for d in v.discrepancies if d.kind == Kind.VENUE and d.field == Field.VENUE), None)
    name = next((n for n in _VENUE_FIELDS if n in entry.fields), None)
    if d is None or name is None or not d.source_value.strip():
        return None
    venue = venue_as_written(d.source_value, style)
    old = _value(entry, name)
    return FieldChange(name, old, latex_escape(venue), f"{name} {old} -> {venue}")


def _title(entry: BibEntry, view: EntryView, v: Verification, record: PaperRecord) -> FieldChange | None:
    old = _value(entry, "title")
    if old is None or record.title_truncated:
        return None
    if cut_title(view.title, record):
        title = record.title
    else:
        titles = (Kind.TITLE, Kind.TITLE_WORDS)
        d = next((d for d in v.discrepancies if d.field == Field.TITLE and d.kind in titles), None)
        if d is None or d.klass == FABRICATED:
            return None
        title = d.source_value or record.title
    if not title:
        return None
    return FieldChange("title", old, latex_escape(title), f"title -> “{title}”")


def _pages(
    entry: BibEntry, v: Verification, record: PaperRecord, versions: Sequence[PaperRecord], add_missing: bool
) -> FieldChange | None:
    """Pages the verdict found wrong (its PAGES discrepancy), or, with ``add_missing``, the
    pages an entry lacks: the settled record's range, else another version's."""
    paged = paged_versions(versions)
    if not paged or entry.entry_type not in PAGED_TYPES:
        return None
    best = record if record in paged else paged[0]
    assert best.pages is not None
    new = latex_escape(re.sub(r"\s*[-\u2013\u2014]+\s*", "--", best.pages.strip()))
    old = _value(entry, "pages")
    if old is None:
        return FieldChange("pages", None, new, f"pages {new} added") if add_missing else None
    if not any(d.kind is Kind.PAGES for d in v.discrepancies):
        return None
    return FieldChange("pages", old, new, f"pages {old} -> {new}")


# --------------------------------------------------------------------------- authors

_AND = re.compile(r"\s+and\s+", re.IGNORECASE)


def _pieces(value: str) -> tuple[list[str], list[str]]:
    """The names of an author value as written, and the separators between them (split at
    ``and`` at brace depth 0)."""
    names: list[str] = []
    seps: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(value):
        c = value[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and c.isspace():
            m = _AND.match(value, i)
            if m is not None:
                names.append(value[start:i])
                seps.append(m.group(0))
                start = i = m.end()
                continue
        i += 1
    names.append(value[start:])
    return names, seps


def _family(name: Name) -> str:
    fam = family_key(name.last).split() or family_key(name.first).split()
    return fam[-1] if fam else ""


def _record_words(display: str) -> tuple[str, frozenset[str]]:
    """(family key, every name word) of a record's display name ("Ashish Vaswani",
    "Vaswani, A.")."""
    if "," in display:
        fam = family_key(display.partition(",")[0]).split()
    else:
        fam = [w for w in family_key(display).split() if w not in ("jr", "sr", "ii", "iii", "iv")]
    return (fam[-1] if fam else ""), frozenset(family_key(display).split())


def _same_person(mine: str, theirs: tuple[str, frozenset[str]]) -> str | None:
    """``"same"`` (the family name, or a word of the record's name), ``"typo"`` (one letter
    off in a long name), or None."""
    rf, words = theirs
    if mine == rf or mine in words:
        return "same"
    if len(mine) >= 6 and len(rf) >= 6 and Levenshtein.distance(mine, rf, score_cutoff=1) <= 1:
        return "typo"
    # two letters swapped or one dropped and one doubled ("Steedamn", "Shanonn")
    if (
        mine[:1] == rf[:1]
        and min(len(mine), len(rf)) >= 5
        and Levenshtein.distance(mine, rf, score_cutoff=2) <= 2
    ):
        return "typo"
    return None


def _authors(
    entry: BibEntry, record: PaperRecord, versions: Sequence[PaperRecord]
) -> tuple[FieldChange, bool] | None:
    """The author list in the paper's order: names the entry writes right kept as written,
    misspelled, wrong and missing ones from the record; ``(change, badly)`` where ``badly``
    says most of the entry's names were not the paper's (not a safe fix)."""
    old = _value(entry, "author")
    raw = entry.fields.get("author")
    if old is None or raw is None or not record.authors or record.authors_truncated:
        return None
    pieces, seps = _pieces(old)
    others = bool(pieces) and words(pieces[-1]) in (["others"], ["et", "al"])
    if others:
        pieces, seps = pieces[:-1], seps[:-1]
    names = []
    for p in pieces:
        parsed, _ = split_names(p)
        names.append(parsed[0] if parsed else Name("", "", p, ""))
    if not names or record_authors_cut(record, len(names)) or not all(map(_writable, record.authors)):
        return None
    fams = [_family(n) for n in names]
    rec = [_record_words(a) for a in record.authors]
    # a spelling the record corrects must be every version's spelling
    whole = [r for r in versions if r.authors and not r.authors_truncated and len(r.authors) == len(rec)]
    used: set[int] = set()
    out: list[str] = []
    matched = 0
    comma_style = sum("," in p for p in pieces) * 2 >= len(pieces)
    for j, (display, theirs) in enumerate(zip(record.authors, rec, strict=True)):
        order = ([j] if j < len(fams) else []) + list(range(len(fams)))
        how = None
        hit = None
        for i in order:
            if i in used or not fams[i]:
                continue
            how = _same_person(fams[i], theirs)
            if how is not None:
                hit = i
                break
        if hit is not None:
            used.add(hit)
            matched += 1
            agreed = all(_record_words(r.authors[j])[0] == theirs[0] for r in whole)
            if how == "same" or not agreed:
                out.append(pieces[hit].strip())
                continue
        out.append(_render_name(display, comma_style))
    if others:
        out = out[: len(pieces)]
    if [p.strip() for p in pieces] == out:
        return None
    badly = matched * 2 < len(names)
    sep = seps[0] if seps else " and "
    value = sep.join(out) + (sep + "others" if others else "")
    label = "author list from " + source_name(record.source)
    return FieldChange("author", old, value, label), badly


def _writable(display: str) -> bool:
    """A record's name a fix may write: a plain display name in Latin letters ("Ashish
    Vaswani", "J. D. Hunter"), not "Kyriacos, Κυριάκος, Athanasiou, Αθανασίου"."""
    return (
        "," not in display
        and 0 < len(display.split()) <= 5
        and all(unicodedata.name(c, "").startswith("LATIN") for c in display if c.isalpha())
    )


def _render_name(display: str, comma_style: bool) -> str:
    return bibtex_author(display) if comma_style else given_first_author(display)
