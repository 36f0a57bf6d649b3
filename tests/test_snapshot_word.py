"""The snapshot's word equals the APIs': a title alone decides only when the snapshot is sure.
Against a snapshot built from generated OpenAlex works and the fake scholarly APIs on
loopback: "Preface" is never matched to another volume's "Preface" from the title alone, an
entry from the snapshot's year (the paper may be newer than the snapshot) is asked of the
APIs instead of matched to an older paper of the same authors, and a paper the snapshot
holds with confidence still costs no request."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from tests.fakes.scholarly import ScholarlyFake, _complete, crossref_work, openalex_work
from tests.test_retractions import bib_entry, pnas_paper
from tests.test_snapshot import _fake_snapshot, citelens

OLD = {
    "title": "Graph Widgets for Sparse Spectral Clustering",
    "authors": ["Lena Okonkwo", "Piet de Vries"],
    "year": 2021,
    "venue": "Journal of Widget Research",
    "doi": "10.5555/widgets.2021",
}
PREFACE = {
    "title": "Preface",
    "authors": ["Harriet Volume-One"],
    "year": 2019,
    "venue": "Proceedings of the Widget Workshop, Volume 1",
    "doi": "10.5555/preface.vol1",
}
HELD = {
    "title": "Sparse Spectral Methods for Widget Classification at Scale",
    "authors": ["Amara Nwosu"],
    "year": 2018,
    "venue": "Widget Letters",
    "doi": "10.5555/held.2018",
}
BIB = r"""
@inproceedings{preface2,
  title={Preface}, author={Volume-Two, Gregor}, year={2023},
  booktitle={Proceedings of the Widget Workshop, Volume 5}}
@article{newer,
  title={Graph Widgets for Sparse Spectral Clustering},
  author={Okonkwo, Lena and de Vries, Piet}, year={2025}, journal={Widget Transactions}}
@article{held, title={Sparse Spectral Methods for Widget Classification at Scale},
  author={Nwosu, Amara}, year={2018}, journal={Widget Letters}}
"""


def test_the_snapshot_decides_a_title_alone_only_when_it_is_sure(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    fake = scholarly_server
    snap = _fake_snapshot(tmp_path, [_complete(p) for p in (OLD, PREFACE, HELD)])
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB)
    env = {
        **os.environ,
        **fake.env(),
        "CITELENS_SNAPSHOT": str(snap),
        "CITELENS_CACHE_DIR": str(tmp_path / "c"),
    }
    fake.clear_log()
    proc = citelens("check", str(bib), "--format", "json", env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    entries = {e["key"]: e for e in json.loads(proc.stdout)["entries"]}
    # held with confidence: decided locally
    assert entries["held"]["status"] == "VERIFIED" and entries["held"]["method"].startswith("snapshot_")
    # another volume's "Preface" is not this one: the APIs were asked, and it is not VERIFIED
    assert not str(entries["preface2"].get("method", "")).startswith("snapshot_"), entries["preface2"]
    assert entries["preface2"]["status"] != "VERIFIED", entries["preface2"]["summary"]
    # a 2025 paper the snapshot may not hold: asked, not matched to the 2021 paper locally
    assert not str(entries["newer"].get("method", "")).startswith("snapshot_"), entries["newer"]
    asked = json.dumps(fake.requests()).lower()
    assert "preface" in asked and "graph widgets" in asked.replace("+", " ").replace("%20", " ")
    assert "widget classification" not in asked.replace("+", " ").replace("%20", " ")


def _notices_snapshot(tmp: Path, paper: dict[str, object], with_crossref: bool) -> Path:
    part = tmp / "oa" / "data" / "works" / "updated_date=2025-10-01" / "part_000.gz"
    part.parent.mkdir(parents=True)
    part.write_bytes(gzip.compress((json.dumps(openalex_work(_complete(paper))) + "\n").encode()))
    args = ["snapshot", "build", str(tmp / "s.db"), "--openalex", str(tmp / "oa")]
    if with_crossref:  # Crossref's public data file: {"items": [...]} per chunk
        (tmp / "cr").mkdir()
        items = {"items": [crossref_work(_complete(paper))]}
        (tmp / "cr" / "0.json.gz").write_bytes(gzip.compress(json.dumps(items).encode()))
        args += ["--crossref", str(tmp / "cr")]
    proc = citelens(*args)
    assert proc.returncode == 0, proc.stderr
    return tmp / "s.db"


@pytest.mark.parametrize("with_crossref", [False, True], ids=["openalex-only", "with-crossref"])
def test_notices_of_a_paper_the_snapshot_decides_are_reported(
    tmp_path: Path, scholarly_server: ScholarlyFake, with_crossref: bool
) -> None:
    """A correction and an expression of concern (Crossref's updated-by) of a paper the
    snapshot holds: reported as the API path reports them. From OpenAlex alone (which flags
    retractions only) Crossref is asked, 50 DOIs a request; a snapshot built with Crossref
    data carries them and nothing is asked."""
    fake = scholarly_server
    paper = pnas_paper()
    concern = {**paper["updated_by"][0], "type": "expression_of_concern", "label": "Expression of concern"}
    paper["updated_by"] = [*paper["updated_by"], {**concern, "DOI": "10.1073/pnas.concern1"}]
    fake.add_paper(paper)
    snap = _notices_snapshot(tmp_path, paper, with_crossref)
    bib = tmp_path / "refs.bib"
    bib.write_text(bib_entry("pnas", paper))
    env = {
        **os.environ,
        **fake.env(),
        "CITELENS_SNAPSHOT": str(snap),
        "CITELENS_CACHE_DIR": str(tmp_path / "c"),
    }
    fake.clear_log()
    proc = citelens("check", str(bib), "--format", "json", env=env)
    report = json.loads(proc.stdout)
    (entry,) = report["entries"]
    assert entry["method"].startswith("snapshot_"), entry  # decided by the snapshot
    codes = {d["code"] for d in report["diagnostics"] if d.get("key") == "pnas"}
    assert "EXPRESSION_OF_CONCERN" in codes, report["diagnostics"]
    assert fake.count() == (0 if with_crossref else 1), fake.counts()
