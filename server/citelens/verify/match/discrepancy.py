"""What an entry gets wrong against a paper: :class:`Discrepancy`, its kinds and its two
classes (:data:`FABRICATED`, :data:`WRONG_METADATA`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from citelens.core.fields import Field
from citelens.core.severity import Severity
from citelens.sources.names import source_name
from citelens.sources.records import PaperRecord


class Kind(StrEnum):
    """What kind of difference a :class:`Discrepancy` is (compared as members: a typo in a
    kind is an error, not a silent miss)."""

    TITLE = "title"  # another title (or none resembling it)
    TITLE_WORDS = "title_words"  # the same title with words changed
    AUTHORS = "authors"
    AUTHORS_MISSING = "authors_missing"  # the named authors are the paper's, some left out
    AUTHORS_INCOMPLETE = "authors_incomplete"
    AUTHORS_ORDER = "authors_order"  # the paper's authors, in another order (information)
    PLACEHOLDER_AUTHOR = "placeholder_author"
    YEAR = "year"
    YEAR_FUTURE = "year_future"
    VENUE = "venue"
    PREPRINT_STATUS = "preprint_status"  # cited as a preprint, published since
    VENUE_UNPUBLISHED = "venue_unpublished"
    PAGES = "pages"  # another page range than the paper's (information)
    IDENTIFIER = "identifier"  # an identifier names another paper, or none
    ERROR = "error"  # the entry could not be compared


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """One thing the entry says differently from the scholarly records."""

    field: Field
    kind: Kind
    severity: Severity
    message: str  # says exactly what differs, e.g. "year: 2019 in the entry, 2020 in Crossref"
    entry_value: str = ""
    source_value: str = ""
    source: str = ""  # "s2", "crossref", ... ("" when no record was needed)
    #: FABRICATED or WRONG_METADATA ("" = WRONG_METADATA): see :attr:`klass`.
    category: str = ""

    @property
    def klass(self) -> str:
        """``fabricated`` (the reference looks invented: authors badly wrong, a placeholder
        author, an identifier no source knows, a title no record resembles) or
        ``wrong-metadata`` (a real paper cited with a wrong title word, venue, year, pages
        or identifier)."""
        return self.category or WRONG_METADATA

    def to_json(self) -> dict[str, object]:
        return {
            "field": self.field,
            "kind": self.kind,
            "severity": self.severity.value,
            "message": self.message,
            "entry_value": self.entry_value,
            "source_value": self.source_value,
            "source": self.source,
            "class": self.klass,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Discrepancy:
        return cls(
            field=_member(Field, data.get("field"), Field.ENTRY),
            kind=_member(Kind, data.get("kind"), Kind.ERROR),
            severity=Severity(str(data.get("severity", Severity.INFORMATION.value))),
            message=str(data.get("message", "")),
            entry_value=str(data.get("entry_value", "")),
            source_value=str(data.get("source_value", "")),
            source=str(data.get("source", "")),
            category=FABRICATED if data.get("class") == FABRICATED else "",
        )


#: The two classes of a finding (the NeurIPS 2026 programme-chair criteria): a reference
#: that looks invented, and a real paper cited with wrong details.
FABRICATED = "fabricated"


WRONG_METADATA = "wrong-metadata"


#: Discrepancy kinds.
KINDS = tuple(Kind)


_E = TypeVar("_E", bound=StrEnum)


def _member(enum: type[_E], value: object, default: _E) -> _E:
    """``value`` as a member of ``enum``; ``default`` for a value no member has (a report
    written by another version)."""
    try:
        return enum(str(value))
    except ValueError:
        return default


def source_of(rec: PaperRecord) -> str:
    return source_name(rec.source, "the record")
