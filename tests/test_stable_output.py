"""The same check twice gives the same bytes (apart from timestamps), and every output
counts entries the same way: a bibliography entry, once; citations separately."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from citelens.core.settings import Settings
from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.verify.verdict import Asked, decide
from tests.fakes.scholarly import ScholarlyFake

MADE_UP = """
@article{made1,
  title = {A study of synthetic topic number one in imaginary lattice systems},
  author = {Doe, Jane and Roe, Rick}, year = {2011}, journal = {Journal of Tests}
}
@article{made2,
  title = {A study of synthetic topic number two in imaginary lattice systems},
  author = {Doe, Jane}, year = {2012}, journal = {Journal of Tests},
  doi = {10.99999/jot.2012.0002}
}
@article{made3,
  title = {A study of synthetic topic number three in imaginary lattice systems},
  author = {Roe, Rick}, year = {2013}, journal = {Journal of Tests}
}
"""
#: Defined again in a second file: still one entry (a DUPLICATE_KEY finding, not an entry).
OTHER = """
@article{made1,
  title = {A study of synthetic topic number one in imaginary lattice systems},
  author = {Doe, Jane and Roe, Rick}, year = {2011}, journal = {Journal of Tests}
}
"""
TEX = ("\\documentclass{article}\n\\begin{document}\n"
       "One \\cite{made1}, two \\cite{made2,made3}, again \\cite{made1}.\n"
       "\\bibliography{refs,other}\n\\end{document}\n")


def _paper(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "refs.bib").write_text(MADE_UP, encoding="utf-8")
    (folder / "other.bib").write_text(OTHER, encoding="utf-8")
    (folder / "main.tex").write_text(TEX, encoding="utf-8")
    return folder


def _check(folder: Path, fake: ScholarlyFake, cache: Path, fmt: str) -> tuple[str, str]:
    env = {**os.environ, **fake.env(cache=cache),
           "CITELENS_S2_RPS": "50", "CITELENS_RETRY_BACKOFF": "0.01"}
    proc = subprocess.run([sys.executable, "-m", "citelens", "check", "main.tex",
                           "--format", fmt], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout, proc.stderr


_STAMP = re.compile(r'"checked_at": ?"[^"]*"')


def test_two_runs_give_the_same_bytes_in_every_format(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    folder = _paper(tmp_path / "paper")
    for fmt in ("text", "json", "sarif"):
        # cold caches: the hosts answer in whatever order they like each time
        a, _ = _check(folder, scholarly_server, tmp_path / f"c1-{fmt}", fmt)
        b, _ = _check(folder, scholarly_server, tmp_path / f"c2-{fmt}", fmt)
        assert _STAMP.sub("", a) == _STAMP.sub("", b), fmt
    assert "NOT_FOUND" in a


def test_counts_agree_across_text_json_sarif_and_the_log(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    folder = _paper(tmp_path / "paper")
    text, log = _check(folder, scholarly_server, tmp_path / "c", "text")
    data = json.loads(_check(folder, scholarly_server, tmp_path / "c", "json")[0])
    sarif = json.loads(_check(folder, scholarly_server, tmp_path / "c", "sarif")[0])
    summary = data["summary"]
    # three keys, one defined in two files: three entries; four cited keys: four citations
    assert summary["entries"] == len(data["entries"]) == 3
    assert sorted(e["key"] for e in data["entries"]) == ["made1", "made2", "made3"]
    assert sum(summary["by_status"].values()) == 3
    assert summary["citations"] == 4
    assert re.search(r"^3 entries checked: .*; 4 citations$", text, re.M), text
    assert re.search(r"verified 3 entries", log), log
    assert sarif["runs"][0]["properties"] == {"entries": 3, "citations": 4}


def test_a_verdict_does_not_depend_on_the_order_the_answers_came_in() -> None:
    view = entry_view(parse_bib(MADE_UP).entries[1])
    settings = Settings()
    miss = [Lookup(src, method, Outcome.NOT_FOUND, [], "") for src, method in (
        ("openalex", "openalex_dois"), ("crossref", "crossref_doi"), ("doi", "doi_csl"))]
    titles = [Lookup(src, method, Outcome.FOUND, [PaperRecord(
        source=src, title=f"A study of synthetic topic number {n} in imaginary systems",
        authors=["Jane Doe"], year=2012)], "") for src, method, n in (
        ("s2", "s2_title_search", "two"), ("crossref", "crossref_title", "ten"),
        ("openalex", "openalex_title", "twelve"))]
    asked = ([Asked(lk, "doi", "10.99999/jot.2012.0002") for lk in miss]
             + [Asked(lk, None, view.title) for lk in titles])
    seen: set[str] = set()
    for perm in itertools.islice(itertools.permutations(asked), 0, None, 37):
        v = decide(view, list(perm), settings, chash="h", checked_at="t")
        seen.add(json.dumps(_plain(v.to_json()), sort_keys=True))
    assert len(seen) == 1, seen


def _plain(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str))
