"""How a .bib writes what a record gives, so that a fix or a new entry reads like the
entries around it: the order of its authors' names ("Given Family" or "Family, Given"),
its venues (a venue's acronym, "CVPR", where the file writes acronyms), whether its entries
carry a ``url``, and how it spells camel-case field names. Read once per text of a file
(:func:`file_style`); :func:`styled` puts it on an entry's :class:`Style`,
:func:`as_written` on a record before it is rendered.

Never written from a record: the page of an index about the paper (Semantic Scholar's,
OpenAlex's), which is not where the paper is."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from citelens.core.model import BibEntry
from citelens.documents.bibtex.style import Style, detect_given_first, detect_spellings
from citelens.sources.records import PaperRecord
from citelens.verify.match.venues import acronym, written_as_acronym

#: Entries read to learn a file's style (a big library's first ones say enough).
SAMPLE = 400
_VENUE_FIELDS = ("journal", "booktitle", "journaltitle")
#: An index's page about a paper (a record's ``url`` from Semantic Scholar or OpenAlex).
_INDEX_PAGE = re.compile(
    r"^https?://(?:www\.|api\.)?(?:semanticscholar\.org|openalex\.org)/", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class FileStyle:
    """What a .bib's entries do alike (defaults: a file with no entries)."""

    spellings: tuple[tuple[str, str], ...] = ()
    given_first: bool = False  # authors "Given Family"
    acronyms: bool = False  # venues the venue table knows are written by their acronym
    urls: bool = True  # most entries carry a url


def file_style(text: str, entries: Sequence[BibEntry]) -> FileStyle:
    """The style of the file ``text`` from its (first :data:`SAMPLE`) ``entries``."""
    sample = entries[:SAMPLE]
    short = long = 0
    for entry in sample:
        venue = next((entry.fields[n].value for n in _VENUE_FIELDS if n in entry.fields), "")
        written = written_as_acronym(venue) if venue else None
        short += written is True
        long += written is False
    with_url = sum("url" in e.fields for e in sample)
    return FileStyle(
        spellings=detect_spellings(text, sample),
        given_first=detect_given_first(sample),
        acronyms=short > long,
        urls=not sample or with_url * 2 >= len(sample),
    )


def styled(style: Style, fs: FileStyle) -> Style:
    """An entry's ``style`` with its file's conventions."""
    return dataclasses.replace(style, spellings=fs.spellings, given_first=fs.given_first)


def venue_as_written(venue: str, fs: FileStyle) -> str:
    """``venue`` as the file writes venues: its acronym where the file writes acronyms."""
    return (acronym(venue) or venue) if fs.acronyms and venue else venue


def as_written(record: PaperRecord, fs: FileStyle) -> PaperRecord:
    """``record`` as the file would write it: its venue as the file writes venues, and no
    ``url`` where the file's entries carry none or where it is an index's page."""
    venue = venue_as_written(record.venue or "", fs) or record.venue
    url = record.url if record.url and fs.urls and not _INDEX_PAGE.match(record.url) else None
    if venue == record.venue and url == record.url:
        return record
    return dataclasses.replace(record, venue=venue, url=url)
