"""BibTeX parsing with exact spans, fast enough for 70k-entry files.

:func:`parse_bib` finds every entry and its key eagerly, with compiled regular
expressions and C-level string searches, and parses an entry's *fields* only
when they are first read (``entry.fields``/``entry.get``). Files up to
:data:`EAGER_LIMIT` characters (any hand-written bibliography) are parsed
completely at once, so ``BibFile.problems`` lists every problem; bigger files
are lazy, and a field-level problem is appended to ``problems`` when the
entry's fields are first read (:func:`all_problems` forces every entry).

Semantics follow BibTeX, with the recovery rules of bibtexparser 2:

* an entry starts at ``@type{`` or ``@type(`` outside any other entry and ends
  at the first closing delimiter at brace depth 0; an entry that is not closed
  before the next line that starts with ``@type{`` is a :class:`BibProblem`,
  and parsing goes on at that line;
* ``\\{`` counts as a brace, as in BibTeX (bibtexparser 2 does not count it);
* ``@string`` macros are case-insensitive and usable before their definition
  (the whole file's macros apply, as in bibtexparser); ``jan``..``dec`` are
  predefined; an undefined macro stands for its own name;
* ``@string`` expansion is capped (a 1 KB file of ``@string{sI = s(I-1) # s(I-1)}``
  lines would otherwise need terabytes): a value that uses macros may expand to
  :data:`MAX_EXPANDED_CHARS` characters, definitions may nest :data:`MAX_MACRO_DEPTH`
  deep, and a file's expansions together stay within a budget proportional to its size.
  An ``@string`` over a cap is reported at its own span and left undefined (so are the
  ``@string`` built on it, quietly); a field that uses such a macro or goes over a cap
  is reported at its value and keeps its source text; every other entry is parsed;
* a field that occurs twice keeps its first value (BibTeX) and is reported;
* text outside entries, ``@comment`` and ``@preamble`` are skipped.

Nothing here raises for bad input: problems become :class:`BibProblem`.
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from sys import intern

from citelens.core.caps import MAX_PER_KIND, kind_of, more_text
from citelens.core.model import BibEntry, BibField, BibFile, BibProblem, Span
from citelens.core.text import EditedText, common_prefix, common_suffix
from citelens.documents.bibtex.keytable import table_after_edit

#: Texts up to this many characters have all their fields parsed at once.
EAGER_LIMIT = 2_000_000
#: A value that uses @string macros expands to at most this many characters.
MAX_EXPANDED_CHARS = 100_000
#: @string definitions built on other @string definitions, at most this deep.
MAX_MACRO_DEPTH = 16
#: All macro-using values of a file expand to at most this plus twice the file's length.
EXPANSION_BUDGET_CHARS = 20_000_000

MONTH_MACROS: dict[str, str] = {
    "jan": "January",
    "feb": "February",
    "mar": "March",
    "apr": "April",
    "may": "May",
    "jun": "June",
    "jul": "July",
    "aug": "August",
    "sep": "September",
    "oct": "October",
    "nov": "November",
    "dec": "December",
}


def _nested_braces(depth: int) -> str:
    """Regex for the inside of a ``{...}`` group nested at most ``depth`` levels."""
    inner = r"[^{}]*+"
    for _ in range(depth):
        inner = r"(?:[^{}]++|\{" + inner + r"\})*+"
    return inner


_DEPTH = 10
_INNER = _nested_braces(_DEPTH - 1)
# the body of a {}-entry: anything up to the first '}' at depth 0
_BRACE_BODY = re.compile(r"(?:[^{}]++|\{" + _INNER + r"\})*+\}")
# the body of a ()-entry: '"..."' may hold ')' and braces nest
_PAREN_BODY = re.compile(r'(?:[^{}()"]++|\(|\{' + _INNER + r'\}|"(?:[^"{}]++|\{' + _INNER + r'\})*+")*+\)')
_BRACED = re.compile(r"\{(" + _INNER + r")\}")
_QUOTED = re.compile(r'"((?:[^"{}]++|\{' + _INNER + r'\})*+)"')
_BRACE_CHAR = re.compile(r"[{}]")
_PAREN_CHAR = re.compile(r"[{})]")

_HEAD = re.compile(r"@[ \t]*([A-Za-z]\w*)?\s*([{(])")
_LINE_START_AT = re.compile(r"^[^\S\n]*@", re.MULTILINE)
_LINE_START_HEAD = re.compile(r"\n[ \t]*@[ \t]*[A-Za-z]\w*\s*[{(]")
_KEY_BRACE = re.compile(r"\s*([^\s,{}]*)\s*")
_KEY_PAREN = re.compile(r"\s*([^\s,{}()]*)\s*")
_GAP = r"(?:\s|%[^\n]*)*"  # whitespace and %-comments (between fields, as biber allows)
_FIELD_NAME = re.compile(_GAP + r"([^\s=,{}()\"#%]+)\s*=\s*")
_SPACE = re.compile(_GAP)
_BARE = re.compile(r"[^\s,#{}()\"=]+")
_HASH = re.compile(r"\s*#\s*")
_SEP = re.compile(_GAP + "(,?)" + _GAP)
# the common case in one match: name = {value with braces nested once} | "value" | 123, then ','
_FAST_FIELD = re.compile(
    _GAP + r'([^\s=,{}()"#%]+)\s*=\s*'
    r'(\{([^{}]*+(?:\{[^{}]*+\}[^{}]*+)*+)\}|"([^"{}]*+)"|(\d++))'
    r"(?!\s*#)" + _GAP + "(,?)" + _GAP
)

#: :data:`_FAST_FIELD` as a whole in group 1 (for ``findall``).
_FAST_FIELDS = re.compile(f"({_FAST_FIELD.pattern})")


@dataclass(slots=True)
class _Context:
    """What the lazy field parser of every entry of one file shares."""

    text: str
    macros: dict[str, str]
    problems: list[BibProblem] = field(default_factory=list)
    depth: dict[str, int] = field(default_factory=dict)  # @string name -> nesting depth
    unexpanded: set[str] = field(default_factory=set)  # @string names over a cap
    budget: int = EXPANSION_BUDGET_CHARS  # characters macro-using values may still expand to
    #: Entries whose parsed fields are kept, oldest first, in a big file (None: keep all).
    #: Fields read again later are parsed again, quietly (problems are reported once).
    kept: deque[_LazyEntry] | None = None


@dataclass(slots=True)
class _Expansion:
    """The macros one value used, and how long it got (the caps of the module doc)."""

    macros: list[str] = field(default_factory=list)
    unexpanded: list[str] = field(default_factory=list)  # used, but over a cap
    length: int = 0
    too_long: bool = False

    def add(self, piece: str) -> None:
        self.length += len(piece)
        if self.macros and self.length > MAX_EXPANDED_CHARS:
            self.too_long = True


_FIELDS_SLOT = BibEntry.__dict__["fields"]  # the slot that stores parsed fields
_UNREAD = -(1 << 62)  # _LazyEntry._read_at of an entry whose fields are not parsed
_DROPPED = _UNREAD + 1  # ... parsed once (its problems reported), then dropped to save memory
#: A big file keeps the parsed fields of this many entries (the rest are read again when
#: asked for: 68,000 entries' fields would hold 340 MB).
KEPT_FIELDS = 4096


class _LazyEntry(BibEntry):
    """A :class:`BibEntry` whose fields are parsed from the text on first access.

    Its offsets are kept as numbers plus a shift (``_by``): an edit before the entry moves
    it by adding to the shift (:func:`reparse_edit`), with no new objects. Its fields are
    read from the string it was parsed from (``_src``, where its offsets plus ``_tby``
    are), never from a joined copy of the edited text, and moved to where it is now."""

    __slots__ = (
        "_body",
        "_by",
        "_close",
        "_ctx",
        "_end",
        "_key_end",
        "_key_start",
        "_read_at",
        "_src",
        "_start",
        "_tby",
    )
    _body: int  # where the fields start (after the key's comma)
    _close: int  # the entry's closing delimiter
    _start: int
    _end: int
    _key_start: int
    _key_end: int
    _by: int  # added to every offset above
    _read_at: int  # the shift when the fields were parsed (_UNREAD: not parsed)
    _ctx: _Context
    _src: str  # the text the entry was parsed from
    _tby: int  # added to every offset above, in _src

    @property
    def span(self) -> Span:
        by = self._by
        return Span(self._start + by, self._end + by)

    @span.setter
    def span(self, value: Span) -> None:
        by = self._shift()
        self._start, self._end = value.start - by, value.end - by

    @property
    def key_span(self) -> Span:
        by = self._by
        return Span(self._key_start + by, self._key_end + by)

    @key_span.setter
    def key_span(self, value: Span) -> None:
        by = self._shift()
        self._key_start, self._key_end = value.start - by, value.end - by

    def _shift(self) -> int:
        try:
            return self._by
        except AttributeError:  # being built (dataclasses.replace())
            self._by = 0
            self._read_at = _UNREAD
            return 0

    @property
    def fields(self) -> dict[str, BibField]:
        read_at = self._read_at
        if read_at != _UNREAD and read_at != _DROPPED:
            parsed: dict[str, BibField] = _FIELDS_SLOT.__get__(self, BibEntry)
            return parsed
        try:
            ctx, by, src, tby = self._ctx, self._by, self._src, self._tby
        except AttributeError:  # built by dataclasses.replace() without fields
            self.fields = {}
            return {}
        budget = ctx.budget
        if src is ctx.text and tby == by:
            read = _parse_quietly if read_at == _DROPPED else _parse_fields
            parsed = read(ctx, self._body + by, self._close + by)
        else:
            parsed = _read_moved(ctx, src, self._body + tby, self._close + tby, by - tby, read_at == _DROPPED)
        self.fields = parsed
        # an entry whose values used @string macros keeps its fields: the expansion budget
        # it was charged must not be charged again
        if ctx.kept is not None and ctx.budget == budget:
            ctx.kept.append(self)
            if len(ctx.kept) > KEPT_FIELDS:
                ctx.kept.popleft()._drop()
        return parsed

    @fields.setter
    def fields(self, value: dict[str, BibField]) -> None:
        _FIELDS_SLOT.__set__(self, value)
        self._read_at = self._shift()

    def _drop(self) -> None:
        if self._read_at != _UNREAD and self._read_at != _DROPPED:
            _FIELDS_SLOT.__delete__(self)
            self._read_at = _DROPPED

    def _unread(self) -> None:
        """Forget the fields (read again, from the current text, when next asked for)."""
        if self._read_at != _UNREAD and self._read_at != _DROPPED:
            _FIELDS_SLOT.__delete__(self)
        self._read_at = _UNREAD

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BibEntry):
            return NotImplemented
        return _astuple(self) == _astuple(other)

    __hash__ = None  # type: ignore[assignment]


def _read_moved(ctx: _Context, src: str, pos: int, end: int, by: int, quiet: bool) -> dict[str, BibField]:
    """The fields at ``[pos, end)`` of ``src``, an older text, with their spans (and those
    of the problems found) moved by ``by`` to where they are now."""
    here = replace(ctx, text=src)
    n = len(ctx.problems)
    parsed = (_parse_quietly if quiet else _parse_fields)(here, pos, end)
    ctx.budget = here.budget
    if not by:
        return parsed
    ctx.problems[n:] = [BibProblem(_moved(q.span, by), q.message) for q in ctx.problems[n:]]
    return {
        name: BibField(f.name, f.value, _moved(f.span, by), _moved(f.value_span, by))
        for name, f in parsed.items()
    }


def _moved(span: Span, by: int) -> Span:
    return Span(span.start + by, span.end + by)


def _astuple(e: BibEntry) -> tuple[object, ...]:
    return (e.entry_type, e.key, e.span, e.key_span, e.fields, e.path)


def _lazy_entry(
    entry_type: str,
    key: str,
    span: Span,
    key_span: Span,
    path: str,
    ctx: _Context,
    body: int,
    close: int,
) -> _LazyEntry:
    e = _LazyEntry.__new__(_LazyEntry)
    e.entry_type = entry_type
    e.key = key
    e._start, e._end = span.start, span.end
    e._key_start, e._key_end = key_span.start, key_span.end
    e._by = 0
    e._read_at = _UNREAD
    e.path = path
    e._ctx = ctx
    e._src = ctx.text
    e._tby = 0
    e._body = body
    e._close = close
    return e


# --------------------------------------------------------------------------- public API


def parse_bib(
    text: str,
    path: str = "",
    *,
    macros: Mapping[str, str] | None = None,
    eager: bool | None = None,
) -> BibFile:
    """Parse BibTeX ``text`` (of the file ``path``) into entries with exact spans.

    ``macros`` are ``@string`` definitions from elsewhere (e.g. another .bib
    file); the file's own take precedence. ``eager`` parses every entry's
    fields now (default: only when ``len(text) <= EAGER_LIMIT``).
    """
    try:
        return _parse(text, path, macros or {}, eager)
    except Exception as exc:  # pragma: no cover - a bug, but never crash the caller
        return BibFile(path, [], [BibProblem(Span(0, len(text)), f"cannot parse: {exc!r}")])


def field_values(entry: BibEntry) -> dict[str, str]:
    """``{name: value}`` of ``entry``'s fields, as :attr:`BibEntry.fields` gives them. An
    entry of a big file whose fields are not held is read again without building its
    :class:`BibField` objects (what an entry view needs; two fifths of the cost), when
    all its fields are in the common form; anything else is parsed in full, problems
    and all."""
    if isinstance(entry, _LazyEntry) and entry._read_at in (_UNREAD, _DROPPED):
        try:  # the text it was parsed from (values do not move with an edit before it)
            src, tby = entry._src, entry._tby
        except AttributeError:  # built by dataclasses.replace()
            pass
        else:
            values = _common_values(src, entry._body + tby, entry._close + tby)
            if values is not None:
                return values
    return {name: f.value for name, f in entry.fields.items()}


def _common_values(text: str, pos: int, end: int) -> dict[str, str] | None:
    """The values of fields all of the form :data:`_FAST_FIELD` matches (no duplicate
    names), else ``None``: what :func:`_parse_fields_unsafe` gives them, no problem.

    One ``findall`` (C) instead of a match per field: the matches must tile ``[pos, end)``
    (then they are the matches read one after the other), each but the last ending in a
    comma."""
    found = _FAST_FIELDS.findall(text, pos, end)
    if not found:
        gap = _SPACE.match(text, pos, end)
        return {} if gap is not None and gap.end() >= end else None
    if sum(len(f[0]) for f in found) != end - pos or not all(f[6] for f in found[:-1]):
        return None
    # (whole, name, value, braced, quoted, digits, comma): an unmatched group is ""
    values = {f[1].lower(): f[3] or f[4] or f[5] for f in found}
    return values if len(values) == len(found) else None  # else a name twice: a problem


def all_problems(bib: BibFile) -> list[BibProblem]:
    """Every problem of ``bib``, reading all fields first (those of a big file are read
    lazily, their problems with them); sorted by position."""
    for e in bib.entries:
        field_values(e)  # an entry with a problem is parsed in full
    return sorted(bib.problems, key=lambda p: (p.span.start, p.span.end))


# --------------------------------------------------------------------------- scanning


def _parse(text: str, path: str, extra_macros: Mapping[str, str], eager: bool | None) -> BibFile:
    macros: dict[str, str] = dict(MONTH_MACROS)
    macros.update({k.lower(): v for k, v in extra_macros.items()})
    ctx = _Context(text, macros, budget=EXPANSION_BUDGET_CHARS + 2 * len(text))
    problems = _HeadProblems(ctx.problems)  # each kind capped: a million lone '@' lines
    entries: list[BibEntry] = []
    head_search = _HEAD.search
    find = text.find
    n = len(text)
    pos = 0
    # Everything below is linear in the text, even on one 1 MB line of '@': the start of
    # the current line, the last '%' and '@' before it, the next line starting an entry
    # and an unclosed @comment are each found once, not again for every '@'.
    lines = _LineTracker(text)
    while True:
        head = head_search(text, pos)
        at = head.start() if head is not None else n
        if find("@", pos, at) >= 0:  # '@' that start no entry: a problem at a line's start
            _stray_ats(text, pos, at, problems)
        if head is None:
            break
        line_start = lines.advance(at)
        if lines.last_percent >= line_start:
            # "%@misc{...": an entry commented out. biber (biblatex) reads % as a comment;
            # classic BibTeX would read the entry, but nobody comments one out to keep it.
            pos = at + 1
            continue
        etype = (head.group(1) or "").lower()
        opener = head.group(2)
        body_start = head.end()
        stop = lines.entry_stop(body_start)  # the next line that starts an entry
        close = lines.entry_close(body_start, opener, stop, etype == "comment")
        if close < 0:
            if etype != "comment":
                delim = "}" if opener == "{" else ")"
                problems.append(
                    BibProblem(
                        Span(at, _rstrip_pos(text, at, stop)),
                        f"'@{etype}' is not closed: missing '{delim}' (unbalanced braces?)",
                    )
                )
            pos = stop if etype != "comment" else body_start
            continue
        span = Span(at, close + 1)
        pos = close + 1
        if not etype:
            problems.append(BibProblem(Span(at, body_start), "missing entry type after '@'"))
            continue
        if etype in ("comment", "preamble"):
            continue
        if etype == "string":
            _parse_string(ctx, body_start, close, span)
            continue
        key_re = _KEY_BRACE if opener == "{" else _KEY_PAREN
        km = key_re.match(text, body_start, close)
        assert km is not None  # the pattern accepts the empty string
        key = km.group(1)
        after = km.end()
        if not key:
            problems.append(BibProblem(Span(at, body_start), f"'@{etype}' entry without a key"))
            continue
        if after < close and text[after] != ",":
            problems.append(
                BibProblem(
                    Span(after, after + 1),
                    f"expected ',' after the key '{key}', found {text[after]!r}",
                )
            )
            continue
        key_span = Span(km.start(1), km.end(1))
        entries.append(
            _lazy_entry(etype, key, span, key_span, path, ctx, after + 1 if after < close else close, close)
        )
    problems.close()
    _read_fields(ctx, entries, eager)
    return BibFile(path, entries, ctx.problems, macros)


def _read_fields(ctx: _Context, entries: list[BibEntry], eager: bool | None) -> None:
    """Parse every entry's fields now (a small file, or when asked to); a big file keeps
    only the fields read last (:data:`KEPT_FIELDS`)."""
    n = len(ctx.text)
    if eager if eager is not None else n <= EAGER_LIMIT:
        for e in entries:
            _ = e.fields
    elif n > EAGER_LIMIT:
        ctx.kept = deque()


class _LineTracker:
    """The start of the line of an offset, and the last '%' before it, for offsets that only
    grow: each character is looked at once."""

    __slots__ = (
        "_comment_open_until",
        "_line_start",
        "_next_head",
        "_scanned",
        "_searched",
        "last_percent",
        "text",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self._scanned = 0  # line_start and last_percent are right up to here
        self._line_start = 0
        self.last_percent = -1
        self._next_head = -1  # where the next line that starts an entry begins (len: none),
        self._searched = -1  # searched from here
        self._comment_open_until = -1  # an unclosed @comment runs to here

    def entry_stop(self, body_start: int) -> int:
        """Where an entry whose body starts at ``body_start`` must close by: the next line
        that starts an entry (searched again only past the last one found)."""
        n = len(self.text)
        if not self._searched <= body_start <= self._next_head:
            nxt = _LINE_START_HEAD.search(self.text, body_start)
            self._next_head, self._searched = (nxt.start() if nxt is not None else n), body_start
        return self._next_head + 1 if self._next_head < n else n

    def entry_close(self, body_start: int, opener: str, stop: int, comment: bool) -> int:
        """The entry's closing delimiter, or -1. An @comment inside an unclosed one is not
        closed either (scanning each to ``stop`` again would be quadratic)."""
        if comment and body_start < self._comment_open_until:
            return -1
        close = _find_close(self.text, body_start, opener, stop)
        if close < 0 and comment:  # as bibtexparser: "\\{" is no brace here
            close = _scan_close(self.text, body_start, stop, escapes=True, closer=opener)
            if close < 0:
                self._comment_open_until = stop
        return close

    def advance(self, pos: int) -> int:
        """The start of ``pos``'s line (``pos`` never smaller than the last one)."""
        text = self.text
        nl = text.rfind("\n", self._scanned, pos)
        if nl >= 0:
            self._line_start = nl + 1
        pct = text.rfind("%", max(self._scanned, self._line_start), pos)
        if pct >= 0:
            self.last_percent = pct
        self._scanned = pos
        return self._line_start


