"""The snapshot index: one SQLite file (stdlib ``sqlite3``, FTS5), nothing to install.

Tables: ``works`` (one row per record of a dump: its identifiers, year and the record as
zlib-compressed JSON), ``titles`` (a contentless FTS5 index of the normalised titles,
``rowid`` = the work's id) and ``meta`` (what was built from what, and the snapshot's
date). Exact lookups go through the identifier indexes; a title lookup asks FTS5 for the
works sharing the title's words and re-ranks them with the same title similarity the
verdicts use (:func:`citelens.verify.match.compare.title_similarity` lives above this
module, so the caller passes its scorer).

A snapshot answers FOUND or NOT_FOUND like a source, but its NOT_FOUND only means "not in
this copy of the past": verification never decides NOT_FOUND on it (``verify/snapshot.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from citelens.core.fields import Field
from citelens.core.identifiers import normalize_arxiv, normalize_doi
from citelens.core.source_names import Source
from citelens.core.titles import normalize_title
from citelens.sources.records import PaperRecord

SCHEMA_VERSION = "1"
#: Words too common to narrow a title search (FTS5 would return most of the index).
_STOP = frozenset(
    "a an and are as at be by for from in into is it its of on or the to with via using "
    "towards toward we our their this that".split()
)
_TOKEN = re.compile(r"\w+")
#: Record fields not kept (large, not used by verdicts) unless asked for.
_HEAVY = ("abstract",)


def _fts_words(title: str) -> list[str]:
    return _TOKEN.findall(normalize_title(title))


def title_hash(title: str) -> int:
    """A 63-bit key of the normalised title: the exact title lookup."""
    norm = " ".join(_fts_words(title))
    return int.from_bytes(hashlib.blake2b(norm.encode("utf-8"), digest_size=8).digest(), "big") >> 1


def pack(record: PaperRecord, keep_abstract: bool = False) -> bytes:
    data = {k: v for k, v in record.to_json().items() if v not in (None, [], "", False)}
    if not keep_abstract:
        for k in _HEAVY:
            data.pop(k, None)
    return zlib.compress(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 1)


def unpack(blob: bytes) -> PaperRecord | None:
    """The record of a row; None for anything that is not a well-formed record (a snapshot
    file is data from disk: read with the same checks as the verification cache)."""
    try:
        data = json.loads(zlib.decompress(blob))
        rec = PaperRecord.from_json(data) if isinstance(data, dict) and data.get("title") else None
    except (zlib.error, ValueError, TypeError, RecursionError):
        return None
    return rec if rec is not None and _well_formed(data) else None


_LISTS = frozenset({"authors", "venue_alternates", "publication_types"})
_INTS = frozenset({"year", "corpus_id", "citation_count"})


def _well_formed(data: dict[str, Any]) -> bool:
    """Every field of a stored record has its type (a quick check of the few shapes a
    PaperRecord has; the cache's generic check costs ten times the lookup)."""
    if not isinstance(data.get("source"), str) or not isinstance(data.get("title"), str):
        return False
    for k, v in data.items():
        if k in _LISTS:
            ok = isinstance(v, list) and all(isinstance(x, str) for x in v)
        elif k in _INTS:
            ok = v is None or (isinstance(v, int) and not isinstance(v, bool))
        elif k == "is_preprint":
            ok = isinstance(v, bool)
        elif k == "notices":
            ok = isinstance(v, list) and all(
                isinstance(n, dict) and all(isinstance(x, str) for x in (*n, *n.values())) for n in v
            )
        else:
            ok = v is None or isinstance(v, str)
        if not ok:
            return False
    return True


class Writer:
    """Adds records to a new snapshot file; :meth:`close` builds the indexes."""

    def __init__(self, path: str, keep_abstracts: bool = False) -> None:
        if os.path.exists(path):
            os.remove(path)
        self.path = path
        self.keep_abstracts = keep_abstracts
        self.db = sqlite3.connect(path)
        self.db.executescript(
            """
            PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=8192;
            PRAGMA cache_size=-200000;
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE works(id INTEGER PRIMARY KEY, source TEXT NOT NULL, doi TEXT,
                               arxiv TEXT, pmid TEXT, year INTEGER, tkey INTEGER,
                               record BLOB NOT NULL);
            CREATE VIRTUAL TABLE titles USING fts5(title, content='', detail=none,
                               tokenize='unicode61 remove_diacritics 2');
            """
        )
        self.count = 0
        self._rows: list[tuple[object, ...]] = []
        self._titles: list[tuple[int, str]] = []

    def add(self, record: PaperRecord) -> None:
        self.count += 1
        i = self.count
        words = " ".join(_fts_words(record.title))
        tkey = int.from_bytes(hashlib.blake2b(words.encode("utf-8"), digest_size=8).digest(), "big") >> 1
        self._rows.append(
            (
                i,
                record.source,
                record.doi,
                record.arxiv_id,
                record.pmid,
                record.year,
                tkey,
                pack(record, self.keep_abstracts),
            )
        )
        self._titles.append((i, words))
        if len(self._rows) >= 20_000:
            self._flush()

    def abort(self) -> None:
        """Stop writing (the caller removes the file)."""
        try:
            self.db.close()
        except sqlite3.Error:
            pass

    def _flush(self) -> None:
        with self.db:
            self.db.executemany("INSERT INTO works VALUES (?,?,?,?,?,?,?,?)", self._rows)
            self.db.executemany("INSERT INTO titles(rowid, title) VALUES (?,?)", self._titles)
        self._rows.clear()
        self._titles.clear()

    def close(self, meta: dict[str, str]) -> None:
        self._flush()
        with self.db:
            self.db.executescript(
                """
                CREATE INDEX works_doi ON works(doi) WHERE doi IS NOT NULL;
                CREATE INDEX works_arxiv ON works(arxiv) WHERE arxiv IS NOT NULL;
                CREATE INDEX works_pmid ON works(pmid) WHERE pmid IS NOT NULL;
                CREATE INDEX works_tkey ON works(tkey);
                INSERT INTO titles(titles) VALUES('optimize');
                """
            )
            rows = {**meta, "schema": SCHEMA_VERSION, "works": str(self.count)}
            self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?,?)", sorted(rows.items()))
        self.db.execute("VACUUM")
        self.db.close()


