"""``citelens snapshot build`` on hostile dumps, and a snapshot replaced while it is in use
(issue 32, breaks 7 and 9): a record over the size bound is skipped and counted, a part
that is a symlink to ``/dev/zero`` or a FIFO is refused, a full disk or an interruption
leaves no partial file, and a snapshot copied over the one in use is opened again."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from citelens.snapshot import build as build_mod
from citelens.snapshot.build import build
from citelens.snapshot.dump import Counts, Work
from citelens.snapshot.store import Snapshot, Writer
from citelens.sources.records import PaperRecord
from tests.harness import ROOT, run_citelens

DATE = "2025-10-01"


def _work(i: int) -> dict[str, object]:
    doi = f"10.1234/cats.{i}"
    return {"id": f"https://openalex.org/W{i}", "title": f"A study of cats number {i}",
            "display_name": f"A study of cats number {i}", "publication_year": 2020,
            "doi": f"https://doi.org/{doi}", "ids": {"doi": f"https://doi.org/{doi}"},
            "authorships": [{"author": {"display_name": "Ann Smith"}}], "type": "article"}


def _dump(root: Path, works: int = 3, huge: int = 0) -> Path:
    """An OpenAlex works snapshot: ``works`` records, and a line of ``huge`` characters
    between them when asked (compressed, it is a few kB)."""
    part = root / "data" / "works" / f"updated_date={DATE}" / "part_000.gz"
    part.parent.mkdir(parents=True)
    with gzip.open(part, "wb", compresslevel=1) as fh:
        for i in range(works):
            fh.write((json.dumps(_work(i)) + "\n").encode())
            if huge and i == 0:
                fh.write(b'{"title": "' + b"x" * huge + b'"}\n')
    return root


def test_a_record_over_the_size_bound_is_skipped_and_counted(tmp_path: Path) -> None:
    """A 70 MB line (a few kB of gzip) between good records: skipped and counted, never held
    whole; the records around it are kept. Before, one line of 3 GB in a 3 MB gzip was read
    whole (MemoryError)."""
    dump = _dump(tmp_path / "oa", works=3, huge=70 << 20)
    out = tmp_path / "snap.db"
    proc = run_citelens("snapshot", "build", str(out), "--openalex", str(dump))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "3 kept of 4 read" in proc.stderr and "1 malformed skipped (of which 1 over the size bound)" in (
        proc.stderr), proc.stderr
    assert "longer than 64 MB" in proc.stderr, proc.stderr
    kept = Snapshot(str(out)).by_id("doi", "10.1234/cats.2")
    assert [r.title for r in kept] == ["A study of cats number 2"]


def test_special_files_in_a_dump_are_refused_and_named(tmp_path: Path) -> None:
    """A part that is a symlink to ``/dev/zero`` and one that is a FIFO: each refused, counted
    and named; the regular part is read. Before: MemoryError, and a hang on the FIFO."""
    dump = _dump(tmp_path / "oa")
    parts = dump / "data" / "works" / f"updated_date={DATE}"
    (parts / "part_001.gz").symlink_to("/dev/zero")
    os.mkfifo(parts / "part_002.gz")
    out = tmp_path / "snap.db"
    proc = run_citelens("snapshot", "build", str(out), "--openalex", str(dump))
    assert proc.returncode == 0, proc.stderr
    assert "not a regular file (a device)" in proc.stderr and "not a regular file (a FIFO)" in proc.stderr
    assert "2 files refused (not regular files)" in proc.stderr, proc.stderr
    assert "3 kept of 3 read" in proc.stderr, proc.stderr


FULL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
from citelens.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_full_disk_leaves_no_partial_snapshot(tmp_path: Path) -> None:
    """Writes fail part way (a file size limit of 200 kB stands in for a full disk): one
    line, exit 2, and neither OUT nor OUT.building is left. Before, a traceback, and
    OUT.building stayed, filling the disk."""
    dump = _dump(tmp_path / "oa", works=3000)
    out = tmp_path / "snap.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    proc = subprocess.run([sys.executable, "-c", FULL_DISK, "snapshot", "build", str(out), "--openalex",
                           str(dump)], capture_output=True, text=True, timeout=300, env=env, check=False)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "snapshot build failed, nothing written to" in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["oa"], list(tmp_path.iterdir())


def test_an_interrupted_build_leaves_no_partial_snapshot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Interrupted (Ctrl-C) while reading: nothing is left beside OUT."""
    def reader(path: str, counts: Counts):  # type: ignore[no-untyped-def]
        for i in range(50):
            yield Work(PaperRecord(source="openalex", title=f"Paper {i}", year=2020))
        raise KeyboardInterrupt

    monkeypatch.setitem(build_mod.READERS, "openalex", reader)
    out = tmp_path / "snap.db"
    with pytest.raises(KeyboardInterrupt):
        build(str(out), {"openalex": str(tmp_path)})
    assert sorted(p.name for p in tmp_path.iterdir()) == [], list(tmp_path.iterdir())


def _snapshot(path: Path, title: str, doi: str) -> None:
    w = Writer(str(path))
    w.add(PaperRecord(source="openalex", title=title, year=2020, doi=doi))
    w.close({"date": DATE, "built": DATE, "sources": "OpenAlex"})


def test_a_snapshot_replaced_during_a_run_is_opened_again(tmp_path: Path) -> None:
    """A new snapshot copied over the one in use: the next lookup reads the new one, with a
    log line; garbage copied over it: lookups miss (the APIs are asked) and a line says the
    snapshot is not used any more. Before, every later lookup silently missed."""
    old, new, path = tmp_path / "old.db", tmp_path / "new.db", tmp_path / "in-use.db"
    _snapshot(old, "Old paper on cats", "10.1234/old")
    _snapshot(new, "New paper on dogs", "10.1234/new")
    shutil.copyfile(old, path)
    lines: list[str] = []
    snap = Snapshot(str(path), lines.append)
    assert [r.title for r in snap.by_id("doi", "10.1234/old")] == ["Old paper on cats"]
    shutil.copyfile(new, path)  # cp over the file in use: same inode, new bytes
    assert [r.title for r in snap.by_id("doi", "10.1234/new")] == ["New paper on dogs"]
    assert len(lines) == 1 and "changed on disk during the run; opened again" in lines[0], lines
    path.write_bytes(b"not a snapshot" * 1000)
    assert snap.by_id("doi", "10.1234/new") == []
    assert snap.by_title("New paper on dogs", lambda a, b: 1.0) == []
    assert len(lines) == 2 and "not used for the rest of it" in lines[1], lines
