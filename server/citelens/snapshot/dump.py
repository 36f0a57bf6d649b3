"""What every dump reader yields, and how it counts what it could not read.

Dumps are data from elsewhere, read with bounds: only regular files are opened (a part that
is a symlink to ``/dev/zero`` or a FIFO is refused, counted and named, as the checker does
with documents), a record longer than :data:`MAX_RECORD_CHARS` (a 3 GB line in a 3 MB
gzip) is skipped and counted without being held in memory, and a file read whole (a
Crossref chunk) is at most :data:`MAX_FILE_CHARS`.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, BinaryIO

from citelens.sources.records import PaperRecord

#: The longest record (a JSON line, a DBLP element) read; a longer one is skipped, counted.
MAX_RECORD_CHARS = 64 << 20
#: The longest file read whole (a Crossref chunk of a few thousand works is tens of MB).
MAX_FILE_CHARS = 1 << 30
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


class DumpRefused(OSError):
    """A dump file that is not read: not a regular file."""


@dataclass(slots=True)
class Work:
    """One record of a dump, with what the subset options look at."""

    record: PaperRecord
    kind: str = ""  # the dump's type: "article", "preprint", "inproceedings", ...
    fields: frozenset[str] = frozenset()  # lower-cased: "computer science", "cs", "cs.lg"
    date: str = ""  # when the dump last changed it (YYYY-MM-DD), if it says


@dataclass(slots=True)
class Counts:
    """Per dump: records read, kept, and skipped because they were malformed."""

    read: int = 0
    kept: int = 0
    malformed: int = 0
    filtered: int = 0
    files: int = 0
    too_large: int = 0  # records (or files) over the size bound, skipped (also in malformed)
    refused: int = 0  # files that are not regular files (a FIFO, a device), not read
    examples: list[str] = field(default_factory=list)  # the first few problems, for the log

    def bad(self, where: str) -> None:
        self.malformed += 1
        if len(self.examples) < 5:
            self.examples.append(where)


def open_binary(path: str) -> BinaryIO:
    """A dump file opened for reading, if it is a regular file (checked once open: it may
    have been swapped); else :class:`DumpRefused` naming what it is."""
    fd = os.open(path, _READ_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(mode)
                else "a device"
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                else "a folder"
                if stat.S_ISDIR(mode)
                else "not a file"
            )
            raise DumpRefused(f"not a regular file ({kind}): not read")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def open_text(path: str) -> IO[str]:
    """A dump file as text: gzip by its magic bytes, UTF-8 with bad bytes replaced (a dump is
    read, never edited: a replaced byte only spoils the record that holds it)."""
    raw = open_binary(path)
    magic = raw.read(2)
    raw.seek(0)
    if magic == b"\x1f\x8b":
        unzipped = gzip.GzipFile(fileobj=raw, mode="rb")
        return io.TextIOWrapper(unzipped, encoding="utf-8", errors="replace", newline="")
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")


def bounded_lines(fh: IO[str], counts: Counts, where: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of ``fh``; a line longer than :data:`MAX_RECORD_CHARS` is read
    past in pieces, never held whole, and counted."""
    n = 0
    while True:
        line = fh.readline(MAX_RECORD_CHARS)
        if not line:
            return
        n += 1
        if len(line) >= MAX_RECORD_CHARS and not line.endswith("\n"):
            while True:  # the rest of the line, a piece at a time
                more = fh.readline(MAX_RECORD_CHARS)
                if not more or more.endswith("\n"):
                    break
            counts.read += 1
            counts.too_large += 1
            counts.bad(f"{where}:{n}: longer than {MAX_RECORD_CHARS >> 20} MB")
            continue
        yield n, line


def read_whole(fh: IO[str], counts: Counts, where: str) -> str | None:
    """The text of ``fh`` if it is at most :data:`MAX_FILE_CHARS`, else None (counted)."""
    text = fh.read(MAX_FILE_CHARS + 1)
    if len(text) > MAX_FILE_CHARS:
        counts.too_large += 1
        counts.bad(f"{where}: longer than {MAX_FILE_CHARS >> 20} MB")
        return None
    return text


def failed(counts: Counts, path: str, exc: BaseException) -> None:
    """A file that could not be read (refused, truncated, unreadable), counted and named."""
    if isinstance(exc, DumpRefused):
        counts.refused += 1
    counts.bad(f"{path}: {exc}" if isinstance(exc, DumpRefused) else f"{path}: {type(exc).__name__}: {exc}")


def lines(path: str, counts: Counts) -> Iterator[tuple[int, str]]:
    """(line number, line) of a JSON Lines file; a truncated gzip ends the file, counted."""
    counts.files += 1
    try:
        with open_text(path) as fh:
            yield from bounded_lines(fh, counts, path)
    except (OSError, EOFError) as exc:
        failed(counts, path, exc)
