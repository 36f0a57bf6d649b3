"""What to ask about an entry, in which order, and how each question is cached.

The engine (:mod:`citelens.verify.scheduler`) runs the plan; this module holds the
parts that need no state: which identifiers an entry has, which entry types
are "informational", which title tiers exist and on which host each runs, and
the one adapter from a tier name to the source function that answers it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from citelens.core.model import EntryView
from citelens.core.source_names import Source
from citelens.sources import arxiv, crossref, doi, ncbi, openalex, s2
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome
from citelens.sources.transport import Sources
from citelens.verify.cache import lookup_key
from citelens.verify.coverage import INFORMATIONAL_TYPES

#: DOI prefixes registered with DataCite (not Crossref): doi.org and OpenAlex know them.
DATACITE_PREFIXES = ("10.48550/", "10.5281/", "10.5061/", "10.6084/", "10.17632/")

OPENALEX_BATCH = 50
ARXIV_BATCH = 100
PUBMED_BATCH = 200

_BIOMED = re.compile(
    r"\b(clinical|patient|patients|disease|cancer|tumou?r|gene|genes|genome|genomic|protein|"
    r"cell|cells|mouse|mice|rat|rats|drug|therapy|medicine|medical|health|infection|virus|viral|"
    r"bacteria|bacterial|brain|neuron|neural tissue|liver|cardiac|blood|clinic|epidemiolog\w*|"
    r"biomed\w*|pharma\w*|molecular|enzyme|antibod\w*|vaccine|mutation|mutations|tissue|"
    r"surgery|surgical|diagnos\w*|syndrome|lancet|jama|bmj|nejm|pubmed|plos|nucleic)\b",
    re.IGNORECASE,
)


def is_informational(view: EntryView) -> bool:
    """Books, theses, reports, software, data sets, web pages: a miss is information.

    A ``@misc`` with a DOI or arXiv id is a preprint or paper and is checked as one.
    """
    t = view.entry_type.lower()
    if t == "misc":
        return not (view.doi or view.arxiv_id or view.pmid)
    return t in INFORMATIONAL_TYPES


#: The words of :data:`_BIOMED` (and the stems it lets run on), for ASCII text: looking the
#: words up is a tenth of the time of the pattern (a 68,000-entry library asks 140,000 times).
_BIOMED_WORDS = frozenset(
    "clinical patient patients disease cancer tumor tumour gene genes genome genomic protein "
    "cell cells mouse mice rat rats drug therapy medicine medical health infection virus viral "
    "bacteria bacterial brain neuron liver cardiac blood clinic molecular enzyme vaccine "
    "mutation mutations tissue surgery surgical syndrome lancet jama bmj nejm pubmed plos "
    "nucleic".split()
)
_BIOMED_STEMS = ("epidemiolog", "biomed", "pharma", "antibod", "diagnos")
_BIOMED_STEM = re.compile(r"\b(?:" + "|".join(_BIOMED_STEMS) + ")", re.ASCII)
_ASCII_WORD = re.compile(r"\w+", re.ASCII)


def looks_biomedical(view: EntryView) -> bool:
    if view.pmid:
        return True
    text = f"{view.title} {view.venue}"
    if not text.isascii():
        return bool(_BIOMED.search(text))
    lower = text.lower()
    words = set(_ASCII_WORD.findall(lower))
    if "neural" in words:  # "neural tissue": the pattern decides
        return bool(_BIOMED.search(text))
    return not words.isdisjoint(_BIOMED_WORDS) or _BIOMED_STEM.search(lower) is not None


# ---------------------------------------------------------------------- title tiers


@dataclass(frozen=True, slots=True)
class Tier:
    name: str  # "s2_title_match", ...
    host: str  # the Sources host that answers it


S2_MATCH = Tier(Method.S2_TITLE_MATCH, Source.S2)
S2_SEARCH = Tier(Method.S2_TITLE_SEARCH, Source.S2)
CROSSREF_TITLE = Tier(Method.CROSSREF_TITLE, Source.CROSSREF)
OPENALEX_TITLE = Tier(Method.OPENALEX_TITLE, Source.OPENALEX)
PUBMED_TITLE = Tier(Method.PUBMED_TITLE, Source.NCBI)

TITLE_HOSTS = (Source.S2, Source.CROSSREF, Source.OPENALEX, Source.NCBI)
#: Keyword title searches of other hosts: they index what S2's keyword search would find.
KEYWORD_TIERS = (CROSSREF_TITLE, OPENALEX_TITLE)
_KEYWORD_METHODS = (Method.CROSSREF_SEARCH, Method.OPENALEX_TITLE_SEARCH)
_FAILED = (Outcome.FAILED, Outcome.UNAVAILABLE)


def title_tiers(view: EntryView) -> list[Tier]:
    """Title lookups for an entry, in the order one host takes them."""
    tiers = [S2_MATCH, S2_SEARCH, CROSSREF_TITLE, OPENALEX_TITLE]
    if looks_biomedical(view):
        tiers.append(PUBMED_TITLE)
    return tiers


def s2_search_wanted(pending: Sequence[Tier], answers: Sequence[Lookup]) -> bool:
    """Whether S2's keyword search is still worth a request for an entry, given the title
    tiers still ``pending`` and the title ``answers`` so far.

    Once S2's title match has answered without settling the entry, its keyword search is
    only a fallback: it is asked when every other keyword search (Crossref, OpenAlex) has
    failed, not while one of them can still answer. So a title that no source has costs
    one S2 request, not two (S2 is the slowest host: 1 request/s)."""
    match = [a for a in answers if a.method == Method.S2_TITLE_MATCH]
    if not match or any(a.outcome in _FAILED for a in match):
        return True
    if any(t in KEYWORD_TIERS for t in pending):
        return False
    others = [a for a in answers if a.method in _KEYWORD_METHODS]
    return all(a.outcome in _FAILED for a in others)


def first_author_family(view: EntryView) -> str | None:
    for n in view.authors:
        if not n.is_others and n.last.strip():
            return n.last.strip("{} ")
    return None


def title_cache_kind(tier: Tier) -> tuple[str, str]:
    """(source, kind) of the cache keys of ``tier``'s answers."""
    if tier is CROSSREF_TITLE:
        return Source.CROSSREF, "title"
    source, _, kind = tier.name.partition("_")
    return source, kind


