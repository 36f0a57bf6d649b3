"""What kind of document a path names, by its suffix alone (no disk): a bibliography, a LaTeX
source, a Markdown source, or none CiteLens reads. Every layer asks it (the editor, the
project walk, the fixes), so it lives in core; ``documents/read.py`` reads the files.
A kind is a :class:`DocKind` member, compared as one (``kind is DocKind.BIB``), never as
the string it is written as."""

from __future__ import annotations

import os
from enum import StrEnum

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".rmd", ".qmd", ".pandoc"})
LATEX_SUFFIXES = frozenset({".tex", ".ltx", ".latex", ".sty", ".cls"})
BIB_SUFFIXES = frozenset({".bib", ".bibtex"})


class DocKind(StrEnum):
    """The documents CiteLens reads: a bibliography, or a source that cites (LaTeX, Markdown)."""

    BIB = "bib"
    LATEX = "latex"
    MARKDOWN = "markdown"


#: The kinds of document that cite (a project's sources, as opposed to its bibliographies).
CITING = (DocKind.LATEX, DocKind.MARKDOWN)
#: Every kind, in the order the project walk lists them.
ALL_KINDS = (DocKind.LATEX, DocKind.MARKDOWN, DocKind.BIB)


def kind_of(path: str) -> DocKind | None:
    suffix = os.path.splitext(os.fspath(path))[1].lower()  # (Path(path).suffix: 20 times slower)
    if suffix in BIB_SUFFIXES:
        return DocKind.BIB
    if suffix in LATEX_SUFFIXES:
        return DocKind.LATEX
    if suffix in MARKDOWN_SUFFIXES:
        return DocKind.MARKDOWN
    return None
