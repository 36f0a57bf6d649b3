"""``citelens check`` as a user runs it: a subprocess on the real papers of the corpus.

Expected findings are computed from the papers' text (or stated in their SOURCES.md), not
copied from CiteLens's own output. Every run uses ``--no-verify``: nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.harness import CORPUS, ROOT, run_citelens

PAPERS = CORPUS / "papers"


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_citelens("check", *args, "--no-verify", "-q", cwd=cwd, env=env, timeout=120)


def check_json(*args: str, cwd: Path) -> tuple[int, dict[str, Any]]:
    proc = run(*args, "--format", "json", cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def by_code(report: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [d for d in report["diagnostics"] if d["code"] == code]


def utf16_col(line: str, index: int) -> int:
    return len(line[:index].encode("utf-16-le")) // 2


# --------------------------------------------------------------------------- thammegowda


THAMME = PAPERS / "thammegowda-dissertation"
UNDEFINED = ("Artetxe-2018-unmt-iclr", "Lample-2018-unmt-iclr")


def expected_undefined_ranges() -> list[tuple[str, str, dict[str, Any]]]:
    """(file, key, LSP range) of every citation of the two undefined keys, read from the .tex."""
    out = []
    for path in sorted(THAMME.rglob("*.tex")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            if line.lstrip().startswith("%"):
                continue
            for key in UNDEFINED:
                for m in re.finditer(re.escape(key) + r"(?=[,}\s])", line):
                    s = utf16_col(line, m.start())
                    e = utf16_col(line, m.end())
                    rng = {"start": {"line": n, "character": s},
                           "end": {"line": n, "character": e}}
                    out.append((path.relative_to(THAMME).as_posix(), key, rng))
    return sorted(out, key=lambda t: (t[0], t[2]["start"]["line"], t[2]["start"]["character"]))


def test_thammegowda_reports_exactly_the_two_undefined_keys() -> None:
    status, report = check_json("main1.tex", cwd=THAMME)
    assert status == 1
    undefined = by_code(report, "UNDEFINED_CITATION")
    got = [(d["file"], d["key"], d["range"]) for d in undefined]
    expected = expected_undefined_ranges()
    assert len(expected) == 4
    assert got == expected
    # the exact places, as a reader of the .tex files would find them
    assert [(f, r["start"]["line"], r["start"]["character"], r["end"]["character"])
            for f, _, r in got] == [
        ("chapter/04-evaluation.tex", 395, 162, 184),
        ("chapter/04-evaluation.tex", 395, 185, 206),
        ("chapter/06-robustness.tex", 210, 62, 84),
        ("chapter/06-robustness.tex", 210, 85, 106),
    ]
    for d in undefined:
        assert d["severity"] == "error"
        assert d["key"] in d["message"]
    # \renewcommand\cite{\citep} and \newcommand\newcite{\citet} are definitions, not citations
    assert not any(d.get("key", "").startswith("\\") for d in report["diagnostics"])
    # DUPLICATE_ENTRY: entries of anthology.bib that share a DOI (a local comparison)
    assert {d["code"] for d in report["diagnostics"]} <= {
        "UNDEFINED_CITATION", "DUPLICATE_KEY", "DUPLICATE_ENTRY"}


def test_thammegowda_text_format() -> None:
    proc = run("main1.tex", cwd=THAMME)
    assert proc.returncode == 1
    lines = [ln for ln in proc.stdout.splitlines() if "UNDEFINED_CITATION" in ln]
    assert lines == [
        "chapter/04-evaluation.tex:396:163: error UNDEFINED_CITATION: "
        "Citation key 'Artetxe-2018-unmt-iclr' is not defined in anthology.bib",
        "chapter/04-evaluation.tex:396:186: error UNDEFINED_CITATION: "
        "Citation key 'Lample-2018-unmt-iclr' is not defined in anthology.bib",
        "chapter/06-robustness.tex:211:63: error UNDEFINED_CITATION: "
        "Citation key 'Artetxe-2018-unmt-iclr' is not defined in anthology.bib",
        "chapter/06-robustness.tex:211:86: error UNDEFINED_CITATION: "
        "Citation key 'Lample-2018-unmt-iclr' is not defined in anthology.bib",
    ]
    assert re.search(r"^\d+ entries checked: \d+ errors?", proc.stdout, re.M)


def test_sarif_structure() -> None:
    proc = run("main1.tex", "--format", "sarif", cwd=THAMME)
    assert proc.returncode == 1, proc.stderr
    sarif = json.loads(proc.stdout)
    assert sarif["version"] == "2.1.0"
    assert "sarif" in sarif["$schema"] and "2.1.0" in sarif["$schema"]
    assert len(sarif["runs"]) == 1
    run0 = sarif["runs"][0]
    driver = run0["tool"]["driver"]
    assert driver["name"] == "CiteLens"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(rule_ids) == len(set(rule_ids))
    assert {"UNDEFINED_CITATION", "DUPLICATE_KEY"} <= set(rule_ids)
    results = run0["results"]
    assert results
    levels = {"none", "note", "warning", "error"}
    for r in results:
        assert r["ruleId"] in rule_ids
        if "ruleIndex" in r:
            assert rule_ids[r["ruleIndex"]] == r["ruleId"]
        assert r["level"] in levels
        assert r["message"]["text"]
        (loc,) = r["locations"]
        phys = loc["physicalLocation"]
        uri = phys["artifactLocation"]["uri"]
        assert "\\" not in uri and not uri.startswith("/")
        assert (THAMME / uri).is_file()
        region = phys["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        end_line = region.get("endLine", region["startLine"])  # SARIF: endLine defaults to startLine
        assert (end_line, region["endColumn"]) >= (region["startLine"], region["startColumn"])
    undefined = sorted(
        (r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
         r["locations"][0]["physicalLocation"]["region"]["startLine"],
         r["locations"][0]["physicalLocation"]["region"]["startColumn"])
        for r in results if r["ruleId"] == "UNDEFINED_CITATION"
    )
    assert undefined == [
        ("chapter/04-evaluation.tex", 396, 163), ("chapter/04-evaluation.tex", 396, 186),
        ("chapter/06-robustness.tex", 211, 63), ("chapter/06-robustness.tex", 211, 86),
    ]


def test_json_top_level_shape() -> None:
    _, report = check_json("main1.tex", cwd=THAMME)
    assert report["version"] == 2
    assert {"version", "entries", "diagnostics", "summary"} <= set(report)
    assert isinstance(report["entries"], list) and report["entries"]
    for e in report["entries"]:
        assert {"key", "file", "line", "status"} <= set(e)
        assert isinstance(e["line"], int) and e["line"] >= 0
        assert e["status"] == "UNCHECKED"  # --no-verify
    assert report["diagnostics"]
    for d in report["diagnostics"]:
        assert {"file", "range", "severity", "code", "message"} <= set(d)
        assert d["severity"] in {"error", "warning", "information", "hint"}
        for end in ("start", "end"):
            assert set(d["range"][end]) >= {"line", "character"}
    summary = report["summary"]
    assert summary["diagnostics"] == len(report["diagnostics"])
    assert summary["entries"] == len(report["entries"])
    assert summary["errors"] == sum(d["severity"] == "error" for d in report["diagnostics"])
    # entries[].line is 0-based, like every range, and points at the entry in the .bib
    bib = (THAMME / "anthology.bib").read_text(encoding="utf-8").splitlines()
    for e in report["entries"][:20]:
        assert e["key"] in bib[e["line"]], e


# --------------------------------------------------------------------------- bhandari


BHANDARI = PAPERS / "bhandari-phd-thesis"
_ENTRY_START = re.compile(r"^[ \t]*@(\w+)[ \t]*\{[ \t]*([^,\s]+)[ \t]*,", re.M)


def bhandari_definitions() -> dict[str, list[int]]:
    """0-based lines of each key's definitions (lines that start with '%' are not entries)."""
    text = (BHANDARI / "bib" / "references.bib").read_text(encoding="utf-8")
    out: dict[str, list[int]] = defaultdict(list)
    for m in _ENTRY_START.finditer(text):
        if m.group(1).lower() in {"string", "comment", "preamble"}:
            continue
        out[m.group(2)].append(text.count("\n", 0, m.start()))
    return out


