"""The request plan: what to ask about an entry, in which order, and how each answer is cached.

One table holds every tier (a kind of request): its method name, the host asked, the
source its answers name, the identifier it looks up (None: the title), how many values
go in one request, and the ``source:kind`` of its cache keys. The scheduler
(:mod:`citelens.verify.scheduler`) runs the plan from this table, and the offline
shortcut (:mod:`citelens.verify.offline`) derives the lookups of an entry from it.

- identifier tiers (:data:`IDENTIFIER_TIERS`): every identifier goes to Semantic
  Scholar's batch endpoint first; a DOI it does not resolve to the entry's paper then goes
  down :data:`DOI_CHAIN` (OpenAlex, 50 per request; Crossref, one per DOI, not DataCite's;
  doi.org), an arXiv id to arXiv, a PMID to PubMed (batched); what their answers settle
  (:func:`after_identifiers`);
- title tiers (:func:`title_tiers`): Crossref; OpenAlex, only for an entry Crossref did
  not find (priced); S2 title match, S2 keyword search, PubMed for biomedical-looking
  entries; for an entry Crossref seldom holds (:func:`crossref_likely`), OpenAlex and S2's
  match before Crossref; each host has its own queue;
- what suffices for "not found" (:func:`not_found_needs`, :func:`evidence_only`): the
  sources a check can afford (Semantic Scholar, Crossref, PubMed, and every identifier's
  own registry) must each have answered; OpenAlex, whose calls are priced against a daily
  budget (2026), only adds evidence: its failure never makes an entry unverified when the
  others answered, so a spent budget changes neither a verdict nor its class;
- the tiers that fetch more versions of a found paper (:func:`identifier_versions`,
  :func:`version_lookups`, :data:`VERSION_TIERS`, :func:`full_version`) or its retraction
  signal (:func:`signal_tiers`);
- the settle rules: the local snapshot is the plan's first tier (:func:`snapshot_settles`),
  then when the title answers read settle an entry (:func:`confident`, :func:`titles_settle`).
  The scheduler only executes: it asks what these functions name and stops when they say so.

It also holds the parts of the plan that need no state: which entry types are
"informational" and which entries look biomedical.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass

from citelens.core.identifiers import ARXIV_DOI_PREFIX
from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.core.source_names import Source
from citelens.core.statuses import Status
from citelens.core.titles import normalize_title
from citelens.documents.pdf.hyphens import one_reading
from citelens.sources import arxiv, crossref, doi, ncbi, openalex, s2
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.sources.transport import Sources
from citelens.verify import retraction
from citelens.verify.cache import lookup_key
from citelens.verify.coverage import is_informational as is_informational  # the plan reads it
from citelens.verify.identity import Identifiers
from citelens.verify.match.authors import record_authors_cut
from citelens.verify.match.compare import contradicted_fields, is_confident_match
from citelens.verify.match.titles import title_cut_off, title_similarity, title_tokens, title_words_changed
from citelens.verify.match.venues import is_preprint_venue
from citelens.verify.status import Verification

#: DOI prefixes registered with DataCite (not Crossref): doi.org and OpenAlex know them.
DATACITE_PREFIXES = (ARXIV_DOI_PREFIX, "10.5281/", "10.5061/", "10.6084/", "10.17632/")


def is_datacite(value: str) -> bool:
    return value.lower().startswith(DATACITE_PREFIXES)


_BIOMED = re.compile(
    r"\b(clinical|patient|patients|disease|cancer|tumou?r|gene|genes|genome|genomic|protein|"
    r"cell|cells|mouse|mice|rat|rats|drug|therapy|medicine|medical|health|infection|virus|viral|"
    r"bacteria|bacterial|brain|neuron|neural tissue|liver|cardiac|blood|clinic|epidemiolog\w*|"
    r"biomed\w*|pharma\w*|molecular|enzyme|antibod\w*|vaccine|mutation|mutations|tissue|"
    r"surgery|surgical|diagnos\w*|syndrome|lancet|jama|bmj|nejm|pubmed|plos|nucleic)\b",
    re.IGNORECASE,
)


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


# ---------------------------------------------------------------------- identifier tiers

#: Asks a host about identifiers: value -> answer (a tier of batch 1 gets one value).
AskIds = Callable[[Sources, Sequence[str]], Awaitable[dict[str, Lookup]]]


@dataclass(frozen=True, slots=True)
class IdTier:
    """A request by identifier."""

    method: str  # a Method, or a method name its client module declares
    host: str  # the Sources host asked (a Source, or a new host's own spelling)
    source: str  # the source its answers name ("pubmed" for the ncbi host)
    field: str | None  # the identifier looked up: "doi" | "arxiv" | "pmid"; None: all (S2)
    kind: str  # the kind of its cache keys (lookup_key(source, kind, value))
    batch: int  # values per request; 1: one request per value
    ask: AskIds
    datacite: bool = True  # asks about DataCite DOIs too (Crossref does not know them)
    cache_kind: str = dataclasses.field(init=False)  # ``source:kind`` of its cache keys

    def __post_init__(self) -> None:
        object.__setattr__(self, "cache_kind", f"{self.source}:{self.kind}")

    def values(self, ids: Identifiers) -> list[tuple[str, str]]:
        """(field, value asked) for an entry's identifiers: what this tier looks up."""
        if self.field is None:  # S2's batch: every identifier, as S2 writes it
            return list(ids.s2_batch_ids().items())
        value = getattr(ids, self.field)
        if not value or (not self.datacite and is_datacite(value)):
            return []
        return [(self.field, value)]


