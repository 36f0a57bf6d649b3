"""Offsets and positions: character offsets <-> (line, character) in any LSP encoding.

Parsers work on Python strings and report code-point offsets. The LSP speaks in
UTF-16 code units by default (UTF-8 or UTF-32 when negotiated). A :class:`LineIndex`
is built once per text version and converts in both directions; lines made only
of ASCII (the vast majority) cost nothing extra.

An :class:`EditedText` is a big text as the string it was plus the edits made since: a
keystroke in a 35 MB ``.bib`` makes a few small strings, not a new 35 MB one (one copy of
35 MB costs tens of milliseconds); ``str()`` joins it, once, for whoever needs it whole.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from array import array
from dataclasses import dataclass

from citelens.core.model import Span

_NEWLINE = re.compile(r"\r\n|\r|\n")

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"


def _units(ch: str, encoding: str) -> int:
    cp = ord(ch)
    if encoding == UTF16:
        return 2 if cp > 0xFFFF else 1
    if encoding == UTF8:
        if cp < 0x80:
            return 1
        if cp < 0x800:
            return 2
        if cp < 0x10000 or 0xD800 <= cp <= 0xDFFF:
            return 3
        return 4
    return 1


#: An EditedText with more pieces than this is joined into one string at its next edit.
MAX_PIECES = 512
#: Inserted pieces shorter than this are merged with an inserted neighbour (typing).
_SMALL = 4096

_Piece = tuple[str, int, int]  # the text src[a:b]


class EditedText:
    """A text made of pieces of strings (a piece table): the base text and what edits
    inserted. Immutable: :meth:`edit` returns a new one sharing the strings. Offers what
    the line index and the incremental parse need (``len``, an index, a slice); ``str()``
    joins it into one string (kept, so joining twice costs nothing)."""

    __slots__ = ("_ends", "_joined", "_pieces")

    def __init__(self, text: str | EditedText) -> None:
        if isinstance(text, EditedText):
            self._pieces: list[_Piece] = text._pieces
            self._ends: list[int] = text._ends
            self._joined: str | None = text._joined
            return
        self._pieces = [(text, 0, len(text))] if text else []
        self._ends = [len(text)] if text else []
        self._joined = text

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __str__(self) -> str:
        if self._joined is None:
            self._joined = "".join(src[a:b] for src, a, b in self._pieces)
        return self._joined

    def __getitem__(self, key: int | slice) -> str:
        if self._joined is not None:
            return self._joined[key]
        n = len(self)
        if isinstance(key, int):
            i = key + n if key < 0 else key
            if not 0 <= i < n:
                raise IndexError("EditedText index out of range")
            return self._slice(i, i + 1)
        start, stop, step = key.indices(n)
        if step != 1:
            return str(self)[key]
        return self._slice(start, stop) if start < stop else ""

    def _slice(self, start: int, stop: int) -> str:
        ends, pieces = self._ends, self._pieces
        i = bisect.bisect_right(ends, start)
        out = []
        while i < len(pieces) and start < stop:
            src, a, b = pieces[i]
            begin = ends[i] - (b - a)
            out.append(src[a + start - begin : a + min(stop, ends[i]) - begin])
            start = ends[i]
            i += 1
        return out[0] if len(out) == 1 else "".join(out)

    def edit(self, start: int, end: int, new: str) -> EditedText:
        """This text with ``[start, end)`` replaced by ``new`` (offsets clamped)."""
        n = len(self)
        start = min(max(start, 0), n)
        end = min(max(end, start), n)
        if self._joined is not None and len(self._pieces) > 1:  # joined: start again from it
            pieces, ends = [(self._joined, 0, n)], [n]
        else:
            pieces, ends = self._pieces, self._ends
        i = bisect.bisect_right(ends, start)  # pieces[:i] end at or before start
        out = pieces[:i]
        if i < len(pieces):
            src, a, b = pieces[i]
            begin = ends[i] - (b - a)
            if start > begin:
                out.append((src, a, a + start - begin))
        if new:
            _add(out, (new, 0, len(new)))
        j = bisect.bisect_left(ends, end)  # the piece the end falls in
        if j < len(pieces):
            src, a, b = pieces[j]
            if end < ends[j]:
                _add(out, (src, b - (ends[j] - end), b))
            out.extend(pieces[j + 1 :])
        result = EditedText.__new__(EditedText)
        result._pieces, result._joined = out, None
        result._ends = list(itertools.accumulate(b - a for _, a, b in out))
        if len(out) > MAX_PIECES:
            str(result)
            result._pieces, result._ends = [(result._joined or "", 0, len(result))], result._ends[-1:]
        return result


def _add(out: list[_Piece], piece: _Piece) -> None:
    """Append ``piece``, merged with the last one when both are small inserted strings or
    the last one continues into it."""
    if out:
        src, a, b = out[-1]
        nsrc, na, nb = piece
        if src is nsrc and b == na:
            out[-1] = (src, a, nb)
            return
        if b - a < _SMALL and nb - na < _SMALL and len(src) < _SMALL and len(nsrc) < _SMALL:
            joined = src[a:b] + nsrc[na:nb]
            out[-1] = (joined, 0, len(joined))
            return
    out.append(piece)


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` with their line breaks, as LSP counts them: only ``\\n``,
    ``\\r\\n`` and ``\\r`` end a line (``str.splitlines`` also breaks at a form feed, ``\\v``,
    ``\\x1c``-``\\x1e``, U+0085, U+2028 and U+2029, which would put every position below such
    a character on the wrong line)."""
    lines = [text[m.start() : m.end()] for m in _LINE.finditer(text)]
    if lines and not lines[-1]:
        lines.pop()  # the empty match at the end
    return lines


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z|\Z")


