"""A quick fix as plain data: its title, its edits (path, span, new text), its
applicability (ruff's three levels), its kind, or a notice to open instead of an edit."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from citelens.core.model import Span
from citelens.documents.bibtex.edit import TextEdit


class FixKind(StrEnum):
    QUICKFIX = "quickfix"


class Applicability(StrEnum):
    """How much trust a fix needs, as ruff says it.

    ``safe``: the reference stays the same paper and only fields the verdict found wrong or
    missing change, from a confident match (``citelens check --fix`` applies it; the editor
    marks it preferred). ``unsafe``: still the same paper, changed more than that: a merge
    deletes an entry, a preprint becomes its published version, or fields come from a less
    than confident match of the paper (``--unsafe-fixes`` only). ``display_only``: shown in
    the editor, never applied by a batch command: another paper in place of the cited one
    (the writer picks it: a fabricated reference must never be laundered into a real one
    by the tool that caught it), a rewrite of the whole entry, a notice to open."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


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
    applicability: Applicability = Applicability.UNSAFE
    kind: FixKind = FixKind.QUICKFIX
    url: str | None = None  # a fix that opens a notice (in the browser) instead of editing
    #: What it changes, one line per field ("year: 2019 -> 2020"), for ``citelens check --fix``.
    changes: tuple[str, ...] = ()

    @property
    def preferred(self) -> bool:
        """LSP ``isPreferred``: a safe fix may be applied without a look."""
        return self.applicability is Applicability.SAFE


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
