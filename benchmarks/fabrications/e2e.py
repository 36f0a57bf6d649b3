"""Labelled entries end to end: BibTeX -> parser -> verifier -> findings, against the fake APIs.

Used by ``benchmarks/bench_fabrications.py`` (the whole set) and
``tests/test_fabrications_e2e.py`` (a slice of it). Nothing here decides
anything: the entries go through the real :func:`parse_bib`, :func:`entry_view`,
:func:`verify_entries` (every tier, the cache, the rate limiters) and
:func:`verification_findings`, over HTTP to :mod:`tests.fakes.scholarly`
serving ``truth.jsonl``.

An entry is *flagged* when it gets a finding of warning or error severity in
the .bib file (``DOI_MISMATCH`` error, ``NOT_FOUND`` warning, ``METADATA_MISMATCH``
warning). ``DUPLICATE_ENTRY`` does not count: the set is not one paper's
bibliography, so two of its entries may well describe one paper.

How the truth becomes the fake's database (:func:`fake_papers`): the fake keeps
one record per paper and renders it in every API's format, so the three records
of a paper merge into one: Crossref's title, venue and authors
(``authors_crossref``, what Crossref answers), Semantic Scholar's authors (what
S2, OpenAlex and arXiv answer; sometimes ASCII-folded), S2's venue string and
alternates as ``venue_alternates``, the DOI, the arXiv id and S2's paper id.
Lost in the merge: S2's sentence-cased title when Crossref has the paper, and
the arXiv record's earlier year (the fake's arXiv feed carries the paper's year).
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.scholarly import fast_rates, running

from citelens.checks.verification import verification_findings
from citelens.core.findings import Finding, Severity
from citelens.core.identifiers import normalize_doi
from citelens.core.titles import normalize_title
from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources.transport import Sources
from citelens.verify.cache import VerificationCache
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Verification

Row = dict[str, Any]
FLAG_SEVERITIES = (Severity.WARNING, Severity.ERROR)
COUNTED_CODES = ("DOI_MISMATCH", "NOT_FOUND", "METADATA_MISMATCH")


def fake_papers(truth: Sequence[Row], disagreements: bool = True) -> list[dict[str, Any]]:
    """``truth.jsonl`` records as papers for :class:`ScholarlyFake` (one per ``_paper``),
    with how each source describes the paper differently (``_render``, the keys
    :func:`tests.fakes.scholarly.title_as` documents) unless ``disagreements`` is off."""
    by: dict[str, dict[str, Row]] = defaultdict(dict)
    render: dict[str, dict[str, Any]] = defaultdict(dict)
    for r in truth:
        by[r["_paper"]][r["source"]] = r
        render[r["_paper"]].update(r.get("_render") or {})
    out = []
    for pid, recs in by.items():
        cr, s2, ax = recs.get("crossref"), recs.get("s2"), recs.get("arxiv")
        main = cr or s2 or ax
        assert main is not None
        p: dict[str, Any] = {"title": main["title"], "authors": list((s2 or main)["authors"]),
                             "year": main["year"]}
        if cr is not None:
            p["authors_crossref"] = list(cr["authors"])
            p["type"] = "journal-article"
        doi = (cr or {}).get("doi") or (s2 or {}).get("doi")
        if doi:
            p["doi"] = doi
        arxiv = (s2 or {}).get("arxiv_id") or (ax or {}).get("arxiv_id")
        if arxiv:
            p["arxiv"] = arxiv
        venue = (cr or {}).get("venue") or (s2 or {}).get("venue")
        if venue:
            p["venue"] = venue
        if s2 is not None:
            p["s2_paper_id"] = s2["s2_paper_id"]
            alternates = [s2.get("venue"), *(s2.get("venue_alternates") or [])]
            p["venue_alternates"] = list(dict.fromkeys(v for v in alternates if v and v != venue))
        if disagreements:
            p.update(render[pid])
        out.append(p)
    return out


@dataclass
class EntryResult:
    row: Row
    verification: Verification | None  # None: the parser lost the entry
    findings: list[Finding]

    @property
    def flagged(self) -> bool:
        return any(f.severity in FLAG_SEVERITIES for f in self.findings)

    def why(self, width: int = 400) -> str:
        """The verdict in one line: status, summary, every discrepancy with its severity."""
        v = self.verification
        if v is None:
            return "entry lost by the parser"
        parts = [f"{v.status.value}: {v.summary}"]
        parts += [f"[{d.severity.value}] {d.field}/{d.kind}: {d.message}" for d in v.discrepancies]
        text = " | ".join(parts)
        return text if len(text) <= width else text[: width - 3] + "..."

    def cause(self) -> str:
        """A short grouping label: status plus the discrepancy kinds and their severities."""
        v = self.verification
        if v is None:
            return "PARSER"
        kinds = sorted({f"{d.field}/{d.kind}:{d.severity.value[:4]}" for d in v.discrepancies})
        return v.status.value + (" (" + ", ".join(kinds) + ")" if kinds else "")


@dataclass
class RunResult:
    entries: list[EntryResult]
    wall_s: float
    requests: dict[str, int]  # per source, as the fake counted them
    duplicates: int = 0  # DUPLICATE_ENTRY findings (not counted as flags)
    parse_diffs: list[str] = field(default_factory=list)  # entries the parser read differently
    logs: list[str] = field(default_factory=list)  # what the run said (a source out, …)
    openalex_usd: float = 0.0  # what its OpenAlex calls cost, at OpenAlex's 2026 prices
    refused: dict[str, int] = field(default_factory=dict)  # 429 answers per source


def _parse_diffs(rows: Sequence[Row], views: dict[str, Any]) -> list[str]:
    """Entries whose parsed title/year/DOI differ from the set's own fields beyond
    normalisation (a check that the BibTeX rendering and the parser agree; such entries
    are still run). The parser turning ``--`` into an en dash is not a difference."""
    out = []
    for r in rows:
        e = r["entry"]
        v = views.get(e["key"])
        if v is None:
            out.append(f"{e['key']}: not parsed")
            continue
        for name, mine, theirs in (
                ("title", normalize_title(e["title"]), normalize_title(v.title)),
                ("year", e["year"], v.year),
                ("doi", normalize_doi(e["doi"]), normalize_doi(v.doi))):
            if (mine or None) != (theirs or None):
                out.append(f"{e['key']}: {name} {mine!r} -> {theirs!r}")
    return out


async def run_rows(rows: Sequence[Row], truth: Sequence[Row], cache_dir: Path,
                   log: Callable[[str], None] | None = None, snapshot: str | None = None,
                   disagreements: bool = True, openalex_budget: float | None = None,
                   openalex_key: str | None = None) -> RunResult:
    """Verify ``rows`` (one .bib file of their BibTeX) against a fake serving ``truth``;
    with ``snapshot`` (a snapshot file) the snapshot tier answers first; ``disagreements``
    off serves every source the same record; ``openalex_budget``: OpenAlex meters its 2026
    daily budget, that many dollars without a key ($1 with ``openalex_key``)."""
    text = "\n\n".join(r["bibtex"] for r in rows) + "\n"
    bib = parse_bib(text, "fabrications.bib")
    views = {e.key: entry_view(e) for e in bib.entries}
    said: list[str] = []

    def logger(message: str) -> None:
        said.append(message)
        if log is not None:
            log(message)

    with running(fake_papers(truth, disagreements)) as fake:
        if openalex_budget is not None:
            fake.set_openalex_budget(openalex_budget, 1.0)
        settings = fake.settings(cache_dir=str(cache_dir), request_timeout_s=10.0, snapshot=snapshot,
                                 openalex_api_key=openalex_key)
        sources = Sources.from_settings(settings, logger, rates=fast_rates())
        cache = VerificationCache(cache_dir, logger)
        t0 = time.perf_counter()
        try:
            results = await verify_entries(list(views.values()), settings, sources=sources,
                                           cache=cache, log=logger)
        finally:
            await sources.aclose()
            cache.close()
        wall = time.perf_counter() - t0
        requests = {k: n for k, n in fake.counts().items() if n}
        spent = fake.spent_usd("openalex")
        refused: dict[str, int] = defaultdict(int)
        for r in fake.requests():
            if r["status"] == 429:
                refused[r["source"]] += 1
    findings = verification_findings([bib], {}, results, settings)
    by_key: dict[str, list[Finding]] = defaultdict(list)
    duplicates = 0
    for f in findings:
        if f.code == "DUPLICATE_ENTRY":
            duplicates += 1
        elif f.code in COUNTED_CODES and f.path == "fabrications.bib" and f.key:
            by_key[f.key].append(f)
    entries = [EntryResult(r, results.get(r["entry"]["key"]), by_key.get(r["entry"]["key"], []))
               for r in rows]
    return RunResult(entries, wall, requests, duplicates, _parse_diffs(rows, views), said, spent,
                     dict(refused))


def run(rows: Sequence[Row], truth: Sequence[Row], cache_dir: Path,
        log: Callable[[str], None] | None = None, snapshot: str | None = None,
        disagreements: bool = True, openalex_budget: float | None = None,
        openalex_key: str | None = None) -> RunResult:
    return asyncio.run(run_rows(rows, truth, cache_dir, log, snapshot, disagreements,
                                openalex_budget, openalex_key))


def build_snapshot(truth: Sequence[Row], folder: Path) -> Path:
    """A snapshot holding every paper of ``truth``, built by ``citelens snapshot build`` from
    OpenAlex-format files (the Work objects the fake serves)."""
    import gzip
    import json
    import subprocess
    import sys

    from tests.fakes.scholarly import _complete, openalex_work

    part = folder / "openalex" / "data" / "works" / "updated_date=2025-10-01" / "part_000.gz"
    part.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(part, "wt", encoding="utf-8") as fh:
        for p in fake_papers(truth):
            fh.write(json.dumps(openalex_work(_complete(p))) + "\n")
    out = folder / "snapshot.db"
    subprocess.run([sys.executable, "-m", "citelens", "snapshot", "build", str(out),
                    "--openalex", str(folder / "openalex")], check=True, capture_output=True)
    return out
