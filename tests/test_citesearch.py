"""Cite while writing, below the LSP: key styles, the new entry in the file's style, the
search cascade (S2, then OpenAlex, then Crossref only when the one before failed)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from citelens.documents.bibtex import keys
from citelens.documents.bibtex.edit import apply_edits
from citelens.documents.bibtex.parse import parse_bib
from citelens.sources.records import PaperRecord
from citelens.sources.transport import Sources
from citelens.verify.cache import open_cache
from citelens.workspace import citesearch
from tests.fakes.scholarly import ScholarlyFake, fast_rates

RECORD = PaperRecord(
    source="s2", title="Attention Is All You Need", authors=["Ashish Vaswani", "Noam Shazeer"],
    year=2017, venue="Advances in Neural Information Processing Systems", doi=None,
    arxiv_id="1706.03762", publication_types=["Conference"],
)


def _parts(key: str, last: str, year: int, title: str) -> tuple[str, keys.KeyParts]:
    return key, keys.parts(last, year, title)


@pytest.mark.parametrize(("samples", "expected"), [
    ([], "vaswani2017attention"),
    ([_parts("Smith2019", "Smith", 2019, "A b"), _parts("Doe2020", "Doe", 2020, "C d")],
     "Vaswani2017"),
    ([_parts("smith_deep_2019", "Smith", 2019, "Deep nets"),
      _parts("doe_graph_2020", "Doe", 2020, "The graph"), _parts("odd", "Roe", 2001, "x")],
     "vaswani_attention_2017"),
    ([_parts("Smith:2019", "Smith", 2019, "x"), _parts("Doe:2020a", "Doe", 2020, "y")],
     "Vaswani:2017"),
    ([_parts("random1", "Smith", 2019, "x"), _parts("other2", "Doe", 2020, "y")],
     "vaswani2017attention"),
])
def test_key_follows_the_bibliographys_style(
    samples: list[tuple[str, keys.KeyParts]], expected: str
) -> None:
    assert citesearch.new_key(RECORD, samples, taken=()) == expected


def test_key_is_unique_ignoring_case() -> None:
    taken = {"Vaswani2017attention", "vaswani2017attentiona"}
    assert citesearch.new_key(RECORD, [], taken) == "vaswani2017attentionb"


def test_first_word_skips_stop_words_and_folds_accents() -> None:
    assert keys.first_word("The Élan of a model") == "Elan"
    assert keys.last_name_of("Emin Gün Sirer") == "Sirer"
    assert keys.last_name_of("van Beethoven, Ludwig") == "vanBeethoven"


@pytest.mark.parametrize(("author", "expected"), [
    ("Bent Jørgensen", "jorgensen2017attention"),
    ("Hans Weiß", "weiss2017attention"),
    ("Jan Łukasiewicz", "lukasiewicz2017attention"),
    ("Þóra Þórsdóttir", "thorsdottir2017attention"),
])
def test_key_of_a_paper_by_an_author_with_letters_outside_ascii(author: str, expected: str) -> None:
    """Cite while writing made ``Jrgensen…``, ``Wei…`` and ``ukasiewicz…`` keys (issue 21)."""
    record = PaperRecord(source="s2", title=RECORD.title, authors=[author], year=2017)
    assert citesearch.new_key(record, [], taken=()) == expected


def test_new_entry_uses_the_files_style_and_leaves_the_rest_byte_identical() -> None:
    text = ('@INPROCEEDINGS{Smith2019,\n    TITLE  = "A paper",\n    AUTHOR = "Smith, J.",\n'
            '    YEAR   = 2019\n}')  # no final newline, no trailing comma, quotes, aligned
    bib = parse_bib(text)
    edit = citesearch.entry_edit(text, bib, RECORD, "Vaswani2017")
    after = apply_edits(text, [edit])
    assert after.startswith(text)
    assert after[len(text):] == (
        '\n\n@INPROCEEDINGS{Vaswani2017,\n'
        '    TITLE  = "Attention Is All You Need",\n'
        '    AUTHOR = "Vaswani, Ashish and Shazeer, Noam",\n'
        '    YEAR   = 2017,\n'
        '    BOOKTITLE = "Advances in Neural Information Processing Systems",\n'
        '    EPRINT = "1706.03762",\n'
        '    ARCHIVEPREFIX = "arXiv"\n'
        '}\n')
    assert parse_bib(after).by_key()["Vaswani2017"][0].get("eprint") == "1706.03762"


def test_existing_paper_is_found_by_doi_arxiv_or_title() -> None:
    bib = parse_bib("@misc{v, title={Attention is all you need}}\n"
                    "@misc{w, eprint={arXiv:1706.03762v5}}\n")
    assert citesearch.existing_key(RECORD, citesearch.bib_index(bib.entries[:1])) == "v"
    assert citesearch.existing_key(RECORD, citesearch.bib_index(bib.entries)) == "w"
    assert citesearch.existing_key(RECORD, citesearch.bib_index([])) is None


def test_search_falls_back_only_when_a_source_failed(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    scholarly_server.add_paper({"title": "Lateral diffusion of active proteins",
                                "authors": ["A B"], "year": 2019, "venue": "PRE",
                                "doi": "10.1234/x"})

    async def run(query: str) -> list[PaperRecord] | None:
        settings = scholarly_server.settings(cache_dir=str(tmp_path / "cache"), max_retries=0)
        sources = Sources.from_settings(settings, rates=fast_rates())
        cache = open_cache(settings)
        try:
            return await citesearch.search_papers(sources, query, cache)
        finally:
            await sources.aclose()
            cache.close()

    found = asyncio.run(run("lateral diffusion proteins"))
    assert found and found[0].doi == "10.1234/x"
    assert asyncio.run(run("lateral diffusion proteins")) == found  # cached: no request
    assert scholarly_server.count() == 1
    assert asyncio.run(run("zzz qqq unrelated words")) == []  # S2 answered: no fallback
    assert scholarly_server.count("openalex") == 0
    scholarly_server.set_mode("s2", "5xx")
    other = asyncio.run(run("active proteins lateral"))
    assert other and other[0].source == "openalex"
    scholarly_server.set_mode("openalex", "5xx")
    scholarly_server.set_mode("crossref", "5xx")
    assert asyncio.run(run("proteins active diffusion")) is None


def test_new_entry_follows_the_files_spelling_and_order_of_field_names() -> None:
    """The file writes archiveprefix (lower case) and the venue before eprint: so does the
    entry cite while writing appends (it wrote archivePrefix, and eprint before the venue)."""
    from citelens.documents.bibtex.parse import parse_bib
    from citelens.sources.records import PaperRecord
    from citelens.workspace.citesearch import entry_edit

    text = (
        "@inproceedings{a2017,\n  title = {A},\n  author = {Doe, J.},\n  booktitle = {Proc. X},\n"
        "  year = {2017},\n  eprint = {1706.00001},\n  archiveprefix = {arXiv},\n}\n"
    )
    record = PaperRecord(source="s2", title="Attention is All you Need", authors=["Ashish Vaswani"],
                         year=2017, venue="Journal of Things", arxiv_id="1706.03762",
                         publication_types=["JournalArticle"])
    new = entry_edit(text, parse_bib(text, "/x/refs.bib"), record, "v2017").new
    names = [line.split("=")[0].strip() for line in new.splitlines() if "=" in line]
    assert "archiveprefix" in names and "archivePrefix" not in names, new
    venue = "journal" if "journal" in names else "booktitle"
    assert names.index(venue) < names.index("eprint"), new
