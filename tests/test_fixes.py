"""Quick fixes as data (``citelens.fixes``), with no LSP: the findings a session produces,
in, typed fixes (title, edits as path + span + new text, preferred, kind) out, the same a
code action would carry, ready for ``citelens check`` to offer."""

from __future__ import annotations

from pathlib import Path

from citelens.core.codes import Code
from citelens.core.findings import Finding, Severity
from citelens.core.model import Span
from citelens.documents.bibtex.edit import TextEdit, apply_edits
from citelens.documents.bibtex.parse import parse_bib
from citelens.fixes.context import SessionContext
from citelens.fixes.fix import Applicability, Fix, FixKind
from citelens.fixes.rules import fixes_for as _fixes_for
from citelens.sources.records import PaperRecord
from citelens.verify.identity import content_hash
from citelens.verify.match.compare import Discrepancy
from citelens.verify.status import Status, Verification
from citelens.workspace.engine import Engine

BIB = """@inproceedings{eyal,
  title = {Majority is not enough: Bitcoin mining is vulnerable},
  author = {Eyal, Ittay and Sirer, Emin G{\\"u}n},
  year = {2014},
  doi = {10.1109/mcse.2007.55},
}

@article{vaswani,
  title = {Attention Is All You Need},
  author = {Vaswani, Ashish and Shazeer, Noam},
  journal = {arXiv preprint arXiv:1706.03762},
  year = {2017},
}

@inproceedings{attention,
  title = {Attention is all you need},
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki},
  booktitle = {Advances in Neural Information Processing Systems},
  year = {2017},
}
"""
TEX = (
    "\\documentclass{article}\n\\begin{document}\n\\cite{eyal} \\cite{vaswani} \\cite{attention}\n"
    "\\bibliography{refs}\n\\end{document}\n"
)
WRONG = PaperRecord("s2", "Matplotlib: A 2D graphics environment", ["J. D. Hunter"], 2007,
                    doi="10.1109/mcse.2007.55")
RIGHT = PaperRecord("openalex", "Majority Is Not Enough: Bitcoin Mining Is Vulnerable",
                    ["Ittay Eyal", "Emin Gün Sirer"], 2014,
                    "Financial Cryptography and Data Security",
                    doi="10.1007/978-3-662-45472-5_28", publication_types=["Conference"])
PREPRINT = PaperRecord("arxiv", "Attention Is All You Need", ["Ashish Vaswani", "Noam Shazeer"], 2017,
                       "arXiv", arxiv_id="1706.03762", is_preprint=True)
PUBLISHED = PaperRecord("crossref", "Attention is All you Need", [], 2017,
                        "Advances in Neural Information Processing Systems", volume="30")


def fixes_for(session: Engine, path: str, code: str, data: object) -> list[Fix]:
    return _fixes_for(SessionContext(session), path, code, data)


def _session(tmp_path: Path) -> tuple[Engine, str, str]:
    """A project on disk (no editor: no document versions), its verdicts kept."""
    bib, tex = tmp_path / "refs.bib", tmp_path / "main.tex"
    bib.write_text(BIB, encoding="utf-8")
    tex.write_text(TEX, encoding="utf-8")
    session = Engine()
    analysis = session.projects.analyse(str(tex))
    verdicts = {
        "eyal": Verification("eyal", Status.DOI_MISMATCH, "wrong DOI", match=WRONG,
                             discrepancies=[Discrepancy("doi", "identifier", Severity.ERROR, "doi: ...")],
                             candidates=[RIGHT]),
        "vaswani": Verification(
            "vaswani", Status.PARTIAL, "a preprint", match=PREPRINT, versions=[PUBLISHED],
            discrepancies=[Discrepancy("venue", "preprint_status", Severity.INFORMATION,
                                       "venue: the entry cites a preprint", "arXiv preprint arXiv:1706.03762",
                                       PUBLISHED.venue or "", "crossref")]),
    }
    for key, v in verdicts.items():
        entry = analysis.definitions[key][0]
        view = session.entry_view(entry, analysis)
        assert view is not None
        session.verdicts.keep(content_hash(view), v)
    return session, str(bib), str(tex)


def _finding(session: Engine, code: Code, key: str, path: str) -> Finding:
    return next(f for f in session.findings() if f.code is code and f.key == key and f.path == path)


