"""A PDF to its printed references, or one line saying why they cannot be read; the
references as BibTeX text for the engine (each entry's key is replaced by its printed label
once parsed, see ``workspace/check.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from citelens.documents.pdf.extract import extract_lines
from citelens.documents.pdf.fields import Fields, read_fields
from citelens.documents.pdf.layout import Printed, split_references

PDF_SUFFIXES = frozenset({".pdf"})
_BOOKISH = re.compile(r"\b(?:press|publishers?|springer|wiley|elsevier|mit press|o'reilly|addison)\b", re.I)
_THESIS = re.compile(
    r"\b(?:ph\.?\s?d\.?|doctoral|master'?s?)\s+(?:thesis|dissertation)\b|\bdissertation\b", re.I
)
_REPORT = re.compile(r"\btechnical report\b|\btech\.? rep\b", re.I)


def is_pdf(path: str | Path) -> bool:
    return Path(path).suffix.lower() in PDF_SUFFIXES


@dataclass(slots=True)
class PdfReading:
    path: str
    references: list[Printed] = field(default_factory=list)
    pages: int = 0
    error: str | None = None  # why the references could not be read (one line)


def read_pdf(path: str) -> PdfReading:
    """The printed references of the PDF at ``path`` (blocking: a child process reads it)."""
    ext = extract_lines(path)
    if ext.error is not None:
        return PdfReading(path, pages=ext.pages, error=ext.error)
    if ext.chars == 0:
        why = "no text layer (a scanned PDF? run OCR first): its references cannot be read"
        return PdfReading(path, pages=ext.pages, error=why if ext.pages else "it has no pages")
    if not ext.lines:
        return PdfReading(
            path,
            pages=ext.pages,
            error="no reference section found (no heading such as References or Bibliography)",
        )
    refs = split_references(ext.lines, ext.page_width)
    if not refs:
        page = ext.lines[0].page
        return PdfReading(
            path, pages=ext.pages, error=f"a reference heading on page {page}, but no reference after it"
        )
    return PdfReading(path, refs, ext.pages)


def _value(text: str) -> str:
    return " ".join(text.replace("{", "(").replace("}", ")").replace("\\", " ").split())


def entry_type(f: Fields, text: str) -> str:
    """The BibTeX type a printed reference reads as (a book, a thesis, a report: a miss
    is information, as for a .bib)."""
    if _THESIS.search(text):
        return "phdthesis"
    if _REPORT.search(text):
        return "techreport"
    if f.doi or f.arxiv:
        return "article"
    if not f.venue and _BOOKISH.search(text):
        return "book"
    if f.url and not f.venue:
        return "misc"
    return "article"


def entry_text(n: int, ref: Printed) -> str:
    """One reference as a BibTeX entry (key ``refN``)."""
    f = read_fields(ref.text)
    names = [_value(a) for a in f.authors]
    if f.authors_cut:
        names.append("others")
    fields: list[tuple[str, str]] = [
        ("title", _value(f.title)),
        ("author", " and ".join(names)),
        ("year", f.year_label[:4] if f.year else ""),
        ("journal", _value(f.venue)),
        ("doi", f.doi or ""),
        ("eprint", f.arxiv or ""),
        ("archiveprefix", "arXiv" if f.arxiv else ""),
        ("url", _value(f.url or "") if not f.doi and not f.arxiv else ""),
    ]
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields if v)
    return f"@{entry_type(f, ref.text)}{{ref{n},\n{body}\n}}\n"


def to_bibtex(refs: list[Printed]) -> str:
    """The references as BibTeX text, one entry each (``ref1``, ``ref2``, … in printed order)."""
    return "\n".join(entry_text(n, r) for n, r in enumerate(refs, 1))
