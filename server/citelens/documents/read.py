"""Reading documents from disk: what kind a file is, and its text.

The one place that decides which files CiteLens reads (by suffix) and how their bytes
become text (UTF-8, invalid bytes replaced, a BOM dropped), for the editor and the CLI.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".rmd", ".qmd", ".pandoc"})
LATEX_SUFFIXES = frozenset({".tex", ".ltx", ".latex", ".sty", ".cls"})
BIB_SUFFIXES = frozenset({".bib", ".bibtex"})
#: A file larger than this is not read (the biggest real bibliography seen: 50 MB).
MAX_FILE_BYTES = 256 << 20
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def kind_of(path: str) -> str | None:
    suffix = Path(path).suffix.lower()
    if suffix in BIB_SUFFIXES:
        return "bib"
    if suffix in LATEX_SUFFIXES:
        return "latex"
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    return None


def read_text(path: str | Path) -> str:
    """A file's text: UTF-8, invalid bytes replaced, BOM stripped; ``""`` if unreadable."""
    text, _why = read_file(path)
    return text or ""


def not_regular(path: str | Path) -> str | None:
    """Why ``path`` is not a file CiteLens reads (a FIFO, a device, too big), or None.
    Follows symlinks: a ``.tex`` linked to ``/dev/zero`` is a device."""
    try:
        st = os.stat(path)
    except OSError:
        return None  # missing: not a skipped file
    return _why_not(st)


def _why_not(st: os.stat_result) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a device"
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "a socket"
            if stat.S_ISSOCK(st.st_mode)
            else "a folder"
            if stat.S_ISDIR(st.st_mode)
            else "not a file"
        )
        return f"not a regular file ({kind})"
    if st.st_size > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES >> 20} MB ({st.st_size >> 20} MB)"
    return None


def read_file(path: str | Path) -> tuple[str | None, str | None]:
    """``(text, None)``; ``(None, why)`` for a file that is not read; ``("", why)`` for one
    that could not be read (no permission). Only regular files are read,
    at most :data:`MAX_FILE_BYTES`: a symlink to ``/dev/zero`` or ``/dev/stdin`` (the
    server's own input) or a FIFO would never end or fill the memory. The file is opened
    non-blocking and checked again once open (it may have been swapped)."""
    why = not_regular(path)
    if why is not None:
        return None, why
    try:
        fd = os.open(path, _READ_FLAGS)
    except (OSError, ValueError) as exc:
        return "", f"cannot read it ({getattr(exc, 'strerror', None) or exc})"
    try:
        why = _why_not(os.fstat(fd))
        if why is not None:
            return None, why
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_FILE_BYTES:
            return None, f"larger than {MAX_FILE_BYTES >> 20} MB"
    except OSError as exc:
        return "", f"cannot read it ({exc.strerror or exc})"
    finally:
        os.close(fd)
    text = b"".join(chunks).decode("utf-8", errors="replace")
    return (text[1:] if text.startswith("\ufeff") else text), None
