"""The VS Code extension builds from a clean checkout and packages into an installable .vsix.

Runs the same steps a contributor runs (``npm ci``, ``npm run compile``, ``vsce package``) in
clients/vscode. Needs node and npm on PATH (and the npm registry for ``npm ci``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

EXT = ROOT / "clients" / "vscode"


def _run(argv: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        argv, cwd=EXT, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, (
        f"`{' '.join(argv)}` failed in {EXT} (exit {proc.returncode}):\n"
        f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


@pytest.fixture(scope="module")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = [tool for tool in ("node", "npm", "npx") if shutil.which(tool) is None]
    if missing:
        pytest.fail(
            f"{', '.join(missing)} not on PATH: the VS Code extension test needs Node.js >= 20 "
            "and npm (e.g. `apt-get install nodejs npm`)."
        )
    out = tmp_path_factory.mktemp("vsix") / "citelens.vsix"
    _run(["npm", "ci", "--no-audit", "--no-fund"])
    _run(["npm", "run", "compile"])
    _run(["npx", "--no-install", "vsce", "package", "--out", str(out)])
    return out


def test_vsix_contains_manifest_and_compiled_extension(vsix: Path) -> None:
    assert vsix.is_file(), f"vsce did not produce {vsix}"
    with zipfile.ZipFile(vsix) as zf:
        names = set(zf.namelist())
        assert "extension/package.json" in names
        assert "extension/out/extension.js" in names
        # the runtime dependency is bundled, or the extension cannot start the client
        assert "extension/node_modules/vscode-languageclient/package.json" in names
        assert not any(n.startswith("extension/src/") for n in names), "TypeScript sources leaked"
        manifest = json.loads(zf.read("extension/package.json"))
    assert manifest["main"] == "./out/extension.js"
    assert manifest == json.loads((EXT / "package.json").read_text(encoding="utf-8"))
    commands = {c["command"] for c in manifest["contributes"]["commands"]}
    assert commands == {"citelens.verifyNow", "citelens.clearCache", "citelens.report"}
    activation = set(manifest["activationEvents"])
    for lang in ("latex", "bibtex", "markdown", "rmd", "quarto"):
        assert f"onLanguage:{lang}" in activation


def _node(vsix: Path, script: str) -> str:
    """Run a script against the compiled (not the source) extension modules."""
    proc = subprocess.run(
        ["node", "-e", script], cwd=EXT, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_server_command_from_settings(vsix: Path) -> None:
    out = _node(
        vsix,
        """
        const s = require('./out/serverCommand.js');
        console.log(JSON.stringify([
          s.resolveServerCommand(undefined, undefined),
          s.resolveServerCommand('', ['/opt/venv/bin/citelens', 'serve', '--log', 'x']),
          s.resolveServerCommand('/usr/bin/python3', ['citelens', 'serve']),
        ]));
        """,
    )
    default, custom, python = json.loads(out)
    assert [default["command"], *default["args"]] == ["citelens", "serve"]
    assert [custom["command"], *custom["args"]] == ["/opt/venv/bin/citelens", "serve", "--log", "x"]
    assert [python["command"], *python["args"]] == ["/usr/bin/python3", "-m", "citelens", "serve"]


def test_missing_server_gives_install_command(vsix: Path, tmp_path: Path) -> None:
    out = _node(
        vsix,
        f"""
        const s = require('./out/serverCommand.js');
        const cmd = s.resolveServerCommand(undefined, ['citelens-not-installed', 'serve']);
        console.log(JSON.stringify({{
          found: s.findExecutable(cmd.command, {{PATH: {json.dumps(str(tmp_path))}}}) ?? null,
          node: s.findExecutable('node') ?? null,
          message: s.missingServerMessage(cmd),
        }}));
        """,
    )
    result = json.loads(out)
    assert result["found"] is None
    assert result["node"] and Path(result["node"]).name == "node"
    assert "citelens-not-installed" in result["message"]
    assert "pip install citelens" not in result["message"]  # not published
    assert "pipx install" in result["message"] and "pip install -e ." in result["message"]
