"""One walker: ``citelens check FOLDER`` and the editor's workspace folders skip the same
folders (hidden ones, dependencies, virtual environments, build output)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lsprotocol import types as lsp

from tests.lsp_session import session

#: Folder -> whether a .bib in it is a bibliography of the workspace.
FOLDERS = {
    "paper": True, "lib/shared": True, "build": False, "_build": False, "node_modules": False,
    "venv": False, ".venv": False, "__pycache__": False, ".git": False, "paper/.hidden": False,
}


def _workspace(tmp_path: Path) -> dict[str, str]:
    """A .bib with one entry (key ``walkN``) in each folder; key -> folder."""
    keys = {}
    for n, folder in enumerate(FOLDERS):
        where = tmp_path / folder
        where.mkdir(parents=True, exist_ok=True)
        key = f"walk{n}"
        (where / f"refs{n}.bib").write_text(
            f"@article{{{key},\n  title = {{Walking folder {n}}},\n  author = {{Walker, Ann}},\n"
            "  year = {2020},\n}\n", encoding="utf-8")
        keys[key] = folder
    return keys


def _check_keys(folder: Path) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "server")}
    out = subprocess.run(
        [sys.executable, "-m", "citelens", "check", str(folder), "--no-verify", "--format", "json"],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    report = json.loads(out.stdout)
    return {e["key"] for e in report["entries"]}


async def test_check_and_the_editor_see_the_same_bibliographies(tmp_path: Path) -> None:
    keys = _workspace(tmp_path)
    wanted = {k for k, folder in keys.items() if FOLDERS[folder]}
    assert _check_keys(tmp_path) == wanted
    async with session("visual-studio-code", tmp_path) as client:
        symbols = await client.workspace_symbol_async(lsp.WorkspaceSymbolParams(query="walk"))
        assert symbols is not None
        seen = {str(s.name).split(" ", 1)[0] for s in symbols}
    assert seen == wanted, sorted((k, keys[k]) for k in seen ^ wanted)
