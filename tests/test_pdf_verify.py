"""A printed reference is verified against the string as printed, so that a slip of the PDF
reader (a title cut at a page break, a name split by a hyphen, a venue read into the title)
is information "as read from the PDF", never a warning, while what the print itself gets
wrong (other authors, another year, an invented title) stays the author's. The engine's
verdicts are built here as the engine builds them; the whole-string search asks the fake
Crossref (``query.bibliographic``, Crossref's own list format)."""

from __future__ import annotations

from pathlib import Path

from citelens.core.findings import Severity
from citelens.sources.methods import Method
from citelens.sources.records import PaperRecord
from citelens.sources.transport import Sources
from citelens.verify.cache import VerificationCache
from citelens.verify.printed import AS_READ, confirm_printed, confirms, reconcile
from citelens.verify.status import Discrepancy, Status, Unverified, Verification
from tests.fakes.scholarly import ScholarlyFake, fast_rates

SCIPY = PaperRecord(
    source="crossref",
    title="SciPy 1.0: Fundamental Algorithms for Scientific Computing in Python",
    authors=["Pauli Virtanen", "Ralf Gommers", "Travis E. Oliphant", "Matt Haberland"],
    year=2020,
    venue="Nature Methods",
    doi="10.1038/s41592-019-0686-2",
)
PRINTED = (
    "P. Virtanen, R. Gommers, T. E. Oliphant, M. Haber-land, et al., “SciPy 1.0: Fundamental "
    "algorithms for scientific computing in Python,” Nature Methods, vol. 17, pp. 261–272, 2020."
)


def _partial(*ds: Discrepancy) -> Verification:
    return Verification("[9]", Status.PARTIAL, "Found in Crossref with differences", match=SCIPY,
                        discrepancies=list(ds))


def _d(field: str, kind: str, message: str) -> Discrepancy:
    return Discrepancy(field, kind, Severity.WARNING, message)


def test_a_title_cut_at_a_page_break_is_the_readers_slip() -> None:
    cut = _d("title", "title", "title: 'SciPy 1.0: Fundamental algorithms for' in the entry")
    v = reconcile(_partial(cut), PRINTED, [])
    assert v.status is Status.VERIFIED
    (d,) = v.discrepancies
    assert d.severity is Severity.INFORMATION and d.message.endswith(f"({AS_READ})")


def test_a_name_split_by_a_hyphen_and_a_venue_read_into_the_title_are_slips() -> None:
    names = _d("authors", "authors", "authors: entry has Virtanen, Gommers, Haber")
    venue = _d("venue", "venue", "venue: 'vol' in the entry, Nature Methods in Crossref")
    v = reconcile(_partial(names, venue), PRINTED, [])
    assert v.status is Status.VERIFIED
    assert all(d.severity is Severity.INFORMATION for d in v.discrepancies)


def test_what_the_print_gets_wrong_stays_a_warning() -> None:
    other_authors = PRINTED.replace("P. Virtanen, R. Gommers, T. E. Oliphant", "W. Zhang, L. Chen, H. Tanaka")
    names = _d("authors", "authors", "authors: entry has Zhang, Chen, Tanaka")
    assert reconcile(_partial(names), other_authors, []).discrepancies[0].severity is Severity.WARNING
    wrong_year = PRINTED.replace("2020", "2017")
    year = _d("year", "year", "year: 2017 in the entry, 2020 in Crossref")
    assert reconcile(_partial(year), wrong_year, []).status is Status.PARTIAL
    # a slip explained next to a real error: the slip is information, the error stays
    wrong_venue = PRINTED.replace("Nature Methods", "Science")
    both = _partial(_d("venue", "venue", "venue: Science"), _d("title", "title", "cut"))
    v = reconcile(both, wrong_venue, [])
    assert v.status is Status.PARTIAL
    assert [d.severity for d in v.discrepancies] == [Severity.WARNING, Severity.INFORMATION]


def test_confirms_needs_title_first_authors_and_year() -> None:
    assert confirms(PRINTED, [SCIPY])
    assert not confirms(PRINTED.replace("Fundamental", "Essential"), [SCIPY])  # a near-miss title
    assert not confirms(PRINTED.replace("2020", "2018"), [SCIPY])
    assert not confirms(PRINTED.replace("Gommers", "Gomez"), [SCIPY])
    # "et al." after the first author: the first family name is enough
    assert confirms("P. Virtanen et al. SciPy 1.0: Fundamental algorithms for scientific computing in "
                    "Python. Nature Methods, 2020.", [SCIPY])


def test_not_found_becomes_verified_when_the_whole_string_finds_a_confirmed_paper() -> None:
    v = Verification("[9]", Status.NOT_FOUND, "No paper with this title")
    assert reconcile(v, PRINTED, [SCIPY]).status is Status.VERIFIED
    assert reconcile(v, PRINTED.replace("2020", "2015"), [SCIPY]).status is Status.NOT_FOUND
    other = PaperRecord(source="crossref", title="Matplotlib: A 2D graphics environment",
                        authors=["J. D. Hunter"], year=2007, doi="10.1109/mcse.2007.55")
    doi = Verification("[9]", Status.DOI_MISMATCH, "DOI of another paper", match=other)
    assert reconcile(doi, PRINTED, [SCIPY]).status is Status.DOI_MISMATCH  # the print's own DOI
    # the identifier's paper is the one printed: the title read (not the print) was wrong
    read_wrong = Verification("[9]", Status.DOI_MISMATCH, "DOI of another paper", match=SCIPY)
    assert reconcile(read_wrong, PRINTED, []).status is Status.VERIFIED