async def _s2_batch(sources: Sources, ids: Sequence[str]) -> dict[str, Lookup]:
    return await s2.get_batch(sources.s2, list(ids))


async def _crossref_doi(sources: Sources, values: Sequence[str]) -> dict[str, Lookup]:
    """Crossref's works by DOI, 50 a request (``filter=doi:``); a DOI with a comma, which the
    filter cannot carry, on its own (``/works/{doi}``)."""
    alone = [v for v in values if "," in v]
    out = await crossref.get_works(sources.crossref, [v for v in values if "," not in v])
    for v in alone:
        out[v] = await crossref.get_work(sources.crossref, v)
    return out


async def _doi_csl(sources: Sources, values: Sequence[str]) -> dict[str, Lookup]:
    return {v: await doi.resolve_csl(sources.doi, v) for v in values}


async def _openalex_dois(sources: Sources, values: Sequence[str]) -> dict[str, Lookup]:
    return await openalex.get_by_dois(sources.openalex, list(values))


async def _crossref_dois(sources: Sources, values: Sequence[str]) -> dict[str, Lookup]:
    return await crossref.get_works(sources.crossref, list(values))


async def _arxiv_ids(sources: Sources, values: Sequence[str]) -> dict[str, Lookup]:
    return await arxiv.get_by_ids(sources.arxiv, list(values))


async def _pubmed_ids(sources: Sources, values: Sequence[str]) -> dict[str, Lookup]:
    return await ncbi.get_pubmed(sources.ncbi, list(values))


S2_BATCH = IdTier(Method.S2_BATCH, Source.S2, Source.S2, None, "id", 500, _s2_batch)
OPENALEX_DOIS = IdTier(
    Method.OPENALEX_DOIS, Source.OPENALEX, Source.OPENALEX, "doi", "doi", 50, _openalex_dois
)
#: A venue's DOIs that resolve nowhere, 50 a request: one at a time they were a fifth of
#: Crossref's requests, the host that bounds a venue's run.
CROSSREF_DOI = IdTier(
    Method.CROSSREF_DOI, Source.CROSSREF, Source.CROSSREF, "doi", "doi", 50, _crossref_doi, datacite=False
)
DOI_CSL = IdTier(Method.DOI_CSL, Source.DOI, Source.DOI, "doi", "csl", 1, _doi_csl)
ARXIV_IDS = IdTier(Method.ARXIV_ID, Source.ARXIV, Source.ARXIV, "arxiv", "id", 100, _arxiv_ids)
PUBMED_IDS = IdTier(Method.PUBMED_ID, Source.NCBI, Source.PUBMED, "pmid", "pmid", 200, _pubmed_ids)
#: Crossref's records of found papers (more versions, retraction signals), 50 per request.
CROSSREF_DOIS = IdTier(
    Method.CROSSREF_DOIS, Source.CROSSREF, Source.CROSSREF, "doi", "doi", 50, _crossref_dois, datacite=False
)

#: A DOI S2 does not resolve to the entry's paper goes down this chain, one tier after
#: the other, until one does (or two sources agree it names another paper).
DOI_CHAIN = (OPENALEX_DOIS, CROSSREF_DOI, DOI_CSL)
#: Every identifier of an entry is asked here first, all in one request (S2's batch).
FIRST_ID_TIER = S2_BATCH
#: After S2's batch, the chains of each identifier run at once.
ID_CHAINS = (DOI_CHAIN, (ARXIV_IDS,), (PUBMED_IDS,))
#: Every identifier tier an entry may get, in the order the plan asks them.
IDENTIFIER_TIERS = (S2_BATCH, *DOI_CHAIN, ARXIV_IDS, PUBMED_IDS)


# ---------------------------------------------------------------------- title tiers

#: Asks a host about an entry's title.
AskTitle = Callable[[Sources, EntryView], Awaitable[Lookup]]


@dataclass(frozen=True, slots=True)
class Tier:
    """A title search. Its method names the tier (the method of an offline answer); the
    host's answers carry the search's own method (``s2_search``, ``crossref_search``, …)."""

    name: str  # a Method, or a method name its client module declares (a StrEnum there)
    host: str  # the Sources host that answers it (an offline answer names it too)
    source: str  # the source of its cache keys
    kind: str  # the kind of its cache keys
    ask: AskTitle
    cache_kind: str = dataclasses.field(init=False)  # ``source:kind`` of its cache keys

    def __post_init__(self) -> None:
        object.__setattr__(self, "cache_kind", f"{self.source}:{self.kind}")


def first_author_family(view: EntryView) -> str | None:
    for n in view.authors:
        if not n.is_others and n.last.strip():
            return n.last.strip("{} ")
    return None


async def _s2_match(sources: Sources, view: EntryView) -> Lookup:
    return await s2.search_match(sources.s2, view.title)


async def _s2_search(sources: Sources, view: EntryView) -> Lookup:
    return await s2.search(sources.s2, view.title, limit=5)


async def _crossref_title(sources: Sources, view: EntryView) -> Lookup:
    return await crossref.search(sources.crossref, view.title, author=first_author_family(view))


async def _openalex_title(sources: Sources, view: EntryView) -> Lookup:
    return await openalex.search_title(sources.openalex, view.title)


async def _pubmed_title(sources: Sources, view: EntryView) -> Lookup:
    return await ncbi.search_title(sources.ncbi, view.title)


def printed_text(view: EntryView) -> str:
    """A PDF reference's printed string as it is asked (``documents/pdf/hyphens.one_reading``)."""
    return one_reading(view.printed.text) if view.printed is not None else ""


async def _crossref_reference(sources: Sources, view: EntryView) -> Lookup:
    return await crossref.search_reference(sources.crossref, printed_text(view))


S2_MATCH = Tier(Method.S2_TITLE_MATCH, Source.S2, Source.S2, "title_match", _s2_match)
S2_SEARCH = Tier(Method.S2_TITLE_SEARCH, Source.S2, Source.S2, "title_search", _s2_search)
#: Its cache key holds the first author's family name too (:func:`title_cache_key`).
CROSSREF_TITLE = Tier(Method.CROSSREF_TITLE, Source.CROSSREF, Source.CROSSREF, "title", _crossref_title)
OPENALEX_TITLE = Tier(Method.OPENALEX_TITLE, Source.OPENALEX, Source.OPENALEX, "title", _openalex_title)
PUBMED_TITLE = Tier(Method.PUBMED_TITLE, Source.NCBI, Source.PUBMED, "title", _pubmed_title)
#: A reference read from a PDF: Crossref's search on the whole printed string (a reader's
#: slip in the fields does not hide the paper; the verdict confirms a hit against the print).
CROSSREF_REFERENCE = Tier(
    Method.CROSSREF_REFERENCE, Source.CROSSREF, Source.CROSSREF, "reference", _crossref_reference
)
#: Every title tier, in the order one host takes them (PubMed's for biomedical entries).
TITLE_TIERS = (S2_MATCH, S2_SEARCH, CROSSREF_TITLE, OPENALEX_TITLE, PUBMED_TITLE, CROSSREF_REFERENCE)

TITLE_HOSTS = tuple(dict.fromkeys(t.host for t in TITLE_TIERS))
_FAILED = (Outcome.FAILED, Outcome.UNAVAILABLE)


def title_tiers(view: EntryView) -> list[Tier]:
    """Title lookups for an entry, in the order one host takes them (a reference read from a
    PDF: its whole printed string too; one with no title read: that alone)."""
    if view.printed is not None and not view.title.strip():
        return [CROSSREF_REFERENCE]
    return [
        t
        for t in TITLE_TIERS
        if (t is not PUBMED_TITLE or looks_biomedical(view))
        and (t is not CROSSREF_REFERENCE or view.printed is not None)
    ]


@dataclass(frozen=True, slots=True)
class TitleStep:
    """Where an entry's title search stands, its answers read in plan order."""

    read: tuple[Tier, ...]  # the tiers whose answers the verdict reads, in plan order
    ask: Tier | None  # the next tier to ask; None: settled, or every tier read
    settled: bool = False  # the answers read settle the entry


