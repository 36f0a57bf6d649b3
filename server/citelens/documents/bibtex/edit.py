"""Edits of one BibTeX entry that never touch anything else: pure functions, no LSP.

Every function takes the file's text and a parsed :class:`~citelens.core.model.BibEntry`
of it and returns :class:`TextEdit` s: character offsets into that text. An edit of
an entry replaces exactly ``entry.span`` (the entry from ``@`` to its closing
delimiter); only :func:`delete_entry` also takes the blank line around the entry.

Inside the entry the change is minimal: a changed field gets a new *value* (its
name and the whitespace around it stay), a removed field goes with its separator,
new fields are added after the last one in the entry's own style (indentation,
field-name case, ``=`` alignment, braces or quotes, trailing comma), which
:func:`~citelens.documents.bibtex.style.detect_style` reads from the entry itself and
:mod:`citelens.documents.bibtex.render` writes. Comments and fields the edit is not
about are kept byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from citelens.core.latextext import to_unicode
from citelens.core.model import BibEntry, BibField
from citelens.documents.bibtex.names import split_names
from citelens.documents.bibtex.render import (
    RECORD_FIELDS,
    balanced,
    entry_type_for,
    field_text,
    in_field_order,
    record_fields,
    render_value,
    same_case,
)
from citelens.documents.bibtex.style import (
    Style,
    detect_style,
    fields_in_order,
    line_start,
    only_space,
    separator_end,
)
from citelens.sources.records import PaperRecord


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace ``text[start:end]`` with ``new``."""

    start: int
    end: int
    new: str


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (any order)."""
    out = text
    for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        out = out[: e.start] + e.new + out[e.end :]
    return out


def replace_field(text: str, entry: BibEntry, name: str, value: str, style: Style | None = None) -> TextEdit:
    """Give field ``name`` the new ``value`` (BibTeX source), or add it when missing."""
    return _entry_edit(text, entry, {name: value}, (), style)


def remove_field(text: str, entry: BibEntry, name: str) -> TextEdit:
    """Remove field ``name`` and its separator (no-op edit when the entry has none)."""
    return _entry_edit(text, entry, {}, (name,), None)


def _entry_edit(
    text: str,
    entry: BibEntry,
    values: Mapping[str, str],
    remove: Iterable[str],
    style: Style | None,
    *,
    new_type: str | None = None,
) -> TextEdit:
    """One edit of ``entry.span``: set ``values`` (raw BibTeX values, delimiters added
    here), remove the fields ``remove``, and change the entry type to ``new_type``."""
    style = style or detect_style(text, entry)
    start, end = entry.span.start, entry.span.end
    fields = fields_in_order(entry)
    remove_set = {n for n in remove if n in entry.fields} - set(values)
    subs: list[TextEdit] = []
    # change values in place
    for f in fields:
        if f.name in values:
            new = render_value(values[f.name], style, f.name)
            if text[f.value_span.start : f.value_span.end] != new:
                subs.append(TextEdit(f.value_span.start, f.value_span.end, new))
    # removals
    kept = [f for f in fields if f.name not in remove_set]
    for f in fields:
        if f.name in remove_set:
            subs.append(_removal(text, entry, f))
    # additions
    added = [(n, v) for n, v in values.items() if n not in entry.fields]
    if added:
        subs.append(_addition(text, entry, kept, added, style))
    elif kept and fields[-1].name in remove_set:
        # the last field went: no dangling comma where the entry had no trailing one
        close = end - 1
        if separator_end(text, fields[-1], close)[1] is None:
            pcomma = separator_end(text, kept[-1], close)[1]
            if pcomma is not None:
                subs.append(TextEdit(pcomma, pcomma + 1, ""))
    # entry type
    if new_type and new_type != entry.entry_type:
        m = re.compile(r"@[ \t]*([A-Za-z]\w*)").match(text, start)
        if m is not None:
            written = m.group(1)
            subs.append(TextEdit(m.start(1), m.end(1), same_case(new_type, written)))
    subs = _merge_overlaps(subs)
    body = apply_edits(text[start:end], [TextEdit(e.start - start, e.end - start, e.new) for e in subs])
    return TextEdit(start, end, body)


def _merge_overlaps(edits: list[TextEdit]) -> list[TextEdit]:
    """Removals of neighbours may share a separator: join overlapping ranges."""
    edits = sorted(edits, key=lambda e: (e.start, e.end))
    out: list[TextEdit] = []
    for e in edits:
        if out and e.start < out[-1].end:
            prev = out[-1]
            out[-1] = TextEdit(prev.start, max(prev.end, e.end), prev.new + e.new)
        else:
            out.append(e)
    return out


def _removal(text: str, entry: BibEntry, f: BibField) -> TextEdit:
    """Remove ``f`` with its own separator (never the one of another field)."""
    close = entry.span.end - 1
    after, comma = separator_end(text, f, close)
    ls = line_start(text, f.span.start)
    own_line_start = ls > entry.span.start and only_space(text[ls : f.span.start])
    stop = after if comma is not None else f.value_span.end
    eol = text.find("\n", stop, close)
    rest = text[stop : close if eol < 0 else eol]
    if own_line_start and eol >= 0 and only_space(rest.rstrip("\r")):
        return TextEdit(ls, eol + 1, "")
    if comma is not None:  # inline: up to the next field (or the closing delimiter)
        j = after
        while j < close and text[j] in " \t":
            j += 1
        return TextEdit(f.span.start, j, "")
    j = f.span.start
    while j > entry.key_span.end and text[j - 1] in " \t":
        j -= 1
    return TextEdit(j, f.value_span.end, "")


def _addition(
    text: str, entry: BibEntry, kept: list[BibField], added: list[tuple[str, str]], style: Style
) -> TextEdit:
    close = entry.span.end - 1
    rendered = [field_text(n, render_value(v, style, n), style) for n, v in added]
    if style.one_line:
        if kept:
            last = kept[-1]
            after, comma = separator_end(text, last, close)
            if comma is not None:
                return TextEdit(after, after, " " + ", ".join(rendered) + ",")
            return TextEdit(last.value_span.end, last.value_span.end, ", " + ", ".join(rendered))
        return _after_key(text, entry, " " + ", ".join(rendered), style)
    nl = style.newline
    lines = (nl + style.indent).join(
        r + ("," if k < len(rendered) - 1 or style.trailing_comma else "") for k, r in enumerate(rendered)
    )
    if kept:
        last = kept[-1]
        after, comma = separator_end(text, last, close)
        if comma is not None:
            # after the comma and the rest of its line (a comment stays with its field)
            eol = text.find("\n", comma, close)
            if eol >= 0 and only_space(text[comma + 1 : eol].rstrip("\r")):
                pos = eol + 1
                return TextEdit(pos, pos, style.indent + lines + nl)
            return TextEdit(comma + 1, comma + 1, nl + style.indent + lines)
        return TextEdit(last.value_span.end, last.value_span.end, "," + nl + style.indent + lines)
    return _after_key(text, entry, nl + style.indent + lines, style, closing_nl=True)


def _after_key(text: str, entry: BibEntry, insert: str, style: Style, closing_nl: bool = False) -> TextEdit:
    """Insert after the key's comma (adding one when the entry has none)."""
    pos = entry.key_span.end
    close = entry.span.end - 1
    j = pos
    while j < close and text[j].isspace():
        j += 1
    tail = style.newline if closing_nl and "\n" not in text[j:close] else ""
    if j < close and text[j] == ",":
        return TextEdit(j + 1, j + 1, insert + tail)
    return TextEdit(pos, pos, "," + insert + tail)


