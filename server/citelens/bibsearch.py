"""Finding entries by key, title words or first author (``workspace/symbol``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .model import BibEntry
from .parsing.latex_text import normalize_title, strip_accents
from .parsing.names import split_names


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


def search_entries(entries: Iterable[BibEntry], query: str, limit: int = 200) -> list[EntryMatch]:
    """Entries whose key contains each query word, or whose first author's family name or
    a title word starts with it (case and accents ignored); best matches first."""
    words = normalize_title(query).split()
    out: list[EntryMatch] = []
    for e in entries:
        title = e.get("title") or ""
        author = _first_author(e)
        if words:
            key = strip_accents(e.key).casefold()
            fam = normalize_title(author).replace(" ", "")
            score = _score(words, key, normalize_title(title).split(), fam)
            if score == 0:
                continue
        else:
            score = 1
        out.append(EntryMatch(e, title, author, score))
    out.sort(key=lambda m: (-m.score, m.entry.key))
    return out[:limit]
