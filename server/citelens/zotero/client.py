"""Talking to Zotero: Better BibTeX's JSON-RPC, Zotero's local API, the Zotero web API.

* Better BibTeX: ``POST <local>/better-bibtex/json-rpc`` (JSON-RPC 2.0), ``item.search`` with
  ``[["citationKey", "is", KEY]]``: each hit is the item as CSL JSON whose ``id`` is the
  item's URI, with ``library`` and ``citekey`` (content/json-rpc.ts). No Better BibTeX method
  writes bibliographic fields.
* Zotero's local API (``<local>/api/``, server_localAPI.js): reads need no key; Zotero 10
  writes ``PATCH /api/{users/0|groups/ID}/items/KEY`` with a key from
  ``POST /api/local/authorize`` (the user allows it in a dialog: ``{"key", "remember"}``, a
  key not remembered is used once), the ``Zotero-Server-ID`` every answer carries, and
  ``If-Unmodified-Since-Version``; 204, 412 on a stale version, 403 "Write access denied"
  for a read-only library, 401 for a used or unknown key, 428 without the server ID. Zotero
  9 and older answer a PATCH with 501 ("Method not implemented"); with the local API off,
  every ``/api/`` request is 403 "Local API is not enabled".
* The web API (``https://api.zotero.org``, zotero/dataserver): ``Zotero-API-Key``,
  ``Zotero-API-Version: 3``; ``PATCH /{users|groups}/ID/items/KEY`` with
  ``If-Unmodified-Since-Version``: 204 with ``Last-Modified-Version``, 412 when the item
  changed since, 403 "Write access denied"; ``Backoff: N`` on any answer asks for N seconds
  without requests, 429 and 503 come with ``Retry-After``.

:class:`ZoteroAccess` holds what a session learns (the local API key the user allowed, the
server ID, the web API's backoff) and never writes a key in a message or a log line: keys
travel in headers only, and errors name the address (no query, no headers) and the status.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import httpx

from citelens import __version__
from citelens.core.secrets import redact_url
from citelens.core.settings import Settings
from citelens.zotero.items import ItemRef
from citelens.zotero.profile import local_server

#: The longest wait for zotero.org's ``Backoff`` or ``Retry-After`` before CiteLens gives
#: up on the request and says when to try again.
MAX_WAIT_S = 60.0
#: How long the user has to answer Zotero's "allow CiteLens?" dialog.
AUTHORIZE_TIMEOUT_S = 120.0
APP_NAME = "CiteLens"
_MAX_BODY = 8 << 20


class ZoteroError(Exception):
    """A request that failed, with a message for the user (no key, no header)."""


class Unreachable(ZoteroError):
    """Nothing answered at the address (Zotero not running, or the wrong port)."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: Mapping[str, str]
    body: Any  # parsed JSON, or the text
    url: str  # redacted

    @property
    def text(self) -> str:
        return self.body if isinstance(self.body, str) else json.dumps(self.body)[:500]

    def header_int(self, name: str) -> int | None:
        try:
            return int(self.headers.get(name.lower(), ""))
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class LocalAPI:
    """What Zotero's local API said at ``/api/``."""

    readable: bool  # the local API answers reads
    server_id: str | None  # Zotero 10's Zotero-Server-ID (a local API that takes writes)
    why: str = ""  # why it does not answer


Sleep = Callable[[float], Awaitable[None]]


