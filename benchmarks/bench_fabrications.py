"""Fabricated-reference detection at the comparison layer.

    /work/venv/bin/python benchmarks/bench_fabrications.py [-v] [--type TYPE]

Reads benchmarks/fabrications/set.jsonl (labelled entries) and truth.jsonl (the
records a scholarly API would serve) and, for each entry, does what the
verifier does with its answers, without HTTP:

1. the entry's DOI / arXiv id is looked up in the truth DB; an id that resolves
   to another paper's title is a DOI_MISMATCH (:func:`identifier_conflict`), an
   id no source knows is reported as unresolvable (as the verifier does);
2. otherwise a title search (the top 10 truth titles by token-set ratio, as a
   search engine would return) goes through :func:`best_candidate`; no
   candidate means NOT_FOUND;
3. the entry is compared with every version of the matched paper
   (:func:`compare`); a discrepancy of warning severity or more is a flag.

A fabricated entry is detected when it is flagged in any of these ways; a real
entry flagged in any of these ways is a false positive. Targets: detection
>= 95 % overall and >= 80 % per type, false positives <= 2 %.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz, process

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.fabrications.bibload import to_view  # noqa: E402

from citelens.model import EntryView, Severity  # noqa: E402
from citelens.sources.records import PaperRecord  # noqa: E402
from citelens.verify.match import (  # noqa: E402
    best_candidate,
    compare,
    entry_arxiv_id,
    identifier_conflict,
    normalize_doi,
    normalize_title,
)

CURRENT_YEAR = 2025  # the set was generated for this year ("future" years are after it)
SEARCH_LIMIT = 10


@dataclass
class TruthDB:
    papers: dict[str, list[PaperRecord]]
    by_doi: dict[str, str]
    by_arxiv: dict[str, str]
    titles: list[str]  # normalised, one per record
    title_paper: list[str]
    title_record: list[PaperRecord]

    @classmethod
    def load(cls, path: Path) -> TruthDB:
        papers: dict[str, list[PaperRecord]] = defaultdict(list)
        db = cls(papers, {}, {}, [], [], [])
        for line in path.read_text(encoding="utf-8").splitlines():
            raw = json.loads(line)
            rec = PaperRecord.from_json(raw)
            pid = raw["_paper"]
            papers[pid].append(rec)
            if rec.doi:
                db.by_doi[normalize_doi(rec.doi)] = pid
            if rec.arxiv_id:
                db.by_arxiv[rec.arxiv_id.lower()] = pid
            db.titles.append(normalize_title(rec.title))
            db.title_paper.append(pid)
            db.title_record.append(rec)
        return db

    def search(self, title: str) -> list[PaperRecord]:
        hits = process.extract(normalize_title(title), self.titles, scorer=fuzz.token_set_ratio,
                               limit=SEARCH_LIMIT)
        return [self.title_record[i] for _, _, i in hits]


def evaluate(view: EntryView, db: TruthDB) -> tuple[bool, str]:
    """(flagged, why) for one entry."""
    resolved: str | None = None
    doi = normalize_doi(view.doi)
    ax = entry_arxiv_id(view)
    for name, ident, table in (("DOI", doi, db.by_doi), ("arXiv id", ax, db.by_arxiv)):
        if ident and ident not in table:
            # every source answers "no such id": the verifier reports the identifier
            return True, f"ID_UNRESOLVED: {name} {ident}"
        if ident and ident in table:
            pid = table[ident]
            rec = db.papers[pid][0]
            if identifier_conflict(view, rec):
                return True, "DOI_MISMATCH"
            resolved = pid
            break
    if resolved is None:
        found = best_candidate(view, db.search(view.title))
        if found is None:
            c = compare(view, [], current_year=CURRENT_YEAR)  # placeholders, future years
            return True, "NOT_FOUND" + (f" ({', '.join(c.kinds)})" if c.kinds else "")
        resolved = next(p for p, r in zip(db.title_paper, db.title_record, strict=True)
                        if r is found[0])
    c = compare(view, db.papers[resolved], current_year=CURRENT_YEAR)
    flags = c.at_least(Severity.WARNING)
    if flags:
        return True, "; ".join(d.message for d in flags)
    return False, "; ".join(d.message for d in c.discrepancies) or "ok"


def rate(hits: Iterable[bool]) -> tuple[int, int]:
    xs = list(hits)
    return sum(xs), len(xs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-v", "--verbose", action="store_true", help="list misses and false alarms")
    ap.add_argument("--type", help="only this perturbation type (or 'real')")
    args = ap.parse_args()
    db = TruthDB.load(HERE / "fabrications" / "truth.jsonl")
    rows: list[dict[str, Any]] = [
        json.loads(line) for line in
        (HERE / "fabrications" / "set.jsonl").read_text(encoding="utf-8").splitlines()]
    if args.type:
        rows = [r for r in rows if r["type"] == args.type]
    start = time.perf_counter()
    results: dict[str, list[bool]] = defaultdict(list)
    by_sub: dict[tuple[str, str], list[bool]] = defaultdict(list)
    reasons: Counter[str] = Counter()
    for row in rows:
        flagged, why = evaluate(to_view(row["entry"]), db)
        results[row["type"]].append(flagged)
        by_sub[(row["type"], row["subtype"])].append(flagged)
        wrong = flagged if row["label"] == "real" else not flagged
        if flagged:
            reasons[why.split(":")[0].split(" (")[0]] += 1
        if wrong and args.verbose:
            print(f"{'FALSE ALARM' if flagged else 'MISSED'} [{row['type']}/{row['subtype']}] "
                  f"{row['entry']['title'][:90]}\n    -> {why[:300]}")
    elapsed = time.perf_counter() - start
    print(f"\n{'type':<24}{'detected':>10}{'rate':>8}")
    fab_hits = [h for t, hs in results.items() if t != "real" for h in hs]
    ok = True
    for t, hs in sorted(results.items()):
        if t == "real":
            continue
        n_hit, n = rate(hs)
        ok &= n_hit / n >= 0.80
        print(f"{t:<24}{n_hit:>5}/{n:<4}{100 * n_hit / n:>7.1f}%")
        for (tt, sub), shs in sorted(by_sub.items()):
            if tt == t and sub != t:
                a, b = rate(shs)
                print(f"  {sub:<22}{a:>5}/{b:<4}{100 * a / b:>7.1f}%")
    if fab_hits:
        n_hit, n = rate(fab_hits)
        ok &= n_hit / n >= 0.95
        print(f"{'ALL FABRICATED':<24}{n_hit:>5}/{n:<4}{100 * n_hit / n:>7.1f}%")
    if results.get("real"):
        n_fp, n = rate(results["real"])
        ok &= n_fp / n <= 0.02
        print(f"\n{'false positives (real)':<24}{n_fp:>5}/{n:<4}{100 * n_fp / n:>7.1f}%")
        for (tt, sub), shs in sorted(by_sub.items()):
            if tt == "real":
                a, b = rate(shs)
                print(f"  {sub:<22}{a:>5}/{b:<4}")
    print(f"\nhow entries were flagged: {dict(reasons.most_common(8))}")
    print(f"{len(rows)} entries in {elapsed:.1f} s; targets {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
