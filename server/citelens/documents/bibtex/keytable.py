"""What a parsed .bib answers by key: the key table (key -> its first definition, and the
keys defined again; kept on the BibFile and carried over by an edit inside entries), and
@crossref parents (the lookup, and the fields an entry inherits through them).

Split from ``parse.py``, which reads the text; this reads only what it made."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from citelens.core.model import BibEntry, BibField, BibFile


def index_entries(entries: Iterable[BibEntry]) -> dict[str, BibEntry]:
    """Key -> entry; the first entry wins for a duplicate key (as in BibTeX)."""
    out: dict[str, BibEntry] = {}
    for e in entries:
        out.setdefault(e.key, e)
    return out


def key_table(
    bibs: Sequence[BibFile],
) -> tuple[dict[str, BibEntry], dict[str, list[BibEntry]]]:
    """(key -> its first definition, key -> every definition for the keys defined again),
    both in the order of first definitions, over ``bibs`` in order. An entry without a path
    gets its file's. The table of one BibFile is kept on it (``BibFile.key_table``) and
    shared while it lives: never change it."""
    if len(bibs) != 1:
        return _build_table(bibs)
    bib = bibs[0]
    if bib.key_table is None:
        bib.key_table = _build_table(bibs)
    return bib.key_table


_Table = tuple[dict[str, BibEntry], dict[str, list[BibEntry]]]


def table_after_edit(old: BibFile, removed: list[BibEntry], added: list[BibEntry]) -> _Table | None:
    """The key table after an edit that replaced ``removed`` by ``added`` (the same keys in
    the same order, each defined once: an edit inside entries), from the table before it."""
    if old.key_table is None or [e.key for e in removed] != [e.key for e in added]:
        return None
    first, more = old.key_table
    if any(e.key in more or first.get(e.key) is not e for e in removed):
        return None
    new_first = dict(first)  # a copy in C: the same order, the edited entries replaced
    for e in added:
        new_first[e.key] = e
    return new_first, more


def _build_table(
    bibs: Sequence[BibFile],
) -> tuple[dict[str, BibEntry], dict[str, list[BibEntry]]]:
    first: dict[str, BibEntry] = {}
    more: dict[str, list[BibEntry]] = {}
    keep = first.setdefault
    for bib in bibs:
        for e in bib.entries:
            if not e.path:
                e.path = bib.path
            if keep(e.key, e) is not e:
                more.setdefault(e.key, [first[e.key]]).append(e)
    if len(more) > 1:
        more = {k: more[k] for k in first if k in more}
    return first, more


def crossref_lookup(
    source: BibFile | Iterable[BibEntry] | Mapping[str, BibEntry],
) -> Callable[[str], BibEntry | None]:
    """A function from a crossref key to its entry (exact match, else case-insensitive)."""
    if isinstance(source, Mapping):
        exact: dict[str, BibEntry] = dict(source)
    else:
        exact = index_entries(source.entries if isinstance(source, BibFile) else source)
    folded: dict[str, BibEntry] = {}
    for k, e in exact.items():
        folded.setdefault(k.casefold(), e)

    def lookup(key: str) -> BibEntry | None:
        return exact.get(key) or folded.get(key.strip().casefold())

    return lookup


#: Parent types whose ``title`` becomes a child's ``booktitle`` (biblatex inheritance).
_BOOKLIKE = {
    "proceedings",
    "book",
    "collection",
    "mvproceedings",
    "mvbook",
    "mvcollection",
    "reference",
    "mvreference",
    "inbook",
    "bookinbook",
}


def resolve_crossref(
    entry: BibEntry,
    lookup: Callable[[str], BibEntry | None],
    max_depth: int = 4,
) -> dict[str, BibField]:
    """``entry``'s fields plus those it inherits through ``crossref`` (chains followed).

    A field of the entry itself always wins. Inherited fields keep the parent's
    spans (they are in the parent's text). A parent's ``title`` fills a missing
    ``booktitle`` when the parent is a book or proceedings.
    """
    fields = dict(entry.fields)
    seen = {entry.key}
    child = entry
    for _ in range(max_depth):
        ref = child.get("crossref")
        if not ref:
            break
        parent = lookup(ref.strip())
        if parent is None or parent.key in seen:
            break
        seen.add(parent.key)
        for name, f in parent.fields.items():
            if name not in fields and name not in {"crossref", "ids", "entryset"}:
                fields[name] = f
        title = parent.fields.get("title")
        if "booktitle" not in fields and title is not None and parent.entry_type in _BOOKLIKE:
            fields["booktitle"] = BibField("booktitle", title.value, title.span, title.value_span)
        child = parent
    return fields
