"""``citelens check`` as CI runs it (issue 24): the real command in a subprocess, against the
fake scholarly APIs on 127.0.0.1 or offline, on made-up papers and on the corpus papers.

What CI does with the verdicts: ``--fail-on``, each problem once with its other places
related, progress lines in a log, one line base per format, same-DOI pairs without
verification, no false duplicates for web pages, an unclosed entry's key, small reports,
SARIF rule names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scholarly import ScholarlyFake, running
from tests.harness import CORPUS, ROOT, bigbib, needs_bigbib
from tests.test_verify_scenarios import BIB, TEX

PAPERS = CORPUS / "papers"

# a real paper and a fabricated one: NOT_FOUND is a warning, nothing is an error
FABRICATED_BIB = BIB[: BIB.index("@article{swapped,")] + BIB[BIB.index("@article{llama2021,") :]
FABRICATED_TEX = r"""\documentclass{article}
\begin{document}
SciPy~\cite{scipy2020} and llamas~\cite{llama2021}.
\bibliography{refs}
\end{document}
"""


@pytest.fixture
def fake() -> Iterator[ScholarlyFake]:
    with running() as server:
        yield server


def citelens(
    *args: str, cwd: Path, fake: ScholarlyFake | None = None, cache: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``citelens check ARGS`` in its own process; offline unless a fake is given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_") and k != "S2_API_KEY"}
    if fake is not None:
        env.update(fake.env())
        env.update({"CITELENS_RETRY_BACKOFF": "0.01", "CITELENS_S2_RPS": "1000",
                    "CITELENS_REQUEST_TIMEOUT": "3"})
    env.update({"CITELENS_CACHE_DIR": str(cache or cwd / ".cache"), "PYTHONPATH": str(ROOT / "server")})
    proc = subprocess.run([sys.executable, "-m", "citelens", "check", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def paper(folder: Path, bib: str = BIB, tex: str = TEX) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "refs.bib").write_text(bib, encoding="utf-8")
    (folder / "paper.tex").write_text(tex, encoding="utf-8")
    return folder


# ------------------------------------------------------------------ 1. --fail-on


def test_fail_on_warning_fails_the_build_on_a_fabricated_reference(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    folder = paper(tmp_path / "p", FABRICATED_BIB, FABRICATED_TEX)
    cache = tmp_path / "cache"
    default = citelens("paper.tex", "--format", "json", cwd=folder, fake=fake, cache=cache)
    report = json.loads(default.stdout)
    assert report["summary"]["by_code"] == {"NOT_FOUND": 1}
    assert report["summary"]["warnings"] == 1 and report["summary"]["errors"] == 0
    assert default.returncode == 0  # a warning, by default, does not fail
    for level, status in (("error", 0), ("warning", 1), ("information", 1)):
        proc = citelens("paper.tex", "--fail-on", level, cwd=folder, fake=fake, cache=cache)
        assert proc.returncode == status, (level, proc.stdout, proc.stderr)
    bad = citelens("paper.tex", "--fail-on", "hint", cwd=folder, fake=fake, cache=cache)
    assert bad.returncode == 2 and "--fail-on" in bad.stderr  # exit 2 keeps its meaning


def test_fail_on_is_shown_where_ci_users_copy_from() -> None:
    for rel in ("docs/ci-integration.md", ".pre-commit-hooks.yaml",
                "docs/examples/github-actions-citelens.yml"):
        text = (ROOT / rel).read_text(encoding="utf-8")
        assert re.search(r"--fail-on[ =,]+warning", text), rel


# ------------------------------------------------------------------ 2. each problem once


def test_a_swapped_doi_is_one_problem_with_its_citations_related(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    folder = paper(tmp_path / "p")
    cache = tmp_path / "cache"
    text = citelens("paper.tex", cwd=folder, fake=fake, cache=cache)
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    mismatch = [i for i, ln in enumerate(lines) if "DOI_MISMATCH" in ln]
    assert len(mismatch) == 1, text.stdout  # once, at the entry's doi field
    assert lines[mismatch[0]].startswith("refs.bib:")
    also = lines[mismatch[0] + 1]  # the other places: one indented line
    assert also.startswith("    ") and also.count("paper.tex:") == 2, also
    assert not [ln for ln in lines if ln.startswith("paper.tex:") and "DOI_MISMATCH" in ln]
    # the summary counts problems: one swapped DOI is one error
    assert re.search(r"^\d+ entries checked: 1 error,", text.stdout, re.M), text.stdout

    data = json.loads(citelens("paper.tex", "--format", "json", cwd=folder, fake=fake,
                               cache=cache).stdout)
    (dm,) = [d for d in data["diagnostics"] if d["code"] == "DOI_MISMATCH"]
    assert dm["file"] == "refs.bib"
    assert sorted((r["file"], r["range"]["start"]["line"]) for r in dm["related"]) == [
        ("paper.tex", 2), ("paper.tex", 3)]
    assert data["summary"]["errors"] == 1 and data["summary"]["by_code"]["DOI_MISMATCH"] == 1
    (nf,) = [d for d in data["diagnostics"] if d["code"] == "NOT_FOUND"]
    assert [r["file"] for r in nf["related"]] == ["paper.tex"]

    sarif = json.loads(citelens("paper.tex", "--format", "sarif", cwd=folder, fake=fake,
                                cache=cache).stdout)
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "DOI_MISMATCH"]
    assert len(results) == 1
    related = results[0]["relatedLocations"]
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in related] == ["paper.tex"] * 2
    assert sorted(r["physicalLocation"]["region"]["startLine"] for r in related) == [3, 4]
    assert len({r["id"] for r in related}) == 2


# ------------------------------------------------------------------ 3. progress in a log


def test_progress_lines_when_stderr_is_not_a_terminal(fake: ScholarlyFake, tmp_path: Path) -> None:
    folder = paper(tmp_path / "p")
    proc = citelens("paper.tex", "--progress-interval", "0", cwd=folder, fake=fake)
    progress = [ln for ln in proc.stderr.splitlines() if "verified" in ln and "/4 entries" in ln]
    assert progress, proc.stderr
    pattern = re.compile(r"^citelens: verified [1-3]/4 entries( · \d+ [a-z ]+)*( · ~(\d+) (s|min) left)?$")
    assert all(pattern.match(ln) for ln in progress), progress
    # the time left is the pace of verification (not of reading the files before it)
    left = [m.group(3, 4) for m in map(pattern.match, progress) if m is not None and m.group(3)]
    assert left and all(unit == "s" for _, unit in left), progress
    quiet = citelens("paper.tex", "-q", "--progress-interval", "0", cwd=folder, fake=fake)
    assert "verified" not in quiet.stderr


# ------------------------------------------------------------------ 4. one line base per format


def test_json_lines_are_all_zero_based_and_text_and_sarif_one_based(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    folder = paper(tmp_path / "p")
    cache = tmp_path / "cache"
    data = json.loads(citelens("paper.tex", "--format", "json", cwd=folder, fake=fake,
                               cache=cache).stdout)
    assert data["version"] == 2
    bib_lines = BIB.splitlines()
    for e in data["entries"]:
        assert bib_lines[e["line"]].startswith("@") and e["key"] in bib_lines[e["line"]], e
    (nf,) = [d for d in data["diagnostics"] if d["code"] == "NOT_FOUND"]
    entry = next(e for e in data["entries"] if e["key"] == "llama2021")
    assert nf["range"]["start"]["line"] == entry["line"]  # the same base in one report
    text = citelens("paper.tex", cwd=folder, fake=fake, cache=cache).stdout
    assert f"refs.bib:{entry['line'] + 1}:" in next(ln for ln in text.splitlines() if "NOT_FOUND" in ln)
    sarif = json.loads(citelens("paper.tex", "--format", "sarif", cwd=folder, fake=fake,
                                cache=cache).stdout)
    (r,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "NOT_FOUND"]
    assert r["locations"][0]["physicalLocation"]["region"]["startLine"] == entry["line"] + 1
    doc = (ROOT / "docs" / "ci-integration.md").read_text(encoding="utf-8")
    assert "0-based" in doc and "1-based" in doc


# ------------------------------------------------------------------ 5. --no-verify, same DOI


SAME_DOI = r"""@article{alpha2020,
  author = {Smith, John}, title = {A study of things}, journal = {Journal of Things},
  year = {2020}, doi = {10.1234/things.2020.1}
}

