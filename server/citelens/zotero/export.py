"""The round trip: after a write to Zotero, Better BibTeX's export is watched for, and the
entry is read again from the exported text.

Better BibTeX exports after its ``autoExportDelay`` (5 s by default) once Zotero has the
change; a change written through zotero.org reaches the desktop at Zotero's next sync. The
.bib is polled (size, modification time, content) until it changes and stays the same for
two reads; then the entry is looked up by its citation key: whether it shows the values
written (:func:`~.items.missing_in_export`), and, when the key is gone (Better BibTeX may
give an unpinned key a new one after a change of title, authors or year), the item's key now.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.read import read_file
from citelens.verify.status import Status, Verification
from citelens.zotero.items import missing_in_export

POLL_S = 0.25


@dataclass(frozen=True, slots=True)
class Stamp:
    size: int
    mtime_ns: int
    digest: str


def stamp(path: str) -> Stamp | None:
    """The file as it is now (None when it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    text, why = read_file(path)
    if text is None or why is not None:
        return None
    return Stamp(st.st_size, st.st_mtime_ns, hashlib.sha256(text.encode("utf-8")).hexdigest())


async def wait_for_export(
    path: str,
    before: Stamp | None,
    timeout_s: float,
    sleep: Callable[[float], Awaitable[None]],
    clock: Callable[[], float],
) -> str | None:
    """The text of ``path`` once it differs from ``before`` and two reads agree (an export
    written in pieces is not read half-way), or None after ``timeout_s``."""
    deadline = clock() + timeout_s
    seen: Stamp | None = None
    while clock() < deadline:
        now = stamp(path)
        if now is not None and before is not None and now.digest != before.digest:
            if seen == now:
                text, _why = read_file(path)
                return text
            seen = now
        await sleep(POLL_S)
    return None


@dataclass(frozen=True, slots=True)
class Exported:
    """The entry as the export wrote it."""

    present: bool  # the citation key is still in the file
    missing: tuple[str, ...]  # the fields written that the export does not show


def check_export(text: str, path: str, key: str, expect: Mapping[str, str]) -> Exported:
    bib = parse_bib(text, path)
    entry = next((e for e in bib.entries if e.key == key), None)
    if entry is None:
        return Exported(False, tuple(expect))
    fields = {name: f.value for name, f in entry.fields.items()}
    return Exported(True, tuple(missing_in_export(expect, fields)))


def exported_message(bib: str, key: str, shown: Exported, new_key: str | None) -> str:
    """What the editor (and ``citelens check``) says once the export has come back."""
    name = os.path.basename(bib)
    if not shown.present:
        if new_key and new_key != key:
            return (
                f"Written to Zotero and exported, but Better BibTeX gave the item the citation key "
                f"{new_key} (the key {key} was not pinned): your documents still cite {key}. Pin "
                f"the key in Zotero, or cite {new_key}."
            )
        return f"Written to Zotero and {name} was exported, but it has no entry {key} any more."
    if shown.missing:
        return (
            f"Written to Zotero; Better BibTeX exported {name}, but {key}'s "
            f"{', '.join(shown.missing)} do not show the change (another field of the item, or a "
            "postscript, decides them)."
        )
    return f"Fixed in Zotero, exported: {key} in {name}."


def not_exported_message(bib: str, seconds: float, via: str) -> str:
    later = " after Zotero syncs the change from zotero.org" if "web" in via else " after its export delay"
    return (
        f"Written to Zotero, not exported yet: {os.path.basename(bib)} has not changed in "
        f"{seconds:.0f} s (Better BibTeX writes it{later}; is the auto-export on?)."
    )


def verified_message(message: str, key: str, v: Verification | None) -> str:
    """``message`` once the exported entry is verified again (``v``: its verdict, None while
    the check runs)."""
    if v is None:
        return message + " (its verification is still running)"
    if v.status in (Status.DOI_MISMATCH, Status.NOT_FOUND):
        return f"Written to Zotero and exported, but {key} still has a problem: {v.summary}"
    return message.rstrip(".") + ", verified."
