"""Quick fixes (code actions) for the verification diagnostics.

Every action is computed from the diagnostic's ``data`` and the current store,
never from the network: the entry is looked up again by key in the current text
of its .bib file, and the edit replaces exactly that entry (see
:mod:`citelens.documents.bibtex.edit`). A diagnostic computed for an older version of its
document, or whose entry has changed since it was verified, gets no action.

Edits are sent as ``WorkspaceEdit.changes`` (every client) and, when the client
supports them, as versioned ``documentChanges``.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from citelens.core.codes import Code
from citelens.core.findings import FixData
from citelens.core.model import BibEntry, Span
from citelens.core.source_names import source_name
from citelens.documents.bibtex import edit as bibedit
from citelens.documents.bibtex.edit import TextEdit
from citelens.documents.bibtex.render import latex_escape
from citelens.lsp.convert import path_of, to_range, uri_of
from citelens.lsp.state import CiteLensServer, guarded
from citelens.sources.records import PaperRecord
from citelens.workspace.project import uses_bib
from citelens.workspace.rename import rename_citation

if TYPE_CHECKING:
    from citelens.verify.status import Verification

log = logging.getLogger("citelens")

MAX_CANDIDATES = 3
#: The verification status (``Status`` name, any case) behind each diagnostic code.
_VERIFICATION_CODES = {
    Code.METADATA_MISMATCH: "partial",
    Code.DOI_MISMATCH: "doi_mismatch",
    Code.NOT_FOUND: "not_found",
}


def register(server: CiteLensServer) -> None:
    server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix])
    )(guarded(code_action))
    server.command(OPEN_NOTICE)(guarded(open_notice))


def code_action(ls: CiteLensServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    ls.flush()  # answer from the latest text, not a queued one
    return code_actions(ls, params)


async def open_notice(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
    """Show a retraction (or other) notice in the browser (``window/showDocument``)."""
    url = notice_target(args)
    if url is None:
        return {"shown": False}
    result = await ls.window_show_document_async(lsp.ShowDocumentParams(uri=url, external=True))
    return {"shown": bool(getattr(result, "success", False))}


def code_actions(ls: CiteLensServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    only = params.context.only
    if only and not any(
        str(k.value if isinstance(k, lsp.CodeActionKind) else k).startswith("quickfix") for k in only
    ):
        return []
    path = path_of(params.text_document.uri)
    if not path:
        return []
    diags = list(params.context.diagnostics) or _published_at(ls, params)
    out: list[lsp.CodeAction] = []
    seen: set[str] = set()
    for d in diags:
        fix = FixData.from_json(d.data) if d.source == "citelens" else None
        if fix is None or _stale(ls, path, fix):
            continue
        try:
            actions = _for_diagnostic(ls, d, fix)
        except Exception:  # a quick fix we cannot compute is not offered
            log.exception("code action for %s failed", d.code)
            continue
        for a in actions:
            if a.title not in seen:
                seen.add(a.title)
                out.append(a)
    return out


def _published_at(ls: CiteLensServer, params: lsp.CodeActionParams) -> list[lsp.Diagnostic]:
    """The published diagnostics under the cursor (clients that send none in the context)."""
    r = params.range
    out = []
    for d in ls.publisher.published.get(params.text_document.uri, []):
        if (d.range.start.line, d.range.start.character) <= (r.end.line, r.end.character) and (
            r.start.line,
            r.start.character,
        ) <= (d.range.end.line, d.range.end.character):
            out.append(d)
    return out


def _stale(ls: CiteLensServer, path: str, fix: FixData) -> bool:
    """The document changed since the diagnostic was computed."""
    current = ls.session.store.version(path)
    return current is not None and fix.version != current


# --------------------------------------------------------------------------- per code


class _Ctx:
    """The entry a diagnostic is about, as it is now."""

    def __init__(self, ls: CiteLensServer, bib_path: str, key: str) -> None:
        self.ls = ls
        self.path = bib_path
        self.text = ls.session.store.text(bib_path) or ""
        bib = ls.session.store.bib(bib_path)
        self.entry: BibEntry | None = None
        if bib is not None:
            self.entry = next((e for e in bib.entries if e.key == key), None)
            if self.entry is not None and not self.entry.path:
                self.entry.path = bib_path
        self.analysis = ls.session.analysis_for(bib_path)


def _for_diagnostic(ls: CiteLensServer, d: lsp.Diagnostic, fix: FixData) -> list[lsp.CodeAction]:
    if str(d.code) not in Code.__members__:
        return []
    code = Code(str(d.code))
    ctx = _Ctx(ls, fix.bib, fix.key)
    if ctx.entry is None:
        return []
    if code == Code.DUPLICATE_ENTRY:
        return _duplicate_actions(ls, d, ctx, fix)
    if code in _NOTICE_TITLES:
        return _notice_actions(ls, d, ctx, code)
    wanted = _VERIFICATION_CODES.get(code)
    if wanted is None or fix.status.lower() != wanted:
        return []
    v = ls.session.verdict(ctx.entry, ctx.analysis)
    if v is None or v.status.name.lower() != wanted:
        return []  # the entry changed since: its verification is not this one any more
    if code == Code.METADATA_MISMATCH:
        return _metadata_actions(ls, d, ctx, v)
    if code == Code.DOI_MISMATCH:
        return _doi_actions(ls, d, ctx, v)
    if v.informational:
        return []  # a book or thesis is often just not indexed: never swap in another paper
    return _not_found_actions(ls, d, ctx, _records(fix.candidates) or v.candidates)


def _records(values: Sequence[dict[str, object]]) -> list[PaperRecord]:
    out = []
    for r in values:
        try:
            out.append(PaperRecord.from_json(r))
        except (TypeError, ValueError, KeyError):
            continue
    return out


def _metadata_actions(
    ls: CiteLensServer, d: lsp.Diagnostic, ctx: _Ctx, v: Verification
) -> list[lsp.CodeAction]:
    assert ctx.entry is not None
    out = _field_fixes(ls, d, ctx)
    published = _published_version(ls, ctx, v)
    if published is not None:
        edit = bibedit.replace_entry(ctx.text, ctx.entry, published, same_paper=True)
        out.append(
            _action(ls, "Update preprint to published version", d, {ctx.path: [edit]}, preferred=not out)
        )
    if v.match is not None:
        edit = bibedit.replace_entry(ctx.text, ctx.entry, v.match, same_paper=True)
        out.append(
            _action(
                ls,
                f"Replace entry with {source_name(v.match.source)} metadata",
                d,
                {ctx.path: [edit]},
                preferred=published is None and not out,
            )
        )
    return [a for a in out if a is not None]


#: Discrepancy kinds a one-field fix mends: the field and the action's wording.
_FIELD_FIXES = {"title_words": "title", "title": "title", "venue": "venue"}


def _field_fixes(ls: CiteLensServer, d: lsp.Diagnostic, ctx: _Ctx) -> list[lsp.CodeAction | None]:
    """The paper's title for a title with wrong words, the venue a source shows the paper
    published in for a wrong venue: an edit of that one field, nothing else."""
    assert ctx.entry is not None
    data = d.data if isinstance(d.data, dict) else {}
    disc = data.get("discrepancy")
    if not isinstance(disc, dict) or disc.get("kind") not in _FIELD_FIXES:
        return []
    value = str(disc.get("source_value") or "").strip()
    if not value:
        return []
    if _FIELD_FIXES[str(disc["kind"])] == "title":
        name, label = "title", f"Use the paper's title: “{value}”"
    else:
        field = data.get("field")
        if not isinstance(field, str) or field not in ("journal", "booktitle", "journaltitle"):
            return []
        name, label = field, f"Change {field} to {value}"
    edit = bibedit.replace_field(ctx.text, ctx.entry, name, latex_escape(value))
    return [_action(ls, label, d, {ctx.path: [edit]}, preferred=True)]


def _published_version(ls: CiteLensServer, ctx: _Ctx, v: Verification) -> PaperRecord | None:
    """For an arXiv entry: the record of the paper's venue publication, if one is known."""
    from citelens.verify.match.venues import is_preprint_venue

    assert ctx.entry is not None
    view = ls.session.entry_view(ctx.entry, ctx.analysis)
    if view is None or v.match is None:
        return None
    if not (view.arxiv_id or is_preprint_venue(view.venue or "")):
        return None
    if not any(disc.kind == "preprint_status" for disc in v.discrepancies):
        return None
    records = [v.match, *v.versions]
    published = next(
        (r for r in records if r.venue and not r.is_preprint and not is_preprint_venue(r.venue)), None
    )
    if published is None:
        return None
    merged = PaperRecord.from_json(published.to_json())
    for r in records:  # fill what the publisher's record lacks (authors, arXiv id, ...)
        for name in ("title", "authors", "year", "arxiv_id", "doi", "volume", "pages"):
            if not getattr(merged, name) and getattr(r, name):
                setattr(merged, name, getattr(r, name))
    merged.is_preprint = False
    return merged


