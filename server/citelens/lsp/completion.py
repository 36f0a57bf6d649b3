"""Where key completion applies, and the items it offers.

Keys: filtered by the typed text and capped at :data:`MAX_ITEMS` (the list is then
``isIncomplete``, so the client asks again as the user types), keys cited in the
current document, recently added ones and keys cited elsewhere in the project first;
views are built only for the keys shown, so a 68k-entry bibliography answers at once.

Papers (cite while writing): when the typed text matches no key and has at least three
characters, :class:`PaperSearch` searches the sources in the background, at most once
per debounce window per document; the items it finds replace the typed text with a
new key and, through the ``citelens.addPaper`` command, append the entry to the .bib.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from citelens.core.model import BibEntry, BibFile, EntryView
from citelens.core.normalize import title_key
from citelens.sources.records import PaperRecord
from citelens.workspace import citesearch

if TYPE_CHECKING:
    from citelens.lsp.server import CiteLensServer
    from citelens.workspace.index import Analysis

#: Keys offered at most per answer (the list is then incomplete).
MAX_ITEMS = 100
ADD_PAPER = "citelens.addPaper"

# Inside the key group of a citation command, before the cursor: \citep[p.~3]{a, b, par|
_LATEX = re.compile(r"\\[a-zA-Z]*cite[a-zA-Z]*\*?(?:\s*\[[^\]]*\]|\s*\([^)]*\))*"
                    r"(?:\s*\{[^{}]*\}\s*(?:\[[^\]]*\]\s*)*)*\s*\{(?P<keys>[^{}]*)$", re.I)
# After @ in Markdown, not in an e-mail address: [see @doe| or @doe|
_MARKDOWN = re.compile(r"(?<![\w.\-/])-?@(?P<prefix>[\w:.#$%&\-+?<>~/]*)$")
# Inside a bracketed Pandoc citation, words typed after @ (a title, not yet a key):
# [see @lateral diffusion of|
_MARKDOWN_TEXT = re.compile(r"\[(?:[^\[\]]*;)?[^\[\]@;]*?(?<![\w.\-/])-?@(?P<prefix>[^\];@,\n]*)$")


def key_prefix(line_before_cursor: str, language: str) -> str | None:
    """The partial key (or typed title) at the cursor, or None when not at a key."""
    if language == "markdown":
        m = _MARKDOWN_TEXT.search(line_before_cursor) or _MARKDOWN.search(line_before_cursor)
        return m.group("prefix") if m else None
    m = _LATEX.search(line_before_cursor[-2000:])
    if not m:
        return None
    return m.group("keys").split(",")[-1].lstrip()


# --------------------------------------------------------------------------- keys


def rank_keys(keys: Sequence[str], prefix: str, first: Sequence[str],
              limit: int = MAX_ITEMS) -> tuple[list[str], bool]:
    """The keys to show for ``prefix`` (a substring, case ignored): ``first`` (cited,
    recent) in their order, then keys starting with the prefix, then the other matches,
    file order within each; at most ``limit``. The flag says some were left out."""
    low = prefix.lower()
    out: list[str] = []
    seen: set[str] = set()
    for k in first:
        if k not in seen and low in k.lower():
            seen.add(k)
            out.append(k)
    starts: list[str] = []
    contains: list[str] = []
    for k in keys:
        kl = k.lower()
        if low not in kl or k in seen:
            continue
        if kl.startswith(low):
            starts.append(k)
            if len(out) + len(starts) > limit:
                break
        elif len(out) + len(contains) <= limit:
            contains.append(k)
    ranked = out + starts + contains
    return ranked[:limit], len(ranked) > limit


def key_item(entry: BibEntry, view: EntryView | None, rank: int) -> lsp.CompletionItem:
    detail = ""
    doc = ""
    if view is not None:
        first = view.authors[0].last if view.authors else ""
        detail = " ".join(str(x) for x in (first, view.year) if x)
        doc = view.title
    return lsp.CompletionItem(
        label=entry.key,
        kind=lsp.CompletionItemKind.Reference,
        detail=detail or entry.entry_type,
        documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, doc) if doc else None,
        filter_text=entry.key,
        sort_text=f"0{rank:05d}",
    )


def key_items(ls: CiteLensServer, analysis: Analysis, path: str,
              prefix: str) -> tuple[list[lsp.CompletionItem], bool]:
    doc = analysis.sources.get(path)
    here = [c.key for c in doc.citations] if doc is not None else []
    first = [*reversed(ls.recent_keys), *here, *analysis.cited_keys()]
    first = [k for k in dict.fromkeys(first) if k in analysis.definitions]
    keys, capped = rank_keys(list(analysis.definitions), prefix, first)
    items = []
    for i, key in enumerate(keys):
        entry = analysis.definitions[key][0]
        items.append(key_item(entry, ls.entry_view(entry, analysis), i))
    return items, capped


# --------------------------------------------------------------------------- papers


class PaperSearch:
    """Background paper searches of one server: one per debounce window per document,
    answers kept by normalised query."""

    def __init__(self, server: CiteLensServer) -> None:
        self.server = server
        self.results: dict[str, list[PaperRecord]] = {}
        self.searches = 0  # searches started (for tests and benchmarks)
        self._wanted: dict[str, str] = {}  # document -> latest query
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._waiting: dict[str, asyncio.Future[list[PaperRecord] | None]] = {}
        self._cache: Any = None
        self._indexes: dict[str, tuple[BibFile, dict[str, str]]] = {}

    async def find(self, path: str, query: str, wait_s: float) -> list[PaperRecord] | None:
        """The papers for ``query``: from memory at once, else after the next search of
        this document if it ends within ``wait_s``; None when there are none (yet)."""
        norm = title_key(query)
        if norm in self.results:
            return self.results[norm]
        fut = self._waiting.get(norm)
        if fut is None or fut.done():
            fut = self._waiting[norm] = asyncio.get_running_loop().create_future()
        self._wanted[path] = query
        task = self._tasks.get(path)
        if task is None or task.done():
            self._tasks[path] = asyncio.get_running_loop().create_task(self._loop(path))
        try:
            return await asyncio.wait_for(asyncio.shield(fut), wait_s)
        except TimeoutError:
            return None

    async def _loop(self, path: str) -> None:
        """Search the latest query of ``path`` once per debounce window while there is one."""
        while path in self._wanted:
            await asyncio.sleep(self.server.settings.paper_search_debounce_ms / 1000.0)
            query = self._wanted.pop(path, None)
            if query is None:
                return
            norm = title_key(query)
            records = self.results.get(norm)
            if records is None:
                records = await self._search(query)
                if records is not None:
                    if len(self.results) > 500:
                        self.results.clear()
                    self.results[norm] = records
            fut = self._waiting.pop(norm, None)
            if fut is not None and not fut.done():
                fut.set_result(records)
            # queries typed over before their window came: their requests get keys only
            wanted = {title_key(q) for q in self._wanted.values()}
            for other in [n for n in self._waiting if n not in wanted]:
                waiter = self._waiting.pop(other)
                if not waiter.done():
                    waiter.set_result(None)

    async def _search(self, query: str) -> list[PaperRecord] | None:
        self.searches += 1
        verifier = self.server.verifier
        try:
            if self._cache is None:
                from citelens.verify.cache import open_cache

                self._cache = open_cache(self.server.settings, self.server.log_once)
            return await citesearch.search_papers(verifier.sources(), query, self._cache)
        except Exception as exc:  # never a pop-up while typing: keys only
            self.server.log_once(f"paper search failed: {type(exc).__name__}")
            return None

    def index(self, bibs: Iterable[BibFile]) -> dict[str, str]:
        """DOI / arXiv id / title -> key over ``bibs``, rebuilt when a file changed."""
        out: dict[str, str] = {}
        for bib in bibs:
            cached = self._indexes.get(bib.path)
            if cached is None or cached[0] is not bib:
                cached = (bib, citesearch.bib_index(bib.entries))
                self._indexes[bib.path] = cached
            for k, v in cached[1].items():
                out.setdefault(k, v)
        return out


def paper_items(ls: CiteLensServer, analysis: Analysis, path: str, records: list[PaperRecord],
                rng: lsp.Range, typed: str) -> list[lsp.CompletionItem]:
    bib_path, create = citesearch.target_bib(path, analysis.project.bib_paths)
    bib = None if create else ls.store.bib(bib_path)
    index = ls.paper_search.index(analysis.bibs)
    samples = []
    if bib is not None:
        for e in citesearch.spread(bib.entries):
            view = ls.entry_view(e, analysis)
            if view is not None:
                samples.append((e.key, citesearch.view_parts(view)))
    taken = set(analysis.definitions) | ({e.key for e in bib.entries} if bib else set())
    items = []
    for i, record in enumerate(records):
        existing = citesearch.existing_key(record, index)
        key = existing or citesearch.new_key(record, samples, taken)
        taken.add(key)
        command = None if existing else lsp.Command(
            title="Add to bibliography", command=ADD_PAPER,
            arguments=[{"bib": bib_path, "create": create, "key": key, "doc": path,
                        "record": record.to_json()}])
        items.append(lsp.CompletionItem(
            label=record.title,
            kind=lsp.CompletionItemKind.Reference,
            detail=citesearch.detail(record),
            documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, citesearch.documentation(
                record, existing, os.path.basename(bib_path), key)),
            filter_text=typed,
            sort_text=f"1{i:05d}",
            text_edit=lsp.TextEdit(range=rng, new_text=key),
            command=command,
        ))
    return items


async def complete(ls: CiteLensServer, path: str, language: str,
                   position: lsp.Position) -> lsp.CompletionList | None:
    """The completion list at ``position`` of ``path``: keys at once, papers when the typed
    text names none (waiting for the search only then)."""
    index = ls.store.line_index(path)
    if index is None:
        return None
    start = index.line_start(position.line)
    offset = index.offset(position.line, position.character, ls.encoding)
    before = index.text[max(start - 1000, 0): offset] if language == "latex" \
        else index.text[start:offset]
    prefix = key_prefix(before, language)
    analysis = ls.analysis_for(path) if prefix is not None else None
    if prefix is None or analysis is None:
        return None
    items, capped = key_items(ls, analysis, path, prefix)
    typed = prefix.strip()
    if (items or len(typed) < citesearch.MIN_QUERY or "\n" in prefix
            or not ls.settings.paper_search):
        return lsp.CompletionList(is_incomplete=capped or bool(typed), items=items)
    started = time.monotonic()
    wait = ls.settings.paper_search_debounce_ms / 1000.0 + 3.0
    records = await ls.paper_search.find(path, typed, wait)
    ls.last_paper_wait_s = time.monotonic() - started
    if records:
        a = index.position(offset - len(prefix), ls.encoding)
        b = index.position(offset, ls.encoding)
        rng = lsp.Range(lsp.Position(a.line, a.character), lsp.Position(b.line, b.character))
        items = paper_items(ls, analysis, path, records, rng, prefix)
    return lsp.CompletionList(is_incomplete=True, items=items)
