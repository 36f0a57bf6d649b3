"""A throwaway PostgreSQL server for the tests (Debian's ``postgresql`` package, which
``.ci/run`` installs): initdb in a temporary folder, trust authentication, loopback only,
no fsync; stopped and deleted after the session. PostgreSQL refuses to run as root, so
as root the server runs as the ``postgres`` user the package creates."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

import pytest

from tests.harness import free_port


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    return versions[-1] if versions else None


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    """A PostgreSQL server for as long as the block runs: its URL (no password, trust)."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if not initdb or not pg_ctl:
        raise FileNotFoundError("PostgreSQL is not installed (apt-get install postgresql; .ci/run does)")
    prefix: list[str] = []
    data = tempfile.mkdtemp(prefix="citelens-pg-")
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    try:
        subprocess.run(
            [*prefix, initdb, "-D", data, "-U", "citelens", "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        subprocess.run(
            [*prefix, pg_ctl, "-D", data, "-o", options, "-l", os.path.join(data, "log"), "-w", "start"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        yield f"postgresql://citelens@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", data, "-m", "immediate", "stop"], capture_output=True, timeout=60
        )
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    try:
        with throwaway_postgres() as url:
            yield url
    except FileNotFoundError as exc:
        if os.environ.get("CI"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))
