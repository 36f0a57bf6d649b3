"""The evidence a hover shows without a model (through the real server).

The abstract's sentences closest to the claim come best first; when none shares a
content word with the claim the hover says so instead of quoting the abstract's start;
a long sentence is quoted whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.scholarly import ScholarlyFake
from tests.lsp_session import open_doc, session, wait_for
from tests.test_lsp_claims import NO_MODEL_SETTINGS, Hovering

LONG = ("Across the nine cohorts, which together followed 41,000 adults for a median of eleven "
        "years and were harmonised for age, sex, smoking, alcohol, physical activity, body mass "
        "index, education, income, baseline blood pressure and baseline kidney function before "
        "any analysis, a daily intake of at least two cups of green tea was associated with a "
        "fourteen percent lower incidence of stroke, an association that held in every cohort.")
PAPER: dict[str, Any] = {
    "title": "Green Tea and Stroke in Nine Cohorts",
    "authors": ["Mary Somerville"], "year": 2020, "venue": "Journal of Cohort Studies",
    "doi": "10.5555/jcs.2020.0009", "sources": ["crossref", "doi", "openalex"],
    "abstract": "Tea is widely drunk in Asia. Green tea drinkers were older on average. "
    "We pooled nine cohorts. " + LONG,
}
BIB = ("@article{somerville20,\n  title = {Green Tea and Stroke in Nine Cohorts},\n"
       "  author = {Mary Somerville},\n  journal = {Journal of Cohort Studies},\n"
       "  year = {2020},\n  doi = {10.5555/jcs.2020.0009},\n}\n")
TEXT = ("\\documentclass{article}\n\\begin{document}\n"
        "Green tea drinking lowers the incidence of stroke \\cite{somerville20}.\n\n"
        "Quantum annealers factor large semiprimes \\cite{somerville20}.\n"
        "\\bibliography{refs}\n\\end{document}\n")


def _positions(text: str, key: str) -> list[Any]:
    from lsprotocol import types as lsp

    out, at = [], text.find(key)
    while at >= 0:
        line = text.count("\n", 0, at)
        out.append(lsp.Position(line, at + 2 - (text.rfind("\n", 0, at) + 1)))
        at = text.find(key, at + 1)
    return out


async def test_evidence_best_first_whole_and_no_overlap_said(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    scholarly_server.add_paper(PAPER)
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    doc = tmp_path / "main.tex"
    doc.write_text(TEXT, encoding="utf-8")
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("neovim", tmp_path, env=env, settings=NO_MODEL_SETTINGS) as client:
        u = open_doc(client, doc, TEXT)
        await wait_for(lambda: any("verified 1 entries" in m.message for m in client.log_messages),
                       15, "verification")
        first, second = _positions(TEXT, "somerville20")
        related = await Hovering(client, u, first).hover()
        unrelated = await Hovering(client, u, second).hover()
    quotes = [line[2:] for line in related.splitlines() if line.startswith("> ")]
    # best first: the sentence about green tea and stroke, though it is the abstract's last
    assert quotes[0] == "★ " + LONG, related  # marked as the best, and whole (over 400 characters)
    assert len(LONG) > 400 and "…" not in quotes[0]
    # then the others sharing words with the claim, by score; "We pooled nine cohorts." shares none
    assert quotes[1:] == ["Green tea drinkers were older on average.", "Tea is widely drunk in Asia."]
    assert "best first" in related
    # no shared content word: said, and the abstract's start is not quoted instead
    assert "no sentence of it shares a content word with the claim" in unrelated
    assert "Tea is widely drunk" not in unrelated
    assert not [line for line in unrelated.splitlines() if line.startswith("> ")]
