"""Citation commands, resources and includes found by :func:`citelens.documents.latex.parse_latex`.

Every case checks the key *and* its span: ``text[span.start:span.end] == key``, and that
the command span starts at the backslash of the command and contains the key.
"""

from __future__ import annotations

import pytest

from citelens.core.model import SourceDocument
from citelens.documents.latex import parse_latex


def parse(text: str, extra: tuple[str, ...] = ()) -> SourceDocument:
    doc = parse_latex(text, "paper.tex", extra)
    for c in doc.citations:
        assert text[c.span.start : c.span.end] == c.key, (text, c)
        assert c.command_span.start <= c.span.start and c.span.end <= c.command_span.end
        assert text[c.command_span.start] == "\\", (text, c)
        assert text[c.command_span.start + 1 :].startswith(c.command.rstrip("*")), (text, c)
    return doc


def keys(text: str, extra: tuple[str, ...] = ()) -> list[str]:
    return [c.key for c in parse(text, extra).citations]


# --------------------------------------------------------------------------- every form

SINGLE_FORMS = [
    # natbib
    "cite", "citep", "citet", "citealt", "citealp", "citeauthor", "citeyear", "citeyearpar",
    "Citet", "Citep", "Citealt", "Citealp", "Citeauthor",
    "cite*", "citep*", "citet*", "citeauthor*", "Citet*", "Citeauthor*",
    # biblatex
    "parencite", "Parencite", "textcite", "Textcite", "autocite", "Autocite", "footcite",
    "smartcite", "supercite", "fullcite", "parencite*", "autocite*", "textcite*",
    "nocite",
]


@pytest.mark.parametrize("command", SINGLE_FORMS)
def test_every_single_citation_command(command: str) -> None:
    text = f"As shown before \\{command}{{smith2020}}, it holds."
    doc = parse(text)
    assert [(c.key, c.command) for c in doc.citations] == [("smith2020", command)]
    c = doc.citations[0]
    assert text[c.command_span.start : c.command_span.end] == f"\\{command}{{smith2020}}"


@pytest.mark.parametrize("command", ["cite", "citep", "Citet*", "parencite", "autocite"])
@pytest.mark.parametrize(
    "optional",
    ["[p.~3]", "[e.g.,][]", "[e.g.,][p.~3]", "[][12]", " [see] [chap.~2] ", "[{a, b}]",
     "[see \\S~3]"],
)
def test_optional_arguments_are_not_keys(command: str, optional: str) -> None:
    text = f"\\{command}{optional}{{doe99,roe01}}."
    assert keys(text) == ["doe99", "roe01"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\cite{a,b,c}", ["a", "b", "c"]),
        (r"\cite{ a , b ,c }", ["a", "b", "c"]),
        ("\\cite{a,\n  b,\n  c}", ["a", "b", "c"]),
        ("\\cite{a,\r\n  b}", ["a", "b"]),
        ("\\citep{\n\tfirst-key,\n\tsecond:key\n}", ["first-key", "second:key"]),
        (r"\cite{a,,b,}", ["a", "b"]),
        ("\\cite\n{a}", ["a"]),
        (r"\cite [x] {a}", ["a"]),
        (r"\cite{a}\cite{b}", ["a", "b"]),
        (r"\cite{}", []),
        (r"\cite{a}{b}", ["a"]),  # only the first group belongs to a single cite
        (r"\citep{Doe_2019.x/y-z+1}", ["Doe_2019.x/y-z+1"]),
    ],
)
def test_keys_across_commas_whitespace_and_newlines(text: str, expected: list[str]) -> None:
    assert keys(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\cites{a}{b}", ["a", "b"]),
        (r"\cites[see][]{a}[p.~4]{b,c}", ["a", "b", "c"]),
        (r"\parencites(glob)(post)[x][y]{a}{b}", ["a", "b"]),
        (r"\parencites(See also)()[p.~1]{a}[][2]{b}", ["a", "b"]),
        (r"\textcites(pre)()[a][b]{k1}[c]{k2}", ["k1", "k2"]),
        (r"\autocites{a}{b}{c}", ["a", "b", "c"]),
        ("\\autocites(pre)(post)\n  [p.~1]{a}\n  [p.~2]{b, c}", ["a", "b", "c"]),
        (r"\footcites{a}{b}", ["a", "b"]),
        (r"\smartcites{a}{b}", ["a", "b"]),
        (r"\supercites{a}{b}", ["a", "b"]),
        (r"\Textcites{a}{b}", ["a", "b"]),
    ],
)
def test_multicite_commands(text: str, expected: list[str]) -> None:
    doc = parse(text)
    assert [c.key for c in doc.citations] == expected
    # one command span covers every group
    assert {(c.command_span.start, c.command_span.end) for c in doc.citations} == {(0, len(text))}


def test_multicite_stops_at_the_first_non_group() -> None:
    text = r"\cites{a}[p.~2]{b} and {c} later"
    assert keys(text) == ["a", "b"]


