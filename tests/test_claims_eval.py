"""``citelens eval claims`` on the small invented dataset, against the fake model."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from citelens.claims.result import Verdict
from citelens.cli.eval import Outcome, escalation, main, read_items, score
from citelens.core.settings import Settings
from tests.fakes.llm import MODEL, FakeLLM
from tests.fakes.scholarly import ScholarlyFake

DATA = Path(__file__).parent / "data" / "claims" / "pairs.jsonl"
S, C, N = Verdict.SUPPORTS, Verdict.CONTRADICTS, Verdict.NOT_ENOUGH_INFO


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as f:
        yield f


def run(fake: FakeLLM, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main([str(DATA), *args], settings=fake.settings(), out=out)
    return code, out.getvalue()


def test_two_stage_report(fake: FakeLLM) -> None:
    code, text = run(fake)
    assert code == 0
    assert "claims: 14" in text
    assert "micro-F1        78.6" in text
    assert "macro-F1        77.5" in text
    assert "support vs not  78.6" in text
    assert "  SUP        6     0     1" in text  # confusion row for gold SUPPORTS
    for row in ("resolved at phase 1         7  (6 correct)", "escalated to phase 2        7",
                "corrected by phase 2      3", "correctly left NEI        2",
                "wrongly left NEI          1", "flipped to wrong          1"):
        assert row in text, row
    # 14 phase-1 calls + 4 phase-2 calls: 3 escalated claims share no word with their full
    # text, so BM25 finds no passage and no model call is spent on them
    assert fake.chat_calls() == 18


def test_abstract_only_ablation(fake: FakeLLM) -> None:
    code, text = run(fake, "--abstract-only")
    assert code == 0
    assert "abstract only" in text and "micro-F1        57.1" in text
    assert "left NEI (no phase 2)       7" in text
    assert fake.chat_calls() == 14


def test_bad_lines_are_skipped_and_no_model_is_an_error(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    items, problems = read_items([
        "not json", "[1]", '{"claim": "x", "label": "SUPPORTS"}',
        '{"claim": "x", "abstract": "y", "label": "maybe"}',
        '{"claim": "x", "abstract": "y", "label": "nei"}',
        '{"claim": "x", "paper": {"doi": "10.1/x"}, "label": "REFUTES"}',
    ])
    assert [i.label for i in items] == [N, C] and len(problems) == 4
    assert main([str(DATA)], settings=Settings()) == 2
    assert "needs a model" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.jsonl")], settings=Settings(
        llm_base_url="http://127.0.0.1:9/v1", llm_model="m")) == 1


def test_scores_by_hand() -> None:
    outcomes = [Outcome(S, S, S, False), Outcome(C, S, None, True), Outcome(N, N, N, True),
                Outcome(S, N, N, True)]
    s = score(outcomes)
    assert s.micro_f1 == 0.5
    # F1: SUP 2*1/(2+1+1)=0.5, CON 0, NEI 2*1/(2+1+0)=0.667
    assert s.macro_f1 == pytest.approx((0.5 + 0 + 2 / 3) / 3)
    assert s.support_vs_not == 0.5
    e = escalation(outcomes)
    assert (e.resolved_phase1, e.escalated, e.flipped_wrong, e.correctly_left_nei,
            e.wrongly_left_nei) == (1, 3, 1, 1, 1)


# ---------------------------------------------------------------------------- retrieval side

RETRIEVAL = Path(__file__).parent / "data" / "claims" / "retrieval.jsonl"


def run_retrieval(fake: FakeLLM, scholarly: ScholarlyFake, *args: str,
                  **settings: Any) -> str:
    from tests.test_lsp_claims import LATTICES, MONOTONE

    scholarly.add_paper(LATTICES)
    scholarly.add_paper(MONOTONE)
    out = io.StringIO()
    s = scholarly.settings(llm_base_url=fake.url, llm_model=MODEL, allow_private_urls=True,
                           **settings)
    assert main([str(RETRIEVAL), *args], settings=s, out=out) == 0
    return out.getvalue()


def latency_rows(text: str) -> dict[str, tuple[int, float, float]]:
    rows = {}
    for m in re.finditer(r"^  (\S.*?)\s+(\d+)\s+(\d+)\s+(\d+)$", text.split("latency (ms)")[1],
                         re.MULTILINE):
        rows[m.group(1)] = (int(m.group(2)), float(m.group(3)), float(m.group(4)))
    return rows


def test_coverage_and_latency_per_phase(fake: FakeLLM, scholarly_server: ScholarlyFake) -> None:
    text = run_retrieval(fake, scholarly_server)
    assert "claims: 6" in text
    # 3 abstracts given, one found by DOI (Semantic Scholar), one by arXiv id (arXiv API);
    # nobody knows the last DOI. Full texts: 3 claims needed one (phase 1 undecided or no
    # abstract), only the arXiv paper has one (arXiv HTML).
    assert re.search(r"abstract found\s+5/6 \(83\.3%\)\s+sources: given 3, s2 1, arxiv 1",
                     text), text
    assert re.search(r"full text found\s+1/3 \(33\.3%\)\s+of the claims that needed one; "
                     r"sources: arxiv_html 1", text), text
    assert re.search(r"neither\s+1/6 \(16\.7%\)", text), text
    rows = latency_rows(text)
    assert {k: v[0] for k, v in rows.items()} == {
        "abstract retrieval": 6, "phase 1 (abstract)": 5, "full-text retrieval": 3,
        "passage selection": 1, "phase 2 (passages)": 1}
    for _n, p50, p95 in rows.values():
        assert 0 <= p50 <= p95
    assert "passage scores: no passages were ranked with embeddings" in text  # BM25 here
    # the scores as before: 4 right (2 given, 2 retrieved), NEI kept, the unknown DOI wrong
    assert "micro-F1        83.3" in text
    assert "support vs not  100.0  (binary accuracy" in text


def test_two_class_setting(fake: FakeLLM, scholarly_server: ScholarlyFake) -> None:
    text = run_retrieval(fake, scholarly_server, "--two-class")
    assert "claims: 5" in text and "2-class: 1 NOT_ENOUGH_INFO items removed" in text
    # gold SUP 3 (all right), CON 2 (one right, one left NEI: no abstract, no full text)
    assert "accuracy        80.0" in text
    assert "  SUP        3     0     0" in text and "  CON        0     1     1" in text
    assert "  NEI " not in text.split("escalation")[0]  # no NEI row in the 2-class matrix
    assert "predicted NEI: 1 (counted as wrong)" in text
    # F1: SUP 2*3/(6+0+0) = 1.0, CON 2*1/(2+0+1) = 0.667; micro 2*4/(8+0+1) = 0.889
    assert "macro-F1        83.3  (SUPPORTS, CONTRADICTS)" in text
    assert "micro-F1        88.9" in text
    assert "coverage" in text and "abstract found           4/5" in text
    assert fake.chat_calls() == 5  # 4 phase-1 calls + 1 phase 2: the NEI item was never run


def kept_line(text: str) -> tuple[str, list[float]]:
    line = next(t for t in text.splitlines() if t.startswith("  kept "))
    return line, [float(x) for x in re.findall(r"(?:min|p\d+|max) (\d\.\d\d)", line)]


def test_passage_scores_for_calibration(scholarly_server: ScholarlyFake) -> None:
    """The cosines of the kept passages, as the cutoff is moved (the calibration recipe)."""
    with FakeLLM() as fake:
        text = run_retrieval(fake, scholarly_server, embedding_model="fake-embed")
    line, scores = kept_line(text)
    assert "passage scores (embeddings, cutoff 0.50)" in text
    assert line.startswith("  kept 1 passages of 1 claims") and len(scores) == 7
    assert scores[0] == scores[-1] >= 0.50  # one passage: min = max, above the cutoff
    # Cutoff 0 (calibration): the top 2 chunks are kept whatever their score.
    with FakeLLM() as fake:
        loose = run_retrieval(fake, scholarly_server, "--cosine-min", "0",
                              embedding_model="fake-embed")
    line, scores = kept_line(loose)
    assert "cutoff 0.00" in loose and line.startswith("  kept 2 passages of 1 claims")
    assert scores == sorted(scores) and scores[0] < 0.50 <= scores[-1]
    # A cutoff above every chunk keeps nothing and says how close the best chunk came.
    with FakeLLM() as fake:
        strict = run_retrieval(fake, scholarly_server, "--cosine-min", "0.99",
                               embedding_model="fake-embed")
    assert "cutoff 0.99" in strict and "kept no passage" in strict
    assert re.search(r"claims with no chunk at or above the cutoff: 1 \(their best chunk: "
                     r"0\.\d\d\)", strict), strict


SCITANCE = Path(__file__).parent / "data" / "claims" / "scitance"


def test_scitance_layout_as_shipped(fake: FakeLLM, tmp_path: Path) -> None:
    """Labels under evidence[doc_id] (a dict, or SciFact's list), NEI as no evidence, the
    abstracts in corpus.jsonl next to the claims as sentence lists or strings, REFUTE and
    SUPPORTS spellings, citation markers stripped. The real CLI, as in docs/claims.md:
    ``citelens eval claims tests/data/claims/scitance/claims.jsonl``."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "CITELENS_LLM_BASE_URL": fake.url, "CITELENS_LLM_MODEL": MODEL,
           "CITELENS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "eval", "claims", "tests/data/claims/scitance/claims.jsonl"],
        cwd=Path(__file__).parents[1], env=env, capture_output=True, text=True, timeout=120)
    text = proc.stdout
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr  # no line skipped
    assert "read as SCITANCE/SciFact: 5 claims, 6 claim-paper pairs" in text
    assert "claims: 6" in text and "micro-F1        83.3" in text
    for row in ("  SUP        2     0     0", "  CON        1     1     0", "  NEI        0     0     2"):
        assert row in text, row
    claims = [r["json"]["messages"][1]["content"] for r in fake.calls()]
    assert not any(m in c for c in claims for m in ("[3]", "Ortiz", "[CITATION]", "@@CITATION", "[7, 8]"))
    # the title repeats the first sentence: the abstract is the sentences, once each
    assert any(c.count("Beetroot juice lowered systolic") == 2 for c in claims)  # claim + abstract


