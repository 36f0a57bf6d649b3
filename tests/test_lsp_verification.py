"""End-to-end: background verification, diagnostics where the error is, and quick fixes.

The real server (as VS Code and as Neovim) verifies the Ethereum yellow paper
against the fake scholarly server; its bibliography is seeded with a fabricated
entry, an entry whose DOI belongs to another paper, and a duplicate. The cache of
the paper's own entries is warmed once per module (in-process, without rate
limits) so that only the seeded entries are looked up by the server itself.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from citelens.core.model import BibEntry, Span
from citelens.core.text import LineIndex
from citelens.documents.bibtex.parse import parse_bib
from tests.fakes.scholarly import ScholarlyFake, fast_rates, running
from tests.harness import CORPUS
from tests.lsp_session import PRESETS, diagnostics, open_doc, rng, session, uri, wait_for

YELLOW = CORPUS / "papers" / "ethereum-yellowpaper"

#: Real papers the test relies on, as the fake database knows them.
PAPERS: list[dict[str, Any]] = [
    {"title": "Optimizing SHA256 in Bitcoin Mining",
     "authors": ["Nicolas T. Courtois", "Marek Grajek", "Rahul Naik"], "year": 2014,
     "venue": "Cryptography and Security Systems", "doi": "10.1007/978-3-662-44893-9_12",
     "pages": "131-144", "type": "book-chapter", "publication_types": ["Conference"]},
    {"title": "Majority Is Not Enough: Bitcoin Mining Is Vulnerable",
     "authors": ["Ittay Eyal", "Emin Gün Sirer"], "year": 2014,
     "venue": "Financial Cryptography and Data Security", "doi": "10.1007/978-3-662-45472-5_28",
     "pages": "436-454", "type": "proceedings-article", "publication_types": ["Conference"]},
]

SEEDED = """
@article{fabricated2022,
	title = {Optimizing Double SHA256 for Energy-Efficient Bitcoin Mining},
	author = "Doe, Jane and Roe, Richard",
	journal = {Journal of Imaginary Blockchains},
	year = "2022",
	doi = "10.99999/jib.2022.0042",
	note = {seeded: fabricated},
}

@inproceedings{eyal2014majority,
	title = {Majority is not enough: Bitcoin mining is vulnerable},
	author = "Eyal, Ittay and Sirer, Emin G{\\"u}n",
	booktitle = {Financial Cryptography and Data Security},
	year = "2014",
	pages = "436--454",
	doi = "10.1109/mcse.2007.55",
	keywords = {selfish mining},
}

@incollection{courtois2014optimizing,
	author = "Courtois, Nicolas T. and Grajek, Marek and Naik, Rahul",
	title = "Optimizing {SHA256} in {Bitcoin} Mining",
	booktitle = "Cryptography and Security Systems",
	year = "2014",
	doi = "10.1007/978-3-662-44893-9_12",
	keywords = "bitcoin, mining",
}
"""
PARAGRAPH = ("Seeded: \\cite{fabricated2022} and \\citep{eyal2014majority}; mining "
             "\\cite{courtois2014optimizing}, again \\cite{fabricated2022}.\n")
ANCHOR = "\\bibliographystyle{plainnat}"


def _settings(**extra: Any) -> dict[str, Any]:
    return {"verificationEnabled": True, "verifyDebounceMs": 30, "s2RequestsPerSecond": 200,
            "requestTimeoutS": 2.0, "retryBackoffS": 0.01, "maxRetries": 1, **extra}


def _add_papers(fake: ScholarlyFake) -> None:
    for p in PAPERS:
        fake.add_paper(p)


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A verification cache holding the fake's answers for the paper's own entries."""
    from citelens.documents.bibtex.view import entry_view
    from citelens.sources.transport import Sources
    from citelens.verify.cache import open_cache
    from citelens.verify.scheduler import verify_entries

    directory = tmp_path_factory.mktemp("warm-cache")
    bib = parse_bib((YELLOW / "Biblio.bib").read_text(encoding="utf-8"))
    views = [entry_view(e) for e in bib.entries]

    async def warm(fake: ScholarlyFake) -> None:
        settings = fake.settings(cache_dir=str(directory))
        sources = Sources.from_settings(settings, rates=fast_rates())
        cache = open_cache(settings)
        try:
            await verify_entries(views, settings, sources=sources, cache=cache)
        finally:
            await sources.aclose()
            cache.close()

    with running() as fake:
        _add_papers(fake)
        asyncio.run(warm(fake))
    return directory


