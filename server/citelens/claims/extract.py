"""Turning fetched documents into plain text: HTML, PDF and PubMed Central JATS XML.

Headings are kept on their own lines prefixed with ``# `` so that
:mod:`citelens.claims.chunking` can cut along sections. Every function takes bytes
or text from the network and never raises; extraction is capped at
:data:`MAX_CHARS` characters.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

MAX_CHARS = 500_000
MIN_FULLTEXT_CHARS = 1_500

_NOTICE = re.compile(
    r"^\W*(?:correction\s+(?:for|to)\b|erratum|corrigendum|retraction(?:\s+notice)?\b"
    r"|retracted\s*:|author\s+correction|publisher[’']?s\s+note|expression\s+of\s+concern)",
    re.IGNORECASE,
)


def fulltext_problem(text: str) -> str | None:
    """Why ``text`` is not a usable full text (too short, a notice), or ``None``."""
    stripped = text.strip()
    if len(stripped) < MIN_FULLTEXT_CHARS:
        return f"too short ({len(stripped)} characters < {MIN_FULLTEXT_CHARS})"
    head = re.sub(r"^#\s*", "", stripped[:200])
    if _NOTICE.match(head):
        return "a correction/erratum/retraction notice, not the paper"
    return None


def decode(body: bytes, content_type: str = "") -> str:
    m = re.search(r"charset=([\w-]+)", content_type, re.IGNORECASE)
    for enc in ([m.group(1)] if m else []) + ["utf-8"]:
        try:
            return body.decode(enc)
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("latin-1", errors="replace")


# ---------------------------------------------------------------------------- HTML

_SKIP = {
    "script",
    "style",
    "noscript",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "svg",
    "title",
    "button",
    "template",
    "iframe",
    "math",
}
_BLOCK = {
    "p",
    "div",
    "section",
    "article",
    "li",
    "ul",
    "ol",
    "table",
    "tr",
    "br",
    "figure",
    "figcaption",
    "blockquote",
    "dd",
    "dt",
    "pre",
    "caption",
    "main",
    "abstract",
}
_HEADING = {"h1", "h2", "h3", "h4", "h5", "h6"}
_META_ABSTRACT = (
    "citation_abstract",
    "dc.description",
    "description",
    "og:description",
    "twitter:description",
    "eprints.abstract",
)


class _TextParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.size = 0
        self.skip = 0
        self.meta: dict[str, str] = {}
        self.abstract_depth = 0
        self.abstract: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "meta":
            name = (a.get("name") or a.get("property") or "").lower()
            if name in _META_ABSTRACT and a.get("content"):
                self.meta.setdefault(name, a["content"])
            return
        if tag in _SKIP:
            self.skip += 1
        elif tag in _HEADING:
            self.parts.append("\n# ")
        elif tag in _BLOCK:
            self.parts.append("\n")
        classes = (a.get("class", "") + " " + a.get("id", "")).lower()
        if self.abstract_depth:
            self.abstract_depth += 1
        elif tag in {"div", "section", "blockquote", "abstract"} and "abstract" in classes.split():
            self.abstract_depth = 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP and self.skip:
            self.skip -= 1
        elif tag in _HEADING or tag in _BLOCK:
            self.parts.append("\n")
        if self.abstract_depth:
            self.abstract_depth -= 1

    def handle_data(self, data: str) -> None:
        if self.skip or self.size > MAX_CHARS:
            return
        self.parts.append(data)
        self.size += len(data)
        if self.abstract_depth:
            self.abstract.append(data)


def _clean_lines(text: str) -> str:
    lines = (re.sub(r"[ \t\r\f\v]+", " ", line).strip() for line in text.split("\n"))
    out = "\n".join(line for line in lines if line and line != "#")
    return out[:MAX_CHARS]


def _parse_html(html: str) -> _TextParser:
    parser = _TextParser()
    try:
        parser.feed(html[: MAX_CHARS * 4])
        parser.close()
    except Exception:  # html.parser is lenient; be safe anyway
        pass
    return parser


def html_to_text(html: str) -> str:
    """Readable text of an HTML page (scripts, navigation and styles dropped)."""
    return _clean_lines("".join(_parse_html(html).parts))


def html_abstract(html: str) -> str:
    """An abstract from a landing page: meta tags first, then an element of class "abstract"."""
    parser = _parse_html(html)
    for name in _META_ABSTRACT:
        if parser.meta.get(name, "").strip():
            return re.sub(r"\s+", " ", parser.meta[name]).strip()
    text = re.sub(r"\s+", " ", "".join(parser.abstract)).strip()
    return re.sub(r"^abstract[:.]?\s*", "", text, flags=re.IGNORECASE)


def html_title(html: str) -> str:
    m = re.search(r'<meta[^>]+name=["\']citation_title["\'][^>]+content=["\']([^"\']*)', html, re.IGNORECASE)
    if m is None:
        m = re.search(r"<title[^>]*>(.*?)</title>", html, re.IGNORECASE | re.DOTALL)
    return re.sub(r"\s+", " ", m.group(1)).strip() if m else ""


# ---------------------------------------------------------------------------- PDF


def pdf_to_text(body: bytes) -> str:
    """Text of a PDF (page by page, stopping at :data:`MAX_CHARS`); "" when unreadable."""
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(body))
        parts: list[str] = []
        size = 0
        for page in reader.pages:
            text = page.extract_text() or ""
            parts.append(text)
            size += len(text)
            if size >= MAX_CHARS:
                break
        return _clean_lines("\n".join(parts))
    except Exception:  # pypdf raises many kinds of errors on broken files
        return ""


# ---------------------------------------------------------------------------- JATS (PMC)


def _itertext(el: ET.Element) -> str:
    return re.sub(r"\s+", " ", "".join(el.itertext())).strip()


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def jats_to_text(xml: str) -> str:
    """Title, abstract and body sections of a PMC ``efetch`` article; "" for none."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return ""
    article = (
        root
        if _local(root.tag) == "article"
        else next((e for e in root.iter() if _local(e.tag) == "article"), None)
    )
    if article is None:
        return ""
    out: list[str] = []
    for el in article.iter():
        name = _local(el.tag)
        if name == "article-title" and not out:
            out.append("# " + _itertext(el))
        elif name == "abstract":
            out.append("# Abstract\n" + _itertext(el))
    body = next((e for e in article.iter() if _local(e.tag) == "body"), None)
    if body is not None:
        _walk_body(body, out)
    return _clean_lines("\n".join(out))


def _walk_body(el: ET.Element, out: list[str]) -> None:
    for child in el:
        name = _local(child.tag)
        if name == "title":
            out.append("# " + _itertext(child))
        elif name in {"p", "list", "disp-quote", "def-list"}:
            out.append(_itertext(child))
        elif name in {"sec", "boxed-text"}:
            _walk_body(child, out)
        elif name in {"fig", "table-wrap"}:
            caption = next((c for c in child.iter() if _local(c.tag) == "caption"), None)
            if caption is not None:
                out.append(_itertext(caption))
