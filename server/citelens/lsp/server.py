"""The CiteLens language server (pygls 2): its one dispatch table.

:func:`create_server` builds a :class:`~citelens.lsp.state.CiteLensServer` and registers,
from one table, the handler of each LSP method (with the options announced for it), of
each command, and what follows each event's changes. Handlers turn a message into an event
for the engine (``CiteLensServer.handle``) or read what is already computed
(``CiteLensServer.session``): local analysis runs on each change (fast, no network),
verification runs in a background task that reports again when it has news.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp

from citelens.lsp import (
    actions,
    commands,
    completion,
    documents,
    hover,
    links,
    navigation,
    papers,
    rename,
    symbols,
    zotero,
)
from citelens.lsp.state import CiteLensServer, guarded

Handler = Callable[..., Any]


def dispatch_table(
    adds: papers.PaperAdds, fix_in_zotero: zotero.ZoteroFeature
) -> tuple[dict[str, tuple[Handler, Any]], dict[str, Handler]]:
    """LSP method -> (its handler, the options announced with it), and command -> handler.
    Every handler but the renames' is guarded (nothing raises out of it); a refused rename
    is an error answer with its reason for the user."""
    methods: dict[str, tuple[Handler, Any]] = {
        lsp.INITIALIZE: (guarded(documents.initialize), None),
        lsp.INITIALIZED: (guarded(documents.initialized), None),
        lsp.TEXT_DOCUMENT_DID_OPEN: (guarded(documents.did_open), None),
        lsp.TEXT_DOCUMENT_DID_CHANGE: (guarded(documents.did_change), None),
        lsp.TEXT_DOCUMENT_DID_SAVE: (guarded(documents.did_save), None),
        lsp.TEXT_DOCUMENT_DID_CLOSE: (guarded(documents.did_close), None),
        lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES: (guarded(documents.did_change_watched), None),
        lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: (guarded(documents.did_change_folders), None),
        lsp.WORKSPACE_DID_CHANGE_CONFIGURATION: (guarded(documents.did_change_configuration), None),
        lsp.SHUTDOWN: (guarded(documents.shutdown), None),
        lsp.TEXT_DOCUMENT_HOVER: (guarded(hover.hover), None),
        lsp.TEXT_DOCUMENT_DEFINITION: (guarded(navigation.definition), None),
        lsp.TEXT_DOCUMENT_REFERENCES: (guarded(navigation.references), None),
        lsp.TEXT_DOCUMENT_COMPLETION: (
            guarded(completion.completion),
            lsp.CompletionOptions(trigger_characters=["{", ",", "@"]),
        ),
        lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL: (guarded(symbols.document_symbols), None),
        lsp.WORKSPACE_SYMBOL: (guarded(symbols.workspace_symbol), None),
        lsp.TEXT_DOCUMENT_DOCUMENT_LINK: (guarded(links.document_link), None),
        lsp.TEXT_DOCUMENT_PREPARE_RENAME: (rename.prepare_rename, None),
        lsp.TEXT_DOCUMENT_RENAME: (rename.rename, lsp.RenameOptions(prepare_provider=True)),
        lsp.TEXT_DOCUMENT_CODE_ACTION: (
            guarded(actions.code_action),
            lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]),
        ),
    }
    # pygls announces the commands in executeCommandProvider and dispatches them.
    commands_: dict[str, Handler] = {
        completion.ADD_PAPER: guarded(adds.command),
        actions.OPEN_NOTICE: guarded(actions.open_notice),
        "citelens.verifyNow": guarded(commands.verify_now),
        "citelens.clearCache": guarded(commands.clear_cache),
        "citelens.report": guarded(commands.report),
        zotero.FIX_IN_ZOTERO: guarded(fix_in_zotero.fix),
    }
    return methods, commands_


def create_server() -> CiteLensServer:
    server = CiteLensServer()
    adds = papers.PaperAdds(server)
    fix_in_zotero = zotero.ZoteroFeature(server)
    methods, commands_ = dispatch_table(adds, fix_in_zotero)
    for method, (handler, options) in methods.items():
        server.feature(method, options)(handler)
    for name, handler in commands_.items():
        server.command(name)(handler)
    server.after_changes += [adds.adopt_typed_keys, fix_in_zotero.announce]
    rename.quiet_refusals()
    return server
