"""Project resolution: root files, include walks and bibliography lookup (citelens.workspace.project)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from citelens.workspace.project import build_project, find_root
from citelens.workspace.store import DocumentStore
from tests.harness import CORPUS

PAPERS = CORPUS / "papers"


def write(base: Path, files: dict[str, str]) -> dict[str, str]:
    out = {}
    for name, text in files.items():
        p = base / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        out[name] = os.path.normpath(str(p))
    return out


BIB = "@article{k1, title={One}, year=2000}\n"


def test_root_from_magic_comment(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "thesis.tex": "\\documentclass{book}\n\\input{chapters/one}\n",
        "chapters/one.tex": "% !TEX root = ../thesis.tex\n\\cite{k1}\n",
    })
    store = DocumentStore()
    assert find_root(store, f["chapters/one.tex"]) == f["thesis.tex"]


def test_magic_root_without_extension(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "main.tex": "\\documentclass{article}\n",
        "part.tex": "%!TEX root = main\n\\cite{x}\n",
    })
    assert find_root(DocumentStore(), f["part.tex"]) == f["main.tex"]


def test_magic_root_wins_over_sibling_documentclass(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "a.tex": "\\documentclass{article}\n\\input{part}\n",
        "b.tex": "\\documentclass{article}\n\\input{part}\n",
        "part.tex": "% !TEX root = b.tex\n",
    })
    assert find_root(DocumentStore(), f["part.tex"]) == f["b.tex"]


def test_missing_magic_root_falls_back_to_the_includer(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "main.tex": "\\documentclass{article}\n\\input{part}\n",
        "part.tex": "% !TEX root = gone.tex\n",
    })
    assert find_root(DocumentStore(), f["part.tex"]) == f["main.tex"]


def test_root_is_the_sibling_with_documentclass_that_inputs_this_file(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "notes.tex": "\\documentclass{article}\n% no inputs\n",
        "main.tex": "\\documentclass{article}\n\\input{intro}\n\\include{body}\n",
        "intro.tex": "\\section{Intro}\\cite{k1}\n",
        "body.tex": "\\input{deep}\n",
        "deep.tex": "\\cite{k1}\n",
    })
    store = DocumentStore()
    assert find_root(store, f["intro.tex"]) == f["main.tex"]
    assert find_root(store, f["deep.tex"]) == f["main.tex"]  # through body.tex
    assert find_root(store, f["main.tex"]) == f["main.tex"]


def test_root_in_a_parent_folder(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "main.tex": "\\documentclass{report}\n\\input{chapters/ch1}\n",
        "chapters/ch1.tex": "\\cite{k1}\n",
    })
    assert find_root(DocumentStore(), f["chapters/ch1.tex"]) == f["main.tex"]


def test_lone_file_is_its_own_root(tmp_path: Path) -> None:
    f = write(tmp_path, {"alone.tex": "\\cite{k1}\n", "other.tex": "\\documentclass{article}\n"})
    assert find_root(DocumentStore(), f["alone.tex"]) == f["alone.tex"]


def test_markdown_is_its_own_root(tmp_path: Path) -> None:
    f = write(tmp_path, {"paper.md": "[@a]\n"})
    assert find_root(DocumentStore(), f["paper.md"]) == f["paper.md"]


def test_include_cycle_terminates(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "a.tex": "\\documentclass{article}\n\\input{b}\n\\bibliography{refs}\n",
        "b.tex": "\\input{a}\n\\input{b}\n\\cite{k1}\n",
        "refs.bib": BIB,
    })
    store = DocumentStore()
    assert find_root(store, f["b.tex"]) == f["a.tex"]
    project = build_project(store, f["a.tex"])
    assert project.files == [f["a.tex"], f["b.tex"]]
    assert project.bib_paths == [f["refs.bib"]]
    assert not project.truncated


def test_include_cycle_without_documentclass_terminates(tmp_path: Path) -> None:
    f = write(tmp_path, {"a.tex": "\\input{b}\n", "b.tex": "\\input{a}\n"})
    store = DocumentStore()
    assert find_root(store, f["a.tex"]) == f["a.tex"]
    assert sorted(build_project(store, f["a.tex"]).files) == sorted([f["a.tex"], f["b.tex"]])


@pytest.mark.parametrize("written", ["refs", "refs.bib"])
def test_bibliography_with_and_without_extension(tmp_path: Path, written: str) -> None:
    f = write(tmp_path, {
        "main.tex": f"\\documentclass{{article}}\n\\bibliography{{{written}}}\n",
        "refs.bib": BIB,
    })
    project = build_project(DocumentStore(), f["main.tex"])
    assert project.bib_paths == [f["refs.bib"]]
    assert project.missing == []


def test_addbibresource_and_multiple_bibliographies(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "main.tex": "\\documentclass{article}\n\\addbibresource{bib/a.bib}\n"
                    "\\bibliography{b, static/c}\n",
        "bib/a.bib": BIB, "b.bib": BIB, "static/c.bib": BIB,
    })
    project = build_project(DocumentStore(), f["main.tex"])
    assert project.bib_paths == [f["bib/a.bib"], f["b.bib"], f["static/c.bib"]]


def test_bibliography_in_a_subfolder_file_is_relative_to_the_root(tmp_path: Path) -> None:
    # LaTeX runs in the root's folder, so chapters/ch1.tex's \bibliography{refs} means ./refs.bib
    f = write(tmp_path, {
        "main.tex": "\\documentclass{article}\n\\input{chapters/ch1}\n",
        "chapters/ch1.tex": "\\cite{k1}\n\\bibliography{refs}\n",
        "refs.bib": BIB,
    })
    store = DocumentStore()
    project = build_project(store, find_root(store, f["chapters/ch1.tex"]))
    assert project.files == [f["main.tex"], f["chapters/ch1.tex"]]
    assert project.bib_paths == [f["refs.bib"]]
    assert project.missing == []


def test_nested_inputs_are_relative_to_the_root(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "main.tex": "\\documentclass{article}\n\\input{chapters/ch1}\n",
        "chapters/ch1.tex": "\\input{chapters/sec}\n",  # as LaTeX resolves it: from the root
        "chapters/sec.tex": "\\cite{k1}\n",
    })
    project = build_project(DocumentStore(), f["main.tex"])
    assert project.files == [f["main.tex"], f["chapters/ch1.tex"], f["chapters/sec.tex"]]


def test_subimport_target(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "main.tex": "\\documentclass{article}\n\\subimport{parts/}{one}\n",
        "parts/one.tex": "\\cite{k1}\n",
    })
    project = build_project(DocumentStore(), f["main.tex"])
    assert project.files == [f["main.tex"], f["parts/one.tex"]]


def test_missing_bibliography_is_recorded(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "main.tex": "\\documentclass{article}\n\\input{part}\n\\bibliography{refs,gone}\n",
        "part.tex": "\\addbibresource{also-gone.bib}\n",
        "refs.bib": BIB,
    })
    project = build_project(DocumentStore(), f["main.tex"])
    assert project.bib_paths == [f["refs.bib"]]
    assert [(path, ref.target, ref.kind) for path, ref in project.missing] == [
        (f["main.tex"], "gone", "bibliography"),
        (f["part.tex"], "also-gone.bib", "addbibresource"),
    ]
    text = Path(f["main.tex"]).read_text()
    _, ref = project.missing[0]
    assert text[ref.span.start : ref.span.end] == "gone"


def test_missing_included_file_is_skipped(tmp_path: Path) -> None:
    f = write(tmp_path, {"main.tex": "\\documentclass{article}\n\\input{Version}\n"})
    project = build_project(DocumentStore(), f["main.tex"])
    assert project.files == [f["main.tex"]]


def test_open_buffer_shadows_disk(tmp_path: Path) -> None:
    f = write(tmp_path, {"main.tex": "\\documentclass{article}\n", "refs.bib": BIB})
    store = DocumentStore()
    assert build_project(store, f["main.tex"]).bib_paths == []
    store.open(f["main.tex"], "\\documentclass{article}\n\\bibliography{refs}\n", 2)
    assert build_project(store, f["main.tex"]).bib_paths == [f["refs.bib"]]


def test_markdown_yaml_bibliography(tmp_path: Path) -> None:
    f = write(tmp_path, {
        "paper.md": "---\nbibliography: [refs.bib, gone.bib]\n---\n[@k1]\n", "refs.bib": BIB,
    })
    project = build_project(DocumentStore(), f["paper.md"])
    assert project.files == [f["paper.md"]]
    assert project.bib_paths == [f["refs.bib"]]
    assert [ref.target for _, ref in project.missing] == ["gone.bib"]


# --------------------------------------------------------------------------- real papers


def test_corpus_thammegowda_chapter_root_and_bibliography() -> None:
    base = PAPERS / "thammegowda-dissertation"
    store = DocumentStore()
    chapter = os.path.normpath(str(base / "chapter" / "04-evaluation.tex"))
    root = find_root(store, chapter)
    assert os.path.basename(root) in {"main1.tex", "main2.tex"}
    project = build_project(store, root)
    assert chapter in project.files
    assert project.bib_paths == [os.path.normpath(str(base / "anthology.bib"))]
    assert project.missing == []


def test_corpus_astropy_two_bibliographies() -> None:
    base = PAPERS / "astropy-v5.0"
    project = build_project(DocumentStore(), os.path.normpath(str(base / "ms.tex")))
    assert project.bib_paths == [
        os.path.normpath(str(base / "refs.bib")),
        os.path.normpath(str(base / "static" / "affiliated-refs.bib")),
    ]


def test_corpus_bhandari_addbibresource_in_an_input_file() -> None:
    base = PAPERS / "bhandari-phd-thesis"
    project = build_project(DocumentStore(), os.path.normpath(str(base / "main.tex")))
    assert project.bib_paths == [os.path.normpath(str(base / "bib" / "references.bib"))]
    assert project.missing == []
    assert len(project.files) > 5
