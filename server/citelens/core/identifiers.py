"""Identifiers: the one set of patterns, the normalisers, and the one reader of an entry's.

- :func:`normalize_doi`, :func:`normalize_arxiv`, :func:`normalize_pmid`,
  :func:`is_s2_paper_id`: what a user or an API wrote -> the canonical form (``None`` when it
  is no identifier);
- :func:`entry_identifiers`: the identifiers a BibTeX entry carries, wherever it keeps them
  (``doi``, a DOI ``eprint``, a doi.org URL; ``eprint``, ``arxiv``, an arXiv DOI or URL, "arXiv
  preprint arXiv:…" in the venue; ``pmid``; ``s2id`` and its spellings). The entry view
  (:mod:`citelens.documents.bibtex.view`) reads them through it, and the verifier and the
  duplicate check read them from the view (:func:`arxiv_in_view`), so every caller gets
  the same identifiers from the same entry.

Compiled once; a library of 68,000 entries reads its identifiers in a fraction of a second.
None of these functions ever raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple
from urllib.parse import unquote

from citelens.core.model import EntryView

_DOI_PREFIX = re.compile(
    r"^(?:https?://)?(?:dx\.)?(?:www\.)?doi\.org/|^doi:\s*|^doi\s+|^urn:doi:", re.IGNORECASE
)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_ARXIV_NEW = r"\d{4}\.\d{4,5}"
_ARXIV_OLD = r"[a-z][a-z.\-]*(?:\.[A-Z]{2})?/\d{7}"
_ARXIV_BARE = re.compile(rf"^(?:arxiv:\s*)?({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?$", re.IGNORECASE)
#: arXiv's DOI prefix (its DataCite registrant): every arXiv DOI, and only those, start with it.
ARXIV_DOI_PREFIX = "10.48550/"
#: An arXiv DOI as written in lower case, before its arXiv id (``10.48550/arxiv.1706.03762``).
ARXIV_DOI_START = ARXIV_DOI_PREFIX + "arxiv."
_ARXIV_DOI = re.compile(rf"^{re.escape(ARXIV_DOI_START)}({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_URL = re.compile(
    rf"arxiv\.org/(?:abs|pdf|html)/({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?(?:\.pdf)?/?(?:[?#]\S*)?$",
    re.IGNORECASE,
)
_ARXIV_VERSION = re.compile(r"v(\d+)$")
_PMID = re.compile(r"^(?:pmid:?\s*)", re.IGNORECASE)
#: DOI prefixes of preprint servers and data archives (arXiv, Zenodo, bioRxiv/medRxiv,
#: Research Square, Preprints.org): such a DOI is not the published paper's.
PREPRINT_DOI_PREFIXES = (ARXIV_DOI_PREFIX, "10.5281/", "10.1101/", "10.21203/", "10.20944/")
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


def doi_as_written(value: str | None) -> str | None:
    """A DOI as its registry writes it (``10.1103/PhysRevE.49.4145``): bare, the case kept
    (DOIs match case-insensitively, but a fix writes the registry's form); None when
    :func:`normalize_doi` finds no DOI."""
    if normalize_doi(value) is None:
        return None
    assert isinstance(value, str)
    doi = plain_identifier(value)
    if "%" in doi:
        doi = unquote(doi)
    return _DOI_PREFIX.sub("", doi).strip().rstrip(".,;")


def normalize_arxiv(value: str | None) -> str | None:
    """``"arXiv:1706.03762v5"`` -> ``"1706.03762"``; ``"astro-ph/0601001v1"`` stays old-style.

    Also accepts abs/pdf/html URLs and the DataCite DOI ``10.48550/arXiv.1706.03762``.
    Old-style ids keep arXiv's spelling: ``math.GT/0309136``, ``hep-th/9711200``.
    """
    if not isinstance(value, str) or not value:
        return None
    return _arxiv_in_plain(plain_identifier(value))


def _arxiv_in_plain(text: str) -> str | None:
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


_CORPUS_ID = re.compile(r"corpusid:\d+", re.IGNORECASE)


def normalize_s2(value: str | None) -> str | None:
    """A Semantic Scholar id as its batch endpoint takes it: a 40-hex paperId in lower case,
    or ``"CorpusId:123"`` (from ``CorpusId:123``, ``corpusid:123`` or ``123``)."""
    if not value:
        return None
    raw = value.strip()
    if is_s2_paper_id(raw):
        return raw.lower()
    if _CORPUS_ID.fullmatch(raw):
        return "CorpusId:" + raw.split(":", 1)[1]
    if raw.isdigit():
        return f"CorpusId:{raw}"
    return None


# --------------------------------------------------------------------------- an entry's

_DOI_IN_URL = re.compile(r"^(?:https?://)?(?:dx\.)?(?:www\.)?doi\.org/(10\.\S+)$", re.IGNORECASE)
_DOI_LIST = re.compile(r"\s+|,")
#: An arXiv id in free text: "arXiv preprint arXiv:1706.03762", "arXiv 1706.03762", "arXiv
#: abs/1706.03762", "arxiv.org/pdf/1706.03762" (in a venue, a note, a URL).
_ARXIV_IN_TEXT = re.compile(
    r"(?:\barxiv\s*(?:preprint)?\s*(?:arxiv)?\s*[:\s]\s*|arxiv[:/\s]*(?:abs/)?\s*|abs/\s*"
    r"|arxiv\.org/(?:abs|pdf)/\s*)"
    rf"({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?",
    re.IGNORECASE,
)
#: Where an entry may keep its arXiv id, most telling first.
_ARXIV_FIELDS = ("arxiv", "arxivid", "arxiv_id")
_ARXIV_ANYWHERE = ("url", "pdf", "eprint", "howpublished", "note")
_ARXIV_IN_VENUE = ("journal", "journaltitle", "booktitle", "howpublished", "note", "volume")
_S2_FIELDS = ("s2id", "semantic_scholar_id", "s2_id", "s2paperid")


class EntryIdentifiers(NamedTuple):
    """The identifiers one entry carries, normalised (the S2 id as written, a paperId in
    lower case)."""

    doi: str | None
    arxiv: str | None
    pmid: str | None
    s2: str | None


def entry_identifiers(f: Mapping[str, str]) -> EntryIdentifiers:
    """The identifiers of an entry from its field values (lower-case names, as parsed)."""
    doi = doi_in(f)
    return EntryIdentifiers(doi, arxiv_in(f, doi), pmid_in(f), s2_in(f))


def doi_in(f: Mapping[str, str]) -> str | None:
    """The DOI in an entry's fields (``doi``, a DOI ``eprint``, a doi.org URL), normalised."""
    value = f.get("doi")
    if value:
        for part in _DOI_LIST.split(plain_identifier(value)):  # some list several DOIs
            doi = normalize_doi(part)
            if doi:
                return doi
    eprint = f.get("eprint")
    if eprint and (f.get("eprinttype") or "").lower() == "doi":
        doi = normalize_doi(eprint)
        if doi:
            return doi
    for name in ("url", "howpublished", "note"):
        value = f.get(name)
        if value:
            m = _DOI_IN_URL.match(plain_identifier(value))
            if m is not None:
                return normalize_doi(m.group(1))
    return None


def _arxiv_of(value: str | None) -> str | None:
    """:func:`normalize_arxiv`, quicker for the many values that are no arXiv id (most
    URLs): without "arxiv", only a bare id can be one."""
    if not value:
        return None
    text = plain_identifier(value)
    if "arxiv" in text.lower():
        return _arxiv_in_plain(text)
    m = _ARXIV_BARE.match(text)
    return _canonical_arxiv(m.group(1)) if m is not None else None


def arxiv_of_doi(doi: str | None) -> str | None:
    """The arXiv id an arXiv DOI names (``10.48550/arXiv.1706.03762`` -> ``1706.03762``):
    the one rule for the fields' reader, the view's and the verifier's identifiers."""
    if doi and doi.lower().startswith(ARXIV_DOI_PREFIX):
        return normalize_arxiv(doi)
    return None


def arxiv_doi(arxiv_id: str) -> str:
    """The DOI arXiv registered for ``arxiv_id`` (lower case)."""
    return f"{ARXIV_DOI_START}{arxiv_id}"


def arxiv_in(f: Mapping[str, str], doi: str | None) -> str | None:
    """The arXiv id in an entry's fields (its ``doi`` already read: an arXiv DOI gives it)."""
    eprint = f.get("eprint")
    if eprint and (f.get("archiveprefix") or f.get("eprinttype") or "").strip().lower() in ("", "arxiv"):
        found = _arxiv_of(eprint)
        if found:
            return found
    for name in _ARXIV_FIELDS:
        found = _arxiv_of(f.get(name))
        if found:
            return found
    found = arxiv_of_doi(doi)
    if found:
        return found
    for name in _ARXIV_ANYWHERE:
        found = _arxiv_of(f.get(name))
        if found:
            return found
    for name in _ARXIV_IN_VENUE:
        value = f.get(name)
        if value and "arxiv" in value.lower():
            found = arxiv_in_text(value)
            if found:
                return found
    return None


def pmid_in(f: Mapping[str, str]) -> str | None:
    value = f.get("pmid")
    return normalize_pmid(plain_identifier(value)) if value else None


def s2_in(f: Mapping[str, str]) -> str | None:
    """The Semantic Scholar id as written (a 40-hex paperId in lower case)."""
    for name in _S2_FIELDS:
        value = f.get(name)
        if value:
            value = plain_identifier(value)
            if value:
                return value.lower() if is_s2_paper_id(value) else value
    return None


def arxiv_in_text(text: str) -> str | None:
    """The arXiv id written in free text (a venue, a note, a URL), normalised."""
    low = text.lower() if text else ""
    if "arxiv" not in low and "abs/" not in low:
        return None
    m = _ARXIV_IN_TEXT.search(plain_identifier(text))
    return normalize_arxiv(m.group(1)) if m is not None else None


def arxiv_in_view(view: EntryView) -> str:
    """The arXiv id an entry view cites: its own, or one its DOI, venue or URL names."""
    if view.arxiv_id:
        return normalize_arxiv(view.arxiv_id) or ""
    found = arxiv_of_doi(normalize_doi(view.doi))
    if found:
        return found
    return arxiv_in_text(view.venue) or arxiv_in_text(view.url or "") or ""


# --------------------------------------------------------------------------- printed text
# A reference as a PDF prints it (documents/pdf): identifiers in running text, and the
# line breaks a layout puts inside them.

#: A DOI anywhere in printed text ("doi:10.1145/...", "https://doi.org/10...").
DOI_IN_PRINT = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.IGNORECASE)
#: An arXiv id as a reference list prints it ("arXiv preprint arXiv:1706.03762",
#: "arxiv.org/abs/1706.03762", old-style "hep-th/9901001").
ARXIV_IN_PRINT = re.compile(
    r"(?:arxiv(?:\s+preprint)?\s*:?\s*(?:abs/)?|arxiv\.org/(?:abs|pdf)/)"
    r"(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?",
    re.IGNORECASE,
)
#: A DOI a line break cut: after "10." or after the prefix's "/".
DOI_BROKEN_BY_LINE = re.compile(r"(\b10\.)\s+(\d{4,9}/)|(\b10\.\d{4,9}/)\s+(?=\w)")
#: A line that ends inside a URL, DOI or arXiv link (the next line goes on with it).
LINK_AT_LINE_END = re.compile(r"(?:https?://|www\.|\b10\.\d{4,9}/|arxiv\.org/)\S*$", re.IGNORECASE)