def _right_papers(ls: CiteLensServer, ctx: _Ctx, v: Verification) -> list[PaperRecord]:
    """Candidates of a DOI_MISMATCH that are the entry's own paper (same title)."""
    from citelens.verify.match.titles import title_similarity

    assert ctx.entry is not None
    view = ls.session.entry_view(ctx.entry, ctx.analysis)
    if view is None:
        return []
    wrong = v.match.doi.lower() if v.match is not None and v.match.doi else None
    threshold = ls.session.settings.title_verified_threshold
    return [
        c
        for c in v.candidates
        if title_similarity(view.title, c.title or "") >= threshold
        and not (wrong and c.doi and c.doi.lower() == wrong)
    ]


def _doi_actions(ls: CiteLensServer, d: lsp.Diagnostic, ctx: _Ctx, v: Verification) -> list[lsp.CodeAction]:
    assert ctx.entry is not None
    out: list[lsp.CodeAction | None] = []
    about_doi = any(x.field == "doi" for x in v.discrepancies if x.kind == "identifier")
    right = _right_papers(ls, ctx, v)
    paper = right[0] if right else None
    has_doi = "doi" in ctx.entry.fields
    if about_doi and has_doi:
        if paper is not None and paper.doi:
            edit = bibedit.replace_field(ctx.text, ctx.entry, "doi", paper.doi)
            out.append(_action(ls, f"Fix DOI: {paper.doi}", d, {ctx.path: [edit]}, preferred=True))
        else:
            edit = bibedit.remove_field(ctx.text, ctx.entry, "doi")
            out.append(_action(ls, "Remove DOI", d, {ctx.path: [edit]}, preferred=True))
    if paper is not None:
        drop = ["doi"] if about_doi and not paper.doi else []
        edit = bibedit.replace_entry(ctx.text, ctx.entry, paper, same_paper=True, drop=drop)
        out.append(
            _action(ls, f"Replace entry with {source_name(paper.source)} metadata", d, {ctx.path: [edit]})
        )
    return [a for a in out if a is not None]


