"""Strict parsing of a model's answer: exactly one JSON object with an allowed verdict.

Anything else (prose, two objects, a bare word, an unknown verdict) is rejected, so
text that a paper smuggles into the answer cannot become a verdict.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from citelens.claims.result import Verdict

_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.DOTALL | re.IGNORECASE)
_ALIASES = {"NEI": "NOT_ENOUGH_INFO", "NOT ENOUGH INFO": "NOT_ENOUGH_INFO"}


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    rationale: str
    evidence: str


def parse_judgement(content: str) -> Judgement | str:
    """The judgement in ``content``, or a short description of why there is none."""
    text = content.strip()
    m = _FENCE.match(text)
    if m:
        text = m.group(1).strip()
    if not text.startswith("{"):
        return "answer is not a JSON object"
    try:
        data, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError:
        return "answer is not valid JSON"
    if text[end:].strip():
        return "answer has text after the JSON object"
    if not isinstance(data, dict):
        return "answer is not a JSON object"
    raw = data.get("verdict")
    if not isinstance(raw, str):
        return "answer has no verdict"
    key = " ".join(raw.strip().upper().split())
    key = _ALIASES.get(key, key.replace(" ", "_"))
    try:
        verdict = Verdict(key)
    except ValueError:
        return f"unknown verdict {raw[:40]!r}"
    rationale = data.get("rationale", data.get("reasoning", ""))
    evidence = data.get("evidence", "")
    return Judgement(
        verdict,
        " ".join(str(rationale).split())[:600] if rationale else "",
        " ".join(str(evidence).split())[:600] if evidence else "",
    )
