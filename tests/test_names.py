"""Splitting BibTeX author lists and names (first/von/last/jr)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citelens.core.model import Name
from citelens.documents.bibtex.names import author_list, family_key, split_names


def parts(value: str) -> list[tuple[str, str, str, str]]:
    return [(n.first, n.von, n.last, n.jr) for n in split_names(value)[0]]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Eriksson, Anders B. and Dahlqvist, Per",  # physrev_e_1993_2024.bib
         [("Anders B.", "", "Eriksson", ""), ("Per", "", "Dahlqvist", "")]),
        (r"Segr\`e, P. N. and Gammon, R. W.",
         [("P. N.", "", "Segrè", ""), ("R. W.", "", "Gammon", "")]),
        ("Ashish Vaswani", [("Ashish", "", "Vaswani", "")]),
        ("Ludwig van Beethoven", [("Ludwig", "van", "Beethoven", "")]),
        ("van Beethoven, Ludwig", [("Ludwig", "van", "Beethoven", "")]),
        ("Charles Louis Xavier Joseph de la Vall{\\'e}e Poussin",
         [("Charles Louis Xavier Joseph", "de la", "Vallée Poussin", "")]),
        ("De la Fuente, Ana", [("Ana", "De la", "Fuente", "")]),
        ("Doe, Jr., John", [("John", "", "Doe", "Jr.")]),
        ("{Barack Obama}", [("", "", "Barack Obama", "")]),
        ("{The pandas development team}", [("", "", "The pandas development team", "")]),
        (r"{\"O}zt{\"u}rk, Ay{\c{s}}e", [("Ayşe", "", "Öztürk", "")]),
        (r"{\"O}mer {\"O}zt{\"u}rk", [("Ömer", "", "Öztürk", "")]),
        (r"Heged{\H u}s, Istv\'an", [("István", "", "Hegedűs", "")]),
        (r"Garc\'{\i}a-Hern\'andez, M.", [("M.", "", "García-Hernández", "")]),
        (r"{\L}ukasz Kaiser", [("Łukasz", "", "Kaiser", "")]),
        ("{Greenfield}, P. and {Droettboom}, M.",  # ADS style, astropy refs.bib
         [("P.", "", "Greenfield", ""), ("M.", "", "Droettboom", "")]),
        ("{Ade}, P.~A.~R.", [("P. A. R.", "", "Ade", "")]),
        ("A. Smith AND B. Jones\n    and  C. Brown",
         [("A.", "", "Smith", ""), ("B.", "", "Jones", ""), ("C.", "", "Brown", "")]),
        ("Brand and Andrews and Sandy Landers",  # 'and' inside words is no separator
         [("", "", "Brand", ""), ("", "", "Andrews", ""), ("Sandy", "", "Landers", "")]),
        ("{Simon and Schuster} and Jones",
         [("", "", "Simon and Schuster", ""), ("", "", "Jones", "")]),
        ("Smith, John and", [("John", "", "Smith", "")]),
        ("", []),
        (" and ", []),
    ],
)
def test_split_names(value: str, expected: list[tuple[str, str, str, str]]) -> None:
    assert parts(value) == expected


@pytest.mark.parametrize(
    ("value", "count", "truncated"),
    [
        ("Vaswani, Ashish and Shazeer, Noam and others", 2, True),
        ("Vaswani, Ashish and Shazeer, Noam and Others", 2, True),
        ("{Planck Collaboration} and {Ade}, P.~A.~R. and et al.", 2, True),
        ("Smith et al.", 1, True),
        ("Vaswani, Ashish and Shazeer, Noam", 2, False),
        ("{others}", 0, True),
    ],
)
def test_truncation(value: str, count: int, truncated: bool) -> None:
    names, was_truncated = split_names(value)
    assert (len(names), was_truncated) == (count, truncated)
    assert not any(n.is_others for n in names)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        (Name("István", "", "Hegedűs", ""), "hegedus"),
        (Name("Ludwig", "van", "Beethoven", ""), "beethoven"),
        (Name("M.", "", "García-Hernández", ""), "garciahernandez"),
        (Name("", "", "Øre Ł", ""), "orel"),
        (Name("A", "", "O'Neil", ""), "oneil"),
    ],
)
def test_family_key(name: Name, key: str) -> None:
    assert family_key(name) == key


def test_family_key_matches_display_names_of_records() -> None:
    (bib,), _ = split_names(r"Heged{\H u}s, Istv\'an")
    (record,), _ = split_names("István Hegedus")
    assert family_key(bib) == family_key(record)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_split_names_never_raises(value: str) -> None:
    names, _ = split_names(value)
    for n in names:
        family_key(n)
        assert n.last or n.first


@settings(max_examples=100, deadline=None)
@given(st.lists(st.from_regex(r"[A-Z][a-z]{1,8}, [B-Z][a-z]{1,8}", fullmatch=True),  # no "And"
                min_size=1, max_size=6))
def test_split_names_finds_every_generated_name(names: list[str]) -> None:
    found, truncated = split_names(" and ".join(names))
    assert not truncated
    assert [(n.last, n.first) for n in found] == [tuple(s.split(", ")) for s in names]


@given(st.text(alphabet=st.sampled_from(list("aAnNdD ,~\t\nxé{}\\'")), max_size=40))
def test_the_brace_free_splits_are_the_scans(value: str) -> None:
    """Names without braces are split by regular expressions (C speed): exactly as the
    depth-aware scans split them."""
    from citelens.documents.bibtex.names import (
        _split_depth0,
        _split_depth0_scan,
        _tokens,
        _tokens_scan,
    )

    assert _split_depth0(value) == _split_depth0_scan(value)
    for seps in (",", " \t\r\n~"):
        assert _tokens(value, seps) == _tokens_scan(value, seps)


def test_aps_names_with_a_math_and_a_text_accent_are_one_name() -> None:
    """APS exports write ``Mu\\ifmmode \\check{s}\\else \\v{s}\\fi{}i\\ifmmode ...``: the spaces
    inside must not split the family name, and only the text-mode accent counts."""
    value = (
        r"Mu\ifmmode \check{s}\else \v{s}\fi{}i\ifmmode \acute{c}\else \'{c}\fi{}, Ivan and "
        r"Garcimart\'{\i}n, Diego"
    )
    names, _ = split_names(value)
    assert [(n.first, n.last) for n in names] == [("Ivan", "Mušić"), ("Diego", "Garcimartín")]


# ----------------------------------------------------------------------- parsed when read

TRICKY_LISTS = [
    "Eriksson, Anders B. and Dahlqvist, Per",
    "others, and Smith, John",  # "others," is a name whose last part is "others"
    "{\\relax} and Doe, J.",  # a first name that converts to nothing
    ", and others,",
    "Others and Xu Yi",
    "{}",
    "de la Fontaine, Jean",
    "jean de la fontaine",
    "Smith et al.",
    "O'Brien, J. and Smith--Jones, A.",  # a plain "Last," read alone; "--" is LaTeX (a dash)
    "Smith--Jones, A.",
    "X'', Y",
    "van Dyke, J.",
    "Charles Louis Xavier Joseph de la Vall{\\'e}e Poussin and others",
    "Mu\\ifmmode \\check{s}\\else \\v{s}\\fi{}i\\ifmmode \\acute{c}\\else \\'{c}\\fi{}, Ivan",
    "",
]


@pytest.mark.parametrize("value", TRICKY_LISTS)
def test_first_author_read_alone_is_the_first_author_of_the_whole_list(value: str) -> None:
    """Duplicate detection reads only each entry's first author (parsing a 68,000-entry
    library's every name cost a sixth of its report): it must be the first author the full
    parse gives, "others" and names that convert to nothing skipped alike."""
    lazy, truncated = author_list(value)
    names, truncated_too = split_names(value)
    first = next((n for n in names if not n.is_others), None)
    assert lazy.first_last() == (first.last if first else "")
    assert (lazy, truncated) == (tuple(names), truncated_too)
    assert len(lazy) == len(names) and list(lazy) == names


def test_an_author_list_survives_pickling_as_its_names() -> None:
    """Entry views travel to other processes (the venue check on Ray workers)."""
    import pickle

    lazy, _ = author_list("van Beethoven, Ludwig and Segr\\`e, P. N.")
    back = pickle.loads(pickle.dumps(lazy))
    assert back == lazy and back.first_last() == "Beethoven" and back[1].last == "Segrè"
    assert back.written == lazy.written  # what an entry's content hash reads


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("İsmail Ceylan and Luca Ambrogioni",  # "İ".lower() is two characters
         [("İsmail", "", "Ceylan", ""), ("Luca", "", "Ambrogioni", "")]),
        ("Ceylan, İsmail and Ambrogioni, Luca",
         [("İsmail", "", "Ceylan", ""), ("Luca", "", "Ambrogioni", "")]),
        ("İİİ Ceylan and {İ}nan, Ayşe and Luca Ambrogioni",
         [("İİİ", "", "Ceylan", ""), ("Ayşe", "", "İnan", ""), ("Luca", "", "Ambrogioni", "")]),
    ],
)
def test_names_are_split_on_the_string_as_written(
    value: str, expected: list[tuple[str, str, str, str]]
) -> None:
    """Issue 41 #11: the split used positions found in a lower-cased copy on the original;
    "İ".lower() is two characters, so every "and" after one was missed."""
    assert parts(value) == expected


def test_et_al_is_cut_where_it_is_written_after_a_dotted_capital_i() -> None:
    assert parts("İİ Smith et al.") == [("İİ", "", "Smith", "")]
    assert split_names("İİ Smith et al.")[1] is True


def test_the_author_list_a_fix_writes_is_read_back_as_the_records() -> None:
    """Issue 41 #11: CiteLens flagged an author list its own fix had just written."""
    from citelens.core.model import EntryView
    from citelens.documents.bibtex.render import record_fields
    from citelens.sources.records import PaperRecord
    from citelens.verify.match.authors import compare_authors

    rec = PaperRecord("crossref", "Learning with graphs", ["İsmail Ceylan", "Luca Ambrogioni"], 2021)
    written = record_fields(rec, "article")["author"]
    names, truncated = split_names(written)
    assert [(n.first, n.last) for n in names] == [("İsmail", "Ceylan"), ("Luca", "Ambrogioni")]
    view = EntryView("k", "article", rec.title, tuple(names), truncated, 2021, "", *[None] * 5)
    assert compare_authors(view, [rec]) == []
