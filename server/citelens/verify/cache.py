"""The verification cache: answers of scholarly sources, kept on disk.

Keys name the *lookup* ("s2:doi:10.1234/abc", "crossref:title:<normalised
title>"), never a citation key and never an API key, so two papers citing the
same work share the answer. Only real answers are kept: FOUND for
``verifiedMaxAgeDays`` (30 days by default: a paper retracted or corrected since
is seen at the first check after that), NOT_FOUND for one day (a paper may
appear in an index tomorrow); FAILED and UNAVAILABLE never, so a network hiccup
is retried on the next check. The age is checked when an answer is read, so a
shorter setting applies to answers stored before it.

A cache that cannot be opened or used (corrupted database, read-only
directory) turns into no cache, with one log line; verification carries on.
Values are JSON text (:mod:`citelens.core.datacache`): nothing read from the cache is
ever unpickled, and a row that is unreadable, not JSON, or not a well-formed
FOUND/NOT_FOUND answer is a miss, so the lookup is made again and the row
overwritten. Each row holds an HMAC-SHA256, under the cache's secret
(:mod:`citelens.core.cachesecret`: the ``cacheKey`` setting, else a 0600 file in the cache
directory), of its lookup key and its content, and the time it was stored: a row moved
to another key, edited, forged with a recomputed hash, or stored "in the future" is a
miss (one log line the first time). Rows hold the sources' answers, never verdicts: a
verdict is always derived again from them (``verify/verdict.decide``).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import diskcache
import platformdirs

from citelens.core import cachesecret, datacache
from citelens.core.settings import Settings
from citelens.core.titles import title_key
from citelens.sources.records import Lookup, Outcome

FOUND_TTL_S = 30 * 24 * 3600.0
NOT_FOUND_TTL_S = 24 * 3600.0
#: A row stored later than now plus this (clocks of synced machines differ) is a miss.
CLOCK_SKEW_S = 600.0
#: Bump when the stored shape of a Lookup changes: old entries are then ignored.
#: v1 rows were pickles; v2 rows are JSON text, and records carry retraction/correction
#: notices (v1 answers lack them); v3 rows are bound by a keyed MAC (v2: a plain SHA-256).
SCHEMA = "v3"


def default_cache_dir(settings: Settings) -> Path:
    if settings.cache_dir:
        return Path(settings.cache_dir).expanduser()
    return Path(platformdirs.user_cache_dir("citelens"))


def lookup_key(source: str, lookup: str, value: str) -> str:
    """``source:lookup:value`` (``lookup``: the kind of lookup, a plan tier's ``kind``), the
    value normalised so equal lookups share one key."""
    if "title" in lookup or lookup in ("match", "search"):
        norm = title_key(value)
    else:
        norm = value.strip().lower()
    return f"{source}:{lookup}:{norm}"


class VerificationCache:
    """A disk cache of :class:`Lookup` answers, or nothing if the disk says no.

    Operations are synchronous sqlite reads/writes of a few hundred bytes
    (well under a millisecond), cheap enough for the server's event loop.
    """

    def __init__(
        self,
        directory: Path | None,
        log: Callable[[str], None] = lambda _m: None,
        *,
        found_max_age_s: float = FOUND_TTL_S,
        clock: Callable[[], float] = time.time,
        secret: bytes | None = None,
    ):
        self._log = log
        self.found_max_age_s = max(0.0, found_max_age_s)
        self._clock = clock
        self._cache: diskcache.Cache | None = None
        #: the key of every row's MAC (``cacheKey``, else the cache directory's secret file)
        self._secret = secret
        self._forged_logged = False
        self._pace_failed = False  # the database's shared pace failed: each machine paces itself
        self._disabled = False  # the cache failed and was said to be unusable
        #: The keys the cache held when :meth:`remember_keys` ran, plus those put since:
        #: a key outside it is a miss without a query (None: ask the database every time).
        self._known: set[str] | None = None
        self.directory = directory
        self.where = str(directory)  # how log lines name the cache
        if directory is None:
            return
        try:
            self._cache = datacache.open_cache(directory, size_limit=2**30)
            if self._secret is None:
                self._secret = cachesecret.load_or_create(directory)
            # Touch the database now, so a corrupted file is found here, not mid-run.
            self._cache.get(f"{SCHEMA}:probe")
        except Exception as exc:  # any failure to open means: no cache
            self._disable(exc)

    def use_store(self, store: Any, where: str, secret: bytes) -> None:
        """Keep answers in ``store`` (``verify/pgcache.PgStore``: the same calls as the disk
        cache) instead of a directory, bound under ``secret`` (the ``cacheKey`` every machine
        is given); ``where`` names it in log lines (no password)."""
        self._cache = store
        self._secret = secret
        self.where = where

    @property
    def enabled(self) -> bool:
        return self._cache is not None

    def _disable(self, exc: BaseException) -> None:
        if self._disabled:
            return  # said once (a statement of another thread failed with it)
        self._disabled = True
        if self._cache is not None:
            try:
                self._cache.close()
            except Exception:
                pass
        self._cache = None
        self._log(
            f"verification cache at {self.where} is unusable "
            f"({type(exc).__name__}: {exc}); continuing without a cache"
        )

    def remember_keys(self, max_keys: int) -> None:
        """Read the stored keys once (when there are at most ``max_keys``), so that looking
        up the many keys a big run misses costs a set lookup, not a database query each.
        Another process writing meanwhile only means an answer is asked for again."""
        if self._cache is None:
            return
        try:
            if len(self._cache) > max_keys:
                return
            prefix = f"{SCHEMA}:"
            self._known = {k for k in self._cache.iterkeys() if isinstance(k, str) and k.startswith(prefix)}
        except Exception:  # unreadable keys: just query each time
            self._known = None

    def forget_keys(self) -> None:
        """Query the database for every lookup again (the run that remembered is over)."""
        self._known = None

    def kinds(self) -> frozenset[str] | None:
        """``source:kind`` of every key remembered (:meth:`remember_keys`): a key of another
        kind is a miss. ``None`` when the keys are not remembered (anything may be a hit)."""
        if self._cache is None:
            return frozenset()
        if self._known is None:
            return None
        return frozenset(":".join(k.split(":", 3)[1:3]) for k in self._known)

    def may_hold(self, key: str) -> bool:
        """False when ``key`` is surely a miss (no cache, or not among the remembered keys)."""
        if self._cache is None:
            return False
        return self._known is None or f"{SCHEMA}:{key}" in self._known

    def shared_slot(self, host: str, interval: float) -> float | None:
        """Seconds to wait before asking ``host``, from the pace every machine sharing this
        cache keeps (a database's: ``PgStore.slot``); None: this cache paces nobody (the
        disk cache, or a database that failed: then each machine paces itself)."""
        store = self._cache
        if store is None or self._pace_failed or not hasattr(store, "slot"):
            return None
        try:
            return float(store.slot(host, interval))
        except (OSError, sqlite3.Error):  # each machine paces itself; the cache says its own failures
            self._pace_failed = True
            return None

    @property
    def remote(self) -> bool:
        """Answers live in a database across the network (PostgreSQL): every read is a round
        trip, to be batched (:meth:`get_many`) and made off the event loop."""
        return self._cache is not None and hasattr(self._cache, "get_many")

    def get(self, key: str) -> Lookup | None:
        if self._cache is None:
            return None
        full = f"{SCHEMA}:{key}"
        if self._known is not None and full not in self._known:
            return None
        try:
            raw: Any = datacache.get_json(self._cache, full)
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._disable(exc)
            return None
        return self._checked(full, raw)

    def get_many(self, keys: Sequence[str]) -> dict[str, Lookup]:
        """The cached answers of ``keys`` (misses left out): one statement for a database
        (:attr:`remote`), one read per key on disk. Blocking: run it in a thread."""
        store = self._cache
        if store is None:
            return {}
        if not hasattr(store, "get_many"):
            return {k: hit for k in keys if (hit := self.get(k)) is not None}
        full = {f"{SCHEMA}:{k}": k for k in dict.fromkeys(keys)}
        if self._known is not None:
            full = {f: k for f, k in full.items() if f in self._known}
        try:
            rows = store.get_many(list(full))
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._disable(exc)
            return {}
        out = {}
        for f, text in rows.items():
            try:
                raw = json.loads(text)
            except ValueError:
                continue
            hit = self._checked(f, raw)
            if hit is not None and f in full:
                out[full[f]] = hit
        return out

    def put_many(self, answers: Mapping[str, Lookup]) -> None:
        """:meth:`put` for each answer (blocking: a database's writes are run in a thread)."""
        for key, lookup in answers.items():
            self.put(key, lookup)

    def _checked(self, full: str, raw: Any) -> Lookup | None:
        """The answer of row ``raw`` read under ``full``, if it is one CiteLens stored there
        and it has not expired."""
        if raw is None:  # a miss (or a row that is not JSON): nothing to check
            return None
        if not isinstance(raw, dict) or not cachesecret.same(raw.get("bind"), self._binding(full, raw)):
            self._forged(full)
            return None  # not this lookup's answer as CiteLens stored it (moved, edited, forged)
        answer = _valid_lookup(raw)
        if answer is None:
            return None
        stored = raw.get("stored_at")
        now = self._clock()
        if not isinstance(stored, int | float) or stored > now + CLOCK_SKEW_S:
            return None  # a time in the future would never expire
        max_age = self.found_max_age_s if answer.outcome is Outcome.FOUND else NOT_FOUND_TTL_S
        if now - stored > max_age:
            return None  # too old: ask again (the paper may have been retracted since)
        return answer

    def put(self, key: str, lookup: Lookup) -> None:
        if self._cache is None:
            return
        if lookup.outcome is Outcome.FOUND:
            ttl = max(self.found_max_age_s, 1.0)
        elif lookup.outcome is Outcome.NOT_FOUND:
            ttl = NOT_FOUND_TTL_S
        else:
            return  # failures are never cached: the next check asks again
        full = f"{SCHEMA}:{key}"
        if self._known is not None:
            self._known.add(full)
        try:
            row = {**lookup.to_json(), "stored_at": self._clock()}
            datacache.set_json(self._cache, full, {**row, "bind": self._binding(full, row)}, ttl)
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._disable(exc)

    def _binding(self, full_key: str, row: dict[str, Any]) -> str:
        """The row's MAC: its lookup key and content (all but the MAC itself) under the
        cache's secret. A row copied under another key, edited, or written by anyone who
        does not hold the secret no longer matches and is a miss."""
        content = {k: v for k, v in row.items() if k != "bind"}
        text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return cachesecret.row_mac(self._secret or b"", full_key, text)

    def _forged(self, full_key: str) -> None:
        if not self._forged_logged:
            self._forged_logged = True
            kind = ":".join(full_key.split(":", 3)[1:3])
            self._log(
                f"a row of the verification cache at {self.where} failed its check "
                f"(a {kind} answer not written by this cache's CiteLens, or edited); ignored, "
                "and asked again (further such rows are ignored without a line)"
            )

    def clear(self) -> int:
        """Drop every cached answer; returns how many were dropped."""
        if self._cache is None:
            return 0
        if self._known is not None:
            self._known = set()
        try:
            return int(self._cache.clear())
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._disable(exc)
            return 0

    def __len__(self) -> int:
        if self._cache is None:
            return 0
        try:
            return len(self._cache)
        except (OSError, sqlite3.Error):
            return 0

    def close(self) -> None:
        if self._cache is not None:
            try:
                self._cache.close()
            except Exception:
                pass


def _valid_lookup(raw: Any) -> Lookup | None:
    """The cached answer, if ``raw`` is a well-formed FOUND or NOT_FOUND lookup."""
    if not isinstance(raw, dict):
        return None
    try:
        lookup = Lookup.from_json(raw)
    except Exception:  # any malformed row is a miss
        return None
    if lookup.outcome not in (Outcome.FOUND, Outcome.NOT_FOUND):
        return None  # failures are never stored: such a row is forged or corrupt
    if lookup.outcome is Outcome.FOUND and not lookup.records:
        return None
    if not all(datacache.valid_fields(r) for r in lookup.records):
        return None
    return lookup


def open_cache(settings: Settings, log: Callable[[str], None] = lambda _m: None) -> VerificationCache:
    """The cache in ``settings.cache_dir`` (CITELENS_CACHE_DIR) or the user cache directory;
    in PostgreSQL when ``settings.cache`` is a ``postgresql://`` URL (shared by a cluster)."""
    from citelens.verify import pgcache

    max_age = settings.verified_max_age_days * 86400.0
    secret = cachesecret.from_setting(settings.cache_key) if settings.cache_key else None
    if pgcache.is_postgres_url(settings.cache):
        shared = VerificationCache(None, log, found_max_age_s=max_age)
        if secret is None:
            log(
                f"verification cache {pgcache.display(str(settings.cache))} not used: a shared "
                "cache needs cacheKey (CITELENS_CACHE_KEY), the same on every machine; continuing "
                "without a cache"
            )
            return shared
        try:
            url = str(settings.cache)
            shared.use_store(pgcache.PgStore(url), pgcache.display(url), secret)
        except pgcache.PgCacheError as exc:
            log(f"verification cache unusable ({exc}); continuing without a cache")
        return shared
    return VerificationCache(default_cache_dir(settings), log, found_max_age_s=max_age, secret=secret)


def clear_cache(settings: Settings, log: Callable[[str], None] = lambda _m: None) -> str:
    """Drop every cached answer (``citelens cache clear``); returns where the cache lives."""
    cache = open_cache(settings, log)
    try:
        n = cache.clear()
    finally:
        cache.close()
    return f"{cache.directory}, {n} answers dropped"
