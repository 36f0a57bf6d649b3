"""A venue paper's walls and budget: what its check may read, and how much.

A venue (``citelens check FOLDER --venue OUT``) checks papers someone else wrote. Each
paper's check reads only inside its own folder (a paper that is one file: inside the venue
folder), however it gets there: a paper folder that is a symlink, a symlinked file, an
absolute or ``..`` path in ``\\bibliography``, ``\\input``, ``\\addbibresource``. And each
paper has a budget (:class:`Budget`: files, bytes, seconds of reading); a paper over it is
checked as far as the budget goes and reported "not fully checked: …", never skipped
silently and never holding up the other papers.

:class:`PaperWalls` is asked by the paper's ``DocumentStore`` before every file it reads
(``DocumentStore.walls``). :func:`paper_names` gives each paper a unique, stable report
name.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from citelens.core.settings import Settings

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_HASHED = re.compile(r"-[0-9a-f]{10}\Z")
#: Longest report name kept from a folder's name (file systems allow 255 bytes).
MAX_NAME = 80


@dataclass(frozen=True, slots=True)
class Budget:
    """What one paper's check may read."""

    files: int = 2_000  # document files (.tex, .bib, .md, .bbl) read
    bytes: int = 64 << 20  # their total size
    seconds: float = 300.0  # time spent reading and parsing them


def budget_of(settings: Settings) -> Budget:
    """The budget the settings give each venue paper."""
    return Budget(
        files=max(1, settings.venue_paper_max_files),
        bytes=max(1, int(settings.venue_paper_max_mb * (1 << 20))),
        seconds=max(0.0, settings.venue_paper_max_seconds),
    )


def paper_names(names: Iterable[str]) -> dict[str, str]:
    """A report name for each folder or file name: the name itself when it is already safe
    as a file name (letters, digits, ``.``, ``_``, ``-``), else its safe letters plus a
    short hash of the whole name (``paper one`` -> ``paper_one-<hash>``, ``論文`` ->
    ``paper-<hash>``). Unique: a kept name never ends like a hashed one (such a name is
    hashed too), and two names equal but for case (one file on macOS or Windows) are
    hashed. Stable: the same names give the same report names on every run."""
    names = list(dict.fromkeys(names))
    folded: dict[str, int] = {}
    for n in names:
        folded[n.lower()] = folded.get(n.lower(), 0) + 1
    out: dict[str, str] = {}
    for n in names:
        safe = _SAFE.fullmatch(n) is None and n not in (".", "..") and len(n) <= MAX_NAME
        if safe and not _HASHED.search(n) and folded[n.lower()] == 1:
            out[n] = n
        else:
            slug = _SAFE.sub("_", n).strip("._")[:MAX_NAME] or "paper"
            out[n] = f"{slug}-{hashlib.sha256(n.encode('utf-8', 'surrogateescape')).hexdigest()[:10]}"
    return out


def inside(path: str, root: str) -> bool:
    """The real path of ``path`` is ``root`` (a real path) or under it."""
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(slots=True)
class PaperWalls:
    """The walls and the budget of one paper's check; :meth:`refuse` is asked before each
    read. ``notes``: why the paper was not fully checked, each reason once."""

    roots: tuple[str, ...]  # real paths the check may read under
    budget: Budget = field(default_factory=Budget)
    allowed: frozenset[str] = frozenset()  # files outside the roots the user named (settings)
    clock: Callable[[], float] = time.monotonic
    started: float = 0.0
    waited: float = 0.0  # seconds spent waiting for a shared PDF reader (not the paper's)
    files: int = 0
    bytes: int = 0
    notes: dict[str, None] = field(default_factory=dict)
    _read: set[str] = field(default_factory=set)
    _folders: dict[str, str] = field(default_factory=dict)  # folder -> its real path

    def __post_init__(self) -> None:
        self.started = self.clock()

    def note(self, why: str) -> None:
        self.notes.setdefault(why, None)

    def refuse(self, path: str, size: int) -> str | None:
        """Why ``path`` (``size`` bytes) must not be read, or None (then it is counted)."""
        if path in self._read:
            return None
        if self.files >= self.budget.files:
            self.note(f"more than {self.budget.files:,} files; the rest were not read")
            return f"over the paper's budget of {self.budget.files:,} files"
        if self.bytes + size > self.budget.bytes:
            mb = f"{self.budget.bytes / (1 << 20):.3g} MB"
            self.note(f"more than {mb} of files; the rest were not read")
            return f"over the paper's budget of {mb}"
        if self.elapsed() > self.budget.seconds:
            self.note(f"reading took more than {self.budget.seconds:g} s; the rest were not read")
            return f"over the paper's budget of {self.budget.seconds:g} s"
        if path not in self.allowed and not self._inside(path):
            self.note("it names files outside its folder, which were not read")
            return "outside the paper's folder: not read"
        self._read.add(path)
        self.files += 1
        self.bytes += size
        return None

    def _inside(self, path: str) -> bool:
        """The real path of ``path`` is under one of the roots (a folder's real path is
        found once: a paper of 2,000 files in one folder resolves it once, not 2,000 times)."""
        if os.path.islink(path):
            real = os.path.realpath(path)
        else:
            folder, name = os.path.split(os.path.abspath(path))
            real_folder = self._folders.get(folder)
            if real_folder is None:
                real_folder = self._folders[folder] = os.path.realpath(folder)
            real = os.path.join(real_folder, name)
        return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots)

    def elapsed(self) -> float:
        """Seconds the paper's check has spent, less the time it waited for a PDF reader the
        whole venue shares (``pdfReaders``): a paper is not over its budget for waiting."""
        return self.clock() - self.started - self.waited

    def seconds_left(self) -> float:
        """What is left of the paper's time budget (negative: over it); a PDF's reading is
        stopped then (``workspace/pdfs.py``)."""
        return self.budget.seconds - self.elapsed()

    def walked_enough(self, seen: int) -> bool:
        """A walk of the paper's folder that has seen ``seen`` files may stop: more than
        the paper may read (noted)."""
        if seen > self.budget.files:
            self.note(f"more than {self.budget.files:,} files; the rest were not read")
            return True
        return False


def walls_for(paper_path: str, venue: str, budget: Budget, allowed: Iterable[str] = ()) -> PaperWalls | str:
    """The walls of a paper (a folder, or a document directly in the venue folder ``venue``),
    or why it is not checked at all (a symlink out of the venue)."""
    root = os.path.realpath(venue)
    if not inside(paper_path, root):
        return "not checked: it is a link to a place outside the venue folder"
    own = os.path.realpath(paper_path) if os.path.isdir(paper_path) else root
    return PaperWalls((own,), budget, frozenset(os.path.abspath(a) for a in allowed))
