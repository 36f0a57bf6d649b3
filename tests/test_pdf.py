"""``citelens check paper.pdf``: the printed reference list of a PDF read and verified like a
.bib, with where each reference was printed; a PDF that cannot be read says so in one line
and never passes. The PDFs are LaTeX output in seven BibTeX styles (``tests/data/pdf``,
made by its ``make.py``); expected references come from the .bbl BibTeX wrote and from
``refs.bib``, not from CiteLens."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from citelens.documents.pdf.extract import is_heading, reference_start
from citelens.documents.pdf.fields import read_fields
from citelens.documents.pdf.hyphens import SOFT_BREAK, hyphen_readings, one_reading
from citelens.documents.pdf.layout import join_lines
from citelens.documents.pdf.read import read_pdf
from tests.fakes.scholarly import ScholarlyFake
from tests.harness import ROOT

DATA = ROOT / "tests" / "data" / "pdf"
MADE: dict[str, dict[str, Any]] = json.loads((DATA / "expected.json").read_text(encoding="utf-8"))
#: Each PDF's printed references in order: (the label a reader sees, the .bib key).
EXPECTED: dict[str, list[list[str]]] = {name: pdf["references"] for name, pdf in MADE.items()}
#: The PDFs of the BibTeX styles in the article class (read as before issue 40).
ARTICLE = sorted(n for n, pdf in MADE.items() if pdf["template"] in {"plain", "ieeetr", "alpha", "apalike",
                 "plainnat", "acm", "unsrt", "plainnat-lineno"} and pdf["fonts"] == "type1")
BIB = (DATA / "refs.bib").read_text(encoding="utf-8")
TITLES = {
    m.group(1): re.sub(r"[{}]", "", m.group(2))
    for m in re.finditer(r"@\w+\{(\w+),.*?title = \{(.*?)\},\n", BIB, re.S)
}
FABRICATED = {"doe2021recursive", "zhang2007matplotlib", "miller2019deep"}


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


@pytest.mark.parametrize("name", ARTICLE)
def test_every_printed_reference_is_found_with_its_label_and_title(name: str) -> None:
    reading = read_pdf(str(DATA / f"{name}.pdf"))
    assert reading.error is None
    expected = EXPECTED[name]
    assert len(reading.references) == len(expected)
    assert [r.label for r in reading.references] == [lab for lab, _key in expected]
    right = [
        key for r, (_lab, key) in zip(reading.references, expected, strict=True)
        if _norm(read_fields(r.text).title) == _norm(TITLES[key])
    ]
    # one title holds a full stop ("... periodogram. A new formalism ...") and is read up to it
    missed = {key for _lab, key in expected} - set(right)
    assert missed <= {"zechmeister2009generalised"}, missed
    assert all(r.page >= 1 for r in reading.references)


#: The publishers' templates, review copies and Type 3 PDFs (issue 40), each with an appendix
#: after its list (or a numbering that skips or repeats).
TEMPLATES = sorted(set(MADE) - set(ARTICLE))
#: Text of the appendices make.py puts after the list (some of it reads like a reference).
APPENDIX_TEXT = re.compile(
    r"Lorem|ipsum|Proof of Theorem|Smith and Jones|Doe, J\. and Roe|A sentence that reads|Training details|"
    r"bracketed note|Question:|Checklist|Supplementary|Appendix|Technical Appendices",
    re.IGNORECASE,
)


def _printed_labels(name: str) -> list[str]:
    """The labels as the reader names them: a number printed twice gets " (2)"."""
    seen: dict[str, int] = {}
    out = []
    for label, _key in EXPECTED[name]:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_and_review_copy_is_read_up_to_its_appendix(name: str) -> None:
    """ACL, ICLR and NeurIPS review copies (margin line numbers), IEEEtran, LNCS, acmart,
    Elsevier, APA, Type 3 fonts: every printed reference read once, with its label and its
    title as printed; the appendix, checklist or supplementary material after the list is
    never read as a reference, nor joined to the last one."""
    reading = read_pdf(str(DATA / f"{name}.pdf"))
    assert reading.error is None, reading.error
    refs = reading.references
    assert [r.label for r in refs] == _printed_labels(name)
    for r, (_label, key) in zip(refs, EXPECTED[name], strict=True):
        assert _norm(TITLES[key]) in _norm(r.text), (key, r.text)
        assert not APPENDIX_TEXT.search(r.text), (r.label, r.text)
        assert not re.search(r"[\x00-\x1f\x7f-\x9f]", r.text), (r.label, r.text)  # no font codes


def test_review_copies_line_numbers_are_not_read_as_text() -> None:
    """lineno, ICLR's ruler and ACL's numbers in both margins: every number in a reference
    is one its .bib entry holds (year, volume, pages, identifiers), none is a line number."""
    entries = {m.group(1): m.group(0) for m in re.finditer(r"@\w+\{(\w+),.*?\n\}", BIB, re.S)}
    for name in ("acl-review-2col", "iclr-review-1col", "neurips-review-1col", "plainnat-lineno-1col"):
        refs = read_pdf(str(DATA / f"{name}.pdf")).references
        for r, (_label, key) in zip(refs, EXPECTED[name], strict=True):
            known = {n.lstrip("0") for n in re.findall(r"\d+", entries[key])}
            stray = [n for n in re.findall(r"\d+", r.text) if n.lstrip("0") not in known]
            assert not stray, (name, r.label, stray, r.text)


def test_type3_ligatures_dashes_and_accents_are_read() -> None:
    """T1-encoded Computer Modern without cm-super: Type 3 fonts whose ligatures, dashes and
    accents carry no Unicode ("e cient" was read for "efficient")."""
    for name in ("plain-type3-gap-1col", "unsrt-type3-repeat-2col"):
        texts = " ".join(one_reading(r.text) for r in read_pdf(str(DATA / f"{name}.pdf")).references)
        assert "Definition of the flexible image transport system" in texts
        assert "Normalized and differential convolution" in texts
        assert "Fundamental algorithms for scientific computing" in texts
        assert "Doe and Kimberly Fairfield" in texts
        assert "13(2):31–39" in texts  # an en dash, not a control code
        assert "Kürster" in texts


def test_a_numbering_gap_or_a_repeated_number_keeps_every_reference() -> None:
    """``[1] [2] [4]``: the references after the gap are read, not folded into [2]; a number
    printed twice names two references."""
    gap = read_pdf(str(DATA / "plain-type3-gap-1col.pdf")).references
    assert [r.label for r in gap][:4] == ["[1]", "[2]", "[4]", "[5]"] and len(gap) == 19
    repeat = read_pdf(str(DATA / "unsrt-type3-repeat-2col.pdf")).references
    assert [r.label for r in repeat][:5] == ["[1]", "[2]", "[3]", "[3] (2)", "[4]"] and len(repeat) == 19
    assert repeat[3].text.startswith("Henry S. Frank. The structure of ordinary water.")


def test_headings_in_small_capitals_or_letter_spaced() -> None:
    headings = ("R EFERENCES", "7 R EFERENCES", "R E F E R E N C E S", "B IBLIOGRAPHY", "Literature Cited")
    for heading in headings:
        assert is_heading(heading), heading
    assert not is_heading("A Proof of Theorem 1") and not is_heading("R EFERENCE MANAGERS COMPARED")


def test_fields_as_printed_identifiers_and_accents() -> None:
    reading = read_pdf(str(DATA / "plainnat-2col.pdf"))
    by = {r.label: read_fields(r.text) for r in reading.references}
    assert by["Lomb 1976"].doi == "10.1007/BF00648343"  # the DOI was broken after its "/"
    assert by["Knutsson and Westin 1993"].doi == "10.1109/CVPR.1993.341081"  # broken after "10."
    assert by["van Dokkum 2001"].arxiv == "astro-ph/0108003"
    assert by["Zechmeister and Kürster 2009"].families == ["Zechmeister", "Kürster"]  # K¨urster composed
    assert by["Virtanen et al. 2020"].authors_cut
    assert by["Virtanen et al. 2020"].title.startswith("SciPy 1.0")
    assert by["Hunter 2007"].year == 2007 and by["Hunter 2007"].venue == "Computing in Science & Engineering"


def test_line_ends_ligatures_and_running_headers() -> None:
    # a hyphen printed at a line end between letters is marked, not decided: the verdict
    # reads it against the candidates' titles; one reading (what is shown and searched)
    # drops it before a lower-case letter and keeps it before a capital
    joined = join_lines(["Definition of the ﬂexible image trans-", "port system"])
    assert joined == f"Definition of the flexible image trans{SOFT_BREAK}port system"
    assert one_reading(joined) == "Definition of the flexible image transport system"
    assert hyphen_readings(joined)[1] == "Definition of the flexible image trans-port system"
    joined = join_lines(["The generalised Lomb-", "Scargle periodogram"])
    assert one_reading(joined) == "The generalised Lomb-Scargle periodogram"
    assert join_lines(["the red-green-", "blue model"]) == "the red-green-blue model"
    # an accent set over a dotless i (TeX's \\'{\\i}) is the letter's own dot: "í", not "ı́"
    assert join_lines(["J. Rodr\u00b4\u0131guez and A. Mu\u02dc\u0131noz."]) == "J. Rodríguez and A. Muĩnoz."
    # an accent kerned into a word leaves a wide space before it ("Jo  ´os"), not a word break
    joined = join_lines(["Luc Fournier and B´ela Jo  ´os. Lattice", "model"])
    assert joined == "Luc Fournier and Béla Joós. Lattice model"
    assert join_lines(["Les ´etudes"]) == "Les études"
    assert join_lines(["doi: 10.1038/s41592-", "019-0686-2."]) == "doi: 10.1038/s41592-019-0686-2."
    # "References" on every page of the list (a running header) and once in the contents
    assert reference_start([False, True, False, False, True, True, True]) == 4
    assert reference_start([False, False]) is None


# ------------------------------------------------------------------ bad input: one line each


def _pdf_not_read(tmp_path: Path, pdf: Path) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "citelens", "check", str(pdf), "--no-verify", "--format", "json"],
        capture_output=True, text=True, timeout=200, check=False, cwd=tmp_path,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1, proc.stdout  # never passes
    report = json.loads(proc.stdout)
    assert report["entries"] == []
    return [d for d in report["diagnostics"] if d["code"] == "PDF_NOT_READ"]


def _blank_pdf(path: Path, pages: int = 1) -> Path:
    import pypdf

    w = pypdf.PdfWriter()
    for _ in range(pages):
        w.add_blank_page(612, 792)
    with path.open("wb") as fh:
        w.write(fh)
    return path


def test_a_scanned_pdf_with_no_text_layer(tmp_path: Path) -> None:
    (d,) = _pdf_not_read(tmp_path, _blank_pdf(tmp_path / "scan.pdf"))
    assert "no text layer" in d["message"] and d["severity"] == "error"


def test_an_encrypted_pdf(tmp_path: Path) -> None:
    import pypdf

    w = pypdf.PdfWriter(clone_from=str(DATA / "plain-1col.pdf"))
    w.encrypt("secret", algorithm="RC4-128")
    with (tmp_path / "locked.pdf").open("wb") as fh:
        w.write(fh)
    (d,) = _pdf_not_read(tmp_path, tmp_path / "locked.pdf")
    assert "encrypted" in d["message"]


@pytest.mark.parametrize("content", [b"%PDF-1.7\n1 0 obj << /Type /Catalog", b"", b"not a pdf at all"])
def test_a_corrupt_or_truncated_pdf(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "bad.pdf").write_bytes(content)
    (d,) = _pdf_not_read(tmp_path, tmp_path / "bad.pdf")
    assert "not a valid PDF" in d["message"]


def test_a_pdf_with_no_reference_section(tmp_path: Path) -> None:
    from tests.fakes.scholarly import tiny_pdf

    (tmp_path / "essay.pdf").write_bytes(tiny_pdf(["An essay with no references.", "It ends here."]))
    (d,) = _pdf_not_read(tmp_path, tmp_path / "essay.pdf")
    assert "no reference section" in d["message"]


def test_a_pdf_of_thousands_of_pages_is_read_within_its_limits(tmp_path: Path) -> None:
    (d,) = _pdf_not_read(tmp_path, _blank_pdf(tmp_path / "huge.pdf", pages=5000))
    assert "no text layer" in d["message"]  # the first 2,000 pages were read, none has text


# ------------------------------------------------------------------ end to end


def _check(tmp_path: Path, fake: ScholarlyFake, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **fake.env(cache=tmp_path / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "citelens", "check", *args],
        env=env, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path,
    )


def test_check_a_pdf_json_and_sarif_say_where_each_reference_was_printed(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    pdf = DATA / "ieeetr-2col.pdf"
    proc = _check(tmp_path, scholarly_server, str(pdf), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    entries = {e["key"]: e for e in report["entries"]}
    keys = [k for _lab, k in EXPECTED["ieeetr-2col"]]
    assert list(entries) == [f"[{n}]" for n in range(1, len(keys) + 1)]
    for n, key in enumerate(keys, 1):
        e = entries[f"[{n}]"]
        assert e["source"] == "pdf" and e["page"] >= 1 and e["file"].endswith("ieeetr-2col.pdf")
        assert _norm(TITLES[key]) in _norm(e["raw"])
    fabricated = {f"[{n}]" for n, key in enumerate(keys, 1) if key in FABRICATED}
    flagged = {
        d["key"] for d in report["diagnostics"]
        if d["severity"] in ("warning", "error")
        and d["code"] in ("NOT_FOUND", "METADATA_MISMATCH", "DOI_MISMATCH")
    }
    assert flagged == fabricated
    assert all(d.get("source") == "pdf" and d.get("page") for d in report["diagnostics"])

    sarif = json.loads(_check(tmp_path, scholarly_server, str(pdf), "--format", "sarif").stdout)
    results = sarif["runs"][0]["results"]
    assert results
    for r in results:
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"].endswith("ieeetr-2col.pdf")
        assert loc["region"]["properties"]["page"] >= 1 and loc["region"]["snippet"]["text"]

    text = _check(tmp_path, scholarly_server, str(pdf)).stdout
    # named by its title as printed (issue 43)
    named = r"\[18\] “Recursive neural symbolic[^”]*”"
    assert re.search(rf"ieeetr-2col\.pdf: page \d, {named}: warning NOT_FOUND", text), text


def test_a_venue_reads_a_paper_that_is_only_a_pdf_and_prefers_sources(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    v = tmp_path / "venue"
    only = v / "only-pdf"
    only.mkdir(parents=True)
    (only / "paper.pdf").write_bytes((DATA / "plain-1col.pdf").read_bytes())
    both = v / "sources-and-pdf"
    both.mkdir()
    (both / "refs.bib").write_text(
        "@article{water, title={The Structure of Ordinary Water}, author={Frank, Henry S.}, year={1970},"
        " journal={Science}}\n"
    )
    (both / "main.tex").write_text(
        "\\documentclass{article}\\begin{document}\\cite{water}\\bibliography{refs}\\end{document}\n"
    )
    (both / "main.pdf").write_bytes((DATA / "plain-1col.pdf").read_bytes())
    _blank_pdf(v / "scanned.pdf")
    out = tmp_path / "out"
    proc = _check(tmp_path, scholarly_server, str(v), "--venue", str(out))
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = {x["paper"]: x for x in map(json.loads, (out / "summary.jsonl").read_text().splitlines())}
    assert lines["only-pdf"]["entries"] == 19 and lines["only-pdf"]["read_from"] == "the PDF"
    assert lines["only-pdf"]["likely_fabricated"] >= 2
    assert lines["sources-and-pdf"]["entries"] == 1 and lines["sources-and-pdf"]["read_from"] == "the sources"
    assert "no text layer" in lines["scanned.pdf"]["not_read"][0]
    page = (out / "summary.html").read_text()
    assert "NOT READ" in page and "from the PDF" in page
    paper_page = (out / "papers" / "only-pdf.html").read_text()
    assert "paper.pdf, page" in paper_page and "read from the PDF" in paper_page
    assert "Recursive neural symbolic gradient networks" in paper_page  # the reference as printed
    assert "@article{ref" not in paper_page  # not the BibTeX the engine read


def test_check_every_template_flags_exactly_the_fabricated_references(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    """``citelens check`` on the publishers' templates and review copies (one run over all
    of them): in each PDF the three fabricated references are flagged and no real one is,
    and no line of the appendix after the list is an entry."""
    names = [n for n in TEMPLATES if MADE[n]["fonts"] == "type1"]
    proc = _check(tmp_path, scholarly_server, *(str(DATA / f"{n}.pdf") for n in names), "--format", "json")
    assert "Traceback" not in proc.stderr, proc.stderr
    report = json.loads(proc.stdout)
    wrong = []
    for name in names:
        entries = [e for e in report["entries"] if e["file"].endswith(f"{name}.pdf")]
        if len(entries) != len(EXPECTED[name]):
            wrong.append((name, f"{len(entries)} entries"))
            continue
        fabricated = {
            e["key"] for e, (_label, key) in zip(entries, EXPECTED[name], strict=True) if key in FABRICATED
        }
        flagged = {
            d["key"] for d in report["diagnostics"]
            if d.get("file", "").endswith(f"{name}.pdf") and d["severity"] in ("warning", "error")
            and d["code"] in ("NOT_FOUND", "METADATA_MISMATCH", "DOI_MISMATCH")
        }
        if flagged != fabricated:
            wrong.append((name, f"flagged {sorted(flagged)}, fabricated {sorted(fabricated)}"))
    assert not wrong, wrong


def test_fix_never_writes_into_a_pdf(tmp_path: Path, scholarly_server: ScholarlyFake) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes((DATA / "ieeetr-2col.pdf").read_bytes())
    before = pdf.read_bytes()
    proc = _check(tmp_path, scholarly_server, str(pdf), "--fix", "--unsafe-fixes")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "a PDF is never edited" in proc.stderr
    assert pdf.read_bytes() == before


def test_a_reader_that_takes_too_long_is_one_line(tmp_path: Path) -> None:
    from citelens.documents.pdf.extract import extract_lines

    got = extract_lines(str(DATA / "plain-1col.pdf"), timeout=0.001)
    assert got.error is not None and "took longer than" in got.error and got.lines is None


def test_a_pdf_bomb_of_nested_objects_is_one_line(tmp_path: Path) -> None:
    """A page tree nested 20,000 deep and an array nested 100,000 deep: PDFium refuses
    them in the child process; the check says so and goes on."""
    objs = ["<< /Type /Catalog /Pages 2 0 R /Deep " + "[" * 100_000 + "]" * 100_000 + " >>"]
    objs += [f"<< /Type /Pages /Kids [{n + 1} 0 R] /Count 1 >>" for n in range(2, 20_002)]
    objs.append("<< /Type /Page /MediaBox [0 0 612 792] >>")
    out = b"%PDF-1.7\n"
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{o}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    (tmp_path / "bomb.pdf").write_bytes(out)
    (d,) = _pdf_not_read(tmp_path, tmp_path / "bomb.pdf")
    assert d["message"].startswith("PDF not read: ") and "\n" not in d["message"]
