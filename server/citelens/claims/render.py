"""Hover Markdown for a claim check: verdict, rationale, evidence, how it was reached."""

from __future__ import annotations

from citelens.claims.result import ClaimResult, StageOutcome, Status, Step, Verdict
from citelens.core.mdplain import link_target, plain
from citelens.sources.names import source_name

MARKERS = {
    Verdict.SUPPORTS: "✅ SUPPORTS",
    Verdict.CONTRADICTS: "❌ CONTRADICTS",
    Verdict.NOT_ENOUGH_INFO: "❔ NOT ENOUGH INFO",
}
PHASES = {"abstract": "abstract", "full_text": "full text"}
MAX_LOG_LINES = 8
PENDING = "⏳ Checking claim…"
#: No model: the abstract is being looked up (there is no check to wait for).
LOOKING_UP = "Looking up the abstract of the cited paper…"
NO_MODEL = (
    "ℹ️ Claim check: no model configured (no verdict); set citelens.llmBaseUrl and "
    "citelens.llmModel, see docs/claims.md"
)
#: No abstract: the sources answered, and none has one (no evidence without it).
NO_ABSTRACT = (
    "No abstract of the cited paper: {sources} {have} none for it, so there are no sentences to show."
)
#: A hover is complete when sent (LSP cannot update it): the lookup still running, plainly.
STILL_LOOKING = "Looking up the abstract of the cited paper: {so_far}; hover again in a few seconds."
STILL_CHECKING = "⏳ Checking claim… the model has not answered yet; hover again for its verdict."
#: No sentence of the abstract shares a content word with the claim (instead of its start).
NO_OVERLAP = "no sentence of it shares a content word with the claim."
#: A quoted sentence is cut only beyond this: of the 5,878 sentences of the 780 abstracts in
#: the recorded API answers (tests/fixtures/apis), 5.2% are longer than 300 characters,
#: 1.7% than 400, 0.3% than 600.
QUOTE_MAX = 600
#: The model's quote is not in the abstract or passages (or it gave none): not shown as one.
NO_VERIFIABLE_QUOTE = (
    "The model gave no verifiable quote: its words are not in the abstract or passages it was given."
)
#: The model quoted nothing.
NO_QUOTE = "The model gave no verifiable quote (it quoted nothing)."
#: Marks the abstract sentence closest to the claim.
BEST = "★"
#: How phase 2 picked its passages.
EMBEDDINGS = "embeddings (cosine)"
BM25_INSTEAD = "BM25 word overlap (no embedding endpoint configured: set embeddingModel for embeddings)"


def _quote(text: str, limit: int = 400) -> str:
    """``text`` on one line, at most ``limit`` characters, inert as Markdown."""
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return plain(text)  # no backslash escapes: Neovim would show them


def _link(label: str, url: str) -> str:
    if not url:
        return label
    safe = link_target(url)  # an http(s) URL, percent-encoded whole; else no link
    return f"[{label}]({safe})" if safe else label


def render_pending(claim: str = "", live: ClaimResult | None = None) -> str:
    """What the hover shows while the check runs: the evidence found so far, if any."""
    evidence = _evidence(live) if live is not None else []
    if not evidence:
        return PENDING + (f"\n\n> {_quote(claim, QUOTE_MAX)}" if claim else "")
    return "\n".join(
        [
            PENDING,
            "",
            "Waiting for the model; the evidence so far:",
            *evidence,
            "",
            f"*Claim:* {_quote(claim, QUOTE_MAX)}",
        ]
    )


def render_no_paper(reason: str) -> str:
    """No paper verification accepted: one line saying why, no abstract, no check."""
    return _quote(reason, 300)


def render_no_claim(reason: str, claim: str) -> str:
    """No claim at the citation (".", a table cell, a list of names): why, and the text."""
    return "\n".join([_quote(reason, 300), "", f"*Text at the citation:* {_quote(claim, QUOTE_MAX)}"])


def render_looking_up(claim: str, note: str = "") -> str:
    """No model, no abstract known yet: say what happens, never "Checking claim"."""
    return "\n".join([NO_MODEL, "", LOOKING_UP, "", f"*Claim:* {_quote(claim, QUOTE_MAX)}"])


def _names(sources: list[str]) -> str:
    """``Semantic Scholar, OpenAlex and Crossref``."""
    return sources[0] if len(sources) == 1 else ", ".join(sources[:-1]) + " and " + sources[-1]


def _abstract_answers(result: ClaimResult) -> tuple[list[str], list[str]]:
    """(the sources asked for the abstract that have none for the paper, those that could
    not be asked), each named once, in the order asked."""
    none: dict[str, None] = {}
    failed: dict[str, None] = {}
    for stage in result.log:
        if stage.step != Step.ABSTRACT or stage.source == "given":
            continue
        src = stage.source.removeprefix("record:")
        name = "the entry's URL" if src == "entry_url" else source_name(src)
        if stage.outcome in (StageOutcome.NOT_FOUND, StageOutcome.REJECTED):
            none[name] = None
        elif stage.outcome in (StageOutcome.FAILED, StageOutcome.UNAVAILABLE):
            failed[name] = None
    return [n for n in none if n not in failed], list(failed)


