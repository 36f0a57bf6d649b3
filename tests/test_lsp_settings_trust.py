"""Settings from the editor, through the real server (pytest-lsp): a snapshot set in the
editor is used even when it arrives while a check runs or late (issue 41 #8)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from tests.fakes.scholarly import _complete, load_papers
from tests.lsp_session import diagnostics, open_doc, uri
from tests.test_snapshot import BIB, _fake_snapshot

SETTINGS = {"verificationEnabled": True, "verifyDebounceMs": 30, "requestTimeoutS": 1.0,
            "retryBackoffS": 0.01, "maxRetries": 0}
#: The entries of tests/test_snapshot.BIB the snapshot holds (the APIs are unreachable here).
HELD = {"held_doi", "held_title", "newer"}


async def _client(folder: Path, env: dict[str, str], settings: dict[str, Any],
                  slow: dict[str, float]) -> LanguageClient:
    """A VS Code-like client that answers the requests named in ``slow`` that many seconds
    late (a busy extension host)."""
    config = ClientServerConfig(server_command=[sys.executable, "-m", "citelens", "serve"],
                                server_env={**os.environ, **env})
    client = await config.start()
    assert isinstance(client, LanguageClient)
    client.set_configuration(settings, section="citelens")
    for method, delay in slow.items():
        answer = client.protocol.fm.features[method]

        async def late(params: Any, answer: Any = answer, delay: float = delay) -> Any:
            await asyncio.sleep(delay)
            return answer(params)

        client.protocol.fm.features[method] = late
    await client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=uri(folder),
        workspace_folders=[lsp.WorkspaceFolder(uri=uri(folder), name=folder.name)],
        initialization_options={"citelens": settings}))
    return client


def _verified(ds: Any) -> set[str]:
    return {d.data.get("key") for d in ds if isinstance(d.data, dict) and d.code == "UNVERIFIED"}


async def test_a_snapshot_set_in_the_editor_during_a_check_is_used(tmp_path: Path) -> None:
    """The ``snapshot`` setting arrives (didChangeConfiguration) while the first check waits
    for the editor to create its progress bar: the check is superseded and the next one
    verifies the entries the snapshot holds, and the editor shows no error. Before, the
    server showed "Error in server: CANCELLED: <Future …>" (the editor's late answer to
    the superseded check's request) and verified nothing: the superseded check's entries
    still counted as being checked, so no new check started."""
    snap = _fake_snapshot(tmp_path, [_complete(p) for p in load_papers()])
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "refs.bib").write_text(BIB, encoding="utf-8")
    env = {"CITELENS_CACHE_DIR": str(tmp_path / "cache")}  # every API unreachable (conftest)
    client = await _client(folder, env, SETTINGS, {lsp.WINDOW_WORK_DONE_PROGRESS_CREATE: 1.5})
    try:
        u = open_doc(client, folder / "refs.bib")
        await asyncio.sleep(0.5)  # the first check waits for its progress bar
        new = {**SETTINGS, "snapshot": str(snap)}
        client.set_configuration(new, section="citelens")
        changed = lsp.DidChangeConfigurationParams(settings={"citelens": new})
        client.workspace_did_change_configuration(changed)
        await diagnostics(client, u, lambda ds: bool(_verified(ds)), timeout=60)
        await asyncio.sleep(1)
        logs = [m.message for m in client.log_messages]
        assert any("answered by the local snapshot" in m for m in logs), logs
        assert not [m.message for m in client.messages if "Error in server" in m.message]
        unverified = _verified(client.diagnostics.get(u, []))
        assert unverified and not (unverified & HELD), unverified  # the snapshot decided those
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)


async def test_settings_the_editor_sends_late_are_applied(tmp_path: Path) -> None:
    """An editor that answers ``workspace/configuration`` after 6 s (code-server on a busy
    machine) with a snapshot: the settings are applied when they come, and no error is
    shown. Before, they were dropped after 5 s and the late answer showed "Error in server:
    CANCELLED"."""
    snap = _fake_snapshot(tmp_path, [_complete(p) for p in load_papers()])
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "refs.bib").write_text(BIB, encoding="utf-8")
    env = {"CITELENS_CACHE_DIR": str(tmp_path / "cache")}
    config = ClientServerConfig(server_command=[sys.executable, "-m", "citelens", "serve"],
                                server_env={**os.environ, **env})
    client = await config.start()
    assert isinstance(client, LanguageClient)
    client.set_configuration({**SETTINGS, "snapshot": str(snap)}, section="citelens")
    answer = client.protocol.fm.features[lsp.WORKSPACE_CONFIGURATION]

    async def late(params: Any) -> Any:
        await asyncio.sleep(6)
        return answer(params)

    client.protocol.fm.features[lsp.WORKSPACE_CONFIGURATION] = late
    await client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=uri(folder),
        workspace_folders=[lsp.WorkspaceFolder(uri=uri(folder), name=folder.name)],
        initialization_options={"citelens": {**SETTINGS, "verificationEnabled": False}}))
    try:
        u = open_doc(client, folder / "refs.bib")
        await diagnostics(client, u, lambda ds: bool(_verified(ds)), timeout=60)
        await asyncio.sleep(1)
        assert not [m.message for m in client.messages if "Error in server" in m.message]
        assert any("answered by the local snapshot" in m.message for m in client.log_messages)
        assert not (_verified(client.diagnostics.get(u, [])) & HELD)
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)