class _HeadProblems:
    """The problems of a file's entry heads, each kind (:func:`citelens.core.caps.kind_of`)
    kept :data:`~citelens.core.caps.MAX_PER_KIND` times; the last one kept says how many
    more there were (:meth:`close`). A million lone '@' lines kept a million problems."""

    def __init__(self, problems: list[BibProblem]) -> None:
        self.problems = problems
        self.seen: dict[str, int] = {}
        self.last_kept: dict[str, int] = {}  # kind -> index of its last problem kept

    def append(self, problem: BibProblem) -> None:
        kind = kind_of(problem.message)
        n = self.seen.get(kind, 0) + 1
        self.seen[kind] = n
        if n <= MAX_PER_KIND:
            self.last_kept[kind] = len(self.problems)
            self.problems.append(problem)

    def close(self) -> None:
        for kind, n in self.seen.items():
            if n > MAX_PER_KIND:
                i = self.last_kept[kind]
                p = self.problems[i]
                self.problems[i] = BibProblem(p.span, more_text(p.message, n - MAX_PER_KIND))


def _stray_ats(text: str, start: int, end: int, problems: _HeadProblems) -> None:
    """'@'s in ``text[start:end]`` that start no entry: a problem each when it starts a line
    (not "@comment")."""
    for m in _LINE_START_AT.finditer(text, start, end):
        at = m.end() - 1
        if text[at + 1 : at + 8].lower() != "comment":
            eol = text.find("\n", at)
            problems.append(
                BibProblem(
                    Span(at, len(text) if eol < 0 else eol), "expected an entry type and '{' after '@'"
                )
            )


