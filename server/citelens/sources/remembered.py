"""What the sources said in earlier runs: ``sources.json`` in the cache folder.

A source whose daily budget is spent stays out until its reset: the next run (the CLI again,
the editor reopened) reads that here and does not spend a request, or a minute, learning it
again. The file also keeps each source's last refusal and the budget its rate headers last
stated, for ``citelens sources``. It holds no secret: which key a state belongs to is a
short hash of the key (:func:`key_tag`), so a state learned without a key does not stop a
run with one, and the messages and details were scrubbed of keys before they got here.

JSON text only, read as data (a damaged or foreign file is ignored, and rewritten on the
next refusal); written whole to a temporary file and moved into place.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citelens.sources.refusal import Budget, Out, Refusal

FILE_NAME = "sources.json"
VERSION = 1
#: Refusals remembered for the next run (they name their end: a budget's reset, a long wait).
CARRIED = frozenset({Refusal.BUDGET, Refusal.WAIT})


def key_tag(key: str | None) -> str:
    """Which key a state belongs to, without the key: "none", or 12 hex digits of a hash."""
    if not key:
        return "none"
    return hashlib.sha256(f"citelens-source-state:{key}".encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Entry:
    """What the file says of one source."""

    source: str
    key: str  # key_tag of the key it was learned with
    out: Out | None  # its last refusal (active or not)
    budget: Budget | None  # the budget its rate headers last stated


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _out(source: str, data: Any) -> Out | None:
    if not isinstance(data, dict):
        return None
    try:
        refusal = Refusal(str(data.get("refusal")))
    except ValueError:
        return None
    since = _num(data.get("since"))
    if since is None:
        return None
    return Out(
        source,
        refusal,
        str(data.get("detail") or "")[:300],
        since,
        _num(data.get("until")),
        bool(data.get("keyed")),
        str(data.get("message") or "")[:600],
        True,
    )


def _budget(data: Any) -> Budget | None:
    if not isinstance(data, dict) or _num(data.get("seen_at")) is None:
        return None
    return Budget(
        _num(data.get("limit_usd")),
        _num(data.get("remaining_usd")),
        _num(data.get("cost_usd")),
        _num(data.get("resets_at")),
        _num(data.get("seen_at")) or 0.0,
    )


def read(path: Path) -> dict[str, Entry]:
    """Every source's entry in the file at ``path`` (empty when it is missing or unreadable)."""
    try:
        if not path.is_file() or path.stat().st_size > 1 << 20:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return {}
    out: dict[str, Entry] = {}
    for source, item in (data.get("sources") or {}).items():
        if isinstance(source, str) and isinstance(item, dict):
            out[source] = Entry(source, str(item.get("key") or "none"), _out(source, item.get("out")),
                                _budget(item.get("budget")))
    return out


def carried(entry: Entry, key: str, now: float | None = None) -> Out | None:
    """The refusal of an earlier run that still stands for a run with this key tag."""
    out = entry.out
    if out is None or entry.key != key or out.refusal not in CARRIED or not out.active(now):
        return None
    return out


def _out_json(out: Out) -> dict[str, Any]:
    return {
        "refusal": out.refusal.value,
        "detail": out.detail,
        "since": round(out.since, 3),
        "until": None if out.until is None else round(out.until, 3),
        "keyed": out.keyed,
        "message": out.message,
    }


def _budget_json(b: Budget) -> dict[str, Any]:
    return {
        "limit_usd": b.limit_usd,
        "remaining_usd": b.remaining_usd,
        "cost_usd": b.cost_usd,
        "resets_at": b.resets_at,
        "seen_at": round(b.seen_at, 3),
    }


def write(
    path: Path,
    keys: Mapping[str, str],
    outs: Iterable[Out] = (),
    budgets: Mapping[str, Budget] | None = None,
) -> None:
    """Record ``outs`` (refusals) and ``budgets`` (last stated) for their sources, each with
    its key tag (``keys``); the other sources' entries are kept. Never raises."""
    with contextlib.suppress(OSError, ValueError):
        entries = read(path)
        items: dict[str, dict[str, Any]] = {}
        for source, e in entries.items():
            item: dict[str, Any] = {"key": e.key}
            if e.out is not None:
                item["out"] = _out_json(e.out)
            if e.budget is not None:
                item["budget"] = _budget_json(e.budget)
            items[source] = item
        for o in outs:
            item = items.setdefault(o.source, {})
            if item.get("key") != keys.get(o.source, "none"):
                item.clear()
            item["key"] = keys.get(o.source, "none")
            item["out"] = _out_json(o)
        for source, b in (budgets or {}).items():
            item = items.setdefault(source, {})
            if item.get("key") != keys.get(source, "none"):
                item.clear()
            item["key"] = keys.get(source, "none")
            item["budget"] = _budget_json(b)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".sources.", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"version": VERSION, "written": round(time.time(), 3), "sources": items}, fh,
                          indent=1, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
