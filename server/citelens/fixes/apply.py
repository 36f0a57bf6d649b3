"""``citelens check --fix``: the fixes of a finished check applied to the files.

Every entry with a finding of its verdict gets the first of its fixes
(:func:`~citelens.fixes.rules.entry_fixes`, the same the editor offers) at the chosen level
(``safe``, or ``unsafe`` too): a fix answers a finding, so a correct .bib is left as it is;
the DOI and pages an entry lacks are filled in only with ``add_missing``; with
``unsafe``, a duplicate pair is merged into the entry with more fields. A fix whose edits
overlap one already taken waits for the next run. The files are read again as bytes and
written back in the encoding they were read in (``documents/read.decode``: UTF-8, with its BOM if
it had one, or the file's own encoding; a file whose encoding is uncertain is not edited,
and a character its encoding cannot hold is written as its LaTeX command by the rules),
atomically, with their line endings: edits carry the file's own; a symlinked file's target is
written (the link stays), and a hard-linked file is written in place (every name keeps it).
Nothing is written for ``--diff``: :func:`unified_diff` shows what would change."""

from __future__ import annotations

import codecs
import difflib
import errno
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from citelens.core.codes import Code
from citelens.core.dockind import DocKind, kind_of
from citelens.core.model import BibEntry
from citelens.core.settings import Settings
from citelens.documents.bibtex.edit import TextEdit, apply_edits
from citelens.documents.pdf.read import is_pdf
from citelens.fixes.context import CheckContext
from citelens.fixes.fix import Applicability, Fix
from citelens.fixes.rules import entry_fixes, fixes_for, missing_fields_fix
from citelens.verify.status import Verification
from citelens.workspace.check import CheckResult
from citelens.workspace.store import DocumentStore


@dataclass(frozen=True, slots=True)
class Encoded:
    """A file's text as the check read it, and how to write it back."""

    text: str
    encoding: str  # the codec the store read it with ("utf-8", "iso8859-1", ...)
    bom: bool = False


def read_for_edit(store: DocumentStore, path: str) -> tuple[Encoded | None, str | None]:
    """The text of ``path`` as the check read it (``documents/read.decode``: UTF-8, or the
    file's own encoding), and why it may not be edited (an uncertain encoding)."""
    text = store.text(path)
    if text is None:
        return None, f"{path} was not read"
    encoding, uncertain = store.encoding(path)
    if uncertain is not None:
        return None, f"{os.path.basename(path)} was not changed: {uncertain}"
    try:
        with open(path, "rb") as fh:
            bom = fh.read(3) == codecs.BOM_UTF8
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"
    return Encoded(text, "utf-8" if encoding == "buffer" else encoding, bom), None


@dataclass(frozen=True, slots=True)
class Applied:
    """One fix taken: the entry, the fix's title and what it changed."""

    path: str
    line: int  # 1-based, of the entry in the file before the fix
    key: str
    fix: Fix


@dataclass(slots=True)
class FixRun:
    """The fixes taken, the files' new texts, and what was left out."""

    files: dict[str, Encoded] = field(default_factory=dict)  # as read
    fixed: dict[str, str] = field(default_factory=dict)  # path -> new text (changed files)
    applied: list[Applied] = field(default_factory=list)
    #: fixes not taken because they need ``--unsafe-fixes`` (entry key -> title)
    unsafe_left: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # skipped fixes, refused merges
    #: entries lacking a DOI or pages their paper has, not filled in (no ``--add-missing``)
    missing_left: int = 0


