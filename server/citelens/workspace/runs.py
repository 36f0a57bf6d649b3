"""The engine's verification runs: what the running run covers, the entries of each run
the engine asked for, the retry policy for outages, and the sources' refusals already said.

A run is asked for by the engine (:class:`~citelens.workspace.changes.Run`, in the changes
of an event) and carried out by a driver (the editor's background task); its verdicts come
back as events naming the run. The policy is here, the timers are the driver's: entries an
outage left UNVERIFIED are checked again after :data:`RETRY_FIRST_S`, doubling up to
:data:`RETRY_MAX_S` while the outage lasts (1, 2, 4 … 16 minutes), and nothing polls.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from citelens.core.model import EntryView
from citelens.verify.status import Verification
from citelens.workspace.changes import Retry, Run

#: Entries left UNVERIFIED by an outage are retried after this, doubling up to the maximum.
RETRY_FIRST_S = 60.0
RETRY_MAX_S = 960.0


class Runs:
    """The runs of one engine: at most one is current (a new one supersedes it)."""

    def __init__(self) -> None:
        #: Content hashes the current run covers (its verdicts are coming).
        self.checking: frozenset[str] = frozenset()
        self.current = 0  # the id of the current run (0: none)
        self._ids = itertools.count(1)
        self._views: dict[int, dict[str, EntryView]] = {}  # a live run's entries by key
        self._retry_s = RETRY_FIRST_S
        self._said: set[str] = set()  # the sources' refusals already said

    def start(self, views: Sequence[EntryView], hashes: frozenset[str], delay_s: float) -> Run:
        """A new run for ``views`` (one entry per key: the first), covering ``hashes``."""
        by_key: dict[str, EntryView] = {}
        for v in views:
            by_key.setdefault(v.key, v)
        run = Run(next(self._ids), tuple(by_key.values()), delay_s)
        self._views[run.id] = by_key
        self.current = run.id
        self.checking = hashes
        return run

    def view(self, run: int, key: str) -> EntryView | None:
        """The entry ``run`` checks under ``key`` (None: not one of its entries)."""
        return self._views.get(run, {}).get(key)

    def ended(self, run: int) -> None:
        """``run`` ended (finished, failed or cancelled): if it was the current one,
        nothing is being checked any more; a run superseded before does not end its successor."""
        self._views.pop(run, None)
        if run == self.current:
            self.superseded()

    def superseded(self) -> None:
        """The current run is cancelled now (new settings): nothing is being checked, and
        the next plan does not take its entries as covered."""
        self.current = 0
        self.checking = frozenset()

    def retry(self, verdicts: Iterable[Verification], offline: bool) -> Retry:
        """When to check again the entries a finished run left UNVERIFIED for a reason a
        later run may not have (a source failed, the deadline): after the current delay,
        which doubles while the outage lasts; none (and the delay reset) when there is none."""
        failed = frozenset(v.content_hash for v in verdicts if v.worth_retrying and not offline)
        if not failed:
            self._retry_s = RETRY_FIRST_S
            return Retry(None)
        after = self._retry_s
        self._retry_s = min(self._retry_s * 2, RETRY_MAX_S)
        return Retry(after, failed)

    def unsaid(self, outs: Iterable[tuple[str, str]]) -> list[str]:
        """The lines of the sources' refusals (``(what identifies it, its line)``) not said yet."""
        out = []
        for key, message in outs:
            if key not in self._said:
                self._said.add(key)
                out.append(message)
        return out
