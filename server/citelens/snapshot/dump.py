"""What every dump reader yields, and how it counts what it could not read."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from citelens.sources.records import PaperRecord


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
    examples: list[str] = field(default_factory=list)  # the first few problems, for the log

    def bad(self, where: str) -> None:
        self.malformed += 1
        if len(self.examples) < 5:
            self.examples.append(where)


def open_text(path: str) -> IO[str]:
    """A dump file as text: gzip by its magic bytes, UTF-8 with bad bytes replaced."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace", newline="")
    return open(path, encoding="utf-8", errors="replace", newline="")


def lines(path: str, counts: Counts) -> Iterator[tuple[int, str]]:
    """(line number, line) of a JSON Lines file; a truncated gzip ends the file, counted."""
    counts.files += 1
    try:
        with open_text(path) as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    yield n, line
    except (OSError, EOFError) as exc:
        counts.bad(f"{path}: {type(exc).__name__}: {exc}")