#: Entry types Crossref seldom registers when the entry names no DOI: conference papers
#: cited without one are mostly from venues that register none (NeurIPS, ICML, ICLR, PMLR,
#: ACL's older volumes, workshops), and reports, theses, software, web pages and unpublished
#: work are rarely registered at all. Journal articles, books and chapters are what it holds.
_OFF_CROSSREF_TYPES = frozenset(
    "inproceedings conference proceedings misc techreport report phdthesis mastersthesis thesis "
    "unpublished online electronic www manual software dataset".split()
)
#: Venues that register no DOIs, whatever the entry's type (an ``@article`` in NeurIPS, JMLR).
_OFF_CROSSREF_VENUE = re.compile(
    r"neural information processing systems|\bneurips\b|\bnips\b|machine learning research|"
    r"\bpmlr\b|\bjmlr\b|\biclr\b|\bicml\b|learning representations|"
    r"international conference on machine learning|\barxiv\b|openreview",
    re.IGNORECASE,
)


def crossref_likely(view: EntryView) -> bool:
    """Whether Crossref is likely to hold the entry's paper, so its title search is asked
    first (pure: the entry alone): an entry with a DOI Crossref registers, or a journal
    article, book or chapter not from a venue that registers no DOIs. The answer only orders
    the title tiers: every verdict still reads the same sources before "not found". A
    reference read from a PDF keeps Crossref first: its type is a guess from the print, and
    Crossref's searches (its fields, then its whole printed string) are how it is read."""
    if view.printed is not None:
        return True
    if view.doi:
        return not is_datacite(view.doi)
    if view.entry_type in _OFF_CROSSREF_TYPES:
        return False
    return _OFF_CROSSREF_VENUE.search(view.venue) is None


def _title_walk(view: EntryView, answers: Mapping[Tier, Lookup], found: Callable[[], bool]) -> Iterator[Tier]:
    """The title tiers of an entry in the order their answers are read. Resumed only once
    the tier it yielded has answered, so it may look at that answer.

    Crossref first (free, 5 requests/s, 10/s with ``mailto``: most cited papers are there) for
    an entry it is likely to hold (:func:`crossref_likely`); for one it seldom holds (a
    conference paper, report, thesis, misc or unpublished entry with no DOI, a NeurIPS, ICML,
    ICLR, PMLR or JMLR paper) OpenAlex's title search first, then S2's match, and Crossref's
    search only when they did not settle it (it is still needed for "not found",
    :func:`not_found_needs`): Crossref's public pool takes one search at a time, 5 a second,
    so 50 title-only entries asked there first took 10 s whatever the other hosts could do.
    Otherwise OpenAlex's title search next, only for a paper Crossref did not find: it answers 10 a
    second where Semantic Scholar's match answers one, but each costs $0.001 of a daily budget
    (2026) and its answers are never needed for "not found" (:func:`evidence_only`), so while
    the budget lasts it makes the check fast, and once it is spent the entry goes on at once
    to S2's title match (1/s), which with Crossref suffices (:func:`not_found_needs`). An
    entry waits for each tier before the next one is read, so the order is also the
    throughput of a title-only bibliography. S2's keyword search is only a fallback: asked
    when its title match or Crossref's search failed, so a title that no source has costs one
    S2 request, not two. PubMed for a biomedical entry. A reference read from a PDF is then
    looked for by its whole printed string (Crossref), the only search when no title was
    read. A paper found but not settled (its other versions are wanted: a preprint's title,
    another year) asks OpenAlex's search last, after every free tier: the version it holds
    may be the one cited."""
    titled = bool(view.title.strip())
    openalex = False
    if titled:
        if not found() and not crossref_likely(view):
            openalex = True
            yield OPENALEX_TITLE
            yield S2_MATCH
            yield CROSSREF_TITLE
        else:
            yield CROSSREF_TITLE
            if not found():
                openalex = True
                yield OPENALEX_TITLE
            yield S2_MATCH
        if answers[S2_MATCH].outcome in _FAILED or answers[CROSSREF_TITLE].outcome in _FAILED:
            yield S2_SEARCH
        if looks_biomedical(view):
            yield PUBMED_TITLE
    if view.printed is not None:
        yield CROSSREF_REFERENCE
    if titled and not openalex:  # found, its versions wanted: priced evidence, last
        yield OPENALEX_TITLE


def _nothing_found(_read: tuple[Tier, ...]) -> bool:
    return False