def _not_found_actions(
    ls: CiteLensServer, d: lsp.Diagnostic, ctx: _Ctx, candidates: Sequence[PaperRecord]
) -> list[lsp.CodeAction]:
    assert ctx.entry is not None
    out = []
    for c in candidates[:MAX_CANDIDATES]:
        if not c.title:
            continue
        edit = bibedit.replace_entry(ctx.text, ctx.entry, c, same_paper=False)
        a = _action(ls, f"Replace with: {c.title} ({c.year or 'n.d.'})", d, {ctx.path: [edit]})
        if a is not None:
            out.append(a)
    return out


def _duplicate_actions(
    ls: CiteLensServer, d: lsp.Diagnostic, ctx: _Ctx, fix: FixData
) -> list[lsp.CodeAction]:
    other_key, other_bib = fix.duplicate_of, fix.duplicate_bib
    if other_key is None or other_bib is None:
        return []
    other = _Ctx(ls, other_bib, other_key)
    if other.entry is None or ctx.entry is None or other.entry is ctx.entry:
        return []
    out = []
    for keep, drop in ((other, ctx), (ctx, other)):
        edits = _merge_edits(ls, keep, drop)
        if edits is None:
            continue
        assert keep.entry is not None
        # a merge deletes an entry: never the preferred action (applied without a look)
        a = _action(ls, f"Merge duplicate into {keep.entry.key}", d, edits)
        if a is not None:
            out.append(a)
    return out


