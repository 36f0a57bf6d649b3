"""Edits of one BibTeX entry that never touch anything else: pure functions, no LSP.

Every function takes the file's text and a parsed :class:`~citelens.core.model.BibEntry`
of it and returns :class:`TextEdit` s: character offsets into that text. An edit of
an entry replaces exactly ``entry.span`` (the entry from ``@`` to its closing
delimiter); only :func:`delete_entry` also takes the blank line around the entry.

Inside the entry the change is minimal: a changed field gets a new *value* (its
name and the whitespace around it stay), a removed field goes with its separator,
new fields are added after the last one in the entry's own style (indentation,
field-name case, ``=`` alignment, braces or quotes, trailing comma), which
:func:`detect_style` reads from the entry itself. Comments and fields the
edit is not about are kept byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from citelens.core.latextext import to_unicode
from citelens.core.model import BibEntry, BibField, Span
from citelens.documents.bibtex.names import split_names
from citelens.sources.records import PaperRecord

__all__ = [
    "Style",
    "TextEdit",
    "append_entry",
    "apply_edits",
    "bibtex_name",
    "delete_entry",
    "detect_field_order",
    "detect_spellings",
    "detect_style",
    "entry_type_for",
    "merge_entries",
    "new_entry_type",
    "record_fields",
    "remove_field",
    "rename_citation",
    "render_entry",
    "render_value",
    "replace_entry",
    "replace_field",
]


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


# --------------------------------------------------------------------------- style


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


_WORD_NUMBER = re.compile(r"^\d+$")


def _name_as_written(text: str, f: BibField) -> str:
    return text[f.span.start : f.span.start + len(f.name)]


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _only_space(s: str) -> bool:
    return s.strip(" \t") == ""


def _fields_of(entry: BibEntry) -> list[BibField]:
    return sorted(entry.fields.values(), key=lambda f: f.span.start)


def _separator_end(text: str, f: BibField, close: int) -> tuple[int, int | None]:
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
    fields = _fields_of(entry)
    body = text[entry.span.start : entry.span.end]
    newline = "\r\n" if "\r\n" in body else "\n"
    if not fields:
        return Style(newline=newline, one_line="\n" not in body and len(body) > 0)
    close = entry.span.end - 1
    one_line = "\n" not in text[entry.key_span.end : fields[-1].value_span.end]
    # indentation: of the first field that starts a line
    indent = "  "
    for f in fields:
        ls = _line_start(text, f.span.start)
        if ls > entry.span.start and _only_space(text[ls : f.span.start]):
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
    _, comma = _separator_end(text, fields[-1], close)
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


_CAMEL = {"archiveprefix": "archivePrefix", "primaryclass": "primaryClass"}


def bibtex_name(name: str, style: Style) -> str:
    """A field name written in ``style``'s case (or as the file spells it)."""
    for low, written in style.spellings:
        if low == name:
            return written
    if style.name_case == "upper":
        return name.upper()
    if style.name_case == "title":
        return _CAMEL.get(name, name)[:1].upper() + _CAMEL.get(name, name)[1:]
    return _CAMEL.get(name, name)


def render_value(value: str, style: Style, name: str = "") -> str:
    """``value`` (BibTeX source, braces balanced) with delimiters in ``style``."""
    if style.bare_numbers and name in ("year", "volume", "number") and _WORD_NUMBER.match(value):
        return value
    if (
        name == "title"
        and style.double_braced_title
        and not (value.startswith("{") and value.endswith("}") and _balanced(value[1:-1]))
    ):
        value = "{" + value + "}"
    if style.quotes and '"' not in _depth0(value):
        return f'"{value}"'
    return "{" + value + "}"


def _depth0(value: str) -> str:
    out = []
    depth = 0
    for c in value:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def _balanced(value: str) -> bool:
    depth = 0
    for c in value:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _field_text(name: str, value: str, style: Style) -> str:
    """``name = value`` in ``style`` (alignment included, no separator)."""
    written = bibtex_name(name, style)
    if style.eq_column is not None:
        pad = " " * max(style.eq_column - len(written), 1)
        return f"{written}{pad}={style.after_eq}{value}"
    return f"{written}{style.before_eq}={style.after_eq}{value}"


