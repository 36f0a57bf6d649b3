"""Pick 300 real entries from the corpus papers' .bib files, deterministically.

Writes ``benchmarks/data/bib300.bib`` (250 entries with a DOI or arXiv id, 50
title-only articles/proceedings papers, taken round-robin over the papers'
bibliographies in path order, duplicates by title or DOI skipped) and
``benchmarks/data/bib300_papers.json``, the fake scholarly server's database
built from the entries' own metadata, so every entry exists "out there".

    .venv/bin/python -m benchmarks.make_bib300 [CORPUS_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from citelens.core.model import BibEntry, EntryView
from citelens.core.titles import title_key
from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.documents.read import read_text

HERE = Path(__file__).resolve().parent
OUT_BIB = HERE / "data" / "bib300.bib"
OUT_PAPERS = HERE / "data" / "bib300_papers.json"
WITH_IDS = 250
TITLE_ONLY = 50
_PAPER_TYPES = {"article", "inproceedings", "conference", "incollection"}


def _default_corpus() -> Path:
    sys.path.insert(0, str(HERE.parent))
    from tests.harness import CORPUS

    return CORPUS


def _round_robin(groups: list[list[tuple[BibEntry, EntryView, str]]], n: int,
                 seen: set[str]) -> list[tuple[BibEntry, EntryView, str]]:
    out: list[tuple[BibEntry, EntryView, str]] = []
    queues = [list(g) for g in groups]
    while len(out) < n and any(queues):
        for q in queues:
            while q:
                entry, view, text = q.pop(0)
                marks = {"t:" + title_key(view.title)} | ({"d:" + view.doi} if view.doi
                                                               else set())
                if marks & seen:
                    continue
                seen |= marks
                out.append((entry, view, text))
                break
            if len(out) >= n:
                break
    return out


def _paper(view: EntryView) -> dict[str, object]:
    authors = [" ".join(p for p in (n.first, n.von, n.last, n.jr) if p)
               for n in view.authors if not n.is_others]
    paper: dict[str, object] = {"title": view.title, "authors": authors}
    if view.year:
        paper["year"] = view.year
    if view.venue:
        paper["venue"] = view.venue
    if view.doi:
        paper["doi"] = view.doi
    if view.arxiv_id:
        paper["arxiv"] = view.arxiv_id
    return paper


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    corpus = Path(args[0]) if args else _default_corpus()
    with_ids: list[list[tuple[BibEntry, EntryView, str]]] = []
    title_only: list[list[tuple[BibEntry, EntryView, str]]] = []
    for path in sorted((corpus / "papers").rglob("*.bib")):
        text = read_text(path)
        bib = parse_bib(text, str(path))
        ids, titles = [], []
        for e in bib.entries:
            v = entry_view(e)
            if not v.title.strip() or not v.authors or v.year is None:
                continue
            item = (e, v, text[e.span.start:e.span.end])
            if v.doi or v.arxiv_id:
                ids.append(item)
            elif e.entry_type in _PAPER_TYPES:
                titles.append(item)
        with_ids.append(ids)
        title_only.append(titles)
    seen: set[str] = set()
    picked = _round_robin(with_ids, WITH_IDS, seen) + _round_robin(title_only, TITLE_ONLY, seen)
    keys: set[str] = set()
    chunks, papers = [], []
    for entry, view, text in picked:
        key = entry.key
        n = 2
        while key in keys:
            key, n = f"{entry.key}_{n}", n + 1
        keys.add(key)
        start = entry.key_span.start - entry.span.start
        end = entry.key_span.end - entry.span.start
        chunks.append(text[:start] + key + text[end:])
        papers.append(_paper(view))
    OUT_BIB.parent.mkdir(parents=True, exist_ok=True)
    header = (f"% {len(picked)} real entries picked by benchmarks/make_bib300.py from the .bib "
              "files of the corpus papers\n% (see tests/corpus/papers/SOURCES.md for "
              "their origin and licences)\n\n")
    OUT_BIB.write_text(header + "\n\n".join(chunks) + "\n", encoding="utf-8")
    OUT_PAPERS.write_text(json.dumps({"_note": "fake scholarly DB for bench_verify.py, built "
                                      "from bib300.bib's own metadata", "papers": papers},
                                     ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    n_ids = sum(1 for _, v, _ in picked if v.doi or v.arxiv_id)
    print(f"wrote {OUT_BIB} ({len(picked)} entries: {n_ids} with DOI/arXiv id, "
          f"{len(picked) - n_ids} title-only) and {OUT_PAPERS}")


if __name__ == "__main__":
    main()
