"""A cache directory someone else could write cannot run code, delete files or stop verification.

``docs/ci-integration.md`` restores the cache directory from a CI cache, so its
content is not trusted. These tests forge rows in the SQLite database the way an
attacker (or a crash) would and run the real ``citelens check`` (a subprocess,
against the fake scholarly APIs) on the forged cache.
"""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from citelens.claims import cache as claim_cache
from citelens.claims.result import ClaimResult, Status, Verdict
from citelens.core import datacache
from citelens.core.settings import Settings
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.verify.cache import SCHEMA, VerificationCache
from tests.fakes.scholarly import ScholarlyFake
from tests.harness import ROOT

MODE_RAW, MODE_BINARY, MODE_TEXT, MODE_PICKLE = 1, 2, 3, 4

BIB = r"""@article{scipy2020,
  title = {{SciPy} 1.0: Fundamental Algorithms for Scientific Computing in {Python}},
  author = {Virtanen, Pauli and others}, journal = {Nature Methods}, year = {2020},
  doi = {10.1038/s41592-019-0686-2}}
@article{hunter2007, title = {Matplotlib: A {2D} Graphics Environment}, author = {Hunter, J. D.},
  journal = {Computing in Science \& Engineering}, year = {2007}}
@article{made2021, title = {Hyperbolic Entanglement of Quantum Llamas in Gravitational Pastures},
  author = {Halvorsen, Ingrid}, journal = {Nature}, year = {2021}}
"""
TEX = (
    "\\documentclass{article}\n\\begin{document}\n"
    "\\cite{scipy2020} \\cite{hunter2007} \\cite{made2021}\n"
    "\\bibliography{refs}\n\\end{document}\n"
)
EXPECTED = {"scipy2020": "VERIFIED", "hunter2007": "VERIFIED", "made2021": "NOT_FOUND"}


