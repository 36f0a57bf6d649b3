"""The class of a verdict, decided once: what the evidence says an entry is.

The hover (``Class: …``), the reports of ``citelens check`` (``class`` per entry and per
finding, ``entries by class``) and the venue summary (its "likely fabricated" count) all
read :func:`verdict_class` through ``Verification.klass``, and say it in the words of
:func:`class_text`.

"Invented" (:data:`FABRICATED`) is said where the evidence says so: nothing anywhere (every
source answered, none holds the entry, or its identifier names another paper while its own
title is nowhere) and the entry claims a kind the indexes cover (not a book, thesis,
report, ...). A reference no source holds is classed by that fact, whatever it carries: a
URL anyone can add, and an identifier its own registry says does not exist (doi.org for a
DOI, arXiv for an arXiv id, PubMed for a PMID: :data:`REGISTRY`) is more evidence, never a
reason for doubt. Only what may really lead to a copy the indexes lack keeps the class
cautious: an identifier its registry was not asked about (or did not answer), and a year too
recent for the indexes. A real paper cited with another paper's DOI is
:data:`WRONG_METADATA` (its own paper was found: there is a fix). An entry the indexes do
not hold, with such a lead or of a kind they cover badly, is :data:`NOT_HELD`: "not found
in" the sources asked, which miss many books, theses, reports and very recent papers.
"""

from __future__ import annotations

from collections.abc import Iterable

from citelens.core.mdplain import link_target
from citelens.core.model import EntryView
from citelens.core.source_names import Source
from citelens.core.statuses import Status
from citelens.verify.match.discrepancy import FABRICATED, WRONG_METADATA

__all__ = [
    "FABRICATED",
    "INDEX_GAPS",
    "NOT_HELD",
    "REGISTRY",
    "WRONG_METADATA",
    "class_text",
    "pointers",
    "verdict_class",
]

#: The class of an entry the indexes do not hold, with nothing saying it is invented.
NOT_HELD = "not-found"

#: What the scholarly indexes miss most (said with every "not found in ...").
INDEX_GAPS = "books, theses, reports and very recent papers"

#: The source that holds every identifier of a kind: its "no such id" means the identifier
#: does not exist (doi.org resolves the DOIs of every registration agency; one without
#: content negotiation is redirected to its page, never answered "not found").
REGISTRY = {"doi": Source.DOI, "arxiv": Source.ARXIV, "pmid": Source.PUBMED}

#: What in an entry points to a copy outside the indexes, as :func:`pointers` names it.
_POINTER_WORDS = {
    "url": "its URL",
    "doi": "its DOI",
    "arxiv": "its arXiv id",
    "pmid": "its PubMed id",
}


def pointers(view: EntryView, checked_at: str) -> tuple[str, ...]:
    """What in the entry points to a copy the indexes may not hold, in a fixed order:
    ``url`` (an http(s) address), ``doi`` / ``arxiv`` / ``pmid`` (identifiers, which a
    miss says no source resolved), ``recent`` (a year no earlier than the check's)."""
    out = []
    if link_target(view.url):
        out.append("url")
    out += [f for f, value in (("doi", view.doi), ("arxiv", view.arxiv_id), ("pmid", view.pmid)) if value]
    year = int(checked_at[:4]) if checked_at[:4].isdigit() else None
    if year is not None and view.year is not None and view.year >= year:
        out.append("recent")
    return tuple(out)


def verdict_class(
    status: Status,
    *,
    informational: bool,
    own_paper_found: bool,
    discrepancy_classes: Iterable[str],
    pointers: Iterable[str],
    refuted: Iterable[str] = (),
) -> str | None:
    """The class of a verdict (``status``: its ``Status``): :data:`FABRICATED`,
    :data:`WRONG_METADATA`, :data:`NOT_HELD`, or None (verified, unverified, not checked).
    ``refuted``: the identifiers their registry (:data:`REGISTRY`) said do not exist.

    - ``DOI_MISMATCH``: wrong metadata when the entry's own paper was found (the fix gives
      its identifier), or the entry is a kind the indexes cover badly, or it is recent;
      else invented (a borrowed identifier on a title no source holds), a URL or not.
    - ``NOT_FOUND``: invented for a kind the indexes cover, whatever URL it has and whatever
      identifier its registry refuted; not held when it is a kind they cover badly, or
      when something may lead to a copy they lack (an identifier no registry refuted, a
      year too recent for them).
    - ``PARTIAL``: the class of its worst discrepancies (authors badly wrong or a
      placeholder author: invented; anything else: wrong metadata).
    """
    leads = set(pointers) - {"url"} - set(refuted)
    if status is Status.DOI_MISMATCH:
        if own_paper_found or informational or "recent" in leads:
            return WRONG_METADATA
        return FABRICATED
    if status is Status.NOT_FOUND:
        return NOT_HELD if informational or leads else FABRICATED
    if status is Status.PARTIAL:
        classes = list(discrepancy_classes)
        if classes:
            return FABRICATED if FABRICATED in classes else WRONG_METADATA
    return None


_REFUTED_WORDS = {
    "doi": "its DOI does not exist (doi.org has no such DOI)",
    "arxiv": "its arXiv id does not exist (arXiv has no such paper)",
    "pmid": "its PubMed id does not exist (PubMed has no such record)",
}


def class_text(
    klass: str, status: Status, sources: list[str], pointers: Iterable[str], refuted: Iterable[str] = ()
) -> str:
    """The class in words, for the hover and the reports: ``sources`` are the names of the
    sources asked, in their defined order."""
    dead = tuple(refuted)
    if klass == FABRICATED:
        why = {
            Status.NOT_FOUND: "no source holds it, and it is a kind they cover",
            Status.DOI_MISMATCH: "its identifier is another paper's, and no source holds its title",
        }.get(status, "the paper's record disagrees with its authors beyond a slip")
        more = "".join(f"; {_REFUTED_WORDS[f]}" for f in dead if f in _REFUTED_WORDS)
        return f"fabricated (this reference looks invented: {why}{more})"
    if klass == WRONG_METADATA:
        if status is Status.DOI_MISMATCH:
            return "wrong-metadata (the identifier is another paper's; the entry's details need a fix)"
        return "wrong-metadata (a real paper, cited with wrong details)"
    if klass == NOT_HELD:
        where = ", ".join(sources) or "the sources asked"
        given = tuple(p for p in pointers if p not in dead)
        leads = [_POINTER_WORDS[p] for p in given if p in _POINTER_WORDS]
        lead = f"; {' and '.join(leads)} may lead to it" if leads else ""
        if "recent" in given:
            lead += "; it is from this year, and indexes take months to list new papers"
        return f"not found in {where}, which miss many {INDEX_GAPS}{lead}"
    return klass
