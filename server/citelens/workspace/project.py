"""Which files make one document, and which bibliographies it uses.

A LaTeX project is its root file (``% !TEX root``, or the file with
``\\documentclass`` that includes this one) and every file reachable through
``\\input``/``\\include``/``\\subfile``/``\\import``; cycles are cut. A Markdown
document is one file whose YAML front matter names its bibliographies.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from citelens.core.dockind import DocKind, kind_of
from citelens.core.model import Reference
from citelens.workspace.store import DocumentStore, ReadStore

MAX_FILES = 2000  # a project larger than this is cut (and says so)


@dataclass(slots=True)
class Project:
    root: str
    files: list[str] = field(default_factory=list)  # source files, root first
    bib_paths: list[str] = field(default_factory=list)  # existing bibliography files
    missing: list[tuple[str, Reference]] = field(default_factory=list)  # (file, reference)
    truncated: bool = False


def _candidates(target: str, bases: list[Path], default_suffix: str) -> list[Path]:
    t = Path(os.path.expanduser(target))
    names = [t] if t.suffix else [t.with_name(t.name + default_suffix), t]
    out: list[Path] = []
    for name in names:
        if name.is_absolute():
            out.append(name)
        else:
            out.extend(b / name for b in bases)
    return out


def resolve(store: ReadStore, target: str, bases: list[Path], suffix: str) -> str | None:
    for cand in _candidates(target, bases, suffix):
        p = os.path.normpath(str(cand))
        if store.exists(p):
            return p
    return None


def _includes_file(store: DocumentStore, root: str, target: str) -> bool:
    seen: set[str] = set()
    stack = [root]
    while stack and len(seen) < MAX_FILES:
        path = stack.pop()
        if path in seen:
            continue
        seen.add(path)
        if path == target:
            return True
        doc = store.source(path)
        if doc is None:
            continue
        bases = [Path(root).parent, Path(path).parent]
        for inc in doc.includes:
            child = resolve(store, inc.target, bases, ".tex")
            if child is not None and child not in seen:
                stack.append(child)
    return False


def _roots_in(store: DocumentStore, directory: Path, memo: dict[str, list[str]] | None) -> list[str]:
    r"""The ``.tex`` files of ``directory`` with a ``\documentclass``, in name order; kept in
    ``memo`` by folder (a check of 1,000 files in one folder read the folder 1,000 times)."""
    key = str(directory)
    if memo is not None and key in memo:
        return memo[key]
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".tex"))
    except OSError:
        names = []
    walls = store.walls  # a venue paper reads no more files than its budget
    if walls is not None and walls.walked_enough(len(names)):
        names = names[: walls.budget.files]
    roots = []
    for name in names:
        c = os.path.normpath(os.path.join(directory, name))
        cdoc = store.source(c)
        if cdoc is not None and cdoc.has_documentclass:
            roots.append(c)
    if memo is not None:
        memo[key] = roots
    return roots


def find_root(
    store: DocumentStore, path: str, stop_at: str | None = None, memo: dict[str, list[str]] | None = None
) -> str:
    """The root file of the project that ``path`` belongs to (``path`` itself if none).
    ``memo``: the roots of each folder, shared by the calls of one check."""
    path = os.path.normpath(path)
    if kind_of(path) is not DocKind.LATEX:
        return path
    doc = store.source(path)
    if doc is None:
        return path
    if doc.magic_root:
        root = resolve(store, doc.magic_root, [Path(path).parent], ".tex")
        if root is not None:
            return root
    if doc.has_documentclass:
        return path
    directory = Path(path).parent
    limit = Path(stop_at) if stop_at else None
    for _ in range(4):  # this folder and up to three parents
        for c in _roots_in(store, directory, memo):
            if c != path and _includes_file(store, c, path):
                return c
        if limit is not None and directory == limit:
            break
        if directory.parent == directory:
            break
        directory = directory.parent
    return path


def build_project(
    store: DocumentStore,
    root: str,
    extra_bibliographies: tuple[str, ...] = (),
    workspace_root: str | None = None,
) -> Project:
    """Walk the includes from ``root`` and resolve every bibliography it names."""
    root = os.path.normpath(root)
    project = Project(root=root)
    seen: set[str] = set()
    stack = [root]
    root_dir = Path(root).parent
    bib_seen: set[str] = set()
    while stack:
        path = stack.pop(0)
        if path in seen:
            continue
        if len(seen) >= MAX_FILES:
            project.truncated = True
            break
        seen.add(path)
        doc = store.source(path)
        if doc is None:
            continue
        project.files.append(path)
        bases = [root_dir, Path(path).parent]
        for inc in doc.includes:
            child = resolve(store, inc.target, bases, ".tex")
            if child is not None and child not in seen and kind_of(child) is DocKind.LATEX:
                stack.append(child)
        for ref in doc.bibliographies:
            bib = resolve(store, ref.target, bases, ".bib")
            if bib is None:
                project.missing.append((path, ref))
            elif bib not in bib_seen:
                bib_seen.add(bib)
                project.bib_paths.append(bib)
    extra_bases = [Path(workspace_root)] if workspace_root else []
    extra_bases.append(root_dir)
    for extra in extra_bibliographies:
        bib = resolve(store, extra, extra_bases, ".bib")
        if bib is not None and bib not in bib_seen:
            bib_seen.add(bib)
            project.bib_paths.append(bib)
    return project


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: compared as real paths, so a .bib reached through a
    symlink (or a symlinked folder) is the file it points to."""
    if os.path.normpath(a) == os.path.normpath(b):
        return True
    return os.path.realpath(a) == os.path.realpath(b)


def uses_bib(project: Project, bib_path: str) -> bool:
    """Whether ``bib_path`` is one of ``project``'s bibliographies (by real path)."""
    target = os.path.realpath(bib_path)
    return any(os.path.realpath(b) == target for b in project.bib_paths)


def projects_using_bib(bib_path: str, projects: Iterable[Project]) -> list[Project]:
    """The projects whose bibliography includes ``bib_path`` (by real path)."""
    return [p for p in projects if uses_bib(p, bib_path)]


def documents_using_bib(bib_path: str, projects: Iterable[Project]) -> list[str]:
    """The source files of the projects whose bibliography includes ``bib_path``: the only
    documents an edit of that .bib may touch when it renames a cite key (merging a
    duplicate, renaming a key). Another project citing the same key with its own .bib
    cites another paper and is left alone. Paths are compared as real paths: a paper
    reaching the .bib through a symlink uses it too."""
    out: dict[str, None] = {}
    for project in projects_using_bib(bib_path, projects):
        out.update(dict.fromkeys(project.files))
    return list(out)
