"""Pandoc citations in Markdown, R Markdown and Quarto files.

Code (fenced blocks, R chunks, inline code spans), HTML comments and the YAML
front matter are blanked out first (same length), so citations there are not
read; the front matter is read separately for ``bibliography:``.
"""

from __future__ import annotations

import re

from citelens.core.dockind import DocKind
from citelens.core.model import Citation, Reference, SourceDocument, Span

_FRONT_MATTER = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)(?:\r?\n)(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_MASK = re.compile(
    r"(?P<fence>^[ \t]{0,3}(?P<f>`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]{0,3}(?P=f)[`~]*[ \t]*$|\Z))"
    r"|(?P<comment><!--.*?(?:-->|\Z))"
    r"|(?P<code>(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`))",
    re.S | re.M,
)
# A key starts with a letter, digit or _, and may hold internal punctuation.
_KEY = r"[\w](?:[\w]|[:.#$%&\-+?<>~/](?=[\w]))*"
_CITE = re.compile(r"(?<![\w.\-/@+\\])(-?)@(?:\{(?P<braced>[^{}\n]+)\}|(?P<plain>" + _KEY + r"))")
# A bracketed citation group: [...@key...], not a link text "[...](...)" nor "[...][...]".
_GROUP = re.compile(r"\[(?P<body>[^\[\]]*@[^\[\]]*)\](?![(\[])")
_YAML_BIB = re.compile(r"^bibliography[ \t]*:[ \t]*(?P<value>.*)$", re.M)
_YAML_ITEM = re.compile(r"^[ \t]*-[ \t]+(?P<item>.+?)[ \t]*$")


def _blank(m: re.Match[str]) -> str:
    return re.sub(r"[^\r\n]", " ", m.group(0))


def mask(text: str) -> tuple[str, Span | None]:
    """Blank code, comments and front matter; return the masked text and the front matter span."""
    front = _FRONT_MATTER.match(text)
    fm_span = Span(front.start(1), front.end(1)) if front else None
    if front:
        text = _blank(front) + text[front.end() :]
    return _MASK.sub(_blank, text), fm_span


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _bibliographies(text: str, fm: Span, doc: SourceDocument) -> None:
    body = text[fm.start : fm.end]
    for m in _YAML_BIB.finditer(body):
        value = m.group("value").split(" #")[0].strip()
        base = fm.start + m.start("value")
        if value.startswith("["):
            for part in re.finditer(r"[^\[\],]+", value):
                name = _unquote(part.group(0))
                if name:
                    s = base + part.start() + part.group(0).find(name.strip("'\"")[:1] or name)
                    doc.bibliographies.append(Reference(name, Span(s, s + len(name)), "yaml"))
        elif value:
            name = _unquote(value)
            s = base + value.find(name)
            doc.bibliographies.append(Reference(name, Span(s, s + len(name)), "yaml"))
        else:  # a YAML list on the following lines
            pos = fm.start + m.end() + 1
            for line in body[m.end() + 1 :].splitlines(keepends=True):
                item = _YAML_ITEM.match(line)
                if not item:
                    break
                name = _unquote(item.group("item"))
                s = pos + line.find(name)
                doc.bibliographies.append(Reference(name, Span(s, s + len(name)), "yaml"))
                pos += len(line)


def parse_markdown(text: str, path: str = "") -> SourceDocument:
    """Citations and bibliography files of a pandoc Markdown document. Never raises."""
    doc = SourceDocument(path=path, language=DocKind.MARKDOWN)
    masked, fm = mask(text)
    if fm is not None:
        _bibliographies(text, fm, doc)
    in_group: list[tuple[int, int]] = []
    for g in _GROUP.finditer(masked):
        gs, ge = g.start(), g.end()
        found = False
        for c in _CITE.finditer(masked, g.start("body"), g.end("body")):
            found = True
            key = c.group("braced") or c.group("plain")
            start = c.start("braced") if c.group("braced") else c.start("plain")
            doc.citations.append(Citation(key, Span(start, start + len(key)), "pandoc", Span(gs, ge)))
        if found:
            in_group.append((gs, ge))
    gi = 0
    for c in _CITE.finditer(masked):
        while gi < len(in_group) and in_group[gi][1] <= c.start():
            gi += 1
        if gi < len(in_group) and in_group[gi][0] <= c.start() < in_group[gi][1]:
            continue
        key = c.group("braced") or c.group("plain")
        start = c.start("braced") if c.group("braced") else c.start("plain")
        end = start + len(key)
        # An in-text citation may carry a locator: @smith04 [p. 33]
        loc = re.match(r"[ \t]?\[[^\[\]@]*\](?![(\[])", masked[end + (1 if c.group("braced") else 0) :])
        cmd_end = end + (1 if c.group("braced") else 0) + (loc.end() if loc else 0)
        doc.citations.append(Citation(key, Span(start, end), "pandoc-intext", Span(c.start(), cmd_end)))
    doc.citations.sort(key=lambda c: c.span.start)
    return doc
