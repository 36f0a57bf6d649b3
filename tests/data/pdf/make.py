"""Typesets refs.bib into the test PDFs of this folder, in the BibTeX styles and the
publishers' templates committees receive: ``python tests/data/pdf/make.py [NAME ...]``.

Needs pdflatex and bibtex (Debian's texlive-latex-base, -recommended, -extra,
texlive-publishers, texlive-bibtex-extra, texlive-fonts-recommended; not cm-super, whose
absence is what makes the Type 3 PDFs) and, for the ACL, ICLR and NeurIPS review copies,
their style files, which are not committed here: a folder holding ``acl/`` (acl.sty,
acl_natbib.bst from the acl-org/acl-style-files repository), ``iclr/`` (the files of
``iclr2026/`` in the ICLR/Master-Template repository) and ``neurips/`` (neurips_2025.sty),
named by ``--styles DIR`` or the ``CITELENS_TEX_STYLES`` variable.

The suite reads the committed PDFs and ``expected.json``, so it needs no TeX. For each PDF,
``expected.json`` holds how it was made and its printed references in order: the label a
reader sees (``[3]``, ``[Vas17]``, or ``Vaswani et al. 2017`` for an author-year list
that prints none) and the .bib key, read from the .bbl BibTeX wrote.

``benchmarks/bench_pdf.py`` typesets its own bibliographies with :func:`typeset`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
STYLES_VARIABLE = "CITELENS_TEX_STYLES"

_PLAIN = "\\documentclass[{size},{cols}]{{article}}"
#: The ten BibTeX styles of the benchmark (the first seven also committed as test PDFs).
BIBTEX_STYLES = (
    "plain", "ieeetr", "alpha", "apalike", "plainnat", "acm", "unsrt", "abbrvnat", "siam", "abbrv"
)


@dataclass(frozen=True, slots=True)
class Template:
    """How a venue or publisher sets a paper: the class and packages, the bibliography
    style, and the style files it needs that TeX Live lacks."""

    documentclass: str  # with {cols} (onecolumn/twocolumn) and {size} for the article class
    preamble: str
    bibstyle: str
    front: str  # the title block, with {title}
    needs: str = ""  # a folder of the styles folder (acl, iclr, neurips)
    numbered: bool = True  # the list prints a number before each reference
    fixed_columns: int = 0  # the class decides (1 or 2) whatever is asked


_ARTICLE_FRONT = "\\section*{{{title}}}\n"
_TITLE = "\\title{{{title}}}\n\\author{{CiteLens}}\n\\date{{}}\n\\maketitle\n"

TEMPLATES: dict[str, Template] = {
    # the ten BibTeX styles in the article class (running headers, as before)
    **{
        s: Template(
            _PLAIN,
            ("\\usepackage{natbib}\n" if s.endswith("nat") else "") + "\\pagestyle{headings}\n",
            s,
            _ARTICLE_FRONT,
            numbered=s in {"plain", "ieeetr", "acm", "unsrt", "siam", "abbrv"},
        )
        for s in BIBTEX_STYLES
    },
    "plainnat-lineno": Template(
        _PLAIN, "\\usepackage{natbib}\n\\usepackage{lineno}\n\\linenumbers\n\\pagestyle{headings}\n",
        "plainnat", _ARTICLE_FRONT, numbered=False,
    ),
    # ACL review copy: two columns, every line numbered in both margins
    "acl": Template(
        "\\documentclass[11pt]{{article}}",
        "\\usepackage[review]{acl}\n\\usepackage{times}\n\\usepackage{latexsym}\n"
        "\\usepackage[T1]{fontenc}\n\\usepackage[utf8]{inputenc}\n\\usepackage{microtype}\n",
        "acl_natbib", _TITLE, needs="acl", numbered=False, fixed_columns=2,
    ),
    "ieeetran": Template(
        "\\documentclass[conference]{{IEEEtran}}", "\\usepackage{cite}\n", "IEEEtran",
        "\\title{{{title}}}\n\\author{{\\IEEEauthorblockN{{CiteLens}}}}\n\\maketitle\n", fixed_columns=2,
    ),
    "lncs": Template(
        "\\documentclass[runningheads]{{llncs}}", "", "splncs04",
        "\\title{{{title}}}\n\\author{{CiteLens}}\n\\institute{{Nowhere}}\n\\maketitle\n", fixed_columns=1,
    ),
    "acmart": Template(
        "\\documentclass[sigconf,nonacm]{{acmart}}", "\\settopmatter{printacmref=false}\n",
        "ACM-Reference-Format",
        "\\title{{{title}}}\n\\author{{CiteLens}}\n\\affiliation{{\\institution{{Nowhere}}\\country{{Nowhere}}}}\n"
        "\\maketitle\n",
        fixed_columns=2,
    ),
    "elsarticle-num": Template(
        "\\documentclass[preprint,12pt]{{elsarticle}}", "", "elsarticle-num",
        "\\begin{{frontmatter}}\n\\title{{{title}}}\n\\author{{CiteLens}}\n\\end{{frontmatter}}\n",
        fixed_columns=1,
    ),
    "elsarticle-harv": Template(
        "\\documentclass[final,5p,times,twocolumn,authoryear]{{elsarticle}}", "", "elsarticle-harv",
        "\\begin{{frontmatter}}\n\\title{{{title}}}\n\\author{{CiteLens}}\n\\end{{frontmatter}}\n",
        numbered=False, fixed_columns=2,
    ),
    "apacite": Template(
        _PLAIN, "\\usepackage{apacite}\n\\pagestyle{headings}\n", "apacite", _ARTICLE_FRONT, numbered=False,
    ),
    # ICLR review copy: a ruler of line numbers in the left margin, headings in small capitals
    "iclr": Template(
        "\\documentclass{{article}}",
        "\\usepackage{iclr2026_conference,times}\n\\usepackage{hyperref}\n\\usepackage{url}\n",
        "iclr2026_conference", _TITLE, needs="iclr", numbered=False, fixed_columns=1,
    ),
    # NeurIPS submission: lineno's numbers in the left margin, a numbered natbib list
    "neurips": Template(
        "\\documentclass{{article}}",
        "\\PassOptionsToPackage{numbers,compress}{natbib}\n\\usepackage{neurips_2025}\n"
        "\\usepackage[utf8]{inputenc}\n\\usepackage[T1]{fontenc}\n\\usepackage{url}\n\\usepackage{xcolor}\n",
        "plainnat", _TITLE, needs="neurips", fixed_columns=1,
    ),
}

#: How a list may end: the next heading after the references.
APPENDICES = {
    # \appendix \section: "A Proof of Theorem 1" (IEEEtran: "Appendix A", elsarticle:
    # "Appendix A. Proof ...", acmart: "A PROOF OF THEOREM 1")
    "letter": "\\appendix\n\\section{{Proof of Theorem 1}}\n{text}",
    "appendix": "\\section*{{Appendix A: Proof of Theorem 1}}\n{text}",
    "supplementary": "\\section*{{Supplementary Material}}\n\\subsection*{{S1. Proofs}}\n{text}",
    "checklist": (
        "\\section*{{NeurIPS Paper Checklist}}\n{checklist}\n"
        "\\appendix\n\\section{{Technical Appendices}}\n{text}"
    ),
}
#: Appendix text made to look like references where it can: a sentence that reads like one,
#: numbered items, names and years.
APPENDIX_TEXT = r"""Smith and Jones showed this in 2019. \lipsum[4]
\subsection*{Details}
Doe, J. and Roe, R. (2020). A sentence that reads like a reference. \lipsum[5]
\begin{enumerate}
\item Vaswani, A. et al. Training details: we train for 10 epochs with Adam (2015).
\item Evaluation. We report the mean of 5 runs, as in Table 3 of the main text.
\end{enumerate}
[1] A bracketed note in the appendix, Journal of Examples, 2021. \lipsum[6]
"""
CHECKLIST = r"""\begin{enumerate}
\item {\bf Claims}
\item[] Question: Do the main claims made in the abstract and introduction accurately
reflect the paper's contributions and scope?
\item[] Answer: \answerYes{}
\item[] Justification: Section 3 states them, Smith et al. (2020).
\item {\bf Limitations}
\item[] Question: Does the paper discuss the limitations of the work performed by the authors?
\item[] Answer: \answerYes{}
\item {\bf Theory assumptions and proofs}
\item[] Question: For each theoretical result, does the paper provide the full set of
assumptions and a complete (and correct) proof?
\item[] Answer: \answerNA{}
\end{enumerate}
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
SHORT_BODY = BODY.replace("\\lipsum[1-2]", "\\lipsum[1]").replace("\\lipsum[3-5]", "\\lipsum[2-3]")


