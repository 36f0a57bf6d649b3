"""Section-aware chunking of a full text for passage retrieval.

Sections start at heading lines (``# Title`` as written by :mod:`citelens.claims.extract`,
or numbered/known headings in PDF text). Chunks never cross a section boundary
(very short sections are merged with the next one), are at most :data:`CHUNK_SIZE`
characters with :data:`OVERLAP` characters shared between neighbours, and are cut
at a paragraph or sentence end when one is near. Reference lists are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHUNK_SIZE = 3000
OVERLAP = 200
MIN_SECTION = 400

_HEADING = re.compile(
    r"^(?:#\s+(?P<md>.+)|(?P<num>(?:\d+(?:\.\d+)*|[IVX]+)\.?\s+[A-Z][^\n]{2,80})"
    r"|(?P<known>(?:abstract|introduction|background|related work|methods?|materials and methods"
    r"|results|discussion|conclusions?|acknowledg(?:e)?ments|references|bibliography)\s*))$",
    re.IGNORECASE | re.MULTILINE,
)
_REFERENCES = re.compile(r"^(?:\d+\.?\s*)?(?:references|bibliography|literature cited)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Chunk:
    section: str
    text: str
    start: int  # offset into the full text


def sections(text: str) -> list[tuple[str, int, int]]:
    """``(title, start, end)`` of each section (the text before the first heading is "")."""
    heads = [(m.start(), m.end(), (m.group("md") or m.group(0)).strip()) for m in _HEADING.finditer(text)]
    out: list[tuple[str, int, int]] = []
    prev_title, prev_end = "", 0
    for start, end, title in heads:
        out.append((prev_title, prev_end, start))
        prev_title, prev_end = title, end
    out.append((prev_title, prev_end, len(text)))
    return [s for s in out if text[s[1] : s[2]].strip()]


def _cut_point(text: str, start: int, limit: int) -> int:
    """A paragraph or sentence end for a chunk starting at ``start``, before ``limit``."""
    if limit >= len(text):
        return len(text)
    floor = start + (limit - start) // 2
    for sep in ("\n\n", "\n", ". "):
        at = text.rfind(sep, floor, limit)
        if at > 0:
            return at + len(sep)
    return limit


def chunk_text(text: str, size: int = CHUNK_SIZE, overlap: int = OVERLAP) -> list[Chunk]:
    """Chunks of ``text``; see the module docstring."""
    merged: list[tuple[str, int, int]] = []
    for title, a, b in sections(text):
        if _REFERENCES.match(title):
            continue
        if merged and merged[-1][2] - merged[-1][1] < MIN_SECTION:
            prev_title, pa, _ = merged.pop()
            merged.append((prev_title or title, pa, b))
        else:
            merged.append((title, a, b))
    chunks: list[Chunk] = []
    for title, a, b in merged:
        body = text[a:b]
        pos = 0
        while pos < len(body):
            end = _cut_point(body, pos, pos + size)
            piece = body[pos:end].strip()
            if piece:
                chunks.append(Chunk(title, piece, a + pos))
            if end >= len(body):
                break
            pos = max(end - overlap, pos + 1)
    return chunks
