"""Talking to one scholarly host politely: rate limits, timeouts, retries, availability.

A :class:`HostClient` wraps a shared :class:`httpx.AsyncClient` for one API host.
Every request it makes is

* spaced: request *starts* are at least ``min_interval_s`` apart, and at most
  ``max_concurrency`` requests are in flight;
* bounded: the whole exchange (connect, send, read) is cut at ``timeout_s``;
* retried on HTTP 429 after ``Retry-After`` seconds (capped) or ``retry_backoff_s``, and
  on 5xx and connection errors (refused, reset, closed) after ``Retry-After`` or a backoff
  doubling from ``retry_backoff_s`` (capped at ``MAX_BACKOFF_S``), at most ``max_retries``
  times; a retry pauses the whole host; only an answer still failed after the retries is
  a failed lookup (the caller goes to its next source);
* paced with a margin under each host's documented rate (``PACING_MARGIN``): requests that
  leave exactly at the limit do not arrive exactly at it;
* paced adaptively: a 429 widens the spacing (up to ``MAX_WIDEN`` times the rate's),
  and every usable answer narrows it back a little, so a limit a bit stricter than
  the configured rate costs a few 429s, not one in ten;
* cut off by a circuit breaker: after ``BREAKER_THRESHOLD`` answers in a row that are
  429 or 5xx, the host is not asked again (calls return ``UNAVAILABLE``) until
  :meth:`Sources.reset_availability`; logged once;
* out when it refuses (:mod:`citelens.sources.refusal`: its daily budget is spent, it
  refused the key, a challenge page where its API's JSON or XML belongs, HTTP 202 with no
  content, a ``Retry-After`` over ``LONGEST_WAIT_S``): no retry and no wait; later calls
  return ``UNAVAILABLE`` at once (a call the host does not charge for, ``free=True``, still
  goes while a budget is spent) until the time it named, else for the rest of the run;
  said once with the fix (:attr:`HostClient.out`, :meth:`Sources.outs`);
* on a network problem the retries did not cure (or a timeout) the host is marked unavailable:
  later calls return ``UNAVAILABLE`` without a request until ``unavailable_for_s``
  has passed or :meth:`Sources.reset_availability` is called, and the log callback
  hears about it once per outage.

The outcome of one exchange is a :class:`HostResult`; source modules turn it into
a :class:`~citelens.sources.records.Lookup`. No API key ever reaches a URL that is
logged, a detail string, or an exception message: keys travel in headers or query
parameters whose values are scrubbed from everything human-readable.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

import httpx

from citelens.core.identifiers import normalize_doi
from citelens.core.secrets import redact_url
from citelens.core.settings import SETTINGS, SettingDoc, Settings, url_setting_doc
from citelens.core.source_names import Source
from citelens.sources import remembered
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.sources.refusal import Budget, KeyHint, Out, Refusal, Refused, budget_of, message, refusal_of

Log = Callable[[str], None]

#: Longest ``Retry-After`` we honour (a server asking for more than ``refusal.LONGEST_WAIT_S``
#: is out until then, not waited for).
MAX_RETRY_AFTER_S = 60.0
#: Answers in a row that are HTTP 429 or 5xx after which a host is not asked again.
BREAKER_THRESHOLD = 5
#: A 429 multiplies the host's spacing by this, up to ``MAX_WIDEN`` x the rate's spacing;
#: each usable answer divides it by ``NARROW`` (never below the rate's spacing).
WIDEN = 1.5
MAX_WIDEN = 2.0
NARROW = 1.05
#: Every host is paced this much slower than its documented limit: requests that leave
#: exactly 1 s apart (arXiv: 3 s) do not arrive exactly that far apart.
PACING_MARGIN = 1.1
#: Longest wait before retrying a 5xx or a connection error (no ``Retry-After``).
MAX_BACKOFF_S = 10.0
USER_AGENT = "CiteLens/0.1 (citation checker; https://github.com/citelens/citelens)"


@dataclass(frozen=True, slots=True)
class Rate:
    """How fast one host may be asked: spacing of request starts and parallelism."""

    min_interval_s: float
    max_concurrency: int = 1

    @classmethod
    def per_second(cls, n: float, max_concurrency: int = 1) -> Rate:
        return cls(1.0 / n if n > 0 else 0.0, max_concurrency)


@dataclass(slots=True)
class HostResult:
    """One exchange with a host: a usable response, or why there is none."""

    response: httpx.Response | None
    outcome: Outcome | None  # None when ``response`` is usable; else FAILED/UNAVAILABLE
    detail: str
    elapsed_ms: float
    url: str = ""  # redacted

    @property
    def ok(self) -> bool:
        return self.response is not None


@dataclass(slots=True)
class _Down:
    since: float
    reason: str


class HostClient:
    """One scholarly API host: rate limiter, retry policy and availability state."""

    def __init__(
        self,
        name: str,
        label: str,
        base_url: str,
        client: httpx.AsyncClient,
        *,
        rate: Rate,
        timeout_s: float = 10.0,
        retry_backoff_s: float = 2.0,
        max_retries: int = 3,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        secrets: tuple[str, ...] = (),
        log: Log | None = None,
        unavailable_for_s: float = 60.0,
        offline: bool = False,
        max_body_bytes: int = 16 << 20,
        expects: str = "json",
        key_hint: KeyHint | None = None,
        keyed: bool = False,
        free_calls: bool = False,
    ) -> None:
        self.name = str(name)  # a plain str: it shows in logs as a dict key
        #: The format its API answers in (``json``, ``xml``, ``any``): an HTML page instead is a
        #: challenge, never an answer.
        self.expects = expects
        #: How it takes a key (the fix its refusals name), and whether one is set.
        self.key_hint = key_hint
        self.keyed = keyed
        #: Some calls cost nothing while its budget is spent (OpenAlex's lookups by id or DOI).
        self.free_calls = free_calls
        #: Why it is not asked (a refusal, the circuit breaker), None: it is asked.
        self.out: Out | None = None
        #: The daily budget its last answer stated (OpenAlex's X-RateLimit-*-USD headers).
        self.budget: Budget | None = None
        #: Called once when it goes out (the client set remembers a budget's state).
        self.on_out: Callable[[Out], None] | None = None
        self._targets_said: set[str] = set()  # redirect targets whose refusal was said
        #: An answer longer than this (on the wire or decompressed) is a failed lookup.
        self.max_body_bytes = max_body_bytes
        self.label = label
        self.base_url = base_url.rstrip("/")
        self.rate = rate
        self.timeout_s = timeout_s
        self.retry_backoff_s = retry_backoff_s
        self.max_retries = max_retries
        self.unavailable_for_s = unavailable_for_s
        self.offline = offline
        self._client = client
        self._headers = dict(headers or {})
        self._params = dict(params or {})
        self._secrets = tuple(s for s in secrets if s)
        self._log = log or (lambda _msg: None)
        self._semaphore = asyncio.Semaphore(max(1, rate.max_concurrency))
        self._slot_lock = asyncio.Lock()
        self._next_start = 0.0
        self._down: _Down | None = None
        self._interval = rate.min_interval_s  # current spacing (widened after a 429)
        self._bad_in_a_row = 0  # answers in a row that were 429 or 5xx
        self._cured_said = False  # a network problem cured by a retry was logged
        #: HTTP requests actually sent (retries included).
        self.requests = 0
        #: Of those, answered HTTP 429.
        self.too_many = 0
        #: Calls answered UNAVAILABLE without a request.
        self.skipped = 0
        #: Waits for a slot of a limiter shared with other processes (a Ray actor on a
        #: cluster: ``scale/cluster.py``), called with the host's name and spacing after
        #: this client's own spacing; None: this process is the only one asking.
        self.shared_pacer: Callable[[str, float], Awaitable[None]] | None = None

    # ------------------------------------------------------------------ availability

    @property
    def available(self) -> bool:
        return self.asked()

    def asked(self, free: bool = False) -> bool:
        """Whether a call is sent now (``free``: one the host does not charge for, which a
        spent budget does not stop)."""
        if self.offline:
            return False
        out = self.out
        if out is not None:
            if not out.active():
                self.out = None  # the time it named has come: ask again
            elif not (free and self.free_calls and out.refusal is Refusal.BUDGET):
                return False
        if self._down is None:
            return True
        if time.monotonic() - self._down.since >= self.unavailable_for_s:
            self._down = None
            return True
        return False

    def reset_availability(self) -> None:
        """Forget an outage, a tripped breaker and a refusal: the next call asks the host
        again; a refusal that named its time (a budget's reset, a long Retry-After) stands
        until then."""
        self._down = None
        if self.out is not None and (self.out.until is None or not self.out.active()):
            self.out = None
        self._bad_in_a_row = 0
        self._cured_said = False

    def go_out(self, refused: Refused, *, remembered: bool = False, since: float | None = None) -> Out:
        """Stop asking this host (``refused`` says why and until when); said once."""
        now = time.time()
        out = Out(
            self.name,
            refused.refusal,
            self.scrub(refused.detail),
            now if since is None else since,
            refused.until,
            self.keyed,
            self.scrub(
                message(
                    self.label,
                    refused,
                    keyed=self.keyed,
                    hint=self.key_hint,
                    now=now,
                    free_calls=self.free_calls,
                )
            ),
            remembered,
        )
        first = self.out is None or self.out.refusal is not out.refusal
        self.out = out
        if first:
            self._log(out.message)
            if self.on_out is not None:
                self.on_out(out)
        return out

    def _mark_down(self, reason: str) -> None:
        if self._down is None:
            self._log(self.scrub(f"{self.label} unavailable: {reason}"))
        self._down = _Down(time.monotonic(), reason)

    def _answered(self, status: int) -> None:
        """Pacing and circuit breaker bookkeeping for one HTTP answer."""
        base = self.rate.min_interval_s
        if status == 429:
            self.too_many += 1
            self._interval = min(max(self._interval, base) * WIDEN, base * MAX_WIDEN)
        else:
            self._interval = max(base, self._interval / NARROW)
        if status != 429 and status < 500:
            self._bad_in_a_row = 0
            return
        self._bad_in_a_row += 1
        if self._bad_in_a_row >= BREAKER_THRESHOLD and (self.out is None or not self.out.active()):
            n = self._bad_in_a_row
            self.go_out(Refused(Refusal.BREAKER, f"answered HTTP 429 or 5xx {n} times in a row", None))

    # ------------------------------------------------------------------ secrets

    def scrub(self, text: str) -> str:
        """``text`` with every secret of this host replaced by ``***``."""
        for s in self._secrets:
            text = text.replace(s, "***")
        return text

    def records_found(
        self, method: str, records: list[PaperRecord], elapsed_ms: float, none: str = "no search results"
    ) -> Lookup:
        """FOUND with ``records``, or NOT_FOUND saying ``none`` when there are none."""
        outcome = Outcome.FOUND if records else Outcome.NOT_FOUND
        return self.lookup(method, outcome, records, "" if records else none, elapsed_ms)

    def lookup(
        self,
        method: str,
        outcome: Outcome,
        records: list[PaperRecord] | None = None,
        detail: str = "",
        elapsed_ms: float = 0.0,
    ) -> Lookup:
        """A :class:`Lookup` from this host, its detail scrubbed of secrets."""
        return Lookup(
            self.name if self.name != Source.NCBI else Source.PUBMED,
            method,
            outcome,
            records or [],
            self.scrub(detail)[:300],
            elapsed_ms,
        )

    def failed(self, method: str, result: HostResult) -> Lookup:
        """The Lookup for an exchange that produced no usable response."""
        return self.lookup(method, result.outcome or Outcome.FAILED, [], result.detail, result.elapsed_ms)

    def batch_answer(
        self,
        method: str,
        result: HostResult,
        why: str,
        found: Mapping[str, PaperRecord],
        key: str,
        missing: str,
    ) -> Lookup:
        """The Lookup for one id of a batch request: failed exchange, unreadable body
        (``why``), found, or answered without it (``missing`` says so)."""
        if not result.ok:
            return self.failed(method, result)
        if why:
            return self.lookup(method, Outcome.FAILED, [], why, result.elapsed_ms)
        if key in found:
            return self.lookup(method, Outcome.FOUND, [found[key]], "", result.elapsed_ms)
        return self.lookup(method, Outcome.NOT_FOUND, [], missing, result.elapsed_ms)

    # ------------------------------------------------------------------ requests

    async def _wait_for_slot(self) -> None:
        async with self._slot_lock:
            if not self.asked(free=True):  # nothing will be sent: do not wait for (or take) a slot
                return
            now = time.monotonic()
            wait = self._next_start - now
            if wait > 0:
                await asyncio.sleep(wait)
                now = time.monotonic()
            self._next_start = max(now, self._next_start) + self._interval
            if self.shared_pacer is not None:
                await self.shared_pacer(self.name, self._interval)

    async def _departed(self, event: str, _info: Mapping[str, object]) -> None:
        """httpcore's trace of a request: the next start is an interval after this request
        really went out. A request that left late (the loop busy between its slot and its
        headers) would otherwise reach the host just before the next one, booked on time:
        a 429 from a host that counts the gap (Crossref's public pool, one at a time)."""
        if event.endswith("send_request_headers.started"):
            self._next_start = max(self._next_start, time.monotonic() + self._interval)

    def next_slot_in(self) -> float:
        """Seconds until a request to this host could start (its spacing, a ``Retry-After``
        pause); 0: now. A caller that batches may gather more values for that long."""
        if not self.available:  # out: a call returns at once, nothing to wait for
            return 0.0
        return max(0.0, self._next_start - time.monotonic())

    def _skipped(self) -> str:
        """Why a call was not sent: a network outage says "unavailable" (an entry's verdict
        reads it as unreachable), a refusal says what the host answered."""
        if self.offline:
            return f"{self.label} unavailable: offline"
        if self.out is not None and self.out.active():
            return f"{self.label} not asked: {self.out.detail}"
        return f"{self.label} unavailable: {self._down.reason if self._down else ''}"

    def _pause(self, seconds: float) -> None:
        self._next_start = max(self._next_start, time.monotonic() + seconds)

    def _retry_after(self, response: httpx.Response | None, default: float | None = None) -> float:
        value = response.headers.get("retry-after", "").strip() if response is not None else ""
        try:
            seconds = float(value)
        except ValueError:
            seconds = self.retry_backoff_s if default is None else default
        return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)

    def _backoff(self, attempt: int) -> float:
        """The wait before retry number ``attempt`` (1, 2, ...) of a 5xx or connection error."""
        return min(self.retry_backoff_s * 2.0 ** (attempt - 1), MAX_BACKOFF_S)

    def _status_retry(self, status: int, response: httpx.Response, attempts: int) -> float | None:
        """Seconds to wait before retrying an answer with ``status`` (None: no retry): 429
        and 5xx, ``max_retries`` times, after ``Retry-After`` or the backoff."""
        if (status != 429 and status < 500) or attempts >= self.max_retries or not self.asked():
            return None
        if status == 429:
            return self._retry_after(response)
        return self._retry_after(response, self._backoff(attempts + 1))

    def _network_retry(self, error: httpx.TransportError, attempts: int) -> float | None:
        """Seconds to wait before retrying after a connection error (None: the host is down).
        A refused connection (or no network at all) is retried once, quickly; a connection
        reset or closed mid-exchange ``max_retries`` times, with the backoff."""
        if not self.available:
            return None
        if isinstance(error, httpx.ConnectError):
            return min(self.retry_backoff_s, 0.5) if attempts < min(1, self.max_retries) else None
        return self._backoff(attempts + 1) if attempts < self.max_retries else None

    def _refused(self, response: httpx.Response, expects: str, hops: int) -> str:
        """Read the budget an answer states, and whether it refuses: then the host is out
        (or, after a redirect, the page it sent the call to refused: that lookup fails, said
        once per site). Returns what to say in the lookup's detail ("": not refused)."""
        now = time.time()
        headers = response.headers
        budget = budget_of(headers, now)
        if budget is not None:
            self.budget = budget
        head = response.content[:4096] if response.status_code != 200 or expects != "any" else b""
        refused = refusal_of(
            response.status_code, headers, head, expects=expects, keyed=self.keyed, now=now
        )
        if refused is None:
            return ""
        if hops:  # not this host: a publisher's page it redirects to (one lookup fails)
            site = response.url.host
            if site not in self._targets_said:
                self._targets_said.add(site)
                self._log(self.scrub(f"{self.label}: {site} {refused.detail}; its DOIs stay unverified"))
            return f"{site}: {refused.detail}"
        if refused.refusal in (Refusal.BUDGET, Refusal.WAIT) and response.status_code == 429:
            self.too_many += 1
        return self.go_out(refused).detail

    def _cured(self, reason: str) -> None:
        """A network problem a retry got past: said once per host (until a reset)."""
        if not self._cured_said:
            self._cured_said = True
            self._log(self.scrub(f"{self.label}: {reason}; answered on a retry"))

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        follow_redirects: bool = False,
        free: bool = False,
        expects: str | None = None,
    ) -> HostResult:
        """Send one request (``path`` relative to the base URL) under this host's policy.

        Returns a usable response for any status except 429 (after retries) and 5xx, and
        except a refusal (the host is then out: :mod:`citelens.sources.refusal`); the caller
        decides what a 404 means in this API's dialect. ``free``: the host does not charge
        for this call (it goes while a budget is spent); ``expects``: the format of this
        call's answer when not the host's (``json``, ``xml``, ``any``).
        """
        started = time.monotonic()
        url = self.base_url + path
        all_params: dict[str, str | int] = {**self._params, **(params or {})}
        shown = redact_url(str(httpx.URL(url, params=all_params)))
        where = f"{method} {urlsplit(url).path}"

        def result(
            outcome: Outcome | None, detail: str, response: httpx.Response | None = None
        ) -> HostResult:
            return HostResult(
                response, outcome, self.scrub(detail), (time.monotonic() - started) * 1000, shown
            )

        if not self.asked(free):
            self.skipped += 1
            return result(Outcome.UNAVAILABLE, self._skipped())
        attempts = 0
        trouble = ""  # the network problem a retry is trying to get past
        while True:
            async with self._semaphore:
                await self._wait_for_slot()
                if not self.asked(free):  # another call found the host down (or out) meanwhile
                    self.skipped += 1
                    return result(Outcome.UNAVAILABLE, self._skipped())
                self.requests += 1
                try:
                    async with asyncio.timeout(self.timeout_s):
                        request = self._client.build_request(
                            method,
                            url,
                            params=all_params,
                            json=json,
                            headers={**self._headers, **(headers or {})},
                            timeout=self.timeout_s,
                            extensions={"trace": self._departed},
                        )
                        # redirects one by one: httpx reads a redirect's body whole
                        response = await self._client.send(request, stream=True, follow_redirects=False)
                        hops = 0
                        while follow_redirects and response.next_request is not None and hops < 10:
                            await response.aclose()
                            response = await self._client.send(
                                response.next_request, stream=True, follow_redirects=False
                            )
                            hops += 1
                        try:
                            oversized = await read_capped(response, self.max_body_bytes)
                        finally:
                            await response.aclose()
                    if oversized:  # a failed lookup (UNVERIFIED), never "not found"
                        limit = f"{self.max_body_bytes / (1 << 20):g} MB"
                        return result(Outcome.FAILED, f"answer larger than {limit} ({where})")
                except (TimeoutError, httpx.TimeoutException):
                    reason = f"no answer within {self.timeout_s:g} s"
                    self._mark_down(reason)
                    return result(Outcome.FAILED, f"{reason} ({where})")
                except httpx.TransportError as e:
                    reason = _describe(e)
                    wait = self._network_retry(e, attempts)
                    if wait is not None:
                        attempts += 1
                        trouble = reason
                        self._pause(wait)
                        continue
                    self._mark_down(reason)
                    return result(Outcome.FAILED, f"{reason} ({where})")
                except (httpx.HTTPError, ValueError, OSError) as e:  # bad URL and the like
                    return result(Outcome.FAILED, f"request error: {type(e).__name__}")
            status = response.status_code
            refused = self._refused(response, expects or self.expects, hops)
            if refused:
                return result(Outcome.FAILED, f"{refused} ({where})")
            self._answered(status)
            wait = self._status_retry(status, response, attempts)
            if wait is not None:
                attempts += 1
                self._pause(wait)
                continue
            if status == 429 or status >= 500:
                tries = f" after {attempts} retries" if attempts or status == 429 else ""
                return result(Outcome.FAILED, f"HTTP {status}{tries} ({where})")
            if trouble:
                self._cured(trouble)
            return result(None, f"HTTP {status}", response)


