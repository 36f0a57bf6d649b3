"""ruff (lint, complexity 15, format) and mypy --strict stay clean on the server package (CI
enforces what the guide asks)."""

from __future__ import annotations

import subprocess
import sys

from tests.harness import ROOT


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)


def test_ruff_is_clean() -> None:
    proc = run("ruff", "check", "server", "tests", "benchmarks")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_clean() -> None:
    proc = run("ruff", "format", "--check", "server")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_is_clean() -> None:
    proc = run("mypy")  # files and strictness come from pyproject.toml
    assert proc.returncode == 0, proc.stdout + proc.stderr
