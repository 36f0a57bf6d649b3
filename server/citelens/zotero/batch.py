"""``citelens check --fix`` / ``--diff`` on a .bib a Better BibTeX auto-export writes: its
entries are fixed in Zotero, never in the file (the next export would undo it).

``--fix`` writes each entry's field fix (at the chosen level: safe, or unsafe too) to its
Zotero item, as the editor's "Fix in Zotero" does once the writer accepts; ``--diff`` reads
the items and shows the changes, writing nothing. What cannot be written is said with the
reason, and the file is left as it is. After the writes, each file is watched for Better
BibTeX's export (``zoteroExportWaitS``) so the check that follows reads the exported text.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from citelens.core.settings import Settings
from citelens.fixes.context import CheckContext
from citelens.fixes.fix import Applicability
from citelens.verify.status import Verification
from citelens.workspace.check import CheckResult
from citelens.zotero.client import ZoteroAccess
from citelens.zotero.export import (
    Stamp,
    check_export,
    exported_message,
    not_exported_message,
    stamp,
    wait_for_export,
)
from citelens.zotero.items import Proposal
from citelens.zotero.plan import ZoteroFix, zotero_fix
from citelens.zotero.profile import AutoExport, auto_export, read_profile
from citelens.zotero.write import Outcome, Result, write_fix


def managed_files(result: CheckResult, settings: Settings) -> dict[str, AutoExport]:
    """The .bib files of a check that a Better BibTeX auto-export writes."""
    paths = list(dict.fromkeys(e.path for e in result.entries if e.path and e.path.lower().endswith(".bib")))
    if not paths:
        return {}
    profile = read_profile(settings)
    out = {}
    for p in paths:
        job = auto_export(settings, p, profile)
        if job is not None:
            out[p] = job
    return out


def leave_reason(path: str) -> str:
    return (
        f"{os.path.basename(path)} is written by a Better BibTeX auto-export: its entries are "
        "fixed in Zotero, not in the file (the next export would undo an edit)"
    )


@dataclass(slots=True)
class ZoteroRun:
    """What ``--fix`` did in Zotero."""

    written: list[tuple[ZoteroFix, Result]] = field(default_factory=list)
    exported: list[str] = field(default_factory=list)  # files Better BibTeX wrote again
    refused: int = 0


async def fix_in_zotero(
    result: CheckResult,
    settings: Settings,
    managed: Mapping[str, AutoExport],
    level: Applicability,
    *,
    diff: bool,
    log: Callable[[str], None],
    add_missing: bool = False,
) -> ZoteroRun:
    """Write (``diff``: show) the field fixes of the entries of the ``managed`` files
    (``add_missing``: the DOI and pages they lack too, as ``--add-missing``)."""
    run = ZoteroRun()
    if not managed:
        return run
    verdicts = {k: v for k, v in result.verifications.items() if isinstance(v, Verification)}
    ctx = CheckContext(result.store, verdicts, settings, [a.project for a in result.analyses])
    fixes: list[ZoteroFix] = []
    for entry in result.entries:
        if entry.path not in managed or (entry.path, entry.key) not in verdicts:
            continue
        zfix = zotero_fix(ctx, entry.path, entry.key, add_missing=add_missing)
        if zfix is None:
            continue
        if not zfix.safe and level is not Applicability.UNSAFE:
            name = os.path.basename(entry.path)
            log(f"{name}: {entry.key}: {zfix.title} is unsafe: --unsafe-fixes writes it")
            continue
        fixes.append(zfix)
    if not fixes:
        return run
    access = ZoteroAccess(settings)
    before: dict[str, Stamp | None] = {p: stamp(p) for p in managed}

    async def ask(proposal: Proposal, where: str, again: bool) -> bool:
        verb = "would write" if diff else "writing"
        log(f"{verb} to Zotero through {where}: {proposal.item.shown}: " + "; ".join(proposal.lines))
        return not diff

    async with access.session():
        for zfix in fixes:
            res = await write_fix(access, zfix, ask, managed.get(zfix.bib))
            name = os.path.basename(zfix.bib)
            if res.outcome is Outcome.WRITTEN:
                run.written.append((zfix, res))
                log(f"{name}: {res.message}")
            elif res.outcome is Outcome.CANCELLED and diff:
                continue
            elif res.outcome is Outcome.NOTHING:
                log(f"{name}: {zfix.key}: {res.message}")
            else:
                run.refused += 1
                log(f"{name}: {zfix.key}: not fixed: {res.message}")
    if run.written:
        await _round_trip(run, settings, access, before, log)
    return run


async def _round_trip(
    run: ZoteroRun,
    settings: Settings,
    access: ZoteroAccess,
    before: Mapping[str, Stamp | None],
    log: Callable[[str], None],
) -> None:
    """Wait for each written file's export, then say what it shows."""
    by_file: dict[str, list[tuple[ZoteroFix, Result]]] = {}
    for zfix, res in run.written:
        by_file.setdefault(zfix.bib, []).append((zfix, res))
    waits = [
        wait_for_export(p, before.get(p), settings.zotero_export_wait_s, asyncio.sleep, time.monotonic)
        for p in by_file
    ]
    texts = await asyncio.gather(*waits)
    async with access.session():
        for (path, written), text in zip(by_file.items(), texts, strict=True):
            if text is None:
                via = written[0][1].via
                log(not_exported_message(path, settings.zotero_export_wait_s, via))
                continue
            run.exported.append(path)
            for zfix, res in written:
                assert res.proposal is not None and res.item is not None
                shown = check_export(text, path, zfix.key, res.proposal.expect)
                new_key = None
                if not shown.present:
                    try:
                        new_key = await access.citation_key_of(res.item)
                    except Exception:  # the message without the new key
                        new_key = None
                log(exported_message(path, zfix.key, shown, new_key))
