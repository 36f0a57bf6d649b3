"""``citelens check --fix / --unsafe-fixes / --diff`` as a user runs them, against the fake
APIs: the file's own style (CRLF, quotes, tabs, ``Title``-case names, bare years, its field
order), a Latin-1 .bib written back in Latin-1, a DOI in the registry's case, a merge in a
folder with no project root marker; and the editor's code action making the same edit as
the command line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from citelens.core.codes import Code
from citelens.fixes.context import SessionContext
from citelens.fixes.rules import fixes_for
from citelens.lsp.actions import code_actions
from citelens.lsp.convert import to_diagnostic
from citelens.lsp.state import CiteLensServer
from citelens.sources.records import PaperRecord
from citelens.verify.identity import content_hash
from citelens.verify.status import Status, Verification
from citelens.workspace.check import run_check
from tests.fakes.scholarly import ScholarlyFake
from tests.harness import run_citelens
from tests.lsp_session import uri
from tests.test_lsp_verification import apply_text_edits

MAKRIS_TITLE = (
    "Developing functional musculoskeletal tissues through hypoxia and lysyl oxidase-induced collagen "
    "cross-linking"
)
#: A paper whose registry writes its DOI in mixed case (made up for this test).
LATTICE = {
    "title": "Lattice gas flows past a cylinder in two dimensions",
    "authors": ["Daniel H. Rothman", "Stephane Zaleski"],
    "year": 1994,
    "venue": "Physical Review E",
    "doi": "10.1103/PhysRevE.49.4145",
    "pages": "4145-4155",
    "volume": "49",
    "type": "journal-article",
    "arxiv": "comp-gas/9402001",
}
CRLF_BIB = (
    "% my library\r\n"
    "\r\n"
    "@Article{makris2014,\r\n"
    f'\tTitle = "{MAKRIS_TITLE}",\r\n'
    '\tAuthor = "Makris, Eleftherios and Responte, D. and Paschos, N. and Hu, Jerry C.",\r\n'
    '\tJournal = "Proceedings of the National Academy of Sciences",\r\n'
    "\tYear = 2011,\r\n"
    '\tDoi = "10.1073/pnas.1414271111",\r\n'
    '\tNote = "read twice"\r\n'
    "}\r\n"
    "\r\n"
    "@Article{rothman1994,\r\n"
    f'\tTitle = "{LATTICE["title"]}",\r\n'
    '\tAuthor = "Rothman, Daniel H. and Zaleski, Stephane",\r\n'
    '\tJournal = "Physical Review E",\r\n'
    "\tYear = 1994,\r\n"
    '\tPages = "4145--4155",\r\n'
    '\tEprint = "comp-gas/9402001",\r\n'
    '\tNote = "see fig. 2"\r\n'
    "}\r\n"
)
#: What --fix writes: the year its finding names, nothing else (a fix answers a finding).
CRLF_FIXED = CRLF_BIB.replace("\tYear = 2011,\r\n", "\tYear = 2014,\r\n")
#: What --fix --add-missing writes: also the pages where the file puts them (after the year,
#: before the DOI), the DOI in the registry's case before the note; every other byte as it was.
CRLF_FILLED = CRLF_FIXED.replace(
    "\tYear = 2014,\r\n", '\tYear = 2014,\r\n\tPages = "E4832--E4841",\r\n'
).replace('\tPages = "4145--4155",\r\n', '\tPages = "4145--4155",\r\n\tDoi = "10.1103/PhysRevE.49.4145",\r\n')
TEX = (
    "\\documentclass{article}\n\\begin{document}\n\\cite{makris2014} \\cite{rothman1994}\n"
    "\\bibliography{refs}\n\\end{document}\n"
)


def _project(tmp_path: Path, bib: bytes, name: str = "paper") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "refs.bib").write_bytes(bib)
    (folder / "paper.tex").write_text(TEX, encoding="utf-8")
    return folder


def _env(fake: ScholarlyFake, tmp_path: Path) -> dict[str, str]:
    fake.add_paper(LATTICE)
    return {**fake.env(cache=tmp_path / "cache"), "CITELENS_S2_REQUESTS_PER_SECOND": "100"}


def _check(folder: Path, env: dict[str, str], *args: str) -> Any:
    return run_citelens("check", str(folder), "-q", "--fail-on", "warning", *args, env=env, timeout=120)


def test_fix_writes_the_safe_fixes_in_the_files_own_style(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    env = _env(scholarly_server, tmp_path)
    folder = _project(tmp_path, CRLF_BIB.encode("utf-8"))
    assert _check(folder, env).returncode == 1  # a year two off is a warning
    proc = _check(folder, env, "--fix")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the findings left after fixing: none
    assert (folder / "refs.bib").read_bytes() == CRLF_FIXED.encode("utf-8")
    # filled in when asked, in the file's own style
    filled = _check(folder, env, "--fix", "--add-missing")
    assert filled.returncode == 0, filled.stdout + filled.stderr
    assert (folder / "refs.bib").read_bytes() == CRLF_FILLED.encode("utf-8")
    assert b"\n" not in CRLF_FILLED.encode().replace(b"\r\n", b"")  # no bare LF was written
    # a second run has nothing left to fix
    again = _check(folder, env, "--fix", "--add-missing")
    assert again.returncode == 0 and (folder / "refs.bib").read_bytes() == CRLF_FILLED.encode("utf-8")


def test_diff_prints_the_same_edits_and_writes_nothing(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    env = _env(scholarly_server, tmp_path)
    folder = _project(tmp_path, CRLF_BIB.encode("utf-8"))
    proc = _check(folder, env, "--fix", "--add-missing", "--diff")
    assert (folder / "refs.bib").read_bytes() == CRLF_BIB.encode("utf-8")  # untouched
    assert proc.returncode == 0  # the status of the fixed text
    added = [ln for ln in proc.stdout.split("\n") if ln.startswith("+") and not ln.startswith("+++")]
    removed = [ln for ln in proc.stdout.split("\n") if ln.startswith("-") and not ln.startswith("---")]
    # (the captured output reads CRLF as LF: the bytes are checked by the --fix test)
    assert added == ["+\tYear = 2014,", '+\tPages = "E4832--E4841",', '+\tDoi = "10.1103/PhysRevE.49.4145",']
    assert removed == ["-\tYear = 2011,"]
    assert proc.stdout.startswith("--- a/") and "+++ b/" in proc.stdout


def test_a_latin1_bib_stays_latin1(scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    env = _env(scholarly_server, tmp_path)
    text = CRLF_BIB.replace('"read twice"', '"relu en f\u00e9vrier"').replace(
        '"see fig. 2"', '"\u00e0 revoir"'
    )
    folder = _project(tmp_path, text.encode("latin-1"))
    proc = _check(folder, env, "--fix")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected = CRLF_FIXED.replace('"read twice"', '"relu en f\u00e9vrier"').replace(
        '"see fig. 2"', '"\u00e0 revoir"'
    )
    assert (folder / "refs.bib").read_bytes() == expected.encode("latin-1")


def test_unsafe_fixes_merge_duplicates_in_a_folder_without_a_root_marker(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    env = _env(scholarly_server, tmp_path)
    dup = (
        "@article{makrisB,\n"
        f"  title = {{{MAKRIS_TITLE}}},\n"
        "  doi = {10.1073/pnas.1414271111},\n"
        "  keywords = {hypoxia},\n"
        "}\n"
    )
    bib = CRLF_BIB.replace("\r\n", "\n").replace("\tYear = 2011", "\tYear = 2014") + "\n" + dup
    folder = _project(tmp_path, bib.encode("utf-8"))
    tex = folder / "paper.tex"
    tex.write_text(TEX.replace("\\cite{rothman1994}", "\\cite{rothman1994,makrisB}"), encoding="utf-8")
    assert not (tmp_path / ".git").exists() and not (folder / ".git").exists()
    safe = _check(folder, env, "--fix")
    assert "makrisB" in (folder / "refs.bib").read_text(encoding="utf-8")  # a merge is unsafe
    assert "--unsafe-fixes" in safe.stderr or "unsafe" in (safe.stderr + safe.stdout)
    proc = run_citelens(
        "check", str(folder), "--fix", "--unsafe-fixes", "--fail-on", "warning", env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = (folder / "refs.bib").read_text(encoding="utf-8")
    assert after.count("@") == 2 and "makrisB" not in after
    assert '\tKeywords = "hypoxia"' in after  # the dropped entry's own field, in the file's style
    assert tex.read_text(encoding="utf-8").count("makris2014") == 2  # \cite{rothman1994,makris2014}
    local = run_citelens("check", str(folder), "--no-verify", "-q", "--format", "json", env=env)
    assert "UNDEFINED_CITATION" not in local.stdout


def test_the_editor_merge_renames_citations_in_documents_not_open(tmp_path: Path) -> None:
    """A folder with no .git or latexmkrc and only refs.bib open: the merge still finds
    paper.tex and leaves no undefined citation there."""
    folder = tmp_path / "paper"
    folder.mkdir()
    bib = folder / "refs.bib"
    text = (
        "@article{ghosh2022dips,\n  title = {Dips in the light curve},\n  doi = {10.1000/dips.1},\n}\n\n"
        "@article{ghosh2022,\n  title = {Dips in the light curve},\n  doi = {10.1000/dips.1},\n"
        "  year = {2022},\n}\n"
    )
    bib.write_text(text, encoding="utf-8")
    tex = folder / "paper.tex"
    tex.write_text(
        TEX.replace("\\cite{makris2014} \\cite{rothman1994}", "\\cite{ghosh2022dips}"), encoding="utf-8"
    )
    ls = CiteLensServer()  # no workspace folder: the client found no root marker
    session = ls.session
    session.store.open(str(bib), text, 1)
    analysis = session.projects.analyse(str(bib))
    paper = PaperRecord(
        "crossref", "Dips in the light curve", ["Anirban Ghosh"], 2022, "ApJ", doi="10.1000/dips.1"
    )
    for key in ("ghosh2022dips", "ghosh2022"):
        view = session.entry_view(analysis.definitions[key][0], analysis)
        assert view is not None
        session.verdicts.keep(content_hash(view), Verification(key, Status.VERIFIED, "verified", match=paper))
    dup = next(f for f in session.findings() if f.code is Code.DUPLICATE_ENTRY and f.key == "ghosh2022dips")
    data = {**dup.data, "version": 1}  # as the editor publishes it: the document's version
    fixes = fixes_for(SessionContext(session), dup.path, dup.code, data)
    merge = next(f for f in fixes if f.title == "Merge duplicate into ghosh2022")
    assert {e.path for e in merge.edits} == {str(bib), str(tex)}
    renamed = next(e for e in merge.edits if e.path == str(tex))
    assert renamed.new == "ghosh2022"


def test_the_code_action_makes_the_same_edit_as_the_command_line(
    scholarly_server: ScholarlyFake, tmp_path: Path, monkeypatch: Any
) -> None:
    env = _env(scholarly_server, tmp_path)
    cli = _project(tmp_path, CRLF_BIB.encode("utf-8"), "cli")
    editor = _project(tmp_path, CRLF_BIB.encode("utf-8"), "editor")
    assert _check(cli, env, "--fix").returncode == 0
    cli_fixed = (cli / "refs.bib").read_bytes().decode("utf-8")
    assert _check(cli, env, "--fix", "--add-missing").returncode == 0
    cli_text = (cli / "refs.bib").read_bytes().decode("utf-8")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    ls = CiteLensServer()
    session = ls.session
    bib = str(editor / "refs.bib")
    session.store.open(bib, CRLF_BIB, 1)
    session.projects.analyse(str(editor / "paper.tex"))
    import asyncio

    result = asyncio.run(run_check([str(editor)], session.pipeline, store=session.store))
    for a in session.projects.analyses.values():
        for e in a.bibs[0].entries if a.bibs else []:
            view = session.entry_view(e, a)
            v = result.verdict(e)
            if view is not None and v is not None:
                session.verdicts.keep(content_hash(view), v)
    text = CRLF_BIB
    index = session.store.line_index(bib)
    assert index is not None
    version = 1
    # the finding's fix (the year), then the named choice "Add ..." with the cursor in each
    # entry (the DOI and pages it lacks): what --fix, then --fix --add-missing, write
    for key, wanted in (("makris2014", "finding"), ("makris2014", "Add "), ("rothman1994", "Add ")):
        entry = next(e for e in session.store.bib(bib).entries if e.key == key)  # type: ignore[union-attr]
        finding = next((f for f in session.findings() if f.key == key and f.path == bib), None)
        if wanted == "finding":  # the year: from its diagnostic
            assert finding is not None
            diags = [to_diagnostic(session.store, finding, "utf-16")]
            start, end = index.range(finding.span)
        else:  # from the cursor in the entry, where no finding is
            diags = []
            start, end = index.range(entry.key_span)
        params = lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(uri(bib)),
            lsp.Range(lsp.Position(start.line, start.character), lsp.Position(end.line, end.character)),
            lsp.CodeActionContext(diagnostics=diags),
        )
        actions = code_actions(ls, params)
        chosen = [a for a in actions if a.is_preferred if wanted == "finding"] or [
            a for a in actions if wanted != "finding" and a.title.startswith(wanted)
        ]
        assert len(chosen) == 1, [a.title for a in actions]
        assert chosen[0].edit is not None and chosen[0].edit.changes is not None
        text = apply_text_edits(text, chosen[0].edit.changes[uri(bib)])
        if wanted == "finding":
            assert text == cli_fixed == CRLF_FIXED
        version += 1
        session.store.open(bib, text, version)
        index = session.store.line_index(bib)
        assert index is not None
        # keep the other entry's verdict for the changed text
        session.projects.analyse(str(editor / "paper.tex"))
        for a in session.projects.analyses.values():
            for e in a.bibs[0].entries if a.bibs else []:
                view = session.entry_view(e, a)
                v = result.verdict(e)
                if view is not None and v is not None:
                    session.verdicts.keep(content_hash(view), v)
    assert text == cli_text == CRLF_FILLED
    shutil.rmtree(editor)


def test_a_merge_that_cannot_see_every_citation_is_refused_and_names_the_document(
    tmp_path: Path, caplog: Any
) -> None:
    folder = tmp_path / "paper"
    folder.mkdir()
    bib = folder / "refs.bib"
    text = (
        "@article{ghosh2022dips,\n  title = {Dips in the light curve},\n  doi = {10.1000/dips.1},\n}\n\n"
        "@article{ghosh2022,\n  title = {Dips in the light curve},\n  doi = {10.1000/dips.1},\n"
        "  year = {2022},\n}\n"
    )
    bib.write_text(text, encoding="utf-8")
    # pandoc may be given refs.bib on its command line: this document cannot be checked
    (folder / "notes.md").write_text("As shown [@ghosh2022dips].\n", encoding="utf-8")
    ls = CiteLensServer()
    session = ls.session
    session.store.open(str(bib), text, 1)
    analysis = session.projects.analyse(str(bib))
    paper = PaperRecord(
        "crossref", "Dips in the light curve", ["Anirban Ghosh"], 2022, "ApJ", doi="10.1000/dips.1"
    )
    for key in ("ghosh2022dips", "ghosh2022"):
        view = session.entry_view(analysis.definitions[key][0], analysis)
        assert view is not None
        session.verdicts.keep(content_hash(view), Verification(key, Status.VERIFIED, "verified", match=paper))
    dup = next(f for f in session.findings() if f.code is Code.DUPLICATE_ENTRY and f.key == "ghosh2022dips")
    with caplog.at_level("INFO", logger="citelens"):
        fixes = fixes_for(SessionContext(session), dup.path, dup.code, {**dup.data, "version": 1})
    assert "Merge duplicate into ghosh2022" not in [f.title for f in fixes]
    assert "notes.md" in caplog.text and "could not check" in caplog.text


def test_the_command_line_names_the_document_a_refused_merge_could_not_check(tmp_path: Path) -> None:
    folder = tmp_path / "paper"
    folder.mkdir()
    text = (
        "@article{ghosh2022dips,\n  title = {Dips in the light curve},\n  doi = {10.1000/dips.1},\n}\n\n"
        "@article{ghosh2022,\n  title = {Dips in the light curve},\n  doi = {10.1000/dips.1},\n"
        "  year = {2022},\n}\n"
    )
    (folder / "refs.bib").write_text(text, encoding="utf-8")
    (folder / "paper.tex").write_text(
        TEX.replace("\\cite{makris2014} \\cite{rothman1994}", "\\cite{ghosh2022}")
    )
    # notes.md cites both keys and names no bibliography: neither direction can be sure
    (folder / "notes.md").write_text("As shown [@ghosh2022dips; @ghosh2022].\n", encoding="utf-8")
    proc = run_citelens("check", str(folder), "--no-verify", "--fix", "--unsafe-fixes", timeout=120)
    assert (folder / "refs.bib").read_text(encoding="utf-8") == text  # nothing merged
    assert "duplicate not merged: could not check" in proc.stderr and "notes.md" in proc.stderr, proc.stderr


@pytest.mark.parametrize("link", ["symlink", "hard link"])
def test_fix_keeps_symlinks_and_hard_links(
    scholarly_server: ScholarlyFake, tmp_path: Path, link: str
) -> None:
    """``--fix`` on a paper whose refs.bib is a symlink to a shared library, or a hard link
    to it: the library is fixed, a symlink stays a link to it, a hard link stays the same
    file (one inode, both names fixed, its mode kept), and no temporary file is left.
    Before, each link was replaced by a private fixed copy: the library was not fixed and
    the paper stopped following it (issue 41 #7)."""
    env = _env(scholarly_server, tmp_path)
    library = tmp_path / "library"
    library.mkdir()
    shared = library / "shared.bib"
    shared.write_bytes(CRLF_BIB.encode("utf-8"))
    shared.chmod(0o640)
    paper = _project(tmp_path, b"", "paper")
    (paper / "refs.bib").unlink()
    if link == "symlink":
        (paper / "refs.bib").symlink_to(shared)
    else:
        os.link(shared, paper / "refs.bib")
    proc = _check(paper, env, "--fix")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert shared.read_bytes() == CRLF_FIXED.encode("utf-8")
    if link == "symlink":
        assert (paper / "refs.bib").is_symlink() and (paper / "refs.bib").resolve() == shared
    else:
        assert (paper / "refs.bib").stat().st_ino == shared.stat().st_ino
        assert shared.stat().st_nlink == 2
    assert shared.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in library.iterdir()) == ["shared.bib"]  # no temporary file left
    assert sorted(p.name for p in paper.iterdir()) == ["paper.tex", "refs.bib"]