async def read_capped(response: httpx.Response, limit: int) -> bool:
    """Read a streamed ``response`` into ``response.content``, unless its body is longer
    than ``limit`` bytes on the wire or once decompressed (a gzip bomb: 1 MB that
    expands to gigabytes): then stop reading and return True."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return True
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():  # decompressed piece by piece
        size += len(chunk)
        if size > limit or response.num_bytes_downloaded > limit:
            return True
        chunks.append(chunk)
    response._content = b"".join(chunks)  # what Response.aread() keeps
    return False


def _describe(e: httpx.TransportError) -> str:
    kind = {
        httpx.ConnectError: "connection failed",
        httpx.ReadError: "connection reset",
        httpx.WriteError: "connection reset",
        httpx.RemoteProtocolError: "connection closed",
    }.get(type(e), "network error")
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return f"{kind}: {redact_url(text) if '://' in text else text}"[:200]


# ---------------------------------------------------------------------- the client set


#: Default spacing per host (seconds between request starts, concurrency).
#: The longest answer read from each host, on the wire and decompressed; a longer one is a
#: failed lookup. A batch of 500 Semantic Scholar papers with abstracts is about 2 MB.
@dataclass(frozen=True, slots=True)
class Host:
    """One row of the host registry: everything about a scholarly host that does not
    depend on a request. A live source is its client module, one row here and its rows in
    the request plan (``verify/plan.py``): :class:`Sources`, :meth:`Sources.hosts`,
    :data:`DEFAULT_RATES`, the body limits and the name it is given to a user
    (``sources/names.py``) are derived from :data:`HOSTS`."""

    #: Its name in the cache's keys, lookups and records: a :class:`~citelens.core.source_names.Source`
    #: member, or a new host's own name (declared in its client module, a ``StrEnum`` there).
    source: str
    name: str  # how it is named to a user ("Semantic Scholar"): sources/names.source_name
    #: Its base URL setting: name (``s2_api_url``: editor key ``s2ApiUrl``, environment
    #: variable ``CITELENS_S2_API_URL``), default and description (docs/configuration.md,
    #: the VS Code manifest), all derived from this row (:data:`ALL_SETTINGS`).
    url: tuple[str, str, str]
    rate: Rate  # its documented (or agreed) rate; :data:`DEFAULT_RATES` keeps a margin under it
    max_body_bytes: int = 16 << 20
    headers: Callable[[Settings], Mapping[str, str]] | None = None  # keys travel here ...
    params: Callable[[Settings], Mapping[str, str]] | None = None  # ... or here, never in a log
    polite_rate: Rate | None = None  # the rate with a contact address (``mailto``) set
    #: Its API key: the setting holding it, where to get one, what it buys and what runs
    #: without it (the fix a refusal names; docs/configuration.md's keys section).
    key: HostKey | None = None
    #: The format its API answers in (``json``, ``xml``, ``any``): HTML instead is a challenge.
    expects: str = "json"
    #: Some of its calls cost nothing while its daily budget is spent (lookups by id or DOI).
    free_calls: bool = False
    #: One cheap request that costs nothing (``citelens sources --check``): a path with its query.
    probe: str = ""


@dataclass(frozen=True, slots=True)
class HostKey:
    """A host's API key: its setting (a :class:`Settings` field), where to get one, what it
    buys, and how the host serves a caller without one."""

    setting: str
    where: str
    buys: str
    without: str

    def hint(self) -> KeyHint:
        doc = next(d for d in SETTINGS if d.name == self.setting)
        return KeyHint(doc.key, doc.env or "", self.where, self.buys)

    def value(self, settings: Settings) -> str | None:
        value = getattr(settings, self.setting)
        return value if isinstance(value, str) and value else None


#: The settings listed before the hosts' base URLs (those Settings declares before ``source_urls``).
_NAMES = tuple(f.name for f in fields(Settings))
_BEFORE_URLS = frozenset(_NAMES[: _NAMES.index("source_urls")])


def _mailto(settings: Settings) -> dict[str, str]:
    return {"mailto": settings.mailto} if settings.mailto else {}


def _openalex_params(settings: Settings) -> dict[str, str]:
    key = {"api_key": settings.openalex_api_key} if settings.openalex_api_key else {}
    return {**_mailto(settings), **key}


#: The host registry: one row per host, in the order of :meth:`Sources.hosts`.
HOSTS: tuple[Host, ...] = (
    Host(
        Source.S2,
        "Semantic Scholar",
        ("s2_api_url", "https://api.semanticscholar.org/graph/v1", "Semantic Scholar Graph API base URL."),
        Rate.per_second(1.0),
        32 << 20,
        headers=lambda s: {"x-api-key": s.s2_api_key} if s.s2_api_key else {},
        key=HostKey(
            "s2_api_key",
            "free at semanticscholar.org/product/api",
            "a rate of your own (a new key: 1 request/s)",
            "the pool every keyless caller shares: bursts of HTTP 429, retried, and Semantic "
            "Scholar is left out of the run after 5 in a row",
        ),
        probe="/paper/DOI:10.1038/s41592-019-0686-2?fields=paperId",
    ),
    Host(
        Source.CROSSREF,
        "Crossref",
        ("crossref_api_url", "https://api.crossref.org", "Crossref REST API base URL."),
        Rate.per_second(5.0, 1),
        params=_mailto,
        polite_rate=Rate.per_second(10.0, 3),
        probe="/works/10.1038/s41592-019-0686-2",
    ),
    Host(
        Source.OPENALEX,
        "OpenAlex",
        ("openalex_api_url", "https://api.openalex.org", "OpenAlex API base URL."),
        Rate.per_second(10.0, 3),
        params=_openalex_params,
        key=HostKey(
            "openalex_api_key",
            "free at openalex.org",
            "$1 a day: lookups by DOI free, 10,000 filters or 1,000 title searches",
            "$0.10 a day shared by your IP address (about 100 title searches); once it is "
            "spent OpenAlex is asked only lookups by DOI (free) until midnight UTC, and the "
            "verdicts come from the other sources",
        ),
        free_calls=True,
        probe="/works/doi:10.1038/s41592-019-0686-2",
    ),
    Host(
        Source.ARXIV,
        "arXiv",
        ("arxiv_api_url", "https://export.arxiv.org/api", "arXiv export API base URL."),
        Rate(3.0, 1),  # one request every three seconds
        expects="xml",
        probe="/query?id_list=1706.03762&max_results=1",
    ),
    Host(
        Source.ARXIV_SITE,
        "arXiv (site)",
        ("arxiv_url", "https://arxiv.org", "arXiv site base URL (HTML and PDF full texts)."),
        Rate(1.0, 1),
        64 << 20,  # full-text PDFs
        expects="any",
        probe="/abs/1706.03762",
    ),
    Host(
        Source.DOI,
        "doi.org",
        ("doi_url", "https://doi.org", "DOI resolver base URL (content negotiation)."),
        Rate.per_second(5.0, 2),
        probe="/10.1038/s41592-019-0686-2",  # a 302 to the registration agency
    ),
    Host(
        Source.NCBI,
        "PubMed",
        (
            "ncbi_eutils_url",
            "https://eutils.ncbi.nlm.nih.gov/entrez/eutils",
            "NCBI E-utilities base URL (PubMed).",
        ),
        Rate.per_second(3.0, 1),
        params=lambda s: {"tool": "citelens", **({"email": s.mailto} if s.mailto else {})},
        expects="xml",
        probe="/esearch.fcgi?db=pubmed&term=25349395%5Buid%5D",
    ),
    Host(
        Source.UNPAYWALL,
        "Unpaywall",
        ("unpaywall_api_url", "https://api.unpaywall.org/v2", "Unpaywall API base URL."),
        Rate.per_second(5.0, 2),
        params=lambda s: {"email": s.mailto or "citelens@example.org"},
        probe="/10.1038/s41592-019-0686-2",
    ),
)

#: Each host's base URL setting, in the order of :data:`HOSTS`.
URL_SETTINGS: tuple[SettingDoc, ...] = tuple(url_setting_doc(*h.url) for h in HOSTS)
#: Every setting, as docs/configuration.md and the VS Code manifest list them: the hosts'
#: base URLs where :class:`~citelens.core.settings.Settings` keeps them (``source_urls``).
ALL_SETTINGS: tuple[SettingDoc, ...] = (
    tuple(d for d in SETTINGS if d.name in _BEFORE_URLS)
    + URL_SETTINGS
    + tuple(d for d in SETTINGS if d.name not in _BEFORE_URLS)
)


def base_url(settings: Settings, source: str) -> str:
    """The base URL of ``source``'s host: the one the user set, else its row's default."""
    name, default, _ = next(h.url for h in HOSTS if h.source == source)
    return settings.source_urls.get(name) or default


#: The documented (or agreed) rate of each host; :data:`DEFAULT_RATES` keeps a margin under it.
DOCUMENTED_RATES: Mapping[str, Rate] = MappingProxyType(
    {h.source: h.rate for h in HOSTS}
    | {f"{h.source}_polite": h.polite_rate for h in HOSTS if h.polite_rate is not None}
)


def with_margin(rate: Rate) -> Rate:
    """``rate`` paced :data:`PACING_MARGIN` slower."""
    return Rate(rate.min_interval_s * PACING_MARGIN, rate.max_concurrency)


DEFAULT_RATES: Mapping[str, Rate] = MappingProxyType(
    {name: with_margin(r) for name, r in DOCUMENTED_RATES.items()}
)


@dataclass
class Sources:
    """One :class:`HostClient` per row of :data:`HOSTS`, sharing one HTTP client:
    ``sources[Source.CROSSREF]`` (or ``sources.crossref``)."""

    clients: dict[str, HostClient]
    client: httpx.AsyncClient
    owns_client: bool = True
    settings: Settings = field(default_factory=Settings)
    #: Where the sources' states are remembered between runs (``sources.json`` in the cache
    #: folder, :mod:`citelens.sources.remembered`); None: not remembered.
    state_file: Path | None = None

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        log: Log | None = None,
        *,
        rates: Mapping[str, Rate] | None = None,
        client: httpx.AsyncClient | None = None,
        unavailable_for_s: float = 60.0,
        state_dir: Path | None = None,
    ) -> Sources:
        """Build the client set. ``rates`` overrides :data:`DEFAULT_RATES` per host name;
        ``state_dir``: the folder whose ``sources.json`` remembers the sources' refusals
        between runs (a budget spent stays spent until its reset)."""
        own = client is None
        http = client or httpx.AsyncClient(
            headers={"User-Agent": USER_AGENT}, timeout=settings.request_timeout_s
        )
        table = dict(DEFAULT_RATES)
        table[Source.S2] = Rate.per_second(settings.s2_requests_per_second / PACING_MARGIN)
        if settings.mailto:
            table.update({h.source: table[f"{h.source}_polite"] for h in HOSTS if h.polite_rate})
        table.update(rates or {})
        secrets = tuple(s for s in (settings.s2_api_key, settings.openalex_api_key, settings.mailto) if s)

        def host(row: Host) -> HostClient:
            return HostClient(
                row.source,
                row.name,
                base_url(settings, row.source),
                http,
                rate=table[row.source],
                max_body_bytes=row.max_body_bytes,
                timeout_s=settings.request_timeout_s,
                retry_backoff_s=settings.retry_backoff_s,
                max_retries=settings.max_retries,
                headers=(row.headers(settings) or None) if row.headers else None,
                params=(row.params(settings) or None) if row.params else None,
                secrets=secrets,
                log=log,
                unavailable_for_s=unavailable_for_s,
                offline=settings.offline,
                expects=row.expects,
                key_hint=row.key.hint() if row.key else None,
                keyed=bool(row.key and row.key.value(settings)),
                free_calls=row.free_calls,
            )

        made = cls({row.source: host(row) for row in HOSTS}, http, own, settings)
        if state_dir is not None and not settings.offline:
            made.state_file = Path(state_dir) / remembered.FILE_NAME
            made._recall()
        return made

    # ------------------------------------------------------------------ states

    def key_tags(self) -> dict[str, str]:
        """Which key each host is asked with, as the remembered state names it (no secret)."""
        return {
            row.source: remembered.key_tag(row.key.value(self.settings) if row.key else None) for row in HOSTS
        }

    def _recall(self) -> None:
        """Hosts an earlier run found out until a time still to come (a budget spent) start
        out: said once, not learned again with a request."""
        assert self.state_file is not None
        tags = self.key_tags()
        for source, entry in remembered.read(self.state_file).items():
            host = self.clients.get(source)
            out = remembered.carried(entry, tags.get(source, "none"))
            if host is not None and out is not None:
                host.go_out(Refused(out.refusal, out.detail, out.until), remembered=True, since=out.since)
            if host is not None and entry.budget is not None and entry.key == tags.get(source):
                host.budget = entry.budget
        for host in self.clients.values():
            host.on_out = self._remember

    def _remember(self, out: Out) -> None:
        if self.state_file is not None and not out.remembered:
            remembered.write(self.state_file, self.key_tags(), [out])

    def outs(self) -> list[Out]:
        """The hosts not asked now (refused, cut off), in the order of :data:`HOSTS`."""
        return [h.out for h in self.clients.values() if h.out is not None and h.out.active()]

    def budgets(self) -> dict[str, Budget]:
        """The daily budgets the hosts' rate headers last stated."""
        return {name: h.budget for name, h in self.clients.items() if h.budget is not None}

    def __getitem__(self, source: str) -> HostClient:
        return self.clients[source]

    def __getattr__(self, name: str) -> HostClient:
        """``sources.crossref``: the host of that name (an unknown name is an AttributeError)."""
        clients: dict[str, HostClient] = self.__dict__.get("clients") or {}
        if name not in clients:
            raise AttributeError(name)
        return clients[name]

    def hosts(self) -> dict[str, HostClient]:
        return dict(self.clients)

    def request_counts(self) -> dict[str, int]:
        """HTTP requests sent so far, per host name."""
        return {name: h.requests for name, h in self.hosts().items()}

    def too_many_counts(self) -> dict[str, int]:
        """HTTP 429 answers so far, per host name."""
        return {name: h.too_many for name, h in self.hosts().items()}

    def reset_availability(self) -> None:
        """Forget every outage (e.g. on a settings change or a user's "retry")."""
        for h in self.hosts().values():
            h.reset_availability()

    async def aclose(self) -> None:
        if self.state_file is not None:
            fresh = {n: b for n, b in self.budgets().items() if b.seen_at > time.time() - 86400}
            if fresh:  # what is left of each budget, for ``citelens sources``
                remembered.write(self.state_file, self.key_tags(), budgets=fresh)
        if self.owns_client:
            await self.client.aclose()

    async def __aenter__(self) -> Sources:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# ---------------------------------------------------------------------- body helpers


