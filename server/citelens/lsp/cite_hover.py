"""The hover on a citation command itself (``\\citep[...]{a,b}`` outside the keys, or a
pandoc ``[see @a; @b]`` group): every entry it cites, in one compact list."""

from __future__ import annotations

from lsprotocol import types as lsp

from citelens.core.model import Citation
from citelens.lsp.convert import span_range
from citelens.lsp.state import CiteLensServer
from citelens.workspace.render import CitedRow, citation_list


def citations_of_command(ls: CiteLensServer, path: str, offset: int) -> list[Citation]:
    """The citations of the command whose extent holds ``offset``, in order."""
    a = ls.session.analysis_for(path)
    doc = a.sources.get(path) if a else ls.session.store.source(path)
    if doc is None:
        return []
    hit = next((c for c in doc.citations if c.command_span.start <= offset < c.command_span.end), None)
    if hit is None:
        return []
    return [c for c in doc.citations if c.command_span == hit.command_span]


def command_hover(ls: CiteLensServer, path: str, offset: int) -> lsp.Hover | None:
    cites = citations_of_command(ls, path, offset)
    if not cites:
        return None
    analysis = ls.session.analysis_for(path)
    rows: list[CitedRow] = []
    for c in cites:
        defs = analysis.definitions.get(c.key, []) if analysis else []
        if not defs:
            rows.append((c.key, None, None, False))
            continue
        entry = defs[0]
        rows.append(
            (
                c.key,
                ls.session.entry_view(entry, analysis),
                ls.session.verdict(entry, analysis),
                ls.session.being_checked(entry),
            )
        )
    text = citation_list(rows)
    rng = span_range(ls.session.store, path, cites[0].command_span, ls.encoding)
    return lsp.Hover(contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, text), range=rng)
