"""PDFs among the paths of a check: each is read (``documents/pdf``) into a stand-alone
bibliography of its printed references, each an entry from the start (its printed label as
key, the fields read, the reference as printed: ``documents/pdf/read.printed_view``); no
BibTeX is written, and the PDF itself is never read as text.

Which PDFs: a PDF named on the command line; the PDFs of a folder that holds no source
(no ``.tex``, ``.md``, ``.bib`` or ``.bbl``: a venue's paper that is only a PDF). A folder
with its sources is checked from them: the sources say more than the print.

Bounded: at most ``pdfReaders`` PDFs are read at once in the whole process (the pipeline's
:meth:`~citelens.workspace.pipeline.Pipeline.pdf_readers`, shared by every paper of a
venue), and a venue paper's reading stops at what is left of its time budget
(``workspace/walls.py``): a paper over it is "not fully checked".
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from citelens.core.codes import Code
from citelens.core.findings import Finding, make_finding
from citelens.core.model import BibEntry, BibField, BibFile, EntryView, Span
from citelens.core.settings import Settings
from citelens.documents.bibtex.keytable import key_table
from citelens.documents.pdf.extract import TIMEOUT_S
from citelens.documents.pdf.fields import read_fields
from citelens.documents.pdf.layout import Printed
from citelens.documents.pdf.read import PdfReading, is_pdf, printed_fields, printed_view, read_pdf
from citelens.workspace.files import documents_under, files_under
from citelens.workspace.index import Analysis, Definitions
from citelens.workspace.project import Project
from citelens.workspace.store import DocumentStore


@dataclass(slots=True)
class PrintedSource:
    """A PDF's references: entry ``i`` of its bibliography (span ``[i, i+1)``) is
    ``references[i]``, verified as ``views[i]``."""

    path: str
    pages: int
    references: list[Printed] = field(default_factory=list)
    views: list[EntryView] = field(default_factory=list)

    def at(self, offset: int) -> Printed | None:
        """The printed reference of the entry at ``offset`` (its span's start)."""
        return self.references[offset] if 0 <= offset < len(self.references) else None

    def view(self, offset: int) -> EntryView | None:
        """What the engine verifies for the entry at ``offset``."""
        return self.views[offset] if 0 <= offset < len(self.views) else None


def split_paths(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the paths checked as usual, the PDFs to read)."""
    others: list[str] = []
    pdfs: list[str] = []
    for raw in paths:
        p = os.path.abspath(raw)
        if os.path.isfile(p) and is_pdf(raw):
            pdfs.append(p)
            continue
        others.append(raw)
        if os.path.isdir(p) and not _has_sources(raw):
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


def printed_bib(path: str, references: Sequence[Printed]) -> tuple[BibFile, PrintedSource]:
    """A PDF's references as a bibliography of entries keyed by their printed labels (entry
    ``i`` spans ``[i, i+1)``: where its reference is in :class:`PrintedSource`), and the
    views the engine verifies."""
    source = PrintedSource(path, 0, list(references))
    entries = []
    for i, ref in enumerate(references):
        f = read_fields(ref.text)
        view = printed_view(ref.label, ref, f)
        source.views.append(view)
        at = Span(i, i + 1)
        fields = {k: BibField(k, v, at, at) for k, v in printed_fields(f).items()}
        entries.append(BibEntry(view.entry_type, ref.label, at, at, fields, path))
    return BibFile(path, entries, []), source


def _analysis(path: str, bib: BibFile) -> Analysis:
    """The analysis of a PDF's own project: its bibliography alone (a printed list has no
    citation to resolve and no BibTeX to check)."""
    first, more = key_table([bib])
    return Analysis(
        Project(root=path, files=[], bib_paths=[path]),
        bibs=[bib],
        first=first,
        definitions=Definitions(first, more),
    )


async def read_pdfs(
    store: DocumentStore,
    pdfs: Sequence[str],
    settings: Settings,
    readers: asyncio.Semaphore | None = None,
) -> tuple[list[Analysis], list[Finding], dict[str, PrintedSource]]:
    """Each PDF read (in child processes, at most ``readers`` at once) into an analysis of
    its own: (analyses, PDF_NOT_READ findings, where each entry was printed, by path)."""
    limit = readers if readers is not None else asyncio.Semaphore(max(1, os.cpu_count() or 1))
    walls = store.walls

    own = asyncio.Lock()  # a venue paper reads its PDFs one after the other

    async def one(path: str) -> PdfReading:
        if walls is None:
            async with limit:
                return await asyncio.to_thread(read_pdf, path, TIMEOUT_S)
        async with own:
            queued = walls.clock()
            async with limit:
                walls.waited += walls.clock() - queued  # waiting for a reader another paper holds
                left = walls.seconds_left()
                if left <= 0:
                    walls.note(f"reading took more than {walls.budget.seconds:g} s; the rest were not read")
                    return PdfReading(path, error=f"over the paper's budget of {walls.budget.seconds:g} s")
                reading = await asyncio.to_thread(read_pdf, path, min(TIMEOUT_S, left))
            if walls.seconds_left() <= 0:
                walls.note(f"reading took more than {walls.budget.seconds:g} s; the rest were not read")
            return reading

    if walls is not None:  # a venue paper: only its own PDFs, within its budget
        pdfs = [p for p in pdfs if walls.refuse(p, _size(p)) is None]
    readings = await asyncio.gather(*(one(p) for p in pdfs))
    analyses: list[Analysis] = []
    findings: list[Finding] = []
    printed: dict[str, PrintedSource] = {}
    for reading in readings:
        path = reading.path
        store.open(path, "", 0)  # the PDF is never read as text
        if reading.error is not None:
            f = make_finding(settings, path, Code.PDF_NOT_READ, f"PDF not read: {reading.error}", Span(0, 0))
            if f is not None:
                findings.append(f)
            continue
        bib, source = printed_bib(path, reading.references)
        source.pages = reading.pages
        printed[path] = source
        analyses.append(_analysis(path, bib))
    return analyses, findings, printed
