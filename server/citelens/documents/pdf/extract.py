"""A PDF's text lines with their layout, read by PDFium (pypdfium2) in a child process.

The parent (:func:`extract_lines`) starts ``python -m citelens.documents.pdf.extract FILE``
with limits on its memory, CPU time and output, and a wall-clock timeout, so a PDF bomb
(deep object streams, huge images, a page tree of a million pages), a corrupt file or a
crash in the C library costs one clear line, never the checking process. The child writes
one JSON object: the page count, the characters of text found, and the lines of the pages
that may hold the reference list (each with its page, left and right edge, baseline and
height in points), or an ``error``.

Why PDFium: measured on the test PDFs of ``tests/data/pdf`` (LaTeX, one and two columns,
seven BibTeX styles), it reads a PDF in 20-40 ms (pypdf 100-130, pdfminer.six 190-220,
pdfplumber 350-450), gives each character's box (columns, hanging indents, gaps between
entries), marks the hyphens it finds at line ends, and is the engine of a major browser,
built for hostile files. Nothing in the file is executed (PDFium runs no JavaScript here).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

#: Pages read for their text (a 500-page thesis is read; a million-page tree is not).
MAX_PAGES = 2000
#: Pages read with their layout from the reference heading on.
MAX_REFERENCE_PAGES = 60
#: A file larger than this is not opened.
MAX_PDF_BYTES = 200 << 20
#: The child's limits.
MEMORY_BYTES = 1536 << 20
CPU_SECONDS = 60
TIMEOUT_S = 90.0
MAX_OUTPUT_BYTES = 64 << 20

_HEADING = re.compile(
    r"^(?:(?:\d{1,2}|[IVXLC]{1,6}|[A-Z])(?:\.\d{1,2})*\.?\s+)?"
    r"(references?|bibliography|literature cited|works cited|reference list|references and notes|"
    r"literatur|références|bibliographie|referencias)\s*:?$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Line:
    """One line of text as printed: its page (1-based), left and right edge, baseline and
    height in points (from the page's bottom)."""

    page: int
    text: str
    x0: float
    x1: float
    y: float
    height: float
    size: float = 0.0  # the font size of its first character (0: unknown)


@dataclass(slots=True)
class Extraction:
    pages: int = 0
    chars: int = 0  # characters of text on the pages read (0: no text layer)
    lines: list[Line] | None = None  # the lines from the first page with a reference heading
    page_width: float = 0.0
    error: str | None = None  # why the file could not be read (one line)


def is_heading(text: str) -> bool:
    return _HEADING.match(" ".join(text.split())) is not None


def heading_like(text: str) -> bool:
    """A reference heading, or a running header naming it with a page number."""
    return is_heading(re.sub(r"^\s*\d{1,4}\s+|\s+\d{1,4}\s*$", "", text))


def reference_start(headed: list[bool]) -> int | None:
    """The page where the reference list starts, from which pages have a heading-like line:
    the first page of the last run of such pages (running headers repeat "References" on
    every page of the list; a table of contents names it much earlier)."""
    last = next((i for i in range(len(headed) - 1, -1, -1) if headed[i]), None)
    if last is None:
        return None
    while last > 0 and headed[last - 1]:
        last -= 1
    return last


def _limit() -> None:  # pragma: no cover - runs in the child
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass


def extract_lines(path: str, timeout: float = TIMEOUT_S) -> Extraction:
    """The lines of ``path`` that may hold its reference list, read in a limited child
    process; ``Extraction.error`` says in one line why not."""
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        return Extraction(error=f"cannot read it ({exc.strerror or exc})")
    if size > MAX_PDF_BYTES:
        return Extraction(error=f"larger than {MAX_PDF_BYTES >> 20} MB ({size >> 20} MB)")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "citelens.documents.pdf.extract", path],
            capture_output=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        )
    except subprocess.TimeoutExpired:
        return Extraction(error=f"reading it took longer than {timeout:.0f} s (not read)")
    except OSError as exc:
        return Extraction(error=f"cannot start the PDF reader ({exc.strerror or exc})")
    if len(proc.stdout) > MAX_OUTPUT_BYTES:
        return Extraction(error="too much text (not read)")
    try:
        data = json.loads(proc.stdout.decode("utf-8", errors="replace"))
    except ValueError:
        why = "it used more memory or time than allowed" if proc.returncode < 0 else "the PDF reader failed"
        return Extraction(error=f"could not read it: {why}")
    if not isinstance(data, dict):
        return Extraction(error="could not read it: the PDF reader failed")
    return _from_json(data)


