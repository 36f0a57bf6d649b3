"""Hostile or unlucky input through the real ``citelens check`` (issue 22): citation
commands that were not read, special files, terminal escapes, a quadratic parse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scholarly import SOURCES, ScholarlyFake
from tests.test_never_corrupt import SMITH_PAPER

BIB = "@article{beta, title = {Beta}, author = {Bee, Anna}, year = {2020}}\n"
SMITH = ("@article{smith2020,\n  title = {Cats and their whiskers: a field study},\n"
         "  author = {Smith, John and Doe, Jane},\n  journal = {Journal of Cats},\n"
         "  year = {2020},\n  doi = {10.1234/cats.2020.1}\n}\n")


def check(*args: str, cwd: Path, timeout: float = 60,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "citelens", "check", *args],
        cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
        timeout=timeout, check=False, stdin=subprocess.DEVNULL,
    )


def check_json(*args: str, cwd: Path, timeout: float = 60) -> dict[str, Any]:
    proc = check(*args, "--no-verify", "-q", "--format", "json", cwd=cwd, timeout=timeout)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def _undefined(report: dict[str, Any]) -> list[str]:
    return sorted(d["key"] for d in report["diagnostics"]
                  if d["code"] == "UNDEFINED_CITATION")


def test_long_key_lists_and_apacite_volcite_citeurl_bibentry_are_read(tmp_path: Path) -> None:
    """A ``\\nocite`` of 1,000 keys (over 4,000 characters), ``\\cite<e.g.,>{…}`` (apacite),
    ``\\volcite[see]{3}[12]{…}``, ``\\citeurl{…}`` and ``\\bibentry{…}``: each key is read,
    so the undefined ones are reported (and a rename reaches them). Before, none was."""
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    many = ",".join(["beta"] * 999 + ["nocite_missing"])
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n"
        f"\\nocite{{{many}}}\n"
        "See \\cite<e.g.,>[p.~3]{apa_missing}, \\volcite[see]{3}[12]{vol_missing},\n"
        "\\citeurl{url_missing} and \\bibentry{entry_missing}; \\cite{beta}.\n"
        "\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    report = check_json("main.tex", cwd=tmp_path)
    assert _undefined(report) == ["apa_missing", "entry_missing", "nocite_missing",
                                  "url_missing", "vol_missing"], _undefined(report)


def test_a_megabyte_line_of_stray_at_signs_parses_in_linear_time(tmp_path: Path) -> None:
    """1.2 MB lines of stray '@', of '@comment{' and of '%@a{k,}' in a .bib: the check
    ends (a hang guard, not a timing: figures in benchmarks/bench_hostile_parse.py) with the
    real entry kept and BIB_SYNTAX on the line-start '@'. Before, the parse was quadratic:
    21 s for the '@' line, hours for the '@comment{' one."""
    size = 1_200_000
    lines = ["@" * size, "@comment{" * (size // 9), "%@a{k,}" * (size // 7)]
    (tmp_path / "refs.bib").write_text(BIB + "\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\cite{beta}\n"
        "\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    report = check_json("main.tex", cwd=tmp_path, timeout=60)
    assert _undefined(report) == []
    syntax = [d for d in report["diagnostics"] if d["code"] == "BIB_SYNTAX"]
    assert [d["range"]["start"]["line"] for d in syntax] == [1], syntax


def _special_files(folder: Path) -> None:
    """A paper whose folder also holds .tex symlinks to /dev/zero and /dev/stdin and a FIFO
    (git carries symlinks; a FIFO can be left by a tool)."""
    (folder / "refs.bib").write_text(BIB, encoding="utf-8")
    (folder / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n\\cite{beta} \\cite{nokey}\n"
        "\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    (folder / "zero.tex").symlink_to("/dev/zero")
    (folder / "stdin.tex").symlink_to("/dev/stdin")
    os.mkfifo(folder / "fifo.tex")


def test_special_files_are_skipped_with_a_reason(tmp_path: Path) -> None:
    """``citelens check`` on a folder with .tex links to /dev/zero and /dev/stdin and a FIFO:
    the paper is checked, each special file is skipped and the log says why. Before, the
    FIFO hung the check for good and /dev/zero ended in a MemoryError traceback."""
    _special_files(tmp_path)
    proc = check(".", "--no-verify", "--format", "json", cwd=tmp_path, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert _undefined(json.loads(proc.stdout)) == ["nokey"]
    for name, why in (("zero.tex", "a device"), ("fifo.tex", "a FIFO")):
        assert f"skipped {tmp_path / name}: not a regular file ({why})" in proc.stderr, proc.stderr
    # named on the command line: refused with the reason, at once
    proc = check("fifo.tex", "--no-verify", cwd=tmp_path, timeout=30)
    assert proc.returncode == 2 and "not a regular file (a FIFO)" in proc.stderr, proc.stderr


def test_a_cleared_file_that_is_a_device_or_a_fifo_is_refused_with_a_reason(tmp_path: Path) -> None:
    """``--cleared /dev/zero`` and ``--cleared FIFO``: refused at once with one line naming
    the file and why (exit 2), as a document named on the command line is. Before,
    /dev/zero ended in a MemoryError traceback and the FIFO hung the run (issue 41 #10)."""
    paper = tmp_path / "venue" / "p1"
    paper.mkdir(parents=True)
    (paper / "refs.bib").write_text(BIB, encoding="utf-8")
    (paper / "main.tex").write_text("\\cite{beta}\n\\bibliography{refs}\n", encoding="utf-8")
    os.mkfifo(tmp_path / "cleared.fifo")
    for named, why in (("/dev/zero", "a device"), (str(tmp_path / "cleared.fifo"), "a FIFO")):
        proc = check("venue", "--venue", "out", "--offline", "--cleared", named, cwd=tmp_path,
                     timeout=60, env={"CITELENS_CACHE_DIR": str(tmp_path / "cache")})
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr
        assert f"--cleared {named}: not read: not a regular file ({why})" in proc.stderr, proc.stderr


def test_an_existing_cache_folder_keeps_its_mode(tmp_path: Path) -> None:
    """``cacheDir`` set to an existing folder (like /tmp, mode 1777): CiteLens uses it and
    leaves its mode alone; a folder it creates is user-only (0700). Before, the existing
    folder's mode was changed to 0700."""
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    fresh = tmp_path / "new" / "cache"
    for cache in (shared, fresh):
        proc = check("refs.bib", "--offline", "-q", cwd=tmp_path,
                     env={"CITELENS_CACHE_DIR": str(cache)})
        assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    assert (shared.stat().st_mode & 0o7777) == 0o1777, oct(shared.stat().st_mode)
    assert (fresh.stat().st_mode & 0o777) == 0o700, oct(fresh.stat().st_mode)
    assert any(shared.iterdir())  # the cache was used


@pytest.mark.parametrize("mode", ["bomb", "huge"])
def test_an_oversized_api_answer_is_a_failed_lookup(
        tmp_path: Path, scholarly_server: ScholarlyFake, mode: str) -> None:
    """Every source answers the true answer padded to 64 MB: as a gzip bomb (64 kB on the
    wire) or as it is. Each is a failed lookup: the entry is UNVERIFIED ("answer larger
    than …"), never NOT_FOUND and never read whole. Before, the bomb was decompressed and
    parsed (a 1 MB gzip cost 2.2 GB of memory) and the entry VERIFIED from it."""
    scholarly_server.add_paper(SMITH_PAPER)
    for source in SOURCES:
        scholarly_server.set_mode(source, mode)
    (tmp_path / "refs.bib").write_text(SMITH, encoding="utf-8")
    env = scholarly_server.env(cache=tmp_path / "cache")
    proc = check("refs.bib", "--format", "json", "-q", cwd=tmp_path, env=env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    report = json.loads(proc.stdout)
    (entry,) = report["entries"]
    assert entry["status"] == "UNVERIFIED", entry
    assert "answer larger than" in json.dumps(entry), entry


def test_text_output_escapes_terminal_control_characters(tmp_path: Path) -> None:
    """A cited key holding an OSC sequence (set the window title, ended by BEL), a colour
    escape and a right-to-left override, in a file whose name holds ESC: the text report
    shows them escaped (``\\x1b``), so nothing reaches the terminal or the CI log as a
    control sequence. Before, they were printed raw."""
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    evil = "\x1b]0;pwned\x07x\x1b[31mred\u202eevil"
    name = "ch\x1b[2Japter.tex"
    (tmp_path / name).write_text(
        f"\\documentclass{{article}}\n\\begin{{document}}\n\\cite{{{evil}}}\n"
        "\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    proc = check(name, "--no-verify", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in proc.stdout and raw not in proc.stderr, proc.stdout
    assert "\\x1b]0;pwned\\x07x\\x1b[31mred\\u202eevil" in proc.stdout, proc.stdout
    assert "ch\\x1b[2Japter.tex:3:" in proc.stdout, proc.stdout


_CONTROL_TITLE = "Dogs\x1b]0;pwned\x07 and their \x9b2J tails: a \u202efabricated study"
_CONTROL_KEY = "fab\x9b\u202e\x1bricated"
_RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")


def test_every_report_format_escapes_control_characters(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """A fabricated entry whose title holds ESC, BEL, the one-character CSI U+009B and a
    right-to-left override, and whose key holds ESC, U+009B and U+202E: no report has one of them raw in its
    bytes (text, JSON, SARIF, a venue's summary.html, paper page, summary.jsonl, paper
    report); JSON and SARIF still give the title back exactly when parsed, the pages show
    it escaped. Before, summary.html and the paper pages held them raw and JSON kept U+009B
    and U+202E raw (issue 41 #9)."""
    bib = FABRICATED.replace("Dogs and their tails: a fabricated study", _CONTROL_TITLE).replace(
        "{fabricated,", "{" + _CONTROL_KEY + ",").replace("  doi = {10.9999/fabricated.1}\n", "")
    tex = "\\cite{" + _CONTROL_KEY + "}\n\\bibliography{refs}\n"
    paper = tmp_path / "venue" / "p1"
    paper.mkdir(parents=True)
    for folder in (tmp_path, paper):
        (folder / "refs.bib").write_text(bib, encoding="utf-8")
        (folder / "main.tex").write_text(tex, encoding="utf-8")
    env = scholarly_server.env(tmp_path / "cache")
    for fmt in ("text", "json", "sarif"):
        proc = check("main.tex", "--format", fmt, cwd=tmp_path, env=env)
        assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
        for raw in _RAW_CONTROLS:
            assert raw not in proc.stdout and raw not in proc.stderr, (fmt, raw, proc.stdout)
        if fmt == "json":
            assert [e["key"] for e in json.loads(proc.stdout)["entries"]] == [_CONTROL_KEY]
        if fmt == "sarif":
            assert json.loads(proc.stdout)["runs"][0]["results"], proc.stdout
    proc = check("venue", "--venue", "out", cwd=tmp_path, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    out = tmp_path / "out"
    written = [out / "summary.html", out / "summary.jsonl", out / "run.json",
               *sorted((out / "papers").iterdir())]
    assert any(p.suffix == ".html" for p in written[3:]), written
    for path in written:
        data = path.read_text(encoding="utf-8")
        for raw in _RAW_CONTROLS:
            assert raw not in data, (path.name, raw)
    page = next(p for p in written[3:] if p.suffix == ".html").read_text(encoding="utf-8")
    assert "Dogs\\x1b]0;pwned\\x07 and their \\x9b2J tails" in page, page
    line = json.loads((out / "summary.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert [f["title"] for f in line["findings"]] == [_CONTROL_TITLE], line


FABRICATED = ("@article{fabricated,\n  title = {Dogs and their tails: a fabricated study},\n"
              "  author = {Nobody, Ann},\n  journal = {Journal of Dogs},\n  year = {2021},\n"
              "  doi = {10.9999/fabricated.1}\n}\n")


def _statuses(proc: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert "Traceback" not in proc.stderr, proc.stderr
    return {e["key"]: e["status"] for e in json.loads(proc.stdout)["entries"]}


def _sha256_binding(full_key: str, row: dict[str, object]) -> str:
    """The binding rows had before issue 32: a plain SHA-256 anyone can recompute."""
    import hashlib

    content = {k: v for k, v in row.items() if k != "bind"}
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{full_key}\n{text}".encode()).hexdigest()


@pytest.mark.parametrize("forgery", ["copied", "future", "rebound"])
def test_a_forged_cache_row_cannot_verify_a_fabricated_entry(
        tmp_path: Path, scholarly_server: ScholarlyFake, forgery: str) -> None:
    """A well-formed row written into the cache for the fabricated entry's DOI lookup: the
    true answer of another lookup copied there with the fabricated title, authors and DOI
    ("copied"), the same with its binding recomputed as SHA-256 of key and content, which
    needs no secret ("rebound"), or the entry's own NOT_FOUND row stored 'in the future'
    ("future"). Each is a miss, logged once: offline the entry is not VERIFIED, online it
    is NOT_FOUND again. Before, the copied row made it VERIFIED, online and offline, a
    future row never expired, and (issue 32) the rebound row still made it VERIFIED: rows
    are bound by an HMAC under the cache's secret now (``secret.key``, mode 0600)."""
    import sqlite3

    scholarly_server.add_paper(SMITH_PAPER)
    (tmp_path / "refs.bib").write_text(SMITH + FABRICATED, encoding="utf-8")
    cache = tmp_path / "cache"
    env = scholarly_server.env(cache=cache)
    args = ("refs.bib", "--format", "json", "-q")
    first = _statuses(check(*args, cwd=tmp_path, env=env))
    assert first["fabricated"] == "NOT_FOUND" and first["smith2020"] in ("VERIFIED", "PARTIAL")
    db = sqlite3.connect(cache / "cache.db")
    try:
        rows = dict(db.execute("SELECT key, value FROM Cache").fetchall())
        real = next(k for k in rows if k.endswith(":s2:id:doi:10.1234/cats.2020.1"))
        fake_key = next(k for k in rows if k.endswith(":s2:id:doi:10.9999/fabricated.1"))
        if forgery in ("copied", "rebound"):
            row = json.loads(rows[real])
            for r in row["records"]:
                r.update(title="Dogs and their tails: a fabricated study",
                         authors=["Ann Nobody"], year=2021, doi="10.9999/fabricated.1",
                         venue="Journal of Dogs")
            if forgery == "rebound":
                row["bind"] = _sha256_binding(fake_key, row)
        else:
            row = json.loads(rows[fake_key])
            row["stored_at"] = row["stored_at"] + 10 * 365 * 86400
        db.execute("UPDATE Cache SET value = ?, expire_time = NULL WHERE key = ?",
                   (json.dumps(row), fake_key))
        db.commit()
    finally:
        db.close()
    assert (cache / "secret.key").stat().st_mode & 0o777 == 0o600
    proc = check(*args[:-1], "--offline", cwd=tmp_path, env=env)
    assert proc.stderr.count("failed its check") == 1, proc.stderr
    offline = _statuses(proc)
    assert offline["smith2020"] == first["smith2020"]
    assert offline["fabricated"] not in ("VERIFIED", "PARTIAL"), offline
    scholarly_server.clear_log()
    online = _statuses(check(*args, cwd=tmp_path, env=env))
    assert online == first, online
    asked = json.dumps(scholarly_server.requests("s2"))
    assert "10.9999/fabricated.1" in asked  # the forged row was a miss: asked again


DIFFERENT_WORKS = r"""
@article{cats, title = {Cats and their whiskers: a field study}, author = {Smith, John},
  journal = {Journal of Cats}, year = {2020}, doi = {10.1234/cats.2020.1}}
@article{dogs_wrong_doi, title = {Migration of arctic terns over the Atlantic},
  author = {Larsen, Kari}, journal = {Ornithology}, year = {2015}, doi = {10.1234/cats.2020.1}}
@article{cats_erratum, title = {Erratum: Cats and their whiskers: a field study},
  author = {Smith, John}, journal = {Journal of Cats}, year = {2020}}
@article{cats_retraction, title = {Retraction notice: Cats and their whiskers: a field study},
  author = {Smith, John}, journal = {Journal of Cats}, year = {2020}}
@misc{cats_supp, title = {Supplementary material for: Cats and their whiskers: a field study},
  author = {Smith, John}, year = {2020}}
@article{gnn, title = {Graph neural networks}, author = {Zhou, Jie}, year = {2020}}
@article{gnn_survey, title = {Graph neural networks: A survey}, author = {Zhou, Jie}, year = {2020}}
@article{intro_a, title = {Introduction}, author = {Adams, Anne}, journal = {Special Issue A}, year = {2019}}
@article{intro_b, title = {Introduction}, author = {Brown, Bob}, journal = {Special Issue B}, year = {2019}}
@article{editorial19, title = {Editorial}, author = {Clark, Carl}, journal = {Nature Physics}, year = {2019}}
@article{editorial20, title = {Editorial}, author = {Clark, Carl}, journal = {Nature Physics}, year = {2020}}
@article{ising2d, title = {Critical exponents of the 2D Ising model on random graphs},
  author = {Novak, Petr}, journal = {Phys. Rev. E}, year = {2018}}
@article{ising3d, title = {Critical exponents of the 3D Ising model on random graphs},
  author = {Novak, Petr}, journal = {Phys. Rev. E}, year = {2018}}
@article{square, title = {Percolation thresholds of the square lattice with long bonds},
  author = {Ortiz, Luis}, journal = {Phys. Rev. E}, year = {2017}}
@article{triangular, title = {Percolation thresholds of the triangular lattice with long bonds},
  author = {Ortiz, Luis}, journal = {Phys. Rev. E}, year = {2017}}
@article{same_a, title = {Learning to rank with partially labelled lists},
  author = {Park, Jin}, year = {2016}}
@article{same_b, title = {Learning to Rank with Partially Labeled Lists}, author = {Park, Jin}, year = {2016}}
"""


def test_different_works_are_not_called_duplicates(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """A DOI pasted into the wrong entry (other title, author and year), an erratum, a
    retraction notice and a supplement of a paper, "X" and "X: A survey", "Introduction"
    by two authors, "Editorial" 2019 and 2020, the 2D and the 3D Ising model, the square
    and the triangular lattice: none is DUPLICATE_ENTRY. The control (one paper, two
    spellings) still is. Before, every one of them was paired."""
    (tmp_path / "refs.bib").write_text(DIFFERENT_WORKS, encoding="utf-8")
    env = scholarly_server.env(cache=tmp_path / "cache")
    proc = check("refs.bib", "--format", "json", "-q", cwd=tmp_path, env=env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    paired = sorted({d["key"] for d in json.loads(proc.stdout)["diagnostics"]
                     if d["code"] == "DUPLICATE_ENTRY"})
    assert paired and set(paired) <= {"same_a", "same_b"}, paired  # (the report names a pair once)
