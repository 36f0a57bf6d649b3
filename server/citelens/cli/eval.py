"""``citelens eval claims FILE.jsonl [--abstract-only]``: score the claim checker.

Each line is one labelled pair (SCITANCE-like)::

    {"claim": "...", "abstract": "...", "full_text": "...", "label": "SUPPORTS"}
    {"claim": "...", "paper": {"doi": "10.x/y"}, "label": "NOT_ENOUGH_INFO"}

``abstract``/``full_text`` are used as given; with ``paper`` (doi, arxiv_id, pmid,
title, url) they are retrieved by the cascades. The model comes from the usual
settings (``CITELENS_LLM_BASE_URL``, ``CITELENS_LLM_MODEL``...). Prints micro-F1,
macro-F1, support-vs-not (binary accuracy: SUPPORTS against the other two labels),
the confusion matrix, the escalation table, the retrieval coverage, the latency of
each phase and the cosine scores of the kept passages (:mod:`citelens.claims.eval_stats`).
``--abstract-only`` is the ablation without phase 2; ``--two-class`` the paper's
2-class setting (NOT_ENOUGH_INFO items removed, SUPPORTS vs CONTRADICTS).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import httpx

from citelens.claims.eval_evidence import Rationale, evidence_report
from citelens.claims.eval_stats import coverage_report, latency_report, passage_score_report
from citelens.claims.llm import LLM_TIMEOUT_S, LLMConfig
from citelens.claims.pipeline import check_claim
from citelens.claims.result import ClaimResult, Status, Verdict
from citelens.claims.sentences import strip_citation_markers
from citelens.core.model import Authors, EntryView
from citelens.core.settings import Settings, from_sources

LABELS = (Verdict.SUPPORTS, Verdict.CONTRADICTS, Verdict.NOT_ENOUGH_INFO)
SHORT = {Verdict.SUPPORTS: "SUP", Verdict.CONTRADICTS: "CON", Verdict.NOT_ENOUGH_INFO: "NEI"}
TWO = (Verdict.SUPPORTS, Verdict.CONTRADICTS)
CONCURRENCY = 4


@dataclass(slots=True)
class Item:
    line: int
    claim: str
    label: Verdict
    abstract: str | None = None
    full_text: str | None = None
    paper: dict[str, str] = field(default_factory=dict)
    doc_id: str = ""  # SCITANCE / SciFact: the cited paper in the corpus
    sentences: list[str] | None = None  # the abstract as the dataset splits it
    rationale: frozenset[int] = frozenset()  # indexes of its rationale sentences


@dataclass(slots=True)
class Outcome:
    gold: Verdict
    predicted: Verdict  # errors count as NOT_ENOUGH_INFO
    phase1: Verdict | None  # None: phase 1 did not run (no abstract) or failed
    escalated: bool
    error: bool = False


def parse_label(value: Any) -> Verdict | None:
    if not isinstance(value, str):
        return None
    key = "_".join(value.strip().upper().replace("-", " ").split())
    key = {
        "NEI": "NOT_ENOUGH_INFO",
        "SUPPORT": "SUPPORTS",
        "CONTRADICT": "CONTRADICTS",
        "REFUTE": "CONTRADICTS",
        "REFUTES": "CONTRADICTS",
    }.get(key, key)
    try:
        return Verdict(key)
    except ValueError:
        return None


def _text(value: Any) -> str | None:
    """An abstract or full text given as a string or as a list of sentences."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(v.strip() for v in value)
    return None


@dataclass(slots=True)
class Paper:
    """One paper of a SCITANCE / SciFact ``corpus.jsonl``."""

    title: str
    abstract: str
    sentences: list[str] | None = None  # when the corpus gives the abstract as sentences


