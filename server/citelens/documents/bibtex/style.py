"""How a .bib writes its entries: :func:`detect_style` reads an entry's conventions
(indentation, field-name case, ``=`` alignment, braces or quotes, trailing comma) into a
:class:`Style`; :func:`detect_spellings` reads how the file spells the camel-case field
names; :func:`bibtex_name` writes a field name in a style. Pure functions, no LSP.

Also the positions inside an entry that both rendering and edits use
(:func:`fields_in_order`, :func:`separator_end`, :func:`line_start`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from citelens.core.model import BibEntry, BibField
from citelens.documents.bibtex.names import author_list


@dataclass(frozen=True, slots=True)
class Style:
    """How an entry is written, so that added fields look like the others."""

    indent: str = "  "
    name_case: str = "lower"  # "lower" | "upper" | "title"
    eq_column: int | None = None  # '=' at this column after the indent (aligned), else None
    before_eq: str = " "
    after_eq: str = " "
    quotes: bool = False  # '"value"' rather than '{value}'
    bare_numbers: bool = False  # year = 2020
    double_braced_title: bool = False  # title = {{...}}
    trailing_comma: bool = True
    one_line: bool = False
    newline: str = "\n"
    #: (lower-case name, as the file writes it) for names written in more than one case
    #: convention (archiveprefix / archivePrefix): the file's spelling wins
    spellings: tuple[tuple[str, str], ...] = ()
    #: the file writes its authors "Given Family" (else "Family, Given"): :func:`detect_given_first`
    given_first: bool = False


def _name_as_written(text: str, f: BibField) -> str:
    return text[f.span.start : f.span.start + len(f.name)]


def line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def only_space(s: str) -> bool:
    return s.strip(" \t") == ""


def fields_in_order(entry: BibEntry) -> list[BibField]:
    return sorted(entry.fields.values(), key=lambda f: f.span.start)


def separator_end(text: str, f: BibField, close: int) -> tuple[int, int | None]:
    """(position after the comma that follows ``f``, the comma's offset or None)."""
    i = f.value_span.end
    while i < close:
        c = text[i]
        if c == ",":
            return i + 1, i
        if c == "%":
            nl = text.find("\n", i, close)
            i = close if nl < 0 else nl + 1
            continue
        if not c.isspace():
            break
        i += 1
    return f.value_span.end, None


def detect_style(text: str, entry: BibEntry) -> Style:
    """The formatting conventions of ``entry`` (defaults where it has no fields)."""
    fields = fields_in_order(entry)
    body = text[entry.span.start : entry.span.end]
    newline = "\r\n" if "\r\n" in body else "\n"
    if not fields:
        return Style(newline=newline, one_line="\n" not in body and len(body) > 0)
    close = entry.span.end - 1
    one_line = "\n" not in text[entry.key_span.end : fields[-1].value_span.end]
    # indentation: of the first field that starts a line
    indent = "  "
    for f in fields:
        ls = line_start(text, f.span.start)
        if ls > entry.span.start and only_space(text[ls : f.span.start]):
            indent = text[ls : f.span.start]
            break
    written = [_name_as_written(text, f) for f in fields]
    letters = [w for w in written if any(c.isalpha() for c in w)]
    cases = [
        "upper" if w == w.upper() and len(w) > 1 else "title" if w[:1].isupper() else "lower" for w in letters
    ]
    name_case = _most_common(cases, "lower")
    # '=' spacing and alignment
    eq_cols: list[int] = []
    befores: list[str] = []
    afters: list[str] = []
    for f in fields:
        name_end = f.span.start + len(f.name)
        eq = text.find("=", name_end, f.value_span.start)
        if eq < 0:
            continue
        befores.append(text[name_end:eq])
        afters.append(text[eq + 1 : f.value_span.start])
        eq_cols.append(eq - f.span.start)
    before = _most_common([b for b in befores if "\n" not in b], " ")
    after = _most_common([a for a in afters if "\n" not in a], " ")
    eq_column = None
    if (
        not one_line
        and len(eq_cols) >= 2
        and len(set(eq_cols)) == 1
        and len({len(f.name) for f in fields}) >= 2
    ):
        eq_column = eq_cols[0]
        before = " "
    delims = [text[f.value_span.start] for f in fields if f.value_span.end > f.value_span.start]
    quotes = delims.count('"') > delims.count("{")
    year = entry.fields.get("year")
    bare = year is not None and text[year.value_span.start : year.value_span.end].isdigit()
    title = entry.fields.get("title")
    double = False
    if title is not None:
        raw = text[title.value_span.start : title.value_span.end]
        double = (raw.startswith("{{") and raw.endswith("}}")) or (
            raw.startswith('"{') and raw.endswith('}"')
        )
    _, comma = separator_end(text, fields[-1], close)
    return Style(
        indent=indent,
        name_case=name_case,
        eq_column=eq_column,
        before_eq=before,
        after_eq=after,
        quotes=quotes,
        bare_numbers=bare,
        double_braced_title=double,
        trailing_comma=comma is not None,
        one_line=one_line,
        newline=newline,
    )


def _most_common(items: Sequence[str], default: str) -> str:
    if not items:
        return default
    return max(dict.fromkeys(items), key=items.count)


CAMEL_CASE = {"archiveprefix": "archivePrefix", "primaryclass": "primaryClass"}


def bibtex_name(name: str, style: Style) -> str:
    """A field name written in ``style``'s case (or as the file spells it)."""
    for low, written in style.spellings:
        if low == name:
            return written
    if style.name_case == "upper":
        return name.upper()
    if style.name_case == "title":
        return CAMEL_CASE.get(name, name)[:1].upper() + CAMEL_CASE.get(name, name)[1:]
    return CAMEL_CASE.get(name, name)


def detect_given_first(entries: Sequence[BibEntry]) -> bool:
    """Whether the file writes its authors "Ashish Vaswani" rather than "Vaswani, Ashish":
    most of the names of its entries' author lists are written without a comma (a comma in
    braces, "{Collaboration, Planck}", does not count)."""
    given = family = 0
    for entry in entries:
        f = entry.fields.get("author")
        if f is None:
            continue
        for name in author_list(f.value)[0].written:
            if "," in _BRACED.sub("", name):
                family += 1
            elif " " in name.strip():
                given += 1
    return given > family


_BRACED = re.compile(r"\{[^{}]*\}")


def detect_spellings(text: str, entries: Sequence[BibEntry]) -> tuple[tuple[str, str], ...]:
    """How the file writes the field names that have a camel-case form (``archiveprefix``
    or ``archivePrefix``, ``primaryclass``...): the most common spelling of each."""
    seen: dict[str, list[str]] = {}
    for entry in entries:
        for f in fields_in_order(entry):
            if f.name in CAMEL_CASE:
                seen.setdefault(f.name, []).append(_name_as_written(text, f))
    return tuple((name, _most_common(ways, CAMEL_CASE[name])) for name, ways in sorted(seen.items()))
