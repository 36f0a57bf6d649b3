"""The reference list of a PDF as printed: from its heading to its end, running headers,
footers and page numbers left out, split into references (each with its label as printed,
its text and its page).

Three ways a list marks where a reference starts, tried in this order: a printed label
(``[12]``, ``12.``, ``[Vas17]``, ``[Vaswani et al., 2017]``) at the start of a line, a
hanging indent (the first line of each reference at the column's left edge, the others
indented), and the extra space LaTeX and word processors put between references. The
label of an author-year reference with no printed label is made as a reader cites it:
``Smith et al. 2020``.
"""

from __future__ import annotations

import itertools
import re
import statistics
import unicodedata
from dataclasses import dataclass

from citelens.core.identifiers import DOI_BROKEN_BY_LINE, LINK_AT_LINE_END
from citelens.documents.pdf.extract import Line, heading_like, is_heading
from citelens.documents.pdf.hyphens import SOFT_BREAK, hyphen_readings

#: Headings that end a reference list (an appendix, a checklist, supplementary material).
_END_WORDS = (
    "appendix", "appendices", "supplementary", "supplemental", "checklist", "neurips paper checklist",
    "author contributions", "acknowledgments", "acknowledgements", "acknowledgment", "acknowledgement",
)
#: Headings that end a reference list (an appendix, a checklist, supplementary material),
#: capitalised as a heading is ("Appendix A", "APPENDIX", "NeurIPS Paper Checklist").
_END = re.compile(
    r"^(?:[A-Z]\.?\s+|\d{1,2}\.?\s+)?(?:"
    + "|".join(f"{re.escape(w.upper())}|{w[0].upper()}(?i:{re.escape(w[1:])})" for w in _END_WORDS)
    + r")\b"
)
#: A section heading as numbered or lettered: "A Proof", "A.1 Details", "7 Conclusion", "IV. Results".
_SECTION = re.compile(r"^(?:[A-Z]|\d{1,2}|[IVX]{1,4})(?:\.\d{1,2})*\.?\s+[A-Z][\w-]*(?:\s|$)")
_BRACKET = re.compile(r"^\s*\[([^\[\]]{1,60})\]\s*")
_NUMBER = re.compile(r"^\s*\(?(\d{1,4})\s*[.)]?\s+(?=\S)")
_PAGE_NUMBER = re.compile(r"^\s*(?:page\s+)?\d{1,4}(?:\s*(?:/|of)\s*\d{1,4})?\s*$", re.IGNORECASE)
_SPACING_ACCENTS = {
    "\u00a8": "\u0308",  # diaeresis
    "\u00b4": "\u0301",  # acute
    "`": "\u0300",
    "\u02c6": "\u0302",  # circumflex
    "^": "\u0302",
    "\u02dc": "\u0303",  # tilde
    "~": "\u0303",
    "\u00b8": "\u0327",  # cedilla
    "\u02c7": "\u030c",  # caron
    "\u02d8": "\u0306",  # breve
    "\u02d9": "\u0307",  # dot above
    "\u02da": "\u030a",  # ring
    "\u00af": "\u0304",  # macron
    "\u02dd": "\u030b",  # double acute
}
_ACCENT_BEFORE = re.compile("([" + re.escape("".join(_SPACING_ACCENTS)) + r"])([A-Za-zıȷ])")
_DOTTED = {"ı": "i", "ȷ": "j"}
#: A spacing accent set inside a word with a wide space before it ("Jo  ´os", "Vuli  ´c":
#: the accent's kerning), which a space between words does not leave.
_ACCENT_AFTER_GAP = re.compile(
    "(?<=[A-Za-z])\\s{2,}(?=[" + re.escape("".join(_SPACING_ACCENTS)) + "][a-zıȷ])"
)
_DOTLESS_ACCENTED = re.compile("([ıȷ])([\u0300-\u036f])")
_SPLIT_ACCENT = re.compile(
    r"(?<=[A-Za-z])([\u00a8\u00b4\u02c6\u02dc\u00b8\u02c7\u02d8\u02d9\u02da\u00af\u02dd])\s([a-z])"
)
_STRAY_ACCENT = re.compile(
    r"(?<!\S)[\u00a8\u00b4\u02c6\u02dc\u00b8\u02c7\u02d8\u02d9\u02da\u00af\u02dd](?!\S)"
)
_LIGATURES = str.maketrans(
    {
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb05": "st",
        "\ufb06": "st",
    }
)


