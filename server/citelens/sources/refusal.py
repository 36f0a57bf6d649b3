"""A source's refusal: a state of the source, not of an entry (pure: no I/O).

A scholarly host that refuses to answer (its daily budget is spent, it refused the API key,
it serves a challenge page where its API's JSON or XML belongs, it answers a script with
HTTP 202 and no content, it asks to wait longer than a check can) is *out*: the
:class:`~citelens.sources.transport.HostClient` stops asking it at once, with no wait, until
the time it named (a budget's reset, a long ``Retry-After``) or for the rest of the run, and
says so once, with the fix (:attr:`Out.message`). Nothing here is ever a miss: an entry a
refused source would have answered goes to the next tier of the plan.

:func:`refusal_of` reads one answer (status, headers, the start of its body);
:func:`budget_of` reads the rate headers that state a daily budget (OpenAlex's
``X-RateLimit-*-USD``, ``X-RateLimit-Reset``).
"""

from __future__ import annotations

import datetime
import email.utils
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

#: The longest ``Retry-After`` a run waits; a source asking for more is out until then.
LONGEST_WAIT_S = 5.0


class Refusal(StrEnum):
    """Why a source is out."""

    BUDGET = "budget"  # a daily budget (or quota) is spent: until its reset
    KEY = "key"  # the API key was refused, or one is required
    CHALLENGE = "challenge"  # a challenge page (HTML) where the API's JSON or XML belongs
    BOT_CHECK = "bot-check"  # HTTP 202 with no content
    WAIT = "wait"  # a Retry-After longer than a run waits
    BREAKER = "breaker"  # HTTP 429 or 5xx too many times in a row


@dataclass(frozen=True, slots=True)
class Budget:
    """A daily budget as a host's rate headers state it (OpenAlex: ``X-RateLimit-Limit-USD``,
    ``-Remaining-USD``, ``-Cost-USD`` or ``-Cost-Required-USD``, ``X-RateLimit-Reset``)."""

    limit_usd: float | None
    remaining_usd: float | None
    cost_usd: float | None  # the answered (or refused) call's cost
    resets_at: float | None  # epoch seconds
    seen_at: float

    @property
    def spent(self) -> bool:
        """The budget cannot pay for the call it was read from."""
        return (
            self.remaining_usd is not None
            and self.cost_usd is not None
            and self.cost_usd > 0
            and self.remaining_usd < self.cost_usd
        )


@dataclass(frozen=True, slots=True)
class Out:
    """A source that is not asked: why, since and until when, and the line said once."""

    source: str
    refusal: Refusal
    detail: str  # what the source answered, short (no secret: the transport scrubs it)
    since: float  # epoch seconds
    until: float | None  # epoch seconds it may answer again; None: the rest of the run
    keyed: bool  # an API key was set for it
    message: str  # the line said once: what happened and the fix
    remembered: bool = False  # read from the remembered state of an earlier run

    def active(self, now: float | None = None) -> bool:
        return self.until is None or (time.time() if now is None else now) < self.until


@dataclass(frozen=True, slots=True)
class KeyHint:
    """How a source takes a key, for the fix a refusal names: the setting's editor key and
    environment variable, where to get one, and what it buys."""

    editor_key: str
    env: str
    where: str  # "free at openalex.org"
    buys: str  # "$1 a day of searches and filters (no key: $0.10 shared by the IP address)"

    @property
    def setting(self) -> str:
        return f"`{self.editor_key}` / `{self.env}`"


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        n = float(value.strip().lstrip("$"))
    except ValueError:
        return None
    return n if n == n and n >= 0 else None  # not NaN, not negative


def retry_after_s(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """``Retry-After`` in seconds (a number or an HTTP date), or None."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def next_midnight_utc(now: float) -> float:
    return (now // 86400 + 1) * 86400


def budget_of(headers: Mapping[str, str], now: float) -> Budget | None:
    """The daily budget the rate headers state, or None when they state none."""
    limit = _number(headers.get("x-ratelimit-limit-usd"))
    remaining = _number(headers.get("x-ratelimit-remaining-usd"))
    if limit is None and remaining is None:
        return None
    cost = _number(headers.get("x-ratelimit-cost-usd") or headers.get("x-ratelimit-cost-required-usd"))
    reset = _number(headers.get("x-ratelimit-reset"))
    return Budget(limit, remaining, cost, now + reset if reset is not None else None, now)


_BUDGET_WORDS = re.compile(
    r"insufficient budget|daily (?:limit|budget|quota)|quota exceeded|budget (?:is )?(?:spent|exhausted)",
    re.IGNORECASE,
)
_CHALLENGE_TITLE = re.compile(rb"<title[^>]*>([^<]{0,120})</title>", re.IGNORECASE)
#: What a bot check's page says (Cloudflare, Anubis, AWS WAF, captchas): a 403 or 503 page
#: saying so is a challenge, not a server error.
_CHALLENGE_WORDS = re.compile(
    rb"just a moment|checking your browser|cf-chl|challenge-platform|anubis|not a bot|"
    rb"attention required|captcha|ddos protection|awswaf",
    re.IGNORECASE,
)


def _looks_html(content_type: str, head: bytes) -> bool:
    if "html" in content_type.lower():
        return True
    start = head.lstrip()[:15].lower()
    return start.startswith((b"<!doctype html", b"<html"))


def _page_title(head: bytes) -> str:
    m = _CHALLENGE_TITLE.search(head)
    if not m:
        return ""
    title = m.group(1).decode("utf-8", "replace").replace("&#39;", "'").replace("&amp;", "&")
    return " ".join(title.split())[:80]


def _error_text(head: bytes) -> str:
    """The ``message`` or ``error`` of a JSON error body, else the body's first words."""
    text = head[:2000].decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:160]
    if isinstance(data, dict):
        return str(data.get("message") or data.get("error") or "")[:160]
    return ""


