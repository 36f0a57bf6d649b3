"""The Neovim client (clients/neovim) and a repository's settings (issue 41 #3): like VS
Code, it reads the workspace's .vscode/settings.json ``citelens.*`` keys, says which values
came from the workspace and whether the user trusts it (``vim.g.citelens_trusted_workspaces``,
the client's own opt-in), and never passes on ``citelens.server.*``; the server then drops
what an untrusted workspace set that decides what counts as verified."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from citelens.core.settings import untrusted_dropped
from tests.harness import ROOT
from tests.test_neovim_e2e import nvim_binary

SETTINGS_JSON = """{
  // the repository's settings, as VS Code writes them (comments, a trailing comma)
  "citelens.snapshot": "/repo/one-work-snapshot.db", /* shipped with it */
  "citelens.cacheKey": "the-repository-s-key",
  "citelens.s2ApiUrl": "http://attacker.example/s2",
  "citelens.diagnosticSeverity": {"UNVERIFIED": "off"},
  "citelens.server.command": ["sh", "-c", "echo pwned"],
  "other.setting": "a // not a comment, \\"quoted\\"",
}
"""


def _sent(root: Path, trusted: str, tmp: Path) -> dict[str, Any]:
    """What the client sends the server, with ``vim.g.citelens_trusted_workspaces = trusted``."""
    out = tmp / f"sent-{abs(hash(trusted))}.json"
    lua = (
        f"vim.g.citelens_trusted_workspaces = {trusted}; "
        f"local s = require('citelens.settings').for_server({json.dumps(str(root))}, "
        "{snapshot = '/home/me/my-snapshot.db', mailto = 'me@example.org'}); "
        f"local f = io.open({json.dumps(str(out))}, 'w'); f:write(vim.json.encode(s)); f:close()"
    )
    proc = subprocess.run(
        [str(nvim_binary()), "--headless", "--clean", "-c", f"set rtp^={ROOT / 'clients' / 'neovim'}",
         "-c", f"lua {lua}", "-c", "qa!"],
        capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL,
        env={"HOME": str(tmp), "XDG_STATE_HOME": str(tmp / "state"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0 and out.is_file(), proc.stdout + proc.stderr
    sent: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return sent


@pytest.mark.parametrize("trusted", ["nil", "{'/somewhere/else'}"])
def test_an_untrusted_repository_never_decides_what_counts_as_verified(tmp_path: Path, trusted: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".vscode").mkdir(parents=True)
    (repo / ".vscode" / "settings.json").write_text(SETTINGS_JSON, encoding="utf-8")
    sent = _sent(repo, trusted, tmp_path)
    assert "server.command" not in json.dumps(sent) and "pwned" not in json.dumps(sent)
    assert sent["client"]["workspaceTrusted"] is False
    from_workspace = sorted(sent["client"]["fromWorkspace"])
    assert from_workspace == ["cacheKey", "diagnosticSeverity", "s2ApiUrl", "snapshot"]
    applied, dropped = untrusted_dropped(sent)
    assert dropped == ["cacheKey", "s2ApiUrl", "snapshot"]
    assert applied == {"snapshot": "/home/me/my-snapshot.db", "mailto": "me@example.org",
                       "diagnosticSeverity": {"UNVERIFIED": "off"}}  # the harmless ones apply


@pytest.mark.parametrize("trusted", ["true", "{'REPO'}"])
def test_a_trusted_repository_sets_them(tmp_path: Path, trusted: str) -> None:
    repo = tmp_path / "repo"
    (repo / ".vscode").mkdir(parents=True)
    (repo / ".vscode" / "settings.json").write_text(SETTINGS_JSON, encoding="utf-8")
    sent = _sent(repo, trusted.replace("REPO", str(repo)), tmp_path)
    applied, dropped = untrusted_dropped(sent)
    assert dropped == [] and applied["snapshot"] == "/repo/one-work-snapshot.db"


def test_without_a_workspace_file_the_users_settings_go_as_they_are(tmp_path: Path) -> None:
    sent = _sent(tmp_path / "empty", "nil", tmp_path)
    assert sent == {"snapshot": "/home/me/my-snapshot.db", "mailto": "me@example.org"}
