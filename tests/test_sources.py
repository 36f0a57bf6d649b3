"""Each scholarly source client against the fake server and the recorded fixtures."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citelens.core.identifiers import normalize_arxiv, normalize_doi
from citelens.sources import arxiv, crossref, doi, ncbi, openalex, s2
from citelens.sources.records import Outcome
from citelens.sources.transport import Sources
from tests.fakes.scholarly import ScholarlyFake, fast_rates
from tests.fakes.scholarly import scholarly_server as scholarly_server  # fixture
from tests.harness import FIXTURES

APIS = FIXTURES / "apis"

PNAS = "10.1073/pnas.1414271111"
MIND = {"title": "Computing Machinery and Intelligence", "authors": ["A. M. Turing"],
        "year": 1950, "venue": "Mind", "doi": "10.1093/MIND/LIX.236.433"}


@pytest.fixture
async def src(scholarly_server: ScholarlyFake) -> AsyncIterator[Sources]:
    async with Sources.from_settings(scholarly_server.settings(), rates=fast_rates()) as s:
        yield s


# ------------------------------------------------------------------ ids


@pytest.mark.parametrize(("raw", "want"), [
    ("https://doi.org/10.1093/MIND/LIX.236.433", "10.1093/mind/lix.236.433"),
    ("doi:10.1000/ABC.", "10.1000/abc"),
    ("10.1000%2Fx", "10.1000/x"),
    ("not a doi", None),
])
def test_normalize_doi(raw: str, want: str | None) -> None:
    assert normalize_doi(raw) == want


@pytest.mark.parametrize(("raw", "want"), [
    ("1706.03762v5", "1706.03762"),
    ("arXiv:1706.03762", "1706.03762"),
    ("https://arxiv.org/abs/astro-ph/0601001v1", "astro-ph/0601001"),
    ("10.48550/arXiv.2312.07559", "2312.07559"),
    ("abc", None),
])
def test_normalize_arxiv(raw: str, want: str | None) -> None:
    assert normalize_arxiv(raw) == want


# ------------------------------------------------------------------ Semantic Scholar


async def test_s2_by_doi_arxiv_pmid_corpus_and_hex(src: Sources) -> None:
    for pid in (f"DOI:{PNAS.upper()}", "PMID:25349395", "CorpusId:10888161",
                "db3720c812a462ef955d5654b65ca9189d4b8372"):
        lookup = await s2.get_paper(src.s2, pid)
        assert lookup.outcome is Outcome.FOUND, pid
        assert lookup.record is not None and lookup.record.doi == PNAS
    att = (await s2.get_paper(src.s2, "ARXIV:1706.03762")).record
    assert att is not None and att.title == "Attention is All you Need"
    assert att.arxiv_id == "1706.03762" and "NeurIPS" in att.venue_alternates


async def test_s2_mixed_case_doi_is_stored_lower_case(scholarly_server: ScholarlyFake,
                                                      src: Sources) -> None:
    scholarly_server.add_paper(MIND)
    lookup = await s2.get_paper(src.s2, "DOI:10.1093/mind/lix.236.433")
    assert lookup.outcome is Outcome.FOUND
    assert lookup.record is not None and lookup.record.doi == "10.1093/mind/lix.236.433"


async def test_s2_not_found_is_not_found(src: Sources) -> None:
    lookup = await s2.get_paper(src.s2, "DOI:10.1101/2024.04.01.587366")
    assert lookup.outcome is Outcome.NOT_FOUND
    assert "not found" in lookup.detail


async def test_s2_batch_with_nulls_and_abstract_flag(scholarly_server: ScholarlyFake,
                                                     src: Sources) -> None:
    ids = ["ARXIV:1706.03762", "DOI:10.9999/nothing", f"DOI:{PNAS}"]
    out = await s2.get_batch(src.s2, ids, abstract=True)
    assert [out[i].outcome for i in ids] == [Outcome.FOUND, Outcome.NOT_FOUND, Outcome.FOUND]
    rec = out["ARXIV:1706.03762"].record
    assert rec is not None and rec.abstract and "Transformer" in rec.abstract
    req = scholarly_server.requests("s2")
    assert len(req) == 1 and req[0]["method"] == "POST" and "abstract" in req[0]["query"]["fields"]
    assert json.loads(req[0]["body"]) == {"ids": ids}


async def test_s2_batch_is_chunked_at_500(scholarly_server: ScholarlyFake, src: Sources) -> None:
    ids = [f"DOI:10.9999/n{i}" for i in range(501)]
    out = await s2.get_batch(src.s2, ids)
    assert len(out) == 501 and {x.outcome for x in out.values()} == {Outcome.NOT_FOUND}
    assert scholarly_server.count("s2") == 2


async def test_s2_title_match_and_search(src: Sources) -> None:
    hit = await s2.search_match(src.s2, "Attention is all you need")
    assert hit.outcome is Outcome.FOUND and hit.record is not None
    assert hit.record.s2_paper_id == "204e3073870fae3d05bcbc2f6a8e263d9b72e776"
    miss = await s2.search_match(src.s2, "Quantum gravity of medieval cheese markets")
    assert miss.outcome is Outcome.NOT_FOUND and "Title match not found" in miss.detail
    none = await s2.search(src.s2, "xqzv wplk unfindable")
    assert none.outcome is Outcome.NOT_FOUND
    some = await s2.search(src.s2, "astropy community python package astronomy", limit=3)
    assert some.outcome is Outcome.FOUND and 1 <= len(some.records) <= 3


async def test_s2_arxiv_only_paper_is_preprint(src: Sources) -> None:
    rec = (await s2.get_paper(src.s2, "ARXIV:2312.07559")).record
    assert rec is not None and rec.is_preprint and rec.doi == "10.48550/arxiv.2312.07559"


# ------------------------------------------------------------------ Crossref


async def test_crossref_work_found_and_not_found(src: Sources) -> None:
    rec = (await crossref.get_work(src.crossref, "https://doi.org/10.1073/PNAS.1414271111")).record
    assert rec is not None and rec.doi == PNAS and rec.year == 2014
    assert rec.venue == "Proceedings of the National Academy of Sciences"
    assert rec.authors[0] == "Eleftherios A. Makris"
    assert rec.abstract and "<" not in rec.abstract
    miss = await crossref.get_work(src.crossref, "10.1371/notarealdoi")
    assert miss.outcome is Outcome.NOT_FOUND
    datacite = await crossref.get_work(src.crossref, "10.48550/arXiv.2312.07559")
    assert datacite.outcome is Outcome.NOT_FOUND


async def test_crossref_search(scholarly_server: ScholarlyFake, src: Sources) -> None:
    hit = await crossref.search(src.crossref, "The Structure of Ordinary Water", author="Frank")
    assert hit.outcome is Outcome.FOUND and hit.record is not None
    assert hit.record.doi == "10.1126/science.169.3946.635"
    assert scholarly_server.requests("crossref")[0]["query"]["query.author"] == "Frank"
    assert (await crossref.search(src.crossref, "xqzv wplk")).outcome is Outcome.NOT_FOUND


async def test_crossref_sends_mailto_when_set(scholarly_server: ScholarlyFake) -> None:
    settings = scholarly_server.settings(mailto="me@example.org")
    async with Sources.from_settings(settings, rates=fast_rates()) as s:
        await crossref.get_work(s.crossref, PNAS)
    assert scholarly_server.requests("crossref")[0]["query"]["mailto"] == "me@example.org"


# ------------------------------------------------------------------ doi.org


async def test_doi_csl_crossref_and_datacite(src: Sources) -> None:
    water = (await doi.resolve_csl(src.doi, "10.1126/SCIENCE.169.3946.635")).record
    assert water is not None and water.title == "The Structure of Ordinary Water"
    assert water.venue == "Science" and water.year == 1970 and water.source == "doi"
    paperqa = (await doi.resolve_csl(src.doi, "10.48550/arXiv.2312.07559")).record
    assert paperqa is not None and paperqa.is_preprint and paperqa.arxiv_id == "2312.07559"
    missing = await doi.resolve_csl(src.doi, "10.1126/foo")
    assert missing.outcome is Outcome.NOT_FOUND


# ------------------------------------------------------------------ OpenAlex


async def test_openalex_by_doi_batch_and_title(scholarly_server: ScholarlyFake,
                                               src: Sources) -> None:
    rec = (await openalex.get_by_doi(src.openalex, PNAS.upper())).record
    assert rec is not None and rec.doi == PNAS and rec.pmid == "25349395"
    assert rec.abstract and rec.abstract.startswith("Significance")
    miss = await openalex.get_by_doi(src.openalex, "10.1046/j.1365-2699.2003.00795")
    assert miss.outcome is Outcome.NOT_FOUND
    dois = [PNAS, "10.9999/none", "10.1126/science.169.3946.635"]
    out = await openalex.get_by_dois(src.openalex, dois)
    assert [out[d].outcome for d in dois] == [Outcome.FOUND, Outcome.NOT_FOUND, Outcome.FOUND]
    hit = await openalex.search_title(src.openalex, "Attention is all you need")
    assert hit.record is not None and hit.record.arxiv_id == "1706.03762"
    assert (await openalex.search_title(src.openalex, "xqzv wplk")).outcome is Outcome.NOT_FOUND
    assert scholarly_server.count("openalex") == 5


async def test_openalex_sends_api_key_param(scholarly_server: ScholarlyFake) -> None:
    settings = scholarly_server.settings(openalex_api_key="k-1", mailto="me@example.org")
    async with Sources.from_settings(settings, rates=fast_rates()) as s:
        await openalex.get_by_doi(s.openalex, PNAS)
    q = scholarly_server.requests("openalex")[0]["query"]
    assert q["api_key"] == "k-1" and q["mailto"] == "me@example.org"


# ------------------------------------------------------------------ arXiv


async def test_arxiv_many_ids_in_one_request(scholarly_server: ScholarlyFake, src: Sources) -> None:
    ids = ["1706.03762v5", "arXiv:0000.0000", "astro-ph/0312483", "abc"]
    out = await arxiv.get_by_ids(src.arxiv, ids)
    assert [out[i].outcome for i in ids] == [Outcome.FOUND, Outcome.NOT_FOUND, Outcome.FOUND,
                                             Outcome.NOT_FOUND]
    old = out["astro-ph/0312483"].record
    assert old is not None and old.doi == "10.1086/382245" and old.is_preprint
    assert scholarly_server.count("arxiv") == 1  # "abc" was never sent


async def test_arxiv_legacy_feed_and_malformed_id_from_server(
    scholarly_server: ScholarlyFake, src: Sources
) -> None:
    scholarly_server.arxiv_legacy = True
    rec = (await arxiv.get_by_ids(src.arxiv, ["1706.03762"]))["1706.03762"].record
    assert rec is not None and rec.title == "Attention is All you Need"
    hit = await arxiv.search_title(src.arxiv, "Attention is all you need")
    assert hit.record is not None and hit.record.arxiv_id == "1706.03762"
    assert (await arxiv.search_title(src.arxiv, "xqzv wplk")).outcome is Outcome.NOT_FOUND


def test_arxiv_parses_recorded_feeds() -> None:
    legacy = arxiv.parse_feed(
        (APIS / "arxiv/legacy2016_query_id_list_1111.2011v2.xml").read_bytes())
    assert legacy is not None and len(legacy.records) == 1
    r = legacy.records[0]
    assert r.arxiv_id == "1111.2011" and r.doi == "10.1103/physrevb.85.115117"
    assert r.title.startswith("Quantum Criticality for Extended Nodes on a Bethe Lattice in the")
    assert r.authors[1] == "Adrian Del Maestro" and r.year == 2011
    old = arxiv.parse_feed((APIS / "arxiv/query_id_list_astro-ph_0601001_old_style_id.xml")
                           .read_bytes())
    assert old is not None and old.records[0].arxiv_id == "astro-ph/0601001"
    err = arxiv.parse_feed((APIS / "arxiv/query_id_list_abc_400_error_feed.xml").read_bytes())
    assert err is not None and err.records == [] and err.bad_ids == ["abc"]
    empty = arxiv.parse_feed((APIS / "arxiv/query_id_list_0000.0000_no_results.xml").read_bytes())
    assert empty is not None and empty.records == []
    assert arxiv.parse_feed(b"<html><body>oops</body></html>") is None


# ------------------------------------------------------------------ PubMed


async def test_pubmed_by_pmid_and_title(scholarly_server: ScholarlyFake, src: Sources) -> None:
    out = await ncbi.get_pubmed(src.ncbi, ["23657305", "37909814"])
    assert out["37909814"].outcome is Outcome.NOT_FOUND
    rec = out["23657305"].record
    assert rec is not None and rec.source == "pubmed" and rec.year == 2013
    assert rec.abstract and rec.abstract.startswith("CONTEXT: ") and "\nMETHODS: " in rec.abstract
    hit = await ncbi.search_title(src.ncbi, "The human phenotype ontology")
    assert hit.record is not None and hit.record.pmid == "20412080"
    assert (await ncbi.search_title(src.ncbi, "xqzv wplk")).outcome is Outcome.NOT_FOUND
    assert [r["path"] for r in scholarly_server.requests("ncbi")] == [
        "/efetch.fcgi", "/esearch.fcgi", "/efetch.fcgi", "/esearch.fcgi"]


def test_pubmed_error_inside_200_and_recorded_records() -> None:
    records, why = ncbi.parse_efetch((APIS / "ncbi/esummary_error_no_id.xml").read_bytes())
    assert records is None and "Neither query_key nor id specified" in why
    records, _ = ncbi.parse_efetch((APIS / "ncbi/efetch_pubmed_37909814_empty_result.xml")
                                   .read_bytes())
    assert records == []
    mathml = APIS / "ncbi/efetch_pubmed_30108519_html_mathml_in_abstract.xml"
    records, _ = ncbi.parse_efetch(mathml.read_bytes())
    assert records and records[0].abstract and records[0].pmid == "30108519"


async def test_pubmed_error_in_200_is_failed(scholarly_server: ScholarlyFake,
                                             src: Sources) -> None:
    scholarly_server.set_mode("ncbi", "malformed", count=1)
    out = await ncbi.get_pubmed(src.ncbi, ["23657305"])
    assert out["23657305"].outcome is Outcome.FAILED


# ------------------------------------------------------------------ recorded bodies


def test_record_mapping_of_recorded_bodies() -> None:
    mind = json.loads((APIS / "s2/paper_DOI_10.48550_arxiv.2312.07559.json").read_text())
    rec = s2.to_record(mind)
    assert rec is not None and rec.is_preprint and rec.doi == "10.48550/arxiv.2312.07559"
    turing = s2.to_record(json.loads(
        (APIS / "s2/paper_all_fields_CorpusId_14636783_turing1950.json").read_text()))
    assert turing is not None and turing.doi == "10.1093/mind/lix.236.433"
    work = json.loads((APIS / "crossref/work_10.1038_s42256-024-00832-8.json").read_text())
    cr = crossref.to_record(work["message"])
    assert cr is not None and cr.title == "Augmenting large language models with chemistry tools"
    oa = openalex.to_record(json.loads(
        (APIS / "openalex/work_doi_10.1073_pnas.1414271111.json").read_text()))
    assert oa is not None and oa.abstract and oa.abstract.split()[:2] == ["Significance", "The"]
    csl = doi.to_record(json.loads(
        (APIS / "doi_cn/crossref_transform_10.1126_science.169.3946.635_csl-json.json")
        .read_text()))
    assert csl is not None and csl.venue == "Science" and csl.authors == ["Henry S. Frank"]


# ------------------------------------------------------------------ robustness

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=12,
)
_keys = st.sampled_from([
    "paperId", "title", "authors", "year", "venue", "journal", "publicationVenue", "externalIds",
    "openAccessPdf", "publicationTypes", "citationCount", "DOI", "author", "issued",
    "container-title", "abstract", "ids", "primary_location", "biblio", "authorships",
    "abstract_inverted_index", "display_name", "doi", "type", "page", "published",
])


@given(st.dictionaries(_keys, _json_values, max_size=10))
@settings(max_examples=300, deadline=None)
def test_record_mappers_never_raise(data: dict[str, object]) -> None:
    for mapper in (s2.to_record, crossref.to_record, openalex.to_record, doi.to_record):
        rec = mapper(data)
        assert rec is None or isinstance(rec.title, str)


async def test_bad_input_never_raises(src: Sources) -> None:
    assert (await s2.get_paper(src.s2, "  ")).outcome is Outcome.FAILED
    assert (await s2.get_paper(src.s2, "DOI:10.1/%%<>?#x y")).outcome is Outcome.NOT_FOUND
    assert await s2.get_batch(src.s2, []) == {}
    assert await arxiv.get_by_ids(src.arxiv, []) == {}
    assert (await crossref.get_work(src.crossref, "nonsense")).outcome is Outcome.NOT_FOUND
    assert (await openalex.get_by_dois(src.openalex, ["x"]))["x"].outcome is Outcome.NOT_FOUND
    assert (await ncbi.get_pubmed(src.ncbi, ["PMID: abc"]))["PMID: abc"].outcome \
        is Outcome.NOT_FOUND


async def test_the_host_registry_makes_every_client() -> None:
    """One row of ``HOSTS`` per host: the client set, its base URLs, rates, keys and the
    polite pool come from the rows (a host added there is asked, rate-limited and listed)."""
    from citelens.core.settings import Settings
    from citelens.sources.transport import DEFAULT_RATES, HOSTS, PACING_MARGIN

    settings = Settings(source_urls={"crossref_api_url": "http://127.0.0.1:9/cr"}, mailto="me@example.org",
                        s2_api_key="k-123", offline=True)
    sources = Sources.from_settings(settings)
    try:
        assert list(sources.hosts()) == [h.source for h in HOSTS]
        assert sources.crossref is sources["crossref"]
        assert sources.crossref.base_url == "http://127.0.0.1:9/cr"
        assert set(DEFAULT_RATES) >= {h.source for h in HOSTS}
        polite = next(h.polite_rate for h in HOSTS if h.source == "crossref")
        assert polite is not None
        assert sources.crossref.rate.min_interval_s == pytest.approx(polite.min_interval_s * PACING_MARGIN)
        with pytest.raises(AttributeError):
            _ = sources.crosref  # a typo is not a host
    finally:
        await sources.aclose()
