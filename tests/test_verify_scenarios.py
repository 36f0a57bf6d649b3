"""Acceptance scenarios: the real ``citelens check --format json`` against the fake APIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scholarly import ScholarlyFake, running
from tests.harness import ROOT

BIB = r"""@article{scipy2020,
  title = {{SciPy} 1.0: Fundamental Algorithms for Scientific Computing in {Python}},
  author = {Virtanen, Pauli and others},
  journal = {Nature Methods},
  year = {2020},
  doi = {10.1038/s41592-019-0686-2},
}

@article{swapped,
  title = {Astropy: A community {Python} package for astronomy},
  author = {{Astropy Collaboration} and Robitaille, Thomas P. and others},
  journal = {Astronomy \& Astrophysics},
  year = {2013},
  doi = {10.1109/mcse.2007.55},
}

@inproceedings{vaswani2017,
  title = {Attention is All you Need},
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki and Uszkoreit, Jakob and
            Jones, Llion and Gomez, Aidan N. and Kaiser, Lukasz and Polosukhin, Illia},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2016},
  eprint = {1706.03762},
}

@article{llama2021,
  title = {Hyperbolic Entanglement of Quantum Llamas in Gravitational Pastures},
  author = {Doe, Jane and Roe, Richard},
  journal = {Nature},
  year = {2021},
}
"""
TEX = r"""\documentclass{article}
\begin{document}
SciPy~\cite{scipy2020}, Astropy~\cite{swapped}, Transformers~\cite{vaswani2017},
llamas~\cite{llama2021} and again~\cite{swapped}.
\bibliographystyle{plain}
\bibliography{refs}
\end{document}
"""


@pytest.fixture
def fake() -> Iterator[ScholarlyFake]:
    with running() as server:
        yield server


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    tex = tmp_path / "paper.tex"
    tex.write_text(TEX, encoding="utf-8")
    return tex


def run_check(fake: ScholarlyFake, path: Path, cache: Path) -> tuple[int, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CITELENS_") and k != "S2_API_KEY"}
    env.update(fake.env())
    env.update({"CITELENS_CACHE_DIR": str(cache), "CITELENS_RETRY_BACKOFF": "0.01",
                "CITELENS_S2_RPS": "1000", "CITELENS_REQUEST_TIMEOUT": "3",
                "PYTHONPATH": str(ROOT / "server")})
    proc = subprocess.run([sys.executable, "-m", "citelens", "check", "--format", "json",
                           str(path)], capture_output=True, text=True, env=env, cwd=path.parent,
                          timeout=60, check=False)
    assert proc.stdout.strip(), proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def entries(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["key"]: e for e in report["entries"]}


def test_a_paper_with_a_swapped_doi_a_fake_and_a_wrong_year(
        fake: ScholarlyFake, paper: Path, tmp_path: Path) -> None:
    code, report, _ = run_check(fake, paper, tmp_path / "cache")
    e = entries(report)
    assert e["scipy2020"]["status"] == "VERIFIED"
    assert e["scipy2020"]["match"]["doi"] == "10.1038/s41592-019-0686-2"
    assert e["swapped"]["status"] == "DOI_MISMATCH"
    assert e["llama2021"]["status"] == "NOT_FOUND"
    assert e["vaswani2017"]["status"] == "PARTIAL"
    assert any(d["message"].startswith("year: 2016 in the entry, 2017 in")
               for d in e["vaswani2017"]["discrepancies"])
    assert all(step["outcome"] for step in e["llama2021"]["audit"])
    diags = report["diagnostics"]
    mismatch = [d for d in diags if d["code"] == "DOI_MISMATCH"]
    # one problem: on the doi field of the entry, both citations of the key as related places
    assert [d["file"].rsplit("/", 1)[-1] for d in mismatch] == ["refs.bib"]
    assert [r["file"].rsplit("/", 1)[-1] for r in mismatch[0]["related"]] == ["paper.tex"] * 2
    assert report["summary"]["by_code"]["DOI_MISMATCH"] == 1
    on_bib = mismatch[0]
    assert "doi = {10.1109/mcse.2007.55}" in BIB.splitlines()[on_bib["range"]["start"]["line"]]
    assert all(d["severity"] == "error" for d in mismatch)
    assert "Matplotlib" in mismatch[0]["message"]
    assert any(d["code"] == "NOT_FOUND" and d["key"] == "llama2021" for d in diags)
    assert code == 1  # errors fail the CI job


def test_second_run_asks_nobody(fake: ScholarlyFake, paper: Path, tmp_path: Path) -> None:
    _, first, _ = run_check(fake, paper, tmp_path / "cache")
    fake.clear_log()
    _, second, _ = run_check(fake, paper, tmp_path / "cache")
    assert fake.count() == 0
    assert ({k: v["status"] for k, v in entries(second).items()}
            == {k: v["status"] for k, v in entries(first).items()})


def test_s2_down_still_verifies_through_other_sources(
        fake: ScholarlyFake, paper: Path, tmp_path: Path) -> None:
    fake.set_mode("s2", "down")
    _, report, _ = run_check(fake, paper, tmp_path / "cache")
    e = entries(report)
    assert e["scipy2020"]["status"] == "VERIFIED"
    assert e["scipy2020"]["match"]["source"] != "s2"
    assert e["swapped"]["status"] == "DOI_MISMATCH"  # Crossref/OpenAlex know the DOI too


def test_everything_down_is_unverified_never_not_found(
        fake: ScholarlyFake, paper: Path, tmp_path: Path) -> None:
    for src in ("s2", "crossref", "openalex", "arxiv", "doi", "ncbi"):
        fake.set_mode(src, "5xx")
    code, report, _ = run_check(fake, paper, tmp_path / "cache")
    assert {e["status"] for e in report["entries"]} == {"UNVERIFIED"}
    codes = {d["code"] for d in report["diagnostics"]}
    assert not codes & {"NOT_FOUND", "DOI_MISMATCH", "METADATA_MISMATCH"}
    assert code == 0


def test_corrupted_cache_dir_still_checks_with_one_log_line(
        fake: ScholarlyFake, paper: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "cache.db").write_bytes(b"\x00garbage" * 500)
    _, report, stderr = run_check(fake, paper, cache)
    assert entries(report)["scipy2020"]["status"] == "VERIFIED"
    assert len([line for line in stderr.splitlines() if "cache" in line]) == 1
