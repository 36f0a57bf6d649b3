"""Every scholarly source x every way it can fail: verification stays honest and bounded.

One cell = one source faulted one way, against its own fake server, running
:func:`verify_entries` over four real entries of the fake's database and two it is given:

============  ==========================================  ==============================
entry         identifiers                                 sources that can decide it
============  ==========================================  ==============================
scipy2020     DOI (Crossref-registered)                   s2, openalex, crossref, doi
vaswani2017   arXiv id only                               s2, arxiv, openalex (title)
hunter2007    none (title only)                           s2, crossref, openalex (title)
makris2014    PMID only                                   s2, ncbi, crossref/openalex (title)
faultdata     DataCite DOI only doi.org resolves          s2, doi
crossonly     none (title only)                           s2, crossref
============  ==========================================  ==============================

Semantic Scholar answers almost everything first, so in the cells of the other
sources S2 is also down: that puts the faulted source on the path of the request.

For each cell: no exception, bounded time, never NOT_FOUND for a real entry,
UNVERIFIED exactly when no other source could decide, the faulted source never
"answers" (its audit steps are failures), the outage logged once, and a second
run after the source is back (``set_mode(ok)`` + ``reset_availability``) verifies
everything. The 48 cells run concurrently, so the matrix takes a few seconds.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources.names import source_name
from citelens.sources.transport import Sources
from citelens.verify.cache import VerificationCache
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Status, Verification
from tests.fakes.scholarly import ScholarlyFake, fast_rates

BIB = r"""
@article{scipy2020,
  title = {{SciPy} 1.0: Fundamental Algorithms for Scientific Computing in {Python}},
  author = {Virtanen, Pauli and others}, journal = {Nature Methods}, year = {2020},
  doi = {10.1038/s41592-019-0686-2}}
@inproceedings{vaswani2017, title = {Attention is All you Need},
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki and Uszkoreit, Jakob and
            Jones, Llion and Gomez, Aidan N. and Kaiser, Lukasz and Polosukhin, Illia},
  booktitle = {Advances in Neural Information Processing Systems}, year = {2017},
  eprint = {1706.03762}}
@article{hunter2007, title = {Matplotlib: A {2D} Graphics Environment}, author = {Hunter, J. D.},
  journal = {Computing in Science \& Engineering}, year = {2007}}
@article{makris2014,
  title = {Developing functional musculoskeletal tissues through hypoxia and lysyl
           oxidase-induced collagen cross-linking},
  author = {Makris, Eleftherios A. and Responte, Donald J. and Paschos, Nikolaos K. and
            Hu, Jerry C. and Athanasiou, Kyriacos A.},
  journal = {Proceedings of the National Academy of Sciences}, year = {2014}, pmid = {25349395}}
@misc{faultdata, title = {Reference Measurements of Citation Checker Faults},
  author = {Halvorsen, Ingrid and Wieczorek, Tomasz}, year = {2021},
  doi = {10.5281/zenodo.7654321}}
@article{crossonly, title = {Hysteresis of Reference Managers under Concurrent Editing},
  author = {Halvorsen, Ingrid}, journal = {Journal of Documentation Engineering}, year = {2019}}