_SPACE = re.compile(r"\s+")


def _same_text(existing: str, new: str) -> bool:
    def norm(s: str) -> str:
        return _SPACE.sub(" ", to_unicode(s)).strip().casefold()

    return norm(existing) == norm(new)


def _same_authors(existing: str, new: str) -> bool:
    a, _ = split_names(existing)
    b, _ = split_names(new)
    return len(a) == len(b) and all(_same_text(x.last, y.last) for x, y in zip(a, b, strict=True))


def replace_entry(
    text: str,
    entry: BibEntry,
    record: PaperRecord,
    *,
    same_paper: bool = True,
    drop: Iterable[str] = (),
    style: Style | None = None,
) -> TextEdit:
    """``entry`` rewritten from ``record``: the key, the user's own fields (note,
    keywords, file, abstract, ...) and the formatting stay.

    ``same_paper``: the record describes the paper the entry means (a metadata fix),
    so fields the record has no value for are kept; otherwise (another paper was
    chosen) every bibliographic field the record lacks is removed. ``drop`` names
    fields to remove in any case (a DOI known to be wrong).
    """
    new_type = entry_type_for(record, entry.entry_type)
    wanted = record_fields(record, new_type, style)
    values: dict[str, str] = {}
    for name, value in wanted.items():
        f = entry.fields.get(name)
        if f is not None and same_paper:
            if name == "author" and _same_authors(f.value, value):
                continue
            if name != "author" and _same_text(f.value, value):
                continue
        values[name] = value
    remove = set(drop) - set(values)
    # the venue field of the other type goes (journal <-> booktitle)
    if "booktitle" in wanted:
        remove |= {"journal", "journaltitle"}
    if "journal" in wanted:
        remove |= {"booktitle"}
    if not same_paper:
        remove |= {
            n
            for n in (
                *RECORD_FIELDS,
                "journaltitle",
                "month",
                "issue",
                "publisher",
                "pmid",
                "arxiv",
                "arxivid",
                "primaryclass",
                "eprinttype",
            )
            if n not in wanted
        }
    return _entry_edit(text, entry, values, remove, style, new_type=new_type)