async def test_the_whole_printed_reference_is_asked_of_crossref_and_cached(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    fake = scholarly_server
    settings = fake.settings(cache_dir=str(tmp_path))
    sources = Sources.from_settings(settings, lambda _m: None, rates=fast_rates())
    cache = VerificationCache(tmp_path, lambda _m: None)
    printed = {
        # the fields read gave no title (UNVERIFIED, no title): the whole string finds it
        "[4]": "H. S. Frank, The structure of ordinary water, Science, vol. 169, pp. 635–641, 1970.",
        "[18]": "J. Doe and K. Fairfield, Recursive neural symbolic gradient networks for protein "
        "folding dynamics, Nature Machine Intelligence, vol. 3, pp. 112–124, 2021.",
    }
    verdicts = {
        "[4]": Verification("[4]", Status.UNVERIFIED, "no title", unverified=Unverified.NO_TITLE),
        "[18]": Verification("[18]", Status.NOT_FOUND, "No paper with this title"),
    }
    try:
        out = await confirm_printed(printed, verdicts, sources, cache, settings)
        asked = [r for r in fake.requests("crossref") if "query.bibliographic" in r["query"]]
        assert sorted(r["query"]["query.bibliographic"] for r in asked) == sorted(printed.values())
        assert out["[4]"].status is Status.VERIFIED and out["[4]"].match is not None
        assert out["[4]"].match.title == "The Structure of Ordinary Water"
        assert out["[4]"].method == Method.CROSSREF_REFERENCE and AS_READ in out["[4]"].summary
        assert out["[18]"].status is Status.NOT_FOUND
        fake.clear_log()
        again = await confirm_printed(printed, verdicts, sources, cache, settings)
        assert fake.requests("crossref") == []  # both answers cached (the miss for a day)
        assert again["[4]"].status is Status.VERIFIED
    finally:
        await sources.aclose()
        cache.close()


def test_an_author_the_print_adds_is_the_authors_and_a_venues_year_is_not_the_references() -> None:
    added = PRINTED.replace("M. Haber-land, et al.,", "M. Haber-land, K. Szepesvri,")
    extra = _d("authors", "authors", "authors: Szepesvri is not an author of this paper in Crossref")
    assert reconcile(_partial(extra), added, []).discrepancies[0].severity is Severity.WARNING
    # a parser that read a title word into the authors: the print's author block is the paper's
    slip = _d("authors", "authors", "authors: Python is not an author of this paper in Crossref")
    assert reconcile(_partial(slip), PRINTED, []).status is Status.VERIFIED
    apa = ("Virtanen, P., Gommers, R., and Oliphant, T. E. (2027). SciPy 1.0: Fundamental algorithms for "
           "scientific computing in Python. In Proceedings of the 2020 Conference on Methods.")
    assert not confirms(apa, [SCIPY])  # printed year 2027; 2020 is the conference's


def test_a_source_that_cuts_a_title_short_or_files_it_as_a_notice() -> None:
    cut = PaperRecord(source="s2", title="SciPy 1.0: Fundamental Algorithms for", authors=SCIPY.authors,
                      year=2020, doi=SCIPY.doi)
    assert not confirms(PRINTED, [cut])  # a title the print goes on from is not its title...
    doi = Verification("[9]", Status.DOI_MISMATCH, "DOI of another paper", match=cut)
    assert reconcile(doi, PRINTED, []).status is Status.VERIFIED  # ...but the printed DOI's paper
    notice = PaperRecord(source="crossref", title="ERRATUM: " + SCIPY.title, authors=SCIPY.authors, year=2020)
    assert confirms(PRINTED, [notice])


async def test_the_snapshots_title_index_answers_a_printed_reference_without_a_request(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    from citelens.snapshot.store import Snapshot, Writer

    writer = Writer(str(tmp_path / "snap.db"))
    writer.add(SCIPY)
    writer.close({"date": "2025-10-01", "sources": "Crossref"})
    snapshot = Snapshot(str(tmp_path / "snap.db"))
    fake = scholarly_server
    settings = fake.settings(cache_dir=str(tmp_path), offline=True)
    sources = Sources.from_settings(settings, lambda _m: None, rates=fast_rates())
    cache = VerificationCache(tmp_path, lambda _m: None)
    none = Verification("[9]", Status.UNVERIFIED, "no title", unverified=Unverified.NO_TITLE)
    try:
        out = await confirm_printed({"[9]": PRINTED}, {"[9]": none}, sources, cache, settings, snapshot)
        essential = {"[9]": PRINTED.replace("Fundamental", "Essential")}
        other = await confirm_printed(essential, {"[9]": none}, sources, cache, settings, snapshot)
    finally:
        await sources.aclose()
        cache.close()
        snapshot.close()
    assert out["[9]"].status is Status.VERIFIED and out["[9]"].method == Method.SNAPSHOT_REFERENCE
    assert other["[9]"].status is Status.UNVERIFIED  # offline, and the snapshot has no such title
    assert fake.requests() == []
