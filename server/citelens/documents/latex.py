"""Citations, bibliography resources and included files in LaTeX sources.

The scan is regex-driven and never raises: comments and verbatim-like material
are first blanked out (same length, so offsets stay exact), then citation
commands are read with their optional arguments and key groups.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from typing import ClassVar

from citelens.core.dockind import DocKind
from citelens.core.model import Citation, Reference, SourceDocument, Span

# Environments whose content is not LaTeX we should read.
_VERBATIM_ENVS = (
    r"verbatim\*?|Verbatim\*?|BVerbatim|LVerbatim|lstlisting|minted|comment|"
    r"filecontents\*?|alltt|code|pyglist|pycode|sageblock|luacode\*?"
)
_MASK = re.compile(
    r"(?P<env>\\begin\{(?P<name>" + _VERBATIM_ENVS + r")\}.*?(?:\\end\{(?P=name)\}|\Z))"
    r"|(?P<verb>\\(?:verb|lstinline|mintinline\{[^}\n]*\})\*?(?P<d>[^a-zA-Z\s{])[^\n]*?(?P=d))"
    r"|(?P<esc>\\[\\%])"
    r"|(?P<comment>%[^\n\r]*)",
    re.DOTALL,
)

# Names of definitions whose first argument is the command being defined.
_DEFINERS = re.compile(
    r"\\(?:re)?newcommand\*?|\\providecommand\*?|\\DeclareRobustCommand\*?|"
    r"\\(?:g|e|x)?def(?![a-zA-Z])|\\let(?![a-zA-Z])|\\NewDocumentCommand|\\RenewDocumentCommand|"
    r"\\DeclareDocumentCommand|\\ProvideDocumentCommand|\\DeclareCiteCommand\*?"
)
_NAME_ARG = re.compile(r"\s*(?:\{\s*\\[a-zA-Z@]+\*?\s*\}|\\[a-zA-Z@]+\*?|\\.)")

# Any command whose name contains "cite" is a citation command, except these.
_NOT_CITATIONS = frozenset(
    {
        "citestyle",
        "setcitestyle",
        "citetext",
        "bibcite",
        "citation",
        "citeindextrue",
        "citeindexfalse",
        "citepunct",
        "citeleft",
        "citeright",
        "citeform",
        "citemid",
        "citedash",
        "citenumfont",
        "citeprefix",
        "citesuffix",
        "citetitlesep",
        "citereset",
        "citesetup",
        "citecolor",
        "citeindextype",
        "citebrackets",
        "defcitealias",
    }
)
# biblatex hooks and definitions (\AtNextCite{...}, \DeclareCiteCommand...) are not citations.
_HOOK_PREFIXES = ("At", "Declare", "def", "Def", "new", "renew", "Renew", "New", "set", "Set")
_CMD = re.compile(r"\\([a-zA-Z]*(?:cite|Cite)[a-zA-Z]*)(\*?)")
_BIB = re.compile(
    r"\\(bibliography|nobibliography|addbibresource|addglobalbib|addsectionbib|bibdata)(?![a-zA-Z])"
)
_INCLUDE = re.compile(
    r"\\(input|include|subfile|subfileinclude|includeonly|import|subimport|inputfrom|"
    r"includefrom|subinputfrom|subincludefrom)(?![a-zA-Z])"
)
_BIBITEM = re.compile(r"\\bibitem(?![a-zA-Z])")
_DOCUMENTCLASS = re.compile(r"\\documentclass(?![a-zA-Z])")
_MAGIC_ROOT = re.compile(r"^[ \t]*%+[ \t]*!\s*TE?X\s+root\s*=\s*(.+?)\s*$", re.MULTILINE | re.I)
_WS = re.compile(r"[ \t]*(?:\r\n|\r|\n)?[ \t]*")
_KEY = re.compile(r"[^,\s{}]+")
#: A group of keys: no braces, no commands. Read whole however long (a \nocite of 400 keys);
#: a group that holds anything else is searched with a length limit (``_balanced``).
_KEY_LIST = re.compile(r"\{[^{}\\]*\}")
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_ANGLE_ARG = re.compile(r"<(?:[^<>\n]|\n(?![ \t]*\n)){0,2000}>")
#: Citation commands whose name does not say "cite" (the bibentry package).
_OTHER_CITE_COMMANDS = ("bibentry",)


def _blank(m: re.Match[str]) -> str:
    if m.group("esc"):
        return m.group(0)
    # Same length, line breaks kept: offsets and line numbers stay exact.
    return re.sub(r"[^\r\n]", " ", m.group(0))


def mask(text: str) -> str:
    """``text`` with comments and verbatim material replaced by spaces."""
    return _MASK.sub(_blank, text)


def _skip_ws(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m else i


_BRACKETS = re.compile(r"\\.|[{}\[\]()]|\n[ \t]*\n", re.S)


def _balanced(text: str, i: int, open_: str, close: str, limit: int = 4000) -> int:
    """Index just past the group opened at ``text[i] == open_``, or -1 when unbalanced.

    Braces nest inside any group; a blank line (a paragraph break, which a citation
    argument cannot hold) or ``limit`` characters end the search, so unclosed groups
    cost little even when there are thousands of them.
    """
    depth = 0
    for m in _BRACKETS.finditer(text, i, min(len(text), i + limit)):
        c = m.group(0)
        if c[0] == "\\":
            continue
        if c[0] == "\n":
            return -1
        if c == open_ or c == "{":
            depth += 1
        elif c == close or c == "}":
            depth -= 1
            if depth == 0:
                return m.end()
            if depth < 0:
                return -1
    return -1


class _Groups:
    """Where each group of a text ends, found in one pass per kind of group: the ends
    :func:`_balanced` would find, without a scan from each group's start (80,000 unclosed
    ``\\cite{`` on one line each scanned 4,000 characters: 30 s; now linear)."""

    #: a group's opening and closing characters: braces nest inside ``[...]`` and ``(...)``
    KINDS: ClassVar[dict[str, tuple[str, str]]] = {"{": ("{", "}"), "[": ("[{", "]}"), "(": ("({", ")}")}

    def __init__(self, text: str) -> None:
        self.text = text
        self._tables: dict[str, tuple[array[int], array[int]]] = {}

    def _table(self, open_: str) -> tuple[array[int], array[int]]:
        """(start of every group of this kind, in order; its end, or -1 if never closed)."""
        table = self._tables.get(open_)
        if table is None:
            opens, closes = self.KINDS[open_]
            starts, ends = array("q"), array("q")
            stack: list[int] = []
            for m in _BRACKETS.finditer(self.text):
                c = m.group(0)
                if c[0] == "\\":
                    continue
                if c[0] == "\n":  # a blank line: no group goes on past it
                    stack.clear()
                elif c in opens:
                    stack.append(len(starts))
                    starts.append(m.start())
                    ends.append(-1)
                elif c in closes and stack:
                    ends[stack.pop()] = m.end()
            table = self._tables[open_] = (starts, ends)
        return table

    def end(self, i: int, open_: str, close: str, limit: int) -> int:
        """``_balanced(text, i, open_, close, limit)``."""
        starts, ends = self._table(open_)
        k = bisect_left(starts, i)
        if k == len(starts) or starts[k] != i:  # not where a group starts (``\\{``): scan
            return _balanced(self.text, i, open_, close, limit)
        e = ends[k]
        return e if 0 <= e <= i + limit else -1


def _definition_names(masked: str) -> set[int]:
    """Offsets of command names that are being defined (not used)."""
    out: set[int] = set()
    for m in _DEFINERS.finditer(masked):
        n = _NAME_ARG.match(masked, m.end())
        if n:
            out.update(range(n.start(), n.end()))
    return out


def _keys(masked: str, start: int, end: int) -> Iterable[tuple[str, Span]]:
    for m in _KEY.finditer(masked, start, end):
        key = m.group(0)
        if "#" in key or key.startswith("\\"):
            continue  # a macro parameter or a command name, not a key
        yield key, Span(m.start(), m.end())


def _is_multicite(name: str) -> bool:
    return name.lower().endswith("cites")


def _citations(doc: SourceDocument, masked: str, extra_commands: frozenset[str], groups: _Groups) -> None:
    defined = _definition_names(masked)
    eol = -1  # the end of the line of the last unclosed citation (one line may hold thousands)
    for m in _cite_commands(masked, extra_commands):
        name = m.group(1)
        if (name in _NOT_CITATIONS or name.startswith(_HOOK_PREFIXES)) and name not in extra_commands:
            continue
        end = m.end()
        if m.start() in defined or (end < len(masked) and masked[end].isalpha()):
            continue
        per_cite = 2 if name.lower().endswith(("volcite", "volcites")) else 1
        found, i = _key_groups(masked, end, _is_multicite(name), groups, per_cite)
        if not found and i < len(masked) and masked[i] == "{":  # never closed: say so
            if eol < i:
                eol = masked.find("\n", i)
                eol = len(masked) if eol < 0 else eol
                while eol > i and masked[eol - 1].isspace():
                    eol -= 1
            doc.unclosed_cites.append(Span(m.start(), eol))
        for gs, ge in found:
            if "\\" in masked[gs:ge] or "{" in masked[gs:ge]:
                continue  # commands or groups inside: code, not a list of keys
            for key, span in _keys(masked, gs, ge):
                if key == "*" and name.lower() == "nocite":
                    doc.nocite_all = True
                    continue
                doc.citations.append(Citation(key, span, name + m.group(2), Span(m.start(), i)))


def _cite_commands(masked: str, extra_commands: frozenset[str]) -> list[re.Match[str]]:
    """Citation commands in document order: ``\\*cite*`` and the configured extra ones."""
    commands: list[re.Match[str]] = list(_CMD.finditer(masked))
    # Names containing "cite" are already matched by _CMD; the others need their own pattern.
    others = [c for c in (*extra_commands, *_OTHER_CITE_COMMANDS) if not re.search("cite|Cite", c)]
    if others:
        extra = re.compile(r"\\(" + "|".join(re.escape(c) for c in others) + r")(?![a-zA-Z])(\*?)")
        commands.extend(extra.finditer(masked))
        commands.sort(key=lambda m: m.start())
    return commands


def _key_groups(
    masked: str, end: int, multi: bool, ends: _Groups, per_cite: int = 1
) -> tuple[list[tuple[int, int]], int]:
    """The ``{keys}`` groups of a citation command ending at ``end`` (every group of a
    biblatex multicite), skipping ``[pre][post]``, apacite's ``<pre>`` and ``(global)``
    arguments; and the end of the command's arguments. ``per_cite``: the brace groups of
    one citation, the keys in the last one (2 for ``\\volcite[pre]{volume}[pages]{key}``)."""
    i = _skip_ws(masked, end)
    groups: list[tuple[int, int]] = []
    while multi and i < len(masked) and masked[i] == "(":  # biblatex multicite (pre)(post)
        j = ends.end(i, "(", ")", 2000)
        if j < 0:
            break
        i = _skip_ws(masked, j)
    if i < len(masked) and masked[i] == "<":  # apacite: \cite<e.g.,>[p.~3]{key}
        a = _ANGLE_ARG.match(masked, i)
        if a is None:
            return groups, i
        i = _skip_ws(masked, a.end())
    seen = 0
    while i < len(masked) and masked[i] in "[{":
        if masked[i] == "[":
            j = ends.end(i, "[", "]", 4000)
            if j < 0:
                break
            i = _skip_ws(masked, j)
            continue
        m = _KEY_LIST.match(masked, i)
        if m is not None and _PARAGRAPH.search(masked, i, m.end()) is None:
            j = m.end()
        else:
            j = ends.end(i, "{", "}", 4000)
        if j < 0:
            break
        seen += 1
        if seen % per_cite == 0:
            groups.append((i + 1, j - 1))
        i = j
        k = _skip_ws(masked, i)
        if (not multi and seen >= per_cite) or k >= len(masked) or masked[k] not in "[{":
            break
        i = k
    return groups, i


def _first_arg(masked: str, i: int, ends: _Groups) -> tuple[str, Span] | None:
    """The text of the mandatory ``{...}`` argument after optional ``[...]`` ones."""
    i = _skip_ws(masked, i)
    while i < len(masked) and masked[i] == "[":
        j = ends.end(i, "[", "]", 4000)
        if j < 0:
            return None
        i = _skip_ws(masked, j)
    if i < len(masked) and masked[i] == "{":
        j = ends.end(i, "{", "}", 4000)
        if j < 0:
            return None
        return masked[i + 1 : j - 1], Span(i + 1, j - 1)
    return None


def _resources(doc: SourceDocument, masked: str, groups: _Groups) -> None:
    for m in _BIB.finditer(masked):
        arg = _first_arg(masked, m.end(), groups)
        if arg is None:
            continue
        value, span = arg
        kind = "addbibresource" if m.group(1).startswith("add") else "bibliography"
        if kind == "bibliography":
            for part in re.finditer(r"[^,]+", value):
                name = part.group(0).strip()
                if name:
                    lead = len(part.group(0)) - len(part.group(0).lstrip())
                    s = span.start + part.start() + lead
                    doc.bibliographies.append(Reference(name, Span(s, s + len(name)), kind))
        elif value.strip():
            doc.bibliographies.append(Reference(value.strip(), span, kind))
    for m in _INCLUDE.finditer(masked):
        kind = m.group(1)
        if kind == "includeonly":
            continue
        arg = _first_arg(masked, m.end(), groups)
        if arg is None:
            if kind == "input":  # TeX primitive form: \input file
                n = re.match(r"[ \t]+([^\s{}\\%]+)", masked[m.end() : m.end() + 300])
                if n:
                    s = m.end() + n.start(1)
                    doc.includes.append(Reference(n.group(1), Span(s, s + len(n.group(1))), "input"))
            continue
        value, span = arg
        if kind in {"import", "subimport", "inputfrom", "includefrom", "subinputfrom", "subincludefrom"}:
            second = _first_arg(masked, span.end + 1, groups)
            if second is None:
                continue
            directory = value.strip().rstrip("/")
            value, span = (directory + "/" if directory else "") + second[0].strip(), second[1]
            kind = "input"
        if value.strip():
            doc.includes.append(Reference(value.strip(), span, kind))


def parse_latex(text: str, path: str = "", extra_commands: Iterable[str] = ()) -> SourceDocument:
    """Everything CiteLens needs from one LaTeX file. Never raises."""
    doc = SourceDocument(path=path, language=DocKind.LATEX)
    try:
        masked = mask(text)
        groups = _Groups(masked)
        _citations(doc, masked, frozenset(c.lstrip("\\") for c in extra_commands), groups)
        _resources(doc, masked, groups)
        for m in _BIBITEM.finditer(masked):
            arg = _first_arg(masked, m.end(), groups)
            if arg is not None and arg[0].strip():
                key = arg[0].strip()
                lead = len(arg[0]) - len(arg[0].lstrip())
                doc.bibitems.setdefault(key, Span(arg[1].start + lead, arg[1].start + lead + len(key)))
        doc.has_documentclass = _DOCUMENTCLASS.search(masked) is not None
        root = _MAGIC_ROOT.search(text[:20_000])
        if root:
            doc.magic_root = root.group(1)
    except RecursionError:  # pragma: no cover - defensive; the scan is iterative
        pass
    return doc
