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

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from citelens.core.dockind import CITING, DocKind, kind_of
from citelens.core.model import BibEntry, EntryView
from citelens.lsp.convert import path_of
from citelens.lsp.state import CiteLensServer
from citelens.workspace import citesearch, render
from citelens.workspace.citesearch import PaperChoice
from citelens.workspace.events import PapersOffered

if TYPE_CHECKING:
    from citelens.workspace.index import Analysis

#: Keys offered at most per answer (the list is then incomplete).
MAX_ITEMS = 100
ADD_PAPER = "citelens.addPaper"

# Inside the key group of a citation command, before the cursor: \citep[p.~3]{a, b, par|
_LATEX = re.compile(
    r"\\[a-zA-Z]*cite[a-zA-Z]*\*?(?:\s*\[[^\]]*\]|\s*\([^)]*\))*"
    r"(?:\s*\{[^{}]*\}\s*(?:\[[^\]]*\]\s*)*)*\s*\{(?P<keys>[^{}]*)$",
    re.I,
)
# After @ in Markdown, not in an e-mail address: [see @doe| or @doe|
_MARKDOWN = re.compile(r"(?<![\w.\-/])-?@(?P<prefix>[\w:.#$%&\-+?<>~/]*)$")
# Inside a bracketed Pandoc citation, words typed after @ (a title, not yet a key):
# [see @lateral diffusion of|
_MARKDOWN_TEXT = re.compile(r"\[(?:[^\[\]]*;)?[^\[\]@;]*?(?<![\w.\-/])-?@(?P<prefix>[^\];@,\n]*)$")


async def completion(ls: CiteLensServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
    # Keys come from the bibliographies: an edit of a .tex/.md need not be analysed
    # first (the line before the cursor is read from the latest text).
    if ls.dirty(lambda p: kind_of(p) is DocKind.BIB):
        ls.flush()
    path = path_of(params.text_document.uri)
    language = kind_of(path) if path else None
    if path is None or language is None or language not in CITING:
        return None
    return await complete(ls, path, language, params.position)


def key_prefix(line_before_cursor: str, language: DocKind) -> str | None:
    """The partial key (or typed title) at the cursor, or None when not at a key."""
    if language == DocKind.MARKDOWN:
        m = _MARKDOWN_TEXT.search(line_before_cursor) or _MARKDOWN.search(line_before_cursor)
        return m.group("prefix") if m else None
    m = _LATEX.search(line_before_cursor[-2000:])
    if not m:
        return None
    return m.group("keys").split(",")[-1].lstrip()


# --------------------------------------------------------------------------- keys


def rank_keys(
    keys: Sequence[str], prefix: str, first: Sequence[str], limit: int = MAX_ITEMS
) -> tuple[list[str], bool]:
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


def _doc(ls: CiteLensServer, text: str) -> lsp.MarkupContent | None:
    """Completion documentation in the client's preferred format (the text reads the same
    in both: no emphasis, code spans or escapes)."""
    if not text:
        return None
    kind = lsp.MarkupKind.Markdown if ls.flags.completion_markdown else lsp.MarkupKind.PlainText
    return lsp.MarkupContent(kind, text)


def key_item(
    entry: BibEntry, view: EntryView | None, rank: int, doc_format: lsp.MarkupKind = lsp.MarkupKind.Markdown
) -> lsp.CompletionItem:
    detail = ""
    doc = ""
    if view is not None:
        detail = render.key_detail(view)
        doc = render.key_documentation(view, doc_format == lsp.MarkupKind.Markdown)
    return lsp.CompletionItem(
        label=entry.key,
        kind=lsp.CompletionItemKind.Reference,
        detail=detail or entry.entry_type,
        documentation=lsp.MarkupContent(doc_format, doc) if doc else None,
        filter_text=entry.key,
        sort_text=f"0{rank:05d}",
    )


def key_items(
    ls: CiteLensServer, analysis: Analysis, path: str, prefix: str
) -> tuple[list[lsp.CompletionItem], bool]:
    doc = analysis.sources.get(path)
    here = [c.key for c in doc.citations] if doc is not None else []
    first = [*reversed(ls.session.recent_keys), *here, *analysis.cited_keys()]
    first = [k for k in dict.fromkeys(first) if k in analysis.definitions]
    keys, capped = rank_keys(list(analysis.definitions), prefix, first)
    items = []
    for i, key in enumerate(keys):
        entry = analysis.definitions[key][0]
        fmt = lsp.MarkupKind.Markdown if ls.flags.completion_markdown else lsp.MarkupKind.PlainText
        items.append(key_item(entry, ls.session.entry_view(entry, analysis), i, fmt))
    return items, capped


# --------------------------------------------------------------------------- papers


def paper_items(
    ls: CiteLensServer, choices: list[PaperChoice], rng: lsp.Range, typed: str
) -> list[lsp.CompletionItem]:
    """The papers the engine chose as completion items: the key replaces the typed text;
    a paper the project lacks comes with the ``citelens.addPaper`` command."""
    items = []
    for i, choice in enumerate(choices):
        command = None
        if choice.payload is not None:
            command = lsp.Command(title="Add to bibliography", command=ADD_PAPER, arguments=[choice.payload])
        items.append(
            lsp.CompletionItem(
                label=choice.title,
                kind=lsp.CompletionItemKind.Reference,
                detail=choice.detail,
                documentation=_doc(ls, choice.documentation),
                filter_text=typed,
                sort_text=f"1{i:05d}",
                text_edit=lsp.TextEdit(range=rng, new_text=choice.key),
                command=command,
            )
        )
    return items


async def complete(
    ls: CiteLensServer, path: str, language: DocKind, position: lsp.Position
) -> lsp.CompletionList | None:
    """The completion list at ``position`` of ``path``: keys at once, papers when the typed
    text names none (waiting for the search only then)."""
    index = ls.session.store.line_index(path)
    if index is None:
        return None
    start = index.line_start(position.line)
    offset = index.offset(position.line, position.character, ls.encoding)
    latex = language is DocKind.LATEX
    before = index.text[max(start - 1000, 0) : offset] if latex else index.text[start:offset]
    prefix = key_prefix(before, language)
    analysis = ls.session.analysis_for(path) if prefix is not None else None
    if prefix is None or analysis is None:
        return None
    items, capped = key_items(ls, analysis, path, prefix)
    typed = prefix.strip()
    if items or len(typed) < citesearch.MIN_QUERY or "\n" in prefix or not ls.session.settings.paper_search:
        return lsp.CompletionList(is_incomplete=capped or bool(typed), items=items)
    wait = ls.session.settings.paper_search_debounce_ms / 1000.0 + 3.0
    records = await ls.session.find_papers(path, typed, wait)
    if records:
        a = index.position(offset - len(prefix), ls.encoding)
        b = index.position(offset, ls.encoding)
        rng = lsp.Range(lsp.Position(a.line, a.character), lsp.Position(b.line, b.character))
        choices = ls.session.paper_choices(analysis, path, records)
        offered = tuple((c.key, c.payload) for c in choices if c.payload is not None)
        if offered:  # a key typed in and undefined gets its entry all the same
            ls.handle(PapersOffered(path, offered))
        items = paper_items(ls, choices, rng, prefix)
    return lsp.CompletionList(is_incomplete=True, items=items)
