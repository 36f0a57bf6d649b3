"""Preprint -> published: the record to replace a cited preprint with.

Whether the entry cites a preprint of a paper published since is verify's decision (a
``preprint_status`` discrepancy, naming the venue and source of the published version);
this module only merges that version's record with the others of the paper."""

from __future__ import annotations

from citelens.sources.records import PaperRecord
from citelens.verify.match.discrepancy import Kind
from citelens.verify.status import Verification

#: Fields a publisher's record may lack that another version of the paper has.
_FILLED = ("title", "authors", "year", "arxiv_id", "doi", "volume", "pages")


def published_version(v: Verification) -> PaperRecord | None:
    """The published version's record, completed from the paper's other versions (authors,
    arXiv id, ...), or None when the verdict found no published version of a cited preprint."""
    if v.match is None:
        return None
    said = next((d for d in v.discrepancies if d.kind == Kind.PREPRINT_STATUS), None)
    if said is None:
        return None
    records = [v.match, *v.versions]
    published = next(
        (r for r in records if r.venue and r.venue == said.source_value and r.source == said.source), None
    )
    if published is None:
        return None
    merged = PaperRecord.from_json(published.to_json())
    for r in records:
        for name in _FILLED:
            if not getattr(merged, name) and getattr(r, name):
                setattr(merged, name, getattr(r, name))
    merged.is_preprint = False
    return merged
