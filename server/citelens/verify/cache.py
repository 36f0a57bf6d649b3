"""The verification cache: answers of scholarly sources, kept on disk.

Keys name the *lookup* ("s2:doi:10.1234/abc", "crossref:title:<normalised
title>"), never a citation key and never an API key, so two papers citing the
same work share the answer. Only real answers are kept: FOUND for 30 days,
NOT_FOUND for one day (a paper may appear in an index tomorrow); FAILED and
UNAVAILABLE never, so a network hiccup is retried on the next check.

A cache that cannot be opened or used (corrupted database, read-only
directory) turns into no cache, with one log line; verification carries on.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import diskcache
import platformdirs

from citelens.core.normalize import title_key
from citelens.core.settings import Settings
from citelens.sources.records import Lookup, Outcome

FOUND_TTL_S = 30 * 24 * 3600.0
NOT_FOUND_TTL_S = 24 * 3600.0
#: Bump when the stored shape of a Lookup changes: old entries are then ignored.
SCHEMA = "v1"



def default_cache_dir(settings: Settings) -> Path:
    if settings.cache_dir:
        return Path(settings.cache_dir).expanduser()
    return Path(platformdirs.user_cache_dir("citelens"))


def lookup_key(source: str, kind: str, value: str) -> str:
    """``source:kind:value``, the value normalised so equal lookups share one key."""
    if "title" in kind or kind in ("match", "search"):
        norm = title_key(value)
    else:
        norm = value.strip().lower()
    return f"{source}:{kind}:{norm}"


class VerificationCache:
    """A disk cache of :class:`Lookup` answers, or nothing if the disk says no.

    Operations are synchronous sqlite reads/writes of a few hundred bytes
    (well under a millisecond), cheap enough for the server's event loop.
    """

    def __init__(self, directory: Path | None, log: Callable[[str], None] = lambda _m: None):
        self._log = log
        self._cache: diskcache.Cache | None = None
        self.directory = directory
        if directory is None:
            return
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.chmod(directory, 0o700)
            self._cache = diskcache.Cache(str(directory), size_limit=2**30)
            # Touch the database now, so a corrupted file is found here, not mid-run.
            self._cache.get(f"{SCHEMA}:probe")
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._disable(exc)

    @property
    def enabled(self) -> bool:
        return self._cache is not None

    def _disable(self, exc: BaseException) -> None:
        if self._cache is not None:
            try:
                self._cache.close()
            except Exception:
                pass
        self._cache = None
        self._log(
            f"citelens: verification cache at {self.directory} is unusable "
            f"({type(exc).__name__}: {exc}); continuing without a cache"
        )

    def get(self, key: str) -> Lookup | None:
        if self._cache is None:
            return None
        try:
            raw: Any = self._cache.get(f"{SCHEMA}:{key}")
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._disable(exc)
            return None
        if not isinstance(raw, dict):
            return None
        try:
            return Lookup.from_json(raw)
        except (KeyError, ValueError, TypeError, AssertionError):
            return None

    def put(self, key: str, lookup: Lookup) -> None:
        if self._cache is None:
            return
        if lookup.outcome is Outcome.FOUND:
            ttl = FOUND_TTL_S
        elif lookup.outcome is Outcome.NOT_FOUND:
            ttl = NOT_FOUND_TTL_S
        else:
            return  # failures are never cached: the next check asks again
        try:
            self._cache.set(f"{SCHEMA}:{key}", lookup.to_json(), expire=ttl)
        except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
            self._disable(exc)

    def clear(self) -> int:
        """Drop every cached answer; returns how many were dropped."""
        if self._cache is None:
            return 0
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


def open_cache(
    settings: Settings, log: Callable[[str], None] = lambda _m: None
) -> VerificationCache:
    """The cache in ``settings.cache_dir`` (CITELENS_CACHE_DIR) or the user cache directory."""
    return VerificationCache(default_cache_dir(settings), log)


def no_cache() -> VerificationCache:
    return VerificationCache(None)


def clear_cache(settings: Settings, log: Callable[[str], None] = lambda _m: None) -> str:
    """Drop every cached answer (``citelens cache clear``); returns where the cache lives."""
    cache = open_cache(settings, log)
    try:
        n = cache.clear()
    finally:
        cache.close()
    return f"{cache.directory}, {n} answers dropped"
