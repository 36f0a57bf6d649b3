"""The VS Code extension builds from a clean checkout and packages into an installable .vsix.

Runs the same steps a contributor runs (``npm ci``, ``npm run compile``, ``vsce package``) in
clients/vscode. Needs node and npm on PATH (and the npm registry for ``npm ci``).
"""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

from tests.harness import ROOT

EXT = ROOT / "clients" / "vscode"


def test_vsix_contains_manifest_and_compiled_extension(vsix: Path) -> None:
    assert vsix.is_file(), f"vsce did not produce {vsix}"
    with zipfile.ZipFile(vsix) as zf:
        names = set(zf.namelist())
        assert "extension/package.json" in names
        # one bundle (esbuild) holds the extension and its runtime dependency
        assert "extension/dist/extension.js" in names
        bundle = zf.read("extension/dist/extension.js").decode("utf-8")
        assert "LanguageClient" in bundle, "vscode-languageclient is not in the bundle"
        assert not any(n.startswith("extension/node_modules/") for n in names), sorted(names)
        assert not any(n.startswith(("extension/src/", "extension/out/")) for n in names), sorted(names)
        assert len(names) <= 10, sorted(names)  # was 323 files before the bundle
        manifest = json.loads(zf.read("extension/package.json"))
    assert manifest["main"] == "./dist/extension.js"
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
    message = result["message"]
    assert "citelens-not-installed" in message
    # what to set, in one sentence
    assert "set citelens.server.command" in message, message
    assert message.count(". ") == 0 and message.endswith("."), message
    assert "PyPI" not in message and "pip install citelens" not in message, message


def test_only_settings_the_user_set_are_sent(vsix: Path) -> None:
    """A setting left alone is not sent, so CITELENS_* and the server's defaults apply to it;
    the most specific scope the user set wins (folder > workspace > user)."""
    out = _node(
        vsix,
        """
        const s = require('./out/settings.js');
        const inspected = {
          s2ApiUrl: {key: 'citelens.s2ApiUrl', defaultValue: 'https://api.semanticscholar.org/graph/v1'},
          offline: {key: 'citelens.offline', defaultValue: false, globalValue: false},
          mailto: {key: 'citelens.mailto', defaultValue: null, globalValue: 'a@b.org',
                   workspaceValue: 'c@d.org'},
          s2RequestsPerSecond: {key: 'x', defaultValue: 1, globalValue: 5, workspaceValue: 2,
                                workspaceFolderValue: 3},
        };
        console.log(JSON.stringify(s.userSettings(Object.keys(inspected), (k) => inspected[k])));
        """,
    )
    assert json.loads(out) == {"offline": False, "mailto": "c@d.org", "s2RequestsPerSecond": 3}


def test_restricted_settings_say_they_came_from_the_workspace(vsix: Path) -> None:
    """Issue 41 #3: what the extension sends says which restricted settings came from the
    workspace's .vscode/settings.json (and the user's own value of each), with the
    workspace's trust, so the server never lets an untrusted repository choose the
    snapshot, the cache or a source's address; harmless ones (severities) just apply."""
    out = _node(
        vsix,
        """
        const s = require('./out/settings.js');
        const pkg = require('./package.json');
        const restricted = s.restrictedKeys(pkg);
        const inspected = {
          snapshot: {key: 'citelens.snapshot', workspaceValue: '/repo/snap.db'},
          cacheKey: {key: 'citelens.cacheKey', globalValue: 'mine', workspaceFolderValue: 'repo'},
          s2ApiUrl: {key: 'citelens.s2ApiUrl', globalValue: 'http://mirror/s2'},
          diagnosticSeverity: {key: 'citelens.diagnosticSeverity', workspaceValue: {NOT_FOUND: 'hint'}},
        };
        const keys = Object.keys(inspected);
        console.log(JSON.stringify({
          restricted,
          untrusted: s.userSettings(keys, (k) => inspected[k], {trusted: false, restricted}),
        }));
        """,
    )
    got = json.loads(out)
    assert {"snapshot", "cacheKey", "cache", "cacheDir", "s2ApiUrl"} <= set(got["restricted"])
    assert "diagnosticSeverity" not in got["restricted"]
    sent = got["untrusted"]
    assert sent["client"] == {"workspaceTrusted": False, "fromWorkspace": ["snapshot", "cacheKey"],
                              "userValues": {"cacheKey": "mine"}}
    # what the server then applies (core/settings.untrusted_dropped)
    from citelens.core.settings import untrusted_dropped

    applied, dropped = untrusted_dropped(sent)
    assert dropped == ["cacheKey", "snapshot"]
    assert applied == {"cacheKey": "mine", "s2ApiUrl": "http://mirror/s2",
                       "diagnosticSeverity": {"NOT_FOUND": "hint"}}