PERMUTATIONS = {
    "title": "Efficient learning of sparse ranking permutations",
    "authors": ["Jonathan Huang", "Carlos Guestrin", "Leonidas Guibas"],
    "year": 2007,
    "venue": "Advances in Neural Information Processing Systems",
    "type": "proceedings-article",
}
LAUNDERED = (
    "@inproceedings{codegen2023,\n"
    "  title = {Efficient learning of sparse code generation programs},\n"
    "  author = {Nobody, Ann and Roe, Richard},\n"
    "  booktitle = {Proceedings of Imaginary Conference},\n"
    "  year = {2023},\n"
    "}\n"
)


def test_unsafe_fixes_never_put_another_paper_in_place_of_the_cited_one(
    scholarly_server: ScholarlyFake, tmp_path: Path
) -> None:
    """A fabricated reference whose closest real paper is another work: ``--fix
    --unsafe-fixes`` leaves it as it is (the next run still says NOT_FOUND), while the editor
    still offers *Replace with:* that paper for the writer to pick. Before, the batch
    command replaced it with the unrelated paper and the next run called it VERIFIED: a
    fabricated reference laundered by the tool that caught it (issue 41 #2)."""
    scholarly_server.add_paper(PERMUTATIONS)
    env = {**scholarly_server.env(cache=tmp_path / "cache"), "CITELENS_S2_REQUESTS_PER_SECOND": "100"}
    folder = tmp_path / "paper"
    folder.mkdir()
    (folder / "refs.bib").write_text(LAUNDERED, encoding="utf-8")
    tex = TEX.replace("\\cite{makris2014} \\cite{rothman1994}", "\\cite{codegen2023}")
    (folder / "paper.tex").write_text(tex, encoding="utf-8")
    proc = run_citelens("check", str(folder), "--format", "json", "-q", env=env, timeout=120)
    (entry,) = json.loads(proc.stdout)["entries"]
    assert entry["status"] == "NOT_FOUND", entry
    assert any("sparse ranking permutations" in str(c.get("title", "")).lower()
               for c in entry.get("candidates", [])), entry  # the editor's Replace with: offers it
    for args in (("--fix", "--unsafe-fixes"), ("--diff", "--unsafe-fixes")):
        proc = _check(folder, env, *args)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert (folder / "refs.bib").read_text(encoding="utf-8") == LAUNDERED, args
        assert "--- a/" not in proc.stdout and "+++ b/" not in proc.stdout, proc.stdout  # no diff either
    proc = run_citelens("check", str(folder), "--format", "json", "-q", env=env, timeout=120)
    assert [e["status"] for e in json.loads(proc.stdout)["entries"]] == ["NOT_FOUND"]
    helptext = run_citelens("check", "--help", env=env).stdout
    assert "never applied by a command" in " ".join(helptext.split())