def _rstrip_pos(text: str, start: int, stop: int) -> int:
    return start + len(text[start:stop].rstrip())


def _find_close(text: str, body_start: int, opener: str, limit: int) -> int:
    """Index of the delimiter closing an entry whose body starts at ``body_start``.

    -1 if it is not closed before ``limit``.
    """
    if opener == "{":
        m = _BRACE_BODY.match(text, body_start, limit)
        if m is not None:
            return m.end() - 1
        return _scan_close(text, body_start, limit)
    m = _PAREN_BODY.match(text, body_start, limit)
    return m.end() - 1 if m is not None else -1


def _scan_close(
    text: str,
    start: int,
    limit: int,
    *,
    escapes: bool = False,
    closer: str = "{",
) -> int:
    """Brace scan for groups nested deeper than the regex allows; -1 if never closed.

    With ``escapes``, ``\\{`` and ``\\}`` are not braces. ``closer`` is the opening
    delimiter of the group ("(" ends at a ")" at depth 0).
    """
    depth = 0
    pattern = _PAREN_CHAR if closer == "(" else _BRACE_CHAR
    for m in pattern.finditer(text, start, limit):
        c = m.group()
        if escapes and text[m.start() - 1] == "\\":
            continue
        if c == "{":
            depth += 1
        elif depth > 0:
            depth -= 1 if c == "}" else 0
        elif c == "}" and closer == "(":
            continue
        else:
            return m.start()
    return -1


