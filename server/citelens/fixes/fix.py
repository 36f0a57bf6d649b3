"""A quick fix as plain data: its title, its edits (path, span, new text), whether it may be
applied without a look (``preferred``), its kind, or a notice to open instead of an edit."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from citelens.core.model import Span
from citelens.documents.bibtex.edit import TextEdit


class FixKind(StrEnum):
    QUICKFIX = "quickfix"


@dataclass(frozen=True, slots=True)
class FileEdit:
    """Replace ``span`` of the text of ``path`` with ``new``."""

    path: str
    span: Span
    new: str


@dataclass(frozen=True, slots=True)
class Fix:
    title: str
    edits: tuple[FileEdit, ...] = ()
    preferred: bool = False
    kind: FixKind = FixKind.QUICKFIX
    url: str | None = None  # a fix that opens a notice (in the browser) instead of editing


def file_edits(edits: Mapping[str, Sequence[TextEdit]]) -> tuple[FileEdit, ...] | None:
    """The edits of each file in text order, or None when two of one file overlap: an edit
    touches only what it names, so overlapping edits are never offered (a corrupted file)."""
    out: list[FileEdit] = []
    for path, es in edits.items():
        ordered = sorted(es, key=lambda e: (e.start, e.end))
        if any(a.end > b.start for a, b in itertools.pairwise(ordered)):
            return None
        out += (FileEdit(path, Span(e.start, e.end), e.new) for e in ordered)
    return tuple(out)
