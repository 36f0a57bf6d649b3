"""A writer's word: "Mark as checked" writes one comment line before an entry
(``% citelens: checked NOT_FOUND 2026-11-27 #a1b2c3``), which the editor and ``citelens
check`` both read; a project file (``.citelens.toml``) says the same; an entry whose title,
authors or DOI change after it was checked is checked again."""

from __future__ import annotations

import datetime
import json
import os
import re
from pathlib import Path
from typing import Any

import bibtexparser
from lsprotocol import types as lsp

from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.workspace.checked import fingerprint, mark_edit, marks_before
from tests.fakes.scholarly import ScholarlyFake
from tests.harness import run_citelens
from tests.lsp_session import diagnostics, open_doc, session, uri
from tests.test_lsp_verification import apply_text_edits

REAL = """@article{water,
  title = {The Structure of Ordinary Water},
  author = {Frank, Henry S.}, year = {1970}, journal = {Science},
  doi = {10.1126/science.169.3946.635},
}
"""
INVENTED = """@article{invented,
  title = {Quantum Gravitational Embeddings for Citation Graph Compression},
  author = {Nobody, Ann}, year = {2021}, journal = {Journal of Imaginary Results}
}
"""
TEX = ("\\documentclass{article}\\begin{document}\nWater \\cite{water} and \\cite{invented}.\n"
       "\\bibliography{refs}\\end{document}\n")
MARK = re.compile(r"^% citelens: checked NOT_FOUND \d{4}-\d{2}-\d{2} #[0-9a-f]{6}$")


