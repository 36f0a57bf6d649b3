"""Cite while writing: find papers for the text typed in a citation, and add one to a .bib.

No LSP here. :func:`search_papers` asks Semantic Scholar's paper search first and
OpenAlex, then Crossref only when the one before it failed (rate-limited, down): a
source that *answered* "nothing" ends the search. Every call goes through the
rate-limited :class:`~citelens.sources.transport.HostClient` s and the verification cache.
:func:`entry_edit` renders the chosen paper as a new entry in the file's own style and
appends it; the rest of the file stays byte-identical.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from citelens.core.identifiers import normalize_arxiv, normalize_doi
from citelens.core.model import BibEntry, BibFile, EntryView
from citelens.core.settings import Settings
from citelens.core.source_names import Source
from citelens.core.titles import title_key
from citelens.documents.bibtex import keys
from citelens.documents.bibtex.edit import TextEdit, append_entry
from citelens.documents.bibtex.render import detect_field_order, render_entry
from citelens.documents.bibtex.style import Style, detect_style
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.verify.cache import lookup_key
from citelens.workspace.bibstyle import as_written, file_style, styled
from citelens.workspace.index import Analysis
from citelens.workspace.render import paper_detail, paper_documentation
from citelens.workspace.store import ReadStore

if TYPE_CHECKING:
    from citelens.sources.transport import Sources
    from citelens.verify.cache import VerificationCache

#: Fewer typed characters than this never start a search.
MIN_QUERY = 3
#: Papers offered per search.
LIMIT = 8
#: Papers remembered as offered (see PaperSearch.offers).
OFFERS_MAX = 500
#: Where a new bibliography goes when the document has none.
DEFAULT_BIB = "references.bib"


async def _ask(sources: Sources, source: str, query: str) -> Lookup:
    from citelens.sources import crossref, openalex, s2

    if source == Source.S2:
        return await s2.search(sources.s2, query, LIMIT, abstract=True)
    if source == Source.OPENALEX:
        return await openalex.search_title(sources.openalex, query, LIMIT)
    return await crossref.search(sources.crossref, query, rows=LIMIT)


async def search_papers(
    sources: Sources, query: str, cache: VerificationCache | None = None
) -> list[PaperRecord] | None:
    """Papers for ``query``, best first; ``[]`` when a source answered that it has none,
    ``None`` when every source failed (offline, down, rate-limited)."""
    query = " ".join(query.split())
    if len(query) < MIN_QUERY:
        return []
    remote = cache is not None and cache.remote  # a database's reads and writes: in a thread
    for source in (Source.S2, Source.OPENALEX, Source.CROSSREF):
        ckey = lookup_key(source, "cite_title_search", query)
        answer = None
        if cache is not None:
            answer = await asyncio.to_thread(cache.get, ckey) if remote else cache.get(ckey)
        if answer is None:
            answer = await _ask(sources, source, query)
            if cache is not None and answer.outcome in (Outcome.FOUND, Outcome.NOT_FOUND):
                if remote:
                    await asyncio.to_thread(cache.put, ckey, answer)
                else:
                    cache.put(ckey, answer)
        if answer.outcome is Outcome.FOUND:
            return _dedupe(answer.records)[:LIMIT]
        if answer.outcome is Outcome.NOT_FOUND:
            return []
    return None


def _dedupe(records: Sequence[PaperRecord]) -> list[PaperRecord]:
    seen: set[str] = set()
    out = []
    for r in records:
        ident = r.doi or r.arxiv_id or title_key(r.title)
        if r.title and ident not in seen:
            seen.add(ident)
            out.append(r)
    return out


# --------------------------------------------------------------------------- the bibliography


def bib_index(entries: Iterable[BibEntry]) -> dict[str, str]:
    """``doi:…``, ``arxiv:…`` and ``title:…`` (normalised) of each entry -> its key (the
    first entry wins), read from the raw fields: cheap on a 68k-entry file."""
    out: dict[str, str] = {}
    for e in entries:
        doi = normalize_doi(e.get("doi"))
        if doi:
            out.setdefault("doi:" + doi, e.key)
        eprint = e.get("eprint") or e.get("arxiv") or ""
        arxiv = normalize_arxiv(eprint) if eprint else None
        if arxiv:
            out.setdefault("arxiv:" + arxiv, e.key)
        title = title_key(e.get("title") or "")
        if title:
            out.setdefault("title:" + title, e.key)
    return out


def existing_key(record: PaperRecord, index: Mapping[str, str]) -> str | None:
    """The key of an entry that already is ``record`` (same DOI, arXiv id, or title)."""
    doi = normalize_doi(record.doi)
    arxiv = normalize_arxiv(record.arxiv_id)
    title = title_key(record.title)
    for probe in (doi and "doi:" + doi, arxiv and "arxiv:" + arxiv, title and "title:" + title):
        if probe and probe in index:
            return index[probe]
    return None


def spread(entries: Sequence[BibEntry], limit: int = 400) -> list[BibEntry]:
    """At most ``limit`` entries spread over the file (to read its key style)."""
    return keys.sample(entries, limit)


def target_bib(doc_path: str, bib_paths: Sequence[str]) -> tuple[str, bool]:
    """The .bib a new entry goes to: the document's first bibliography, else
    ``references.bib`` beside it. The flag says the file is to be created."""
    if bib_paths:
        return bib_paths[0], False
    path = os.path.join(os.path.dirname(doc_path), DEFAULT_BIB)
    return path, not os.path.exists(path)


def key_parts(record: PaperRecord) -> keys.KeyParts:
    last = keys.last_name_of(record.authors[0]) if record.authors else ""
    return keys.parts(last, record.year, record.title)


def view_parts(view: EntryView) -> keys.KeyParts:
    last = view.authors[0].last if view.authors else ""
    return keys.parts(last, view.year, view.title)


def new_key(record: PaperRecord, samples: Sequence[tuple[str, keys.KeyParts]], taken: Iterable[str]) -> str:
    """A key for ``record`` in the style ``samples`` (key, parts) show, unique in ``taken``."""
    style = keys.infer_style(keys.sample(samples))
    return keys.new_key(key_parts(record), style, taken)


def entry_edit(text: str, bib: BibFile | None, record: PaperRecord, key: str) -> TextEdit:
    """The edit appending ``record`` as entry ``key`` to the file ``text`` (parsed: ``bib``)
    in that file's style: the last entry's layout, the field order of its entries."""
    entries: list[BibEntry] = [e for e in (bib.entries if bib else []) if e.fields]
    fs = file_style(text, entries[-200:])
    style = styled(detect_style(text, entries[-1]) if entries else Style(), fs)
    order = detect_field_order(entries[-200:])
    type_like = _type_as_written(text, entries[-1]) if entries else "article"
    return append_entry(text, render_entry(as_written(record, fs), key, style, order, type_like))


def _type_as_written(text: str, entry: BibEntry) -> str:
    m = re.compile(r"@[ \t]*([A-Za-z]\w*)").match(text, entry.span.start)
    return m.group(1) if m else "article"


# --------------------------------------------------------------------------- describing a paper


@dataclasses.dataclass(frozen=True, slots=True)
class Offer:
    """A paper offered in completion, as ``citelens.addPaper`` reads it back: the .bib it
    goes to (created when ``create`` and missing), the key the completion inserted, the paper."""

    bib: str
    key: str
    create: bool
    record: PaperRecord


def offer_payload(bib: str, create: bool, key: str, doc: str, record: PaperRecord) -> dict[str, Any]:
    """The ``citelens.addPaper`` arguments of a paper offered in completion (JSON)."""
    return {"bib": bib, "create": create, "key": key, "doc": doc, "record": record.to_json()}


def read_offer(raw: Any) -> Offer | None:
    """:func:`offer_payload`'s arguments as a client sent them back, or None when they are
    not (a .bib path, a key and a paper record): a client's arguments are never trusted."""
    if not isinstance(raw, dict):
        return None
    bib, key, record = raw.get("bib"), raw.get("key"), raw.get("record")
    if not (
        isinstance(bib, str)
        and bib.endswith(".bib")
        and isinstance(key, str)
        and key
        and isinstance(record, dict)
    ):
        return None
    try:
        return Offer(bib, key, bool(raw.get("create")), PaperRecord.from_json(record))
    except (TypeError, ValueError):
        return None


