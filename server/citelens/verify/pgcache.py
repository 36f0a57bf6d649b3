"""The verification cache in PostgreSQL, shared by the machines of a cluster (setting
``cache``: a ``postgresql://`` URL; the local disk cache stays the default).

:class:`PgStore` offers the few calls :class:`citelens.verify.cache.VerificationCache` makes
of its disk cache (``get``, ``set`` with an expiry, ``iterkeys``, ``clear``, ``len``,
``close``) and ``get_many`` (many keys in one statement), on one table of JSON text rows:
nothing read back is ever unpickled, and the
same validation applies as to the disk cache. Database errors are raised as
:class:`PgCacheError` (an ``OSError``), which the verification cache turns into "no
cache", with one log line, as for a broken disk. Every statement has a time limit
(:data:`STATEMENT_TIMEOUT_MS`, :data:`LOCK_TIMEOUT_MS`: a session holding a lock on the
table makes the cache unusable for the run, never a hang), and a malformed URL (a port
that is not a number, a ``/`` or ``@`` in the password not written ``%2F``/``%40``) is
refused before any connection, with a line that repeats no part of it. Needs ``psycopg`` (``pip install
'citelens[scale]'``).

The machines sharing a cache also share each host's pace (:meth:`PgStore.slot`, table
``citelens_pace``): before a request, a machine takes the host's next free start from the
database, so N machines together keep the rate one machine would. Before (issue 41 #12),
each machine paced itself to the host's whole rate: four writers asked four times too fast,
the hosts answered 429, breakers tripped, and which entries came out UNVERIFIED depended on
which machine's answer reached the table before another machine read it (who won the race).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

TABLE = "citelens_cache"
#: Each host's next free request start, in the database's clock (seconds since the epoch).
PACE_TABLE = "citelens_pace"
#: The longest one statement may run, and wait for a lock, on the server.
STATEMENT_TIMEOUT_MS = 10_000
LOCK_TIMEOUT_MS = 3_000
#: Seconds to connect, and for unacknowledged data on the connection (a silent network).
CONNECT_TIMEOUT_S = 10
TCP_USER_TIMEOUT_MS = 15_000


class PgCacheError(OSError):
    """The database could not be used (raised for any psycopg error)."""


def is_postgres_url(value: str | None) -> bool:
    return bool(value) and str(value).startswith(("postgresql://", "postgres://"))


def malformed(url: str) -> str | None:
    """Why ``url`` is not a usable ``postgresql://`` URL, or None. Never quotes the URL."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is not a number)
    except ValueError:
        return (
            "the cache URL is malformed (its port is not a number, or a '/' in the password "
            "is not written %2F)"
        )
    if "@" in parts.path or "@" in (parts.query or "") or parts.netloc.count("@") > 1:
        return "the cache URL is malformed (write '/' and '@' in the user name or password as %2F and %40)"
    return None


def display(url: str) -> str:
    """The URL without user name or password: safe for a log line (a malformed URL, whose
    parts cannot be told apart, is not shown at all)."""
    if malformed(url) is not None:
        return "postgresql://(malformed URL)"
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


class PgStore:
    """One table ``citelens_cache(key, value, expires)``; ``expires`` in Unix seconds."""

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError as exc:
            raise PgCacheError("psycopg is not installed (pip install 'citelens[scale]')") from exc
        self._errors: tuple[type[BaseException], ...] = (psycopg.Error,)
        self.where = display(url)
        why = malformed(url)
        if why is not None:
            raise PgCacheError(why)
        options = f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c lock_timeout={LOCK_TIMEOUT_MS}"
        try:
            self._db = psycopg.connect(
                url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                options=options,
                tcp_user_timeout=TCP_USER_TIMEOUT_MS,
                keepalives=1,
                keepalives_idle=10,
                keepalives_interval=5,
                keepalives_count=2,
            )
            self._create(
                f"CREATE TABLE IF NOT EXISTS {TABLE} "
                "(key TEXT PRIMARY KEY, value TEXT NOT NULL, expires DOUBLE PRECISION)",
                psycopg,
            )
            self._create(
                f"CREATE TABLE IF NOT EXISTS {PACE_TABLE} "
                "(host TEXT PRIMARY KEY, next_start DOUBLE PRECISION)",
                psycopg,
            )
        except psycopg.Error as exc:
            raise PgCacheError(f"{self.where}: {_why(exc)}") from None

    def _create(self, sql: str, psycopg: Any) -> None:
        """``CREATE TABLE IF NOT EXISTS`` that machines starting together may all run: the
        losers of PostgreSQL's race (a unique violation on its catalog) find the table made."""
        try:
            self._db.execute(sql)
        except (psycopg.errors.UniqueViolation, psycopg.errors.DuplicateTable):
            pass

    def _run(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            cur = self._db.execute(sql, args)
            return list(cur.fetchall()) if cur.description is not None else []
        except self._errors as exc:
            raise PgCacheError(f"{self.where}: {_why(exc)}") from None

    def get(self, key: str) -> str | None:
        rows = self._run(
            f"SELECT value FROM {TABLE} WHERE key = %s AND (expires IS NULL OR expires > %s)",
            (key, time.time()),
        )
        return str(rows[0][0]) if rows else None

    def get_many(self, keys: list[str]) -> dict[str, str]:
        """The values stored under ``keys`` (misses left out), in one statement."""
        if not keys:
            return {}
        rows = self._run(
            f"SELECT key, value FROM {TABLE} WHERE key = ANY(%s) AND (expires IS NULL OR expires > %s)",
            (list(keys), time.time()),
        )
        return {str(k): str(v) for k, v in rows}

    def set(self, key: str, value: str, expire: float | None = None) -> bool:
        expires = time.time() + expire if expire is not None else None
        self._run(
            f"INSERT INTO {TABLE} (key, value, expires) VALUES (%s, %s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires = EXCLUDED.expires",
            (key, value, expires),
        )
        return True

    def slot(self, host: str, interval: float) -> float:
        """Seconds to wait before a request to ``host`` may start, taken from the host's
        pace shared by every machine of this database (its clock, not this machine's): the
        next free start moves on by ``interval``, atomically."""
        now = "extract(epoch from clock_timestamp())"
        rows = self._run(
            f"INSERT INTO {PACE_TABLE} AS p (host, next_start) VALUES (%s, {now} + %s) "
            f"ON CONFLICT (host) DO UPDATE SET next_start = GREATEST(p.next_start, {now}) + %s "
            f"RETURNING next_start - %s - {now}",
            (host, interval, interval, interval),
        )
        return max(0.0, float(rows[0][0])) if rows else 0.0

    def iterkeys(self) -> Iterator[str]:
        rows = self._run(f"SELECT key FROM {TABLE} WHERE expires IS NULL OR expires > %s", (time.time(),))
        return (str(r[0]) for r in rows)

    def __len__(self) -> int:
        rows = self._run(f"SELECT count(*) FROM {TABLE}")
        return int(rows[0][0]) if rows else 0

    def clear(self) -> int:
        n = len(self)
        self._run(f"DELETE FROM {TABLE}")
        return n

    def close(self) -> None:
        try:
            self._db.close()
        except Exception:
            pass


def _why(exc: BaseException) -> str:
    """The kind of a database error, for a log line (its message may quote the URL)."""
    name = type(exc).__name__
    if name in ("LockNotAvailable", "QueryCanceled"):
        return f"{name}: a statement waited longer than its time limit (another session holds a lock?)"
    return name
