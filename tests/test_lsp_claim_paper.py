"""The claim check reads only the paper verification accepted as the cited one.

Through the real server (pytest-lsp) with the fake scholarly APIs and the fake model on
127.0.0.1. A NOT_FOUND entry whose closest candidate has a similar title (the case of
``[@Dempster1977]`` in the JOSS gmr paper, whose closest candidate is Ghahramani and
Jordan's "Supervised learning from incomplete data via an EM approach") must not be
judged against that candidate's abstract; neither may an entry whose DOI names another
paper. The claim section says in one line why there is no check.
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

GHAHRAMANI: dict[str, Any] = {
    "title": "Supervised learning from incomplete data via an EM approach",
    "authors": ["Zoubin Ghahramani", "Michael I. Jordan"], "year": 1994,
    "venue": "Advances in Neural Information Processing Systems",
    "abstract": "Real-world learning tasks may involve high-dimensional data sets with "
    "arbitrary patterns of missing data. We present a framework based on maximum likelihood "
    "density estimation for learning from such data sets.",
}
DEMPSTER_BIB = """@article{Dempster1977,
author = {A. P. Dempster and N. M. Laird and D. B. Rubin},
title = {Maximum Likelihood from Incomplete Data via the EM Algorithm},
journal = {Journal of the Royal Statistical Society. Series B (Methodological)},
volume = {39}, number = {1}, pages = {1--38}, year = {1977}
}
"""
PAPER_MD = ("---\nbibliography: refs.bib\n---\n\n# Method\n\nThe model is fitted to the joint "
            "distribution of $\\boldsymbol{x}$ and\n$\\boldsymbol{y}$ through expectation "
            "maximization [@Dempster1977] and then\nused for prediction.\n")

LATTICES: dict[str, Any] = {
    "title": "Gated Residual Lattices for Sparse Tabular Forecasting",
    "authors": ["Ada Lovelace", "Alan Turing"], "year": 2023,
    "venue": "Journal of Machine Learning Research", "doi": "10.5555/jmlr.2023.0101",
    "abstract": "We show that gated residual lattices reduce forecasting error on sparse "
    "tabular data by 12 percent compared with gradient boosting.",
}
OTHER: dict[str, Any] = {
    "title": "A Survey of Bird Migration Routes over the Baltic Sea",
    "authors": ["Carl Linnaeus"], "year": 2019, "venue": "Journal of Ornithology",
    "doi": "10.5555/orn.2019.0042",
    "abstract": "Bird migration routes over the Baltic Sea are surveyed with radar.",
}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


async def _hovers_after_verification(
    client: Any, doc: Path, text: str, key: str, settle_s: float = 1.0
) -> list[str]:
    """Two hovers on ``key`` once verification is done, ``settle_s`` apart (time enough for
    a background check the first one would have started)."""
    u = open_doc(client, doc, text)
    await wait_for(lambda: any("verified" in m.message and "entries" in m.message
                               for m in client.log_messages), 15, "verification")
    h = Hovering(client, u, position_of(text, key))
    first = await h.hover()
    await asyncio.sleep(settle_s)
    return [first, await h.hover()]


async def test_a_not_found_entry_is_not_judged_against_the_closest_candidate(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    scholarly_server.add_paper(GHAHRAMANI)
    (tmp_path / "refs.bib").write_text(DEMPSTER_BIB, encoding="utf-8")
    doc = tmp_path / "paper.md"
    doc.write_text(PAPER_MD, encoding="utf-8")
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("neovim", tmp_path, env=env, settings=llm_settings(llm)) as client:
        hovers = await _hovers_after_verification(client, doc, PAPER_MD, "Dempster1977")
        assert not any("Real-world learning tasks" in h for h in hovers), hovers[-1]  # candidate's
        assert llm.chat_calls() == 0  # nothing was judged
        for text in hovers:
            assert "none is this paper" in text  # the verification section, as before
            assert PENDING not in text
            assert "No claim check: verification found no paper for this entry (NOT_FOUND)" in text


async def test_b_an_entry_whose_doi_names_another_paper_gets_no_claim_check(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    """DOI_MISMATCH: neither the DOI's paper nor a paper found by the title is read."""
    scholarly_server.add_paper(LATTICES)
    scholarly_server.add_paper(OTHER)
    (tmp_path / "refs.bib").write_text(
        "@article{lovelace23,\n  title = {Gated Residual Lattices for Sparse Tabular Forecasting},\n"
        "  author = {Ada Lovelace and Alan Turing},\n  journal = {Journal of Machine Learning "
        "Research},\n  year = {2023},\n  doi = {10.5555/orn.2019.0042},\n}\n", encoding="utf-8")
    text = ("\\documentclass{article}\n\\begin{document}\nGated residual lattices reduce "
            "forecasting error on sparse tabular data \\cite{lovelace23}.\n"
            "\\bibliography{refs}\n\\end{document}\n")
    doc = tmp_path / "main.tex"
    doc.write_text(text, encoding="utf-8")
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("visual-studio-code", tmp_path, env=env, settings=llm_settings(llm)) as client:
        hovers = await _hovers_after_verification(client, doc, text, "lovelace23")
        assert not any("surveyed with radar" in h or "We show that gated" in h for h in hovers), hovers[-1]
        assert llm.chat_calls() == 0
        for hover in hovers:
            assert "DOI" in hover and PENDING not in hover
            assert "No claim check: the entry's DOI names another paper (DOI_MISMATCH)" in hover


async def test_c_an_unverified_entry_gets_one_line_and_no_lookup(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    """Offline, verification cannot identify the paper (UNVERIFIED): no check, no abstract."""
    scholarly_server.add_paper(LATTICES)
    (tmp_path / "refs.bib").write_text(
        "@article{lovelace23,\n  title = {Gated Residual Lattices for Sparse Tabular Forecasting},\n"
        "  author = {Ada Lovelace and Alan Turing},\n  journal = {Journal of Machine Learning "
        "Research},\n  year = {2023},\n}\n", encoding="utf-8")
    text = ("\\documentclass{article}\n\\begin{document}\nGated residual lattices reduce "
            "forecasting error on sparse tabular data \\cite{lovelace23}.\n"
            "\\bibliography{refs}\n\\end{document}\n")
    doc = tmp_path / "main.tex"
    doc.write_text(text, encoding="utf-8")
    env = scholarly_server.env(cache=tmp_path / "cache")
    settings = llm_settings(llm, offline=True)
    async with session("neovim", tmp_path, env=env, settings=settings) as client:
        hovers = await _hovers_after_verification(client, doc, text, "lovelace23", settle_s=0.5)
        for hover in hovers:
            assert "UNVERIFIED" in hover or "Not verified" in hover  # the verification section
            assert PENDING not in hover and "Abstract" not in hover
            assert "No claim check: the cited paper could not be identified (UNVERIFIED" in hover
        assert llm.chat_calls() == 0
        assert scholarly_server.count() == 0
