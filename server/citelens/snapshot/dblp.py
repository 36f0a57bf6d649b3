"""The DBLP XML dump (``dblp.xml.gz``): one element per publication under ``<dblp>``, each
starting on its own line, with character entities (``&uuml;``) defined in ``dblp.dtd``.

Records are cut out line by line and parsed one at a time, so a damaged record is skipped
and counted and the next one is read (a streaming XML parser stops at the first error)."""

from __future__ import annotations

import html.entities
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from citelens.core.identifiers import ARXIV_DOI_START, normalize_arxiv, normalize_doi
from citelens.core.source_names import Source
from citelens.snapshot.dump import MAX_RECORD_CHARS, Counts, Work, bounded_lines, failed, open_text
from citelens.sources.records import PaperRecord

KINDS = (
    "article",
    "inproceedings",
    "proceedings",
    "book",
    "incollection",
    "phdthesis",
    "mastersthesis",
    "www",
)
_START = re.compile(r"<(" + "|".join(KINDS) + r")[\s>]")
_ENTITY = re.compile(r"&([A-Za-z][A-Za-z0-9]*);")
_XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})
_PAPERS = frozenset({"article", "inproceedings", "incollection", "book", "phdthesis", "mastersthesis"})


def _entity(m: re.Match[str]) -> str:
    name = m.group(1)
    if name in _XML_ENTITIES:
        return m.group(0)
    ch = html.entities.html5.get(name + ";")
    return ch if ch is not None else " "


def _text(el: ET.Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def to_record(el: ET.Element) -> PaperRecord | None:
    title = _text(el.find("title")).rstrip(".")
    if el.tag not in _PAPERS or not title:
        return None
    doi = arxiv = url = None
    for ee in el.findall("ee"):
        link = _text(ee)
        if doi is None and "doi.org/" in link:
            doi = normalize_doi(link)
        elif arxiv is None and "arxiv.org/abs/" in link:
            arxiv = normalize_arxiv(link)
        url = url or link or None
    if doi and doi.startswith(ARXIV_DOI_START):
        arxiv = arxiv or normalize_arxiv(doi)
    year = _text(el.find("year"))
    venue = _text(el.find("journal")) or _text(el.find("booktitle")) or None
    authors = [re.sub(r"\s+\d{4}$", "", _text(a)) for a in el.findall("author")]  # "Wei Li 0001"
    return PaperRecord(
        source=Source.DBLP,
        title=title,
        authors=[a for a in authors if a],
        year=int(year) if year.isdigit() else None,
        venue=venue,
        doi=doi,
        arxiv_id=arxiv,
        url=url or f"https://dblp.org/rec/{el.get('key', '')}",
        publication_types=[el.tag],
        volume=_text(el.find("volume")) or None,
        pages=_text(el.find("pages")) or None,
        publisher=_text(el.find("publisher")) or None,
        is_preprint=venue is not None and venue.lower() == "corr",
    )


def _records(path: str, counts: Counts) -> Iterator[tuple[int, str]]:
    counts.files += 1
    buf: list[str] = []
    size = 0
    tag = ""
    start = 0
    try:
        with open_text(path) as fh:
            for n, line in bounded_lines(fh, counts, path):
                if not buf:
                    m = _START.search(line)
                    if m is None:
                        continue
                    tag, start = m.group(1), n
                    line = line[m.start() :]
                buf.append(line)
                size += len(line)
                if f"</{tag}>" in line or (len(buf) == 1 and re.search(rf"<{tag}\b[^>]*/>", line)):
                    yield start, "".join(buf)
                    buf, size = [], 0
                elif len(buf) > 2000 or size > MAX_RECORD_CHARS:  # never closed, or too big
                    counts.read += 1
                    if size > MAX_RECORD_CHARS:
                        counts.too_large += 1
                    counts.bad(f"{path}:{start}")
                    buf, size = [], 0
    except (OSError, EOFError) as exc:
        failed(counts, path, exc)
    if buf:
        counts.read += 1
        counts.bad(f"{path}:{start}")


def read(path: str, counts: Counts) -> Iterator[Work]:
    for n, text in _records(path, counts):
        counts.read += 1
        end = text.rfind(">")
        try:
            el = ET.fromstring(_ENTITY.sub(_entity, text[: end + 1]))
        except ET.ParseError:
            counts.bad(f"{path}:{n}")
            continue
        if el.tag == "www":  # person pages, not publications
            continue
        rec = to_record(el)
        if rec is None:
            counts.bad(f"{path}:{n}")
            continue
        yield Work(rec, el.tag, frozenset({"computer science"}), str(el.get("mdate") or "")[:10])
