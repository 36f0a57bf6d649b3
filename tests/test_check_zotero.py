"""``citelens check --fix / --diff`` on a .bib a Better BibTeX auto-export writes: the fix goes to
the Zotero item (the fake Zotero, tests/fakes/zotero.py), never into the file, or is refused
with the reason."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.scholarly import ScholarlyFake
from tests.fakes.zotero import DWORK_NAOR_1992, RIGHT_DOI, WRONG_DOI, ZoteroFake, running_zotero, seed_paper
from tests.harness import run_citelens


def _env(fake: ScholarlyFake, z: ZoteroFake, tmp: Path) -> dict[str, str]:
    fake.add_paper(DWORK_NAOR_1992)
    return {**fake.env(cache=tmp / "cache"), **z.env(), "CITELENS_S2_RPS": "100"}


def test_fix_writes_to_zotero_and_reads_the_export(scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    with running_zotero(tmp_path / "profile", export_delay_s=0.3) as z:
        paper = seed_paper(z, tmp_path / "paper")
        env = _env(scholarly_server, z, tmp_path)
        proc = run_citelens("check", str(paper.dir), "--fix", "--fail-on", "warning", env=env, timeout=120)
        err = proc.stderr
        assert "refs.bib is written by a Better BibTeX auto-export" in err, err
        item = z.item("dwork92pricingvia")["key"]
        assert (
            f"writing to Zotero through Zotero's local API: My Library, item {item}: "
            f"DOI: {WRONG_DOI} → {RIGHT_DOI}" in err
        ), err
        assert "Fixed in Zotero, exported: dwork92pricingvia in refs.bib." in err, err
        assert [p.body for p in z.patches()] == [{"DOI": RIGHT_DOI}]
        assert f"doi = {{{RIGHT_DOI}}}" in paper.bib.read_text(encoding="utf-8")
        assert proc.returncode == 0, (proc.stdout, err)  # the check of the exported file is clean


def test_diff_shows_the_change_and_writes_nothing(scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    with running_zotero(tmp_path / "profile") as z:
        paper = seed_paper(z, tmp_path / "paper")
        before = paper.bib.read_text(encoding="utf-8")
        proc = run_citelens(
            "check", str(paper.dir), "--diff", env=_env(scholarly_server, z, tmp_path), timeout=120
        )
        assert "would write to Zotero through Zotero's local API" in proc.stderr, proc.stderr
        assert f"DOI: {WRONG_DOI} → {RIGHT_DOI}" in proc.stderr
        assert proc.stdout == ""  # no edit of the file in the diff
        assert z.patches() == [] and paper.bib.read_text(encoding="utf-8") == before


def test_fix_refuses_with_the_reason_when_zotero_takes_no_writes(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    with running_zotero(tmp_path / "profile", local_mode="zotero9") as z:
        paper = seed_paper(z, tmp_path / "paper")
        before = paper.bib.read_text(encoding="utf-8")
        proc = run_citelens(
            "check",
            str(paper.dir),
            "--fix",
            "--fail-on",
            "warning",
            env=_env(scholarly_server, z, tmp_path),
            timeout=120,
        )
        assert "dwork92pricingvia: not fixed: Cannot write to Zotero here" in proc.stderr, proc.stderr
        assert "Zotero 9 or older" in proc.stderr and "zoteroApiKey" in proc.stderr
        assert paper.bib.read_text(encoding="utf-8") == before  # never edited as text
        assert proc.returncode == 1 and "DOI_MISMATCH" in proc.stdout


def test_add_missing_fills_in_the_item_too(scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    with running_zotero(tmp_path / "profile", export_delay_s=0.3) as z:
        paper = seed_paper(z, tmp_path / "paper")
        z.item("hunter2007")["data"]["DOI"] = ""
        z._export(z.exports[0])
        env = _env(scholarly_server, z, tmp_path)
        proc = run_citelens("check", str(paper.dir), "--fix", env=env, timeout=120)
        assert [p.body for p in z.patches()] == [{"DOI": RIGHT_DOI}], proc.stderr  # the finding only
        proc = run_citelens("check", str(paper.dir), "--fix", "--add-missing", env=env, timeout=120)
        assert [p.body for p in z.patches()][1:] == [{"DOI": "10.1109/mcse.2007.55"}], proc.stderr
        assert "doi = {10.1109/mcse.2007.55}" in paper.bib.read_text(encoding="utf-8")
