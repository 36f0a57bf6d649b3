"""Parse bounds (issue 32, break 8): repeated unclosed commands are parsed in linear time,
with the same groups as before, and findings of one kind in one file are capped with a
count. Figures: ``python -m benchmarks.bench_pathological --bounds-only``."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from citelens.documents.latex import _balanced, _Groups, parse_latex
from tests.test_hostile_input import check_json

CLOSE = {"{": "}", "[": "]", "(": ")"}


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="{}[]()\\\n \ta", max_size=80), st.sampled_from([3, 12, 4000]))
def test_group_ends_found_in_one_pass_are_those_of_a_scan_from_each_start(text: str, limit: int) -> None:
    """The one-pass table of group ends gives, for every group start, the end the old scan
    from that start gives (escapes, nesting, blank lines, the length limit)."""
    groups = _Groups(text)
    for i, c in enumerate(text):
        if c in CLOSE:
            assert groups.end(i, c, CLOSE[c], limit) == _balanced(text, i, c, CLOSE[c], limit), (text, i)


def test_eighty_thousand_unclosed_cites_on_one_line_do_not_hide_the_citation_after_them() -> None:
    """80,000 unclosed ``\\cite{`` and ``\\cite[`` on one line, then a real citation: it is
    read, at its span (a hang guard: this took 30 s of CPU, 76 s in the attack; now 0.3 s)."""
    for unit in ("\\cite{", "\\cite["):
        text = "\\documentclass{article}\n" + unit * 80_000 + " \\citep[p.~3]{real}\n"
        doc = parse_latex(text, "x.tex")
        assert [(c.key, text[c.span.start:c.span.end]) for c in doc.citations] == [("real", "real")]


def test_findings_of_one_kind_in_a_file_are_capped_with_a_count(tmp_path: Path) -> None:
    """5,000 lone '@' lines: 1,000 BIB_SYNTAX findings are listed, the last saying how many
    more there are; an entry after them is still read. Before: a finding per line (1M lines:
    53 s and 777 MB in the attack)."""
    (tmp_path / "at.bib").write_text("@\n" * 5_000 + "@misc{fine, title={Fine}}\n@article{x y}\n")
    report = check_json("at.bib", cwd=tmp_path)
    syntax = [d for d in report["diagnostics"] if d["code"] == "BIB_SYNTAX"]
    stray = [d for d in syntax if "after '@'" in d["message"]]
    assert len(stray) == 1_000, len(stray)
    assert "(and 4,000 more like this in this file, not listed)" in stray[-1]["message"], stray[-1]
    assert all("more like this" not in d["message"] for d in stray[:-1])
    assert len(syntax) == 1_001  # the other kind of problem is listed on its own
    assert [e["key"] for e in report["entries"]] == ["fine"]


def test_eighty_thousand_unclosed_cites_make_a_thousand_findings_and_a_count(tmp_path: Path) -> None:
    """Each unclosed ``\\cite{`` is an information finding; 80,000 on one line give the
    first 1,000, the last saying how many more, each quoting at most a title's length of
    what follows it. Before, each finding quoted the rest of the line: a MemoryError after
    32 s under a 3 GB limit (the whole line, 80,000 times)."""
    (tmp_path / "u.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\n" + "\\cite{" * 80_000 + "\n\\end{document}\n")
    report = check_json("u.tex", cwd=tmp_path, timeout=120)
    unclosed = [d for d in report["diagnostics"] if "is not closed" in d["message"]]
    assert len(unclosed) == 1_000, len(unclosed)
    assert unclosed[-1]["message"].endswith("(and 79,000 more like this in this file, not listed)")
    assert max(len(d["message"]) for d in unclosed) < 1_000