# --------------------------------------------------------------------------- field edits


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
    fields = _fields_of(entry)
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
        if _separator_end(text, fields[-1], close)[1] is None:
            pcomma = _separator_end(text, kept[-1], close)[1]
            if pcomma is not None:
                subs.append(TextEdit(pcomma, pcomma + 1, ""))
    # entry type
    if new_type and new_type != entry.entry_type:
        m = re.compile(r"@[ \t]*([A-Za-z]\w*)").match(text, start)
        if m is not None:
            written = m.group(1)
            subs.append(TextEdit(m.start(1), m.end(1), _same_case(new_type, written)))
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


def _same_case(word: str, like: str) -> str:
    if like.isupper():
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _removal(text: str, entry: BibEntry, f: BibField) -> TextEdit:
    """Remove ``f`` with its own separator (never the one of another field)."""
    close = entry.span.end - 1
    after, comma = _separator_end(text, f, close)
    ls = _line_start(text, f.span.start)
    own_line_start = ls > entry.span.start and _only_space(text[ls : f.span.start])
    stop = after if comma is not None else f.value_span.end
    eol = text.find("\n", stop, close)
    rest = text[stop : close if eol < 0 else eol]
    if own_line_start and eol >= 0 and _only_space(rest.rstrip("\r")):
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


def _last_before(kept: list[BibField], f: BibField) -> BibField | None:
    before = [k for k in kept if k.span.start < f.span.start]
    return before[-1] if before else None


def _addition(
    text: str, entry: BibEntry, kept: list[BibField], added: list[tuple[str, str]], style: Style
) -> TextEdit:
    close = entry.span.end - 1
    rendered = [_field_text(n, render_value(v, style, n), style) for n, v in added]
    if style.one_line:
        if kept:
            last = kept[-1]
            after, comma = _separator_end(text, last, close)
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
        after, comma = _separator_end(text, last, close)
        if comma is not None:
            # after the comma and the rest of its line (a comment stays with its field)
            eol = text.find("\n", comma, close)
            if eol >= 0 and _only_space(text[comma + 1 : eol].rstrip("\r")):
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


# --------------------------------------------------------------------------- records


#: Fields a scholarly record describes; other fields of an entry are the user's.
RECORD_FIELDS = (
    "title",
    "author",
    "year",
    "journal",
    "booktitle",
    "volume",
    "number",
    "pages",
    "doi",
    "eprint",
    "archiveprefix",
    "url",
)
_IDENTIFIERS = ("doi", "eprint", "archiveprefix", "url")
_VENUE_FIELDS = ("journal", "journaltitle", "booktitle")
_PROCEEDINGS_TYPES = {"conference", "proceedings-article", "proceedings", "conferencepaper"}
_CHAPTER_TYPES = {"book-chapter", "bookchapter", "book-part", "book-section"}
_JOURNAL_TYPES = {"journalarticle", "journal-article", "article", "review"}
_LATEX_SPECIAL = {
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\^{}",
    "\\": r"\textbackslash{}",
    "{": "",
    "}": "",
}
_SPACE = re.compile(r"\s+")


def latex_escape(text: str) -> str:
    """Plain Unicode as a BibTeX value: specials escaped, braces dropped, one line."""
    text = _SPACE.sub(" ", text).strip()
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def _verbatim(text: str) -> str:
    """An identifier or URL: kept as is, but never with braces or line breaks."""
    return _SPACE.sub("", text).replace("{", "%7B").replace("}", "%7D").replace('"', "%22")


_VON = {
    "van",
    "von",
    "der",
    "den",
    "de",
    "di",
    "da",
    "du",
    "del",
    "della",
    "des",
    "dos",
    "la",
    "le",
    "ter",
    "ten",
    "zu",
    "y",
}
_SUFFIX = {"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"}


def bibtex_author(display: str) -> str:
    """ "Ashish Vaswani" -> "Vaswani, Ashish"; "Ludwig van Beethoven" -> "van Beethoven, Ludwig";
    one word or an odd name (commas, "and") -> braced as one unit."""
    name = latex_escape(display)
    words = name.split(" ")
    if not name:
        return ""
    if "," in name or len(words) == 1 or any(w.lower() == "and" for w in words):
        return "{" + name + "}"
    suffix = ""
    if len(words) > 2 and words[-1].lower() in _SUFFIX:
        suffix = words.pop()
    k = len(words) - 1
    while k > 1 and words[k - 1].lower() in _VON:
        k -= 1
    first, last = " ".join(words[:k]), " ".join(words[k:])
    return f"{last}, {suffix}, {first}" if suffix else f"{last}, {first}"


