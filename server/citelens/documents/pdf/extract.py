"""A PDF's text lines with their layout, read by PDFium (pypdfium2) in a child process.

The parent (:func:`extract_lines`) starts ``python -m citelens.documents.pdf.extract FILE``
with limits on its memory, CPU time and output, and a wall-clock timeout, so a PDF bomb
(deep object streams, huge images, a page tree of a million pages), a corrupt file or a
crash in the C library costs one clear line, never the checking process. The child writes
one JSON object: the page count, the characters of text found, and the lines of the pages
that may hold the reference list (each with its page, left and right edge, baseline,
height and font size in points, and whether it starts in a bold face), or an ``error``.

What the child reads as the text of a line, as typeset rather than as stored: the numbers
a review copy prints in its margins (lineno, ICLR's ruler, ACL's numbers on both sides)
are left out wherever PDFium returns them (:func:`margin_numbers`); a font without a
Unicode map (pdfTeX's Type 3 bitmap fonts: T1-encoded Computer Modern without cm-super)
has its ligatures, dashes, quotes and accents read from their codes (``e cient`` was
read for "efficient"); an accent set as a glyph of its own is moved before the letter it
stands over; a heading set in small capitals or letter-spaced (``R EFERENCES``) is a
heading.

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
    bold: bool = False  # its first character is set in a bold face (headings)


@dataclass(slots=True)
class Extraction:
    pages: int = 0
    chars: int = 0  # characters of text on the pages read (0: no text layer)
    lines: list[Line] | None = None  # the lines from the first page with a reference heading
    page_width: float = 0.0
    error: str | None = None  # why the file could not be read (one line)


def _tight(text: str) -> str:
    """A heading set in small capitals or letter-spaced, as its words: ``R EFERENCES``
    (a capital, then small capitals PDFium reads as a word of their own) and
    ``R E F E R E N C E S`` read ``REFERENCES``."""
    words = text.split()
    head = words[:1] if words and re.fullmatch(r"\d{1,2}(?:\.\d{1,2})*\.?|[IVXLC]{1,6}\.?", words[0]) else []
    letters = words[len(head) :]
    if len(letters) >= 4 and all(len(w) == 1 and w.isalpha() for w in letters):
        return " ".join([*head, "".join(letters)])
    return re.sub(r"(?<![A-Za-z])([A-Z]) (?=[A-Z]{2,}\b)", r"\1", " ".join(words))


def is_heading(text: str) -> bool:
    """A reference list's heading (``References``, ``7 Bibliography``, ``R EFERENCES``)."""
    return _HEADING.match(_tight(text)) is not None


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
            Line(
                int(r[0]), str(r[1]), float(r[2]), float(r[3]), float(r[4]), float(r[5]), float(r[6]),
                bool(r[7]) if len(r) > 7 else False,
            )
            for r in raw
            if isinstance(r, list) and len(r) in (7, 8)
        ]
    return out


# ---------------------------------------------------------------------------- the child


def _font_size(textpage: Any, index: int) -> float:
    try:
        import pypdfium2.raw as pdfium_c

        return float(pdfium_c.FPDFText_GetFontSize(textpage.raw, index))
    except Exception:
        return 0.0


_BOLD_FONT = re.compile(
    r"bold|black|heavy|demi|medi(?:um)?\b|^cmbx|^cmb\d|bx\d|^(?:ptm|phv|pnc)b", re.IGNORECASE
)


def _bold(textpage: Any, index: int) -> bool:
    """Whether the character is set in a bold face (from its font's name or weight)."""
    try:
        import ctypes

        import pypdfium2.raw as pdfium_c

        buf = ctypes.create_string_buffer(96)
        flags = ctypes.c_int(0)
        pdfium_c.FPDFText_GetFontInfo(textpage.raw, index, buf, 96, ctypes.byref(flags))
        name = buf.value.decode("latin-1").split("+")[-1]
        weight = int(pdfium_c.FPDFText_GetFontWeight(textpage.raw, index))
    except Exception:
        return False
    return bool(_BOLD_FONT.search(name)) or weight >= 600


_LEADING_NUMBER = re.compile(r"\s*(\d{1,4})(?=\s|$)")
_TRAILING_NUMBER = re.compile(r"(?:^|(?<=\s))(\d{1,4})\s*$")


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


