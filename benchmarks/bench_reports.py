"""Report size and cost: ``citelens check BIG.bib --offline --format F -o FILE`` for the text,
JSON and SARIF formats, each in its own process (startup included), on the 68k-entry
Physical Review E library (``CITELENS_BIGBIB``, see ``benchmarks/bigbib.py``).

Prints per format: wall time, CPU time, peak RSS (``wait4``'s ``ru_maxrss``, what
``/usr/bin/time -v`` calls "Maximum resident set size"), the report's size (and its ratio
to the input's for JSON) and, for text, its number of lines. Targets (issue 24): every
format <= 10 s and <= 600 MB peak, JSON <= 2x the input.

Run: ``.venv/bin/python -m benchmarks.bench_reports [--formats text,json,sarif]
[--code OTHER_CHECKOUT] [FILE.bib]`` (``--code``: run DIR/server instead of this checkout,
e.g. a ``git archive`` of an older commit, for before/after figures).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bigbib import PHYSREV_E
from tests.harness import ROOT

BIG = PHYSREV_E


def run_format(bib: Path, fmt: str, tmp: Path, code: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_")}
    env["CITELENS_CACHE_DIR"] = str(tmp / "cache")  # empty: every entry offline-unverified
    env["PYTHONPATH"] = str(Path(code) / "server") if code else str(ROOT / "server")
    out = tmp / f"report.{fmt}"
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "citelens", "check", str(bib), "--offline", "-q", "--format", fmt,
         "-o", str(out)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    code_ = os.waitstatus_to_exitcode(status)
    size = out.stat().st_size if out.exists() else 0
    extra = ""
    if fmt == "json":
        extra = f" ({size / bib.stat().st_size:.2f}x the input)"
    if fmt == "text" and out.exists():
        with out.open("rb") as fh:
            extra = f", {sum(1 for _ in fh):,} lines"
    if proc.stderr is not None:
        err = proc.stderr.read().decode(errors="replace").strip()
        proc.stderr.close()
        if err and code_ not in (0, 1):
            extra += f"\n  stderr: {err[-400:]}"
    out.unlink(missing_ok=True)
    return (
        f"{fmt:6s}: {wall:5.1f} s wall, {usage.ru_utime + usage.ru_stime:5.1f} s CPU, "
        f"peak RSS {usage.ru_maxrss / 1024:5.0f} MB, output {size / 1e6:6.1f} MB{extra} "
        f"(exit {code_})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bib", nargs="?", default=str(BIG))
    ap.add_argument("--formats", default="text,json,sarif")
    ap.add_argument("--code", help="run DIR/server instead of this checkout")
    args = ap.parse_args()
    bib = Path(args.bib)
    print(f"{bib.name}: {bib.stat().st_size / 1e6:.1f} MB, citelens check --offline "
          f"({args.code or 'this checkout'})", flush=True)
    with tempfile.TemporaryDirectory(prefix="citelens-bench-reports-") as d:
        for fmt in args.formats.split(","):
            print(run_format(bib, fmt.strip(), Path(d), args.code), flush=True)


if __name__ == "__main__":
    main()
