"""Seed the screenshot's paper and serve the fake scholarly APIs for it (used by make_screenshot.sh).

    python docs/screenshot/fake_scholarly.py WORKDIR

writes WORKDIR/paper/ (the corpus' Ethereum yellow paper with an undefined citation and a wrong
DOI, as in tests/test_neovim_e2e.py) and WORKDIR/env.json (the CITELENS_*_URL variables), then
serves until it is terminated.
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


def main() -> None:
    work = Path(sys.argv[1])
    paper = seed(work / "paper")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with running() as fake:
        fake.add_paper(DWORK_NAOR_1992)
        env = {**fake.env(), "CITELENS_TEST_PAPER": str(paper.tex)}
        tmp = work / "env.json.tmp"
        tmp.write_text(json.dumps(env), encoding="utf-8")
        tmp.replace(work / "env.json")
        stop.wait()


if __name__ == "__main__":
    main()
