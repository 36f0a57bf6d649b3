"""Texts and parse results by path: open editor buffers shadow the files on disk.

A parse is reused while its stamp (buffer version, or disk mtime and size) is
unchanged, so a file that changed on disk is re-read the next time it is needed
even when the client sends no ``didChangeWatchedFiles`` (Neovim).
"""

from __future__ import annotations

import os

from citelens.core.model import BibFile, BibProblem, SourceDocument, Span
from citelens.core.text import LineIndex, index_after_edit
from citelens.documents.bibtex.parse import parse_bib, reparse_edit
from citelens.documents.latex import parse_latex
from citelens.documents.markdown import parse_markdown
from citelens.documents.read import kind_of, read_text

Stamp = tuple[object, ...]


class DocumentStore:
    """The one place that reads files; parses are cached per stamp."""

    def __init__(self, extra_cite_commands: tuple[str, ...] = ()) -> None:
        self.extra_cite_commands = extra_cite_commands
        self._buffers: dict[str, tuple[int, str]] = {}
        self._sources: dict[str, tuple[Stamp, SourceDocument]] = {}
        self._bibs: dict[str, tuple[Stamp, BibFile]] = {}
        self._bib_texts: dict[str, str] = {}  # the text each parse in _bibs was made from
        self._texts: dict[str, tuple[Stamp, str]] = {}
        self._lines: dict[str, tuple[Stamp, LineIndex]] = {}
        # the last edit an editor described: (text before, text after, shared prefix, suffix)
        self._edits: dict[str, tuple[str, str, int, int]] = {}

    # ------------------------------------------------------------------ buffers
    def open(self, path: str, text: str, version: int, edit: tuple[str, int, int] | None = None) -> None:
        """The editor's text of ``path``. ``edit``: ``(previous text, start, end)``, the one
        range of the previous text it replaced, when known (then a big .bib and its line
        index are updated without comparing 35 MB of text)."""
        buf = self._buffers.get(path)
        if edit is not None and buf is not None and buf[1] is edit[0]:
            _before, start, end = edit
            self._edits[path] = (buf[1], text, start, len(buf[1]) - end)
        else:
            self._edits.pop(path, None)
        self._buffers[path] = (version, text)

    def close(self, path: str) -> None:
        self._buffers.pop(path, None)

    def is_open(self, path: str) -> bool:
        return path in self._buffers

    def open_paths(self) -> list[str]:
        return list(self._buffers)

    def version(self, path: str) -> int | None:
        buf = self._buffers.get(path)
        return buf[0] if buf else None

    # ------------------------------------------------------------------ reading
    def stamp(self, path: str) -> Stamp | None:
        buf = self._buffers.get(path)
        if buf is not None:
            return ("buffer", buf[0], len(buf[1]), id(buf[1]))
        try:
            st = os.stat(path)
        except OSError:
            return None
        return ("disk", st.st_mtime_ns, st.st_size)

    def exists(self, path: str) -> bool:
        return path in self._buffers or os.path.isfile(path)

    def text(self, path: str) -> str | None:
        buf = self._buffers.get(path)
        if buf is not None:
            return buf[1]
        stamp = self.stamp(path)
        if stamp is None:
            return None
        cached = self._texts.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        try:
            text = read_text(path)
        except OSError:
            return None
        self._texts[path] = (stamp, text)
        return text

    def source(self, path: str) -> SourceDocument | None:
        stamp = self.stamp(path)
        if stamp is None:
            return None
        cached = self._sources.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        text = self.text(path)
        if text is None:
            return None
        if kind_of(path) == "markdown":
            doc = parse_markdown(text, path)
        else:
            doc = parse_latex(text, path, self.extra_cite_commands)
        self._sources[path] = (stamp, doc)
        return doc

    def bib(self, path: str) -> BibFile | None:
        stamp = self.stamp(path)
        if stamp is None:
            return None
        cached = self._bibs.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        text = self.text(path)
        if text is None:
            return None
        try:
            # An edit of a big bibliography re-reads only the entries it touched.
            before = self._bib_texts.get(path)
            bib = (
                reparse_edit(before, cached[1], text, self._edit_span(path, before, text))
                if cached and before is not None
                else None
            ) or parse_bib(text, path)
        except Exception as exc:  # the parser must not raise; never lose the server over it
            bib = BibFile(path, [], [BibProblem(Span(0, 0), f"could not parse: {exc}")])
        self._bibs[path] = (stamp, bib)
        self._bib_texts[path] = text
        return bib

    def line_index(self, path: str) -> LineIndex | None:
        """Offset/position conversion for the current text of ``path``."""
        stamp = self.stamp(path)
        if stamp is None:
            return None
        cached = self._lines.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        text = self.text(path)
        if text is None:
            return None
        index = (
            index_after_edit(cached[1], text, self._edit_span(path, cached[1].text, text))
            if cached
            else LineIndex(text)
        )
        self._lines[path] = (stamp, index)
        return index

    def _edit_span(self, path: str, before: str, after: str) -> tuple[int, int] | None:
        """The shared prefix and suffix of ``before`` and ``after`` if the editor said."""
        known = self._edits.get(path)
        if known is None or known[0] is not before or known[1] is not after:
            return None
        return known[2], known[3]

    def invalidate(self, path: str) -> None:
        self._edits.pop(path, None)
        self._sources.pop(path, None)
        self._bibs.pop(path, None)
        self._bib_texts.pop(path, None)
        self._texts.pop(path, None)
        self._lines.pop(path, None)