def _group_end(text: str, start: int, end: int) -> int:
    """End (exclusive) of the ``{...}`` group starting at ``start``; -1 if not closed."""
    m = _BRACED.match(text, start, end)
    if m is not None:
        return m.end()
    close = _scan_close(text, start + 1, end)
    return close + 1 if close >= 0 else -1


def _quoted_end(text: str, start: int, end: int) -> int:
    """End (exclusive) of the ``"..."`` string starting at ``start``; -1 if not closed."""
    m = _QUOTED.match(text, start, end)
    if m is not None:
        return m.end()
    depth = 0
    for i in range(start + 1, end):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == '"' and depth <= 0:
            return i + 1
    return -1


# --------------------------------------------------------------------------- fields


def _parse_value(
    ctx: _Context,
    pos: int,
    end: int,
    exp: _Expansion,
) -> tuple[str, int] | tuple[None, BibProblem]:
    """Parse ``piece (# piece)*`` at ``pos``: (value, end) or (None, problem).

    ``exp`` learns the macros used; once the value is over :data:`MAX_EXPANDED_CHARS`
    no more pieces are kept and the value is ``""`` (the caller reports it).
    """
    text = ctx.text
    parts: list[str] = []
    while True:
        if pos >= end:
            return None, BibProblem(Span(max(pos - 1, 0), pos), "missing field value")
        c = text[pos]
        if c == "{":
            stop = _group_end(text, pos, end)
            if stop < 0:
                return None, BibProblem(Span(pos, end), "unbalanced braces in field value")
            piece = text[pos + 1 : stop - 1]
        elif c == '"':
            stop = _quoted_end(text, pos, end)
            if stop < 0:
                return None, BibProblem(Span(pos, end), "missing closing '\"' in field value")
            piece = text[pos + 1 : stop - 1]
        else:
            m = _BARE.match(text, pos, end)
            if m is None:
                return None, BibProblem(Span(pos, pos + 1), f"unexpected {c!r} in field value")
            stop = m.end()
            word = m.group()
            piece = word if word.isdigit() else _macro(ctx, word, exp)
        exp.add(piece)
        if not exp.too_long:
            parts.append(piece)
        h = _HASH.match(text, stop, end)
        if h is None:
            return ("" if exp.too_long else "".join(parts)), stop
        pos = h.end()


