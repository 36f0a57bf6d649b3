"""End-to-end: the editor shows an entry's verdict as soon as it is final, not after the
slowest host (issue 45).

Two cited entries: one whose DOI every fast source knows (with another year: a warning the
writer should see at once), one whose arXiv id only arXiv knows, and arXiv takes a minute to
answer. The warning on the first is published while the request to arXiv is still on its way
(the fake's log shows it unanswered), through the real server.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types as lsp

from tests.fakes.scholarly import ScholarlyFake
from tests.fakes.scholarly import scholarly_server as scholarly_server  # fixture
from tests.lsp_session import diagnostics, open_doc, session, wait_for

BIB = r"""@article{fastyear,
  title = {Streaming Verdicts to the Editor Without Waiting},
  author = {Lund, Maja and Ortiz, Rafael},
  journal = {Journal of Responsive Tools},
  year = {2009},
  doi = {10.5555/stream.2015},
}

@article{slowarxiv,
  title = {A Preprint Only the Slow Host Knows},
  author = {Berg, Nils},
  journal = {arXiv preprint},
  year = {2023},
  eprint = {2301.00017},
  archivePrefix = {arXiv},
}
"""
TEX = "\\documentclass{article}\\begin{document}\n\\cite{fastyear} and \\cite{slowarxiv}.\n" \
      "\\bibliography{refs}\\end{document}\n"
SLOW_S = 60.0


def _year_warning(ds: Sequence[lsp.Diagnostic]) -> bool:
    return any(d.code == "METADATA_MISMATCH" and isinstance(d.data, dict)
               and d.data.get("key") == "fastyear" for d in ds)


async def test_a_fast_entrys_warning_is_shown_while_a_slow_host_is_still_asked(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    fake = scholarly_server
    fake.add_paper({"title": "Streaming Verdicts to the Editor Without Waiting",
                    "authors": ["Maja Lund", "Rafael Ortiz"], "year": 2015,
                    "venue": "Journal of Responsive Tools", "doi": "10.5555/stream.2015"})
    fake.add_paper({"title": "A Preprint Only the Slow Host Knows", "authors": ["Nils Berg"],
                    "year": 2023, "venue": "arXiv", "arxiv": "2301.00017", "sources": ["arxiv"]})
    fake.set_latency("arxiv", SLOW_S)
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "refs.bib").write_text(BIB, encoding="utf-8")
    (folder / "main.tex").write_text(TEX, encoding="utf-8")
    settings = {"verificationEnabled": True, "verifyDebounceMs": 30, "s2RequestsPerSecond": 200,
                "requestTimeoutS": 2 * SLOW_S, "retryBackoffS": 0.01, "maxRetries": 1}
    async with session("visual-studio-code", folder, env=fake.env(cache=tmp_path / "cache"),
                       settings=settings) as client:
        open_doc(client, folder / "main.tex")
        u_bib = open_doc(client, folder / "refs.bib")
        await diagnostics(client, u_bib, _year_warning, timeout=SLOW_S / 3)
        # the warning came while arXiv was still being asked about the other entry (on a
        # loaded machine, e.g. the suite on 4 workers, the request may still be on its way)
        await wait_for(lambda: bool(fake.requests("arxiv")), SLOW_S / 3, "the request to arXiv")
        arxiv = fake.requests("arxiv")
        assert all(r["status"] is None for r in arxiv), arxiv
