"""Findings of one kind in one file are capped: the first :data:`MAX_PER_KIND` are listed,
and the last of them says how many more there are ("and 999,000 more like this in this
file"). A ``.bib`` of a million lone ``@`` lines made a million findings (0.8 KB each, in
the report and the editor); now a thousand, and a count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

MAX_PER_KIND = 1_000
#: What varies between findings of one kind: quoted names and numbers.
_VARYING = re.compile(r"'[^']*'|\"[^\"]*\"|\d+")


def kind_of(message: str) -> str:
    """A message's kind: the message with its quoted parts and numbers taken out."""
    return _VARYING.sub("_", message)


def capped(items: Iterable[T], message: Callable[[T], str], limit: int = MAX_PER_KIND) -> list[tuple[T, int]]:
    """``(item, more)`` for the first ``limit`` items of each kind (by ``message``), in
    order; ``more`` is how many of its kind were left out after it (0 but for the last one
    kept of a kind over the limit)."""
    items = list(items)
    total: dict[str, int] = {}
    for it in items:
        k = kind_of(message(it))
        total[k] = total.get(k, 0) + 1
    if all(n <= limit for n in total.values()):
        return [(it, 0) for it in items]
    seen: dict[str, int] = {}
    out: list[tuple[T, int]] = []
    for it in items:
        k = kind_of(message(it))
        n = seen.get(k, 0) + 1
        seen[k] = n
        if n < limit:
            out.append((it, 0))
        elif n == limit:
            out.append((it, total[k] - limit))
    return out


def more_text(message: str, more: int) -> str:
    """``message`` and the count of the findings like it that are not listed."""
    return f"{message} (and {more:,} more like this in this file, not listed)" if more else message
