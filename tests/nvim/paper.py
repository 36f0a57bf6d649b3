"""A real paper (the Ethereum yellow paper) seeded with two citation problems, for editor tests.

Used by tests/test_neovim_e2e.py and docs/screenshot/make_screenshot.sh:

- ``back2002hashcash`` is cited in Paper.tex but removed from Biblio.bib (UNDEFINED_CITATION);
- ``dwork92pricingvia`` gets the DOI of an unrelated PNAS paper (DOI_MISMATCH), while the fake
  scholarly server knows the real paper under its real DOI, so a quick fix can correct it.

Run as ``python -m tests.nvim.paper DIR`` to write the seeded paper into DIR.
"""

from __future__ import annotations

import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.harness import CORPUS

SOURCE = CORPUS / "papers" / "ethereum-yellowpaper"
REMOVED_KEY = "back2002hashcash"
MISMATCH_KEY = "dwork92pricingvia"
WRONG_DOI = "10.1073/pnas.1414271111"  # "Developing functional musculoskeletal tissues ..."
RIGHT_DOI = "10.1007/3-540-48071-4_10"

#: The real paper behind dwork92pricingvia, added to the fake scholarly server.
DWORK_NAOR_1992: dict[str, Any] = {
    "title": "Pricing via Processing or Combatting Junk Mail",
    "authors": ["Cynthia Dwork", "Moni Naor"],
    "year": 1992,
    "venue": "Advances in Cryptology — CRYPTO' 92",
    "doi": RIGHT_DOI,
    "pages": "139-147",
    "type": "proceedings-article",
    "publication_types": ["Conference"],
}


@dataclass(frozen=True)
class SeededPaper:
    dir: Path
    tex: Path
    bib: Path

    def cite_position(self, key: str) -> tuple[int, int]:
        """0-based (line, column) of the first citation of ``key`` in Paper.tex."""
        for n, line in enumerate(self.tex.read_text(encoding="utf-8").splitlines()):
            m = re.search(r"\\cite[a-z]*(?:\[[^\]]*\])*\{[^}]*?\b(" + re.escape(key) + r")\b", line)
            if m:
                return n, m.start(1)
        raise LookupError(key)

    def entry_lines(self, key: str) -> range:
        """0-based line numbers of the .bib entry ``key``."""
        lines = self.bib.read_text(encoding="utf-8").splitlines()
        start = next(i for i, ln in enumerate(lines) if re.match(r"@\w+\{" + key + ",", ln))
        end = next(i for i in range(start + 1, len(lines)) if lines[i].rstrip() == "}")
        return range(start, end + 1)


def seed(dest: Path) -> SeededPaper:
    """Copy the paper into ``dest`` (a project root: it gets a .latexmkrc) and seed the bib."""
    if not SOURCE.is_dir():
        raise FileNotFoundError(f"corpus paper missing: {SOURCE} (see tests/harness.py CORPUS)")
    dest.mkdir(parents=True, exist_ok=True)
    tex = dest / "Paper.tex"
    bib = dest / "Biblio.bib"
    shutil.copyfile(SOURCE / "Paper.tex", tex)
    tex.chmod(0o644)
    text = (SOURCE / "Biblio.bib").read_text(encoding="utf-8")
    text, n = re.subn(r"@misc\{" + REMOVED_KEY + r",.*?\n\}\n\n?", "", text, flags=re.DOTALL)
    assert n == 1, f"{REMOVED_KEY} not found in Biblio.bib"
    text, n = re.subn(
        r"(@InProceedings\{" + MISMATCH_KEY + r",\n)", r"\g<1>    doi = {" + WRONG_DOI + "},\n", text
    )
    assert n == 1, f"{MISMATCH_KEY} not found in Biblio.bib"
    bib.write_text(text, encoding="utf-8")
    (dest / ".latexmkrc").write_text("$pdf_mode = 1;\n", encoding="utf-8")
    return SeededPaper(dest, tex, bib)


if __name__ == "__main__":
    paper = seed(Path(sys.argv[1]))
    print(paper.tex)
