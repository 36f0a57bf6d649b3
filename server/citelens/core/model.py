"""The document model: what the parsers find and where.

Every location is a :class:`Span` of *character* (code point) offsets into the
text of one file, end exclusive. Offsets are converted to LSP positions (UTF-16,
UTF-8 or UTF-32, as negotiated) only at the edge, by :mod:`citelens.core.text`.
Nothing here imports the LSP layer, so ``citelens check`` and the server share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
    language: str  # "latex" | "markdown"
    citations: list[Citation] = field(default_factory=list)
    bibliographies: list[Reference] = field(default_factory=list)
    includes: list[Reference] = field(default_factory=list)
    bibitems: dict[str, Span] = field(default_factory=dict)  # keys defined by \bibitem
    nocite_all: bool = False
    has_documentclass: bool = False
    magic_root: str | None = None  # "% !TEX root = ..."


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


@dataclass(frozen=True, slots=True)
class EntryView:
    """An entry's fields as plain Unicode, for comparison with scholarly records."""

    key: str
    entry_type: str
    title: str
    authors: tuple[Name, ...]
    authors_truncated: bool  # "and others"
    year: int | None
    venue: str  # journal, booktitle, or publisher/school for other types
    doi: str | None  # lower-cased, without https://doi.org/
    arxiv_id: str | None
    pmid: str | None
    s2_id: str | None
    url: str | None
