"""Claim extraction on real sentences from the corpus papers (tests/corpus) (LaTeX, R Markdown, Markdown)."""

from __future__ import annotations

from pathlib import Path

import pytest

from citelens.claims.sentences import extract_claim, split_sentences
from citelens.core.model import Span
from tests.harness import CORPUS

PAPERS = CORPUS / "papers"


def claim_at(path: str, context: str, key: str, language: str) -> str:
    """The claim for the first ``key`` after ``context`` in a corpus file."""
    file = PAPERS / path
    if not file.exists():
        pytest.skip(f"corpus file missing: {file}")
    text = file.read_text(encoding="utf-8")
    at = text.index(key, text.index(context))
    return extract_claim(text, Span(at, at + len(key)), language)


@pytest.mark.parametrize(
    ("path", "context", "key", "expected"),
    [
        # "et al." followed by a year and a citation, then the sentence end
        ("bhandari-phd-thesis/appendix/TIsigner/tisigner.tex", "Protocols for the GGA",
         "Van_Dolleweerd2018-sg",
         "Protocols for the GGA reactions are as described in van Dolleweerd et al., 2018."),
        # species initials ("S. cerevisiae") inside a figure caption, "et al. (2013)"
        ("bhandari-phd-thesis/appendix/TIsigner/tisigner.tex", "For S. cerevisiae", "Dvir2013-lq",
         "(B) For S. cerevisiae, we used a YFP expression dataset from Dvir et al. (2013)."),
        # several citations in one sentence: all removed, "et al." kept
        ("bhandari-phd-thesis/chapters/TIsigner/tisigner.tex",
         "CAI, tAI and Codon Context (CC) were", "Tuller2010-ub",
         "CAI, tAI and Codon Context (CC) were calculated using the reference weights from "
         "Sharp and Li, Tuller et al. and Ang et al., respectively."),
        # "i.e.," and a \ref to a figure ("Fig") removed
        ("bhandari-phd-thesis/chapters/Solubility/solubility.tex",
         "To predict global protein structural flexibility", "vihinen1994accuracy,Cock2009-jl",
         "To predict global protein structural flexibility F (as in Fig), F can be calculated as "
         "the sliding window average of normalised B-factors (i.e., the arithmetic mean of f_i)."),
        # a sentence in the middle of a long paragraph with "For example:" and math
        ("bhandari-phd-thesis/chapters/Introduction/ProteinExpression/Features/"
         "SecondaryStructures.tex", "For example: Ding", "ding2005rna",
         "For example: Ding et al. found that structures tend to form clusters in a Boltzmann's "
         "ensemble."),
        # percentages in math, previous sentence ends right before
        ("bhandari-phd-thesis/chapters/Introduction/ProteinExpression/Features/"
         "SecondaryStructures.tex", "accuracy of the computed MFE", "eddy2004rna",
         "However, the accuracy of the computed MFE is only within 5-10% and a large number of "
         "alternate RNA structures lie within 5-10% of the predicted global minimum."),
        # "et al.~\cite" with a tie, numbers with thousands separators
        ("saier-phd-thesis/chapters/reference_coverage_and_granularity.tex", "Simonini et al.~",
         "Simonini2016blast",
         "Simonini et al. develop BLAST (Blocking with Loosely-Aware Schema Techniques) which "
         "adapts Locality-Sensitive Hashing."),
        # a table cell is its own unit
        ("saier-phd-thesis/chapters/reference_accross_languages.tex", "Tang et al.~", "Tang2014",
         "Tang et al."),
    ],
)
def test_latex_claims_from_the_corpus(path: str, context: str, key: str, expected: str) -> None:
    assert claim_at(path, context, key, "latex") == expected


@pytest.mark.parametrize(
    ("path", "context", "key", "expected"),
    [
        ("tsr-dockerfiles-rmd/ten-simple-rules-dockerfiles.Rmd", "While papers based",
         "@marwick_how_2015",
         "While papers based on the traditional journal article format can share extensive "
         "details about the research, computational research is often far too complicated to "
         "be effectively disseminated in this format."),
        # a [@a; @b] group: both keys give the same sentence, group removed
        ("tsr-dockerfiles-rmd/ten-simple-rules-dockerfiles.Rmd", "This is an important part",
         "@wilson_good_2017",
         "This is an important part of common practice for scientific computing."),
        ("tsr-dockerfiles-rmd/ten-simple-rules-dockerfiles.Rmd", "This is an important part",
         "@wilson_best_2014",
         "This is an important part of common practice for scientific computing."),
        # "e.g.," in the middle and inline code
        ("tsr-dockerfiles-rmd/ten-simple-rules-dockerfiles.Rmd", "we point readers to",
         "@docker-compose_2019",
         "Although it is outside the scope of this article, we point readers to docker-compose "
         "in the case where one might need container orchestration for multiple applications, "
         "e.g., web servers, databases, and worker containers."),
        ("joss-gmr/paper.md", "fully compatible", "@Pedregosa2011",
         "The library gmr is fully compatible with scikit-learn."),
        # in-text citations: the previous sentence ends at "by @Ghahramani1994."
        ("joss-gmr/paper.md", "proposed first by", "@Calinon2007",
         "introduced the term Gaussian mixture regression in the context of imitation learning "
         "for trajectories of robots and many publications that use GMR in this domain followed."),
    ],
)
def test_markdown_claims_from_the_corpus(path: str, context: str, key: str, expected: str) -> None:
    assert claim_at(path, context, key, "markdown") == expected


