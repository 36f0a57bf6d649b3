"""Every scholarly source (and host) by name, and how each is named to a user.

:class:`Source` is the one spelling of a source's name: a :class:`~citelens.sources.records.Lookup`
and a :class:`~citelens.sources.records.PaperRecord` carry one, each host of
:class:`~citelens.sources.transport.Sources` is one, and the cache keys start with one.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Source(StrEnum):
    S2 = "s2"
    CROSSREF = "crossref"
    DOI = "doi"  # doi.org content negotiation
    OPENALEX = "openalex"
    ARXIV = "arxiv"
    ARXIV_SITE = "arxiv_site"  # arxiv.org pages and PDFs (full text)
    PUBMED = "pubmed"  # what PubMed's answers name as their source
    NCBI = "ncbi"  # the host PubMed is asked at (E-utilities)
    UNPAYWALL = "unpaywall"
    DBLP = "dblp"
    SNAPSHOT = "snapshot"  # the local snapshot of the indexes
    # who reports a retraction or correction notice (verify/retraction.py)
    RETRACTION_WATCH = "retraction-watch"
    PUBLISHER = "publisher"


#: How each source (and each host) is named to a user.
SOURCE_NAMES: dict[str, str] = {
    Source.S2: "Semantic Scholar",
    Source.CROSSREF: "Crossref",
    Source.DOI: "doi.org",
    Source.OPENALEX: "OpenAlex",
    Source.ARXIV: "arXiv",
    Source.ARXIV_SITE: "arXiv (site)",
    Source.PUBMED: "PubMed",
    Source.NCBI: "PubMed",
    Source.UNPAYWALL: "Unpaywall",
    Source.DBLP: "DBLP",
    Source.SNAPSHOT: "the local snapshot",
    Source.RETRACTION_WATCH: "Retraction Watch",
    Source.PUBLISHER: "the publisher",
}


def source_name(source: str | None, default: str = "") -> str:
    """``"s2"`` -> ``"Semantic Scholar"``; an unknown source keeps its own name."""
    if not source:
        return default
    return SOURCE_NAMES.get(source, source)


#: The order sources are listed in to a user: the verification's order (the identifier
#: chain and the title searches), then every other source in SOURCE_NAMES's order.
_LISTED = (Source.S2, Source.OPENALEX, Source.CROSSREF, Source.DOI, Source.ARXIV, Source.PUBMED)


def listed_rank(source: str) -> int:
    """Where ``source`` comes in the order sources are listed (every source not in the
    verification's order comes after those): the one order of messages, lists and the
    verdict's reading of its answers."""
    return _LISTED.index(Source(source)) if source in _LISTED else len(_LISTED)


def source_list(sources: Iterable[str]) -> list[str]:
    """The user's names of ``sources``, each once, in one defined order (whatever order
    they answered in): ``["s2", "crossref", "openalex"]`` -> Semantic Scholar, OpenAlex, Crossref."""
    order = [source_name(s) for s in _LISTED] + list(SOURCE_NAMES.values())
    names = {source_name(s) for s in sources if s}
    return sorted(names, key=lambda n: (order.index(n) if n in order else len(order), n))