def merge_entries(
    text: str, keep: BibEntry, other: BibEntry, other_text: str | None = None, style: Style | None = None
) -> TextEdit:
    """``keep`` with every field of ``other`` it lacks (``other_text``: the text of
    ``other``'s file when it is another file). Values are copied as written; a bare
    macro name becomes its braced value (the macro may not exist in this file)."""
    source = text if other_text is None else other_text
    values: dict[str, str] = {}
    for f in fields_in_order(other):
        if f.name in keep.fields:
            continue
        raw = source[f.value_span.start : f.value_span.end]
        if raw[:1] == "{" and raw[-1:] == "}" and balanced(raw[1:-1]):
            values[f.name] = raw[1:-1]
        elif raw[:1] == '"' and raw[-1:] == '"' and "#" not in raw and balanced(raw[1:-1]):
            values[f.name] = raw[1:-1]
        elif raw.isdigit():
            values[f.name] = raw
        elif balanced(f.value):
            values[f.name] = f.value
    return _entry_edit(text, keep, values, (), style)


def delete_entry(text: str, entry: BibEntry) -> TextEdit:
    """Remove ``entry`` with its line and one blank line around it."""
    start, end = entry.span.start, entry.span.end
    ls = line_start(text, start)
    if only_space(text[ls:start]):
        start = ls
    eol = text.find("\n", end)
    line_rest = text[end : len(text) if eol < 0 else eol]
    if only_space(line_rest.rstrip("\r")):
        end = len(text) if eol < 0 else eol + 1
        # one blank line after it goes too (else one before it)
        nxt = text.find("\n", end)
        if end < len(text) and nxt >= 0 and only_space(text[end:nxt].rstrip("\r")):
            end = nxt + 1
        elif start > 0:
            prev_start = line_start(text, start - 1)
            if only_space(text[prev_start : start - 1].rstrip("\r")):
                start = prev_start
    return TextEdit(start, end, "")


def append_entry(text: str, entry_text: str) -> TextEdit:
    """Insert ``entry_text`` at the end of ``text`` after one blank line; nothing else
    of the file changes."""
    nl = "\r\n" if "\r\n" in text else "\n"
    if not text.strip():
        return TextEdit(len(text), len(text), entry_text + nl)
    if text.endswith(nl + nl) or text.endswith("\n\n"):
        lead = ""
    elif text.endswith("\n"):
        lead = nl
    else:
        lead = nl + nl
    return TextEdit(len(text), len(text), lead + entry_text + nl)


