"""Every diagnostic code is one member of ``Code`` with one row in ``core/codes.REGISTRY``,
and docs/diagnostics.md documents exactly those codes, its table written from the registry
(what a user reads is what the server sends)."""

from __future__ import annotations

import re
import subprocess
import sys

from citelens.core.codes import NOTICE_CODES, REGISTRY, Code
from citelens.core.findings import code_name, code_url
from citelens.core.settings import DEFAULT_SEVERITY, Settings
from citelens.workspace import problems
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


def test_the_code_table_is_what_the_registry_writes() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_codes_doc.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_every_code_has_one_registry_row_with_a_name_a_severity_and_a_docs_anchor() -> None:
    assert list(REGISTRY) == list(Code)
    for c in Code:
        assert code_name(c) == REGISTRY[c].name
        assert Settings().severity(c) == REGISTRY[c].severity
        anchor = code_url(c).rsplit("#", 1)[1]
        assert f"]({'#' + anchor})" in DOC, c


def test_what_depends_on_a_code_is_read_from_its_row() -> None:
    """Which codes join their entry in a report, which form one problem per set, and which
    are notices (most serious first) come from the registry."""
    assert problems._ALSO_AT_CITATIONS == {c for c, r in REGISTRY.items() if r.joins_entry}
    assert Code.CORRECTION not in problems._ALSO_AT_CITATIONS  # a correction stays on the entry
    assert problems._SETS == {Code.DUPLICATE_ENTRY, Code.DUPLICATE_KEY}
    assert NOTICE_CODES == (Code.RETRACTED, Code.EXPRESSION_OF_CONCERN, Code.CORRECTION)
