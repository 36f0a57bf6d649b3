"""``citelens check FOLDER --venue OUT``: a folder of papers in one command, against the fake
scholarly APIs on loopback: a report per paper, summary.jsonl and a ranked summary.html,
each distinct reference verified once across papers, and a resumed run redoes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.scholarly import ScholarlyFake

WATER = (
    "@article{water, title={The Structure of Ordinary Water}, author={Frank, Henry S.}, year={1970},\n"
    "  journal={Science}, doi={10.1126/science.169.3946.635}}\n"
)
INVENTED = (
    "@article{invented, title={Quantum Gravitational Embeddings for Citation Graph Compression},\n"
    "  author={Nobody, Ann}, year={2021}, journal={Journal of Imaginary Results}}\n"
)
BBL = r"""\begin{thebibliography}{2}
\bibitem[Frank(1970)]{frank70}
Henry~S. Frank.
\newblock The structure of ordinary water.
\newblock \emph{Science}, 1970.

\bibitem[Nobody(2022)]{ghost}
Zed Phantom and Ann Nobody.
\newblock Self-supervised hallucination of nonexistent benchmarks.
\newblock In \emph{Proceedings of Imaginary Conference}, 2022.
\end{thebibliography}
"""


def venue(root: Path) -> Path:
    v = root / "venue"
    a = v / "paper-a"
    a.mkdir(parents=True)
    a.joinpath("main.tex").write_text(
        "\\documentclass{article}\\begin{document}Water \\cite{water} and \\cite{invented}."
        "\\bibliography{refs}\\end{document}\n"
    )
    a.joinpath("refs.bib").write_text(WATER + INVENTED)
    b = v / "paper-b"  # an arXiv source bundle: the .bbl, no .bib
    b.mkdir()
    b.joinpath("ms.tex").write_text(
        "\\documentclass{article}\\begin{document}See \\cite{frank70,ghost}."
        "\\bibliography{ms}\\end{document}\n"
    )
    b.joinpath("ms.bbl").write_text(BBL)
    c = v / "paper-c"
    c.mkdir()
    c.joinpath("paper.md").write_text("---\nbibliography: refs.bib\n---\nWater [@water].\n")
    c.joinpath("refs.bib").write_text(WATER)
    return v


def run(v: Path, out: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "citelens", "check", str(v), "--venue", str(out)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )


def test_a_venue_in_one_command_with_reports_a_ranked_summary_and_resume(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    fake = scholarly_server
    v = venue(tmp_path)
    out = tmp_path / "out"
    env = {**os.environ, **fake.env(cache=tmp_path / "cache")}
    proc = run(v, out, env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "3/3 papers, 5 references (4 distinct verified)" in proc.stderr  # water is verified once
    lines = [json.loads(x) for x in (out / "summary.jsonl").read_text().splitlines()]
    # a line per paper, appended as each paper finishes (in the order they finish)
    assert sorted(x["paper"] for x in lines) == ["paper-a", "paper-b", "paper-c"]
    by = {x["paper"]: x for x in lines}
    assert by["paper-a"]["likely_fabricated"] == 1 and by["paper-a"]["findings"][0]["key"] == "invented"
    assert by["paper-b"]["likely_fabricated"] == 1 and by["paper-b"]["findings"][0]["key"] == "ghost"
    assert by["paper-c"]["likely_fabricated"] == 0 and by["paper-c"]["statuses"] == {"VERIFIED": 1}
    report_b = json.loads((out / "papers" / "paper-b.json").read_text())
    status_b = {e["key"]: e["status"] for e in report_b["entries"]}
    assert status_b == {"frank70": "VERIFIED", "ghost": "NOT_FOUND"}  # read from the .bbl
    assert not list(v.rglob("*.bib"))[2:]  # nothing written into the papers
    page = (out / "summary.html").read_text()
    assert page.index("paper-a") < page.index("paper-c") and page.index("paper-b") < page.index("paper-c")
    assert "Quantum Gravitational Embeddings" in page and "NOT_FOUND" in page

    # interrupted after the first paper (its line, then a line cut short): the rerun checks the others
    first = (out / "summary.jsonl").read_text().splitlines()[0]
    others = sorted({"paper-a", "paper-b", "paper-c"} - {json.loads(first)["paper"]})
    (out / "summary.jsonl").write_text(first + "\n" + '{"paper": "' + others[0] + '", "entr')
    fake.clear_log()
    again = run(v, out, env)
    assert again.returncode == 0, again.stderr
    assert "resuming: 1 of 3 papers already checked" in again.stderr
    assert f"3/3 papers, {5 - json.loads(first)['entries']} references" in again.stderr
    papers = [json.loads(x)["paper"] for x in (out / "summary.jsonl").read_text().splitlines()[2:]]
    assert sorted(papers) == others
    assert fake.count() == 0  # every answer is in the cache
    assert (out / "summary.html").read_text().count("<tr>") == 4  # header + 3 papers, once each
