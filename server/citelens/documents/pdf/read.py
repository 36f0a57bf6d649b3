"""A PDF to its printed references, or one line saying why they cannot be read; each
reference as the entry the engine verifies (:func:`printed_view`: its printed label as key,
the fields read, the reference as printed), with no BibTeX written and parsed again.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

from citelens.core.identifiers import normalize_arxiv, normalize_doi
from citelens.core.model import EntryView, PrintedReference
from citelens.documents.bibtex.names import author_list
from citelens.documents.pdf.extract import TIMEOUT_S, extract_lines
from citelens.documents.pdf.fields import Fields, read_around, read_fields
from citelens.documents.pdf.hyphens import one_reading
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


def read_pdf(path: str, timeout: float = TIMEOUT_S) -> PdfReading:
    """The printed references of the PDF at ``path`` (blocking: a child process reads it,
    stopped after ``timeout`` seconds)."""
    ext = extract_lines(path, timeout)
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
    """A name as the name parser reads it: braces and backslashes (which a printed name never
    means as markup) left out, spaces collapsed."""
    return " ".join(text.replace("{", "(").replace("}", ")").replace("\\", " ").split())


def entry_type(f: Fields, text: str) -> str:
    """The type a printed reference reads as (a book, a thesis, a report: a miss is
    information, as for a .bib)."""
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


def printed_view(key: str, ref: Printed, f: Fields | None = None) -> EntryView:
    """One printed reference as the entry the engine verifies: its label as key, the fields
    read from it (``fields.py``) and the reference as printed (``EntryView.printed``), which
    the verdict reads too. No BibTeX is written or parsed on the way."""
    f = read_fields(ref.text) if f is None else f
    authors, _ = author_list(" and ".join(_value(a) for a in f.authors))
    title = one_reading(f.title)
    return EntryView(
        key=key,
        entry_type=entry_type(f, ref.text),
        title=title,
        authors=authors,
        authors_truncated=f.authors_cut,
        year=f.year,
        venue=f.venue,
        doi=normalize_doi(f.doi) if f.doi else None,
        arxiv_id=normalize_arxiv(f.arxiv) if f.arxiv else None,
        pmid=None,
        s2_id=None,
        url=f.url if not f.doi and not f.arxiv else None,
        printed=PrintedReference(ref.text, ref.page, f.confident, f.title),
    )


def anchored_view(view: EntryView, start: int, end: int) -> EntryView:
    """``view`` (a printed reference's) read again with its title known to be printed at
    ``[start, end)`` of its text (``fields.read_around``): names, venue and year beside it."""
    assert view.printed is not None
    f = read_around(view.printed.text, start, end)
    authors, _ = author_list(" and ".join(_value(a) for a in f.authors))
    return dataclasses.replace(
        view,
        title=one_reading(f.title),
        authors=authors,
        authors_truncated=f.authors_cut,
        year=f.year if f.year is not None else view.year,
        venue=f.venue,
        printed=dataclasses.replace(view.printed, confident=True, title=f.title),
    )


def printed_fields(f: Fields) -> dict[str, str]:
    """The fields read, by BibTeX name, as a report shows an entry's fields."""
    names = [_value(a) for a in f.authors] + (["others"] if f.authors_cut else [])
    fields = {
        "title": one_reading(f.title),
        "author": " and ".join(names),
        "year": f.year_label[:4] if f.year else "",
        "journal": f.venue,
        "doi": f.doi or "",
        "eprint": f.arxiv or "",
        "url": (f.url or "") if not f.doi and not f.arxiv else "",
    }
    return {k: v for k, v in fields.items() if v}