class _AllFound(Mapping[Tier, Lookup]):
    """Every tier answered FOUND: what the walk reads whatever the answers."""

    _FOUND = Lookup("", "", Outcome.FOUND, [])

    def __getitem__(self, _tier: Tier) -> Lookup:
        return self._FOUND

    def __iter__(self) -> Iterator[Tier]:
        return iter(TITLE_TIERS)

    def __len__(self) -> int:
        return len(TITLE_TIERS)


def title_tiers_read(view: EntryView) -> tuple[Tier, ...]:
    """The title tiers read for ``view`` whatever they answer (unless an earlier one settles
    it), in plan order (pure): an entry the identifiers found but its versions did not settle
    may ask them all at once, and still reads them in plan order (its paper is found:
    OpenAlex's priced search last)."""
    return tuple(_title_walk(view, _AllFound(), lambda: True))


def next_title_step(
    view: EntryView,
    answers: Mapping[Tier, Lookup],
    settled: Callable[[tuple[Tier, ...]], bool],
    found: Callable[[tuple[Tier, ...]], bool] = _nothing_found,
) -> TitleStep:
    """The next title tier to ask about ``view``, given the ``answers`` so far (pure: no I/O).

    Answers are read in plan order: an answer of a later tier that arrived early waits until
    every earlier tier has answered, and reading stops at the first prefix ``settled`` says
    settles the entry. So the same answers always give the same read set (and verdict),
    whichever host answered first. ``found`` says whether the answers read found the
    entry's paper (an entry found by an identifier, or waiting for its other versions):
    then OpenAlex's priced search is not asked."""
    read: list[Tier] = []
    for tier in _title_walk(view, answers, lambda: found(tuple(read))):
        if tier not in answers:
            return TitleStep(tuple(read), tier)
        read.append(tier)
        if settled(tuple(read)):
            return TitleStep(tuple(read), None, True)
    return TitleStep(tuple(read), None)


# ---------------------------------------------------------------------- what "not found" needs


@dataclass(frozen=True, slots=True)
class Need:
    """One answer an entry needs before it may be "not found": from one of ``methods``
    (a tier's own method or its answers' method), about ``field`` (None: the title)."""

    what: str  # in words, for the docs and the tests
    field: str | None
    methods: frozenset[str]

    def met_by(self, a_field: str | None, method: str, outcome: Outcome) -> bool:
        return a_field == self.field and method in self.methods and outcome not in _FAILED


_S2_TITLE = Need(
    "Semantic Scholar's title match or search",
    None,
    frozenset({Method.S2_TITLE_MATCH, Method.S2_SEARCH, Method.S2_TITLE_SEARCH}),
)
_KEYWORDS = Need(
    "a keyword title search (Crossref's, or Semantic Scholar's when Crossref's failed)",
    None,
    frozenset({Method.CROSSREF_SEARCH, Method.CROSSREF_TITLE, Method.S2_SEARCH, Method.S2_TITLE_SEARCH}),
)
_PUBMED_TITLE = Need(
    "PubMed's title search", None, frozenset({Method.PUBMED_TITLE_SEARCH, Method.PUBMED_TITLE})
)
#: Each identifier's own registry: what says whether it exists at all.
_ID_NEEDS = {
    "doi": Need("doi.org (every DOI's registry)", "doi", frozenset({DOI_CSL.method})),
    "arxiv": Need("arXiv", "arxiv", frozenset({ARXIV_IDS.method})),
    "pmid": Need("PubMed", "pmid", frozenset({PUBMED_IDS.method})),
    "s2": Need("Semantic Scholar", "s2", frozenset({S2_BATCH.method})),
}
#: Sources whose answers are evidence only: priced against a daily budget, so a verdict
#: never waits for them (asked where the budget allows; the others suffice).
EVIDENCE_ONLY_SOURCES = frozenset({Source.OPENALEX})


def not_found_needs(view: EntryView, ids: Identifiers) -> tuple[Need, ...]:
    """The answers ``view`` needs, each one found or not found (never failed), before it is
    "not found" while another source failed (pure). The sources a check can afford: Semantic
    Scholar's title match (or search), a keyword search (Crossref's), PubMed's for a
    biomedical entry, and each identifier's own registry (doi.org, arXiv, PubMed, Semantic
    Scholar for its ids). OpenAlex is never needed (:func:`evidence_only`)."""
    needs = [_S2_TITLE, _KEYWORDS]
    if looks_biomedical(view):
        needs.append(_PUBMED_TITLE)
    needs += [n for f, n in _ID_NEEDS.items() if getattr(ids, f)]
    return tuple(needs)