@dataclass(frozen=True, slots=True)
class Variant:
    """One test PDF: a template, its columns, fonts, what follows the list, and how its
    numbers run."""

    template: str
    columns: int = 1
    appendix: str = ""  # a key of APPENDICES
    fonts: str = "type1"  # "type3": T1-encoded Computer Modern without cm-super (bitmap fonts)
    numbering: str = ""  # "gap": a number left out; "repeat": a number printed twice
    refname: str = ""
    body: str = BODY


#: The committed PDFs: name -> how each was made (the first nine as before).
VARIANTS: dict[str, Variant] = {
    "plain-1col": Variant("plain"),
    "ieeetr-2col": Variant("ieeetr", 2),
    "alpha-2col": Variant("alpha", 2, refname="Bibliography"),
    "apalike-1col": Variant("apalike"),
    "plainnat-2col": Variant("plainnat", 2),
    "acm-1col": Variant("acm"),
    "unsrt-2col": Variant("unsrt", 2),
    "plainnat-appendix-2col": Variant("plainnat", 2, "letter"),
    "plainnat-lineno-1col": Variant("plainnat-lineno"),
    # the publishers' templates and review copies, each with an appendix after the list
    "acl-review-2col": Variant("acl", 2, "letter", body=SHORT_BODY),
    "ieeetran-2col": Variant("ieeetran", 2, "appendix", body=SHORT_BODY),
    "lncs-1col": Variant("lncs", 1, "letter", body=SHORT_BODY),
    "acmart-2col": Variant("acmart", 2, "supplementary", body=SHORT_BODY),
    "elsarticle-num-1col": Variant("elsarticle-num", 1, "letter", body=SHORT_BODY),
    "elsarticle-harv-2col": Variant("elsarticle-harv", 2, "appendix", body=SHORT_BODY),
    "apacite-1col": Variant("apacite", 1, "supplementary", body=SHORT_BODY),
    "iclr-review-1col": Variant("iclr", 1, "letter", body=SHORT_BODY),
    "neurips-review-1col": Variant("neurips", 1, "checklist", body=SHORT_BODY),
    # Type 3 (bitmap) fonts, whose ligatures and accents carry no Unicode, in numbered lists
    # whose numbers do not run 1, 2, 3: one left out, one printed twice
    "plain-type3-gap-1col": Variant("plain", 1, "letter", "type3", "gap", body=SHORT_BODY),
    "unsrt-type3-repeat-2col": Variant("unsrt", 2, "appendix", "type3", "repeat", body=SHORT_BODY),
}


