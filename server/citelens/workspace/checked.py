"""A writer's word: an entry marked as checked, for one code or all, is not reported again
while it stays as it was checked (ruff's ``# noqa``, LTeX+'s "hide false positive").

Two places say it, both read by the editor and by ``citelens check``:

- a comment on the line right before the entry in the ``.bib`` (BibTeX, biber and
  bibtexparser ignore text outside entries, and every CiteLens edit touches one entry's
  span, so the line stays)::

      % citelens: checked NOT_FOUND 2026-11-27 #a1b2c3
      @article{dempster1977, ...

  ``ALL`` for every code, several codes with commas (``NOT_FOUND,METADATA_MISMATCH``), the
  date for the reader; ``#a1b2c3`` is the entry's fingerprint (:func:`fingerprint`: its
  title, authors and DOI) when it was checked: an entry whose title, authors or DOI change
  since is checked again. A mark without a fingerprint holds whatever the entry becomes.
- a project file, ``.citelens.toml`` (or ``[tool.citelens]`` of ``pyproject.toml``) in the
  project's folder or a folder above it::

      [checked]
      dempster1977 = ["NOT_FOUND"]            # this code, whatever the entry becomes
      smith2021 = ["ALL #a1b2c3"]             # every code, while the entry is unchanged

Only findings about an entry are marked (codes in :data:`MARKABLE`): a syntax error, an
undefined key or a key defined twice is never hidden.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from citelens.core.accents import strip_accents
from citelens.core.codes import Code
from citelens.core.dockind import DocKind, kind_of
from citelens.core.findings import Finding
from citelens.core.model import BibEntry, EntryView
from citelens.core.titles import normalize_title
from citelens.documents.bibtex.edit import TextEdit

if TYPE_CHECKING:
    from citelens.workspace.index import Analysis

#: Every code (``% citelens: checked ALL``).
ALL = "ALL"

#: The codes a mark can hide: findings about one entry, in its .bib or at its citations.
MARKABLE = frozenset(
    {
        Code.NOT_FOUND,
        Code.DOI_MISMATCH,
        Code.METADATA_MISMATCH,
        Code.DUPLICATE_ENTRY,
        Code.UNVERIFIED,
        Code.RETRACTED,
        Code.EXPRESSION_OF_CONCERN,
        Code.CORRECTION,
        Code.UNUSED_ENTRY,
        Code.CLAIM_CONTRADICTED,
        Code.CLAIM_UNSUPPORTED,
    }
)

PROJECT_FILE = ".citelens.toml"
#: Every mark holds these words (a file without them has no mark).
MARK_WORD = "citelens:"

_MARK = re.compile(
    r"^[ \t]*%[ \t]*citelens:[ \t]*checked[ \t]+(?P<codes>[A-Za-z_]+(?:[ \t]*,[ \t]*[A-Za-z_]+)*)"
    r"(?:[ \t]+(?P<date>\d{4}-\d{2}-\d{2}))?(?:[ \t]+#(?P<fp>[0-9a-f]{6,40}))?[ \t]*$"
)
#: How far before an entry its marks are looked for (a few comment lines), and the short
#: look that decides whether to look that far (no '%' just before it: no mark).
_LOOK_BACK = 1024
_GLANCE = 160


@dataclass(frozen=True, slots=True)
class Mark:
    codes: frozenset[str]  # Code values, or ALL
    fingerprint: str = ""  # "" holds whatever the entry becomes

    def covers(self, code: str, current: str) -> bool:
        """This mark hides ``code`` for an entry whose fingerprint is ``current`` now."""
        if self.fingerprint and self.fingerprint != current:
            return False
        return ALL in self.codes or code in self.codes


def fingerprint(view: EntryView, digits: int = 6) -> str:
    """Six hex digits (``digits``) of the entry's title, authors (last names) and DOI, as
    read (accents, case, braces and punctuation do not count): a new title, author or DOI
    changes it. A venue's cleared file uses 16 (``venue/cleared.py``)."""
    authors = ";".join(strip_accents(n.last).casefold() for n in view.authors)
    doi = (view.doi or "").strip().casefold()
    text = "\n".join((normalize_title(view.title or ""), authors, doi))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:digits]


def parse_mark(line: str) -> Mark | None:
    """The mark a comment line holds, or None."""
    m = _MARK.match(line)
    if m is None:
        return None
    codes = frozenset(c.strip().upper() for c in m.group("codes").split(","))
    return Mark(codes, m.group("fp") or "")


def marks_before(before: str) -> list[Mark]:
    """The marks on the comment lines right before an entry: ``before`` is the text that
    precedes its ``@`` (the lines above it, up to the first line that is not a comment)."""
    lines = before.split("\n")
    if lines and lines[-1].strip():  # something else on the entry's own line: no mark
        return []
    out = []
    for line in reversed(lines[:-1]):
        line = line.rstrip("\r")
        if not line.lstrip().startswith("%"):
            break
        mark = parse_mark(line)
        if mark is not None:
            out.append(mark)
    return out


