"""A fake of the scholarly APIs CiteLens talks to: a real HTTP server on 127.0.0.1.

One server answers, under path prefixes, like

============  =============================  ======================================
source        base URL (``fake.urls()``)     answers
============  =============================  ======================================
s2            ``/s2/graph/v1``               paper/{id}, paper/batch, paper/search[/match]
crossref      ``/crossref``                  works/{doi}, works?query.*, works/{doi}/transform
openalex      ``/openalex``                  works/doi:{doi}, works/W.., works?filter=|search=
arxiv         ``/arxiv/api``                 query?id_list=|search_query= (Atom)
arxiv_site    ``/arxiv``                     abs/{id}, html/{id} (301 if ``html_redirect``), pdf/{id}
doi           ``/doi``                       {doi} with content negotiation (302 to the agency)
ncbi          ``/eutils``                    esearch.fcgi, efetch.fcgi (PubMed XML)
unpaywall     ``/unpaywall``                 {doi}?email=
============  =============================  ======================================

with the status codes, content types and body shapes of the real APIs (see
``tests/fixtures/apis/FORMATS.md``), from a small paper database
(``tests/fakes/papers.json``) that tests extend with :meth:`ScholarlyFake.add_paper`
and benchmarks replace with :meth:`ScholarlyFake.load`.

Faults, per source, at run time (``fake.set_mode("s2", "429", count=2)``) or from
another process (``POST /_control {"source": "s2", "mode": "down"}``):

``ok``         normal answers (also: "up")
``429``        HTTP 429 in the API's style (``retry_after=`` adds the header)
``5xx``        HTTP 503 (``status=`` to choose)
``stall``      wait ``stall_s`` seconds before answering
``malformed``  the normal answer cut in half (truncated JSON/XML)
``html``       a 200 HTML page instead of the API's format
``reset``      TCP reset without an answer
``down``       the connection is closed without an answer
``echo``       HTTP ``status`` (default 400) whose body echoes the request URL and headers
``huge``       the normal answer padded with 64 MB of blanks (Content-Length says so)
``bomb``       the same, gzip-compressed: about 64 kB on the wire

``challenge`` a challenge page served as HTTP 200 HTML (``kind="anubis"``: dblp's
              proof-of-work page; ``kind="cloudflare"``: "Just a moment...")
``accepted``   HTTP 202 with no content (a bot check, as IEEE's and ACM's pages answer scripts)

``count=N`` applies the fault to the next N requests only. ``fake.set_rate_limit``
makes a source answer 429 when a client starts requests faster than allowed;
``fake.set_latency("s2", 0.05)`` makes a source answer that much later (which source answers
first is then the test's choice). A paper's ``as`` key gives one source's own view of it
(``{"as": {"s2": {"venue": "CVPR", "year": 2015}}}``, :func:`as_source`); a paper's
``"landing_status": 202`` sends doi.org's content negotiation for its DOI to its
publisher's page, which answers 202 with no content.

The sources' 2026 limits, off unless a test or benchmark turns them on:

* :meth:`ScholarlyFake.set_openalex_budget`: OpenAlex's daily budget in dollars
  (developers.openalex.org, "Authentication & Pricing"): a lookup by id or DOI
  (``/works/W…``, ``/works/doi:…``) is free, a list or filter call $0.0001, a search
  (``search=``, a ``*.search`` filter) $0.001; $0.10 a day without a key (shared by the
  IP address), $1 with a key (``api_key=``). Every answer carries the ``X-RateLimit-*``
  headers (budget left, this call's cost, seconds to the reset at midnight UTC); past the
  budget a priced call is refused with 429 and the gateway's JSON ("Insufficient budget.
  This request costs $0.001 but you only have $0 remaining. Resets at midnight UTC. …",
  ``Retry-After`` = seconds to the reset). An unknown key is 401; ``/rate-limit`` tells a
  key's budget (401 without one).
* :meth:`ScholarlyFake.set_s2_pool`: Semantic Scholar's shared pool: calls without an
  ``x-api-key`` are answered 429 in bursts (``burst`` of every ``period``, no
  ``Retry-After``, as S2 sends none); a key is held to ``key_rps`` (a new key: 1/s); an
  unknown key is 403 ``{"message": "Forbidden"}``.

Use from pytest (wired in ``tests/conftest.py``)::

    from tests.fakes.scholarly import scholarly_server  # fixture

    def test_x(scholarly_server): settings = scholarly_server.settings()

From a subprocess: ``scholarly_server.env()`` gives the ``CITELENS_*_URL`` variables.
Standalone: ``python -m tests.fakes.scholarly --port 8999 [--papers big.json] [--enforce-rates]
[--openalex-budget 0.10] [--s2-pool 3/10]``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import html
import json
import random
import re
import socket
import struct
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit
from xml.sax.saxutils import escape as xml_escape

import pytest
from rapidfuzz import fuzz

from citelens.core.settings import Settings, url_setting_doc
from citelens.sources.transport import DEFAULT_RATES, HOSTS, Rate

PAPERS_JSON = Path(__file__).with_name("papers.json")

SOURCES = ("s2", "crossref", "openalex", "arxiv", "arxiv_site", "doi", "ncbi", "unpaywall")
PREFIXES: tuple[tuple[str, str], ...] = (
    ("/s2/graph/v1", "s2"),
    ("/crossref", "crossref"),
    ("/openalex", "openalex"),
    ("/arxiv/api", "arxiv"),
    ("/arxiv", "arxiv_site"),
    ("/doi", "doi"),
    ("/eutils", "ncbi"),
    ("/unpaywall", "unpaywall"),
)
#: Each host's base URL setting and its environment variable (from the host registry).
SETTING_NAMES = {str(h.source): h.url[0] for h in HOSTS}
ENV_VARS = {str(h.source): url_setting_doc(*h.url).env or "" for h in HOSTS}
#: Limits of the real services, for ``--enforce-rates`` (requests per second, concurrency).
REAL_LIMITS: dict[str, tuple[float, int]] = {
    "s2": (1.0, 1),
    "crossref": (5.0, 1),
    "openalex": (10.0, 3),
    "arxiv": (1 / 3, 1),
    "ncbi": (3.0, 1),
    "doi": (5.0, 2),
}
#: Network jitter of the real services, for ``--enforce-rates``: each request reaches the
#: limiter up to this many seconds late (uniformly), so a client pacing at exactly the
#: limit sees some 429s, as it does from Semantic Scholar (about 10% at exactly 1/s).
REAL_JITTER_S: dict[str, float] = {"s2": 0.2}
DATACITE_PREFIXES = ("10.48550/", "10.5281/")


# ====================================================================== the database


def _norm(s: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", s.lower()))


def _doi_key(doi: str | None) -> str | None:
    if not doi:
        return None
    d = unquote(doi.strip())
    d = re.sub(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)", "", d, flags=re.IGNORECASE)
    return d.lower()


def _arxiv_key(aid: str | None) -> str | None:
    if not aid:
        return None
    a = re.sub(r"^arxiv:", "", aid.strip(), flags=re.IGNORECASE)
    a = re.sub(r"^10\.48550/arxiv\.", "", a, flags=re.IGNORECASE)
    return re.sub(r"v\d+$", "", a).lower()


def _valid_arxiv(aid: str) -> bool:
    return bool(re.fullmatch(r"(\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7})(v\d+)?", aid.strip(),
                             flags=re.IGNORECASE))


def _complete(p: dict[str, Any]) -> dict[str, Any]:
    """Fill the derived fields of one paper (ids, which sources know it)."""
    p = dict(p)
    if "title" not in p:
        raise ValueError("a paper needs a title")
    p.setdefault("authors", [])
    key = p.get("doi") or p.get("arxiv") or p["title"]
    p.setdefault("s2_paper_id", hashlib.sha1(f"citelens-fake:{key}".encode()).hexdigest())
    p.setdefault("corpus_id", int(p["s2_paper_id"][:7], 16))
    if "sources" not in p:
        src = ["s2", "openalex"]
        doi = _doi_key(p.get("doi"))
        if doi:
            src.append("doi")
            if not doi.startswith(DATACITE_PREFIXES):
                src.append("crossref")
        if p.get("arxiv"):
            src.append("arxiv")
        if p.get("pmid"):
            src.append("pubmed")
        p["sources"] = src
    return p


class PaperDB:
    """The papers the fake knows, indexed by every identifier.

    ``indexed``: title searches look, as a search engine's index does, only at the titles
    that share a word with the query other than the most common ones (a word in at most
    ``max(50, 1%)`` of the titles), scored as a full scan scores them. A benchmark's database
    of 40,000 works asks that (a scan costs 0.2 s of CPU per search: a venue's thousands of
    searches would measure the fake); tests scan every title."""

    def __init__(self, papers: list[dict[str, Any]] | None = None, *, indexed: bool = False) -> None:
        self.papers: list[dict[str, Any]] = []
        self._by: dict[str, dict[str, dict[str, Any]]] = {}
        self.indexed = indexed
        #: source -> the titles of the papers it holds (normalised) and each word's titles
        self._titles: dict[str, tuple[list[tuple[str, dict[str, Any]]], dict[str, list[int]]]] = {}
        for p in papers or []:
            self.add(p)

    def add(self, paper: Mapping[str, Any]) -> dict[str, Any]:
        p = _complete(dict(paper))
        self.papers.append(p)
        self._titles.clear()
        for kind, value in (
            ("doi", _doi_key(p.get("doi"))),
            ("arxiv", _arxiv_key(p.get("arxiv"))),
            ("pmid", str(p["pmid"]) if p.get("pmid") else None),
            ("pmcid", str(p["pmcid"]).upper() if p.get("pmcid") else None),
            ("s2", p["s2_paper_id"].lower()),
            ("corpus", str(p["corpus_id"])),
            ("openalex", f"W{p['corpus_id']}"),
        ):
            if value:
                self._by.setdefault(kind, {})[value] = p
        return p

    def get(self, kind: str, value: str | None, source: str | None = None) -> dict[str, Any] | None:
        if not value:
            return None
        if kind == "doi":
            value = _doi_key(value)
        elif kind == "arxiv":
            value = _arxiv_key(value)
        elif kind == "pmcid":
            value = value.upper() if value.upper().startswith("PMC") else "PMC" + value
        elif kind == "s2":
            value = value.lower()
        p = self._by.get(kind, {}).get(value or "")
        if p is not None and source is not None and source not in p["sources"]:
            return None
        return p

    def search(self, query: str, source: str, limit: int = 10,
               cutoff: float = 60.0) -> list[tuple[float, dict[str, Any]]]:
        """Papers whose title resembles ``query``, best first, with a 0-100 score."""
        q = _norm(query)
        if not q:
            return []
        if self.indexed:
            return self._search_index(q, source, limit, cutoff)
        scored = []
        for p in self.papers:
            if source not in p["sources"]:
                continue
            t = _norm(" ".join(title_as(p, source)))
            score = max(fuzz.ratio(q, t), fuzz.token_set_ratio(q, t) - 5)
            if score >= cutoff:
                scored.append((score, p))
        scored.sort(key=lambda sp: -sp[0])
        return scored[:limit]

    def _index(self, source: str) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, list[int]]]:
        got = self._titles.get(source)
        if got is None:
            titles = [(_norm(" ".join(title_as(p, source))), p)
                      for p in self.papers if source in p["sources"]]
            words: dict[str, list[int]] = {}
            for i, (t, _p) in enumerate(titles):
                for w in set(t.split()):
                    words.setdefault(w, []).append(i)
            got = self._titles[source] = (titles, words)
        return got

    def _search_index(self, q: str, source: str, limit: int,
                      cutoff: float) -> list[tuple[float, dict[str, Any]]]:
        titles, words = self._index(source)
        common = max(50, len(titles) // 100)
        near: set[int] = set()
        for w in set(q.split()):
            posting = words.get(w, ())
            if len(posting) <= common:
                near.update(posting)
        if not near and any(len(words.get(w, ())) > common for w in q.split()):
            near = set(range(len(titles)))  # only common words: every title
        scored = []
        for i in sorted(near):
            t, p = titles[i]
            score = max(fuzz.ratio(q, t), fuzz.token_set_ratio(q, t) - 5)
            if score >= cutoff:
                scored.append((score, p))
        scored.sort(key=lambda sp: -sp[0])
        return scored[:limit]


def load_papers(path: str | Path = PAPERS_JSON) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    papers = data["papers"] if isinstance(data, dict) else data
    return [p for p in papers if isinstance(p, dict)]


# ====================================================================== rendering


def _split_name(name: str) -> tuple[str, str]:
    parts = name.split()
    if len(parts) <= 1:
        return "", name
    return " ".join(parts[:-1]), parts[-1]


def _venue(p: dict[str, Any]) -> str:
    return str(p.get("venue") or "")


#: How each source may describe a paper differently from the others, as real sources do
#: (keys a paper may carry; the benchmark set of ``benchmarks/fabrications`` sets them):
#: ``crossref_title`` / ``crossref_subtitle`` (Crossref's ``title`` and ``subtitle``: a
#: subtitle kept apart, "ERRATUM" with the title in the subtitle, JATS or MathML markup,
#: HTML entities, ALL CAPS), ``crossref_online_year`` (``issued`` = the online year,
#: ``published-print`` the paper's year), ``s2_title`` (an index's cut-off title),
#: ``arxiv_title`` (the preprint's own title), ``s2_authors`` (S2's and OpenAlex's author
#: list: cut at ten names, accents stripped), ``authors_crossref`` (names ending in
#: "et al.", initials), ``s2_venue_empty`` (S2 knows an arXiv paper with ``venue`` ""),
#: ``openalex_published_in`` (journals among OpenAlex's ``locations``).
def as_source(p: dict[str, Any], source: str) -> dict[str, Any]:
    """The paper as ``source`` describes it: ``p["as"][source]`` overrides any of its keys
    (``{"as": {"s2": {"venue": "CVPR", "year": 2015}}}``: S2 gives another venue name and the
    preprint's year), so a benchmark can make the sources disagree the way the web does."""
    over = (p.get("as") or {}).get(source)
    return {**p, **over} if over else p


def title_as(p: dict[str, Any], source: str) -> tuple[str, str]:
    """(title, subtitle) as ``source`` gives them."""
    p = as_source(p, source)
    if source in ("crossref", "doi"):
        return str(p.get("crossref_title") or p["title"]), str(p.get("crossref_subtitle") or "")
    if source == "arxiv":
        return str(p.get("arxiv_title") or p["title"]), ""
    if source in ("s2", "openalex"):
        return str(p.get("s2_title") or p["title"]), ""
    return str(p["title"]), ""


def _authors_as(p: dict[str, Any], source: str) -> list[str]:
    if source == "crossref":
        return list(p.get("authors_crossref") or p["authors"])
    if source in ("s2", "openalex"):
        return list(p.get("s2_authors") or p["authors"])
    return list(p["authors"])


def _is_arxiv_only(p: dict[str, Any]) -> bool:
    venue = _venue(p).lower()
    return bool(p.get("arxiv")) and (not venue or venue in {"arxiv", "arxiv.org"})


def _doi_of(p: dict[str, Any]) -> str | None:
    if p.get("doi"):
        return str(p["doi"])
    if p.get("arxiv"):
        return f"10.48550/arXiv.{p['arxiv']}"
    return None


def s2_json(p: dict[str, Any], fields: list[str] | None) -> dict[str, Any]:
    p = as_source(p, "s2")
    ext: dict[str, Any] = {}
    if p.get("doi"):
        ext["DOI"] = p["doi"]
    elif p.get("arxiv"):
        ext["DOI"] = f"10.48550/arXiv.{p['arxiv']}"
    if p.get("arxiv"):
        ext["ArXiv"] = p["arxiv"]
    if p.get("pmid"):
        ext["PubMed"] = str(p["pmid"])
    if p.get("pmcid"):
        ext["PubMedCentral"] = str(p["pmcid"]).removeprefix("PMC")
    ext["CorpusId"] = p["corpus_id"]
    arxiv_only = _is_arxiv_only(p)
    venue = "arXiv.org" if arxiv_only else _venue(p)
    if arxiv_only and p.get("s2_venue_empty"):
        venue = ""  # S2 often leaves an arXiv paper's venue empty (its journal says "ArXiv")
    journal: dict[str, Any] = {}
    if arxiv_only:
        journal = {"name": "ArXiv", "volume": f"abs/{p['arxiv']}"}
    else:
        if p.get("venue"):
            journal["name"] = p["venue"]
        if p.get("volume"):
            journal["volume"] = str(p["volume"])
        if p.get("pages"):
            journal["pages"] = str(p["pages"])
    pub_venue = None
    if venue:
        pub_venue = {
            "id": hashlib.md5(venue.encode()).hexdigest(),
            "name": "arXiv.org" if arxiv_only else venue,
            "type": "journal",
            "alternate_names": ["ArXiv"] if arxiv_only else list(p.get("venue_alternates") or []),
        }
    pdf = p.get("open_access_pdf")
    full: dict[str, Any] = {
        "paperId": p["s2_paper_id"],
        "corpusId": p["corpus_id"],
        "externalIds": ext,
        "url": f"https://www.semanticscholar.org/paper/{p['s2_paper_id']}",
        "title": title_as(p, "s2")[0],
        "abstract": p.get("abstract"),
        "venue": venue,
        "publicationVenue": pub_venue,
        "year": p.get("year"),
        "publicationDate": f"{p['year']}-01-01" if p.get("year") else None,
        "journal": journal or None,
        "authors": [{"authorId": str(1000 + i), "name": a} for i, a in enumerate(_authors_as(p, "s2"))],
        "citationCount": p.get("citation_count", 0),
        "influentialCitationCount": 0,
        "isOpenAccess": bool(pdf),
        "openAccessPdf": {"url": pdf or "", "status": "GREEN" if pdf else None, "license": None},
        "publicationTypes": p.get("publication_types") or ["JournalArticle"],
    }
    wanted = {f.split(".")[0] for f in (fields or ["title"])}
    return {k: v for k, v in full.items() if k == "paperId" or k in wanted}


def _date_parts(p: dict[str, Any], year: Any = None) -> dict[str, Any]:
    year = year or p.get("year")
    return {"date-parts": [[year]]} if year else {"date-parts": [[None]]}


def crossref_work(p: dict[str, Any]) -> dict[str, Any]:
    p = as_source(p, "crossref")
    authors: list[dict[str, Any]] = []
    for i, a in enumerate(_authors_as(p, "crossref")):
        seq = "first" if i == 0 else "additional"
        if a.strip().lower() in ("et al.", "et al", "others"):
            authors.append({"name": a, "sequence": seq, "affiliation": []})
            continue
        given, family = _split_name(a)
        authors.append({"given": given, "family": family, "sequence": seq, "affiliation": []})
    doi = str(p.get("doi"))
    title, subtitle = title_as(p, "crossref")
    online = p.get("crossref_online_year")
    w: dict[str, Any] = {
        "indexed": {"date-parts": [[2025, 1, 1]]},
        "publisher": p.get("publisher") or "Fake Publisher",
        "DOI": doi,
        "type": p.get("type") or "journal-article",
        "title": [title],
        "subtitle": [subtitle] if subtitle else [],
        "author": authors,
        "container-title": [p["venue"]] if p.get("venue") else [],
        "issued": _date_parts(p, online),
        "published": _date_parts(p, online),
        "is-referenced-by-count": p.get("citation_count", 0),
        "URL": f"https://doi.org/{doi}",
        "score": 1,
    }
    if online:
        w["published-online"] = _date_parts(p, online)
        w["published-print"] = _date_parts(p)
    for k, ck in (("volume", "volume"), ("issue", "issue"), ("pages", "page")):
        if p.get(k):
            w[ck] = str(p[k])
    if p.get("abstract"):
        w["abstract"] = f"<jats:p>{xml_escape(p['abstract'])}</jats:p>"
    if p.get("updated_by"):  # Crossref's own entries: {updated, DOI, type, source, label, ...}
        w["updated-by"] = [dict(u) for u in p["updated_by"]]
    return w


_RETRACTING = ("retraction", "withdrawal", "removal")


def is_retracted(p: dict[str, Any]) -> bool:
    """OpenAlex's ``is_retracted`` / PubMed's "Retracted Publication" for a fake paper:
    ``p["is_retracted"]`` when given, else a retraction among its Crossref updates."""
    if "is_retracted" in p:
        return bool(p["is_retracted"])
    return any(str(u.get("type")) in _RETRACTING for u in p.get("updated_by") or [])


def csl_json(p: dict[str, Any]) -> dict[str, Any]:
    p = as_source(p, "doi")
    doi = _doi_of(p) or ""
    datacite = doi.lower().startswith(DATACITE_PREFIXES)
    authors = [dict(zip(("given", "family"), _split_name(a), strict=True)) for a in p["authors"]]
    out: dict[str, Any] = {
        "type": "article" if datacite else "article-journal",
        "id": f"https://doi.org/{doi.lower()}" if datacite else doi,
        "DOI": doi,
        "title": title_as(p, "doi")[0] if not datacite else p["title"],
        "author": authors,
        "issued": _date_parts(p),
        "publisher": "arXiv" if doi.lower().startswith("10.48550/") else (
            "Zenodo" if datacite else p.get("publisher") or "Fake Publisher"),
        "URL": f"https://arxiv.org/abs/{p['arxiv']}" if datacite and p.get("arxiv")
        else f"https://doi.org/{doi}",
    }
    if p.get("crossref_subtitle") and not datacite:
        out["subtitle"] = [p["crossref_subtitle"]]
    if p.get("venue") and not datacite:
        out["container-title"] = p["venue"]
    if p.get("abstract"):
        out["abstract"] = p["abstract"] if datacite else f"<jats:p>{p['abstract']}</jats:p>"
    for k, ck in (("volume", "volume"), ("issue", "issue"), ("pages", "page")):
        if p.get(k) and not datacite:
            out[ck] = str(p[k])
    return out


def openalex_work(p: dict[str, Any]) -> dict[str, Any]:
    p = as_source(p, "openalex")
    doi = _doi_of(p)
    wid = f"https://openalex.org/W{p['corpus_id']}"
    index: dict[str, list[int]] = {}
    for i, word in enumerate((p.get("abstract") or "").split()):
        index.setdefault(word, []).append(i)
    arxiv_only = _is_arxiv_only(p)
    source_name = "arXiv (Cornell University)" if arxiv_only else p.get("venue")
    pages = str(p.get("pages") or "")
    first, _, last = pages.partition("-")
    primary = {
        "is_oa": bool(p.get("open_access_pdf")),
        "landing_page_url": f"https://doi.org/{doi}" if doi else None,
        "pdf_url": p.get("open_access_pdf"),
        "source": {"id": "https://openalex.org/S1", "display_name": source_name,
                   "type": "repository" if arxiv_only else "journal"}
        if source_name else None,
    }
    ids: dict[str, Any] = {"openalex": wid}
    if doi:
        ids["doi"] = f"https://doi.org/{doi.lower()}"
    if p.get("pmid"):
        ids["pmid"] = f"https://pubmed.ncbi.nlm.nih.gov/{p['pmid']}"
    if p.get("pmcid"):
        ids["pmcid"] = f"https://www.ncbi.nlm.nih.gov/pmc/articles/{str(p['pmcid'])[3:]}"
    return {
        "id": wid,
        "doi": f"https://doi.org/{doi.lower()}" if doi else None,
        "title": title_as(p, "openalex")[0],
        "display_name": title_as(p, "openalex")[0],
        "publication_year": p.get("year"),
        "publication_date": f"{p['year']}-01-01" if p.get("year") else None,
        "ids": ids,
        "type": "preprint" if arxiv_only else "article",
        "type_crossref": "posted-content" if arxiv_only else (p.get("type") or "journal-article"),
        "authorships": [
            {"author_position": "first" if i == 0 else "middle",
             "author": {"id": f"https://openalex.org/A{5000 + i}", "display_name": a,
                        "orcid": None},
             "institutions": [], "raw_author_name": a, "raw_affiliation_strings": []}
            for i, a in enumerate(_authors_as(p, "openalex"))
        ],
        "primary_location": primary,
        # the other places the work appeared (``openalex_published_in``: journals OpenAlex
        # lists for a paper every other source knows only as a preprint)
        "locations": [primary, *(
            {"is_oa": False, "landing_page_url": None, "pdf_url": None,
             "source": {"id": f"https://openalex.org/S{2 + i}", "display_name": name,
                        "type": "journal"}}
            for i, name in enumerate(p.get("openalex_published_in") or []))],
        "open_access": {"is_oa": bool(p.get("open_access_pdf")),
                        "oa_url": p.get("open_access_pdf")},
        "biblio": {"volume": p.get("volume"), "issue": p.get("issue"),
                   "first_page": first or None, "last_page": last or None},
        "cited_by_count": p.get("citation_count", 0),
        "is_retracted": is_retracted(p),
        "abstract_inverted_index": index or None,
    }


def _openalex_list(works: list[dict[str, Any]]) -> dict[str, Any]:
    return {"meta": {"count": len(works), "db_response_time_ms": 3, "page": 1, "per_page": 25,
                     "groups_count": None}, "results": works, "group_by": []}


def arxiv_entry(p: dict[str, Any], legacy: bool) -> str:
    p = as_source(p, "arxiv")
    aid = p["arxiv"]
    version = int(p.get("arxiv_version", 1))
    year = p.get("year") or 2000
    authors = "".join(f"\n    <author>\n      <name>{xml_escape(a)}</name>\n    </author>"
                      for a in p["authors"])
    ns = ' xmlns:arxiv="http://arxiv.org/schemas/atom"' if legacy else ""
    extra = ""
    doi = p.get("doi")
    if doi and not str(doi).lower().startswith("10.48550/"):
        extra += f"\n    <arxiv:doi{ns}>{xml_escape(str(doi))}</arxiv:doi>"
        extra += (f'\n    <link href="https://doi.org/{xml_escape(str(doi))}" rel="related" '
                  'title="doi"/>')
    if p.get("venue") and not _is_arxiv_only(p):
        ref = f"{p['venue']} {p.get('volume') or ''} ({year})".replace("  ", " ")
        extra += f"\n    <arxiv:journal_ref{ns}>{xml_escape(ref)}</arxiv:journal_ref>"
    title = xml_escape(title_as(p, "arxiv")[0])
    if legacy and len(title) > 60:  # legacy feeds wrapped long titles
        cut = title.rfind(" ", 0, 60)
        title = title[:cut] + "\n  " + title[cut + 1:] if cut > 0 else title
    summary = xml_escape(p.get("abstract") or "")
    scheme = ' scheme="http://arxiv.org/schemas/atom"' if legacy else ""
    http = "http" if legacy else "https"
    return f"""
  <entry>
    <id>http://arxiv.org/abs/{aid}v{version}</id>
    <title>{title}</title>
    <updated>{year}-01-02T00:00:00Z</updated>
    <link href="{http}://arxiv.org/abs/{aid}v{version}" rel="alternate" type="text/html"/>
    <link href="{http}://arxiv.org/pdf/{aid}v{version}" rel="related" \
type="application/pdf" title="pdf"/>
    <summary>{"  " if legacy else ""}{summary}
</summary>
    <category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
    <published>{year}-01-01T00:00:00Z</published>
    <arxiv:primary_category{ns} term="cs.LG"{scheme}/>{authors}{extra}
  </entry>"""


def arxiv_feed(entries: list[str], query: str, legacy: bool) -> str:
    q = xml_escape(query)
    n = len(entries)
    if legacy:
        os_ns = ' xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"'
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
            f'  <link href="http://arxiv.org/api/query?{quote(query)}" rel="self" '
            'type="application/atom+xml"/>\n'
            f'  <title type="html">ArXiv Query: {q}</title>\n'
            "  <id>http://arxiv.org/api/fake</id>\n  <updated>2016-10-09T00:00:00-04:00</updated>\n"
            f"  <opensearch:totalResults{os_ns}>{n}</opensearch:totalResults>\n"
            f"  <opensearch:startIndex{os_ns}>0</opensearch:startIndex>\n"
            f"  <opensearch:itemsPerPage{os_ns}>{max(n, 10)}</opensearch:itemsPerPage>"
            + "".join(entries) + "\n</feed>\n"
        )
    return (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">\n'
        "  <id>https://arxiv.org/api/fake</id>\n"
        f"  <title>arXiv Query: {q}</title>\n  <updated>2026-04-12T22:10:19Z</updated>\n"
        f'  <link href="https://arxiv.org/api/query?{q}" type="application/atom+xml"/>\n'
        f"  <opensearch:itemsPerPage>{max(n, 10)}</opensearch:itemsPerPage>\n"
        f"  <opensearch:totalResults>{n}</opensearch:totalResults>\n"
        "  <opensearch:startIndex>0</opensearch:startIndex>" + "".join(entries) + "\n</feed>\n"
    )


