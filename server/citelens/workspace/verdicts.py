"""The settled verdicts, by content hash: the one store of what verification decided.

An entry is identified by its text (``verify/identity.content_hash``): an edit inside it
(a fixed DOI) is a new entry with no verdict yet, and the same entry in two projects, or
read again after a restart of its document, has the one verdict. The store knows nothing
of editors, runs or files: the engine keeps what a run settles (``VerdictSettled``,
``RunEnded``) and forgets what is to be checked again; a reader asks :meth:`Verdicts.get`.
:attr:`Verdicts.generation` changes with every change, so what is derived from the
verdicts (the findings of a project's .bib) is kept while it stays the same.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Iterator, Mapping

from citelens.core.statuses import Status
from citelens.verify.status import Verification


class Verdicts(Mapping[str, Verification]):
    """Content hash -> the verdict settled for it (read as a mapping)."""

    def __init__(self) -> None:
        self._by_hash: dict[str, Verification] = {}
        #: Changes with every verdict kept or forgotten.
        self.generation = 0

    def __getitem__(self, chash: str) -> Verification:
        return self._by_hash[chash]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_hash)

    def __len__(self) -> int:
        return len(self._by_hash)

    def keep(self, chash: str, verdict: Verification) -> None:
        self._by_hash[chash] = verdict
        self.generation += 1

    def forget(self, hashes: Iterable[str] | None = None) -> None:
        """Forget every verdict (or those of ``hashes``): they are checked again."""
        if hashes is None:
            self._by_hash.clear()
        else:
            for h in hashes:
                self._by_hash.pop(h, None)
        self.generation += 1

    def unverified(self, hashes: Iterable[str]) -> list[str]:
        """The hashes, among the verdicts kept, of the UNVERIFIED verdicts of the entries
        ``hashes`` name (a verdict carries its entry's content hash)."""
        wanted = set(hashes)
        return [
            h for h, v in self._by_hash.items() if v.content_hash in wanted and v.status is Status.UNVERIFIED
        ]

    def fresh(self, chash: str, max_age_days: float, now: float) -> bool:
        """Whether ``chash`` has a verdict younger than ``max_age_days`` at ``now`` (seconds
        since the epoch): an older one is checked again (the paper may have been retracted
        since). A verdict with no readable time is fresh."""
        v = self._by_hash.get(chash)
        if v is None:
            return False
        try:
            when = datetime.datetime.fromisoformat(v.checked_at).timestamp()
        except (TypeError, ValueError):
            return True
        return now - when <= max_age_days * 86400.0
