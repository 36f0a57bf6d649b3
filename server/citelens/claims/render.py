"""Hover Markdown for a claim check: verdict, rationale, evidence, how it was reached."""

from __future__ import annotations

from citelens.claims.result import ClaimResult, Status, Verdict
from citelens.mdplain import plain

MARKERS = {
    Verdict.SUPPORTS: "✅ SUPPORTS",
    Verdict.CONTRADICTS: "❌ CONTRADICTS",
    Verdict.NOT_ENOUGH_INFO: "❔ NOT ENOUGH INFO",
}
PHASES = {"abstract": "abstract", "full_text": "full text"}
MAX_LOG_LINES = 8
PENDING = "⏳ Checking claim…"


def _quote(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return plain(text)  # no backslash escapes: Neovim would show them


def _link(label: str, url: str) -> str:
    if not url:
        return label
    safe = url.replace(")", "%29").replace(" ", "%20")
    return f"[{label}]({safe})"


def render_pending(claim: str = "") -> str:
    """What the hover shows while the check runs."""
    return PENDING + (f"\n\n> {_quote(claim, 300)}" if claim else "")


def _log(result: ClaimResult) -> list[str]:
    lines = ["", "---", "", "Stages:", ""]
    shown = result.log[-MAX_LOG_LINES:]
    if len(result.log) > len(shown):
        lines.append(f"- … {len(result.log) - len(shown)} earlier stages")
    for s in shown:
        where = f" {s.url}" if s.url else ""
        detail = f" ({_quote(s.detail, 120)})" if s.detail else ""
        lines.append(f"- {s.step} · {s.source}: {s.outcome}{detail} · {s.elapsed_ms:.0f} ms"
                     f"{where}")
    return lines


def render_markdown(result: ClaimResult) -> str:
    """The hover text for a finished check."""
    out: list[str] = []
    if result.status is Status.ERROR:
        out.append("⚠️ **Claim check failed**")
        out.append("")
        out.append(_quote(result.error or "unknown error", 300))
    elif result.status is Status.NO_LLM:
        out.append("ℹ️ **Claim check: no model configured** (no verdict)")
        if result.abstract:
            out += ["", f"Abstract ({_link(result.abstract_source, result.abstract_url)}):"]
            if result.best_sentences:
                out += [f"> {_quote(s, 300)}" for s in result.best_sentences]
            else:
                out.append(f"> {_quote(result.abstract)}")
        out += ["", _quote(result.note, 400)]
    else:
        verdict = result.verdict or Verdict.NOT_ENOUGH_INFO
        out.append(f"**{MARKERS[verdict]}**")
        if result.rationale:
            out += ["", _quote(result.rationale, 300)]
        if result.evidence:
            out += ["", f"> “{_quote(result.evidence, 400)}” — "
                    f"{_link(PHASES.get(result.phase, 'source'), result.evidence_url)}"]
        facts = []
        if result.phase:
            facts.append(f"phase: {PHASES.get(result.phase, result.phase)}")
        if result.model:
            facts.append(f"model: `{result.model}`")
        if result.retrieval:
            facts.append("passages: " + ("embeddings" if result.retrieval == "embeddings"
                                         else "BM25 (no embedding model)"))
        if facts:
            out += ["", " · ".join(facts)]
        if result.note:
            out += ["", _quote(result.note, 300)]
    out += ["", f"*Claim:* {_quote(result.claim, 300)}"]
    if result.log:
        out += _log(result)
    return "\n".join(out)
