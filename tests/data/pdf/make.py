"""Typesets refs.bib into the test PDFs of this folder, in several BibTeX styles, one and
two columns: ``python tests/data/pdf/make.py`` (needs pdflatex and bibtex: Debian's
texlive-latex-base, texlive-latex-recommended, texlive-latex-extra). The suite reads the
committed PDFs and ``expected.json`` (each PDF's printed labels and the .bib key of each
reference, in printed order, read from the .bbl BibTeX wrote), so it needs no TeX.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: name -> (bibliography style, two columns, extra preamble, \refname); a name with
#: "appendix" has an appendix after the references (its heading ends the list)
VARIANTS = {
    "plain-1col": ("plain", False, "", None),
    "ieeetr-2col": ("ieeetr", True, "", None),
    "alpha-2col": ("alpha", True, "", "Bibliography"),
    "apalike-1col": ("apalike", False, "", None),
    "plainnat-2col": ("plainnat", True, "\\usepackage{natbib}\n", None),
    "acm-1col": ("acm", False, "", None),
    "unsrt-2col": ("unsrt", True, "\\usepackage[numbers]{natbib}\n", None),
    "plainnat-appendix-2col": ("plainnat", True, "\\usepackage{natbib}\n", None),
    # a review copy: every line numbered in the margin
    "plainnat-lineno-1col": (
        "plainnat", False, "\\usepackage{natbib}\n\\usepackage{lineno}\n\\linenumbers\n", None
    ),
}
APPENDIX = r"""
\appendix
\section{Proof of Theorem 1}
Smith and Jones showed this in 2019 \cite{hunter2007matplotlib}. \lipsum[4]
\subsection{Details}
Doe, J. and Roe, R. (2020). A sentence that reads like a reference. \lipsum[5]
"""

BODY = r"""
\section{Introduction}
Transformers \cite{vaswani2017attention} replaced recurrence; tools extend language models
\cite{bran2023augmenting}. Tissue engineering \cite{makris2014developing} and water
\cite{frank1970structure} are unrelated fields cited here for the test. The phenotype ontology
\cite{robinson2010human} and normalized convolution \cite{knutsson1993normalized} follow.
\lipsum[1-2]
\section{Methods}
We plot with Matplotlib \cite{hunter2007matplotlib,zhang2007matplotlib} and compute with SciPy
\cite{virtanen2020scipy} and Cython \cite{behnel2011cython}; files are FITS
\cite{pence2010definition}; colour images follow \cite{lupton2004preparing}.
Periodograms \cite{lomb1976least,zechmeister2009generalised,press1989fast} and cosmic rays
\cite{vandokkum2001cosmic}; robots \cite{calinon2007learning}; folding
\cite{doe2021recursive}; galaxies \cite{miller2019deep}.
\lipsum[3-5]
"""


def tex(style: str, two: bool, preamble: str, refname: str | None, appendix: bool = False) -> str:
    cls = "\\documentclass[10pt,twocolumn]{article}" if two else "\\documentclass[11pt]{article}"
    ref = f"\\renewcommand\\refname{{{refname}}}\n" if refname else ""
    return (
        f"{cls}\n\\pdfcompresslevel=9\n\\pdfobjcompresslevel=2\n"
        f"\\usepackage{{lipsum}}\n\\usepackage{{url}}\n{preamble}{ref}\\pagestyle{{headings}}\n"
        f"\\title{{A Test Paper in the {style} Style}}\n\\author{{CiteLens}}\n\\date{{}}\n"
        f"\\begin{{document}}\n\\section*{{A Test Paper in the {style} Style}}\n{BODY}\n"
        f"\\bibliographystyle{{{style}}}\n\\bibliography{{refs}}\n"
        f"{APPENDIX if appendix else ''}\\end{{document}}\n"
    )


def labels(bbl: str) -> list[tuple[str, str]]:
    """(label as the .bbl gives it, key) of each \\bibitem, in printed order."""
    out = []
    for m in re.finditer(r"\\bibitem(?:\[((?:[^\[\]]|\[[^\]]*\])*)\])?\{([^}]*)\}", bbl):
        out.append((" ".join((m.group(1) or "").split()), m.group(2)))
    return out


def main(argv: list[str]) -> int:
    """``make.py [NAME ...]``: those PDFs only (every one without a name)."""
    out = HERE / "expected.json"
    expected = json.loads(out.read_text(encoding="utf-8")) if argv and out.exists() else {}
    for name, (style, two, preamble, refname) in VARIANTS.items():
        if argv and name not in argv:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            shutil.copy(HERE / "refs.bib", work / "refs.bib")
            source = tex(style, two, preamble, refname, "appendix" in name)
            (work / f"{name}.tex").write_text(source, encoding="utf-8")
            for cmd in (["pdflatex"], ["bibtex"], ["pdflatex"], ["pdflatex"]):
                arg = name if cmd == ["bibtex"] else f"{name}.tex"
                opts = [] if cmd == ["bibtex"] else ["-interaction=nonstopmode", "-halt-on-error"]
                proc = subprocess.run([*cmd, *opts, arg], cwd=work, capture_output=True, text=True)
                if proc.returncode != 0 and cmd != ["bibtex"]:
                    print(proc.stdout[-2000:], file=sys.stderr)
                    return 1
            shutil.copy(work / f"{name}.tex", HERE / f"{name}.tex")
            shutil.copy(work / f"{name}.pdf", HERE / f"{name}.pdf")
            expected[name] = labels((work / f"{name}.bbl").read_text(encoding="utf-8"))
        print(f"{name}.pdf: {(HERE / f'{name}.pdf').stat().st_size // 1024} KB")
    out.write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