def _from_json(data: dict[str, Any]) -> Extraction:
    out = Extraction(
        pages=int(data.get("pages") or 0),
        chars=int(data.get("chars") or 0),
        page_width=float(data.get("width") or 0.0),
        error=str(data["error"]) if data.get("error") else None,
    )
    raw = data.get("lines")
    if isinstance(raw, list):
        out.lines = [
            Line(int(r[0]), str(r[1]), *(float(x) for x in r[2:7]))
            for r in raw
            if isinstance(r, list) and len(r) == 7
        ]
    return out


# ---------------------------------------------------------------------------- the child


def _font_size(textpage: Any, index: int) -> float:
    try:
        import pypdfium2.raw as pdfium_c

        return float(pdfium_c.FPDFText_GetFontSize(textpage.raw, index))
    except Exception:
        return 0.0


_LINE_NUMBER = re.compile(r"\s*(\d{1,4})\s+(?=\S)")


def _spans(text: str, n: int) -> list[tuple[int, int]]:
    """(start, end) of each line of a page's text (a hyphen PDFium put at a line end kept)."""
    out = []
    start = 0
    for i in range(n + 1):
        if i == n or text[i] in "\r\n\ufffe":
            end = i + 1 if i < n and text[i] == "\ufffe" else i
            if end > start and text[start:end].strip():
                out.append((start, end))
            start = i + 1
    return out


def _without_line_numbers(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The lines without the numbers a review copy prints in its margin (``054 Ashish
    Vaswani, ...``): most lines start with a number, and the numbers go up one by one."""
    found = [_LINE_NUMBER.match(text, a, b) for a, b in spans]
    numbers = [int(m.group(1)) for m in found if m]
    if len(numbers) < 5 or len(numbers) < 0.6 * len(spans):
        return spans
    ups = sum(1 for a, b in itertools.pairwise(numbers) if b == a + 1)
    if ups < 0.7 * (len(numbers) - 1):
        return spans
    return [(m.end() if m else a, b) for (a, b), m in zip(spans, found, strict=True)]


def _page_lines(textpage: Any, page_no: int) -> list[list[Any]]:
    text = textpage.get_text_range()
    n = min(len(text), textpage.count_chars())
    out: list[list[Any]] = []
    for start, end in _without_line_numbers(text, _spans(text, n)):
        boxes = [textpage.get_charbox(j) for j in range(start, end) if not text[j].isspace()]
        if not boxes:
            continue
        x0 = min(b[0] for b in boxes)
        x1 = max(b[2] for b in boxes)
        y = min(b[1] for b in boxes)
        h = max(b[3] - b[1] for b in boxes)
        first = next(j for j in range(start, end) if not text[j].isspace())
        size = round(_font_size(textpage, first), 1)
        out.append([page_no, text[start:end], round(x0, 1), round(x1, 1), round(y, 1), round(h, 1), size])
    return out


def _child(path: str) -> dict[str, Any]:
    try:
        import pypdfium2 as pdfium
    except ImportError:
        return {"error": "no PDF reader installed (pypdfium2)"}
    try:
        doc = pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        why = str(exc).lower()
        if "password" in why:
            return {"error": "it is encrypted (a password is needed)"}
        if "format" in why or "file" in why:
            return {"error": "it is not a valid PDF (corrupt or truncated)"}
        return {"error": f"could not open it ({exc})"}
    try:
        total = len(doc)
        pages = min(total, MAX_PAGES)
        texts: list[str] = []
        chars = 0
        width = 0.0
        for i in range(pages):
            page = doc[i]
            width = max(width, float(page.get_width()))
            tp = page.get_textpage()
            t = tp.get_text_range()
            tp.close()
            page.close()
            texts.append(t)
            chars += sum(1 for c in t if not c.isspace())
        start = reference_start([any(heading_like(t) for t in text.splitlines()) for text in texts])
        lines: list[list[Any]] = []
        if start is not None:
            for i in range(start, min(pages, start + MAX_REFERENCE_PAGES)):
                page = doc[i]
                tp = page.get_textpage()
                lines.extend(_page_lines(tp, i + 1))
                tp.close()
                page.close()
        return {"pages": total, "chars": chars, "width": width, "lines": lines}
    finally:
        doc.close()


def main(argv: list[str]) -> int:  # pragma: no cover - run as a child process
    if len(argv) != 1:
        return 2
    _limit()  # in the child itself: a preexec_fn is not safe in a process with threads
    try:
        data = _child(argv[0])
    except MemoryError:
        data = {"error": "it used more memory than allowed (not read)"}
    except Exception as exc:
        kind = type(exc).__name__
        why = "its structure could not be read (corrupt or hostile)" if kind == "PdfiumError" else kind
        data = {"error": f"could not read it: {why}"}
    sys.stdout.write(json.dumps(data, ensure_ascii=False))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