def _merge_edits(ls: CiteLensServer, keep: _Ctx, drop: _Ctx) -> dict[str, list[TextEdit]] | None:
    assert keep.entry is not None and drop.entry is not None
    edits: dict[str, list[TextEdit]] = {}
    same_file = keep.path == drop.path
    if not same_file and not all(
        uses_bib(p, keep.path) for p in ls.session.projects_using_bib(drop.path)
    ):  # a paper that reads only the dropped entry's .bib would lose the entry it cites
        return None
    merged = bibedit.merge_entries(keep.text, keep.entry, drop.entry, None if same_file else drop.text)
    edits.setdefault(keep.path, []).append(merged)
    edits.setdefault(drop.path, []).append(bibedit.delete_entry(drop.text, drop.entry))
    new_key, old_key = keep.entry.key, drop.entry.key
    if new_key != old_key:
        for path, c in ls.session.all_citations(old_key, drop.path):  # this .bib's projects only
            doc = ls.session.store.source(path)
            text = ls.session.store.text(path)
            if doc is None or text is None:
                continue
            others = [
                (x.key, x.span)
                for x in doc.citations
                if x.command_span == c.command_span and x.span != c.span
            ]
            edits.setdefault(path, []).append(rename_citation(text, c.span, new_key, others))
    for path, es in edits.items():
        es.sort(key=lambda e: (e.start, e.end))
        if any(a.end > b.start for a, b in itertools.pairwise(es)):
            return None  # overlapping edits: never risk a corrupted file
        edits[path] = es
    return edits


# --------------------------------------------------------------------------- notices

OPEN_NOTICE = "citelens.openNotice"
_NOTICE_TITLES = {
    Code.RETRACTED: "Open the retraction notice",
    Code.EXPRESSION_OF_CONCERN: "Open the expression of concern",
    Code.CORRECTION: "Open the correction notice",
}


def _notice_actions(ls: CiteLensServer, d: lsp.Diagnostic, ctx: _Ctx, code: Code) -> list[lsp.CodeAction]:
    """ "Open the retraction notice": the notice of the entry's current verdict, in the
    browser (the server sends ``window/showDocument`` when the command runs)."""
    from citelens.verify import retraction

    assert ctx.entry is not None
    v = ls.session.verdict(ctx.entry, ctx.analysis)
    top = retraction.worst(v.notices) if v is not None else None
    url = retraction.notice_url(top) if top is not None else None
    if top is None or url is None or retraction.code_of(top) != code:
        return []  # the entry changed since, or the notice has no address
    title = _NOTICE_TITLES[code]
    if top.get("kind") == "withdrawal":
        title = "Open the withdrawal notice"
    return [
        lsp.CodeAction(
            title=title,
            kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[d],
            command=lsp.Command(title=title, command=OPEN_NOTICE, arguments=[url]),
        )
    ]


def notice_target(args: Sequence[Any]) -> str | None:
    """The URL argument of ``citelens.openNotice``, if it is a web address."""
    url = args[0] if args and isinstance(args[0], str) else None
    if isinstance(url, str) and url.startswith("https://") and " " not in url:
        return url
    return None


# --------------------------------------------------------------------------- LSP shape


def _action(
    ls: CiteLensServer,
    title: str,
    d: lsp.Diagnostic,
    edits: dict[str, list[TextEdit]],
    *,
    preferred: bool = False,
) -> lsp.CodeAction | None:
    edit = workspace_edit(ls, edits)
    if edit is None:
        return None
    return lsp.CodeAction(
        title=title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[d],
        edit=edit,
        is_preferred=preferred or None,
    )


def workspace_edit(ls: CiteLensServer, edits: dict[str, list[TextEdit]]) -> lsp.WorkspaceEdit | None:
    """``changes`` for every client, versioned ``documentChanges`` when supported."""
    encoding = _encoding(ls)
    changes: dict[str, list[lsp.TextEdit]] = {}
    doc_changes: list[lsp.TextDocumentEdit] = []
    for path, es in edits.items():
        index = ls.session.store.line_index(path)
        if index is None:
            return None
        text = ls.session.store.text(path) or ""
        lsp_edits = [
            lsp.TextEdit(range=to_range(index, _span(e), encoding), new_text=e.new)
            for e in es
            if text[e.start : e.end] != e.new
        ]
        if not lsp_edits:
            continue
        uri = uri_of(path)
        changes[uri] = lsp_edits
        doc_changes.append(
            lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(
                    uri=uri, version=ls.session.store.version(path)
                ),
                edits=list(lsp_edits),
            )
        )
    if not changes:
        return None
    if ls.flags.document_changes:
        return lsp.WorkspaceEdit(changes=changes, document_changes=list(doc_changes))
    return lsp.WorkspaceEdit(changes=changes)


def _encoding(ls: CiteLensServer) -> str:
    try:
        return ls.encoding
    except RuntimeError:  # not initialised (in-process use)
        return "utf-16"


def _span(e: TextEdit) -> Span:
    return Span(e.start, e.end)