def test_bhandari_duplicate_keys_once_each_with_the_other_definitions_related() -> None:
    defs = bhandari_definitions()
    duplicated = {k: lines for k, lines in defs.items() if len(lines) > 1}
    assert len(duplicated) == 171  # as stated in the paper's SOURCES.md
    status, report = check_json("main.tex", cwd=BHANDARI)
    assert status == 1
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in by_code(report, "DUPLICATE_KEY"):
        assert d["file"] == "bib/references.bib"
        found[d["key"]].append(d)
    for key, lines in duplicated.items():
        # one problem per key, at its first definition, the others as related places
        (d,) = found.get(key, [])
        assert d["range"]["start"]["line"] == lines[0], key
        assert d["severity"] == "error"
        assert f"defined {len(lines)} times" in d["message"]
        assert sorted(r["range"]["start"]["line"] for r in d["related"]) == lines[1:], key
        assert all(r["file"] == "bib/references.bib" for r in d["related"])
    assert report["summary"]["by_code"]["DUPLICATE_KEY"] == len(duplicated)
    # no other duplicates than the real ones
    assert set(found) == set(duplicated)
    assert not by_code(report, "UNDEFINED_CITATION")
    assert not by_code(report, "BIB_SYNTAX")


# "%@misc{R_Core_Team2019-kt, ...}" (lines 1139 and 7158) is an entry commented out; biber (this
# thesis uses biblatex) reads % as a comment, so the key is defined once.
def test_bhandari_commented_out_entries_are_not_duplicates() -> None:
    _, report = check_json("main.tex", cwd=BHANDARI)
    assert not [d for d in by_code(report, "DUPLICATE_KEY") if d["key"] == "R_Core_Team2019-kt"]


