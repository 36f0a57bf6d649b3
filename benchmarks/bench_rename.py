"""Cost of a cite-key rename and of a workspace-symbol query, in-process (no LSP transport).

Rename: the dissertation's key ``vaswani-2017-attention`` (cited in several chapters of two
root files), from a cold store (every file read and parsed) and a warm one (what the server
has after opening the project). Symbols: queries over the corpus papers' .bib files plus a 37k-entry library.
Run: ``python benchmarks/bench_rename.py``
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.bigbib import ML_CONFERENCES

from citelens.core.settings import from_sources
from citelens.workspace.bibsearch import haystacks, search_entries
from citelens.workspace.projects import Projects
from citelens.workspace.rename import rename_edits

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"
THESIS = CORPUS / "papers" / "thammegowda-dissertation"
KEY = "vaswani-2017-attention"


def _session() -> Projects:
    session = Projects(from_sources(), lambda _m: None)
    session.folders_changed([str(THESIS)], [])
    return session


def rename_once(session: Projects) -> tuple[float, int]:
    """The work of a rename: the documents of the projects using the .bib (the workspace's
    files, as the server finds them) and the edits."""
    t0 = time.perf_counter()
    bib = str(THESIS / "anthology.bib")
    files = session.documents_using_bib(bib)
    edits = rename_edits(session.store, KEY, "vaswani2017attention", [bib], files)
    return (time.perf_counter() - t0) * 1000, sum(len(v) for v in edits.values())


def main() -> int:
    if not THESIS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 2
    cold, n = rename_once(_session())
    session = _session()
    store = session.store
    rename_once(session)
    warm = [rename_once(session)[0] for _ in range(20)]
    print(
        f"rename {KEY}: {n} edits; cold {cold:.1f} ms; warm median {statistics.median(warm):.1f} ms"
        f" (max {max(warm):.1f})"
    )
    bibs = sorted(str(p) for p in (CORPUS / "papers").rglob("*.bib"))
    bibs.append(str(ML_CONFERENCES))
    entries = [e for p in bibs if (b := store.bib(p)) is not None for e in b.entries]
    t0 = time.perf_counter()
    hay = [
        h for p in bibs if (b := store.bib(p)) is not None for h in haystacks(store.text(p) or "", b.entries)
    ]
    print(f"workspace/symbol index (once per .bib version): {(time.perf_counter() - t0) * 1000:.0f} ms")
    for query in ("a", "vaswani", "attention all you need", "smith 2020", ""):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            found = search_entries(entries, query, hay=hay)
            times.append((time.perf_counter() - t0) * 1000)
        print(
            f"workspace/symbol {query!r} over {len(entries)} entries in {len(bibs)} .bib files: "
            f"{len(found)} results, median {statistics.median(times):.1f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
