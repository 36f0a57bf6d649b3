""" "Mark as checked" as fixes: the writer's word that an entry's finding was checked by hand
(``workspace/checked.py`` reads the mark; this writes it): a comment line before the entry,
for the finding's code or for every code, with the date and the entry's fingerprint."""

from __future__ import annotations

from citelens.core.findings import FixData
from citelens.fixes.context import FixContext
from citelens.fixes.fix import Fix, file_edits
from citelens.workspace.checked import ALL, MARKABLE, mark_edit


def mark_fixes(ctx: FixContext, path: str, code: str, data: object, today: str) -> list[Fix]:
    """ "Mark as checked (CODE)" and "Mark as checked (all codes)" for a finding about one
    entry (its ``data`` names it); none for a stale finding or another server's data."""
    fix = FixData.from_json(data)
    if fix is None or code not in MARKABLE:
        return []
    current = ctx.version(path)
    if current is not None and fix.version is not None and fix.version != current:
        return []  # the document changed since the finding was computed
    bib = ctx.bib(fix.bib)
    text = ctx.text(fix.bib)
    entry = next((e for e in bib.entries if e.key == fix.key), None) if bib is not None else None
    if entry is None or text is None:
        return []
    if not entry.path:
        entry.path = fix.bib
    if fix.status is not None:  # a verdict's finding: only while the entry is the one it was about
        v = ctx.verdict(entry)
        if v is None or v.status is not fix.status:
            return []
    view = ctx.view(entry)
    out = []
    for codes, title in (([code], f"Mark as checked ({code})"), ([ALL], "Mark as checked (all codes)")):
        edits = file_edits({fix.bib: [mark_edit(text, entry, codes, today, view)]})
        if edits:
            out.append(Fix(title, edits))
    return out
