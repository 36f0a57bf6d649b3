"""``citelens check`` with every scholarly source unreachable (connection refused on
127.0.0.1): one summary line, and per-entry UNVERIFIED hints without the errno text."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.scholarly import ENV_VARS
from tests.harness import free_port

TEX = "\\documentclass{article}\n\\begin{document}\n\\cite{a,b,c}\n\\bibliography{refs}\n\\end{document}\n"
BIB = (
    "@article{a, title={Attention is all you need}, author={Vaswani, A.}, year=2017}\n"
    "@article{b, title={Deep residual learning}, author={He, K.}, year=2016,"
    " doi={10.1109/cvpr.2016.90}}\n"
    "@article{c, title={Adam: a method}, author={Kingma, D.}, year=2015, eprint={1412.6980},"
    " archivePrefix={arXiv}}\n"
)


def test_offline_run_prints_one_summary_line_and_no_errno(tmp_path: Path) -> None:
    (tmp_path / "paper.tex").write_text(TEX, encoding="utf-8")
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    dead = f"http://127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_")}
    env.update({var: dead for var in ENV_VARS.values()})
    env.update(CITELENS_CACHE_DIR=str(tmp_path / "cache"), CITELENS_RETRY_BACKOFF="0.01")
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", "paper.tex", "-q", "--verbose"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "Errno" not in proc.stdout, proc.stdout
    hints = [ln for ln in lines if "UNVERIFIED" in ln]
    assert len(hints) == 3, proc.stdout
    assert all(
        ln.startswith("refs.bib:")
        and "could not ask Semantic Scholar, Crossref" in ln
        and ln.endswith("(unreachable)")
        for ln in hints
    ), hints
    offline = [ln for ln in lines if ln.startswith("offline:")]
    assert offline == [
        "offline: 3 entries unverified; sources unreachable: Semantic Scholar, "
        "Crossref, doi.org, OpenAlex, arXiv"
    ], proc.stdout
    assert lines[-1].startswith("3 entries checked")