def field_edits(
    text: str,
    entry: BibEntry,
    values: Mapping[str, str],
    remove: Iterable[str] = (),
    *,
    order: Sequence[str] = (),
    style: Style | None = None,
) -> list[TextEdit]:
    """Edits of the named fields of ``entry`` only, each as small as it can be: a changed
    field's value (its name, spacing and delimiters' kind stay), a removed field with its
    separator, an added field on a line of its own where ``order`` (the file's field order,
    :func:`~citelens.documents.bibtex.render.detect_field_order`) puts it, in the entry's
    style. Every other byte of the entry stays. Non-overlapping, in text order."""
    style = style or detect_style(text, entry)
    fields = fields_in_order(entry)
    remove_set = {n for n in remove if n in entry.fields} - set(values)
    subs: list[TextEdit] = []
    for f in fields:
        if f.name in values:
            new = render_value(values[f.name], _style_of_field(text, f, style), f.name)
            if text[f.value_span.start : f.value_span.end] != new:
                subs.append(TextEdit(f.value_span.start, f.value_span.end, new))
    kept = [f for f in fields if f.name not in remove_set]
    if remove_set:
        if kept and fields[-1].name in remove_set and not style.trailing_comma:
            # the last field goes and the comma before it with it: the whole-entry edit
            # knows how (still only this entry's text)
            return [_entry_edit(text, entry, values, remove_set, style)]
        subs.extend(_removal(text, entry, f) for f in fields if f.name in remove_set)
    added = _added(entry, values)
    if added:
        if style.one_line or not kept:
            subs.append(_addition(text, entry, kept, added, style))
        else:
            subs.extend(_placed(text, entry, kept, added, order, style))
    return _merge_overlaps(subs)


def _added(entry: BibEntry, values: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(n, v) for n, v in values.items() if n not in entry.fields]


def _style_of_field(text: str, f: BibField, style: Style) -> Style:
    """The entry's style, with this field's own delimiters (a quoted field stays quoted)."""
    raw = text[f.value_span.start : f.value_span.end]
    if raw[:1] == '"' and not style.quotes:
        return replace(style, quotes=True)
    if raw[:1] == "{" and style.quotes:
        return replace(style, quotes=False)
    if raw.isdigit() and not style.bare_numbers:
        return replace(style, bare_numbers=True)
    return style


def _placed(
    text: str,
    entry: BibEntry,
    kept: list[BibField],
    added: list[tuple[str, str]],
    order: Sequence[str],
    style: Style,
) -> list[TextEdit]:
    """Added fields each before the first kept field that ``order`` puts after it (on the
    lines of their own), the rest after the last field."""
    names = [f.name for f in kept]
    before: dict[str, list[tuple[str, str]]] = {}
    last: list[tuple[str, str]] = []
    for name, value in added:
        ranked = in_field_order([*names, name], order)
        after = ranked[ranked.index(name) + 1 :]
        nxt = next((n for n in after if n in names), None)
        if nxt is None:
            last.append((name, value))
        else:
            before.setdefault(nxt, []).append((name, value))
    out: list[TextEdit] = []
    nl = style.newline
    for f in kept:
        group = before.get(f.name)
        if not group:
            continue
        ls = line_start(text, f.span.start)
        lines = "".join(
            style.indent + field_text(n, render_value(v, style, n), style) + "," + nl for n, v in group
        )
        if ls > entry.span.start and only_space(text[ls : f.span.start]):
            out.append(TextEdit(ls, ls, lines))
        else:
            inline = ", ".join(field_text(n, render_value(v, style, n), style) for n, v in group)
            out.append(TextEdit(f.span.start, f.span.start, inline + ", "))
    if last:
        out.append(_addition(text, entry, kept, last, style))
    return out
