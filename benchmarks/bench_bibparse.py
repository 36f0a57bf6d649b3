"""Parse and index the big .bib files: wall time and peak RSS, one fresh process per file.

    python benchmarks/bench_bibparse.py [--fields] [FILE.bib ...]

Without arguments it measures the two large bibliographies
(``$CITELENS_BIGBIB``, see ``benchmarks/bigbib.py``). "parse+index" is ``read_text`` + ``parse_bib`` +
``by_key()``; with ``--fields`` every entry's fields are parsed too (they are
lazy for big files), and a view of each entry is built. Target for
physrev_e_1993_2024.bib (35 MB, 68,732 entries): <= 3 s and <= 600 MB.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.bigbib import ML_CONFERENCES, PHYSREV_E  # noqa: E402

DEFAULT_FILES = [PHYSREV_E, ML_CONFERENCES]


def measure(path: str, fields: bool) -> dict[str, object]:
    """Run in the child process: time the parse of one file."""
    from citelens.documents.bibtex.parse import parse_bib
    from citelens.documents.read import read_text

    start = time.perf_counter()
    text = read_text(path)
    bib = parse_bib(text, path)
    index = bib.by_key()
    wall = time.perf_counter() - start
    out: dict[str, object] = {
        "file": Path(path).name, "mb": round(os.path.getsize(path) / 1e6, 1),
        "entries": len(bib.entries), "keys": len(index), "problems": len(bib.problems),
        "parse_index_s": round(wall, 2),
    }
    if fields:
        from citelens.documents.bibtex.view import entry_view

        start = time.perf_counter()
        n_fields = sum(len(e.fields) for e in bib.entries)
        out["fields"] = n_fields
        out["all_fields_s"] = round(time.perf_counter() - start, 2)
        start = time.perf_counter()
        for e in bib.entries:
            entry_view(e)
        out["views_s"] = round(time.perf_counter() - start, 2)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(json.dumps(measure(argv[1], argv[2] == "1")))
        return 0
    fields = "--fields" in argv
    files = [a for a in argv if not a.startswith("--")] or [str(p) for p in DEFAULT_FILES]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "server"))
    for path in files:
        if not Path(path).is_file():
            print(f"{path}: missing", file=sys.stderr)
            continue
        proc = subprocess.run(
            [sys.executable, __file__, "--child", path, "1" if fields else "0"],
            capture_output=True, text=True, env=env, check=False,
        )
        if proc.returncode != 0:
            print(f"{path}: failed\n{proc.stderr}", file=sys.stderr)
            continue
        r = json.loads(proc.stdout)
        line = (f"{r['file']}: {r['mb']} MB, {r['entries']} entries, {r['keys']} keys, "
                f"{r['problems']} problems; parse+index {r['parse_index_s']} s")
        if fields:
            line += (f"; all {r['fields']} fields {r['all_fields_s']} s;"
                     f" entry views {r['views_s']} s")
        print(line + f"; peak RSS {r['peak_rss_mb']} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
