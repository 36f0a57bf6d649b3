"""References read from a PDF: a reader's slip is never the author's fault.

A printed reference is one string; the fields read from it (``documents/pdf/fields.py``)
may be cut or shifted (a title broken at a page, a name split by a hyphen, a venue read
into the title). So the verdict the engine reached from those fields is checked once more
against the string as printed:

- candidates: the papers the engine found by the title read (its match, the match's other
  versions, its close candidates), then Crossref's answer to the whole string
  (``query.bibliographic``, :func:`citelens.sources.crossref.search_reference`, cached like
  every lookup);
- a candidate is **confirmed** when its title (or any version's; a subtitle may be left
  out), the family names of its first authors (the first alone when the print says "et
  al.") and its year (any version's) all appear in the printed string, compared as
  letters and digits only, accents folded;
- a confirmed paper turns NOT_FOUND (and an entry with no title read) into VERIFIED; a
  discrepancy whose true value (the paper's title, authors, year, venue, DOI, arXiv id) is
  in the printed string is the reader's slip: information, "as read from the PDF"; a
  verdict whose every warning is such a slip is VERIFIED;
- anything else stands: a title no candidate has, authors or a year the print gets wrong,
  a DOI that names another paper are the author's, as for a .bib.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Mapping

from citelens.core.accents import strip_accents
from citelens.core.findings import Severity
from citelens.core.settings import Settings
from citelens.sources import crossref
from citelens.sources.methods import Method
from citelens.sources.records import Outcome, PaperRecord
from citelens.sources.transport import Sources
from citelens.verify.cache import VerificationCache, lookup_key
from citelens.verify.status import AuditStep, Discrepancy, Status, Unverified, Verification

AS_READ = "as read from the PDF"
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_ET_AL = re.compile(r"\bet\.?\s*al\b|\bothers\b", re.IGNORECASE)
_SUFFIX = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
_PARTICLES = frozenset({"van", "von", "de", "der", "den", "da", "di", "del", "la", "le", "dos", "du"})


def compact(text: str) -> str:
    """Letters and digits only, lower case, accents folded: how a title or a name is looked
    for in a printed string (line breaks, hyphens, quotes and spacing do not count)."""
    return _NON_ALNUM.sub("", strip_accents(text).lower())


def family_of(display: str) -> str:
    """The family name of a source's display name ("Ashish Vaswani", "P. G. van Dokkum",
    "Vaswani, Ashish")."""
    name = display.strip()
    if "," in name:
        return name.split(",")[0].strip()
    words = [w for w in name.split() if w.lower() not in _SUFFIX]
    if not words:
        return ""
    out = [words[-1]]
    for w in reversed(words[:-1]):
        if w.lower() in _PARTICLES:
            out.insert(0, w)
        else:
            break
    return " ".join(out)


def _title_printed(record: PaperRecord, printed: str) -> bool:
    t = compact(record.title)
    if len(t) >= 8 and t in printed:
        return True
    main = record.title.split(":")[0]
    return main != record.title and len(compact(main)) >= 12 and compact(main) in printed


def _authors_printed(record: PaperRecord, raw: str, printed: str) -> bool:
    families = [compact(f) for f in map(family_of, record.authors) if compact(f)]
    if not families:
        return True  # nothing to compare: the title and the year decide
    cut = _ET_AL.search(raw)
    needed = families[: min(3, _names_before(raw[: cut.start()]))] if cut else families[:3]
    return all(f in printed for f in needed)


_INITIALS_ONLY = re.compile(r"(?:[A-Z][a-z]?\.?[\s-]*)+")


def _names_before(text: str) -> int:
    """How many names a printed author list holds before its "et al." (at least one):
    ``P. Virtanen, R. Gommers`` and ``Virtanen, P., Gommers, R.`` hold two."""
    parts = [p.strip() for p in re.split(r",|\band\b|&", text) if p.strip()]
    return max(1, sum(1 for p in parts if not _INITIALS_ONLY.fullmatch(p)))


def _year_printed(records: list[PaperRecord], raw: str) -> bool:
    years = {r.year for r in records if r.year}
    return not years or any(re.search(rf"(?<!\d){y}(?!\d)", raw) for y in years)


def confirms(raw: str, paper: list[PaperRecord]) -> bool:
    """Whether the printed string ``raw`` names the paper whose records are ``paper`` (its
    best record first): a title of it, its first authors' family names and a year of it."""
    if not paper:
        return False
    printed = compact(raw)
    return (
        any(_title_printed(r, printed) for r in paper)
        and _authors_printed(paper[0], raw, printed)
        and _year_printed(paper, raw)
    )