class _Touch:
    """Unpickling this creates ``path``: the stand-in for arbitrary code."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def _payload(marker: Path) -> bytes:
    return pickle.dumps(_Touch(marker))


def _check(paper: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, str], str]:
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", str(paper / "main.tex"), "--format", "json", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    return proc.returncode, {e["key"]: e["status"] for e in report["entries"]}, proc.stderr


def _setup(tmp_path: Path, fake: ScholarlyFake) -> tuple[Path, Path, dict[str, str]]:
    paper = tmp_path / "paper"
    paper.mkdir()
    (paper / "refs.bib").write_text(BIB, encoding="utf-8")
    (paper / "main.tex").write_text(TEX, encoding="utf-8")
    cache = tmp_path / "cache"
    env = {
        **os.environ,
        **fake.env(),
        "CITELENS_CACHE_DIR": str(cache),
        "CITELENS_REQUEST_TIMEOUT": "3",
        "CITELENS_RETRY_BACKOFF": "0.01",
        "CITELENS_S2_RPS": "1000",
    }
    return paper, cache, env


def _rows(cache: Path) -> list[tuple[str, int, str | None, Any]]:
    with sqlite3.connect(cache / "cache.db") as db:
        return db.execute("SELECT key, mode, filename, value FROM Cache").fetchall()


def _forge(cache: Path, sql: str, args: tuple[Any, ...] = ()) -> None:
    db = sqlite3.connect(cache / "cache.db")
    try:
        db.execute(sql, args)
        db.commit()
    finally:
        db.close()


def test_a_poisoned_cache_cannot_run_code_or_delete_files(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    paper, cache, env = _setup(tmp_path, scholarly_server)
    status, verdicts, _ = _check(paper, env)
    assert verdicts == EXPECTED
    rows = _rows(cache)
    assert rows and all(mode == MODE_RAW and name is None for _k, mode, name, _v in rows)
    assert all(json.loads(v)["outcome"] in ("found", "not_found") for *_x, v in rows)

    marker = tmp_path / "code-ran"
    # every row becomes a pickle whose loading would run code ...
    _forge(cache, "UPDATE Cache SET mode = ?, value = ?, filename = NULL", (MODE_PICKLE, _payload(marker)))
    # ... and one row points at a file of the writer's, outside the cache, as its side file
    victim = paper / "victim.tex"
    victim.write_bytes(_payload(marker))
    _forge(
        cache,
        "UPDATE Cache SET mode = ?, value = NULL, filename = ? WHERE rowid = (SELECT MIN(rowid) FROM Cache)",
        (MODE_PICKLE, str(victim)),
    )

    again, verdicts, stderr = _check(paper, env)
    assert not marker.exists(), "a cached pickle was loaded"
    assert victim.exists(), "a forged cache row deleted a file outside the cache"
    assert verdicts == EXPECTED and again == status
    assert "Traceback" not in stderr and "internal error" not in stderr
    # every forged row was replaced by the fresh answer, as JSON text
    rows = _rows(cache)
    assert all(mode == MODE_RAW and name is None for _k, mode, name, _v in rows)
    _, offline, _ = _check(paper, env, "--offline")
    assert offline == EXPECTED
    assert not marker.exists()


def test_a_corrupted_row_is_a_miss_verified_again_and_overwritten(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    paper, cache, env = _setup(tmp_path, scholarly_server)
    assert _check(paper, env)[1] == EXPECTED
    keys = sorted(k for k, *_rest in _rows(cache))
    doi_key = f"{SCHEMA}:s2:id:doi:10.1038/s41592-019-0686-2"
    assert doi_key in keys
    bad_values: list[Any] = [
        b"\x80\x04\x95garbage",  # a broken pickle, stored as raw bytes
        "{not json",
        json.dumps({"source": "s2", "method": "s2_batch", "outcome": "failed"}),  # never stored
        json.dumps(
            {
                "source": "s2",
                "method": "s2_batch",
                "outcome": "found",
                "records": [{"source": "s2", "title": 5}],
            }
        ),  # wrong field type
        "[" * 100_000,  # nesting that breaks a recursive parser
    ]
    for value in bad_values:
        _forge(cache, "UPDATE Cache SET mode = ?, value = ? WHERE key = ?", (MODE_RAW, value, doi_key))
        scholarly_server.clear_log()
        _, verdicts, stderr = _check(paper, env)
        assert verdicts == EXPECTED, (value[:40], stderr)
        assert "internal error" not in stderr
        # the corrupted lookup was made again, the others came from the cache
        asked = scholarly_server.requests("s2")
        assert asked, "the corrupted answer was not fetched again"
        rows = {k: (m, v) for k, m, _n, v in _rows(cache)}
        mode, stored = rows[doi_key]
        assert mode == MODE_RAW and json.loads(stored)["outcome"] == "found"


def test_a_forged_row_that_claims_to_be_a_pickle_is_never_unpickled(tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    c = VerificationCache(tmp_path / "c")
    rec = Lookup("s2", "s2_batch", Outcome.FOUND, [PaperRecord("s2", "A paper", ["A B"], 2020)])
    c.put("k", rec)
    c.close()
    for mode in (MODE_PICKLE, MODE_BINARY, MODE_TEXT):
        _forge(tmp_path / "c", "UPDATE Cache SET mode = ?, value = ?", (mode, _payload(marker)))
        c = VerificationCache(tmp_path / "c")
        assert c.get("k") is None
        c.put("k", rec)  # overwritten with data
        got = c.get("k")
        assert got is not None and got.records[0].title == "A paper"
        c.close()
    assert not marker.exists()


def test_the_claim_cache_holds_data_only_and_a_bad_row_is_a_miss(tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    settings = Settings(cache_dir=str(tmp_path / "c"))
    cache = claim_cache.open_cache(settings)
    assert cache is not None
    result = ClaimResult("a claim", "doi:10.1/x", Status.VERDICT, Verdict.SUPPORTS, "because")
    claim_cache.store(cache, "k", result)
    loaded = claim_cache.load(cache, "k")
    assert loaded == result
    cache.close()
    db = tmp_path / "c" / "claims"
    bad: list[tuple[int, Any]] = [
        (MODE_PICKLE, _payload(marker)),
        (MODE_RAW, "{truncated"),
        (MODE_RAW, json.dumps({**result.to_json(), "verdict": "MAYBE"})),
        (MODE_RAW, json.dumps({**result.to_json(), "passages": "not a list"})),
    ]
    for mode, value in bad:
        _forge(db, "UPDATE Cache SET mode = ?, value = ?", (mode, value))
        cache = claim_cache.open_cache(settings)
        assert claim_cache.load(cache, "k") is None, value
        fresh = replace(result, rationale="checked again")
        claim_cache.store(cache, "k", fresh)
        assert claim_cache.load(cache, "k") == fresh
        assert cache is not None
        cache.close()
    assert not marker.exists()


def test_datadisk_stores_only_text_and_bytes(tmp_path: Path) -> None:
    c = datacache.open_cache(tmp_path / "c")
    with pytest.raises(TypeError):
        c.set("k", {"a": 1})
    with pytest.raises(TypeError):
        c.set(("tuple", "key"), "v")
    datacache.set_json(c, "k", {"a": [1, 2]}, None)
    assert datacache.get_json(c, "k") == {"a": [1, 2]}
    c.close()
