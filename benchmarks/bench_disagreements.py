"""False alarms on real entries when the sources disagree the way the web does, and whether a
verdict depends on which source answers first.

    .venv/bin/python -m benchmarks.bench_disagreements [-v] [--latency S] [--verdicts DIR]

Input: the 300 real entries of ``benchmarks/data/bib300.bib`` and the records of the papers
they cite (``bib300_papers.json``, what ``bench_verify`` serves). The generator below
(seeded, no network) makes, for every paper it applies to, one way the sources disagree at
a time; the entry itself stays as written (a correct entry):

``venue_names``   the sources name the venue differently: one source that knows the paper
                  (chosen per paper: Crossref, OpenAlex, or S2's alternate names) has the
                  entry's name, the others an abbreviation of it
``published_title``  papers with an arXiv id: S2 and arXiv hold the preprint's title (its
                  last word another), OpenAlex (and Crossref) the published one the entry cites
``two_venues``    the same title at two venues: S2 knows only the conference version (a year
                  earlier, another venue and DOI), the others the journal paper cited (arXiv
                  its preprint when it has one)
``preprint_year`` S2 and OpenAlex hold the preprint (arXiv, a year earlier), Crossref the
                  published paper (papers with a DOI)

Each variant runs twice against the fake APIs (fast rates, a fresh cache): S2 answering
first (every other source ``--latency`` seconds late), then S2 answering last. Printed per
variant: the entries it applies to, the false alarms (entries flagged, warning or error, that
are not flagged when every source gives the same record) in each run, and the entries whose
status differs between the two runs. Goals: false alarms <= 1 %, no status differing.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import random
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.fakes.scholarly import ScholarlyFake, fast_rates  # noqa: E402

from citelens.checks.verification import verification_findings  # noqa: E402
from citelens.core.findings import Severity  # noqa: E402
from citelens.core.settings import Settings  # noqa: E402
from citelens.documents.bibtex.parse import parse_bib  # noqa: E402
from citelens.documents.bibtex.view import entry_view  # noqa: E402
from citelens.sources.transport import Sources  # noqa: E402
from citelens.verify.cache import VerificationCache  # noqa: E402
from citelens.verify.scheduler import verify_entries  # noqa: E402

BIB = HERE / "data" / "bib300.bib"
PAPERS = HERE / "data" / "bib300_papers.json"
SOURCES = ("s2", "crossref", "openalex", "arxiv", "doi", "ncbi")
COUNTED = ("DOI_MISMATCH", "NOT_FOUND", "METADATA_MISMATCH")
Paper = dict[str, Any]


# ---------------------------------------------------------------------- the generator


def _abbreviation(venue: str) -> str:
    words = [w for w in venue.replace("-", " ").split() if w[:1].isupper() and len(w) > 3]
    return "".join(w[0] for w in words).upper() or venue.split()[0]


def _crossref_knows(p: Paper) -> bool:
    """Crossref registers the paper's DOI (DataCite's, such as Zenodo's and arXiv's, it does not)."""
    doi = str(p.get("doi") or "").lower()
    return bool(doi) and not doi.startswith(("10.5281/", "10.48550/", "10.5061/", "10.6084/", "10.17632/"))


def venue_names(p: Paper, rng: random.Random) -> list[Paper] | None:
    venue = str(p.get("venue") or "")
    if not venue or "arxiv" in venue.lower():
        return None
    short = _abbreviation(venue)
    # a source that knows the paper (Crossref knows only papers with a DOI)
    holder = rng.choice(("crossref", "openalex", "s2") if _crossref_knows(p) else ("openalex", "s2"))
    q = copy.deepcopy(p)
    q["venue_alternates"] = []
    q["as"] = {src: {"venue": short} for src in ("s2", "crossref", "openalex", "doi") if src != holder}
    if holder == "s2":  # S2 names it short too, with the entry's name among its alternates
        q["as"]["s2"] = {"venue": short, "venue_alternates": [venue]}
    return [q]


def published_title(p: Paper, _rng: random.Random) -> list[Paper] | None:
    """An arXiv paper cited with its published title: its last word differs in the preprint,
    which S2 and arXiv hold; OpenAlex (and Crossref, for a paper with a DOI) the published."""
    words = str(p["title"]).split()
    if not p.get("arxiv") or len(words) < 4 or not words[-1].isalpha():
        return None
    q = copy.deepcopy(p)
    last = "Methods" if words[-1].lower() != "methods" else "Models"
    preprint = {"title": " ".join([*words[:-1], last])}
    q["as"] = {"s2": preprint, "arxiv": preprint}
    return [q]


def two_venues(p: Paper, _rng: random.Random) -> list[Paper] | None:
    if not p.get("venue") or not p.get("year") or "arxiv" in str(p["venue"]).lower():
        return None
    journal = copy.deepcopy(p)
    journal.pop("s2_paper_id", None)
    journal["sources"] = (["crossref", "openalex", "doi"] if journal.get("doi") else ["openalex"]) + (
        ["arxiv"] if journal.get("arxiv") else []
    )
    conference = {
        "title": p["title"],
        "authors": list(p["authors"]),
        "year": int(p["year"]) - 1,
        "venue": "Annual Symposium on Applied Computing",
        "doi": f"10.5555/conf.{zlib.crc32(str(p['title']).encode())}",
        "sources": ["s2"],
        "type": "proceedings-article",
    }
    return [journal, conference]


def preprint_year(p: Paper, _rng: random.Random) -> list[Paper] | None:
    # Crossref (which knows papers with a DOI) holds the published version
    if (
        not p.get("venue")
        or not p.get("year")
        or not _crossref_knows(p)
        or "arxiv" in str(p["venue"]).lower()
    ):
        return None
    q = copy.deepcopy(p)
    preprint = {"venue": "arXiv", "year": int(p["year"]) - 1, "venue_alternates": []}
    q["as"] = {"s2": preprint, "openalex": dict(preprint)}
    return [q]


VARIANTS: dict[str, Callable[[Paper, random.Random], list[Paper] | None]] = {
    "venue_names": venue_names,
    "published_title": published_title,
    "two_venues": two_venues,
    "preprint_year": preprint_year,
}


def variant_db(papers: list[Paper], name: str, seed: int = 30) -> tuple[list[Paper], set[int]]:
    """The fake's papers with variant ``name`` applied wherever it applies, and the indices
    of the papers it changed."""
    rng = random.Random(f"{seed}:{name}")
    out: list[Paper] = []
    changed: set[int] = set()
    for i, p in enumerate(papers):
        made = VARIANTS[name](p, rng)
        if made is None:
            out.append(p)
        else:
            out += made
            changed.add(i)
    return out, changed


# ---------------------------------------------------------------------- running


def _flagged(
    papers: list[Paper], latency: dict[str, float], verdicts: Path | None = None
) -> dict[str, tuple[bool, str, str]]:
    """key -> (flagged, status, why) for every entry of the .bib against ``papers``;
    ``verdicts``: a file to write every verdict's JSON to (its time stamp left out), so two
    versions of the code can be compared verdict by verdict."""
    bib = parse_bib(BIB.read_text(encoding="utf-8"), "bib300.bib")
    views = [entry_view(e) for e in bib.entries]

    async def run() -> dict[str, Any]:
        with ScholarlyFake(papers) as fake:
            for src in SOURCES:
                fake.set_latency(src, latency.get(src, 0.0))
            settings = fake.settings(request_timeout_s=10.0)
            async with Sources.from_settings(settings, rates=fast_rates()) as sources:
                return await verify_entries(views, settings, sources=sources, cache=VerificationCache(None))

    results = asyncio.run(run())
    if verdicts is not None:
        table = {k: {**v.to_json(), "checked_at": ""} for k, v in sorted(results.items())}
        verdicts.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    findings = verification_findings([bib], {}, results, Settings())
    out = {}
    for key, v in results.items():
        mine = [f for f in findings if f.key == key and f.code in COUNTED]
        flag = any(f.severity in (Severity.WARNING, Severity.ERROR) for f in mine)
        why = "; ".join(f"{d.kind}:{d.severity.value[:4]}" for d in v.discrepancies)
        out[key] = (flag, v.status.value, f"{v.summary[:160]} [{why}]")
    return out


def _paper_keys(papers: list[Paper]) -> dict[int, str]:
    """Which entry cites each paper (by DOI, arXiv id or title), from a run's views."""
    bib = parse_bib(BIB.read_text(encoding="utf-8"), "bib300.bib")
    by_doi, by_title = {}, {}
    for e in bib.entries:
        v = entry_view(e)
        if v.doi:
            by_doi[v.doi.lower()] = v.key
        by_title[" ".join(v.title.lower().split())] = v.key
    out = {}
    for i, p in enumerate(papers):
        title = " ".join(str(p["title"]).lower().split())
        key = by_doi.get(str(p.get("doi") or "").lower()) or by_title.get(title)
        if key:
            out[i] = key
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-v", action="store_true", help="list every false alarm and status change")
    ap.add_argument("--latency", type=float, default=0.03, help="seconds the late sources wait")
    ap.add_argument("--verdicts", metavar="DIR", type=Path,
                    help="write each run's verdicts as JSON into DIR (compare two checkouts with diff -r)")
    args = ap.parse_args(argv)
    out = args.verdicts
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    papers = json.loads(PAPERS.read_text(encoding="utf-8"))["papers"]
    keys = _paper_keys(papers)
    s2_first = {src: args.latency for src in SOURCES if src != "s2"}
    s2_last = {"s2": args.latency}
    t0 = time.perf_counter()
    base = _flagged(papers, {}, out / "agree.json" if out else None)
    flagged = sum(f for f, _s, _w in base.values())
    print(f"entries: {len(base)}; flagged with every source agreeing: {flagged}")
    head = f"{'variant':16} {'entries':>7} {'false alarms S2 first':>22} {'S2 last':>14}"
    print(head + f" {'status differs':>15}")
    total = [0, 0, 0, 0]
    for name in VARIANTS:
        db, changed = variant_db(papers, name)
        eligible = sorted({keys[i] for i in changed if i in keys and not base[keys[i]][0]})
        first = _flagged(db, s2_first, out / f"{name}-s2-first.json" if out else None)
        last = _flagged(db, s2_last, out / f"{name}-s2-last.json" if out else None)
        fa1 = [k for k in eligible if first[k][0]]
        fa2 = [k for k in eligible if last[k][0]]
        differ = [k for k in first if first[k][1] != last[k][1]]
        n = max(1, len(eligible))
        print(
            f"{name:16} {len(eligible):7} {len(fa1):10} ({100 * len(fa1) / n:5.1f}%)"
            f" {len(fa2):5} ({100 * len(fa2) / n:5.1f}%) {len(differ):15}"
        )
        total = [total[0] + len(eligible), total[1] + len(fa1), total[2] + len(fa2), total[3] + len(differ)]
        if args.v:
            for k in sorted(set(fa1) | set(fa2)):
                print(f"    false alarm {k}: S2 first {first[k][2]}")
                if first[k] != last[k]:
                    print(f"    {'':12}{' ' * len(k)}  S2 last  {last[k][2]}")
            for k in differ:
                print(f"    differs {k}: {first[k][1]} / {last[k][1]}")
    n = max(1, total[0])
    print(
        f"{'ALL':16} {total[0]:7} {total[1]:10} ({100 * total[1] / n:5.1f}%)"
        f" {total[2]:5} ({100 * total[2] / n:5.1f}%) {total[3]:15}"
    )
    print(f"wall {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
