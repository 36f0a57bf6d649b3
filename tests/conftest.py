"""Shared test fixtures. Fakes of remote services live in tests/fakes/."""

from __future__ import annotations

import os
import sys
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


#: Session fixtures worth starting once per run rather than once per worker: every test
#: that uses one runs on the same worker (the group is the fixture's name).
ONCE_PER_RUN = ("vsix", "postgres_url")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``, scripts/test.sh), the tests that share a
    costly fixture run on one worker, so that it is set up once: a fixture of
    :data:`ONCE_PER_RUN`, else any module- or class-scoped fixture (a real editor, a venue
    run) keeps its module together. Without xdist the mark does nothing."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        names = set(info.names_closure)
        group = next((name for name in ONCE_PER_RUN if name in names), None)
        if group is None and any(
            defs and defs[-1].scope in {"module", "class", "package"}
            for defs in info.name2fixturedefs.values()
        ):
            group = item.nodeid.split("::")[0]
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Fail loudly when ``--dist loadgroup`` no longer groups (pytest 9.2 with pytest-xdist
    3.8: the group suffix of the test id is silently lost, and each worker would start its
    own VS Code, Neovim and venue runs)."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    lost = [i.nodeid for i in session.items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
    if lost:
        why = (f"--dist loadgroup lost the group of {len(lost)} tests (e.g. {lost[0]}): this pytest "
               f"({pytest.__version__}) and pytest-xdist do not work together; install the versions "
               "pyproject.toml's test extra names (pip install -e '.[test]')")
        print(f"tests/conftest.py: {why}", file=sys.__stderr__)  # a worker's exit reason is not shown
        pytest.exit(why, returncode=4)


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this run that every worker shares: under pytest-xdist (scripts/test.sh)
    the parent of the workers' own temporary folders, else the run's temporary folder."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The VS Code extension built once per run, as a contributor builds it (``npm ci``,
    ``npm run compile``, ``vsce package``: a minute), for the packaging test and the real
    VS Code test alike: the first worker that needs it builds it (in the one
    clients/vscode folder), the others wait for it and use the same file."""
    from filelock import FileLock

    from tests.vscode.build import build_vsix

    shared = run_folder(tmp_path_factory)
    out = shared / "vsix" / "citelens.vsix"
    with FileLock(shared / "vsix.lock"):
        if not out.is_file():
            out.parent.mkdir(exist_ok=True)
            build_vsix(out)
    return out


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
