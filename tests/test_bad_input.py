"""``citelens check`` on huge and odd files: no crash, a clear diagnostic or nothing.

Runs the real command line in-process (``citelens.cli.main``), without network
(``--no-verify``), on: a single 1 MB line, NUL bytes, invalid UTF-8, CRLF and
mixed line endings, a .tex that \\input's itself, 100k nested braces, binary junk
as .bib/.tex/.md, and the 50 MB ml_conferences.bib (with ``CITELENS_BIGBIB``).
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from citelens.cli import main as cli
from citelens.core.settings import Settings
from citelens.workspace.check import run_check
from citelens.workspace.pipeline import Pipeline
from tests.harness import ROOT, bigbib, needs_bigbib

KNOWN = {"BIB_SYNTAX", "UNDEFINED_CITATION", "DUPLICATE_KEY", "MISSING_BIBLIOGRAPHY",
         "MISSING_FIELD", "UNUSED_ENTRY", "EMPTY_CITATION", "BIB_NOT_FOUND", "MISSING_BIB_FILE"}
GOOD_BIB = "@article{real2020, title = {A Real Title}, author = {Doe, Jane}, year = 2020}\n"


def check(capsys: pytest.CaptureFixture[str], *paths: Path) -> dict:
    code = cli.main(["check", *map(str, paths), "--no-verify", "--format", "json", "-q"])
    out = capsys.readouterr().out
    assert code in (0, 1), out[-2000:]
    return json.loads(out)


def codes(report: dict, suffix: str = "") -> list[str]:
    return sorted(d["code"] for d in report["diagnostics"] if d["file"].endswith(suffix))


def write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def tex(body: str) -> str:
    return f"\\documentclass{{article}}\n\\begin{{document}}\n{body}\n\\bibliography{{refs}}\n" \
           "\\end{document}\n"


def test_one_megabyte_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "refs.bib", GOOD_BIB)
    line = ("word " * 200_000) + "\\cite{real2020} and \\cite{ghost}"
    write(tmp_path / "main.tex", tex(line))
    report = check(capsys, tmp_path)
    undefined = [d for d in report["diagnostics"] if d["code"] == "UNDEFINED_CITATION"]
    assert len(undefined) == 1 and undefined[0]["range"]["start"]["line"] == 2
    assert undefined[0]["range"]["start"]["character"] == len(line) - len("ghost}")


def test_nul_bytes_in_tex_and_bib(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "refs.bib", GOOD_BIB.replace("Real", "Re\x00al") + "\x00\x00@misc{nul,"
          " title={N\x00UL}}\n")
    write(tmp_path / "main.tex", tex("A\x00B \\cite{real2020}\x00 \\cite{nul} \\cite{ghost\x00}"))
    report = check(capsys, tmp_path)
    assert set(codes(report)) <= KNOWN
    assert "UNDEFINED_CITATION" in codes(report, "main.tex")
    assert {e["key"] for e in report["entries"]} >= {"real2020", "nul"}


def test_invalid_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "refs.bib", GOOD_BIB.encode() + b"@misc{bad, title={\xff\xfe\x80 caf\xe9}}\n")
    write(tmp_path / "main.tex", tex("Caf\xe9 \\cite{real2020,bad} \\cite{ghost}").encode("latin-1"))
    report = check(capsys, tmp_path)
    assert codes(report, "main.tex") == ["UNDEFINED_CITATION"]
    assert {e["key"] for e in report["entries"]} == {"real2020", "bad"}


@pytest.mark.parametrize("newline", ["\r\n", "\r", "mixed"])
def test_line_endings(tmp_path: Path, capsys: pytest.CaptureFixture[str], newline: str) -> None:
    lines = ["\\documentclass{article}", "\\begin{document}", "Text \\cite{real2020}.",
             "More \\cite{ghost}.", "\\bibliography{refs}", "\\end{document}", ""]
    if newline == "mixed":
        seps = ["\r\n", "\n", "\r", "\r\n", "\n", "\r"]
        text = "".join(x + s for x, s in zip(lines, seps, strict=False))
    else:
        text = newline.join(lines)
    write(tmp_path / "refs.bib", GOOD_BIB.replace("\n", "\r\n"))
    write(tmp_path / "main.tex", text)
    report = check(capsys, tmp_path)
    d = [x for x in report["diagnostics"] if x["code"] == "UNDEFINED_CITATION"]
    assert len(d) == 1
    assert d[0]["range"]["start"] == {"line": 3, "character": 11}  # LSP: \r, \n, \r\n all break


def test_self_and_mutual_input_cycles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "refs.bib", GOOD_BIB)
    write(tmp_path / "main.tex", tex("\\input{main}\\include{main}\\input{a} \\cite{ghost}"))
    write(tmp_path / "a.tex", "\\input{b}\\cite{real2020}\n")
    write(tmp_path / "b.tex", "\\input{a.tex}\\input{./main}\\cite{ghostb}\n")
    report = check(capsys, tmp_path)
    keys = {d["message"].split("'")[1] for d in report["diagnostics"]
            if d["code"] == "UNDEFINED_CITATION"}
    assert keys == {"ghost", "ghostb"}


def test_100k_nested_braces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = "{" * 100_000 + "x" + "}" * 100_000
    write(tmp_path / "refs.bib", GOOD_BIB + f"@misc{{deep, title = {deep}}}\n"
          + "@misc{open, title = " + "{" * 100_000 + "\n" + GOOD_BIB.replace("real2020", "after"))
    write(tmp_path / "main.tex", tex(deep + " \\cite{real2020} " + "{" * 100_000 + "\\cite{ghost}"))
    write(tmp_path / "notes.md", "---\nbibliography: refs.bib\n---\n" + "[" * 100_000
          + "@real2020" + "]" * 100_000 + "\n")
    report = check(capsys, tmp_path)
    assert set(codes(report)) <= KNOWN
    assert "BIB_SYNTAX" in codes(report, "refs.bib")  # the unclosed one is reported
    assert "UNDEFINED_CITATION" in codes(report, "main.tex")


@pytest.mark.parametrize("suffix", [".bib", ".tex", ".md"])
def test_binary_junk(tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str) -> None:
    rnd = random.Random(f"junk{suffix}")
    junk = bytes(rnd.getrandbits(8) for _ in range(300_000))
    junk += b"@article{" + bytes(rnd.getrandbits(8) for _ in range(1000))  # a start, no end
    write(tmp_path / f"junk{suffix}", junk)
    report = check(capsys, tmp_path / f"junk{suffix}")
    assert set(codes(report)) <= KNOWN, codes(report)
    if suffix == ".bib":
        assert set(codes(report)) <= {"BIB_SYNTAX", "DUPLICATE_KEY"}


@needs_bigbib
async def test_fifty_megabyte_bib(tmp_path: Path) -> None:
    # a generous bound; the time it takes: benchmarks/bench_pathological.py
    big = str(bigbib("ml_conferences.bib"))
    result = await asyncio.wait_for(run_check([big], Pipeline(Settings()), verify=False), 60)
    assert len(result.entries) > 37_000
    # DUPLICATE_ENTRY: entries sharing a DOI (a local comparison, made without verification too)
    assert {f.code for f in result.findings} <= {"DUPLICATE_KEY", "BIB_SYNTAX", "DUPLICATE_ENTRY"}


def test_check_never_reprs_its_whole_result(tmp_path: Path) -> None:
    # A real process: asyncio.run installs its SIGINT handler only in the main thread with
    # the default handler, which pytest's process may not have.
    write(tmp_path / "refs.bib", GOOD_BIB)
    write(tmp_path / "main.tex", tex("\\cite{real2020}"))
    script = (
        "import sys\n"
        "from citelens.cli import main as cli\n"
        "from citelens.workspace.check import CheckResult\n"
        "def no_repr(self):\n"
        "    print('repr() of the whole CheckResult', file=sys.stderr); raise SystemExit(17)\n"
        "CheckResult.__repr__ = no_repr\n"
        "sys.exit(cli.main(['check', sys.argv[1], '--no-verify', '--format', 'json', '-q']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert json.loads(proc.stdout)["entries"]
