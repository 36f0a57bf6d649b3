"""Incremental text sync that stays fast on a 35 MB ``.bib``.

pygls applies an incremental change by writing every line of the document into a new
buffer, one Python call per line: about a million calls per keystroke in a 68,000-entry
bibliography. :func:`apply_incremental_change` gives the same text with two slices. In a
big document (over :data:`BIG` characters) even splitting the text into lines is too slow:
the change's offsets come from a line index kept with the document and moved by each edit
(``core/text.index_after_edit``); positions within a line give the same text as pygls, a
position past a line's end clamps to it. Nor is the text copied: it becomes an
``EditedText`` (the text before plus the edit) that the store and the incremental parse
read in pieces; ``doc.source`` joins it into one string when something asks for it.

The server's workspace makes its documents :class:`Document` (this server's own, see
:class:`Workspace`); pygls's ``TextDocument`` class is left as it is, so another server in
the same process (or a test comparing with pygls) gets pygls's behaviour.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from lsprotocol import types as lsp
from pygls.workspace import Workspace as PyglsWorkspace
from pygls.workspace.text_document import TextDocument

from citelens.core.text import EditedText, LineIndex, index_after_edit, split_lines

#: Documents longer than this (characters) are edited through their kept line index.
BIG = 1 << 20


def apply_incremental_change(doc: Any, change: lsp.TextDocumentContentChangePartial) -> None:
    """What ``TextDocument._apply_incremental_change`` does, in C-speed slices."""
    raw = doc._source
    if isinstance(raw, EditedText) or (isinstance(raw, str) and len(raw) > BIG):
        _apply_big(doc, raw, change)
        return
    source = doc.source
    lines = split_lines(source)  # LSP's lines, not str.splitlines's (a form feed is no break)
    rng = doc._position_codec.range_from_client_units(lines, change.range)
    start_line, start_col = rng.start.line, rng.start.character
    end_line, end_col = rng.end.line, rng.end.character
    if start_line >= len(lines):  # an edit at the very end of the file
        doc._source = source + change.text
        return
    start_of_line = sum(map(len, itertools.islice(lines, start_line)))
    start = start_of_line + min(start_col, len(lines[start_line]))
    if end_line >= len(lines):
        end = len(source)
    elif end_line < start_line:  # an inverted range (invalid): the line's rest goes
        end = start_of_line + len(lines[start_line])
    else:
        end_of = start_of_line + sum(map(len, itertools.islice(lines, start_line, end_line)))
        end = end_of + min(end_col, len(lines[end_line]))
    doc._source = source[:start] + change.text + source[end:]


def _apply_big(doc: Any, source: str | EditedText, change: lsp.TextDocumentContentChangePartial) -> None:
    index = getattr(doc, "_citelens_index", None)
    if not isinstance(index, LineIndex) or index.text is not source:
        index = LineIndex(source)
    enc = doc._position_codec.encoding  # a PositionEncodingKind, or the negotiated str
    encoding = str(enc.value if isinstance(enc, lsp.PositionEncodingKind) else enc or "utf-16")
    a, b = change.range.start, change.range.end
    start = index.offset(a.line, a.character, encoding)
    end = index.offset(b.line, b.character, encoding)
    if (b.line, b.character) < (a.line, a.character):  # inverted (invalid): the line's rest goes
        end = index.line_start(a.line + 1) if a.line + 1 < index.line_count else len(source)
    end = max(start, end)
    text = EditedText(source).edit(start, end, change.text)
    doc._source = text
    span = (start, len(source) - end)
    doc._citelens_index = index_after_edit(index, text, span)
    # the edit, for the store (one per didChange: several changes in one are not described)
    pending = "citelens_edit" in doc.__dict__
    doc.__dict__["citelens_edit"] = None if pending else (source, start, end)


def current_text(doc: Any) -> str | EditedText:
    """The document's text as it is kept (an ``EditedText`` is not joined)."""
    raw = doc._source
    return raw if isinstance(raw, EditedText) else doc.source


def line_index(doc: Any) -> LineIndex | None:
    """The line index :func:`apply_incremental_change` keeps for a big document's text."""
    index = getattr(doc, "_citelens_index", None)
    return index if isinstance(index, LineIndex) and index.text is doc._source else None


def keep_index(doc: Any, index: LineIndex | None) -> None:
    """Keep ``index`` (the store's, of the text just opened) with a big document, so that its
    first edit does not build one."""
    if index is not None and index.text is doc._source and len(index.text) > BIG:
        doc._citelens_index = index


def take_edit(doc: Any) -> tuple[str | EditedText, int, int] | None:
    """``(previous text, start, end)``: the range of the previous text that the last
    didChange replaced, if it was one change to a big document."""
    edit = doc.__dict__.pop("citelens_edit", None)
    return edit if isinstance(edit, tuple) else None


class Document(TextDocument):
    """pygls's document with :func:`apply_incremental_change` (two slices per edit, a big
    text kept as an ``EditedText``) and LSP's line breaks."""

    def _apply_incremental_change(self, change: lsp.TextDocumentContentChangePartial) -> None:
        apply_incremental_change(self, change)

    @property
    def source(self) -> str:
        """pygls's ``source``, with an ``EditedText`` joined into one string."""
        raw = self._source
        if isinstance(raw, EditedText):
            return str(raw)
        text: str = TextDocument.source.fget(self)  # type: ignore[attr-defined]
        return text

    @property
    def lines(self) -> Sequence[str]:
        """pygls's ``lines`` broke at a form feed, U+2028 and the like (``str.splitlines``);
        LSP breaks lines only at ``\\n``, ``\\r\\n`` and ``\\r``."""
        return tuple(split_lines(self.source))


class Workspace(PyglsWorkspace):
    """pygls's workspace whose documents are :class:`Document` (one server's, not the
    class every pygls server in the process uses)."""

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return Document(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )
