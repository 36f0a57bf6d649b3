"""Build the VS Code extension the way a contributor does (npm ci, compile, vsce package)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import ROOT

EXT = ROOT / "clients" / "vscode"


def run_in_extension(argv: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=EXT, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, (
        f"`{' '.join(argv)}` failed in {EXT} (exit {proc.returncode}):\n"
        f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


def build_vsix(out: Path) -> Path:
    missing = [tool for tool in ("node", "npm", "npx") if shutil.which(tool) is None]
    if missing:
        pytest.fail(
            f"{', '.join(missing)} not on PATH: the VS Code extension test needs Node.js >= 20 "
            "and npm (e.g. `apt-get install nodejs npm`)."
        )
    run_in_extension(["npm", "ci", "--no-audit", "--no-fund"])
    run_in_extension(["npm", "run", "compile"])
    run_in_extension(["npx", "--no-install", "vsce", "package", "--out", str(out)])
    return out
