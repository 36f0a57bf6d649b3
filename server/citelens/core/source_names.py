"""Every scholarly source (and host) CiteLens's code names, by its one spelling.

:class:`Source` is the one spelling of a source's name: a :class:`~citelens.sources.records.Lookup`
and a :class:`~citelens.sources.records.PaperRecord` carry one, each host of
:class:`~citelens.sources.transport.Sources` is one, and the cache keys start with one. How
each is named to a user, and in which order, is ``sources/names.py`` (a host's name is in
its row of ``sources/transport.HOSTS``, so a new host needs no member here: its client
module declares its own spelling).
"""

from __future__ import annotations

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
