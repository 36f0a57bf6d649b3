"""The duplicate pairs found in the corpus papers and the large bibliographies, pinned.

``tests/data/duplicates_corpus.json`` holds, per bibliography, every pair
:func:`find_duplicates` reports (keys, reason, score to 4 places, message). Speed-ups of
the blocking and prefilters must not change a single pair. When a deliberate change of
behaviour changes them, rewrite the file with ``python -m tests.test_duplicates_corpus``
and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from citelens.checks.duplicates import find_duplicates
from tests.harness import CORPUS, ROOT, bib_views, bigbib, needs_bigbib

GOLDEN = ROOT / "tests" / "data" / "duplicates_corpus.json"
EXPECTED: dict[str, list[list[object]]] = json.loads(GOLDEN.read_text(encoding="utf-8"))


def _path(rel: str) -> Path:
    """``bigbib/NAME`` is in the folder ``CITELENS_BIGBIB`` names, the papers in the repository."""
    return bigbib(rel.removeprefix("bigbib/")) if rel.startswith("bigbib/") else CORPUS / rel


def _found(rel: str) -> list[list[object]]:
    pairs = find_duplicates(bib_views(_path(rel)))
    return [[p.key_a, p.key_b, p.reason, round(p.score, 4), p.message] for p in pairs]


@pytest.mark.parametrize("rel", [pytest.param(rel, marks=[needs_bigbib] if rel.startswith("bigbib/") else [])
                                 for rel in sorted(EXPECTED)])
def test_corpus_duplicates_unchanged(rel: str) -> None:
    assert _found(rel) == EXPECTED[rel]


def test_golden_covers_the_big_libraries_and_every_paper() -> None:
    assert len(EXPECTED["bigbib/physrev_e_1993_2024.bib"]) == 9
    assert EXPECTED["bigbib/ml_conferences.bib"]
    papers = {str(p.relative_to(CORPUS)) for p in (CORPUS / "papers").glob("**/*.bib")}
    assert papers and papers <= set(EXPECTED)


if __name__ == "__main__":  # rewrite the pinned pairs from the current code
    rels = ["bigbib/physrev_e_1993_2024.bib", "bigbib/ml_conferences.bib"]
    rels += sorted(str(p.relative_to(CORPUS)) for p in (CORPUS / "papers").glob("**/*.bib"))
    data = {rel: _found(rel) for rel in rels}
    GOLDEN.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
