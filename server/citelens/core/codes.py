"""The diagnostic codes: every code a finding can carry, one name each.

``docs/diagnostics.md`` has a section per member (a test checks both ways). A code is a
``str`` (``Code.DOI_MISMATCH == "DOI_MISMATCH"``), so settings, reports and the LSP
``Diagnostic.code`` read it as the plain text they always did.
"""

from __future__ import annotations

from enum import StrEnum


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
    # notices of a found paper
    RETRACTED = "RETRACTED"
    EXPRESSION_OF_CONCERN = "EXPRESSION_OF_CONCERN"
    CORRECTION = "CORRECTION"
    # claims
    CLAIM_CONTRADICTED = "CLAIM_CONTRADICTED"
    CLAIM_UNSUPPORTED = "CLAIM_UNSUPPORTED"
