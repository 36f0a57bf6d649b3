"""Dumps -> one snapshot index (``citelens snapshot build``), keeping the subset asked for."""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from citelens.core.source_names import Source
from citelens.snapshot import arxiv, crossref, dblp, openalex
from citelens.snapshot.dump import Counts, Work
from citelens.snapshot.store import Writer
from citelens.sources.names import source_name


@dataclass(frozen=True, slots=True)
class Subset:
    """Which works to keep: all by default."""

    from_year: int | None = None
    types: frozenset[str] = frozenset()  # the dump's own type names, lower-cased
    fields: frozenset[str] = frozenset()  # field names or arXiv categories, lower-cased

    def keeps(self, w: Work) -> bool:
        if self.from_year is not None and (w.record.year is None or w.record.year < self.from_year):
            return False
        if self.types and w.kind.lower() not in self.types:
            return False
        if self.fields and self.fields.isdisjoint(w.fields):
            return False
        return True


@dataclass(slots=True)
class Built:
    path: str
    works: int = 0
    seconds: float = 0.0
    bytes: int = 0
    date: str = ""
    counts: dict[str, Counts] = field(default_factory=dict)

    def summary(self) -> str:
        parts = [
            f"{source_name(s)}: {c.kept} kept of {c.read} read"
            + (f", {c.filtered} outside the subset" if c.filtered else "")
            + (f", {c.malformed} malformed skipped" if c.malformed else "")
            + (f" (of which {c.too_large} over the size bound)" if c.too_large else "")
            + (f", {c.refused} files refused (not regular files)" if c.refused else "")
            for s, c in self.counts.items()
        ]
        return (
            f"snapshot {self.path}: {self.works} works ({self.bytes / 1e6:.1f} MB, data of {self.date}) "
            f"in {self.seconds:.1f} s; " + "; ".join(parts)
        )


Reader = Callable[[str, Counts], Iterator[Work]]
READERS: dict[str, Reader] = {
    Source.OPENALEX: openalex.read,
    Source.CROSSREF: crossref.read,
    Source.ARXIV: arxiv.read,
    Source.DBLP: dblp.read,
}


def build(
    out: str,
    inputs: dict[str, str],
    subset: Subset = Subset(),
    *,
    keep_abstracts: bool = False,
    log: Callable[[str], None] | None = None,
) -> Built:
    """Read every dump in ``inputs`` (source -> file or folder) into the index at ``out``."""
    started = time.monotonic()
    tmp = out + ".building"
    try:
        return _build(out, tmp, inputs, subset, keep_abstracts, log, started)
    except BaseException:  # a full disk, an interruption: no partial file is left behind
        remove_partial(tmp)
        raise


def remove_partial(tmp: str) -> None:
    """Remove a snapshot being built and SQLite's files beside it."""
    for p in (tmp, tmp + "-journal", tmp + "-wal", tmp + "-shm"):
        try:
            os.remove(p)
        except FileNotFoundError:
            pass
        except OSError:
            pass


def _build(
    out: str,
    tmp: str,
    inputs: dict[str, str],
    subset: Subset,
    keep_abstracts: bool,
    log: Callable[[str], None] | None,
    started: float,
) -> Built:
    writer = Writer(tmp, keep_abstracts)
    try:
        return _fill(writer, out, tmp, inputs, subset, log, started)
    except BaseException:
        writer.abort()
        raise


def _fill(
    writer: Writer,
    out: str,
    tmp: str,
    inputs: dict[str, str],
    subset: Subset,
    log: Callable[[str], None] | None,
    started: float,
) -> Built:
    result = Built(out)
    newest = ""
    for source, path in inputs.items():
        if not os.path.exists(path):
            raise FileNotFoundError(f"--{source}: no such file or folder: {path}")
        counts = result.counts.setdefault(source, Counts())
        for w in READERS[source](path, counts):
            if not subset.keeps(w):
                counts.filtered += 1
                continue
            writer.add(w.record)
            counts.kept += 1
            if w.date > newest:
                newest = w.date
            if log is not None and writer.count % 200_000 == 0:
                log(f"{writer.count} works")
        if log is not None and counts.examples:
            log(f"{source}: malformed records skipped, first: {', '.join(counts.examples)}")
    result.date = newest or datetime.date.today().isoformat()
    meta = {
        "date": result.date,
        "built": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "sources": ", ".join(source_name(s) for s in result.counts),
    }
    writer.close(meta)
    os.replace(tmp, out)
    result.works = writer.count
    result.bytes = os.path.getsize(out)
    result.seconds = time.monotonic() - started
    return result
