"""A disk cache that holds data only: JSON text in SQLite, never a pickle.

diskcache pickles every value that is not a plain ``str``/``bytes``/number, and
unpickles whatever a row says it is (the ``mode`` column): anyone who can write
the cache directory (for example a CI cache restored from another branch) could
run code in ``citelens check``. Here:

* values are JSON text, stored in the database row (never in a side file);
* :class:`DataDisk` refuses, on read, every row that is not such a raw value: a
  row that claims to be a pickle, a text or binary side file, or a pickled key
  is never decoded, it is a miss; the caller fetches the answer again and
  overwrites the row;
* a side file named by a row is deleted only when its name has diskcache's own
  shape (``ab/cd/<28 hex>.val``), so a forged row cannot make CiteLens delete a
  file outside the cache;
* the settings diskcache keeps in the database are pinned to ours when opening.

:func:`get_json` turns anything unreadable (bad JSON, wrong shape) into ``None``;
:func:`valid_fields` checks that a dataclass rebuilt from JSON has the field types
it declares, so a well-formed but wrong row is a miss too.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import os
import re
import sqlite3
import types
import typing
from pathlib import Path
from typing import Any

import diskcache
from diskcache.core import MODE_RAW

#: diskcache's own side-file names; nothing else is ever deleted.
_SIDE_FILE = re.compile(r"[0-9a-f]{2}[/\\][0-9a-f]{2}[/\\][0-9a-f]{28}\.val")


class RefusedRow(OSError):
    """A row that is not data (a pickle, a side file): read as a miss."""


class DataDisk(diskcache.Disk):  # type: ignore[misc]
    """Keys and values are ``str`` or ``bytes`` kept in the row; nothing is ever unpickled."""

    def put(self, key: Any) -> tuple[Any, bool]:
        if not isinstance(key, (str, bytes)):
            raise TypeError("cache keys are str or bytes")
        stored: tuple[Any, bool] = super().put(key)
        return stored

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:
            raise RefusedRow("pickled key refused")
        return super().get(key, raw)

    def store(self, value: Any, read: bool, key: Any = None) -> tuple[int, int, None, Any]:
        if isinstance(value, str):
            return 0, MODE_RAW, None, value
        if isinstance(value, bytes):
            return 0, MODE_RAW, None, sqlite3.Binary(value)
        raise TypeError("cache values are JSON text (str) or bytes")

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if mode != MODE_RAW or filename is not None or read:
            raise RefusedRow(f"row of mode {mode} refused (data only)")
        if isinstance(value, (str, bytes)):
            return value
        raise RefusedRow("row value is not text")

    def remove(self, file_path: str) -> None:
        if isinstance(file_path, str) and _SIDE_FILE.fullmatch(file_path):
            super().remove(file_path)


def open_cache(directory: Path, size_limit: int = 2**30) -> diskcache.Cache:
    """The cache in ``directory`` (created user-only), with :class:`DataDisk`.

    Raises what diskcache or the file system raise; callers turn that into "no cache".
    """
    make_private_dirs(directory)
    pinned = {**diskcache.DEFAULT_SETTINGS, "size_limit": size_limit}
    return diskcache.Cache(str(directory), disk=DataDisk, **pinned)


def make_private_dirs(directory: Path) -> None:
    """Create ``directory`` and its missing parents with mode 0700. Only the folders made
    here get that mode: an existing folder (``cacheDir`` set to ``/tmp``, mode 1777, or a
    shared folder) keeps its own; CiteLens never changes the mode of a folder it did not
    create."""
    missing: list[Path] = []
    p = directory
    while not p.exists() and p.parent != p:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:  # made by someone else meanwhile: not ours
            continue
        os.chmod(d, 0o700)  # (mkdir's mode is masked by the umask)


def get_json(cache: diskcache.Cache, key: str) -> Any:
    """The JSON value stored under ``key``; ``None`` for a miss or anything unreadable.

    Database errors (``OSError``, ``sqlite3.Error``, ``diskcache.Timeout``) propagate,
    so the caller can stop using a broken cache.
    """
    raw = cache.get(key)
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(raw, str):
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def set_json(cache: diskcache.Cache, key: str, value: Any, expire: float | None) -> None:
    cache.set(key, json.dumps(value, ensure_ascii=False, separators=(",", ":")), expire=expire)


# --------------------------------------------------------------------------- shape checks


def _conforms(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, h) for h in typing.get_args(hint))
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_conforms(v, item) for v in value)
    if origin is dict:
        k, v = typing.get_args(hint) or (Any, Any)
        return isinstance(value, dict) and all(_conforms(a, k) and _conforms(b, v) for a, b in value.items())
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return isinstance(value, hint) and valid_fields(value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return isinstance(value, hint)
    return isinstance(hint, type) and isinstance(value, hint)


@functools.lru_cache(maxsize=64)  # one row per dataclass stored in the cache
def _field_hints(cls: type) -> tuple[tuple[str, Any], ...]:
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))


def valid_fields(obj: Any) -> bool:
    """Whether every field of the dataclass ``obj`` holds a value of its declared type."""
    cls: type = type(obj)
    for name, hint in _field_hints(cls):
        try:
            value = getattr(obj, name)
        except AttributeError:
            return False
        if not _conforms(value, hint):
            return False
    return True