#: Characters a terminal or CI log would act on rather than show: C0 and C1 controls (ESC,
#: BEL, the one-character CSI U+009B), DEL, and the bidirectional overrides and isolates.
_CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: The same, but for line breaks and tabs: what a page of several lines shows escaped.
_CONTROLS_IN_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: What a JSON encoder with ``ensure_ascii=False`` leaves raw that a terminal acts on or a
#: viewer reorders: DEL, C1 controls, the bidirectional marks, overrides and isolates (it
#: writes C0 controls as ``\u001b`` itself).
_JSON_RAW_CONTROLS = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``, ``\\u202e``):
    a file or an API answer can never write terminal escapes (OSC, colours, a cleared
    screen, a hidden line) into a terminal or a CI log."""
    return _CONTROLS.sub(_escape_control, text)


def printable_lines(text: str) -> str:
    """:func:`printable` for a text of several lines (a web page, an entry as written):
    line breaks and tabs are kept, every other control character is escaped."""
    return _CONTROLS_IN_LINES.sub(_escape_control, text)


def json_escaped(encoded: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with the control characters the
    encoder leaves raw written as ``\\u009b`` escapes: the same data to a JSON reader, and
    no CSI, no bidi override in the bytes a terminal or a viewer shows. (They can only occur
    inside strings, where the escape means the character itself.)"""
    return _JSON_RAW_CONTROLS.sub(_json_escape, encoded)


def _json_escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group(0)):04x}"


def _escape_control(m: re.Match[str]) -> str:
    cp = ord(m.group(0))
    return f"\\x{cp:02x}" if cp <= 0xFF else f"\\u{cp:04x}"


def as_str(text: str | EditedText) -> str:
    return text if isinstance(text, str) else str(text)


@dataclass(frozen=True, slots=True)
class Position:
    line: int
    character: int


