"""Papers as PDFs: the labelled fabrication set typeset by LaTeX, read back, and verified.

    CITELENS_CORPUS=/path/to/shared/corpus .venv/bin/python -m benchmarks.bench_pdf [-v] [--per-pdf N]

The set of ``benchmarks/fabrications`` (real entries with natural variation, fabricated
ones of every type, labelled) is cut into PDFs of ``--per-pdf`` entries, each typeset by
pdflatex + bibtex in one of ten BibTeX styles (numbered, alpha, author-year, natbib, ACM,
SIAM), half of them two-column (generated once into ``fabrications/.cache/pdf-*``; needs
TeX: Debian's texlive-latex-base, -recommended, -extra). Then:

- **references found**: of the references printed (the .bbl's \\bibitem), those read as one
  reference whose text holds the entry's title (letters and digits compared);
- **field accuracy**: of those, the title, first author's family name, year and DOI (where
  the style prints it) read exactly as the .bib has them;
- **detection and false alarms**: every PDF checked as ``citelens check paper.pdf`` does it
  (read, the engine on the fields read, then the whole printed string) against the fake
  scholarly APIs serving the truth, compared with the same entries checked as one .bib
  (``fabrications/e2e.py``): a fabricated entry is detected when it gets a warning or an
  error; a real one with a warning or an error is a false alarm;
- **seconds per PDF**: reading (child process, layout, splitting, fields) apart from
  verification.

Targets (issue 34): references found >= 98 %, detection within 3 points of the .bib,
false alarms <= 2 %; the exit status is 1 when one is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.fabrications.e2e import COUNTED_CODES, FLAG_SEVERITIES, fake_papers, run  # noqa: E402
from benchmarks.fabrications.generate import ensure_generated, load_set, load_truth  # noqa: E402
from tests.fakes.scholarly import fast_rates, running  # noqa: E402

from citelens.checks.verification import verification_findings  # noqa: E402
from citelens.core.latextext import latex_to_text  # noqa: E402
from citelens.core.titles import normalize_title  # noqa: E402
from citelens.documents.bibtex.parse import parse_bib  # noqa: E402
from citelens.documents.bibtex.view import entry_view  # noqa: E402
from citelens.documents.pdf.fields import read_fields  # noqa: E402
from citelens.documents.pdf.read import PdfReading, read_pdf, to_bibtex  # noqa: E402
from citelens.sources.transport import Sources  # noqa: E402
from citelens.verify.cache import VerificationCache  # noqa: E402
from citelens.verify.printed import compact, confirm_printed  # noqa: E402
from citelens.verify.scheduler import verify_entries  # noqa: E402

#: Fabrications in an identifier alone (the title, authors and year are a real paper's).
ID_TYPES = ("fabricated_identifier", "doi_other_paper")
STYLES = ("plain", "ieeetr", "alpha", "apalike", "plainnat", "acm", "unsrt", "abbrvnat", "siam", "abbrv")
GENERATOR = "bench_pdf v2"
Row = dict[str, Any]


# ---------------------------------------------------------------------------- making PDFs


def _tex(style: str, two: bool) -> str:
    cls = "\\documentclass[10pt,twocolumn]{article}" if two else "\\documentclass[11pt]{article}"
    natbib = "\\usepackage{natbib}\n" if style.endswith("nat") else ""
    return (
        f"{cls}\n\\usepackage[utf8]{{inputenc}}\n\\usepackage{{url}}\n{natbib}\\pagestyle{{headings}}\n"
        "\\begin{document}\n\\section*{A benchmark paper}\nAll references are cited.\\nocite{*}\n"
        f"\\bibliographystyle{{{style}}}\n\\bibliography{{refs}}\n\\end{{document}}\n"
    )


_TEXT_FIELD = re.compile(r"^(\s*(?:title|journal|booktitle|publisher)\s*=\s*)(.*)$", re.MULTILINE)


def _latex_safe(bibtex: str) -> str:
    """The set's BibTeX as an author would have to write it for LaTeX: ``_ & % #`` escaped
    in the text fields (unescaped, LaTeX mangles or drops them, which no real paper prints)."""
    return _TEXT_FIELD.sub(lambda m: m.group(1) + re.sub(r"(?<!\\)([_&%#])", r"\\\1", m.group(2)), bibtex)


def _bbl_keys(bbl: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"\\bibitem(?:\[(?:[^\[\]]|\[[^\]]*\])*\])?\s*\{([^}]*)\}", bbl)]


def make_pdfs(rows: Sequence[Row], out: Path, per_pdf: int) -> list[dict[str, Any]]:
    """PDFs of ``per_pdf`` rows each (cached in ``out``): [{pdf, style, two, keys (printed order)}]."""
    index = out / "index.json"
    if index.exists():
        return list(json.loads(index.read_text(encoding="utf-8")))
    if shutil.which("pdflatex") is None or shutil.which("bibtex") is None:
        raise SystemExit(
            "pdflatex and bibtex are needed once to make the PDFs (Debian: texlive-latex-base, "
            "texlive-latex-recommended, texlive-latex-extra)"
        )
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for i, start in enumerate(range(0, len(rows), per_pdf)):
        style = STYLES[i % len(STYLES)]
        two = (i + i // len(STYLES)) % 2 == 1
        name = f"{i:03d}-{style}-{'2col' if two else '1col'}"
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            (work / "refs.bib").write_text(
                "\n".join(_latex_safe(r["bibtex"]) for r in rows[start : start + per_pdf]) + "\n",
                encoding="utf-8",
            )
            (work / f"{name}.tex").write_text(_tex(style, two), encoding="utf-8")
            for cmd in (
                ["pdflatex", "-interaction=nonstopmode", f"{name}.tex"],
                ["bibtex", name],
                ["pdflatex", "-interaction=nonstopmode", f"{name}.tex"],
                ["pdflatex", "-interaction=nonstopmode", f"{name}.tex"],
            ):
                subprocess.run(cmd, cwd=work, capture_output=True, check=False, timeout=300)
            if not (work / f"{name}.pdf").exists():
                print(f"{name}: LaTeX made no PDF", file=sys.stderr)
                continue
            shutil.copy(work / f"{name}.pdf", out / f"{name}.pdf")
            keys = _bbl_keys((work / f"{name}.bbl").read_text(encoding="utf-8", errors="replace"))
        made.append({"pdf": f"{name}.pdf", "style": style, "two": two, "keys": keys})
    index.write_text(json.dumps(made, indent=1) + "\n", encoding="utf-8")
    return made


def thesis(out: Path) -> Path:
    """A 459-page LaTeX thesis (report class, running headers, a contents page naming the
    bibliography) whose 19 references (``tests/data/pdf/refs.bib``) come at the end."""
    pdf = out / "thesis.pdf"
    if pdf.exists():
        return pdf
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copy(HERE.parent / "tests" / "data" / "pdf" / "refs.bib", work / "refs.bib")
        (work / "thesis.tex").write_text(
            "\\documentclass[11pt]{report}\n\\usepackage{lipsum}\n\\pagestyle{headings}\n\\begin{document}\n"
            "\\tableofcontents\n\\chapter{One}\n\\newcount\\n \\n=0\n"
            "\\loop\\ifnum\\n<170 \\lipsum[1-12]\\advance\\n by 1 \\repeat\n"
            "\\nocite{*}\n\\bibliographystyle{plain}\n\\bibliography{refs}\n\\end{document}\n",
            encoding="utf-8",
        )
        for cmd in (
            ["pdflatex", "-interaction=nonstopmode", "thesis.tex"],
            ["bibtex", "thesis"],
            ["pdflatex", "-interaction=nonstopmode", "thesis.tex"],
            ["pdflatex", "-interaction=nonstopmode", "thesis.tex"],
        ):
            subprocess.run(cmd, cwd=work, capture_output=True, check=False, timeout=600)
        shutil.copy(work / "thesis.pdf", pdf)
    return pdf


# ---------------------------------------------------------------------------- reading


def _plain(value: str) -> str:
    return latex_to_text(value.replace("{", "").replace("}", ""))


def _align(reading: PdfReading, keys: list[str], by_key: dict[str, Row]) -> dict[str, int]:
    """Each printed entry's reference (index into ``reading.references``): the first one not
    taken whose text holds the entry's title, searched from where the last one was found."""
    texts = [compact(r.text.replace("&", "")) for r in reading.references]
    taken: set[int] = set()
    out: dict[str, int] = {}
    pos = 0
    for key in keys:
        title = compact(_plain(by_key[key]["entry"]["title"]).replace("&", ""))
        if not title:
            continue
        order = list(range(pos, len(texts))) + list(range(0, pos))
        hit = next((i for i in order if i not in taken and title in texts[i]), None)
        if hit is not None:
            taken.add(hit)
            out[key] = hit
            pos = hit + 1
    return out