@pytest.fixture
def paper(tmp_path: Path, warm_cache: Path) -> Path:
    folder = tmp_path / "paper"
    folder.mkdir()
    tex = YELLOW.joinpath("Paper.tex").read_text(encoding="utf-8")
    assert ANCHOR in tex
    (folder / "Paper.tex").write_text(tex.replace(ANCHOR, PARAGRAPH + ANCHOR, 1),
                                      encoding="utf-8")
    bib = YELLOW.joinpath("Biblio.bib").read_text(encoding="utf-8")
    (folder / "Biblio.bib").write_text(bib.rstrip("\n") + "\n" + SEEDED, encoding="utf-8")
    shutil.copytree(warm_cache, tmp_path / "cache")
    return folder


@pytest.fixture
def fake(scholarly_server: ScholarlyFake) -> Iterator[ScholarlyFake]:
    _add_papers(scholarly_server)
    yield scholarly_server


@pytest.fixture(params=PRESETS)
def preset(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _env(fake: ScholarlyFake, paper: Path) -> dict[str, str]:
    return fake.env(cache=paper.parent / "cache")


# --------------------------------------------------------------------------- helpers


def apply_text_edits(text: str, edits: Sequence[lsp.TextEdit], encoding: str = "utf-16") -> str:
    """``text`` with LSP ``edits`` (non-overlapping, positions in ``encoding``) applied."""
    index = LineIndex(text)
    spans = []
    for e in edits:
        s = index.offset(e.range.start.line, e.range.start.character, encoding)
        t = index.offset(e.range.end.line, e.range.end.character, encoding)
        spans.append((s, t, e.new_text))
    spans.sort(reverse=True)
    for s, t, new in spans:
        text = text[:s] + new + text[t:]
    return text


def edits_for(edit: lsp.WorkspaceEdit, u: str) -> list[lsp.TextEdit]:
    """The edits of one document, from ``documentChanges`` when present, else ``changes``."""
    if edit.document_changes:
        out: list[lsp.TextEdit] = []
        for dc in edit.document_changes:
            assert isinstance(dc, lsp.TextDocumentEdit)
            if dc.text_document.uri == u:
                out += [e for e in dc.edits if isinstance(e, lsp.TextEdit)]
        return out
    return list((edit.changes or {}).get(u, []))


def _ver(d: lsp.Diagnostic) -> Any:
    return d.data.get("version") if isinstance(d.data, dict) else None


def _keyed(diags: Sequence[lsp.Diagnostic], code: str, key: str) -> list[lsp.Diagnostic]:
    return [d for d in diags if d.code == code and isinstance(d.data, dict)
            and d.data.get("key") == key]


def _entry(text: str, key: str) -> BibEntry:
    return next(e for e in parse_bib(text).entries if e.key == key)


def _outside_unchanged(before: str, after: str, entry: BibEntry) -> None:
    """Every character outside ``entry``'s span is unchanged."""
    s, e = entry.span.start, entry.span.end
    assert after[:s] == before[:s]
    assert after.endswith(before[e:])
    others_before = {x.key: {n: f.value for n, f in x.fields.items()}
                     for x in parse_bib(before).entries if x.key != entry.key}
    parsed = parse_bib(after)
    assert not parsed.problems
    others_after = {x.key: {n: f.value for n, f in x.fields.items()}
                    for x in parsed.entries if x.key != entry.key}
    assert others_after == others_before


async def _verified(client: LanguageClient, u_tex: str, u_bib: str,
                    timeout: float = 30.0) -> tuple[Sequence[lsp.Diagnostic],
                                                    Sequence[lsp.Diagnostic]]:
    """Wait until the seeded entries' verification diagnostics are published, and the
    progress has ended."""
    def ready(ds: Sequence[lsp.Diagnostic]) -> bool:
        return bool(_keyed(ds, "NOT_FOUND", "fabricated2022")
                    and _keyed(ds, "DOI_MISMATCH", "eyal2014majority"))

    bib = await diagnostics(client, u_bib, ready, timeout)
    tex = await diagnostics(client, u_tex, ready, timeout)
    await wait_for(lambda: _progress_ended(client), timeout, "the end of the progress")
    return tex, bib


def _progress_ended(client: LanguageClient) -> bool:
    reports = [r for rs in client.progress_reports.values() for r in rs]
    return bool(reports) and any(isinstance(r, lsp.WorkDoneProgressEnd) for r in reports) and \
        all(isinstance(rs[-1], lsp.WorkDoneProgressEnd) for rs in client.progress_reports.values()
            if rs)


async def _actions(client: LanguageClient, u: str, d: lsp.Diagnostic) -> list[lsp.CodeAction]:
    got = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(u), range=d.range,
        context=lsp.CodeActionContext(diagnostics=[d],
                                      only=[lsp.CodeActionKind.QuickFix])))
    return [a for a in got or [] if isinstance(a, lsp.CodeAction)]