def styles_dir(given: str | None = None) -> Path | None:
    value = given or os.environ.get(STYLES_VARIABLE)
    return Path(value) if value else None


def document(variant: Variant, title: str, body: str | None = None) -> str:
    """The LaTeX source of ``variant`` (``body``: the text before the list; the bench's
    PDFs cite every entry with ``\\nocite{*}``)."""
    t = TEMPLATES[variant.template]
    two = variant.columns == 2
    cls = t.documentclass.format(
        size="10pt" if two else "11pt", cols="twocolumn" if two else "onecolumn"
    ).replace("[11pt,onecolumn]", "[11pt]").replace("[10pt,twocolumn]", "[10pt,twocolumn]")
    fonts = "\\usepackage[T1]{fontenc}\n" if variant.fonts == "type3" else ""
    ref = f"\\renewcommand\\refname{{{variant.refname}}}\n" if variant.refname else ""
    appendix = ""
    if variant.appendix:
        appendix = APPENDICES[variant.appendix].format(text=APPENDIX_TEXT, checklist=CHECKLIST)
    return (
        f"{cls}\n\\pdfcompresslevel=9\n\\pdfobjcompresslevel=2\n"
        f"\\usepackage{{lipsum}}\n\\usepackage{{url}}\n{t.preamble}{fonts}{ref}"
        f"\\begin{{document}}\n{t.front.format(title=title)}"
        f"{variant.body if body is None else body}\n"
        f"\\bibliographystyle{{{t.bibstyle}}}\n\\bibliography{{refs}}\n"
        f"{appendix}\\end{{document}}\n"
    )


