"""The cache's secret: what makes a cached answer one CiteLens wrote.

Every verification cache row carries an HMAC-SHA256 of its lookup key and content under a
secret (:func:`row_mac`). Someone who can write the cache but not read the secret cannot
make a row that passes, even knowing the format. The secret is

* the ``cacheKey`` setting (``CITELENS_CACHE_KEY``) when set: required for the shared
  PostgreSQL cache (every machine of the cluster is given the same key), and the way to
  share a disk cache (a CI cache restored on another machine);
* else a random 32-byte secret in the file ``secret.key`` of the cache directory, created
  with mode 0600 on first use. A file there that is not a regular file owned by this user
  with no group or other permission is refused (the cache is then not used).

The secret never appears in a log line, a message or a key.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

SECRET_FILE = "secret.key"
_SECRET_BYTES = 32
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


class SecretError(OSError):
    """The cache's secret cannot be read or made; the message names the file, never the key."""


def from_setting(value: str) -> bytes:
    """The secret a ``cacheKey`` setting gives (any text; use 32 random bytes or more)."""
    return hashlib.sha256(b"citelens-cache-key\n" + value.encode("utf-8")).digest()


def load_or_create(directory: Path) -> bytes:
    """The secret of the cache in ``directory``: read from ``secret.key``, or made there
    (mode 0600, created exclusively: a file someone else made first is read, and checked)."""
    path = directory / SECRET_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return _read(path)
    except OSError as exc:
        raise SecretError(f"cannot create {path} ({exc.strerror or exc})") from None
    try:
        os.write(fd, secrets.token_hex(_SECRET_BYTES).encode("ascii"))
    finally:
        os.close(fd)
    return _read(path)


def _read(path: Path) -> bytes:
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise SecretError(f"cannot read {path} ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SecretError(f"{path} is not a regular file")
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise SecretError(f"{path} belongs to another user")
        if st.st_mode & 0o077:
            raise SecretError(f"{path} may be read or written by others (mode {st.st_mode & 0o777:o})")
        data = os.read(fd, 4096).strip()
    finally:
        os.close(fd)
    if len(data) < _SECRET_BYTES:
        raise SecretError(f"{path} is too short to be a secret")
    return hashlib.sha256(b"citelens-cache-file\n" + data).digest()


def row_mac(secret: bytes, key: str, content: str) -> str:
    """HMAC-SHA256 of a row's lookup key and content text under the cache's secret."""
    return hmac.new(secret, f"{key}\n{content}".encode(), hashlib.sha256).hexdigest()


def same(a: object, b: str) -> bool:
    """``a`` is the MAC ``b`` (compared in constant time)."""
    return isinstance(a, str) and hmac.compare_digest(a, b)
