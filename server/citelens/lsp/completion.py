"""Where key completion applies, and the items it offers."""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from citelens.core.model import BibEntry, EntryView

# Inside the key group of a citation command, before the cursor: \citep[p.~3]{a, b, par|
_LATEX = re.compile(r"\\[a-zA-Z]*cite[a-zA-Z]*\*?(?:\s*\[[^\]]*\]|\s*\([^)]*\))*"
                    r"(?:\s*\{[^{}]*\}\s*(?:\[[^\]]*\]\s*)*)*\s*\{(?P<keys>[^{}]*)$", re.I)
# After @ in Markdown, not in an e-mail address: [see @doe| or @doe|
_MARKDOWN = re.compile(r"(?<![\w.\-/])-?@(?P<prefix>[\w:.#$%&\-+?<>~/]*)$")


def key_prefix(line_before_cursor: str, language: str) -> str | None:
    """The partial key being typed, or None when the cursor is not at a key."""
    if language == "markdown":
        m = _MARKDOWN.search(line_before_cursor)
        return m.group("prefix") if m else None
    m = _LATEX.search(line_before_cursor[-2000:])
    if not m:
        return None
    return m.group("keys").split(",")[-1].lstrip()


def items(
    entries: list[tuple[BibEntry, EntryView | None]], prefix: str
) -> list[lsp.CompletionItem]:
    out = []
    low = prefix.lower()
    for entry, view in entries:
        if low and low not in entry.key.lower():
            continue
        detail = ""
        doc = ""
        if view is not None:
            first = view.authors[0].last if view.authors else ""
            detail = " ".join(str(x) for x in (first, view.year) if x)
            doc = view.title
        out.append(
            lsp.CompletionItem(
                label=entry.key,
                kind=lsp.CompletionItemKind.Reference,
                detail=detail or entry.entry_type,
                documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, doc) if doc else None,
                filter_text=entry.key,
                sort_text=("0" if entry.key.lower().startswith(low) else "1") + entry.key.lower(),
            )
        )
    return out