def _applied(session: Engine, fix: Fix) -> dict[str, str]:
    out = {}
    for path in dict.fromkeys(e.path for e in fix.edits):
        edits = [TextEdit(e.span.start, e.span.end, e.new) for e in fix.edits if e.path == path]
        out[path] = apply_edits(session.store.text(path) or "", edits)
    return out


def test_a_doi_mismatch_finding_has_typed_fixes(tmp_path: Path) -> None:
    session, bib, _tex = _session(tmp_path)
    f = _finding(session, Code.DOI_MISMATCH, "eyal", bib)
    fixes = fixes_for(session, f.path, f.code, f.data)
    assert [(x.title, x.preferred, x.kind) for x in fixes] == [
        ("Fix DOI: 10.1007/978-3-662-45472-5_28", True, FixKind.QUICKFIX),
        ("Replace entry with OpenAlex metadata", False, FixKind.QUICKFIX),
    ]
    doi = parse_bib(BIB).by_key()["eyal"][0].fields["doi"].value_span  # the field's value, nothing else
    (edit,) = fixes[0].edits
    assert (edit.path, edit.span) == (bib, Span(doi.start, doi.end))
    assert edit.new == "{10.1007/978-3-662-45472-5_28}"
    assert [x.applicability for x in fixes] == [Applicability.SAFE, Applicability.DISPLAY_ONLY]
    after = _applied(session, fixes[0])[bib]
    assert after == BIB.replace("10.1109/mcse.2007.55", "10.1007/978-3-662-45472-5_28")
    # the same finding at a citation points at the entry: its fixes are the entry's
    at_cite = _finding(session, Code.DOI_MISMATCH, "eyal", _tex)
    assert [x.title for x in fixes_for(session, at_cite.path, at_cite.code, at_cite.data)] == [
        x.title for x in fixes]


def test_a_cited_preprint_is_updated_to_its_published_version(tmp_path: Path) -> None:
    session, bib, _tex = _session(tmp_path)
    f = _finding(session, Code.METADATA_MISMATCH, "vaswani", bib)
    fixes = fixes_for(session, f.path, f.code, f.data)
    assert [(x.title, x.preferred) for x in fixes] == [
        # another version of the paper (venue, type, pages): unsafe, never preferred
        ("Update preprint to published version", False),
        ("Replace entry with arXiv metadata", False),
    ]
    entry = parse_bib(_applied(session, fixes[0])[bib]).by_key()["vaswani"][0]
    assert entry.get("booktitle") == "Advances in Neural Information Processing Systems" or entry.get(
        "journal") == "Advances in Neural Information Processing Systems"
    assert "Vaswani" in (entry.get("author") or "")  # the publisher's record had no authors
    assert _applied(session, fixes[0])[bib].startswith(BIB[: BIB.index("@article")])  # eyal untouched


def test_no_fix_for_another_servers_data_or_a_stale_finding(tmp_path: Path) -> None:
    session, bib, _tex = _session(tmp_path)
    f = _finding(session, Code.DOI_MISMATCH, "eyal", bib)
    assert fixes_for(session, bib, "DOI_MISMATCH", {"something": "else"}) == []
    assert fixes_for(session, bib, "NO_SUCH_CODE", f.data) == []
    session.store.open(bib, BIB, 7)  # now open in an editor, at a version the finding never saw
    assert fixes_for(session, bib, f.code, f.data) == []
    assert fixes_for(session, bib, f.code, {**f.data, "version": 7}) != []


def test_merging_a_duplicate_renames_its_citations(tmp_path: Path) -> None:
    session, bib, tex = _session(tmp_path)
    f = _finding(session, Code.DUPLICATE_ENTRY, "vaswani", bib)
    fixes = fixes_for(session, f.path, f.code, f.data)
    assert [(x.title, x.preferred) for x in fixes] == [
        ("Merge duplicate into attention", False),  # it deletes an entry: never preferred
        ("Merge duplicate into vaswani", False),
    ]
    after = _applied(session, fixes[0])
    assert set(after) == {bib, tex}
    assert list(parse_bib(after[bib]).by_key()) == ["eyal", "attention"]
    assert after[tex] == TEX.replace("\\cite{vaswani}", "\\cite{attention}")
