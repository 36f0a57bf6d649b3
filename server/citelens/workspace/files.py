"""The documents under a folder: the one walker of ``citelens check FOLDER`` and of the
editor's workspace folders (bibliographies for workspace symbols, citations for
find-references and renames, projects of documents not open).

Hidden folders and the folders of tools (:data:`SKIP_DIRS`: dependencies, virtual
environments, build output) are not entered; ``.sty`` and ``.cls`` files are not documents.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from citelens.core.dockind import ALL_KINDS, DocKind, kind_of

#: Folders never entered (besides hidden ones): dependencies, environments, build output.
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", ".venv", "_build", "build"})

def skipped_folder(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIRS


def files_under(folder: str) -> Iterator[str]:
    """Every file under ``folder`` outside the skipped folders, in name order, normalised."""
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not skipped_folder(d))
        for name in sorted(filenames):
            yield os.path.normpath(os.path.join(dirpath, name))


def documents_under(folder: str, kinds: Iterable[DocKind] = ALL_KINDS) -> Iterator[str]:
    """The documents of ``kinds`` under ``folder``, in name order, as normalised paths."""
    wanted = frozenset(kinds)
    for path in files_under(folder):
        if kind_of(path) in wanted and not path.endswith((".sty", ".cls")):
            yield path