def _true_value_printed(d: Discrepancy, paper: list[PaperRecord], raw: str) -> bool:
    """Whether the paper's own value of what ``d`` is about is in the printed string: then
    the difference is the reader's, not the author's."""
    printed = compact(raw)
    if d.field == "title":
        return any(_title_printed(r, printed) for r in paper)
    if d.field == "authors":
        return _authors_printed(paper[0], raw, printed)
    if d.field == "year":
        return _year_printed(paper, raw)
    if d.field == "venue":
        names = [v for r in paper for v in (r.venue, *r.venue_alternates) if v]
        return any(len(compact(v)) >= 4 and compact(v) in printed for v in names)
    if d.field == "doi":
        return any(r.doi and compact(r.doi) in printed for r in paper)
    if d.field == "arxiv":
        return any(r.arxiv_id and compact(r.arxiv_id) in printed for r in paper)
    return False


def _as_read(d: Discrepancy) -> Discrepancy:
    return dataclasses.replace(
        d, severity=Severity.INFORMATION, message=f"{d.message} ({AS_READ})", category=""
    )


def _serious(d: Discrepancy) -> bool:
    return d.severity.rank >= Severity.WARNING.rank


def reconcile(
    v: Verification, raw: str, found: list[PaperRecord], step: AuditStep | None = None
) -> Verification:
    """The verdict on a printed reference, from the engine's verdict ``v`` on the fields read
    and ``found`` (the papers the whole string found, best first)."""
    audit = [*v.audit, step] if step is not None else v.audit
    if v.status in (Status.PARTIAL, Status.VERIFIED) and v.match is not None:
        paper = [v.match, *v.versions]
        if not any(_serious(d) for d in v.discrepancies) or not confirms(raw, paper):
            return v
        ds = [
            _as_read(d) if _serious(d) and _true_value_printed(d, paper, raw) else d for d in v.discrepancies
        ]
        if any(_serious(d) for d in ds):
            return dataclasses.replace(v, discrepancies=ds)
        summary = f"{v.summary} (the differences are the PDF reader's: the printed reference has the paper's)"
        return dataclasses.replace(v, status=Status.VERIFIED, discrepancies=ds, summary=summary)
    undecided = v.status is Status.UNVERIFIED and v.unverified is Unverified.NO_TITLE
    if v.status is not Status.NOT_FOUND and not undecided:
        return v  # DOI_MISMATCH: the printed DOI names another paper; UNVERIFIED: a source failed
    for cand in [*v.candidates, *found]:
        if confirms(raw, [cand]):
            return dataclasses.replace(
                v,
                status=Status.VERIFIED,
                summary=f"Verified in {cand.source}: its title, authors and year are printed in the "
                f"reference ({AS_READ}, found by the whole printed reference)",
                match=cand,
                score=1.0,
                method=Method.CROSSREF_REFERENCE if cand in found else v.method,
                discrepancies=[],
                audit=audit,
                unverified=None,
                informational=False,
            )
    return dataclasses.replace(v, audit=audit) if step is not None else v


async def _reference_search(
    raw: str, sources: Sources, cache: VerificationCache, settings: Settings
) -> tuple[list[PaperRecord], AuditStep | None]:
    key = lookup_key("crossref", "reference", raw)
    hit = cache.get(key)
    cached = hit is not None
    if hit is None:
        if settings.offline:
            return [], None
        hit = await crossref.search_reference(sources.crossref, raw)
        cache.put(key, hit)
    step = AuditStep(Method.CROSSREF_REFERENCE, hit.source, hit.outcome.value, hit.detail, cached)
    return (hit.records if hit.outcome is Outcome.FOUND else []), step


def _wants_search(v: Verification) -> bool:
    if v.status is Status.NOT_FOUND:
        return True
    return v.status is Status.UNVERIFIED and v.unverified is Unverified.NO_TITLE


async def confirm_printed(
    raws: Mapping[str, str],
    verdicts: Mapping[str, Verification],
    sources: Sources,
    cache: VerificationCache,
    settings: Settings,
) -> dict[str, Verification]:
    """``verdicts`` with each printed reference's (``raws``: key -> the reference as printed)
    reconciled with its printed string (:func:`reconcile`)."""
    out = dict(verdicts)

    async def one(key: str, raw: str, v: Verification) -> None:
        found: list[PaperRecord] = []
        step = None
        if _wants_search(v) and not any(confirms(raw, [c]) for c in v.candidates):
            found, step = await _reference_search(raw, sources, cache, settings)
        out[key] = reconcile(v, raw, found, step)

    # the host client paces the requests (Crossref's rate and concurrency)
    await asyncio.gather(
        *(one(k, raw, v) for k, raw in raws.items() if raw and (v := verdicts.get(k)) is not None)
    )
    return out
