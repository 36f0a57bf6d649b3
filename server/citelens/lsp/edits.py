"""Typed edits (:class:`~citelens.fixes.fix.FileEdit`) as one ``WorkspaceEdit``: the only
builder, for quick fixes, renames and an added paper.

``changes`` for every client, versioned ``documentChanges`` when the client supports them;
a file to create is a ``CreateFile`` (only for a client that may create files).

A file read from disk whose encoding is uncertain, or cannot hold a new text, is never
edited: :class:`EditRefused` names it (``DocumentStore.edit_refusal``)."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from lsprotocol import types as lsp

from citelens.fixes.fix import FileEdit
from citelens.lsp.convert import to_range, uri_of
from citelens.lsp.state import CiteLensServer


class EditRefused(ValueError):
    """An edit was not built: its message names the file and says why, for the user."""


def workspace_edit(
    ls: CiteLensServer, edits: Iterable[FileEdit], *, create: Collection[str] = (), versioned: bool = True
) -> lsp.WorkspaceEdit | None:
    """The edits (each file's in text order) as a ``WorkspaceEdit``, or None when they change
    nothing, a file to edit is unknown, or a file to ``create`` cannot be created.
    ``versioned=False``: ``changes`` only (an added paper goes at the end of the file
    whatever its version). Raises :class:`EditRefused` for a file that must not be edited."""
    by_path: dict[str, list[FileEdit]] = {}
    for e in edits:
        by_path.setdefault(e.path, []).append(e)
    for path, es in by_path.items():
        if path not in create:
            why = ls.session.store.edit_refusal(path, [e.new for e in es])
            if why is not None:
                raise EditRefused(why)
    if create:
        return _created(ls, by_path, create)
    encoding = _encoding(ls)
    changes: dict[str, list[lsp.TextEdit]] = {}
    doc_changes: list[lsp.TextDocumentEdit] = []
    for path, es in by_path.items():
        index = ls.session.store.line_index(path)
        if index is None:
            return None
        text = ls.session.store.text(path) or ""
        lsp_edits = [
            lsp.TextEdit(range=to_range(index, e.span, encoding), new_text=e.new)
            for e in es
            if text[e.span.start : e.span.end] != e.new
        ]
        if not lsp_edits:
            continue
        uri = uri_of(path)
        changes[uri] = lsp_edits
        doc_changes.append(
            lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=ls.session.store.version(path)
                ),
                edits=list(lsp_edits),
            )
        )
    if not changes:
        return None
    if versioned and ls.flags.document_changes:
        return lsp.WorkspaceEdit(changes=changes, document_changes=list(doc_changes))
    return lsp.WorkspaceEdit(changes=changes)


def _created(
    ls: CiteLensServer, by_path: dict[str, list[FileEdit]], create: Collection[str]
) -> lsp.WorkspaceEdit | None:
    """New files: created, then their text inserted at the start (no other file is edited)."""
    if not ls.flags.create_files or set(by_path) - set(create):
        return None
    ops: list[lsp.CreateFile | lsp.TextDocumentEdit] = []
    start = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
    for path, es in by_path.items():
        uri = uri_of(path)
        ops.append(lsp.CreateFile(uri=uri, options=lsp.CreateFileOptions(ignore_if_exists=True)))
        ops.append(
            lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
                edits=[lsp.TextEdit(start, e.new) for e in es],
            )
        )
    return lsp.WorkspaceEdit(document_changes=ops)


def _encoding(ls: CiteLensServer) -> str:
    try:
        return ls.encoding
    except RuntimeError:  # not initialised (in-process use)
        return "utf-16"
