"""What an offline run answers for an entry that no cached answer can reach.

Offline, a lookup the cache cannot answer is "offline: not in the cache". An entry none
of whose lookups is cached gets the same verdict from every run, so it is decided
without the request plan: :func:`lookups` lists what the plan would look up for it (the
identifier tiers, then the title tiers, as ``verify/scheduler.py`` asks them) and
:func:`may_be_cached` tells whether any of those has a key of a kind the cache holds.
A big offline check (68,000 entries, an empty or small cache) then costs a set lookup
per entry, not a run of the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from citelens.core.model import EntryView
from citelens.core.source_names import Source
from citelens.sources.methods import Method
from citelens.verify import tiers as plan
from citelens.verify.cache import lookup_key
from citelens.verify.identity import Identifiers


class PlannedLookup(NamedTuple):
    source: str  # the source named in the answer ("ncbi" for PubMed's title search)
    method: str
    field: str | None  # "doi" | "arxiv" | "pmid" | "s2"; None: a title tier
    value: str  # the identifier or title asked about
    kind: str  # "source:kind" of its cache key
    tier: plan.Tier | None = None  # the title tier (its key needs the view)


def lookups(view: EntryView, ids: Identifiers) -> list[PlannedLookup]:
    """Every lookup the plan makes for an entry with a title when no answer settles it."""
    out: list[PlannedLookup] = []
    if ids:
        for f, bid in ids.s2_batch_ids().items():
            out.append(PlannedLookup("s2", Method.S2_BATCH, f, bid, "s2:id"))
        if ids.doi:
            out.append(PlannedLookup(Source.OPENALEX, Method.OPENALEX_DOIS, "doi", ids.doi, "openalex:doi"))
            if not plan.is_datacite(ids.doi):
                out.append(PlannedLookup("crossref", Method.CROSSREF_DOI, "doi", ids.doi, "crossref:doi"))
            out.append(PlannedLookup("doi", Method.DOI_CSL, "doi", ids.doi, "doi:csl"))
        if ids.arxiv:
            out.append(PlannedLookup("arxiv", Method.ARXIV_ID, "arxiv", ids.arxiv, "arxiv:id"))
        if ids.pmid:
            out.append(PlannedLookup("pubmed", Method.PUBMED_ID, "pmid", ids.pmid, "pubmed:pmid"))
    for t in plan.title_tiers(view):
        out.append(PlannedLookup(t.host, t.name, None, view.title, ":".join(plan.title_cache_kind(t)), t))
    return out


def shape(view: EntryView, ids: Identifiers) -> tuple[bool, ...]:
    """All that :func:`lookups` (its sources and methods) and the verdict depend on:
    entries of one shape get the same verdict offline when nothing is cached."""
    doi = ids.doi or ""
    return (
        plan.is_informational(view),
        bool(ids.s2),
        bool(doi),
        bool(doi) and plan.is_datacite(doi),
        bool(ids.arxiv),
        bool(ids.pmid),
        plan.looks_biomedical(view),
    )


def may_be_cached(
    view: EntryView, planned: Iterable[PlannedLookup], kinds: frozenset[str], holds: Callable[[str], bool]
) -> bool:
    """Whether a cached answer may exist for one of ``planned``: ``kinds`` are the
    ``source:kind`` of the keys the cache holds (no key of another kind is computed),
    ``holds`` tells whether it may hold a key."""
    if not kinds:
        return False
    for p in planned:
        if p.kind not in kinds:
            continue
        source, kind = p.kind.split(":")
        key = plan.title_cache_key(p.tier, view) if p.tier is not None else lookup_key(source, kind, p.value)
        if holds(key):
            return True
    return False
