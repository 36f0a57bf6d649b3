"""Every method name a lookup carries (``Lookup.method``, ``AuditStep.method``).

A source function names its answers with one (``crossref_doi``, ``s2_batch``, …); the
request plan (:mod:`citelens.verify.plan`) names its title tiers with one, which is
also the method of the answer an offline run gives for a tier it could not ask.

These are the names of the hosts CiteLens started with. A source added since declares its
own method names in its client module (a ``StrEnum`` there), so a
new source touches only its module, its row in ``sources/transport.HOSTS`` and its plan
rows; ``tests/test_host_registry.py`` fails if another host's names are written here.
"""

from __future__ import annotations

from enum import StrEnum


class Method(StrEnum):
    # Semantic Scholar
    S2_BATCH = "s2_batch"
    S2_TITLE_MATCH = "s2_title_match"
    S2_SEARCH = "s2_search"
    S2_TITLE_SEARCH = "s2_title_search"  # the title tier of S2_SEARCH
    S2_DOI_LOOKUP = "s2_doi_lookup"
    S2_ARXIV_LOOKUP = "s2_arxiv_lookup"
    S2_PMID_LOOKUP = "s2_pmid_lookup"
    S2_PMCID_LOOKUP = "s2_pmcid_lookup"
    S2_CORPUS_LOOKUP = "s2_corpus_lookup"
    S2_PAPER_LOOKUP = "s2_paper_lookup"
    # Crossref
    CROSSREF_DOI = "crossref_doi"
    CROSSREF_DOIS = "crossref_dois"
    CROSSREF_SEARCH = "crossref_search"
    CROSSREF_TITLE = "crossref_title"  # the title tier of CROSSREF_SEARCH
    CROSSREF_REFERENCE = "crossref_reference"  # a whole printed reference (query.bibliographic)
    # doi.org
    DOI_CSL = "doi_csl"
    # OpenAlex
    OPENALEX_DOI = "openalex_doi"
    OPENALEX_DOIS = "openalex_dois"
    OPENALEX_TITLE_SEARCH = "openalex_title_search"
    OPENALEX_TITLE = "openalex_title"  # the title tier of OPENALEX_TITLE_SEARCH
    # arXiv
    ARXIV_ID = "arxiv_id"
    ARXIV_TITLE_SEARCH = "arxiv_title_search"
    # PubMed
    PUBMED_ID = "pubmed_id"
    PUBMED_TITLE_SEARCH = "pubmed_title_search"
    PUBMED_TITLE = "pubmed_title"  # the title tier of PUBMED_TITLE_SEARCH
    # the local snapshot
    SNAPSHOT_DOI = "snapshot_doi"
    SNAPSHOT_ARXIV = "snapshot_arxiv"
    SNAPSHOT_PMID = "snapshot_pmid"
    SNAPSHOT_TITLE = "snapshot_title"
    SNAPSHOT_REFERENCE = "snapshot_reference"  # a whole printed reference, by the titles' index
