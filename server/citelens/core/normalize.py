"""Identifiers.

- identifiers: :func:`normalize_doi`, :func:`normalize_arxiv`, :func:`normalize_pmid`,
  :func:`is_s2_paper_id` (what a user or an API wrote -> the canonical form, ``None`` when
  it is no identifier), :func:`plain_identifier`, :func:`arxiv_version`.

None of these functions ever raises.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

_DOI_PREFIX = re.compile(
    r"^(?:https?://)?(?:dx\.)?(?:www\.)?doi\.org/|^doi:\s*|^doi\s+|^urn:doi:", re.IGNORECASE
)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_ARXIV_NEW = r"\d{4}\.\d{4,5}"
_ARXIV_OLD = r"[a-z][a-z.\-]*(?:\.[A-Z]{2})?/\d{7}"
_ARXIV_BARE = re.compile(rf"^(?:arxiv:\s*)?({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_DOI = re.compile(rf"^10\.48550/arxiv\.({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_URL = re.compile(
    rf"arxiv\.org/(?:abs|pdf|html)/({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?(?:\.pdf)?/?(?:[?#]\S*)?$",
    re.IGNORECASE,
)
_ARXIV_VERSION = re.compile(r"v(\d+)$")
_PMID = re.compile(r"^(?:pmid:?\s*)", re.IGNORECASE)
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_ID_ESCAPES = str.maketrans({"{": None, "}": None})
_ID_ESCAPED = re.compile(r"\\([_%&#$~])")
_URL_MACRO = re.compile(r"^\\(?:url|href)\s*\{(.*?)\}", re.DOTALL)


def plain_identifier(value: str) -> str:
    """An identifier as written, without braces, escapes or ``\\url{}``."""
    if "\\" not in value and "{" not in value and "}" not in value:
        return value.strip()  # nothing to remove (most values: a quarter of an entry view)
    value = value.strip()
    m = _URL_MACRO.match(value)
    if m is not None:
        value = m.group(1)
    return _ID_ESCAPED.sub(r"\1", value).translate(_ID_ESCAPES).strip()


def normalize_doi(value: str | None) -> str | None:
    """``"https://doi.org/10.1093/MIND/LIX.236.433"`` -> ``"10.1093/mind/lix.236.433"``.

    Accepts a bare DOI, ``doi:``/``urn:doi:`` prefixes, doi.org URLs (percent-encoded or
    not) and BibTeX spellings (``\\url{…}``, ``\\_``); ``None`` for anything else.
    """
    if not isinstance(value, str) or not value:
        return None
    doi = plain_identifier(value)
    if "%" in doi:
        doi = unquote(doi)
    doi = _DOI_PREFIX.sub("", doi).strip().rstrip(".,;").lower()
    return doi if _DOI.match(doi) else None


def normalize_arxiv(value: str | None) -> str | None:
    """``"arXiv:1706.03762v5"`` -> ``"1706.03762"``; ``"astro-ph/0601001v1"`` stays old-style.

    Also accepts abs/pdf/html URLs and the DataCite DOI ``10.48550/arXiv.1706.03762``.
    Old-style ids keep arXiv's spelling: ``math.GT/0309136``, ``hep-th/9711200``.
    """
    if not isinstance(value, str) or not value:
        return None
    text = plain_identifier(value)
    for pattern in (_ARXIV_BARE, _ARXIV_DOI):
        m = pattern.match(text)
        if m is not None:
            return _canonical_arxiv(m.group(1))
    m = _ARXIV_URL.search(text)
    return _canonical_arxiv(m.group(1)) if m is not None else None


def _canonical_arxiv(ident: str) -> str:
    """Old-style ids: archive in lower case, a two-letter subject class in upper case."""
    archive, slash, number = ident.partition("/")
    if not slash:
        return ident
    name, dot, cls = archive.partition(".")
    cls = cls.upper() if len(cls) == 2 else cls.lower()
    return f"{name.lower()}{dot}{cls}/{number}"


def arxiv_version(value: str) -> int | None:
    """The version number of ``1706.03762v5`` (5), or ``None``."""
    m = _ARXIV_VERSION.search(value.strip())
    return int(m.group(1)) if m else None


def normalize_pmid(value: str | None) -> str | None:
    """``"PMID: 25349395"`` -> ``"25349395"``."""
    if not isinstance(value, str) or not value:
        return None
    s = _PMID.sub("", value.strip())
    return s if s.isdigit() else None


def is_s2_paper_id(value: str) -> bool:
    """A bare Semantic Scholar paperId: 40 hex digits."""
    return bool(_HEX40.match(value.strip().lower()))
