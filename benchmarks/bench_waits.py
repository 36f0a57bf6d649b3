"""How long the waits take that tests once bounded with a wall clock (issue 31: a test
holds what happens, e.g. "the model did not answer within 1 s", "UNVERIFIED: time limit";
how long it took is a figure, printed here, because a loaded machine made such bounds fail):

- a claim check whose model answers in 0.6 s a call, with a 1 s budget for the whole check
  (tests/test_claims_pipeline.py: was asserted under 2.2 s);
- a Crossref lookup answered 429 with ``Retry-After: 0.3`` first (tests/test_http.py: was
  asserted in 0.28-2.0 s, the default backoff being 5 s);
- a Semantic Scholar lookup that stalls 10 s with a 0.3 s request timeout (was < 1.5 s);
- ``citelens check`` of 5 entries while every source stalls 40 s, with a 2 s verification
  deadline (tests/test_storm.py: was < 30 s);
- ``citelens check`` (no network) of the bad inputs of tests/test_bad_input.py: a 1 MB line,
  ``\\input`` cycles (were < 10 s), 100,000 nested braces (was < 20 s).

    .venv/bin/python -m benchmarks.bench_waits [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.fakes.llm import FakeLLM
from tests.fakes.scholarly import running
from tests.harness import attention_view, run_citelens
from tests.test_bad_input import GOOD_BIB, tex
from tests.test_claims_pipeline import CLAIM_P2, full_text, html_page, record, settings_for
from tests.test_http import DOI, sources
from tests.test_storm import SOURCES, _bib, _check

from citelens.claims.pipeline import check_claim
from citelens.sources import crossref, s2


def _seconds(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def claim_budget() -> None:
    with FakeLLM() as fake:
        fake.page("/arxiv/html/1706.03762", html_page(full_text()))
        fake.delay_s = 0.6
        result = asyncio.run(check_claim(CLAIM_P2, attention_view(), record(),
                                         settings=settings_for(fake, claim_timeout_s=1.0)))
        assert "did not answer within 1 s" in (result.error or "")


def retry_after() -> None:
    with running() as fake:
        fake.set_mode("crossref", "429", count=1, retry_after="0.3")

        async def go() -> None:
            async with sources(fake, retry_backoff_s=5.0) as src:
                await crossref.get_work(src.crossref, "10.1073/pnas.1414271111")
        asyncio.run(go())


def stall() -> None:
    with running() as fake:
        fake.set_mode("s2", "stall", stall_s=10)

        async def go() -> None:
            async with sources(fake, request_timeout_s=0.3) as src:
                await s2.get_paper(src.s2, DOI)
        asyncio.run(go())


def storm_deadline(folder: Path) -> None:
    with running() as fake:
        bib = folder / "storm.bib"
        bib.write_text(_bib(fake, 3, 2), encoding="utf-8")
        for source in SOURCES:
            fake.set_mode(source, "stall", stall_s=40)
        _check(bib, {**fake.env(), "CITELENS_CACHE_DIR": str(folder / "c"),
                     "CITELENS_S2_RPS": "1000", "CITELENS_REQUEST_TIMEOUT": "60",
                     "CITELENS_VERIFY_DEADLINE": "2"})


def bad_inputs(folder: Path) -> dict[str, Path]:
    """The three projects of tests/test_bad_input.py, each in its folder."""
    deep = "{" * 100_000 + "x" + "}" * 100_000
    projects = {
        "1 MB line": {"refs.bib": GOOD_BIB, "main.tex": tex(
            ("word " * 200_000) + "\\cite{real2020} and \\cite{ghost}")},
        "\\input cycles": {"refs.bib": GOOD_BIB,
                           "main.tex": tex("\\input{main}\\include{main}\\input{a} \\cite{ghost}"),
                           "a.tex": "\\input{b}\\cite{real2020}\n",
                           "b.tex": "\\input{a.tex}\\input{./main}\\cite{ghostb}\n"},
        "100,000 nested braces": {
            "refs.bib": GOOD_BIB + f"@misc{{deep, title = {deep}}}\n" + "@misc{open, title = "
            + "{" * 100_000 + "\n" + GOOD_BIB.replace("real2020", "after"),
            "main.tex": tex(deep + " \\cite{real2020} " + "{" * 100_000 + "\\cite{ghost}"),
            "notes.md": "---\nbibliography: refs.bib\n---\n" + "[" * 100_000 + "@real2020"
            + "]" * 100_000 + "\n"},
    }
    out = {}
    for name, files in projects.items():
        where = folder / name.replace(" ", "_").replace("\\", "").replace(",", "")
        where.mkdir()
        for file, text in files.items():
            (where / file).write_text(text, encoding="utf-8")
        out[name] = where
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows: list[tuple[str, str, float]] = [
        ("claim check, model 0.6 s a call, budget 1 s", "2.2 s", _seconds(claim_budget, args.repeat)),
        ("429 with Retry-After 0.3 s, then found", "0.28-2.0 s", _seconds(retry_after, args.repeat)),
        ("S2 stalls 10 s, request timeout 0.3 s", "1.5 s", _seconds(stall, args.repeat)),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows.append(("citelens check, every source stalls 40 s, deadline 2 s", "30 s",
                     _seconds(lambda: storm_deadline(folder), 1)))
        env = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_")}
        env.update(CITELENS_OFFLINE="true", CITELENS_CACHE_DIR=str(folder / "cache"))
        for name, where in bad_inputs(folder).items():
            bound = "20 s" if "braces" in name else "10 s"
            rows.append((f"citelens check --offline, {name} (process)", bound, _seconds(
                lambda where=where: run_citelens("check", str(where), "--format", "json",
                                                 env=env), args.repeat)))
    print(f"{'wait':60s} {'median':>8s}  (the bound a test once asserted)")
    for name, bound, seconds in rows:
        print(f"{name:60s} {seconds:7.2f} s  ({bound})")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
