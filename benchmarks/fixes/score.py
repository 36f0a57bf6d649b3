"""Scoring a fixed .bib against the truth, field by field (see ``generate.py``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from citelens.core.identifiers import normalize_doi
from citelens.core.latextext import latex_to_text
from citelens.core.model import BibEntry
from citelens.core.titles import normalize_title
from citelens.documents.bibtex.names import split_names
from citelens.verify.match.authors import family_key

FIELDS = ("title", "authors", "year", "venue", "pages", "doi", "note", "url")


def _venue(s: str) -> str:
    return re.sub(r"[\W_]+", " ", latex_to_text(s).casefold()).strip()


def _pages(s: str | None) -> tuple[str, ...]:
    return tuple(re.findall(r"[0-9a-z]+", (s or "").lower()))


def field_values(entry: BibEntry) -> dict[str, Any]:
    """What the scorer compares, read from an entry as written."""
    f = entry.fields
    authors, _ = split_names(f["author"].value) if "author" in f else ([], False)
    venue = next((f[n].value for n in ("journal", "booktitle", "journaltitle") if n in f), "")
    year = f["year"].value.strip() if "year" in f else ""
    return {
        "title": normalize_title(latex_to_text(f["title"].value)) if "title" in f else "",
        "authors": [family_key(n.last).split()[-1] if family_key(n.last) else "" for n in authors],
        "year": int(year) if year.isdigit() else None,
        "venue": _venue(venue),
        "pages": _pages(f["pages"].value) if "pages" in f else (),
        "doi": normalize_doi(f["doi"].value) if "doi" in f else None,
        "note": f["note"].value if "note" in f else None,
        "url": f["url"].value if "url" in f else None,
    }


def truth_values(t: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "title": normalize_title(t["title"]),
        "authors": [family_key(a.split()[-1]).split()[-1] for a in t["authors"]],
        "year": t["year"],
        "venue": _venue(t["venue"]),
        "pages": _pages(t["pages"]),
        "doi": normalize_doi(t["doi"]) if t["doi"] else None,
        "note": t["note"],
        "url": t["url"],
    }


def wrong_fields(have: Mapping[str, Any], truth: Mapping[str, Any]) -> list[str]:
    out = []
    for name in FIELDS:
        if name == "doi" and truth["doi"] is None:
            continue  # a paper with no DOI: any DOI added is checked by the pages rule below
        if have.get(name) != truth.get(name):
            out.append(name)
    return out


@dataclass
class Score:
    wrong: int = 0  # entries with an error before
    fixed: int = 0  # of those, fully right after
    correct: int = 0  # entries right before
    kept: int = 0  # of those, still fully right after
    worse: list[str] = field(default_factory=list)  # keys: a field right before, wrong after
    lost: list[str] = field(default_factory=list)  # keys missing after, or defined twice
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind -> [entries, fully right]
    left: list[str] = field(default_factory=list)  # wrong entries not fully right: why
    total: int = 0

    def line(self) -> str:
        return (
            f"wrong entries fully right after the fix: {self.fixed}/{self.wrong} "
            f"({100 * self.fixed / max(self.wrong, 1):.1f}%); correct entries kept right: "
            f"{self.kept}/{self.correct}; made worse: {len(self.worse)}/{self.total}; "
            f"lost or re-keyed: {len(self.lost)}"
        )


def score(
    items: list[dict[str, Any]], before: Mapping[str, BibEntry], after: Mapping[str, list[BibEntry]]
) -> Score:
    s = Score(total=len(items))
    for it in items:
        key, kind = it["key"], it["kind"]
        truth = truth_values(it["truth"])
        got = after.get(key, [])
        if len(got) != 1:
            s.lost.append(key)
            continue
        was = wrong_fields(field_values(before[key]), truth)
        now = wrong_fields(field_values(got[0]), truth)
        if set(now) - set(was):
            s.worse.append(f"{key} ({kind}): {', '.join(sorted(set(now) - set(was)))}")
        row = s.by_kind.setdefault(kind, [0, 0])
        row[0] += 1
        if kind == "correct":
            s.correct += 1
            s.kept += not now
            row[1] += not now
        else:
            s.wrong += 1
            s.fixed += not now
            row[1] += not now
            if now:
                s.left.append(f"{key} ({kind}): still wrong: {', '.join(now)}")
    return s
