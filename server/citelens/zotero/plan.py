"""Which fix of an entry goes to Zotero: the field fix of its verdict (the fields the
verdict's paper has differently, :mod:`citelens.fixes.metadata`), decided without I/O from
what the editor and ``citelens check`` hold (:class:`~citelens.fixes.context.FixContext`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from citelens.fixes.context import FixContext
from citelens.fixes.metadata import FieldChange, field_fix

#: How a .bib field is named in Zotero, for the titles of the fixes.
_LABELS: Mapping[str, str] = MappingProxyType(
    {
        "doi": "DOI",
        "author": "authors",
        "year": "date",
        "journal": "journal",
        "journaltitle": "journal",
        "booktitle": "proceedings title",
        "number": "issue",
    }
)

FIX_TITLE = "Fix in Zotero"
EDIT_ANYWAY = "Edit the .bib anyway (the next export overwrites it)"
OVERWRITTEN = " (the next export overwrites it)"


@dataclass(frozen=True, slots=True)
class ZoteroFix:
    """The fields of one entry of a Better BibTeX .bib to write to its Zotero item."""

    bib: str
    key: str
    changes: tuple[FieldChange, ...]
    safe: bool
    text_title: str  # the title of the same fix as an edit of the .bib

    @property
    def title(self) -> str:
        names = [c.name for c in self.changes]
        if names == ["doi"] and self.changes[0].new:
            return f"{FIX_TITLE}: DOI → {self.changes[0].new}"
        labels = list(dict.fromkeys(_LABELS.get(n, n) for n in names))
        return f"{FIX_TITLE}: " + ", ".join(labels)

    @property
    def adds(self) -> bool:
        """Whether it fills in a field the entry lacks."""
        return any(c.old is None for c in self.changes)


def zotero_fix(ctx: FixContext, bib_path: str, key: str, *, add_missing: bool = False) -> ZoteroFix | None:
    """The Zotero fix of the entry ``key`` of ``bib_path`` from its current verdict: the
    fields its findings name (``add_missing``: and the DOI and pages it lacks, as
    ``--add-missing`` and the editor's "Add ..." choice), or None (nothing to change)."""
    bib = ctx.bib(bib_path)
    entry = next((e for e in bib.entries if e.key == key), None) if bib is not None else None
    if entry is None:
        return None
    if not entry.path:
        entry.path = bib_path
    v = ctx.verdict(entry)
    view = ctx.view(entry)
    if v is None or view is None:
        return None
    found = field_fix(entry, view, v, ctx.settings, add_missing=add_missing)
    if found is None or not found.changes:
        return None
    return ZoteroFix(bib_path, key, tuple(found.changes), found.safe, found.title)