def evidence_only(source: str) -> bool:
    """Whether a failed answer of ``source`` leaves "not found" standing when every need of
    the entry was met (:func:`not_found_needs`): OpenAlex's, whose budget may be spent."""
    return source in EVIDENCE_ONLY_SOURCES


def unmet_needs(
    view: EntryView, ids: Identifiers, answers: Iterable[tuple[str | None, str, Outcome]]
) -> list[Need]:
    """The needs of ``view`` no answer met; ``answers``: (field, method, outcome) each."""
    got = list(answers)
    return [n for n in not_found_needs(view, ids) if not any(n.met_by(f, m, o) for f, m, o in got)]


def chain_needs(*, has_value: bool, same: bool, conflicts: int, found_by_batch: bool) -> bool:
    """Whether an identifier still needs the next source of its chain (pure).

    Only what is known before the chains start (S2's batch) and the chain's own answers
    count, never another identifier's chain running at the same time: ``same`` (a source of
    this identifier resolved it to the entry's paper), ``conflicts`` (sources naming another
    paper for it; a second one confirms the mismatch), ``found_by_batch`` (S2's batch found
    the paper by any identifier)."""
    if not has_value or same:
        return False
    if conflicts:
        return conflicts < 2
    return not found_by_batch



@dataclass(frozen=True, slots=True)
class AfterIds:
    """What follows an entry's identifier tiers (:func:`after_identifiers`)."""

    versions: bool  # the found paper's other versions are asked (identifier_versions)
    titles: bool  # the title tiers are asked (else the identifiers settle it)
    candidates_only: bool  # ... only for the entry's own paper: an identifier names another


def after_identifiers(same_fields: Set[str], conflict_fields: Set[str]) -> AfterIds:
    """What the identifier answers settle (pure; ``same_fields``: the identifiers a source
    resolved to the entry's paper, ``conflict_fields``: those a source resolved to another
    paper). Found with no mismatch: its other versions, then the verdict. An identifier naming
    another paper that no source resolved to the entry's: the title tiers look for the entry's
    own paper (a "Replace with" candidate). Nothing found: the title tiers."""
    found = bool(same_fields)
    titles = not found or not conflict_fields <= same_fields
    return AfterIds(
        versions=found and not conflict_fields,
        titles=titles,
        candidates_only=titles and bool(conflict_fields),
    )

def title_cache_key(tier: Tier, view: EntryView) -> str:
    if tier is CROSSREF_REFERENCE:  # the whole printed string is what was asked
        return lookup_key(tier.source, tier.kind, printed_text(view))
    if tier is CROSSREF_TITLE:
        author = first_author_family(view) or ""
        return lookup_key(tier.source, tier.kind, f"{view.title} {author}".strip())
    return lookup_key(tier.source, tier.kind, view.title)


# ---------------------------------------------------------------------- other versions

#: A lookup of one of a paper's other versions: the tier asked and the value asked about.
VersionAsk = tuple[IdTier, str]


def identifier_versions(
    view: EntryView, ids: Identifiers, records: Sequence[PaperRecord], asked_sources: Set[str]
) -> list[VersionAsk]:
    """More versions of a paper the identifier tiers found (``records``: one per identifier
    answer), asked before its first verdict (pure): when it is cited in a venue but known as
    a preprint, OpenAlex's record (its locations may show the venue); when the cited title
    has other words than the records', or a record's title or author list is cut off, the
    arXiv record (the preprint's title may be the one cited) and Crossref's (the publisher's
    full title). A source already asked about the entry is not asked again."""
    out: list[VersionAsk] = []
    venue = (view.venue or "").strip()
    if (
        venue
        and not is_preprint_venue(venue)
        and not any(r.venue and not r.is_preprint for r in records)
        and OPENALEX_DOIS.source not in asked_sources
    ):
        doi = next((r.doi for r in records if r.doi), None) or ids.doi
        if doi:
            out.append((OPENALEX_DOIS, doi))
    cut = any(title_cut_off(view.title, r) or record_authors_cut(r, len(view.authors)) for r in records)
    if not cut and title_words_changed(view.title, records) is None:
        return out
    ax = next((r.arxiv_id for r in records if r.arxiv_id), None)
    if ax and ARXIV_IDS.source not in asked_sources:
        out.append((ARXIV_IDS, ax))
    doi = next((r.doi for r in records if r.doi and not is_datacite(r.doi)), None)
    if doi and CROSSREF_DOIS.source not in asked_sources:
        out.append((CROSSREF_DOIS, doi))
    return out


