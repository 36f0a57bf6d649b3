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
import pytest
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


# ------------------------------------------------------------------------- two papers, one key

SMITH_A = """% citelens: checked ALL 2026-11-27
@article{smith2020,
  title = {Ballistic Transport in Imaginary Graphene Ribbons},
  author = {Smith, Ann}, year = {2020}, journal = {Journal of Imaginary Results}
}
"""
SMITH_B = """@article{smith2020,
  title = {Neural Citation Oracles for Unwritten Papers},
  author = {Smith, Bob}, year = {2020}, journal = {Annals of Made-up Science}
}
"""
SMITH_TEX = ("\\documentclass{article}\\begin{document}\nSee \\cite{smith2020}.\n"
             "\\bibliography{refs}\\end{document}\n")


def _two_papers(root: Path) -> tuple[Path, Path]:
    out = []
    for name, bib in (("paper-a", SMITH_A), ("paper-b", SMITH_B)):
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "refs.bib").write_text(bib, encoding="utf-8")
        (folder / "main.tex").write_text(SMITH_TEX, encoding="utf-8")
        out.append(folder)
    return out[0], out[1]


def test_a_mark_on_one_papers_entry_never_hides_another_papers_entry_of_that_key(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    """Paper A marks its ``smith2020`` as checked; paper B's ``smith2020`` is another
    (invented) reference. Checked in one run, B's NOT_FOUND is reported and A's is not.
    Before, A's mark hid B's finding: marks were looked up by key name, in the first
    project that had the key (issue 41 #5)."""
    a, b = _two_papers(tmp_path / "work")
    env = {**os.environ, **scholarly_server.env(cache=tmp_path / "cache")}
    proc = run_citelens("check", str(a), str(b), "--format", "json", "-q", env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    found = {(Path(d["file"]).parent.name, d["key"]) for d in json.loads(proc.stdout)["diagnostics"]
             if d["code"] == "NOT_FOUND"}
    assert found == {("paper-b", "smith2020")}, proc.stdout
    # the other order, and the two papers' folder at once
    for args in ((str(b), str(a)), (str(a.parent),)):
        proc = run_citelens("check", *args, "--format", "json", "-q", env=env)
        found = {(Path(d["file"]).parent.name, d["key"]) for d in json.loads(proc.stdout)["diagnostics"]
                 if d["code"] == "NOT_FOUND"}
        assert found == {("paper-b", "smith2020")}, (args, proc.stdout)


async def test_in_the_editor_a_mark_on_one_papers_entry_never_hides_another_papers(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    """The same in the editor once paper A is open: paper B's ``smith2020`` keeps its
    NOT_FOUND, in its .bib and at its citation."""
    a, b = _two_papers(tmp_path / "work")
    settings = {"verificationEnabled": True, "verifyDebounceMs": 30, "s2RequestsPerSecond": 200,
                "requestTimeoutS": 2.0, "retryBackoffS": 0.01, "maxRetries": 1}
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("neovim", a.parent, env=env, settings=settings) as client:
        open_doc(client, a / "refs.bib")
        open_doc(client, a / "main.tex")
        u_b = open_doc(client, b / "refs.bib")
        u_btex = open_doc(client, b / "main.tex")
        await diagnostics(client, u_b, lambda ds: bool(_not_found(ds, "smith2020")), timeout=60)
        await diagnostics(client, u_btex, lambda ds: bool(_not_found(ds, "smith2020")), timeout=30)


# ------------------------------------------------------------------------- hostile project files


def _hostile(kind: str, paper: Path) -> None:
    if kind == "nested":
        (paper / ".citelens.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n",
                                              encoding="utf-8")
    elif kind == "tool-not-a-table":
        (paper.parent / "pyproject.toml").write_text(
            'tool = "x"\n# [tool.citelens.checked] is in a comment\n', encoding="utf-8")
    elif kind == "citelens-not-a-table":
        (paper / "pyproject.toml").write_text('[tool]\ncitelens = 3\n', encoding="utf-8")
    elif kind == "checked-not-a-table":
        (paper / ".citelens.toml").write_text('checked = "invented"\n', encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(paper / ".citelens.toml")
    elif kind == "huge":
        (paper / ".citelens.toml").write_text("# " + "x" * (2 << 20) + "\n", encoding="utf-8")


HOSTILE = ["nested", "tool-not-a-table", "citelens-not-a-table", "checked-not-a-table", "fifo", "huge"]
#: the one line each says (no line for a pyproject.toml that holds nothing of ours)
SAID = {"nested": ".citelens.toml: not read: nested too deep",
        "fifo": ".citelens.toml: not read: not a regular file",
        "huge": ".citelens.toml: not read: larger than 1 MB"}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_project_file_is_one_line_and_the_check_goes_on(
        scholarly_server: ScholarlyFake, tmp_path: Path, kind: str) -> None:
    """A ``.citelens.toml`` nested 100,000 deep, a ``pyproject.toml`` above the paper with
    ``tool = "x"`` and ``[tool.citelens`` in a comment, tables of the wrong type, a FIFO, a
    file over 1 MB: ``citelens check`` reports the paper's findings, says why the file was
    not read in one line, and never shows a traceback. Before, it died with a traceback and
    exit 1 (issue 41 #6)."""
    folder = _paper(tmp_path / "work" / "p", REAL + "\n" + INVENTED)
    _hostile(kind, folder)
    env = {**os.environ, **scholarly_server.env(cache=tmp_path / "cache")}
    proc = run_citelens("check", str(folder), "--fail-on", "warning", env=env, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1 and "NOT_FOUND" in proc.stdout, proc.stdout + proc.stderr
    if kind in SAID:
        lines = [ln for ln in proc.stderr.splitlines() if "not read" in ln]
        assert len(lines) == 1 and SAID[kind] in lines[0], proc.stderr


@pytest.mark.parametrize("kind", ["nested", "tool-not-a-table"])
async def test_a_hostile_project_file_does_not_silence_the_editor(
        scholarly_server: ScholarlyFake, tmp_path: Path, kind: str) -> None:
    """The same files in the editor: the verification findings are published. Before, the
    server published none, silently."""
    folder = _paper(tmp_path / "work" / "p", REAL + "\n" + INVENTED)
    _hostile(kind, folder)
    settings = {"verificationEnabled": True, "verifyDebounceMs": 30, "s2RequestsPerSecond": 200,
                "requestTimeoutS": 2.0, "retryBackoffS": 0.01, "maxRetries": 1}
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("neovim", folder, env=env, settings=settings) as client:
        u = open_doc(client, folder / "refs.bib")
        await diagnostics(client, u, lambda ds: bool(_not_found(ds)), timeout=60)
