"""Finding entries by key, title words or first author (``workspace/symbol``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from citelens.core.accents import strip_accents
from citelens.core.model import BibEntry
from citelens.core.titles import normalize_title
from citelens.documents.bibtex.names import split_names


@dataclass(frozen=True, slots=True)
class EntryMatch:
    entry: BibEntry
    title: str  # plain text, for the symbol's detail
    first_author: str
    score: int  # higher is better: key > author > title


def _first_author(entry: BibEntry) -> str:
    names, _ = split_names(entry.get("author") or entry.get("editor") or "")
    return names[0].last if names else ""


def _score(words: list[str], key: str, title_words: list[str], author: str) -> int:
    """0 when some query word matches nothing; else how strongly the entry matches."""
    score = 0
    for w in words:
        if w in key:
            score += 3 if key.startswith(w) else 2
        elif author and author.startswith(w):
            score += 2
        elif any(t.startswith(w) for t in title_words):
            score += 1
        else:
            return 0
    return score


#: Entries read field by field for one query at most (the rest only pass the cheap filter).
MAX_SCORED = 2000

_LATEX_NOISE = re.compile(r"\\[a-zA-Z]+\s*|\\.|[{}]")


def haystacks(text: str, entries: Sequence[BibEntry]) -> list[str]:
    """Each entry's source text, lower-cased, without braces and accent commands: a cheap
    filter (every query word must occur in it) before the entries are read field by field."""
    out = []
    for e in entries:
        raw = _LATEX_NOISE.sub("", text[e.span.start : e.span.end])
        out.append((raw if raw.isascii() else strip_accents(raw)).casefold())
    return out


def search_entries(
    entries: Iterable[BibEntry], query: str, limit: int = 200, hay: Sequence[str] | None = None
) -> list[EntryMatch]:
    """Entries whose key contains each query word, or whose first author's family name or
    a title word starts with it (case and accents ignored); best matches first.
    ``hay``: :func:`haystacks` of ``entries`` (same order), to skip most entries at once."""
    words = normalize_title(query).split()
    if not words:  # everything: the first entries by key, read only those
        first = sorted(entries, key=lambda e: e.key)[:limit]
        return [EntryMatch(e, e.get("title") or "", _first_author(e), 1) for e in first]
    plain_words = [strip_accents(w) for w in words]
    pool = list(entries)
    if hay is not None:
        pool = [e for e, h in zip(pool, hay, strict=True) if all(w in h for w in plain_words)]
    if len(pool) > MAX_SCORED:  # a short query ("a") matches nearly everything: keys first
        in_key = [all(w in e.key.casefold() for w in plain_words) for e in pool]
        pool = (
            [e for e, k in zip(pool, in_key, strict=True) if k]
            + [e for e, k in zip(pool, in_key, strict=True) if not k]
        )[:MAX_SCORED]
    out: list[EntryMatch] = []
    for e in pool:
        title = e.get("title") or ""
        author = _first_author(e)
        key = strip_accents(e.key).casefold()
        fam = strip_accents(normalize_title(author)).replace(" ", "")
        score = _score(plain_words, key, strip_accents(normalize_title(title)).split(), fam)
        if score == 0:
            continue
        out.append(EntryMatch(e, title, author, score))
    out.sort(key=lambda m: (-m.score, m.entry.key))
    return out[:limit]