def _macro(ctx: _Context, word: str, exp: _Expansion) -> str:
    """The value of the macro ``word`` (recorded in ``exp``); an undefined one is its name."""
    name = word.lower()
    value = ctx.macros.get(name)
    if value is None:
        if name in ctx.unexpanded:
            exp.unexpanded.append(name)
        return word
    exp.macros.append(name)
    return value


def _expansion_problem(ctx: _Context, exp: _Expansion) -> str | None:
    """Why a field's value may not be expanded (the caps of the module doc), or ``None``."""
    if exp.unexpanded:
        return f"uses @string '{exp.unexpanded[0]}', which is not expanded (see its definition)"
    if not exp.macros:
        return None
    if exp.too_long:
        return (
            f"expands to more than {MAX_EXPANDED_CHARS:,} characters through @string "
            f"'{exp.macros[-1]}': not expanded"
        )
    if _over_budget(ctx, exp):
        return f"not expanded: {_BUDGET_SPENT}"
    return None


_BUDGET_SPENT = (
    "this file's @string macros expand to more characters than CiteLens reads (a crafted or broken .bib?)"
)


def _over_budget(ctx: _Context, exp: _Expansion) -> bool:
    """Charge a macro-using value to the file's expansion budget; whether it is spent."""
    if not exp.macros:
        return False
    ctx.budget -= exp.length
    return ctx.budget < 0


