"""Retracted, corrected and questioned papers, against the fake APIs.

The papers are built from the recorded Crossref work of 10.1073/pnas.1414271111
(which carries a real ``correction`` in ``updated-by``); the retraction and the
expression of concern are that same recorded update with another ``type``,
``source`` and notice DOI, served by the fake in Crossref's, OpenAlex's and
PubMed's own formats.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Union

import pytest
from lsprotocol import types as lsp

from citelens.core.findings import Severity
from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.sources.transport import Sources
from citelens.verify.cache import VerificationCache
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Status, Verification
from citelens.workspace.check import run_check
from citelens.workspace.pipeline import Pipeline
from citelens.workspace.report import has_errors, to_json, to_sarif
from tests.fakes.scholarly import ScholarlyFake, fast_rates, running
from tests.harness import FIXTURES
from tests.lsp_session import PRESETS, diagnostics, open_doc, rng, session, wait_for

NOTICE = "10.1073/pnas.2400001121"


@functools.cache
def recorded() -> dict[str, Any]:
    """The recorded Crossref work of the PNAS paper (read when a test first needs it, so a
    missing file fails that test, not the collection of the whole suite)."""
    path = FIXTURES / "apis" / "crossref" / "work_10.1073_pnas.1414271111.json"
    message: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["message"]
    return message


def recorded_update(**change: Any) -> dict[str, Any]:
    """The recorded ``updated-by`` item of the PNAS work, with some keys changed."""
    item = dict(recorded()["updated-by"][0])
    item.update(change)
    return item


def retraction() -> dict[str, Any]:
    """A retraction notice of the PNAS work, as Crossref gives it (Retraction Watch)."""
    return recorded_update(
        type="retraction", label="Retraction", source="retraction-watch", DOI=NOTICE,
        **{"record-id": "51234", "updated": {"date-parts": [[2024, 3, 18]],
                                             "date-time": "2024-03-18T00:00:00Z",
                                             "timestamp": 1710720000000}})


def pnas_paper(**extra: Any) -> dict[str, Any]:
    """The recorded PNAS work as a fake paper (its own correction unless replaced)."""
    paper = {
        "title": recorded()["title"][0],
        "authors": [f"{a['given']} {a['family']}" for a in recorded()["author"]],
        "year": recorded()["issued"]["date-parts"][0][0],
        "venue": recorded()["container-title"][0],
        "doi": recorded()["DOI"],
        "volume": recorded().get("volume"),
        "updated_by": [dict(u) for u in recorded()["updated-by"]],
    }
    paper.update(extra)
    return paper


def bib_entry(key: str, paper: dict[str, Any], *, doi: bool = True, s2: str | None = None,
              pmid: str | None = None) -> str:
    authors = " and ".join(f"{a.split()[-1]}, {' '.join(a.split()[:-1])}"
                           for a in paper["authors"])
    lines = [f"@article{{{key},", f"  title = {{{paper['title']}}},", f"  author = {{{authors}}},",
             f"  journal = {{{paper['venue']}}},", f"  year = {{{paper['year']}}},"]
    if doi:
        lines.append(f"  doi = {{{paper['doi']}}},")
    if s2:
        lines.append(f"  s2id = {{{s2}}},")
    if pmid:
        lines.append(f"  pmid = {{{pmid}}},")
    return "\n".join(lines) + "\n}\n"


def verify(fake: ScholarlyFake, bib: str, cache: VerificationCache | None = None,
           **settings: Any) -> dict[str, Verification]:
    views = [entry_view(e) for e in parse_bib(bib, "refs.bib").entries]
    s = fake.settings(**settings)

    async def go() -> dict[str, Verification]:
        sources = Sources.from_settings(s, rates=fast_rates())
        try:
            return await verify_entries(views, s, sources=sources,
                                        cache=cache if cache is not None else VerificationCache(None))
        finally:
            await sources.aclose()

    return asyncio.run(go())


@pytest.fixture
def fake() -> Iterator[ScholarlyFake]:
    with running([]) as server:  # only the papers a test adds
        yield server


def test_the_recorded_correction_is_information_with_its_notice(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    paper = fake.add_paper(pnas_paper())
    # S2's batch matched it; Crossref's batch by DOI brings the recorded correction
    v = verify(fake, bib_entry("pnas", paper))["pnas"]
    assert v.status is Status.VERIFIED
    assert [(n["kind"], n.get("doi"), n.get("date"), n["source"]) for n in v.notices] == [
        ("correction", "10.1073/pnas.1507001112", "2015-05-04", "publisher")]
    result = check(fake, tmp_path, bib_entry("pnas", paper))
    corrections = [f for f in result.findings if f.code == "CORRECTION"]
    assert [(f.severity, f.path.endswith(".bib")) for f in corrections] == [
        (Severity.INFORMATION, True)]  # on the entry, not at the citation
    assert "10.1073/pnas.1507001112" in corrections[0].message
    assert not has_errors(result)
    assert not [f for f in result.findings if f.severity in (Severity.ERROR, Severity.WARNING)]


def test_retracted_paper_found_by_doi_names_the_notice(fake: ScholarlyFake) -> None:
    paper = fake.add_paper(pnas_paper(updated_by=[recorded()["updated-by"][0], retraction()]))
    fake.clear_log()
    v = verify(fake, bib_entry("pnas", paper))["pnas"]
    assert v.status is Status.VERIFIED  # the reference is right; the paper is retracted
    top = v.notices[0]
    assert (top["kind"], top["doi"], top["date"], top["source"], top["record_id"]) == (
        "retraction", NOTICE, "2024-03-18", "retraction-watch", "51234")
    # S2's batch matched it; one Crossref batch request by DOI gave the notices
    counts = fake.counts()
    assert (counts["s2"], counts["crossref"], counts["openalex"]) == (1, 1, 0)


def test_retracted_paper_found_by_s2_id(fake: ScholarlyFake) -> None:
    paper = fake.add_paper(pnas_paper(updated_by=[retraction()]))
    v = verify(fake, bib_entry("pnas", paper, doi=False, s2=paper["s2_paper_id"]))["pnas"]
    assert v.status is Status.VERIFIED
    assert (v.notices[0]["kind"], v.notices[0]["doi"]) == ("retraction", NOTICE)


@pytest.mark.parametrize("known_to", [["s2", "crossref"], ["crossref"], ["s2", "crossref",
                                                                       "openalex"]])
def test_retracted_paper_found_by_title_search(fake: ScholarlyFake, known_to: list[str]
                                               ) -> None:
    paper = fake.add_paper(pnas_paper(updated_by=[retraction()], sources=[*known_to, "doi"]))
    v = verify(fake, bib_entry("pnas", paper, doi=False))["pnas"]
    assert v.status is Status.VERIFIED, v.summary
    assert (v.notices[0]["kind"], v.notices[0]["doi"], v.notices[0]["source"]) == (
        "retraction", NOTICE, "retraction-watch")


def test_retracted_per_openalex_alone_says_so(fake: ScholarlyFake, tmp_path: Path) -> None:
    paper = fake.add_paper(pnas_paper(updated_by=[retraction()], sources=["openalex", "doi"]))
    v = verify(fake, bib_entry("pnas", paper, doi=False))["pnas"]
    assert v.status is Status.VERIFIED, v.summary
    assert v.notices == [{"kind": "retraction", "source": "openalex"}]
    result = check(fake, tmp_path, bib_entry("pnas", paper, doi=False))
    assert {f.message.removeprefix("pnas: ") for f in result.findings
            if f.code == "RETRACTED"} == {
        "Retracted: retraction (per OpenAlex; the notice is not named); do not cite it as "
        "valid work"}


def test_withdrawal_is_reported_as_a_retraction(fake: ScholarlyFake, tmp_path: Path) -> None:
    withdrawal = recorded_update(type="withdrawal", label="Withdrawal", DOI=NOTICE)
    paper = fake.add_paper(pnas_paper(updated_by=[withdrawal]))
    result = check(fake, tmp_path, bib_entry("pnas", paper))
    retracted = [f for f in result.findings if f.code == "RETRACTED"]
    # one problem, on the entry, the citation a related place
    assert len(retracted) == 1 and retracted[0].severity is Severity.ERROR
    assert [r.path.rsplit(".", 1)[-1] for r in retracted[0].related] == ["tex"]
    assert retracted[0].message.startswith("Withdrawn: withdrawal notice " + NOTICE)


def test_retracted_by_pubmed_alone(fake: ScholarlyFake) -> None:
    paper = fake.add_paper(pnas_paper(updated_by=[], is_retracted=True, pmid="25313079",
                                      retraction_notice_pmid="38000001",
                                      sources=["pubmed", "doi"]))
    v = verify(fake, bib_entry("pnas", paper, doi=False, pmid="25313079"))["pnas"]
    assert v.status is Status.VERIFIED, v.summary
    assert (v.notices[0]["kind"], v.notices[0]["source"], v.notices[0]["pmid"]) == (
        "retraction", "pubmed", "38000001")


def check(fake: ScholarlyFake, folder: Path, bib: str) -> Any:
    (folder / "refs.bib").write_text(bib, encoding="utf-8")
    key = bib.split("{", 1)[1].split(",", 1)[0]
    tex = folder / "paper.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\nAs shown~\\cite{" + key
                   + "}.\n\\bibliography{refs}\n\\end{document}\n", encoding="utf-8")
    async def go() -> Any:
        pipeline = Pipeline(fake.settings(cache_dir=str(folder / "cache")))
        try:
            return await run_check([str(tex)], pipeline)
        finally:
            await pipeline.aclose()

    return asyncio.run(go())


def test_check_reports_retraction_as_error_with_the_notice_in_json_and_sarif(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    paper = fake.add_paper(pnas_paper(updated_by=[recorded()["updated-by"][0], retraction()]))
    result = check(fake, tmp_path, bib_entry("pnas", paper))
    assert has_errors(result)  # citelens check exits 1
    by_code = sorted((f.code, f.path.rsplit(".", 1)[-1], f.severity.value)
                     for f in result.findings)
    # one problem at the entry, the citation related; the older correction is not repeated
    assert by_code == [("RETRACTED", "bib", "error")]
    assert [r.path.rsplit(".", 1)[-1] for r in result.findings[0].related] == ["tex"]
    report = to_json(result)
    (entry,) = report["entries"]
    assert entry["notices"][0]["doi"] == NOTICE
    for d in report["diagnostics"]:
        assert d["notice"]["doi"] == NOTICE and d["notice"]["source"] == "retraction-watch"
        assert f"retraction notice {NOTICE} (2024-03-18, per Retraction Watch)" in d["message"]
    sarif = to_sarif(result)["runs"][0]["results"]
    assert {r["level"] for r in sarif} == {"error"}
    assert all(r["properties"]["notice"]["doi"] == NOTICE for r in sarif)
    assert all(r["properties"]["noticeUrl"] == f"https://doi.org/{NOTICE}" for r in sarif)


def test_expression_of_concern_is_a_warning(fake: ScholarlyFake, tmp_path: Path) -> None:
    concern = recorded_update(type="expression_of_concern", label="Expression of Concern",
                              DOI="10.1073/pnas.2300000120")
    paper = fake.add_paper(pnas_paper(updated_by=[concern]))
    result = check(fake, tmp_path, bib_entry("pnas", paper))
    found = [(f.code, f.severity, len(f.related)) for f in result.findings]
    assert found == [("EXPRESSION_OF_CONCERN", Severity.WARNING, 1)]  # the citation related
    assert all("10.1073/pnas.2300000120" in f.message for f in result.findings)
    assert not has_errors(result)


def test_a_retraction_after_the_answer_was_cached_is_seen_once_it_is_too_old(
        fake: ScholarlyFake, tmp_path: Path) -> None:
    paper = fake.add_paper(pnas_paper(updated_by=[]))
    bib = bib_entry("pnas", paper)
    now = [1_800_000_000.0]
    day = 86400.0

    def cache() -> VerificationCache:
        return VerificationCache(tmp_path / "cache", found_max_age_s=30 * day,
                                 clock=lambda: now[0])

    first = verify(fake, bib, cache())["pnas"]
    assert first.status is Status.VERIFIED and first.notices == []
    paper["updated_by"] = [retraction()]  # the paper is retracted the next week
    now[0] += 7 * day
    fake.clear_log()
    cached = verify(fake, bib, cache())["pnas"]
    assert cached.notices == [] and sum(fake.counts().values()) == 0  # within the max age
    now[0] += 24 * day  # 31 days after the first check
    later = verify(fake, bib, cache())["pnas"]
    assert later.status is Status.VERIFIED
    assert (later.notices[0]["kind"], later.notices[0]["doi"]) == ("retraction", NOTICE)
    assert fake.counts()["s2"] == 1  # asked again


def test_requests_stay_batched_for_many_s2_only_papers(fake: ScholarlyFake) -> None:
    papers = [fake.add_paper({"title": f"A study of retraction signal number {i} in batches",
                              "authors": ["Ann Smith", "Bo Lee"], "year": 2020,
                              "venue": "Journal of Tests", "doi": f"10.5555/retr.{i}",
                              "updated_by": [retraction()] if i == 7 else []})
              for i in range(60)]
    bib = "\n".join(bib_entry(f"p{i}", p) for i, p in enumerate(papers))
    fake.clear_log()
    results = verify(fake, bib)
    assert all(v.status is Status.VERIFIED for v in results.values())
    assert [k for k, v in results.items() if v.notices] == ["p7"]
    counts = fake.counts()
    # one S2 batch, two Crossref batches by DOI (50 + 10)
    assert (counts["s2"], counts["crossref"], counts["openalex"]) == (1, 2, 0)


# --------------------------------------------------------------------------- in the editor

LSP_SETTINGS = {"verificationEnabled": True, "verifyDebounceMs": 30, "s2RequestsPerSecond": 200,
                "requestTimeoutS": 2.0, "retryBackoffS": 0.01, "maxRetries": 1}


@pytest.mark.parametrize("preset", PRESETS)
async def test_editor_flags_the_citation_hovers_the_notice_and_opens_it(
        preset: str, fake: ScholarlyFake, tmp_path: Path) -> None:
    paper = fake.add_paper(pnas_paper(updated_by=[recorded()["updated-by"][0], retraction()]))
    folder = tmp_path / "paper"
    folder.mkdir()
    bib_text = bib_entry("pnas", paper)
    tex_text = ("\\documentclass{article}\n\\begin{document}\nAs shown~\\cite{pnas}.\n"
                "\\bibliography{refs}\n\\end{document}\n")
    (folder / "refs.bib").write_text(bib_text, encoding="utf-8")
    (folder / "paper.tex").write_text(tex_text, encoding="utf-8")
    env = fake.env(cache=tmp_path / "cache")
    async with session(preset, folder, env=env, settings=LSP_SETTINGS) as client:
        shown = client.shown_documents  # pytest-lsp records window/showDocument
        _read_code_actions_like_editors(client)
        u_tex, u_bib = open_doc(client, folder / "paper.tex"), open_doc(client,
                                                                         folder / "refs.bib")

        def retracted(ds: Sequence[lsp.Diagnostic]) -> bool:
            return any(d.code == "RETRACTED" for d in ds)

        tex_diags = await diagnostics(client, u_tex, retracted, timeout=30)
        bib_diags = await diagnostics(client, u_bib, retracted, timeout=30)
        (at_cite,) = [d for d in tex_diags if d.code == "RETRACTED"]
        (at_entry,) = [d for d in bib_diags if d.code == "RETRACTED"]
        cite = tex_text.index("{pnas}") + 1
        assert rng(at_cite) == (2, cite - tex_text.index("As"), 2,
                                cite - tex_text.index("As") + 4)
        assert rng(at_entry) == (0, 9, 0, 13)
        for d in (at_cite, at_entry):
            assert d.severity == lsp.DiagnosticSeverity.Error
            assert f"retraction notice {NOTICE} (2024-03-18, per Retraction Watch)" in d.message
        assert not [d for d in bib_diags if d.code == "CORRECTION"]  # the retraction decides

        hover = await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(u_tex), at_cite.range.start))
        assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
        first = hover.contents.value.split("\n")[0]
        assert first == (f"⛔ **Retracted**: [retraction notice {NOTICE}]"
                         f"(https://doi.org/{NOTICE}), 2024-03-18, per Retraction Watch  ")
        assert "\\" not in hover.contents.value.split("---")[0]  # nothing escaped up there

        for d, u in ((at_entry, u_bib), (at_cite, u_tex)):
            actions = await client.text_document_code_action_async(lsp.CodeActionParams(
                lsp.TextDocumentIdentifier(u), d.range, lsp.CodeActionContext(diagnostics=[d])))
            (action,) = [a for a in actions or [] if isinstance(a, lsp.CodeAction)
                         and a.title == "Open the retraction notice"]
            assert action.command is not None and action.edit is None
            await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
                action.command.command, action.command.arguments))
        await wait_for(lambda: len(shown) == 2, what="window/showDocument")
        assert [(s.uri, s.external) for s in shown] == [(f"https://doi.org/{NOTICE}", True)] * 2


def _read_code_actions_like_editors(client: Any) -> None:
    """lsprotocol reads any code action with a ``command`` as a ``Command``; editors tell
    them apart by the type of ``command`` (a string for a Command). Do the same here."""
    conv = client.protocol._converter

    def hook(obj: Any, _: type) -> lsp.Command | lsp.CodeAction:
        if isinstance(obj.get("command"), str):
            return conv.structure(obj, lsp.Command)  # type: ignore[no-any-return]
        return conv.structure(obj, lsp.CodeAction)  # type: ignore[no-any-return]

    conv.register_structure_hook(lsp.Command | lsp.CodeAction, hook)
    conv.register_structure_hook(Union[lsp.Command, lsp.CodeAction], hook)  # noqa: UP007


# --------------------------------------------------------------------------- the parsers


def test_notices_are_read_from_the_recorded_answers() -> None:
    from citelens.sources import crossref, ncbi, openalex

    assert crossref.to_record(recorded()).notices == [{  # type: ignore[union-attr]
        "kind": "correction", "source": "publisher", "doi": "10.1073/pnas.1507001112",
        "date": "2015-05-04", "label": "Correction"}]
    work = json.loads((FIXTURES / "apis" / "openalex" / "work_doi_10.1073_pnas.1414271111.json")
                      .read_text(encoding="utf-8"))
    assert work["is_retracted"] is False
    assert openalex.to_record(work).notices == []  # type: ignore[union-attr]
    assert openalex.to_record({**work, "is_retracted": True}).notices == [  # type: ignore[union-attr]
        {"kind": "retraction", "source": "openalex"}]
    xml = (FIXTURES / "apis" / "ncbi" / "efetch_pubmed_20412080.xml").read_text(encoding="utf-8")
    records, why = ncbi.parse_efetch(xml)
    assert not why and records and records[0].notices == []
    retracted = xml.replace(
        "</PublicationTypeList>",
        '<PublicationType UI="D016441">Retracted Publication</PublicationType>'
        "</PublicationTypeList>", 1).replace(
        "</MedlineCitation>",
        '<CommentsCorrectionsList><CommentsCorrections RefType="RetractionIn">'
        "<RefSource>J Example. 2011;1:2</RefSource><PMID Version=\"1\">21000001</PMID>"
        "</CommentsCorrections></CommentsCorrectionsList></MedlineCitation>", 1)
    records, why = ncbi.parse_efetch(retracted)
    assert not why and records
    assert records[0].notices == [{"kind": "retraction", "source": "pubmed",
                                   "pmid": "21000001", "label": "J Example. 2011;1:2"}]