def plan(
    result: CheckResult,
    settings: Settings,
    level: Applicability,
    leave: Mapping[str, str] | None = None,
    *,
    add_missing: bool = False,
) -> FixRun:
    """The fixes of ``result`` at ``level`` and the new texts, nothing written. The files of
    ``leave`` are not edited (the reason is noted): a .bib a Better BibTeX auto-export writes
    is fixed in Zotero (:mod:`citelens.zotero.batch`). A fix answers a finding;
    ``add_missing`` (``--add-missing``) also fills in the DOI and pages entries lack (those
    left are counted in ``missing_left``)."""
    run = FixRun()
    leave = leave or {}
    allowed = {Applicability.SAFE} | ({Applicability.UNSAFE} if level is Applicability.UNSAFE else set())
    bibs = list(dict.fromkeys(e.path for e in result.entries if e.path))
    for path in [p for p in bibs if is_pdf(p) or p in result.printed]:
        run.notes.append(f"{shown_path(path)}: a PDF is never edited (its references were read from it)")
    bibs = [p for p in bibs if not is_pdf(p) and p not in result.printed]
    run.notes += [leave[p] for p in bibs if p in leave]
    bibs = [p for p in bibs if p not in leave]
    for path in bibs:
        enc, why = read_for_edit(result.store, path)
        if enc is not None:
            run.files[path] = enc
        elif why is not None:
            run.notes.append(why)
    projects = [a.project for a in result.analyses]
    verdicts: dict[tuple[str, str], Verification] = {
        k: v for k, v in result.verifications.items() if isinstance(v, Verification)
    }
    ctx = CheckContext(result.store, verdicts, settings, projects)
    taken: dict[str, list[TextEdit]] = {}
    for entry in result.entries:
        if entry.path in run.files and (entry.path, entry.key) in verdicts:
            _entry_fix(run, ctx, taken, entry, allowed, add_missing)
    for f in result.findings:
        if f.code != Code.DUPLICATE_ENTRY or f.path not in run.files or not f.key:
            continue
        merges = [m for m in fixes_for(ctx, f.path, f.code, f.data) if m.edits]
        if not merges:
            unchecked = ctx.citing(f.path, (f.key,)).unchecked
            why = (
                "could not check " + "; ".join(unchecked)
                if unchecked
                else "a paper using only one of the two .bib files would lose its entry"
            )
            run.notes.append(f"{shown_path(f.path)}: {f.key}: duplicate not merged: {why}")
            continue
        if Applicability.UNSAFE not in allowed:
            run.unsafe_left.append((f.key, merges[0].title))
            continue
        _take(run, ctx, taken, f.path, f.key, _best_merge(merges, ctx, f.path))
    for path, edits in taken.items():
        before = ctx.text(path)
        if before is not None:
            run.fixed[path] = apply_edits(before, edits)
    return run


def _entry_fix(
    run: FixRun,
    ctx: CheckContext,
    taken: dict[str, list[TextEdit]],
    entry: BibEntry,
    allowed: set[Applicability],
    add_missing: bool,
) -> None:
    """The first of an entry's fixes at an allowed level, taken (or counted as left)."""
    fixes = [f for f in entry_fixes(ctx, entry.path, entry.key, add_missing=add_missing) if f.edits]
    lacks = "doi" not in entry.fields or "pages" not in entry.fields
    if lacks and not add_missing and missing_fields_fix(ctx, entry.path, entry.key) is not None:
        run.missing_left += 1
    chosen = next((f for f in fixes if f.applicability in allowed), None)
    if chosen is None:
        unsafe = next((f for f in fixes if f.applicability is Applicability.UNSAFE), None)
        if unsafe is not None:
            run.unsafe_left.append((entry.key, unsafe.title))
        return
    _take(run, ctx, taken, entry.path, entry.key, chosen)


def _best_merge(merges: Sequence[Fix], ctx: CheckContext, path: str) -> Fix:
    """The merge keeping the entry with more fields (the docs' preferred direction)."""
    bib = ctx.bib(path)
    sizes = {e.key: len(e.fields) for e in bib.entries} if bib is not None else {}

    def kept(f: Fix) -> int:
        return sizes.get(f.title.rpartition(" ")[2], 0)

    return max(merges, key=kept)


