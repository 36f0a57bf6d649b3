"""Fabricated-reference detection: end to end (default) or at the comparison layer.

    .venv/bin/python benchmarks/bench_fabrications.py [-v] [--type TYPE] [--layer e2e|compare]

The labelled set (``set.jsonl``) and the records a scholarly API would serve
(``truth.jsonl``) are generated on first use into ``benchmarks/fabrications/.cache/``
(deterministic, ~2 s; see ``fabrications/generate.py``).

``--layer e2e`` (default): every entry's BibTeX goes through the real parser
(``parse_bib`` + ``entry_view``) as one .bib file, then ``verify_entries`` runs
against the fake scholarly server (``tests/fakes/scholarly.py``) serving the truth
records over HTTP (fast rates, a fresh cache), then ``verification_findings``.
An entry is flagged when it gets a warning- or error-severity finding
(``DOI_MISMATCH``, ``NOT_FOUND``, ``METADATA_MISMATCH``); see
``fabrications/e2e.py``. Prints the requests per source and the wall time.

``--layer compare``: what the verifier does with its answers, without HTTP:

1. the entry's DOI / arXiv id is looked up in the truth DB; an id that resolves
   to another paper's title is a DOI_MISMATCH (:func:`identifier_conflict`), an
   id no source knows is reported as unresolvable (as the verifier does);
2. otherwise a title search (the top 10 truth titles by token-set ratio, as a
   search engine would return) goes through :func:`best_candidate`; no
   candidate means NOT_FOUND;
3. the entry is compared with every version of the matched paper
   (:func:`compare`); a discrepancy of warning severity or more is a flag.

A fabricated entry is detected when it is flagged; a real entry flagged is a
false positive. ``-v`` lists every miss and false alarm with its verdict, and
(e2e) the causes grouped. Targets: detection >= 95 % overall and >= 80 % per
type, false positives <= 1 % (with the sources' disagreements on, the default), paraphrased titles
>= 90 %, preprints cited as published >= 95 %; the exit status is 1 when one is missed.
``--no-disagreements`` serves every source the same record (the v4 conditions).

Behind the sources' 2026 limits: ``--openalex-budget USD`` meters OpenAlex's daily budget
(USD a day without a key, 0.10 in 2026; ``--openalex-key`` runs with a key's $1), and
``--budget-agreement`` runs the set twice, unmetered and behind the keyless budget, and
compares every verdict (status, class, flagged) and what the run said; ``--verdicts FILE``
writes each entry's status, class and flag as JSON, to compare two checkouts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
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
from benchmarks.fabrications.e2e import EntryResult, run  # noqa: E402
from benchmarks.fabrications.generate import ensure_generated, load_set, load_truth  # noqa: E402

from citelens.core.findings import Severity  # noqa: E402
from citelens.core.identifiers import arxiv_in_view, normalize_doi  # noqa: E402
from citelens.core.model import EntryView  # noqa: E402
from citelens.core.titles import normalize_title  # noqa: E402
from citelens.sources.records import PaperRecord  # noqa: E402
from citelens.verify.match.compare import best_candidate, compare, identifier_conflict  # noqa: E402

CURRENT_YEAR = 2025  # the set was generated for this year ("future" years are after it)
#: Detection targets per type (others: 80 %); overall 95 %, false positives 1 %.
TYPE_TARGETS = {"paraphrased_title": 0.90, "preprint_as_published": 0.95}
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
    def load(cls, truth: list[dict[str, Any]]) -> TruthDB:
        papers: dict[str, list[PaperRecord]] = defaultdict(list)
        db = cls(papers, {}, {}, [], [], [])
        for raw in truth:
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
    ax = arxiv_in_view(view)
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


def evaluate_compare(rows: list[dict[str, Any]], truth: list[dict[str, Any]]
                     ) -> tuple[list[tuple[bool, str, str]], str]:
    """(flagged, why, cause) per row at the comparison layer, and a one-line run summary."""
    db = TruthDB.load(truth)
    start = time.perf_counter()
    out = []
    for row in rows:
        flagged, why = evaluate(to_view(row["entry"]), db)
        out.append((flagged, why, why.split(":")[0].split(" (")[0]))
    return out, f"{len(rows)} entries in {time.perf_counter() - start:.1f} s (no HTTP)"


def evaluate_e2e(rows: list[dict[str, Any]], truth: list[dict[str, Any]],
                 disagreements: bool = True,
                 budget: tuple[float | None, str | None] = (None, None),
                 verdicts: str | None = None) -> tuple[list[tuple[bool, str, str]], str]:
    """(flagged, verdict, cause) per row end to end, and a summary of the run; ``budget``:
    OpenAlex's keyless daily budget in dollars (None: unmetered) and the key, if any;
    ``verdicts``: a file to write each entry's verdict to."""
    with tempfile.TemporaryDirectory(prefix="citelens-fab-cache-") as tmp:
        res = run(rows, truth, Path(tmp), disagreements=disagreements, openalex_budget=budget[0],
                  openalex_key=budget[1])
    if verdicts:
        Path(verdicts).write_text(json.dumps(verdict_table(res.entries), indent=0, sort_keys=True))
    out = [(e.flagged, e.why(), e.cause()) for e in res.entries]
    statuses = Counter(e.verification.status.value if e.verification else "LOST"
                       for e in res.entries)
    lines = [f"{len(rows)} entries verified in {res.wall_s:.1f} s wall; "
             f"requests per source: {dict(sorted(res.requests.items()))} "
             f"(total {sum(res.requests.values())})",
             f"statuses: {dict(sorted(statuses.items()))}; DUPLICATE_ENTRY findings (not "
             f"counted): {res.duplicates}"]
    if res.parse_diffs:
        lines.append(f"parser read {len(res.parse_diffs)} entries differently from the set: "
                     + "; ".join(res.parse_diffs[:5]))
    if budget[0] is not None:
        lines.append(f"OpenAlex: ${res.openalex_usd:.4f} spent at its 2026 prices; answered 429: "
                     f"{res.refused or 'none'}; said about the sources: "
                     + ("; ".join(told(res.logs)) or "nothing"))
    return out, "\n".join(lines)