def version_lookups(
    ids: Identifiers, records: Sequence[PaperRecord], asked: Set[tuple[str, str]]
) -> list[VersionAsk]:
    """The found paper's records by every identifier its versions carry, when its verdict
    waits for every version (verdict.wants_versions; pure): OpenAlex and Crossref (not for
    DataCite DOIs) by DOI, arXiv by id, each value once; ``asked``: (source, value lower-cased)
    already answered for the entry."""
    dois = list(dict.fromkeys(d for d in (*(r.doi for r in records), ids.doi) if d))
    arxivs = list(dict.fromkeys(a for a in (*(r.arxiv_id for r in records), ids.arxiv) if a))
    out: list[VersionAsk] = []
    for tier, values in (
        (OPENALEX_DOIS, dois),
        (CROSSREF_DOIS, [d for d in dois if not is_datacite(d)]),
        (ARXIV_IDS, arxivs),
    ):
        out += [(tier, x) for x in values if (tier.source, x.lower()) not in asked]
    return out


#: The tiers a found paper's other versions are asked from, in the order their answers are
#: read as versions (the arXiv record first: the preprint's title may be the one cited).
VERSION_TIERS = (ARXIV_IDS, CROSSREF_DOIS, OPENALEX_DOIS)


def full_version(
    view: EntryView, answer: Lookup, same: Callable[[PaperRecord], bool], asked: Set[tuple[str, str]]
) -> VersionAsk | None:
    """When a title search found the paper only under a title its index cut off, the arXiv
    record (by its id) whose full title can confirm or contradict the cited title's last words
    (pure; ``same``: whether a record is the entry's paper, ``asked``: (source, value) already
    asked)."""
    if answer.outcome is not Outcome.FOUND:
        return None
    found = [r for r in answer.records if same(r) or _cut_near(view, r)]
    if not found or not all(title_cut_off(view.title, r) for r in found):
        return None
    ax = next((r.arxiv_id for r in found if r.arxiv_id), None)
    if ax is None or (ARXIV_IDS.source, ax) in asked:
        return None
    return (ARXIV_IDS, ax)


def _cut_near(view: EntryView, rec: PaperRecord) -> bool:
    """``rec``'s title was cut by its index ("Early and Reliable Event Detection ...") and
    its words are near the cited title's first as many ("... Event Recognition ..."), by the
    entry's authors in its year: too little of it is left to call it the entry's paper or
    another, so its full version (arXiv, by its id) is asked; that title decides. (A preprint
    cited by its own title, the published paper's title cut: a .bib with the eprint finds it
    by the id, a PDF that prints none only so.)"""
    if not rec.title_truncated or not rec.arxiv_id or not view.authors or view.year is None:
        return False
    short, cited = title_tokens(rec.title or ""), title_tokens(view.title)
    n = len(short)
    if n < 3 or n >= len(cited):
        return False
    # as many words, or one more or fewer (a word added or left out before the cut)
    near = max(title_similarity(" ".join(cited[:k]), " ".join(short)) for k in (n - 1, n, n + 1)) >= _CUT_NEAR
    return near and bool(rec.authors) and rec.year is not None and not contradicted_fields(view, rec)


#: How near a cut title's words must be to the cited title's first as many (one word in five
#: changed is 0.82).
_CUT_NEAR = 0.8


# ---------------------------------------------------------------------- retraction signals


def signal_tiers(doi: str) -> tuple[IdTier, ...]:
    """Who is asked whether the paper with this DOI was retracted, corrected, ..., in order,
    the next only when the one before did not find the paper (pure): Crossref for the DOIs
    it registers (``updated-by`` names every notice, Retraction Watch's too), then OpenAlex's
    ``is_retracted``; OpenAlex alone for DataCite's DOIs and a DOI Crossref cannot be asked
    about in a filter (a comma)."""
    if is_datacite(doi) or "," in doi:
        return (OPENALEX_DOIS,)
    return (CROSSREF_DOIS, OPENALEX_DOIS)


# ---------------------------------------------------------------------- settle rules
#
# The local snapshot (``verify/snapshot.py``) is the plan's first tier: an entry it holds
# with confidence is decided from it alone, before any request; the identifier tiers, the
# found paper's other versions and the title tiers follow, and these rules say when the
# answers read so far settle an entry (the verdict is ``verdict.decide``'s; the rules only
# say whether to stop asking).


