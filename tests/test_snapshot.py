"""The snapshot tier as a user meets it: ``citelens snapshot build`` on small files in each
dump's real format (made from the recorded API answers in tests/fixtures/apis), then
``citelens check`` with ``CITELENS_SNAPSHOT`` against the fake scholarly APIs on loopback."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tests.fakes.scholarly import ScholarlyFake, load_papers, openalex_work
from tests.harness import FIXTURES, run_citelens

APIS = FIXTURES / "apis"
DATE = "2025-10-01"


def citelens(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_citelens(*args, env=env)


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- dumps


def openalex_dump(root: Path) -> list[dict[str, Any]]:
    """data/works/updated_date=DATE/part_000.gz: the recorded Work objects, one a line, and
    two malformed lines (cut JSON, a work without a title)."""
    works = [
        _json(APIS / "openalex" / n)
        for n in (
            "work_doi_10.1073_pnas.1414271111.json",
            "work_doi_10.1023_a_1007154515475.json",
            "work_doi_10.1016_j.xgen.2025.100814.json",
        )
    ]
    works += _json(APIS / "openalex" / "works_filter_title.search_paperqa.json")["results"]
    part = root / "data" / "works" / f"updated_date={DATE}" / "part_000.gz"
    part.parent.mkdir(parents=True)
    lines = [json.dumps(w) for w in works]
    lines.insert(1, lines[0][: len(lines[0]) // 2])  # cut in half
    lines.append(json.dumps({"id": "https://openalex.org/W1", "title": None}))
    part.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    (root / "data" / "works" / "manifest").write_text("{}")
    return works


def crossref_dump(root: Path) -> list[dict[str, Any]]:
    """0.json.gz {"items": [...]} with the recorded works and a bad item; 1.json.gz truncated."""
    works = [
        _json(APIS / "crossref" / n)["message"]
        for n in ("work_10.1371_journal.pone.0033693.json", "work_10.1063_1.4938384.json")
    ]
    root.mkdir()
    (root / "0.json.gz").write_bytes(gzip.compress(json.dumps({"items": [*works, "not a work"]}).encode()))
    (root / "1.json.gz").write_bytes(gzip.compress(json.dumps({"items": works}).encode())[:40])
    return works


def arxiv_dump(path: Path) -> list[dict[str, Any]]:
    """The Kaggle arXiv metadata snapshot's JSON Lines, from recorded Atom entries."""
    ns = {"a": "http://www.w3.org/2005/Atom", "x": "http://arxiv.org/schemas/atom"}
    recs = []
    for name in ("query_id_list_1605.08386.xml", "query_id_list_astro-ph_0601001_old_style_id.xml"):
        for e in ET.parse(APIS / "arxiv" / name).getroot().findall("a:entry", ns):
            aid = re.sub(r"v\d+$", "", (e.findtext("a:id", "", ns)).split("/abs/")[-1])
            names = [a.findtext("a:name", "", ns) for a in e.findall("a:author", ns)]
            pub = e.findtext("a:published", "", ns)
            recs.append(
                {
                    "id": aid,
                    "submitter": names[0],
                    "authors": ", ".join(names),
                    "title": e.findtext("a:title", "", ns),
                    "comments": None,
                    "journal-ref": e.findtext("x:journal_ref", None, ns),
                    "doi": e.findtext("x:doi", None, ns),
                    "report-no": None,
                    "categories": e.find("x:primary_category", ns).get("term"),
                    "license": None,
                    "abstract": e.findtext("a:summary", "", ns),
                    "versions": [{"version": "v1", "created": f"Mon, 2 May {pub[:4]} 19:18:42 GMT"}],
                    "update_date": pub[:10],
                    "authors_parsed": [[n.split()[-1], " ".join(n.split()[:-1]), ""] for n in names],
                }
            )
    path.write_text(
        "\n".join([json.dumps(recs[0]), '{"id": "1234.5678", "title"', *map(json.dumps, recs[1:])]) + "\n"
    )
    return recs


