"""Which documents cite through a .bib: the scope of an edit that renames or removes a
cite key there (merging a duplicate), whether or not the documents are open and whether or
not the folder has a project root marker.

The documents looked at: those of the projects already known (the editor's analysed and
workspace projects), and the folder tree around the .bib: from the nearest folder above
it with a root marker (``.git``, ``latexmkrc``, ``_quarto.yml``, at most three levels up),
else the .bib's own folder (all of it) and its parent's own files. A document counts when
it mentions one of the keys and its project's bibliography is the .bib (``\\bibliography``,
``\\addbibresource``, pandoc's ``bibliography:`` metadata). A document that may cite a key
but cannot be decided (unreadable, or a Markdown document naming no bibliography, which
pandoc may get from the command line or a defaults file) is *unchecked*: a caller that
needs every citation refuses and names it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from citelens.core.dockind import CITING, DocKind, kind_of
from citelens.workspace.files import documents_under
from citelens.workspace.project import Project, build_project, find_root, uses_bib
from citelens.workspace.store import DocumentStore

#: Files or folders that mark a project's top folder.
ROOT_MARKERS = (".git", "latexmkrc", ".latexmkrc", "_quarto.yml", ".hg")
#: How far up a root marker is looked for.
MARKER_LEVELS = 3
#: Documents looked at, at most (a walk that reaches more cannot be sure).
MAX_DOCUMENTS = 5000


@dataclass(frozen=True, slots=True)
class Citing:
    """The documents whose project uses the .bib and mention a key, and those that could
    not be checked (with why)."""

    documents: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()


def _top_folder(bib_dir: str) -> str | None:
    d = bib_dir
    for _ in range(MARKER_LEVELS + 1):
        if any(os.path.exists(os.path.join(d, m)) for m in ROOT_MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None


def nearby_documents(bib_path: str) -> tuple[list[str], bool]:
    """The LaTeX and Markdown documents around ``bib_path`` (see the module's docstring),
    and whether the walk stopped at :data:`MAX_DOCUMENTS`."""
    bib_dir = os.path.dirname(os.path.abspath(bib_path))
    top = _top_folder(bib_dir)
    out: dict[str, None] = {}
    folders = [top] if top is not None else [bib_dir]
    for folder in folders:
        for path in documents_under(folder, CITING):
            out[path] = None
            if len(out) > MAX_DOCUMENTS:
                return list(out), True
    if top is None:
        parent = os.path.dirname(bib_dir)
        try:
            names = sorted(os.listdir(parent)) if parent != bib_dir else []
        except OSError:
            names = []
        for name in names:
            path = os.path.normpath(os.path.join(parent, name))
            if kind_of(path) in CITING and os.path.isfile(path):
                out[path] = None
    return list(out), False


def citing_documents(
    store: DocumentStore,
    bib_path: str,
    keys: Iterable[str],
    projects: Iterable[Project] = (),
    extra_bibliographies: tuple[str, ...] = (),
) -> Citing:
    """The documents that may cite one of ``keys`` through ``bib_path``: of the known
    ``projects`` and around the .bib."""
    wanted = [k for k in keys if k]
    candidates: dict[str, None] = {}
    using: set[str] = set()
    for p in projects:
        if uses_bib(p, bib_path):
            using.update(p.files)
            candidates.update(dict.fromkeys(p.files))
    near, truncated = nearby_documents(bib_path)
    candidates.update(dict.fromkeys(near))
    documents: list[str] = []
    unchecked: list[str] = []
    if truncated:
        unchecked.append(f"{os.path.dirname(bib_path)} (more than {MAX_DOCUMENTS} documents around it)")
    roots: dict[str, Project] = {}
    for path in candidates:
        text = store.text(path)
        if text is None:
            if os.path.exists(path):
                unchecked.append(f"{path} (not read)")
            continue
        if not any(k in text for k in wanted):
            continue
        doc = store.source(path)
        if doc is None or not any(c.key in wanted for c in doc.citations):
            continue  # the key in a comment, in prose, in another word: no citation
        if path in using:
            documents.append(path)
            continue
        root = find_root(store, path)
        project = roots.get(root)
        if project is None:
            project = roots[root] = build_project(store, root, extra_bibliographies)
        if uses_bib(project, bib_path):
            documents.append(path)
        elif kind_of(path) is DocKind.MARKDOWN and not project.bib_paths and not project.missing:
            unchecked.append(
                f"{path} (names no bibliography: pandoc may be given {os.path.basename(bib_path)})"
            )
    return Citing(tuple(documents), tuple(unchecked))