def title_cache_key(tier: Tier, view: EntryView) -> str:
    source, kind = title_cache_kind(tier)
    if tier is CROSSREF_TITLE:
        author = first_author_family(view) or ""
        return lookup_key(source, kind, f"{view.title} {author}".strip())
    return lookup_key(source, kind, view.title)


async def run_title_tier(sources: Sources, tier: Tier, view: EntryView) -> Lookup:
    """Ask one title tier about an entry. Source functions never raise."""
    title = view.title
    if tier is S2_MATCH:
        return await s2.search_match(sources.s2, title)
    if tier is S2_SEARCH:
        return await s2.search(sources.s2, title, limit=5)
    if tier is CROSSREF_TITLE:
        return await crossref.search(sources.crossref, title, author=first_author_family(view))
    if tier is OPENALEX_TITLE:
        return await openalex.search_title(sources.openalex, title)
    return await ncbi.search_title(sources.ncbi, title)


# ---------------------------------------------------------------------- identifier tiers


async def s2_batch(sources: Sources, ids: Sequence[str]) -> dict[str, Lookup]:
    return await s2.get_batch(sources.s2, list(ids))


async def crossref_doi(sources: Sources, value: str) -> Lookup:
    return await crossref.get_work(sources.crossref, value)


async def doi_csl(sources: Sources, value: str) -> Lookup:
    return await doi.resolve_csl(sources.doi, value)


async def openalex_dois(sources: Sources, values: Sequence[str]) -> dict[str, Lookup]:
    return await openalex.get_by_dois(sources.openalex, list(values))


async def arxiv_ids(sources: Sources, values: Sequence[str]) -> dict[str, Lookup]:
    return await arxiv.get_by_ids(sources.arxiv, list(values))


async def pubmed_ids(sources: Sources, values: Sequence[str]) -> dict[str, Lookup]:
    return await ncbi.get_pubmed(sources.ncbi, list(values))


def is_datacite(value: str) -> bool:
    return value.lower().startswith(DATACITE_PREFIXES)


CROSSREF_BATCH = 50


async def crossref_dois(sources: Sources, values: Sequence[str]) -> dict[str, Lookup]:
    return await crossref.get_works(sources.crossref, list(values))
