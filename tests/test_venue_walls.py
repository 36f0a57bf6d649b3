"""A venue's walls and budgets (issue 32, breaks 3-5): a paper's check reads nothing outside
its folder, each paper gets its own stable report, and a paper over its budget is checked as
far as it goes and reported "not fully checked", never skipped and never holding up the
others. The real ``citelens check FOLDER --venue OUT``, against the fake APIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.scholarly import ScholarlyFake

PRIVATE = ("@article{secretkey, title={Private Unpublished Findings of the Reviewer},\n"
           "  author={Hidden, Hal}, year={2024}, journal={Nowhere}}\n")
WATER = ("@article{water, title={The Structure of Ordinary Water}, author={Frank, Henry S.},\n"
         "  year={1970}, journal={Science}, doi={10.1126/science.169.3946.635}}\n")


def _tex(body: str) -> str:
    return f"\\documentclass{{article}}\\begin{{document}}{body}\\end{{document}}\n"


def run(v: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", str(v), "--venue", str(out)],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def lines(out: Path) -> dict[str, dict[str, object]]:
    rows = [json.loads(x) for x in (out / "summary.jsonl").read_text().splitlines()]
    return {str(r["path"]).rsplit(os.sep, 1)[-1]: r for r in rows}


def test_a_venue_paper_reads_nothing_outside_its_folder(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """Absolute and ``..`` paths in \\bibliography, \\addbibresource and \\input, a .bib that
    is a symlink out, and a paper folder that is a symlink to a private folder: nothing of
    the private folder is read, asked about or reported, and each such paper says it was not
    fully checked. Before, ``\\bibliography{/absolute/private}`` sent the private entry's title
    to the APIs and printed it in summary.html, and a paper linked to /usr was walked."""
    private = tmp_path / "private"
    private.mkdir()
    (private / "secret.bib").write_text(PRIVATE)
    (private / "inc.tex").write_text("Also \\cite{secretkey}.\n\\bibliography{secret}\n")
    (private / "main.tex").write_text(_tex("\\cite{secretkey}\\bibliography{secret}"))
    v = tmp_path / "venue"
    for name, body in (
        ("abs", f"\\cite{{secretkey}}\\input{{{private}/inc}}\\bibliography{{{private}/secret}}"),
        ("dots", "\\cite{secretkey}\\input{../../private/inc}\\addbibresource{../../private/secret.bib}"),
        ("filelink", "\\cite{secretkey}\\bibliography{refs}"),
        ("fine", "\\cite{water}\\bibliography{refs}"),
    ):
        (v / name).mkdir(parents=True)
        (v / name / "main.tex").write_text(_tex(body))
    (v / "filelink" / "refs.bib").symlink_to(private / "secret.bib")
    (v / "fine" / "refs.bib").write_text(WATER)
    (v / "linked").symlink_to(private, target_is_directory=True)
    out = tmp_path / "out"
    proc = run(v, out, {**os.environ, **scholarly_server.env(cache=tmp_path / "cache")})
    assert proc.returncode in (0, 1), proc.stderr
    seen = (out / "summary.html").read_text() + "".join(
        p.read_text() for p in (out / "papers").glob("*.json")) + json.dumps(scholarly_server.requests())
    assert "Private Unpublished" not in seen and "Hidden" not in seen
    by = lines(out)
    assert set(by) == {"abs", "dots", "filelink", "fine", "linked"}, by
    for name in ("abs", "dots", "filelink"):
        assert by[name]["not_fully_checked"] == [
            "not fully checked: it names files outside its folder, which were not read"], by[name]
    assert by["linked"]["not_fully_checked"] == [
        "not checked: it is a link to a place outside the venue folder"], by["linked"]
    assert "not_fully_checked" not in by["fine"] and by["fine"]["statuses"] == {"VERIFIED": 1}
    assert "not fully checked" in (out / "summary.html").read_text()


def test_each_paper_gets_its_own_stable_report(tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """``paper one`` and ``paper_one``, ``論文`` and ``статья``, ``Case`` and ``case``: one
    report each, under the same names on a second run. Before, 9 papers gave 7 reports and
    the summary dropped one of each pair."""
    v = tmp_path / "venue"
    names = ["paper one", "paper_one", "論文", "статья", "Case", "case", "plain"]
    for i, name in enumerate(names):
        (v / name).mkdir(parents=True)
        (v / name / "main.tex").write_text(_tex(f"\\cite{{k{i}}}\\bibliography{{refs}}"))
        (v / name / "refs.bib").write_text(
            f"@misc{{k{i}, title={{Paper number {i}}}, author={{Author, Ann}}, year={{2020}}}}\n")
    out = tmp_path / "out"
    env = {**os.environ, **scholarly_server.env(cache=tmp_path / "cache"), "CITELENS_OFFLINE": "1"}
    run(v, out, env)
    by = lines(out)
    assert set(by) == set(names), by
    reports = {str(r["report"]) for r in by.values()}
    assert len(reports) == len(names) and all((out / r).exists() for r in reports), reports
    assert by["plain"]["report"] == "papers/plain.json"  # a safe name is kept
    for i, name in enumerate(names):  # each report is its own paper's
        entries = json.loads((out / str(by[name]["report"])).read_text())["entries"]
        assert [e["key"] for e in entries] == [f"k{i}"], (name, entries)
    again = run(v, tmp_path / "out2", env)
    assert {str(r["report"]) for r in lines(tmp_path / "out2").values()} == reports, again.stderr
    assert (out / "summary.html").read_text().count("<tr>") == len(names) + 1


def test_a_paper_over_its_budget_is_reported_and_never_stalls_the_others(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """A paper of 3,000 files (budget 50 files), one of 40 kB (budget 0.01 MB) and one whose
    reading is over its time budget (0 s) are each checked as far as the budget goes and
    reported "not fully checked: …"; the paper beside them is checked in full. Before, 1,000
    two-byte files took 100 s, and a paper of 100,000 stalled the whole venue."""
    v = tmp_path / "venue"
    (v / "many").mkdir(parents=True)
    (v / "many" / "main.tex").write_text(_tex("\\cite{k}\\bibliography{refs}"))
    for i in range(3000):
        (v / "many" / f"part{i:04d}.tex").write_text("x\n")
    (v / "big").mkdir()
    (v / "big" / "main.tex").write_text(_tex("\\cite{k}\\bibliography{refs}" + "%" * 40_000))
    (v / "fine").mkdir()
    (v / "fine" / "main.tex").write_text(_tex("\\cite{water}\\bibliography{refs}"))
    (v / "fine" / "refs.bib").write_text(WATER)
    out = tmp_path / "out"
    env = {**os.environ, **scholarly_server.env(cache=tmp_path / "cache"), "CITELENS_OFFLINE": "1",
           "CITELENS_VENUE_PAPER_MAX_FILES": "50", "CITELENS_VENUE_PAPER_MAX_MB": "0.01"}
    run(v, out, env)
    by = lines(out)
    assert set(by) == {"many", "big", "fine"}, by
    assert by["many"]["not_fully_checked"] == [
        "not fully checked: more than 50 files; the rest were not read"], by["many"]
    assert by["big"]["not_fully_checked"] == [
        "not fully checked: more than 0.01 MB of files; the rest were not read"], by["big"]
    assert "not_fully_checked" not in by["fine"] and by["fine"]["entries"] == 1
    slow = run(v, tmp_path / "out2", {**env, "CITELENS_VENUE_PAPER_MAX_FILES": "5000",
                                      "CITELENS_VENUE_PAPER_MAX_MB": "64",
                                      "CITELENS_VENUE_PAPER_MAX_SECONDS": "0"})
    notes = {k: r.get("not_fully_checked") for k, r in lines(tmp_path / "out2").items()}
    assert notes["many"] == ["not fully checked: reading took more than 0 s; the rest were not read"], (
        notes, slow.stderr)
