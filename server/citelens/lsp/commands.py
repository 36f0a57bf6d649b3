"""Commands of the server (``workspace/executeCommand``): verify now, clear the cache, and
the JSON report of the workspace (the ``citelens check --format json`` report, from the
editor's buffers, saved or not)."""

from __future__ import annotations

from typing import Any

from citelens.lsp.state import CiteLensServer, guarded
from citelens.workspace.check import run_check
from citelens.workspace.report import render, to_json


def register(server: CiteLensServer) -> None:
    # pygls announces these in executeCommandProvider and dispatches them.
    server.command("citelens.verifyNow")(guarded(verify_now))
    server.command("citelens.clearCache")(guarded(clear_cache))
    server.command("citelens.report")(guarded(report))


async def verify_now(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
    ls.verifier.reset()
    ls.reanalyse_all()
    ls.verifier.schedule(delay=0.0, force=True)
    return {"scheduled": True}


async def clear_cache(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
    where = ls.verifier.clear_cache()
    ls.log_line(f"cache cleared ({where})")
    return {"cleared": True}


async def report(ls: CiteLensServer, *args: Any) -> dict[str, Any] | str:
    """The ``citelens check --format json`` report for the workspace, read from the
    session's store: open buffers as they are in the editor. With the argument
    ``{"format": "text"}``, the text report of ``citelens check`` (what Neovim's
    ``:CiteLensReport`` shows), as one string."""
    fmt = args[0].get("format") if args and isinstance(args[0], dict) else None
    ls.flush()
    session = ls.session
    paths = session.workspace_roots or sorted({a.project.root for a in session.analyses.values()})
    if not paths:
        if fmt == "text":
            return "No LaTeX or Markdown project is open."
        return {"version": 1, "entries": [], "diagnostics": [], "summary": {}}
    result = await run_check(
        paths,
        session.pipeline,  # the background run's clients and rate limiters, not a second set
        store=session.store,
        verify=session.settings.verification_enabled,
        log=lambda m: ls.log_once(m),
    )
    if fmt == "text":
        return render(result, "text")
    return to_json(result)
