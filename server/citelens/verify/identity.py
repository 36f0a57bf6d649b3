"""What identifies an entry: the hash of what it says, and the identifiers it carries.

:func:`content_hash` keys verdicts (an entry is identified by its text, so a fixed DOI is
a new entry); :func:`identifiers` gives the verifier an entry's identifiers in the form
each is asked about (read from its view, whose identifiers come from the one reader,
:func:`citelens.core.identifiers.entry_identifiers`; an arXiv DOI also gives its arXiv id).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from citelens.core.identifiers import (
    arxiv_of_doi,
    normalize_arxiv,
    normalize_doi,
    normalize_pmid,
    normalize_s2,
)
from citelens.core.model import BibEntry, EntryView

#: Changes when verdict rules change, so content hashes of old results no longer match.
ENGINE_VERSION = "2"  # 2: books no longer match a marginal title by another author

#: json.dumps with arguments builds an encoder per call: one, for every content hash.
_HASH_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


def content_hash(item: EntryView | BibEntry) -> str:
    """A short hash of what an entry says (not its key): unchanged entries keep their result."""
    payload: object
    if isinstance(item, BibEntry):
        payload = [item.entry_type.lower(), sorted((name, f.value) for name, f in item.fields.items())]
    else:
        said: list[object] = [
            item.entry_type.lower(),
            item.title,
            list(item.authors.written),  # as written: the names are parsed only when compared
            item.authors_truncated,
            item.year,
            item.venue,
            item.doi,
            item.arxiv_id,
            item.pmid,
            item.s2_id,
            item.url,
        ]
        if item.printed is not None:  # (only then: every .bib entry keeps its hash)
            said.append(item.printed.text)
        if item.pages:  # compared since issue 43: an entry without pages keeps its hash
            said.append(item.pages)
        payload = said
    raw = _HASH_JSON.encode([ENGINE_VERSION, payload])
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class Identifiers:
    """The identifiers of one entry, normalised; each becomes one S2 batch id."""

    doi: str | None
    arxiv: str | None
    pmid: str | None
    s2: str | None  # a 40-hex paperId or "CorpusId:123"

    def s2_batch_ids(self) -> dict[str, str]:
        """field -> the id as S2's batch endpoint takes it."""
        out: dict[str, str] = {}
        if self.s2:
            out["s2"] = self.s2
        if self.doi:
            out["doi"] = f"DOI:{self.doi}"
        if self.arxiv:
            out["arxiv"] = f"ARXIV:{self.arxiv}"
        if self.pmid:
            out["pmid"] = f"PMID:{self.pmid}"
        return out

    def __bool__(self) -> bool:
        return bool(self.doi or self.arxiv or self.pmid or self.s2)


def identifiers(view: EntryView) -> Identifiers:
    """Every identifier an entry carries (an arXiv DOI also gives its arXiv id)."""
    d = normalize_doi(view.doi) if view.doi else None
    ax = normalize_arxiv(view.arxiv_id) if view.arxiv_id else None
    if ax is None:
        ax = arxiv_of_doi(d)
    pm = normalize_pmid(view.pmid) if view.pmid else None
    return Identifiers(d, ax, pm, normalize_s2(view.s2_id))
