"""The guard that keeps the tests inside the repository: a clone must pass its own tests
with nothing beside it.

An audit hook (:func:`sys.addaudithook`, installed by ``tests/conftest.py``) sees every
file the test process opens or lists, and every program it starts (the paths among its
arguments and its working folder). A path is *outside* when it is neither in the
repository nor in the places any Python program reads (the interpreter and its packages,
the temporary folder, the system's folders, the user's caches), and always when it is
beside the clone (``../shared``, another checkout): that is data a fresh clone does not
have. The one exception is the folder ``CITELENS_BIGBIB`` names (tests/harness.py).

``conftest.py`` fails a test that reads outside (setup, call or teardown) and records
what modules read while they are collected; ``tests/test_architecture.py`` holds both
to nothing and checks that the guard catches a read (it cannot pass vacuously).
"""

from __future__ import annotations

import os
import site
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.harness import BIGBIB_DIR, ROOT

#: Audit events that name a file or folder the process reads (or writes).
WATCHED = frozenset({"open", "os.listdir", "os.scandir", "glob.glob", "subprocess.Popen"})
_SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev",
           "/run", "/var", "/opt", "/snap", "/nix")


def _norm(path: str | Path) -> str:
    return os.path.normpath(os.path.abspath(os.fspath(path)))


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _installed() -> tuple[str, ...]:
    """The interpreter, its packages and every folder on ``sys.path`` outside the clone's
    neighbours (a worktree's venv may point at another checkout's packages)."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(),
             site.getusersitepackages()}
    roots.update(p for p in sys.path if p and os.path.isdir(p))
    # never the clone itself or a folder holding it (that would allow everything beside it)
    return tuple(sorted(r for r in {_norm(r) for r in roots if r} if not _under(_norm(ROOT), r)))


@dataclass(frozen=True)
class Places:
    """Where the test process may read. ``beside``: the clone's parent folder, whose other
    entries are exactly what a fresh clone lacks (when that folder is itself a general
    place, the temporary folder or the home folder, only its ``shared`` is)."""

    root: str
    beside: str
    allowed: tuple[str, ...]
    general: tuple[str, ...]

    def outside(self, path: str | Path) -> bool:
        p = _norm(path)
        if _under(p, self.root) or any(_under(p, a) for a in self.allowed):
            return False
        if self.beside in self.general or self.beside == "/":
            return _under(p, os.path.join(self.beside, "shared"))
        if _under(p, self.beside):
            return True
        return not any(_under(p, g) for g in self.general)


def places(root: Path = ROOT) -> Places:
    """The places of this test run."""
    home = os.path.expanduser("~")
    general = tuple(_norm(g) for g in (tempfile.gettempdir(), home, *_SYSTEM) if g)
    allowed = _installed() + ((_norm(BIGBIB_DIR),) if BIGBIB_DIR is not None else ())
    root_s = _norm(root)
    return Places(root=root_s, beside=_norm(Path(root_s).parent), allowed=allowed,
                  general=general)


def paths_of(event: str, args: tuple[object, ...]) -> list[str]:
    """The paths an audit event names (a program's arguments that are absolute paths)."""
    if event == "subprocess.Popen":
        executable, argv, cwd = [*args, None, None, None][:3]
        names: list[object] = [executable, cwd]
        names += [argv] if isinstance(argv, (str, bytes)) else list(argv or [])
        return [p for p in (_text(n) for n in names) if p and p.startswith("/")]
    first = _text(args[0]) if args else None
    if event in {"os.listdir", "os.scandir"} and first is None and args and args[0] is None:
        return [os.getcwd()]
    return [first] if first else []


def _text(value: object) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
        return _text(value)
    return value if isinstance(value, str) else None


@dataclass
class Recorder:
    """What the process read outside :class:`Places`: into the innermost :meth:`watch`, or,
    with none open, into :attr:`unwatched` (what modules read while they are collected)."""

    where: Places
    unwatched: list[str] = field(default_factory=list)
    stack: list[list[str]] = field(default_factory=list)

    def hook(self, event: str, args: tuple[object, ...]) -> None:
        if event not in WATCHED:
            return
        try:
            found = [f"{event} {p}" for p in paths_of(event, args) if self.where.outside(p)]
        except Exception:  # an audit hook must never break the code it watches
            return
        if found:
            (self.stack[-1] if self.stack else self.unwatched).extend(found)

    @contextmanager
    def watch(self) -> Iterator[list[str]]:
        """The reads outside while the block runs (not seen by an enclosing watch)."""
        seen: list[str] = []
        self.stack.append(seen)
        try:
            yield seen
        finally:
            self.stack.remove(seen)


def install() -> Recorder:
    """A recorder for this process, its hook installed (audit hooks stay for the process)."""
    recorder = Recorder(places())
    sys.addaudithook(recorder.hook)
    return recorder