@dataclass(frozen=True, slots=True)
class Refused:
    """What one answer says about its source: why it is out, in words, and until when."""

    refusal: Refusal
    detail: str
    until: float | None


def refusal_of(
    status: int,
    headers: Mapping[str, str],
    head: bytes,
    *,
    expects: str,
    keyed: bool,
    now: float,
    longest_wait_s: float = LONGEST_WAIT_S,
) -> Refused | None:
    """Whether this answer refuses (None: it is an answer, or throttling a retry cures).

    ``headers`` with lower-case names; ``head``: the start of the body; ``expects``: the
    format the API answers in (``json``, ``xml``, ``any``); ``keyed``: a key was sent."""
    ctype = headers.get("content-type", "")
    said = _error_text(head) if status in (401, 402, 403, 429) else ""
    if status in (402, 403, 429):
        budget = budget_of(headers, now)
        if (budget is not None and budget.spent) or _BUDGET_WORDS.search(said):
            wait = _number(headers.get("x-ratelimit-reset")) or retry_after_s(headers, now)
            until = now + wait if wait else next_midnight_utc(now)
            left = ""
            if budget is not None and budget.remaining_usd is not None and budget.limit_usd is not None:
                left = f" (${budget.remaining_usd:g} of ${budget.limit_usd:g} left)"
            return Refused(Refusal.BUDGET, f"HTTP {status}: daily budget spent{left}", until)
    challenge = _CHALLENGE_WORDS.search(head) or headers.get("cf-mitigated") == "challenge"
    if status in (403, 503) and challenge and _looks_html(ctype, head):
        title = _page_title(head)
        what = f"“{title}”" if title else (ctype.split(";")[0] or "HTML")
        return Refused(Refusal.CHALLENGE, f"HTTP {status}: a challenge page ({what})", None)
    throttled = status == 403 and "rate limit" in said.lower()  # OpenAlex's 403: "slow down"
    if status == 401 or (status == 403 and keyed and not throttled):
        what = "refused the API key" if keyed else "asks for an API key"
        return Refused(Refusal.KEY, f"HTTP {status}: {what}" + (f" ({said})" if said else ""), None)
    if status in (429, 503):
        wait = retry_after_s(headers, now)
        if wait is not None and wait > longest_wait_s:
            return Refused(Refusal.WAIT, f"HTTP {status}: asked to wait {_duration(wait)}", now + wait)
    if status == 202 and (not head.strip() or "x-amzn-waf-action" in headers):
        return Refused(Refusal.BOT_CHECK, "HTTP 202 with no content (a bot check)", None)
    if status == 200 and expects in ("json", "xml") and _looks_html(ctype, head):
        title = _page_title(head)
        kind = "JSON" if expects == "json" else "XML"
        what = f"“{title}”" if title else (ctype.split(";")[0] or "HTML")
        said = f"HTTP 200: a challenge page ({what}, text/html) instead of {kind}"
        return Refused(Refusal.CHALLENGE, said, None)
    return None


def _duration(seconds: float) -> str:
    s = round(seconds)
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _clock(when: float) -> str:
    return time.strftime("%H:%M UTC", time.gmtime(when))


def _what(detail: str) -> str:
    """A refusal's detail without its status ("HTTP 429: daily budget spent" -> "daily …")."""
    return detail.split(": ", 1)[-1]


def message(
    label: str, r: Refused, *, keyed: bool, hint: KeyHint | None, now: float, free_calls: bool = False
) -> str:
    """The line said once when ``label`` goes out: what happened and the fix."""
    until = "until the reset"
    if r.until is not None:
        until = f"until {_clock(r.until)} (in {_duration(max(0.0, r.until - now))})"
    meanwhile = "the other sources decide meanwhile"
    if r.refusal is Refusal.BUDGET:
        if hint is not None and not keyed:
            head = f"{label}'s daily budget is spent (no API key): set {hint.setting}, {hint.where}"
        elif keyed:
            head = f"{label}'s daily budget is spent (with your API key)"
        else:
            head = f"{label}'s daily quota is spent"
        asked = f"{label} is asked only what is free" if free_calls else f"{label} is not asked"
        return f"{head}. {asked} {until}; {meanwhile}"
    if r.refusal is Refusal.KEY:
        fix = ""
        if hint is not None:
            fix = f": check {hint.setting}" if keyed else f": set {hint.setting}, {hint.where}"
        return f"{label} {_what(r.detail)}{fix}; not asked again in this run, {meanwhile}"
    if r.refusal is Refusal.WAIT:
        return f"{label} {_what(r.detail)} ({r.detail.split(':')[0]}): not asked {until}; {meanwhile}"
    if r.refusal is Refusal.BREAKER:
        fix = ""
        if hint is not None and not keyed:
            fix = f"; for a rate of your own set {hint.setting}, {hint.where}"
        return f"{label} {r.detail}; not asked again in this run{fix}"
    return f"{label} {_what(r.detail)}: not asked again in this run, {meanwhile}"
