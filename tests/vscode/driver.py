"""Run a real VS Code (code-server, installed by scripts/install-code-server.sh) with the
CiteLens extension, and drive it from headless Chromium with Playwright.

Nothing here downloads a browser: Playwright drives Debian's ``chromium``. Anything missing is
a test failure that says what to install (never a silent skip).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.harness import ROOT, free_port

INSTALL_SCRIPT = ROOT / "scripts" / "install-code-server.sh"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DEPS_HINT = "run scripts/install-vscode-test-deps.sh as root (apt: chromium ripgrep libkrb5-dev)"


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"the VS Code end-to-end test needs Debian's chromium on PATH: {DEPS_HINT}")


def code_server() -> Path:
    """The code-server executable (installed once into the cache folder by the script)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.fail("the VS Code end-to-end test needs node 20 and npm on PATH")
    proc = subprocess.run(
        ["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=1200, check=False
    )
    if proc.returncode != 0:
        pytest.fail(
            f"scripts/install-code-server.sh failed (exit {proc.returncode}); {DEPS_HINT}\n"
            f"{proc.stderr[-4000:]}"
        )
    exe = Path(proc.stdout.strip().splitlines()[-1])
    if not exe.exists():
        pytest.fail(f"install-code-server.sh printed {exe}, which does not exist")
    return exe


@dataclass
class CodeServer:
    url: str
    user_data: Path
    log: Path

    def folder_url(self, folder: Path) -> str:
        return f"{self.url}/?folder={folder}"

    def server_log(self) -> str:
        """The CiteLens output channel and code-server's own log, for failure messages."""
        parts = [self.log.read_text(errors="replace")[-3000:]] if self.log.is_file() else []
        for f in sorted(self.user_data.glob("logs/**/*CiteLens*.log")):
            parts.append(f"--- {f.name}\n{f.read_text(errors='replace')[-6000:]}")
        return "\n".join(parts)


@contextlib.contextmanager
def running_code_server(exe: Path, vsix: Path, tmp: Path, env: dict[str, str],
                        settings: dict[str, Any]) -> Iterator[CodeServer]:
    """code-server on a free loopback port with ``vsix`` installed and its own user data."""
    user_data, extensions = tmp / "user-data", tmp / "extensions"
    (user_data / "User").mkdir(parents=True, exist_ok=True)
    extensions.mkdir(parents=True, exist_ok=True)
    (user_data / "User" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    config = tmp / "code-server.yaml"
    config.write_text("auth: none\ncert: false\n", encoding="utf-8")
    base = [str(exe), "--config", str(config), "--user-data-dir", str(user_data),
            "--extensions-dir", str(extensions)]
    install = subprocess.run([*base, "--install-extension", str(vsix)], env=env,
                             capture_output=True, text=True, timeout=180, check=False)
    assert install.returncode == 0, f"--install-extension failed:\n{install.stdout}\n{install.stderr}"
    port = free_port()
    log = tmp / "code-server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*base, "--auth", "none", "--disable-telemetry", "--disable-update-check",
             "--disable-workspace-trust", "--disable-getting-started-override",
             "--bind-addr", f"127.0.0.1:{port}"],
            env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                break
            if proc.poll() is not None:
                pytest.fail(f"code-server exited {proc.returncode}:\n{log.read_text(errors='replace')}")
            time.sleep(0.2)
        else:
            pytest.fail(f"code-server did not listen on port {port} in 60 s:\n{log.read_text()}")
        yield CodeServer(f"http://127.0.0.1:{port}", user_data, log)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            proc.wait(10)
