"""Fetching URLs that come from untrusted places (bib entries, API answers) safely.

* only ``http``/``https``;
* a URL whose parse is ambiguous is refused rather than guessed at: whitespace or
  control characters, backslashes, user info (``@``) in the authority, a
  percent-encoded or zone-scoped host, an IPv4 address in a non-standard form
  (``127.1``, ``0x7f000001``, ``2130706433``), a bad port;
* the host's addresses are resolved and private, loopback, link-local, reserved,
  shared (100.64/10), multicast and non-global addresses are refused unless
  ``Settings.allow_private_urls``; so are IPv6 forms that carry an IPv4 address
  (IPv4-mapped ``::ffff:0:0/96`` and NAT64 ``64:ff9b::/96`` are judged by that
  address; 6to4 ``2002::/16``, Teredo ``2001::/32`` and IPv4-compatible ``::/96``
  are refused);
* a URL on the *origin* (scheme, host, port) of a base URL the user configured
  (``arxivUrl``, ``ncbiEutilsUrl``: an institutional mirror may be on a private
  address) is trusted: its address is not checked. Trust is per origin and per
  fetch (``trusted_base``), so a redirect from the configured host to another
  private host is still refused, and a URL from data is never trusted;
* redirects are followed by hand (at most :data:`MAX_REDIRECTS`) and every hop is
  checked again;
* the body is streamed and cut at ``Settings.fetch_max_bytes``; the whole fetch is
  cut at a time limit.

:func:`safe_fetch` never raises: it returns a :class:`Fetched` with ``error`` set.
URLs shown anywhere go through ``core.secrets.redact_url`` (no credentials, no key-like
query parameters).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import time
from dataclasses import dataclass
from urllib.parse import SplitResult, urljoin, urlsplit

import httpx

from citelens.core.secrets import redact_url

MAX_REDIRECTS = 5
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_REFUSED_V6 = (
    ipaddress.IPv6Network("2002::/16"),  # 6to4: the IPv4 address is bits 16-48
    ipaddress.IPv6Network("2001::/32"),  # Teredo
    ipaddress.IPv6Network("::/96"),  # IPv4-compatible (deprecated), ::, ::1
)


def _address_refused(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return _address_refused(ip.ipv4_mapped)
        if ip in _NAT64:
            return _address_refused(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
        if any(ip in net for net in _REFUSED_V6):
            return True
    return (
        not ip.is_global
        or ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


def origin(url: str) -> str | None:
    """``scheme://host:port`` of ``url`` (host lower-cased, default port filled in)."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    if not parts.hostname or parts.scheme not in ("http", "https"):
        return None
    return f"{parts.scheme}://{parts.hostname.lower()}:{port}"


_CONTROL_OR_SPACE = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")
_NUMERIC_LABEL = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)", re.IGNORECASE)


def _host_problem(host: str) -> str | None:
    """Why the host name is ambiguous, or ``None``."""
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return "host name cannot be encoded"
    if ":" in ascii_host:  # an IPv6 literal: urlsplit took it from between brackets
        try:
            ipaddress.IPv6Address(ascii_host)
        except ValueError:
            return "malformed IPv6 address"
        return None
    last = ascii_host.rstrip(".").rpartition(".")[2]
    if _NUMERIC_LABEL.fullmatch(last):  # parsed as IPv4 by browsers and resolvers
        try:
            if str(ipaddress.IPv4Address(ascii_host)) == ascii_host:
                return None
        except ValueError:
            pass
        return "IPv4 address in a non-standard form"
    return None


def _ambiguity(url: str, parts: SplitResult, userinfo_ok: bool) -> str | None:
    """Why different URL parsers could read ``url`` differently, or ``None``."""
    if _CONTROL_OR_SPACE.search(url):
        return "whitespace or control character in the URL"
    if "\\" in url:
        return "backslash in the URL"
    authority = parts.netloc
    if "@" in authority and not userinfo_ok:
        return "user info ('@') in the URL's authority"
    if "%" in authority.rpartition("@")[2]:
        return "percent-encoded or zone-scoped host"
    try:
        _ = parts.port
    except ValueError:
        return "invalid port"
    return _host_problem(parts.hostname or "")


