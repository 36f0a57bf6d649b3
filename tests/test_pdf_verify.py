"""A printed reference is an entry from the start (its label as key, the fields read, the
string as printed), and its verdict reads the print itself: a slip of the PDF reader (a title
cut at a page break, a name split by a hyphen, a venue read into the title) is information
"as read from the PDF", never a warning; what the print itself gets wrong (other authors,
another year, an invented title) stays the author's; a reference read without confidence
that no source recognises is "could not read" with its printed text, never NOT_FOUND.
Verdicts come from ``decide`` (the one writer) on answers built as the sources give them, and
from the real scheduler against the fake scholarly APIs on loopback."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from citelens.core.accents import strip_accents
from citelens.core.findings import Severity
from citelens.core.model import PrintedReference
from citelens.core.settings import Settings
from citelens.documents.pdf.layout import Printed, join_lines
from citelens.documents.pdf.read import printed_view
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.sources.transport import Sources
from citelens.verify import plan
from citelens.verify.cache import VerificationCache
from citelens.verify.match.printed import AS_READ, confirms, title_reading
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Status, Unverified
from citelens.verify.verdict import Asked, decide
from tests.fakes.scholarly import ScholarlyFake, fast_rates
from tests.harness import ROOT

SCIPY = PaperRecord(
    source="crossref",
    title="SciPy 1.0: Fundamental Algorithms for Scientific Computing in Python",
    authors=["Pauli Virtanen", "Ralf Gommers", "Travis E. Oliphant", "Matt Haberland"],
    year=2020,
    venue="Nature Methods",
    doi="10.1038/s41592-019-0686-2",
)
PRINTED = (
    "P. Virtanen, R. Gommers, T. E. Oliphant, M. Haber-land, et al., “SciPy 1.0: Fundamental "
    "algorithms for scientific computing in Python,” Nature Methods, vol. 17, pp. 261–272, 2020."
)
DATA = ROOT / "tests" / "data" / "pdf"


def _view(text: str, label: str = "[9]", **changes: Any) -> Any:
    view = printed_view(label, Printed(label, text, 4, True))
    return dataclasses.replace(view, **changes) if changes else view


def _found(*records: PaperRecord, method: Method = Method.CROSSREF_SEARCH) -> Asked:
    return Asked(Lookup("crossref", method, Outcome.FOUND, list(records), ""), None, "")


def _none(method: Method = Method.CROSSREF_SEARCH) -> Asked:
    return Asked(Lookup("crossref", method, Outcome.NOT_FOUND, [], ""), None, "")


def test_a_title_cut_at_a_page_break_is_the_readers_slip() -> None:
    view = _view(PRINTED, title="SciPy 1.0: Fundamental algorithms for")  # the reader cut it
    v = decide(view, [_found(SCIPY)], Settings())
    assert v.status is Status.VERIFIED, v.summary
    assert v.discrepancies and all(d.severity is Severity.INFORMATION for d in v.discrepancies)
    assert all(d.message.endswith(f"({AS_READ})") for d in v.discrepancies)
    assert v.summary.startswith("Verified in Crossref")  # decide's words, one vocabulary


def test_what_the_print_gets_wrong_stays_a_warning() -> None:
    other_authors = PRINTED.replace("P. Virtanen, R. Gommers, T. E. Oliphant", "W. Zhang, L. Chen, H. Tanaka")
    v = decide(_view(other_authors), [_found(SCIPY)], Settings())
    assert v.status is Status.PARTIAL
    assert any(d.severity is Severity.WARNING and d.field == "authors" for d in v.discrepancies)
    wrong_year = decide(_view(PRINTED.replace("2020", "2017")), [_found(SCIPY)], Settings())
    assert wrong_year.status is Status.PARTIAL


def test_confirms_needs_title_first_authors_and_year() -> None:
    assert confirms(PRINTED, [SCIPY])
    assert not confirms(PRINTED.replace("Fundamental", "Essential"), [SCIPY])  # a near-miss title
    assert not confirms(PRINTED.replace("2020", "2018"), [SCIPY])
    assert not confirms(PRINTED.replace("Gommers", "Gomez"), [SCIPY])
    # "et al." after the first author: the first family name is enough
    assert confirms("P. Virtanen et al. SciPy 1.0: Fundamental algorithms for scientific computing in "
                    "Python. Nature Methods, 2020.", [SCIPY])
    apa = ("Virtanen, P., Gommers, R., and Oliphant, T. E. (2027). SciPy 1.0: Fundamental algorithms for "
           "scientific computing in Python. In Proceedings of the 2020 Conference on Methods.")
    assert not confirms(apa, [SCIPY])  # printed year 2027; 2020 is the conference's


def test_a_reference_without_a_title_read_is_checked_by_containment() -> None:
    view = _view(PRINTED, title="")  # nothing read as a title
    v = decide(view, [_found(SCIPY, method=Method.CROSSREF_REFERENCE)], Settings())
    assert v.status is Status.VERIFIED and v.match is SCIPY
    assert v.method == Method.CROSSREF_REFERENCE


def test_a_misread_reference_is_could_not_read_with_its_text_never_not_found() -> None:
    garbled = "Proceedings of the 2021 Conference on Empirical Methods, pages 1–10, 2021."
    view = _view(garbled)
    assert view.printed is not None and not view.printed.confident
    v = decide(view, [_none(), _none(Method.CROSSREF_REFERENCE)], Settings())
    assert v.status is Status.UNVERIFIED and v.unverified is Unverified.UNREAD
    assert garbled in v.summary and "page 4" in v.summary
    assert v.klass is None and not v.worth_retrying
    # a reading to accuse on, that no source has: NOT_FOUND as for a .bib
    invented = ("J. Doe and K. Fairfield, Recursive neural symbolic gradient networks for protein folding "
                "dynamics, Nature Machine Intelligence, vol. 3, pp. 112–124, 2021.")
    assert decide(_view(invented), [_none(), _none(Method.CROSSREF_REFERENCE)],
                  Settings()).status is Status.NOT_FOUND


def test_a_printed_doi_whose_paper_is_printed_is_no_mismatch() -> None:
    view = _view(PRINTED + " doi:10.1038/s41592-019-0686-2", title="Nature Methods vol 17")  # title misread
    asked = Asked(Lookup("s2", Method.S2_BATCH, Outcome.FOUND, [SCIPY], ""), "doi", SCIPY.doi or "")
    v = decide(view, [asked], Settings())
    assert v.status is Status.VERIFIED, v.summary
    other = PaperRecord(source="crossref", title="Matplotlib: A 2D graphics environment",
                        authors=["J. D. Hunter"], year=2007, doi="10.1109/mcse.2007.55")
    wrong = Asked(Lookup("s2", Method.S2_BATCH, Outcome.FOUND, [other], ""), "doi", other.doi or "")
    assert decide(view, [wrong], Settings()).status is Status.DOI_MISMATCH  # the print's own DOI


def test_a_line_end_hyphen_is_read_as_the_candidates_write_it() -> None:
    printed = PrintedReference("…", 1, True, "Bounded\u00adsuboptimal search with gen\u00aderalised costs")
    rec = PaperRecord(source="crossref", title="Bounded-Suboptimal Search with Generalised Costs")
    assert title_reading(printed, [rec]) == "Bounded-suboptimal search with generalised costs"
    assert title_reading(printed, []) == "Boundedsuboptimal search with generalised costs"


async def test_the_whole_printed_reference_is_asked_of_crossref_and_cached(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    fake = scholarly_server
    settings = fake.settings(cache_dir=str(tmp_path))
    sources = Sources.from_settings(settings, lambda _m: None, rates=fast_rates())
    cache = VerificationCache(tmp_path, lambda _m: None)
    water = "H. S. Frank, The structure of ordinary water, Science, vol. 169, pp. 635–641, 1970."
    invented = ("J. Doe and K. Fairfield, Recursive neural symbolic gradient networks for protein folding "
                "dynamics, Nature Machine Intelligence, vol. 3, pp. 112–124, 2021.")
    views = [_view(water, "[4]", title=""), _view(invented, "[18]")]  # [4]: no title read
    try:
        out = await verify_entries(views, settings, sources=sources, cache=cache)
        asked = [r for r in fake.requests("crossref") if "query.bibliographic" in r["query"]]
        assert water in [r["query"]["query.bibliographic"] for r in asked]
        assert out["[4]"].status is Status.VERIFIED and out["[4]"].match is not None
        assert out["[4]"].match.title == "The Structure of Ordinary Water"
        assert out["[4]"].method == Method.CROSSREF_REFERENCE
        assert out["[18]"].status is Status.NOT_FOUND
        fake.clear_log()
        again = await verify_entries(views, settings, sources=sources, cache=cache)
        assert fake.requests("crossref") == []  # every answer cached (the misses for a day)
        assert again["[4]"].status is Status.VERIFIED
    finally:
        await sources.aclose()
        cache.close()


async def test_a_printed_reference_with_a_doi_and_no_title_read_is_decided(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    """Its DOI is asked like any entry's and its printed string confirms the paper (it once
    waited for the run's deadline: no title, so no identifier tier took it)."""
    fake = scholarly_server
    settings = fake.settings(cache_dir=str(tmp_path), verify_deadline_s=60.0)
    sources = Sources.from_settings(settings, lambda _m: None, rates=fast_rates())
    cache = VerificationCache(tmp_path, lambda _m: None)
    water = "H. S. Frank, The structure of ordinary water, Science, vol. 169, pp. 635–641, 1970."
    view = _view(water + " doi:10.1126/science.169.3946.635", "[4]", title="")
    assert view.doi
    try:
        out = await verify_entries([view], settings, sources=sources, cache=cache)
    finally:
        await sources.aclose()
        cache.close()
    assert out["[4]"].unverified is not Unverified.DEADLINE, out["[4]"].summary
    assert out["[4]"].status is Status.VERIFIED, out["[4]"].summary


