"""Bytes in, the same bytes out (issue 32, break 1): a file that is not UTF-8 is read in its
real encoding, every edit is computed on that text, and a file whose encoding is uncertain
is never edited. Through the real server (pytest-lsp), applying each edit the way an editor
reading the file as Latin-1 does (VS Code with ``files.encoding: iso88591``, Neovim's
``fileencodings``): decode, apply the LSP ranges, encode."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from citelens.documents.read import decode
from tests.fakes.scholarly import ScholarlyFake
from tests.lsp_session import diagnostics, open_doc, session, uri
from tests.test_lsp_verification import apply_text_edits, edits_for
from tests.test_never_corrupt import SMITH, SMITH_PAPER, _pos
from tests.test_safe_edits import SETTINGS

#: French typography: a no-break space before the colon. In ISO 8859-1, "é" + NBSP
#: (0xE9 0xA0) is a truncated UTF-8 sequence: read as UTF-8 with replacement, the two
#: characters became one U+FFFD and the rename landed one column early.
CHAP2 = "La vérité\xa0: voir \\cite{target} et \\cite{other}.\n"
BIB = ("@article{target, title = {Target}, author = {Bee, Anna}, year = {2020}}\n"
       "@article{other, title = {Other}, author = {Sea, Carl}, year = {2021}}\n")
MAIN = ("\\documentclass{article}\n\\begin{document}\nSee \\cite{target}.\n\\include{chap2}\n"
        "\\bibliography{refs}\n\\end{document}\n")


def _paper(tmp_path: Path, chap2: bytes) -> Path:
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    (tmp_path / "chap2.tex").write_bytes(chap2)
    main = tmp_path / "main.tex"
    main.write_text(MAIN, encoding="utf-8")
    return main


async def _rename(client: object, main: Path, new: str) -> lsp.WorkspaceEdit | None:
    u = open_doc(client, main, MAIN)  # type: ignore[arg-type]
    await diagnostics(client, u)  # type: ignore[arg-type]
    return await client.text_document_rename_async(lsp.RenameParams(  # type: ignore[attr-defined,no-any-return]
        lsp.TextDocumentIdentifier(u), _pos(MAIN, "target}", 1), new))


def _as_latin1_editor(path: Path, edit: lsp.WorkspaceEdit, encoding: str = "latin-1") -> bytes:
    """The bytes an editor reading ``path`` in ``encoding`` writes after ``edit``."""
    text = path.read_bytes().decode(encoding)
    return apply_text_edits(text, edits_for(edit, uri(path))).encode(encoding)


async def test_a_rename_in_an_unopened_latin1_file_writes_the_right_latin1_bytes(tmp_path: Path) -> None:
    """Renaming ``target`` from main.tex edits chap2.tex (ISO 8859-1, not open) at the
    right columns: the bytes after the edit are exactly the expected Latin-1 bytes. Before,
    the line became ``…\\citerenamedt} et \\cite{other}.``."""
    main = _paper(tmp_path, CHAP2.encode("latin-1"))
    async with session("visual-studio-code", tmp_path) as client:
        edit = await _rename(client, main, "renamed")
    assert edit is not None
    after = _as_latin1_editor(tmp_path / "chap2.tex", edit)
    assert after == CHAP2.replace("{target}", "{renamed}").encode("latin-1"), after


async def test_a_file_of_uncertain_encoding_is_never_edited(tmp_path: Path) -> None:
    """chap2.tex is neither UTF-8 nor plain Latin-1 (Windows-1252 quotes, 0x93/0x94): the
    rename is refused with a message naming the file, rather than guessed. With
    ``fileEncoding: cp1252`` (what the user's editor reads) it is made, byte-exact."""
    chap2 = "“La vérité”\xa0: voir \\cite{target} et \\cite{other}.\n".encode("cp1252")
    main = _paper(tmp_path, chap2)
    async with session("visual-studio-code", tmp_path) as client:
        with pytest.raises(JsonRpcException) as err:
            await _rename(client, main, "renamed")
    assert "chap2.tex" in str(err.value) and "encoding" in str(err.value), err.value
    settings = {"verificationEnabled": False, "fileEncoding": "cp1252"}
    async with session("visual-studio-code", tmp_path, settings=settings) as client:
        edit = await _rename(client, main, "renamed")
    assert edit is not None
    assert _as_latin1_editor(tmp_path / "chap2.tex", edit, "cp1252") == chap2.replace(
        b"{target}", b"{renamed}")


async def test_a_new_key_the_files_encoding_cannot_hold_is_refused(tmp_path: Path) -> None:
    """A Latin-1 file cannot hold ``論文``: the rename is refused, naming the file, instead
    of an edit the editor would write as ``?`` or fail to save."""
    main = _paper(tmp_path, CHAP2.encode("latin-1"))
    async with session("visual-studio-code", tmp_path) as client:
        with pytest.raises(JsonRpcException) as err:
            await _rename(client, main, "論文")
    assert "chap2.tex" in str(err.value), err.value


async def test_a_merge_renames_citations_on_a_latin1_line_byte_exactly(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """Merging a duplicate rewrites the dropped key's citation in chap2.tex (Latin-1, not
    open) on a line with ``é`` + NBSP before it, byte-exact, and deletes the duplicate."""
    (tmp_path / "refs.bib").write_text(
        SMITH.format(key="smith2020") + SMITH.format(key="Smith_2020_cats"), encoding="utf-8")
    chap2 = "La vérité\xa0: voir \\cite{Smith_2020_cats} et \\cite{other}.\n"
    (tmp_path / "chap2.tex").write_bytes(chap2.encode("latin-1"))
    main = tmp_path / "main.tex"
    main.write_text(MAIN.replace("{target}", "{smith2020}"), encoding="utf-8")
    scholarly_server.add_paper(SMITH_PAPER)
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("visual-studio-code", tmp_path, env=env, settings=SETTINGS) as client:
        open_doc(client, main)
        u = open_doc(client, tmp_path / "refs.bib")
        diags = await diagnostics(client, u, lambda ds: any(d.code == "DUPLICATE_ENTRY" for d in ds))
        dup = next(d for d in diags if d.code == "DUPLICATE_ENTRY")
        got = await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(u), range=dup.range,
            context=lsp.CodeActionContext(diagnostics=[dup])))
    merge = next(a for a in got or [] if isinstance(a, lsp.CodeAction)
                 and a.title == "Merge duplicate into smith2020")
    assert merge.edit is not None
    after = _as_latin1_editor(tmp_path / "chap2.tex", merge.edit)
    assert after == chap2.replace("Smith_2020_cats", "smith2020").encode("latin-1"), after


