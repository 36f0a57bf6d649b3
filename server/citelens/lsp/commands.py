"""Commands of the server (``workspace/executeCommand``): verify now, clear the cache, and
the JSON report of the workspace (the ``citelens check --format json`` report, from the
editor's buffers, saved or not)."""

from __future__ import annotations

from typing import Any

from citelens.lsp.state import CiteLensServer
from citelens.workspace.events import CacheCleared, VerifyNow


async def verify_now(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
    ls.handle(VerifyNow())
    return {"scheduled": True}


async def clear_cache(ls: CiteLensServer, *args: Any) -> dict[str, Any]:
    ls.handle(CacheCleared())
    return {"cleared": True}


async def report(ls: CiteLensServer, *args: Any) -> dict[str, Any] | str:
    """The ``citelens check --format json`` report for the workspace, read from the
    engine's store: open buffers as they are in the editor. With the argument
    ``{"format": "text"}``, the text report of ``citelens check`` (what Neovim's
    ``:CiteLensReport`` shows), as one string."""
    fmt = args[0].get("format") if args and isinstance(args[0], dict) else None
    ls.flush()
    return await ls.session.workspace_report(fmt)