#: Titles many works share: never decided from the title alone (normalised, as compared).
GENERIC_TITLES = frozenset(
    {
        "preface",
        "foreword",
        "introduction",
        "editorial",
        "editorial board",
        "guest editorial",
        "editors note",
        "editor s note",
        "from the editor",
        "letter from the editor",
        "index",
        "author index",
        "subject index",
        "contents",
        "table of contents",
        "front matter",
        "back matter",
        "frontmatter",
        "backmatter",
        "erratum",
        "errata",
        "corrigendum",
        "correction",
        "retraction",
        "retraction notice",
        "expression of concern",
        "reply",
        "response",
        "authors reply",
        "author reply",
        "discussion",
        "comment",
        "comments",
        "commentary",
        "letter to the editor",
        "letters",
        "book review",
        "book reviews",
        "abstracts",
        "conclusion",
        "conclusions",
        "summary",
        "overview",
        "acknowledgments",
        "acknowledgements",
        "acknowledgment",
        "in memoriam",
        "obituary",
        "announcement",
        "announcements",
        "news",
        "untitled",
        "keynote",
        "invited talk",
        "panel",
        "tutorial",
        "workshop summary",
        "proceedings",
        "reviewers",
        "list of reviewers",
        "program committee",
        "welcome message",
        "message from the chairs",
        "call for papers",
        "errata and addenda",
    }
)


def snapshot_title_may_settle(view: EntryView, year: int | None) -> bool:
    """Whether the snapshot's title lookup may settle the entry at all (pure; ``year``: the
    snapshot's): not a title many works share, not a paper from the snapshot's year or later
    (it may be newer than the snapshot)."""
    if normalize_title(view.title) in GENERIC_TITLES:
        return False
    return not (view.year is not None and year is not None and view.year >= year)


def snapshot_title_settles(view: EntryView, recs: Sequence[PaperRecord], settings: Settings) -> bool:
    """The snapshot's title matches settle the entry (pure): one paper matches with confidence,
    and one of its records agrees with the entry's year and authors (a record without them
    does not contradict); a second paper matching as well (another DOI) leaves it open."""
    confident = [
        r
        for r in recs
        if is_confident_match(view, r, settings.title_verified_threshold, settings.title_candidate_threshold)
    ]
    if not confident:
        return False
    dois = {r.doi.lower() for r in confident if r.doi}
    if len(dois) > 1:
        return False  # two papers answer to this title: the APIs say which
    return any(
        not contradicted_fields(view, r) and (view.year is None or r.year is None or r.year == view.year)
        for r in confident
    )


def snapshot_signal_doi(v: Verification) -> str | None:
    """The DOI whose editorial notices still have to be read for a verdict the snapshot
    decided (pure; asked of the snapshot's Crossref record, else as :func:`signal_tiers`); None
    when a Crossref record of the paper is among its records (Crossref's ``updated-by`` names
    every notice: retractions, corrections, expressions of concern).
    OpenAlex's ``is_retracted`` flags retractions only, so a paper the snapshot holds from
    OpenAlex, DBLP or arXiv alone is asked about as the API path asks (50 DOIs a request)."""
    records = retraction.paper_records(v)
    if not records or any(r.source == Source.CROSSREF for r in records):
        return None
    return retraction.paper_doi(records)


def snapshot_settles(status: Status, wants_versions: bool) -> bool:
    """Whether the snapshot's verdict settles an entry: the paper was found (VERIFIED or
    PARTIAL) and nothing it flags is a difference another version could explain (pure); any
    other entry goes on to the APIs, untouched."""
    return status in (Status.VERIFIED, Status.PARTIAL) and not wants_versions


def confident(view: EntryView, answer: Lookup, same: Callable[[PaperRecord], bool]) -> bool:
    """Whether a title answer found the entry's paper with confidence (pure): a record that is
    the paper (``same``), whose title an index did not cut off (it could not tell whether the
    cited title's last words are right) nor its author list (whether the further authors
    cited are)."""
    if answer.outcome is not Outcome.FOUND:
        return False
    cited = len(view.authors)
    return any(
        same(r) and not title_cut_off(view.title, r) and not record_authors_cut(r, cited)
        for r in answer.records
    )


def titles_settle(*, found_by_id: bool, confident_answer: bool, wants_versions: bool) -> bool:
    """Whether the title answers read so far (in plan order) settle an entry that is not a
    mismatched identifier's (pure): its paper was found with confidence, by an identifier or
    by one of them, and no warning is left that another version could explain (its verdict's
    ``wants_versions``). A mismatched identifier's entry settles when its own paper was found,
    whichever tier holds it."""
    return (found_by_id or confident_answer) and not wants_versions