def arxiv_error_feed(bad_id: str) -> str:
    e = xml_escape(bad_id)
    return (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">\n'
        "  <id>https://arxiv.org/</id>\n  <title>arXiv Search Results</title>\n"
        "  <updated>2026-04-12T22:59:06Z</updated>\n"
        "  <opensearch:itemsPerPage>1</opensearch:itemsPerPage>\n"
        "  <opensearch:totalResults>1</opensearch:totalResults>\n"
        "  <opensearch:startIndex>0</opensearch:startIndex>\n  <entry>\n"
        f"    <id>https://arxiv.org/api/errors#incorrect_id_format_for_{e}</id>\n"
        "    <title>Error</title>\n    <updated>2026-04-12T22:59:06Z</updated>\n"
        f'    <link href="https://arxiv.org/api/errors#incorrect_id_format_for_{e}" '
        'rel="alternate" type="text/html"/>\n'
        f"    <summary>incorrect id format for {e}</summary>\n"
        "    <author>\n      <name>arXiv api core</name>\n    </author>\n  </entry>\n</feed>\n"
    )


def pubmed_article(p: dict[str, Any]) -> str:
    x = xml_escape
    authors = ""
    for a in p["authors"]:
        given, family = _split_name(a)
        initials = "".join(w[0] for w in given.split() if w)
        authors += (f'<Author ValidYN="Y"><LastName>{x(family)}</LastName><ForeName>{x(given)}'
                    f"</ForeName><Initials>{x(initials)}</Initials></Author>")
    sections = p.get("abstract_sections")
    if sections:
        abstract = "".join(
            f'<AbstractText Label="{x(label)}" NlmCategory="{x(label)}">{x(text)}</AbstractText>'
            for label, text in sections)
    elif p.get("abstract"):
        abstract = f"<AbstractText>{x(p['abstract'])}</AbstractText>"
    else:
        abstract = ""
    ids = f'<ArticleId IdType="pubmed">{p["pmid"]}</ArticleId>'
    if p.get("doi"):
        ids += f'<ArticleId IdType="doi">{x(str(p["doi"]))}</ArticleId>'
    if p.get("pmcid"):
        ids += f'<ArticleId IdType="pmc">{x(str(p["pmcid"]))}</ArticleId>'
    year = f"<Year>{p['year']}</Year>" if p.get("year") else "<MedlineDate>unknown</MedlineDate>"
    types = '<PublicationType UI="D016428">Journal Article</PublicationType>'
    comments = ""
    if is_retracted(p):
        types += '<PublicationType UI="D016441">Retracted Publication</PublicationType>'
        notice = p.get("retraction_notice_pmid")
        comments = ('<CommentsCorrectionsList><CommentsCorrections RefType="RetractionIn">'
                    f"<RefSource>{x(_venue(p))}. Retraction notice.</RefSource>"
                    + (f'<PMID Version="1">{x(str(notice))}</PMID>' if notice else "")
                    + "</CommentsCorrections></CommentsCorrectionsList>")
    return (
        '<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
        f'<PMID Version="1">{p["pmid"]}</PMID><Article PubModel="Print"><Journal>'
        f'<JournalIssue CitedMedium="Internet"><Volume>{x(str(p.get("volume") or ""))}</Volume>'
        f"<Issue>{x(str(p.get('issue') or ''))}</Issue><PubDate>{year}</PubDate></JournalIssue>"
        f"<Title>{x(_venue(p))}</Title></Journal><ArticleTitle>{x(p['title'])}.</ArticleTitle>"
        f"<Pagination><MedlinePgn>{x(str(p.get('pages') or ''))}</MedlinePgn></Pagination>"
        + (f"<Abstract>{abstract}</Abstract>" if abstract else "")
        + f'<AuthorList CompleteYN="Y">{authors}</AuthorList><Language>eng</Language>'
        f"<PublicationTypeList>{types}</PublicationTypeList></Article>{comments}"
        "</MedlineCitation><PubmedData><PublicationStatus>ppublish</PublicationStatus>"
        f"<ArticleIdList>{ids}</ArticleIdList></PubmedData></PubmedArticle>"
    )