def entry_type_for(record: PaperRecord, current: str) -> str:
    """article / inproceedings from the record's publication types; else ``current``."""
    types = {t.lower() for t in record.publication_types}
    if record.is_preprint or not record.venue:
        return (
            current
            if current in {"misc", "article", "unpublished", "online", "techreport", "inproceedings"}
            else "misc"
        )
    if types & _PROCEEDINGS_TYPES:
        return "inproceedings"
    if types & _CHAPTER_TYPES:
        return "incollection"
    if types & _JOURNAL_TYPES:
        return "article"
    return current


def _pages(pages: str) -> str:
    return re.sub(r"\s*[-\u2013\u2014]+\s*", "--", pages.strip())


def record_fields(record: PaperRecord, entry_type: str) -> dict[str, str]:
    """The fields (raw BibTeX values, no delimiters) a record gives for ``entry_type``."""
    out: dict[str, str] = {}
    if record.title:
        out["title"] = latex_escape(record.title)
    authors = [a for a in (bibtex_author(n) for n in record.authors) if a]
    if authors:
        out["author"] = " and ".join(authors)
    if record.year:
        out["year"] = str(record.year)
    venue = latex_escape(record.venue or "")
    if venue and not record.is_preprint:
        if entry_type == "article":
            out["journal"] = venue
        elif entry_type in {"inproceedings", "incollection", "conference", "inbook"}:
            out["booktitle"] = venue
    elif record.is_preprint and record.arxiv_id and entry_type == "article":
        out["journal"] = f"arXiv preprint arXiv:{record.arxiv_id}"
    if record.volume:
        out["volume"] = latex_escape(record.volume)
    if record.issue:
        out["number"] = latex_escape(record.issue)
    if record.pages:
        out["pages"] = latex_escape(_pages(record.pages))
    if record.doi:
        out["doi"] = _verbatim(record.doi)
    if record.arxiv_id:
        out["eprint"] = _verbatim(record.arxiv_id)
        out["archiveprefix"] = "arXiv"
    if record.url and not record.doi and not record.arxiv_id:
        out["url"] = _verbatim(record.url)
    return out


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
    wanted = record_fields(record, new_type)
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


# --------------------------------------------------------------------------- duplicates


def merge_entries(
    text: str, keep: BibEntry, other: BibEntry, other_text: str | None = None, style: Style | None = None
) -> TextEdit:
    """``keep`` with every field of ``other`` it lacks (``other_text``: the text of
    ``other``'s file when it is another file). Values are copied as written; a bare
    macro name becomes its braced value (the macro may not exist in this file)."""
    source = text if other_text is None else other_text
    values: dict[str, str] = {}
    for f in _fields_of(other):
        if f.name in keep.fields:
            continue
        raw = source[f.value_span.start : f.value_span.end]
        if raw[:1] == "{" and raw[-1:] == "}" and _balanced(raw[1:-1]):
            values[f.name] = raw[1:-1]
        elif raw[:1] == '"' and raw[-1:] == '"' and "#" not in raw and _balanced(raw[1:-1]):
            values[f.name] = raw[1:-1]
        elif raw.isdigit():
            values[f.name] = raw
        elif _balanced(f.value):
            values[f.name] = f.value
    return _entry_edit(text, keep, values, (), style)


def delete_entry(text: str, entry: BibEntry) -> TextEdit:
    """Remove ``entry`` with its line and one blank line around it."""
    start, end = entry.span.start, entry.span.end
    ls = _line_start(text, start)
    if _only_space(text[ls:start]):
        start = ls
    eol = text.find("\n", end)
    line_rest = text[end : len(text) if eol < 0 else eol]
    if _only_space(line_rest.rstrip("\r")):
        end = len(text) if eol < 0 else eol + 1
        # one blank line after it goes too (else one before it)
        nxt = text.find("\n", end)
        if end < len(text) and nxt >= 0 and _only_space(text[end:nxt].rstrip("\r")):
            end = nxt + 1
        elif start > 0:
            prev_start = _line_start(text, start - 1)
            if _only_space(text[prev_start : start - 1].rstrip("\r")):
                start = prev_start
    return TextEdit(start, end, "")


