"""A keystroke in a .tex crosses from ``lsp/`` into the engine (``workspace/``) at most
twice before its diagnostics are sent, both through the engine's one entry point:
``Engine.apply(Changed)`` (the store has the text at once) and ``Engine.apply(Gathered)``
(analysis, findings per changed file, entries to verify), whose changes the language
server sends without asking the engine anything else."""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

from lsprotocol import types as lsp

from tests.lsp_session import in_process_server, uri

BIB = "@article{beta, title = {Beta}, author = {Bee, Anna}, year = {2020}}\n"
TEX = ("\\documentclass{article}\n\\begin{document}\nSee \\cite{betx} here.\n"
       "\\bibliography{refs}\n\\end{document}\n")


def _crossings(run: Any) -> list[str]:
    """Calls from a function of ``citelens.lsp`` into one of ``citelens.workspace`` while
    ``run`` runs, by qualified name, an event applied named (a dataclass's ``__init__``,
    building a value, is not a call of the engine)."""
    seen: list[str] = []

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event != "call" or frame.f_back is None or frame.f_code.co_name.startswith("__"):
            return
        callee = str(frame.f_globals.get("__name__", ""))
        caller = str(frame.f_back.f_globals.get("__name__", ""))
        if callee.startswith("citelens.workspace.") and caller.startswith("citelens.lsp."):
            event = type(frame.f_locals.get("event")).__name__ if "event" in frame.f_locals else ""
            where = f"{callee}.{frame.f_code.co_qualname}"
            seen.append(f"{caller}.{frame.f_back.f_code.co_name} -> {where}({event})")

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return seen


def test_a_keystroke_crosses_into_the_engine_at_most_twice(tmp_path: Path) -> None:
    from citelens.lsp import documents

    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    tex = tmp_path / "main.tex"
    tex.write_text(TEX, encoding="utf-8")
    ls = in_process_server(tmp_path, {"offline": True, "cacheDir": str(tmp_path / "cache")})
    sent: list[lsp.PublishDiagnosticsParams] = []
    ls.publisher.send = sent.append
    u = uri(tex)
    item = lsp.TextDocumentItem(uri=u, language_id="latex", version=1, text=TEX)
    ls.workspace.put_text_document(item)  # (pygls's own didOpen, then CiteLens's)
    documents.did_open(ls, lsp.DidOpenTextDocumentParams(item))
    assert [d.code for d in sent[-1].diagnostics] == ["UNDEFINED_CITATION"]
    line = TEX.splitlines().index("See \\cite{betx} here.")
    at = lsp.Range(lsp.Position(line, 14), lsp.Position(line, 14))
    change = lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=u, version=2),
        [lsp.TextDocumentContentChangePartial(range=at, text="y")])

    def keystroke() -> None:
        ls.workspace.update_text_document(change.text_document, change.content_changes[0])
        documents.did_change(ls, change)  # (pygls's didChange, then CiteLens's; no loop: analysed now)

    crossings = _crossings(keystroke)
    # \cite{betxy}: the diagnostic follows the keystroke, at the new key's range
    assert sent[-1].version == 2
    [d] = sent[-1].diagnostics
    assert d.code == "UNDEFINED_CITATION" and isinstance(d.data, dict) and d.data["key"] == "betxy"
    assert (d.range.start.character, d.range.end.character) == (10, 15)
    assert len(crossings) <= 2, crossings
    assert [c.split(" -> ")[1] for c in crossings] == [
        "citelens.workspace.engine.Engine.apply(Changed)", "citelens.workspace.engine.Engine.apply(Gathered)"]


def _state(ls: Any) -> tuple[object, ...]:
    """What the engine holds that a request could change: its verdicts, what a run covers,
    the projects analysed (by identity), the documents open and edited, what was reported."""
    engine = ls.session
    return (engine.verdicts.generation, dict(engine.verdicts), engine.runs.checking, engine.runs.current,
            {root: id(a) for root, a in engine.projects.analyses.items()},
            sorted(engine.store.open_paths()), sorted(engine.projects.edited),
            dict(engine._findings.reported._signatures), engine.settings)


