"""End-to-end through the real server (pytest-lsp, as VS Code and as Neovim): a .bib Better
BibTeX writes, "Fix in Zotero", the change shown and accepted (window/showMessageRequest),
the PATCH the fake Zotero receives, its export, and what the editor is told."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Union

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.fakes.scholarly import ScholarlyFake
from tests.fakes.zotero import (
    DWORK_NAOR_1992,
    MISMATCH_KEY,
    RIGHT_DOI,
    WRONG_DOI,
    ZoteroFake,
    running_zotero,
    seed_paper,
)
from tests.lsp_session import PRESETS, diagnostics, open_doc, session, uri, wait_for

ACCEPT = "Write to Zotero"


@pytest.fixture(params=PRESETS)
def preset(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def zotero(tmp_path: Path) -> Iterator[ZoteroFake]:
    with running_zotero(tmp_path / "zotero-profile", export_delay_s=0.2) as z:
        yield z


def _env(fake: ScholarlyFake, z: ZoteroFake, tmp: Path) -> dict[str, str]:
    return {**fake.env(cache=tmp / "cache"), **z.env()}


SETTINGS = {
    "verificationEnabled": True,
    "verifyDebounceMs": 30,
    "s2RequestsPerSecond": 200,
    "requestTimeoutS": 2.0,
    "retryBackoffS": 0.01,
    "maxRetries": 1,
}


def _code_actions_with_commands(client: LanguageClient) -> None:
    """lsprotocol reads any code action that has a command as a Command (its union hook
    looks for the key "command"), losing the action; editors read the JSON. Read it as the
    protocol says: a Command's "command" is a string."""
    converter = client.protocol._converter

    def hook(obj: Any, _t: Any) -> lsp.Command | lsp.CodeAction:
        cls = lsp.Command if isinstance(obj.get("command"), str) else lsp.CodeAction
        return converter.structure(obj, cls)

    converter.register_structure_hook(Union[lsp.Command, lsp.CodeAction], hook)  # noqa: UP007


def _answer(client: LanguageClient, choice: str | None) -> list[str]:
    """The writer's answer to the server's question; the questions are recorded."""
    asked: list[str] = []
    _code_actions_with_commands(client)

    @client.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)
    def _ask(params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem | None:
        asked.append(params.message)
        titles = [a.title for a in params.actions or []]
        assert titles == [ACCEPT, "Cancel"], titles
        return lsp.MessageActionItem(choice) if choice else None

    return asked


async def _mismatch_actions(client: LanguageClient, tex: Path) -> tuple[lsp.Diagnostic, list[Any]]:
    u = open_doc(client, tex)
    diags = await diagnostics(client, u, lambda ds: any(d.code == "DOI_MISMATCH" for d in ds), timeout=60)
    d = next(d for d in diags if d.code == "DOI_MISMATCH")
    actions = await client.text_document_code_action_async(
        lsp.CodeActionParams(lsp.TextDocumentIdentifier(u), d.range, lsp.CodeActionContext(diagnostics=[d]))
    )
    return d, list(actions or [])


async def test_fix_in_zotero_patches_the_doi_and_the_export_clears_the_finding(
    tmp_path: Path, preset: str, scholarly_server: ScholarlyFake, zotero: ZoteroFake
) -> None:
    scholarly_server.add_paper(DWORK_NAOR_1992)
    paper = seed_paper(zotero, tmp_path / "paper")
    before = paper.bib.read_text(encoding="utf-8")
    assert f"doi = {{{WRONG_DOI}}}" in before
    async with session(
        preset, paper.dir, env=_env(scholarly_server, zotero, tmp_path), settings=SETTINGS
    ) as client:
        asked = _answer(client, ACCEPT)
        _d, actions = await _mismatch_actions(client, paper.tex)
        announced = [m.message for m in client.messages if "Better BibTeX's export" in m.message]
        assert announced == ["refs.bib is Better BibTeX's export: its fixes go to Zotero."]
        titles = [a.title for a in actions]
        assert titles[0] == f"Fix in Zotero: DOI → {RIGHT_DOI}", titles
        assert titles[1] == "Edit the .bib anyway (the next export overwrites it)", titles
        fix = actions[0]
        assert fix.edit is None and fix.command.command == "citelens.fixInZotero" and fix.is_preferred
        assert not actions[1].is_preferred and actions[1].edit is not None
        result = await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(fix.command.command, fix.command.arguments)
        )
        assert result["outcome"] == "written", result
        # the writer saw the change against the item's current value before it was written
        assert len(asked) == 1 and f"DOI: {WRONG_DOI} → {RIGHT_DOI}" in asked[0]
        assert "My Library" in asked[0] and "Zotero's local API" in asked[0]
        (patch,) = zotero.patches()
        assert patch.body == {"DOI": RIGHT_DOI}
        # Better BibTeX writes the .bib again; the finding leaves both files
        await wait_for(lambda: RIGHT_DOI in paper.bib.read_text(encoding="utf-8"), 10, "the export")
        await wait_for(
            lambda: (
                not any(
                    d.code == "DOI_MISMATCH"
                    for u in (uri(paper.tex), uri(paper.bib))
                    for d in client.diagnostics.get(u, [])
                )
            ),
            60,
            "the finding to go",
        )
        await wait_for(
            lambda: any(m.message.startswith("Fixed in Zotero, exported") for m in client.messages),
            60,
            "the round trip said",
        )
        said = [m.message for m in client.messages if m.message.startswith("Fixed in Zotero")]
        assert MISMATCH_KEY in said[0] and "verified" in said[0], said
        # the text edit was never applied: the file is Better BibTeX's export
        assert paper.bib.read_text(encoding="utf-8") == before.replace(WRONG_DOI, RIGHT_DOI)


