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
