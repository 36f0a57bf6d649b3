"""The document model: what the parsers find and where.

Every location is a :class:`Span` of *character* (code point) offsets into the
text of one file, end exclusive. Offsets are converted to LSP positions (UTF-16,
UTF-8 or UTF-32, as negotiated) only at the edge, by :mod:`citelens.core.text`.
Nothing here imports the LSP layer, so ``citelens check`` and the server share it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from citelens.core.dockind import DocKind


@dataclass(frozen=True, slots=True)
class Span:
    """Character offsets ``[start, end)`` into one file's text."""

    start: int
    end: int

    def contains(self, offset: int) -> bool:
        return self.start <= offset <= self.end


# --------------------------------------------------------------------------- citations


@dataclass(frozen=True, slots=True)
class Citation:
    """One cited key in a ``.tex``/``.md`` file."""

    key: str
    span: Span  # the key itself
    command: str  # "citep", "parencites", "pandoc", "pandoc-intext", ...
    command_span: Span  # the whole citation (command and arguments, or the [...] group)


@dataclass(frozen=True, slots=True)
class Reference:
    """A file named by the document: a bibliography resource or an included source."""

    target: str  # as written (without adding extensions)
    span: Span
    kind: str  # "bibliography" | "addbibresource" | "yaml" | "input" | "include" | "subfile"


@dataclass(slots=True)
class SourceDocument:
    """What the LaTeX or Markdown parser found in one file."""

    path: str
    language: DocKind  # LATEX or MARKDOWN
    citations: list[Citation] = field(default_factory=list)
    bibliographies: list[Reference] = field(default_factory=list)
    includes: list[Reference] = field(default_factory=list)
    bibitems: dict[str, Span] = field(default_factory=dict)  # keys defined by \bibitem
    nocite_all: bool = False
    has_documentclass: bool = False
    magic_root: str | None = None  # "% !TEX root = ..."
    #: citation commands whose key group is never closed (``\cite{attention is all``): from
    #: the command to the end of its line
    unclosed_cites: list[Span] = field(default_factory=list)


# --------------------------------------------------------------------------- bibtex


@dataclass(frozen=True, slots=True)
class BibField:
    name: str  # lower-cased
    value: str  # LaTeX source of the value: macros expanded, '#' concatenation applied,
    #             outer braces/quotes removed, inner braces kept
    span: Span  # "name = value" as written
    value_span: Span  # the value as written, including its delimiters


@dataclass(slots=True)
class BibEntry:
    entry_type: str  # lower-cased: "article", "inproceedings", ...
    key: str
    span: Span  # from '@' to the closing delimiter
    key_span: Span
    fields: dict[str, BibField]  # insertion order = file order, names lower-cased
    path: str = ""

    def get(self, name: str) -> str | None:
        f = self.fields.get(name)
        return f.value if f is not None else None


@dataclass(frozen=True, slots=True)
class BibProblem:
    """A place in a .bib file that could not be parsed."""

    span: Span
    message: str


@dataclass(slots=True, weakref_slot=True)  # caches of a BibFile go with it
class BibFile:
    path: str
    entries: list[BibEntry]
    problems: list[BibProblem]
    strings: dict[str, str] = field(default_factory=dict)  # @string macros, lower-cased names
    #: (key -> first definition, key -> every definition of the keys defined again), built
    #: once by ``bibtex.keytable.key_table`` (a keystroke in a .tex analyses the same
    #: 68,000-entry file again) and carried over by an edit inside entries; never changed.
    key_table: tuple[dict[str, BibEntry], dict[str, list[BibEntry]]] | None = field(
        default=None, repr=False, compare=False
    )

    def by_key(self) -> dict[str, list[BibEntry]]:
        out: dict[str, list[BibEntry]] = {}
        for e in self.entries:
            out.setdefault(e.key, []).append(e)
        return out


@dataclass(frozen=True, slots=True)
class Name:
    """One structured author name."""

    first: str
    von: str
    last: str
    jr: str

    @property
    def is_others(self) -> bool:
        return self.last.lower() == "others" and not self.first


