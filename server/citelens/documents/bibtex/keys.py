"""Citation keys for a new entry: the bibliography's own key style when it shows one.

Pure functions, no LSP. A style is a template over (first author's last name, year,
first significant title word); :func:`infer_style` picks the template that reproduces
most keys of a bibliography, :func:`new_key` renders it and makes it unique.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from citelens.core.accents import strip_accents

T = TypeVar("T")

#: The fallback when a bibliography shows no style: authorYEARfirstword (Google Scholar).
DEFAULT_STYLE = "authoryearword"
#: Title words a key never starts with.
STOPWORDS = frozenset(
    "a an the on of in for and to at by with from into is are as via towards toward "
    "about using what how why when do does can".split()
)


@dataclass(frozen=True, slots=True)
class KeyParts:
    """What a key is made of, ASCII only: ``Vaswani``, ``2017``, ``Attention``."""

    last: str
    year: str
    word: str


Template = Callable[[KeyParts], str]

STYLES: dict[str, Template] = {
    "authoryearword": lambda p: f"{p.last.lower()}{p.year}{p.word.lower()}",
    "AuthorYear": lambda p: f"{p.last}{p.year}",
    "authoryear": lambda p: f"{p.last.lower()}{p.year}",
    "Author:Year": lambda p: f"{p.last}:{p.year}",
    "author:year": lambda p: f"{p.last.lower()}:{p.year}",
    "Author_Year": lambda p: f"{p.last}_{p.year}",
    "author_word_year": lambda p: f"{p.last.lower()}_{p.word.lower()}_{p.year}",
    "AuthorYearWord": lambda p: f"{p.last}{p.year}{p.word}",
    "authorword_year": lambda p: f"{p.last.lower()}{p.word.lower()}{p.year}",
}


def ascii_word(text: str) -> str:
    """Letters and digits only, accents folded as everywhere else (:func:`strip_accents`):
    ``Gün Sirer`` -> ``GunSirer``, ``Jørgensen`` -> ``Jorgensen``, ``Weiß`` -> ``Weiss``."""
    return re.sub(r"[^A-Za-z0-9]", "", strip_accents(text))


def first_word(title: str) -> str:
    """The first title word that is not a stop word, ASCII (``Attention``)."""
    for raw in re.findall(r"[^\W_]+(?:['’][^\W_]+)?", title):
        word = ascii_word(raw)
        if word and word.lower() not in STOPWORDS:
            return word[:1].upper() + word[1:]
    return ""


def last_name_of(display: str) -> str:
    """The family name of ``Ashish Vaswani`` or ``Vaswani, Ashish``, as one ASCII word."""
    name = display.replace("{", "").replace("}", "").strip()
    if "," in name:
        last = name.split(",", 1)[0]
    else:
        words = name.split()
        last = words[-1] if words else ""
    return ascii_word(last)


def parts(last: str, year: int | str | None, title: str) -> KeyParts:
    lw = ascii_word(last)
    return KeyParts(lw[:1].upper() + lw[1:], str(year or ""), first_word(title))


def infer_style(samples: Iterable[tuple[str, KeyParts]]) -> str:
    """The template that reproduces most of ``samples`` (key, its entry's parts), when
    it explains at least two keys and a third of them; else :data:`DEFAULT_STYLE`."""
    counts = dict.fromkeys(STYLES, 0)
    total = 0
    for key, p in samples:
        if not p.last:
            continue
        total += 1
        bare = re.sub(r"(?<=\d)[a-z]$", "", key)  # smith2020b -> smith2020
        for name, template in STYLES.items():
            made = template(p)
            if made and made in (key, bare):
                counts[name] += 1
    best = max(counts, key=lambda n: counts[n])
    if counts[best] >= 2 and counts[best] * 3 >= total:
        return best
    return DEFAULT_STYLE


def new_key(p: KeyParts, style: str, taken: Iterable[str]) -> str:
    """The key of ``p`` in ``style``, unique among ``taken`` (compared ignoring case,
    as BibTeX does): ``smith2020``, else ``smith2020a``, ``smith2020b``, ..."""
    base = STYLES.get(style, STYLES[DEFAULT_STYLE])(p) or "ref"
    base = base.strip(":_") or "ref"
    used = {k.lower() for k in taken}
    if base.lower() not in used:
        return base
    for suffix in _suffixes():
        candidate = base + suffix
        if candidate.lower() not in used:
            return candidate
    raise AssertionError("unreachable")  # pragma: no cover


def _suffixes() -> Iterable[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    yield from letters
    n = 2
    while True:
        yield str(n)
        n += 1


def sample(items: Sequence[T], limit: int = 400) -> list[T]:
    """At most ``limit`` items spread over the whole list (a 68k-entry file stays cheap)."""
    if len(items) <= limit:
        return list(items)
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]
