"""The CiteLens language server (pygls 2): wiring only.

:func:`create_server` builds a :class:`~citelens.lsp.state.CiteLensServer` and lets each
feature module register its handlers. Request handlers only read what is already
computed: local analysis runs on each change (fast, no network), verification runs in a
background task that publishes again when it has news.
"""

from __future__ import annotations

from citelens.lsp import (
    actions,
    commands,
    completion,
    documents,
    hover,
    links,
    navigation,
    papers,
    rename,
    symbols,
    zotero,
)
from citelens.lsp.state import CiteLensServer

FEATURES = (
    documents,
    hover,
    navigation,
    completion,
    papers,
    symbols,
    links,
    rename,
    actions,
    commands,
    zotero,
)


def create_server() -> CiteLensServer:
    server = CiteLensServer()
    for feature in FEATURES:
        feature.register(server)
    return server
