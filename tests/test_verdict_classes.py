"""Words that fit the evidence: "invented" where nothing anywhere holds an entry of a kind
the indexes cover, whatever URL or DOI it carries (issue 41: a made-up DOI or any URL hid a
fabricated reference from the chair). A real paper cited with another paper's DOI is wrong
metadata (with its fix); a DOI doi.org says does not exist is more evidence; a book the
indexes lack, or a paper from this year, is "not found in" the sources named, which miss
books, theses, reports and very recent papers. One definition (``verify/classes.py``) for
the hover through the real server, the reports of ``citelens check`` (text and JSON) and the
venue summary."""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from citelens.core.statuses import Status
from citelens.venue.run import Paper, paper_summary
from citelens.verify.classes import pointers, verdict_class
from tests.fakes.scholarly import ScholarlyFake
from tests.harness import attention_view, run_citelens
from tests.lsp_session import diagnostics, open_doc, session

#: Entries against the fake's database (tests/fakes/papers.json): the same invented
#: reference three times (as it is, with a DOI doi.org says does not exist, with a URL).
INVENTED_ENTRY = """
  title = {Quantum Gravitational Embeddings for Citation Graph Compression},
  author = {Nobody, Ann}, year = {2021}, journal = {Journal of Imaginary Results}"""
BIB = f"""@article{{swap,
  title = {{The Structure of Ordinary Water}},
  author = {{Frank, Henry S.}},
  journal = {{Science}}, year = {{1970}},
  doi = {{10.1109/cvpr.1993.341081}},
}}

@article{{invented,{INVENTED_ENTRY}
}}

@article{{invented_doi,{INVENTED_ENTRY},
  doi = {{10.1016/j.jir.2021.04.017}}
}}

@article{{invented_url,{INVENTED_ENTRY},
  url = {{https://www.jstor.org/stable/2984875}}
}}

@book{{lamport1994,
  title = {{{{\\LaTeX}}: A Document Preparation System}},
  author = {{Lamport, Leslie}}, publisher = {{Addison-Wesley}}, year = {{1994}}
}}

@article{{fresh,
  title = {{Sparse Hypergraph Citations for Brand-New Results}},
  author = {{Roe, Rita}}, journal = {{Journal of Tomorrow}}, year = {{{datetime.date.today().year}}}
}}
"""
TEX = ("\\documentclass{article}\\begin{document}\n"
       "\\cite{swap,invented,invented_doi,invented_url,lamport1994,fresh}\n\\bibliography{refs}\\end{document}\n")

EXPECTED = {"swap": ("DOI_MISMATCH", "wrong-metadata"), "invented": ("NOT_FOUND", "fabricated"),
            "invented_doi": ("NOT_FOUND", "fabricated"), "invented_url": ("NOT_FOUND", "fabricated"),
            "lamport1994": ("NOT_FOUND", "not-found"), "fresh": ("NOT_FOUND", "not-found")}
INVENTED = ("invented", "invented_doi", "invented_url")
GAPS = "which miss many books, theses, reports and very recent papers"


def _paper(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "refs.bib").write_text(BIB, encoding="utf-8")
    (root / "main.tex").write_text(TEX, encoding="utf-8")
    return root


