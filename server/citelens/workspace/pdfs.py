"""PDFs among the paths of a check: each is read (``documents/pdf``) into a stand-alone
bibliography of its printed references, held in the store as BibTeX text under the PDF's
path (the PDF itself is never read as text), each entry keyed by its printed label.

Which PDFs: a PDF named on the command line; the PDFs of a folder that holds no source
(no ``.tex``, ``.md``, ``.bib`` or ``.bbl``: a venue's paper that is only a PDF). A folder
with its sources is checked from them: the sources say more than the print.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from citelens.core.codes import Code
from citelens.core.findings import Finding, make_finding
from citelens.core.model import Span
from citelens.core.settings import Settings
from citelens.documents.pdf.layout import Printed
from citelens.documents.pdf.read import PdfReading, is_pdf, read_pdf, to_bibtex
from citelens.workspace.files import documents_under, files_under
from citelens.workspace.project import Project
from citelens.workspace.store import DocumentStore


@dataclass(slots=True)
class PrintedSource:
    """Where each entry of a PDF's references came from: the reference as printed."""

    path: str
    pages: int
    by_start: dict[int, Printed] = field(default_factory=dict)  # entry span start -> reference
    starts: list[int] = field(default_factory=list)  # sorted

    def at(self, offset: int) -> Printed | None:
        """The printed reference of the entry holding ``offset`` of the BibTeX text."""
        import bisect

        i = bisect.bisect_right(self.starts, offset) - 1
        return self.by_start.get(self.starts[i]) if i >= 0 else None


def split_paths(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the paths checked as usual, the PDFs to read)."""
    others: list[str] = []
    pdfs: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_file() and is_pdf(raw):
            pdfs.append(os.path.abspath(raw))
            continue
        others.append(raw)
        if p.is_dir() and not _has_sources(raw):
            pdfs.extend(os.path.abspath(f) for f in files_under(raw) if is_pdf(f))
    return others, pdfs


def _has_sources(folder: str) -> bool:
    if next(iter(documents_under(folder)), None) is not None:
        return True
    return any(f.lower().endswith(".bbl") for f in files_under(folder))


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


async def read_pdfs(
    store: DocumentStore, pdfs: Sequence[str], settings: Settings
) -> tuple[list[Project], list[Finding], dict[str, PrintedSource]]:
    """Each PDF read (in child processes, a few at a time) into a project of its own:
    (projects, PDF_NOT_READ findings, provenance by path)."""
    limit = asyncio.Semaphore(max(1, min(4, os.cpu_count() or 1)))

    async def one(path: str) -> PdfReading:
        async with limit:
            return await asyncio.to_thread(read_pdf, path)

    if store.walls is not None:  # a venue paper: only its own PDFs, within its budget
        pdfs = [p for p in pdfs if store.walls.refuse(p, _size(p)) is None]
    readings = await asyncio.gather(*(one(p) for p in pdfs))
    projects: list[Project] = []
    findings: list[Finding] = []
    printed: dict[str, PrintedSource] = {}
    for reading in readings:
        path = reading.path
        text = to_bibtex(reading.references) if reading.error is None else ""
        store.open(path, text, 0)  # the PDF is never read as text
        if reading.error is not None:
            f = make_finding(settings, path, Code.PDF_NOT_READ, f"PDF not read: {reading.error}", Span(0, 0))
            if f is not None:
                findings.append(f)
            continue
        bib = store.bib(path)
        if bib is None:
            continue
        source = PrintedSource(path, reading.pages)
        for entry, ref in zip(bib.entries, reading.references, strict=False):
            entry.key = ref.label  # the printed label is the key in every report
            source.by_start[entry.span.start] = ref
        source.starts = sorted(source.by_start)
        printed[path] = source
        projects.append(Project(root=path, files=[], bib_paths=[path]))
    return projects, findings, printed