def _parse_quietly(ctx: _Context, pos: int, end: int) -> dict[str, BibField]:
    """The fields of an entry read before: its problems are known already."""
    problems = ctx.problems
    ctx.problems = []
    try:
        return _parse_fields(ctx, pos, end)
    finally:
        ctx.problems = problems


def _parse_fields(ctx: _Context, pos: int, end: int) -> dict[str, BibField]:
    """The fields between ``pos`` (after the key's comma) and the closing delimiter ``end``."""
    try:
        return _parse_fields_unsafe(ctx, pos, end)
    except Exception as exc:  # pragma: no cover - a bug: report it, keep going
        ctx.problems.append(BibProblem(Span(pos, end), f"cannot parse fields: {exc!r}"))
        return {}


def _parse_fields_unsafe(ctx: _Context, pos: int, end: int) -> dict[str, BibField]:
    text = ctx.text
    fields: dict[str, BibField] = {}
    fast = _FAST_FIELD.match
    while True:
        m = fast(text, pos, end)
        if m is not None and (m.group(6) or m.end() >= end):
            name = intern(m.group(1).lower())
            value = m.group(3) if m.group(3) is not None else m.group(4) or m.group(5) or ""
            if name not in fields:
                fields[name] = BibField(name, value, Span(m.start(1), m.end(2)), Span(m.start(2), m.end(2)))
                pos = m.end()
                continue
        pos = _SPACE.match(text, pos, end).end()  # type: ignore[union-attr]
        if pos >= end:
            return fields
        nm = _FIELD_NAME.match(text, pos, end)
        if nm is None:
            stop = _next_comma(text, pos, end)
            ctx.problems.append(
                BibProblem(
                    Span(pos, _rstrip_pos(text, pos, stop)),
                    "expected 'name = value'",
                )
            )
            if stop >= end:
                return fields
            pos = stop + 1
            continue
        name = nm.group(1).lower()
        value_start = nm.end()
        exp = _Expansion()
        value, stop_or_problem = _parse_value(ctx, value_start, end, exp)
        if value is None:
            assert isinstance(stop_or_problem, BibProblem)
            ctx.problems.append(stop_or_problem)
            return fields
        assert isinstance(stop_or_problem, int)
        stop = stop_or_problem
        why = _expansion_problem(ctx, exp)
        if why is not None:
            ctx.problems.append(BibProblem(Span(value_start, stop), why))
            value = text[value_start:stop]
        if name in fields:
            ctx.problems.append(
                BibProblem(
                    Span(nm.start(1), stop),
                    f"duplicate field '{name}': the first one is used",
                )
            )
        else:
            fields[name] = BibField(name, value, Span(nm.start(1), stop), Span(value_start, stop))
        sep = _SEP.match(text, stop, end)
        assert sep is not None
        pos = sep.end()
        if not sep.group(1) and pos < end:
            nxt = _next_comma(text, pos, end)
            ctx.problems.append(
                BibProblem(
                    Span(stop, _rstrip_pos(text, stop, nxt) if nxt > stop else stop + 1),
                    f"expected ',' after the value of '{name}'",
                )
            )
            if nxt >= end:
                return fields
            pos = nxt + 1


