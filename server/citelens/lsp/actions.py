"""Quick fixes (code actions). Filled in with the verification quick fixes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

if TYPE_CHECKING:
    from .server import CiteLensServer


def code_actions(ls: CiteLensServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    return []