def dblp_dump(path: Path, work: dict[str, Any]) -> None:
    """dblp.xml.gz: the recorded Crossref work as a DBLP article (an author with a DTD
    entity), a person page, and a record whose XML is broken."""
    authors = "".join(f"<author>{a['given']} {a['family']}</author>\n" for a in work["author"])
    authors = authors.replace("ü", "&uuml;")
    year = work["issued"]["date-parts"][0][0]
    xml = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n<!DOCTYPE dblp SYSTEM "dblp.dtd">\n<dblp>\n'
        '<article mdate="2020-01-01" key="journals/x/Broken1">\n<author>A &amp B</author>\n'
        "<title>Broken <i>record</title>\n"
        "</article>\n"
        f'<article mdate="2024-05-02" key="journals/x/Rec1">\n{authors}<title>{work["title"][0]}.</title>\n'
        f"<pages>1-2</pages>\n<year>{year}</year>\n<volume>1</volume>\n"
        f"<journal>{work['container-title'][0]}</journal>\n"
        f"<ee>https://doi.org/{work['DOI']}</ee>\n</article>\n"
        '<www mdate="2020-01-01" key="homepages/0/1">\n<author>Someone</author>\n'
        "<title>Home Page</title>\n</www>\n"
        "</dblp>\n"
    )
    path.write_bytes(gzip.compress(xml.encode("utf-8")))


