"""What the scholarly indexes cover: :data:`INFORMATIONAL_TYPES`, the entry types they cover
badly, whose absence from an index or disagreement with a record is information, never a
warning (a verification policy: the request plan and the comparison read it)."""

from __future__ import annotations

INFORMATIONAL_TYPES = frozenset(
    {
        "book",
        "inbook",
        "booklet",
        "phdthesis",
        "mastersthesis",
        "thesis",
        "techreport",
        "report",
        "software",
        "dataset",
        "data",
        "online",
        "webpage",
        "electronic",
        "www",
        "manual",
        "unpublished",
        "standard",
        "patent",
        "misc",
    }
)