_BIBITEM = re.compile(
    r"\\bibitem(?:\s*\[((?:[^\[\]]|\[[^\]]*\])*)\])?(?:\s|%[^\n]*\n)*\{([^}]*)\}"
)


def renumber(bbl: str, how: str) -> str:
    """The .bbl with its third reference's number left out ("gap": 1, 2, 4, ...) or with
    the number of its third reference printed again on the fourth ("repeat")."""
    items = list(_BIBITEM.finditer(bbl))
    if len(items) < 4:
        return bbl
    at = items[2].start() if how == "gap" else items[3].start()
    step = "\\addtocounter{enumiv}{1}" if how == "gap" else "\\addtocounter{enumiv}{-1}"
    return bbl[:at] + step + bbl[at:]


def _latex_text(value: str) -> str:
    from citelens.core.latextext import latex_to_text  # run with the repository's venv

    text = re.sub(r"\\BOthers\s*\{\.\}", " et al.", value).replace("\\BBA", " and ")
    text = re.sub(r"\\(?:protect|APACyear|citeauthoryear)\b", " ", text)
    text = text.replace("\\mbox", "")
    return " ".join(latex_to_text(text.replace("{", "").replace("}", "")).split())


def printed_labels(bbl: str, numbered: bool, numbering: str = "") -> list[tuple[str, str]]:
    """(the label a reader sees, .bib key) of each reference of the .bbl in printed order:
    ``[n]`` in a numbered list, the bracketed label of alpha-like styles, and for an
    author-year list the author and year of natbib's label (``Vaswani et al. 2017``)."""
    out = []
    n = 0
    for i, m in enumerate(_BIBITEM.finditer(re.sub(r"%[ \t]*\n\s*", "", bbl))):
        label, key = " ".join((m.group(1) or "").split()), m.group(2)
        if numbered:
            n += 1
            if numbering == "gap" and i == 2:
                n += 1
            if numbering == "repeat" and i == 3:
                n -= 1
            out.append((f"[{n}]", key))
            continue
        natbib = re.match(r"(.*?)\((\d{4}\w?)\)", label)
        apa = re.search(
            r"citeauthoryear\s*\{(?:[^{}]|\{[^{}]*\})*\}\s*\{((?:[^{}]|\{[^{}]*\})*)\}\s*\{+\\protect\s*\\APACyear\s*\{(\d{4}\w?)\}",
            label,
        )
        if apa:
            out.append((f"{_latex_text(apa.group(1))} {apa.group(2)}", key))
        elif natbib:
            out.append((f"{_latex_text(natbib.group(1)).replace(' & ', ' and ')} {natbib.group(2)}", key))
        elif label and "citeauthoryear" not in label:
            out.append((f"[{_latex_text(label)}]", key))
        else:
            out.append(("", key))  # apacite: the reader makes it
    return out