def test_abbreviations_decimals_and_initials_do_not_end_sentences() -> None:
    text = (
        "Earlier work was different. As shown in Fig. 3 and Eq. (2) of Sec. 4, the rate rose "
        "to 3.5 per cent, e.g. in the model by J. R. Smith et al. \\cite{smith}. Next one."
    )
    at = text.index("smith}")
    claim = extract_claim(text, Span(at, at + 5), "latex")
    assert claim == ("As shown in Fig. 3 and Eq. (2) of Sec. 4, the rate rose to 3.5 per cent, "
                     "e.g. in the model by J. R. Smith et al.")


def test_citation_after_the_full_stop_belongs_to_the_sentence_before() -> None:
    text = "First claim here.\\cite{a} Second claim there \\cite{b}."
    at = text.index("{a}") + 1
    assert extract_claim(text, Span(at, at + 1), "latex") == "First claim here."
    at = text.index("{b}") + 1
    assert extract_claim(text, Span(at, at + 1), "latex") == "Second claim there."


def test_paragraphs_sections_comments_and_footnotes_bound_the_claim() -> None:
    text = (
        "\\section{Intro}\nA heading is not part of it\n\n"
        "Deep nets overfit small data % a comment \\cite{hidden}\n"
        "\\citep[see][p.~3]{x}\\footnote{The same holds for convolutional networks \\cite{y}.}.\n\n"
        "\\subsection{Next}\nOther text."
    )
    at = text.index("{x}") + 1
    assert extract_claim(text, Span(at, at + 1), "latex") == "Deep nets overfit small data."
    at = text.index("{y}") + 1  # a citation inside a footnote: the footnote is the claim
    assert extract_claim(text, Span(at, at + 1), "latex") == "The same holds for convolutional networks."
    # a footnote that only points to the citation: the citation is the sentence's
    text = "Deep nets overfit small data.\\footnote{See \\cite{z}.} They generalise less.\n"
    at = text.index("{z}") + 1
    assert extract_claim(text, Span(at, at + 1), "latex") == "Deep nets overfit small data."


def test_whole_command_span_and_multicite_commands_work() -> None:
    text = "Transformers replaced recurrence \\parencites[see][]{a}{b} in translation."
    start = text.index("\\parencites")
    end = text.index(" in translation")
    assert extract_claim(text, Span(start, end), "latex") == (
        "Transformers replaced recurrence in translation.")


def test_split_sentences_offsets_cover_the_text() -> None:
    text = "One. Two? Three! Dr. Who is 4.5 m tall, i.e. tall. End"
    parts = [text[a:b].strip() for a, b in split_sentences(text)]
    assert parts == ["One.", "Two?", "Three!", "Dr. Who is 4.5 m tall, i.e. tall.", "End"]


def test_bad_input_gives_a_string_not_an_exception() -> None:
    assert extract_claim("", Span(0, 0), "latex") == ""
    assert isinstance(extract_claim("\\cite{", Span(5, 99), "latex"), str)
    assert isinstance(extract_claim("{{{{ \\begin{x} [@", Span(-3, 2), "markdown"), str)


def large_document() -> tuple[str, Span]:
    """About 2.5 MB of paragraphs and a citation in the middle (the time an extraction
    takes on it: ``benchmarks/bench_pathological.py``)."""
    para = ("Sentence about proteins and folding, e.g. in yeast \\cite{k}. " * 20 + "\n\n")
    text = para * 2000
    at = text.index("{k}", len(text) // 2) + 1
    return text, Span(at, at + 1)


def test_extraction_in_a_large_document() -> None:
    text, span = large_document()
    assert extract_claim(text, span, "latex") == "Sentence about proteins and folding, e.g. in yeast."


def test_corpus_is_where_the_tests_expect_it() -> None:
    assert isinstance(PAPERS, Path)


@pytest.mark.parametrize("text", [
    "\\begin{document}\nX is large \\cite{k}.",
    "\\section{Intro}\nX is large \\cite{k}. Next sentence.",
    "\\begin{itemize}[leftmargin=*]\n\\item X is large \\cite{k}.",
])
def test_environment_and_heading_names_are_not_claim_text(text: str) -> None:
    i = text.index("{k}") + 1
    assert extract_claim(text, Span(i, i + 1), "latex") == "X is large."


@pytest.mark.parametrize(("text", "key"), [
    # what is left of "(\citealt{a}; see also \citealt{b})"
    ("Sparse models generalise well (\\citealt{smith2020}; see also \\citealt{jones2021}).", "smith2020"),
    # a comma between two removed citations before the full stop
    ("Sparse models generalise well \\cite{smith2020}, \\cite{jones2021}.", "jones2021"),
    # a footnote whose sentence with the citation only points to it
    ("Sparse models generalise well.\\footnote{\\url{https://x.org}, accessed 2020. See \\cite{smith2020}.}",
     "smith2020"),
])
def test_leftovers_of_removed_citations_go_with_them(text: str, key: str) -> None:
    at = text.index(key)
    assert extract_claim(text, Span(at, at + len(key)), "latex") == "Sparse models generalise well."