def rename_citation(
    text: str, key_span: Span, new_key: str, others: Sequence[tuple[str, Span]] = ()
) -> TextEdit:
    """Rename the cited key at ``key_span``; when the same citation already cites
    ``new_key`` (``others``: the keys of the citations in the same command), remove
    it with its comma instead of citing the same key twice."""
    if any(k == new_key for k, _ in others):
        before = [s for k, s in others if s.end <= key_span.start]
        after = [s for k, s in others if s.start >= key_span.end]
        if before and re.fullmatch(r"\s*,\s*", text[before[-1].end : key_span.start]):
            return TextEdit(before[-1].end, key_span.end, "")
        if after and re.fullmatch(r"\s*,\s*", text[key_span.end : after[0].start]):
            return TextEdit(key_span.start, after[0].start, "")
    return TextEdit(key_span.start, key_span.end, new_key)


# --------------------------------------------------------------------------- new entries


def detect_spellings(text: str, entries: Sequence[BibEntry]) -> tuple[tuple[str, str], ...]:
    """How the file writes the field names that have a camel-case form (``archiveprefix``
    or ``archivePrefix``, ``primaryclass``...): the most common spelling of each."""
    seen: dict[str, list[str]] = {}
    for entry in entries:
        for f in _fields_of(entry):
            if f.name in _CAMEL:
                seen.setdefault(f.name, []).append(_name_as_written(text, f))
    return tuple((name, _most_common(ways, _CAMEL[name])) for name, ways in sorted(seen.items()))


def detect_field_order(entries: Sequence[BibEntry]) -> list[str]:
    """Field names in the order the file's entries write them (mean relative position;
    ties and unseen names keep :data:`RECORD_FIELDS` order)."""
    ranks: dict[str, list[float]] = {}
    for entry in entries:
        names = [f.name for f in _fields_of(entry)]
        for i, name in enumerate(names):
            ranks.setdefault(name, []).append(i / max(len(names) - 1, 1))
    base = {n: i for i, n in enumerate(RECORD_FIELDS)}
    return sorted(ranks, key=lambda n: (sum(ranks[n]) / len(ranks[n]), base.get(n, 99)))


def new_entry_type(record: PaperRecord) -> str:
    """``article`` / ``inproceedings`` / ``incollection`` for a published record, ``misc``
    for a preprint or a record without a venue."""
    return entry_type_for(record, "misc" if record.is_preprint or not record.venue else "article")


def render_entry(
    record: PaperRecord,
    key: str,
    style: Style | None = None,
    order: Sequence[str] = (),
    type_like: str = "article",
) -> str:
    """A whole new entry for ``record`` (the fields of :func:`record_fields`, as
    :func:`replace_entry` writes them) in ``style``, fields in ``order`` where it names
    them, the entry type in the case of ``type_like`` (``Article`` -> ``@Inproceedings``)."""
    style = style or Style()
    entry_type = new_entry_type(record)
    values = record_fields(record, entry_type)
    names = _in_order(list(values), order)
    rendered = [_field_text(n, render_value(values[n], style, n), style) for n in names]
    head = f"@{_same_case(entry_type, type_like or 'article')}{{{key},"
    if style.one_line:
        return head + " " + ", ".join(rendered) + ("," if style.trailing_comma else "") + "}"
    nl = style.newline
    body = nl.join(
        style.indent + r + ("," if k < len(rendered) - 1 or style.trailing_comma else "")
        for k, r in enumerate(rendered)
    )
    return head + nl + body + nl + "}"


def _in_order(names: list[str], order: Sequence[str]) -> list[str]:
    """``names`` in ``order``; a name it lacks goes after the ordered names that precede
    it in :data:`RECORD_FIELDS` (volume, pages after year when the file has no volume)."""
    pos = {n: float(i) for i, n in enumerate(order)}
    # the venue goes where the file puts its venue field, whichever one it writes
    written = [pos[v] for v in _VENUE_FIELDS if v in pos]
    for v in _VENUE_FIELDS:
        if v not in pos and written:
            pos[v] = written[0]
    rank: dict[str, float] = {}
    last = -1.0
    for k, name in enumerate([*RECORD_FIELDS, *(n for n in names if n not in RECORD_FIELDS)]):
        if name in pos:
            last = max(last, pos[name])
            rank[name] = pos[name]
        else:
            rank[name] = last + 0.001 * (k + 1)
    return sorted(names, key=lambda n: rank.get(n, 1e9))


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
