"""Texts and parse results by path: open editor buffers shadow the files on disk.

A parse is reused while its stamp (buffer version, or disk mtime and size) is
unchanged, so a file that changed on disk is re-read the next time it is needed
even when the client sends no ``didChangeWatchedFiles`` (Neovim).

A big buffer edited by the client is kept as an ``EditedText`` (``core/text.py``): the
incremental parse and the line index read it in pieces; :meth:`DocumentStore.text` joins
it into one string only for a reader that needs it whole.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from citelens.core.dockind import DocKind, kind_of
from citelens.core.model import BibFile, BibProblem, SourceDocument, Span
from citelens.core.text import EditedText, LineIndex, as_str, index_after_edit
from citelens.documents.bibtex.parse import parse_bib, reparse_edit
from citelens.documents.latex import parse_latex
from citelens.documents.markdown import parse_markdown
from citelens.documents.read import can_write, not_regular, read_decoded

if TYPE_CHECKING:
    from citelens.workspace.walls import PaperWalls

Stamp = tuple[object, ...]
Text = str | EditedText


class ReadStore(Protocol):
    """What a reader asks of the documents (:class:`DocumentStore`'s reads): the editor's
    handlers and the functions that only read take this, never the store that changes."""

    def is_open(self, path: str) -> bool: ...
    def version(self, path: str) -> int | None: ...
    def stamp(self, path: str) -> Stamp | None: ...
    def exists(self, path: str) -> bool: ...
    def text(self, path: str) -> str | None: ...
    def encoding(self, path: str) -> tuple[str, str | None]: ...
    def edit_refusal(self, path: str, new_texts: list[str]) -> str | None: ...
    def source(self, path: str) -> SourceDocument | None: ...
    def bib(self, path: str) -> BibFile | None: ...
    def line_index(self, path: str) -> LineIndex | None: ...


class DocumentStore:
    """The one place that reads files; parses are cached per stamp."""

    def __init__(self, extra_cite_commands: tuple[str, ...] = (), file_encoding: str | None = None) -> None:
        self.extra_cite_commands = extra_cite_commands
        #: the encoding the user set for files that are not UTF-8 (``fileEncoding``)
        self.file_encoding = file_encoding
        self._buffers: dict[str, tuple[int, Text]] = {}
        self._sources: dict[str, tuple[Stamp, SourceDocument]] = {}
        self._bibs: dict[str, tuple[Stamp, BibFile]] = {}
        self._bib_texts: dict[str, Text] = {}  # the text each parse in _bibs was made from
        self._texts: dict[str, tuple[Stamp, str]] = {}
        # how each text in _texts was decoded: (encoding, why it is uncertain or None)
        self._encodings: dict[str, tuple[str, str | None]] = {}
        self._lines: dict[str, tuple[Stamp, LineIndex]] = {}
        # the last edit an editor described: (text before, text after, shared prefix, suffix)
        self._edits: dict[str, tuple[Text, Text, int, int]] = {}
        #: files not read, and why (a FIFO, a device, too big); ``on_skip`` hears of each once
        self.skipped: dict[str, str] = {}
        self.on_skip: Callable[[str, str], None] | None = None
        #: a venue paper's walls and budget, asked before each file is read (None: any file)
        self.walls: PaperWalls | None = None

    # ------------------------------------------------------------------ buffers
    def open(
        self,
        path: str,
        text: Text,
        version: int,
        edit: tuple[Text, int, int] | None = None,
        index: LineIndex | None = None,
    ) -> None:
        """The editor's text of ``path``. ``edit``: ``(previous text, start, end)``, the one
        range of the previous text it replaced, when known (then a big .bib and its line
        index are updated without comparing 35 MB of text). ``index``: the line index of
        ``text`` if the caller has one (the text sync keeps one for a big document)."""
        buf = self._buffers.get(path)
        if edit is not None and buf is not None and buf[1] is edit[0]:
            _before, start, end = edit
            self._edits[path] = (buf[1], text, start, len(buf[1]) - end)
        else:
            self._edits.pop(path, None)
        self._buffers[path] = (version, text)
        if index is not None and index.text is text:
            self._lines[path] = (self._buffer_stamp(version, text), index)

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
    @staticmethod
    def _buffer_stamp(version: int, text: Text) -> Stamp:
        return ("buffer", version, len(text), id(text))

    def stamp(self, path: str) -> Stamp | None:
        buf = self._buffers.get(path)
        if buf is not None:
            return self._buffer_stamp(*buf)
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device: never read (say why once)
            self._skip(path, not_regular(path) or "not a regular file")
            return None
        return ("disk", st.st_mtime_ns, st.st_size)

    def _skip(self, path: str, why: str) -> None:
        if self.skipped.get(path) != why:
            self.skipped[path] = why
            if self.on_skip is not None:
                self.on_skip(path, why)

    def exists(self, path: str) -> bool:
        return path in self._buffers or os.path.isfile(path)

    def text(self, path: str) -> str | None:
        """The whole text of ``path`` (an edited buffer is joined into one string)."""
        raw = self._raw(path)
        return None if raw is None else as_str(raw)

    def slice(self, path: str, start: int, end: int) -> str:
        """``text(path)[start:end]``, without joining an edited buffer."""
        raw = self._raw(path)
        return "" if raw is None else raw[start:end]

    def raw_text(self, path: str) -> Text | None:
        """The text of ``path`` as kept: an edited big buffer stays an ``EditedText`` (read
        it in slices; ``str()`` joins it)."""
        return self._raw(path)

    def _raw(self, path: str) -> Text | None:
        buf = self._buffers.get(path)
        if buf is not None:
            return buf[1]
        stamp = self.stamp(path)
        if stamp is None:
            return None
        cached = self._texts.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        if self.walls is not None:
            size = stamp[2]
            refused = self.walls.refuse(path, size if isinstance(size, int) else 0)
            if refused is not None:
                self._skip(path, refused)
                return None
        decoded, why = read_decoded(path, self.file_encoding)
        if why is not None:
            self._skip(path, why)
        if decoded is None:
            return None
        self._texts[path] = (stamp, decoded.text)
        self._encodings[path] = (decoded.encoding, decoded.uncertain)
        return decoded.text

    def set_file_encoding(self, name: str | None) -> None:
        """A new ``fileEncoding``: every file read from disk is read again."""
        if name != self.file_encoding:
            self.file_encoding = name
            for path in list(self._texts):
                self.invalidate(path)

    def encoding(self, path: str) -> tuple[str, str | None]:
        """How the text of ``path`` was read: ``(encoding, why it is uncertain or None)``;
        an open buffer is the editor's own text (``("buffer", None)``)."""
        if path in self._buffers:
            return "buffer", None
        if self._raw(path) is None:
            return "utf-8", None
        return self._encodings.get(path, ("utf-8", None))

    def edit_refusal(self, path: str, new_texts: list[str]) -> str | None:
        """Why no edit of ``path`` inserting ``new_texts`` may be made, or None: a file read
        from disk in an uncertain encoding, or one whose encoding cannot hold a new text
        (an editor reading it in that encoding would place the edit elsewhere, or lose
        characters). The message names the file."""
        encoding, uncertain = self.encoding(path)
        name = os.path.basename(path)
        if uncertain is not None:
            return f"{name} was not changed: {uncertain} (or open it in the editor first)"
        if encoding not in ("buffer", "utf-8"):
            for new in new_texts:
                if not can_write(new, encoding):
                    return f"{name} was not changed: its encoding ({encoding}) cannot hold {new!r}"
        return None

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
        if kind_of(path) is DocKind.MARKDOWN:
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
        text = self._raw(path)
        if text is None:
            return None
        try:
            # An edit of a big bibliography re-reads only the entries it touched.
            before = self._bib_texts.get(path)
            bib = (
                self._reparse(path, before, cached[1], text) if cached and before is not None else None
            ) or parse_bib(as_str(text), path)
        except Exception as exc:  # the parser must not raise; never lose the server over it
            bib = BibFile(path, [], [BibProblem(Span(0, 0), f"could not parse: {exc}")])
        self._bibs[path] = (stamp, bib)
        self._bib_texts[path] = text
        return bib

    def _reparse(self, path: str, before: Text, old: BibFile, text: Text) -> BibFile | None:
        span = self._edit_span(path, before, text)
        if span is None:  # the texts are compared: whole strings
            before, text = as_str(before), as_str(text)
        return reparse_edit(before, old, text, span)

    def line_index(self, path: str) -> LineIndex | None:
        """Offset/position conversion for the current text of ``path``."""
        stamp = self.stamp(path)
        if stamp is None:
            return None
        cached = self._lines.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        text = self._raw(path)
        if text is None:
            return None
        index = (
            index_after_edit(cached[1], text, self._edit_span(path, cached[1].text, text))
            if cached
            else LineIndex(text)
        )
        self._lines[path] = (stamp, index)
        return index

    def _edit_span(self, path: str, before: Text, after: Text) -> tuple[int, int] | None:
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
        self._encodings.pop(path, None)
        self._lines.pop(path, None)
