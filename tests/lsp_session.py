"""Drive the real ``citelens serve`` through pytest-lsp as a VS Code-like or Neovim-like client."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

if TYPE_CHECKING:
    from citelens.lsp.state import CiteLensServer

PRESETS = ("visual-studio-code", "neovim")
LANGUAGE_IDS = {".tex": "latex", ".bib": "bibtex", ".md": "markdown", ".rmd": "rmd",
                ".qmd": "quarto"}


def uri(path: str | Path) -> str:
    return str(from_fs_path(str(path)))


@contextlib.asynccontextmanager
async def session(
    preset: str,
    folder: str | Path,
    *,
    env: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    encodings: Sequence[str] | None = None,
    server_command: Sequence[str] | None = None,
) -> AsyncIterator[LanguageClient]:
    """A started and initialised client; shut down cleanly at the end."""
    server_env = {**os.environ, **(env or {})}
    config = ClientServerConfig(
        server_command=list(server_command or [sys.executable, "-m", "citelens", "serve"]),
        server_env=server_env,
    )
    client = await config.start()
    assert isinstance(client, LanguageClient)
    caps = client_capabilities(preset)
    if encodings is not None:
        caps.general = lsp.GeneralClientCapabilities(position_encodings=list(encodings))
    opts = {"citelens": settings or {"verificationEnabled": False}}
    client.set_configuration(opts["citelens"], section="citelens")
    try:
        await client.initialize_session(lsp.InitializeParams(
            capabilities=caps,
            root_uri=uri(folder),
            workspace_folders=[lsp.WorkspaceFolder(uri=uri(folder), name=Path(folder).name)],
            initialization_options=opts,
        ))
        yield client
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.shutdown_session(), 10)
        await _end(client)


async def _end(client: LanguageClient) -> None:
    """The server process gone: ``shutdown_session`` neither waits for nor stops a server
    that did not answer ``shutdown`` in time or after a protocol error, and such a server
    would outlive the test (and the suite)."""
    server = getattr(client, "_server", None)
    if server is None or server.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        server.kill()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(server.wait(), 10)


def in_process_server(folder: str | Path, settings: dict[str, Any]) -> CiteLensServer:
    """The real server in this process, without a client, initialised on ``folder``:
    pygls's own ``initialize`` (workspace, capabilities), then CiteLens's handler."""
    from citelens.lsp.server import create_server

    ls = create_server()
    steps = ls.protocol.lsp_initialize(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=uri(folder),
        workspace_folders=[lsp.WorkspaceFolder(uri=uri(folder), name=Path(folder).name)],
        initialization_options={"citelens": settings}))
    try:
        handler, args, _ = next(steps)
        steps.send(handler(*args))
    except StopIteration:
        pass
    return ls


def open_doc(client: LanguageClient, path: str | Path, text: str | None = None,
             version: int = 1) -> str:
    p = Path(path)
    if text is None:
        text = p.read_text(encoding="utf-8", errors="replace")
    u = uri(p)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=u, language_id=LANGUAGE_IDS.get(p.suffix.lower(), "plaintext"), version=version,
        text=text)))
    return u


async def wait_for(
    predicate: Callable[[], bool], timeout: float = 20.0, what: str = "condition"
) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.05)


async def diagnostics(
    client: LanguageClient, u: str, predicate: Callable[[Sequence[lsp.Diagnostic]], bool]
    | None = None, timeout: float = 20.0,
) -> Sequence[lsp.Diagnostic]:
    def ready() -> bool:
        if u not in client.diagnostics:
            return False
        return predicate(client.diagnostics[u]) if predicate else True

    await wait_for(ready, timeout, f"diagnostics for {u}")
    return client.diagnostics[u]


def codes(diags: Sequence[lsp.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diags)


def rng(d: lsp.Diagnostic | lsp.Location) -> tuple[int, int, int, int]:
    r = d.range
    return (r.start.line, r.start.character, r.end.line, r.end.character)