def verdict_table(entries: Iterable[EntryResult]) -> dict[str, list[object]]:
    """Each entry's verdict: [status, class, flagged]."""
    return {e.row["entry"]["key"]: [e.verification.status.value if e.verification else "LOST",
                                    e.verification.klass if e.verification else None, e.flagged]
            for e in entries}


def told(logs: Iterable[str]) -> list[str]:
    """The lines a run said about a source out (not the end-of-run summary)."""
    return [m for m in logs if "requests so far" not in m]


def budget_agreement(rows: list[dict[str, Any]], truth: list[dict[str, Any]], usd: float,
                     verbose: bool) -> int:
    """Verdicts with OpenAlex unmetered vs behind its keyless 2026 budget (``usd`` a day):
    the same status, class and flag for every entry, and said once."""
    with tempfile.TemporaryDirectory(prefix="citelens-fab-budget-") as tmp:
        free = run(rows, truth, Path(tmp) / "c1")
        metered = run(rows, truth, Path(tmp) / "c2", openalex_budget=usd)
    a, b = verdict_table(free.entries), verdict_table(metered.entries)
    differ = [k for k in a if a[k] != b.get(k)]
    for k in differ if verbose else []:
        print(f"DIFFERS {k}: unmetered {a[k]} -> behind the budget {b.get(k)}")
    n = len(a)
    nf = [sum(1 for v in t.values() if v[0] == "NOT_FOUND") for t in (a, b)]
    unv = [sum(1 for v in t.values() if v[0] == "UNVERIFIED") for t in (a, b)]
    print(f"{n} entries; same verdict (status, class, flagged): {n - len(differ)}/{n}")
    print(f"NOT_FOUND: {nf[0]} unmetered, {nf[1]} behind the budget; UNVERIFIED: {unv[0]}, {unv[1]}")
    print(f"wall: {free.wall_s:.1f} s unmetered, {metered.wall_s:.1f} s behind the budget "
          f"({metered.wall_s / max(free.wall_s, 1e-9):.2f}x); OpenAlex ${free.openalex_usd:.4f} of "
          f"calls unmetered, ${metered.openalex_usd:.4f} spent behind the ${usd:g} budget; "
          f"answered 429: {metered.refused or 'none'}")
    said = told(metered.logs)
    print(f"said behind the budget ({len(said)} line{'s' if len(said) != 1 else ''}): "
          + (" | ".join(said) or "nothing"))
    return 0 if not differ else 1