def test_nocite_key_and_star() -> None:
    doc = parse(r"\nocite{a}")
    assert [(c.key, c.command) for c in doc.citations] == [("a", "nocite")]
    assert not doc.nocite_all

    doc = parse(r"\nocite{*}")
    assert doc.citations == []
    assert doc.nocite_all

    doc = parse(r"\nocite{x, *}")
    assert [c.key for c in doc.citations] == ["x"]
    assert doc.nocite_all


def test_star_key_in_another_command_is_not_nocite_all() -> None:
    doc = parse(r"\cite{*}")
    assert not doc.nocite_all


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\cite{Müller2020}", ["Müller2020"]),
        (r"\cite{李2019,Łukasz-2021}", ["李2019", "Łukasz-2021"]),
        (r"\citep{Ørsted:ÆØÅ}", ["Ørsted:ÆØÅ"]),
        ("Ève écrit \\cite{Éric1999} puis 🙂 \\cite{emoji🙂key}", ["Éric1999", "emoji🙂key"]),
    ],
)
def test_non_ascii_keys(text: str, expected: list[str]) -> None:
    assert keys(text) == expected


# --------------------------------------------------------------------------- extra commands


def test_user_configured_extra_command_without_cite_in_its_name() -> None:
    text = r"See \footfullref{a, b} and \footfullref*[p.~2]{c}."
    doc = parse(text, ("footfullref",))
    assert [(c.key, c.command) for c in doc.citations] == [
        ("a", "footfullref"), ("b", "footfullref"), ("c", "footfullref*")]
    assert keys(text) == []  # not a citation unless configured


def test_user_configured_extra_command_with_backslash() -> None:
    assert keys(r"\myref{a}", ("\\myref",)) == ["a"]


def test_user_configured_extra_command_needs_a_whole_name() -> None:
    assert keys(r"\myrefx{a}", ("myref",)) == []


def test_extra_command_mycite_is_found() -> None:
    doc = parse(r"\mycite{a} \mycite*[p.~1]{b}", ("mycite",))
    assert {(c.key, c.command) for c in doc.citations} == {("a", "mycite"), ("b", "mycite*")}


# Regression (fixed in fa4de63): an extra command whose name contains "cite" was matched by
# both the generic *cite* pattern and the extra-command pattern, so each key came twice.
def test_extra_command_mycite_reports_each_key_once() -> None:
    doc = parse(r"\mycite{a}", ("mycite",))
    assert [(c.key, c.command) for c in doc.citations] == [("a", "mycite")]


# --------------------------------------------------------------------------- not citations


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("% \\cite{x}\n\\cite{y}", ["y"]),
        ("text % a comment \\cite{x}\n", []),
        ("%% \\citep{x}", []),
        ("\\cite{a% a comment inside\n,b}", ["a", "b"]),
        ("50\\% of cases \\cite{y}", ["y"]),  # escaped percent: not a comment
        ("line\\\\% \\cite{z}\n\\cite{w}", ["w"]),  # \\ then a real comment
        ("\\begin{verbatim}\\cite{x}\\end{verbatim}\\cite{y}", ["y"]),
        ("\\begin{verbatim*}\n\\cite{x}\n\\end{verbatim*}", []),
        ("\\begin{Verbatim}[frame=single]\n\\cite{x}\n\\end{Verbatim}", []),
        ("\\begin{lstlisting}[language=TeX]\n\\cite{x}\n\\end{lstlisting}\n\\cite{y}", ["y"]),
        ("\\begin{minted}{latex}\n\\cite{x}\n\\end{minted}", []),
        ("\\begin{comment}\n\\cite{x}\n\\end{comment}\\cite{y}", ["y"]),
        ("\\verb|\\cite{x}| and \\cite{y}", ["y"]),
        ("\\verb+\\cite{x}+ and \\verb*!\\cite{z}!", []),
        ("\\lstinline|\\cite{x}|", []),
        ("\\newcommand{\\citen}[1]{\\cite{#1}}", []),
        ("\\newcommand{\\inlinecite}[1]{\\footnotesize\\citen{#1}}", []),
        ("\\renewcommand\\cite{\\citep}", []),
        ("\\renewcommand{\\cite}{\\citep}", []),
        ("\\newcommand\\newcite{\\citet}", []),
        ("\\providecommand*{\\mycite}[2][]{\\cite[#1]{#2}}", []),
        ("\\def\\mycite#1{\\cite{#1}}", []),
        ("\\let\\oldcite\\cite", []),
        ("\\DeclareCiteCommand{\\citejournal}{}{}{}{}", []),
        ("\\AtNextCite{\\defcounter{maxnames}{99}}", []),
        ("\\AtEveryCitekey{\\clearfield{note}}", []),
        ("\\citestyle{plain}\\setcitestyle{authoryear}\\citetext{see}", []),
        ("\\defcitealias{astropy}{Paper~I}\\citepalias{astropy}", ["astropy"]),
        ("\\bibcite{x}{1}", []),
    ],
)
def test_material_that_is_not_a_citation(text: str, expected: list[str]) -> None:
    assert keys(text) == expected


