"""Findings: what every check produces (independent of the LSP), and their codes' docs.

A :class:`Finding` is one diagnostic at a :class:`~citelens.core.model.Span` of one file;
the LSP layer converts it at the edge. :func:`make_finding` applies the configured
severity (or drops a code turned off); :func:`code_url` is the ``codeDescription`` link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from citelens.core.model import Span
from citelens.core.settings import Settings

DOCS_URL = "https://github.com/citelens/citelens/blob/main/docs/diagnostics.md"


def code_url(code: str) -> str:
    """The ``codeDescription`` link of a diagnostic code (its section in docs/diagnostics.md)."""
    return f"{DOCS_URL}#{code.lower()}"



class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"


@dataclass(frozen=True, slots=True)
class Related:
    """A secondary location attached to a finding (LSP ``relatedInformation``)."""

    path: str
    span: Span
    message: str


@dataclass(slots=True)
class Finding:
    """One diagnostic, independent of the LSP: the engine produces these."""

    path: str
    span: Span
    code: str
    message: str
    severity: Severity
    key: str | None = None
    related: list[Related] = field(default_factory=list)
    data: dict[str, object] = field(default_factory=dict)


def make_finding(
    settings: Settings, path: str, code: str, message: str, span: Span, *,
    key: str | None = None, related: list[Related] | None = None,
    data: dict[str, object] | None = None,
) -> Finding | None:
    """A finding at the configured severity, or None when the code is turned off."""
    sev = settings.severity(code)
    if sev == "off":
        return None
    try:
        severity = Severity(sev)
    except ValueError:
        severity = Severity.WARNING
    return Finding(path, span, code, message, severity, key, related or [], data or {})
