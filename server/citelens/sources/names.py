"""How each scholarly source is named to a user, and the order sources are listed in.

A host's name is in its row of the host registry (``sources/transport.HOSTS``: ``Host.name``);
the sources that are not hosts (PubMed as its answers name it, the local snapshot, who
reports a retraction notice) are named here. Every message, list and report says a source's
name through :func:`source_name` or :func:`source_list`: one vocabulary ("Verified in
Crossref", never "in crossref").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from citelens.core.source_names import Source
from citelens.sources.transport import HOSTS

#: How each source that is not a host is named (a host's name is its row's).
_NOT_HOSTS: Mapping[str, str] = {
    Source.PUBMED: "PubMed",  # what PubMed's answers name as their source (its host: ncbi)
    Source.DBLP: "DBLP",
    Source.SNAPSHOT: "the local snapshot",
    # who reports a retraction or correction notice (verify/retraction.py)
    Source.RETRACTION_WATCH: "Retraction Watch",
    Source.PUBLISHER: "the publisher",
}
#: The order names are given in where no verification order applies (the sources a check
#: could not reach): these first, then every other host in the registry's order.
_NAMED_FIRST = (
    Source.S2,
    Source.CROSSREF,
    Source.DOI,
    Source.OPENALEX,
    Source.ARXIV,
    Source.ARXIV_SITE,
    Source.PUBMED,
    Source.NCBI,
    Source.UNPAYWALL,
)
_NAMES = {h.source: h.name for h in HOSTS} | dict(_NOT_HOSTS)

#: How each source (and each host) is named to a user, in the order above.
SOURCE_NAMES: Mapping[str, str] = MappingProxyType(
    {s: _NAMES[s] for s in _NAMED_FIRST} | {s: n for s, n in _NAMES.items() if s not in _NAMED_FIRST}
)


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
