"""The entry fields the engine compares, reports and fixes, as one enum.

A discrepancy names its field (:class:`Field`), a DOI_MISMATCH names the identifier that
resolved to another paper, and a quick fix edits that field: the name travels from the
.bib to the quick fix as a member of :class:`Field`, so a typo is an error, not a silent
miss. A field is a ``str`` (``Field.DOI == "doi"``): JSON reports read it as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType


class Field(StrEnum):
    TITLE = "title"
    AUTHORS = "authors"
    YEAR = "year"
    VENUE = "venue"
    PAGES = "pages"
    DOI = "doi"
    ARXIV = "arxiv"
    PMID = "pmid"
    S2 = "s2"  # a Semantic Scholar paper id (s2id, or an S2 URL)
    ENTRY = "entry"  # the entry as a whole (it could not be compared)


#: The identifier fields, in the order a verdict reads them, and how a message names each.
IDENTIFIER_LABELS: Mapping[str, str] = MappingProxyType(
    {
        Field.DOI: "DOI",
        Field.ARXIV: "arXiv id",
        Field.PMID: "PMID",
        Field.S2: "Semantic Scholar id",
    }
)
IDENTIFIER_FIELDS: tuple[Field, ...] = tuple(Field(f) for f in IDENTIFIER_LABELS)
