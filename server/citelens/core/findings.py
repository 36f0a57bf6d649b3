"""Findings: what every check produces (independent of the LSP), and their codes' docs.

A :class:`Finding` is one diagnostic at a :class:`~citelens.core.model.Span` of one file;
the LSP layer converts it at the edge. :func:`make_finding` applies the configured
severity (or drops a code turned off); :func:`code_url` is the ``codeDescription`` link.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from citelens.core.codes import REGISTRY, Code, anchor
from citelens.core.model import Span
from citelens.core.settings import DEFAULT_SEVERITY, Settings
from citelens.core.severity import OFF, Severity
from citelens.core.statuses import Status

DOCS_URL = "https://github.com/citelens/citelens/blob/main/docs/diagnostics.md"


def code_url(code: str) -> str:
    """The ``codeDescription`` link of a diagnostic code (its section in docs/diagnostics.md)."""
    return f"{DOCS_URL}#{anchor(code)}"


_ACRONYMS = {
    "doi": "DOI",
    "url": "URL",
    "isbn": "ISBN",
    "issn": "ISSN",
    "pmid": "PMID",
    "arxiv": "arXiv",
    "bib": "BibTeX",
}


def code_name(code: str) -> str:
    """A code's name in prose: "DOI mismatch" for ``DOI_MISMATCH`` (acronyms kept)."""
    if code in REGISTRY:
        return REGISTRY[Code(code)].name
    words = [_ACRONYMS.get(w, w) for w in code.lower().split("_")]
    if words and words[0] == words[0].lower():
        words[0] = words[0].capitalize()
    return " ".join(words)


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
    code: Code
    message: str
    severity: Severity
    key: str | None = None
    related: list[Related] = field(default_factory=list)
    data: dict[str, object] = field(default_factory=dict)


def severity_of(
    settings: Settings,
    code: Code,
    *,
    default: Severity | None = None,
    at_most: Severity | None = None,
) -> Severity | None:
    """The severity of a finding of ``code``, decided here for every producer: the user's
    setting (None when the code is "off"), else ``default`` when a producer has its own
    for this finding (a METADATA_MISMATCH about authors is a warning), else ours; never
    above ``at_most`` (a correction notice, a book no index has)."""
    raw = settings.severity(code)
    if raw == OFF:
        return None
    configured = code in settings.diagnostic_severity or "default" in settings.diagnostic_severity
    if not configured and default is not None:
        sev = default
    else:
        try:
            sev = Severity(raw)
        except ValueError:  # a setting no severity has
            sev = Severity(DEFAULT_SEVERITY.get(code, Severity.WARNING.value))
    if at_most is not None and sev.rank > at_most.rank:
        sev = at_most
    return sev


def make_finding(
    settings: Settings,
    path: str,
    code: Code,
    message: str,
    span: Span,
    *,
    key: str | None = None,
    related: list[Related] | None = None,
    data: dict[str, object] | None = None,
    default: Severity | None = None,
    at_most: Severity | None = None,
    severity: Severity | None = None,
) -> Finding | None:
    """A finding at its severity (:func:`severity_of`; ``severity``: this one whenever the
    code is on), or None when the code is turned off."""
    sev = severity_of(settings, code, default=default, at_most=at_most)
    if sev is None:
        return None
    return Finding(path, span, code, message, severity or sev, key, related or [], data or {})


@dataclass(frozen=True, slots=True)
class FixData:
    """What a quick fix reads back from a diagnostic's ``data`` (the LSP ``Diagnostic.data``
    round trip), typed: the entry it is about, the verdict it was computed from, the
    document version, and the papers or duplicate a fix may use. Written by
    ``checks/``, read by ``fixes/rules.py``; other keys in ``data`` are for
    people and reports."""

    key: str  # the entry's cite key
    bib: str  # the .bib it is defined in
    status: Status | None = None  # the verification status the finding comes from
    version: int | None = None  # the version of its document when it was computed
    candidates: tuple[dict[str, object], ...] = ()  # papers it may be (PaperRecord JSON)
    duplicate_of: str | None = None  # DUPLICATE_ENTRY: the other entry's key ...
    duplicate_bib: str | None = None  # ... and its .bib

    @classmethod
    def from_json(cls, data: object) -> FixData | None:
        """The payload, or None when ``data`` is not one (another server's, or damaged)."""
        if not isinstance(data, dict):
            return None
        key, bib = data.get("key"), data.get("bib")
        if not isinstance(key, str) or not isinstance(bib, str):
            return None
        version = data.get("version")
        candidates = data.get("candidates")
        dup, dup_bib = data.get("duplicate_of"), data.get("duplicate_bib")
        return cls(
            key,
            bib,
            Status.named(data.get("status")),
            version if isinstance(version, int) else None,
            tuple(c for c in candidates if isinstance(c, dict)) if isinstance(candidates, list) else (),
            dup if isinstance(dup, str) else None,
            dup_bib if isinstance(dup_bib, str) else None,
        )

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"key": self.key, "bib": self.bib}
        if self.status is not None:
            out["status"] = self.status.value
        if self.version is not None:
            out["version"] = self.version
        if self.candidates:
            out["candidates"] = list(self.candidates)
        if self.duplicate_of is not None:
            out["duplicate_of"] = self.duplicate_of
            out["duplicate_bib"] = self.duplicate_bib
        return out