def snapshot_agreement(rows: list[dict[str, Any]], truth: list[dict[str, Any]], verbose: bool) -> int:
    """Verdicts through the APIs vs with a snapshot that holds every true paper."""
    from benchmarks.fabrications.e2e import build_snapshot

    with tempfile.TemporaryDirectory(prefix="citelens-fab-snap-") as tmp:
        snap = build_snapshot(truth, Path(tmp) / "snap")
        api = run(rows, truth, Path(tmp) / "c1")
        local = run(rows, truth, Path(tmp) / "c2", snapshot=str(snap))
    same_status = same_flag = from_snapshot = 0
    for a, b in zip(api.entries, local.entries, strict=True):
        sa = a.verification.status.value if a.verification else "LOST"
        sb = b.verification.status.value if b.verification else "LOST"
        same_status += sa == sb
        same_flag += a.flagged == b.flagged
        from_snapshot += bool(b.verification and b.verification.method.startswith("snapshot_"))
        if (sa != sb or a.flagged != b.flagged) and verbose:
            print(f"DIFFERS [{a.row['type']}] {a.row['entry']['key']}: APIs {a.why(200)}\n"
                  f"    snapshot {b.why(200)}")
    n = len(rows)
    print(f"{n} entries; decided by the snapshot: {from_snapshot} ({100 * from_snapshot / n:.1f}%)")
    print(f"same status: {same_status}/{n} ({100 * same_status / n:.1f}%); same flag (detected / "
          f"not): {same_flag}/{n} ({100 * same_flag / n:.1f}%)")
    print(f"requests through the APIs: {sum(api.requests.values())} {dict(sorted(api.requests.items()))} "
          f"in {api.wall_s:.1f} s; with the snapshot: {sum(local.requests.values())} "
          f"{dict(sorted(local.requests.items()))} in {local.wall_s:.1f} s")
    return 0 if same_flag == n else 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-v", "--verbose", action="store_true", help="list misses and false alarms")
    ap.add_argument("--type", help="only this perturbation type (or 'real')")
    ap.add_argument("--snapshot-agreement", action="store_true",
                    help="run end to end through the APIs, then with a snapshot holding every true "
                         "paper, and compare the verdicts")
    ap.add_argument("--layer", choices=("e2e", "compare"), default="e2e",
                    help="end to end through parser, verifier and fake APIs (default), or the "
                         "comparison layer only")
    ap.add_argument("--no-disagreements", action="store_true",
                    help="the fake APIs agree with each other (e2e; v4's conditions)")
    ap.add_argument("--openalex-budget", type=float, metavar="USD",
                    help="OpenAlex meters its 2026 daily budget: USD a day without a key (0.10)")
    ap.add_argument("--openalex-key", action="store_true",
                    help="with --openalex-budget: run with an OpenAlex key ($1 a day)")
    ap.add_argument("--budget-agreement", action="store_true",
                    help="run unmetered, then behind OpenAlex's keyless budget ($0.10 or "
                         "--openalex-budget), and compare every verdict")
    ap.add_argument("--verdicts", metavar="FILE", help="write each entry's verdict as JSON")
    args = ap.parse_args()
    data = ensure_generated()
    rows = load_set(data)
    truth = load_truth(data)
    if args.type:
        rows = [r for r in rows if r["type"] == args.type]
    if args.no_disagreements:  # these cite the preprint's own title, which only they serve
        rows = [r for r in rows if r["subtype"] != "preprint_title"]
    if args.snapshot_agreement:
        return snapshot_agreement(rows, truth, args.verbose)
    if args.budget_agreement:
        return budget_agreement(rows, truth, args.openalex_budget or 0.10, args.verbose)
    t0 = time.perf_counter()
    budget = (args.openalex_budget, "citelens-bench-key" if args.openalex_key else None)
    evaluated = (evaluate_e2e(rows, truth, not args.no_disagreements, budget, args.verdicts)
                 if args.layer == "e2e" else evaluate_compare(rows, truth))
    outcomes, summary = evaluated
    elapsed = time.perf_counter() - t0
    results: dict[str, list[bool]] = defaultdict(list)
    fp_by_disagreement: dict[str, list[bool]] = defaultdict(list)
    by_sub: dict[tuple[str, str], list[bool]] = defaultdict(list)
    reasons: Counter[str] = Counter()
    wrong_causes: dict[str, Counter[str]] = {"MISSED": Counter(), "FALSE ALARM": Counter()}
    for row, (flagged, why, cause) in zip(rows, outcomes, strict=True):
        results[row["type"]].append(flagged)
        if row["label"] == "real" and args.layer == "e2e" and not args.no_disagreements:
            for kind in row.get("disagreements") or ["(none)"]:
                fp_by_disagreement[kind].append(flagged)
        by_sub[(row["type"], row["subtype"])].append(flagged)
        wrong = flagged if row["label"] == "real" else not flagged
        if flagged:
            reasons[cause.split(" (")[0]] += 1
        if wrong:
            label = "FALSE ALARM" if flagged else "MISSED"
            wrong_causes[label][f"{row['type']}: {cause}"] += 1
            if args.verbose:
                print(f"{label} [{row['type']}/{row['subtype']}] {row['entry']['key']} "
                      f"{row['entry']['title'][:90]}\n    -> {why[:400]}")
    print(f"\nlayer: {args.layer}")
    print(f"{'type':<24}{'detected':>10}{'rate':>8}")
    fab_hits = [h for t, hs in results.items() if t != "real" for h in hs]
    ok = True
    for t, hs in sorted(results.items()):
        if t == "real":
            continue
        n_hit, n = rate(hs)
        ok &= n_hit / n >= TYPE_TARGETS.get(t, 0.80)
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
        ok &= n_fp / n <= 0.01
        print(f"\n{'false positives (real)':<24}{n_fp:>5}/{n:<4}{100 * n_fp / n:>7.1f}%")
        for (tt, sub), shs in sorted(by_sub.items()):
            if tt == "real":
                a, b = rate(shs)
                print(f"  {sub:<28}{a:>5}/{b:<4}")
        if fp_by_disagreement:
            print("false positives by the sources' disagreement (real entries whose paper has it):")
            for kind, shs in sorted(fp_by_disagreement.items()):
                a, b = rate(shs)
                print(f"  {kind:<28}{a:>5}/{b:<4}")
    print(f"\nhow entries were flagged: {dict(reasons.most_common(8))}")
    for label, causes in wrong_causes.items():
        if causes:
            print(f"{label.lower()} by cause: " + "; ".join(f"{n}x {c}" for c, n in
                                                          causes.most_common(10)))
    print(summary)
    print(f"total {elapsed:.1f} s; targets {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
