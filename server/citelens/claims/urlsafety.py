"""Fetching URLs that come from untrusted places (bib entries, API answers) safely.

* only ``http``/``https``;
* the host's addresses are resolved and private, loopback, link-local, reserved and
  multicast addresses are refused unless ``Settings.allow_private_urls``;
* redirects are followed by hand (at most :data:`MAX_REDIRECTS`) and every hop is
  checked again;
* the body is streamed and cut at ``Settings.fetch_max_bytes``; the whole fetch is
  cut at a time limit.

:func:`safe_fetch` never raises: it returns a :class:`Fetched` with ``error`` set.
URLs shown anywhere go through ``core.normalize.redact_url`` (no credentials, no key-like
query parameters).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx

from citelens.core.normalize import redact_url

MAX_REDIRECTS = 5
def _address_refused(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


async def check_url(url: str, allow_private: bool) -> str | None:
    """Why ``url`` may not be fetched, or ``None`` when it may."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "malformed URL"
    if parts.scheme not in ("http", "https"):
        return f"scheme {parts.scheme or '(none)'!r} not allowed (http/https only)"
    host = parts.hostname
    if not host:
        return "URL without a host"
    if allow_private:
        return None
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host, parts.port or (443 if parts.scheme == "https" else 80),
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
) -> Fetched:
    """GET ``url`` under the rules of this module. Never raises."""
    started = time.monotonic()
    result = Fetched(redact_url(url))
    try:
        async with asyncio.timeout(timeout_s):
            current = url
            for _hop in range(MAX_REDIRECTS + 1):
                result.url = redact_url(current)
                refused = await check_url(current, allow_private)
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
