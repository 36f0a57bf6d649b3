"""Words that fit the evidence: "invented" only where nothing anywhere holds an entry of a
kind the indexes cover. A real paper cited with another paper's DOI is wrong metadata (with
its fix); a classic the indexes lack (with its JSTOR URL), or an entry whose DOI no source
resolves, is "not found in" the sources named, which miss books, theses, reports and very
recent papers. One definition (``verify/classes.py``) for the hover through the real server,
the reports of ``citelens check`` (text and JSON) and the venue summary."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from citelens.verify.classes import pointers, verdict_class
from citelens.workspace.venue import Paper, paper_summary
from tests.fakes.scholarly import ScholarlyFake
from tests.harness import attention_view, run_citelens
from tests.lsp_session import diagnostics, open_doc, session

#: Four entries against the fake's database (tests/fakes/papers.json).
BIB = """@article{swap,
  title = {The Structure of Ordinary Water},
  author = {Frank, Henry S.},
  journal = {Science}, year = {1970},
  doi = {10.1109/cvpr.1993.341081},
}

@article{Dempster1977,
  author = {A. P. Dempster and N. M. Laird and D. B. Rubin},
  title = {Maximum Likelihood from Incomplete Data via the EM Algorithm},
  URL = {http://www.jstor.org/stable/2984875},
  journal = {Journal of the Royal Statistical Society. Series B (Methodological)},
  volume = {39}, number = {1}, pages = {1--38}, year = {1977}
}

@inproceedings{gowda2020,
  title = {Finding the Optimal Vocabulary Size for Neural Machine Translation},
  author = {Gowda, Thamme and May, Jonathan},
  booktitle = {Findings of the Association for Computational Linguistics: EMNLP 2020},
  year = {2020},
  doi = {10.18653/v1/2020.findings-emnlp.352},
}

@article{invented,
  title = {Quantum Gravitational Embeddings for Citation Graph Compression},
  author = {Nobody, Ann}, year = {2021}, journal = {Journal of Imaginary Results}
}
"""
TEX = ("\\documentclass{article}\\begin{document}\n"
       "\\cite{swap,Dempster1977,gowda2020,invented}\n\\bibliography{refs}\\end{document}\n")

EXPECTED = {"swap": ("DOI_MISMATCH", "wrong-metadata"), "Dempster1977": ("NOT_FOUND", "not-found"),
            "gowda2020": ("NOT_FOUND", "not-found"), "invented": ("NOT_FOUND", "fabricated")}
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


def test_the_cli_says_invented_only_for_the_invented_entry(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    folder = _paper(tmp_path / "p")
    report = json.loads(_check(scholarly_server, folder, "json"))
    got = {e["key"]: (e["status"], e.get("class")) for e in report["entries"]}
    assert got == EXPECTED
    assert report["summary"]["by_class"] == {"fabricated": 1, "not-found": 2, "wrong-metadata": 1}
    (gowda,) = [d for d in report["diagnostics"] if d["key"] == "gowda2020" and d["file"].endswith(".bib")]
    assert "looks fabricated" not in gowda["message"] and "resolves nowhere" in gowda["message"]
    # the venue summary counts the same class: one likely fabricated reference, not three
    summary = paper_summary(Paper("p", str(folder)), report, 1.0)
    assert summary["likely_fabricated"] == 1 and summary["findings"][0]["key"] == "invented"

    text = _check(scholarly_server, folder, "text")
    lines = text.splitlines()

    def class_line(key: str) -> str:
        """The line under the entry's own finding in the .bib (its class in words)."""
        n = next(i for i, ln in enumerate(BIB.splitlines()) if ln.startswith("@") and f"{{{key}," in ln)
        i = next(i for i, ln in enumerate(lines) if f"refs.bib:{n + 1}:" in ln)
        assert lines[i + 1].startswith("    also: ")  # where it is cited, then its class
        return lines[i + 2].strip()

    assert class_line("Dempster1977") == (
        f"class: not found in Semantic Scholar, OpenAlex, Crossref, {GAPS}; its URL may lead to it")
    assert class_line("gowda2020").startswith("class: not found in Semantic Scholar, OpenAlex, Crossref")
    assert class_line("gowda2020").endswith("; its DOI may lead to it")
    assert class_line("invented").startswith("class: fabricated (this reference looks invented")
    assert sum("invented" in ln for ln in lines if ln.strip().startswith("class:")) == 1
    assert "entries by class: 1 fabricated, 2 not-found, 1 wrong-metadata" in text


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
    assert (f"Class: not found in Semantic Scholar, OpenAlex, Crossref, {GAPS}; its URL may lead to it"
            in hovers["Dempster1977"])
    assert "Class: not found in" in hovers["gowda2020"] and "its DOI may lead to it" in hovers["gowda2020"]
    for key in ("swap", "Dempster1977", "gowda2020"):
        assert "invented" not in hovers[key], hovers[key]
    assert "Class: fabricated (this reference looks invented" in hovers["invented"]
    assert "❌ Not found**" in hovers["invented"]  # not "in any source": the class names them


def test_one_rule_for_the_class() -> None:
    """The rule itself, on the shapes a reader would argue about."""
    def nf(**kw: Any) -> str | None:
        return verdict_class("NOT_FOUND", informational=False, own_paper_found=False,
                             discrepancy_classes=(), **{"pointers": (), **kw})

    assert nf() == "fabricated"
    assert nf(pointers=("url",)) == nf(pointers=("doi",)) == nf(pointers=("recent",)) == "not-found"
    assert verdict_class("NOT_FOUND", informational=True, own_paper_found=False,
                         discrepancy_classes=(), pointers=()) == "not-found"  # a book
    mismatch = {"informational": False, "discrepancy_classes": ()}
    assert verdict_class("DOI_MISMATCH", own_paper_found=True, pointers=("doi",), **mismatch) == (
        "wrong-metadata")
    assert verdict_class("DOI_MISMATCH", own_paper_found=False, pointers=("doi",), **mismatch) == (
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

    assert class_text("fabricated", "NOT_FOUND", ["Crossref"], ()) == (
        "fabricated (this reference looks invented: no source holds it, and it is a kind they cover)")
    mismatch = class_text("fabricated", "DOI_MISMATCH", [], ())
    assert "another paper's, and no source holds its title" in mismatch
    assert "no source holds it" not in class_text("fabricated", "PARTIAL", [], ())  # the paper was found
    assert class_text("not-found", "NOT_FOUND", [], ("url", "recent")) == (
        f"not found in the sources asked, {GAPS}; its URL may lead to it; it is from this year, "
        "and indexes take months to list new papers")