def decode_json(result: HostResult) -> tuple[Any, str]:
    """The JSON body of a usable response, or ``(None, short reason)`` if it is not JSON."""
    if result.response is None:
        return None, result.detail
    try:
        return json.loads(result.response.content), ""
    except (ValueError, UnicodeDecodeError):
        ctype = result.response.headers.get("content-type", "?").split(";")[0]
        return None, (f"unreadable answer (HTTP {result.response.status_code}, {ctype}, not JSON)")


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty dict."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty list."""
    return value if isinstance(value, list) else []


def status_of(result: HostResult) -> int:
    return result.response.status_code if result.response is not None else 0


async def works_by_doi(
    host: HostClient,
    method: str,
    dois: list[str],
    *,
    batch: int,
    missing: str,
    params: Callable[[list[str]], dict[str, Any]],
    items: Callable[[Any], Any],
    to_record: Callable[[Any], PaperRecord | None],
    refuse: Callable[[str], str | None] = lambda _doi: None,
) -> dict[str, Lookup]:
    """Works by DOI, ``batch`` per ``GET /works`` request (Crossref, OpenAlex): one Lookup
    per DOI as given. ``params`` builds a request's query for its DOIs, ``items`` finds the
    works in the answer, ``refuse`` says why a DOI cannot be asked (it is then NOT_FOUND);
    a DOI absent from the answer is NOT_FOUND ("<doi> <missing>")."""
    out: dict[str, Lookup] = {}
    wanted: dict[str, list[str]] = {}  # normalised -> as given
    for d in dois:
        bare = normalize_doi(d)
        why_not = "not a DOI" if bare is None else refuse(bare)
        if bare is None or why_not:
            out[d] = host.lookup(method, Outcome.NOT_FOUND, [], why_not or "")
        else:
            wanted.setdefault(bare, []).append(d)
    keys = list(wanted)
    for start in range(0, len(keys), batch):
        chunk = keys[start : start + batch]
        result = await host.request("GET", "/works", params=params(chunk))
        found_items: Any = None
        if result.ok:
            data, why = decode_json(result)
            found_items = items(data)
            if not why and (status_of(result) != 200 or not isinstance(found_items, list)):
                why = f"HTTP {status_of(result)}: unexpected answer"
        else:
            why = result.detail
        found: dict[str, PaperRecord] = {}
        for item in found_items if isinstance(found_items, list) else []:
            rec = to_record(item)
            if rec is not None and rec.doi:
                found[rec.doi] = rec
        for bare in chunk:
            lookup = host.batch_answer(method, result, why, found, bare, f"{bare} {missing}")
            for given in wanted[bare]:
                out[given] = lookup
    return out
