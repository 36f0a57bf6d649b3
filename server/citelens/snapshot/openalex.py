"""The OpenAlex works snapshot: ``data/works/updated_date=YYYY-MM-DD/part_NNN.gz``, JSON
Lines of Work objects (the API's Work object, so the API's own reader makes the record)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

from citelens.snapshot.dump import Counts, Work, lines
from citelens.sources import openalex

_PARTITION = re.compile(r"updated_date=(\d{4}-\d{2}-\d{2})")


def files(folder: str) -> list[str]:
    """The part files under ``folder`` (the snapshot's root, ``data/works`` or one partition)."""
    out = []
    for dirpath, dirnames, names in os.walk(folder):
        dirnames.sort()
        for name in sorted(names):
            if name.startswith("part_") or name.endswith((".gz", ".jsonl", ".json")):
                if name != "manifest" and not name.startswith("."):
                    out.append(os.path.join(dirpath, name))
    return out


def _fields(work: dict[str, Any]) -> frozenset[str]:
    """The domains, fields and subfields of the work's topics (not the deprecated concepts,
    whose level-0 tags are loose: a genetics paper is "Computer science" there)."""
    names: set[str] = set()
    topics = [work.get("primary_topic"), *(work.get("topics") or [])]
    for t in topics:
        if isinstance(t, dict):
            for level in ("field", "domain", "subfield"):
                x = t.get(level)
                if isinstance(x, dict) and x.get("display_name"):
                    names.add(str(x["display_name"]).lower())
    return frozenset(names)


def read(folder: str, counts: Counts) -> Iterator[Work]:
    for path in files(folder):
        m = _PARTITION.search(path)
        date = m.group(1) if m else ""
        for n, line in lines(path, counts):
            counts.read += 1
            try:
                work = json.loads(line)
                rec = openalex.to_record(work)
            except (ValueError, TypeError, AttributeError, KeyError, RecursionError):
                rec = None
                work = None
            if rec is None or not isinstance(work, dict):
                counts.bad(f"{path}:{n}")
                continue
            updated = str(work.get("updated_date") or "")[:10]
            yield Work(rec, str(work.get("type") or ""), _fields(work), max(date, updated))