def _paper(root: Path, bib: str, newline: str = "\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "refs.bib").write_bytes(bib.replace("\n", newline).encode("utf-8"))
    (root / "main.tex").write_text(TEX, encoding="utf-8")
    return root


def _check(fake: ScholarlyFake, folder: Path) -> tuple[int, str]:
    env = {**os.environ, **fake.env(cache=folder.parent / "cache")}
    proc = run_citelens("check", str(folder), "--fail-on", "warning", env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout


def _view(text: str, key: str) -> Any:
    entry = next(e for e in parse_bib(text).entries if e.key == key)
    return entry, entry_view(entry, {})


# ------------------------------------------------------------------------- the mark itself


def test_the_mark_is_one_line_in_the_files_line_endings_and_bibtex_keeps_it() -> None:
    for newline in ("\n", "\r\n"):
        text = (REAL + "\n" + INVENTED).replace("\n", newline)
        entry, view = _view(text, "invented")
        edit = mark_edit(text, entry, ["NOT_FOUND"], "2026-11-27", view)
        after = text[: edit.start] + edit.new + text[edit.end:]
        assert edit.start == edit.end == entry.span.start  # an insertion, before the '@' line
        assert edit.new == f"% citelens: checked NOT_FOUND 2026-11-27 #{fingerprint(view)}{newline}"
        assert after.replace(edit.new, "", 1) == text  # nothing else changed
        assert after.count("\r\n") == text.count("\r\n") + (newline == "\r\n")
        # BibTeX ignores text outside entries: our parser and bibtexparser v2 read the same
        # entries, and bibtexparser writes the comment back
        assert [e.key for e in parse_bib(after).entries] == ["water", "invented"]
        lib = bibtexparser.parse_string(after)
        assert [e.key for e in lib.entries] == ["water", "invented"]
        assert "% citelens: checked NOT_FOUND" in bibtexparser.write_string(lib)
        new_entry = next(e for e in parse_bib(after).entries if e.key == "invented")
        (mark,) = marks_before(after[: new_entry.span.start])
        assert mark.covers("NOT_FOUND", fingerprint(view)) and not mark.covers("DOI_MISMATCH", "x")
        # marking it again for every code rewrites that line, not a second one
        again = mark_edit(after, new_entry, ["ALL"], "2026-11-28", view)
        assert after[again.start:again.end] == edit.new.rstrip("\r\n")
        assert again.new == f"% citelens: checked ALL 2026-11-28 #{fingerprint(view)}"


def test_the_fingerprint_follows_title_authors_and_doi_not_layout() -> None:
    _, view = _view(INVENTED, "invented")
    _, same = _view(INVENTED.replace("title = {Quantum", "title  =  {{Q}uantum"), "invented")
    assert fingerprint(view) == fingerprint(same)
    for old, new in (("Quantum", "Classical"), ("Nobody, Ann", "Nobody, Ann and Roe, R."),
                     ("year = {2021}", "year = {2021}, doi = {10.1234/abc.2021}")):
        _, changed = _view(INVENTED.replace(old, new), "invented")
        assert fingerprint(changed) != fingerprint(view), new


# ------------------------------------------------------------------------- citelens check


def test_check_reads_the_mark_and_checks_a_changed_entry_again(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    folder = _paper(tmp_path / "p", REAL + "\n" + INVENTED)
    status, out = _check(scholarly_server, folder)
    assert status == 1 and "NOT_FOUND" in out, out
    bib = folder / "refs.bib"
    text = bib.read_text(encoding="utf-8")
    entry, view = _view(text, "invented")
    edit = mark_edit(text, entry, ["NOT_FOUND"], "2026-11-27", view)
    bib.write_text(text[: edit.start] + edit.new + text[edit.end:], encoding="utf-8")
    status, out = _check(scholarly_server, folder)
    assert status == 0 and "NOT_FOUND" not in out, out
    # a new title: the mark was for the entry as it was, so it is checked again
    bib.write_text(bib.read_text(encoding="utf-8").replace("Quantum Gravitational", "Quantum Gravity"),
                   encoding="utf-8")
    status, out = _check(scholarly_server, folder)
    assert status == 1 and "NOT_FOUND" in out, out


def test_a_project_file_marks_an_entry_for_check_too(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    folder = _paper(tmp_path / "p", REAL + "\n" + INVENTED)
    (folder / ".citelens.toml").write_text('[checked]\ninvented = ["DOI_MISMATCH"]\n', encoding="utf-8")
    assert _check(scholarly_server, folder)[0] == 1  # another code: still reported
    (folder / ".citelens.toml").write_text('[checked]\ninvented = ["NOT_FOUND"]\n', encoding="utf-8")
    status, out = _check(scholarly_server, folder)
    assert status == 0 and "NOT_FOUND" not in out, out
    (folder / ".citelens.toml").unlink()
    (folder / "pyproject.toml").write_text('[tool.citelens.checked]\ninvented = ["ALL"]\n', encoding="utf-8")
    assert _check(scholarly_server, folder)[0] == 0


# ------------------------------------------------------------------------- the editor


def _not_found(ds: Any, key: str = "invented") -> list[lsp.Diagnostic]:
    return [d for d in ds if d.code == "NOT_FOUND" and isinstance(d.data, dict) and d.data.get("key") == key]


async def test_mark_as_checked_in_the_editor_hides_the_finding_until_the_entry_changes(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    folder = _paper(tmp_path / "p", REAL + "\n" + INVENTED, newline="\r\n")
    bib = folder / "refs.bib"
    text = bib.read_bytes().decode("utf-8")
    settings = {"verificationEnabled": True, "verifyDebounceMs": 30, "s2RequestsPerSecond": 200,
                "requestTimeoutS": 2.0, "retryBackoffS": 0.01, "maxRetries": 1}
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("neovim", folder, env=env, settings=settings) as client:
        u = open_doc(client, bib, text)
        u_tex = open_doc(client, folder / "main.tex")
        ds = await diagnostics(client, u, lambda ds: bool(_not_found(ds)), timeout=60)
        await diagnostics(client, u_tex, lambda ds: bool(_not_found(ds)), timeout=30)
        (d,) = _not_found(ds)
        got = await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(u), range=d.range,
            context=lsp.CodeActionContext(diagnostics=[d])))
        actions = {a.title: a for a in got or [] if isinstance(a, lsp.CodeAction)}
        assert "Mark as checked (all codes)" in actions, list(actions)
        mark = actions["Mark as checked (NOT_FOUND)"]
        assert mark.edit is not None and mark.edit.changes is not None
        (edit,) = mark.edit.changes[u]  # one edit: one new line, before the entry
        line = text[: text.index("@article{invented")].count("\n")
        assert edit.range.start == edit.range.end == lsp.Position(line, 0)
        today = datetime.datetime.now(datetime.UTC).date().isoformat()
        assert edit.new_text.endswith("\r\n") and MARK.match(edit.new_text.rstrip("\r\n"))
        assert today in edit.new_text
        marked = apply_text_edits(text, [edit])
        assert marked.replace(edit.new_text, "", 1) == text

        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=2, uri=u),
            [lsp.TextDocumentContentChangeWholeDocument(text=marked)]))
        await diagnostics(client, u, lambda ds: not _not_found(ds), timeout=30)
        await diagnostics(client, u_tex, lambda ds: not _not_found(ds), timeout=30)  # its citation too

        retitled = marked.replace("Quantum Gravitational", "Quantum Gravity")
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=3, uri=u),
            [lsp.TextDocumentContentChangeWholeDocument(text=retitled)]))
        await diagnostics(client, u, lambda ds: bool(_not_found(ds)), timeout=60)
    assert uri(bib) == u


def test_a_venue_check_does_not_take_the_authors_word(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    """An author's "% citelens: checked ALL" must not hide an invented reference from a
    programme chair's venue check."""
    paper = _paper(tmp_path / "venue" / "paper-a", REAL + "\n% citelens: checked ALL 2026-11-27\n" + INVENTED)
    assert _check(scholarly_server, paper)[0] == 0  # the author's own check takes it
    out = tmp_path / "out"
    env = {**os.environ, **scholarly_server.env(cache=tmp_path / "cache")}
    proc = run_citelens("check", str(paper.parent), "--venue", str(out), env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    report = json.loads((out / "papers" / "paper-a.json").read_text(encoding="utf-8"))
    assert any(d["code"] == "NOT_FOUND" and d["key"] == "invented" for d in report["diagnostics"]), report
    lines = [json.loads(x) for x in (out / "summary.jsonl").read_text(encoding="utf-8").splitlines()]
    (line,) = [x for x in lines if x.get("paper") == "paper-a"]
    assert line["likely_fabricated"] == 1, line