# --------------------------------------------------------------------------- markdown papers


def test_tsr_dockerfiles_rmd_html_comment_citations_not_reported() -> None:
    folder = PAPERS / "tsr-dockerfiles-rmd"
    _, report = check_json("ten-simple-rules-dockerfiles.Rmd", cwd=folder)
    assert by_code(report, "UNDEFINED_CITATION") == []
    keys = {d.get("key") for d in report["diagnostics"]}
    assert not keys & {"Figueredo:2009dg", "other_2018"}
    # the one real defect: a key defined twice in bibliography.bib (one problem, two places)
    dups = by_code(report, "DUPLICATE_KEY")
    assert len(dups) == 1 and len(dups[0]["related"]) == 1
    # (and two entries sharing a figshare DOI: the same-DOI comparison needs no verification)
    assert {d["code"] for d in report["diagnostics"]} <= {"DUPLICATE_KEY", "DUPLICATE_ENTRY"}


@pytest.mark.parametrize(
    "folder", [PAPERS / "joss-gmr", ROOT / "docs" / "examples" / "gmr"], ids=["corpus", "docs"]
)
def test_joss_gmr_is_clean(folder: Path) -> None:
    if not folder.is_dir():
        pytest.skip(f"{folder} not present")
    for target in ("paper.md", "."):
        proc = run(target, "--format", "json", cwd=folder)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        report = json.loads(proc.stdout)
        assert report["diagnostics"] == []
        bib = (folder / "paper.bib").read_text(encoding="utf-8")
        assert sorted(e["key"] for e in report["entries"]) == sorted(
            m.group(2) for m in _ENTRY_START.finditer(bib))
        assert len(report["entries"]) == 6


def test_scipy_macro_parameter_is_not_a_key() -> None:
    folder = PAPERS / "scipy-1.0"
    status, report = check_json("paper.tex", cwd=folder)
    assert status == 0, report["diagnostics"]
    assert report["diagnostics"] == []
    assert not any("#" in d.get("key", "") for d in report["diagnostics"])
    proc = run("paper.tex", "--unused", "--format", "json", cwd=folder)
    unused = json.loads(proc.stdout)["diagnostics"]
    assert unused and all(d["code"] == "UNUSED_ENTRY" for d in unused)
    assert not any("#" in d.get("key", "") for d in unused)


# --------------------------------------------------------------------------- usage errors


def test_missing_path_exit_2_with_a_clear_message(tmp_path: Path) -> None:
    proc = run("does/not/exist.tex", cwd=tmp_path)
    assert proc.returncode == 2
    assert "does/not/exist.tex" in proc.stderr
    assert "no such file" in proc.stderr.lower()
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_bad_format_is_a_usage_error(tmp_path: Path) -> None:
    proc = run(str(THAMME / "main1.tex"), "--format", "xml", cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("mode", [["--offline"], ["--no-verify"]])
def test_a_problem_inside_the_fields_of_a_big_bib_is_reported(tmp_path: Path, mode: list[str]) -> None:
    """A .bib over 2 MB is parsed lazily (its fields when first read, after the analysis):
    a broken field deep inside must still be a BIB_SYNTAX error, with exit status 1."""
    entry = "@article{k%d,\n  title = {Paper k%d},\n  author = {Doe, J.},\n  year = {2001},\n}\n"
    head = "".join(entry % (i, i) for i in range(30000))
    assert len(head) > 2_000_000
    broken = "@article{broken,\n  title = {Broken},\n  junk junk = ,\n  year = {2001},\n}\n"
    (tmp_path / "big.bib").write_text(head + broken + entry % (30001, 30001), encoding="utf-8")
    env = {**os.environ, "CITELENS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", "big.bib", *mode, "-q", "--format", "json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    report = json.loads(proc.stdout)
    syntax = by_code(report, "BIB_SYNTAX")
    assert [(d["range"]["start"]["line"] + 1, d["message"]) for d in syntax] == [
        (head.count("\n") + 3, "expected 'name = value'")
    ]
    assert proc.returncode == 1