def test_requests_read_the_engine_and_change_it_only_through_apply(tmp_path: Path) -> None:
    """Every request the editor answers crosses into the engine only through
    ``Engine.apply`` or a read-only query (a member of ``workspace/queries``'s protocols, or a
    function of ``workspace/``), and the queries change nothing the engine holds."""
    import asyncio

    from citelens.lsp import actions, completion, documents, hover, links, navigation, rename, symbols
    from citelens.workspace.queries import ProjectQueries, Queries
    from citelens.workspace.store import ReadStore

    bib = tmp_path / "refs.bib"
    bib.write_text(BIB + "@article{gamma, title = {Gamma}, author = {Gee, Gil}, year = {2021}}\n",
                   encoding="utf-8")
    tex = tmp_path / "main.tex"
    tex.write_text(TEX.replace("betx", "beta"), encoding="utf-8")
    ls = in_process_server(tmp_path, {"offline": True, "cacheDir": str(tmp_path / "cache")})
    ls.publisher.send = lambda _p: None
    for path, language in ((tex, "latex"), (bib, "bibtex")):
        item = lsp.TextDocumentItem(uri=uri(path), language_id=language, version=1,
                                    text=path.read_text(encoding="utf-8"))
        ls.workspace.put_text_document(item)
        documents.did_open(ls, lsp.DidOpenTextDocumentParams(item))
    t, b = lsp.TextDocumentIdentifier(uri(tex)), lsp.TextDocumentIdentifier(uri(bib))
    line = TEX.splitlines().index("See \\cite{betx} here.")
    on_key, on_entry = lsp.Position(line, 12), lsp.Position(0, 11)

    async def requests() -> None:
        await hover.hover(ls, lsp.HoverParams(text_document=t, position=on_key))
        await hover.hover(ls, lsp.HoverParams(text_document=b, position=on_entry))
        at_key = lsp.Position(line, 11)
        await completion.completion(ls, lsp.CompletionParams(text_document=t, position=at_key))
        navigation.definition(ls, lsp.DefinitionParams(text_document=t, position=on_key))
        navigation.references(ls, lsp.ReferenceParams(
            text_document=t, position=on_key, context=lsp.ReferenceContext(include_declaration=True)))
        symbols.document_symbols(ls, lsp.DocumentSymbolParams(text_document=b))
        symbols.workspace_symbol(ls, lsp.WorkspaceSymbolParams(query="gam"))
        links.document_link(ls, lsp.DocumentLinkParams(text_document=t))
        rename.prepare_rename(ls, lsp.PrepareRenameParams(text_document=t, position=on_key))
        rename.rename(ls, lsp.RenameParams(text_document=t, position=on_key, new_name="beta2"))
        nothing = lsp.CodeActionContext(diagnostics=[])
        actions.code_action(ls, lsp.CodeActionParams(
            text_document=b, range=lsp.Range(on_entry, on_entry), context=nothing))

    before = _state(ls)
    crossings = _crossings(lambda: asyncio.run(requests()))
    assert _state(ls) == before  # the requests read; nothing they did changed the engine
    queries = {n for p in (Queries, ProjectQueries, ReadStore) for n in dir(p) if not n.startswith("_")}
    called = {c.split(" -> ")[1].split("(")[0] for c in crossings}
    # a method of the engine's parts that change is a query (a module's function, a method
    # of a value such as an Analysis or a LineIndex, holds no state of the engine)
    parts = ("Engine", "Projects", "Verdicts", "Runs", "Findings", "DocumentStore", "Pipeline", "PaperSearch")
    methods = {c for c in called if c.split(".")[3:4] and c.split(".")[3] in parts}
    assert "citelens.workspace.engine.Engine.hover" in methods
    assert {m.rsplit(".", 1)[1] for m in methods} - queries == set(), sorted(methods)
