"""What we know about the cited paper before retrieving anything.

Signals come from the bibliography entry (:class:`~citelens.core.model.EntryView`) and,
when the verification engine has resolved it, its :class:`PaperRecord` (which
may already carry the abstract, an open-access PDF link or a PMC id).
"""

from __future__ import annotations

from dataclasses import dataclass

from citelens.core.identifiers import normalize_arxiv, normalize_doi, normalize_pmid
from citelens.core.model import EntryView
from citelens.sources.records import PaperRecord


@dataclass(slots=True)
class Signals:
    title: str = ""
    arxiv_id: str | None = None
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    s2_id: str | None = None
    url: str | None = None
    open_access_pdf: str | None = None
    record: PaperRecord | None = None

    def learn(self, record: PaperRecord) -> None:
        """Fill missing identifiers from a record a source returned (for the full-text cascade)."""
        self.arxiv_id = self.arxiv_id or normalize_arxiv(record.arxiv_id)
        self.doi = self.doi or normalize_doi(record.doi)
        self.pmid = self.pmid or record.pmid
        self.pmcid = self.pmcid or record.pmcid
        self.s2_id = self.s2_id or record.s2_paper_id
        self.open_access_pdf = self.open_access_pdf or record.open_access_pdf or None


def signals_from(view: EntryView | None, record: PaperRecord | None = None) -> Signals:
    """The signals of the cited paper. ``record`` is the paper verification accepted
    (:mod:`citelens.claims.paper`): its title and identifiers come first, the entry's only
    fill what it lacks (a PARTIAL entry may carry an identifier that resolves nowhere)."""
    s = Signals()
    if record is not None:
        s.record = record
        s.title = (record.title or "").strip()
        s.learn(record)
    if view is not None:
        s.title = s.title or view.title.strip()
        s.arxiv_id = s.arxiv_id or normalize_arxiv(view.arxiv_id)
        s.doi = s.doi or normalize_doi(view.doi)
        s.pmid = s.pmid or normalize_pmid(view.pmid)
        s.s2_id = s.s2_id or view.s2_id
        s.url = view.url.strip() if view.url else None
        if s.arxiv_id is None and s.url:
            s.arxiv_id = normalize_arxiv(s.url)
        if s.doi is None and s.url:
            s.doi = normalize_doi(s.url)
    return s


def paper_identity(view: EntryView | None, record: PaperRecord | None = None) -> str:
    """A short stable identity of the cited paper (for cache keys and display)."""
    s = signals_from(view, record)
    if s.doi:
        return f"doi:{s.doi}"
    if s.arxiv_id:
        return f"arXiv:{s.arxiv_id}"
    if s.pmid:
        return f"pmid:{s.pmid}"
    if s.s2_id:
        return f"s2:{s.s2_id}"
    if s.title:
        return "title:" + " ".join(s.title.lower().split())
    if s.url:
        return f"url:{s.url}"
    return f"key:{view.key}" if view is not None else "unknown"
