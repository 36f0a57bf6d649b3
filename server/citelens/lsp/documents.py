"""The client's documents, folders and settings: initialize, text sync, watched files,
workspace folders, configuration: each handler turns the message into one event for the
engine (an edit: ``Changed``; the analysis follows when the edits are gathered, see
``CiteLensServer.edited``) and sends what it changed."""

from __future__ import annotations

import asyncio

from lsprotocol import types as lsp

from citelens.lsp.convert import path_of
from citelens.lsp.state import CiteLensServer
from citelens.lsp.textsync import BIG, current_text, keep_index, line_index, take_edit
from citelens.workspace.changes import Edit
from citelens.workspace.events import Closed, FilesChanged, FoldersChanged, SettingsChanged

_WATCHED = "**/*.{bib,tex,md,Rmd,qmd}"


def shutdown(ls: CiteLensServer, params: None) -> None:
    """Stop the background verification while the client still reads: its progress ends
    now, not at exit on a closed pipe (pygls then reports the write error to the client,
    which fails again, in a loop: an editor closing while a source was slow hung 10 s)."""
    ls.verifier.stop()


def initialize(ls: CiteLensServer, params: lsp.InitializeParams) -> None:
    ls.initialized_with(params)


async def initialized(ls: CiteLensServer, params: lsp.InitializedParams) -> None:
    if ls.flags.watched_files_registration:
        try:
            await asyncio.wait_for(
                ls.client_register_capability_async(
                    lsp.RegistrationParams(
                        registrations=[
                            lsp.Registration(
                                id="citelens-watch",
                                method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                                    watchers=[lsp.FileSystemWatcher(glob_pattern=_WATCHED)]
                                ),
                            )
                        ]
                    )
                ),
                5,
            )
        except Exception as exc:  # files are still re-read by modification time
            ls.log_line(f"file watching not registered: {type(exc).__name__}")
    await pull_configuration(ls)


def _edit(ls: CiteLensServer, uri: str) -> Edit | None:
    """The workspace's view of an open document, for the engine."""
    path = path_of(uri)
    if not path:
        return None
    doc = ls.workspace.get_text_document(uri)
    return Edit(path, current_text(doc), doc.version or 0, take_edit(doc), line_index(doc))


def did_open(ls: CiteLensServer, params: lsp.DidOpenTextDocumentParams) -> None:
    edit = _edit(ls, params.text_document.uri)
    if edit is not None:
        ls.opened(edit)
        doc = ls.workspace.get_text_document(params.text_document.uri)
        keep_index(doc, ls.session.store.line_index(edit.path) if len(current_text(doc)) > BIG else None)


def did_change(ls: CiteLensServer, params: lsp.DidChangeTextDocumentParams) -> None:
    edit = _edit(ls, params.text_document.uri)
    if edit is not None:
        ls.edited(edit)


def did_save(ls: CiteLensServer, params: lsp.DidSaveTextDocumentParams) -> None:
    path = path_of(params.text_document.uri)
    if path:
        ls.check_now(path)


def did_close(ls: CiteLensServer, params: lsp.DidCloseTextDocumentParams) -> None:
    path = path_of(params.text_document.uri)
    if path:
        ls.handle(Closed(path))


def did_change_watched(ls: CiteLensServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    paths = tuple(p for change in params.changes if (p := path_of(change.uri)))
    ls.handle(FilesChanged(paths))


def did_change_folders(ls: CiteLensServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
    removed = tuple(p for f in params.event.removed if (p := path_of(f.uri)))
    added = tuple(p for f in params.event.added if (p := path_of(f.uri)))
    ls.handle(FoldersChanged(added, removed))


async def did_change_configuration(ls: CiteLensServer, params: lsp.DidChangeConfigurationParams) -> None:
    values = params.settings
    if isinstance(values, dict) and "citelens" in values:
        ls.handle(SettingsChanged(values))
    else:
        await pull_configuration(ls)


#: Seconds to wait for the editor's settings before saying so (they are applied when they come).
SETTINGS_WAIT_S = 5.0


async def pull_configuration(ls: CiteLensServer) -> None:
    """The editor's ``citelens`` settings (``workspace/configuration``), applied when they
    come: an editor slow to answer (a busy extension host) is said once in the log, and its
    answer is still applied when it arrives (before, it was dropped after 5 s)."""
    if not ls.flags.configuration:
        return
    asked = asyncio.ensure_future(
        ls.workspace_configuration_async(lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="citelens")]))
    )
    try:
        result = await asyncio.wait_for(asyncio.shield(asked), SETTINGS_WAIT_S)
    except TimeoutError:
        ls.log_line(f"the editor has not sent its settings in {SETTINGS_WAIT_S:.0f} s; applied when it does")
        try:
            result = await asked
        except Exception as exc:
            ls.log_line(f"could not read the editor's settings: {type(exc).__name__}")
            return
    except Exception as exc:
        ls.log_line(f"could not read the editor's settings: {type(exc).__name__}")
        return
    if result and isinstance(result[0], dict):
        ls.handle(SettingsChanged({"citelens": result[0]}))
