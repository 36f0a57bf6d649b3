"""Normalising scholarly identifiers: DOIs, arXiv ids, PMIDs.

Every function takes what a user or an API wrote and returns the canonical
form used inside CiteLens (``None`` when it is not an identifier at all).
DOIs are lower-cased and bare (``10.x/...``); arXiv ids lose their version
and any ``arXiv:`` prefix or URL.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

_DOI_PREFIXES = re.compile(
    r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/|https?://doi\.org/|doi\.org/)", re.IGNORECASE
)
_DOI_SHAPE = re.compile(r"^10\.\d{4,9}/\S+$")

_ARXIV_NEW = re.compile(r"^(\d{4}\.\d{4,5})(v\d+)?$")
_ARXIV_OLD = re.compile(r"^([a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})(v\d+)?$", re.IGNORECASE)
_ARXIV_PREFIX = re.compile(
    r"^(?:arxiv:\s*|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/)", re.IGNORECASE
)
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)

_HEX40 = re.compile(r"^[0-9a-f]{40}$")


def normalize_doi(value: str | None) -> str | None:
    """``"https://doi.org/10.1093/MIND/LIX.236.433"`` -> ``"10.1093/mind/lix.236.433"``."""
    if not isinstance(value, str) or not value:
        return None
    doi = unquote(value.strip())
    doi = _DOI_PREFIXES.sub("", doi).strip().rstrip(".,;")
    if not _DOI_SHAPE.match(doi):
        return None
    return doi.lower()


def normalize_arxiv(value: str | None) -> str | None:
    """``"arXiv:1706.03762v5"`` -> ``"1706.03762"``; ``"astro-ph/0601001v1"`` stays old-style.

    Also accepts abs/pdf URLs and the DataCite DOI ``10.48550/arXiv.1706.03762``.
    """
    if not isinstance(value, str) or not value:
        return None
    s = value.strip()
    m = _ARXIV_DOI.match(s)
    if m:
        s = m.group(1)
    s = _ARXIV_PREFIX.sub("", s).strip()
    if s.lower().endswith(".pdf"):
        s = s[:-4]
    m = _ARXIV_NEW.match(s)
    if m:
        return m.group(1)
    m = _ARXIV_OLD.match(s)
    if m:
        archive, _, number = m.group(1).partition("/")
        return f"{archive.lower()}/{number}"
    return None


def arxiv_version(value: str) -> int | None:
    """The version number of ``1706.03762v5`` (5), or ``None``."""
    m = re.search(r"v(\d+)$", value.strip())
    return int(m.group(1)) if m else None


def normalize_pmid(value: str | None) -> str | None:
    """``"PMID: 25349395"`` -> ``"25349395"``."""
    if not isinstance(value, str) or not value:
        return None
    s = re.sub(r"^(?:pmid:?\s*)", "", value.strip(), flags=re.IGNORECASE)
    return s if s.isdigit() else None


def is_s2_paper_id(value: str) -> bool:
    """A bare Semantic Scholar paperId: 40 lower-case hex digits."""
    return bool(_HEX40.match(value.strip().lower()))
