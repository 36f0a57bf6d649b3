"""Secrets: :data:`SECRET_PARAMS` and :func:`redact_url` (what never appears in a log line, a
message or a cache key)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

#: Query parameters whose values never appear in a log line, a message or a cache key.
SECRET_PARAMS = frozenset(
    {"api_key", "apikey", "key", "token", "access_token", "mailto", "email", "sig", "signature"}
)


def redact_url(url: str) -> str:
    """``url`` without user info, fragment, and secret-looking query parameters."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port:
            netloc += f":{parts.port}"
        query = [
            (k, v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if k.lower() not in SECRET_PARAMS
        ]
        return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), ""))
    except ValueError:
        return "<url>"