def _next_comma(text: str, pos: int, end: int) -> int:
    """The next ',' at brace depth 0 in ``[pos, end)``, else ``end``."""
    depth = 0
    for i in range(pos, end):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth <= 0:
            return i
    return end


def _parse_string(ctx: _Context, pos: int, end: int, span: Span) -> None:
    """``@string{name = value}``: define the macro (later definitions win).

    A definition over a cap (module doc) is reported at ``span`` and left undefined;
    one built on such a macro is left undefined without a report of its own.
    """
    nm = _FIELD_NAME.match(ctx.text, pos, end)
    if nm is None:
        ctx.problems.append(BibProblem(span, "expected 'name = value' in @string"))
        return
    exp = _Expansion()
    value, stop = _parse_value(ctx, nm.end(), end, exp)
    if value is None:
        assert isinstance(stop, BibProblem)
        ctx.problems.append(stop)
        return
    name = nm.group(1).lower()
    depth = 1 + max((ctx.depth.get(m, 0) for m in exp.macros), default=0)
    why = None
    if exp.too_long:
        why = f"@string '{name}' expands to more than {MAX_EXPANDED_CHARS:,} characters"
    elif depth > MAX_MACRO_DEPTH:
        why = f"@string '{name}' is built on more than {MAX_MACRO_DEPTH} nested @string levels"
    elif _over_budget(ctx, exp):
        why = f"@string '{name}': {_BUDGET_SPENT}"
    if why is not None or exp.unexpanded:
        ctx.macros.pop(name, None)
        ctx.unexpanded.add(name)
        if why is not None:
            ctx.problems.append(BibProblem(span, why + ": not expanded"))
        return
    ctx.macros[name] = value
    ctx.depth[name] = depth
    ctx.unexpanded.discard(name)


_UNCLOSED_HEAD = re.compile(r"@\s*[A-Za-z]+\s*[{(]\s*([^,\s{}()\"#%'=]+)")


def unclosed_keys(bib: BibFile, text: str | EditedText) -> dict[str, Span]:
    """Keys of the entries that are not closed (a ``BIB_SYNTAX`` problem, not an entry):
    key -> span of the key. BibTeX reports an error there but still uses the entry.
    Only the problems' own text is read (an ``EditedText`` is not joined)."""
    out: dict[str, Span] = {}
    for p in bib.problems:
        if "is not closed" not in p.message:
            continue
        start = p.span.start
        m = _UNCLOSED_HEAD.match(text[start : max(p.span.end, start + 1024)])
        if m is not None:
            out.setdefault(m.group(1), Span(start + m.start(1), start + m.end(1)))
    return out


# --------------------------------------------------------------------------- edits