def _save(client: LanguageClient, path: Path, text: str, version: int) -> None:
    """The editor applies an edit to the open buffer and saves it."""
    path.write_text(text, encoding="utf-8")
    u = uri(path)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(version=version, uri=u),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(
        lsp.TextDocumentIdentifier(u), text=text))


def _cite_ranges(text: str, key: str) -> list[tuple[int, int, int, int]]:
    out = []
    for m in re.finditer(r"\\cite[pt]?\{([^}]*)\}", text):
        pos = m.start(1)
        for part in m.group(1).split(","):
            k = part.strip()
            if k == key:
                s = pos + part.index(k)
                line = text.count("\n", 0, s)
                col = s - (text.rfind("\n", 0, s) + 1)
                out.append((line, col, line, col + len(k)))
            pos += len(part) + 1
    return out


def _span_range(text: str, start: int, end: int) -> tuple[int, int, int, int]:
    s, e = LineIndex(text).range(Span(start, end))
    return (s.line, s.character, e.line, e.character)


# --------------------------------------------------------------------------- tests


async def test_diagnostics_at_exact_ranges_and_quick_fixes_that_verify(
    preset: str, paper: Path, fake: ScholarlyFake
) -> None:
    tex_path, bib_path = paper / "Paper.tex", paper / "Biblio.bib"
    tex, bib = tex_path.read_text(encoding="utf-8"), bib_path.read_text(encoding="utf-8")
    u_tex, u_bib = uri(tex_path), uri(bib_path)
    async with session(preset, paper, env=_env(fake, paper), settings=_settings()) as client:
        open_doc(client, tex_path)
        open_doc(client, bib_path)
        tex_diags, bib_diags = await _verified(client, u_tex, u_bib)
        assert any(isinstance(r, lsp.WorkDoneProgressBegin) and "Verifying citations" in r.title
                   for rs in client.progress_reports.values() for r in rs)

        # ---- in the .tex: at every citation of the key, exactly
        for code, key in (("NOT_FOUND", "fabricated2022"), ("DOI_MISMATCH", "eyal2014majority")):
            got = sorted(rng(d) for d in _keyed(tex_diags, code, key))
            assert got == _cite_ranges(tex, key), (code, key)
        assert len(_cite_ranges(tex, "fabricated2022")) == 2
        # ---- in the .bib: the DOI field, the key, both duplicates
        fab, eyal = _entry(bib, "fabricated2022"), _entry(bib, "eyal2014majority")
        (nf,) = _keyed(bib_diags, "NOT_FOUND", "fabricated2022")
        assert rng(nf) == _span_range(bib, fab.key_span.start, fab.key_span.end)
        (dm,) = _keyed(bib_diags, "DOI_MISMATCH", "eyal2014majority")
        doi = eyal.fields["doi"].value_span
        assert rng(dm) == _span_range(bib, doi.start, doi.end)
        dups = [d for d in bib_diags if d.code == "DUPLICATE_ENTRY"]
        dup_keys = {d.data["key"]: d for d in dups if isinstance(d.data, dict)
                    and "Courtois2014" in (d.data["key"], d.data.get("duplicate_of"))}
        assert set(dup_keys) == {"Courtois2014", "courtois2014optimizing"}
        for key, other in (("Courtois2014", "courtois2014optimizing"),
                           ("courtois2014optimizing", "Courtois2014")):
            e, o = _entry(bib, key), _entry(bib, other)
            d = dup_keys[key]
            assert rng(d) == _span_range(bib, e.key_span.start, e.key_span.end)
            if d.related_information:
                (rel,) = d.related_information
                assert rel.location.uri == u_bib
                assert rng(rel.location) == _span_range(bib, o.key_span.start, o.key_span.end)
            else:
                assert preset == "neovim"  # no relatedInformation support
        assert all(_ver(d) == 1 for d in (*tex_diags, *bib_diags))

        # ---- hover on a citation shows the verification
        (line, col, _, _) = _cite_ranges(tex, "eyal2014majority")[0]
        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(u_tex), lsp.Position(line, col + 2)))
        assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
        text = hover.contents.value
        assert "Identifier points to another paper" in text
        assert "Matplotlib" in text  # the paper the DOI names
        assert "https://doi.org/10.1109/mcse.2007.55" in text
        # what a writer acts on, no audit trail (that is hoverDetail: "verbose")
        for internal in ("method `", "Tiers tried:", "title match", "Stages:"):
            assert internal not in text, text
        no_model = [ln for ln in text.splitlines() if "no model configured" in ln]
        assert len(no_model) <= 1 and "citelens.llmBaseUrl" in (no_model or [""])[0] + "citelens.llmBaseUrl"
        assert len(text.splitlines()) <= 16, f"{len(text.splitlines())} lines:\n{text}"

        # ---- Fix DOI from the .tex diagnostic: edits only the entry, re-verifies
        cite_diag = _keyed(tex_diags, "DOI_MISMATCH", "eyal2014majority")[0]
        actions = await _actions(client, u_tex, cite_diag)
        titles = [a.title for a in actions]
        assert "Fix DOI: 10.1007/978-3-662-45472-5_28" in titles, titles
        fix = next(a for a in actions if a.title.startswith("Fix DOI"))
        assert fix.kind == lsp.CodeActionKind.QuickFix and fix.edit is not None
        if preset == "visual-studio-code":
            assert fix.edit.document_changes, "versioned edits for a client that supports them"
            (dc,) = fix.edit.document_changes
            assert isinstance(dc, lsp.TextDocumentEdit) and dc.text_document.version == 1
        assert fix.edit.changes and list(fix.edit.changes) == [u_bib]
        new_bib = apply_text_edits(bib, edits_for(fix.edit, u_bib))
        _outside_unchanged(bib, new_bib, eyal)
        assert _entry(new_bib, "eyal2014majority").get("doi") == "10.1007/978-3-662-45472-5_28"
        # ---- NOT_FOUND: "Replace with" a candidate; the result verifies
        actions = await _actions(client, u_bib, nf)
        replace = [a for a in actions if a.title.startswith("Replace with: ")]
        assert 1 <= len(replace) <= 3, ([a.title for a in actions], nf.data)
        chosen = next(a for a in replace if "Optimizing SHA256 in Bitcoin Mining (2014)"
                      in a.title)
        assert chosen.edit is not None
        fab = _entry(bib, "fabricated2022")
        new_bib = apply_text_edits(bib, edits_for(chosen.edit, u_bib))
        _outside_unchanged(bib, new_bib, fab)
        replaced = _entry(new_bib, "fabricated2022")
        assert replaced.get("note") == "seeded: fabricated"  # the user's own field stays
        assert replaced.get("doi") == "10.1007/978-3-662-44893-9_12"
        assert replaced.get("journal") is None  # a chapter of proceedings: booktitle
        assert replaced.entry_type in {"inproceedings", "incollection"}
        assert replaced.get("booktitle") == "Cryptography and Security Systems"
        assert replaced.get("author") == "Courtois, Nicolas T. and Grajek, Marek and Naik, Rahul"
        # ---- DUPLICATE_ENTRY: merge renames the citations in the .tex in the same edit
        dup = dup_keys["courtois2014optimizing"]
        actions = await _actions(client, u_bib, dup)
        merge = next(a for a in actions if a.title == "Merge duplicate into Courtois2014")
        assert merge.edit is not None
        kept, gone = _entry(bib, "Courtois2014"), _entry(bib, "courtois2014optimizing")
        new_bib = apply_text_edits(bib, edits_for(merge.edit, u_bib))
        new_tex = apply_text_edits(tex, edits_for(merge.edit, u_tex))
        parsed = parse_bib(new_bib)
        assert not parsed.problems
        keys = [e.key for e in parsed.entries]
        assert "courtois2014optimizing" not in keys and keys.count("Courtois2014") == 1
        merged = _entry(new_bib, "Courtois2014")
        assert merged.get("keywords") == "bitcoin, mining"
        assert new_bib[:kept.span.start] == bib[:kept.span.start]
        assert "courtois2014optimizing" not in new_tex
        assert new_tex == tex.replace("\\cite{courtois2014optimizing}", "\\cite{Courtois2014}")
        # outside the kept entry, only the removed entry (the last one) and its blank line went
        assert gone.span.start > kept.span.end and not bib[gone.span.end:].strip()
        assert new_bib[merged.span.end:] == bib[kept.span.end:gone.span.start].rstrip() + "\n"


