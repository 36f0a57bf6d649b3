"""The Crossref public data file: a folder of ``N.json.gz`` files, each ``{"items": [work,
...]}`` with the REST API's work objects (so the API's own reader makes the record)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from citelens.snapshot.dump import Counts, Work, failed, open_text, read_whole
from citelens.sources import crossref


def files(folder: str) -> list[str]:
    out = []
    for dirpath, dirnames, names in os.walk(folder):
        dirnames.sort()
        out += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith((".json.gz", ".json"))]
    return out


def _date(work: dict[str, Any]) -> str:
    for k in ("indexed", "deposited", "created"):
        parts = (work.get(k) or {}).get("date-parts") if isinstance(work.get(k), dict) else None
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and len(parts[0]) == 3:
            try:
                y, m, d = (int(x) for x in parts[0])
                return f"{y:04d}-{m:02d}-{d:02d}"
            except (TypeError, ValueError):
                continue
    return ""


def read(folder: str, counts: Counts) -> Iterator[Work]:
    for path in files(folder):
        counts.files += 1
        try:
            with open_text(path) as fh:
                text = read_whole(fh, counts, path)
            if text is None:
                continue
            data = json.loads(text)
        except (OSError, EOFError) as exc:
            failed(counts, path, exc)
            continue
        except (ValueError, RecursionError) as exc:
            counts.bad(f"{path}: {type(exc).__name__}")
            continue
        items = data.get("items") if isinstance(data, dict) else None
        if not isinstance(items, list):
            counts.bad(f"{path}: no items")
            continue
        for i, work in enumerate(items):
            counts.read += 1
            try:
                rec = crossref.to_record(work) if isinstance(work, dict) else None
            except (ValueError, TypeError, AttributeError, KeyError):
                rec = None
            if rec is None:
                counts.bad(f"{path}: item {i}")
                continue
            subjects = frozenset(str(s).lower() for s in work.get("subject") or [] if isinstance(s, str))
            yield Work(rec, str(work.get("type") or ""), subjects, _date(work))