@dataclasses.dataclass(frozen=True, slots=True)
class PaperChoice:
    """A paper completion offers: its title, detail and documentation, the key it would be
    cited by (the key the project has for it already, or a new one), and, for a paper the
    project lacks, the ``citelens.addPaper`` arguments (:func:`offer_payload`)."""

    title: str
    detail: str
    documentation: str
    key: str
    payload: dict[str, Any] | None


def paper_choices(
    store: ReadStore,
    view_of: Callable[[BibEntry], EntryView | None],
    search: PaperSearch,
    analysis: Analysis,
    path: str,
    records: Sequence[PaperRecord],
) -> list[PaperChoice]:
    """The papers ``records`` as completion offers them in ``path`` (of ``analysis``'s
    project): a paper the project has under its key, another under a new key in the style
    of the .bib it would go to (``view_of``: an entry's view), never a key taken."""
    bib_path, create = target_bib(path, analysis.project.bib_paths)
    bib = None if create else store.bib(bib_path)
    index = search.index(analysis.bibs)
    samples = []
    if bib is not None:
        for e in spread(bib.entries):
            view = view_of(e)
            if view is not None:
                samples.append((e.key, view_parts(view)))
    taken = set(analysis.definitions) | ({e.key for e in bib.entries} if bib else set())
    out = []
    for record in records:
        existing = existing_key(record, index)
        key = existing or new_key(record, samples, taken)
        taken.add(key)
        payload = None if existing else offer_payload(bib_path, create, key, path, record)
        documentation = paper_documentation(record, existing, os.path.basename(bib_path), key)
        out.append(PaperChoice(record.title, paper_detail(record), documentation, key, payload))
    return out


