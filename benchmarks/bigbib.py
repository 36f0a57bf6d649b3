"""Where the benchmarks find the large real bibliographies, too big to ship in the
repository: the folder ``CITELENS_BIGBIB`` names (the variable the tests read, see
``tests/harness.py``), by default ``../shared/corpus/bigbib`` beside the clone, where the
team's machines keep them. Only benchmarks default to a folder outside the repository;
a test without the variable skips."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The same variable as the tests' (tests/harness.py BIGBIB_VARIABLE).
BIGBIB_VARIABLE = "CITELENS_BIGBIB"
BIGBIB = Path(os.environ.get(BIGBIB_VARIABLE) or ROOT.parent / "shared" / "corpus" / "bigbib")
#: 37,443 NeurIPS/ICML/ICLR/COLT/UAI/AISTATS entries, 50 MB, real-world junk included.
ML_CONFERENCES = BIGBIB / "ml_conferences.bib"
#: 68,732 Physical Review E entries (1993-2024), 35 MB, every one with a DOI.
PHYSREV_E = BIGBIB / "physrev_e_1993_2024.bib"


def missing() -> str | None:
    """Why the large bibliographies cannot be read (None when they can)."""
    for path in (ML_CONFERENCES, PHYSREV_E):
        if not path.is_file():
            return f"{path} not found: set {BIGBIB_VARIABLE} to the folder holding it"
    return None
