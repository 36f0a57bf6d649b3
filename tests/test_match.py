"""Comparing entries with scholarly records: what must and must not be flagged."""

from __future__ import annotations

from dataclasses import replace

import pytest

from citelens.core.findings import Severity
from citelens.core.model import EntryView, Name
from citelens.sources.records import PaperRecord
from citelens.verify.match.authors import is_placeholder_author
from citelens.verify.match.compare import (
    Comparison,
    best_candidate,
    compare,
    identifier_conflict,
    is_same_paper,
)
from citelens.verify.match.discrepancy import Discrepancy
from citelens.verify.match.titles import title_similarity, title_words_changed
from citelens.verify.match.venues import is_preprint_venue, normalize_venue, same_venue

YEAR_NOW = 2025


def n(first: str, last: str, von: str = "", jr: str = "") -> Name:
    return Name(first, von, last, jr)


def view(**kw: object) -> EntryView:
    base = EntryView(
        key="he2016deep", entry_type="inproceedings",
        title="Deep Residual Learning for Image Recognition",
        authors=(n("Kaiming", "He"), n("Xiangyu", "Zhang"), n("Shaoqing", "Ren"),
                 n("Jian", "Sun")),
        authors_truncated=False, year=2016,
        venue="IEEE Conference on Computer Vision and Pattern Recognition",
        doi=None, arxiv_id=None, pmid=None, s2_id=None, url=None,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def s2(**kw: object) -> PaperRecord:
    rec = PaperRecord(
        source="s2", title="Deep Residual Learning for Image Recognition",
        authors=["Kaiming He", "X. Zhang", "Shaoqing Ren", "Jian Sun"], year=2016,
        venue="Computer Vision and Pattern Recognition",
        venue_alternates=["CVPR", "IEEE/CVF Conference on Computer Vision and Pattern Recognition"],
        doi="10.1109/cvpr.2016.90", arxiv_id="1512.03385",
        s2_paper_id="2c03df8b48bf3fa39054345bafabfeff15bfd11d",
    )
    for k, v in kw.items():
        setattr(rec, k, v)
    return rec


def arxiv(**kw: object) -> PaperRecord:
    rec = PaperRecord(source="arxiv", title="Deep Residual Learning for Image Recognition",
                      authors=["Kaiming He", "Xiangyu Zhang", "Shaoqing Ren", "Jian Sun"],
                      year=2015, venue="arXiv", arxiv_id="1512.03385", is_preprint=True)
    for k, v in kw.items():
        setattr(rec, k, v)
    return rec


def warnings(c: Comparison) -> list[Discrepancy]:
    return c.at_least(Severity.WARNING)


# --------------------------------------------------------------------------- titles

SAME_TITLES = [
    ("case", "Deep residual learning for image recognition",
     "Deep Residual Learning for Image Recognition"),
    ("braces", "{D}eep {R}esidual {L}earning for {I}mage {R}ecognition",
     "Deep Residual Learning for Image Recognition"),
    ("dropped subtitle", "The NumPy array: a structure for efficient numerical computation",
     "The NumPy Array"),
    ("subtitle only on record", "Stability exchanges between periodic orbits in a Hamiltonian "
     "system", "Stability exchanges between periodic orbits in a Hamiltonian system: "
     "A numerical study"),
    ("acronym dropped", "Pre-training of deep bidirectional transformers for language "
     "understanding", "BERT: Pre-training of Deep Bidirectional Transformers for Language "
     "Understanding"),
    ("-ise/-ize", "Adam: A Method for Stochastic Optimisation",
     "Adam: A Method for Stochastic Optimization"),
    ("-our/-or -yse/-yze", "Modelling colour behaviour to analyse images",
     "Modeling color behavior to analyze images"),
    ("dashes and quotes", "Semi‐supervised learning with “ladder” networks",
     "Semi-supervised learning with \"ladder\" networks"),
    ("accents", "On the Schrödinger equation for Poincaré maps",
     "On the Schrodinger equation for Poincare maps"),
    ("latex accents", "On the Schr\\\"{o}dinger equation for Poincar\\'e maps",
     "On the Schrödinger equation for Poincaré maps"),
    ("html tags (Crossref)", "Gene expression in <i>Drosophila</i> embryos",
     "Gene expression in Drosophila embryos"),
    ("typo", "Attention is all you need for reccurent recognition",
     "Attention is all you need for recurrent recognition"),
    ("plural", "Graph convolutional network for text classification",
     "Graph convolutional networks for text classification"),
]


@pytest.mark.parametrize(("why", "a", "b"), SAME_TITLES, ids=[t[0] for t in SAME_TITLES])
def test_same_paper_titles_reach_verified(why: str, a: str, b: str) -> None:
    assert title_similarity(a, b) >= 0.90
    assert title_similarity(b, a) >= 0.90


NEAR_MISS = [
    ("word changed", "Deep Residual Learning for Image Recognition",
     "Deep Residual Learning for Video Recognition"),
    ("word added", "Attention Is All You Need", "Sparse Attention Is All You Need"),
    ("word dropped", "Language Models are Few-Shot Learners", "Language Models are Learners"),
    ("negation prefix", "Semi-supervised classification with graph convolutional networks",
     "Unsupervised classification with graph convolutional networks"),
    ("nonlinear vs linear", "Linear dynamics of coupled oscillators",
     "Nonlinear dynamics of coupled oscillators"),
    ("sequel number", "Nonlinear waves in plasmas. Part I", "Nonlinear waves in plasmas. Part II"),
    ("different subtitle", "Graph networks: a survey of methods",
     "Graph networks: a survey of applications"),
    ("long title, one word", "A unified framework for the analysis of stochastic gradient "
     "methods in nonconvex optimization with heavy tailed noise",
     "A unified framework for the analysis of stochastic gradient methods in convex "
     "optimization with heavy tailed noise"),
]


@pytest.mark.parametrize(("why", "a", "b"), NEAR_MISS, ids=[t[0] for t in NEAR_MISS])
def test_near_miss_titles_stay_below_verified(why: str, a: str, b: str) -> None:
    assert title_similarity(a, b) < 0.90


def test_one_changed_word_is_still_a_candidate_but_unrelated_titles_are_not() -> None:
    assert title_similarity("Deep Residual Learning for Image Recognition",
                            "Deep Residual Learning for Video Recognition") >= 0.70
    assert title_similarity("Deep Residual Learning for Image Recognition",
                            "Attention Is All You Need") < 0.50
    assert title_similarity("", "Attention Is All You Need") == 0.0
    assert title_similarity("BERT: Pre-training of Deep Bidirectional Transformers", "BERT") < 0.7


# --------------------------------------------------------------------------- must not be flagged

NOT_FLAGGED: list[tuple[str, EntryView, list[PaperRecord]]] = [
    ("exact", view(), [s2()]),
    ("initials vs full first names",
     view(authors=(n("K.", "He"), n("X.", "Zhang"), n("S.", "Ren"), n("J.", "Sun"))), [s2()]),
    ("and others", view(authors=(n("Kaiming", "He"), n("", "others")), authors_truncated=True),
     [s2()]),
    ("and others flag only", view(authors=(n("Kaiming", "He"), n("Xiangyu", "Zhang")),
                                  authors_truncated=True), [s2()]),
    ("author order", view(authors=(n("Xiangyu", "Zhang"), n("Kaiming", "He"),
                                   n("Shaoqing", "Ren"), n("Jian", "Sun"))), [s2()]),
    ("latex accents vs unicode",
     view(title="Light-scattering measurements in a liquid mixture",
          authors=(n("P. N.", "Segr\\`e"), n("R. W.", "Gammon"), n("J. V.", "Sengers")),
          venue="Phys. Rev. E", year=1993),
     [PaperRecord("crossref", "Light-scattering measurements in a liquid mixture",
                  ["P. N. Segrè", "R. W. Gammon", "J. V. Sengers"], 1993, "Physical Review E")]),
    ("unicode entry vs ascii record",
     view(title="Zur Elektrodynamik bewegter Körper", authors=(n("Paul", "Müller"),),
          venue="Annalen der Physik", year=1905),
     [PaperRecord("openalex", "Zur Elektrodynamik bewegter Korper", ["Paul Muller"], 1905,
                  "Annalen der Physik")]),
    ("Last, First in the record",
     view(), [s2(authors=["He, Kaiming", "Zhang, Xiangyu", "Ren, Shaoqing", "Sun, Jian"])]),
    ("von particle and compound names",
     view(title="Some study of waves", authors=(n("Ludwig", "Beethoven", von="van"),
                                                n("Gabriel", "García Márquez")),
          venue="Nature", year=2001),
     [PaperRecord("crossref", "Some Study of Waves", ["Ludwig van Beethoven",
                                                      "Gabriel Garcia Marquez"], 2001, "Nature")]),
    ("title case vs sentence case", view(title="Deep residual learning for image recognition"),
     [s2()]),
    ("acronym dropped from the title",
     view(title="Pre-training of Deep Bidirectional Transformers for Language Understanding",
          authors=(n("Jacob", "Devlin"), n("Ming-Wei", "Chang"), n("Kenton", "Lee"),
                   n("Kristina", "Toutanova")), venue="NAACL-HLT", year=2019),
     [PaperRecord("s2", "BERT: Pre-training of Deep Bidirectional Transformers for Language "
                  "Understanding", ["Jacob Devlin", "Ming-Wei Chang", "Kenton Lee",
                                    "Kristina Toutanova"], 2019,
                  "North American Chapter of the Association for Computational Linguistics")]),
    ("NeurIPS vs Advances in NIPS",
     view(title="Attention is All you Need", authors=(n("Ashish", "Vaswani"), n("", "others")),
          authors_truncated=True, venue="NeurIPS", year=2017),
     [PaperRecord("crossref", "Attention Is All You Need", ["Ashish Vaswani", "Noam Shazeer"],
                  2017, "Advances in Neural Information Processing Systems 30")]),
    ("arXiv version year off by one, cited as proceedings",
     view(year=2015), [s2(), arxiv()]),
    ("journal abbreviation", view(venue="IEEE Trans. Pattern Anal. Mach. Intell."),
     [s2(venue="IEEE Transactions on Pattern Analysis and Machine Intelligence",
         venue_alternates=[])]),
    ("S2 venue alternates", view(venue="CVPR"), [s2(venue="", venue_alternates=["CVPR"])]),
    ("missing optional fields",
     view(authors=(), year=None, venue="", doi=None), [s2()]),
    ("record without venue or year", view(), [s2(venue=None, venue_alternates=[], year=None)]),
    ("DOI of the record", view(doi="10.1109/CVPR.2016.90"), [s2()]),
    ("arXiv DOI of the preprint", view(doi="10.48550/arxiv.1512.03385"), [s2(), arxiv()]),
]


@pytest.mark.parametrize(("why", "entry", "versions"), NOT_FLAGGED,
                         ids=[t[0] for t in NOT_FLAGGED])
def test_natural_variation_is_not_flagged(why: str, entry: EntryView,
                                          versions: list[PaperRecord]) -> None:
    c = compare(entry, versions, current_year=YEAR_NOW)
    assert warnings(c) == [], [d.message for d in c.discrepancies]


def test_arxiv_preprint_of_published_paper_is_information_only() -> None:
    entry = view(venue="arXiv preprint arXiv:1512.03385", year=2015)
    c = compare(entry, [s2(), arxiv()], current_year=YEAR_NOW)
    assert warnings(c) == []
    assert c.kinds == ["preprint_status"]
    assert c.severity is Severity.INFORMATION
    assert "Computer Vision and Pattern Recognition" in c.discrepancies[0].message


def test_off_by_one_year_is_information_and_says_both_years() -> None:
    c = compare(view(year=2017), [s2()], current_year=YEAR_NOW)
    assert c.severity is Severity.INFORMATION
    assert c.discrepancies[0].message == "year: 2017 in the entry, 2016 in Semantic Scholar"


def test_listing_first_authors_without_others_is_information() -> None:
    c = compare(view(authors=(n("Kaiming", "He"), n("Xiangyu", "Zhang"))), [s2()],
                current_year=YEAR_NOW)
    assert c.kinds == ["authors_incomplete"] and c.severity is Severity.INFORMATION


def test_a_two_author_paper_cited_with_its_first_author_alone_is_a_warning() -> None:
    two = s2(authors=["Kaiming He", "X. Zhang"])
    c = compare(view(authors=(n("Kaiming", "He"),)), [two], current_year=YEAR_NOW)
    assert c.kinds == ["authors_incomplete"] and c.severity is Severity.WARNING
    assert "1 of the 2 authors" in c.discrepancies[0].message
    # with "and others" it is a correct short form
    c = compare(view(authors=(n("Kaiming", "He"),), authors_truncated=True), [two],
                current_year=YEAR_NOW)
    assert c.discrepancies == []


# --------------------------------------------------------------------------- must be flagged

FLAGGED: list[tuple[str, EntryView, list[PaperRecord], str]] = [
    ("near-miss title", view(title="Deep Residual Learning for Video Recognition"), [s2()],
     "title"),
    ("chimeric: authors of another paper",
     view(authors=(n("Ashish", "Vaswani"), n("Noam", "Shazeer"), n("Niki", "Parmar"))), [s2()],
     "authors"),
    ("one author swapped in",
     view(authors=(n("Kaiming", "He"), n("Wei", "Patel"), n("Shaoqing", "Ren"), n("Jian", "Sun"))),
     [s2()], "authors"),
    ("invented extra author",
     view(authors=(n("Kaiming", "He"), n("Xiangyu", "Zhang"), n("Shaoqing", "Ren"),
                   n("Jian", "Sun"), n("Andrew", "Ng"))), [s2()], "authors"),
    ("author missing from the middle",
     view(authors=(n("Kaiming", "He"), n("Shaoqing", "Ren"), n("Jian", "Sun"))), [s2()],
     "authors_missing"),
    ("placeholder John Doe", view(authors=(n("John", "Doe"),)), [s2()], "placeholder_author"),
    ("placeholder Anonymous", view(authors=(n("", "Anonymous"),)), [], "placeholder_author"),
    ("placeholder Author One", view(authors=(n("Author", "One"), n("Author", "Two"))), [],
     "placeholder_author"),
    ("placeholder Firstname Lastname", view(authors=(n("Firstname", "Lastname"),)), [],
     "placeholder_author"),
    ("et al. as the only author", view(authors=(n("", "et al."),)), [], "placeholder_author"),
    ("wrong venue", view(venue="International Conference on Machine Learning"), [s2()],
     "venue"),
    ("nonexistent venue", view(venue="International Journal of Deep Vision Systems"), [s2()],
     "venue"),
    ("published venue but the paper is an arXiv preprint only",
     view(venue="NeurIPS"), [arxiv()], "venue_unpublished"),
    ("preprint cited with another paper's arXiv id",
     view(venue="arXiv preprint arXiv:1706.03762", year=2015), [s2(), arxiv()],
     "preprint_status"),
    ("year in the future", view(year=2031), [s2()], "year_future"),
    ("year in the future without record", view(year=2031), [], "year_future"),
    ("year off by more than one", view(year=2012), [s2(), arxiv()], "year"),
    ("DOI of another paper", view(doi="10.1109/cvpr.2017.243"), [s2()], "identifier"),
    ("arXiv id of another paper", view(arxiv_id="1706.03762"), [s2(), arxiv()], "identifier"),
]


@pytest.mark.parametrize(("why", "entry", "versions", "kind"), FLAGGED,
                         ids=[t[0] for t in FLAGGED])
def test_fabrication_signals_are_warnings(why: str, entry: EntryView,
                                          versions: list[PaperRecord], kind: str) -> None:
    c = compare(entry, versions, current_year=YEAR_NOW)
    flagged = warnings(c)
    assert kind in {d.kind for d in flagged}, [d.message for d in c.discrepancies]
    assert c.severity in (Severity.WARNING, Severity.ERROR)


def test_hybrid_reports_every_problem() -> None:
    entry = view(title="Deep Residual Learning for Video Recognition", year=2012,
                 authors=(n("Kaiming", "He"), n("John", "Doe")), venue="ICML")
    c = compare(entry, [s2(), arxiv()], current_year=YEAR_NOW)
    assert {"title", "year", "venue", "placeholder_author"} <= set(c.kinds)


def test_messages_say_exactly_what_differs() -> None:
    c = compare(view(year=2019), [s2(year=2020)], current_year=YEAR_NOW)
    assert [d.message for d in c.discrepancies] == [
        "year: 2019 in the entry, 2020 in Semantic Scholar"]
    c = compare(view(authors=(n("A.", "Smith"), n("B.", "Jones"), n("C.", "Lee"))),
                [s2(authors=["Alice Smith", "Raj Patel", "Chen Lee"])], current_year=YEAR_NOW)
    (d,) = c.discrepancies
    assert d.kind == "authors" and d.severity is Severity.WARNING
    assert "Jones" in d.message and "Patel" in d.message
    assert "entry has Smith, Jones, Lee; Semantic Scholar has Smith, Patel, Lee" in d.message
    c = compare(view(title="Deep Residual Learning for Video Recognition"), [s2()],
                current_year=YEAR_NOW)
    assert "“video”" in c.discrepancies[0].message and "“image”" in c.discrepancies[0].message


def test_informal_types_get_information_except_placeholders_and_future_years() -> None:
    entry = view(entry_type="book", year=2012, authors=(n("Jane", "Roe"),), venue="MIT Press")
    c = compare(entry, [s2()], current_year=YEAR_NOW)
    assert c.discrepancies and c.severity is Severity.INFORMATION
    # A placeholder author or a future year is a fabrication sign whatever the type.
    doe = view(entry_type="book", year=2012, authors=(n("John", "Doe"),), venue="MIT Press")
    kinds = {d.kind: d.severity for d in compare(doe, [s2()], current_year=YEAR_NOW).discrepancies}
    assert kinds.pop("placeholder_author") is Severity.WARNING
    assert all(sev is Severity.INFORMATION for sev in kinds.values())
    misc = view(entry_type="misc", url="https://example.org", year=2031)
    assert compare(misc, [], current_year=YEAR_NOW).severity is Severity.WARNING


def test_et_al_as_the_only_author_is_a_placeholder() -> None:
    entry = view(authors=(), authors_truncated=True)
    (d,) = [d for d in compare(entry, [s2()], current_year=YEAR_NOW).discrepancies
            if d.kind == "placeholder_author"]
    assert d.severity is Severity.WARNING and "et al." in d.message


def test_bad_input_never_raises() -> None:
    weird = PaperRecord(source="s2", title="", authors=["", ",", "  "], year=None,
                        venue="((", venue_alternates=[""])
    c = compare(view(title="", authors=(n("", ""),), venue="()", doi="  "), [weird])
    assert isinstance(c, Comparison)
    assert best_candidate(view(title=""), [weird]) is None


def test_json_round_trip() -> None:
    c = compare(view(title="Deep Residual Learning for Video Recognition", year=2012),
                [s2()], current_year=YEAR_NOW)
    back = Comparison.from_json(c.to_json())
    assert back == Comparison(round(c.title_score, 4), c.discrepancies, c.source)
    assert back.severity is Severity.WARNING and back.kinds == c.kinds


# ------------------------------------------------------------------ candidates, identifiers


def test_best_candidate_prefers_year_match_among_good_titles() -> None:
    a = PaperRecord("s2", "Deep Residual Learning for Image Recognition", year=2010)
    b = PaperRecord("s2", "Deep residual learning for image recognition", year=2016)
    c = PaperRecord("s2", "Attention Is All You Need", year=2016)
    got = best_candidate(view(), [a, c, b])
    assert got is not None and got[0] is b and got[1] >= 0.9
    assert best_candidate(view(), [c]) is None
    near = PaperRecord("s2", "Deep Residual Learning for Video Recognition", year=2016)
    got = best_candidate(view(), [near, a])
    assert got is not None and got[0] is a  # a verified-level title beats a near miss


def test_identifier_conflict_and_same_paper() -> None:
    other = PaperRecord("crossref", "Attention Is All You Need", doi="10.1109/cvpr.2016.90")
    assert identifier_conflict(view(doi="10.1109/cvpr.2016.90"), other)
    assert not identifier_conflict(view(), s2())
    assert not identifier_conflict(view(title=""), other)
    assert is_same_paper(view(), s2())
    assert not is_same_paper(view(), other)
    near = s2(title="Deep Residual Learning for Video Recognition")
    assert not is_same_paper(view(), near)
    assert is_same_paper(view(doi="10.1109/cvpr.2016.90"), near)  # shared DOI, candidate title


# --------------------------------------------------------------------------- venues and names


@pytest.mark.parametrize(("a", "b"), [
    ("NeurIPS", "Advances in Neural Information Processing Systems 30"),
    ("NIPS'17", "Neural Information Processing Systems"),
    ("Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition (CVPR)",
     "CVPR 2016"),
    ("Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics",
     "ACL"),
    ("Phys. Rev. E", "Physical review. E, Statistical, nonlinear, and soft matter physics"),
    ("J. Mach. Learn. Res.", "Journal of Machine Learning Research"),
    ("J. Comput. Phys.", "Journal of Computational Physics"),  # not in the table
    ("A\\&A", "Astronomy and Astrophysics"),
    ("MNRAS", "Monthly Notices of the Royal Astronomical Society"),
    ("Proc. Natl. Acad. Sci. USA", "PNAS"),
])
def test_same_venue(a: str, b: str) -> None:
    assert same_venue(a, b) and same_venue(b, a)


@pytest.mark.parametrize(("a", "b"), [
    ("Phys. Rev. E", "Physical Review Letters"), ("ICML", "NeurIPS"),
    ("Nature", "Nature Physics"), ("Phys. Rev.", "Phys. Rev. A"),
    ("International Journal of Advanced Computational Physics", "Journal of Computational Physics"),
    ("NeurIPS Workshop on Optimization", "NeurIPS"), ("", "ICML"),
])
def test_different_venues(a: str, b: str) -> None:
    assert not same_venue(a, b)


def test_venue_alternates_and_preprints() -> None:
    assert same_venue("CVPR", "Computer Vision and Pattern Recognition", ["CVPR"])
    assert normalize_venue("NeurIPS 2020") == normalize_venue("NIPS") == "neurips"
    assert is_preprint_venue("arXiv preprint arXiv:1706.03762")
    assert is_preprint_venue("CoRR abs/1706.03762")
    assert not is_preprint_venue("Nature")


@pytest.mark.parametrize(("name", "placeholder"), [
    (n("John", "Doe"), True), (n("Jane", "Doe"), True), (n("", "Anonymous"), True),
    (n("Author", "One"), True), (n("Firstname", "Lastname"), True), (n("", "et al."), True),
    (n("et", "al."), True), (n("Jennifer", "Doe"), False), (n("Kaiming", "He"), False),
    (n("", "others"), False),
])
def test_placeholder_authors(name: Name, placeholder: bool) -> None:
    assert is_placeholder_author(name) is placeholder


def test_s2_and_openalex_sharing_a_cut_title_do_not_prove_it_whole() -> None:
    """S2 and OpenAlex carry the same cut-off titles (both from the Microsoft Academic Graph):
    reading OpenAlex's record as well as S2's must not turn the preprint's other word into
    a warning; a Crossref record with the same short title does prove it whole."""
    cited = "Differentiable Particle Filtering via Entropy-Regularized Optimal Transport"
    cut = "Differentiable Particle Filtering via Entropy-Regularized Optimal"
    preprint = PaperRecord("arxiv", "Differentiable Particle Filtering through Entropy-Regularized "
                           "Optimal Transport", ["Adrien Corenflos"], 2021, is_preprint=True)
    s2_rec = PaperRecord("s2", cut, ["Adrien Corenflos"], 2021)
    openalex_rec = PaperRecord("openalex", cut, ["Adrien Corenflos"], 2021)
    assert title_words_changed(cited, [s2_rec, preprint]) is None
    assert title_words_changed(cited, [s2_rec, openalex_rec, preprint]) is None
    crossref_rec = PaperRecord("crossref", cut, ["Adrien Corenflos"], 2021)
    assert title_words_changed(cited, [s2_rec, crossref_rec, preprint]) is not None
