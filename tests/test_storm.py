"""``citelens check`` when the sources refuse to answer: bounded, honest, logged once.

The real CLI (a subprocess) against the fake APIs with every host answering HTTP 429
(a "429 storm"), or every host stalling past the run's deadline. The bibliography holds
papers the fake knows (they would be VERIFIED on a good day) and ones it does not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from citelens.sources.names import source_name
from citelens.sources.transport import BREAKER_THRESHOLD
from tests.fakes.scholarly import SOURCES, ScholarlyFake
from tests.fakes.scholarly import scholarly_server as scholarly_server  # fixture

#: Requests a host may still get once its breaker trips: those already in flight.
IN_FLIGHT_SLACK = 3


def _bib(fake: ScholarlyFake, n_known: int, n_title_only: int) -> str:
    """Entries for papers the fake knows (with DOI, then title only) and two it does not."""
    out = []
    papers = [p for p in fake.db.papers if p.get("doi") and p["authors"]]
    for i, p in enumerate(papers[: n_known + n_title_only]):
        doi = f"doi = {{{p['doi']}}}," if i < n_known else ""
        out.append(
            f"@article{{p{i}, title = {{{p['title']}}}, "
            f"author = {{{' and '.join(p['authors'])}}}, year = {{{p.get('year', '')}}}, "
            f"{doi} journal = {{{p.get('venue', '')}}}}}"
        )
    out.append(
        "@article{made_up, title = {Quantum Entanglement of Citation Graphs in "
        "Medieval Monasteries}, author = {Nobody, Anne}, year = {2019}, "
        "doi = {10.9999/made.up.2019}}"
    )
    out.append(
        "@article{made_up_title, title = {A Survey of Surveys of Survey Methods for "
        "Surveying}, author = {Nobody, Anne}, year = {2021}}"
    )
    return "\n".join(out) + "\n"


def _check(bib: Path, env: dict[str, str]) -> tuple[dict[str, Any], str, float]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_")}
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", str(bib), "--format", "json"],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    elapsed = time.monotonic() - started
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout), proc.stderr, elapsed


def test_429_storm_everything_unverified_and_each_host_cut_off_once(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    fake = scholarly_server
    bib = tmp_path / "refs.bib"
    bib.write_text(_bib(fake, 14, 4), encoding="utf-8")
    for source in SOURCES:
        fake.set_mode(source, "429")
    report, stderr, _ = _check(
        bib,
        {
            **fake.env(),
            "CITELENS_CACHE_DIR": str(tmp_path / "c"),
            "CITELENS_RETRY_BACKOFF": "0.01",
            "CITELENS_S2_RPS": "1000",
        },
    )

    entries = report["entries"]
    assert len(entries) == 20
    for e in entries:
        assert e["status"] == "UNVERIFIED", (e["key"], e["status"], e["summary"])
        assert "429" in e["summary"], e["summary"]
    assert not [d for d in report["diagnostics"] if d["code"] in ("NOT_FOUND", "DOI_MISMATCH")]
    # The breaker: every host stops being asked after a few refusals, and says so once.
    lines = [line for line in stderr.splitlines() if "in a row" in line]
    for name in ("s2", "crossref", "openalex", "arxiv", "arxiv_site", "ncbi", "doi", "unpaywall"):
        label = source_name(name)
        said = [line for line in lines if f"citelens: {label} answered" in line]
        assert len(said) <= 1, said
        if name in ("s2", "crossref", "openalex", "doi"):  # asked about many entries
            assert len(said) == 1, (label, lines)
        assert fake.count(name) <= BREAKER_THRESHOLD + IN_FLIGHT_SLACK, (name, fake.counts())


def test_run_deadline_leaves_the_rest_unverified_with_the_reason(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    fake = scholarly_server
    bib = tmp_path / "refs.bib"
    bib.write_text(_bib(fake, 3, 2), encoding="utf-8")
    for source in SOURCES:
        fake.set_mode(source, "stall", stall_s=40)
    report, stderr, _ = _check(
        bib,
        {
            **fake.env(),
            "CITELENS_CACHE_DIR": str(tmp_path / "c"),
            "CITELENS_S2_RPS": "1000",
            "CITELENS_REQUEST_TIMEOUT": "60",
            "CITELENS_VERIFY_DEADLINE": "2",
        },
    )

    # a stalled source answers after 40 s; the 2 s deadline stopped the run (how long it
    # took: benchmarks/bench_waits.py)
    for e in report["entries"]:
        assert e["status"] == "UNVERIFIED", (e["key"], e["status"], e["summary"])
        assert "time limit (2 s)" in e["summary"], e["summary"]
    assert not [d for d in report["diagnostics"] if d["code"] in ("NOT_FOUND", "DOI_MISMATCH")]
    said = [line for line in stderr.splitlines() if "deadline" in line]
    assert len(said) == 1 and "7 of 7 entries" in said[0], stderr


async def test_editor_background_run_stops_at_its_deadline(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    from tests.lsp_session import diagnostics, open_doc, session, uri

    fake = scholarly_server
    for source in SOURCES:
        fake.set_mode(source, "stall", stall_s=40)
    bib = tmp_path / "refs.bib"
    bib.write_text(_bib(fake, 1, 1), encoding="utf-8")
    tex = tmp_path / "main.tex"
    tex.write_text(
        "\\documentclass{article}\n\\begin{document}\nSee \\cite{p0,p1,made_up}.\n"
        "\\bibliography{refs}\n\\end{document}\n",
        encoding="utf-8",
    )
    settings = {
        "verificationEnabled": True,
        "verifyDebounceMs": 0,
        "s2RequestsPerSecond": 1000,
        "requestTimeoutS": 60,
        "verifyDeadlineS": 1,
    }
    env = fake.env(cache=tmp_path / "c")
    async with session("visual-studio-code", tmp_path, env=env, settings=settings) as client:
        open_doc(client, tex)

        def stopped(ds: Any) -> bool:
            return sum(1 for d in ds if d.code == "UNVERIFIED" and "time limit (1 s)" in d.message) == 4

        # every entry of the .bib is UNVERIFIED long before a stalled source would answer
        found = await diagnostics(client, uri(bib), stopped, timeout=25)
        assert not [d for d in found if d.code in ("NOT_FOUND", "DOI_MISMATCH")]