PUBMED_HEAD = (
    '<?xml version="1.0" ?>\n<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, '
    '1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
)


def tiny_pdf(lines: list[str]) -> bytes:
    """A valid one-font PDF whose text ``pypdf`` can extract (one page per 45 lines)."""
    def esc(s: str) -> str:
        s = s.encode("latin-1", "replace").decode("latin-1")
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    wrapped: list[str] = []
    for line in lines:
        while len(line) > 90:
            cut = line.rfind(" ", 0, 90)
            cut = cut if cut > 0 else 90
            wrapped.append(line[:cut])
            line = line[cut:].lstrip()
        wrapped.append(line)
    pages = [wrapped[i:i + 45] for i in range(0, max(len(wrapped), 1), 45)]
    objs: list[bytes] = [b"", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for page in pages:
        text = "BT /F1 10 Tf 50 780 Td 14 TL " + " ".join(f"({esc(s)}) '" for s in page) + " ET"
        stream = zlib.compress(text.encode("latin-1"))
        objs.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream)
                    + stream + b"\nendstream")
        content_no = len(objs)
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                    b"/Resources << /Font << /F1 3 0 R >> >> >>" % content_no)
        kids.append(len(objs))
    objs[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objs[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


# ====================================================================== faults and state


@dataclass
class Fault:
    mode: str = "ok"
    remaining: int | None = None  # None = until changed
    status: int | None = None
    stall_s: float = 30.0
    retry_after: str | None = None
    kind: str = "anubis"  # the challenge page's kind (mode "challenge")


@dataclass
class _Limit:
    interval_s: float
    max_concurrency: int | None
    jitter_s: float = 0.0
    last_start: float = -1e9
    in_flight: int = 0
    burst: int = 1  # > 1: a token bucket with room for this many requests (GCRA)
    due: float = -1e9  # (burst > 1) when the bucket is full again

@dataclass
class _Response:
    status: int
    body: bytes
    content_type: str
    headers: dict[str, str] = field(default_factory=dict)


#: What "bomb" and "huge" add to a true answer (still valid JSON: trailing blanks).
OVERSIZE_PADDING = 64 << 20


def _oversized(r: _Response, mode: str) -> _Response:
    """The true answer padded to 64 MB: "huge" as it is (its Content-Length says so),
    "bomb" gzip-compressed (about 64 kB on the wire)."""
    body = r.body + b" " * OVERSIZE_PADDING
    if mode == "huge":
        return _Response(r.status, body, r.content_type, r.headers)
    packer = zlib.compressobj(1, zlib.DEFLATED, 31)
    packed = packer.compress(body) + packer.flush()
    return _Response(r.status, packed, r.content_type, {**r.headers, "Content-Encoding": "gzip"})


def _json(status: int, data: Any, ctype: str = "application/json") -> _Response:
    return _Response(status, (json.dumps(data, ensure_ascii=False) + "\n").encode(), ctype)


def _text(status: int, text: str, ctype: str) -> _Response:
    return _Response(status, text.encode("utf-8"), ctype)


NOT_FOUND_HTML = (
    "<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n"
    "<p>The requested URL was not found on the server. If you entered the URL manually please "
    "check your spelling and try again.</p>\n"
)
DOI_NOT_FOUND_HTML = (
    '<!DOCTYPE html>\n<html lang="en-us">\n<head>\n<meta charset="UTF-8">\n'
    "<title>Error: DOI Not Found</title>\n</head>\n<body><h1>DOI Not Found</h1>\n"
    "<p>The DOI was not found.</p></body></html>\n"
)
NOT_A_DOI_HTML = (
    '<!DOCTYPE html>\n<html lang="en-us">\n<head>\n<title>Error: Not a DOI</title>\n</head>\n'
    "<body><h1>Not a DOI</h1></body></html>\n"
)
S2_429 = {"message": "Too Many Requests. Please wait and try again or apply for a key for higher "
          "rate limits. https://www.semanticscholar.org/product/api#api-key-form", "code": "429"}
#: dblp's answer to scripts since 2025: Anubis's proof-of-work page, HTTP 200 (the start of the
#: page as curl receives it, github.com/gianlucasb/hallucinator issue 326).
ANUBIS_HTML = (
    '<!doctype html><html lang="en"><head><title>Making sure you&#39;re not a bot!</title>'
    '<link rel="stylesheet" href="/.within.website/x/xess/xess.min.css?cachebuster=1.21.3">'
    '<script id="anubis_challenge" type="application/json">{"rules":{"algorithm":"fast",'
    '"difficulty":4,"report_as":4},"challenge":"5f3a0c2e9b"}</script></head><body id="top">'
    '<main><h1 id="title" class="centered-div">Making sure you&#39;re not a bot!</h1>'
    '<p id="status" class="centered-div">Loading...</p></main></body></html>'
)
CLOUDFLARE_HTML = ("<!DOCTYPE html><html><head><title>Just a moment...</title></head>"
                   "<body>Checking your browser</body></html>")
CHALLENGES = {"anubis": ANUBIS_HTML, "cloudflare": CLOUDFLARE_HTML}


# ---------------------------------------------------------------------- the 2026 limits

#: OpenAlex prices in credits (1 credit = $0.0001), as its gateway counts them.
CREDIT_USD = 0.0001
OPENALEX_SEARCH_FILTERS = ("abstract.search", "default.search", "display_name.search",
                           "fulltext.search", "keyword.search", "raw_affiliation_strings.search",
                           "raw_author_name.search", "title.search", "title_and_abstract.search")


def openalex_credits(path: str, query: Mapping[str, str]) -> int:
    """What one OpenAlex call costs, in credits: a singleton by id or ``doi:`` free (0), a
    list or filter 1, a search 10 (``search=``, ``search.*=``, a ``*.search`` filter).
    A work asked by its DOI URL (``/works/https://doi.org/…``) is priced as a list, as
    OpenAlex prices it."""
    parts = [p for p in path.strip("/").split("/", 1) if p]
    if len(parts) == 2 and (re.fullmatch(r"[A-Za-z]?\d+", parts[1])
                            or parts[1].lower().startswith("doi:")):
        return 0
    if "search" in query or any(k.startswith("search.") for k in query):
        return 10
    if any(f in query.get("filter", "") for f in OPENALEX_SEARCH_FILTERS):
        return 10
    return 1


def _usd(credits: int) -> str:
    """Dollars as the gateway writes them (JavaScript's number text: "0.1", "1", "0.0999")."""
    value = round(credits * CREDIT_USD, 4)
    return str(int(value)) if value == int(value) else repr(value)


def seconds_to_midnight_utc(now: float | None = None) -> int:
    now = time.time() if now is None else now
    return max(1, int(86400 - now % 86400 + 0.999))


@dataclass
class OpenAlexBudget:
    """OpenAlex's daily budget as its gateway meters it (see the module docstring)."""

    keyless_usd: float = 0.10
    key_usd: float = 1.0
    keys: frozenset[str] | None = None  # the keys it knows (None: any key)
    reset_s: float | None = None  # seconds from now to the reset (None: midnight UTC)
    used: dict[str, int] = field(default_factory=dict)  # credits spent, by key or "ip"
    resets_at: float = 0.0  # time.time() of the next reset

    def payer(self, key: str | None) -> str:
        return f"key:{key}" if key else "ip"

    def limit(self, key: str | None) -> int:
        return round((self.key_usd if key else self.keyless_usd) / CREDIT_USD)

    def left(self, key: str | None) -> int:
        return max(0, self.limit(key) - self.used.get(self.payer(key), 0))

    def reset_in(self) -> int:
        now = time.time()
        if now >= self.resets_at:  # a new day: every budget is whole again
            self.used.clear()
            self.resets_at = now + (self.reset_s if self.reset_s is not None
                                    else seconds_to_midnight_utc(now))
        return max(1, int(self.resets_at - now + 0.999))


@dataclass
class S2Pool:
    """Semantic Scholar's pools: keyless calls share one (429 bursts), a key has its rate."""

    burst: int = 3  # of every ``period`` keyless calls, this many in a row are refused
    period: int = 10
    key_rps: float = 1.0
    keys: frozenset[str] | None = None
    keyless_calls: int = 0
    key_last: dict[str, float] = field(default_factory=dict)


def _openalex_key(query: Mapping[str, str], headers: Mapping[str, str]) -> str | None:
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return query.get("api_key") or query.get("api-key") or headers.get("api-key") or None


def _mask(key: str) -> str:
    return "***" if len(key) <= 6 else f"{key[:3]}...{key[-3:]}"


class ScholarlyFake:
    """The fake server and its switches. Thread-safe; start with ``with`` or :meth:`start`."""

    def __init__(self, papers: list[dict[str, Any]] | None = None, *, host: str = "127.0.0.1",
                 port: int = 0, indexed_search: bool = False) -> None:
        self.db = PaperDB(load_papers() if papers is None else papers, indexed=indexed_search)
        self.arxiv_legacy = False
        self._host, self._port = host, port
        self._lock = threading.RLock()
        self._faults: dict[str, Fault] = {}
        self._limits: dict[str, _Limit] = {}
        self._latency: dict[str, float] = {}
        self.openalex_budget: OpenAlexBudget | None = None
        self.s2_pool: S2Pool | None = None
        self._log: list[dict[str, Any]] = []
        self._jitter = random.Random(1234)
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> ScholarlyFake:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _Server((self._host, self._port), handler)
        self._port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ScholarlyFake:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ addresses

    @property
    def port(self) -> int:
        return self._port

    @property
    def root(self) -> str:
        return f"http://{self._host}:{self._port}"

    def urls(self) -> dict[str, str]:
        """Base URL per source, as the Settings fields expect them."""
        return {src: self.root + prefix for prefix, src in PREFIXES}

    def env(self, cache: str | Path | None = None) -> dict[str, str]:
        """``CITELENS_*_URL`` variables pointing a subprocess at this server (and, with
        ``cache``, ``CITELENS_CACHE_DIR`` at that folder)."""
        env = {ENV_VARS[src]: url for src, url in self.urls().items()}
        if cache is not None:
            env["CITELENS_CACHE_DIR"] = str(cache)
        return env

    def settings(self, **overrides: Any) -> Settings:
        """Settings pointing at this server, with test-friendly timing unless overridden."""
        urls = {SETTING_NAMES[s]: u for s, u in self.urls().items()}
        urls.update({k: v for k, v in overrides.items() if k in urls})  # a host's base URL
        values: dict[str, Any] = {"request_timeout_s": 2.0, "retry_backoff_s": 0.01}
        values["s2_requests_per_second"] = 1000.0
        values.update({k: v for k, v in overrides.items() if k not in urls})
        return dataclasses.replace(Settings(), source_urls=urls, **values)

    # ------------------------------------------------------------------ data

    def add_paper(self, paper: Mapping[str, Any]) -> dict[str, Any]:
        """Add one paper (keys as in papers.json); returns it with derived ids filled in."""
        with self._lock:
            return self.db.add(paper)

    def load(self, papers: str | Path | list[dict[str, Any]]) -> None:
        """Replace the whole database (a papers.json-style file or a list)."""
        data = load_papers(papers) if isinstance(papers, str | Path) else papers
        with self._lock:
            self.db = PaperDB(data, indexed=self.db.indexed)

    # ------------------------------------------------------------------ switches

    def set_mode(self, source: str, mode: str, count: int | None = None, *,
                 status: int | None = None, stall_s: float = 30.0,
                 retry_after: str | float | None = None, kind: str = "anubis") -> None:
        """Switch a source's behaviour (see the module docstring); ``count`` = next N only."""
        if source not in SOURCES:
            raise ValueError(f"unknown source {source!r}")
        mode = "ok" if mode in {"up", "ok", "normal"} else mode
        if mode not in {"ok", "429", "5xx", "stall", "malformed", "html", "reset", "down",
                        "echo", "bomb", "huge", "challenge", "accepted"}:
            raise ValueError(f"unknown mode {mode!r}")
        if kind not in CHALLENGES:
            raise ValueError(f"unknown challenge {kind!r}")
        with self._lock:
            self._faults[source] = Fault(mode, count, status, stall_s,
                                         None if retry_after is None else str(retry_after), kind)

    def set_openalex_budget(self, keyless_usd: float | None = 0.10, key_usd: float = 1.0, *,
                            keys: set[str] | frozenset[str] | None = None,
                            reset_s: float | None = None) -> None:
        """Meter OpenAlex's daily budget (``keyless_usd`` None: unmetered, the world before
        2026): ``keyless_usd`` a day without a key (shared by the IP), ``key_usd`` per key;
        ``keys``: the keys OpenAlex knows (None: any); ``reset_s``: seconds to the reset
        (None: midnight UTC). Budgets start whole."""
        with self._lock:
            self.openalex_budget = None if keyless_usd is None else OpenAlexBudget(
                keyless_usd, key_usd, None if keys is None else frozenset(keys), reset_s)

    def spend_openalex(self, usd: float, key: str | None = None) -> None:
        """Spend ``usd`` of a budget (``key`` None: the keyless IP's), as other callers did."""
        with self._lock:
            b = self.openalex_budget
            if b is None:
                raise ValueError("OpenAlex's budget is not metered")
            b.reset_in()
            who = b.payer(key)
            b.used[who] = b.used.get(who, 0) + round(usd / CREDIT_USD)

    def openalex_left(self, key: str | None = None) -> float:
        """Dollars left today (``key`` None: the keyless IP's budget)."""
        with self._lock:
            b = self.openalex_budget
            if b is None:
                return float("inf")
            b.reset_in()
            return b.left(key) * CREDIT_USD

    def set_s2_pool(self, burst: int | None = 3, period: int = 10, *, key_rps: float = 1.0,
                    keys: set[str] | frozenset[str] | None = None) -> None:
        """Semantic Scholar's pools (``burst`` None: off): of every ``period`` calls without a
        key, ``burst`` in a row answer 429; a key is held to ``key_rps``; ``keys``: the keys
        S2 knows (None: any; another is 403)."""
        with self._lock:
            self.s2_pool = None if burst is None else S2Pool(
                burst, max(1, period), key_rps, None if keys is None else frozenset(keys))

    def set_rate_limit(self, source: str, per_second: float | None,
                       max_concurrency: int | None = None, jitter_s: float = 0.0,
                       burst: int = 1) -> None:
        """Answer 429 when request starts come faster than ``per_second`` (None: no limit).

        ``jitter_s`` delays each request by a random 0..jitter_s seconds before the limiter
        sees it (the network's jitter), so pacing at exactly the limit is not enough.
        ``burst`` > 1 counts as a real gateway's token bucket does: that many requests may
        come close together after a pause, the rate holds on average (1: every two starts
        at least the spacing apart, which a loaded machine's thread scheduling alone breaks)."""
        with self._lock:
            if per_second is None:
                self._limits.pop(source, None)
            else:
                self._limits[source] = _Limit(1.0 / per_second, max_concurrency, jitter_s, burst=burst)

    def set_latency(self, source: str, seconds: float) -> None:
        """Answer every request of ``source`` ``seconds`` late (0: at once): which host answers
        first is then the test's choice, not the machine's timing."""
        if source not in SOURCES:
            raise ValueError(f"unknown source {source!r}")
        with self._lock:
            self._latency[source] = max(0.0, seconds)

    def enforce_real_limits(self) -> None:
        for src, (rps, conc) in REAL_LIMITS.items():
            self.set_rate_limit(src, rps, conc, REAL_JITTER_S.get(src, 0.0))

    def _delay(self, source: str) -> float:
        with self._lock:
            lim = self._limits.get(source)
            late = self._latency.get(source, 0.0)
            return late + (self._jitter.uniform(0.0, lim.jitter_s) if lim and lim.jitter_s else 0.0)

    def reset(self) -> None:
        """All sources back to normal, no rate limits, empty request log."""
        with self._lock:
            self._faults.clear()
            self._limits.clear()
            self._latency.clear()
            self._log.clear()
            self.arxiv_legacy = False
            self.openalex_budget = None
            self.s2_pool = None

    # ------------------------------------------------------------------ request log

    def requests(self, source: str | None = None) -> list[dict[str, Any]]:
        """Requests received (oldest first): source, method, path, query, headers, body, t."""
        with self._lock:
            return [dict(r) for r in self._log if source is None or r["source"] == source]

    def count(self, source: str | None = None) -> int:
        return len(self.requests(source))

    def counts(self) -> dict[str, int]:
        with self._lock:
            out = dict.fromkeys(SOURCES, 0)
            for r in self._log:
                out[r["source"]] = out.get(r["source"], 0) + 1
            return out

    def spent_usd(self, source: str = "openalex") -> float:
        """Dollars the logged requests of ``source`` cost at OpenAlex's 2026 prices (metered
        or not: what an unmetered run would have spent)."""
        with self._lock:
            return round(sum(r.get("cost_usd", 0.0) for r in self._log
                             if r["source"] == source), 4)

    def clear_log(self) -> None:
        with self._lock:
            self._log.clear()

    # ------------------------------------------------------------------ internals

    def _take_fault(self, source: str) -> Fault:
        with self._lock:
            f = self._faults.get(source)
            if f is None or f.mode == "ok":
                return Fault()
            if f.remaining is not None:
                f.remaining -= 1
                if f.remaining <= 0:
                    del self._faults[source]
            return dataclasses.replace(f)

    def _over_limit(self, source: str) -> bool:
        with self._lock:
            lim = self._limits.get(source)
            if lim is None:
                return False
            now = time.monotonic()
            too_many = lim.max_concurrency is not None and lim.in_flight >= lim.max_concurrency
            spacing = lim.interval_s * 0.9
            if lim.burst > 1:  # a request is let in while the bucket has a token
                too_fast = now < lim.due - (lim.burst - 1) * spacing
                if not too_fast and not too_many:
                    lim.due = max(lim.due, now) + spacing
                return too_fast or too_many
            too_fast = now - lim.last_start < spacing
            lim.last_start = now
            return too_fast or too_many

    def _flight(self, source: str, delta: int) -> None:
        with self._lock:
            lim = self._limits.get(source)
            if lim is not None:
                lim.in_flight += delta

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._log.append(entry)

    def _control(self, data: Mapping[str, Any]) -> Any:
        action = data.get("action") or ("mode" if "mode" in data else "")
        if action == "mode":
            self.set_mode(str(data["source"]), str(data["mode"]), data.get("count"),
                          status=data.get("status"), stall_s=float(data.get("stall_s", 30.0)),
                          retry_after=data.get("retry_after"),
                          kind=str(data.get("kind", "anubis")))
        elif action == "rate":
            self.set_rate_limit(str(data["source"]), data.get("per_second"),
                                data.get("max_concurrency"), float(data.get("jitter_s", 0.0)))
        elif action == "enforce_real_limits":
            self.enforce_real_limits()
        elif action == "openalex_budget":
            keys = data.get("keys")
            self.set_openalex_budget(data.get("keyless_usd"), float(data.get("key_usd", 1.0)),
                                     keys=None if keys is None else set(keys),
                                     reset_s=data.get("reset_s"))
        elif action == "spend_openalex":
            self.spend_openalex(float(data["usd"]), data.get("key"))
        elif action == "s2_pool":
            keys = data.get("keys")
            self.set_s2_pool(data.get("burst"), int(data.get("period", 10)),
                             key_rps=float(data.get("key_rps", 1.0)),
                             keys=None if keys is None else set(keys))
        elif action == "add_paper":
            return self.add_paper(data["paper"])
        elif action == "load":
            self.load(data["papers"] if "papers" in data else str(data["path"]))
        elif action == "reset":
            self.reset()
        elif action == "clear_log":
            self.clear_log()
        elif action == "arxiv_legacy":
            self.arxiv_legacy = bool(data.get("on", True))
        else:
            raise ValueError(f"unknown control action {action!r}")
        return {"ok": True}

    # ------------------------------------------------------------------ the 2026 limits

    def _gate(self, source: str, path: str, query: Mapping[str, str],
              headers: Mapping[str, str]) -> tuple[_Response | None, dict[str, str], float]:
        """What a source's gateway does before it answers: (its refusal, or None; the
        headers it adds to the answer; the call's cost in dollars)."""
        if source == "openalex":
            return self._openalex_gate(path, query, headers)
        if source == "s2":
            return self._s2_gate(headers), {}, 0.0
        return None, {}, 0.0

    def _openalex_gate(self, path: str, query: Mapping[str, str],
                       headers: Mapping[str, str]) -> tuple[_Response | None, dict[str, str], float]:
        with self._lock:
            b = self.openalex_budget
            if b is None:  # unmetered: what it would have cost is still counted
                return None, {}, openalex_credits(path, query) * CREDIT_USD
            key = _openalex_key(query, headers)
            if key and b.keys is not None and key not in b.keys:
                return _json(401, {"error": "Invalid or missing API key",
                                   "message": "API key not found"}), {}, 0.0
            reset = b.reset_in()
            limit, who = b.limit(key), b.payer(key)
            used = b.used.get(who, 0)
            if path.strip("/").lower() == "rate-limit":  # no X-RateLimit headers on it
                if not key:
                    return _json(401, {"error": "Authentication required", "message":
                                       "You must provide a valid API key to check rate limit "
                                       "status"}), {}, 0.0
                left = max(0, limit - used)
                return _json(200, {"api_key": _mask(key), "is_grandfathered": False, "rate_limit": {
                    "daily_budget_usd": float(_usd(limit)), "daily_used_usd": float(_usd(used)),
                    "daily_remaining_usd": float(_usd(left)), "prepaid_balance_usd": 0,
                    "prepaid_remaining_usd": 0, "prepaid_expires_at": None,
                    "resets_at": time.strftime("%Y-%m-%dT%H:%M:%S.000Z",
                                               time.gmtime(time.time() + reset)),
                    "resets_in_seconds": reset,
                    "endpoint_costs_usd": {"singleton": 0, "list": 0.0001, "search": 0.001,
                                           "content": 0.01, "semantic": 0.01, "text": 0.01},
                    "credits_limit": limit, "credits_used": used, "credits_remaining": left,
                    "credit_costs": {"singleton": 0, "list": 1, "search": 10, "content": 100,
                                     "semantic": 100, "text": 100}}}), {}, 0.0
            cost = openalex_credits(path, query)
            if cost and used + cost > limit:  # the gateway's refusal, word for word
                left = max(0, limit - used)
                r = _json(429, {
                    "error": "Rate limit exceeded",
                    "message": f"Insufficient budget. This request costs ${_usd(cost)} but you "
                               f"only have ${_usd(left)} remaining. Resets at midnight UTC. Need "
                               "more? Add funds at https://openalex.org/pricing",
                    "retryAfter": reset, "costUsd": float(_usd(cost)),
                    "dailyRemainingUsd": float(_usd(left)), "prepaidRemainingUsd": 0,
                    "creditsRequired": cost, "creditsRemaining": left,
                    "onetimeCreditsRemaining": 0})
                r.headers.update({
                    "Retry-After": str(reset), "X-RateLimit-Limit-USD": _usd(limit),
                    "X-RateLimit-Remaining-USD": _usd(left),
                    "X-RateLimit-Prepaid-Remaining-USD": "0",
                    "X-RateLimit-Cost-Required-USD": _usd(cost), "X-RateLimit-Limit": str(limit),
                    "X-RateLimit-Remaining": str(left), "X-RateLimit-Onetime-Remaining": "0",
                    "X-RateLimit-Credits-Required": str(cost), "X-RateLimit-Reset": str(reset)})
                return r, {}, 0.0
            b.used[who] = used + cost
            left = limit - used - cost
            return None, {
                "X-RateLimit-Limit-USD": _usd(limit), "X-RateLimit-Remaining-USD": _usd(left),
                "X-RateLimit-Prepaid-Remaining-USD": "0", "X-RateLimit-Cost-USD": _usd(cost),
                "X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(left),
                "X-RateLimit-Onetime-Remaining": "0", "X-RateLimit-Credits-Used": str(cost),
                "X-RateLimit-Reset": str(reset)}, cost * CREDIT_USD

    def _s2_gate(self, headers: Mapping[str, str]) -> _Response | None:
        with self._lock:
            pool = self.s2_pool
            if pool is None:
                return None
            key = headers.get("x-api-key")
            if key:
                if pool.keys is not None and key not in pool.keys:
                    return _json(403, {"message": "Forbidden"})
                now = time.monotonic()
                last = pool.key_last.get(key, -1e9)
                pool.key_last[key] = now
                return _json(429, S2_429) if now - last < 0.9 / pool.key_rps else None
            n = pool.keyless_calls
            pool.keyless_calls += 1
            return _json(429, S2_429) if n % pool.period < pool.burst else None

    # ------------------------------------------------------------------ the APIs

    def answer(self, source: str, method: str, path: str, query: dict[str, str],
               body: bytes, headers: Mapping[str, str]) -> _Response:
        handler = getattr(self, f"_api_{source}")
        with self._lock:
            result: _Response = handler(method, path, query, body, headers)
        return result

    def _api_s2(self, method: str, path: str, q: dict[str, str], body: bytes,
                headers: Mapping[str, str]) -> _Response:
        fields = [f for f in q.get("fields", "").split(",") if f] or None
        if path == "/paper/batch" and method == "POST":
            try:
                ids = json.loads(body or b"{}").get("ids")
                assert isinstance(ids, list)
            except (ValueError, AssertionError, AttributeError):
                return _json(400, {"error": "Unacceptable request body"})
            if len(ids) > 500:
                return _json(400, {"error": "Cannot process more than 500 ids"})
            out = []
            for i in ids:
                p = self._s2_find(str(i))
                out.append(s2_json(p, fields) if p else None)
            return _json(200, out)
        if path == "/paper/search/match":
            hits = self.db.search(q.get("query", ""), "s2", limit=1, cutoff=80)
            if not hits:
                return _json(404, {"error": "Title match not found"})
            score, p = hits[0]
            return _json(200, {"data": [{**s2_json(p, fields), "matchScore": score * 1.5}]})
        if path == "/paper/search":
            limit = int(q.get("limit", "10") or 10)
            offset = int(q.get("offset", "0") or 0)
            hits = self.db.search(q.get("query", ""), "s2", limit=offset + limit, cutoff=55)
            page = hits[offset:offset + limit]
            out: dict[str, Any] = {"total": len(hits), "offset": offset}
            if offset + limit < len(hits):  # S2 sends "next" except on the last page
                out["next"] = offset + limit
            if page:
                out["data"] = [s2_json(p, fields) for _, p in page]
            return _json(200, out)
        if path.startswith("/paper/"):
            pid = unquote(path[len("/paper/"):])
            p = self._s2_find(pid)
            if p is None:
                return _json(404, {"error": f"Paper with id {pid} not found"})
            return _json(200, s2_json(p, fields))
        return _json(404, {"error": "Not found"})

    def _s2_find(self, pid: str) -> dict[str, Any] | None:
        kind, _, value = pid.partition(":")
        kinds = {"doi": "doi", "arxiv": "arxiv", "pmid": "pmid", "pmcid": "pmcid",
                 "corpusid": "corpus"}
        if value and kind.lower() in kinds:
            return self.db.get(kinds[kind.lower()], value, "s2")
        if pid.startswith("10."):
            return self.db.get("doi", pid, "s2")
        return self.db.get("s2", pid, "s2")

    def _api_crossref(self, method: str, path: str, q: dict[str, str], body: bytes,
                      headers: Mapping[str, str]) -> _Response:
        path = path.removeprefix("/v1")
        env = {"status": "ok", "message-version": "1.0.0"}
        filters = [f for f in q.get("filter", "").split(",") if f]
        if path in {"/works", "/works/"} and filters and all(f.startswith("doi:")
                                                             for f in filters):
            rows = int(q.get("rows", "20") or 20)
            found = [p for f in filters if (p := self.db.get("doi", f[4:], "crossref"))]
            items = [crossref_work(p) for p in found[:rows]]
            return _json(200, {**env, "message-type": "work-list", "message": {
                "facets": {}, "total-results": len(found), "items": items,
                "items-per-page": rows, "query": {"start-index": 0, "search-terms": None}}})
        if path in {"/works", "/works/"}:
            query = q.get("query.bibliographic") or q.get("query.title") or q.get("query", "")
            rows = int(q.get("rows", "20") or 20)
            hits = self.db.search(query, "crossref", limit=rows, cutoff=50)
            items = [{**crossref_work(p), "score": round(s / 2, 2)} for s, p in hits]
            return _json(200, {**env, "message-type": "work-list", "message": {
                "facets": {}, "total-results": len(items), "items": items,
                "items-per-page": rows, "query": {"start-index": 0, "search-terms": query}}})
        if path.startswith("/works/"):
            doi = unquote(path[len("/works/"):])
            transform = doi.endswith("/transform") or "/transform/" in doi
            if transform:
                doi = doi.split("/transform")[0]
            p = self.db.get("doi", doi, "crossref")
            if p is None:
                return _text(404, "Resource not found.", "text/plain")
            if transform:
                accept = headers.get("accept", "")
                if "bibtex" in accept:
                    return _text(200, _bibtex(p), "application/x-bibtex")
                return _json(200, csl_json(p), "application/vnd.citationstyles.csl+json")
            return _json(200, {**env, "message-type": "work", "message": crossref_work(p)})
        return _text(404, "Resource not found.", "text/plain")

    def _api_openalex(self, method: str, path: str, q: dict[str, str], body: bytes,
                      headers: Mapping[str, str]) -> _Response:
        if path in {"/works", "/works/"}:
            flt = q.get("filter", "")
            if flt.startswith("doi:"):
                works = []
                for d in flt[4:].split("|"):
                    p = self.db.get("doi", d, "openalex")
                    if p is not None:
                        works.append(openalex_work(p))
                return _json(200, _openalex_list(works))
            text = q.get("search") or (flt[len("title.search:"):]
                                       if flt.startswith("title.search:") else "")
            per_page = int(q.get("per-page", q.get("per_page", "25")) or 25)
            hits = self.db.search(text, "openalex", limit=per_page, cutoff=55)
            return _json(200, _openalex_list(
                [{**openalex_work(p), "relevance_score": s} for s, p in hits]))
        if path.startswith("/works/"):
            wid = unquote(path[len("/works/"):])
            if wid.lower().startswith(("doi:", "https://doi.org/", "http://doi.org/")):
                p = self.db.get("doi", wid, "openalex")
            elif re.fullmatch(r"[Ww]\d+", wid):
                p = self.db.get("openalex", wid.upper(), "openalex")
            else:
                p = None
            if p is None:
                return _text(404, NOT_FOUND_HTML, "text/html; charset=utf-8")
            return _json(200, openalex_work(p))
        return _text(404, NOT_FOUND_HTML, "text/html; charset=utf-8")

    def _api_arxiv(self, method: str, path: str, q: dict[str, str], body: bytes,
                   headers: Mapping[str, str]) -> _Response:
        if path.rstrip("/") != "/query":
            return _text(404, NOT_FOUND_HTML, "text/html")
        ids = [i.strip() for i in q.get("id_list", "").split(",") if i.strip()]
        max_results = int(q.get("max_results", "10") or 10)
        qs = "&".join(f"{k}={v}" for k, v in q.items())
        ctype = "application/atom+xml; charset=UTF-8"
        for i in ids:
            if not _valid_arxiv(i):
                return _text(400, arxiv_error_feed(i), ctype)
        found: list[dict[str, Any]] = []
        if ids:
            for i in ids:
                p = self.db.get("arxiv", i, "arxiv")
                if p is not None:
                    found.append(p)
        elif q.get("search_query"):
            text = re.sub(r"\b(?:ti|all|abs|au):|\bAND\b|[\"()]", " ", q["search_query"])
            found = [p for _, p in self.db.search(text, "arxiv", limit=max_results, cutoff=55)]
        found = found[:max_results]
        return _text(200, arxiv_feed([arxiv_entry(p, self.arxiv_legacy) for p in found], qs,
                                     self.arxiv_legacy), ctype)

    def _api_arxiv_site(self, method: str, path: str, q: dict[str, str], body: bytes,
                        headers: Mapping[str, str]) -> _Response:
        m = re.fullmatch(r"/(abs|html|pdf)/(.+?)(?:\.pdf)?/?", path)
        p = self.db.get("arxiv", m.group(2), "arxiv") if m else None
        if m is None or p is None:
            return _text(404, NOT_FOUND_HTML, "text/html; charset=utf-8")
        kind = m.group(1)
        x = html.escape
        if kind == "html" and p.get("html_redirect") and not re.search(r"v\d+$", m.group(2)):
            # arxiv.org answers an unversioned HTML URL with a redirect to a version
            r = _text(301, f'<a href="{x(p["html_redirect"])}">Moved</a>', "text/html")
            r.headers["Location"] = p["html_redirect"]
            return r
        if kind == "pdf":
            lines = [p["title"], ", ".join(p["authors"]), "", "Abstract", p.get("abstract") or ""]
            lines += (p.get("full_text") or "").split("\n")
            return _Response(200, tiny_pdf(lines), "application/pdf")
        if kind == "html" and not p.get("full_text"):
            return _text(404, NOT_FOUND_HTML, "text/html; charset=utf-8")
        paras = "".join(f"<p>{x(t)}</p>" for t in (p.get("full_text") or "").split("\n\n") if t)
        page = (
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{x(p["title"])}'
            f'</title><meta name="citation_title" content="{x(p["title"])}">'
            + "".join(f'<meta name="citation_author" content="{x(a)}">' for a in p["authors"])
            + f'<meta name="citation_arxiv_id" content="{x(p["arxiv"])}"></head><body>'
            f'<h1 class="title">{x(p["title"])}</h1>'
            f'<blockquote class="abstract">{x(p.get("abstract") or "")}</blockquote>'
            f"<article>{paras}</article></body></html>"
        )
        return _text(200, page, "text/html; charset=utf-8")

    def _api_doi(self, method: str, path: str, q: dict[str, str], body: bytes,
                 headers: Mapping[str, str]) -> _Response:
        doi = unquote(path.lstrip("/"))
        if doi.startswith("_datacite/"):
            p = self.db.get("doi", doi[len("_datacite/"):], "doi")
            if p is None:
                return _text(404, DOI_NOT_FOUND_HTML, "text/html;charset=utf-8")
            if "bibtex" in headers.get("accept", ""):
                return _text(200, _bibtex(p), "application/x-bibtex")
            return _json(200, csl_json(p), "application/vnd.citationstyles.csl+json")
        if doi.startswith("_landing/"):
            p = self.db.get("doi", doi[len("_landing/"):], "doi")
            if p is not None and p.get("landing_status") == 202:  # the publisher's bot check
                return _Response(202, b"", "text/html; charset=UTF-8",
                                 {"x-amzn-waf-action": "challenge"})
            title = html.escape(p["title"]) if p else "Not found"
            return _text(200 if p else 404, f"<html><head><title>{title}</title></head>"
                         f"<body><h1>{title}</h1></body></html>", "text/html; charset=utf-8")
        if not doi.startswith("10."):
            return _text(400, NOT_A_DOI_HTML, "text/html;charset=utf-8")
        p = self.db.get("doi", doi, "doi")
        if p is None:
            return _text(404, DOI_NOT_FOUND_HTML, "text/html;charset=utf-8")
        accept = headers.get("accept", "")
        key = _doi_key(doi) or doi
        if p.get("landing_status"):  # no content negotiation: the publisher's page
            target = f"{self.root}/doi/_landing/{key}"
        elif "citationstyles" in accept or "bibtex" in accept:
            if "crossref" in p["sources"]:
                target = f"{self.root}/crossref/v1/works/{quote(key, safe='')}/transform"
            else:
                target = f"{self.root}/doi/_datacite/{key}"
        elif p.get("arxiv"):
            target = f"{self.root}/arxiv/abs/{p['arxiv']}"
        else:
            target = f"{self.root}/doi/_landing/{key}"
        r = _text(302, f"<html><head><title>Handle Redirect</title></head><body><a href="
                  f'"{html.escape(target)}">{html.escape(target)}</a></body></html>',
                  "text/html;charset=utf-8")
        r.headers.update({"Location": target, "Vary": "Accept"})
        return r

    def _api_ncbi(self, method: str, path: str, q: dict[str, str], body: bytes,
                  headers: Mapping[str, str]) -> _Response:
        if method == "POST" and body:
            q = {**q, **{k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}}
        ctype = "text/xml; charset=UTF-8"
        if path.endswith("/esearch.fcgi"):
            term = re.sub(r"\[[^\]]*\]|[\"()]|\bAND\b", " ", q.get("term", ""))
            retmax = int(q.get("retmax", "20") or 20)
            hits = self.db.search(term, "pubmed", limit=retmax, cutoff=60)
            ids = "".join(f"\n<Id>{p['pmid']}</Id>" for _, p in hits)
            return _text(200, (
                '<?xml version="1.0" encoding="UTF-8" ?>\n<!DOCTYPE eSearchResult PUBLIC '
                '"-//NLM//DTD esearch 20060628//EN" '
                '"https://eutils.ncbi.nlm.nih.gov/eutils/dtd/20060628/esearch.dtd">\n'
                f"<eSearchResult><Count>{len(hits)}</Count><RetMax>{len(hits)}</RetMax>"
                f"<RetStart>0</RetStart><IdList>{ids}\n</IdList><TranslationSet/>"
                f"<QueryTranslation>{xml_escape(term.strip())}</QueryTranslation></eSearchResult>\n"
            ), ctype)
        if path.endswith("/efetch.fcgi"):
            ids = [i.strip() for i in q.get("id", "").split(",") if i.strip()]
            if not ids:
                return _text(200, '<?xml version="1.0" encoding="UTF-8" ?>\n<eFetchResult>\n'
                             "\t<ERROR>Empty id list - nothing todo</ERROR>\n</eFetchResult>\n",
                             ctype)
            arts = [pubmed_article(p) for i in ids
                    if (p := self.db.get("pmid", i, "pubmed")) is not None]
            return _text(200, PUBMED_HEAD + "<PubmedArticleSet>\n" + "\n".join(arts)
                         + "\n</PubmedArticleSet>", ctype)
        return _text(404, NOT_FOUND_HTML, "text/html")

    def _api_unpaywall(self, method: str, path: str, q: dict[str, str], body: bytes,
                       headers: Mapping[str, str]) -> _Response:
        doi = unquote(path.lstrip("/"))
        p = self.db.get("doi", doi, "doi")
        if p is None:
            return _json(404, {"HTTP_status_code": 404, "error": True,
                               "message": f"'{doi}' isn't in Unpaywall. See "
                               "https://support.unpaywall.org/a/solutions/articles/44000757159"})
        pdf = p.get("open_access_pdf") or (f"{self.root}/arxiv/pdf/{p['arxiv']}"
                                           if p.get("arxiv") else None)
        loc = None
        if pdf:
            loc = {"url": pdf, "url_for_pdf": pdf, "url_for_landing_page": pdf,
                   "evidence": "deprecated", "license": None, "version": "submittedVersion",
                   "host_type": "repository", "is_best": True}
        return _json(200, {
            "doi": _doi_key(doi), "doi_url": f"https://doi.org/{_doi_key(doi)}",
            "title": p["title"], "genre": "journal-article", "year": p.get("year"),
            "journal_name": p.get("venue"), "publisher": p.get("publisher"),
            "is_oa": bool(loc), "oa_status": "green" if loc else "closed",
            "best_oa_location": loc, "first_oa_location": loc,
            "oa_locations": [loc] if loc else [],
            "z_authors": [{"raw_author_name": a} for a in p["authors"]],
        })


def _bibtex(p: dict[str, Any]) -> str:
    key = re.sub(r"\W", "", (p["authors"][0].split()[-1] if p["authors"] else "anon"))
    fields = [f"title={{{p['title']}}}", f"author={{{' and '.join(p['authors'])}}}"]
    if p.get("venue"):
        fields.append(f"journal={{{p['venue']}}}")
    if p.get("year"):
        fields.append(f"year={{{p['year']}}}")
    fields.append(f"DOI={{{_doi_of(p)}}}")
    return f" @article{{{key}_{p.get('year', '')}, {', '.join(fields)} }}"


# ====================================================================== HTTP plumbing


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # resets and closes are on purpose; the client sees them


class _Handler(BaseHTTPRequestHandler):
    fake: ScholarlyFake
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    wbufsize = 1 << 16  # one write per answer (flushed by handle_one_request)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def _send(self, r: _Response, method: str = "GET") -> None:
        self.send_response(r.status)
        self.send_header("Content-Type", r.content_type)
        self.send_header("Content-Length", str(len(r.body)))
        for k, v in r.headers.items():
            self.send_header(k, v)
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(r.body)

    def _handle(self, method: str) -> None:
        fake = self.fake
        parts = urlsplit(self.path)
        path = parts.path
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if path.startswith("/_control"):
            self._control(method, path, query, body)
            return
        source = next((s for prefix, s in PREFIXES
                       if path == prefix or path.startswith(prefix + "/")), None)
        if source is None:
            self._send(_text(404, NOT_FOUND_HTML, "text/html"))
            return
        sub = path[len(dict((s, p) for p, s in PREFIXES)[source]):] or "/"
        entry = {"source": source, "method": method, "path": sub, "query": query,
                 "raw_path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                 "body": body.decode("utf-8", "replace") if body else None,
                 "t": time.monotonic(), "status": None, "cost_usd": 0.0}
        fake._record(entry)
        fault = fake._take_fault(source)
        if fault.mode == "down":
            entry["status"] = "closed"
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if fault.mode == "reset":
            entry["status"] = "reset"
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
            return
        if fault.mode == "stall":
            fake._stop.wait(fault.stall_s)
        delay = fake._delay(source)
        if delay:
            fake._stop.wait(delay)
        over = fake._over_limit(source)
        fake._flight(source, +1)
        counted = False
        try:
            if over or fault.mode == "429":
                r = _too_many(source)
                if fault.retry_after is not None:
                    r.headers["Retry-After"] = fault.retry_after
            elif fault.mode == "5xx":
                status = fault.status or 503
                r = _text(status, "<html><body><h1>503 Service Unavailable</h1></body></html>"
                          if status == 503 else json.dumps({"message": "Internal Server Error"}),
                          "text/html" if status == 503 else "application/json")
            elif fault.mode == "echo":
                r = _json(fault.status or 400, {"error": "bad request", "request": {
                    "url": self.path, "headers": dict(self.headers.items())}})
            elif fault.mode == "html":
                r = _text(200, CLOUDFLARE_HTML, "text/html")
            elif fault.mode == "challenge":
                r = _text(200, CHALLENGES[fault.kind], "text/html; charset=utf-8")
            elif fault.mode == "accepted":
                r = _Response(202, b"", "text/html; charset=UTF-8",
                              {"x-amzn-waf-action": "challenge"})
            else:
                lowered = {k.lower(): v for k, v in self.headers.items()}
                refused, added, cost = fake._gate(source, sub, query, lowered)
                if refused is not None:
                    r = refused
                else:
                    try:
                        r = fake.answer(source, method, sub, query, body, lowered)
                    except Exception as e:  # a bug in the fake must not hang the client
                        r = _json(500, {"error": f"fake server error: {e!r}"})
                    r.headers.update(added)
                    entry["cost_usd"] = cost
                if fault.mode == "malformed":
                    r = _Response(r.status, r.body[: max(1, len(r.body) // 2)], r.content_type,
                                  r.headers)
                elif fault.mode in ("bomb", "huge"):
                    r = _oversized(r, fault.mode)
            entry["status"] = r.status
            # done before the answer leaves, as a server's count is: a client that reads it
            # and sends its next request at once is not one request too many
            fake._flight(source, -1)
            counted = True
            with contextlib.suppress(OSError):
                self._send(r, method)
        finally:
            if not counted:
                fake._flight(source, -1)

    def _control(self, method: str, path: str, query: dict[str, str], body: bytes) -> None:
        fake = self.fake
        try:
            if method == "GET" and path.rstrip("/") == "/_control/requests":
                out: Any = fake.requests(query.get("source"))
            elif method == "GET" and path.rstrip("/") == "/_control/counts":
                out = fake.counts()
            elif method == "POST":
                out = fake._control(json.loads(body or b"{}"))
            else:
                out = {"urls": fake.urls()}
            self._send(_json(200, out))
        except (ValueError, KeyError, TypeError) as e:
            self._send(_json(400, {"error": str(e)}))


def _too_many(source: str) -> _Response:
    if source == "s2":
        return _json(429, S2_429)
    if source == "ncbi":
        return _json(429, {"error": "API rate limit exceeded", "count": "4", "limit": "3"})
    if source == "openalex":
        return _json(429, {"error": "Rate limit exceeded", "message": "Too many requests"})
    return _text(429, "Too Many Requests", "text/plain")


# ====================================================================== pytest fixture, CLI


@contextlib.contextmanager
def running(papers: list[dict[str, Any]] | None = None) -> Iterator[ScholarlyFake]:
    """A started fake for the duration of the ``with`` block."""
    fake = ScholarlyFake(papers).start()
    try:
        yield fake
    finally:
        fake.stop()


def fast_rates(interval_s: float = 0.0, concurrency: int = 4) -> dict[str, Rate]:
    """Rates for ``Sources.from_settings(..., rates=fast_rates())`` so tests do not wait."""
    return {name: Rate(interval_s, concurrency) for name in DEFAULT_RATES}


@pytest.fixture
def scholarly_server() -> Iterator[ScholarlyFake]:
    """A fresh fake scholarly server (its own port and database) for one test."""
    with running() as fake:
        yield fake


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Fake scholarly APIs for CiteLens tests")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8999)
    ap.add_argument("--papers", help="papers JSON replacing the built-in database")
    ap.add_argument("--enforce-rates", action="store_true",
                    help="answer 429 when a client exceeds the real services' rates")
    ap.add_argument("--openalex-budget", type=float, metavar="USD",
                    help="meter OpenAlex's daily budget: USD a day without a key (0.10 in 2026)")
    ap.add_argument("--openalex-key-budget", type=float, default=1.0, metavar="USD",
                    help="with --openalex-budget: USD a day with a key (default 1.0)")
    ap.add_argument("--s2-pool", metavar="BURST/PERIOD",
                    help="Semantic Scholar's shared pool: BURST of every PERIOD keyless calls 429")
    args = ap.parse_args(argv)
    fake = ScholarlyFake(load_papers(args.papers) if args.papers else None, host=args.host,
                         port=args.port)
    fake.start()
    if args.enforce_rates:
        fake.enforce_real_limits()
    if args.openalex_budget is not None:
        fake.set_openalex_budget(args.openalex_budget, args.openalex_key_budget)
    if args.s2_pool:
        burst, _, period = args.s2_pool.partition("/")
        fake.set_s2_pool(int(burst), int(period or 10))
    print(f"fake scholarly APIs on {fake.root} ({len(fake.db.papers)} papers)", flush=True)
    for k, v in fake.env().items():
        print(f"export {k}={v}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
