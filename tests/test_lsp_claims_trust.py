"""A claim check a writer can trust: no invented quotes, no verdicts on doubtful papers or
on text that is not a claim (through the real server, the fake scholarly APIs and the fake
model on 127.0.0.1).

* a model's quote that is not in the abstract is not shown as the paper's words; the
  abstract's own closest sentences are, the best one marked;
* an entry verification calls PARTIAL because its authors or its title disagree with the
  paper gets no check and no model call (a wrong year does not stop the check);
* a citation whose text is ".", a table cell or a list of names gets no model call;
* Markdown: a ``|`` outside a pipe table does not cut the sentence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citelens.claims.render import PENDING
from tests.fakes.llm import FakeLLM
from tests.fakes.scholarly import ScholarlyFake
from tests.lsp_session import open_doc, session, wait_for
from tests.test_lsp_claims import Hovering, llm_settings, position_of

DDPM: dict[str, Any] = {
    "title": "Denoising Diffusion Probabilistic Models",
    "authors": ["Jonathan Ho", "Ajay Jain", "Pieter Abbeel"], "year": 2020,
    "venue": "Advances in Neural Information Processing Systems", "doi": "10.5555/nips.2020.6840",
    "arxiv": "2006.11239",
    "abstract": "We present high quality image synthesis results using diffusion probabilistic "
    "models. Our best results are obtained by training on a weighted variational bound. "
    "On the unconditional CIFAR10 dataset, we obtain an Inception score of 9.46 and a "
    "state-of-the-art FID score of 3.17.",
}


def ddpm_bib(key: str = "ho2020ddpm", *, title: str = DDPM["title"],
             authors: str = "Jonathan Ho and Ajay Jain and Pieter Abbeel", year: int = 2020) -> str:
    return (f"@inproceedings{{{key},\n  title = {{{title}}},\n  author = {{{authors}}},\n"
            f"  booktitle = {{Advances in Neural Information Processing Systems}},\n"
            f"  year = {{{year}}},\n  doi = {{{DDPM['doi']}}},\n}}\n")


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


async def _hovers(tmp_path: Path, server: ScholarlyFake, llm: FakeLLM, bib: str, name: str,
                  text: str, needle: str, settle_s: float = 0.8) -> list[str]:
    """Two hovers at ``needle`` once verification is done, ``settle_s`` apart (time for a
    check the first one would have started)."""
    server.add_paper(DDPM)
    (tmp_path / "refs.bib").write_text(bib, encoding="utf-8")
    doc = tmp_path / name
    doc.write_text(text, encoding="utf-8")
    env = server.env(cache=tmp_path / "cache")
    async with session("neovim", tmp_path, env=env, settings=llm_settings(llm)) as client:
        u = open_doc(client, doc, text)
        await wait_for(lambda: any("verified" in m.message and "entries" in m.message
                                   for m in client.log_messages), 15, "verification")
        h = Hovering(client, u, position_of(text, needle))
        first = await h.hover()
        await asyncio.sleep(settle_s)
        second = await h.hover()
        if PENDING in second or "hover again" in second:
            second = await h.until_done()
        return [first, second]


def _tex(sentence: str) -> str:
    return ("\\documentclass{article}\n\\begin{document}\n" + sentence +
            "\n\\bibliography{refs}\n\\end{document}\n")


CLAIM = "Training on a weighted variational bound gives the best results of diffusion models"


async def test_an_invented_quote_is_not_shown_as_the_papers_words(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    invented = "Diffusion models beat GANs on every benchmark we tried."
    llm.reply({"verdict": "SUPPORTS", "rationale": "The abstract says so.", "evidence": invented})
    text = _tex(f"{CLAIM} \\cite{{ho2020ddpm}}.")
    hovers = await _hovers(tmp_path, scholarly_server, llm, ddpm_bib(), "main.tex", text, "ho2020ddpm")
    final = hovers[-1]
    assert "**✅ SUPPORTS**" in final, final
    assert llm.chat_calls() == 1
    assert invented not in final  # not quoted, not mentioned as the paper's words
    assert "The model gave no verifiable quote" in final
    # the abstract's own sentences instead, best first, the best one marked
    quotes = [line[2:] for line in final.splitlines() if line.startswith("> ")]
    assert quotes[0] == "★ Our best results are obtained by training on a weighted variational bound.", final
    assert all(q.removeprefix("★ ") in DDPM["abstract"] for q in quotes)


async def test_a_quote_that_is_in_the_abstract_is_shown_once_normalised(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    """Curly quotes, case and spacing aside, the model quoted the abstract: shown as a quote."""
    quote = "our best results are obtained by  training on a weighted variational bound"
    llm.reply({"verdict": "SUPPORTS", "rationale": "Stated.", "evidence": quote})
    text = _tex(f"{CLAIM} \\cite{{ho2020ddpm}}.")
    final = (await _hovers(tmp_path, scholarly_server, llm, ddpm_bib(), "main.tex", text, "ho2020ddpm"))[-1]
    assert "> “our best results are obtained by training on a weighted variational bound” — " in final
    assert "no verifiable quote" not in final


@pytest.mark.parametrize(
    ("authors", "title", "why"),
    [
        ("John Doe and Jane Roe", DDPM["title"], "authors disagree"),  # a placeholder
        ("Alice Martin and Bob Keller", DDPM["title"], "authors disagree"),  # no shared author
        # words added to the real title: verification lists the difference, no check
        ("Jonathan Ho and Ajay Jain and Pieter Abbeel",
         "Denoising Diffusion Probabilistic Models for Image Restoration", "title disagrees"),
    ],
)
async def test_a_partial_entry_whose_authors_or_title_disagree_gets_no_check(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM, authors: str, title: str, why: str
) -> None:
    text = _tex(f"{CLAIM} \\cite{{ho2020ddpm}}.")
    bib = ddpm_bib(authors=authors, title=title)
    hovers = await _hovers(tmp_path, scholarly_server, llm, bib, "main.tex", text, "ho2020ddpm")
    assert llm.chat_calls() == 0
    for hover in hovers:
        assert "SUPPORTS" not in hover and PENDING not in hover
        assert f"No claim check: the entry's {why} with the paper verification found (PARTIAL)" in hover
    if "Restoration" in title:  # the verification section lists the title difference
        assert "'for image restoration', which the paper's title does not have" in hovers[-1], hovers[-1]


async def test_a_partial_entry_with_a_wrong_year_is_still_checked(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    text = _tex(f"{CLAIM} \\cite{{ho2020ddpm}}.")
    final = (await _hovers(tmp_path, scholarly_server, llm, ddpm_bib(year=2018), "main.tex", text,
                           "ho2020ddpm"))[-1]
    assert "**✅ SUPPORTS**" in final, final
    assert llm.chat_calls() == 1


@pytest.mark.parametrize(
    ("name", "text", "needle", "why"),
    [
        # the citation alone after the paragraph: its text is "."
        ("paper.md", "---\nbibliography: refs.bib\n---\n\nDiffusion models give good samples.\n\n"
         "[@ho2020ddpm].\n", "@ho2020ddpm", "punctuation"),
        # a table cell
        ("main.tex", _tex("\\begin{tabular}{lr}\nModel & FID \\\\\nDDPM \\cite{ho2020ddpm} & 3.17 \\\\\n"
                          "\\end{tabular}"), "ho2020ddpm", "table cell"),
        ("paper.md", "---\nbibliography: refs.bib\n---\n\n| Model | FID |\n|---|---|\n"
         "| DDPM [@ho2020ddpm] | 3.17 |\n", "@ho2020ddpm", "table cell"),
        # a list of names
        ("paper.md", "---\nbibliography: refs.bib\n---\n\nDDPM, Imagen, DALL-E and Stable "
         "Diffusion [@ho2020ddpm].\n", "@ho2020ddpm", "a list, a name"),
    ],
)
async def test_no_model_call_where_there_is_no_claim(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM, name: str, text: str, needle: str,
    why: str
) -> None:
    hovers = await _hovers(tmp_path, scholarly_server, llm, ddpm_bib(), name, text, needle, settle_s=0.5)
    assert llm.chat_calls() == 0
    for hover in hovers:
        assert "No claim to check here" in hover and why in hover, hover
        assert "SUPPORTS" not in hover and PENDING not in hover


async def test_markdown_a_bar_outside_a_table_keeps_the_whole_sentence(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    sentence = "The likelihood p(x | y) is bounded by a weighted variational bound"
    text = f"---\nbibliography: refs.bib\n---\n\n{sentence} [@ho2020ddpm].\n"
    final = (await _hovers(tmp_path, scholarly_server, llm, ddpm_bib(), "paper.md", text,
                           "@ho2020ddpm"))[-1]
    assert f"*Claim:* {sentence}." in final, final
    prompt = llm.calls()[0]["json"]["messages"][1]["content"]
    assert f"<claim>\n{sentence}.\n</claim>" in prompt


OTHER_PREPRINT: dict[str, Any] = {
    "title": "A Survey of Bird Migration Routes over the Baltic Sea",
    "authors": ["Carl Linnaeus"], "year": 2019, "venue": "arXiv", "arxiv": "1905.04321",
    "abstract": "Bird migration routes over the Baltic Sea are surveyed with radar.",
}


async def test_an_arxiv_id_of_another_paper_is_named_as_such(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    """DOI_MISMATCH caused by the arXiv id: the line names the arXiv id, not the DOI."""
    scholarly_server.add_paper(OTHER_PREPRINT)
    bib = ("@inproceedings{ho2020ddpm,\n  title = {Denoising Diffusion Probabilistic Models},\n"
           "  author = {Jonathan Ho and Ajay Jain and Pieter Abbeel},\n  booktitle = {Advances in "
           "Neural Information Processing Systems},\n  year = {2020},\n  eprint = {1905.04321},\n"
           "  archiveprefix = {arXiv},\n}\n")
    text = _tex(f"{CLAIM} \\cite{{ho2020ddpm}}.")
    hovers = await _hovers(tmp_path, scholarly_server, llm, bib, "main.tex", text, "ho2020ddpm", 0.5)
    assert llm.chat_calls() == 0
    for hover in hovers:
        assert "No claim check: the entry's arXiv id names another paper (DOI_MISMATCH)" in hover, hover
        assert "entry's DOI" not in hover


async def test_claim_diagnostics_judge_nothing_that_is_not_a_claim_or_not_the_paper(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    """With claimDiagnostics on, the background queue skips the same citations the hover
    refuses: the citation alone after a paragraph, a table cell, an entry whose authors
    disagree; the one real claim is checked (one model call)."""
    from citelens.checks.claims import wait_idle
    from tests.test_lsp_claims import InProcess, diag_settings

    scholarly_server.add_paper(DDPM)
    (tmp_path / "refs.bib").write_text(
        ddpm_bib() + ddpm_bib("doe2020", authors="John Doe and Jane Roe"), encoding="utf-8")
    text = _tex(f"Diffusion models give good samples.\n\n\\cite{{ho2020ddpm}}.\n\n"
                "\\begin{tabular}{lr}\nDDPM \\cite{ho2020ddpm} & 3.17 \\\\\n\\end{tabular}\n\n"
                f"{CLAIM} \\cite{{doe2020}}.\n\n{CLAIM} \\cite{{ho2020ddpm}}.")
    doc = tmp_path / "main.tex"
    doc.write_text(text, encoding="utf-8")
    server = InProcess(tmp_path, diag_settings(scholarly_server, llm))
    try:
        server.open(doc, text)
        await server.verified()
        await wait_idle(server.ls.session.claim_queue)
        server.ls.session.claim_findings()
        await wait_idle(server.ls.session.claim_queue)
        assert server.ls.session.claim_queue.checks == 1
        assert llm.chat_calls() == 1
        prompt = llm.calls()[0]["json"]["messages"][1]["content"]
        assert f"<claim>\n{CLAIM}.\n</claim>" in prompt
    finally:
        await server.close()
