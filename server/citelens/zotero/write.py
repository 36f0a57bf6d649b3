"""Writing a fix to the Zotero item: find it by its citation key, read it, show the change
against its current values, write it after the writer accepts.

1. The item is found through Better BibTeX (``item.search`` by citation key): none or
   several is a refusal that says so (CiteLens never picks one of several).
2. Where it can be written: Zotero 10's local API (its answers carry ``Zotero-Server-ID``);
   Zotero 9 and older answer a write with 501, so the local API is asked with an empty,
   keyless PATCH first, which writes nothing; else the web API, with the user's own key
   (``zoteroApiKey``) and a library synced to zotero.org; else "cannot write here", with
   what to set up.
3. The item is read through the same API it is written through (versions differ between
   them), the change is computed against its current values (:func:`~.items.propose`) and
   shown; nothing is written unless the writer accepts.
4. The PATCH carries ``If-Unmodified-Since-Version``: on 412 the item is read again and the
   change shown again (never written blindly); 403 is a refusal (a read-only library, a key
   without write access) and nothing changes.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

from citelens.zotero.client import Answer, LocalAPI, Unreachable, ZoteroAccess, ZoteroError
from citelens.zotero.items import ItemRef, Proposal, propose
from citelens.zotero.plan import ZoteroFix
from citelens.zotero.profile import AutoExport

#: Reads and showings of one fix before CiteLens gives up on an item that keeps changing.
MAX_ROUNDS = 3
LOCAL = "Zotero's local API"
WEB = "zotero.org (the web API)"


class Outcome(StrEnum):
    WRITTEN = "written"
    NOTHING = "nothing to write"
    CANCELLED = "cancelled"
    REFUSED = "refused"
    CANNOT_WRITE = "cannot write here"
    NOT_FOUND = "no such item"
    AMBIGUOUS = "several items"
    UNREACHABLE = "Zotero unreachable"
    FAILED = "failed"
    STALE = "item kept changing"


@dataclass(frozen=True, slots=True)
class Result:
    outcome: Outcome
    message: str
    proposal: Proposal | None = None
    via: str = ""
    item: ItemRef | None = None

    @property
    def written(self) -> bool:
        return self.outcome is Outcome.WRITTEN


#: Shows a proposal to the writer (``where`` it is written, ``again`` after a 412) and
#: says whether they accept it.
Ask = Callable[[Proposal, str, bool], Awaitable[bool]]


def question(fix: ZoteroFix, proposal: Proposal, where: str, again: bool) -> str:
    """The change as the writer sees it before accepting: the fields first (one line each),
    then the item, where it is written, and what follows."""
    head = "The item changed in Zotero since CiteLens read it. " if again else ""
    lines = [
        f"{head}Fix in Zotero: {fix.key}: " + proposal.lines[0],
        *proposal.lines[1:],
        *(f"Left out: {n}" for n in proposal.notes),
        f"({proposal.item.shown}, through {where}; Better BibTeX then writes "
        f"{os.path.basename(fix.bib)} again.)",
    ]
    return "\n".join(lines)


def setup_advice(local: LocalAPI | None, ref: ItemRef | None, has_key: bool, local_writes: bool) -> str:
    """What to set up so CiteLens can write to Zotero here."""
    why = []
    if local is not None and not local.readable:
        why.append(local.why)
    elif not local_writes:
        why.append("Zotero's local API takes no writes (Zotero 9 or older)")
    if not has_key:
        why.append("no zotero.org key is set (zoteroApiKey)")
    elif ref is not None and not ref.synced:
        why.append("this library is not synced to zotero.org")
    return (
        "Cannot write to Zotero here: " + "; ".join(w for w in why if w) + ". Either use Zotero 10 "
        "with 'Allow other applications on this computer to communicate with Zotero' on (Zotero "
        "Settings → Advanced), or set citelens.zoteroApiKey (CITELENS_ZOTERO_API_KEY) to a "
        "zotero.org key with write access and sync the library. Nothing was written."
    )


def _item(a: Answer) -> dict[str, object] | None:
    if a.status == 200 and isinstance(a.body, dict) and isinstance(a.body.get("data"), dict):
        return a.body
    return None


async def write_fix(access: ZoteroAccess, fix: ZoteroFix, ask: Ask, job: AutoExport | None) -> Result:
    """Find, read, show, write (see the module's docstring); a :class:`Result` always."""
    try:
        return await _write(access, fix, ask, job)
    except Unreachable as exc:
        return Result(
            Outcome.UNREACHABLE, f"{exc}: start Zotero, or edit the .bib anyway. Nothing was written."
        )
    except ZoteroError as exc:
        return Result(Outcome.FAILED, f"{exc}. Nothing was written.")


async def _find(access: ZoteroAccess, key: str) -> ItemRef | Result:
    hits = await access.items_with_key(key)
    if not hits:
        return Result(
            Outcome.NOT_FOUND,
            f"No Zotero item has the citation key {key} (Better BibTeX found none): nothing was "
            "written. Is this .bib exported from this Zotero?",
        )
    refs = [ItemRef.from_uri(h.get("id"), h.get("library")) for h in hits]
    if len(hits) > 1:
        where = "; ".join(r.shown if r is not None else "?" for r in refs)
        return Result(
            Outcome.AMBIGUOUS,
            f"{len(hits)} Zotero items have the citation key {key} ({where}): CiteLens does not "
            "choose one. Give the others their own keys in Zotero. Nothing was written.",
        )
    ref = refs[0]
    if ref is None:
        return Result(
            Outcome.FAILED, f"Better BibTeX named the item of {key} in a way CiteLens does not read."
        )
    return ref


async def _local_writes(access: ZoteroAccess, local: LocalAPI, ref: ItemRef) -> bool:
    """Whether Zotero's local API takes writes: Zotero 10 says so with its server ID; an
    older one answers an empty keyless PATCH with 501 (nothing is written either way)."""
    if not local.readable:
        return False
    if local.server_id:
        return True
    probe = await access.local_probe_write(ref)
    return probe.status in (401, 428)


def _unread(read: Answer, ref: ItemRef, via: str) -> Result:
    """Why the item could not be read through ``via``."""
    if read.status == 404:
        where = "zotero.org (is the library synced?)" if via == WEB else "Zotero"
        return Result(Outcome.NOT_FOUND, f"{ref.shown} was not found in {where}: nothing was written.")
    if read.status == 403 and via == WEB:
        return Result(
            Outcome.REFUSED,
            f"zotero.org refused to read {ref.shown} (403): the key in zoteroApiKey has no access "
            "to this library. Nothing was written.",
            item=ref,
        )
    return Result(Outcome.FAILED, f"{via} answered {read.status} reading {ref.shown}. Nothing was written.")


async def _patch(access: ZoteroAccess, via: str, proposal: Proposal) -> Answer | None:
    """The PATCH (through the local API with the key the user allowed: asked for in
    Zotero's dialog when there is none, asked again once after a 401); None when the user
    denied the key."""
    ref = proposal.item
    if via == WEB:
        return await access.web_patch(ref, proposal.body, proposal.version)
    for _attempt in range(2):
        key = access.local_key or await access.local_authorize()
        if key is None:
            return None
        answer = await access.local_patch(ref, proposal.body, proposal.version, key)
        if answer.status != 401:
            return answer
        access.local_key = None  # a key used once, or revoked
    return answer


class _Flow:
    """One fix's way through Zotero: where it writes, and each round of read, show, write."""

    def __init__(self, access: ZoteroAccess, fix: ZoteroFix, ask: Ask, job: AutoExport | None) -> None:
        self.access, self.fix, self.ask, self.job = access, fix, ask, job

    async def run(self) -> Result:
        found = await _find(self.access, self.fix.key)
        if isinstance(found, Result):
            return found
        ref = found
        local = await self.access.local_api()
        local_writes = await _local_writes(self.access, local, ref)
        has_key = self.access.web_key is not None
        web_writes = has_key and ref.synced
        if not local_writes and not web_writes:
            return Result(Outcome.CANNOT_WRITE, setup_advice(local, ref, has_key, local_writes), item=ref)
        via = LOCAL if local_writes else WEB
        again = False
        for _round in range(MAX_ROUNDS):
            result = await self.round(ref, via, again)
            if isinstance(result, Result):
                return result
            if result == "switch":  # the local API took no write: zotero.org, shown again
                if not web_writes:
                    return Result(Outcome.CANNOT_WRITE, setup_advice(local, ref, has_key, False), item=ref)
                via, again = WEB, False  # the question names where it writes
                continue
            again = True
        return Result(
            Outcome.STALE,
            f"{ref.shown} kept changing in Zotero while CiteLens wrote it: nothing was written; try again.",
            item=ref,
        )

    async def round(self, ref: ItemRef, via: str, again: bool) -> Result | str:
        """Read, show, write once: a :class:`Result`, ``"again"`` (412: read and show again)
        or ``"switch"`` (the local API takes no writes)."""
        read = await (self.access.local_get(ref) if via == LOCAL else self.access.web_get(ref))
        item = _item(read)
        if item is None:
            return _unread(read, ref, via)
        proposal = propose(item, ref, self.fix.changes, self.job)
        if not proposal.changes:
            notes = f" ({'; '.join(proposal.notes)})" if proposal.notes else ""
            return Result(
                Outcome.NOTHING,
                f"Zotero's item already has these values{notes}: nothing to write. The .bib is older "
                "than the item (Better BibTeX has not exported it since).",
                proposal,
                via,
                ref,
            )
        if not await self.ask(proposal, via, again):
            return Result(Outcome.CANCELLED, "Not written to Zotero.", proposal, via, ref)
        answer = await _patch(self.access, via, proposal)
        if answer is None:
            msg = "CiteLens was not allowed in Zotero's dialog: nothing was written."
            return Result(Outcome.REFUSED, msg, proposal, via, ref)
        if answer.status in (200, 204):
            fields = ", ".join(c.field for c in proposal.changes)
            msg = f"Written to Zotero through {via}: {self.fix.key}: {fields}."
            return Result(Outcome.WRITTEN, msg, proposal, via, ref)
        if answer.status == 412:
            if via == LOCAL and "Server-ID" in answer.text:
                await self.access.local_api()  # another Zotero answers now: its ID, a new key
            return "again"
        if answer.status == 403:
            why = answer.text.strip()[:80] or "forbidden"
            self.access.log(f"Zotero: 403 from {via}: {why}")
            return Result(
                Outcome.REFUSED,
                f"Zotero refused the write (403): {ref.shown} is read-only for you. Nothing was changed.",
                proposal,
                via,
                ref,
            )
        if answer.status in (400, 404, 405, 501) and via == LOCAL:
            return "switch"
        return Result(
            Outcome.FAILED,
            f"{via} answered {answer.status} ({answer.text.strip()[:120]}): nothing was written.",
            proposal,
            via,
            ref,
        )


async def _write(access: ZoteroAccess, fix: ZoteroFix, ask: Ask, job: AutoExport | None) -> Result:
    return await _Flow(access, fix, ask, job).run()
