"""Where a citation stands in its document: a table cell, a caption, a heading, math.

A citation there has no claim to check (a cell names a method, a caption describes a
figure, a heading a section). :func:`place_of` looks at the raw text around the
citation only (a window, never the whole document); :func:`pipe_table_lines` tells which
lines of a Markdown text are a pipe table, so that ``|`` ends a claim only there.
"""

from __future__ import annotations

import re

from citelens.core.dockind import DocKind

#: How far before and after a citation the structure is looked for.
REACH = 3000

TABLE_CELL = "a table cell"
CAPTION = "a figure or table caption"
HEADING = "a heading"
MATH = "math"

#: A pipe table's delimiter row: ``|---|:--:|``, ``--- | ---``.
_DELIMITER_ROW = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)+\|?[ \t]*$")
_TABLE_ENVS = r"(?:tabular[x*]?|tabulary|longtable\*?|tabu|array|supertabular|xtabular|NiceTabular|tblr)"
_LATEX_ENV = re.compile(
    r"\\(begin|end)\s*\{(" + _TABLE_ENVS + r"|equation\*?|align\*?|gather\*?|multline\*?"
    r"|eqnarray\*?|displaymath|math|flalign\*?)\}"
)
_CAPTION = re.compile(r"\\(?:caption|subcaption|captionof\s*\{[^{}]*\})\s*(?:\[[^\]]*\])?\s*\{")
_SECTION = re.compile(r"\\(?:part|chapter|(?:sub)*section|(?:sub)?paragraph)\*?\s*(?:\[[^\]]*\])?\s*\{")
_MD_CAPTION = re.compile(r"^[ \t]*(?:!\[|(?:Table|Figure|Fig\.)\s*\d*[:.]|:\s)", re.IGNORECASE)


def pipe_table_lines(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each Markdown pipe table in ``text``: the block of non-blank
    lines holding a delimiter row, each of its lines with a ``|``."""
    out: list[tuple[int, int]] = []
    for m in re.finditer(r"^.*$", text, re.MULTILINE):
        if not _DELIMITER_ROW.match(m.group(0)) or "|" not in m.group(0):
            continue
        start, end = m.start(), m.end()
        # the header row(s) above, the body rows below: lines with a "|", no blank line
        while start > 0:
            prev = text.rfind("\n", 0, start - 1) + 1
            line = text[prev : start - 1]
            if not line.strip() or "|" not in line:
                break
            start = prev
        while end < len(text):
            nxt = text.find("\n", end + 1)
            nxt = len(text) if nxt < 0 else nxt
            line = text[end + 1 : nxt]
            if not line.strip() or "|" not in line:
                break
            end = nxt
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _inside_group(text: str, opening: re.Pattern[str], at: int) -> bool:
    """``at`` is inside the braced argument of the last ``opening`` match before it."""
    last = None
    for m in opening.finditer(text, 0, at):
        last = m
    if last is None:
        return False
    depth = 1
    for i in range(last.end(), at):
        c = text[i]
        if c in "{}" and i > 0 and text[i - 1] == "\\":
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return False
    return True


def _latex_env(text: str, at: int) -> str | None:
    """The open table or display-math environment at ``at`` (None outside one)."""
    stack: list[str] = []
    for m in _LATEX_ENV.finditer(text, 0, at):
        if m.group(1) == "begin":
            stack.append(m.group(2))
        elif stack and stack[-1] == m.group(2):
            stack.pop()
    if not stack:
        return None
    return TABLE_CELL if re.fullmatch(_TABLE_ENVS, stack[-1]) else MATH


def _in_display_math(text: str, at: int) -> bool:
    """Inside ``\\[ ... \\]`` or ``$$ ... $$`` (counted from the window's start)."""
    before = text[:at]
    if len(re.findall(r"(?<!\\)\$\$", before)) % 2 == 1:
        return True
    # "\\[4pt]" (a line break with space, in tables and align) is not "\["
    opens = [m.start() for m in re.finditer(r"(?<!\\)\\\[", before)]
    closes = [m.start() for m in re.finditer(r"(?<!\\)\\\]", before)]
    return bool(opens) and (not closes or opens[-1] > closes[-1])


def place_of(text: str, start: int, language: DocKind) -> str | None:
    """What the citation at ``start`` of ``text`` stands in when that is not running text
    (:data:`TABLE_CELL`, :data:`CAPTION`, :data:`HEADING`, :data:`MATH`), else ``None``."""
    try:
        a = max(0, start - REACH)
        window = text[a : min(len(text), start + REACH)]
        at = start - a
        line_start = window.rfind("\n", 0, at) + 1
        line_end = window.find("\n", at)
        line = window[line_start : line_end if line_end >= 0 else len(window)]
        if language == DocKind.MARKDOWN:
            if any(s <= at <= e for s, e in pipe_table_lines(window)):
                return TABLE_CELL
            if re.match(r"^[ \t]{0,3}#{1,6}\s", line):
                return HEADING
            if _MD_CAPTION.match(line):
                return CAPTION
            if _in_display_math(window, at):
                return MATH
            return None
        if _inside_group(window, _CAPTION, at):
            return CAPTION
        if _inside_group(window, _SECTION, at):
            return HEADING
        env = _latex_env(window, at)
        if env is not None:
            return env
        if _in_display_math(window, at):
            return MATH
        return None
    except Exception:  # odd input: treat as running text; the claim's own test still runs
        return None
