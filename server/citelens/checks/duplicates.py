"""Entries (with different keys) that describe one paper.

A pair is reported when the entries share a DOI (case-insensitive), resolve to
the same Semantic Scholar paper, have nearly the same title (> 0.90), or share
first author family name and year with a similar title (> 0.80). "Part I" and
"Part II", a workshop and a journal version from different years, and entries
with different arXiv ids or DOIs are not duplicates.

Titles are never compared all against all: entries are blocked by their rarest
title words (a block of more than 2,000 titles is a word most of them share: it is skipped,
equal titles are paired anyway) and each block is scored with :func:`rapidfuzz.process.extract` (C loops),
each title only against those whose length lets them reach the cut-off, before the few
surviving pairs get the full :func:`title_similarity`. Content words and arXiv ids are
computed only for the entries a stage compares.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import NamedTuple

from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from citelens.core.codes import Code
from citelens.core.findings import Finding, FixData, Related, severity_of
from citelens.core.identifiers import ARXIV_DOI_PREFIX, arxiv_in_view, normalize_doi
from citelens.core.model import BibEntry, EntryView
from citelens.core.settings import Settings
from citelens.core.titles import normalize_title
from citelens.documents.bibtex.view import entry_view
from citelens.verify.match.authors import family_key
from citelens.verify.match.titles import (
    SEQUEL_TOKEN,
    STOPWORDS,
    is_typo,
    sequel_conflict,
    split_subtitle,
    stem,
    title_similarity,
)
from citelens.verify.match.venues import is_preprint_venue, same_venue
from citelens.verify.status import Status, Verification

TITLE_THRESHOLD = 0.90
AUTHOR_YEAR_TITLE_THRESHOLD = 0.80
_BLOCK_TOKENS = 3  # each title is indexed under its rarest words
#: A block is scored pair by pair (within a length window): one of more titles than this
#: is a word most titles share, not a rare one (30,000 titles "Paper ..." would take hours).
#: Equal titles are paired without blocks.
_BLOCK_MAX = 2000
_PREFILTER = 75.0  # fuzz.ratio cut-off before the full title comparison
_MAX_LENGTH_RATIO = (200 - _PREFILTER) / _PREFILTER  # 5/3: see _similar_in_block


@dataclass(frozen=True, slots=True)
class DuplicatePair:
    key_a: str  # the entry that comes first in the input
    key_b: str
    reason: str  # "doi" | "s2" | "title" | "author_year_title"
    score: float  # title similarity (1.0 for identifier matches)
    message: str

    def to_json(self) -> dict[str, object]:
        return {
            "key_a": self.key_a,
            "key_b": self.key_b,
            "reason": self.reason,
            "score": round(self.score, 4),
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> DuplicatePair:
        score = data.get("score", 0.0)
        return cls(
            str(data["key_a"]),
            str(data["key_b"]),
            str(data["reason"]),
            float(score) if isinstance(score, int | float | str) else 0.0,
            str(data.get("message", "")),
        )


class _Prepared(NamedTuple):
    """What every entry needs, one list per field (built field by field, in C loops where
    possible); content words and arXiv ids are computed for the few entries compared."""

    titles: list[str]  # normalised
    mains: list[str]  # normalised title before a subtitle separator ("" if none)
    first_authors: list[str]  # the first author's last family name word
    dois: list[str]


def _prepare(views: list[EntryView]) -> _Prepared:
    raw = [v.title or "" for v in views]
    mains = [normalize_title(p[0]) if p else "" for p in map(split_subtitle, raw)]
    families: dict[str, str] = {}  # family_key once per family name
    firsts = []
    for v in views:
        last = v.authors.first_last()  # reads only as much of the list as that needs
        first = families.get(last) if last else ""
        if first is None:
            family = family_key(last).split()
            first = families[last] = family[-1] if family else ""
        firsts.append(first or "")
    dois = [normalize_doi(v.doi) or "" for v in views]
    return _Prepared(list(map(normalize_title, raw)), mains, firsts, dois)


class _Stems(dict[str, str]):
    """A normalised title word's content word: its :func:`stem`, "" for a stopword.

    Each word is stemmed once (a library repeats its words), then looked up in C.
    """

    def __missing__(self, word: str) -> str:
        s = stem(word)
        s = self[word] = "" if s in STOPWORDS else s
        return s


def _content(title: str, stems: _Stems) -> frozenset[str]:
    """Stemmed content words of a normalised title: :func:`title_tokens` without stopwords
    (a big library's titles do not all fit normalize_title's cache: no second normalising)."""
    return frozenset(map(stems.__getitem__, title.split())).difference(("",))


def _distinct_publications(a: EntryView, doi_a: str, b: EntryView, doi_b: str) -> bool:
    """Signals that two similar-titled entries (with normalised DOIs) are different publications."""
    arxiv_a = arxiv_in_view(a)
    arxiv_b = arxiv_in_view(b) if arxiv_a else ""
    if arxiv_a and arxiv_b and arxiv_a != arxiv_b:
        return True
    if (
        doi_a
        and doi_b
        and doi_a != doi_b
        and not (doi_a.startswith(ARXIV_DOI_PREFIX) or doi_b.startswith(ARXIV_DOI_PREFIX))
    ):
        return True
    if a.year is not None and b.year is not None and a.year != b.year:
        va, vb = (a.venue or "").strip(), (b.venue or "").strip()
        if va and vb and not is_preprint_venue(va) and not is_preprint_venue(vb) and not same_venue(va, vb):
            return True  # e.g. a workshop paper and the later journal version
    return sequel_conflict(a.title or "", b.title or "") or different_works(a, b)


# --------------------------------------------------------------------------- different works

#: A title that names a notice about a paper, or material beside it: never that paper.
_NOTICE = re.compile(
    r"^\W*(?:erratum|errata|corrigendum|corrigenda|correction|retraction|retracted|"
    r"withdrawn|withdrawal|expression of concern|addendum|notice of retraction|"
    r"supplementary (?:material|information|data)|supplemental (?:material|information)|"
    r"supplement to|author correction|publisher correction|editorial expression)\b",
    re.IGNORECASE,
)
#: A subtitle that makes another work of the title ("X" and "X: A survey").
_GENRE_SUBTITLE = re.compile(
    r"^\W*(?:an? )?(?:survey|review|systematic review|tutorial|overview|primer|reply|"
    r"response|rejoinder|comment|commentary|discussion|erratum|correction|corrigendum|"
    r"retraction|supplementary material|supplement|book review|extended abstract|abstract|"
    r"poster|demo|demonstration)\W*$",
    re.IGNORECASE,
)
#: Titles many different pieces share: the same work only with the same first author and year.
_GENERIC_TITLES = frozenset(
    {
        "introduction",
        "editorial",
        "preface",
        "foreword",
        "conclusion",
        "conclusions",
        "discussion",
        "reply",
        "response",
        "commentary",
        "comment",
        "letter",
        "letter to the editor",
        "book review",
        "obituary",
        "in memoriam",
        "index",
        "erratum",
        "corrigendum",
        "correction",
        "abstracts",
        "contents",
        "editorial board",
        "editors note",
        "guest editorial",
        "acknowledgments",
        "acknowledgements",
        "announcement",
        "news",
        "overview",
        "summary",
        "perspective",
        "viewpoint",
        "introduction to the special issue",
    }
)
_NUMBER = re.compile(r"\w*\d\w*")


def different_works(a: EntryView, b: EntryView) -> bool:
    """Two entries whose titles say they are different works, however similar: a notice,
    an erratum or a supplement and anything else; "X" and "X: A survey"; a generic title
    ("Introduction", "Editorial") by different first authors or in different years; titles
    whose numbers differ ("2D" and "3D"); one content word swapped for an unrelated one
    ("square" and "triangular lattice")."""
    ta, tb = a.title or "", b.title or ""
    if bool(_NOTICE.search(ta)) != bool(_NOTICE.search(tb)):
        return True
    for one, other in ((ta, tb), (tb, ta)):
        parts = split_subtitle(one)
        if parts is not None and _GENRE_SUBTITLE.match(parts[1]) and split_subtitle(other) is None:
            return True
    na, nb = normalize_title(ta), normalize_title(tb)
    if na in _GENERIC_TITLES or nb in _GENERIC_TITLES:
        first_a = family_key(a.authors[0].last) if a.authors else ""
        first_b = family_key(b.authors[0].last) if b.authors else ""
        if not first_a or first_a != first_b or a.year is None or a.year != b.year:
            return True
    if set(_NUMBER.findall(na)) != set(_NUMBER.findall(nb)):
        return True
    return _word_swapped(na.split(), nb.split())


def _word_swapped(wa: list[str], wb: list[str]) -> bool:
    """Titles of the same words but one or two, each swapped for a word that is no
    misspelling or inflection of it."""
    if len(wa) != len(wb) or len(wa) < 3:
        return False
    changed = [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]
    if not changed or len(changed) > 2:
        return False
    return all(
        stem(x) != stem(y) and stem(x) not in STOPWORDS and stem(y) not in STOPWORDS and not is_typo(x, y)
        for x, y in changed
    )


def doi_error(a: EntryView, b: EntryView) -> bool:
    """Two entries sharing a DOI whose titles and authors or years contradict: a DOI pasted
    into the wrong entry (the verification says whose it is), not one paper twice."""
    if not a.title or not b.title or title_similarity(a.title, b.title) >= 0.6:
        return False
    first_a = family_key(a.authors[0].last) if a.authors else ""
    first_b = family_key(b.authors[0].last) if b.authors else ""
    authors_differ = bool(first_a and first_b and first_a != first_b)
    years_differ = a.year is not None and b.year is not None and a.year != b.year
    return authors_differ or years_differ


def _no_publication(v: EntryView, doi: str) -> bool:
    """An entry with no venue, DOI or arXiv id: a web page, software, documentation. Two
    of them are different documents when their years differ (versions, as the docs say of
    publications) or when one's title is only the other's main title ("airspeed velocity"
    and "Airspeed Velocity: A simple Python benchmarking tool ..." are a site and its tool's
    description, not one paper cited twice)."""
    return not (v.venue or "").strip() and not doi and not arxiv_in_view(v)


def _may_be_similar(a: frozenset[str], b: frozenset[str]) -> bool:
    """A cheap necessary condition for a title similarity above 0.80 (subtitles aside),
    from the titles' content words (:func:`_content`).

    More than two changed content words keep :func:`title_similarity` at 0.77 or less.
    """
    if not a or not b or abs(len(a) - len(b)) > 2:  # then more than two words changed
        return False
    only_a, only_b = a - b, b - a
    if all(SEQUEL_TOKEN.match(t) for t in only_a | only_b):
        return not (only_a or only_b)  # "Part I" / "Part II": never duplicates
    if max(len(only_a), len(only_b)) <= 2:
        return True
    if not only_a or not only_b or abs(len(only_a) - len(only_b)) > 2:
        return False
    need = max(len(only_a), len(only_b)) - 2  # words of only_a with a typo in only_b
    typos, left, words_b = 0, len(only_a), list(only_b)
    for x in only_a:  # stop as soon as the count is reached or out of reach
        left -= 1
        # a typo is at most two edits away: rapidfuzz finds those few words in one call
        near = process.extract(x, words_b, scorer=Levenshtein.distance, score_cutoff=2, limit=None)
        if any(is_typo(x, y) for y, _, _ in near):
            typos += 1
            if typos >= need:
                return True
        elif typos + left < need:
            return False
    return typos >= need


def _blocks(titles: list[str]) -> Iterable[list[int]]:
    words = [set(t.split()) for t in titles]
    df = Counter(chain.from_iterable(words))
    rank = {t: r for r, t in enumerate(sorted(df, key=lambda t: (df[t], t)))}  # rarest first
    index: dict[int, list[int]] = defaultdict(list)  # by the word's rank (ints sort in C)
    for i, w in enumerate(words):
        for r in sorted(map(rank.__getitem__, w - STOPWORDS))[:_BLOCK_TOKENS]:
            index[r].append(i)
    for members in index.values():
        if 1 < len(members) <= _BLOCK_MAX:
            yield members


def _title_candidates(titles: list[str], mains: list[str]) -> set[tuple[int, int]]:
    pairs: set[tuple[int, int]] = set()
    by_title: dict[str, list[int]] = defaultdict(list)
    for i, title in enumerate(titles):
        if title:
            by_title[title].append(i)
    for same in by_title.values():  # equal titles, whatever their blocks
        pairs.update((same[0], j) for j in same[1:])
    for i, main in enumerate(mains):  # "Title: Subtitle" vs "Title"
        for j in by_title.get(main, ()) if main else ():
            if i != j:
                pairs.add((min(i, j), max(i, j)))
    for members in _blocks(titles):
        _similar_in_block(titles, members, pairs)
    return pairs


def _similar_in_block(titles: list[str], members: list[int], pairs: set[tuple[int, int]]) -> None:
    """Adds the pairs of ``members`` whose titles score at least ``_PREFILTER`` (fuzz.ratio).

    The score is 100 * (1 - indel distance / summed length), and the distance is at least
    the length difference: 75 needs the longer title at most 5/3 as long as the shorter.
    Sorted by length, each title is scored (in one C loop) only against those in its window.
    """
    order = sorted(members, key=lambda i: len(titles[i]))
    block = [titles[i] for i in order]
    lengths = [len(t) for t in block]
    for r in range(len(order) - 1):
        end = bisect_right(lengths, _MAX_LENGTH_RATIO * lengths[r] + 2, r + 1)
        for _, _, c in process.extract(
            block[r], block[r + 1 : end], scorer=fuzz.ratio, score_cutoff=_PREFILTER, limit=None
        ):
            i, j = order[r], order[r + 1 + c]
            pairs.add((i, j) if i < j else (j, i))


Pairs = Mapping[tuple[int, int], DuplicatePair]


def find_duplicates(
    views: list[EntryView], resolved_ids: dict[str, str] | None = None, text_pairs: Pairs | None = None
) -> list[DuplicatePair]:
    """Pairs of entries (different keys) that describe the same paper, with the reason.

    ``resolved_ids`` maps entry keys to the Semantic Scholar paperId they
    resolved to. ``text_pairs``: :func:`text_duplicates` of ``views`` when the caller
    keeps them (the editor: verdicts arrive one by one, the entries stay). Never raises:
    entries that cannot be read are skipped.
    """
    try:
        pairs = dict(text_duplicates(views) if text_pairs is None else text_pairs)
        _same_s2_paper(views, pairs, resolved_ids or {})
        return [pairs[k] for k in sorted(pairs)]
    except Exception:  # a broken entry must not break the document
        return []


def text_duplicates(views: list[EntryView]) -> dict[tuple[int, int], DuplicatePair]:
    """The pairs the entries' text gives: the same DOI, similar titles, the same first author
    and year (by index into ``views``). Only the same Semantic Scholar paper is left to
    the verdicts: it takes the place of a title reason (not of a DOI)."""
    try:
        found = _Found(views, _prepare(views))
        _same_doi(found)
        _similar_titles(found)
        _same_author_year(found)
        return found.pairs
    except Exception:  # a broken entry must not break the document
        return {}


def doi_duplicates(views: list[EntryView]) -> dict[tuple[int, int], DuplicatePair]:
    """Only the pairs that share a DOI: a purely local comparison, for a check that verifies
    nothing (``citelens check --no-verify``) and compares no titles."""
    try:
        found = _Found(views, _prepare(views))
        _same_doi(found)
        return found.pairs
    except Exception:  # a broken entry must not break the document
        return {}


#: An entry's view when the caller keeps them (None: compute it).
ViewOf = Callable[[BibEntry], EntryView | None]
#: :func:`text_duplicates` of some views, kept by the caller.
TextPairsOf = Callable[[list[EntryView]], Pairs]


def duplicate_findings(
    defs: Mapping[str, BibEntry],
    results: Mapping[str, Verification],
    settings: Settings,
    view_of: ViewOf | None = None,
    text_pairs_of: TextPairsOf | None = None,
) -> list[Finding]:
    """``DUPLICATE_ENTRY`` on both entries of every pair (same DOI, same resolved S2
    paper, or the same title), each pointing at the other. ``view_of`` gives an entry's
    view when the caller keeps them (computing 68,000 views again costs seconds), and
    ``text_pairs_of`` the pairs their text gives (an editor publishing each verdict as it
    comes would compare every title again)."""
    sev = severity_of(settings, Code.DUPLICATE_ENTRY)
    if sev is None or len(defs) < 2:
        return []
    views = [(view_of(e) if view_of is not None else None) or entry_view(e, defs) for e in defs.values()]
    resolved = {
        k: v.match.s2_paper_id
        for k, v in results.items()
        if v.match is not None and v.match.s2_paper_id and v.status in (Status.VERIFIED, Status.PARTIAL)
    }
    out = []
    text_pairs = text_pairs_of(views) if text_pairs_of is not None else None
    for pair in find_duplicates(views, resolved, text_pairs):
        a, b = defs.get(pair.key_a), defs.get(pair.key_b)
        if a is None or b is None:
            continue
        for this, other in ((a, b), (b, a)):
            out.append(
                Finding(
                    this.path,
                    this.key_span,
                    Code.DUPLICATE_ENTRY,
                    f"{this.key} and {other.key} are the same paper: {pair.message}",
                    sev,
                    this.key,
                    related=[Related(other.path, other.key_span, f"duplicate entry {other.key}")],
                    data={
                        **FixData(
                            this.key, this.path, duplicate_of=other.key, duplicate_bib=other.path
                        ).to_json(),
                        "reason": pair.reason,
                    },
                )
            )
    return out


@dataclass(slots=True)
class _Found:
    """The pairs found so far, by (lower, higher) index into ``views``."""

    views: list[EntryView]
    prepared: _Prepared
    pairs: dict[tuple[int, int], DuplicatePair] = field(default_factory=dict)
    contents: dict[int, frozenset[str]] = field(default_factory=dict)
    stems: _Stems = field(default_factory=_Stems)

    def add(self, i: int, j: int, reason: str, score: float, message: str) -> None:
        a, b = (i, j) if i < j else (j, i)
        if self.views[a].key == self.views[b].key or (a, b) in self.pairs:
            return  # the same key twice is DUPLICATE_KEY, not ours
        self.pairs[(a, b)] = DuplicatePair(self.views[a].key, self.views[b].key, reason, score, message)

    def may_be_similar(self, i: int, j: int) -> bool:
        return _may_be_similar(self.content(i), self.content(j))

    def content(self, i: int) -> frozenset[str]:
        words = self.contents.get(i)
        if words is None:
            words = self.contents[i] = _content(self.prepared.titles[i], self.stems)
        return words

    def distinct(self, i: int, j: int) -> bool:
        dois, titles, mains = self.prepared.dois, self.prepared.titles, self.prepared.mains
        a, b = self.views[i], self.views[j]
        if _distinct_publications(a, dois[i], b, dois[j]):
            return True
        if not (_no_publication(a, dois[i]) and _no_publication(b, dois[j])):
            return False
        if a.year is not None and b.year is not None and a.year != b.year:
            return True  # the 2017 and the 2019 version of a page
        return titles[i] != titles[j] and (mains[i] == titles[j] or mains[j] == titles[i])


def _groups(values: Iterable[tuple[int, str]]) -> list[list[int]]:
    """Indexes sharing a non-empty value, for each value shared by more than one."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, value in values:
        if value:
            groups[value].append(i)
    return [g for g in groups.values() if len(g) > 1]