async def check_url(url: str, allow_private: bool, trusted_base: str | None = None) -> str | None:
    """Why ``url`` may not be fetched, or ``None`` when it may.

    ``trusted_base`` is a base URL the user configured: a ``url`` on its origin is
    fetched whatever its address (see the module doc).
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "malformed URL"
    if parts.scheme not in ("http", "https"):
        return f"scheme {parts.scheme or '(none)'!r} not allowed (http/https only)"
    host = parts.hostname
    if not host:
        return "URL without a host"
    base = origin(trusted_base) if trusted_base else None
    trusted = base is not None and origin(url) == base
    why = _ambiguity(url, parts, userinfo_ok=trusted)
    if why is not None:
        return f"ambiguous URL: {why}"
    if allow_private or trusted:
        return None
    return await _addresses_problem(host, parts)


async def _addresses_problem(host: str, parts: SplitResult) -> str | None:
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host,
                parts.port or (443 if parts.scheme == "https" else 80),
                type=socket.SOCK_STREAM,
            )
        except (OSError, UnicodeError) as e:
            return f"cannot resolve host: {type(e).__name__}"
        addresses = []
        for info in infos:
            try:
                addresses.append(ipaddress.ip_address(str(info[4][0]).split("%")[0]))
            except ValueError:
                continue
        if not addresses:
            return "host has no usable address"
    for ip in addresses:
        if _address_refused(ip):
            return f"address {ip} is private/loopback/link-local (allowPrivateUrls is off)"
    return None


@dataclass(slots=True)
class Fetched:
    url: str  # final URL, redacted
    status: int = 0
    content_type: str = ""
    body: bytes = b""
    error: str = ""  # why there is no usable body
    truncated: bool = False
    elapsed_ms: float = 0.0
    requests: int = 0

    @property
    def ok(self) -> bool:
        return not self.error and 200 <= self.status < 300


async def safe_fetch(
    client: httpx.AsyncClient,
    url: str,
    *,
    allow_private: bool,
    max_bytes: int,
    timeout_s: float,
    headers: dict[str, str] | None = None,
    trusted_base: str | None = None,
) -> Fetched:
    """GET ``url`` under the rules of this module. Never raises.

    ``trusted_base``: the configured base URL ``url`` was built from, if any; every hop
    on its origin is trusted, every other hop is checked.
    """
    started = time.monotonic()
    result = Fetched(redact_url(url))
    try:
        async with asyncio.timeout(timeout_s):
            current = url
            for _hop in range(MAX_REDIRECTS + 1):
                result.url = redact_url(current)
                refused = await check_url(current, allow_private, trusted_base)
                if refused:
                    result.error = f"refused: {refused}"
                    break
                result.requests += 1
                async with client.stream(
                    "GET", current, headers=headers, follow_redirects=False, timeout=timeout_s
                ) as response:
                    result.status = response.status_code
                    result.content_type = response.headers.get("content-type", "")
                    if response.is_redirect:
                        location = response.headers.get("location", "")
                        if not location:
                            result.error = f"HTTP {response.status_code} without Location"
                            break
                        current = urljoin(current, location)
                        continue
                    if not 200 <= response.status_code < 300:
                        result.error = f"HTTP {response.status_code}"
                        break
                    declared = response.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > max_bytes:
                        result.error = f"too large ({declared} bytes > {max_bytes})"
                        break
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in response.aiter_bytes():
                        size += len(chunk)
                        if size > max_bytes:
                            result.truncated = True
                            result.error = f"too large (more than {max_bytes} bytes)"
                            break
                        chunks.append(chunk)
                    if not result.error:
                        result.body = b"".join(chunks)
                    break
            else:
                result.error = f"more than {MAX_REDIRECTS} redirects"
    except TimeoutError:
        result.error = f"no complete answer within {timeout_s:g} s"
    except httpx.HTTPError as e:
        result.error = f"network error: {type(e).__name__}"
    except (OSError, ValueError) as e:
        result.error = f"request error: {type(e).__name__}"
    result.elapsed_ms = (time.monotonic() - started) * 1000
    return result
