"""The diagnostic codes: every code a finding can carry, one registry row each.

:class:`Code` names the codes; :data:`REGISTRY` is the one table keyed by them (ruff's
``codes.rs``): each code's name in prose, its default severity, whether its findings at
citations join the finding on the entry, whether its findings form one problem per set
of places, its notice wording (retractions and their kin) and its documentation anchor.
Everything else that depends on a code (the settings' default severities, the SARIF rule
names, the report's grouping, the docs' code table) is derived from this table;
``tests/test_codes.py`` fails when a second table keyed by ``Code`` appears.

A code is a ``str`` (``Code.DOI_MISMATCH == "DOI_MISMATCH"``), so settings, reports and
the LSP ``Diagnostic.code`` read it as the plain text they always did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from citelens.core.severity import Severity
from citelens.core.statuses import Status


class Code(StrEnum):
    # local checks (no network)
    UNDEFINED_CITATION = "UNDEFINED_CITATION"
    DUPLICATE_KEY = "DUPLICATE_KEY"
    BIB_SYNTAX = "BIB_SYNTAX"
    MISSING_BIBLIOGRAPHY = "MISSING_BIBLIOGRAPHY"
    UNUSED_ENTRY = "UNUSED_ENTRY"
    PDF_NOT_READ = "PDF_NOT_READ"
    # verification
    DOI_MISMATCH = "DOI_MISMATCH"
    NOT_FOUND = "NOT_FOUND"
    DUPLICATE_ENTRY = "DUPLICATE_ENTRY"
    METADATA_MISMATCH = "METADATA_MISMATCH"
    UNVERIFIED = "UNVERIFIED"
    REFERENCE_NOT_READ = "REFERENCE_NOT_READ"
    # notices of a found paper
    RETRACTED = "RETRACTED"
    EXPRESSION_OF_CONCERN = "EXPRESSION_OF_CONCERN"
    CORRECTION = "CORRECTION"
    # claims
    CLAIM_CONTRADICTED = "CLAIM_CONTRADICTED"
    CLAIM_UNSUPPORTED = "CLAIM_UNSUPPORTED"


@dataclass(frozen=True, slots=True)
class Notice:
    """How a notice code (a retraction and its kin) is worded: the headline of its
    message and hover line, the hover's mark, what it means for the citing author (the
    message's tail), and the title of the action that opens the notice."""

    headline: str
    mark: str
    consequence: str
    action: str


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """One code's row: everything about a code that does not depend on a finding."""

    name: str  # in prose: SARIF rule names, docs headings (acronyms kept)
    severity: Severity  # the default severity (``diagnosticSeverity`` overrides it)
    where: str  # where the editor shows it (the docs' code table)
    severity_note: str = ""  # what the docs' table adds to the default severity
    joins_entry: bool = False  # a finding at a citation repeats the entry's and joins it
    one_per_set: bool = False  # the findings of one set of places are one problem
    notice: Notice | None = None  # a notice of a found paper (most serious first)
    #: a verdict's code: the status of the verdicts whose findings carry it (the verdict
    #: names its code: ``verify/verdict.decide``); quick fixes read the status back from it
    verdict: Status | None = None


_CITED = ", and at every citation"

