"""A chair's word: references a person has cleared, read by later runs of a venue.

The file (``--cleared FILE``, by default ``OUT/cleared.txt``) holds one cleared reference a
line, by its content's fingerprint, with anything after a ``#`` for the reader::

    3f9a0c12b4e5d6a7  # smith2021 "A Study of Things" (paper-0042), checked by A. Chair 2026-11-27

The fingerprint is the entry's title, authors' last names and DOI, normalised (accents,
case, braces and punctuation do not count: :func:`citelens.workspace.checked.fingerprint`,
16 hex digits here, as a venue holds many more references than a paper). It survives a change
of citation style (a key, an abbreviated venue, a reordered or re-braced field) and the same
reference in another paper; a new title, author or DOI is a new reference, checked again.

A cleared reference is no longer counted or listed as a finding, in no class and in no
``--fail-on``; the paper's page lists it as cleared and the run says how many it cleared.
Each finding's page shows the line to add to clear it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citelens.documents.bibtex.view import entry_view
from citelens.documents.read import read_file
from citelens.venue.evidence import FABRICATED, RETRACTED, UNCHECKED, WRONG_METADATA
from citelens.venue.records import Cleared, Finding, PaperLine, Retraction
from citelens.workspace.check import UsageError
from citelens.workspace.checked import fingerprint
from citelens.workspace.report import SEVERITY_COUNT

if TYPE_CHECKING:
    from citelens.workspace.check import CheckResult

DIGITS = 16
FILE = "cleared.txt"
_LINE = re.compile(r"^\s*([0-9a-f]{16})\b")


def read_cleared(path: Path) -> frozenset[str]:
    """The fingerprints a cleared file holds (none when there is no file). It is read as
    every input is (``documents/read.py``): a regular file of at most 256 MB; a device
    (``/dev/zero``), a FIFO or a bigger file is a :class:`UsageError` (exit 2) naming it,
    never a hang or a MemoryError."""
    if not path.exists():
        return frozenset()
    text, why = read_file(path)
    if text is None or (why is not None and not text):
        raise UsageError(f"--cleared {path}: not read: {why}")
    return frozenset(m.group(1) for line in text.splitlines() if (m := _LINE.match(line.casefold())))


def fingerprints(result: CheckResult) -> dict[str, str]:
    """Each entry's fingerprint by key (its definition in the first project that has it)."""
    out: dict[str, str] = {}
    for a in result.analyses:
        for key, e in a.first.items():
            if key not in out:
                out[key] = fingerprint(entry_view(e, a.first), DIGITS)
    for e in result.entries:  # entries read from a PDF belong to no project
        if e.key not in out:
            out[e.key] = fingerprint(entry_view(e), DIGITS)
    return out


def clear_line(fp: str, finding: Finding | Retraction, paper: str) -> str:
    """The line a chair adds to the cleared file to clear this finding."""
    title = str(finding.get("title") or "").replace("\n", " ")[:80]
    return f'{fp}  # {finding.get("key")} "{title}" ({paper}), checked by NAME on DATE'


def apply_cleared(
    row: PaperLine, diagnostics: list[dict[str, Any]] | None, cleared: frozenset[str]
) -> bool:
    """Take the cleared references out of a paper's summary line, in place: its findings,
    retractions, counts by class and, from its report's ``diagnostics``, its problems by
    severity (``--fail-on``). True when the line changed."""
    if not cleared:
        return False
    gone = [f for f in row.get("findings") or [] if f.get("fp") in cleared]
    gone_r = [t for t in row.get("retracted") or [] if t.get("fp") in cleared]
    if not gone and not gone_r:
        return False
    classes = dict(row.get("classes") or {})
    for f in gone:
        k = str(f.get("class"))
        classes[k] = max(0, int(classes.get(k, 0)) - 1)
    classes[RETRACTED] = max(0, int(classes.get(RETRACTED, 0)) - len(gone_r))
    row["classes"] = {k: int(classes.get(k, 0)) for k in (FABRICATED, WRONG_METADATA, RETRACTED, UNCHECKED)}
    row["likely_fabricated"] = row["classes"][FABRICATED]
    row["findings"] = [f for f in row.get("findings") or [] if f.get("fp") not in cleared]
    row["retracted"] = [t for t in row.get("retracted") or [] if t.get("fp") not in cleared]
    row["cleared"] = sorted(
        [
            *row.get("cleared", []),
            *(Cleared(key=x.get("key"), title=x.get("title", ""), fp=x.get("fp")) for x in [*gone, *gone_r]),
        ],
        key=lambda x: str(x.get("key")),
    )
    if diagnostics is not None:
        keys = {str(x.get("key")) for x in gone + gone_r}
        sev = dict.fromkeys(SEVERITY_COUNT.values(), 0)
        for d in diagnostics:
            if str(d.get("key")) not in keys and d.get("severity") in SEVERITY_COUNT:
                sev[SEVERITY_COUNT[str(d["severity"])]] += 1
        row["severity"] = sev
    return True