#: Source order of the records a lookup returns (the first is the one an identifier
#: lookup decides on): OpenAlex and Crossref carry retraction flags.
_SOURCE_RANK: dict[str, int] = {Source.OPENALEX: 0, Source.CROSSREF: 1, Source.DBLP: 2, Source.ARXIV: 3}


def _ranked(rows: Iterable[tuple[str, bytes]]) -> list[PaperRecord]:
    recs = [r for r in (unpack(b) for _s, b in sorted(rows, key=lambda sb: _SOURCE_RANK.get(sb[0], 9))) if r]
    return recs


@dataclass(frozen=True, slots=True)
class Info:
    date: str  # the newest date of the data it holds (YYYY-MM-DD)
    works: int
    sources: str  # "OpenAlex, DBLP"


def _stamp(path: str) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


class SnapshotError(Exception):
    """The file is not a snapshot this version can read."""


class Snapshot:
    """A snapshot opened read-only. Lookups never raise for a miss; a damaged file raises
    :class:`SnapshotError` at open. A file replaced while it is open (a new snapshot copied
    over it) is noticed at the next lookup and opened again, with a log line; one that can
    no longer be read is not used for the rest of the run, with a log line."""

    def __init__(self, path: str, log: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.log = log
        self.broken = False
        self._open()

    def _open(self) -> None:
        path = self.path
        if not os.path.isfile(path):
            raise SnapshotError(f"no snapshot at {path}")
        try:
            stamp = _stamp(path)
            self.db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, check_same_thread=False)
            meta = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        except (sqlite3.Error, OSError) as exc:
            raise SnapshotError(f"{path} is not a CiteLens snapshot ({exc})") from None
        if meta.get("schema") != SCHEMA_VERSION:
            self.db.close()
            raise SnapshotError(f"{path}: snapshot format {meta.get('schema')!r}, expected {SCHEMA_VERSION}")
        self._stamp = stamp
        self.info = Info(meta.get("date", ""), int(meta.get("works", "0")), meta.get("sources", ""))

    def close(self) -> None:
        self.db.close()

    def _usable(self) -> bool:
        """False once the file cannot be read; opens it again if it changed on disk (the
        file is opened as immutable: SQLite itself would not notice)."""
        if self.broken:
            return False
        try:
            changed = _stamp(self.path) != self._stamp
        except OSError:
            changed = True
        if changed:
            self._reopen("changed on disk")
        return not self.broken

    def _reopen(self, why: str) -> None:
        try:
            self.db.close()
        except sqlite3.Error:
            pass
        try:
            self._open()
        except SnapshotError as exc:
            self.broken = True
            self._say(
                f"snapshot {self.path} {why} during the run and cannot be read; not used for "
                f"the rest of it ({exc})"
            )
            return
        self._say(f"snapshot {self.path} {why} during the run; opened again (data of {self.info.date})")

    def _say(self, line: str) -> None:
        if self.log is not None:
            self.log(line)

    def _rows(self, sql: str, args: Sequence[object]) -> list[tuple[str, bytes]]:
        """The rows of a lookup; none, after one reopen, when the file cannot be read."""
        if not self._usable():
            return []
        try:
            return list(self.db.execute(sql, args).fetchall())
        except sqlite3.Error:
            self._reopen("could not be read")
            return []

    def by_id(self, field: Field, value: str) -> list[PaperRecord]:
        """Records whose ``field`` (DOI, arXiv id, PMID) is ``value``, best source first."""
        if field == Field.DOI:
            norm = normalize_doi(value)
        elif field == Field.ARXIV:
            norm = normalize_arxiv(value)
        elif field == Field.PMID:
            norm = value.strip() if value.strip().isdigit() else None
        else:
            return []
        if not norm:
            return []
        rows = self._rows(f"SELECT source, record FROM works WHERE {field} = ?", (norm,))
        return _ranked(rows)

    def by_title(
        self, title: str, score: Callable[[str, str], float], floor: float = 0.5, limit: int = 5
    ) -> list[tuple[float, PaperRecord]]:
        """Records whose title resembles ``title`` (``score`` >= ``floor``), best first.

        FTS5 finds the works holding every significant word of the title; when none scores
        well enough (a typo, a word left out), the works holding most of its rarest words."""
        words = _fts_words(title)
        unique = list(dict.fromkeys(words))
        strong = [w for w in unique if w not in _STOP and len(w) > 1] or unique
        if not strong:
            return []
        exact = self._rows("SELECT source, record FROM works WHERE tkey = ?", (title_hash(title),))
        found = self._scored(title, exact, score, floor)
        if not found or found[0][0] < 0.9:
            found = self._scored(
                title, self._match(" AND ".join(f'"{w}"' for w in strong), 256), score, floor
            )
        if not found or found[0][0] < 0.9:
            longest = sorted(strong, key=len, reverse=True)[:6]
            if len(longest) > 1:
                # every combination leaving one word out: a typo or an inserted word still matches
                alts = " OR ".join(
                    "(" + " AND ".join(f'"{w}"' for w in longest if w != skip) + ")" for skip in longest
                )
                more = self._scored(title, self._match(alts, 256), score, floor)
                seen = {id(r) for _s, r in found}
                found = sorted(found + [x for x in more if id(x[1]) not in seen], key=lambda sr: -sr[0])
        out: list[tuple[float, PaperRecord]] = []
        keys: set[tuple[str, str]] = set()
        for s, r in found:
            k = (r.source, r.doi or r.arxiv_id or r.title.casefold())
            if k not in keys:
                keys.add(k)
                out.append((s, r))
        return out[:limit]

    def _match(self, query: str, limit: int) -> list[tuple[str, bytes]]:
        try:
            # no ORDER BY rank: bm25 costs ten times the match, and the few works that share
            # the title's words are re-ranked by title similarity anyway
            sql = "SELECT rowid FROM titles WHERE titles MATCH ? LIMIT ?"
            ids = [r[0] for r in self.db.execute(sql, (query, limit))]
        except sqlite3.Error:
            return []
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return self._rows(f"SELECT source, record FROM works WHERE id IN ({marks})", ids)

    @staticmethod
    def _scored(
        title: str, rows: Sequence[tuple[str, bytes]], score: Callable[[str, str], float], floor: float
    ) -> list[tuple[float, PaperRecord]]:
        out = []
        for r in _ranked(rows):
            s = score(title, r.title)
            if s >= floor:
                out.append((s, r))
        out.sort(key=lambda sr: -sr[0])
        return out