def _no_abstract(result: ClaimResult) -> list[str]:
    """Why there is no evidence: the sources that have no abstract for the paper, and
    those that could not be asked ([] with an abstract, or when nothing was asked)."""
    if result.abstract:
        return []
    none, failed = _abstract_answers(result)
    out = []
    if none:
        out.append(NO_ABSTRACT.format(sources=_names(none), have="has" if len(none) == 1 else "have"))
    if failed:
        out.append(f"{_names(failed)} could not be asked for it; a later hover asks again.")
    return ["", " ".join(out)] if out else []


def _still_looking(live: ClaimResult | None) -> str:
    none, failed = _abstract_answers(live) if live is not None else ([], [])
    said = [f"{_names(none)} {'has' if len(none) == 1 else 'have'} none"] if none else []
    said += [f"{_names(failed)} could not be asked"] if failed else []
    so_far = "; ".join(said) + ", the other sources are still being asked" if said else (
        "its sources are answering behind the verification's requests"
    )
    return STILL_LOOKING.format(so_far=so_far)


def render_unsettled(claim: str, live: ClaimResult | None, no_model: bool) -> str:
    """What a hover says when the check did not finish within its wait: what is missing,
    without promising an update (LSP has no hover refresh)."""
    if no_model:
        return "\n".join([NO_MODEL, "", _still_looking(live), "", f"*Claim:* {_quote(claim, QUOTE_MAX)}"])
    evidence = _evidence(live) if live is not None else []
    if evidence:
        evidence = ["", "The evidence so far:", *evidence]
    return "\n".join([STILL_CHECKING, *evidence, "", f"*Claim:* {_quote(claim, QUOTE_MAX)}"])


def _evidence(result: ClaimResult) -> list[str]:
    """The abstract's sentences closest to the claim, best first, with the abstract's source
    link ([] without abstract); says so when no sentence shares a word with the claim."""
    if not result.abstract:
        return []
    source = _link(result.abstract_source, result.abstract_url)
    if not result.best_sentences:
        return ["", f"Abstract ({source}): {NO_OVERLAP}"]
    out = ["", f"Abstract ({source}), the sentences closest to the claim, best first ({BEST} the best):"]
    return out + [
        f"> {BEST + ' ' if i == 0 else ''}{_quote(s, QUOTE_MAX)}" for i, s in enumerate(result.best_sentences)
    ]


def _log(result: ClaimResult) -> list[str]:
    lines = ["", "---", "", "Stages:", ""]
    shown = result.log[-MAX_LOG_LINES:]
    if len(result.log) > len(shown):
        lines.append(f"- … {len(result.log) - len(shown)} earlier stages")
    for s in shown:
        where = f" {s.url}" if s.url else ""
        detail = f" ({_quote(s.detail, 120)})" if s.detail else ""
        lines.append(f"- {s.step} · {s.source}: {s.outcome}{detail} · {s.elapsed_ms:.0f} ms{where}")
    return lines


def render_markdown(result: ClaimResult, verbose: bool = False) -> str:
    """The hover text for a finished check; ``verbose`` adds how it was reached (model,
    phase, passages and the stages with their timings and addresses)."""
    out: list[str] = []
    if result.status is Status.ERROR:
        out.append("⚠️ **Claim check failed**")
        out.append("")
        out.append(_quote(result.error or "unknown error", 300))
        out += _evidence(result) or _no_abstract(result)
        if result.fulltext_url:
            out += ["", f"Full text: {_link(result.fulltext_source, result.fulltext_url)}"]
    elif result.status is Status.NO_LLM:
        out.append(NO_MODEL)
        out += _evidence(result) or _no_abstract(result)
    else:
        verdict = result.verdict or Verdict.NOT_ENOUGH_INFO
        out.append(f"**{MARKERS[verdict]}**")
        if result.rationale:
            out += ["", _quote(result.rationale, 300)]
        if result.evidence:
            out += [
                "",
                f"> “{_quote(result.evidence, QUOTE_MAX)}” — "
                f"{_link(PHASES.get(result.phase, 'source'), result.evidence_url)}",
            ]
        else:
            out += ["", NO_VERIFIABLE_QUOTE if result.model_quote.strip() else NO_QUOTE]
        out += _evidence(result)
        facts = []
        if result.phase:
            facts.append(f"phase: {PHASES.get(result.phase, result.phase)}")
        if result.model:
            facts.append(f"model: `{result.model}`")
        if result.retrieval:
            facts.append("passages: " + (EMBEDDINGS if result.retrieval == "embeddings" else BM25_INSTEAD))
        if facts and verbose:
            out += ["", " · ".join(facts)]
        if result.note:
            out += ["", _quote(result.note, 300)]
    out += ["", f"*Claim:* {_quote(result.claim, QUOTE_MAX)}"]
    if result.log and verbose:
        out += _log(result)
    return "\n".join(out)
