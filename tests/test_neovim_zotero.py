"""Fix in Zotero in a real, headless Neovim (clients/neovim's config, as documented).

The paper's refs.bib is the Better BibTeX auto-export of the fake Zotero (tests/fakes/zotero.py,
named in the fake profile's prefs.js); its Dwork & Naor entry has a PNAS paper's DOI. The Lua side
(tests/nvim/e2e.lua, step ``zotero``) runs "Fix in Zotero" at the citation's DOI_MISMATCH; Neovim
asks the writer with its own prompt (vim.ui.select for the server's window/showMessageRequest),
answered by typing the number of "Write to Zotero". The fake Zotero receives the PATCH, its export
hook writes refs.bib again, and the finding leaves the paper. A second run, in a read-only group
library, is refused (403) and changes nothing.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scholarly import running
from tests.fakes.zotero import (
    DWORK_NAOR_1992,
    MISMATCH_KEY,
    RIGHT_DOI,
    WRONG_DOI,
    BbtPaper,
    ZoteroFake,
    running_zotero,
    seed_paper,
)
from tests.test_neovim_e2e import NVIM_DIR, NVIM_TIMEOUT_S, _lsp_log, nvim_binary, nvim_env


def _run(tmp: Path, z: ZoteroFake, paper: BbtPaper, message: str, settle_ms: int) -> dict[str, Any]:
    out = tmp / "result.json"
    scenario = {
        "open": str(paper.tex),
        "out": str(out),
        "want": [{"code": "DOI_MISMATCH", "file": str(paper.tex)}],
        "diagnostics_timeout_ms": 90_000,
        "zotero": {
            "code": "DOI_MISMATCH",
            "file": str(paper.tex),
            "choose": "Write to Zotero",
            "message": message,
            "timeout_ms": 60_000,
            "settle_ms": settle_ms,
        },
    }
    with running() as fake:
        fake.add_paper(DWORK_NAOR_1992)
        env = nvim_env(tmp, fake.env())
        env.update(z.env())
        env["CITELENS_TEST_SCENARIO"] = json.dumps(scenario)
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
        f"nvim exited {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}\n{_lsp_log(tmp)}"
    )
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    result["lsp_log"] = _lsp_log(tmp)
    return result


@pytest.fixture(scope="module")
def fixed(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[dict[str, Any], ZoteroFake, BbtPaper, str]]:
    tmp = tmp_path_factory.mktemp("nvim-zotero")
    with running_zotero(tmp / "profile", export_delay_s=0.5) as z:
        paper = seed_paper(z, tmp / "paper")
        before = paper.bib.read_text(encoding="utf-8")
        yield _run(tmp, z, paper, "Fixed in Zotero", 30_000), z, paper, before


@pytest.fixture(scope="module")
def refused(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[dict[str, Any], ZoteroFake, BbtPaper, str]]:
    tmp = tmp_path_factory.mktemp("nvim-zotero-ro")
    with running_zotero(tmp / "profile", export_delay_s=0.5) as z:
        z.add_group(7, "Reading group", editable=False)
        paper = seed_paper(z, tmp / "paper", library="groups/7")
        before = paper.bib.read_text(encoding="utf-8")
        yield _run(tmp, z, paper, "Zotero refused the write", 2_000), z, paper, before


def _context(r: dict[str, Any]) -> str:
    log = r["lsp_log"][-3000:]
    return f"error: {r.get('error')}\nsteps: {r.get('steps')}\n{r.get('zotero_messages')}\n{log}"


def test_fix_in_zotero_is_first_and_editing_the_bib_second(fixed: Any) -> None:
    r, *_ = fixed
    titles = r.get("zotero_titles")
    assert titles, _context(r)
    assert titles[0] == f"Fix in Zotero: DOI → {RIGHT_DOI}", titles
    assert titles[1] == "Edit the .bib anyway (the next export overwrites it)", titles


def test_neovim_shows_the_change_and_the_writer_accepts(fixed: Any) -> None:
    r, *_ = fixed
    assert r.get("zotero_choices") == ["Write to Zotero", "Cancel"], _context(r)
    prompt = r["zotero_prompt"]
    assert f"DOI: {WRONG_DOI} → {RIGHT_DOI}" in prompt and MISMATCH_KEY in prompt, prompt
    assert r["zotero_result"]["outcome"] == "written", _context(r)


def test_zotero_receives_a_patch_of_the_doi_alone(fixed: Any) -> None:
    r, z, _paper, _before = fixed
    assert [p.body for p in z.patches()] == [{"DOI": RIGHT_DOI}], _context(r)


def test_the_export_comes_back_and_the_finding_is_gone(fixed: Any) -> None:
    r, _z, paper, before = fixed
    assert paper.bib.read_text(encoding="utf-8") == before.replace(WRONG_DOI, RIGHT_DOI)
    assert r.get("zotero_said"), _context(r)
    assert (
        "Fixed in Zotero, exported: dwork92pricingvia in refs.bib, verified." in r["zotero_messages"]
    )
    assert not [d for d in r["diagnostics_after"] if d["code"] == "DOI_MISMATCH"], r["diagnostics_after"]


def test_a_read_only_group_is_refused_and_nothing_changes(refused: Any) -> None:
    r, z, paper, before = refused
    assert r.get("zotero_said"), _context(r)
    assert r["zotero_result"]["outcome"] == "refused", _context(r)
    assert "Reading group" in r["zotero_messages"] and "403" in r["zotero_messages"], r["zotero_messages"]
    assert [p.status for p in z.patches()] == [403]
    assert paper.bib.read_text(encoding="utf-8") == before and z.exported == 1
    assert [d for d in r["diagnostics_after"] if d["code"] == "DOI_MISMATCH"]  # the finding stays
