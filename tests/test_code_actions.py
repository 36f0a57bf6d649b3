"""Quick fixes computed in-process from diagnostics and the store (no client, no network)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from lsprotocol import types as lsp

from citelens.core.findings import Severity
from citelens.lsp.actions import code_actions
from citelens.lsp.state import CiteLensServer
from citelens.sources.records import PaperRecord
from citelens.verify.match.discrepancy import Discrepancy
from citelens.verify.status import Status, Verification
from tests.lsp_session import uri

BIB = """@inproceedings{eyal,
  title = {Majority is not enough: Bitcoin mining is vulnerable},
  author = {Eyal, Ittay and Sirer, Emin G{\\"u}n},
  year = {2014},
  doi = {10.1109/mcse.2007.55},
}
"""
WRONG = PaperRecord("s2", "Matplotlib: A 2D graphics environment", ["J. D. Hunter"], 2007,
                    doi="10.1109/mcse.2007.55")
RIGHT = PaperRecord("openalex", "Majority Is Not Enough: Bitcoin Mining Is Vulnerable",
                    ["Ittay Eyal", "Emin Gün Sirer"], 2014,
                    "Financial Cryptography and Data Security",
                    doi="10.1007/978-3-662-45472-5_28", publication_types=["Conference"])


def _server(tmp_path: Path) -> tuple[CiteLensServer, str, lsp.Diagnostic]:
    ls = CiteLensServer()
    path = str(tmp_path / "refs.bib")
    Path(path).write_text(BIB, encoding="utf-8")
    session = ls.session
    session.store.open(path, BIB, 3)
    session.projects.analyse(path)
    entry = session.store.bib(path).entries[0]  # type: ignore[union-attr]
    v = Verification("eyal", Status.DOI_MISMATCH, "wrong DOI", match=WRONG,
                     discrepancies=[Discrepancy("doi", "identifier", Severity.ERROR, "doi: ...")],
                     candidates=[RIGHT])
    h = session.projects.entry_hash(entry, session.analysis_for(path))
    assert h
    session.verdicts.keep(h, v)
    f = entry.fields["doi"].value_span
    index = session.store.line_index(path)
    assert index is not None
    s, e = index.range(f)
    diag = lsp.Diagnostic(
        range=lsp.Range(lsp.Position(s.line, s.character), lsp.Position(e.line, e.character)),
        message="wrong DOI", code="DOI_MISMATCH", source="citelens",
        data={"key": "eyal", "bib": path, "status": v.status.value, "version": 3,
              "match": WRONG.to_json(), "candidates": [RIGHT.to_json()], "field": "doi"})
    return ls, path, diag


def _data(d: lsp.Diagnostic) -> dict[str, object]:
    assert isinstance(d.data, dict)
    return dict(d.data)


def _ask(ls: CiteLensServer, path: str, d: lsp.Diagnostic,
         only: list[lsp.CodeActionKind] | None = None) -> list[lsp.CodeAction]:
    return code_actions(ls, lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri(path)), d.range,
        lsp.CodeActionContext(diagnostics=[d], only=only)))


def test_fix_doi_and_replace_are_offered_for_the_right_paper(tmp_path: Path) -> None:
    ls, path, d = _server(tmp_path)
    actions = _ask(ls, path, d)
    titles = [a.title for a in actions]
    assert titles == ["Fix DOI: 10.1007/978-3-662-45472-5_28",
                      "Replace entry with OpenAlex metadata",
                      "Mark as checked (DOI_MISMATCH)", "Mark as checked (all codes)"]
    assert all(a.kind == lsp.CodeActionKind.QuickFix for a in actions)
    fix = actions[0]
    assert fix.is_preferred and fix.edit is not None and fix.edit.changes
    (edit,) = fix.edit.changes[uri(path)]
    # the DOI's value only: the rest of the entry is not in the edit
    assert edit.new_text == "{10.1007/978-3-662-45472-5_28}"
    line = BIB.splitlines()[edit.range.start.line]
    assert line[edit.range.start.character:edit.range.end.character] == "{10.1109/mcse.2007.55}"


def test_no_fix_for_a_stale_diagnostic_or_another_kind(tmp_path: Path) -> None:
    ls, path, d = _server(tmp_path)
    assert _ask(ls, path, d, only=[lsp.CodeActionKind.Refactor]) == []
    stale = lsp.Diagnostic(range=d.range, message=d.message, code=d.code, source=d.source,
                           data={**_data(d), "version": 2})
    assert _ask(ls, path, stale) == []


def test_no_fix_once_the_entry_changed(tmp_path: Path) -> None:
    ls, path, d = _server(tmp_path)
    # the entry changed since it was verified: its verification is gone, so is the fix
    ls.session.store.open(path, BIB.replace("2014", "2015"), 4)
    ls.session.projects.analyse(path)
    newer = lsp.Diagnostic(range=d.range, message=d.message, code=d.code, source=d.source,
                           data={**_data(d), "version": 4})
    assert _ask(ls, path, newer) == []


def test_remove_doi_when_the_right_paper_has_none(tmp_path: Path) -> None:
    ls, path, d = _server(tmp_path)
    no_doi = PaperRecord.from_json({**RIGHT.to_json(), "doi": None})
    verdicts = ls.session.verdicts
    for h, v in list(verdicts.items()):
        verdicts.keep(h, dataclasses.replace(v, candidates=[no_doi]))
    titles = [a.title for a in _ask(ls, path, d)]
    assert titles[0] == "Remove DOI"
