"""``citelens.addPaper``: append the entry of a paper chosen in completion to the .bib.

The completion item already replaced the typed text with the key; this command adds the
entry through ``workspace/applyEdit`` (one insertion at the end of the file, so the rest
of it stays byte-identical). A client that inserts the key but ignores the item's command
(Neovim without ``vim.lsp.completion.enable``) gets the same edit: once an analysis finds
an offered key cited and undefined, :meth:`PaperAdds.adopt_typed_keys` adds it. Either way
an entry is added once (:attr:`PaperAdds.added`). A document without a bibliography gets ``references.bib``
beside it, and a message saying so.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from lsprotocol import types as lsp

from citelens.core.model import Span
from citelens.fixes.fix import FileEdit
from citelens.lsp.edits import EditRefused, workspace_edit
from citelens.lsp.state import CiteLensServer, guarded
from citelens.workspace import citesearch
from citelens.workspace.changes import Changes
from citelens.workspace.events import PaperAdded


def _exists(path: str) -> bool:
    return os.path.exists(path)


def _write_new(path: str, text: str) -> None:
    with open(path, "x", encoding="utf-8") as fh:
        fh.write(text)


#: Seconds during which a second add of the same key to the same .bib is refused (the
#: command and the typed key both ask; the first edit may not be on disk yet).
ADDED_FOR_S = 120.0


class PaperAdds:
    """The entries this server is adding, so that each is added once: (bib, key) -> when
    its add started, and the adds a typed key started (edits the editor applies: LSP state)."""

    def __init__(self, ls: CiteLensServer) -> None:
        self.ls = ls
        self.added: dict[tuple[str, str], float] = {}
        self.adding: set[asyncio.Task[Any]] = set()

    def adopt_typed_keys(self, changes: Changes) -> None:
        """Add the entry of every offered paper whose key the analysed documents now cite
        and no bibliography defines (the engine finds them: the client did not run the
        item's command)."""
        if not changes.typed_offers:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for payload in changes.typed_offers:
            task = loop.create_task(guarded(self.add)(payload))
            self.adding.add(task)
            task.add_done_callback(self.adding.discard)

    async def command(self, ls: CiteLensServer, *args: Any) -> dict[str, Any]:
        return await self.add(args[0] if args else None)

    async def add(self, raw: Any) -> dict[str, Any]:
        """Append the paper's entry unless the .bib already has it (same key, DOI, arXiv id
        or title): a second accept adds nothing."""
        offer = citesearch.read_offer(raw)
        if offer is None:
            return {"added": False, "why": "bad arguments"}
        path, key = offer.bib, offer.key
        added = self.added
        now = time.monotonic()
        if now - added.get((path, key), -ADDED_FOR_S) < ADDED_FOR_S:
            return {"added": False, "why": "already added"}
        if len(added) > 1000:
            added.clear()
        added[(path, key)] = now
        result: dict[str, Any] = {"added": False, "why": "failed"}
        try:
            result = await _add(self.ls, offer)
        finally:
            if not result["added"] and result["why"] != "already in the bibliography":
                added.pop((path, key), None)  # a refused or failed edit may be tried again
        return result


async def _add(ls: CiteLensServer, offer: citesearch.Offer) -> dict[str, Any]:
    path, key, record = offer.bib, offer.key, offer.record
    create = offer.create and not _exists(path)
    text = "" if create else (ls.session.store.text(path) or "")
    bib = None if create else ls.session.store.bib(path)
    if bib is not None and (
        any(e.key.lower() == key.lower() for e in bib.entries)
        or citesearch.existing_key(record, citesearch.bib_index(bib.entries))
    ):
        return {"added": False, "why": "already in the bibliography"}
    edit = citesearch.entry_edit(text, bib, record, key)
    added = [FileEdit(path, Span(edit.start, edit.end), edit.new)]
    name = os.path.basename(path)
    try:
        wedit = workspace_edit(ls, added, create=[path] if create else [], versioned=False)
    except EditRefused as exc:
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=str(exc)))
        return {"added": False, "why": str(exc)}
    if wedit is None and create:  # the client cannot create files: write it ourselves
        _write_new(path, edit.new)
    elif wedit is not None:
        result = await ls.workspace_apply_edit_async(
            lsp.ApplyWorkspaceEditParams(edit=wedit, label=f"Add {key} to {name}")
        )
        if not result.applied:
            ls.log_line(f"the editor did not add {key} to {name}: {result.failure_reason}")
            return {"added": False, "why": "edit refused"}
    else:
        return {"added": False, "why": "bibliography not readable"}
    if create:
        ls.window_show_message(
            lsp.ShowMessageParams(
                type=lsp.MessageType.Info,
                message=f"CiteLens: this document has no bibliography yet; {key} was added to a "
                f"new {name} beside it. Use it with \\bibliography{{references}} (LaTeX) "
                f"or `bibliography: {name}` in the front matter (Markdown).",
            )
        )
    ls.handle(PaperAdded(path, key))  # read again; completion offers the key first
    return {"added": True, "key": key, "bib": path}
