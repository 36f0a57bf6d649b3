"""Properties of the quick-fix edits on random bibliographies (hypothesis).

For any valid bibliography (random entries, fields, values and formatting styles)
and any entry of it, every edit (replace from a record, fix DOI, remove DOI, merge
a duplicate) changes only that entry's range, and the file still parses to the
same other entries (same keys, same field values).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citelens.core.model import BibFile
from citelens.documents.bibtex.edit import (
    TextEdit,
    apply_edits,
    delete_entry,
    merge_entries,
    remove_field,
    replace_entry,
    replace_field,
)
from citelens.documents.bibtex.parse import parse_bib
from citelens.sources.records import PaperRecord

FIELD_NAMES = ["title", "author", "year", "doi", "journal", "booktitle", "note", "pages",
               "volume", "keywords", "url", "eprint", "file", "x-own"]
TYPES = ["article", "inproceedings", "misc", "book", "incollection", "techreport"]
_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                min_size=1, max_size=8)
_plain = st.lists(st.one_of(_word, st.sampled_from([".", ",", "-", ":", "/", "\\&", "é"])),
                  min_size=1, max_size=6).map(" ".join)
_value = st.one_of(_plain, _plain.map(lambda v: "{" + v + "}" + " tail"),
                   st.integers(1900, 2030).map(str))


@st.composite
def bibliographies(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 6))
    keys = draw(st.lists(_word, min_size=n, max_size=n, unique_by=str.lower))
    chunks = [draw(st.sampled_from(["", "% a comment\n", "Some text.\n", "@comment{x}\n"]))]
    for key in keys:
        names = draw(st.lists(st.sampled_from(FIELD_NAMES), max_size=7, unique=True))
        one_line = draw(st.booleans())
        indent = draw(st.sampled_from(["  ", "\t", "    ", ""]))
        case = draw(st.sampled_from([str.lower, str.upper, str.title]))
        quotes = draw(st.booleans())
        align = draw(st.booleans())
        trailing = draw(st.booleans())
        width = max((len(x) for x in names), default=0)
        parts = []
        for name in names:
            v = draw(_value)
            if v.isdigit() and draw(st.booleans()):
                written = v
            elif quotes:
                written = f'"{v}"'
            else:
                written = "{" + v + "}"
            label = case(name)
            pad = " " * (width - len(name) + 1) if align else " "
            parts.append(f"{label}{pad}= {written}")
        etype = draw(st.sampled_from(TYPES))
        etype = draw(st.sampled_from([etype, etype.title(), etype.upper()]))
        if one_line:
            body = ", ".join(parts) + ("," if trailing and parts else "")
            entry = f"@{etype}{{{key}, {body}}}"
        else:
            sep = ",\n" + indent
            body = (indent + sep.join(parts) + ("," if trailing else "") + "\n") if parts else ""
            entry = f"@{etype}{{{key},\n{body}}}"
        chunks.append(entry + draw(st.sampled_from(["\n", "\n\n", "\n\n\n", "  \n"])))
    return "".join(chunks)


_title = st.lists(_word, min_size=1, max_size=6).map(" ".join)
records = st.builds(
    PaperRecord,
    source=st.sampled_from(["s2", "crossref", "openalex"]),
    title=_title,
    authors=st.lists(st.lists(_word, min_size=1, max_size=3).map(" ".join), max_size=4),
    year=st.one_of(st.none(), st.integers(1950, 2030)),
    venue=st.one_of(st.none(), _title),
    doi=st.one_of(st.none(), _word.map(lambda w: f"10.1234/{w.lower()}")),
    arxiv_id=st.one_of(st.none(), st.just("2101.01234")),
    volume=st.one_of(st.none(), st.integers(1, 99).map(str)),
    pages=st.one_of(st.none(), st.just("1-10")),
    publication_types=st.lists(st.sampled_from(["JournalArticle", "Conference",
                                                "book-chapter"]), max_size=2),
    is_preprint=st.booleans(),
)


def _fields(bib: BibFile, skip: set[str]) -> dict[str, dict[str, str]]:
    return {e.key: {n: f.value for n, f in e.fields.items()} for e in bib.entries
            if e.key not in skip}


def _check_one(text: str, index: int, edit: TextEdit) -> BibFile:
    before = parse_bib(text)
    entry = before.entries[index]
    assert (edit.start, edit.end) == (entry.span.start, entry.span.end)
    after_text = apply_edits(text, [edit])
    assert after_text[: entry.span.start] == text[: entry.span.start]
    assert after_text[entry.span.start + len(edit.new):] == text[entry.span.end:]
    after = parse_bib(after_text)
    assert not after.problems, (after.problems, edit.new)
    assert [e.key for e in after.entries] == [e.key for e in before.entries]
    assert _fields(after, {entry.key}) == _fields(before, {entry.key})
    return after


common = settings(max_examples=150, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@common
@given(bibliographies(), st.data())
def test_replace_from_a_record_changes_only_the_entry(text: str, data: st.DataObject) -> None:
    bib = parse_bib(text)
    assert not bib.problems
    i = data.draw(st.integers(0, len(bib.entries) - 1))
    record = data.draw(records)
    same = data.draw(st.booleans())
    entry = bib.entries[i]
    own = {n: f.value for n, f in entry.fields.items() if n in {"note", "keywords", "file",
                                                                 "x-own"}}
    after = _check_one(text, i, replace_entry(text, entry, record, same_paper=same))
    new = after.entries[i]
    assert new.key == entry.key
    for name, value in own.items():  # the user's own fields are kept
        assert new.get(name) == value
    if record.doi:
        assert new.get("doi") == record.doi


@common
@given(bibliographies(), st.data())
def test_fix_and_remove_doi_change_only_the_entry(text: str, data: st.DataObject) -> None:
    bib = parse_bib(text)
    i = data.draw(st.integers(0, len(bib.entries) - 1))
    entry = bib.entries[i]
    after = _check_one(text, i, replace_field(text, entry, "doi", "10.5555/fixed_doi"))
    assert after.entries[i].get("doi") == "10.5555/fixed_doi"
    assert {n for n in after.entries[i].fields} == set(entry.fields) | {"doi"}
    name = data.draw(st.sampled_from(sorted(entry.fields) or ["doi"]))
    after = _check_one(text, i, remove_field(text, entry, name))
    assert name not in after.entries[i].fields
    assert {n: f.value for n, f in after.entries[i].fields.items()} == {
        n: f.value for n, f in entry.fields.items() if n != name}


@common
@given(bibliographies(), st.data())
def test_merge_keeps_one_entry_with_all_fields(text: str, data: st.DataObject) -> None:
    bib = parse_bib(text)
    if len(bib.entries) < 2:
        return
    i, j = data.draw(st.lists(st.integers(0, len(bib.entries) - 1), min_size=2, max_size=2,
                              unique=True))
    keep, other = bib.entries[i], bib.entries[j]
    merged = merge_entries(text, keep, other)
    gone = delete_entry(text, other)
    assert (merged.start, merged.end) == (keep.span.start, keep.span.end)
    assert gone.start <= other.span.start and gone.end >= other.span.end
    assert not text[gone.start: other.span.start].strip()
    assert not text[other.span.end: gone.end].strip()
    after_text = apply_edits(text, [merged, gone])
    after = parse_bib(after_text)
    assert not after.problems
    assert [e.key for e in after.entries] == [e.key for e in bib.entries if e is not other]
    assert _fields(after, {keep.key}) == _fields(bib, {keep.key, other.key})
    new = next(e for e in after.entries if e.key == keep.key)
    expected = {n: f.value for n, f in other.fields.items()}
    expected.update({n: f.value for n, f in keep.fields.items()})
    assert {n: f.value for n, f in new.fields.items()} == expected