def test_build_reads_each_dump_in_its_real_format_and_counts_malformed_records(tmp_path: Path) -> None:
    oa = openalex_dump(tmp_path / "openalex")
    cr = crossref_dump(tmp_path / "crossref")
    ax = arxiv_dump(tmp_path / "arxiv.json")
    dblp_dump(
        tmp_path / "dblp.xml.gz", _json(APIS / "crossref" / "work_10.1023_a_1007154515475.json")["message"]
    )
    out = tmp_path / "snap.db"
    proc = citelens(
        "snapshot",
        "build",
        str(out),
        "--openalex",
        str(tmp_path / "openalex"),
        "--crossref",
        str(tmp_path / "crossref"),
        "--arxiv",
        str(tmp_path / "arxiv.json"),
        "--dblp",
        str(tmp_path / "dblp.xml.gz"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    err = proc.stderr
    assert f"OpenAlex: {len(oa)} kept of {len(oa) + 2} read, 2 malformed skipped" in err
    assert (
        f"Crossref: {len(cr)} kept of {len(cr) + 1} read, 2 malformed skipped" in err
    )  # the item, the cut file
    assert f"arXiv: {len(ax)} kept of {len(ax) + 1} read, 1 malformed skipped" in err
    assert "DBLP: 1 kept of 3 read, 1 malformed skipped" in err
    total = len(oa) + len(cr) + len(ax) + 1
    indexed = ["{:04d}-{:02d}-{:02d}".format(*w["indexed"]["date-parts"][0]) for w in cr]
    newest = max([DATE, "2024-05-02", *indexed, *(r["update_date"] for r in ax)])
    info = citelens("snapshot", "info", str(out))
    assert info.stdout.strip() == (
        f"{out}: {total} works from OpenAlex, Crossref, DBLP, arXiv, data of {newest}"
    ), info.stdout + info.stderr

    from citelens.snapshot.store import Snapshot
    from citelens.verify.match.titles import title_similarity

    snap = Snapshot(str(out))
    try:
        rec = snap.by_id("doi", "10.1073/PNAS.1414271111")[0]
        assert (rec.source, rec.title) == ("openalex", oa[0]["title"])
        assert rec.authors[0] == oa[0]["authorships"][0]["author"]["display_name"]
        crec = snap.by_id("doi", cr[0]["DOI"])[0]
        assert (crec.source, crec.title) == ("crossref", cr[0]["title"][0])
        arec = snap.by_id("arxiv", "astro-ph/0601001")[0]
        assert arec.source == "arxiv" and arec.title == " ".join(ax[-1]["title"].split())
        # DBLP's record of the same DOI, after OpenAlex's; its DTD entity read as the letter
        both = snap.by_id("doi", "10.1023/A:1007154515475")
        assert [r.source for r in both] == ["openalex", "dblp"]
        assert any("ü" in a for a in both[1].authors) or not any("ü" in a for a in both[0].authors)
        # a title with a typo and a word left out still finds the paper
        title = oa[0]["title"]
        words = title.split()
        typo = " ".join([*words[:2], words[2][:-1] + "x", *words[4:]])
        hits = snap.by_title(typo, title_similarity)
        assert hits and hits[0][1].doi == "10.1073/pnas.1414271111"
    finally:
        snap.close()


def test_build_keeps_the_subset_asked_for(tmp_path: Path) -> None:
    oa = openalex_dump(tmp_path / "openalex")
    out = tmp_path / "snap.db"
    proc = citelens(
        "snapshot", "build", str(out), "--openalex", str(tmp_path / "openalex"), "--from-year", "2020"
    )
    assert proc.returncode == 0, proc.stderr
    newer = [w for w in oa if (w.get("publication_year") or 0) >= 2020]
    assert 0 < len(newer) < len(oa)
    assert (
        f"OpenAlex: {len(newer)} kept of {len(oa) + 2} read, {len(oa) - len(newer)} outside the subset"
        in proc.stderr
    )


def test_a_file_that_is_not_a_snapshot_is_reported_and_verification_goes_on(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    bad = tmp_path / "snap.db"
    bad.write_text("not sqlite")
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{a, title={Attention is All you Need}, author={Vaswani, Ashish}, year={2017}}\n")
    env = {**os.environ, **scholarly_server.env(), "CITELENS_SNAPSHOT": str(bad)}
    proc = citelens("check", str(bib), "--format", "json", env=env)
    assert "snapshot not used" in proc.stderr and "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["entries"][0]["status"] in ("VERIFIED", "PARTIAL")


# --------------------------------------------------------------------------- verification


def _fake_snapshot(tmp: Path, papers: list[dict[str, Any]]) -> Path:
    part = tmp / "oa" / "data" / "works" / f"updated_date={DATE}" / "part_000.gz"
    part.parent.mkdir(parents=True)
    part.write_bytes(gzip.compress("".join(json.dumps(openalex_work(p)) + "\n" for p in papers).encode()))
    out = tmp / "snap.db"
    proc = citelens("snapshot", "build", str(out), "--openalex", str(tmp / "oa"))
    assert proc.returncode == 0, proc.stderr
    return out


BIB = r"""
@article{held_doi,
  title={Developing functional musculoskeletal tissues through hypoxia and lysyl
         oxidase-induced collagen cross-linking},
  author={Makris, Eleftherios A. and others}, year={2014},
  journal={Proceedings of the National Academy of Sciences}, doi={10.1073/pnas.1414271111}}
@article{held_title, title={The Structure of Ordinary Water}, author={Frank, Henry S.},
  year={1970}, journal={Science}}
@article{retracted, title={A Retracted Study of Things}, author={Okafor, Maria}, year={2019},
  journal={Journal of Things}, doi={10.5555/retracted.1}}
@article{newer,
  title={The Astropy Project: Building an Open-science Project and Status of the v2.0 Core Package},
  author={Price-Whelan, A. M. and others}, year={2018}, journal={The Astronomical Journal},
  doi={10.3847/1538-3881/aabc4f}}
@article{invented, title={Quantum Gravitational Embeddings for Citation Graph Compression},
  author={Nobody, Ann}, year={2021}, journal={Journal of Imaginary Results}}
"""


def test_check_asks_the_snapshot_first_and_the_apis_only_for_what_it_does_not_hold(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    fake = scholarly_server
    fake.add_paper(
        {
            "title": "A Retracted Study of Things",
            "authors": ["Maria Okafor"],
            "year": 2019,
            "venue": "Journal of Things",
            "doi": "10.5555/retracted.1",
            "is_retracted": True,
        }
    )
    papers = [p for p in load_papers() if p.get("doi") != "10.3847/1538-3881/aabc4f"]  # not in the snapshot
    papers.append(
        {
            "title": "A Retracted Study of Things",
            "authors": ["Maria Okafor"],
            "year": 2019,
            "venue": "Journal of Things",
            "doi": "10.5555/retracted.1",
            "is_retracted": True,
        }
    )
    from tests.fakes.scholarly import _complete

    snap = _fake_snapshot(tmp_path, [_complete(p) for p in papers])
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
    report = json.loads(proc.stdout)
    entries = {e["key"]: e for e in report["entries"]}
    for key in ("held_doi", "held_title", "retracted"):
        assert entries[key]["status"] == "VERIFIED", entries[key]["summary"]
        assert f"(local snapshot of {DATE})" in entries[key]["summary"], entries[key]["summary"]
        assert entries[key]["method"].startswith("snapshot_")
    retracted = [d for d in report["diagnostics"] if d["code"] == "RETRACTED"]
    assert [d["key"] for d in retracted] == ["retracted"]
    # not in the snapshot: never NOT_FOUND on its word, the APIs decide
    assert entries["newer"]["status"] == "VERIFIED" and "snapshot" not in entries["newer"]["summary"]
    assert entries["invented"]["status"] == "NOT_FOUND"
    # the notices of papers held from OpenAlex alone (it flags retractions only) are read from
    # Crossref, every DOI in one batched request; nothing else is asked about them
    notices = [r for r in fake.requests("crossref") if str(r["query"].get("filter", "")).startswith("doi:")]
    assert len(notices) == 1 and "retracted.1" in notices[0]["query"]["filter"], notices
    asked = {json.dumps(r, sort_keys=True) for r in fake.requests() if r not in notices}
    for title in ("Ordinary Water", "musculoskeletal", "Retracted Study", "pnas", "retracted.1"):
        assert not any(
            title.lower().replace(" ", "") in a.lower().replace(" ", "").replace("+", "").replace("%20", "")
            for a in asked
        ), f"a request about {title!r}"
    assert any("aabc4f" in a.lower() for a in asked)
    assert "3 answered by the local snapshot" in proc.stderr


def test_offline_the_snapshot_still_answers(tmp_path: Path) -> None:
    papers = load_papers()
    from tests.fakes.scholarly import _complete

    snap = _fake_snapshot(tmp_path, [_complete(p) for p in papers])
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB)
    env = {**os.environ, "CITELENS_SNAPSHOT": str(snap)}
    proc = citelens("check", str(bib), "--format", "json", "--offline", env=env)
    entries = {e["key"]: e for e in json.loads(proc.stdout)["entries"]}
    assert entries["held_title"]["status"] == "VERIFIED"
    assert entries["newer"]["status"] == "VERIFIED"  # in this snapshot
    assert entries["invented"]["status"] == "UNVERIFIED"  # not NOT_FOUND: the snapshot is not the APIs


def test_build_keeps_works_of_a_field_or_a_type(tmp_path: Path) -> None:
    oa = openalex_dump(tmp_path / "openalex")

    def fields(w: dict[str, Any]) -> set[str]:  # the fields of any of its topics
        topics = [w.get("primary_topic") or {}, *(w.get("topics") or [])]
        return {(t.get("field") or {}).get("display_name") for t in topics}

    cs = [w for w in oa if "Computer Science" in fields(w)]
    assert 0 < len(cs) < len(oa)
    field = citelens(
        "snapshot",
        "build",
        str(tmp_path / "cs.db"),
        "--openalex",
        str(tmp_path / "openalex"),
        "--field",
        "Computer Science",
    )
    assert (
        f"OpenAlex: {len(cs)} kept of {len(oa) + 2} read, {len(oa) - len(cs)} outside the subset"
        in field.stderr
    )
    preprints = [w for w in oa if w.get("type") == "preprint"]
    kind = citelens(
        "snapshot",
        "build",
        str(tmp_path / "pre.db"),
        "--openalex",
        str(tmp_path / "openalex"),
        "--type",
        "preprint",
    )
    assert f"OpenAlex: {len(preprints)} kept of" in kind.stderr, kind.stderr


def test_a_forged_snapshot_row_is_not_trusted(tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    import sqlite3
    import zlib

    from tests.fakes.scholarly import _complete

    snap = _fake_snapshot(tmp_path, [_complete(p) for p in load_papers()])
    forged = {
        "source": "openalex",
        "title": "The Structure of Ordinary Water",
        "authors": "Henry S. Frank",
        "year": "1970",
        "doi": "10.1126/science.169.3946.635",
    }
    with sqlite3.connect(snap) as db:
        db.execute(
            "UPDATE works SET record = ? WHERE doi = ?",
            (zlib.compress(json.dumps(forged).encode()), "10.1126/science.169.3946.635"),
        )
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB)
    env = {**os.environ, **scholarly_server.env(), "CITELENS_SNAPSHOT": str(snap)}
    proc = citelens("check", str(bib), "--format", "json", env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    entries = {e["key"]: e for e in json.loads(proc.stdout)["entries"]}
    water = entries["held_title"]
    assert water["status"] == "VERIFIED" and "snapshot" not in water["summary"]  # the APIs decided
    assert entries["held_doi"]["method"].startswith("snapshot_")  # the other rows still serve
