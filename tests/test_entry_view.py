"""Entry views: plain-Unicode fields and normalised identifiers, as the verifier sees them."""

from __future__ import annotations

from pathlib import Path

import pytest

from citelens.core.identifiers import normalize_arxiv, normalize_doi
from citelens.core.model import BibEntry
from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.documents.read import read_text
from tests.harness import CORPUS


def entry(source: str) -> BibEntry:
    bib = parse_bib(source)
    assert bib.problems == [], bib.problems
    return bib.entries[0]


def test_physrev_entry_view() -> None:
    e = entry(r"""@article{ezersky1993hydrothermal,
 s2id = {627ea923ded32faa400e7d25768e30f3a8678e21},
 author = {Ezersky, A. B. and Garcimart\'{\i}n, A. and P\'erez-Garc\'{\i}a, C.},
 doi = {10.1103/PhysRevE.47.1126},
 journal = {Phys. Rev. E},
 title = {Hydrothermal waves in {Marangoni} convection in a cylindrical container},
 url = {https://link.aps.org/doi/10.1103/PhysRevE.47.1126},
 year = {1993}
}""")
    v = entry_view(e)
    assert v.key == "ezersky1993hydrothermal" and v.entry_type == "article"
    assert v.title == "Hydrothermal waves in Marangoni convection in a cylindrical container"
    assert [n.last for n in v.authors] == ["Ezersky", "Garcimartín", "Pérez-García"]
    assert not v.authors_truncated
    assert v.year == 1993 and v.venue == "Phys. Rev. E"
    assert v.doi == "10.1103/physreve.47.1126"
    assert v.s2_id == "627ea923ded32faa400e7d25768e30f3a8678e21"
    assert v.url == "https://link.aps.org/doi/10.1103/PhysRevE.47.1126"
    assert v.arxiv_id is None and v.pmid is None


@pytest.mark.parametrize(
    ("fields", "doi"),
    [
        ("doi = {10.1000/ABC.def}", "10.1000/abc.def"),
        ("doi = {https://doi.org/10.1000/x}", "10.1000/x"),
        ("doi = {http://dx.doi.org/10.1000/x}", "10.1000/x"),
        ("doi = {doi:10.1000/x}", "10.1000/x"),
        ("doi = {DOI: 10.1000/x}", "10.1000/x"),
        (r"doi = {10.1000/a\_b}", "10.1000/a_b"),
        ("doi = {10.1000/a%2Fb}", "10.1000/a/b"),
        ("url = {https://doi.org/10.1145/3292500.3330701}", "10.1145/3292500.3330701"),
        (r"url = {\url{https://doi.org/10.1145/X}}", "10.1145/x"),
        ("doi = {not a doi}", None),
        ("url = {https://example.org/10.1000/x}", None),
    ],
)
def test_doi_normalisation(fields: str, doi: str | None) -> None:
    assert entry_view(entry("@misc{k, " + fields + "}")).doi == doi


@pytest.mark.parametrize(
    ("fields", "arxiv"),
    [
        ("eprint = {1502.01589}, archivePrefix = {arXiv}", "1502.01589"),
        ('eprint = {1706.03762v5}, archiveprefix = "arXiv"', "1706.03762"),
        ("eprint = {hep-th/9711200}, eprinttype = {arxiv}", "hep-th/9711200"),
        ("eprint = {math.GT/0309136}", "math.GT/0309136"),
        ("arxiv = {2104.09864}", "2104.09864"),
        ("url = {http://arxiv.org/abs/1707.03237}", "1707.03237"),
        ("url = {https://arxiv.org/pdf/1707.03237v2.pdf}", "1707.03237"),
        ("doi = {10.48550/arXiv.2306.15595}", "2306.15595"),
        ("journal = {arXiv preprint arXiv:2306.15595}", "2306.15595"),  # saier dis.bib
        ("journal = {CoRR}, volume = {abs/1707.03237}", None),
        ("journal = {ArXiv}, note = {arXiv:1909.06516v2}", "1909.06516"),
        ("eprint = {12345}, eprinttype = {pubmed}", None),
        ("journal = {Nature}", None),
    ],
)
def test_arxiv_id(fields: str, arxiv: str | None) -> None:
    assert entry_view(entry("@article{k, " + fields + "}")).arxiv_id == arxiv