def _take(
    run: FixRun, ctx: CheckContext, taken: dict[str, list[TextEdit]], path: str, key: str, fix: Fix
) -> None:
    """Take ``fix`` unless an edit overlaps one taken, or touches a document whose text on
    disk is not the text it was computed from."""
    for e in fix.edits:
        if e.path not in run.files:
            if kind_of(e.path) is DocKind.BIB:
                run.notes.append(f"{path}: {key}: {fix.title}: skipped ({e.path} not read)")
                return
            enc, why = read_for_edit(ctx.store, e.path)
            if enc is None:
                run.notes.append(f"{path}: {key}: {fix.title}: skipped ({why})")
                return
            run.files[e.path] = enc
        for t in taken.get(e.path, []):
            if (
                e.span.start < t.end and t.start < e.span.end
            ) or e.span.start == t.start == t.end == e.span.end:
                run.notes.append(
                    f"{path}: {key}: {fix.title}: left for the next run (it overlaps another fix)"
                )
                return
    for e in fix.edits:
        taken.setdefault(e.path, []).append(TextEdit(e.span.start, e.span.end, e.new))
    text = ctx.text(path) or ""
    start = min((e.span.start for e in fix.edits if e.path == path), default=0)
    run.applied.append(Applied(path, text.count("\n", 0, start) + 1, key, fix))


def unified_diff(run: FixRun, relative: Callable[[str], str] = lambda p: shown_path(p).lstrip("/")) -> str:
    """What ``run`` would change, as a unified diff of each changed file."""
    out: list[str] = []
    for path, new in sorted(run.fixed.items()):
        old = run.files[path].text
        if old == new:
            continue
        name = relative(path)
        out.extend(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                fromfile=f"a/{name}",
                tofile=f"b/{name}",
            )
        )
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
    return "".join(out)


def write(run: FixRun) -> list[str]:
    """Write the changed files (in their encodings; see :func:`replace_file` for how), and
    the paths written. A file that cannot be written is left as it was, with a note in
    ``run.notes`` saying why."""
    written = []
    for path, new in sorted(run.fixed.items()):
        enc = run.files[path]
        if new == enc.text:
            continue
        data = (codecs.BOM_UTF8 if enc.bom else b"") + new.encode(enc.encoding)
        try:
            replace_file(path, data)
        except OSError as exc:
            run.notes.append(f"{shown_path(path)} was not changed: {exc.strerror or exc}")
            continue
        written.append(path)
    return written


def replace_file(path: str, data: bytes) -> None:
    """Give ``path`` the content ``data``, keeping what the file is to others.

    A symlink is followed: its target is written and the link stays a link (a paper that
    links a shared library keeps following it, and the library is fixed). A file with one
    name is replaced atomically (a new file beside it, renamed over it). A file with other
    hard links is written in place, so every name still shows the same file: the space is
    reserved first (a full disk fails before a byte is changed), and a write that fails
    half way puts the old bytes back."""
    target = os.path.realpath(path)
    st = os.stat(target)
    if st.st_nlink > 1:
        _write_in_place(target, data)
        return
    folder = os.path.dirname(target)
    fd, tmp = tempfile.mkstemp(prefix=".citelens-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, st.st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _write_in_place(target: str, data: bytes) -> None:
    with open(target, "r+b") as fh:
        old = fh.read()
        fd = fh.fileno()
        if len(data) > len(old) and hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(fd, 0, len(data))
            except OSError as exc:  # not supported here: EINVAL / EOPNOTSUPP; a full disk: raise
                if exc.errno not in (errno.EINVAL, errno.EOPNOTSUPP):
                    raise
        try:
            fh.seek(0)
            fh.write(data)
            fh.truncate(len(data))
            fh.flush()
            os.fsync(fd)
        except BaseException:
            fh.seek(0)
            fh.write(old)
            fh.truncate(len(old))
            fh.flush()
            raise


def shown_path(path: str) -> str:
    """``path`` relative to the working directory when it is under it, else as it is."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def summary_lines(run: FixRun, relative: Callable[[str], str] = shown_path) -> Iterable[str]:
    """What was fixed, one line per fix (``refs.bib:12: smith2020: year 2019 -> 2020 [safe]``)."""
    for a in run.applied:
        what = "; ".join(a.fix.changes) or a.fix.title
        yield f"{relative(a.path)}:{a.line}: {a.key}: {what} [{a.fix.applicability.value}]"
