"""A record as BibTeX text: :func:`record_fields` (the fields a scholarly record gives an
entry type, as raw BibTeX values), :func:`render_value` / :func:`field_text` (a value and a
field in a :class:`~citelens.documents.bibtex.style.Style`), :func:`render_entry` (a whole new
entry), :func:`latex_escape`, :func:`bibtex_author`. Pure functions, no LSP.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from citelens.core.model import BibEntry
from citelens.documents.bibtex.style import Style, bibtex_name, fields_in_order
from citelens.sources.records import PaperRecord

_WORD_NUMBER = re.compile(r"^\d+$")


def render_value(value: str, style: Style, name: str = "") -> str:
    """``value`` (BibTeX source, braces balanced) with delimiters in ``style``."""
    if style.bare_numbers and name in ("year", "volume", "number") and _WORD_NUMBER.match(value):
        return value
    if (
        name == "title"
        and style.double_braced_title
        and not (value.startswith("{") and value.endswith("}") and balanced(value[1:-1]))
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


def balanced(value: str) -> bool:
    depth = 0
    for c in value:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def field_text(name: str, value: str, style: Style) -> str:
    """``name = value`` in ``style`` (alignment included, no separator)."""
    written = bibtex_name(name, style)
    if style.eq_column is not None:
        pad = " " * max(style.eq_column - len(written), 1)
        return f"{written}{pad}={style.after_eq}{value}"
    return f"{written}{style.before_eq}={style.after_eq}{value}"


def same_case(word: str, like: str) -> str:
    if like.isupper():
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


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


def given_first_author(display: str) -> str:
    """ "Ashish Vaswani" as a BibTeX name written "Given Family" (braced as one unit when a
    comma or "and" would split it otherwise)."""
    name = latex_escape(display)
    return name if "," not in name and " and " not in name.lower() else "{" + name + "}"


def record_fields(record: PaperRecord, entry_type: str, style: Style | None = None) -> dict[str, str]:
    """The fields (raw BibTeX values, no delimiters) a record gives for ``entry_type``; the
    authors in the file's order of names (``style.given_first``)."""
    out: dict[str, str] = {}
    if record.title:
        out["title"] = latex_escape(record.title)
    written = given_first_author if style is not None and style.given_first else bibtex_author
    authors = [a for a in (written(n) for n in record.authors) if a]
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
    values = record_fields(record, entry_type, style)
    names = in_field_order(list(values), order)
    rendered = [field_text(n, render_value(values[n], style, n), style) for n in names]
    head = f"@{same_case(entry_type, type_like or 'article')}{{{key},"
    if style.one_line:
        return head + " " + ", ".join(rendered) + ("," if style.trailing_comma else "") + "}"
    nl = style.newline
    body = nl.join(
        style.indent + r + ("," if k < len(rendered) - 1 or style.trailing_comma else "")
        for k, r in enumerate(rendered)
    )
    return head + nl + body + nl + "}"


def in_field_order(names: list[str], order: Sequence[str]) -> list[str]:
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


def detect_field_order(entries: Sequence[BibEntry]) -> list[str]:
    """Field names in the order the file's entries write them (mean relative position;
    ties and unseen names keep :data:`RECORD_FIELDS` order)."""
    ranks: dict[str, list[float]] = {}
    for entry in entries:
        names = [f.name for f in fields_in_order(entry)]
        for i, name in enumerate(names):
            ranks.setdefault(name, []).append(i / max(len(names) - 1, 1))
    base = {n: i for i, n in enumerate(RECORD_FIELDS)}
    return sorted(ranks, key=lambda n: (sum(ranks[n]) / len(ranks[n]), base.get(n, 99)))


#: Combining accents and the LaTeX command that writes each.
_ACCENTS = {
    "\u0301": "'", "\u0300": "`", "\u0308": '"', "\u0302": "^", "\u0303": "~", "\u0304": "=",
    "\u0307": ".", "\u0306": "u", "\u030c": "v", "\u030a": "r", "\u030b": "H", "\u0327": "c",
    "\u0328": "k",
}  # fmt: skip
_LETTERS = {
    "ł": "{\\l}",
    "Ł": "{\\L}",
    "ø": "{\\o}",
    "Ø": "{\\O}",
    "đ": "{\\dj}",
    "ß": "{\\ss}",
    "ı": "{\\i}",
}


def _as_latex(ch: str) -> str:
    if ch in _LETTERS:
        return _LETTERS[ch]
    parts = unicodedata.normalize("NFD", ch)
    out = parts[0]
    for m in parts[1:]:
        cmd = _ACCENTS.get(m)
        if cmd is None:
            return ch
        out = "{\\" + cmd + "{" + out + "}}" if cmd.isalpha() else "{\\" + cmd + out + "}"
    return out


def for_encoding(value: str, encoding: str) -> str:
    """``value`` with each character ``encoding`` cannot hold written as its LaTeX command
    (``Ł`` -> ``{\\L}``, ``ő`` -> ``{\\H{o}}``) for a file in that encoding (Latin-1); a
    character with no command stays (the edit is then refused, never written lossy)."""
    if encoding in ("utf-8", "buffer"):
        return value
    out = []
    for c in value:
        try:
            c.encode(encoding)
            out.append(c)
        except UnicodeEncodeError:
            out.append(_as_latex(c))
    return "".join(out)
