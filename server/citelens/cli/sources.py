"""``citelens sources [--check] [--json]``: each scholarly source's state.

For every host of the registry (``sources/transport.HOSTS``): whether its key is set (never
the key), the budget its rate headers last stated, its last refusal and when it ends, from
what earlier runs remembered in the cache folder (``sources.json``,
``sources/remembered.py``); with ``--check``, one cheap request that costs nothing per
source (the row's ``probe``), whose answer and rate headers update the picture.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citelens.core.settings import Settings
from citelens.sources import remembered
from citelens.sources.refusal import Budget, Out
from citelens.sources.transport import HOSTS, Host, Sources, base_url
from citelens.verify.cache import default_cache_dir


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "sources",
        help="each scholarly source's state: key set, budget left, last refusal, reset time",
    )
    p.add_argument(
        "--check", action="store_true", help="also send each source one request that costs nothing"
    )
    p.add_argument("--json", action="store_true", help="write the states as JSON")


@dataclass(slots=True)
class State:
    """What is known of one source."""

    row: Host
    url: str
    key: str  # "set", "not set", "" (takes none)
    mailto: bool = False  # a contact e-mail is set (a polite pool)
    budget: Budget | None = None
    out: Out | None = None  # its last refusal (active or not)
    other_key: bool = False  # the remembered state was learned with another key (or none)
    checked: str = ""  # what --check's request got


def _states(settings: Settings) -> list[State]:
    tags: dict[str, str] = {}
    out = []
    for row in HOSTS:
        key = ""
        if row.key is not None:
            key = "set" if row.key.value(settings) else "not set"
            tags[row.source] = remembered.key_tag(row.key.value(settings))
        out.append(State(row, base_url(settings, row.source), key, bool(settings.mailto)))
    entries = remembered.read(default_cache_dir(settings) / remembered.FILE_NAME)
    for st in out:
        e = entries.get(st.row.source)
        if e is None:
            continue
        st.other_key = e.key != tags.get(st.row.source, "none")
        st.out, st.budget = e.out, e.budget
    return out


async def _check(settings: Settings, states: list[State]) -> None:
    """One free request per source (its row's probe), through the client set: a refusal it
    meets is said, remembered and shown here like any other."""
    sources = Sources.from_settings(settings, state_dir=default_cache_dir(settings))
    try:

        async def probe(st: State) -> None:
            host = sources[st.row.source]
            if not st.row.probe:
                return
            result = await host.request("GET", st.row.probe, free=True, expects=st.row.expects)
            if result.response is not None:
                st.checked = f"answers (HTTP {result.response.status_code}, {result.elapsed_ms:.0f} ms)"
            else:
                st.checked = result.detail
            if host.budget is not None:
                st.budget = host.budget
            if host.out is not None:
                st.out, st.other_key = host.out, False

        await asyncio.gather(*(probe(st) for st in states))
    finally:
        await sources.aclose()


def _when(t: float, now: float) -> str:
    clock = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))
    left = t - now
    if left <= 0:
        return clock
    hours, minutes = int(left // 3600), int(left % 3600 // 60)
    return f"{clock} (in {hours} h {minutes} min)" if hours else f"{clock} (in {minutes} min)"


def _lines(st: State, now: float) -> list[str]:
    name = st.row.name
    out = [f"{name}: {st.url}"]
    if st.row.key is not None:
        hint = st.row.key.hint()
        out.append(f"  key: {st.key} ({hint.setting}; {hint.where}: {hint.buys})")
        if st.key == "not set":
            out.append(f"  without a key: {st.row.key.without}")
    if st.row.polite_rate is not None:
        polite, plain = st.row.polite_rate, st.row.rate
        out.append(
            f"  contact e-mail: {'set' if st.mailto else 'not set'} (`mailto` / `CITELENS_MAILTO`: "
            f"its polite pool, {1 / polite.min_interval_s:g} requests/s, {polite.max_concurrency} at "
            f"once; without: {1 / plain.min_interval_s:g}/s, {plain.max_concurrency} at once)"
        )
    if st.budget is not None:
        b = st.budget
        left = f"${b.remaining_usd:g}" if b.remaining_usd is not None else "?"
        limit = f" of ${b.limit_usd:g}" if b.limit_usd is not None else ""
        reset = f", resets {_when(b.resets_at, now)}" if b.resets_at else ""
        seen = time.strftime("%H:%M UTC", time.gmtime(b.seen_at))
        out.append(f"  budget: {left}{limit} left today, as its rate headers said at {seen}{reset}")
    o = st.out
    if o is not None:
        since = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(o.since))
        whose = " (with another key, or none: not this run's)" if st.other_key else ""
        out.append(f"  last refusal: {since}: {o.detail}{whose}")
        if o.active(now) and not st.other_key:
            until = f"until {_when(o.until, now)}" if o.until is not None else "for that run"
            out.append(f"  state: out {until}: {o.message}")
        elif st.other_key:
            out.append("  state: asked (that refusal was met with another key, or none)")
        else:
            out.append("  state: asked (that refusal has ended)")
    else:
        out.append("  state: asked")
    if st.checked:
        out.append(f"  checked now: {st.checked}")
    return out


def _json(st: State, now: float) -> dict[str, Any]:
    o, b = st.out, st.budget
    return {
        "source": str(st.row.source),
        "name": st.row.name,
        "url": st.url,
        "key": st.key or None,
        "budget": None
        if b is None
        else {"limit_usd": b.limit_usd, "remaining_usd": b.remaining_usd, "resets_at": b.resets_at,
              "seen_at": b.seen_at},
        "last_refusal": None
        if o is None
        else {"refusal": o.refusal.value, "detail": o.detail, "since": o.since, "until": o.until,
              "message": o.message, "another_key": st.other_key},
        "out": bool(o is not None and o.active(now) and not st.other_key),
        "checked": st.checked or None,
    }


def main(args: argparse.Namespace, settings: Settings) -> int:
    states = _states(settings)
    if args.check:
        asyncio.run(_check(settings, states))
    now = time.time()
    if args.json:
        print(json.dumps([_json(st, now) for st in states], indent=1))
        return 0
    where = default_cache_dir(settings) / remembered.FILE_NAME
    print(f"citelens sources (remembered in {where}{'' if Path(where).is_file() else ', none yet'})")
    for st in states:
        print("\n".join(_lines(st, now)))
    return 0
