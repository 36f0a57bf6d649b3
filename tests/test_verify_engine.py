"""The verification engine against the fake scholarly APIs: what a researcher would see."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from citelens.checks.verification import verification_findings
from citelens.core.findings import Severity
from citelens.core.model import Citation, EntryView, Span
from citelens.core.settings import Settings
from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources.transport import Sources
from citelens.verify.identity import content_hash
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Status, Verification
from tests.fakes.scholarly import ScholarlyFake, running

VASWANI = r"""@inproceedings{vaswani2017,
  title = {Attention is All you Need},
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki and Uszkoreit, Jakob and
            Jones, Llion and Gomez, Aidan N. and Kaiser, Lukasz and Polosukhin, Illia},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2017},
  eprint = {1706.03762},
}
"""
SCIPY = r"""@article{scipy2020,
  title = {{SciPy} 1.0: Fundamental Algorithms for Scientific Computing in {Python}},
  author = {Virtanen, Pauli and others},
  journal = {Nature Methods},
  year = {2020},
  doi = {10.1038/s41592-019-0686-2},
}
"""
MATPLOTLIB_TITLE_ONLY = r"""@article{hunter2007,
  title = {Matplotlib: A {2D} Graphics Environment},
  author = {Hunter, J. D.},
  journal = {Computing in Science \& Engineering},
  year = {2007},
}
"""
FABRICATED = r"""@article{llama2021,
  title = {Hyperbolic Entanglement of Quantum Llamas in Gravitational Pastures},
  author = {Doe, Jane and Roe, Richard},
  journal = {Nature},
  year = {2021},
}
"""


@pytest.fixture
def fake() -> Iterator[ScholarlyFake]:
    with running() as server:
        yield server


def views_of(text: str, path: str = "refs.bib") -> list[EntryView]:
    return [entry_view(e) for e in parse_bib(text, path).entries]


def settings_for(fake: ScholarlyFake, tmp_path: Path, **kw: object) -> Settings:
    return fake.settings(cache_dir=str(tmp_path / "cache"), **kw)


async def check(text: str, settings: Settings, **kw: object) -> dict[str, Verification]:
    return await verify_entries(views_of(text), settings, **kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- verdicts


async def test_correct_entries_are_verified_with_one_s2_batch(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    res = await check(VASWANI + SCIPY, settings_for(fake, tmp_path))
    assert res["vaswani2017"].status is Status.VERIFIED, res["vaswani2017"].summary
    assert res["scipy2020"].status is Status.VERIFIED, res["scipy2020"].summary
    assert res["scipy2020"].match is not None
    assert res["scipy2020"].match.doi == "10.1038/s41592-019-0686-2"
    assert res["vaswani2017"].method == "s2_batch"
    # both entries' ids went to Semantic Scholar in a single batch request; S2 says nothing
    # of retractions, so one batch request by DOI asked Crossref (SciPy's DOI) and one
    # OpenAlex (the Transformer's arXiv DOI, which Crossref does not hold)
    assert fake.counts()["s2"] == 1
    assert sorted((r["source"], r["query"].get("filter")) for r in fake.requests()
                  if r["source"] != "s2") == [("crossref", "doi:10.1038/s41592-019-0686-2"),
                                               ("openalex", "doi:10.48550/arxiv.1706.03762")]


async def test_swapped_doi_is_a_doi_mismatch_naming_the_other_paper(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    swapped = SCIPY.replace("10.1038/s41592-019-0686-2", "10.1109/mcse.2007.55")
    v = (await check(swapped, settings_for(fake, tmp_path)))["scipy2020"]
    assert v.status is Status.DOI_MISMATCH
    assert "10.1109/mcse.2007.55" in v.summary
    assert "Matplotlib" in v.summary
    # the real SciPy paper is offered as the replacement
    assert any(c.doi == "10.1038/s41592-019-0686-2" for c in v.candidates)


async def test_fabricated_title_is_not_found_after_every_source_answered(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    v = (await check(FABRICATED, settings_for(fake, tmp_path)))["llama2021"]
    assert v.status is Status.NOT_FOUND, v.summary
    asked = {a.source for a in v.audit}
    assert {"s2", "crossref", "openalex"} <= asked
    assert all(a.outcome == "not_found" for a in v.audit)
    assert not v.informational


async def test_fabricated_doi_resolves_nowhere(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    text = FABRICATED.replace("year = {2021},", "year = {2021}, doi = {10.9999/llama.2021.17},")
    v = (await check(text, settings_for(fake, tmp_path)))["llama2021"]
    assert v.status is Status.NOT_FOUND
    assert "10.9999/llama.2021.17 resolves nowhere" in v.summary
    # doi.org, which resolves every registration agency's DOIs, says it does not exist: more
    # evidence, never a reason for doubt (issue 41 #1: it moved the entry to "not found")
    assert "fabricated" not in v.summary and "doi" in v.pointers and v.refuted == ("doi",)
    assert v.klass == "fabricated" and "its DOI does not exist" in v.class_text
    doi_sources = {a.source for a in v.audit if a.method in
                   ("s2_batch", "crossref_doi", "crossref_dois", "doi_csl", "openalex_dois")}
    assert doi_sources == {"s2", "crossref", "doi", "openalex"}


async def test_year_off_by_one_is_partial_with_the_discrepancy(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    text = SCIPY.replace("year = {2020}", "year = {2019}")
    v = (await check(text, settings_for(fake, tmp_path)))["scipy2020"]
    assert v.status is Status.PARTIAL
    years = [d for d in v.discrepancies if d.field == "year"]
    assert years and years[0].message.startswith("year: 2019 in the entry, 2020 in ")
    assert "year: 2019 in the entry, 2020 in" in v.summary


async def test_latex_accented_authors_still_verify(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    fake.add_paper({
        "title": "Über die Elektrodynamik bewegter Körper in Gödel-Räumen",
        "authors": ["José Pérez-García", "Zoë Müller", "Łukasz Wąsik"],
        "year": 2012, "venue": "Annalen der Physik", "doi": "10.5555/accents.2012"})
    text = r"""@article{perez2012,
  title = {{\"U}ber die Elektrodynamik bewegter K{\"o}rper in G{\"o}del-R{\"a}umen},
  author = {P{\'e}rez-Garc{\'\i}a, Jos{\'e} and M{\"u}ller, Zo{\"e} and W{\k{a}}sik, {\L}ukasz},
  journal = {Annalen der Physik}, year = 2012, doi = {10.5555/ACCENTS.2012}}"""
    v = (await check(text, settings_for(fake, tmp_path)))["perez2012"]
    assert v.status is Status.VERIFIED, v.summary
    assert not v.discrepancies


async def test_title_only_entry_is_verified_by_title_search(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    v = (await check(MATPLOTLIB_TITLE_ONLY, settings_for(fake, tmp_path)))["hunter2007"]
    assert v.status is Status.VERIFIED, v.summary
    assert v.match is not None and v.match.doi == "10.1109/mcse.2007.55"
    assert v.method.endswith(("title_match", "search", "title_search", "title"))


async def test_entry_without_title_is_unverified_with_the_reason(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    text = "@article{notitle, author = {Doe, J.}, doi = {10.1038/s41592-019-0686-2}, year=2020}"
    v = (await check(text, settings_for(fake, tmp_path)))["notitle"]
    assert v.status is Status.UNVERIFIED
    assert "no title" in v.summary
    assert fake.count() == 0


async def test_book_missing_from_the_indexes_is_information_only(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    text = r"""@book{tome, title = {An Unindexed Monograph on Medieval Beekeeping Ledgers},
      author = {Smith, Anne}, publisher = {Small Press}, year = 1998}"""
    s = settings_for(fake, tmp_path)
    views = views_of(text)
    res = await verify_entries(views, s)
    v = res["tome"]
    assert v.status is Status.NOT_FOUND and v.informational
    bib = parse_bib(text, "refs.bib")
    found = verification_findings([bib], {}, res, s)
    assert [f.severity for f in found if f.code == "NOT_FOUND"] == [Severity.INFORMATION]


# ---------------------------------------------------------------------- failures


async def test_s2_down_other_tiers_still_verify(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    fake.set_mode("s2", "down")
    logs: list[str] = []
    res = await check(SCIPY + MATPLOTLIB_TITLE_ONLY, settings_for(fake, tmp_path),
                      log=logs.append)
    for key in ("scipy2020", "hunter2007"):
        assert res[key].status is Status.VERIFIED, res[key].summary
        assert res[key].match is not None and res[key].match.source != "s2"
    # the DOI went to S2 first; its failure is in the audit trail, not in the verdict
    assert any(a.source == "s2" and a.outcome in ("failed", "unavailable")
               for a in res["scipy2020"].audit)
    assert any("Semantic Scholar unavailable" in line for line in logs)


async def test_everything_down_is_unverified_never_not_found(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    for src in ("s2", "crossref", "openalex", "arxiv", "doi", "ncbi"):
        fake.set_mode(src, "down")
    res = await check(SCIPY + FABRICATED + MATPLOTLIB_TITLE_ONLY,
                      settings_for(fake, tmp_path))
    assert {v.status for v in res.values()} == {Status.UNVERIFIED}
    assert "could not ask" in res["llama2021"].summary


async def test_5xx_on_a_tier_not_found_needs_is_unverified(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    fake.set_mode("crossref", "5xx")
    v = (await check(FABRICATED, settings_for(fake, tmp_path)))["llama2021"]
    assert v.status is Status.UNVERIFIED  # S2 said no, Crossref's search could not answer
    assert "could not ask Crossref" in v.summary


async def test_5xx_from_openalex_leaves_not_found_to_the_sources_that_suffice(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    """OpenAlex's answers are evidence only (its budget may be spent): S2 and Crossref said
    no, so the entry is not found, and the summary names those two."""
    fake.set_mode("openalex", "5xx")
    v = (await check(FABRICATED, settings_for(fake, tmp_path)))["llama2021"]
    assert v.status is Status.NOT_FOUND
    assert v.summary.startswith("Not found in Semantic Scholar, Crossref:") and "OpenAlex" not in v.summary


async def test_429_twice_then_success_is_verified_after_backoff(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    fake.set_mode("s2", "429", count=2)
    v = (await check(SCIPY, settings_for(fake, tmp_path,
                                         retry_backoff_s=0.01)))["scipy2020"]
    assert v.status is Status.VERIFIED
    assert v.match is not None and v.match.source == "s2"
    assert fake.count("s2") == 3


async def test_offline_uses_the_cache_only(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    s = settings_for(fake, tmp_path)
    await check(SCIPY, s)
    fake.clear_log()
    res = await check(SCIPY + FABRICATED, Settings(**{**_fields(s), "offline": True}))
    assert res["scipy2020"].status is Status.VERIFIED
    assert res["llama2021"].status is Status.UNVERIFIED
    assert "offline" in res["llama2021"].summary
    assert fake.count() == 0


def _fields(s: Settings) -> dict[str, object]:
    return {f: getattr(s, f) for f in s.__slots__}  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- cache


async def test_second_run_is_served_from_the_cache_with_zero_requests(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    s = settings_for(fake, tmp_path)
    text = VASWANI + SCIPY + MATPLOTLIB_TITLE_ONLY + FABRICATED
    first = await check(text, s)
    assert fake.count() > 0
    fake.clear_log()
    second = await check(text, s)
    assert fake.count() == 0
    assert {k: v.status for k, v in second.items()} == {k: v.status for k, v in first.items()}
    assert all(a.cached for v in second.values() for a in v.audit)


async def test_corrupted_cache_dir_works_without_cache_and_logs_once(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / "cache.db").write_bytes(b"this is not an sqlite database" * 100)
    logs: list[str] = []
    res = await check(SCIPY + VASWANI, settings_for(fake, tmp_path),
                      log=logs.append)
    assert res["scipy2020"].status is Status.VERIFIED
    cache_lines = [line for line in logs if "cache" in line]
    assert len(cache_lines) == 1 and "without a cache" in cache_lines[0]


# ---------------------------------------------------------------------- findings and duplicates


async def test_findings_sit_on_the_wrong_field_and_at_every_citation(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    s = settings_for(fake, tmp_path)
    text = (SCIPY.replace("10.1038/s41592-019-0686-2", "10.1109/mcse.2007.55")
            + VASWANI.replace("year = {2017}", "year = {2016}"))
    bib = parse_bib(text, "refs.bib")
    res = await verify_entries([entry_view(e) for e in bib.entries], s)
    cites = {"paper.tex": [Citation("scipy2020", Span(10, 19), "cite", Span(4, 20)),
                           Citation("vaswani2017", Span(40, 51), "cite", Span(34, 52)),
                           Citation("scipy2020", Span(70, 79), "cite", Span(64, 80))]}
    found = verification_findings([bib], cites, res, s)
    doi = [f for f in found if f.code == "DOI_MISMATCH" and f.path == "refs.bib"]
    assert len(doi) == 1 and doi[0].severity is Severity.ERROR
    assert text[doi[0].span.start:doi[0].span.end].strip("{}") == "10.1109/mcse.2007.55"
    at_cites = [f for f in found if f.path == "paper.tex"]
    assert sorted((f.code, f.span.start) for f in at_cites) == [
        ("DOI_MISMATCH", 10), ("DOI_MISMATCH", 70), ("METADATA_MISMATCH", 40)]
    year = [f for f in found if f.code == "METADATA_MISMATCH" and f.path == "refs.bib"]
    assert year and text[year[0].span.start:year[0].span.end].strip("{}") == "2016"
    assert doi[0].data["key"] == "scipy2020" and doi[0].data["match"]


async def test_duplicates_by_doi_and_title_but_not_part_one_and_two(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    s = settings_for(fake, tmp_path)
    text = SCIPY + SCIPY.replace("scipy2020", "virtanen_scipy") + VASWANI + VASWANI.replace(
        "vaswani2017", "transformer").replace("eprint = {1706.03762},", "") + r"""
@article{partI, title = {Studies in astronomical time series analysis. I. Modeling random
  processes in the time domain}, author = {Scargle, J. D.}, journal = {ApJS}, year = 1981}
@article{partII, title = {Studies in astronomical time series analysis. II. Modeling random
  processes in the time domain}, author = {Scargle, J. D.}, journal = {ApJ}, year = 1981}
"""
    bib = parse_bib(text, "refs.bib")
    res = await verify_entries([entry_view(e) for e in bib.entries], s)
    found = [f for f in verification_findings([bib], {}, res, s) if f.code == "DUPLICATE_ENTRY"]
    pairs = {frozenset((f.key or "", str(f.data["duplicate_of"]))) for f in found}
    assert frozenset(("scipy2020", "virtanen_scipy")) in pairs
    assert frozenset(("vaswani2017", "transformer")) in pairs
    assert frozenset(("partI", "partII")) not in pairs
    assert all(f.related and f.severity is Severity.WARNING for f in found)


# ---------------------------------------------------------------------- contract


async def test_results_round_trip_through_json(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    res = await check(SCIPY.replace("year = {2020}", "year = {2019}"),
                      settings_for(fake, tmp_path))
    v = res["scipy2020"]
    again = Verification.from_json(v.to_json())
    assert again.to_json() == v.to_json()
    assert again.discrepancies[0].message == v.discrepancies[0].message


async def test_api_key_never_reaches_results_or_cache(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    secret = "s2-secret-key-123456"
    s = settings_for(fake, tmp_path, s2_api_key=secret)
    fake.set_mode("s2", "5xx")
    res = await check(SCIPY + FABRICATED, s)
    assert secret not in str([v.to_json() for v in res.values()])
    for f in (tmp_path / "cache").rglob("*"):
        if f.is_file():
            assert secret.encode() not in f.read_bytes()


async def test_cancellation_propagates(fake: ScholarlyFake, tmp_path: Path) -> None:
    fake.set_mode("s2", "stall", stall_s=5)
    s = settings_for(fake, tmp_path, request_timeout_s=10.0)
    sources = Sources.from_settings(s)
    task = asyncio.create_task(verify_entries(views_of(SCIPY), s, sources=sources))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await sources.aclose()


def test_content_hash_follows_the_fields_not_the_key() -> None:
    a = parse_bib(SCIPY, "a.bib").entries[0]
    b = parse_bib(SCIPY.replace("scipy2020", "other"), "a.bib").entries[0]
    c = parse_bib(SCIPY.replace("2020", "2021"), "a.bib").entries[0]
    assert content_hash(a) == content_hash(b) != content_hash(c)
    assert content_hash(entry_view(a)) != content_hash(entry_view(c))


async def test_progress_reports_every_entry(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    await check(SCIPY + VASWANI + FABRICATED, settings_for(fake, tmp_path),
                progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (3, 3) and [d for d, _ in seen] == [1, 2, 3]


# ---------------------------------------------------------------------- big offline runs

OFFLINE_MIX = r"""@article{pm, title = {Tumour suppressor genes in breast cancer patients},
  author = {Roe, R.}, journal = {Lancet}, year = {2001}, pmid = {12345678}}
@misc{zenodo, title = {Some data set}, author = {Poe, P.}, year = {2020},
  doi = {10.5281/zenodo.1234567}}
@misc{page, title = {A web page}, howpublished = {\url{https://example.org}}}
@book{book, title = {A Book Nobody Indexed}, author = {Doe, J.}, year = {1999}}
@article{notitle, author = {Doe, J.}, year = {1999}, doi = {10.1000/xyz}}
@article{ax, title = {An arXiv-only paper}, author = {Zoe, Z.}, eprint = {2101.00001}}
@article{s2, title = {A paper by its S2 id}, s2id = {649def34f8be52c8b66281af98ae884c09aef38b}}
"""


async def test_a_big_offline_run_gives_every_entry_the_verdict_of_a_small_one(
    fake: ScholarlyFake, tmp_path: Path
) -> None:
    """From 1,000 entries an offline run decides the entries the cache cannot answer without
    the request plan (68,000 entries in well under a second instead of several): their
    verdicts must be exactly those the plan gives, and cached answers must still be used."""
    online = settings_for(fake, tmp_path)
    await check(VASWANI + SCIPY, online)  # cached now
    offline = settings_for(fake, tmp_path, offline=True)
    text = VASWANI + SCIPY + FABRICATED + MATPLOTLIB_TITLE_ONLY + OFFLINE_MIX
    small = await check(text, offline)
    padding = "".join(
        f"@article{{pad{i}, title = {{Padding paper number {i}}}, author = {{Doe, J.}}, "
        f"year = {{2000}}, doi = {{10.1103/PhysRevE.{i}}}}}\n"
        for i in range(1000)
    )
    requests = sum(fake.counts().values())
    big = await check(text + padding, offline)
    assert sum(fake.counts().values()) == requests  # offline: nobody asked

    def same(v: Verification) -> dict[str, object]:
        return {k: x for k, x in v.to_json().items() if k != "checked_at"}

    assert len(small) == 11
    for key, v in small.items():
        assert same(big[key]) == same(v), key
    assert small["vaswani2017"].status is Status.VERIFIED  # from the cache, in both runs
    assert small["scipy2020"].status is Status.VERIFIED
    assert small["llama2021"].summary == "Not verified: offline, and no cached answer for this entry"
    pad = big["pad7"]
    assert pad.status is Status.UNVERIFIED and pad.summary == small["llama2021"].summary
    assert sorted({(a.source, a.detail) for a in pad.audit}) == [
        (source, "offline: not in the cache") for source in ("crossref", "doi", "openalex", "s2")
    ]
