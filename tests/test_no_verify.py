"""``--no-verify`` means no request, in every mode of ``citelens check`` (issue 41 #4):
before, ``--venue --no-verify`` verified online (13 requests for one reference), sending
confidential submission titles to third-party APIs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.scholarly import ScholarlyFake

TEX = "\\documentclass{article}\n\\begin{document}\n\\cite{conf}\n\\bibliography{refs}\n\\end{document}\n"
BIB = ("@article{conf, title = {A confidential title nobody has published yet},\n"
       "  author = {Doe, Jane}, journal = {Journal of Secrets}, year = {2026},\n"
       "  doi = {10.5555/secret.2026.1}}\n")


def _run(args: list[str], cwd: Path, fake: ScholarlyFake) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "citelens", "check", *args],
        cwd=cwd, env={**os.environ, **fake.env(cwd / "cache")}, capture_output=True, text=True,
        timeout=120, check=False, stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    "mode",
    [
        ["paper/main.tex"],
        ["venue", "--venue", "out"],
        ["paper/main.tex", "--fix", "--unsafe-fixes"],
        ["paper/main.tex", "--diff"],
    ],
    ids=["check", "venue", "fix", "diff"],
)
def test_no_verify_makes_no_request_in_any_mode(
        tmp_path: Path, scholarly_server: ScholarlyFake, mode: list[str]) -> None:
    for folder in (tmp_path / "paper", tmp_path / "venue" / "p1"):
        folder.mkdir(parents=True)
        (folder / "main.tex").write_text(TEX, encoding="utf-8")
        (folder / "refs.bib").write_text(BIB, encoding="utf-8")
    scholarly_server.clear_log()
    proc = _run([*mode, "--no-verify"], tmp_path, scholarly_server)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert scholarly_server.count() == 0, scholarly_server.counts()
    if mode[0] == "venue":
        assert (tmp_path / "out" / "summary.html").exists()