class Authors(Sequence[Name]):
    """An entry's author (or editor) list: each name as written, parsed on first use.

    Most entries of a big library are never compared author by author (a batch check of
    68,000 entries offline reads none; duplicate detection reads first authors only), and
    parsing every list cost a sixth of such a check. ``written`` (the names as written,
    split at "and") is what an entry's content hash reads; ``first()`` parses only as far
    as the first real name. Compared, hashed and iterated as the tuple of parsed names.
    """

    __slots__ = ("_last", "_names", "_parse", "written")

    def __init__(
        self, written: tuple[str, ...], parse: Callable[[str], Name], last: Callable[[str], str] | None = None
    ) -> None:
        """``parse``: one written name to a Name; ``last``: only its last part (cheaper)."""
        self.written = written
        self._parse = parse
        self._last = last
        self._names: tuple[Name, ...] | None = None

    @classmethod
    def of(cls, names: Sequence[Name]) -> Authors:
        """Names already parsed (a record's, a test's): ``written`` is each one rendered."""
        if isinstance(names, Authors):
            return names
        parsed = tuple(names)
        out = cls(tuple(_rendered(n) for n in parsed), _unparsable)
        out._names = parsed
        return out

    def names(self) -> tuple[Name, ...]:
        if self._names is None:
            self._names = tuple(n for n in map(self._parse, self.written) if n.last or n.first)
        return self._names

    def first(self) -> Name | None:
        """The first name that is not "others", parsing no further than it."""
        if self._names is not None:
            return next((n for n in self._names if not n.is_others), None)
        for raw in self.written:
            n = self._parse(raw)
            if (n.last or n.first) and not n.is_others:
                return n
        return None

    def first_last(self) -> str:
        """The last part of the first name that is not "others" ("" if none), reading only
        the last part of each written name where that decides it."""
        if self._names is not None or self._last is None:
            name = self.first()
            return name.last if name is not None else ""
        for raw in self.written:
            last = self._last(raw)
            if last and last.lower() != "others":
                return last  # a last part: the name counts, and it is not "others"
            name = self._parse(raw)
            if (name.last or name.first) and not name.is_others:
                return name.last
        return ""

    @overload
    def __getitem__(self, i: int) -> Name: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Name, ...]: ...
    def __getitem__(self, i: int | slice) -> Name | tuple[Name, ...]:
        return self.names()[i]

    def __len__(self) -> int:
        return len(self.names())

    def __iter__(self) -> Iterator[Name]:
        return iter(self.names())

    def __bool__(self) -> bool:
        return bool(self.written) and bool(self.names())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Authors):
            return self.names() == other.names()
        if isinstance(other, tuple):
            return self.names() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.names())

    def __repr__(self) -> str:
        return f"Authors({self.names()!r})"

    def __reduce__(self) -> tuple[Callable[..., Authors], tuple[tuple[str, ...], tuple[Name, ...]]]:
        return _unpickled, (self.written, self.names())  # written as it was: the same content hash


def _rendered(n: Name) -> str:
    """BibTeX's "von Last, Jr, First" form of a parsed name."""
    last = f"{n.von} {n.last}".strip()
    return ", ".join(p for p in (last, n.jr, n.first) if p) if (n.jr or n.first) else last


def _unpickled(written: tuple[str, ...], names: tuple[Name, ...]) -> Authors:
    out = Authors(written, _unparsable)
    out._names = names
    return out


def _unparsable(written: str) -> Name:  # pragma: no cover - an Authors.of list is parsed
    return Name("", "", written, "")


@dataclass(frozen=True, slots=True)
class PrintedReference:
    """A reference as a PDF prints it: what an entry read from a PDF carries besides the
    fields read from it, so that the verdict reads the print itself (``verify/match/printed.py``)."""

    text: str  # the whole reference, one line (U+00AD marks a hyphen printed at a line end)
    page: int
    confident: bool  # its fields were read with confidence (``documents/pdf/fields.py``)
    title: str = ""  # the title as read, U+00AD kept where a line-end hyphen was printed


@dataclass(frozen=True, slots=True)
class EntryView:
    """An entry's fields as plain Unicode, for comparison with scholarly records."""

    key: str
    entry_type: str
    title: str
    authors: Authors  # a tuple of names is taken as already parsed (Authors.of)
    authors_truncated: bool  # "and others"
    year: int | None
    venue: str  # journal, booktitle, or publisher/school for other types
    doi: str | None  # lower-cased, without https://doi.org/
    arxiv_id: str | None
    pmid: str | None
    s2_id: str | None
    url: str | None
    #: an entry read from a PDF: the reference as printed (None for a .bib's entry)
    printed: PrintedReference | None = None
    pages: str | None = None  # as written ("90--95"); compared with the paper's page range

    def __post_init__(self) -> None:
        if not isinstance(self.authors, Authors):  # names already parsed, as a tuple
            object.__setattr__(self, "authors", Authors.of(self.authors))
