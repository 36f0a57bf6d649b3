"""What a claim check produces: a verdict (or why there is none) and how it was reached.

A :class:`ClaimResult` is plain data: the pipeline fills it, the cache stores it as
JSON, :mod:`citelens.claims.render` turns it into hover Markdown and the language
server turns it into CLAIM_* diagnostics. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Verdict(StrEnum):
    SUPPORTS = "SUPPORTS"
    CONTRADICTS = "CONTRADICTS"
    NOT_ENOUGH_INFO = "NOT_ENOUGH_INFO"


class Status(StrEnum):
    VERDICT = "verdict"  # a model judged the claim (verdict is set)
    NO_LLM = "no_llm"  # no model configured: evidence only, no verdict invented
    ERROR = "error"  # the model answered with something unusable, or could not be reached


class Step(StrEnum):
    """A step of a claim check, as its stage log names it."""

    ABSTRACT = "abstract"
    FULLTEXT = "fulltext"
    PASSAGES = "passages"
    PHASE1 = "phase1"  # the model on the abstract
    PHASE2 = "phase2"  # the model on full-text passages


class StageOutcome(StrEnum):
    """What one step of a claim check came to."""

    ACCEPTED = "accepted"
    REJECTED = "rejected"
    NOT_FOUND = "not_found"
    FAILED = "failed"
    UNAVAILABLE = "unavailable"
    SKIPPED = "skipped"
    OK = "ok"
    ERROR = "error"


@dataclass(slots=True)
class Stage:
    """One attempted retrieval or model step, for the stage log."""

    step: str  # "abstract" | "fulltext" | "phase1" | "phase2" | "embeddings" | ...
    source: str  # "arxiv", "s2", "openalex", "entry_url", "llm", ...
    outcome: str  # "accepted" | "rejected" | "not_found" | "failed" | "skipped" | "ok" ...
    url: str = ""  # secrets stripped
    elapsed_ms: float = 0.0
    detail: str = ""


@dataclass(slots=True)
class ClaimResult:
    claim: str
    paper: str  # a short identity of the cited paper: "doi:10.x/y", "arXiv:1706.03762", title
    status: Status = Status.NO_LLM
    verdict: Verdict | None = None
    rationale: str = ""
    evidence: str = ""  # the model's quote, only when it is in the abstract or passages
    evidence_url: str = ""  # where the evidence text came from
    model_quote: str = ""  # what the model gave as its quote, verified or not (never shown as a quote)
    phase: str = ""  # "abstract" | "full_text" | ""
    phase1_verdict: Verdict | None = None  # for the escalation table
    model: str = ""
    retrieval: str = ""  # "embeddings" | "bm25" | "" (phase 2 only)
    abstract: str = ""
    abstract_source: str = ""
    abstract_url: str = ""
    fulltext_source: str = ""
    fulltext_url: str = ""
    passages: list[str] = field(default_factory=list)
    passage_scores: list[float] = field(default_factory=list)  # cosine of each kept passage
    best_chunk_score: float | None = None  # best cosine of any chunk, kept or not
    best_sentences: list[str] = field(default_factory=list)  # no-LLM evidence (BM25)
    note: str = ""
    error: str = ""
    prompt_version: str = ""
    llm_calls: int = 0
    http_calls: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)  # "abstract", "phase1", ...
    log: list[Stage] = field(default_factory=list)

    @property
    def transient(self) -> bool:
        """Not worth caching: an error, or a retrieval that failed rather than came up empty."""
        if self.status is Status.ERROR:
            return True
        if not self.abstract and not self.passages:
            return any(s.outcome in (StageOutcome.FAILED, StageOutcome.UNAVAILABLE) for s in self.log)
        return False

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        data["verdict"] = self.verdict.value if self.verdict else None
        data["phase1_verdict"] = self.phase1_verdict.value if self.phase1_verdict else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClaimResult:
        d = dict(data)
        d["status"] = Status(d.get("status", "no_llm"))
        d["verdict"] = Verdict(d["verdict"]) if d.get("verdict") else None
        d["phase1_verdict"] = Verdict(d["phase1_verdict"]) if d.get("phase1_verdict") else None
        d["log"] = [Stage(**s) for s in d.get("log", [])]
        known = set(cls.__slots__)
        return cls(**{k: v for k, v in d.items() if k in known})
