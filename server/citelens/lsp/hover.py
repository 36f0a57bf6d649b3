"""Markdown for hovers: the entry, its verification, and links to the paper."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from citelens.core.model import BibEntry, EntryView
from citelens.core.normalize import source_name

if TYPE_CHECKING:
    from citelens.sources.records import PaperRecord
    from citelens.verify.status import Verification

_STATUS_MARK = {
    "VERIFIED": "✅ Verified",
    "PARTIAL": "⚠️ Partially verified",
    "DOI_MISMATCH": "❌ Identifier points to another paper",
    "NOT_FOUND": "❌ Not found in any source",
    "UNVERIFIED": "❔ Not verified",
    "SKIPPED": "➖ Not checked",
}


_SPECIAL = re.compile(r"[\\`*\[\]<>|]|(?<!\w)_|_(?!\w)")


def _escape(text: str) -> str:
    """Escape Markdown syntax; an underscore inside a word (s2_batch) is left alone, as
    CommonMark reads it literally and some clients (Neovim) show the backslash."""
    return _SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def _people(names: list[str], limit: int = 6) -> str:
    if len(names) > limit:
        return ", ".join(names[:limit]) + f", … ({len(names)} authors)"
    return ", ".join(names)


def _links(doi: str | None, arxiv: str | None, url: str | None = None,
           s2: str | None = None) -> list[str]:
    out = []
    if doi:
        out.append(f"DOI [{_escape(doi)}](https://doi.org/{doi})")
    if arxiv:
        out.append(f"arXiv [{_escape(arxiv)}](https://arxiv.org/abs/{arxiv})")
    if s2:
        out.append(f"[Semantic Scholar](https://www.semanticscholar.org/paper/{s2})")
    if url and not out:
        out.append(f"[link]({url})")
    return out


def entry_section(entry: BibEntry, view: EntryView | None, line: int | None) -> str:
    lines: list[str] = []
    if view is not None:
        title = view.title or "(no title)"
        lines.append(f"**{_escape(title)}**")
        names = [" ".join(p for p in (n.first, n.von, n.last) if p) for n in view.authors]
        if view.authors_truncated:
            names.append("others")
        if names:
            lines.append(_escape(_people(names)))
        meta = " · ".join(str(x) for x in (view.year, view.venue) if x)
        if meta:
            lines.append(_escape(meta))
        links = _links(view.doi, view.arxiv_id, view.url)
        if links:
            lines.append(" · ".join(links))
    where = os.path.basename(entry.path) + (f":{line + 1}" if line is not None else "")
    lines.append(f"`@{entry.entry_type}{{{entry.key}}}` in {_escape(where)}")
    return "  \n".join(lines)


def _record_line(r: PaperRecord) -> str:
    parts = [f"*{_escape(r.title)}*"]
    if r.authors:
        parts.append(_escape(_people(r.authors, 4)))
    meta = " · ".join(str(x) for x in (r.year, r.venue) if x)
    if meta:
        parts.append(_escape(meta))
    links = _links(r.doi, r.arxiv_id, r.url, r.s2_paper_id)
    if links:
        parts.append(" · ".join(links))
    return "  \n".join(parts)




def verification_section(v: Verification | None, pending: bool = False) -> str:
    if v is None:
        return "_Verification: in progress…_" if pending else ""
    status = v.status.name
    lines = [f"**{_STATUS_MARK.get(status, status)}** — {_escape(v.summary)}"]
    if v.match is not None:
        source = source_name(v.match.source)
        if status == "DOI_MISMATCH":
            lines.append(f"The identifier resolves, in {source}, to: " + _record_line(v.match))
        else:
            lines.append(f"Matched in {source}: " + _record_line(v.match))
    details = []
    if v.score:
        details.append(f"title match {v.score:.2f}")
    if v.method:
        details.append(f"method `{v.method}`")
    if v.checked_at:
        details.append(f"checked {v.checked_at[:16].replace('T', ' ')} UTC")
    if details:
        lines.append(" · ".join(details))
    for d in v.discrepancies:
        lines.append(f"- {_escape(d.message)}")
    if v.candidates and status == "NOT_FOUND":
        lines.append("Close real papers:")
        lines.extend(f"- {_escape(c.title)} ({c.year or 'n.d.'})" for c in v.candidates[:3])
    if v.audit:
        tiers = ", ".join(
            f"`{a.method}: {a.outcome}`" + (" (cached)" if a.cached else "") for a in v.audit
        )
        lines.append(f"Tiers tried: {tiers}")
    return "  \n".join(lines)