@dataclass(slots=True)
class ZoteroAccess:
    """One editor session's (or one ``citelens check``'s) way to Zotero."""

    settings: Settings
    log: Callable[[str], None] = lambda _m: None
    sleep: Sleep = asyncio.sleep
    clock: Callable[[], float] = time.monotonic
    transport: httpx.AsyncBaseTransport | None = None  # tests
    local_key: str | None = field(default=None, repr=False)  # the key the user allowed
    server_id: str | None = None
    backoff_until: float = 0.0  # zotero.org's Backoff
    _http: httpx.AsyncClient | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ plumbing
    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[ZoteroAccess]:
        """An HTTP client for one fix (connections reused within it)."""
        if self._http is not None:
            yield self
            return
        self._http = httpx.AsyncClient(
            transport=self.transport,
            timeout=self.settings.request_timeout_s,
            headers={"User-Agent": f"CiteLens/{__version__}"},
            follow_redirects=False,
        )
        try:
            yield self
        finally:
            http, self._http = self._http, None
            await http.aclose()

    @property
    def local(self) -> str:
        return local_server(self.settings)

    @property
    def web(self) -> str:
        return self.settings.zotero_web_api_url.rstrip("/")

    async def _request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        body: object = None,
        timeout: float | None = None,
    ) -> Answer:
        assert self._http is not None, "use ZoteroAccess.session()"
        shown = redact_url(url)
        content = json.dumps(body).encode("utf-8") if body is not None else None
        hdrs = dict(headers or {})
        if content is not None:
            hdrs["Content-Type"] = "application/json"
        try:
            r = await self._http.request(
                method, url, headers=hdrs, content=content, timeout=timeout or self.settings.request_timeout_s
            )
            raw = r.content[:_MAX_BODY]
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise Unreachable(f"no answer at {shown} ({type(exc).__name__})") from None
        except httpx.TimeoutException:
            raise ZoteroError(f"{method} {shown}: no answer in time") from None
        except httpx.HTTPError as exc:
            raise ZoteroError(f"{method} {shown}: {type(exc).__name__}") from None
        parsed: Any
        try:
            parsed = (
                json.loads(raw)
                if raw and "json" in r.headers.get("content-type", "")
                else raw.decode("utf-8", "replace")
            )
        except ValueError:
            parsed = raw.decode("utf-8", "replace")
        self.log(f"Zotero: {method} {shown} -> {r.status_code}")
        return Answer(
            r.status_code, MappingProxyType({k.lower(): v for k, v in r.headers.items()}), parsed, shown
        )

    # ------------------------------------------------------------------ Better BibTeX
    async def bbt(self, method: str, params: list[object]) -> object:
        """One Better BibTeX JSON-RPC call: its result, or :class:`ZoteroError`."""
        url = f"{self.local}/better-bibtex/json-rpc"
        try:
            a = await self._request(
                "POST", url, body={"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
            )
        except Unreachable:
            raise Unreachable(
                f"Zotero is not running, or Better BibTeX's server is off (no answer at {self.local})"
            ) from None
        if a.status == 404:
            raise ZoteroError(f"Better BibTeX is not installed in the Zotero at {self.local} (404)")
        if a.status != 200 or not isinstance(a.body, dict):
            raise ZoteroError(f"Better BibTeX answered {a.status} at {a.url}")
        if isinstance(a.body.get("error"), dict):
            msg = str(a.body["error"].get("message", ""))[:300]
            raise ZoteroError(f"Better BibTeX: {msg or 'error'}")
        return a.body.get("result")

    async def items_with_key(self, citation_key: str) -> list[dict[str, Any]]:
        """The items whose citation key is ``citation_key``, in every library."""
        result = await self.bbt("item.search", [[["citationKey", "is", citation_key]], "*"])
        return [r for r in result if isinstance(r, dict)] if isinstance(result, list) else []

    async def citation_key_of(self, ref: ItemRef) -> str | None:
        """The item's citation key now (Better BibTeX may give it a new one after a change)."""
        result = await self.bbt("item.search", [[["key", "is", ref.key]], "*"])
        hits = result if isinstance(result, list) else []
        for hit in hits:
            if isinstance(hit, dict) and ItemRef.from_uri(hit.get("id")) == ItemRef.from_uri(
                f"http://zotero.org/{ref.library_type}/{ref.library_id}/items/{ref.key}"
            ):
                key = hit.get("citekey") or hit.get("citationKey")
                return key if isinstance(key, str) else None
        return None

    # ------------------------------------------------------------------ the local API
    def _local_headers(self, write: bool) -> dict[str, str]:
        h = {"Zotero-API-Version": "3"}
        if self.server_id:
            h["Zotero-Server-ID"] = self.server_id
        if write and self.local_key:
            h["Zotero-API-Key"] = self.local_key
        return h

    async def local_api(self) -> LocalAPI:
        """Whether Zotero's local API answers, and its server ID (Zotero 10)."""
        try:
            a = await self._request("GET", f"{self.local}/api/", headers={"Zotero-API-Version": "3"})
        except Unreachable:
            return LocalAPI(False, None, f"Zotero does not answer at {self.local}")
        if a.status == 403:
            return LocalAPI(False, None, "Zotero's local API is off")
        if a.status != 200:
            return LocalAPI(False, None, f"Zotero has no local API ({a.status}: Zotero 6 or older)")
        sid = a.headers.get("zotero-server-id") or None
        if sid != self.server_id:  # another Zotero (or none): a key it gave does not hold
            self.server_id, self.local_key = sid, None
        return LocalAPI(True, sid)

    async def local_get(self, ref: ItemRef) -> Answer:
        return await self._request("GET", self.local + ref.local_path, headers=self._local_headers(False))

    async def local_authorize(self) -> str | None:
        """Ask Zotero for a key (it shows the user a dialog): the key, or None when the
        user denied it; :class:`ZoteroError` when Zotero cannot give one."""
        a = await self._request(
            "POST",
            f"{self.local}/api/local/authorize",
            headers=self._local_headers(False),
            body={"appName": APP_NAME},
            timeout=AUTHORIZE_TIMEOUT_S,
        )
        if a.status == 200 and isinstance(a.body, dict) and isinstance(a.body.get("key"), str):
            key = str(a.body["key"])
            if a.body.get("remember"):
                self.local_key = key  # "Always Allow": kept for this session
            return key
        if a.status == 403:
            return None
        if a.status == 429:
            raise ZoteroError(
                f"Zotero asked CiteLens to wait {a.headers.get('retry-after', 'a minute')} s before "
                "asking for access again"
            )
        raise ZoteroError(f"Zotero gave no key ({a.status}: {a.text.strip()[:120]})")

    async def local_patch(self, ref: ItemRef, body: Mapping[str, object], version: int, key: str) -> Answer:
        headers = self._local_headers(False)
        headers["Zotero-API-Key"] = key
        headers["If-Unmodified-Since-Version"] = str(version)
        return await self._request("PATCH", self.local + ref.local_path, headers=headers, body=dict(body))

    async def local_probe_write(self, ref: ItemRef) -> Answer:
        """A PATCH with no key and no change: Zotero 9 and older answer 501 (no writes),
        Zotero 10 refuses it before reading it (428 or 401). Nothing is written."""
        return await self._request(
            "PATCH", self.local + ref.local_path, headers=self._local_headers(False), body={}
        )

    # ------------------------------------------------------------------ the web API
    @property
    def web_key(self) -> str | None:
        """The user's zotero.org key (a blank setting is none)."""
        key = (self.settings.zotero_api_key or "").strip()
        return key or None

    def _web_headers(self) -> dict[str, str]:
        h = {"Zotero-API-Version": "3"}
        if self.web_key:
            h["Zotero-API-Key"] = self.web_key
        return h

    async def _web(self, method: str, path: str, headers: Mapping[str, str], body: object = None) -> Answer:
        """A web API request after any ``Backoff``, retried after ``Retry-After`` (429, 503)
        while the wait is at most :data:`MAX_WAIT_S`."""
        for _attempt in range(3):
            wait = self.backoff_until - self.clock()
            if wait > MAX_WAIT_S:
                raise ZoteroError(f"zotero.org asked for a pause (Backoff): try again in {wait:.0f} s")
            if wait > 0:
                await self.sleep(wait)
            a = await self._request(method, self.web + path, headers=headers, body=body)
            backoff = a.header_int("Backoff")
            if backoff:
                self.backoff_until = max(self.backoff_until, self.clock() + backoff)
            if a.status not in (429, 503):
                return a
            retry = a.header_int("Retry-After")
            if retry is None or retry > MAX_WAIT_S:
                later = f"in {retry} s" if retry is not None else "later"
                raise ZoteroError(f"zotero.org is busy ({a.status}): try again {later}")
            self.backoff_until = max(self.backoff_until, self.clock() + retry)
        raise ZoteroError(f"zotero.org is busy ({a.status}): try again later")

    async def web_get(self, ref: ItemRef) -> Answer:
        path = ref.web_path
        assert path is not None
        return await self._web("GET", path, self._web_headers())

    async def web_patch(self, ref: ItemRef, body: Mapping[str, object], version: int) -> Answer:
        path = ref.web_path
        assert path is not None
        headers = self._web_headers()
        headers["If-Unmodified-Since-Version"] = str(version)
        return await self._web("PATCH", path, headers, dict(body))