@pytest.mark.parametrize(
    ("fields", "year"),
    [
        ("year = {2019}", 2019),
        ("year = 2019", 2019),
        ("year = {2019a}", 2019),
        ("date = {2019-05-01}", 2019),
        ("date = {2019/2020}", 2019),
        ("year = {in press}", None),
        ("", None),
    ],
)
def test_year(fields: str, year: int | None) -> None:
    assert entry_view(entry("@misc{k, " + fields + "}")).year == year


@pytest.mark.parametrize(
    ("source", "venue"),
    [
        ("@article{k, journal = {Nature}, publisher = {NPG}}", "Nature"),
        ("@article{k, journaltitle = {J. Fluid Mech.}}", "J. Fluid Mech."),
        ("@inproceedings{k, booktitle = {Proc. of {ICML}}, publisher = {PMLR}}", "Proc. of ICML"),
        ("@phdthesis{k, school = {MIT}, publisher = {X}}", "MIT"),
        ("@techreport{k, institution = {CERN}}", "CERN"),
        ("@book{k, publisher = {Springer}}", "Springer"),
        ("@misc{k, howpublished = {Zenodo}}", "Zenodo"),
        ("@article{k, journal = {\\apj}}", "ApJ"),
        ("@unknowntype{k, organization = {W3C}}", "W3C"),
        ("@misc{k, title = {No venue}}", ""),
    ],
)
def test_venue_by_entry_type(source: str, venue: str) -> None:
    assert entry_view(entry(source)).venue == venue


def test_editors_stand_in_for_missing_authors_and_others_truncates() -> None:
    v = entry_view(entry("@book{k, editor = {Doe, Jane and others}}"))
    assert [n.last for n in v.authors] == ["Doe"] and v.authors_truncated


def test_title_gets_subtitle_and_ids() -> None:
    v = entry_view(entry(
        "@book{k, title = {Main}, subtitle = {Sub}, pmid = {PMID: 12345}, s2_id = {ABC},"
        " semantic_scholar_id = {zzz}}"))
    assert v.title == "Main: Sub" and v.pmid == "12345" and v.s2_id == "zzz"
    assert entry_view(entry("@misc{k, pmid = {12a}}")).pmid is None


def test_crossref_fields_inherited_with_mapping_or_function() -> None:
    bib = parse_bib(
        "@inproceedings{c, title = {Child}, author = {A. B}, crossref = {P}}\n"
        "@proceedings{P, title = {Proc. X}, year = {2001}, doi = {10.1/p}}\n")
    child, parent = bib.entries
    for lookup in ({"P": parent}, {"p": parent}, lambda key: parent if key == "P" else None):
        v = entry_view(child, lookup)  # type: ignore[arg-type]
        assert (v.year, v.venue, v.title) == (2001, "Proc. X", "Child")
    assert entry_view(child).year is None  # without a lookup nothing is inherited


def test_normalizers_directly() -> None:
    assert normalize_doi(" https://doi.org/10.5281/ZENODO.1 ") == "10.5281/zenodo.1"
    assert normalize_doi("") is None
    assert normalize_arxiv("arXiv:1234.56789v3") == "1234.56789"
    assert normalize_arxiv("1234") is None


def test_every_corpus_entry_gets_a_view() -> None:
    views = []
    for path in sorted((CORPUS / "papers").glob("**/*.bib")):
        bib = parse_bib(read_text(path), str(path))
        views += [entry_view(e, {x.key: x for x in bib.entries}) for e in bib.entries]
    assert len(views) > 1400
    with_title = [v for v in views if v.title]
    assert len(with_title) / len(views) > 0.97
    assert all("{" not in v.title and "\\" not in v.title for v in with_title)
    assert sum(1 for v in views if v.doi) >= 450  # 470
    assert sum(1 for v in views if v.arxiv_id) >= 85  # 88 in the corpus, none missed
    assert all(v.doi is None or (v.doi.startswith("10.") and v.doi == v.doi.lower())
               for v in views)


def test_views_of_a_file_on_disk(tmp_path: Path) -> None:
    p = tmp_path / "refs.bib"
    p.write_text("@article{k, title = {T\u00e9st}, year = 2020}", encoding="utf-8")
    v = entry_view(parse_bib(read_text(p), str(p)).entries[0])
    assert (v.title, v.year) == ("Tést", 2020)
