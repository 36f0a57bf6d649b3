"""The settled verdicts, by content hash: the one store of what verification decided.

An entry is identified by its text (``verify/identity.content_hash``): an edit inside it
(a fixed DOI) is a new entry with no verdict yet, and the same entry in two projects, two
papers of a venue, or read again after a restart of its document, has the one verdict; two
papers' ``smith2020`` share one only when they say the same. The three drivers keep their
verdicts here: the editor's engine (``workspace/engine.py``: what a run settles,
``VerdictSettled`` and ``RunEnded``, forgotten when it is to be checked again), ``citelens
check`` and the venue (``workspace/check.run_check`` through :meth:`Verdicts.settle`: each
distinct content verified once, the venue's store bounded to the verdicts used last). A
verdict is read under the key of the entry asking (:meth:`Verdicts.of`,
``verify/verdict.for_entry``). The store knows nothing of editors, runs or files.
:attr:`Verdicts.generation` changes with every change, so what is derived from the verdicts
(the findings of a project's .bib) is kept while it stays the same.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence

from citelens.core.model import EntryView
from citelens.core.statuses import Status
from citelens.verify.identity import content_hash
from citelens.verify.status import Verification
from citelens.verify.verdict import for_entry

#: Verifies views (each named by its content hash) and returns a verdict per name.
Verify = Callable[[list[EntryView]], Awaitable[Mapping[str, Verification]]]


class Verdicts(Mapping[str, Verification]):
    """Content hash -> the verdict settled for it (read as a mapping).

    ``limit``: keep at most that many, the ones used longest ago forgotten first (a venue of
    100,000 references). ``under``: a store read through and never changed (the editor's,
    for the ``citelens.report`` command's check): what it holds is not verified again, what
    this one settles stays here."""

    def __init__(self, limit: int | None = None, under: Verdicts | None = None) -> None:
        self._by_hash: OrderedDict[str, Verification] = OrderedDict()
        self._limit = limit
        self._under = under
        #: Changes with every verdict kept or forgotten.
        self.generation = 0

    def __getitem__(self, chash: str) -> Verification:
        v = self._by_hash.get(chash)
        if v is not None:
            if self._limit is not None:
                self._by_hash.move_to_end(chash)
            return v
        if self._under is not None:
            return self._under[chash]
        raise KeyError(chash)

    def __contains__(self, chash: object) -> bool:
        return chash in self._by_hash or (self._under is not None and chash in self._under)

    def __iter__(self) -> Iterator[str]:
        if self._under is None:
            return iter(self._by_hash)
        return iter({**dict.fromkeys(self._under), **dict.fromkeys(self._by_hash)})

    def __len__(self) -> int:
        return sum(1 for _ in self) if self._under is not None else len(self._by_hash)

    def of(self, chash: str, key: str) -> Verification | None:
        """The verdict on the entry of ``key`` whose content hash is ``chash``, or None."""
        v = self.get(chash)
        return for_entry(v, key) if v is not None else None

    def keep(self, chash: str, verdict: Verification) -> None:
        self._by_hash[chash] = verdict
        if self._limit is not None:
            self._by_hash.move_to_end(chash)
            while len(self._by_hash) > self._limit:
                self._by_hash.popitem(last=False)
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
        v = self.get(chash)
        if v is None:
            return False
        try:
            when = datetime.datetime.fromisoformat(v.checked_at).timestamp()
        except (TypeError, ValueError):
            return True
        return now - when <= max_age_days * 86400.0

    async def settle(self, views: Sequence[EntryView], verify: Verify) -> list[Verification | None]:
        """The verdict on each of ``views`` (in their order; None: the verifier gave none):
        the one kept for its content, else verified, each distinct content once (asked under
        its content hash, so two entries of one key never share a verdict unless they say
        the same) and kept; each under its view's own key."""
        hashes = [content_hash(v) for v in views]
        todo: dict[str, EntryView] = {}
        for view, h in zip(views, hashes, strict=True):
            if h not in todo and h not in self:
                todo[h] = dataclasses.replace(view, key=h)
        got: Mapping[str, Verification] = await verify(list(todo.values())) if todo else {}
        for h in todo:
            v = got.get(h)
            if v is not None:
                self.keep(h, v)
        out: list[Verification | None] = []
        for view, h in zip(views, hashes, strict=True):
            v = got.get(h) or self.get(h)  # (a bounded store may have let it go already)
            out.append(for_entry(v, view.key) if v is not None else None)
        return out