def test_macro_definition_then_use() -> None:
    text = "\\newcommand{\\citen}[1]{\\cite{#1}}\n\\citen{real}"
    doc = parse(text)
    assert [(c.key, c.command) for c in doc.citations] == [("real", "citen")]
    assert all("#" not in c.key for c in doc.citations)


def test_offsets_survive_masked_material() -> None:
    text = (
        "% ünïcödé comment \\cite{no}\n"
        "\\begin{verbatim}\n\\cite{no2} 🙂\n\\end{verbatim}\n"
        "Text Ü \\verb|x| \\citep[p.~3]{yes}"
    )
    doc = parse(text)
    assert [c.key for c in doc.citations] == ["yes"]
    assert doc.citations[0].span.start == text.index("yes")


# --------------------------------------------------------------------------- resources


def refs(text: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    doc = parse_latex(text, "paper.tex")
    out = []
    for group in (doc.bibliographies, doc.includes):
        out.append([(r.target, text[r.span.start : r.span.end], r.kind) for r in group])
    return out[0], out[1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\bibliography{a, b}", [("a", "a", "bibliography"), ("b", "b", "bibliography")]),
        ("\\bibliography{ a ,\n b }", [("a", "a", "bibliography"), ("b", "b", "bibliography")]),
        (r"\bibliography{refs,static/affiliated-refs}",
         [("refs", "refs", "bibliography"),
          ("static/affiliated-refs", "static/affiliated-refs", "bibliography")]),
        (r"\bibliography{refs.bib}", [("refs.bib", "refs.bib", "bibliography")]),
        (r"\nobibliography{a}", [("a", "a", "bibliography")]),
        (r"\addbibresource{x.bib}", [("x.bib", "x.bib", "addbibresource")]),
        (r"\addbibresource[location=local,label=lab]{bib/dis.bib}",
         [("bib/dis.bib", "bib/dis.bib", "addbibresource")]),
        (r"\addglobalbib{g.bib}", [("g.bib", "g.bib", "addbibresource")]),
        (r"% \addbibresource{commented.bib}", []),
        (r"\bibliographystyle{plainnat}", []),
    ],
)
def test_bibliography_resources(text: str, expected: list[tuple[str, str, str]]) -> None:
    assert refs(text)[0] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"\input{f}", [("f", "f", "input")]),
        (r"\input{chapter/intro.tex}", [("chapter/intro.tex", "chapter/intro.tex", "input")]),
        ("\\input f\n", [("f", "f", "input")]),
        ("\\input f.tex\n", [("f.tex", "f.tex", "input")]),
        (r"\include{chap/one}", [("chap/one", "chap/one", "include")]),
        (r"\subfile{sub/file}", [("sub/file", "sub/file", "subfile")]),
        (r"\subimport{dir/}{f}", [("dir/f", "f", "input")]),
        (r"\subimport{dir}{f}", [("dir/f", "f", "input")]),
        (r"\import{/abs/dir/}{f.tex}", [("/abs/dir/f.tex", "f.tex", "input")]),
        (r"\input{a}\include{b}", [("a", "a", "input"), ("b", "b", "include")]),
        (r"\includeonly{a,b}", []),
        (r"\includegraphics{fig}", []),
        (r"\inputencoding{utf8}", []),
        (r"% \input{commented}", []),
    ],
)
def test_included_files(text: str, expected: list[tuple[str, str, str]]) -> None:
    assert refs(text)[1] == expected


def test_bibitem_keys() -> None:
    text = (
        "\\begin{thebibliography}{9}\n"
        "\\bibitem{k1} A. Author. Title.\n"
        "\\bibitem[Doe(2000)]{doe:2000} J. Doe.\n"
        "\\bibitem{ spaced }\n"
        "\\end{thebibliography}"
    )
    doc = parse_latex(text, "paper.tex")
    assert set(doc.bibitems) == {"k1", "doe:2000", "spaced"}
    for key, span in doc.bibitems.items():
        assert text[span.start : span.end] == key


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\documentclass{article}\n\\begin{document}", True),
        ("\\documentclass[11pt,a4paper]{report}", True),
        ("% \\documentclass{article}\n", False),
        ("\\section{Intro}", False),
        ("\\documentclassx{y}", False),
    ],
)
def test_documentclass_detection(text: str, expected: bool) -> None:
    assert parse_latex(text, "paper.tex").has_documentclass is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("% !TEX root = main.tex\n\\section{x}", "main.tex"),
        ("%!TeX root=../main.tex\n", "../main.tex"),
        ("% !TEX root = main.tex \r\n", "main.tex"),
        ("%% !tex root = thesis/my thesis.tex\n", "thesis/my thesis.tex"),
        ("\\section{x}\n% !TEX root = late.tex\n", "late.tex"),
        ("% TEX root = main.tex\n", None),
        ("% !TEX program = xelatex\n", None),
    ],
)
def test_magic_root_comment(text: str, expected: str | None) -> None:
    assert parse_latex(text, "chapter.tex").magic_root == expected