def _first_family(entry: dict[str, Any]) -> str:
    authors = entry.get("authors") or []
    return compact(_plain(authors[0].get("last", ""))) if authors else ""


def _id_printed(row: Row, text: str) -> bool:
    e = row["entry"]
    return any(v and compact(str(v)) in text for v in (e.get("doi"), e.get("arxiv_id"), e.get("eprint")))


def field_accuracy(reading: PdfReading, aligned: dict[str, int], by_key: dict[str, Row]) -> Counter[str]:
    c: Counter[str] = Counter()
    for key, i in aligned.items():
        e = by_key[key]["entry"]
        f = read_fields(reading.references[i].text)
        c["n"] += 1
        c["title"] += normalize_title(f.title) == normalize_title(_plain(e["title"]))
        fam = _first_family(e)
        c["first author"] += bool(fam) and bool(f.families) and compact(f.families[0]) == fam
        c["authors n"] += bool(fam)
        c["year"] += f.year == e.get("year")
        doi = (e.get("doi") or "").lower()
        if doi and doi in reading.references[i].text.lower():
            c["doi n"] += 1
            c["doi"] += (f.doi or "").lower() == doi
    return c


# ---------------------------------------------------------------------------- verifying


async def verify_pdfs(
    readings: list[PdfReading], truth: Sequence[Row], cache_dir: Path
) -> tuple[dict[str, Any], float]:
    """Per PDF path: label -> (verdict, flagged), checked as ``citelens check paper.pdf`` does."""
    out: dict[str, Any] = {}
    with running(fake_papers(truth)) as fake:
        settings = fake.settings(cache_dir=str(cache_dir), request_timeout_s=10.0)
        sources = Sources.from_settings(settings, lambda _m: None, rates=fast_rates())
        cache = VerificationCache(cache_dir, lambda _m: None)
        t0 = time.perf_counter()
        try:
            for reading in readings:
                bib = parse_bib(to_bibtex(reading.references), reading.path)
                raws = {}
                for e, ref in zip(bib.entries, reading.references, strict=False):
                    e.key = ref.label
                    raws[e.key] = ref.text
                views = [entry_view(e) for e in bib.entries]
                verdicts = await verify_entries(
                    views, settings, sources=sources, cache=cache, log=lambda _m: None
                )
                verdicts = await confirm_printed(raws, verdicts, sources, cache, settings)
                flagged: dict[str, bool] = defaultdict(bool)
                for f in verification_findings([bib], {}, verdicts, settings):
                    if f.code in COUNTED_CODES and f.severity in FLAG_SEVERITIES and f.key:
                        flagged[f.key] = True
                out[reading.path] = {k: (verdicts.get(k), flagged[k]) for k in raws}
        finally:
            await sources.aclose()
            cache.close()
        return out, time.perf_counter() - t0