async def test_fix_doi_then_save_reverifies(preset: str, paper: Path, fake: ScholarlyFake
                                            ) -> None:
    tex_path, bib_path = paper / "Paper.tex", paper / "Biblio.bib"
    bib = bib_path.read_text(encoding="utf-8")
    u_tex, u_bib = uri(tex_path), uri(bib_path)
    async with session(preset, paper, env=_env(fake, paper), settings=_settings()) as client:
        open_doc(client, tex_path)
        open_doc(client, bib_path)
        _, bib_diags = await _verified(client, u_tex, u_bib)
        (dm,) = _keyed(bib_diags, "DOI_MISMATCH", "eyal2014majority")
        fix = next(a for a in await _actions(client, u_bib, dm) if a.title.startswith("Fix DOI"))
        assert fix.edit is not None
        new_bib = apply_text_edits(bib, edits_for(fix.edit, u_bib))
        _save(client, bib_path, new_bib, 2)

        def gone(ds: Sequence[lsp.Diagnostic]) -> bool:
            return not [d for d in ds if isinstance(d.data, dict)
                        and d.data.get("key") == "eyal2014majority"]

        await diagnostics(client, u_bib, lambda ds: gone(ds) and all(_ver(d) == 2 for d in ds),
                          5)
        await diagnostics(client, u_tex, gone, 5)