def _check(fake: ScholarlyFake, folder: Path, fmt: str) -> str:
    env = {**os.environ, **fake.env(cache=folder.parent / "cache")}
    proc = run_citelens("check", str(folder), "--format", fmt, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_the_cli_says_invented_whatever_doi_or_url_it_carries(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    """The same invented reference as it is, with a DOI doi.org says does not exist, and
    with a URL: all three are fabricated, in the JSON and text reports and in the venue's
    count. Before, the DOI and the URL each moved it to not-found and the venue's paper
    page said "No finding." (issue 41 #1)."""
    folder = _paper(tmp_path / "p")
    report = json.loads(_check(scholarly_server, folder, "json"))
    got = {e["key"]: (e["status"], e.get("class")) for e in report["entries"]}
    assert got == EXPECTED
    assert report["summary"]["by_class"] == {"fabricated": 3, "not-found": 2, "wrong-metadata": 1}
    (dead,) = [d for d in report["diagnostics"] if d["key"] == "invented_doi" and d["file"].endswith(".bib")
               and d["code"] == "NOT_FOUND"]
    assert "resolves nowhere" in dead["message"]
    # the venue summary counts the same class: three likely fabricated references
    summary = paper_summary(Paper("p", str(folder)), report, 1.0)
    assert summary["likely_fabricated"] == 3
    assert sorted(f["key"] for f in summary["findings"] if f["class"] == "fabricated") == sorted(INVENTED)

    text = _check(scholarly_server, folder, "text")
    lines = text.splitlines()

    def class_line(key: str) -> str:
        """The line under the entry's own finding in the .bib (its class in words)."""
        n = next(i for i, ln in enumerate(BIB.splitlines()) if ln.startswith("@") and f"{{{key}," in ln)
        i = next(i for i, ln in enumerate(lines) if f"refs.bib:{n + 1}:" in ln and "NOT_FOUND" in ln)
        return next(ln.strip() for ln in lines[i + 1:] if ln.strip().startswith("class:"))

    for key in INVENTED:
        assert class_line(key).startswith("class: fabricated (this reference looks invented"), key
    assert class_line("invented_doi").endswith("; its DOI does not exist (doi.org has no such DOI))")
    assert class_line("lamport1994").startswith("class: not found in Semantic Scholar")
    assert class_line("fresh").endswith("it is from this year, and indexes take months to list new papers")
    assert "entries by class: 3 fabricated, 2 not-found, 1 wrong-metadata" in text


def test_a_venue_lists_the_invented_reference_whatever_doi_or_url_it_carries(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    """Through ``citelens check --venue``: three papers, each citing the same invented
    reference (as it is, with a DOI doi.org says does not exist, with a URL). Each is
    likely fabricated, counted, and on its paper's page (never "No finding.")."""
    venue = tmp_path / "venue"
    blocks = BIB.split("\n\n")
    for key in INVENTED:
        paper = venue / f"paper-{key}"
        paper.mkdir(parents=True)
        (paper / "refs.bib").write_text(next(b for b in blocks if f"{{{key}," in b) + "\n", encoding="utf-8")
        (paper / "main.tex").write_text(TEX.replace(
            "swap,invented,invented_doi,invented_url,lamport1994,fresh", key), encoding="utf-8")
    env = {**os.environ, **scholarly_server.env(cache=tmp_path / "cache")}
    proc = run_citelens("check", str(venue), "--venue", str(tmp_path / "out"), env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    summary = (tmp_path / "out" / "summary.jsonl").read_text(encoding="utf-8")
    lines = [json.loads(x) for x in summary.splitlines()]
    assert {x["paper"]: x["likely_fabricated"] for x in lines} == {f"paper-{k}": 1 for k in INVENTED}
    for key in INVENTED:
        page = (tmp_path / "out" / "papers" / f"paper-{key}.html").read_text(encoding="utf-8")
        assert "No finding." not in page and "likely fabricated" in page, key


def _hover_text(hover: lsp.Hover | None) -> str:
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    return hover.contents.value


async def test_the_hover_names_the_class_from_the_evidence(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    folder = _paper(tmp_path / "p")
    settings = {"verificationEnabled": True, "verifyDebounceMs": 30, "s2RequestsPerSecond": 200,
                "requestTimeoutS": 2.0, "retryBackoffS": 0.01, "maxRetries": 1}
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("visual-studio-code", folder, env=env, settings=settings) as client:
        u = open_doc(client, folder / "refs.bib")

        def decided(ds: Any) -> bool:
            keys = {d.data.get("key") for d in ds if isinstance(d.data, dict) and d.code in
                    ("DOI_MISMATCH", "NOT_FOUND")}
            return keys >= set(EXPECTED)

        await diagnostics(client, u, decided, timeout=60)
        lines = BIB.splitlines()
        hovers = {}
        for key in EXPECTED:
            line = next(i for i, ln in enumerate(lines) if ln.startswith("@") and f"{{{key}," in ln)
            hovers[key] = _hover_text(await client.text_document_hover_async(lsp.HoverParams(
                lsp.TextDocumentIdentifier(u), lsp.Position(line, lines[line].index("{") + 2))))

    swap = hovers["swap"]
    assert "Class: wrong-metadata (the identifier is another paper's" in swap
    assert "The entry's own paper, in " in swap and "10.1126/science.169.3946.635" in swap  # the fix
    assert "invented" not in swap and "Class: fabricated" not in swap
    assert f"Class: not found in Semantic Scholar, OpenAlex, Crossref, {GAPS}" in hovers["lamport1994"]
    assert "it is from this year" in hovers["fresh"]
    for key in ("swap", "lamport1994", "fresh"):
        assert "invented" not in hovers[key], hovers[key]
    for key in INVENTED:
        assert "Class: fabricated (this reference looks invented" in hovers[key], hovers[key]
        assert "❌ Not found**" in hovers[key]  # not "in any source": the class names them
    assert "its DOI does not exist (doi.org has no such DOI)" in hovers["invented_doi"]


def test_one_rule_for_the_class() -> None:
    """The rule itself, on the shapes a reader would argue about."""
    def nf(**kw: Any) -> str | None:
        return verdict_class(Status.NOT_FOUND, informational=False, own_paper_found=False,
                             discrepancy_classes=(), **{"pointers": (), **kw})

    assert nf() == "fabricated"
    # a URL anyone can add, an identifier its registry refuted: invented all the same
    assert nf(pointers=("url",)) == nf(pointers=("doi",), refuted=("doi",)) == "fabricated"
    assert nf(pointers=("url", "arxiv"), refuted=("arxiv",)) == "fabricated"
    # a DOI no registry was asked about, a paper from this year: cautious
    assert nf(pointers=("doi",)) == nf(pointers=("recent",)) == nf(pointers=("url", "recent")) == "not-found"
    assert verdict_class(Status.NOT_FOUND, informational=True, own_paper_found=False,
                         discrepancy_classes=(), pointers=()) == "not-found"  # a book
    mismatch = {"informational": False, "discrepancy_classes": ()}
    assert verdict_class(Status.DOI_MISMATCH, own_paper_found=True, pointers=("doi",), **mismatch) == (
        "wrong-metadata")
    assert verdict_class(Status.DOI_MISMATCH, own_paper_found=False, pointers=("doi",), **mismatch) == (
        "fabricated")
    assert verdict_class(Status.DOI_MISMATCH, own_paper_found=False, pointers=("doi", "url"), **mismatch) == (
        "fabricated")
    assert pointers(attention_view(year=2026, url="https://x.org/a"), "2026-11-27T00:00:00+00:00") == (
        "url", "arxiv", "recent")
    assert pointers(attention_view(url="javascript:alert(1)"), "") == ("arxiv",)


def test_a_verified_entry_names_every_source_that_holds_it_in_one_order() -> None:
    """The same valid entry is not "Verified in Semantic Scholar" in one run and "in
    OpenAlex" in the next: every source that holds the paper, in a fixed order."""
    from citelens.core.settings import Settings
    from citelens.sources.records import Lookup, Outcome, PaperRecord
    from citelens.verify.verdict import Asked, decide

    view = attention_view(authors=(), arxiv_id=None)

    def found(source: str) -> Asked:
        rec = PaperRecord(source, "Attention is All you Need", ["Ashish Vaswani", "Noam Shazeer"], 2017)
        return Asked(Lookup(source, f"{source}_search", Outcome.FOUND, [rec]), None, view.title)

    answers = [found("openalex"), found("s2"), found("crossref")]
    summaries = {decide(view, order, Settings()).summary for order in (answers, answers[::-1])}
    assert summaries == {"Verified in Semantic Scholar, OpenAlex, Crossref: “Attention is All you Need” "
                         "(Vaswani et al., 2017)"}


def test_the_words_of_each_class_say_its_evidence() -> None:
    from citelens.verify.classes import class_text

    assert class_text("fabricated", Status.NOT_FOUND, ["Crossref"], ()) == (
        "fabricated (this reference looks invented: no source holds it, and it is a kind they cover)")
    mismatch = class_text("fabricated", Status.DOI_MISMATCH, [], ())
    assert "another paper's, and no source holds its title" in mismatch
    assert "no source holds it" not in class_text("fabricated", Status.PARTIAL, [], ())  # the paper was found
    assert class_text("not-found", Status.NOT_FOUND, [], ("url", "recent")) == (
        f"not found in the sources asked, {GAPS}; its URL may lead to it; it is from this year, "
        "and indexes take months to list new papers")