# ---------------------------------------------------------------------------- main


def _pct(a: float, b: float) -> str:
    return f"{100 * a / b:.1f} %" if b else "n/a"


def sweep(folder: str, sample: int) -> int:
    """``--sweep DIR``: every PDF under DIR (a seeded sample of ``sample``) read, two at a
    time: what each reading ended with (references, or the one line saying why not), and
    the seconds each took. Any PDF will do (TeX Live's documentation: 578 PDFs from many
    producers, /usr/share/doc/texlive-doc with Debian's texlive-*-doc packages)."""
    import random
    from concurrent.futures import ThreadPoolExecutor

    paths = sorted(str(p) for p in Path(folder).rglob("*.pdf"))
    random.Random(34).shuffle(paths)
    paths = paths[:sample]

    def one(path: str) -> tuple[PdfReading, float]:
        t0 = time.perf_counter()
        return read_pdf(path), time.perf_counter() - t0

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(one, paths))
    outcomes = Counter(re.sub(r"page \d+", "page N", r.error) if r.error else "read" for r, _ in results)
    secs = sorted(t for _, t in results)
    refs = sum(len(r.references) for r, _ in results)
    print(
        f"{len(results)} PDFs under {folder}: {refs} references; median {secs[len(secs) // 2]:.2f} s, "
        f"max {secs[-1]:.2f} s"
    )
    for what, n in outcomes.most_common():
        print(f"  {n:4d}  {what}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-pdf", type=int, default=40)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--sweep", metavar="DIR", help="only read every PDF under DIR (no verification)")
    ap.add_argument("--sample", type=int, default=150, help="with --sweep: how many PDFs")
    args = ap.parse_args(argv)
    if args.sweep:
        return sweep(args.sweep, args.sample)
    data = ensure_generated()
    rows, truth = load_set(data), load_truth(data)
    by_key = {r["entry"]["key"]: r for r in rows}
    key = hashlib.sha256(
        f"{GENERATOR}:{data.name}:{args.per_pdf}:{Path(__file__).read_bytes()[:0]!r}".encode()
    )
    folder = HERE / "fabrications" / ".cache" / f"pdf-{key.hexdigest()[:12]}"
    pdfs = make_pdfs(rows, folder, args.per_pdf)

    printed = found = extracted = 0
    fields: Counter[str] = Counter()
    readings: list[PdfReading] = []
    aligned_all: dict[str, dict[str, int]] = {}
    per_style: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    read_s: list[float] = []
    for item in pdfs:
        path = str(folder / item["pdf"])
        t0 = time.perf_counter()
        reading = read_pdf(path)
        read_s.append(time.perf_counter() - t0)
        keys = [k for k in item["keys"] if k in by_key]
        printed += len(keys)
        if reading.error:
            print(f"{item['pdf']}: not read: {reading.error}")
            continue
        readings.append(reading)
        extracted += len(reading.references)
        aligned = _align(reading, keys, by_key)
        aligned_all[path] = aligned
        found += len(aligned)
        per_style[item["style"]][0] += len(aligned)
        per_style[item["style"]][1] += len(keys)
        fields.update(field_accuracy(reading, aligned, by_key))
        if args.verbose:
            for k in keys:
                if k not in aligned:
                    print(f"  {item['pdf']}: not found: {k}: {_plain(by_key[k]['entry']['title'])[:80]}")

    print(
        f"{len(pdfs)} PDFs ({args.per_pdf} entries each, {len(STYLES)} styles, half two-column), "
        f"{printed} references printed"
    )
    print(
        f"references found: {found}/{printed} = {_pct(found, printed)} "
        f"({extracted} references read in all; {extracted - found} not matched to a printed entry)"
    )
    print("  by style: " + ", ".join(f"{s} {_pct(a, b)}" for s, (a, b) in sorted(per_style.items())))
    print(
        f"field accuracy (of the references found): title {_pct(fields['title'], fields['n'])}, "
        f"first author {_pct(fields['first author'], fields['authors n'])}, "
        f"year {_pct(fields['year'], fields['n'])}, "
        f"DOI {_pct(fields['doi'], fields['doi n'])} (of {fields['doi n']} printed)"
    )
    print(f"seconds per PDF (reading): median {sorted(read_s)[len(read_s) // 2]:.2f}, max {max(read_s):.2f}")

    with tempfile.TemporaryDirectory() as tmp:
        bib_run = run(rows, truth, Path(tmp) / "bib")
        pdf_verdicts, verify_s = asyncio.run(verify_pdfs(readings, truth, Path(tmp) / "pdf"))
    bib_flag = {r.row["entry"]["key"]: r.flagged for r in bib_run.entries}
    bib_why = {r.row["entry"]["key"]: r.why(300) for r in bib_run.entries}
    pdf_flag: dict[str, bool] = {}
    pdf_why: dict[str, str] = {}
    for reading in readings:
        aligned = aligned_all[reading.path]
        verdicts = pdf_verdicts.get(reading.path, {})
        for k, i in aligned.items():
            label = reading.references[i].label
            v, flag = verdicts.get(label, (None, False))
            pdf_flag[k] = bool(flag)
            if v is not None:
                ds = " | ".join(
                    f"[{d.severity.value}] {d.field}/{d.kind}: {d.message}" for d in v.discrepancies
                )
                pdf_why[k] = (
                    f"{v.status.value}: {v.summary} {ds}"[:300]
                    + f"\n      printed: {reading.references[i].text}"
                )
    fab_all = [k for k, r in by_key.items() if r["label"] == "fabricated"]
    # a fabricated identifier a style does not print is not in the PDF: no reader can see it
    printed_text = {
        k: compact(reading.references[i].text)
        for reading in readings
        for k, i in aligned_all[reading.path].items()
    }
    hidden = [
        k
        for k in fab_all
        if by_key[k]["type"] in ID_TYPES and not _id_printed(by_key[k], printed_text.get(k, ""))
    ]
    fab = [k for k in fab_all if k not in set(hidden)]
    real = [k for k, r in by_key.items() if r["label"] == "real"]
    det_bib = sum(bib_flag.get(k, False) for k in fab) / len(fab)
    det_pdf = sum(pdf_flag.get(k, False) for k in fab) / len(fab)
    fa_bib = sum(bib_flag.get(k, False) for k in real) / len(real)
    fa_pdf = sum(pdf_flag.get(k, False) for k in real) / len(real)
    all_pdf = sum(pdf_flag.get(k, False) for k in fab_all) / len(fab_all)
    all_bib = sum(bib_flag.get(k, False) for k in fab_all) / len(fab_all)
    print(
        f"detection (fabrications the PDF shows): PDF {100 * det_pdf:.1f} % vs .bib {100 * det_bib:.1f} % "
        f"({100 * (det_bib - det_pdf):+.1f} points; {len(fab)} fabricated, {len(hidden)} others whose "
        f"fabricated identifier the style does not print: PDF {100 * all_pdf:.1f} % "
        f"vs .bib {100 * all_bib:.1f} % with them)"
    )
    print(f"false alarms: PDF {100 * fa_pdf:.1f} % vs .bib {100 * fa_bib:.1f} % (of {len(real)} real)")
    print(f"seconds per PDF (verification, fake APIs, fresh cache): {verify_s / max(1, len(readings)):.2f}")
    big = thesis(folder)
    t0 = time.perf_counter()
    long_read = read_pdf(str(big))
    print(
        f"a {long_read.pages}-page thesis: {len(long_read.references)} references read in "
        f"{time.perf_counter() - t0:.2f} s ({long_read.error or 'read'})"
    )
    by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for k in fab:
        t = by_key[k]["type"]
        by_type[t][0] += pdf_flag.get(k, False)
        by_type[t][1] += bib_flag.get(k, False)
        by_type[t][2] += 1
    print(
        "  detection by type (PDF / .bib): "
        + ", ".join(f"{t} {a}/{b} of {n}" for t, (a, b, n) in sorted(by_type.items()))
    )
    if args.verbose:
        for k in real:
            if pdf_flag.get(k) and not bib_flag.get(k):
                print(
                    f"  false alarm (PDF only): {k}: {_plain(by_key[k]['entry']['title'])[:80]}\n"
                    f"      PDF: {pdf_why.get(k)}"
                )
        for k in fab:
            if bib_flag.get(k) and not pdf_flag.get(k):
                print(
                    f"  missed (PDF only): {k} {by_key[k]['type']}: "
                    f"{_plain(by_key[k]['entry']['title'])[:80]}\n"
                    f"      PDF: {pdf_why.get(k)}\n      bib: {bib_why.get(k)}"
                )
    ok = found / printed >= 0.98 and det_bib - det_pdf <= 0.03 and fa_pdf <= 0.02
    print(
        "targets: "
        + ("met" if ok else "MISSED")
        + " (found >= 98 %, detection within 3 points, false alarms <= 2 %)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
