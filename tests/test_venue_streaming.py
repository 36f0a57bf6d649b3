"""A venue streams its papers through the sources: a paper is written as soon as its own
references are decided, not when a slow host answers another paper (issue 45).

Two papers: one cites papers every fast source knows (and one that no source holds), the
other a preprint only arXiv knows, and arXiv takes a minute to answer. The first paper's
report and summary line are written while the request to arXiv is still on its way (the fake's
log shows it unanswered); before, the two papers were one batch, written together after arXiv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.fakes.scholarly import ScholarlyFake
from tests.fakes.scholarly import scholarly_server as scholarly_server  # fixture

SLOW_S = 60.0
FAST_BIB = r"""@article{water, title={The Structure of Ordinary Water}, author={Frank, Henry S.},
  year={1970}, journal={Science}, doi={10.1126/science.169.3946.635}}
@article{invented, title={Quantum Gravitational Embeddings for Citation Graph Compression},
  author={Nobody, Ann}, year={2021}, journal={Journal of Imaginary Results}}
"""
SLOW_BIB = r"""@article{slowarxiv, title={A Preprint Only the Slow Host Knows}, author={Berg, Nils},
  journal={arXiv preprint}, year={2023}, eprint={2301.00017}, archivePrefix={arXiv}}
"""


def _paper(root: Path, name: str, bib: str, keys: str) -> None:
    p = root / name
    p.mkdir(parents=True)
    p.joinpath("main.tex").write_text(
        f"\\documentclass{{article}}\\begin{{document}}\\cite{{{keys}}}\\bibliography{{refs}}\\end{{document}}\n"
    )
    p.joinpath("refs.bib").write_text(bib)


def _written(out: Path) -> dict[str, dict[str, object]]:
    path = out / "summary.jsonl"
    rows = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line being written
        rows[str(row["paper"])] = row
    return rows


def test_a_paper_is_written_while_a_slow_host_still_answers_another(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    fake = scholarly_server
    fake.add_paper({"title": "A Preprint Only the Slow Host Knows", "authors": ["Nils Berg"],
                    "year": 2023, "venue": "arXiv", "arxiv": "2301.00017", "sources": ["arxiv"]})
    fake.set_latency("arxiv", SLOW_S)
    venue = tmp_path / "venue"
    _paper(venue, "paper-fast", FAST_BIB, "water,invented")
    _paper(venue, "paper-slow", SLOW_BIB, "slowarxiv")
    out = tmp_path / "out"
    env = {**os.environ, **fake.env(cache=tmp_path / "cache"), "CITELENS_REQUEST_TIMEOUT": str(2 * SLOW_S)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "citelens", "check", str(venue), "--venue", str(out)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        give_up = time.monotonic() + SLOW_S / 2
        while "paper-fast" not in _written(out) and proc.poll() is None and time.monotonic() < give_up:
            time.sleep(0.1)
        rows = _written(out)
        arxiv = [r for r in fake.requests() if r["source"] == "arxiv"]
        assert "paper-fast" in rows, (rows, proc.poll())
        # written while arXiv was still being asked about the other paper's reference
        assert arxiv and all(r["status"] is None for r in arxiv), arxiv
        assert "paper-slow" not in rows
        assert rows["paper-fast"]["likely_fabricated"] == 1  # its own verdicts, complete
        assert (out / "papers" / "paper-fast.json").exists()
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_the_progress_line_shows_each_hosts_rate_and_budget(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    fake = scholarly_server
    fake.set_openalex_budget(0.10, 1.0)  # a chair with a free key: $1 a day
    venue = tmp_path / "venue"
    _paper(venue, "paper-a", FAST_BIB, "water,invented")
    env = {**os.environ, **fake.env(cache=tmp_path / "cache"), "CITELENS_OPENALEX_API_KEY": "chair-key"}
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", str(venue), "--venue", str(tmp_path / "out")],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(x for x in proc.stderr.splitlines() if "1/1 papers" in x)
    # each host asked, its requests and rate; OpenAlex's budget as its rate headers state it
    assert "Crossref " in line and "/s" in line, line
    spent = 1.0 - fake.openalex_left("chair-key")
    assert spent > 0 and f"${1.0 - spent:.2f} left" in line, line


def test_papers_finishing_out_of_order_do_not_read_as_a_silent_outage(tmp_path: Path) -> None:
    """Papers with a fabricated reference finish last (their reference waits for every
    source); the health watch reads papers in the venue's order, so the tail of not-found
    verdicts is not taken for "a source answering nothing for everything"."""
    from citelens.venue.health import BatchHealth
    from citelens.venue.run import Checked, VenueOutput, paper_summary

    venue = tmp_path / "venue"
    for i in range(100):
        (venue / f"paper-{i:03d}").mkdir(parents=True)
        (venue / f"paper-{i:03d}" / "main.tex").write_text("\\documentclass{article}\n")
    output = VenueOutput(str(venue), str(tmp_path / "out"))
    output.health = BatchHealth(window=20)
    finished = []
    for paper in output.todo:
        i = int(paper.name.split("-")[1])
        status = "NOT_FOUND" if i % 10 == 0 else "VERIFIED"  # 10%, all along the venue
        report = {"entries": [{"key": "r", "status": status, "content_hash": f"h{i}"}], "summary": {}}
        finished.append(Checked(paper, report, paper_summary(paper, report, 0.1)))
    finished.sort(key=lambda c: c.report["entries"][0]["status"] == "NOT_FOUND")  # slow ones last
    for c in finished:
        output.add([c], 1)
    run = output.close()
    assert run.papers == 100
    assert not any("jumped" in p for p in run.problems), run.problems


def test_a_venue_citing_the_same_classics_and_a_spent_budget_are_a_healthy_run() -> None:
    """At 100,000 references the health watch cried wolf twice: later papers cite mostly
    what earlier ones did, so among distinct references the fabricated share grows all along
    (read as 'not found jumped'); and OpenAlex past its budget 'failed' for a third of the
    references, which the other sources had decided. Neither is a problem of the run."""
    from citelens.venue.health import BatchHealth

    health = BatchHealth(window=50)
    fabricated = 0
    for paper in range(200):
        entries = []
        for k in range(20):  # the first papers cite new works; later ones mostly repeat them
            new = paper < 20 or k % 10 == 0
            work = paper * 20 + k if new else (paper * 7 + k) % 400
            fake = k == 3 and paper % 2 == 0  # 2.5% fabricated, all along the venue
            fabricated += fake
            audit = [{"source": "s2", "outcome": "not_found" if fake else "found"},
                     {"source": "openalex", "outcome": "unavailable" if paper > 100 else "found"}]
            entries.append({"status": "NOT_FOUND" if fake else "VERIFIED",
                            "content_hash": f"fake{paper}" if fake else f"w{work}", "audit": audit})
        health.add(entries)
    assert health.not_found == fabricated
    assert health.problems() == []
