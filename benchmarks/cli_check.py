"""``citelens check --format json`` in its own process against a fake of the scholarly APIs
(shared by the benchmarks that time the command line)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from tests.fakes.scholarly import ScholarlyFake
from tests.harness import run_citelens


def check_against(
    fake: ScholarlyFake, path: Path, tmp: Path, code: str | None, timeout: float
) -> tuple[subprocess.CompletedProcess[str], float]:
    """(the finished process, its wall time): no CITELENS_* setting of this shell, the
    fake's base URLs, a fresh cache in ``tmp``; ``code``: run DIR/server instead of this
    checkout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_")}
    env.update(fake.env(), CITELENS_CACHE_DIR=str(tmp / "cache"))
    if code:
        env["PYTHONPATH"] = str(Path(code) / "server")
    t0 = time.perf_counter()
    proc = run_citelens("check", str(path), "--format", "json", env=env, timeout=timeout)
    return proc, time.perf_counter() - t0