INVENTED_WORK = {"title": "Quantum Gravitational Embeddings for Citation Graph Compression",
                 "authors": ["Ann Nobody"], "year": 2021, "venue": "Journal of Imaginary Results",
                 "doi": "10.5555/imaginary.2021.1"}


async def _invented_verdict(tmp_path: Path, fake: Any, trusted: bool) -> tuple[set[str], list[str]]:
    """The codes of the invented entry's findings, and the server's log, when a workspace
    (trusted or not) sets ``snapshot`` to a one-work snapshot it ships holding the invention."""
    snap = _fake_snapshot(tmp_path, [_complete(INVENTED_WORK)])
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "refs.bib").write_text(BIB, encoding="utf-8")
    settings = {**SETTINGS, "s2RequestsPerSecond": 200, "maxRetries": 1, "snapshot": str(snap),
                "client": {"workspaceTrusted": trusted, "fromWorkspace": ["snapshot"], "userValues": {}}}
    env = fake.env(cache=tmp_path / "cache")
    client = await _client(folder, env, settings, {})
    try:
        u = open_doc(client, folder / "refs.bib")

        def invented(ds: Any) -> set[str]:
            return {str(d.code) for d in ds if isinstance(d.data, dict) and d.data.get("key") == "invented"}

        def decided(ds: Any) -> bool:
            keys = {d.data.get("key") for d in ds if isinstance(d.data, dict)}
            return "retracted" in keys  # (in no source: NOT_FOUND once the check has run)

        await diagnostics(client, u, decided, timeout=60)
        await asyncio.sleep(2)
        return invented(client.diagnostics.get(u, [])), [m.message for m in client.log_messages]
    finally:
        await asyncio.wait_for(client.shutdown_session(), 10)


async def test_a_snapshot_an_untrusted_workspace_ships_is_ignored(
        tmp_path: Path, scholarly_server: Any) -> None:
    """Issue 41 #3: a repository's .vscode/settings.json points ``citelens.snapshot`` at a
    snapshot it ships, holding its invented reference. In a workspace the user has not
    trusted, the server ignores it (one log line) and the invented entry is NOT_FOUND from
    the APIs; trusted, the snapshot is used. Before, the shipped snapshot made it VERIFIED."""
    codes, logs = await _invented_verdict(tmp_path / "untrusted", scholarly_server, trusted=False)
    assert "NOT_FOUND" in codes, (codes, logs)
    assert any("citelens.snapshot from the workspace's settings is ignored" in m for m in logs), logs
    codes, logs = await _invented_verdict(tmp_path / "trusted", scholarly_server, trusted=True)
    assert "NOT_FOUND" not in codes, (codes, logs)
    assert not any("is ignored" in m for m in logs), logs