@dataclass(frozen=True, slots=True)
class Printed:
    """One reference as printed: its label (``[12]``, ``Smith et al. 2020``), its text (one
    line, hyphens at line ends resolved), the page it starts on."""

    label: str
    text: str
    page: int
    labelled: bool  # the label is printed (else made from the authors and year)


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def clean(text: str) -> str:
    """Ligatures spelt out, a spacing accent before its letter composed (``K¨urster``),
    spaces collapsed."""
    text = _ACCENT_AFTER_GAP.sub("", text.translate(_LIGATURES).replace("\u00ad", ""))
    # (over a dotless i or j: the letter's own dot is the accent's, "Mu\u00f1oz", "Ca\u00efc")
    text = _ACCENT_BEFORE.sub(
        lambda m: _nfc(_DOTTED.get(m.group(2), m.group(2)) + _SPACING_ACCENTS[m.group(1)]), text
    )
    text = _DOTLESS_ACCENTED.sub(lambda m: _nfc(_DOTTED[m.group(1)] + m.group(2)), text)
    # an accent PDFium set apart inside a word ("Aar˜ ao"): composed with the letter after it
    text = _SPLIT_ACCENT.sub(
        lambda m: unicodedata.normalize("NFC", m.group(2) + _SPACING_ACCENTS[m.group(1)]), text
    )
    return " ".join(_STRAY_ACCENT.sub(" ", text).split())


def join_lines(lines: list[str]) -> str:
    """Lines of one reference as one string. A hyphen at a line end between two letters
    becomes :data:`SOFT_BREAK` (``gen\u00aderalised``, ``edge\u00adexchangeable``,
    ``FACTO\u00adRIE``: :func:`hyphen_readings`, :func:`one_reading`); a hyphen before a
    digit or in a word already hyphenated, and any break inside a DOI or a URL, is kept as
    printed (``red-green-blue``, ``10.1007/BF00648343``)."""
    out = ""
    for raw in lines:
        line = clean(raw.replace("\ufffe", "-"))
        if not line:
            continue
        if not out:
            out = line
            continue
        last = out.split(" ")[-1]
        if LINK_AT_LINE_END.search(last) and (
            last.endswith(("/", ".", "-", "_", "=", "&", "?")) or len(last) > 25
        ):
            out += line  # a URL or DOI broken across lines: no space was printed
        elif (
            out.endswith("-")
            and len(out) > 1
            and out[-2].isalpha()
            and line[:1].isalpha()
            and "-" not in last[:-1]
            and "-" not in line.split(" ")[0]
        ):
            out = out[:-1] + SOFT_BREAK + line
        elif out.endswith("-") and len(out) > 1 and out[-2].isalpha():
            out += line  # a hyphen kept as printed (Lomb-Scargle, red-green-blue)
        else:
            out += " " + line
    return DOI_BROKEN_BY_LINE.sub(lambda m: (m.group(1) or "") + (m.group(2) or "") + (m.group(3) or ""), out)


