"""Shared test fixtures. Fakes of remote services live in tests/fakes/."""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

from tests import reads
from tests.fakes.scholarly import scholarly_server  # noqa: F401  (fixture)
from tests.postgres import postgres_url  # noqa: F401  (fixture)

#: Every file this process reads outside the repository (tests/reads.py): installed before
#: any test module is collected, so a module-level read is seen too.
READS = reads.install()


def _inside(phase: str) -> Generator[None, object, object]:
    with READS.watch() as seen:
        result = yield
    if seen:
        shown = "\n  ".join(dict.fromkeys(seen))
        raise AssertionError(
            f"the test read outside the repository during {phase} (a fresh clone has none of "
            f"it: put the data under tests/, see tests/README.md):\n  {shown}")
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _inside("setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _inside("the test"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _inside("teardown"))


@pytest.fixture(scope="session")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The VS Code extension built once per run, as a contributor builds it (``npm ci``,
    ``npm run compile``, ``vsce package``: a minute), for the packaging test and the real
    VS Code test alike."""
    from tests.vscode.build import build_vsix

    return build_vsix(tmp_path_factory.mktemp("vsix") / "citelens.vsix")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may reach a real host or a real cache: point everything at nowhere."""
    for var in list(os.environ):
        if var.startswith("CITELENS_") or var in {"S2_API_KEY", "OPENAI_API_KEY"}:
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CITELENS_CACHE_DIR", str(tmp_path / "cache"))
    unreachable = "http://127.0.0.1:9"  # discard port: refuses at once
    for var in (
        "CITELENS_S2_API_URL", "CITELENS_CROSSREF_API_URL", "CITELENS_OPENALEX_API_URL",
        "CITELENS_ARXIV_API_URL", "CITELENS_ARXIV_URL", "CITELENS_DOI_URL",
        "CITELENS_NCBI_EUTILS_URL", "CITELENS_UNPAYWALL_API_URL",
    ):
        monkeypatch.setenv(var, unreachable)
    # addresses found in data (a url field of a corpus .bib) are real hosts: not fetched
    # unless a test serves them itself and turns fetchEntryUrls on
    monkeypatch.setenv("CITELENS_FETCH_ENTRY_URLS", "false")