def typeset(variant: Variant, bib: str, work: Path, styles: Path | None, body: str | None = None,
            title: str = "A Test Paper") -> tuple[Path, str]:
    """``variant`` typeset with ``bib`` in ``work``: the PDF and the .bbl (its text as
    typeset, renumbered if the variant says so). Raises RuntimeError with LaTeX's last
    words when no PDF comes out."""
    t = TEMPLATES[variant.template]
    if t.needs:
        if styles is None or not (styles / t.needs).is_dir():
            raise RuntimeError(f"{variant.template} needs its style files: set {STYLES_VARIABLE}")
        for f in (styles / t.needs).iterdir():
            if f.is_file() and f.suffix in {".sty", ".bst", ".tex", ".cls"}:
                shutil.copy(f, work / f.name)
    (work / "refs.bib").write_text(bib, encoding="utf-8")
    (work / "paper.tex").write_text(document(variant, title, body), encoding="utf-8")
    env = {**os.environ, "TEXMFOUTPUT": str(work)}

    def latex() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "paper.tex"],
            cwd=work, capture_output=True, text=True, errors="replace", env=env, timeout=600, check=False,
        )

    latex()
    subprocess.run(["bibtex", "paper"], cwd=work, capture_output=True, env=env, timeout=300, check=False)
    bbl_path = work / "paper.bbl"
    bbl = bbl_path.read_text(encoding="utf-8", errors="replace") if bbl_path.exists() else ""
    if variant.numbering:
        bbl = renumber(bbl, variant.numbering)
        bbl_path.write_text(bbl, encoding="utf-8")
    latex()
    proc = latex()
    if not (work / "paper.pdf").exists():
        raise RuntimeError(proc.stdout[-2000:])
    return work / "paper.pdf", bbl


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Typeset the test PDFs (all, or those named).")
    ap.add_argument("names", nargs="*")
    ap.add_argument("--expected-only", action="store_true", help="only expected.json (PDFs as committed)")
    ap.add_argument("--styles", help=f"the ACL, ICLR and NeurIPS style files (or ${STYLES_VARIABLE})")
    args = ap.parse_args(argv)
    if shutil.which("pdflatex") is None:
        print("pdflatex is needed (Debian: texlive-latex-base and the packages above)", file=sys.stderr)
        return 1
    out = HERE / "expected.json"
    expected = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    expected = {k: v for k, v in expected.items() if k in VARIANTS}
    styles = styles_dir(args.styles)
    for name, variant in VARIANTS.items():
        if args.names and name not in args.names:
            continue
        t = TEMPLATES[variant.template]
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            try:
                pdf, bbl = typeset(
                    variant, (HERE / "refs.bib").read_text(encoding="utf-8"), work, styles,
                    title=f"A Test Paper in the {t.bibstyle} Style",
                )
            except RuntimeError as exc:
                print(f"{name}: no PDF\n{exc}", file=sys.stderr)
                return 1
            if not args.expected_only:
                shutil.copy(pdf, HERE / f"{name}.pdf")
                tex = (work / "paper.tex").read_text(encoding="utf-8")
                (HERE / f"{name}.tex").write_text(tex, encoding="utf-8")
        expected[name] = {
            "template": variant.template,
            "bibstyle": t.bibstyle,
            "columns": t.fixed_columns or variant.columns,
            "fonts": variant.fonts,
            "line_numbers": variant.template in {"plainnat-lineno", "acl", "iclr", "neurips"},
            "appendix": variant.appendix or None,
            "numbering": variant.numbering or None,
            "references": printed_labels(bbl, t.numbered, variant.numbering),
        }
        kb = (HERE / f"{name}.pdf").stat().st_size // 1024
        print(f"{name}: {len(expected[name]['references'])} references, {kb} KB")
    out.write_text(json.dumps(dict(sorted(expected.items())), indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
