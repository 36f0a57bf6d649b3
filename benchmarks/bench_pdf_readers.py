"""A venue of papers that are only PDF bombs: how many PDF readers run at once, how much memory
they hold together, and how long a paper's reading lasts against its time budget.

    .venv/bin/python -m benchmarks.bench_pdf_readers [--papers 8] [--readers 0] [--budget 5]

Each paper is a 1.5 MB PDF whose one page has a Flate-compressed content stream of 1.5 GB of
zeros (a zip bomb: PDFium inflates it to lay out the page's text). The venue is checked with
``citelens check FOLDER --venue OUT --no-verify`` in a child process while this one samples
``/proc`` every 20 ms: the PDF reader processes alive (``citelens.documents.pdf.extract``),
their summed resident memory, the peak of both; then the wall time of the whole venue and the
budget (``venuePaperMaxSeconds``) every paper had. Issue 40 measured 8 such papers at
8.2-8.8 GB resident with every reader at once, and a 5 s budget running 38 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path


def bomb(path: Path, inflated: int = 1536 << 20) -> None:
    """A one-page PDF whose content stream inflates to ``inflated`` bytes of zeros."""
    comp = zlib.compressobj(9)
    chunk = b"\0" * (1 << 20)
    data = b"".join(comp.compress(chunk) for _ in range(inflated >> 20)) + comp.flush()
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
    ]
    out = b"%PDF-1.7\n"
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(out)


def _readers() -> list[int]:
    """Resident kB of every PDF reader process alive now."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"citelens.documents.pdf.extract" not in cmd:
                continue
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    out.append(int(line.split()[1]))
        except OSError:
            continue
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--papers", type=int, default=8)
    ap.add_argument("--readers", type=int, default=0, help="pdfReaders (0: the machine's cores)")
    ap.add_argument("--budget", type=float, default=5.0, help="venuePaperMaxSeconds")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        venue = Path(tmp) / "venue"
        one = Path(tmp) / "bomb.pdf"
        bomb(one)
        for i in range(args.papers):
            (venue / f"paper{i:02d}").mkdir(parents=True)
            os.link(one, venue / f"paper{i:02d}" / "paper.pdf")
        env = {
            **os.environ,
            "CITELENS_PDF_READERS": str(args.readers),
            "CITELENS_VENUE_PAPER_MAX_SECONDS": str(args.budget),
            "CITELENS_CACHE_DIR": str(Path(tmp) / "cache"),
        }
        peak = {"n": 0, "kb": 0}
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                rss = _readers()
                peak["n"] = max(peak["n"], len(rss))
                peak["kb"] = max(peak["kb"], sum(rss))
                time.sleep(0.02)

        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        out = Path(tmp) / "out"
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "citelens", "check", str(venue), "--venue", str(out), "--no-verify"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - t0
        done.set()
        watcher.join()
        summary = (out / "summary.jsonl").read_text(encoding="utf-8").splitlines()
    readers = args.readers or os.cpu_count()
    print(
        f"{args.papers} papers, each a 1.5 MB PDF bomb; pdfReaders={readers} (cores: {os.cpu_count()}), "
        f"budget {args.budget:g} s a paper"
    )
    gb = peak["kb"] / (1 << 20)
    print(f"PDF readers at once: at most {peak['n']}; their resident memory together: at most {gb:.2f} GB")
    rows = [json.loads(line) for line in summary]
    unread = sum(1 for r in rows if r.get("not_read"))
    over = sum(1 for r in rows if r.get("not_fully_checked"))
    print(
        f"venue wall time: {wall:.1f} s; {len(rows)} papers in summary.jsonl: {unread} not read, "
        f"{over} not fully checked (over the budget); exit {proc.returncode}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