def _json_objects(lines: list[str], what: str, problems: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each JSON-object line; blank lines are skipped, and any
    other line adds one problem (``what N: not JSON``) to ``problems``."""
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            problems.append(f"{what} {n}: not JSON")
            continue
        if not isinstance(data, dict):
            problems.append(f"{what} {n}: not a JSON object")
            continue
        yield n, data


def read_corpus(lines: list[str]) -> tuple[dict[str, Paper], list[str]]:
    """``doc_id`` -> paper from a ``corpus.jsonl`` (abstract: a list of sentences or a
    string), and one problem line per unusable line."""
    papers: dict[str, Paper] = {}
    problems: list[str] = []
    for n, data in _json_objects(lines, "corpus line", problems):
        abstract = _text(data.get("abstract"))
        if data.get("doc_id") is None:
            problems.append(f'corpus line {n}: no "doc_id" field')
        elif abstract is None:
            problems.append(f'corpus line {n}: no "abstract" field (a string or a list of sentences)')
        else:
            raw = data.get("abstract")
            sentences = [str(x).strip() for x in raw] if isinstance(raw, list) else None
            papers[str(data["doc_id"])] = Paper(str(data.get("title") or ""), abstract, sentences)
    return papers, problems


def _evidence_label(value: Any) -> Verdict | None:
    """The label of one ``evidence[doc_id]``: ``{"sentences": [...], "label": ...}`` (SCITANCE)
    or a list of them (SciFact, one per rationale; they agree)."""
    if isinstance(value, dict):
        return parse_label(value.get("label"))
    if isinstance(value, list):
        labels = {parse_label(v.get("label")) for v in value if isinstance(v, dict)}
        return labels.pop() if len(labels) == 1 else None
    return None


def _rationale(value: Any) -> frozenset[int]:
    """The rationale sentence indexes of one ``evidence[doc_id]`` (SCITANCE's object or
    SciFact's list of them), all rationales together."""
    found: set[int] = set()
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, dict) and isinstance(v.get("sentences"), list):
            found.update(i for i in v["sentences"] if type(i) is int and i >= 0)
    return frozenset(found)


def _layout_items(
    n: int, data: dict[str, Any], claim: str, corpus: dict[str, Paper] | None, problems: list[str]
) -> list[Item]:
    """Items of a SCITANCE / SciFact line: one per cited paper; its label is under
    ``evidence[doc_id]``, and a cited paper without evidence is NOT_ENOUGH_INFO."""
    evidence = data.get("evidence")
    if not isinstance(evidence, dict):
        problems.append(f'line {n}: "evidence" must be an object of doc_id -> {{sentences, label}}')
        return []
    cited = data.get("cited_doc_ids")
    if cited is None and data.get("doc_ids") is not None:
        cited = data["doc_ids"]
    if not isinstance(cited, list) or not cited:
        problems.append(f'line {n}: no "cited_doc_ids" field (the papers the claim cites)')
        return []
    if corpus is None:
        problems.append(f"line {n}: SCITANCE/SciFact layout needs the corpus: --corpus corpus.jsonl")
        return []
    out = []
    for doc in (str(d) for d in cited):
        label = _evidence_label(evidence[doc]) if doc in evidence else Verdict.NOT_ENOUGH_INFO
        if label is None:
            problems.append(
                f'line {n}, doc {doc}: "evidence.{doc}.label" must be SUPPORT(S) or CONTRADICT(S)/REFUTE(S)'
            )
        elif doc not in corpus:
            problems.append(f'line {n}, doc {doc}: not in the corpus (no line with this "doc_id")')
        else:
            paper = corpus[doc]
            rationale = _rationale(evidence[doc]) if doc in evidence else frozenset()
            out.append(Item(n, claim, label, paper.abstract, None, {}, doc, paper.sentences, rationale))
    return out


def read_items(lines: list[str], corpus: dict[str, Paper] | None = None) -> tuple[list[Item], list[str]]:
    """The usable items and one problem line per unusable input line (naming the field).

    Two layouts: CiteLens's flat one (``claim``, ``label``, ``abstract`` or ``paper``,
    ``full_text``) and SCITANCE / SciFact as shipped (``claim``, ``evidence``,
    ``cited_doc_ids``, abstracts in ``corpus``). Citation markers are stripped from the
    claims ("... risk [12]." -> "... risk."), as the editor's claims have none.
    """
    items: list[Item] = []
    problems: list[str] = []
    for n, data in _json_objects(lines, "line", problems):
        raw_claim = data.get("claim")
        claim = strip_citation_markers(raw_claim) if isinstance(raw_claim, str) else ""
        paper = data.get("paper")
        abstract = _text(data.get("abstract"))
        if not claim:
            problems.append(f'line {n}: no "claim" field (or it is empty)')
        elif "evidence" in data and "label" not in data:
            items += _layout_items(n, data, claim, corpus, problems)
        elif "label" not in data:
            problems.append(f'line {n}: no "label" field (or "evidence" with "cited_doc_ids")')
        elif (label := parse_label(data.get("label"))) is None:
            problems.append(
                f'line {n}: "label" must be SUPPORTS, CONTRADICTS or NOT_ENOUGH_INFO '
                f"(or SUPPORT, CONTRADICT, REFUTE(S), NEI), not {str(data.get('label'))[:40]!r}"
            )
        elif abstract is None and not isinstance(paper, dict):
            problems.append(f'line {n}: no "abstract" or "paper" field')
        else:
            items.append(
                Item(
                    n,
                    claim,
                    label,
                    abstract,
                    _text(data.get("full_text")),
                    {str(k): str(v) for k, v in paper.items()} if isinstance(paper, dict) else {},
                )
            )
    return items, problems


def _view(item: Item) -> EntryView | None:
    p = item.paper
    if not p:
        return None
    return EntryView(
        key=f"line{item.line}",
        entry_type="article",
        title=p.get("title", ""),
        authors=Authors.of(()),
        authors_truncated=False,
        year=None,
        venue="",
        doi=p.get("doi"),
        arxiv_id=p.get("arxiv_id") or p.get("arxiv"),
        pmid=p.get("pmid"),
        s2_id=None,
        url=p.get("url"),
    )


def to_outcome(item: Item, result: ClaimResult, abstract_only: bool) -> Outcome:
    error = result.status is not Status.VERDICT or result.verdict is None
    predicted = Verdict.NOT_ENOUGH_INFO if error or result.verdict is None else result.verdict
    phase1 = result.phase1_verdict
    escalated = (
        not abstract_only
        and phase1 in (None, Verdict.NOT_ENOUGH_INFO)
        and not (error and result.phase == "abstract")
    )
    return Outcome(item.label, predicted, phase1, escalated, error)


# ---------------------------------------------------------------------------- scores


@dataclass(slots=True)
class Scores:
    n: int
    micro_f1: float
    macro_f1: float
    support_vs_not: float
    confusion: dict[Verdict, dict[Verdict, int]]
    per_class_f1: dict[Verdict, float]


def score(outcomes: list[Outcome]) -> Scores:
    confusion = {g: dict.fromkeys(LABELS, 0) for g in LABELS}
    for o in outcomes:
        confusion[o.gold][o.predicted] += 1
    n = len(outcomes)
    correct = sum(confusion[v][v] for v in LABELS)
    f1s: dict[Verdict, float] = {}
    for v in LABELS:
        tp = confusion[v][v]
        fp = sum(confusion[g][v] for g in LABELS) - tp
        fn = sum(confusion[v].values()) - tp
        if tp + fp + fn == 0:
            continue  # a class absent from both gold and predictions
        f1s[v] = 2 * tp / (2 * tp + fp + fn)
    binary = sum((o.gold is Verdict.SUPPORTS) == (o.predicted is Verdict.SUPPORTS) for o in outcomes)
    return Scores(
        n=n,
        micro_f1=correct / n if n else 0.0,
        macro_f1=sum(f1s.values()) / len(f1s) if f1s else 0.0,
        support_vs_not=binary / n if n else 0.0,
        confusion=confusion,
        per_class_f1=f1s,
    )


def score_two_class(outcomes: list[Outcome]) -> Scores:
    """The paper's 2-class setting: items labelled NOT_ENOUGH_INFO are left out, F1 is
    over SUPPORTS and CONTRADICTS. A NOT_ENOUGH_INFO prediction stays a wrong answer
    (a miss of its gold class). ``support_vs_not`` holds the accuracy here."""
    kept = [o for o in outcomes if o.gold is not Verdict.NOT_ENOUGH_INFO]
    s = score(kept)
    tp = {v: s.confusion[v][v] for v in TWO}
    fp = {v: sum(s.confusion[g][v] for g in TWO) - tp[v] for v in TWO}
    fn = {v: sum(s.confusion[v].values()) - tp[v] for v in TWO}
    f1s = {v: 2 * tp[v] / (2 * tp[v] + fp[v] + fn[v]) for v in TWO if tp[v] + fp[v] + fn[v]}
    t, f = sum(tp.values()), sum(fp.values()) + sum(fn.values())
    return Scores(
        n=s.n,
        micro_f1=2 * t / (2 * t + f) if t + f else 0.0,
        macro_f1=sum(f1s.values()) / len(f1s) if f1s else 0.0,
        support_vs_not=s.micro_f1,  # the accuracy over the kept items
        confusion=s.confusion,
        per_class_f1=f1s,
    )


@dataclass(slots=True)
class Escalation:
    resolved_phase1: int = 0
    resolved_phase1_correct: int = 0
    escalated: int = 0
    corrected: int = 0
    correctly_left_nei: int = 0
    wrongly_left_nei: int = 0
    flipped_wrong: int = 0
    errors: int = 0


def escalation(outcomes: list[Outcome]) -> Escalation:
    e = Escalation()
    for o in outcomes:
        e.errors += o.error
        if o.phase1 is not None and o.phase1 is not Verdict.NOT_ENOUGH_INFO:
            e.resolved_phase1 += 1
            e.resolved_phase1_correct += o.predicted is o.gold
            continue
        if not o.escalated:
            continue
        e.escalated += 1
        if o.predicted is Verdict.NOT_ENOUGH_INFO:
            if o.gold is Verdict.NOT_ENOUGH_INFO:
                e.correctly_left_nei += 1
            else:
                e.wrongly_left_nei += 1
        elif o.predicted is o.gold:
            e.corrected += 1
        else:
            e.flipped_wrong += 1
    return e


def pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _scores(s: Scores, two_class: bool, out: TextIO) -> None:
    if two_class:
        print(f"accuracy        {pct(s.support_vs_not)}", file=out)
    print(f"micro-F1        {pct(s.micro_f1)}", file=out)
    print(f"macro-F1        {pct(s.macro_f1)}" + ("  (SUPPORTS, CONTRADICTS)" if two_class else ""), file=out)
    if not two_class:
        print(
            f"support vs not  {pct(s.support_vs_not)}  "
            "(binary accuracy: SUPPORTS against CONTRADICTS + NOT_ENOUGH_INFO)",
            file=out,
        )
    print("per-class F1    " + "  ".join(f"{SHORT[v]} {pct(f)}" for v, f in s.per_class_f1.items()), file=out)
    print("", file=out)
    print("confusion (rows: gold, columns: predicted)", file=out)
    print("        " + "".join(f"{SHORT[v]:>6}" for v in LABELS), file=out)
    for g in TWO if two_class else LABELS:
        print(f"  {SHORT[g]:<6}" + "".join(f"{s.confusion[g][p]:>6}" for p in LABELS), file=out)
    if two_class:
        nei = sum(s.confusion[g][Verdict.NOT_ENOUGH_INFO] for g in TWO)
        print(f"  predicted NEI: {nei} (counted as wrong)", file=out)


def _escalation(outcomes: list[Outcome], abstract_only: bool, out: TextIO) -> None:
    e = escalation(outcomes)
    print("escalation", file=out)
    print(
        f"  resolved at phase 1      {e.resolved_phase1:>4}  ({e.resolved_phase1_correct} correct)", file=out
    )
    if abstract_only:
        left = sum(1 for o in outcomes if o.phase1 in (None, Verdict.NOT_ENOUGH_INFO))
        print(f"  left NEI (no phase 2)    {left:>4}", file=out)
    else:
        print(f"  escalated to phase 2     {e.escalated:>4}", file=out)
        print(f"    corrected by phase 2   {e.corrected:>4}", file=out)
        print(f"    correctly left NEI     {e.correctly_left_nei:>4}", file=out)
        print(f"    wrongly left NEI       {e.wrongly_left_nei:>4}", file=out)
        print(f"    flipped to wrong       {e.flipped_wrong:>4}", file=out)
    if e.errors:
        print(f"  model errors (counted as NEI) {e.errors}", file=out)


def report(
    outcomes: list[Outcome], abstract_only: bool, out: TextIO, *, two_class: bool = False, removed: int = 0
) -> None:
    """The scores, the confusion matrix and the escalation table."""
    s = score_two_class(outcomes) if two_class else score(outcomes)
    mode = "abstract only (phase 1)" if abstract_only else "two-stage (abstract, then passages)"
    setting = f"   2-class: {removed} NOT_ENOUGH_INFO items removed" if two_class else ""
    print(f"claims: {s.n}   mode: {mode}{setting}", file=out)
    _scores(s, two_class, out)
    print("", file=out)
    _escalation(outcomes, abstract_only, out)


def retrieval_report(results: list[ClaimResult], cutoff: float, out: TextIO) -> None:
    """Coverage, latency per phase and the scores of the kept passages."""
    print("", file=out)
    coverage_report(results, out)
    print("", file=out)
    latency_report(results, out)
    print("", file=out)
    passage_score_report(results, cutoff, out)


# ---------------------------------------------------------------------------- running


async def run_items(
    items: list[Item], settings: Settings, abstract_only: bool
) -> list[tuple[Item, ClaimResult]]:
    sources: Any = None
    if any(i.paper for i in items) and not settings.offline:
        from citelens.sources.transport import Sources

        sources = Sources.from_settings(settings)
    gate = asyncio.Semaphore(CONCURRENCY)
    try:
        async with httpx.AsyncClient(timeout=settings.request_timeout_s) as client:

            async def one(item: Item) -> tuple[Item, ClaimResult]:
                async with gate:
                    result = await check_claim(
                        item.claim,
                        _view(item),
                        None,
                        settings=settings,
                        client=client,
                        sources=sources,
                        abstract=item.abstract,
                        full_text=item.full_text,
                        abstract_only=abstract_only,
                    )
                    return item, result

            return list(await asyncio.gather(*(one(i) for i in items)))
    finally:
        if sources is not None:
            await sources.aclose()


def _corpus_for(option: str | None, claims: Path) -> tuple[dict[str, Paper] | None, list[str]]:
    """The corpus named by ``--corpus``, else ``corpus.jsonl`` next to the claims if any."""
    path = Path(option) if option else claims.with_name("corpus.jsonl")
    if not option and (not path.is_file() or path.resolve() == claims.resolve()):
        return None, []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        return None, [f"cannot read {path}: {type(e).__name__}"]
    return read_corpus(lines)


def main(argv: list[str], settings: Settings | None = None, out: TextIO | None = None) -> int:
    """Entry point of ``citelens eval claims``; returns the exit status."""
    out = out or sys.stdout
    parser = argparse.ArgumentParser(
        prog="citelens eval claims", description="Score claim checks on labelled JSONL data."
    )
    parser.add_argument(
        "file",
        help="JSONL file: claim, abstract|paper, full_text?, label; or SCITANCE/SciFact claims "
        "(claim, evidence, cited_doc_ids)",
    )
    parser.add_argument(
        "--corpus",
        metavar="CORPUS.jsonl",
        help="SCITANCE/SciFact abstracts (doc_id, title, abstract); default: corpus.jsonl next to FILE",
    )
    parser.add_argument(
        "--abstract-only", action="store_true", help="ablation: phase 1 only (no full-text escalation)"
    )
    parser.add_argument(
        "--two-class",
        action="store_true",
        help="the paper's 2-class setting: drop NOT_ENOUGH_INFO items, score SUPPORTS vs CONTRADICTS",
    )
    parser.add_argument(
        "--cosine-min",
        type=float,
        default=None,
        metavar="X",
        help="passage cutoff for this run (default: embeddingCosineMin); "
        "0 keeps the top 2 chunks whatever their score, for calibration",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=LLM_TIMEOUT_S,
        metavar="S",
        help="model time per claim, all calls together (default "
        f"{LLM_TIMEOUT_S:g} s; the editor uses claimTimeoutS)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    settings = replace(settings or from_sources(), claim_timeout_s=args.timeout)
    if args.cosine_min is not None:
        settings = replace(settings, embedding_cosine_min=args.cosine_min)
    no_model = LLMConfig.from_settings(settings) is None
    try:
        lines = Path(args.file).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        print(f"cannot read {args.file}: {type(e).__name__}", file=sys.stderr)
        return 1
    corpus, problems = _corpus_for(args.corpus, Path(args.file))
    if corpus is None and args.corpus:
        print(problems[0], file=sys.stderr)
        return 1
    items, more = read_items(lines, corpus)
    for p in problems + more:
        print(f"skipped {p}", file=sys.stderr)
    removed = 0
    if args.two_class:
        kept = [i for i in items if i.label is not Verdict.NOT_ENOUGH_INFO]
        removed, items = len(items) - len(kept), kept
    if not items:
        print("no usable items", file=sys.stderr)
        return 1
    if corpus is not None and any(i.doc_id for i in items):
        claims = len({i.line for i in items})
        print(
            f"read as SCITANCE/SciFact: {claims} claims, {len(items)} claim-paper pairs "
            f"(the paper's SCITANCE test split: 91 claims)",
            file=out,
        )
    rationales = [Rationale(i.claim, i.sentences, i.rationale) for i in items if i.rationale and i.sentences]
    if no_model:
        if not rationales:
            print(
                "citelens eval claims needs a model for verdict scores (set CITELENS_LLM_BASE_URL "
                "and CITELENS_LLM_MODEL, see docs/claims.md); without one it measures the evidence "
                "ranking, and this file has no rationale sentences (SciFact/SCITANCE evidence).",
                file=sys.stderr,
            )
            return 2
        print(
            "no model configured: evidence recall only (set CITELENS_LLM_BASE_URL and "
            "CITELENS_LLM_MODEL for the verdict F1)",
            file=out,
        )
        evidence_report(rationales, out)
        return 0
    pairs = asyncio.run(run_items(items, settings, args.abstract_only))
    outcomes = [to_outcome(item, result, args.abstract_only) for item, result in pairs]
    report(outcomes, args.abstract_only, out, two_class=args.two_class, removed=removed)
    retrieval_report([result for _, result in pairs], settings.embedding_cosine_min, out)
    if rationales:
        print("", file=out)
        evidence_report(rationales, out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