def mark_line(codes: Iterable[str], date: str, view: EntryView | None) -> str:
    """``% citelens: checked NOT_FOUND 2026-11-27 #a1b2c3`` (without a line break)."""
    fp = f" #{fingerprint(view)}" if view is not None else ""
    return f"% citelens: checked {','.join(codes)} {date}{fp}"


def mark_edit(
    text: str, entry: BibEntry, codes: Iterable[str], date: str, view: EntryView | None
) -> TextEdit:
    """The edit that marks ``entry`` as checked for ``codes``: one line before it, in the
    file's line endings, or the mark line right above it rewritten (its codes kept while
    the entry is the one it was checked as). Nothing else of the file changes."""
    start = entry.span.start
    line_start = text.rfind("\n", 0, start) + 1
    crlf = text[max(0, line_start - 2) : line_start] == "\r\n"
    eol = "\r\n" if crlf or (line_start == 0 and "\r\n" in text[: 1 << 16]) else "\n"
    wanted = list(dict.fromkeys(codes))
    if text[line_start:start].strip():  # another entry's end on the same line: a line of its own
        return TextEdit(start, start, eol + mark_line(wanted, date, view) + eol)
    above_end = line_start - (2 if crlf else 1)
    above_start = text.rfind("\n", 0, max(0, above_end)) + 1
    old = parse_mark(text[above_start:above_end]) if above_end > 0 else None
    if old is not None:
        current = fingerprint(view) if view is not None else ""
        if not old.fingerprint or old.fingerprint == current:
            wanted = [ALL] if ALL in old.codes or ALL in wanted else sorted(old.codes | set(wanted))
        return TextEdit(above_start, above_end, mark_line(wanted, date, view))
    return TextEdit(line_start, line_start, mark_line(wanted, date, view) + eol)


# ----------------------------------------------------------------------------- project file

#: A project file larger than this is not read (a real one is a few lines).
MAX_PROJECT_FILE_BYTES = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


class ProjectFileError(Exception):
    """A project file that cannot be read: one line naming it and saying why."""


@dataclass(frozen=True, slots=True)
class ProjectFile:
    """A project file read: its ``[checked]`` marks by key, or why it was not read."""

    path: str
    marks: Mapping[str, list[Mark]]
    problem: str | None = None  # one line: "…/.citelens.toml: not read: …"


def project_file(folder: str) -> str | None:
    """The ``.citelens.toml``, or the ``pyproject.toml`` that mentions ``tool.citelens``, of
    ``folder`` or the nearest folder above it; None when there is none."""
    here = os.path.abspath(folder)
    while True:
        own = os.path.join(here, PROJECT_FILE)
        if os.path.lexists(own):
            return own
        py = os.path.join(here, "pyproject.toml")
        if os.path.isfile(py) and _mentions_citelens(py):
            return py
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def _mentions_citelens(path: str) -> bool:
    try:
        return "tool.citelens" in _read(path)
    except ProjectFileError:
        return False  # a pyproject.toml that cannot be read is not ours to complain about


