"""What tests and benchmarks share to set up a run (one home, imported by both; benchmarks
run as ``python -m benchmarks.X`` from the repository root): where the repository and the
corpus and recorded API answers are (in tests/; the large bibliographies outside, through
``CITELENS_BIGBIB``), a free loopback port, the real CLI as a process, entries as the engine
sees them. Driving the real server is :mod:`tests.lsp_session`; the fake APIs are
:mod:`tests.fakes`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from citelens.core.model import BibEntry, EntryView
from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.documents.read import read_text

ROOT = Path(__file__).resolve().parent.parent
#: Real papers with their bibliographies (``papers/``; SOURCES.md in each, licences there).
CORPUS = ROOT / "tests" / "corpus"
#: Recorded answers of the real APIs (``apis/``; FORMATS.md says how each was made).
FIXTURES = ROOT / "tests" / "fixtures"
#: The one variable naming a folder outside the repository: the large real bibliographies
#: (``ml_conferences.bib``, 50 MB; ``physrev_e_1993_2024.bib``, 68,732 entries), too big to
#: ship. Tests that need them skip without it (:data:`needs_bigbib`); benchmarks read it too.
BIGBIB_VARIABLE = "CITELENS_BIGBIB"
BIGBIB_FILES = ("ml_conferences.bib", "physrev_e_1993_2024.bib")


def _bigbib_dir() -> Path | None:
    value = os.environ.get(BIGBIB_VARIABLE, "")
    folder = Path(value) if value else None
    if folder is None or not all((folder / name).is_file() for name in BIGBIB_FILES):
        return None
    return folder.resolve()


#: The folder ``CITELENS_BIGBIB`` named when the tests started, if it holds the large
#: bibliographies (read once: each test runs with the ``CITELENS_*`` variables cleared).
BIGBIB_DIR = _bigbib_dir()


def bigbib_dir() -> Path | None:
    """:data:`BIGBIB_DIR`."""
    return BIGBIB_DIR


def bigbib(name: str) -> Path:
    """One large bibliography of :data:`BIGBIB_DIR` (a test using it carries
    :data:`needs_bigbib`, so it never runs without the folder)."""
    if BIGBIB_DIR is None:
        raise FileNotFoundError(f"{BIGBIB_VARIABLE} does not name a folder holding {name}")
    return BIGBIB_DIR / name


#: Skip, saying which variable to set, when the large bibliographies are not available.
needs_bigbib = pytest.mark.skipif(
    BIGBIB_DIR is None,
    reason=f"needs the large bibliographies: set {BIGBIB_VARIABLE} to the folder holding "
           f"{' and '.join(BIGBIB_FILES)} (see benchmarks/README.md)")


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_citelens(
    *args: str, env: dict[str, str] | None = None, cwd: str | Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``citelens ARGS`` as a user runs it: a process of its own, output captured, never
    raising on its exit code."""
    return subprocess.run(
        [sys.executable, "-m", "citelens", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


#: "Attention Is All You Need" as a .bib entry gives it: arXiv id, no DOI, no authors.
ATTENTION = EntryView(
    key="vaswani", entry_type="inproceedings", title="Attention is All you Need",
    authors=(), authors_truncated=False, year=2017, venue="NeurIPS", doi=None,
    arxiv_id="1706.03762", pmid=None, s2_id=None, url=None)


def attention_view(**fields: object) -> EntryView:
    """:data:`ATTENTION` with ``fields`` changed."""
    return replace(ATTENTION, **fields)  # type: ignore[arg-type]


def bib_views(path: Path, *, once_per_key: bool = False) -> list[EntryView]:
    """The entries of a .bib as the engine sees them, in file order, crossrefs resolved to
    the first entry of a key (``once_per_key``: a key defined twice gives one view)."""
    bib = parse_bib(read_text(path), str(path))
    first: dict[str, BibEntry] = {}
    for e in bib.entries:
        first.setdefault(e.key, e)
    return [entry_view(e, first) for e in (first.values() if once_per_key else bib.entries)]