def reparse_edit(
    old_text: str | EditedText, old: BibFile, new_text: str | EditedText, span: tuple[int, int] | None = None
) -> BibFile | None:
    """``new_text`` parsed by re-reading only the entries an edit of ``old_text`` touched.

    Entries before the edit are kept as they are, entries after it are moved by the
    edit's length (their fields are read again lazily, from the text they were parsed
    from: an ``EditedText`` is never joined here, only the touched part is read). ``None`` when
    that would not give what :func:`parse_bib` gives (a small file, an ``@string`` or a
    syntax problem in the edited part): then parse the whole text. ``span``: the lengths
    of a prefix and a suffix the two texts share, when the caller knows the edit (else
    they are compared).
    """
    entries = old.entries
    if (
        len(new_text) <= EAGER_LIMIT
        or not entries
        or type(entries[0]) is not _LazyEntry
        or type(entries[-1]) is not _LazyEntry
        or any("not expanded" in q.message for q in old.problems)
    ):  # @string caps
        return None
    if span is not None:
        p, s = span
    else:
        assert isinstance(old_text, str) and isinstance(new_text, str), "an EditedText comes with its edit"
        p = common_prefix(old_text, new_text)
        s = common_suffix(old_text, new_text, min(len(old_text), len(new_text)) - p)
    old_end, delta = len(old_text) - s, len(new_text) - len(old_text)
    first = bisect.bisect_left(entries, p, key=lambda e: e.span.end)  # ends at/after p
    last = bisect.bisect_right(entries, old_end, key=lambda e: e.span.start)  # after: kept
    start = entries[first - 1].span.end if first > 0 else 0
    end = entries[last].span.start if last < len(entries) else len(old_text)
    if start > p or end < old_end:
        return None
    piece = new_text[start : end + delta]
    if "@string" in piece.lower() or "@string" in old_text[start:end].lower():
        return None
    part = parse_bib(piece, old.path, macros=old.strings, eager=False)
    if any(type(e) is not _LazyEntry for e in part.entries):
        return None
    if part.problems and last < len(entries) and not _starts_a_line(new_text, end + delta):
        return None  # an unclosed entry here could reach past the next one: parse it all
    ctx = _Context(piece, dict(old.strings), kept=_still_kept(entries, first, last))
    # problems elsewhere stay where they are (those of re-read entries come back when read)
    ctx.problems += [q for q in old.problems if q.span.end <= start]
    ctx.problems += [
        BibProblem(Span(q.span.start + start, q.span.end + start), q.message) for q in part.problems
    ]
    ctx.problems += [
        BibProblem(Span(q.span.start + delta, q.span.end + delta), q.message)
        for q in old.problems
        if q.span.start >= end and not _inside_entry(entries, last, q.span)
    ]
    for e in entries[:first]:  # same offsets, same text they were read from
        e._ctx = ctx  # type: ignore[attr-defined]
    _move(part.entries, start, ctx)
    # Entries after the edit move by its length: the same objects, shifted (a keystroke
    # near the top of a 68,000-entry file must not build 68,000 new entries).
    _move(entries[last:], delta, ctx)
    bib = BibFile(old.path, [*entries[:first], *part.entries, *entries[last:]], ctx.problems, ctx.macros)
    bib.key_table = table_after_edit(old, entries[first:last], part.entries)
    return bib


def _starts_a_line(text: str | EditedText, at: int) -> bool:
    """Whether the entry head at ``at`` is one an unclosed entry before it stops at (it
    starts a line): then a syntax problem in the text before it stays there, as in a full
    parse, and the entries from ``at`` on are read the same."""
    line = text[max(0, at - 256) : at]
    nl = line.rfind("\n")
    return nl >= 0 and _LINE_START_HEAD.match(line[nl:] + text[at : at + 256]) is not None


def _still_kept(entries: list[BibEntry], first: int, last: int) -> deque[_LazyEntry] | None:
    """The entries with kept fields, less those an edit replaced (they hold the old text)."""
    old_ctx: _Context = entries[0]._ctx  # type: ignore[attr-defined]
    kept, old_ctx.kept = old_ctx.kept, None  # no cycle old text -> deque -> entry -> old text
    if kept is None:
        return None
    gone = {id(e) for e in entries[first:last]}
    return deque(e for e in kept if id(e) not in gone) if gone else deque(kept)


def _inside_entry(entries: list[BibEntry], lo: int, span: Span) -> bool:
    """Whether ``span`` lies in one of ``entries[lo:]`` (a problem found in its fields)."""
    i = bisect.bisect_right(entries, span.start, lo=lo, key=lambda e: e.span.start) - 1
    return i >= lo and entries[i].span.start <= span.start and span.end <= entries[i].span.end


def _move(entries: list[BibEntry], by: int, ctx: _Context) -> None:
    for e in entries:
        if e._read_at != _UNREAD:  # type: ignore[attr-defined]
            e._unread()  # type: ignore[attr-defined]  # its problems come back when read
        e._by += by  # type: ignore[attr-defined]
        e._ctx = ctx  # type: ignore[attr-defined]