async def test_a_read_only_group_is_refused_and_nothing_changes(
    tmp_path: Path, scholarly_server: ScholarlyFake, zotero: ZoteroFake
) -> None:
    scholarly_server.add_paper(DWORK_NAOR_1992)
    zotero.add_group(7, "Reading group", editable=False)
    paper = seed_paper(zotero, tmp_path / "paper", library="groups/7")
    before = paper.bib.read_text(encoding="utf-8")
    async with session(
        "neovim", paper.dir, env=_env(scholarly_server, zotero, tmp_path), settings=SETTINGS
    ) as client:
        asked = _answer(client, ACCEPT)
        _d, actions = await _mismatch_actions(client, paper.tex)
        fix = actions[0]
        assert fix.title.startswith("Fix in Zotero")
        result = await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(fix.command.command, fix.command.arguments)
        )
        assert result["outcome"] == "refused", result
        assert len(asked) == 1
        errors = [m for m in client.messages if m.type == lsp.MessageType.Error]
        assert errors and "refused" in errors[-1].message and "Reading group" in errors[-1].message
        assert [p.status for p in zotero.patches()] == [403]
        await asyncio.sleep(0.5)  # longer than the export delay
        assert paper.bib.read_text(encoding="utf-8") == before
        assert zotero.exported == 1  # the first export only


async def test_cancel_writes_nothing(
    tmp_path: Path, scholarly_server: ScholarlyFake, zotero: ZoteroFake
) -> None:
    scholarly_server.add_paper(DWORK_NAOR_1992)
    paper = seed_paper(zotero, tmp_path / "paper")
    async with session(
        "visual-studio-code", paper.dir, env=_env(scholarly_server, zotero, tmp_path), settings=SETTINGS
    ) as client:
        _answer(client, "Cancel")
        _d, actions = await _mismatch_actions(client, paper.tex)
        result = await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(actions[0].command.command, actions[0].command.arguments)
        )
        assert result["outcome"] == "cancelled"
        assert zotero.patches() == []


async def test_adding_what_an_entry_lacks_is_a_choice_of_its_own(
    tmp_path: Path, scholarly_server: ScholarlyFake, zotero: ZoteroFake
) -> None:
    """With the cursor in a verified entry whose item has no DOI: "Add in Zotero: DOI → ..."
    (the editor's "Add doi ..." for a .bib Better BibTeX writes), which writes the DOI."""
    scholarly_server.add_paper(DWORK_NAOR_1992)
    paper = seed_paper(zotero, tmp_path / "paper")
    zotero.item("hunter2007")["data"]["DOI"] = ""
    zotero._export(zotero.exports[0])
    text = paper.bib.read_text(encoding="utf-8")
    assert "mcse" not in text.lower()
    async with session(
        "neovim", paper.dir, env=_env(scholarly_server, zotero, tmp_path), settings=SETTINGS
    ) as client:
        asked = _answer(client, ACCEPT)
        u = open_doc(client, paper.bib)
        await diagnostics(client, u, lambda ds: any(d.code == "DOI_MISMATCH" for d in ds), timeout=60)
        line = next(i for i, ln in enumerate(text.splitlines()) if ln.startswith("@article{hunter2007,")) + 1
        here = lsp.Range(lsp.Position(line, 3), lsp.Position(line, 3))

        async def actions() -> list[Any]:
            found = await client.text_document_code_action_async(
                lsp.CodeActionParams(
                    lsp.TextDocumentIdentifier(u), here, lsp.CodeActionContext(diagnostics=[])
                )
            )
            return list(found or [])

        titles: list[str] = []

        async def offered() -> bool:
            titles[:] = [a.title for a in await actions()]
            return any(t.startswith("Add in Zotero") for t in titles)

        deadline = asyncio.get_running_loop().time() + 60
        while not await offered():  # the entry's verdict comes from the background run
            assert asyncio.get_running_loop().time() < deadline, titles
            await asyncio.sleep(0.3)
        add = next(a for a in await actions() if a.title.startswith("Add in Zotero"))
        assert add.title == "Add in Zotero: DOI → 10.1109/mcse.2007.55", titles
        assert not any(t.startswith("Fix in Zotero") for t in titles), titles  # no finding to answer
        result = await client.workspace_execute_command_async(
            lsp.ExecuteCommandParams(add.command.command, add.command.arguments)
        )
        assert result["outcome"] == "written", result
        assert "DOI: (empty) → 10.1109/mcse.2007.55" in asked[0], asked
        assert [p.body for p in zotero.patches()] == [{"DOI": "10.1109/mcse.2007.55"}]
