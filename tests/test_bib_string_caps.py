"""@string expansion is capped: a 1 KB .bib cannot exhaust memory, and loses only what it must.

The bomb: ``@string{s0 = "ab"}``, then ``@string{sI = s(I-1) # s(I-1)}`` for I = 1..40,
then an entry whose title is ``s40`` (2 TiB of text if expanded). The server and the
command line run under an address-space limit, so a regression fails the test (the
whole file used to end as ``BIB_SYNTAX: cannot parse: MemoryError()``, every entry lost)
instead of taking the machine down.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

from lsprotocol import types as lsp

from citelens.documents.bibtex.parse import MAX_EXPANDED_CHARS, MAX_MACRO_DEPTH, parse_bib
from tests.harness import ROOT
from tests.lsp_session import diagnostics, open_doc, rng, session

LIMIT_BYTES = 1_500_000_000  # far above what either process needs, far below the bomb

BOMB_LINES = (
    [
        "@article{before, title = {An Entry Before the Bomb}, author = {Doe, Jane}, year = 2019}",
        '@string{s0 = "ab"}',
    ]
    + [f"@string{{s{i} = s{i - 1} # s{i - 1}}}" for i in range(1, 41)]
    + [
        "@article{bomb, title = s40, author = {Author, Anne}, year = 2020}",
        '@string{jnl = "Journal of Ordinary Results"}',
        "@article{after, title = {An Entry After the Bomb}, author = {Roe, Richard},",
        "  journal = jnl # {, Series B}, year = 2021}",
    ]
)
BOMB = "\n".join(BOMB_LINES) + "\n"
TEX = (
    "\\documentclass{article}\n\\begin{document}\n"
    "See \\cite{before}, \\cite{bomb} and \\cite{after}.\n"
    "\\bibliography{refs}\n\\end{document}\n"
)
# s16 is the first definition over the cap: 2 * 2**16 characters
OFFENDING = next(i for i, line in enumerate(BOMB_LINES) if line.startswith("@string{s16 "))
BOMB_LINE = next(i for i, line in enumerate(BOMB_LINES) if line.startswith("@article{bomb"))


def _expected() -> list[tuple[tuple[int, int, int, int], str]]:
    col = BOMB_LINES[BOMB_LINE].index("s40")
    return [
        ((OFFENDING, 0, OFFENDING, len(BOMB_LINES[OFFENDING])), "@string 's16'"),
        ((BOMB_LINE, col, BOMB_LINE, col + 3), "@string 's40'"),
    ]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def _project(tmp_path: Path) -> Path:
    (tmp_path / "refs.bib").write_text(BOMB, encoding="utf-8")
    (tmp_path / "main.tex").write_text(TEX, encoding="utf-8")
    return tmp_path


async def test_the_server_reports_the_offending_string_and_keeps_every_entry(tmp_path: Path) -> None:
    _project(tmp_path)
    limited = [
        sys.executable,
        "-c",
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, "
        f"({LIMIT_BYTES}, {LIMIT_BYTES})); from citelens.cli.main import main; "
        "sys.exit(main(['serve']))",
    ]
    async with session("visual-studio-code", tmp_path, server_command=limited) as client:
        bib = open_doc(client, tmp_path / "refs.bib", BOMB)
        diags = await diagnostics(client, bib, timeout=30)
        got = sorted((rng(d), str(d.code), d.message) for d in diags)
        assert [(r, c) for r, c, _m in got] == [(r, "BIB_SYNTAX") for r, _w in _expected()], got
        for (_r, _c, message), (_e, what) in zip(got, _expected(), strict=True):
            assert what in message and "MemoryError" not in message
        tex = open_doc(client, tmp_path / "main.tex", TEX)
        tex_diags = await diagnostics(client, tex, timeout=30)
        assert "UNDEFINED_CITATION" not in {str(d.code) for d in tex_diags}
        # the entry after the bomb is parsed, with its macro expanded
        line = TEX.splitlines().index(next(x for x in TEX.splitlines() if "after" in x))
        hover = await client.text_document_hover_async(
            lsp.HoverParams(
                lsp.TextDocumentIdentifier(tex),
                lsp.Position(line, TEX.splitlines()[line].index("{after}") + 2),
            )
        )
        assert hover is not None
        assert "An Entry After the Bomb" in str(hover.contents)
        assert "Journal of Ordinary Results, Series B" in str(hover.contents)


def test_the_command_line_reports_the_offending_string_and_keeps_every_entry(tmp_path: Path) -> None:
    _project(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", "main.tex", "--no-verify", "--format", "json", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=_limit_memory,
        env={"PYTHONPATH": str(ROOT / "server"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert sorted(e["key"] for e in report["entries"]) == ["after", "before", "bomb"]
    found = sorted(
        (
            (
                d["range"]["start"]["line"],
                d["range"]["start"]["character"],
                d["range"]["end"]["line"],
                d["range"]["end"]["character"],
            ),
            d["code"],
            d["message"],
        )
        for d in report["diagnostics"]
    )
    assert [(r, c) for r, c, _m in found] == [(r, "BIB_SYNTAX") for r, _w in _expected()], found
    assert all("MemoryError" not in m for _r, _c, m in found)


def test_ordinary_macros_still_expand() -> None:
    bib = parse_bib(
        '@string{jgr = "J. Geophys. Res."}\n@string{jgra = jgr # " A"}\n'
        "@article{x, journal = jgra # {: Space Physics}, month = jan, title = {T}}\n"
    )
    assert not bib.problems
    e = bib.entries[0]
    assert e.get("journal") == "J. Geophys. Res. A: Space Physics"
    assert e.get("month") == "January"


def test_nesting_deeper_than_the_cap_is_reported_at_that_string() -> None:
    lines = ['@string{d0 = "x"}'] + [f'@string{{d{i} = d{i - 1} # "x"}}' for i in range(1, 25)]
    lines.append("@misc{deep, title = d24, note = {kept}}")
    text = "\n".join(lines) + "\n"
    bib = parse_bib(text)
    assert len(bib.problems) == 2, bib.problems
    at = text.index(f"@string{{d{MAX_MACRO_DEPTH} ")
    assert (bib.problems[0].span.start, bib.problems[0].span.end) == (at, text.index("}", at) + 1)
    assert "nested" in bib.problems[0].message
    entry = bib.entries[0]
    assert entry.get("title") == "d24" and entry.get("note") == "kept"
    assert bib.strings[f"d{MAX_MACRO_DEPTH - 1}"] == "x" * MAX_MACRO_DEPTH


def test_a_long_field_concatenation_is_capped_at_its_value() -> None:
    half = "y" * (MAX_EXPANDED_CHARS // 2 + 1)
    text = f'@string{{big = "{half}"}}\n@misc{{a, title = big # big, year = 2020}}\n'
    bib = parse_bib(text)
    assert len(bib.problems) == 1 and "more than" in bib.problems[0].message
    value = text.index("big # big")
    assert (bib.problems[0].span.start, bib.problems[0].span.end) == (value, value + 9)
    assert bib.entries[0].get("title") == "big # big" and bib.entries[0].get("year") == "2020"


def test_a_valid_redefinition_of_an_unexpanded_string_is_used() -> None:
    text = (
        '@string{a = "ab"}\n'
        + "".join("@string{a = a # a}\n" for _ in range(17))
        + '@string{a = "fine"}\n@misc{x, title = a}\n'
    )
    bib = parse_bib(text)
    assert len(bib.problems) == 1 and "@string 'a'" in bib.problems[0].message
    assert bib.entries[0].get("title") == "fine"


def test_many_fields_cannot_add_up_past_the_file_budget() -> None:
    chunk = "z" * (MAX_EXPANDED_CHARS - 10)
    entries = "".join(f"@misc{{e{i}, title = c # {{!}}}}\n" for i in range(400))
    text = f'@string{{c = "{chunk}"}}\n' + entries
    bib = parse_bib(text)
    assert len(bib.entries) == 400
    assert bib.problems, "400 x 100k characters were expanded"
    assert all("expand to more characters" in p.message for p in bib.problems)
    assert bib.entries[0].get("title") == chunk + "!"
    assert bib.entries[-1].get("title") == "c # {!}"
