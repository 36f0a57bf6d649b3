"""A venue run a chair can act on, against the fake scholarly APIs on loopback: ``--fail-on``
applies to a venue as to one paper, a source outage in the middle of a run is said at the top
of the report and the run exits non-zero (a network failure never reads as fabrication), a
DOI that resolves nowhere is a finding, and run.json / the pages are written as the run goes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.fakes.scholarly import SOURCES, ScholarlyFake
from tests.harness import run_citelens
from tests.test_venue import INVENTED, WATER, venue


def _lines(out: Path) -> dict[str, dict[str, object]]:
    return {x["paper"]: x for x in map(json.loads, (out / "summary.jsonl").read_text().splitlines())}


def test_fail_on_applies_to_a_venue_as_to_one_paper(tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    v = venue(tmp_path)
    env = {**os.environ, **scholarly_server.env(cache=tmp_path / "cache")}
    alone = run_citelens("check", str(v / "paper-a"), "--fail-on", "warning", env=env)
    assert alone.returncode == 1, alone.stderr  # the paper alone: its fabricated entry fails
    strict = run_citelens("check", str(v), "--venue", str(tmp_path / "o1"), "--fail-on", "warning", env=env)
    assert strict.returncode == 1, strict.stderr[-2000:]
    assert "papers have problems at --fail-on warning" in strict.stderr
    # progress: papers, references, answered locally, requests and the slowest host
    assert "0 answered locally" in strict.stderr and "requests, slowest host" in strict.stderr
    default = run_citelens("check", str(v), "--venue", str(tmp_path / "o2"), env=env)
    assert default.returncode == 0, default.stderr[-2000:]  # NOT_FOUND is a warning, not an error
    # a resumed run that checks nothing new still answers for the papers it holds
    again = run_citelens("check", str(v), "--venue", str(tmp_path / "o1"), "--fail-on", "warning", env=env)
    assert "resuming: 3 of 3" in again.stderr and again.returncode == 1


def test_a_doi_that_resolves_nowhere_is_a_finding(tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    v = tmp_path / "venue" / "paper-d"
    v.mkdir(parents=True)
    dead = WATER.replace("10.1126/science.169.3946.635", "10.1126/science.169.9999.999")
    v.joinpath("main.tex").write_text(
        "\\documentclass{article}\\title{Ice and Water}\\author{Ann Author \\and Bob Writer}"
        "\\begin{document}\\cite{water}\\bibliography{refs}\\end{document}\n"
    )
    v.joinpath("refs.bib").write_text("% refs\n\n" + dead)
    out = tmp_path / "out"
    proc = run_citelens(
        "check",
        str(v.parent),
        "--venue",
        str(out),
        env={**os.environ, **scholarly_server.env(cache=tmp_path / "c")},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = _lines(out)["paper-d"]
    assert line["classes"] == {"fabricated": 0, "wrong-metadata": 1, "retracted": 0, "unchecked": 0}
    (f,) = line["findings"]  # type: ignore[misc]
    assert f["key"] == "water" and f["class"] == "wrong-metadata" and f["line"] == 3  # 1-based
    assert "resolves nowhere" in f["summary"]
    assert f["match"]["doi"] == "10.1126/science.169.3946.635"
    assert line["title"] == "Ice and Water" and "Bob Writer" in line["authors"]
    page = (out / "papers" / "paper-d.html").read_text()
    assert "https://doi.org/10.1126/science.169.3946.635" in page and "refs.bib:3" in page
    assert "10.1126/science.169.9999.999" in page  # the entry as written


def test_a_source_outage_mid_run_is_said_at_the_top_and_exits_non_zero(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    fake = scholarly_server
    v = tmp_path / "venue"
    n = 30
    for i in range(n):
        p = v / f"paper-{i:02d}"
        p.mkdir(parents=True)
        p.joinpath("main.tex").write_text(
            "\\documentclass{article}\\begin{document}\\cite{water,invented,own}"
            "\\bibliography{refs}\\end{document}\n"
        )
        own = (
            f"@article{{own, title={{Fabricated Study Number {i} of Imaginary Lattice Dynamics}},\n"
            "  author={Phantom, Zed}, year={2020}, journal={Imaginary Letters}}\n"
        )
        p.joinpath("refs.bib").write_text(WATER + INVENTED + own)
    out = tmp_path / "out"
    env = {**os.environ, **fake.env(cache=tmp_path / "cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "citelens", "check", str(v), "--venue", str(out), "--batch", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    done = threading.Event()

    def outage_halfway() -> None:  # every source goes down once half the papers are done
        while not done.is_set():
            path = out / "summary.jsonl"
            if path.exists() and len(path.read_text().splitlines()) >= n // 2:
                for s in SOURCES:
                    fake.set_mode(s, "5xx")
                return
            time.sleep(0.02)

    watcher = threading.Thread(target=outage_halfway, daemon=True)
    watcher.start()
    try:
        _out, err = proc.communicate(timeout=600)
    finally:
        done.set()
        watcher.join()
    assert proc.returncode == 3, err[-3000:]
    assert "RUN HEALTH" in err and "failed for" in err
    run = json.loads((out / "run.json").read_text())
    assert run["finished"] and run["health"]["problems"], run
    assert run["health"]["unchecked"] >= n // 4
    page = (out / "summary.html").read_text()
    alarm = page.index("This run is not healthy")
    assert alarm < page.index("<table"), "the outage is said at the top, before the papers"
    # the papers checked during the outage: their references could not be checked, never fabricated
    lines = _lines(out)
    late = [x for x in lines.values() if x["statuses"].get("UNVERIFIED")]  # type: ignore[union-attr]
    assert late and all(x["classes"]["fabricated"] <= 1 for x in late)  # type: ignore[index]


def test_a_chairs_cleared_file_is_read_by_later_runs_whatever_the_citation_style(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    v = venue(tmp_path)
    out = tmp_path / "out"
    env = {**os.environ, **scholarly_server.env(cache=tmp_path / "cache")}
    first = run_citelens("check", str(v), "--venue", str(out), "--fail-on", "warning", env=env)
    assert first.returncode == 1, first.stderr[-2000:]
    assert "2 papers have problems at --fail-on warning" in first.stderr
    lines = _lines(out)
    # the line a chair adds is on each finding's page
    page_a = (out / "papers" / "paper-a.html").read_text()
    (inv,) = lines["paper-a"]["findings"]  # type: ignore[misc]
    (ghost,) = lines["paper-b"]["findings"]  # type: ignore[misc]
    assert inv["fp"] in page_a and "Add this line" in page_a
    (out / "cleared.txt").write_text(
        f'{inv["fp"]}  # invented "Quantum Gravitational..." checked by A. Chair 2026-11-27\n'
        f"{ghost['fp']}  # ghost, checked too\n"
    )
    # a later run over the same OUT (nothing left to check) takes the chair's word
    again = run_citelens("check", str(v), "--venue", str(out), "--fail-on", "warning", env=env)
    assert "resuming: 3 of 3" in again.stderr
    # paper-b still fails: its \bibliography{ms} names no file, which is no reference to clear
    assert again.returncode == 1 and "1 papers have problems at --fail-on warning" in again.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["cleared"] == 2
    index = (out / "summary.html").read_text()
    assert "references cleared by a chair" in index and "Quantum Gravitational" not in index
    page_a = (out / "papers" / "paper-a.html").read_text()
    assert "cleared by a chair" in page_a and "likely fabricated</span> ·" not in page_a
    # the same reference in another citation style (key, author form, braces, venue) in a new venue
    w = tmp_path / "venue2" / "paper-x"
    w.mkdir(parents=True)
    w.joinpath("main.tex").write_text(
        "\\documentclass{article}\\begin{document}\\cite{nobody2021quantum}\\bibliography{refs}\\end{document}\n"
    )
    w.joinpath("refs.bib").write_text(
        "@article{nobody2021quantum,\n  author = {A. Nobody},\n"
        "  title = {{Quantum} gravitational embeddings for citation graph compression},\n"
        "  journal = {J. Imag. Res.},\n  year = 2021,\n}\n"
    )
    out2 = tmp_path / "out2"
    other = run_citelens(
        "check",
        str(w.parent),
        "--venue",
        str(out2),
        "--cleared",
        str(out / "cleared.txt"),
        "--fail-on",
        "warning",
        env=env,
    )
    assert other.returncode == 0, other.stderr[-2000:]
    line = _lines(out2)["paper-x"]
    assert line["likely_fabricated"] == 0 and line["findings"] == []
    assert [c["key"] for c in line["cleared"]] == ["nobody2021quantum"]  # type: ignore[union-attr]
    # without the chair's file the same entry is flagged: the clearing did it
    bare = run_citelens("check", str(w.parent), "--venue", str(tmp_path / "out3"), env=env)
    assert _lines(tmp_path / "out3")["paper-x"]["likely_fabricated"] == 1, bare.stderr[-2000:]


def test_batches_in_flight_ask_about_a_shared_reference_once(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    """Batches overlap (the next one's local work starts while the others wait for their
    slowest requests); a reference cited by papers of several batches in flight is still
    asked about once."""
    fake = scholarly_server
    fake.set_latency("s2", 0.5)  # the tail every batch waits for
    v = tmp_path / "venue"
    for i in range(6):
        p = v / f"paper-{i}"
        p.mkdir(parents=True)
        p.joinpath("main.tex").write_text(
            "\\documentclass{article}\\begin{document}\\cite{invented}\\bibliography{refs}\\end{document}\n"
        )
        p.joinpath("refs.bib").write_text(INVENTED)
    out = tmp_path / "out"
    proc = run_citelens(
        "check",
        str(v),
        "--venue",
        str(out),
        "--batch",
        "1",
        env={**os.environ, **fake.env(cache=tmp_path / "c")},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert all(x["likely_fabricated"] == 1 for x in _lines(out).values())
    matches = [r for r in fake.requests("s2") if r["path"].endswith("/search/match")]
    assert len(matches) == 1, [r["path"] for r in fake.requests("s2")]


def test_a_killed_run_leaves_a_report_of_what_it_finished(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    fake = scholarly_server
    fake.set_latency("s2", 0.3)
    v = tmp_path / "venue"
    for i in range(12):
        p = v / f"paper-{i:02d}"
        p.mkdir(parents=True)
        p.joinpath("main.tex").write_text(
            "\\documentclass{article}\\begin{document}\\cite{own}\\bibliography{refs}\\end{document}\n"
        )
        p.joinpath("refs.bib").write_text(
            f"@article{{own, title={{Fabricated Study Number {i} of Imaginary Lattice Dynamics}},\n"
            "  author={Phantom, Zed}, year={2020}, journal={Imaginary Letters}}\n"
        )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "citelens", "check", str(v), "--venue", str(out), "--batch", "1"],
        env={**os.environ, **fake.env(cache=tmp_path / "c")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # at least two papers finished, and a page written since
            lines = (
                (out / "summary.jsonl").read_text().splitlines() if (out / "summary.jsonl").exists() else []
            )
            page = (out / "summary.html").read_text() if (out / "summary.html").exists() else ""
            if len(lines) >= 2 and page.count("Fabricated Study Number") >= 1:
                break
            time.sleep(0.1)
    finally:
        proc.kill()  # as kill -9
        proc.wait()
    page = (out / "summary.html").read_text()
    assert "in progress" in page  # said, not passed off as the whole venue
    done = [
        json.loads(x)["paper"] for x in (out / "summary.jsonl").read_text().splitlines() if x.endswith("}")
    ]
    assert done and all((out / "papers" / f"{name}.html").exists() for name in done)
    assert 1 <= page.count("Fabricated Study Number") <= len(done)


def test_not_found_jumping_against_the_runs_own_rate_is_a_problem_of_the_run() -> None:
    """An index that starts answering 'nothing' for everything (no error, so no source
    failure) shows as 'not found' jumping against the run's own rate so far."""
    from citelens.venue.health import WINDOW, BatchHealth

    def entries(start: int, n: int, missing_every: int) -> list[dict[str, object]]:
        return [
            {
                "status": "NOT_FOUND" if i % missing_every == 0 else "VERIFIED",
                "content_hash": f"h{i}",
                "audit": [{"source": "s2", "outcome": "not_found" if i % missing_every == 0 else "found"}],
            }
            for i in range(start, start + n)
        ]

    steady = BatchHealth()
    steady.add(entries(0, 5 * WINDOW, 30))  # about 3% found nowhere, all along
    assert steady.problems() == []
    jump = BatchHealth()
    jump.add(entries(0, 2 * WINDOW, 30))
    assert jump.problems() == []
    jump.add(entries(2 * WINDOW, WINDOW, 2))  # then half of them
    (problem,) = jump.problems()
    assert "found nowhere jumped to" in problem and "suspect" in problem