@pytest.mark.parametrize(("data", "encoding", "certain"), [
    ("La vérité\xa0:".encode(), "utf-8", True),
    (b"\xef\xbb\xbfBOM", "utf-8", True),
    ("La vérité\xa0:".encode("latin-1"), "iso8859-1", True),
    (b"\\usepackage[T1]{fontenc}\\usepackage[ansinew]{inputenc}\n\x93q\x94", "cp1252", True),
    (b"\x93quoted\x94 \xe9", "iso8859-1", False),
    ("café".encode() + b" \xff", "utf-8", False),  # partly UTF-8: mixed or damaged
])
def test_files_are_decoded_in_their_encoding_never_with_replacement(
        data: bytes, encoding: str, certain: bool) -> None:
    """UTF-8; else a declared encoding; else Latin-1 when no byte is a C1 control and no
    part reads as UTF-8; else uncertain (never edited). A text edits may be computed on has
    no U+FFFD: every byte is a character of it."""
    got = decode(data)
    assert (got.encoding, got.uncertain is None) == (encoding, certain), got
    if certain:  # never a replacement in a text an edit may be computed on
        assert "\ufffd" not in got.text
        assert got.text == data.removeprefix(b"\xef\xbb\xbf").decode(got.encoding)


async def test_a_merge_deletes_an_entry_of_an_unopened_latin1_bib_byte_exactly(
        tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    """Paper B reads shared.bib and extra.bib (ISO 8859-1, not open), which holds the same
    paper as shared.bib under another key, on the line of an entry whose title has ``é`` + NBSP: the
    merge deletes exactly that entry from extra.bib (the other entry's bytes are kept) and
    rewrites paper B's citation. Before, the deletion started one character early."""
    (tmp_path / "shared.bib").write_text(SMITH.format(key="smith2020"), encoding="utf-8")
    french = "@misc{fr, title = {La vérité\xa0: voir}, author = {Ève, Anne}, year = {2019}} "
    (tmp_path / "extra.bib").write_bytes((french + SMITH.format(key="Smith_2020_cats")).encode("latin-1"))
    (tmp_path / "paper").mkdir()
    tex = tmp_path / "paper" / "main.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\n\\cite{smith2020} \\cite{Smith_2020_cats}"
                   " \\cite{fr}\n\\bibliography{../shared,../extra}\n\\end{document}\n", encoding="utf-8")
    scholarly_server.add_paper(SMITH_PAPER)
    env = scholarly_server.env(cache=tmp_path / "cache")
    async with session("visual-studio-code", tmp_path, env=env, settings=SETTINGS) as client:
        open_doc(client, tex)
        u = open_doc(client, tmp_path / "shared.bib")
        diags = await diagnostics(client, u, lambda ds: any(d.code == "DUPLICATE_ENTRY" for d in ds))
        dup = next(d for d in diags if d.code == "DUPLICATE_ENTRY")
        got = await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(u), range=dup.range,
            context=lsp.CodeActionContext(diagnostics=[dup])))
    merge = next(a for a in got or [] if isinstance(a, lsp.CodeAction)
                 and a.title == "Merge duplicate into smith2020")
    assert merge.edit is not None
    assert _as_latin1_editor(tmp_path / "extra.bib", merge.edit) == french.encode("latin-1")
