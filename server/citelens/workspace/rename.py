"""Renaming a cite key: which texts change, and whether the new key is acceptable.

Pure functions over the :class:`DocumentStore`; the language server turns the edits into
a ``WorkspaceEdit`` (``lsp/rename.py``). Citations are read by the parsers, which blank
comments and verbatim material first, so a key in a comment is never touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from citelens.core.model import BibEntry, Span
from citelens.documents.bibtex.edit import TextEdit
from citelens.workspace.store import ReadStore

# A key that is valid everywhere it can be cited: BibTeX/biber, \cite{...} and pandoc's
# @key (a word character first; inner punctuation only between word characters).
_VALID_KEY = re.compile(r"\w(?:\w|[:.\-+/](?=\w))*")
# Fields whose value is another entry's key (biblatex and BibTeX cross-references).
_KEY_FIELDS = ("crossref", "xdata", "xref")


class RenameError(ValueError):
    """The rename cannot be done; the message says why, for the user."""


def check_new_key(old: str, new: str, defined: Iterable[str]) -> None:
    """Raise :class:`RenameError` when ``new`` is not a valid key or is already taken."""
    if not new or not _VALID_KEY.fullmatch(new):
        raise RenameError(
            f"'{new}' is not a valid citation key: use letters, digits and _, with : . - + / "
            "only between them (no spaces, commas, braces, quotes or #, % , @)"
        )
    if new == old:
        raise RenameError(f"The key is already '{new}'")
    for key in defined:
        if key == old:
            continue
        if key == new:
            raise RenameError(f"'{new}' already exists: another entry has this key")
        if key.lower() == new.lower():
            raise RenameError(
                f"'{new}' differs from the existing key '{key}' only in case; BibTeX treats "
                "them as the same key"
            )


def _bib_edits(store: ReadStore, path: str, key: str, new: str) -> list[TextEdit]:
    bib = store.bib(path)
    text = store.text(path)
    if bib is None or text is None:
        return []
    out: list[TextEdit] = []
    for entry in bib.entries:
        if entry.key == key:
            out.append(TextEdit(entry.key_span.start, entry.key_span.end, new))
        out.extend(_reference_edits(text, entry, key, new))
    return out


def _reference_edits(text: str, entry: BibEntry, key: str, new: str) -> list[TextEdit]:
    """``crossref = {key}`` and the like in another entry."""
    out = []
    for name in _KEY_FIELDS:
        f = entry.fields.get(name)
        if f is None or f.value.strip() != key:
            continue
        raw = text[f.value_span.start : f.value_span.end]
        at = raw.find(key)
        if at >= 0:
            start = f.value_span.start + at
            out.append(TextEdit(start, start + len(key), new))
    return out


def rename_edits(
    store: ReadStore,
    key: str,
    new: str,
    bib_paths: Iterable[str],
    source_paths: Iterable[str],
) -> dict[str, list[TextEdit]]:
    """Edits renaming ``key`` to ``new`` in the bibliographies and every citation of it
    in ``source_paths`` (the documents of the projects that use those bibliographies)."""
    edits: dict[str, list[TextEdit]] = {}
    for path in dict.fromkeys(bib_paths):
        es = _bib_edits(store, path, key, new)
        if es:
            edits[path] = es
    for path in dict.fromkeys(source_paths):
        doc = store.source(path)
        if doc is None:
            continue
        es = [TextEdit(c.span.start, c.span.end, new) for c in doc.citations if c.key == key]
        if es:
            edits[path] = sorted(es, key=lambda e: e.start)
    return edits


def rename_citation(
    text: str, key_span: Span, new_key: str, others: Sequence[tuple[str, Span]] = ()
) -> TextEdit:
    """Rename the cited key at ``key_span``; when the same citation already cites
    ``new_key`` (``others``: the keys of the citations in the same command), remove
    it with its comma instead of citing the same key twice."""
    if any(k == new_key for k, _ in others):
        before = [s for k, s in others if s.end <= key_span.start]
        after = [s for k, s in others if s.start >= key_span.end]
        if before and re.fullmatch(r"\s*,\s*", text[before[-1].end : key_span.start]):
            return TextEdit(before[-1].end, key_span.end, "")
        if after and re.fullmatch(r"\s*,\s*", text[key_span.end : after[0].start]):
            return TextEdit(key_span.start, after[0].start, "")
    return TextEdit(key_span.start, key_span.end, new_key)
