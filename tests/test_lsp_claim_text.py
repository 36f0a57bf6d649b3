"""The claim the hover shows is the sentence as a reader reads it (through the real server).

LaTeX: a command on the line after the citing sentence (``\\bibliographystyle{plain}``)
is not part of the sentence. Markdown: inline math is plain text in one piece, and a
``|`` inside it does not cut the sentence as a table cell would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.scholarly import ScholarlyFake
from tests.lsp_session import open_doc, session, wait_for
from tests.test_lsp_claims import NO_MODEL_SETTINGS, Hovering, position_of

PAPER: dict[str, Any] = {
    "title": "Attention Is All You Need",
    "authors": ["Ashish Vaswani", "Noam Shazeer"], "year": 2017,
    "venue": "Advances in Neural Information Processing Systems",
    "doi": "10.5555/nips.2017.7181", "sources": ["crossref", "doi", "openalex"],
    "abstract": "The dominant sequence transduction models are based on recurrent networks. "
    "We propose the Transformer, based solely on attention mechanisms.",
}
BIB = ("@inproceedings{vaswani17,\n  title = {Attention Is All You Need},\n"
       "  author = {Ashish Vaswani and Noam Shazeer},\n  booktitle = {Advances in Neural "
       "Information Processing Systems},\n  year = {2017},\n  doi = {10.5555/nips.2017.7181},\n}\n")


async def _claim_line(tmp_path: Path, server: ScholarlyFake, name: str, text: str) -> str:
    server.add_paper(PAPER)
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    doc = tmp_path / name
    doc.write_text(text, encoding="utf-8")
    env = server.env(cache=tmp_path / "cache")
    async with session("neovim", tmp_path, env=env, settings=NO_MODEL_SETTINGS) as client:
        u = open_doc(client, doc, text)
        await wait_for(lambda: any("verified 1 entries" in m.message for m in client.log_messages),
                       15, "verification")
        hover = await Hovering(client, u, position_of(text, "vaswani17")).hover()
    lines = [line for line in hover.splitlines() if line.startswith("*Claim:*")]
    assert len(lines) == 1, hover
    return lines[0]


async def test_latex_a_command_on_the_next_line_is_not_part_of_the_claim(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    text = ("\\documentclass{article}\n\\begin{document}\nSequence models were slow. "
            "Transformers changed everything \\cite{vaswani17}.\n\\bibliographystyle{plain}\n"
            "\\bibliography{refs}\n\\end{document}\n")
    line = await _claim_line(tmp_path, scholarly_server, "main.tex", text)
    assert line == "*Claim:* Transformers changed everything."


async def test_markdown_math_is_plain_text_and_a_bar_in_it_does_not_cut_the_claim(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    text = ("---\nbibliography: refs.bib\n---\n\nIn GMR we first learn a joint probability "
            "distribution\n$p(\\boldsymbol{x}, \\boldsymbol{y})$ of input $\\boldsymbol{x}$ and "
            "output\n$\\boldsymbol{y}$ with attention [@vaswani17] and then\ncompute the "
            "conditional distribution $p(\\boldsymbol{y}|\\boldsymbol{x})$\nto make predictions.\n")
    line = await _claim_line(tmp_path, scholarly_server, "paper.md", text)
    assert line == ("*Claim:* In GMR we first learn a joint probability distribution p(x, y) of "
                    "input x and output y with attention and then compute the conditional "
                    "distribution p(y|x) to make predictions.")
    assert "`" not in line and "$" not in line  # no code spans, no TeX left
