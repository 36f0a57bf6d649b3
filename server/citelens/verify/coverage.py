"""What the scholarly indexes cover: :data:`INFORMATIONAL_TYPES`, the entry types they cover
badly, whose absence from an index or disagreement with a record is information, never a
warning (a verification policy: the request plan and the comparison read it)."""

from __future__ import annotations

from citelens.core.model import EntryView

INFORMATIONAL_TYPES = frozenset(
    {
        "book",
        "inbook",
        "booklet",
        "phdthesis",
        "mastersthesis",
        "thesis",
        "techreport",
        "report",
        "software",
        "dataset",
        "data",
        "online",
        "webpage",
        "electronic",
        "www",
        "manual",
        "unpublished",
        "standard",
        "patent",
        "misc",
    }
)


def is_informational(view: EntryView) -> bool:
    """Books, theses, reports, software, data sets, web pages: a miss is information, and
    so is a disagreement with a record (a placeholder author or a future year aside). The
    one rule, for the request plan, the verdict and the comparison.

    A ``@misc`` with a DOI, arXiv id or PMID is a preprint or paper and is checked as one
    (its URL does not make it a web page)."""
    t = view.entry_type.lower()
    if t == "misc":
        return not (view.doi or view.arxiv_id or view.pmid)
    return t in INFORMATIONAL_TYPES


def disagreement_is_information(view: EntryView) -> bool:
    """Whether a found record's disagreement with the entry is information: an entry of
    :func:`is_informational`, but a ``@misc`` only when it is a web page (a URL): a bare
    ``@misc`` the indexes do hold is compared as a paper (its miss stays information).
    Derived from the one rule, so a ``@misc`` with a DOI and a URL is a paper for both."""
    if not is_informational(view):
        return False
    return view.entry_type.lower() != "misc" or bool(view.url)