"""
#: A Zenodo-like record: only Semantic Scholar and doi.org know it.
FAULTDATA = {"title": "Reference Measurements of Citation Checker Faults",
             "authors": ["Ingrid Halvorsen", "Tomasz Wieczorek"], "year": 2021,
             "doi": "10.5281/zenodo.7654321", "sources": ["s2", "doi"], "type": "dataset"}
#: A title-only entry only Semantic Scholar and Crossref know: puts Crossref on the path.
CROSSONLY = {"title": "Hysteresis of Reference Managers under Concurrent Editing",
             "authors": ["Ingrid Halvorsen"], "year": 2019,
             "venue": "Journal of Documentation Engineering", "doi": "10.5555/crossonly.2019",
             "sources": ["s2", "crossref"], "type": "journal-article"}

#: Which sources can decide each entry (fake source names).
DECIDERS: dict[str, set[str]] = {
    "scipy2020": {"s2", "openalex", "crossref", "doi"},
    "vaswani2017": {"s2", "arxiv", "openalex"},
    "hunter2007": {"s2", "crossref", "openalex"},
    "makris2014": {"s2", "ncbi", "crossref", "openalex"},
    "faultdata": {"s2", "doi"},
    "crossonly": {"s2", "crossref"},
}
SOURCES = ("s2", "crossref", "openalex", "arxiv", "doi", "ncbi")
FAULTS = ("429", "5xx", "stall", "malformed", "html", "reset", "down", "back")
#: Faults that are network outages: the host is marked down and that is logged once.
OUTAGES = {"stall", "reset", "down", "back"}
#: Audit-trail source names of the fake's sources.
AUDIT_NAME = {"ncbi": "pubmed"}
#: Timeout of the faulted host (a stall lasts longer); healthy hosts get HEALTHY_TIMEOUT_S so
#: a busy CI machine cannot turn a slow healthy answer into a spurious outage.
TIMEOUT_S = 0.5
HEALTHY_TIMEOUT_S = 5.0
CELL_LIMIT_S = 15.0
#: Cells running at once (each has its own fake server thread in this process).
PARALLEL_CELLS = 12
#: Each healthy source of a cell answers up to this late (a random latency per cell and
#: source, seeded by the cell): which source answers first must not decide who is asked.
MAX_LATENCY_S = 0.25


@dataclass
class Cell:
    source: str
    fault: str
    first: dict[str, Verification] = field(default_factory=dict)
    second: dict[str, Verification] = field(default_factory=dict)
    logs: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""
    requests_to_source: int = 0
    first_logs: int = 0  # log lines of the first run (the outage), before the recovery run


def _views() -> list:
    return [entry_view(e) for e in parse_bib(BIB, "refs.bib").entries]


def _also_down(source: str) -> set[str]:
    return set() if source == "s2" else {"s2"}


async def _run_cell(cell: Cell, cache_dir: Path) -> None:
    fake = ScholarlyFake().start()
    started = time.monotonic()
    try:
        fake.add_paper(FAULTDATA)
        fake.add_paper(CROSSONLY)
        rng = random.Random(f"{cell.source}-{cell.fault}")
        for src in SOURCES:  # the faulted source has its fault (and a 0.5 s timeout)
            fake.set_latency(src, 0.0 if src == cell.source else rng.uniform(0.0, MAX_LATENCY_S))
        for other in _also_down(cell.source):
            fake.set_mode(other, "down")
        if cell.fault == "back":  # one connection reset, then the source answers again
            fake.set_mode(cell.source, "reset", count=1)
        elif cell.fault == "stall":
            fake.set_mode(cell.source, "stall", stall_s=TIMEOUT_S * 6)
        else:
            fake.set_mode(cell.source, cell.fault)
        settings = fake.settings(request_timeout_s=HEALTHY_TIMEOUT_S, retry_backoff_s=0.001,
                                 max_retries=2)
        sources = Sources.from_settings(
            settings, cell.logs.append, rates=fast_rates(),
            unavailable_for_s=0.0 if cell.fault == "back" else 60.0)
        sources.hosts()[cell.source].timeout_s = TIMEOUT_S
        cache = VerificationCache(cache_dir, cell.logs.append)
        try:
            cell.first = await asyncio.wait_for(verify_entries(
                _views(), settings, sources=sources, cache=cache, log=cell.logs.append),
                CELL_LIMIT_S)
            # what the client sent: on a starved CPU the fake's thread may not have read a
            # request the client already gave up on (0.5 s) when the run ends
            cell.requests_to_source = max(fake.count(cell.source),
                                          sources.request_counts().get(cell.source, 0))
            cell.first_logs = len(cell.logs)
            fake.set_mode(cell.source, "ok")
            for other in _also_down(cell.source):
                fake.set_mode(other, "ok")
            sources.reset_availability()
            cell.second = await asyncio.wait_for(verify_entries(
                _views(), settings, sources=sources, cache=cache, log=cell.logs.append),
                CELL_LIMIT_S)
        finally:
            cache.close()
            await sources.aclose()
    except BaseException as exc:  # recorded, and the cell's test fails with it
        cell.error = f"{type(exc).__name__}: {exc}"
    finally:
        cell.seconds = time.monotonic() - started
        fake.stop()


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Cell]:
    root = tmp_path_factory.mktemp("fault-matrix")
    cells = {(s, f): Cell(s, f) for s in SOURCES for f in FAULTS}

    async def all_cells() -> None:
        gate = asyncio.Semaphore(PARALLEL_CELLS)

        async def one(c: Cell) -> None:
            async with gate:
                await _run_cell(c, root / f"{c.source}-{c.fault}")

        await asyncio.gather(*(one(c) for c in cells.values()))

    asyncio.run(all_cells())
    return cells


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("source", SOURCES)
def test_fault_cell(matrix: dict[tuple[str, str], Cell], source: str, fault: str) -> None:
    cell = matrix[(source, fault)]
    assert not cell.error, cell.error
    # (a cell over CELL_LIMIT_S is cell.error: asyncio.wait_for, a hang guard)
    assert set(cell.first) == set(DECIDERS)
    # The faulted source was really on the path.
    assert cell.requests_to_source >= 1, f"{source} was never asked"
    down = {source} | _also_down(source)
    for key, v in cell.first.items():
        assert v.status is not Status.NOT_FOUND, (key, v.summary)
        others = DECIDERS[key] - down
        if others:
            assert v.status is Status.VERIFIED, (key, v.status, v.summary)
        elif fault == "back":
            assert v.status in (Status.VERIFIED, Status.UNVERIFIED), (key, v.summary)
        else:  # honest: nobody else could decide
            assert v.status is Status.UNVERIFIED, (key, v.status, v.summary)
        if v.status is Status.UNVERIFIED:
            assert any(a.outcome in ("failed", "unavailable") for a in v.audit), v.audit
            assert "could not ask" in v.summary, v.summary
        if fault != "back":  # a faulted source never claims to have answered
            name = AUDIT_NAME.get(source, source)
            answered = [a for a in v.audit if a.source == name and not a.cached
                        and a.outcome in ("found", "not_found")]
            assert not answered, (key, [(a.method, a.outcome, a.detail) for a in answered])
    # Recovery: the source is back, everything verifies.
    assert {k: v.status for k, v in cell.second.items()} == dict.fromkeys(
        DECIDERS, Status.VERIFIED), {k: v.summary for k, v in cell.second.items()}
    # The outage is logged once (not once per entry or per request). Only the outage run
    # counts: on a starved CPU a request of the recovery run can time out (0.5 s) and say so.
    label = source_name(source)
    mentions = [line for line in cell.logs[:cell.first_logs]
                if label in line and "requests so far" not in line and "in a row" not in line]
    # A host answering only 429 or 5xx is cut off by its circuit breaker, said once.
    assert len([line for line in cell.logs if label in line and "in a row" in line]) <= 1
    if fault in OUTAGES:
        assert len(mentions) == 1, mentions
    else:
        assert len(mentions) <= 1, mentions


# ---------------------------------------------------------------------- cache faults


def _one_cache_line(logs: list[str]) -> None:
    lines = [line for line in logs if "cache" in line]
    assert len(lines) == 1, lines
    assert "without a cache" in lines[0]


async def _check_without_cache(fake: ScholarlyFake, cache_dir: str) -> list[str]:
    fake.add_paper(FAULTDATA)
    fake.add_paper(CROSSONLY)
    logs: list[str] = []
    settings = fake.settings(cache_dir=cache_dir, request_timeout_s=2.0)
    for _ in range(2):  # a second run works too
        res = await asyncio.wait_for(verify_entries(_views(), settings, log=logs.append), 20)
        assert {v.status for v in res.values()} == {Status.VERIFIED}, {
            k: v.summary for k, v in res.items()}
    return logs


async def test_cache_dir_full_of_garbage_degrades_to_no_cache(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    d = tmp_path / "garbage"
    d.mkdir()
    rnd = os.urandom
    (d / "cache.db").write_bytes(b"SQLite format 3\x00" + rnd(4096))
    (d / "cache.db-wal").write_bytes(rnd(777))
    for sub in ("00", "1f", "ab"):
        (d / sub).mkdir()
        (d / sub / "deadbeef.val").write_bytes(rnd(300))
    logs = await _check_without_cache(scholarly_server, str(d))
    lines = [line for line in logs if "cache" in line]
    # once per run (each run opens the cache anew), never once per lookup
    assert len(lines) == 2 and all("without a cache" in x for x in lines), lines


async def test_cache_dir_that_is_a_file_degrades_to_no_cache(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    f = tmp_path / "not-a-dir"
    f.write_bytes(b"\x00junk")
    logs = await _check_without_cache(scholarly_server, str(f))
    assert len([x for x in logs if "cache" in x]) == 2


def _read_only_place(tmp_path: Path) -> str:
    if os.geteuid() == 0:  # root ignores permission bits: use a read-only file system
        where = "/sys/citelens-cache-test"
        if os.path.exists(where):
            pytest.skip("unexpected writable /sys")
        return where
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    return str(ro / "cache")


async def test_read_only_cache_dir_degrades_to_no_cache(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    where = _read_only_place(tmp_path)
    logs: list[str] = []
    settings = scholarly_server.settings(cache_dir=where)
    scholarly_server.add_paper(FAULTDATA)
    scholarly_server.add_paper(CROSSONLY)
    res = await asyncio.wait_for(verify_entries(_views(), settings, log=logs.append), 20)
    assert {v.status for v in res.values()} == {Status.VERIFIED}
    _one_cache_line(logs)
