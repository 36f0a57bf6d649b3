"""What the client can do, read once from its capabilities at ``initialize``.

Every feature asks :class:`ClientFlags` instead of walking the capabilities itself, so a
client that lacks a capability is handled the same way everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsprotocol import types as lsp


def _get(node: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        node = getattr(node, part, None)
        if node is None:
            return None
    return node


@dataclass(frozen=True, slots=True)
class ClientFlags:
    related_information: bool = False  # diagnostics may point at other places
    work_done_progress: bool = False  # $/progress with a server-created token
    configuration: bool = False  # workspace/configuration can be asked
    watched_files_registration: bool = False  # file watchers can be registered
    document_changes: bool = False  # versioned documentChanges in a WorkspaceEdit
    create_files: bool = False  # a WorkspaceEdit may create a file
    completion_markdown: bool = True  # completion documentation as Markdown (else plain text)
    disabled_actions: bool = False  # a code action may be shown disabled, with its reason

    @classmethod
    def from_capabilities(cls, caps: lsp.ClientCapabilities | None) -> ClientFlags:
        ops = _get(caps, "workspace.workspace_edit.resource_operations") or []
        return cls(
            related_information=bool(_get(caps, "text_document.publish_diagnostics.related_information")),
            work_done_progress=bool(_get(caps, "window.work_done_progress")),
            configuration=bool(_get(caps, "workspace.configuration")),
            watched_files_registration=bool(
                _get(caps, "workspace.did_change_watched_files.dynamic_registration")
            ),
            document_changes=bool(_get(caps, "workspace.workspace_edit.document_changes")),
            create_files=lsp.ResourceOperationKind.Create in ops or "create" in ops,
            disabled_actions=bool(_get(caps, "text_document.code_action.disabled_support")),
            completion_markdown=_prefers_markdown(
                _get(caps, "text_document.completion.completion_item.documentation_format")
            ),
        )


def _prefers_markdown(formats: Any) -> bool:
    """The client's first documentation format is Markdown (none listed: Markdown)."""
    if not formats:
        return True
    return str(getattr(formats[0], "value", formats[0])) == lsp.MarkupKind.Markdown.value
