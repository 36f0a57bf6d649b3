"""Quick fixes (code actions): the LSP side of :mod:`citelens.fixes`.

A diagnostic in, the fixes of its code and data (computed from the current text, never
from the network), code actions out: a fix's edits through the one workspace-edit builder
(:mod:`citelens.lsp.edits`), a notice to open as the ``citelens.openNotice`` command
(the server sends ``window/showDocument`` when it runs).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from lsprotocol import types as lsp

from citelens.core.dockind import DocKind, kind_of
from citelens.core.findings import FixData
from citelens.core.model import BibEntry
from citelens.fixes.context import SessionContext
from citelens.fixes.fix import Fix
from citelens.fixes.marks import mark_fixes
from citelens.fixes.rules import entry_fixes, fixes_for, missing_fields_fix
from citelens.lsp.convert import path_of
from citelens.lsp.edits import EditRefused, workspace_edit
from citelens.lsp.state import CiteLensServer
from citelens.lsp.zotero import zotero_actions

OPEN_NOTICE = "citelens.openNotice"


def code_action(ls: CiteLensServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    ls.flush()  # answer from the latest text, not a queued one
    return code_actions(ls, params)


async def open_notice(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
    """Show a retraction (or other) notice in the browser (``window/showDocument``)."""
    url = notice_target(args)
    if url is None:
        return {"shown": False}
    result = await ls.window_show_document_async(lsp.ShowDocumentParams(uri=url, external=True))
    return {"shown": bool(getattr(result, "success", False))}


def code_actions(ls: CiteLensServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    only = params.context.only
    if only and not any(
        str(k.value if isinstance(k, lsp.CodeActionKind) else k).startswith("quickfix") for k in only
    ):
        return []
    path = path_of(params.text_document.uri)
    if not path:
        return []
    diags = list(params.context.diagnostics) or _published_at(ls, params)
    ctx = SessionContext(ls.session)
    out: list[lsp.CodeAction] = []
    seen: set[str] = set()
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    for d in diags:
        if d.source != "citelens":
            continue
        code = str(d.code)
        marks = mark_fixes(ctx, path, code, d.data, today)  # last: the fixes come first
        data = FixData.from_json(d.data)
        # an entry of a .bib Better BibTeX writes: "Fix in Zotero" first (lsp/zotero.py)
        bib, key = (data.bib, data.key) if data is not None else (None, None)
        zotero, fixes = zotero_actions(ls, fixes_for(ctx, path, code, d.data) + marks, bib, key, d)
        for a in [*zotero, *(_action(ls, fix, d) for fix in fixes)]:
            if a is not None and a.title not in seen:
                seen.add(a.title)
                out.append(a)
    if any(d.source == "citelens" for d in diags):
        return out  # a finding's fixes (none for a stale one)
    entry = _entry_under(ls, path, params)
    key = entry.key if entry is not None else None
    zotero, fixes = zotero_actions(ls, _in_entry(ctx, path, entry), path, key, None)
    for a in [*zotero, *(_action(ls, fix, None) for fix in fixes)]:
        if a is not None and a.title not in seen:
            seen.add(a.title)
            out.append(a)
    return out


def _entry_under(ls: CiteLensServer, path: str, params: lsp.CodeActionParams) -> BibEntry | None:
    """The .bib entry under the cursor, if any."""
    if kind_of(path) is not DocKind.BIB:
        return None
    index = ls.session.store.line_index(path)
    if index is None:
        return None
    try:
        encoding = ls.encoding
    except RuntimeError:  # not initialised (in-process use)
        encoding = "utf-16"
    try:
        offset = index.offset(params.range.start.line, params.range.start.character, encoding)
    except (ValueError, IndexError):
        return None
    return ls.session.projects.entry_at(path, offset)


def _in_entry(ctx: SessionContext, path: str, entry: BibEntry | None) -> list[Fix]:
    """The fixes of the .bib entry under the cursor from its verdict, where no finding is:
    what ``citelens check --fix`` applies, and apart from them the named choice of adding
    the DOI and pages it lacks (``--fix --add-missing``)."""
    if entry is None:
        return []
    missing = missing_fields_fix(ctx, path, entry.key)
    return entry_fixes(ctx, path, entry.key) + ([missing] if missing is not None else [])


def _published_at(ls: CiteLensServer, params: lsp.CodeActionParams) -> list[lsp.Diagnostic]:
    """The published diagnostics under the cursor (clients that send none in the context)."""
    r = params.range
    out = []
    for d in ls.publisher.published.get(params.text_document.uri, []):
        if (d.range.start.line, d.range.start.character) <= (r.end.line, r.end.character) and (
            r.start.line,
            r.start.character,
        ) <= (d.range.end.line, d.range.end.character):
            out.append(d)
    return out


def _action(ls: CiteLensServer, fix: Fix, d: lsp.Diagnostic | None) -> lsp.CodeAction | None:
    kind = lsp.CodeActionKind(fix.kind.value)
    diagnostics = [d] if d is not None else None
    if fix.url is not None:
        command = lsp.Command(title=fix.title, command=OPEN_NOTICE, arguments=[fix.url])
        return lsp.CodeAction(title=fix.title, kind=kind, diagnostics=diagnostics, command=command)
    try:
        edit = workspace_edit(ls, fix.edits)
    except EditRefused as exc:  # shown greyed out with the reason where the client can
        if not ls.flags.disabled_actions:
            return None
        reason = lsp.CodeActionDisabled(reason=str(exc))
        return lsp.CodeAction(title=fix.title, kind=kind, diagnostics=diagnostics, disabled=reason)
    if edit is None:
        return None
    return lsp.CodeAction(
        title=fix.title, kind=kind, diagnostics=diagnostics, edit=edit, is_preferred=fix.preferred or None
    )


def notice_target(args: Sequence[Any]) -> str | None:
    """The URL argument of ``citelens.openNotice``, if it is a web address."""
    url = args[0] if args and isinstance(args[0], str) else None
    if isinstance(url, str) and url.startswith("https://") and " " not in url:
        return url
    return None
