"""``citelens eval claims`` on the small invented dataset, against the fake model."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from citelens.claims.result import Verdict
from citelens.cli.eval import Outcome, escalation, main, read_items, score
from citelens.core.settings import Settings
from tests.fakes.llm import FakeLLM

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