async def test_the_snapshots_title_index_answers_a_printed_reference_without_a_request(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    from citelens.snapshot.store import Snapshot, Writer

    writer = Writer(str(tmp_path / "snap.db"))
    writer.add(SCIPY)
    writer.close({"date": "2025-10-01", "sources": "Crossref"})
    snapshot = Snapshot(str(tmp_path / "snap.db"))
    fake = scholarly_server
    settings = fake.settings(cache_dir=str(tmp_path), offline=True)
    sources = Sources.from_settings(settings, lambda _m: None, rates=fast_rates())
    cache = VerificationCache(tmp_path, lambda _m: None)
    try:
        out = await verify_entries([_view(PRINTED, title="")], settings, sources=sources, cache=cache,
                                   snapshot=snapshot)
        other = _view(PRINTED.replace("Fundamental", "Essential"), title="")
        miss = await verify_entries([other], settings, sources=sources, cache=cache, snapshot=snapshot)
    finally:
        await sources.aclose()
        cache.close()
        snapshot.close()
    assert out["[9]"].status is Status.VERIFIED and out["[9]"].method == Method.SNAPSHOT_REFERENCE
    assert miss["[9]"].status is Status.UNVERIFIED  # offline, and the snapshot has no such title
    assert fake.requests() == []


# ------------------------------------------------------------------ real typeset PDFs

MADE: dict[str, dict[str, Any]] = json.loads((DATA / "expected.json").read_text(encoding="utf-8"))
FABRICATED = {"doe2021recursive", "zhang2007matplotlib", "miller2019deep"}
FLAGGING = ("NOT_FOUND", "METADATA_MISMATCH", "DOI_MISMATCH")


def _check(tmp_path: Path, fake: ScholarlyFake, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **fake.env(cache=tmp_path / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "citelens", "check", *args],
        env=env, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )


@pytest.mark.parametrize(
    "name",
    ["acl-review-2col", "acmart-2col", "elsarticle-harv-2col", "apacite-1col", "ieeetran-2col", "lncs-1col"],
)
def test_check_a_pdf_in_a_publishers_style_flags_the_fabricated_references_alone(
    tmp_path: Path, scholarly_server: ScholarlyFake, name: str
) -> None:
    """ACL and ACM ("Authors. 2021. Title."), Elsevier harv ("Authors, 2021. Title."), APA, IEEEtran,
    LNCS: every reference gets its title, the fabricated ones are flagged and no real one is."""
    proc = _check(tmp_path, scholarly_server, str(DATA / f"{name}.pdf"), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    # (a label made from the authors may lose an accent the font did not map: the layout's)
    by_label = {strip_accents(lab): key for lab, key in MADE[name]["references"]}
    for item in (*report["entries"], *report["diagnostics"]):
        if "key" in item:
            item["key"] = strip_accents(item["key"])
    entries = {e["key"]: e for e in report["entries"] if e["key"] in by_label}
    assert set(entries) == set(by_label)
    fabricated = {lab for lab, key in by_label.items() if key in FABRICATED}
    flagged = {
        d["key"] for d in report["diagnostics"]
        if d["severity"] in ("warning", "error") and d["code"] in FLAGGING
    }
    assert flagged == fabricated, [(d["key"], d["message"]) for d in report["diagnostics"]]
    real = [e for lab, e in entries.items() if lab not in fabricated]
    # every real one found (a year one off stays information, as for the .bib), but for at
    # most one the layout cut at a page's footer: "could not read", information, never flagged
    unread = {d["key"] for d in report["diagnostics"] if d["code"] == "REFERENCE_NOT_READ"}
    assert all(e["status"] in ("VERIFIED", "PARTIAL") or e["key"] in unread for e in real)
    assert len(unread & {e["key"] for e in real}) <= 1
    # anything more the reader took for a reference (an appendix line) is never an accusation
    extra = {d["key"] for d in report["diagnostics"] if d.get("key") not in by_label}
    assert not {d["key"] for d in report["diagnostics"]
                if d.get("key") in extra and d["code"] in FLAGGING and d["severity"] != "information"}


# ------------------------------------------------------------------ bounded readers, the venue


def _fake_reader(
    monkeypatch: pytest.MonkeyPatch, took: float = 0.0, clock: list[float] | None = None
) -> dict[str, Any]:
    """``read_pdf`` replaced by one that records how many run at once and the time it was
    given, and advances ``clock`` by ``took`` (the budget is observed, never timed)."""
    import threading
    import time

    from citelens.documents.pdf.read import PdfReading
    from citelens.workspace import pdfs

    seen: dict[str, Any] = {"now": 0, "most": 0, "timeouts": []}
    lock = threading.Lock()

    def read(path: str, timeout: float = 90.0) -> PdfReading:
        with lock:
            seen["now"] += 1
            seen["most"] = max(seen["most"], seen["now"])
            seen["timeouts"].append(timeout)
        time.sleep(0.05)  # long enough for the others to start, were they allowed to
        if clock is not None:
            clock[0] += took
        with lock:
            seen["now"] -= 1
        return PdfReading(path, [Printed("[1]", PRINTED, 1, True)], 1)

    monkeypatch.setattr(pdfs, "read_pdf", read)
    return seen


async def test_no_more_pdf_readers_at_once_than_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citelens.workspace.check import run_check
    from citelens.workspace.pipeline import Pipeline

    for i in range(6):
        (tmp_path / f"paper{i}.pdf").write_bytes(b"%PDF-1.4")
    seen = _fake_reader(monkeypatch)
    pipeline = Pipeline(Settings(pdf_readers=2))
    result = await run_check([str(tmp_path)], pipeline, verify=False)
    assert len(result.printed) == 6
    assert seen["most"] == 2  # observed, not timed: six readers asked, two at a time


async def test_a_pdf_is_read_inside_its_papers_time_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citelens.workspace.pdfs import read_pdfs
    from citelens.workspace.store import DocumentStore
    from citelens.workspace.walls import Budget, PaperWalls

    clock = [0.0]
    seen = _fake_reader(monkeypatch, took=8.0, clock=clock)
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "b.pdf").write_bytes(b"%PDF-1.4")
    store = DocumentStore()
    root = await asyncio.to_thread(os.path.realpath, tmp_path)
    store.walls = PaperWalls((root,), Budget(seconds=5.0), clock=lambda: clock[0])


    _analyses, not_read, _printed = await read_pdfs(
        store, [str(tmp_path / "a.pdf"), str(tmp_path / "b.pdf")], Settings(), asyncio.Semaphore(1)
    )
    assert seen["timeouts"] == [5.0]  # the first reader gets what is left of 5 s, the second none
    assert [f.message for f in not_read] == ["PDF not read: over the paper's budget of 5 s"]
    assert any("reading took more than 5 s" in n for n in store.walls.notes)  # "not fully checked"


def test_the_venue_counts_an_unread_pdf_apart_never_as_clean(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    import pypdf

    v = tmp_path / "venue"
    clean = v / "clean"
    clean.mkdir(parents=True)
    (clean / "refs.bib").write_text(
        "@article{water, title={The Structure of Ordinary Water}, author={Frank, Henry S.}, year={1970},"
        " journal={Science}}\n"
    )
    (clean / "main.tex").write_text(
        "\\documentclass{article}\\begin{document}\\cite{water}\\bibliography{refs}\\end{document}\n"
    )
    unread = v / "unread"
    unread.mkdir()
    w = pypdf.PdfWriter()
    for _ in range(29):
        w.add_blank_page(612, 792)
    with (unread / "paper.pdf").open("wb") as fh:
        w.write(fh)
    out = tmp_path / "out"
    proc = _check(tmp_path, scholarly_server, str(v), "--venue", str(out))
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = {x["paper"]: x for x in map(json.loads, (out / "summary.jsonl").read_text().splitlines())}
    assert lines["unread"]["not_read"] and not lines["clean"].get("not_read")
    page = (out / "summary.html").read_text()
    assert "<b id=not-read>1</b> papers not read" in page
    row = page[page.index("data-name='unread'") :].split("</tr>")[0]
    assert "not read" in row and "(0%)" not in row  # not listed among the clean papers as "0 (0%)"
    assert page.index("data-name='unread'") < page.index("data-name='clean'")  # ranked above the clean


async def test_waiting_for_a_reader_another_paper_holds_is_not_the_papers_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citelens.workspace.pdfs import read_pdfs
    from citelens.workspace.store import DocumentStore
    from citelens.workspace.walls import Budget, PaperWalls

    clock = [0.0]
    seen = _fake_reader(monkeypatch, took=4.0, clock=clock)
    root = await asyncio.to_thread(os.path.realpath, tmp_path)
    shared = asyncio.Semaphore(1)  # the venue's one reader
    papers = []
    for name in ("a", "b"):
        (tmp_path / f"{name}.pdf").write_bytes(b"%PDF-1.4")
        store = DocumentStore()
        store.walls = PaperWalls((root,), Budget(seconds=5.0), clock=lambda: clock[0])
        papers.append(read_pdfs(store, [str(tmp_path / f"{name}.pdf")], Settings(), shared))
    results = await asyncio.gather(*papers)
    assert all(not not_read for _a, not_read, _p in results)  # the second waited 4 s, then read
    assert seen["timeouts"] == [5.0, 5.0]


def test_a_printed_arxiv_doi_does_not_make_a_wrong_venue_the_readers() -> None:
    """ "In CVPR, 2008. doi: 10.48550/arXiv.…" names CVPR as the venue; the arXiv DOI is an
    identifier, not "arXiv preprint": the paper's other venue stays a warning."""
    paper = PaperRecord(source="s2", title="Deep learning via semi-supervised embedding",
                        authors=["Jason Weston", "Frédéric Ratle", "Ronan Collobert"], year=2008,
                        venue="International Conference on Machine Learning", arxiv_id="0704.10243")
    text = ("Jason Weston, Frederic Ratle, and Ronan Collobert. Deep learning via semi-supervised embedding. "
            "In CVPR, 2008. doi: 10.48550/arXiv.0704.10243.")
    v = decide(_view(text), [_found(paper)], Settings())
    assert v.status is Status.PARTIAL
    assert any(d.field == "venue" and d.severity is Severity.WARNING for d in v.discrepancies)
    preprint = text.replace("In CVPR, 2008. doi: 10.48550/arXiv.0704.10243.", "arXiv preprint, 2008.")
    cited_as_preprint = decide(_view(preprint), [_found(paper)], Settings())
    assert not any(d.severity is Severity.WARNING for d in cited_as_preprint.discrepancies)


def test_a_hyphen_printed_at_a_line_end_is_judged_against_the_papers_title() -> None:
    """ "FACTO-/RIE" (a word split before a capital) and "Monte-/carlo" (a compound before a
    lower-case letter): the layout cannot tell, the paper's title does; neither is a
    mismatch, and the text shown reads one way."""
    factorie = PaperRecord(source="crossref", authors=["Andrew McCallum", "Karl Schultz", "Sameer Singh"],
                           title="FACTORIE: Probabilistic Programming via", title_truncated=True,  # "…"
                           year=2009, venue="Advances in Neural Information Processing Systems")
    text = join_lines(["A. McCallum, K. Schultz, and S. Singh. FACTO-",
                       "RIE: Probabilistic Programming via Imperatively Defined Factor Graphs. "
                       "In Advances in Neural Information Processing Systems, 2009."])
    v = decide(_view(text), [_found(factorie)], Settings())
    assert v.status is Status.VERIFIED, v.summary
    monte = PaperRecord(source="s2", authors=["Milos Hauskrecht", "Tomas Singliar"], year=2003, venue="UAI",
                        title="Monte-Carlo optimizations for resource allocation problems",
                        title_truncated=True)
    text = join_lines(["Milos Hauskrecht and Toms Singliar. 2003. Monte-",
                       "carlo optimizations for resource allocation problems in stochastic network "
                       "systems. In UAI."])
    v = decide(_view(text), [_found(monte)], Settings())
    assert v.status is Status.VERIFIED and not v.discrepancies, v.summary


def test_a_year_printed_inside_the_title_is_not_the_references_year() -> None:
    """A wrong year stays the author's even when the title holds another year in brackets."""
    note = PaperRecord(source="crossref", authors=["Carine P. Beatrici", "Leonardo G. Brunnet"], year=2010,
                       venue="Physical Review E",
                       title="Publisher's Note: Cell sorting based on motility differences [Phys. Rev. E 84, "
                       "031927 (2011)]")
    text = ("Carine P. Beatrici and Leonardo G. Brunnet. Publisher’s Note: Cell sorting based on motility "
            "differences [Phys. Rev. E 84, 031927 (2011)]. Phys. Rev. E, {}.")
    wrong = decide(_view(text.format(2015)), [_found(note)], Settings())
    assert wrong.status in (Status.PARTIAL, Status.NOT_FOUND), wrong.summary  # "(2011)" is not 2015's excuse
    right = decide(_view(text.format(2010)), [_found(note)], Settings())
    assert right.status is Status.VERIFIED, right.summary


def test_a_reference_read_wrong_is_read_again_where_the_papers_title_is_printed() -> None:
    """The reader cut the fields in the wrong places (a title ending at "r.e.", a GitHub
    handle taken for the start of the title); the print names the paper, so it is read again
    around the paper's title: no accusation from the misread, and what the print itself gets
    wrong (a preprint cited as published) stays a warning."""
    angluin = PaperRecord(source="s2", authors=["Dick de Jongh", "Makoto Kanazawa"], year=1996,
                          title="Angluin's Theorem for Indexed Families of r.e. Sets and Applications",
                          venue="Annual Conference Computational Learning Theory")
    text = ("D. D. Jongh and M. Kanazawa. Angluin’s Theorem for Indexed Families of r.e. Sets and "
            "Applications. In COLT, 1996.")
    v = decide(_view(text), [_found(angluin)], Settings())
    assert not any(d.severity is Severity.WARNING for d in v.discrepancies), v.summary
    geopandas = PaperRecord(source="s2", title="geopandas/geopandas: v0.8.1", year=2020, venue="Zenodo",
                            authors=["Kelsey Jordahl", "Joris Van den Bossche", "Martin Fleischmann"],
                            doi="10.5281/zenodo.3946761")
    text = ("Jordahl, K., den Bossche, J.V., Fleischmann, M., Eubank, N., maxalbert, Bilogur, A., Rey, S., "
            "2020. geopandas/geopandas: v0.8.1. Zenodo. doi:10.5281/zenodo.3946761.")
    by_doi = Asked(Lookup("s2", Method.S2_BATCH, Outcome.FOUND, [geopandas], ""), "doi", geopandas.doi or "")
    v = decide(_view(text), [by_doi], Settings())
    assert v.status is not Status.DOI_MISMATCH, v.summary
    replay = PaperRecord(source="s2", title="Continual Learning with Deep Generative Replay", year=2017,
                         authors=["Hanul Shin", "Jung Kwon Lee", "Jaehong Kim", "Jiwon Kim"], venue="arXiv",
                         arxiv_id="1705.08690", is_preprint=True)
    text = ("Hanul Shin, Jung Kwon Lee, Jaehong Kim, and Jiwon Kim. 2017. Continual Learning with Deep "
            "Generative Replay. In ICLR. https://doi.org/10.48550/arXiv.1705.08690")
    v = decide(_view(text), [_found(replay)], Settings())
    assert any(d.field == "venue" and d.severity is Severity.WARNING for d in v.discrepancies), v.summary


def test_a_name_after_apas_ellipsis_is_the_papers_last_author() -> None:
    """APA's "First, A., …, Sixth, F., . . . Last, Z.": the name after ". . ." is not the
    seventh author but the last; one the paper does not have is flagged, unless the source's
    list is cut at a round number (it may simply not reach the last author)."""
    names = ["Daniel Foreman-Mackey", "Rodrigo Luger", "Eric Agol", "Thomas Barclay", "Luke Bouma",
             "Timothy Brandt", "Ian Czekala", "Trevor David", "Jiayin Dong", "Emily Gilbert", "Tyler Gordon",
             "Christina Hedges", "Daniel Hey", "Brett Morris", "Adrian Price-Whelan", "Arjun Savel"]
    paper = PaperRecord(source="s2", authors=names, year=2021, venue="Journal of Open Source Software",
                        title="exoplanet: Gradient-based probabilistic inference for exoplanet data & other "
                        "astronomical time series")
    text = ("Foreman-Mackey, D., Luger, R., Agol, E., Barclay, T., Bouma, L., Brandt, T., . . . "
            "{}, {} (2021). "
            "exoplanet: Gradient-based probabilistic inference for exoplanet data & other astronomical time "
            "series. The Journal of Open Source Software.")
    invented = decide(_view(text.format("Barrio", "J. M.")), [_found(paper)], Settings())
    assert invented.status is Status.PARTIAL
    assert any(d.field == "authors" and "Barrio" in d.message and d.severity is Severity.WARNING
               for d in invented.discrepancies), invented.summary
    real = decide(_view(text.format("Savel", "A.")), [_found(paper)], Settings())
    assert real.status is Status.VERIFIED, real.summary
    ten = dataclasses.replace(paper, authors=names[:10])  # a source that stops at ten names
    assert decide(_view(text.format("Barrio", "J. M.")), [_found(ten)], Settings()).status is Status.VERIFIED


def test_a_notice_word_before_the_title_is_no_author() -> None:
    """ "… Pleiner, H. (2005). Erratum: Shear-induced …": read again around the paper's
    title, the names end at the year; "Erratum" is no author."""
    paper = PaperRecord(source="crossref", authors=["G. K. Auernhammer", "H. R. Brand", "H. Pleiner"],
                        year=2005,
                        title="Shear-induced instabilities in layered liquids [Phys. Rev. E 66, "
                              "061707 (2002)]",
                        venue="Physical Review E")
    text = ("Auernhammer, G. K., Brand, H. R., and Pleiner, H. (2005). Erratum: Shear-induced "
            "instabilities in "
            "layered liquids [Phys. Rev. E 66, 061707 (2002)]. Physical Review E.")
    v = decide(_view(text), [_found(paper)], Settings())
    assert v.status is Status.VERIFIED, v.summary


def test_a_preprint_cited_by_its_own_title_asks_the_full_version_of_a_cut_title() -> None:
    """The print names the preprint's title and no identifier; the published paper is found
    under a title its index cut ("Early and Reliable Event Detection ..."): by the same
    authors in the same year, its full version (arXiv, by its id) is asked, and that title
    decides. A paraphrase by other authors asks nothing more."""
    cited = _view("M. Sangnier, J. Gauthier, and A. Rakotomamonjy. Early and Reliable Event "
                  "Recognition Using "
                  "Proximity Space Representation. In ICML, 2016.")
    cut = PaperRecord(source="s2", title="Early and Reliable Event Detection", title_truncated=True,
                      authors=["Maxime Sangnier", "Jérôme Gauthier", "Alain Rakotomamonjy"], year=2016,
                      venue="International Conference on Machine Learning", arxiv_id="1501.10252")
    answer = Lookup("s2", Method.S2_TITLE_SEARCH, Outcome.FOUND, [cut], "")
    assert plan.full_version(cited, answer, lambda _r: False, set()) == (plan.ARXIV_IDS, "1501.10252")
    others = dataclasses.replace(cited, authors=_view("W. Zhang and L. Chen. X. 2016.").authors)
    assert plan.full_version(others, answer, lambda _r: False, set()) is None
    reworded = dataclasses.replace(cited, title="Timely Detection of Rare Events with Proximity Spaces")
    assert plan.full_version(reworded, answer, lambda _r: False, set()) is None


#: References with math in their titles as PDFium reads them from pdflatex's output (plain and
#: plainnat, typeset from LaTeX titles): the math as glyphs, spaced apart ("Õ( √ T)", "ℓ 1",
#: "R d"), a line-end hyphen marked.
MATH_PRINTED = {
    "thompson": (
        "Marc Abeille and Alessandro Lazaric. Thompson sampling achieves Õ ( √ T) regret in linear "
        "quadratic control. In COLT, 2017."
    ),
    "robustness": (
        "Jean-Yves Franceschi, Alhussein Fawzi, and Omar Fawzi. Robustness of classifiers to uniform "
        "ℓp and Gaussian noise. In AISTATS, 2018."
    ),
    "skeleton": (
        "Anna Smith and Bo Li. The β-skeleton of random point sets and α\u00adshapes in Rd . "
        "Phys. Rev. E, 2012."
    ),
    "dissociation": "Anna Smith and Bo Li. Dissociation of h 2o on Pt(111) at t > 300 K. Phys. Rev. E, 2011.",
    "regression": (
        "David Woodruff and Xue Chen. ℓ 1 regression using Lewis weights preconditioning and stochastic "
        "gra\u00addient descent. In COLT, 2018."
    ),
}
#: The same papers as sources write their titles: LaTeX (S2, arXiv), MathML and HTML (Crossref).
MATH_PAPERS = {
    "thompson": PaperRecord(
        source="s2", authors=["Marc Abeille", "Alessandro Lazaric"], year=2017,
        title="Thompson Sampling Achieves $\\tilde{O}(\\sqrt{T})$ Regret in Linear Quadratic Control",
    ),
    "robustness": PaperRecord(
        source="s2", authors=["Jean-Yves Franceschi", "Alhussein Fawzi", "Omar Fawzi"], year=2018,
        title="Robustness of classifiers to uniform $\\ell_p$ and Gaussian noise",
    ),
    "skeleton": PaperRecord(
        source="crossref", authors=["Anna Smith", "Bo Li"], year=2012,
        title="The <mml:math><mml:mi>β</mml:mi></mml:math>-skeleton of random point sets and "
        "$\\alpha$-shapes in $\\mathbb{R}^d$",
    ),
    "dissociation": PaperRecord(
        source="crossref", authors=["Anna Smith", "Bo Li"], year=2011,
        title="Dissociation of H<sub>2</sub>O on Pt(111) at <mml:math><mml:mi>T</mml:mi>"
        "<mml:mo>&gt;</mml:mo><mml:mn>300</mml:mn></mml:math> K",
    ),
    "regression": PaperRecord(
        source="s2", authors=["David Woodruff", "Xue Chen"], year=2018,
        title="$\\ell_1$ Regression using Lewis Weights Preconditioning and Stochastic Gradient Descent",
    ),
}


@pytest.mark.parametrize("paper", sorted(MATH_PRINTED))
def test_math_in_a_title_is_read_as_the_sources_write_it(paper: str) -> None:
    """The print names the paper whose title a source writes in LaTeX or MathML: no title
    warning (a title the reader ran into the venue, "… 300 K. Phys. Rev. E", is the reader's
    slip); a word changed beside the math is still the author's."""
    text, record = MATH_PRINTED[paper], MATH_PAPERS[paper]
    assert confirms(text, [record])
    v = decide(_view(text), [_found(record)], Settings())
    assert v.status is Status.VERIFIED, v.summary
    assert not any(d.severity is Severity.WARNING for d in v.discrepancies), v.summary
    changed = text.replace("random", "sparse").replace("Gaussian", "Laplace").replace("linear", "nonlinear")
    changed = changed.replace("Lewis", "Newton").replace("Pt(111)", "Au(100)")
    assert not confirms(changed, [record])
    assert decide(_view(changed), [_found(record)], Settings()).status is not Status.VERIFIED
