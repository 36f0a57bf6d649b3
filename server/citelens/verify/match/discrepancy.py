"""What an entry gets wrong against a paper: :class:`Discrepancy`, its kinds and its two
classes (:data:`FABRICATED`, :data:`WRONG_METADATA`).
"""

from __future__ import annotations

from dataclasses import dataclass

from citelens.core.findings import Severity
from citelens.core.source_names import source_name
from citelens.sources.records import PaperRecord

SEVERITY_RANK = {Severity.HINT: 0, Severity.INFORMATION: 1, Severity.WARNING: 2, Severity.ERROR: 3}


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """One thing the entry says differently from the scholarly records."""

    field: str  # "title" | "authors" | "year" | "venue" | "doi" | "arxiv" | "pmid"
    kind: str  # see KINDS
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
            field=str(data.get("field", "")),
            kind=str(data.get("kind", "")),
            severity=Severity(str(data.get("severity", "information"))),
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
KINDS = (
    "title",
    "title_words",
    "authors",
    "authors_missing",
    "authors_incomplete",
    "placeholder_author",
    "year",
    "year_future",
    "venue",
    "preprint_status",
    "venue_unpublished",
    "identifier",
)


def source_of(rec: PaperRecord) -> str:
    return source_name(rec.source, "the record")
