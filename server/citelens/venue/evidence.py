"""What a chair needs to judge one reference of a venue, from a paper's JSON report.

Each entry falls in at most one class of the venue report:

- ``fabricated``: where the evidence says invented (``Verification.klass``, decided in
  ``verify/classes.py``): found nowhere for a kind the indexes cover with nothing pointing
  elsewhere, another paper's identifier on a title no source holds, authors badly wrong;
  an entry the indexes just do not hold (``not-found``) is not a finding;
- ``wrong-metadata``: a real paper cited with wrong details, a DOI that resolves nowhere
  among them (a PARTIAL verdict);
- ``unchecked``: a source could not be asked (UNVERIFIED): never a finding, counted apart;
- ``retracted``: a retraction notice on the cited paper (from the diagnostics).

The evidence of a finding: the entry as written (its text in the .bib, bounded), what each
source said, the record found (wrong metadata) or the closest record only when its title
is close, DOI links, and the 1-based line of the .bib.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from citelens.core.codes import Code
from citelens.core.statuses import Status
from citelens.sources.names import source_name
from citelens.venue.records import Finding, Heading, Record, Retraction, Said
from citelens.verify.classes import FABRICATED, WRONG_METADATA
from citelens.verify.match.titles import record_title_similarity

if TYPE_CHECKING:
    from citelens.workspace.check import CheckResult


__all__ = ["CLASSES", "FABRICATED", "RETRACTED", "UNCHECKED", "WRONG_METADATA"]

RETRACTED = "retracted"
UNCHECKED = "unchecked"
#: ``Verification.unverified`` of a reference read from a PDF that could not be read
#: (REFERENCE_NOT_READ): counted apart, never "a source could not be asked".
UNREAD = "unread"
CLASSES = (FABRICATED, WRONG_METADATA, RETRACTED, UNCHECKED)
#: The closest record is shown under a finding only from this title similarity up.
CLOSE = 0.75
WRITTEN_MAX = 1500
_SAID = {"found": "found it", "not_found": "has no such paper", "failed": "failed", "unavailable": "was down"}
_RANK = {"found": 3, "not_found": 2, "failed": 1, "unavailable": 0}


def entry_class(entry: dict[str, Any]) -> str | None:
    """The venue class of an entry of a paper's report (None: nothing to report)."""
    # a reference a PDF's reader could not read: apart
    if Status.named(entry.get("status")) is Status.UNVERIFIED:
        return None if entry.get("unverified") == UNREAD else UNCHECKED
    klass = entry.get("class")
    return klass if klass in (FABRICATED, WRONG_METADATA) else None


def sources_said(entry: dict[str, Any]) -> list[Said]:
    """Each source asked, once, with its best answer for this entry."""
    best: dict[str, str] = {}
    for a in entry.get("audit") or []:
        src, outcome = str(a.get("source") or ""), str(a.get("outcome") or "")
        if src and outcome in _RANK and _RANK[outcome] > _RANK.get(best.get(src, ""), -1):
            best[src] = outcome
    return [{"source": source_name(s), "said": _SAID[o]} for s, o in sorted(best.items())]


def _record(r: dict[str, Any]) -> Record:
    authors = [str(a) for a in r.get("authors") or []]
    return {
        "title": r.get("title") or "",
        "authors": ", ".join(authors[:4]) + (" et al." if len(authors) > 4 else ""),
        "year": r.get("year"),
        "venue": r.get("venue") or "",
        "doi": r.get("doi") or "",
        "source": r.get("source") or "",
    }


def evidence(
    entry: dict[str, Any], klass: str, written: dict[str, str], text: str, heading: str
) -> Finding:
    """One finding's evidence (plain JSON: it goes into summary.jsonl and crosses processes)."""
    line = entry.get("line")
    out: Finding = {
        "key": entry.get("key"),
        "class": klass,
        "status": entry.get("status"),
        "title": heading,
        "summary": entry.get("summary"),
        "file": entry.get("file"),
        "line": int(line) + 1 if isinstance(line, int) else None,  # 1-based, as editors count
        "written": text[:WRITTEN_MAX] + ("…" if len(text) > WRITTEN_MAX else ""),
        "fields": written,
        "sources": sources_said(entry),
        "discrepancies": [str(d.get("message")) for d in entry.get("discrepancies") or []][:6],
    }
    if entry.get("source") == "pdf":  # read from a PDF: the reference as printed, and its page
        raw = str(entry.get("raw") or text)
        out["line"], out["page"], out["source"] = None, entry.get("page"), "pdf"
        out["written"] = raw[:WRITTEN_MAX] + ("…" if len(raw) > WRITTEN_MAX else "")
    match = entry.get("match")
    if isinstance(match, dict):
        out["match"] = _record(match)
    cands = [c for c in entry.get("candidates") or [] if isinstance(c, dict)]
    if cands and heading:
        score = record_title_similarity(heading, str(cands[0].get("title") or ""))
        if score >= CLOSE:  # an unrelated candidate is no evidence
            out["closest"] = {**_record(cands[0]), "similarity": round(score, 2)}
    return out


def retractions(report: dict[str, Any]) -> list[Retraction]:
    return [
        {
            "key": d.get("key"),
            "message": d.get("message"),
            "line": (d.get("range") or {}).get("start", {}).get("line", -1) + 1,
            "file": d.get("file"),
            "url": d.get("noticeUrl"),
        }
        for d in report.get("diagnostics") or []
        if d.get("code") == Code.RETRACTED
    ]


_TITLE = re.compile(r"\\title\s*(?:\[[^\]]*\])?\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_AUTHOR = re.compile(r"\\author\s*(?:\[[^\]]*\])?\s*\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}")
_MD_TITLE = re.compile(r"^title:\s*[\"']?(.+?)[\"']?\s*$", re.M)
_MACRO = re.compile(r"\\[A-Za-z]+\*?(\[[^\]]*\])?|[{}~]|\\\\")


def _plain(tex: str, limit: int = 300) -> str:
    return " ".join(_MACRO.sub(" ", tex).split())[:limit]


def paper_heading(result: CheckResult) -> Heading:
    """The paper's own title and authors, as its sources give them (``\\title``, ``\\author``,
    a Markdown front matter's ``title:``): a chair searches papers by these, not folders."""
    for a in result.analyses:
        for path in sorted(a.sources):
            text = result.store.text(path) or ""
            m = _TITLE.search(text)
            if m:
                au = _AUTHOR.search(text)
                authors = _plain(au.group(1).replace("\\and", ","), 300).replace(" ,", ",") if au else ""
                return {"title": _plain(m.group(1)), "authors": authors}
            m = _MD_TITLE.search(text[:4000])
            if m:
                return {"title": _plain(m.group(1)), "authors": ""}
    return {}


def written_entries(result: CheckResult) -> dict[str, tuple[str, dict[str, str]]]:
    """Each entry's text as written in its .bib (bounded) and its main fields."""
    out = {}
    for e in result.entries:
        try:
            text = result.store.slice(e.path, e.span.start, min(e.span.end, e.span.start + WRITTEN_MAX + 1))
        except (OSError, ValueError, TypeError):
            text = ""
        fields = {
            n: " ".join(v.replace("{", "").replace("}", "").split())[:300]
            for n in ("title", "author", "year", "journal", "booktitle", "doi")
            if (v := e.get(n))
        }
        out[e.key] = (text, fields)
    return out
