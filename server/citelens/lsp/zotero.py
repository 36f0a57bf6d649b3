"""Fix in Zotero: the LSP side of :mod:`citelens.zotero`.

A .bib a Better BibTeX auto-export writes is said once in the editor (``window/showMessage``)
when a project that uses it is first analysed. Its quick fixes become "Fix in Zotero" (a
command: nothing is written when the menu is opened) with "Edit the .bib anyway (the next
export overwrites it)" second. Running the command finds the item, shows the change against
its current values with ``window/showMessageRequest`` (Write to Zotero / Cancel: Neovim and
VS Code show it with no setup), writes it if the writer accepts, says what happened, then
watches the .bib for Better BibTeX's export, reads the entry again from it and verifies it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Sequence
from typing import Any

from lsprotocol import types as lsp

from citelens.fixes.context import SessionContext
from citelens.fixes.fix import Applicability, Fix
from citelens.lsp.state import CiteLensServer
from citelens.workspace.changes import Changes
from citelens.workspace.events import FilesChanged
from citelens.zotero.client import ZoteroAccess
from citelens.zotero.export import (
    Stamp,
    check_export,
    exported_message,
    not_exported_message,
    stamp,
    verified_message,
    wait_for_export,
)
from citelens.zotero.items import Proposal
from citelens.zotero.plan import EDIT_ANYWAY, FIX_TITLE, OVERWRITTEN, ZoteroFix, zotero_fix
from citelens.zotero.profile import auto_export, same_file
from citelens.zotero.write import Outcome, Result, question, write_fix

FIX_IN_ZOTERO = "citelens.fixInZotero"
ADD_TITLE = "Add in Zotero"
ACCEPT = "Write to Zotero"
CANCEL = "Cancel"
#: After "not exported yet", the .bib is still watched this long (a sync through zotero.org).
LONG_WATCH_S = 600.0
#: How long the message after an export waits for the entry's new verdict.
VERDICT_WAIT_S = 60.0


class ZoteroFeature:
    """What the editor session keeps for Zotero: the access (the local API key the user
    allowed, zotero.org's backoff), the files already announced, the export watches."""

    def __init__(self, ls: CiteLensServer) -> None:
        self.ls = ls
        self.access = ZoteroAccess(ls.session.settings, log=ls.log_line)
        self.lock = asyncio.Lock()  # one fix at a time: one question in the editor
        self.seen: dict[str, bool] = {}  # .bib path -> written by an auto-export (announced)
        self.settings = ls.session.settings  # the settings ``seen`` was decided with
        self.watches: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ saying it
    def say(self, message: str, level: lsp.MessageType = lsp.MessageType.Info) -> None:
        self.ls.log_line(message, level)
        try:
            self.ls.window_show_message(lsp.ShowMessageParams(type=level, message=message))
        except Exception:  # no client attached (in-process use)
            pass

    def announce(self, _changes: Changes) -> None:
        """Once per file: a .bib of an analysed project is written by an auto-export."""
        settings = self.ls.session.settings
        if settings != self.settings:  # another profile, other files named
            self.settings, self.seen = settings, {}
        for analysis in list(self.ls.session.projects.analyses.values()):
            for bib in analysis.project.bib_paths:
                if bib in self.seen:
                    continue
                job = auto_export(settings, bib)
                self.seen[bib] = job is not None
                if job is not None:
                    # one short line: a longer one stops Neovim at "Press ENTER"
                    name = os.path.basename(bib)
                    self.say(f"{name} is Better BibTeX's export: its fixes go to Zotero.")
                    self.ls.log_line(
                        f"{bib} is written by a Better BibTeX auto-export of Zotero: CiteLens fixes "
                        "its entries in the Zotero item (Fix in Zotero); an edit of the file is "
                        "overwritten by the next export."
                    )

    # ------------------------------------------------------------------ the command
    async def fix(self, ls: CiteLensServer, *args: Any) -> dict[str, Any]:
        target = args[0] if args and isinstance(args[0], dict) else {}
        bib, key = target.get("bib"), target.get("key")
        if not isinstance(bib, str) or not isinstance(key, str):
            return {"outcome": "bad arguments"}
        async with self.lock:
            return await self._fix(ls, bib, key, target.get("add") is True)

    async def _fix(self, ls: CiteLensServer, bib: str, key: str, add: bool) -> dict[str, Any]:
        ls.flush()
        settings = ls.session.settings
        job = auto_export(settings, bib)
        ctx = SessionContext(ls.session)
        zfix = zotero_fix(ctx, bib, key, add_missing=add) if job is not None else None
        if zfix is None:
            self.say(f"{key}: nothing to fix in Zotero any more (the entry or its verdict changed).")
            return {"outcome": "stale"}
        self.access.settings = settings

        async def ask(proposal: Proposal, where: str, again: bool) -> bool:
            params = lsp.ShowMessageRequestParams(
                type=lsp.MessageType.Info,
                message=question(zfix, proposal, where, again),
                actions=[lsp.MessageActionItem(ACCEPT), lsp.MessageActionItem(CANCEL)],
            )
            answer = await ls.window_show_message_request_async(params)
            return answer is not None and getattr(answer, "title", None) == ACCEPT

        before = stamp(bib)
        async with self.access.session():
            result = await write_fix(self.access, zfix, ask, job)
        level = (
            lsp.MessageType.Info
            if result.outcome in (Outcome.WRITTEN, Outcome.NOTHING, Outcome.CANCELLED)
            else lsp.MessageType.Error
        )
        if result.written:  # the round trip says the rest, in one message
            ls.log_line(result.message)
        elif result.outcome is not Outcome.CANCELLED:
            self.say(result.message, level)
        if result.written:
            task = asyncio.get_running_loop().create_task(self._round_trip(zfix, result, before))
            self.watches.add(task)
            task.add_done_callback(self.watches.discard)
        return {"outcome": result.outcome.value, "message": result.message}

    # ------------------------------------------------------------------ the round trip
    async def _round_trip(self, zfix: ZoteroFix, result: Result, before: Stamp | None) -> None:
        try:
            await self._watch(zfix, result, before)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never a crash for a watch
            self.ls.log_line(f"watching {zfix.bib} for Better BibTeX's export failed: {type(exc).__name__}")

    async def _watch(self, zfix: ZoteroFix, result: Result, before: Stamp | None) -> None:
        ls = self.ls
        wait = ls.session.settings.zotero_export_wait_s
        text = await wait_for_export(zfix.bib, before, wait, asyncio.sleep, time.monotonic)
        if text is None:
            self.say(not_exported_message(zfix.bib, wait, result.via))
            text = await wait_for_export(zfix.bib, before, LONG_WATCH_S, asyncio.sleep, time.monotonic)
            if text is None:
                return
        assert result.proposal is not None and result.item is not None
        shown = check_export(text, zfix.bib, zfix.key, result.proposal.expect)
        new_key = None
        if not shown.present:
            async with self.lock, self.access.session():
                try:
                    new_key = await self.access.citation_key_of(result.item)
                except Exception:
                    new_key = None
        # the engine reads the exported text, verifies the entry again and publishes
        ls.handle(FilesChanged((zfix.bib,), verify_now=True))
        message = exported_message(zfix.bib, zfix.key, shown, new_key)
        if shown.present and not shown.missing:
            message = await self._verified(zfix, message)
        self.say(message)

    async def _verified(self, zfix: ZoteroFix, message: str) -> str:
        """The message once the exported entry has its verdict (bounded wait)."""
        session = self.ls.session
        if session.store.is_open(zfix.bib):
            return message + f" (the editor shows {os.path.basename(zfix.bib)} as it was until you reload it)"
        deadline = time.monotonic() + VERDICT_WAIT_S
        v = None
        while time.monotonic() < deadline:
            bib = session.store.bib(zfix.bib)
            entry = next((e for e in bib.entries if e.key == zfix.key), None) if bib is not None else None
            v = session.verdict(entry, session.analysis_for(zfix.bib)) if entry is not None else None
            if v is not None:
                break
            await asyncio.sleep(0.2)
        return verified_message(message, zfix.key, v)


def zotero_actions(
    ls: CiteLensServer, fixes: Sequence[Fix], bib: str | None, key: str | None, d: lsp.Diagnostic | None
) -> tuple[list[lsp.CodeAction], list[Fix]]:
    """For an entry of a Better BibTeX .bib: "Fix in Zotero" first (a command: nothing is
    read or written until it runs), and its fixes as edits of the file, retitled ("Edit the
    .bib anyway ...") and never preferred. Other entries' fixes are returned as they are."""
    if not bib or not key or auto_export(ls.session.settings, bib) is None:
        return [], list(fixes)
    ctx = SessionContext(ls.session)
    zfix = zotero_fix(ctx, bib, key)
    # with the cursor in the entry: filling in what it lacks is a choice of its own, as in the .bib
    zadd = zotero_fix(ctx, bib, key, add_missing=True) if d is None else None
    out: list[lsp.CodeAction] = []
    for z, add in ((zfix, False), (zadd, True)):
        if z is None or (add and (not z.adds or (zfix is not None and z.changes == zfix.changes))):
            continue
        title = z.title.replace(FIX_TITLE, ADD_TITLE, 1) if add else z.title
        args = {"bib": bib, "key": key, **({"add": True} if add else {})}
        out.append(
            lsp.CodeAction(
                title=title,
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[d] if d is not None else None,
                command=lsp.Command(title=title, command=FIX_IN_ZOTERO, arguments=[args]),
                is_preferred=(z.safe and not add) or None,
            )
        )
    target = same_file(bib)
    edits: list[Fix] = []
    for fix in fixes:
        if not any(same_file(e.path) == target for e in fix.edits):
            edits.append(fix)
            continue
        title = EDIT_ANYWAY if zfix is not None and fix.title == zfix.text_title else fix.title + OVERWRITTEN
        demoted = Applicability.UNSAFE if fix.applicability is Applicability.SAFE else fix.applicability
        edits.append(dataclasses.replace(fix, title=title, applicability=demoted))
    return out, edits