def _same_doi(f: _Found) -> None:
    views = f.views
    dois = f.prepared.dois
    for group in _groups(enumerate(dois)):
        for j in group[1:]:
            if doi_error(views[group[0]], views[j]):
                continue  # one DOI in the wrong entry: DOI_MISMATCH says which
            f.add(group[0], j, "doi", 1.0, f"same DOI as '{views[group[0]].key}' ({dois[j]})")


def _same_s2_paper(
    views: list[EntryView], pairs: dict[tuple[int, int], DuplicatePair], resolved: dict[str, str]
) -> None:
    """Entries resolved to (or naming) the same Semantic Scholar paper: the reason of a
    pair the text gave, unless that is the same DOI."""
    s2 = ((i, resolved.get(v.key) or v.s2_id or "") for i, v in enumerate(views))
    for group in _groups(s2):
        first = views[group[0]].key
        for j in group[1:]:
            a, b = (group[0], j) if group[0] < j else (j, group[0])
            known = pairs.get((a, b))
            if views[a].key == views[b].key or (known is not None and known.reason == "doi"):
                continue
            pairs[(a, b)] = DuplicatePair(
                views[a].key, views[b].key, "s2", 1.0, f"'{first}' is the same Semantic Scholar paper"
            )


def _similar_titles(f: _Found) -> None:
    views, titles, mains, firsts = f.views, f.prepared.titles, f.prepared.mains, f.prepared.first_authors
    for i, j in sorted(_title_candidates(titles, mains)):
        if (i, j) in f.pairs:
            continue
        if mains[i] != titles[j] and mains[j] != titles[i] and not f.may_be_similar(i, j):
            continue
        score = title_similarity(views[i].title, views[j].title)
        if score <= AUTHOR_YEAR_TITLE_THRESHOLD or f.distinct(i, j):
            continue
        same_author_year = (
            firsts[i]
            and views[i].year is not None
            and firsts[i] == firsts[j]
            and views[i].year == views[j].year
        )
        if score > TITLE_THRESHOLD:
            f.add(i, j, "title", score, f"same title as '{views[i].key}'")
        elif same_author_year:
            f.add(
                i,
                j,
                "author_year_title",
                score,
                f"same first author, year and a similar title as '{views[i].key}'",
            )


def _same_author_year(f: _Found) -> None:
    """Same first author and year: titles may differ more than fuzz.ratio lets through."""
    views, titles, firsts = f.views, f.prepared.titles, f.prepared.first_authors
    groups: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, (v, title, first) in enumerate(zip(views, titles, firsts, strict=True)):
        if first and v.year is not None and title:
            groups[(first, v.year)].append(i)
    for members in groups.values():
        if len(members) < 2 or len(members) > 200:
            continue
        # by number of content words: more than two apart cannot be similar (_may_be_similar)
        words = sorted(((len(c), i, c) for i in members for c in (f.content(i),)), key=lambda w: w[0])
        for x, (size_i, i, content_i) in enumerate(words):
            for size_j, j, content_j in words[x + 1 :]:
                if size_j - size_i > 2:
                    break
                a, b = (i, j) if i < j else (j, i)
                if (a, b) in f.pairs or not _may_be_similar(content_i, content_j):
                    continue
                score = title_similarity(views[a].title, views[b].title)
                if score > AUTHOR_YEAR_TITLE_THRESHOLD and not f.distinct(a, b):
                    f.add(
                        a,
                        b,
                        "author_year_title",
                        score,
                        f"same first author, year and a similar title as '{views[a].key}'",
                    )
