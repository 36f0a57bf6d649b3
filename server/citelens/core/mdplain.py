"""Text for hovers that reads the same in every client, with no backslash escapes.

Neovim shows a hover's Markdown source with only light rendering, so an escape such as
``arxiv\\_id`` appears with its backslash. Instead of escaping, :func:`plain` leaves text
that Markdown reads literally as it is (``s2_batch``: CommonMark never reads an underscore
inside a word as emphasis) and puts a word that Markdown would read as markup
(``*``, an underscore at a word's edge, a backslash, ``<tag``, a link, an entity, and a bare
``https://…``, ``www.…`` or e-mail address that a renderer would autolink) in a code span.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

_RISKY = re.compile(
    r"[*\\]|(?<![^\W_])_|_(?![^\W_])|<[A-Za-z/!?]|~~|\]\(|&#?[0-9A-Za-z]+;"
    # what GitHub-flavoured renderers (VS Code's hover) make a link with no markup: bare
    # http(s)/ftp addresses, www. names, e-mail addresses, mailto: and xmpp: URIs
    r"|(?i:https?://|ftp://|www\.|mailto:|xmpp:)|[\w.+-]@[\w-]+\.\w"
)
# A line that starts like a heading, quote or list item.
_BLOCK_START = re.compile(r"(#{1,6}|[>+-]|\d+[.)])(?=\s|$)")
_WORD = re.compile(r"\S+")


def _code(word: str) -> str:
    word = word.replace("`", "'")
    return f"`{word}`"


def code(text: str) -> str:
    """``text`` as a code span (a key, a method): a backtick in it cannot end the span."""
    return _code(text.replace("\n", " ").replace("\r", " "))


#: Characters kept as they are in a link target; every other one is percent-encoded, so
#: ``)``, ``]``, ``<``, ``>``, quotes, blanks and line breaks cannot end the link or start
#: another one.
_URL_SAFE = "/:?#@$&*+,;=%-._~"


def link_target(url: str | None) -> str | None:
    """A link target built from ``url`` (a .bib ``url`` field, an API's link) if it is a
    plain http(s) address with a host; else None (``javascript:``, ``command:``, data:,
    relative or garbled values are never made into links)."""
    if not url:
        return None
    url = url.strip()
    if len(url) > 2048 or any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return quote(url, safe=_URL_SAFE)


def plain(text: str) -> str:
    """``text`` for a Markdown hover: shown as written, without backslashes added."""
    text = text.replace("`", "'")
    if _RISKY.search(text):
        text = _WORD.sub(lambda m: _code(m.group(0)) if _RISKY.search(m.group(0)) else m.group(0), text)
    block = _BLOCK_START.match(text)
    if block:
        text = _code(block.group(0)) + text[block.end() :]
    return text
