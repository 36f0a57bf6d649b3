"""The BibTeX parser: spans, values, recovery from errors, and agreement with bibtexparser."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import bibtexparser
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citelens.core.model import BibEntry
from citelens.documents.bibtex.keytable import crossref_lookup, resolve_crossref
from citelens.documents.bibtex.parse import MONTH_MACROS, all_problems, parse_bib
from citelens.documents.read import read_text
from tests.harness import CORPUS, bigbib, needs_bigbib

PAPER_BIBS = sorted((CORPUS / "papers").glob("**/*.bib"))


def at(text: str, span: object) -> str:
    s = span  # a Span
    return text[s.start: s.end]  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- spans and values

PHYSREV = (  # physrev_e_1993_2024.bib: several fields on the '@' line
    "% ---- source: b-vitamins/bibliography journals/pre/1993.bib ----\n"
    "@article{ezersky1993hydrothermal, s2id = {627ea923ded32faa400e7d25768e30f3a8678e21},"
    r" author = {Ezersky, A. B. and Garcimart\'{\i}n, A. and P\'erez-Garc\'{\i}a, C.},"
    """
 doi = {10.1103/PhysRevE.47.1126},
 journal = {Phys. Rev. E},
 month = {Feb},
 title = {Hydrothermal waves in {Marangoni} convection},
 year = {1993}
}
"""
)


def test_entry_key_and_field_spans_are_exact() -> None:
    bib = parse_bib(PHYSREV, "pre.bib")
    assert bib.problems == []
    (e,) = bib.entries
    assert e.entry_type == "article" and e.key == "ezersky1993hydrothermal" and e.path == "pre.bib"
    assert at(PHYSREV, e.span).startswith("@article{ezersky") and at(PHYSREV, e.span).endswith("}")
    assert PHYSREV[e.span.end:] == "\n"
    assert at(PHYSREV, e.key_span) == "ezersky1993hydrothermal"
    title = e.fields["title"]
    assert title.value == "Hydrothermal waves in {Marangoni} convection"
    assert at(PHYSREV, title.span) == "title = {Hydrothermal waves in {Marangoni} convection}"
    assert at(PHYSREV, title.value_span) == "{Hydrothermal waves in {Marangoni} convection}"
    assert list(e.fields) == ["s2id", "author", "doi", "journal", "month", "title", "year"]
    assert e.get("author") == r"Ezersky, A. B. and Garcimart\'{\i}n, A. and P\'erez-Garc\'{\i}a, C."
    assert e.get("missing") is None


@pytest.mark.parametrize(
    ("source", "field", "value"),
    [
        ('@misc{k, title = "Quoted {with} braces"}', "title", "Quoted {with} braces"),
        ("@misc{k, year = 2020}", "year", "2020"),
        ("@misc{k, month = jan}", "month", "January"),
        ("@misc{k, month = DEC}", "month", "December"),
        ('@string{ACM = "Assoc. Comp. Mach."}\n@misc{k, publisher = acm}', "publisher",
         "Assoc. Comp. Mach."),
        ('@STRING(pre = "Proc. of ")\n@misc{k, booktitle = Pre # {ICML} # " 2020"}', "booktitle",
         "Proc. of ICML 2020"),
        ("@misc{k, publisher = undefinedmacro}", "publisher", "undefinedmacro"),
        ('@misc{k, note = {a "quote" inside}}', "note", 'a "quote" inside'),
        ("@misc(k, title = {paren (entry)} )", "title", "paren (entry)"),
        ('@misc(k, title = "a ) in quotes")', "title", "a ) in quotes"),
        ("@misc{k, title = {multi\n  line}}", "title", "multi\n  line"),
        ("@misc{k,\n% note = {commented out},\n title = {T}}", "title", "T"),
        ("@misc{k, title = {first}, title = {second}}", "title", "first"),
        ("@misc{k, TITLE = {Upper}}", "title", "Upper"),
        ("@misc{k, title = {" + "{" * 14 + "deep" + "}" * 14 + "}}", "title",
         "{" * 14 + "deep" + "}" * 14),
    ],
)
def test_field_values(source: str, field: str, value: str) -> None:
    bib = parse_bib(source)
    assert [e.key for e in bib.entries] == ["k"]
    assert bib.entries[0].get(field) == value


def test_string_macro_and_concatenation_spans() -> None:
    text = '@string{me = "Doe"}\n@misc{k, author = me # " and Roe", }'
    bib = parse_bib(text)
    f = bib.entries[0].fields["author"]
    assert f.value == "Doe and Roe"
    assert at(text, f.value_span) == 'me # " and Roe"'
    assert bib.strings["me"] == "Doe" and bib.strings["jan"] == MONTH_MACROS["jan"]


def test_macros_from_another_file_and_from_later_in_the_file() -> None:
    text = "@misc{k, journal = jfm, publisher = later}\n@string{later = {Late}}"
    bib = parse_bib(text, macros={"JFM": "J. Fluid Mech."})
    assert bib.entries[0].get("journal") == "J. Fluid Mech."
    assert bib.entries[0].get("publisher") == "Late"


def test_comments_preamble_and_free_text_are_skipped() -> None:
    text = (
        "Free text with an email@example.org inside.\n"
        "@comment{ignored, @article{inside, title = {no}} }\n"
        '@preamble{"\\newcommand{\\noop}[1]{}"}\n'
        "@Comment this line is a comment too\n"
        "@book{real, title = {Yes}}\n"
    )
    bib = parse_bib(text)
    assert [e.key for e in bib.entries] == ["real"]
    assert bib.problems == []


def test_commented_out_entry_with_escaped_brace_from_ml_conferences() -> None:
    # from ml_conferences.bib: '\{' unbalances the @comment if counted as a brace (BibTeX)
    text = (
        "@comment{@inproceedings{DBLP:conf:colt:HoldenPP18,\n"
        "  title        = {Subpolynomial trace reconstruction \\textbackslash{}\\{and x},\n"
        "  year         = {2018},\n}}\n\n"
        "@inproceedings{next2018, title = {Next}}\n"
    )
    bib = parse_bib(text)
    assert [e.key for e in bib.entries] == ["next2018"]


def test_entry_without_fields_and_with_trailing_comma() -> None:
    bib = parse_bib("@misc{lonely}\n@misc{trailing, title = {T},}\n")
    assert [(e.key, dict((k, f.value) for k, f in e.fields.items())) for e in bib.entries] == [
        ("lonely", {}), ("trailing", {"title": "T"})]
    assert bib.problems == []


# --------------------------------------------------------------------------- errors and recovery

ASTROPY_UNCLOSED = """@ARTICLE{ASDF,
       author = {{Greenfield}, P. and {Droettboom}, M. and {Bray}, E.},
        title = "{ASDF: A new data format for astronomy}",
      adsnote = {Provided by the SAO/NASA Astrophysics Data System}

@article{Mommert2019,
  doi = {10.21105/joss.01426},
  journal = {Journal of Open Source Software}
}
"""


def test_unclosed_entry_is_a_problem_and_the_next_entry_still_parses() -> None:
    bib = parse_bib(ASTROPY_UNCLOSED)
    assert [e.key for e in bib.entries] == ["Mommert2019"]
    (problem,) = bib.problems
    assert ASTROPY_UNCLOSED[problem.span.start:].startswith("@ARTICLE{ASDF")
    assert problem.span.end <= ASTROPY_UNCLOSED.index("@article{Mommert")
    assert "not closed" in problem.message


@pytest.mark.parametrize(
    ("source", "problem_at", "message"),
    [
        ("@article{, title = {No key}}", "@article", "without a key"),
        ("@article{my key, title = {Space in key}}", "key, title", "expected ','"),
        ("@article{k, title {no equals}}", "title {no", "name = value"),
        ("@article{k, title = {a} year = 2000}", " year", "expected ','"),
        ("@article{k, title = }", " }", "missing field value"),
        ("@article{k, title = {ok}, = {nameless}}", "= {nameless}", "name = value"),
        ("@article{k, title = {x}, title = {y}}", "title = {y}", "duplicate field"),
        ("@ garbage here\n@misc{ok}", "@ garbage", "after '@'"),
    ],
)
def test_syntax_errors_become_problems_at_their_location(
    source: str, problem_at: str, message: str,
) -> None:
    bib = parse_bib(source)
    problems = all_problems(bib)
    assert problems, source
    where = source.index(problem_at)
    assert any(p.span.start <= where + 1 and message in p.message for p in problems), problems


def test_field_problem_recovers_with_the_next_field() -> None:
    bib = parse_bib("@article{k, title {oops}, year = 2001, journal = {J}}")
    e = bib.entries[0]
    assert e.get("year") == "2001" and e.get("journal") == "J"
    assert len(bib.problems) == 1


def test_lazy_fields_report_problems_when_first_read() -> None:
    text = "@article{k, title {oops}, year = 2001}"
    bib = parse_bib(text, eager=False)
    assert bib.problems == []  # not parsed yet
    assert bib.entries[0].get("year") == "2001"
    assert len(bib.problems) == 1
    assert all_problems(parse_bib(text, eager=False)) == bib.problems


def test_nul_control_characters_and_lone_surrogates_do_not_break_parsing() -> None:
    text = "@misc{a, abstract = {x\x00y\x01\x1b}, title = {\ud800}}\n@misc{b, year = 1}\n"
    bib = parse_bib(text)
    assert [e.key for e in bib.entries] == ["a", "b"]
    assert bib.entries[0].get("abstract") == "x\x00y\x01\x1b"


def test_duplicate_keys_are_all_kept_in_file_order() -> None:
    bib = parse_bib("@misc{dup, title = {one}}\n@misc{dup, title = {two}}\n")
    assert [e.get("title") for e in bib.by_key()["dup"]] == ["one", "two"]


# --------------------------------------------------------------------------- lazy entries


def test_lazy_entries_compare_replace_and_convert_like_bibentry() -> None:
    bib = parse_bib("@misc{k, title = {T}}", "f.bib", eager=False)
    lazy = bib.entries[0]
    plain = BibEntry(lazy.entry_type, lazy.key, lazy.span, lazy.key_span, dict(lazy.fields),
                     "f.bib")
    assert lazy == plain and plain == lazy
    assert isinstance(lazy, BibEntry)
    assert dataclasses.replace(lazy, key="other").fields == lazy.fields
    assert dataclasses.asdict(lazy)["fields"]["title"]["value"] == "T"
    lazy.fields = {}
    assert lazy.get("title") is None


# --------------------------------------------------------------------------- crossref


def test_crossref_inherits_missing_fields_and_booktitle_from_title() -> None:
    text = (
        "@inproceedings{child, title = {Child}, crossref = {Proc}}\n"
        "@proceedings{proc, title = {Proceedings of X}, year = 2001, publisher = {P}}\n"
    )
    bib = parse_bib(text)
    fields = resolve_crossref(bib.entries[0], crossref_lookup(bib))
    assert {k: f.value for k, f in fields.items()} == {
        "title": "Child", "crossref": "Proc", "year": "2001", "publisher": "P",
        "booktitle": "Proceedings of X",
    }


def test_crossref_cycles_and_missing_parents_are_harmless() -> None:
    bib = parse_bib("@misc{a, crossref = {b}}\n@misc{b, crossref = {a}, year = 1}\n"
                    "@misc{c, crossref = {nowhere}}")
    look = crossref_lookup(bib.entries)
    assert resolve_crossref(bib.entries[0], look)["year"].value == "1"
    assert set(resolve_crossref(bib.entries[2], look)) == {"crossref"}


# --------------------------------------------------------------------------- read_text


def test_read_text_strips_bom_and_replaces_invalid_utf8(tmp_path: Path) -> None:
    p = tmp_path / "x.bib"
    p.write_bytes(b"\xef\xbb\xbf@misc{k, title = {caf\xc3\xa9 \xff\xfe}}")
    text = read_text(p)
    assert text.startswith("@misc") and "café" in text and "\ufffd" in text
    assert parse_bib(text).entries[0].key == "k"
    assert read_text(tmp_path / "missing.bib") == ""
    assert read_text(tmp_path) == ""  # a directory


# --------------------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parse_bib_never_raises_on_any_text(text: str) -> None:
    bib = parse_bib("@misc{k," + text, eager=True)
    other = parse_bib(text)
    for b in (bib, other):  # parse_bib's last-resort handler never had to step in
        assert not [p for p in all_problems(b) if p.message.startswith("cannot parse")]
    for e in bib.entries:
        assert e.span.start < e.span.end <= len(bib_text := "@misc{k," + text)
        assert bib_text[e.span.start] == "@"


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary())
def test_read_text_and_parse_never_raise_on_any_bytes(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "any.bib"
    p.write_bytes(b"@article{x, title = {" + data + b"}}\n" + data)
    parse_bib(read_text(p))


_KEY = st.from_regex(r"[A-Za-z][A-Za-z0-9:_.-]{0,20}", fullmatch=True)
_NAME = st.from_regex(r"[a-z][a-z_]{0,10}", fullmatch=True)
_PLAIN = st.text(st.characters(blacklist_characters='{}"@\\', blacklist_categories=("Cs",)),
                 max_size=30)
_VALUE = st.one_of(
    _PLAIN.map(lambda s: ("{" + s + "}", s)),
    _PLAIN.filter(lambda s: '"' not in s).map(lambda s: ('"' + s + '"', s)),
    st.integers(0, 9999).map(lambda i: (str(i), str(i))),
    _PLAIN.map(lambda s: ("{{" + s + "} x}", "{" + s + "} x")),
)
_ENTRY = st.tuples(
    st.sampled_from(["article", "InProceedings", "misc", "BOOK"]), _KEY,
    st.dictionaries(_NAME, _VALUE, max_size=5), st.sampled_from(["{}", "()"]),
    st.sampled_from(["", "\n", "  % free text\n"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_ENTRY, max_size=6))
def test_generated_bibliographies_round_trip(entries: list[tuple]) -> None:  # type: ignore[type-arg]
    parts = []
    for etype, key, fields, delims, gap in entries:
        body = ",\n  ".join(f"{name} = {raw}" for name, (raw, _) in fields.items())
        parts.append(f"{gap}@{etype}{delims[0]}{key},\n  {body}\n{delims[1]}\n")
    text = "".join(parts)
    bib = parse_bib(text)
    assert bib.problems == []
    assert [e.key for e in bib.entries] == [key for _, key, _, _, _ in entries]
    for e, (etype, key, fields, _, _) in zip(bib.entries, entries, strict=True):
        assert text[e.span.start] == "@" and text[e.span.end - 1] in "})"
        assert text[e.key_span.start: e.key_span.end] == key
        assert e.entry_type == etype.lower()
        assert {k: f.value for k, f in e.fields.items()} == {
            k: v for k, (_, v) in fields.items()}
        for name, (raw, _) in fields.items():
            assert text[e.fields[name].value_span.start: e.fields[name].value_span.end] == raw


# --------------------------------------------------------------------------- bibtexparser as oracle

_MONTHS = set(MONTH_MACROS)


@pytest.mark.parametrize("path", PAPER_BIBS, ids=lambda p: str(p.relative_to(CORPUS / "papers")))
def test_agrees_with_bibtexparser_on_corpus(path: Path) -> None:
    """Keys, types and values agree for every entry bibtexparser parses.

    Deliberate differences: month macros are expanded and '#' concatenates
    (bibtexparser keeps 'sep' and 'oct # "-" # nov' as written); '%' lines between
    fields are comments, as for biber (bibtexparser makes '% language' a field).
    """
    text = read_text(path)
    logging.disable(logging.WARNING)
    try:
        lib = bibtexparser.parse_string(text)
    finally:
        logging.disable(logging.NOTSET)
    mine = parse_bib(text, str(path))
    by_line = {(e.key, text.count("\n", 0, e.span.start)): e for e in mine.entries}
    assert lib.entries
    compared = 0
    for theirs in lib.entries:
        e = by_line.get((theirs.key, theirs.start_line))
        assert e is not None, f"{theirs.key} (line {theirs.start_line}) missing"
        assert e.entry_type == theirs.entry_type.lower()
        for fld in theirs.fields:
            name, value = fld.key.lower(), str(fld.value)
            if name.startswith("%") or value.lower() in _MONTHS or " # " in value:
                continue
            assert e.get(name) is not None, (theirs.key, name)
            assert e.get(name).strip() == value.strip(), (theirs.key, name)  # type: ignore[union-attr]
            compared += 1
    assert compared > 0
    # what bibtexparser rejects as broken (not merely duplicate keys) we report too
    broken = [b for b in lib.failed_blocks if type(b).__name__ == "ParsingFailedBlock"
              and "@misc{R_Core_Team2019-kt,\n%" not in b.raw]
    assert len(mine.problems) >= len(broken)


@needs_bigbib
def test_ml_conferences_junk_parses_without_exceptions() -> None:
    path = bigbib("ml_conferences.bib")
    text = read_text(path)
    bib = parse_bib(text, str(path))
    assert len(bib.entries) >= 37443 and bib.problems == []
    keys = bib.by_key()
    assert sum(1 for v in keys.values() if len(v) > 1) == 371
    # the entry holding the NUL byte still has readable fields
    nul = text.index("\x00")
    (holder,) = [e for e in bib.entries if e.span.start < nul < e.span.end]
    assert "\x00" in (holder.get("abstract") or "")


def test_an_edit_of_a_big_bibliography_reparses_like_the_whole_file(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``reparse_edit`` (only the entries an edit touched) gives what a full parse gives.
    "Big" is over ``EAGER_LIMIT``, lowered here to 100 kB (the paths are the same; at 2 MB
    the 24 edits each parsed twice took minutes on a loaded machine)."""
    import random

    from citelens.documents.bibtex import parse

    monkeypatch.setattr(parse, "EAGER_LIMIT", 100_000)
    from citelens.documents.bibtex.keytable import key_table
    from citelens.documents.bibtex.parse import EAGER_LIMIT, all_problems, reparse_edit

    one = ("@article{{key{i},\n  title = {{A {{Title}} number {i}}},\n  author = {{Doe, J."
           " and Roe, R.}},\n  journal = jnl,\n  year = {{20{i2:02d}}},\n}}\n\n")
    text = "@string{jnl = {Journal of Tests}}\n\n" + "".join(
        one.format(i=i, i2=i % 100) for i in range(EAGER_LIMIT // 120 + 10))
    assert len(text) > EAGER_LIMIT
    bib = parse_bib(text, "big.bib")
    key_table([bib])
    rng = random.Random(7)
    inserts = ["x", "}", "{", "@article{zz, title={A}}\n", ",\n  note = {n}", "%", "\n@misc{"]
    spliced = 0
    for step in range(24):
        i = rng.randrange(40, len(text))
        if rng.random() < 0.3:
            new = text[:i] + text[i + rng.randrange(1, 60):]
        else:
            new = text[:i] + rng.choice(inserts) + text[i:]
        got = reparse_edit(text, bib, new)
        want = parse_bib(new, "big.bib")
        if got is not None:
            spliced += 1
            assert [(e.key, e.span, e.key_span, e.entry_type) for e in got.entries] == [
                (e.key, e.span, e.key_span, e.entry_type) for e in want.entries]
            for e_got, e_want in zip(got.entries, want.entries, strict=True):
                # entries moved by an edit are the same objects, shifted: every field and
                # span of theirs is read again from the new text
                if step % 4 == 0 or (e_got.span.start <= i + 200 and e_got.span.end >= i - 200):
                    assert e_got.fields == e_want.fields
            # the key table (carried over from before the edit when it can be) is the fresh one
            got_first, got_more = key_table([got])
            want_first, want_more = key_table([want])
            assert [(k, e.span) for k, e in got_first.items()] == [
                (k, e.span) for k, e in want_first.items()]
            assert {k: [e.span for e in v] for k, v in got_more.items()} == {
                k: [e.span for e in v] for k, v in want_more.items()}
            probs = sorted((p.span.start, p.span.end, p.message) for p in all_problems(got))
            assert probs == sorted((p.span.start, p.span.end, p.message)
                                   for p in all_problems(want))
        text, bib = new, got or want
    assert spliced >= 12


def test_a_big_bibliography_keeps_few_parsed_fields_and_reports_each_problem_once() -> None:
    """A file over EAGER_LIMIT keeps the fields of the entries read last; an entry read
    again is parsed again with the same fields, and its problem is not reported twice."""
    from citelens.documents.bibtex.parse import EAGER_LIMIT, KEPT_FIELDS, all_problems

    one = "@article{{key{i},\n  title = {{Title {i}}},\n  year = {{2001}},\n}}\n\n"
    bad = "@article{bad,\n  title = {Broken},\n  year = {2001} note = {x},\n}\n\n"
    text = bad + "".join(one.format(i=i) for i in range(EAGER_LIMIT // 50 + 10))
    assert len(text) > EAGER_LIMIT and len(text) // 50 > KEPT_FIELDS
    bib = parse_bib(text, "big.bib")
    first = {e.key: dict(e.fields) for e in bib.entries}
    problems = all_problems(bib)
    assert [p.message for p in problems] == ["expected ',' after the value of 'year'"]
    again = {e.key: dict(e.fields) for e in bib.entries}  # most were dropped: parsed again
    assert again == first and first["bad"]["title"].value == "Broken"
    assert all_problems(bib) == problems
