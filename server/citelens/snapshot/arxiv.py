"""The arXiv metadata snapshot (``arxiv-metadata-oai-snapshot.json``): JSON Lines, one
record per paper with its ``versions`` (the first one's date is the paper's year),
``authors_parsed`` and LaTeX in titles and names."""

from __future__ import annotations

import email.utils
import json
from collections.abc import Iterator
from typing import Any

from citelens.core.identifiers import normalize_arxiv, normalize_doi
from citelens.core.latextext import latex_to_text
from citelens.core.source_names import Source
from citelens.snapshot.dump import Counts, Work, lines
from citelens.sources.records import PaperRecord


def _year(rec: dict[str, Any]) -> int | None:
    versions = rec.get("versions")
    if isinstance(versions, list) and versions and isinstance(versions[0], dict):
        try:
            when = email.utils.parsedate_to_datetime(str(versions[0].get("created") or ""))
            return when.year
        except (TypeError, ValueError, IndexError):
            pass
    aid = str(rec.get("id") or "")
    if len(aid) >= 4 and aid[:4].isdigit():  # 0704.0001: April 2007
        return 2000 + int(aid[:2]) if int(aid[:2]) < 91 else 1900 + int(aid[:2])
    return None


def _authors(rec: dict[str, Any]) -> list[str]:
    parsed = rec.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        out = []
        for p in parsed:
            if isinstance(p, list) and p:
                last, first = str(p[0]), str(p[1]) if len(p) > 1 else ""
                suffix = str(p[2]) if len(p) > 2 else ""
                out.append(latex_to_text(" ".join(x for x in (first, last, suffix) if x)))
        return out
    raw = str(rec.get("authors") or "")
    return [latex_to_text(a.strip()) for a in raw.replace(" and ", ", ").split(",") if a.strip()]


def to_record(rec: Any) -> PaperRecord | None:
    if not isinstance(rec, dict):
        return None
    aid = normalize_arxiv(str(rec.get("id") or ""))
    title = " ".join(latex_to_text(str(rec.get("title") or "")).split())
    if aid is None or not title:
        return None
    return PaperRecord(
        source=Source.ARXIV,
        title=title,
        authors=_authors(rec),
        year=_year(rec),
        venue=str(rec["journal-ref"]) if rec.get("journal-ref") else None,
        doi=normalize_doi(str(rec["doi"])) if rec.get("doi") else None,
        arxiv_id=aid,
        url=f"https://arxiv.org/abs/{aid}",
        abstract=" ".join(str(rec.get("abstract") or "").split()) or None,
        publication_types=["preprint"],
        publisher="arXiv",
        is_preprint=True,
    )


def read(path: str, counts: Counts) -> Iterator[Work]:
    for n, line in lines(path, counts):
        counts.read += 1
        try:
            data = json.loads(line)
            rec = to_record(data)
        except (ValueError, TypeError, AttributeError, KeyError, RecursionError):
            rec = None
        if rec is None:
            counts.bad(f"{path}:{n}")
            continue
        cats = str(data.get("categories") or "").lower().split()
        fields = frozenset([*cats, *(c.split(".")[0] for c in cats)])
        yield Work(rec, "preprint", fields, str(data.get("update_date") or "")[:10])
