"""LaTeX field values to Unicode, and title normalisation."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from citelens.core.accents import strip_accents
from citelens.core.latextext import to_unicode
from citelens.core.titles import normalize_title
from tests.harness import needs_bigbib


@pytest.mark.parametrize(
    ("latex", "text"),
    [
        (r'{\"o}', "ö"),
        (r"\'{e}", "é"),
        (r"Heged{\H u}s", "Hegedűs"),
        (r"Garc\'{\i}a", "García"),
        (r"Garcimart\'{\i}n", "Garcimartín"),  # physrev_e_1993_2024.bib
        (r"Segr\`e", "Segrè"),
        # APS exports: an accent for math and one for text mode (pylatexenc would keep both)
        (r"Mu\ifmmode \check{s}\else \v{s}\fi{}i\ifmmode \acute{c}\else \'{c}\fi{}", "Mušić"),
        (r"Fran\ifmmode \mbox{\c{c}}\else \c{c}\fi{}ois", "François"),
        (r"\o ksendal and Zygad\l{}o", "øksendal and Zygadło"),
        (r"{\"{O}}zt{\"u}rk", "Öztürk"),
        (r"\v{S}koda", "Škoda"),
        (r"{\L}ukasz", "Łukasz"),
        (r"S{\'{e}}bastien Ourselin", "Sébastien Ourselin"),  # dblp style
        (r"{\aa}ngstr{\"o}m", "ångström"),
        ("{BERT}: Pre-training of Deep Bidirectional Transformers",
         "BERT: Pre-training of Deep Bidirectional Transformers"),
        ("{{Planck 2015 results}}", "Planck 2015 results"),
        ("pages 1--10", "pages 1–10"),
        ("a---b", "a—b"),
        (r"$\alpha$-helix", "α-helix"),
        (r"The $q$-state Potts model on a $2d$ lattice", "The q-state Potts model on a 2d lattice"),
        (r"Processing of ${\mathrm{SiH}}_{4}$ in K\ensuremath{\alpha} light",
         "Processing of SiH_4 in Kα light"),
        (r"$\mathcal{O}(n \log n)$ sorting", "𝒪(n log n) sorting"),
        (r"50\% of \emph{all} \textbf{cases}", "50% of all cases"),
        ("50% of cases & more", "50% of cases & more"),  # bare % and & are text in .bib
        ("Ten~Years", "Ten Years"),
        ("multi\n   line\ttitle ", "multi line title"),
        ("``Quoted''", "“Quoted”"),
        (r"\aap", "A&A"),  # AASTeX journal macro (ADS exports)
        ("plain title", "plain title"),
        ("", ""),
    ],
)
def test_to_unicode(latex: str, text: str) -> None:
    assert to_unicode(latex) == text


@pytest.mark.parametrize(
    "latex",
    ["unbalanced {", "}", "\\", "{\\", r"\verb|x", r"\begin{x}", "$", "$$ $", "x\x00y",
     "\ud800", r"\unknowncommand{arg}", "%", "#", "^_"],
)
def test_to_unicode_survives_broken_latex(latex: str) -> None:
    out = to_unicode(latex)
    assert isinstance(out, str)
    out.encode("utf-8")  # no lone surrogates: the LSP must be able to send it
    assert "\x00" not in out


def test_to_unicode_keeps_arguments_of_unknown_commands() -> None:
    assert to_unicode(r"\unknowncommand{Kept} text") == "Kept text"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("{BERT}: Pre-training of Deep", "BERT — pre‐training of deep"),
        (r"Schr\"odinger's {Cat}", "Schrödinger’s cat"),
        ("The  Title.", "the title"),
        ("ﬁne-tuning", "fine tuning"),  # NFKC ligature
        ("“Quoted” title", '"Quoted" Title'),
        ("Don’t stop", "Don't stop"),  # typographic apostrophe
    ],
)
def test_normalize_title_equates_typographic_variants(a: str, b: str) -> None:
    assert normalize_title(a) == normalize_title(b)


def test_normalize_title_keeps_words_apart() -> None:
    assert normalize_title("Attention is all you need") != normalize_title("Attention is all")
    assert normalize_title("A: B, C!") == "a b c"


def test_strip_accents() -> None:
    assert strip_accents("Hegedűs Łukasz Øre Straße") == "Hegedus Lukasz Ore Strasse"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raise_on_any_text(text: str) -> None:
    out = to_unicode(text)
    out.encode("utf-8")
    assert out == out.strip()
    normalize_title(text).encode("utf-8")


#: The fast path takes 310 of the 393 LaTeX values of the corpus papers' bibliographies.
PAPERS_TAKEN = 250


def _corpus_latex_values(which: str) -> list[str]:
    from citelens.core.latextext import _LATEX_SYNTAX
    from citelens.documents.bibtex.parse import parse_bib
    from tests.harness import BIGBIB_FILES, CORPUS, bigbib

    names = ("title", "author", "editor", "journal", "booktitle", "publisher", "school", "note")
    values: set[str] = set()
    paths = (sorted(CORPUS.rglob("*.bib")) if which == "papers"
             else [bigbib(name) for name in BIGBIB_FILES])
    for path in paths:
        bib = parse_bib(path.read_text(encoding="utf-8", errors="replace"), str(path))
        values.update(f.value for e in bib.entries for n, f in e.fields.items() if n in names)
    return sorted(v for v in values if _LATEX_SYNTAX.search(v))


@pytest.mark.parametrize(("which", "least"), [
    ("papers", PAPERS_TAKEN), pytest.param("bigbib", 5000, marks=needs_bigbib)])
def test_the_fast_path_agrees_with_pylatexenc_on_every_corpus_value_it_takes(
        which: str, least: int) -> None:
    """Accents, dashes and quotes skip pylatexenc (a third of a millisecond each, most of
    a 68,000-entry check): what the fast path gives must be exactly what pylatexenc
    gives, for every LaTeX value in the corpus papers' bibliographies and, with
    ``CITELENS_BIGBIB``, in the two large ones (16,000+)."""
    from citelens.core.latextext import (
        _BARE_SPECIAL,
        _CONVERTER,
        _WALKER_CONTEXT,
        _clean,
        simple_latex_to_text,
        text_mode,
    )

    values = _corpus_latex_values(which)
    taken = 0
    for v in values:
        escaped = _BARE_SPECIAL.sub(r"\\\1", text_mode(v))
        fast = simple_latex_to_text(escaped)
        if fast is None:
            continue
        taken += 1
        slow = _CONVERTER.latex_to_text(escaped, latex_context=_WALKER_CONTEXT)
        assert _clean(fast) == _clean(slow), v
    assert taken > least  # the fast path is taken for most of them (names, accented titles)


@pytest.mark.parametrize(
    "latex",
    [r"$\mathit{C}$ and \'e", r"\frac{a}{b}", r"$20\text{ }\mu$", r"$x$ \$", r"\'{\imath}", r"\~{}",
     r"a\\b", r"\emph{x} \"o", r"!`Hola!", r"\c{ }"],
)
def test_the_fast_path_leaves_everything_else_to_pylatexenc(latex: str) -> None:
    from citelens.core.latextext import simple_latex_to_text

    assert simple_latex_to_text(latex) is None


_PIECES = [*"aZ {}\\$~-'`!?_.,\t\n\x01\x0b\x7f", "--", "ise", "é", "colour"]


@given(st.lists(st.sampled_from(_PIECES), max_size=20).map("".join))
@example("a\x01b")
@example("a\x0bb c\x7fd")
@example(r"{B}ERT and Sch{\"o}n")
@example("Naive--Bayes ``quoted''")
def test_plain_ascii_words_are_the_folded_words(text: str) -> None:
    """Titles without LaTeX, braces or control characters skip fold's conversions: the
    words must be exactly those of the folded text."""
    from citelens.core.titles import _WORD_SPLIT, fold, words

    assert words(text) == [w for w in _WORD_SPLIT.split(fold(text)) if w]


def test_the_fast_paths_symbols_are_pylatexencs() -> None:
    from citelens.core.latextext import _CONVERTER, _SYMBOLS_TEXT, _WALKER_CONTEXT

    for name, char in _SYMBOLS_TEXT.items():
        assert _CONVERTER.latex_to_text("\\" + name, latex_context=_WALKER_CONTEXT) == char, name