def _read(path: str) -> str:
    """The text of a project file: a regular file of at most 1 MB, in UTF-8, opened as
    every input is (``documents/read.py``: non-blocking, checked again once open), or
    :class:`ProjectFileError`."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise ProjectFileError(f"cannot read it ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ProjectFileError("not a regular file")
        if st.st_size > MAX_PROJECT_FILE_BYTES:
            raise ProjectFileError(f"larger than {MAX_PROJECT_FILE_BYTES >> 20} MB")
        data = os.read(fd, MAX_PROJECT_FILE_BYTES + 1)
    except OSError as exc:
        raise ProjectFileError(f"cannot read it ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > MAX_PROJECT_FILE_BYTES:
        raise ProjectFileError(f"larger than {MAX_PROJECT_FILE_BYTES >> 20} MB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProjectFileError(f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def _table(data: object, *names: str) -> dict[str, object] | None:
    """``data[names[0]][names[1]]…`` when each is a table; None when one is missing or not a
    table (``tool = "x"``)."""
    for name in names:
        if not isinstance(data, dict):
            return None
        data = data.get(name)
    return data if isinstance(data, dict) else None


def load_project_file(path: str) -> ProjectFile:
    """The ``[checked]`` table of a project file: key -> marks ("CODE" or "CODE #fp" each).
    TOML is data, never executed; a file that cannot be read or is not valid TOML (too
    big, not a regular file, nested past the parser's depth, a ``tool`` that is not a
    table) marks nothing and says why in one line (``problem``); the checks go on."""
    try:
        data = tomllib.loads(_read(path))
    except ProjectFileError as exc:
        return ProjectFile(path, {}, f"{path}: not read: {exc}")
    except tomllib.TOMLDecodeError as exc:
        return ProjectFile(path, {}, f"{path}: not read: not valid TOML ({exc})")
    except RecursionError:
        return ProjectFile(path, {}, f"{path}: not read: nested too deep")
    if os.path.basename(path) == "pyproject.toml":
        section = _table(data, "tool", "citelens")
        if section is None:
            return ProjectFile(path, {})  # "tool.citelens" only in a comment or a string
        data = section
    table = _table(data, "checked") or {}
    out: dict[str, list[Mark]] = {}
    for key, values in table.items():
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, str):
                mark = parse_mark(f"% citelens: checked {value}")
                if mark is not None:
                    out.setdefault(str(key), []).append(mark)
    return ProjectFile(path, out)


# ----------------------------------------------------------------------------- filtering


def hide_marked(
    findings: list[Finding],
    analyses: Sequence[Analysis],
    text_slice: Callable[[str, int, int], str],
    view_of: Callable[[BibEntry, Analysis], EntryView | None],
    project_marks: Callable[[Analysis], Mapping[str, list[Mark]]],
    has_marks: Callable[[str], bool] = lambda _path: True,
) -> list[Finding]:
    """``findings`` without those a mark hides (the editor's and ``citelens check``'s one
    filter). A mark belongs to its entry, a .bib file and a key, never to a key name: each
    markable finding's entry is the definition of its key in its own .bib (the ``bib`` its
    data names, or the .bib it is in), or, at a citation, in the project of the document it
    is in; two papers' different ``smith2020`` are two entries, and a mark on one never
    hides the other's finding. Its marks are the comment lines before it (read through
    ``text_slice``, the store's ``slice``) and its project's file (``project_marks``); a
    mark with a fingerprint holds only while the entry's (``view_of``) is the same.
    ``has_marks``: whether a .bib may hold a mark at all (``citelens check`` looks once per
    file, so 68,000 findings of a library without one cost a dictionary lookup each)."""
    projects = [(a, a.first) for a in analyses]
    by_project: dict[int, Mapping[str, list[Mark]]] = {}
    #: (its .bib or its document, key) -> (its marks, the entry's fingerprint now)
    memo: dict[tuple[str, str], tuple[list[Mark], str]] = {}
    out = []
    for f in findings:
        key = f.key
        if not key or f.code not in MARKABLE:
            out.append(f)
            continue
        bib = f.data.get("bib")
        if not isinstance(bib, str):
            bib = f.path if kind_of(f.path) is DocKind.BIB else None
        place = (bib if bib is not None else f.path, key)
        got = memo.get(place)
        if got is None:
            got = memo[place] = _NO_MARKS
            owner = _owner(projects, key, bib, f.path)
            if owner is not None:
                entry, analysis = owner
                marks = _marks_at(text_slice, entry.path, entry.span.start) if has_marks(entry.path) else []
                project = by_project.get(id(analysis))
                if project is None:
                    project = by_project[id(analysis)] = project_marks(analysis)
                marks += project.get(key, ())
                if marks:
                    view = view_of(entry, analysis) if any(m.fingerprint for m in marks) else None
                    got = memo[place] = (marks, fingerprint(view) if view is not None else "")
        marks, current = got
        if marks and any(m.covers(f.code, current) for m in marks):
            continue
        out.append(f)
    return out


def _owner(
    projects: Sequence[tuple[Analysis, Mapping[str, BibEntry]]], key: str, bib: str | None, path: str
) -> tuple[BibEntry, Analysis] | None:
    """The entry a finding about ``key`` is about, and a project that reads it: the
    definition in ``bib`` when the finding names its .bib, else the definition the project
    of the document ``path`` uses. None when no project has it."""
    for analysis, first in projects:
        entry = first.get(key)
        if bib is None:
            if entry is not None and path in analysis.sources:
                return entry, analysis
        elif entry is not None and entry.path == bib:
            return entry, analysis
    if bib is None:
        return None
    for analysis, _first in projects:  # a later definition in its .bib (a duplicate key)
        for b in analysis.bibs:
            if b.path == bib:
                entry = next((e for e in b.entries if e.key == key), None)
                if entry is not None:
                    return entry, analysis
    return None


_NO_MARKS: tuple[list[Mark], str] = ([], "")


def _marks_at(text_slice: Callable[[str, int, int], str], path: str, start: int) -> list[Mark]:
    """The marks before the entry at ``start``: a glance at the text just before it first
    (68,000 entries with a finding each cost a short slice, not a kilobyte each)."""
    glance = text_slice(path, max(0, start - _GLANCE), start)
    if "%" not in glance:
        return []
    return marks_before(text_slice(path, max(0, start - _LOOK_BACK), start))


def project_file_of(analysis: Analysis) -> ProjectFile | None:
    """The project file of a project, read now (``citelens check`` reads once), or None."""
    path = project_file(os.path.dirname(analysis.project.root))
    return load_project_file(path) if path is not None else None