def test_skipped_lines_name_the_missing_field() -> None:
    from citelens.cli.eval import read_corpus

    corpus, bad = read_corpus(['{"doc_id": 1, "abstract": ["A.", "B."]}', '{"title": "x"}',
                               '{"doc_id": 2}'])
    assert set(corpus) == {"1"} and corpus["1"].abstract == "A. B."
    assert bad == ['corpus line 2: no "doc_id" field',
                   'corpus line 3: no "abstract" field (a string or a list of sentences)']
    items, problems = read_items([
        '{"label": "SUPPORT", "abstract": "x"}',
        '{"claim": "x", "abstract": "y"}',
        '{"claim": "x", "evidence": {"1": {"label": "SUPPORT"}}}',
        '{"claim": "x", "evidence": {"1": {"label": "MAYBE"}}, "cited_doc_ids": [1]}',
        '{"claim": "x", "evidence": {}, "cited_doc_ids": [9]}',
        '{"claim": "x", "evidence": {"1": {"sentences": [0], "label": "REFUTES"}}, "cited_doc_ids": [1]}',
    ], corpus)
    assert [(i.line, i.label, i.doc_id) for i in items] == [(6, C, "1")]
    assert problems == [
        'line 1: no "claim" field (or it is empty)',
        'line 2: no "label" field (or "evidence" with "cited_doc_ids")',
        'line 3: no "cited_doc_ids" field (the papers the claim cites)',
        'line 4, doc 1: "evidence.1.label" must be SUPPORT(S) or CONTRADICT(S)/REFUTE(S)',
        'line 5, doc 9: not in the corpus (no line with this "doc_id")',
    ]


