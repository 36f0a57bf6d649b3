"""An entry's fields as plain Unicode and normalised identifiers (:class:`EntryView`).

:func:`entry_view` is what the verifier compares with scholarly records: title,
authors (editors when there are no authors), year, venue, and the identifiers
DOI, arXiv id, PMID and Semantic Scholar id, wherever the entry keeps them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from citelens.core.identifiers import entry_identifiers, plain_identifier
from citelens.core.latextext import to_unicode
from citelens.core.model import Authors, BibEntry, BibField, EntryView
from citelens.documents.bibtex.keytable import crossref_lookup, resolve_crossref
from citelens.documents.bibtex.names import author_list
from citelens.documents.bibtex.parse import field_values

CrossrefSource = Callable[[str], BibEntry | None] | Mapping[str, BibEntry]

_YEAR = re.compile(r"(?<!\d)(\d{4})(?!\d)")
#: Venue fields by entry type, in order of preference.
_VENUE_BY_TYPE: dict[str, tuple[str, ...]] = {
    "article": ("journal", "journaltitle"),
    "inproceedings": ("booktitle", "eventtitle", "series", "organization", "publisher"),
    "conference": ("booktitle", "eventtitle", "series", "organization", "publisher"),
    "incollection": ("booktitle", "series", "publisher"),
    "inbook": ("booktitle", "publisher"),
    "phdthesis": ("school", "institution"),
    "mastersthesis": ("school", "institution"),
    "thesis": ("school", "institution"),
    "techreport": ("institution", "school", "publisher"),
    "report": ("institution", "publisher"),
    "book": ("publisher", "series"),
    "booklet": ("howpublished", "publisher"),
    "manual": ("organization", "publisher", "institution"),
    "misc": ("howpublished", "publisher", "organization"),
    "online": ("organization", "publisher", "howpublished"),
}
_VENUE_FALLBACK = (
    "journal",
    "journaltitle",
    "booktitle",
    "school",
    "institution",
    "publisher",
    "howpublished",
    "organization",
)


def entry_view(entry: BibEntry, crossref: CrossrefSource | None = None) -> EntryView:
    """``entry`` as plain Unicode; ``crossref`` finds parents whose fields are inherited."""
    try:
        fields = _fields(entry, crossref)
        return _view(entry, fields)
    except Exception:  # pragma: no cover - defensive: never raise for odd input
        none = Authors.of(())
        return EntryView(entry.key, entry.entry_type, "", none, False, None, "", None, None, None, None, None)


def _fields(entry: BibEntry, crossref: CrossrefSource | None) -> dict[str, str]:
    values = field_values(entry)
    if crossref is not None and values.get("crossref"):
        lookup = _mapping_lookup(crossref) if isinstance(crossref, Mapping) else crossref
        raw: Mapping[str, BibField] = resolve_crossref(entry, lookup)
        return {name: f.value for name, f in raw.items()}
    return values


def _mapping_lookup(entries: Mapping[str, BibEntry]) -> Callable[[str], BibEntry | None]:
    """Exact keys first; a case-insensitive index is built only when that fails."""
    folded: list[Callable[[str], BibEntry | None]] = []

    def lookup(key: str) -> BibEntry | None:
        found = entries.get(key) or entries.get(key.strip())
        if found is None:
            if not folded:
                folded.append(crossref_lookup(entries))
            found = folded[0](key)
        return found

    return lookup


def _view(entry: BibEntry, f: dict[str, str]) -> EntryView:
    title = to_unicode(f.get("title", ""))
    subtitle = to_unicode(f.get("subtitle", ""))
    if subtitle:
        title = f"{title}: {subtitle}" if title else subtitle
    people = f.get("author") or f.get("editor") or ""
    authors, truncated = author_list(people)
    ids = entry_identifiers(f)
    return EntryView(
        key=entry.key,
        entry_type=entry.entry_type,
        title=title,
        authors=authors,
        authors_truncated=truncated,
        year=_year(f),
        venue=_venue(entry.entry_type, f),
        doi=ids.doi,
        arxiv_id=ids.arxiv,
        pmid=ids.pmid,
        s2_id=ids.s2,
        url=_url(f),
        pages=" ".join(f.get("pages", "").split()) or None,
    )


def _year(f: Mapping[str, str]) -> int | None:
    """From ``year`` ("2019", "{2019a}"), else biblatex ``date`` ("2019-05-01", "2019/2020")."""
    for name in ("year", "date"):
        m = _YEAR.search(f.get(name, ""))
        if m is not None:
            return int(m.group(1))
    return None


def _venue(entry_type: str, f: Mapping[str, str]) -> str:
    for name in _VENUE_BY_TYPE.get(entry_type, ()) + _VENUE_FALLBACK:
        value = to_unicode(f.get(name, ""))
        if value:
            return value
    return ""


def _url(f: Mapping[str, str]) -> str | None:
    value = plain_identifier(f.get("url", ""))
    return value or None
