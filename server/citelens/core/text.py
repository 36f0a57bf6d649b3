"""Offsets and positions: character offsets <-> (line, character) in any LSP encoding.

Parsers work on Python strings and report code-point offsets. The LSP speaks in
UTF-16 code units by default (UTF-8 or UTF-32 when negotiated). A :class:`LineIndex`
is built once per text version and converts in both directions; lines made only
of ASCII (the vast majority) cost nothing extra.
"""

from __future__ import annotations

import bisect
import re
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


@dataclass(frozen=True, slots=True)
class Position:
    line: int
    character: int


class LineIndex:
    """Line starts of one text, for offset <-> position conversion."""

    __slots__ = ("_ascii", "_starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        starts.extend(m.end() for m in _NEWLINE.finditer(text))
        self._starts = starts
        self._ascii = text.isascii()

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset) - 1

    def line_start(self, line: int) -> int:
        return self._starts[min(max(line, 0), len(self._starts) - 1)]

    def _line_end(self, line: int) -> int:
        """Offset of the end of ``line``'s content (before its line break)."""
        if line + 1 < len(self._starts):
            end = self._starts[line + 1]
            while end > self._starts[line] and self.text[end - 1] in "\r\n":
                end -= 1
            return end
        return len(self.text)

    def position(self, offset: int, encoding: str = UTF16) -> Position:
        offset = min(max(offset, 0), len(self.text))
        line = self.line_of(offset)
        start = self._starts[line]
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
        start = self._starts[line]
        end = self._line_end(line)
        if self._ascii or encoding == UTF32:
            return min(start + max(character, 0), end)
        units = 0
        i = start
        while i < end and units < character:
            units += _units(self.text[i], encoding)
            i += 1
        return i

    def range(self, span: Span, encoding: str = UTF16) -> tuple[Position, Position]:
        return self.position(span.start, encoding), self.position(span.end, encoding)

    def line_text(self, line: int) -> str:
        if not 0 <= line < len(self._starts):
            return ""
        return self.text[self.line_start(line) : self._line_end(line)]
