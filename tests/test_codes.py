"""Every diagnostic code is one member of ``Code`` with one row in ``core/codes.REGISTRY``,
and docs/diagnostics.md documents exactly those codes, its table written from the registry
(what a user reads is what the server sends)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

from citelens.core.codes import NOTICE_CODES, REGISTRY, Code
from citelens.core.findings import code_name, code_url
from citelens.core.settings import DEFAULT_SEVERITY, Settings
from citelens.verify.status import Status
from citelens.workspace import problems
from tests.harness import ROOT

DOC = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
SECTIONS = re.findall(r"^## ([A-Z][A-Z_]+)$", DOC, flags=re.MULTILINE)
TABLE = dict(re.findall(r"^\| \[([A-Z_]+)\]\(#[a-z_]+\) \| (\w+)", DOC, flags=re.MULTILINE))
PACKAGE = ROOT / "server" / "citelens"


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


#: Code values that are only codes (a verdict's status shares DOI_MISMATCH, NOT_FOUND,
#: UNVERIFIED: a table keyed by status strings is not a table of codes).
_ONLY_CODES = set(Code) - set(Status)


def _code_keys(node: ast.Dict) -> list[str]:
    """The keys of a dict display that name a code (``Code.X`` or the string ``"X"``)."""
    out = []
    for k in node.keys:
        if isinstance(k, ast.Attribute) and isinstance(k.value, ast.Name) and k.value.id == "Code":
            out.append(k.attr)
        elif isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value in _ONLY_CODES:
            out.append(k.value)
    return out


def test_no_second_table_keyed_by_code() -> None:
    """A table keyed by codes outside the registry (display names in findings.py, default
    severities in settings.py, notice headlines in retraction.py and the hover) drifts from
    it: a new code must take one row, not five files."""
    tables = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "core" / "codes.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict) and len(_code_keys(node)) >= 2:
                tables.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert tables == []


def test_the_table_check_finds_a_table() -> None:
    node = ast.parse('X = {Code.RETRACTED: "a", "CORRECTION": "b"}').body[0]
    assert isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
    assert _code_keys(node.value) == ["RETRACTED", "CORRECTION"]
