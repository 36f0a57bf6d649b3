"""Claim extraction and the claim gate on citing sentences in the forms real papers use
(``tests/data/claims/extraction``): the text the hover would judge, or no claim at all
(a table cell, a caption, a heading, a list of names, ".")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from citelens.claims.claimhood import no_claim_reason
from citelens.claims.sentences import extract_claim
from citelens.core.model import Span

DATA = Path(__file__).parent / "data" / "claims" / "extraction"


def load(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def judged_text(case: dict[str, Any]) -> str | None:
    """The claim the hover would judge for ``case``, or ``None`` (no claim to check here)."""
    text, key = case["text"], case["key"]
    at = text.index(key)
    span = Span(at, at + len(key))
    claim = extract_claim(text, span, case["language"])
    return None if no_claim_reason(text, span, case["language"], claim) else claim


CASES = load("cases.jsonl") + load("held_out.jsonl") + load("held_out_2.jsonl")


@pytest.mark.parametrize("case", CASES, ids=[f"{c['language']}-{c['key']}-{i}" for i, c in enumerate(CASES)])
def test_the_claim_a_reader_picks(case: dict[str, Any]) -> None:
    assert judged_text(case) == case["expected"], case["note"]


def test_the_set_covers_both_languages_and_no_claim_places() -> None:
    assert {c["language"] for c in CASES} == {"latex", "markdown"}
    notes = " ".join(c["note"] for c in CASES if c["expected"] is None)
    for place in ("table cell", "caption", "heading", "list of names"):
        assert place in notes