@article{beta2020,
  author = {Smith, J.}, title = {Things, studied}, journal = {J. Things},
  year = {2020}, doi = {https://doi.org/10.1234/THINGS.2020.1}
}
"""


def test_no_verify_still_reports_entries_sharing_a_doi(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text(SAME_DOI, encoding="utf-8")
    proc = citelens("refs.bib", "--no-verify", "--format", "json", cwd=tmp_path)
    data = json.loads(proc.stdout)
    (dup,) = [d for d in data["diagnostics"] if d["code"] == "DUPLICATE_ENTRY"]
    assert {dup["key"], *(r["message"].split()[-1] for r in dup["related"])} == {"alpha2020", "beta2020"}
    assert "same DOI" in dup["message"]
    assert proc.returncode == 0  # a warning
    assert citelens("refs.bib", "--no-verify", "--fail-on", "warning", cwd=tmp_path).returncode == 1


# ------------------------------------------------------------------ 6. false duplicate pairs


def test_scipy_web_pages_of_different_years_or_titles_are_not_duplicates(tmp_path: Path) -> None:
    folder = PAPERS / "scipy-1.0"
    proc = citelens(str(folder / "paper.tex"), "--offline", "--format", "json", cwd=tmp_path)
    dups = [d for d in json.loads(proc.stdout)["diagnostics"] if d["code"] == "DUPLICATE_ENTRY"]
    named = {d["key"] for d in dups} | {r["message"].split()[-1] for d in dups for r in d.get("related", [])}
    assert not named & {"SciPy_roadmap_1", "SciPy_roadmap_dev", "asvref", "asvdocs"}, dups


# ------------------------------------------------------------------ 7. a key in an unclosed entry


def test_a_key_in_an_unclosed_entry_is_a_syntax_error_at_the_bib_not_an_undefined_citation(
        tmp_path: Path) -> None:
    folder = PAPERS / "astropy-v5.0"
    proc = citelens("ms.tex", "--no-verify", "--format", "json", cwd=folder, cache=tmp_path / "c")
    data = json.loads(proc.stdout)
    assert not [d for d in data["diagnostics"] if "ASDF" in d["message"]
                and d["code"] == "UNDEFINED_CITATION"]
    bib_lines = (folder / "refs.bib").read_text(encoding="utf-8").splitlines()
    entry_line = next(i for i, ln in enumerate(bib_lines) if ln.startswith("@ARTICLE{ASDF,"))
    (syntax,) = [d for d in data["diagnostics"] if d["code"] == "BIB_SYNTAX"
                 and d["range"]["start"]["line"] <= entry_line <= d["range"]["end"]["line"]]
    assert syntax["severity"] == "error" and syntax["file"] == "refs.bib"
    ms_lines = (folder / "ms.tex").read_text(encoding="utf-8").splitlines()
    (cited,) = syntax["related"]
    assert cited["file"] == "ms.tex" and "ASDF" in cited["message"]
    line = ms_lines[cited["range"]["start"]["line"]]
    assert line[cited["range"]["start"]["character"]:cited["range"]["end"]["character"]] == "ASDF"


# ------------------------------------------------------------------ 8. reports that stay small


def _slice_of_big(path: Path, entries: int) -> None:
    text = bigbib("physrev_e_1993_2024.bib").read_text(encoding="utf-8")
    starts = [m.start() for m in re.finditer(r"^@", text, re.M)]
    path.write_text(text[: starts[entries]], encoding="utf-8")


@needs_bigbib
def test_offline_reports_of_a_library_are_small_and_say_each_thing_once(tmp_path: Path) -> None:
    bib = tmp_path / "lib.bib"
    _slice_of_big(bib, 400)
    text = citelens("lib.bib", "--offline", "-q", cwd=tmp_path)
    lines = text.stdout.splitlines()
    assert not [ln for ln in lines if "hint UNVERIFIED" in ln and ln.startswith("lib.bib:")]
    assert any(ln.startswith("400 hints UNVERIFIED: Not verified: offline") for ln in lines), lines
    assert len(lines) < 20, lines
    verbose = citelens("lib.bib", "--offline", "-q", "--verbose", cwd=tmp_path).stdout
    assert sum(": hint UNVERIFIED:" in ln for ln in verbose.splitlines()) == 400

    raw = citelens("lib.bib", "--offline", "-q", "--format", "json", cwd=tmp_path).stdout
    assert len(raw.encode()) <= 2 * bib.stat().st_size, (len(raw), bib.stat().st_size)
    data = json.loads(raw)

    def defaults(x: Any) -> Iterator[Any]:
        if isinstance(x, dict):
            for k, v in x.items():
                if v is None or v == [] or v == {} or v == "" or v is False:
                    yield k
                yield from defaults(v)
        elif isinstance(x, list):
            for v in x:
                yield from defaults(v)

    assert not list(defaults(data["entries"])) and not list(defaults(data["diagnostics"]))
    for e in data["entries"]:
        steps = [json.dumps(s, sort_keys=True) for s in e.get("audit", [])]
        assert len(steps) == len(set(steps)), e  # never an audit step twice
        assert "offline: not in the cache" not in json.dumps(e)
    assert data["summary"]["offline_lookups"]["s2_batch"] == 400  # summed once
    sarif = citelens("lib.bib", "--offline", "-q", "--format", "sarif", cwd=tmp_path).stdout
    assert len(sarif.encode()) <= bib.stat().st_size
    assert len(json.loads(sarif)["runs"][0]["results"]) == 400


# ------------------------------------------------------------------ 9. SARIF rule names


def test_sarif_rule_names_keep_the_acronyms(fake: ScholarlyFake, tmp_path: Path) -> None:
    folder = paper(tmp_path / "p")
    sarif = json.loads(citelens("paper.tex", "--format", "sarif", cwd=folder, fake=fake).stdout)
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["DOI_MISMATCH"]["shortDescription"]["text"] == "DOI mismatch"
    assert rules["DOI_MISMATCH"]["name"] == "DOIMismatch"
    assert rules["NOT_FOUND"]["shortDescription"]["text"] == "Not found"


def test_a_reports_entry_holds_every_field_its_verdict_says_and_no_empty_one() -> None:
    """The JSON report writes each verdict compactly (68,000 entries): exactly the non-empty
    fields of the verdict's full JSON, in its order, for verdicts with records, discrepancies,
    candidates, notices, a score and the information flag, and for a bare one."""
    from citelens.core.findings import Severity
    from citelens.sources.records import PaperRecord
    from citelens.verify.match.discrepancy import Discrepancy
    from citelens.verify.status import AuditStep, Status, Verification

    rec = PaperRecord("crossref", "Real paper", ["Ann Lee"], 2001, "J. Real", doi="10.1/x")
    verdicts = [
        Verification("bare", Status.UNVERIFIED, ""),
        Verification("k", Status.PARTIAL, "Found, but the year", match=rec, versions=[rec], score=0.98765,
                     method="crossref_doi",
                     discrepancies=[Discrepancy("year", "year", Severity.INFORMATION, "year: 2000 vs 2001")],
                     audit=[AuditStep("crossref_doi", "crossref", "FOUND", "", False)],
                     candidates=[rec], checked_at="2026-11-24T00:00:00+00:00", content_hash="abc",
                     informational=True, notices=[{"kind": "retraction", "doi": "10.1/y"}]),
        Verification("nf", Status.NOT_FOUND, "No source knows it", score=0.0004),
    ]
    for v in verdicts:
        full = {k: value for k, value in v.to_json(audit=False).items() if value and k != "key"}
        assert v.compact_json() == full
        assert list(v.compact_json()) == list(full)