class LineIndex:
    """Line starts of one text, for offset <-> position conversion.

    The start of line ``i`` is ``_starts[i]`` plus the shift of its segment: the lines from
    ``_cuts[j]`` on (up to the next cut) are shifted by ``_deltas[j]``. An edit of a 35 MB
    file shifts the lines after it by adding a segment, without rewriting a million numbers
    (:func:`index_after_edit`); past :data:`MAX_SEGMENTS` they are written out again."""

    __slots__ = ("_ascii", "_cr", "_cuts", "_deltas", "_starts", "text")

    def __init__(self, text: str | EditedText) -> None:
        self.text = text
        plain = as_str(text)
        starts = array("q", [0])  # 8 bytes a line, not an int object each (a million lines)
        starts.extend(map(re.Match.end, _NEWLINE.finditer(plain)))  # (in C: a million lines)
        self._starts = starts
        self._cuts = [0]
        self._deltas = [0]
        self._ascii = plain.isascii()
        self._cr = "\r" in plain

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def _shift(self, line: int) -> int:
        cuts = self._cuts
        return self._deltas[0 if len(cuts) == 1 else bisect.bisect_right(cuts, line) - 1]

    def _start(self, line: int) -> int:
        return self._starts[line] + self._shift(line)

    def line_of(self, offset: int) -> int:
        starts, cuts, deltas = self._starts, self._cuts, self._deltas
        j = 0
        if len(cuts) > 1:  # the last segment whose first line starts at or before offset

            def first_start(k: int) -> int:
                return starts[cuts[k]] + deltas[k]

            j = max(0, bisect.bisect_right(range(len(cuts)), offset, key=first_start) - 1)
        hi = cuts[j + 1] if j + 1 < len(cuts) else len(starts)
        return bisect.bisect_right(starts, offset - deltas[j], cuts[j], hi) - 1

    def line_start(self, line: int) -> int:
        return self._start(min(max(line, 0), len(self._starts) - 1))

    def _line_end(self, line: int) -> int:
        """Offset of the end of ``line``'s content (before its line break)."""
        if line + 1 < len(self._starts):
            end = self._start(line + 1)
            begin = self._start(line)
            while end > begin and self.text[end - 1] in "\r\n":
                end -= 1
            return end
        return len(self.text)

    def position(self, offset: int, encoding: str = UTF16) -> Position:
        offset = min(max(offset, 0), len(self.text))
        line = self.line_of(offset)
        start = self._start(line)
        if self._ascii or encoding == UTF32:
            return Position(line, offset - start)
        segment = self.text[start:offset]
        if segment.isascii():
            return Position(line, len(segment))
        return Position(line, sum(_units(c, encoding) for c in segment))

    def offset(self, line: int, character: int, encoding: str = UTF16) -> int:
        """Offset of an LSP position; positions past a line's end clamp to it."""
        if line < 0:
            return 0
        if line >= len(self._starts):
            return len(self.text)
        start = self._start(line)
        end = self._line_end(line)
        if self._ascii or encoding == UTF32:
            return min(start + max(character, 0), end)
        units = 0
        i = start
        for ch in self.text[start:end]:
            if units >= character:
                break
            units += _units(ch, encoding)
            i += 1
        return i

    def range(self, span: Span, encoding: str = UTF16) -> tuple[Position, Position]:
        return self.position(span.start, encoding), self.position(span.end, encoding)

    def line_text(self, line: int) -> str:
        if not 0 <= line < len(self._starts):
            return ""
        return self.text[self.line_start(line) : self._line_end(line)]

    def _all_starts(self) -> array[int]:
        """Every line start, shifts applied."""
        starts, cuts, deltas = self._starts, self._cuts, self._deltas
        if not any(deltas):
            return starts
        out: array[int] = array("q")
        for j, cut in enumerate(cuts):
            end = cuts[j + 1] if j + 1 < len(cuts) else len(starts)
            if deltas[j]:
                out.extend(map(operator.add, starts[cut:end], itertools.repeat(deltas[j])))
            else:
                out.extend(starts[cut:end])
        return out


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (compared by chunks: C speed on 35 MB)."""
    n = min(len(a), len(b))
    lo, step = 0, 1 << 16
    while lo < n and a[lo : lo + step] == b[lo : lo + step]:
        lo += step
    hi = min(n, lo + step)
    while lo < hi:  # the first difference is in a[lo:hi]
        mid = (lo + hi) // 2
        if a[lo : mid + 1] == b[lo : mid + 1]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix, at most ``limit``."""
    n, step = 0, 1 << 16
    la, lb = len(a), len(b)
    while n < limit:
        k = min(step, limit - n)
        if a[la - n - k : la - n] != b[lb - n - k : lb - n]:
            break
        n += k
    else:
        return limit
    lo, hi = n, min(limit, n + step)
    while lo < hi:  # the first difference from the end is within the next chunk
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo


#: A text at least this long keeps its line index across an edit (moved, not rebuilt).
KEPT_INDEX_FROM = 1 << 20


def index_after_edit(
    old: LineIndex, text: str | EditedText, span: tuple[int, int] | None = None
) -> LineIndex:
    """The :class:`LineIndex` of ``text``, an edit of ``old.text``: line starts before the
    edit are kept, those after it move by its length (a keystroke in a 35 MB .bib).
    ``span``: the lengths of a prefix and a suffix the texts share, if the edit is known."""
    before = old.text
    if old._cr or len(text) < KEPT_INDEX_FROM:
        return LineIndex(text)
    if span is not None:
        p, s = span
    else:
        a, b = as_str(before), as_str(text)
        p = common_prefix(a, b)
        s = common_suffix(a, b, min(len(a), len(b)) - p)
    old_end, delta = len(before) - s, len(text) - len(before)
    inserted = text[p : old_end + delta]
    if "\r" in inserted:
        return LineIndex(text)
    new = LineIndex.__new__(LineIndex)
    new.text = text
    new._cr = False
    # (an EditedText is not scanned: "not ASCII" only means positions count code units)
    new._ascii = (old._ascii and inserted.isascii()) or (isinstance(text, str) and text.isascii())
    first, last = old.line_of(p), old.line_of(old_end)  # lines first+1..last start in the edit
    starts = old._starts
    breaks = [i + 1 for i, c in enumerate(inserted) if c == "\n"] if "\n" in inserted else []
    if breaks or last > first:  # lines come or go: a new array (the old index stays valid)
        shift = old._shift(first)  # the new lines belong to the segment of the edited line
        starts = starts[: first + 1]
        starts.extend(p + i - shift for i in breaks)
        starts.extend(old._starts[last + 1 :])
    moved = len(breaks) - (last - first)  # the lines after the edit change number by this
    cuts, deltas = _segments_after(old, first, last, moved, delta)
    new._starts, new._cuts, new._deltas = starts, cuts, deltas
    if len(cuts) > MAX_SEGMENTS:
        new._starts, new._cuts, new._deltas = new._all_starts(), [0], [0]
    return new


#: A line index written out again when an edit would give it more shifted segments than this.
MAX_SEGMENTS = 48


def _segments_after(
    old: LineIndex, first: int, last: int, moved: int, delta: int
) -> tuple[list[int], list[int]]:
    """The segments of the index after an edit that replaced lines ``first..last`` (old
    numbers), changed the number of lines by ``moved`` and the length by ``delta``."""
    cuts, deltas = old._cuts, old._deltas
    keep = bisect.bisect_right(cuts, first)  # segments starting at or before the edited line
    new_cuts, new_deltas = cuts[:keep], deltas[:keep]
    if last + 1 < old.line_count:  # the first line after the edit starts a segment
        d = old._shift(last + 1) + delta
        if d != new_deltas[-1]:
            new_cuts.append(last + 1 + moved)
            new_deltas.append(d)
    for j in range(bisect.bisect_right(cuts, last + 1), len(cuts)):
        new_cuts.append(cuts[j] + moved)
        new_deltas.append(deltas[j] + delta)
    return new_cuts, new_deltas
