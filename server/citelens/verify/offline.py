"""What an offline run answers for an entry that no cached answer can reach.

Offline, a lookup the cache cannot answer is "offline: not in the cache". An entry none
of whose lookups is cached gets the same verdict from every run, so it is decided
without the request plan: :func:`lookups` lists what the plan would look up for it (derived
from the plan's table, :mod:`citelens.verify.plan`) and
:func:`may_be_cached` tells whether any of those has a key of a kind the cache holds.
A big offline check (68,000 entries, an empty or small cache) then costs a set lookup
per entry, not a run of the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from citelens.core.model import EntryView
from citelens.verify import plan
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
    """Every lookup the plan makes for an entry with a title when no answer settles it:
    the identifier tiers, then the title tiers, as the plan's table lists them."""
    out: list[PlannedLookup] = []
    if ids:
        for t in plan.IDENTIFIER_TIERS:
            for f, value in t.values(ids):
                out.append(PlannedLookup(t.source, t.method, f, value, t.cache_kind))
    for tier in plan.title_tiers(view):
        out.append(PlannedLookup(tier.host, tier.name, None, view.title, tier.cache_kind, tier))
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
        view.printed is not None,  # a PDF's reference: its whole printed string is asked too
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
