"""Reading documents from disk: what kind a file is, and its text.

The one place that decides which files CiteLens reads (by suffix) and how their bytes
become text (UTF-8, invalid bytes replaced, a BOM dropped), for the editor and the CLI.
"""

from __future__ import annotations

from pathlib import Path

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".rmd", ".qmd", ".pandoc"})
LATEX_SUFFIXES = frozenset({".tex", ".ltx", ".latex", ".sty", ".cls"})
BIB_SUFFIXES = frozenset({".bib", ".bibtex"})


def kind_of(path: str) -> str | None:
    suffix = Path(path).suffix.lower()
    if suffix in BIB_SUFFIXES:
        return "bib"
    if suffix in LATEX_SUFFIXES:
        return "latex"
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    return None


def read_text(path: str | Path) -> str:
    """A file's text: UTF-8, invalid bytes replaced, BOM stripped; ``""`` if unreadable."""
    try:
        data = Path(path).read_bytes()
    except (OSError, ValueError):
        return ""
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text
