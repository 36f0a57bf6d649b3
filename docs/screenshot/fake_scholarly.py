"""Seed the screenshot's paper and serve the fake scholarly APIs for it (used by make_screenshot.sh).

    python docs/screenshot/fake_scholarly.py WORKDIR [cite]

writes WORKDIR/paper/ (the corpus' Ethereum yellow paper with an undefined citation and a wrong
DOI, as in tests/test_neovim_e2e.py) and WORKDIR/env.json (the CITELENS_*_URL variables), then
serves until it is terminated. With ``cite`` the paper is a short LaTeX note on periodograms
whose last line is an unfinished ``\\cite{`` (the "cite while writing" screenshot).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.fakes.scholarly import running  # noqa: E402
from tests.nvim.paper import DWORK_NAOR_1992, seed  # noqa: E402

CITE_TEX = r"""\documentclass{article}
\begin{document}
\section{Period search}
Unevenly sampled light curves are analysed with the Lomb--Scargle
periodogram~\cite{Lomb1976,Scargle1982}. For radial velocities with an offset,
we use the floating-mean formulation \cite{
\bibliography{refs}
\end{document}
"""
CITE_BIB = """@Article{Lomb1976,
  author  = {Lomb, N. R.},
  title   = {Least-squares frequency analysis of unequally spaced data},
  journal = {Astrophysics and Space Science},
  year    = {1976},
  doi     = {10.1007/bf00648343},
}

@Article{Scargle1982,
  author  = {Scargle, J. D.},
  title   = {Studies in astronomical time series analysis. {II}},
  journal = {The Astrophysical Journal},
  year    = {1982},
  doi     = {10.1086/160554},
}
"""


def seed_cite(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "refs.bib").write_text(CITE_BIB, encoding="utf-8")
    tex = folder / "Paper.tex"
    tex.write_text(CITE_TEX, encoding="utf-8")
    return tex


def main() -> None:
    work = Path(sys.argv[1])
    if sys.argv[2:] == ["cite"]:
        tex = seed_cite(work / "paper")
    else:
        tex = seed(work / "paper").tex
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with running() as fake:
        fake.add_paper(DWORK_NAOR_1992)
        env = {**fake.env(), "CITELENS_TEST_PAPER": str(tex)}
        tmp = work / "env.json.tmp"
        tmp.write_text(json.dumps(env), encoding="utf-8")
        tmp.replace(work / "env.json")
        stop.wait()


if __name__ == "__main__":
    main()