SCIFACT = Path(__file__).parent / "data" / "claims" / "scifact"


def test_evidence_recall_without_a_model_on_scifact_as_shipped(tmp_path: Path) -> None:
    """No model configured: the harness still measures the evidence ranking against the
    rationale sentences (recall@1/2/3), with plain BM25 beside it; the real CLI, as in
    docs/claims.md: ``citelens eval claims tests/data/claims/scifact/claims_dev.jsonl``."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CITELENS_LLM", "OPENAI"))}
    env["CITELENS_CACHE_DIR"] = str(tmp_path / "cache")
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "eval", "claims", "tests/data/claims/scifact/claims_dev.jsonl"],
        cwd=Path(__file__).parents[1], env=env, capture_output=True, text=True, timeout=120)
    text = proc.stdout
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "no model configured: evidence recall only" in text
    # 8 claims, 7 with rationale sentences (the NEI claim has none and is not counted)
    assert "7 claim-paper pairs with rationales" in text
    ours = re.search(r"CiteLens ranking\s+(.*)", text)
    base = re.search(r"BM25 alone\s+(.*)", text)
    assert ours is not None and base is not None, text
    assert ours.group(1).split() == ["71.4", "(5/7)", "85.7", "(6/7)", "85.7", "(6/7)"]
    assert base.group(1).split() == ["28.6", "(2/7)", "57.1", "(4/7)", "85.7", "(6/7)"]
    assert "micro-F1" not in text  # no verdicts without a model


def test_evidence_recall_is_reported_with_a_model_too(fake: FakeLLM) -> None:
    out = io.StringIO()
    code = main([str(SCIFACT / "claims_dev.jsonl")], settings=fake.settings(), out=out)
    text = out.getvalue()
    assert code == 0 and "micro-F1" in text and "claims: 8" in text
    assert "evidence recall@k" in text and "(5/7)" in text


def test_recall_at_k_by_hand() -> None:
    from citelens.claims.eval_evidence import Rationale, recall_at

    pairs = [Rationale("c", ["a", "b", "c"], frozenset({2})), Rationale("c", ["a", "b"], frozenset({0, 1}))]
    ranked = [[2, 0, 1], [1, 0]]
    assert [recall_at(pairs, ranked, k) for k in (1, 2)] == [2, 2]
    assert recall_at(pairs, [[0, 1, 2], [1, 0]], 1) == 1 and recall_at(pairs, [[0, 1, 2], [1, 0]], 3) == 2