#: The one table keyed by :class:`Code`: one row per code, in the order of ``Code``.
REGISTRY: Mapping[Code, CodeInfo] = MappingProxyType(
    {
        Code.UNDEFINED_CITATION: CodeInfo(
            "Undefined citation", Severity.ERROR, "at the key in the `.tex`/`.md` file"
        ),
        Code.DUPLICATE_KEY: CodeInfo(
            "Duplicate key", Severity.ERROR, "on every definition of the key", one_per_set=True
        ),
        Code.BIB_SYNTAX: CodeInfo("BibTeX syntax error", Severity.ERROR, "where the `.bib` cannot be read"),
        Code.MISSING_BIBLIOGRAPHY: CodeInfo(
            "Missing bibliography", Severity.WARNING, "at `\\bibliography{…}` / `bibliography:`"
        ),
        Code.UNUSED_ENTRY: CodeInfo(
            "Unused entry",
            Severity.HINT,
            "on the entry key",
            severity_note=", off unless `reportUnusedEntries`",
        ),
        Code.PDF_NOT_READ: CodeInfo(
            "PDF not read",
            Severity.ERROR,
            "on the PDF (`citelens check paper.pdf`, a venue paper that is only a PDF)",
        ),
        Code.DOI_MISMATCH: CodeInfo(
            "DOI mismatch",
            Severity.ERROR,
            "on the `doi` (or `eprint`, `pmid`) field" + _CITED,
            joins_entry=True,
            verdict=Status.DOI_MISMATCH,
        ),
        Code.NOT_FOUND: CodeInfo(
            "Not found",
            Severity.WARNING,
            "on the entry key" + _CITED,
            severity_note=" (information for books, theses, software…)",
            joins_entry=True,
            verdict=Status.NOT_FOUND,
        ),
        Code.DUPLICATE_ENTRY: CodeInfo(
            "Duplicate entry", Severity.WARNING, "on both entries", one_per_set=True
        ),
        Code.METADATA_MISMATCH: CodeInfo(
            "Metadata mismatch",
            Severity.INFORMATION,
            "on the wrong field" + _CITED,
            severity_note=", or warning for wrong authors/venue/year",
            joins_entry=True,
            verdict=Status.PARTIAL,
        ),
        Code.UNVERIFIED: CodeInfo("Unverified", Severity.HINT, "on the entry key", verdict=Status.UNVERIFIED),
        Code.REFERENCE_NOT_READ: CodeInfo(
            "Reference not read",
            Severity.INFORMATION,
            "on a PDF's printed reference, with its printed text",
            verdict=Status.UNVERIFIED,
        ),
        Code.RETRACTED: CodeInfo(
            "Retracted",
            Severity.ERROR,
            "on the entry key" + _CITED,
            joins_entry=True,
            notice=Notice("Retracted", "⛔", "; do not cite it as valid work", "Open the retraction notice"),
        ),
        Code.EXPRESSION_OF_CONCERN: CodeInfo(
            "Expression of concern",
            Severity.WARNING,
            "on the entry key" + _CITED,
            joins_entry=True,
            notice=Notice(
                "Expression of concern",
                "⚠️",
                "; the publisher doubts its reliability",
                "Open the expression of concern",
            ),
        ),
        Code.CORRECTION: CodeInfo(
            "Correction",
            Severity.INFORMATION,
            "on the entry key",
            severity_note=" (never above it)",
            notice=Notice("Corrected", "ℹ️", "; the paper stands", "Open the correction notice"),
        ),
        Code.CLAIM_CONTRADICTED: CodeInfo(
            "Claim contradicted",
            Severity.WARNING,
            "at the citation",
            severity_note=" (claim diagnostics are off by default)",
        ),
        Code.CLAIM_UNSUPPORTED: CodeInfo("Claim unsupported", Severity.INFORMATION, "at the citation"),
    }
)

#: The notice codes, most serious first (a paper's worst notice decides its diagnostic).
NOTICE_CODES: tuple[Code, ...] = tuple(c for c, info in REGISTRY.items() if info.notice is not None)
#: The codes a verdict names for its findings (an entry's class counts where one is shown).
VERDICT_CODES: frozenset[Code] = frozenset(c for c, info in REGISTRY.items() if info.verdict is not None)
#: The code a verdict names by its status, unless its rules name another of its status's
#: (``verify/verdict.decide``: REFERENCE_NOT_READ for a reference the PDF reader could not read).
CODE_OF_STATUS: Mapping[Status, Code] = MappingProxyType(
    {
        Status.DOI_MISMATCH: Code.DOI_MISMATCH,
        Status.NOT_FOUND: Code.NOT_FOUND,
        Status.PARTIAL: Code.METADATA_MISMATCH,
        Status.UNVERIFIED: Code.UNVERIFIED,
    }
)


def anchor(code: str) -> str:
    """The code's section in docs/diagnostics.md (``doi_mismatch``)."""
    return code.lower()


def info(code: Code) -> CodeInfo:
    """The registry row of ``code``."""
    return REGISTRY[code]


def status_of(code: Code) -> Status | None:
    """The status of the verdicts whose findings carry ``code`` (None: not a verdict's code)."""
    return REGISTRY[code].verdict


def notice_of(code: Code) -> Notice:
    """The notice wording of a notice code (:data:`NOTICE_CODES`)."""
    notice = REGISTRY[code].notice
    if notice is None:
        raise ValueError(f"{code} is not a notice code")
    return notice