async def test_stale_diagnostics_get_no_quick_fix_and_edits_during_verification(
    preset: str, paper: Path, fake: ScholarlyFake
) -> None:
    """Edits while verification runs: the final diagnostics are for the last version;
    a quick fix asked for with an older diagnostic is not offered."""
    tex_path, bib_path = paper / "Paper.tex", paper / "Biblio.bib"
    tex = tex_path.read_text(encoding="utf-8")
    u_tex = uri(tex_path)
    fake.set_mode("s2", "stall", stall_s=0.4)
    async with session(preset, paper, env=_env(fake, paper), settings=_settings()) as client:
        open_doc(client, tex_path)
        last = tex
        for version in range(2, 7):  # typing while the seeded entries are verified
            await asyncio.sleep(0.15)
            last = last.replace("Seeded:", f"Seeded{version}:", 1) if version == 2 else \
                last.replace(f"Seeded{version - 1}:", f"Seeded{version}:", 1)
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=version, uri=u_tex),
                [lsp.TextDocumentContentChangeWholeDocument(text=last)]))
        fake.set_mode("s2", "ok")
        diags = await diagnostics(client, u_tex, lambda ds: bool(
            _keyed(ds, "NOT_FOUND", "fabricated2022")) and all(_ver(d) == 6 for d in ds), 30)
        await wait_for(lambda: _progress_ended(client), 20, "the end of the progress")
        await asyncio.sleep(0.3)
        assert all(_ver(d) == 6 for d in client.diagnostics[u_tex])
        d = _keyed(diags, "NOT_FOUND", "fabricated2022")[0]
        assert await _actions(client, u_tex, d)  # current: offered
        old = lsp.Diagnostic(range=d.range, message=d.message, code=d.code, source=d.source,
                             data={**d.data, "version": 5})  # type: ignore[dict-item]
        assert await _actions(client, u_tex, old) == []  # stale: not offered
        assert bib_path.exists()


async def test_hover_and_completion_answer_while_a_source_stalls_or_is_down(
    preset: str, paper: Path, fake: ScholarlyFake
) -> None:
    tex_path = paper / "Paper.tex"
    tex = tex_path.read_text(encoding="utf-8")
    (line, col, _, _) = _cite_ranges(tex, "eyal2014majority")[0]
    fake.set_mode("s2", "stall", stall_s=10)
    fake.set_mode("crossref", "down")
    async with session(preset, paper, env=_env(fake, paper),
                       settings=_settings(requestTimeoutS=8.0)) as client:
        u = open_doc(client, tex_path)
        await diagnostics(client, u)
        await wait_for(lambda: any(client.progress_reports.values()), 10, "verification")
        for _ in range(3):
            # S2 stalls 10 s and the request timeout is 8 s: an answer at all (within 5 s,
            # a hang guard) is one that did not wait for the sources
            hover = await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(
                lsp.TextDocumentIdentifier(u), lsp.Position(line, col + 1))), 5)
            assert hover is not None and "Majority is not enough" in json.dumps(
                hover.contents.value if isinstance(hover.contents, lsp.MarkupContent) else "")
            completion = await asyncio.wait_for(client.text_document_completion_async(
                lsp.CompletionParams(lsp.TextDocumentIdentifier(u),
                                     lsp.Position(line, col + 3))), 5)
            assert isinstance(completion, lsp.CompletionList)
            assert "eyal2014majority" in [i.label for i in completion.items]
            await asyncio.sleep(0.2)
