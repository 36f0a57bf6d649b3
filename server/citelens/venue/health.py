"""A venue run's own health: a network failure must never read as fabrication across a venue.

Fed each finished paper's entries in the venue's order of papers (``VenueOutput`` holds a
paper that finished before those listed above it), :class:`BatchHealth` counts,
per source, the distinct references (by content) it was asked about and those it failed
for (an error, a timeout, or marked down for the run), and watches the share of references
found nowhere:

- a source that failed for a large share of the references it was asked about, leaving them
  unchecked (:data:`FAILED_SHARE`, once it was asked about :data:`MIN_ASKED`), is an
  outage (a source that failed where the others decided, OpenAlex past its budget, is not:
  the report's header says that it was out);
- "not found" jumping against the run's own rate so far (the last :data:`WINDOW`
  references, repeats included, at :data:`JUMP_FACTOR` times the rate before them and
  :data:`JUMP_POINTS` above it) is a silent outage (an index answering "nothing" for
  everything).

Either is a problem of the run, not of the papers: the report says so at the top and the
run exits non-zero (``citelens check --venue``: exit 3). The same counts say which sources
answered and how many references could not be checked (run metadata).
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from citelens.core.severity import Severity
from citelens.core.statuses import Status
from citelens.sources.names import source_name
from citelens.venue.evidence import UNREAD
from citelens.workspace.report import FAIL_ON, SEVERITY_COUNT

if TYPE_CHECKING:
    from citelens.core.settings import Settings
    from citelens.workspace.pipeline import Pipeline

FAILED_SHARE = 0.2
MIN_ASKED = 20
WINDOW = 200
JUMP_FACTOR = 3.0
JUMP_POINTS = 0.10
_FAILED = {"failed", "unavailable"}


class BatchHealth:
    """The run's counts so far; :meth:`problems` are what the top of the report says."""

    def __init__(self, window: int = WINDOW, min_asked: int = MIN_ASKED) -> None:
        self.window_size = window
        self.min_asked = min_asked
        self.asked: Counter[str] = Counter()  # references each source was asked about
        self.failed: Counter[str] = Counter()  # ... and failed for
        self.answered: Counter[str] = Counter()  # ... and answered (found or not)
        self.references = 0
        self.not_found = 0
        self.unchecked = 0
        self.unread = 0  # references read from a PDF that could not be read
        self.local = 0  # references the snapshot answered, no request
        self.recent: deque[bool] = deque(maxlen=window)
        self.jump: str | None = None
        self.seen: set[str] = set()  # content hashes whose lookups are counted

    def add(self, entries: Iterable[dict[str, Any]]) -> None:
        for e in entries:
            status = Status.named(e.get("status"))  # (a reference not checked has none)
            if status is None:
                continue
            self.references += 1
            miss = status is Status.NOT_FOUND and not e.get("informational")
            self.not_found += miss
            unread = status is Status.UNVERIFIED and e.get("unverified") == UNREAD
            self.unchecked += status is Status.UNVERIFIED and not unread
            self.unread += unread
            self.local += str(e.get("method") or "").startswith("snapshot_")
            # every reference, repeats included: in a venue the later papers cite mostly what
            # earlier ones did, so among the *distinct* references the share of fabricated
            # ones (never a repeat) grows all along, which read as a jump at 100,000
            self._watch(miss)
            chash = str(e.get("content_hash") or "")
            if chash and chash in self.seen:
                continue  # the same reference in another paper: the sources were asked once
            if chash:
                self.seen.add(chash)
            sources: dict[str, bool] = {}
            for a in e.get("audit") or []:
                src = str(a.get("source") or "")
                if not src or a.get("cached"):
                    continue
                bad = a.get("outcome") in _FAILED
                sources[src] = sources.get(src, False) or not bad
            # a failure counts where it left the reference unchecked: a source that failed
            # while the others decided (OpenAlex past its budget) took nothing from the check,
            # and the report's header says it was out
            unchecked = status is Status.UNVERIFIED
            for src, ok in sources.items():
                self.asked[src] += 1
                if ok:
                    self.answered[src] += 1
                elif unchecked:
                    self.failed[src] += 1

    def _watch(self, miss: bool) -> None:
        if len(self.recent) == self.window_size and self.jump is None:
            before_n = self.references - 1 - self.window_size
            if before_n >= self.window_size:
                in_window = sum(self.recent)
                before = (self.not_found - miss - in_window) / before_n
                now = in_window / self.window_size
                if now >= JUMP_FACTOR * before and now >= before + JUMP_POINTS:
                    self.jump = (
                        f"references found nowhere jumped to {now:.0%} of the last {self.window_size} "
                        f"(from {before:.0%} of the {before_n} before them): a source may be answering "
                        "'nothing' for everything; those NOT_FOUND verdicts are suspect"
                    )
        self.recent.append(miss)

    def carry(self, earlier: object) -> None:
        """Start from the counts of the runs before this one (``run.json``'s ``health``):
        a resumed run's report describes every paper it holds, not only the last run's."""
        if not isinstance(earlier, dict):
            return
        self.references += _count(earlier.get("references"))
        self.not_found += _count(earlier.get("not_found"))
        self.unchecked += _count(earlier.get("unchecked"))
        self.local += _count(earlier.get("answered_locally"))
        sources = earlier.get("sources")
        for src, n in (sources.items() if isinstance(sources, dict) else ()):
            if isinstance(n, dict):
                self.asked[src] += _count(n.get("asked"))
                self.answered[src] += _count(n.get("answered"))
                self.failed[src] += _count(n.get("failed"))
        jump = earlier.get("jump")
        if isinstance(jump, str) and jump and self.jump is None:
            self.jump = jump  # the earlier run's silent outage: its verdicts are still in the report

    def problems(self) -> list[str]:
        out = []
        for src, n in sorted(self.asked.items()):
            bad = self.failed[src]
            if n >= self.min_asked and bad / n >= FAILED_SHARE:
                out.append(
                    f"{source_name(src)} failed for {bad} of the {n} references it was asked about "
                    f"({bad / n:.0%}): those references could not be checked; rerun when it is back"
                )
        if self.jump:
            out.append(self.jump)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "references": self.references,
            "not_found": self.not_found,
            "unchecked": self.unchecked,
            "unread": self.unread,
            "answered_locally": self.local,
            "sources": {
                s: {
                    "label": source_name(s),
                    "asked": n,
                    "answered": self.answered[s],
                    "failed": self.failed[s],
                }
                for s, n in sorted(self.asked.items())
            },
            "problems": self.problems(),
            "jump": self.jump,
        }


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def resumed_metadata(earlier: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """``run.json``'s metadata for a run that resumes an earlier one in the same OUT: the
    first run's start, and when each later run resumed it (the page's header describes the
    whole report, not the last run)."""
    started = earlier.get("started")
    if not isinstance(started, str) or not started:
        return meta
    before = earlier.get("resumed")
    resumed = [r for r in before if isinstance(r, str)] if isinstance(before, list) else []
    return {**meta, "started": started, "resumed": [*resumed, meta["started"]]}


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def run_metadata(settings: Settings | None, papers: int) -> dict[str, Any]:
    """What ``run.json`` starts with: when, how many papers, which snapshot (its date)."""
    meta: dict[str, Any] = {"started": utc_now(), "papers_total": papers, "papers_done": 0}
    if settings is not None and settings.snapshot:
        from citelens.snapshot.store import Snapshot, SnapshotError

        try:
            snap = Snapshot(settings.snapshot)
        except SnapshotError as exc:
            meta["snapshot"] = {"date": "", "sources": f"not readable: {exc}"}
        else:
            meta["snapshot"] = {
                "date": snap.info.date,
                "sources": snap.info.sources,
                "works": snap.info.works,
            }
            snap.close()
    if settings is not None and settings.offline:
        meta["offline"] = True
    return meta


#: ``--fail-on LEVEL``: the severities of a paper's summary counted at that level and above
#: (``citelens check``'s own :data:`~citelens.workspace.report.FAIL_ON`, by count name)
FAIL_LEVELS = {
    level: tuple(SEVERITY_COUNT[s.value] for s in Severity if s in severities)
    for level, severities in FAIL_ON.items()
}
UNHEALTHY = 3


def venue_exit(out_dir: str, run: Any, fail_on: str, log: Callable[[str], None]) -> int:
    """The exit status of a venue run: 3 when the run cannot vouch for its verdicts (a source
    down for much of it, "not found" jumping, a batch of papers that failed), else 1 when a
    paper of the venue (this run's or an earlier one's) has a problem at ``fail_on`` or above,
    as ``citelens check`` on that paper alone would (references a chair cleared aside), else 0."""
    problems = list(run.problems)
    if run.failed_batches:
        problems.append(f"{run.failed_batches} batch(es) of papers failed: rerun to check them")
    for p in problems:
        log(f"run health: {p}")
    if problems:
        return UNHEALTHY
    flagged = int(run.papers_with.get(fail_on, 0))
    if flagged:
        log(f"{flagged} papers have problems at --fail-on {fail_on} or above")
    return 1 if flagged else 0


def host_load(pipeline: Pipeline) -> Callable[[], str]:
    """For the progress line: the requests this process sent; each host's rate since the
    last line and the budget its rate headers last stated (OpenAlex's dollars left), or that
    it is out; and the slowest host (the one whose rate the requests it was sent take
    longest to go through: the run's bound)."""
    seen: dict[str, int] = {}
    since = [time.monotonic()]

    def load() -> str:
        hosts = pipeline.sources().hosts()
        sent = {name: h.requests for name, h in hosts.items() if h.requests}
        if not sent:
            return "0 requests"
        now = time.monotonic()
        spell = max(now - since[0], 1e-6)
        each = []
        for name, n in sent.items():
            h = hosts[name]
            rate = f"{(n - seen.get(name, 0)) / spell:.1f}/s"
            left = h.budget.remaining_usd if h.budget is not None else None
            state = "out" if not h.available else (f"${left:.2f} left" if left is not None else "")
            each.append(f"{source_name(name, name)} {n} ({rate}{', ' + state if state else ''})")
            seen[name] = n
        since[0] = now
        slow = max(sent, key=lambda n: sent[n] * hosts[n].rate.min_interval_s)
        busy = sent[slow] * hosts[slow].rate.min_interval_s
        return (
            f"{sum(sent.values())} requests, slowest host {source_name(slow, slow)} "
            f"({sent[slow]} requests, {busy:.0f} s at its rate); " + ", ".join(each)
        )

    return load
