"""Incremental text sync that stays fast on a 35 MB ``.bib``.

pygls applies an incremental change by writing every line of the document into a new
buffer, one Python call per line: about a million calls per keystroke in a 68,000-entry
bibliography. :func:`apply_incremental_change` gives the same text with two slices.
"""

from __future__ import annotations

import itertools
from typing import Any

from lsprotocol import types as lsp
from pygls.workspace.text_document import TextDocument


def apply_incremental_change(doc: Any, change: lsp.TextDocumentContentChangePartial) -> None:
    """What ``TextDocument._apply_incremental_change`` does, in C-speed slices."""
    lines = doc.lines
    source = doc.source
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
    elif end_line < start_line:  # an inverted range: pygls drops the rest of the line
        end = start_of_line + len(lines[start_line])
    else:
        end_of = start_of_line + sum(map(len, itertools.islice(lines, start_line, end_line)))
        end = end_of + min(end_col, len(lines[end_line]))
    doc._source = source[:start] + change.text + source[end:]


def install() -> None:
    """Use :func:`apply_incremental_change` for every document of the server."""
    TextDocument._apply_incremental_change = apply_incremental_change  # type: ignore[method-assign,assignment]