@dataclass(frozen=True, slots=True)
class _Number:
    line: int  # index of its line
    start: int  # its characters in the page's text
    end: int
    value: int
    edge: float  # its left edge (a number before the text) or right edge (after it)
    y: float
    size: float
    alone: bool  # nothing else on its line
    gap: float  # the space between it and the text of its line


def margin_numbers(numbers: list[_Number], body_size: float) -> set[tuple[int, int]]:
    """The (start, end) of the numbers a review copy prints in its margins (``lineno``,
    ICLR's ruler, ACL's numbers on both sides), in whatever order PDFium returned them:
    numbers standing in one band (the same left or right edge) that go up one by one from
    the top of the page down, set in a smaller font than the text, alone on their line, or
    well apart from it. A numbered reference list is not one: its numbers go up once per
    reference, not once per line, and sit close to their text."""
    bands: list[list[_Number]] = []
    for side in (True, False):  # numbers before their line's text, then after it
        for num in sorted((n for n in numbers if (n.gap >= 0) == side), key=lambda n: n.edge):
            if bands and bands[-1][-1].edge >= num.edge - 3 and (bands[-1][-1].gap >= 0) == side:
                bands[-1].append(num)
            else:
                bands.append([num])
    out: set[tuple[int, int]] = set()
    for band in bands:
        if len(band) < 5:
            continue
        band.sort(key=lambda n: -n.y)
        ups = sum(1 for a, b in itertools.pairwise(band) if 1 <= b.value - a.value <= 2)
        if ups < 0.7 * (len(band) - 1):
            continue
        smaller = body_size * 0.95
        apart = sum(1 for n in band if n.alone or abs(n.gap) >= 6 or (n.size and n.size < smaller))
        if apart >= 0.8 * len(band):
            out.update((n.start, n.end) for n in band)
    return out


#: Characters a font without a Unicode map (pdfTeX's Type 3 bitmap fonts) gives as their
#: codes: the T1 (Cork) encoding's ligatures, dashes, quotes and accents below 0x20, and
#: OT1's ligatures at 0x0B-0x0F (between letters). Python's str.split() takes 0x1C-0x1F
#: for spaces: unmapped, "efficient" read "e cient".
_T1_LOW = dict(
    enumerate(
        "`\u00b4\u02c6\u02dc\u00a8\u02dd\u02da\u02c7\u02d8\u00af\u02d9\u00b8\u02db\u201a\u2039\u203a"
        "\u201c\u201d\u201e\u00ab\u00bb\u2013\u2014\u200b0\u0131\u0237"
    )
)
_T1_LOW.update({0x17: "", 0x18: "", 0x1B: "ff", 0x1C: "fi", 0x1D: "fl", 0x1E: "ffi", 0x1F: "ffl", 0x7F: "-"})
_OT1_LIGATURES = {0x0B: "ff", 0x0C: "fi", 0x0D: "fl", 0x0E: "ffi", 0x0F: "ffl"}
#: T1's upper half where it differs from Latin-1 (0x80-0xBF, then four more), for a font
#: without a Unicode map only.
_T1_HIGH = dict(
    zip(
        [*range(0x80, 0xC0), 0xD7, 0xDF, 0xF7, 0xFF],
        "ĂĄĆČĎĚĘĞĹĽŁŃŇŊŐŔŘŚŠŞŤŢŰŮŸŹŽŻĲİđ§ăąćčďěęğĺľłńňŋőŕřśšşťţűůÿźžżĳ¡¿£ŒSSœß".replace("SS", "\u1e9e"),
        strict=True,
    )
)


def _unmapped(text: str, j: int, textpage: Any) -> str | None:
    """What a character PDFium could give only as its font's code stands for, or None."""
    code = ord(text[j])
    if code < 0x20 and text[j] not in "\r\n\t":
        between = 0 < j < len(text) - 1 and text[j - 1].isalpha() and text[j + 1].isalpha()
        if code in _OT1_LIGATURES and between:
            return _OT1_LIGATURES[code]
        return _T1_LOW.get(code, "")
    if code == 0x7F:
        return "-"
    if code in _T1_HIGH and not _font_name(textpage, j):
        return _T1_HIGH[code]
    return None


def _font_name(textpage: Any, index: int) -> str:
    try:
        import ctypes

        import pypdfium2.raw as pdfium_c

        buf = ctypes.create_string_buffer(96)
        flags = ctypes.c_int(0)
        pdfium_c.FPDFText_GetFontInfo(textpage.raw, index, buf, 96, ctypes.byref(flags))
        return buf.value.decode("latin-1").split("+")[-1]
    except Exception:
        return ""


#: Accents TeX sets as glyphs of their own over a letter (OT1 encoding): PDFium may return
#: one far from its letter (at the line's end).
_ACCENTS = frozenset("\u00a8\u00b4`\u02c6^\u02dc~\u00b8\u02c7\u02d8\u02d9\u02da\u00af\u02dd")


def _accents_placed(chars: list[int], text: str, boxes: dict[int, Any]) -> list[int]:
    """The line's characters with each accent glyph moved just before the letter it stands
    over (``K¨urster``: the reader composes ``Kürster``), wherever PDFium returned it."""
    accents = [j for j in chars if text[j] in _ACCENTS and j in boxes]
    if not accents:
        return chars
    out = [j for j in chars if j not in set(accents)]
    for j in accents:
        left, bottom, right, _top = boxes[j]
        centre = (left + right) / 2
        under = [
            k for k in out
            if k in boxes and text[k].isalpha() and boxes[k][0] - 0.3 <= centre <= boxes[k][2] + 0.3
            and (bottom >= boxes[k][3] - 1.5 or _top <= boxes[k][1] + 1.5)  # above it, or a cedilla below
        ]
        if under:
            target = min(under, key=lambda k: abs(k - j))
            out.insert(out.index(target), j)
        else:
            out.insert(next((i for i, k in enumerate(out) if k > j), len(out)), j)
    return out


def _char(text: str, j: int, textpage: Any) -> str:
    mapped = _unmapped(text, j, textpage)
    return text[j] if mapped is None else mapped


def _page_lines(textpage: Any, page_no: int) -> list[list[Any]]:
    text = textpage.get_text_range()
    n = min(len(text), textpage.count_chars())
    spans = _spans(text, n)
    boxes = {j: textpage.get_charbox(j) for a, b in spans for j in range(a, b) if not text[j].isspace()}
    sizes = {j: _font_size(textpage, j) for j in boxes}
    known = sorted(v for v in sizes.values() if v > 0)
    body_size = known[len(known) // 2] if known else 0.0
    numbers: list[_Number] = []
    for li, (a, b) in enumerate(spans):
        line = text[a:b]
        chars = [j for j in range(a, b) if j in boxes]
        lead = _LEADING_NUMBER.match(line)
        if lead:
            s, e = a + lead.start(1), a + lead.end(1)
            rest = [j for j in chars if j >= e]
            gap = boxes[rest[0]][0] - boxes[e - 1][2] if rest else 0.0
            value = int(lead.group(1))
            where = (boxes[s][0], boxes[s][1], sizes[s])
            numbers.append(_Number(li, s, e, value, *where, alone=not rest, gap=max(gap, 0.0)))
            if not rest:
                continue
        trail = _TRAILING_NUMBER.search(line)
        if trail and trail.start(1) > 0:
            s, e = a + trail.start(1), a + trail.end(1)
            before = [j for j in chars if j < s]
            gap = boxes[s][0] - boxes[before[-1]][2] if before else 0.0
            value = int(trail.group(1))
            where = (boxes[e - 1][2], boxes[s][1], sizes[s])
            numbers.append(_Number(li, s, e, value, *where, alone=False, gap=-max(gap, 0.001)))
    drop = margin_numbers(numbers, body_size)
    dropped = {j for s, e in drop for j in range(s, e)}
    out: list[list[Any]] = []
    for start, end in spans:
        kept = _accents_placed([j for j in range(start, end) if j not in dropped], text, boxes)
        line_text = "".join(_char(text, j, textpage) for j in kept).strip()
        line_boxes = [boxes[j] for j in kept if j in boxes]
        if not line_boxes or not line_text:
            continue
        x0 = min(bx[0] for bx in line_boxes)
        x1 = max(bx[2] for bx in line_boxes)
        y = min(bx[1] for bx in line_boxes)
        h = max(bx[3] - bx[1] for bx in line_boxes)
        first = next(j for j in kept if j in boxes)
        size = round(sizes[first], 1)
        bold = int(_bold(textpage, first))
        out.append([page_no, line_text, round(x0, 1), round(x1, 1), round(y, 1), round(h, 1), size, bold])
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
