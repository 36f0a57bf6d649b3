"""Every diagnostic code is one member of ``Code``, and docs/diagnostics.md documents exactly
those codes, at their default severities (what a user reads is what the server sends)."""

from __future__ import annotations

import re

from citelens.core.codes import Code
from citelens.core.findings import CODE_NAMES, code_url
from citelens.core.settings import DEFAULT_SEVERITY
from tests.harness import ROOT

DOC = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
SECTIONS = re.findall(r"^## ([A-Z][A-Z_]+)$", DOC, flags=re.MULTILINE)
TABLE = dict(re.findall(r"^\| \[([A-Z_]+)\]\(#[a-z_]+\) \| (\w+)", DOC, flags=re.MULTILINE))


def test_every_code_has_a_section_and_every_section_is_a_code() -> None:
    assert sorted(SECTIONS) == sorted(Code), "docs/diagnostics.md sections differ from Code"
    assert len(SECTIONS) == len(set(SECTIONS))


def test_the_code_table_lists_every_code_at_its_default_severity() -> None:
    assert set(TABLE) == set(Code)
    assert {c: DEFAULT_SEVERITY[c] for c in Code} == TABLE


def test_every_code_has_a_default_severity_a_name_and_a_docs_anchor() -> None:
    assert set(DEFAULT_SEVERITY) == set(Code)
    assert set(CODE_NAMES) == set(Code)
    for c in Code:
        anchor = code_url(c).rsplit("#", 1)[1]
        assert f"]({'#' + anchor})" in DOC, c