# --------------------------------------------------------------------------- in the background


class PaperSearch:
    """Background paper searches of one session: one per debounce window per document,
    answers kept by normalised query. ``sources``, ``cache`` and ``settings`` give the
    session's current ones (they change with the settings)."""

    def __init__(
        self,
        sources: Callable[[], Sources],
        cache: Callable[[], Awaitable[VerificationCache]],
        settings: Callable[[], Settings],
        log: Callable[[str], None],
    ) -> None:
        self._sources = sources
        self._cache = cache
        self._settings = settings
        self._log = log
        self.last_wait_s = 0.0  # how long the last completion waited (for benchmarks)
        self.results: dict[str, list[PaperRecord]] = {}
        self.searches = 0  # searches started (for tests and benchmarks)
        self._wanted: dict[str, str] = {}  # document -> latest query
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._waiting: dict[str, asyncio.Future[list[PaperRecord] | None]] = {}
        self._indexes: dict[str, tuple[BibFile, dict[str, str]]] = {}
        #: (document, key) -> the ``citelens.addPaper`` arguments of a paper offered in
        #: completion: typed in (or inserted by a client that ignores the item's command)
        #: and undefined, the key gets its entry all the same (lsp/papers.py).
        self.offers: dict[tuple[str, str], dict[str, Any]] = {}
        self.recent_keys: list[str] = []  # keys added from completion, newest last (50)

    def added_key(self, key: str) -> None:
        """``key``'s entry was added: completion offers it first."""
        self.recent_keys = [*[k for k in self.recent_keys if k != key][-49:], key]

    def offer(self, doc: str, key: str, payload: dict[str, Any]) -> None:
        if len(self.offers) >= OFFERS_MAX:
            self.offers.clear()
        self.offers[(doc, key)] = payload

    async def find(self, path: str, query: str, wait_s: float) -> list[PaperRecord] | None:
        """The papers for ``query``: from memory at once, else after the next search of
        this document if it ends within ``wait_s``; None when there are none (yet)."""
        started = time.monotonic()
        try:
            return await self._find(path, query, wait_s)
        finally:
            self.last_wait_s = time.monotonic() - started

    async def _find(self, path: str, query: str, wait_s: float) -> list[PaperRecord] | None:
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
            await asyncio.sleep(self._settings().paper_search_debounce_ms / 1000.0)
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
        try:
            cache = await self._cache()  # (opened off the loop: a database's connection)
            return await search_papers(self._sources(), query, cache)
        except Exception as exc:  # never a pop-up while typing: keys only
            self._log(f"paper search failed: {type(exc).__name__}")
            return None

    def index(self, bibs: Iterable[BibFile]) -> dict[str, str]:
        """DOI / arXiv id / title -> key over ``bibs``, rebuilt when a file changed."""
        out: dict[str, str] = {}
        for bib in bibs:
            cached = self._indexes.get(bib.path)
            if cached is None or cached[0] is not bib:
                cached = (bib, bib_index(bib.entries))
                self._indexes[bib.path] = cached
            for k, v in cached[1].items():
                out.setdefault(k, v)
        return out
