"""arXiv export API (Atom): papers by id, many per request, and title search.

An id the API does not have is simply absent from a 200 feed (``NOT_FOUND``); a
malformed id makes the API answer **400 with an error feed** (``NOT_FOUND`` for
that id). Both the current feed format and the legacy (2016) one parse.
The API allows one request every 3 s on one connection: the host client's
default rate does that, so ask for many ids at once.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from citelens.core.identifiers import normalize_arxiv, normalize_doi
from citelens.core.source_names import Source
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord, author_list, plain_title
from citelens.sources.transport import HostClient, HostResult, status_of

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
BATCH_SIZE = 100
_ERROR_ID = re.compile(r"incorrect_id_format_for_(.+)$")


@dataclass(slots=True)
class Feed:
    """A parsed Atom answer: records, and the ids arXiv called malformed."""

    records: list[PaperRecord] = field(default_factory=list)
    bad_ids: list[str] = field(default_factory=list)


def _text(el: ET.Element | None) -> str | None:
    if el is None:
        return None
    t = " ".join("".join(el.itertext()).split())
    return t or None


def _entry(entry: ET.Element) -> PaperRecord | None:
    raw_id = _text(entry.find(f"{ATOM}id")) or ""
    aid = normalize_arxiv(raw_id)
    title = _text(entry.find(f"{ATOM}title"))
    if aid is None or not title:
        return None
    published = _text(entry.find(f"{ATOM}published")) or ""
    pdf = abs_url = None
    for link in entry.findall(f"{ATOM}link"):
        if link.get("title") == "pdf":
            pdf = link.get("href")
        elif link.get("rel") == "alternate":
            abs_url = link.get("href")
    authors, authors_cut = author_list(
        [n for a in entry.findall(f"{ATOM}author") if (n := _text(a.find(f"{ATOM}name")))]
    )
    return PaperRecord(
        source=Source.ARXIV,
        title=plain_title(title)[0],
        authors=authors,
        authors_truncated=authors_cut,
        year=int(published[:4]) if published[:4].isdigit() else None,
        venue=_text(entry.find(f"{ARXIV}journal_ref")),
        doi=normalize_doi(_text(entry.find(f"{ARXIV}doi"))),
        arxiv_id=aid,
        url=abs_url or f"https://arxiv.org/abs/{aid}",
        abstract=_text(entry.find(f"{ATOM}summary")),
        publication_types=["preprint"],
        publisher="arXiv",
        open_access_pdf=pdf,
        is_preprint=True,
    )


def parse_feed(text: str | bytes) -> Feed | None:
    """Records (and malformed-id errors) of an arXiv Atom feed; ``None`` if it is not one."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return None
    if root.tag != f"{ATOM}feed":
        return None
    feed = Feed()
    for entry in root.findall(f"{ATOM}entry"):
        eid = _text(entry.find(f"{ATOM}id")) or ""
        if "/api/errors" in eid:
            m = _ERROR_ID.search(eid)
            feed.bad_ids.append(m.group(1) if m else eid)
            continue
        rec = _entry(entry)
        if rec is not None:
            feed.records.append(rec)
    return feed


def _feed_of(result: HostResult) -> tuple[Feed | None, str]:
    assert result.response is not None
    feed = parse_feed(result.response.content)
    if feed is None:
        ctype = result.response.headers.get("content-type", "?").split(";")[0]
        return None, f"unreadable answer (HTTP {status_of(result)}, {ctype}, not an Atom feed)"
    return feed, ""


async def get_by_ids(host: HostClient, ids: list[str]) -> dict[str, Lookup]:
    """Papers by arXiv id (``1706.03762v5``, ``arXiv:...``, ``astro-ph/0601001``...).

    One request per 100 ids; returns one Lookup per id as given. Versions are
    dropped: the record is the latest version.
    """
    method = Method.ARXIV_ID
    out: dict[str, Lookup] = {}
    wanted: dict[str, list[str]] = {}
    for given in ids:
        aid = normalize_arxiv(given)
        if aid is None:
            out[given] = host.lookup(method, Outcome.NOT_FOUND, [], f"{given!r} is not an arXiv id")
        else:
            wanted.setdefault(aid, []).append(given)
    keys = list(wanted)
    for start in range(0, len(keys), BATCH_SIZE):
        chunk = keys[start : start + BATCH_SIZE]
        result = await host.request(
            "GET", "/query", params={"id_list": ",".join(chunk), "max_results": len(chunk)}
        )
        lookups: dict[str, Lookup] = {}
        if not result.ok:
            lookups = {a: host.failed(method, result) for a in chunk}
        else:
            feed, why = _feed_of(result)
            status = status_of(result)
            if feed is None or status not in (200, 400) or (status == 400 and not feed.bad_ids):
                why = why or f"HTTP {status}: unexpected answer"
                lookups = {a: host.lookup(method, Outcome.FAILED, [], why, result.elapsed_ms) for a in chunk}
            else:
                by_id = {r.arxiv_id: r for r in feed.records}
                bad = {normalize_arxiv(b) or b for b in feed.bad_ids}
                for a in chunk:
                    if a in by_id:
                        lookups[a] = host.lookup(method, Outcome.FOUND, [by_id[a]], "", result.elapsed_ms)
                    elif status == 200 or a in bad:
                        lookups[a] = host.lookup(
                            method, Outcome.NOT_FOUND, [], f"{a} not in arXiv", result.elapsed_ms
                        )
                    else:  # the request failed because of another id
                        lookups[a] = host.lookup(
                            method,
                            Outcome.FAILED,
                            [],
                            f"arXiv rejected the request (malformed id {', '.join(sorted(bad))})",
                            result.elapsed_ms,
                        )
        for a, lookup in lookups.items():
            for given in wanted[a]:
                out[given] = lookup
    return out


async def search_title(host: HostClient, title: str, limit: int = 5) -> Lookup:
    """Papers whose title matches ``title`` (``search_query=ti:"..."``)."""
    method = Method.ARXIV_TITLE_SEARCH
    clean = " ".join(re.sub(r"[\"():\\]", " ", title).split())
    if not clean:
        return host.lookup(method, Outcome.FAILED, [], "empty title")
    result = await host.request(
        "GET",
        "/query",
        params={"search_query": f'ti:"{clean}"', "start": 0, "max_results": max(1, min(limit, 50))},
    )
    if not result.ok:
        return host.failed(method, result)
    feed, why = _feed_of(result)
    if feed is None or status_of(result) != 200:
        return host.lookup(
            method,
            Outcome.FAILED,
            [],
            why or f"HTTP {status_of(result)}: unexpected answer",
            result.elapsed_ms,
        )
    records = feed.records[:limit]
    return host.records_found(method, records, result.elapsed_ms)