def _norm(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def _body(lines: list[Line], width: float = 0.0) -> list[Line]:
    """The lines after the reference heading, up to a heading that ends the list, without
    running headers, footers and page numbers."""
    start = None
    first_page = lines[0].page if lines else 0
    for i, line in enumerate(lines):
        if line.page != first_page:
            break
        if is_heading(line.text):
            start = i  # the last heading-like line of the first page: a running header is above it
    if start is None:
        return []
    heading = lines[start]
    rest = lines[start + 1 :]
    by_page: dict[int, list[Line]] = {}
    for line in rest:
        by_page.setdefault(line.page, []).append(line)
    edges: dict[str, int] = {}  # the text at the top or bottom of each page (the heading's page too)
    all_pages: dict[int, list[Line]] = {}
    for line in lines:
        all_pages.setdefault(line.page, []).append(line)
    for page_lines in all_pages.values():
        top, bottom = max(x.y for x in page_lines), min(x.y for x in page_lines)
        for line in page_lines:
            if line.y >= top - 1 or line.y <= bottom + 1:
                edges[_norm(line.text)] = edges.get(_norm(line.text), 0) + 1
    heights = [line.height for line in rest if line.height > 0]
    body_h = statistics.median(heights) if heights else heading.height
    sizes = [line.size for line in rest if line.size > 0]
    body_size = statistics.median(sizes) if sizes else 0.0
    out: list[Line] = []
    for page_no, page_lines in by_page.items():
        on_page = [x for x in lines if x.page == page_no]
        two = bool(width) and _two_columns(on_page, width / 2)
        for line in _without_furniture(page_lines, page_no != first_page, edges, width / 2 if two else 0.0):
            if _ends_list(line, body_h, body_size):
                return out
            if (
                body_size
                and line.size >= body_size * 1.12
                and len(line.text) < 100
                and not is_heading(line.text)
            ):
                return out  # a heading in a larger font: an appendix, a checklist, the next section
            if is_heading(line.text) and line.height > body_h * 1.15:
                continue
            out.append(line)
    return out


def _ends_list(line: Line, body_h: float, body_size: float) -> bool:
    """A heading after the list (an appendix, supplementary material, a checklist, the next
    section): a short line naming one, or numbered or lettered as a section, set apart from
    a reference's lines by a bold face, a larger font or capitals."""
    text = line.text.strip()
    if len(text) >= 80 or text.endswith((",", ";")):
        return False
    marked = line.bold or line.height >= body_h * 1.1 or (body_size and line.size >= body_size * 1.08)
    caps = text.upper() == text and sum(c.isalpha() for c in text) >= 4
    if _END.match(text):
        return bool(marked or caps or len(text) < 40)
    return bool((line.bold or caps) and len(text) < 60 and _SECTION.match(text) and not _BRACKET.match(text))


def _two_columns(page_lines: list[Line], mid: float) -> bool:
    return sum(1 for x in page_lines if x.x1 < mid) >= 3 and sum(1 for x in page_lines if x.x0 > mid) >= 3


def _without_furniture(
    page_lines: list[Line], later_page: bool, edges: dict[str, int], mid: float = 0.0
) -> list[Line]:
    """One page's lines without page numbers and (after the list's first page) running
    headers and footers: a line at the top or bottom edge whose text, digits aside, is at an
    edge of another page too, or names the reference list."""
    top = max(line.y for line in page_lines)
    bottom = min(line.y for line in page_lines)
    ys = sorted({round(line.y, 1) for line in page_lines}, reverse=True)
    steps = [a - b for a, b in itertools.pairwise(ys) if a - b > 0.5]
    step = statistics.median(steps) if steps else 0.0
    apart = (  # a line alone at the top or the bottom, well away from the text: a header or footer
        {ys[0]} if len(ys) > 2 and ys[0] - ys[1] > 2.2 * step else set()
    ) | ({ys[-1]} if len(ys) > 2 and ys[-2] - ys[-1] > 2.2 * step else set())
    keep = []
    for line in page_lines:
        text = line.text.strip()
        at_edge = line.y >= top - 1 or line.y <= bottom + 1
        if mid and at_edge and line.x0 < mid - 20 and line.x1 > mid + 20 and len(text) < 100:
            continue  # a header or footer across both columns of a two-column list
        if round(line.y, 1) in apart and len(text) < 200 and (later_page or line.y <= bottom + 1):
            continue  # a running header, or a footer (on the list's first page too)
        if _PAGE_NUMBER.match(text) and (at_edge or len(text) <= 4):
            continue
        if at_edge and later_page and (edges.get(_norm(text), 0) > 1 or heading_like(text)):
            continue
        keep.append(line)
    return keep


def _column_edges(lines: list[Line], width: float) -> list[tuple[Line, float]]:
    """Each line with the left edge of its column (the smallest left edge of the lines of
    the same page and column; a column of a few lines, which may all be a reference's
    later lines, takes the edge the same column has on the other pages when that is
    further left)."""
    mid = width / 2 if width else 0
    two = mid and any(line.x0 > mid - 10 for line in lines) and any(line.x1 < mid + 10 for line in lines)
    columns: dict[tuple[int, bool], list[float]] = {}
    for line in lines:
        columns.setdefault((line.page, bool(two and line.x0 > mid - 10)), []).append(line.x0)
    edges = {col: min(xs) for col, xs in columns.items()}
    for side in (False, True):
        full = sorted(edges[c] for c, xs in columns.items() if c[1] == side and len(xs) >= 4)
        if full:
            usual = full[len(full) // 2]
            for col, xs in columns.items():
                if col[1] == side and len(xs) < 4 and usual < edges[col] <= usual + 30:
                    edges[col] = usual
    return [(line, edges[(line.page, bool(two and line.x0 > mid - 10))]) for line in lines]


def _label_style(lines: list[Line]) -> str:
    """ "bracket", "number" or "none", from the lines' starts."""
    head = lines[: max(12, len(lines) // 3)]
    bracket = sum(1 for line in head if _BRACKET.match(line.text))
    number = sum(1 for line in head if _NUMBER.match(line.text))
    if bracket >= 2 and _BRACKET.match(lines[0].text):
        return "bracket"
    if number >= 2 and _NUMBER.match(lines[0].text):
        return "number"
    return "none"


def _starts_labelled(lines: list[Line], style: str, width: float = 0.0) -> list[int]:
    """Where each labelled reference starts. Numbers are taken in sequence; one that skips
    ahead (``[1] [2] [4]``: a reference left out) or repeats (``[3] [3]``) starts a
    reference too when it stands where labels stand (at its column's left edge, where a
    reference's later lines are indented), so no reference is folded into the one before."""
    pattern = _BRACKET if style == "bracket" else _NUMBER
    placed = _column_edges(lines, width)
    starts: list[int] = []
    last: int | None = None
    for i, (line, edge) in enumerate(placed):
        m = pattern.match(line.text)
        if not m:
            continue
        label = m.group(1)
        if not label.isdigit():
            starts.append(i)  # [Vas17], [Vaswani et al., 2017]
            continue
        n = int(label)
        if last is None or n == last + 1 or (
            line.x0 - edge <= 7 and (n == last or last + 1 < n <= last + 5) and _indented_after(placed, i)
        ):
            starts.append(i)
            last = n
    return starts


def _indented_after(placed: list[tuple[Line, float]], i: int) -> bool:
    """The line after ``i`` (a reference's second line) is indented, or ``i`` is a
    reference of one line (the next starts with a label too)."""
    if i + 1 >= len(placed):
        return True
    (line, edge), (nxt, nedge) = placed[i], placed[i + 1]
    return nxt.x0 - nedge > line.x0 - edge + 4 or bool(_BRACKET.match(nxt.text) or _NUMBER.match(nxt.text))


def _starts_unlabelled(lines: list[Line], width: float) -> list[int]:
    placed = _column_edges(lines, width)
    indents = [line.x0 - edge for line, edge in placed]
    indented = sum(1 for d in indents if d > 4)
    hanging = indented >= len(lines) * 0.2 and indented < len(lines) * 0.9
    gaps: list[float | None] = [None]
    for (a, ea), (b, eb) in itertools.pairwise(placed):
        gaps.append(a.y - b.y if a.page == b.page and ea == eb and a.y > b.y else None)
    real = [g for g in gaps if g is not None and g > 0]
    step = min(real, default=0.0)
    if real:
        step = statistics.median(real)
    common = min(real, default=0.0)
    starts = [0]
    for i in range(1, len(lines)):
        if hanging:
            if indents[i] <= 2.0 and indents[i - 1] >= 0:
                starts.append(i)
        else:
            g = gaps[i]
            if g is not None and common and g > common * 1.3 and g > step * 0.99:
                starts.append(i)
            elif g is None and _looks_like_start(lines[i].text, lines[i - 1].text):
                starts.append(i)
    return starts


_AUTHOR_START = re.compile(r"^[A-ZÀ-ÖØ-Þ][\w'’\-]+(?:\s+[A-Z][\w'’\-]+)?,\s+[A-ZÀ-Ö]")


def _looks_like_start(text: str, before: str) -> bool:
    return before.rstrip().endswith(".") and _AUTHOR_START.match(text) is not None


_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)([a-z])?\b")


def author_year_label(text: str) -> str:
    """``Smith 2020``, ``Smith and Jones 2020``, ``Smith et al. 2020`` from a reference's
    text (its first author, how many follow, its year)."""
    from citelens.documents.pdf.fields import read_fields

    f = read_fields(hyphen_readings(text)[0])
    families = f.families
    year = f.year_label or "n.d."
    if not families:
        return f"{text[:30].strip()} {year}"
    if len(families) == 1:
        return f"{families[0]} {year}"
    if len(families) == 2 and not f.authors_cut:
        return f"{families[0]} and {families[1]} {year}"
    return f"{families[0]} et al. {year}"


def split_references(lines: list[Line], width: float) -> list[Printed]:
    """The references of the list starting at the heading in ``lines``."""
    body = _body(lines, width)
    if not body:
        return []
    style = _label_style(body)
    starts = _starts_labelled(body, style, width) if style != "none" else []
    if style != "none" and len(starts) < 2:
        style, starts = "none", []
    if style == "none":
        starts = _starts_unlabelled(body, width)
    out: list[Printed] = []
    bounds = [*starts, len(body)]
    for n, (a, b) in enumerate(itertools.pairwise(bounds)):
        chunk = body[a:b]
        text = join_lines([line.text for line in chunk])
        if not text:
            continue
        label = ""
        labelled = False
        if style == "bracket":
            m = _BRACKET.match(text)
            if m:
                label, text, labelled = f"[{m.group(1)}]", text[m.end() :], True
        elif style == "number":
            m = _NUMBER.match(text)
            if m:
                label, text, labelled = f"[{m.group(1)}]", text[m.end() :], True
        if not label:
            label = author_year_label(text) if style == "none" else f"[{n + 1}]"
        out.append(Printed(label, text.strip(), chunk[0].page, labelled))
    return _unique_labels(out)


def _unique_labels(refs: list[Printed]) -> list[Printed]:
    seen: dict[str, int] = {}
    out = []
    for r in refs:
        n = seen.get(r.label, 0) + 1
        seen[r.label] = n
        out.append(r if n == 1 else Printed(f"{r.label} ({n})", r.text, r.page, r.labelled))
    return out
