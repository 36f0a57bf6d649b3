"""Ray, safely: ``--ray --workers N`` starts a private instance on loopback whatever ran
before, and ``--ray HOST:PORT`` joins a head started by ``ray start --head`` (with Ray's
token authentication, its default) using only what ``citelens[scale]`` installs. Against
the fake scholarly APIs on loopback; Ray's temp folder and home are the test's own."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.fakes.scholarly import ScholarlyFake
from tests.harness import free_port, run_citelens
from tests.test_scale import _statuses, _venue

pytest.importorskip("ray", reason="pip install 'citelens[scale]' (the test extra pulls it in)")
psutil = pytest.importorskip("psutil")  # vendored by Ray, importable once Ray is

#: Runs the venue on a local Ray instance; at the first progress line (Ray and its workers
#: up) lists what every process of this tree listens on.
PROBE = """
import json, os, sys
import ray  # noqa: F401  (Ray vendors psutil: importable once Ray is)
import psutil
from citelens.core.settings import from_sources
from citelens.scale.cluster import check_venue_on_ray
seen = []
def listeners(_msg):
    if seen:
        return
    me = psutil.Process(os.getpid())
    procs = [me, *me.children(recursive=True)]
    pids = {p.pid for p in procs}
    for c in psutil.net_connections("inet"):
        if c.status == psutil.CONN_LISTEN and c.pid in pids:
            seen.append([c.laddr.ip, c.laddr.port, psutil.Process(c.pid).name()])
    workers = [p for p in procs if "ray::" in p.name() or "default_worker" in " ".join(p.cmdline())]
    seen.append(["workers", len(workers), ""])
run = check_venue_on_ray(
    sys.argv[1], sys.argv[2], from_sources(), workers=2, batch_size=1, progress=listeners
)
print(json.dumps({"listen": seen, "papers": run.papers}))
"""


def _loopback(ip: str) -> bool:
    return ip in {"127.0.0.1", "::1", "::ffff:127.0.0.1"} or ip.startswith("127.")


def test_local_ray_listens_on_loopback_only_and_ignores_a_stale_cluster(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    v = _venue(tmp_path, 3)
    raytmp = tmp_path / "raytmp"
    (raytmp / "ray").mkdir(parents=True)
    # what an earlier `ray start` leaves behind: Ray would join this (dead) cluster
    (raytmp / "ray" / "ray_current_cluster").write_text("127.0.0.1:9\n")
    env = {
        **os.environ,
        **scholarly_server.env(),
        "RAY_TMPDIR": str(raytmp),
        "HOME": str(tmp_path / "home"),
    }
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(v), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["papers"] == 3
    listen = [x for x in got["listen"] if x[0] != "workers"]
    workers = next(x for x in got["listen"] if x[0] == "workers")[1]
    assert workers >= 1, got  # the workers were up when the sockets were listed
    assert len(listen) >= 3, got  # coordinator, node manager, driver at least
    wide = [x for x in listen if not _loopback(x[0])]
    assert not wide, f"Ray listens beyond loopback: {wide}"
    # the instance was private: the stale file is untouched, no session left in Ray's folder
    assert (raytmp / "ray" / "ray_current_cluster").read_text() == "127.0.0.1:9\n"


def test_the_cli_starts_its_own_instance_over_a_stale_cluster_file(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    v = _venue(tmp_path, 2)
    raytmp = tmp_path / "raytmp"
    (raytmp / "ray").mkdir(parents=True)
    (raytmp / "ray" / "ray_current_cluster").write_text("127.0.0.1:9\n")
    env = {**os.environ, **scholarly_server.env(), "RAY_TMPDIR": str(raytmp), "HOME": str(tmp_path / "h")}
    proc = run_citelens("check", str(v), "--venue", str(tmp_path / "out"), "--ray", "--workers", "1", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "2/2 papers, 8 references" in proc.stderr


def test_ray_client_address_is_refused_with_the_supported_form(tmp_path: Path) -> None:
    v = _venue(tmp_path, 1)
    proc = run_citelens("check", str(v), "--venue", str(tmp_path / "out"), "--ray", "ray://127.0.0.1:10001")
    assert proc.returncode == 2
    assert "ray[client]" in proc.stderr and "--ray HOST:6379" in proc.stderr
    assert "Traceback" not in proc.stderr


def _stop(head: subprocess.Popen[str]) -> None:
    """The head this test started, and only it (its own process group)."""
    try:
        os.killpg(head.pid, signal.SIGTERM)
        head.wait(timeout=45)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        pass
    try:
        os.killpg(head.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    head.wait(timeout=10)


def test_a_venue_on_a_ray_start_head_on_loopback_with_token_auth(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    v = _venue(tmp_path, 4)
    port = free_port()
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        **scholarly_server.env(),
        "HOME": str(home),  # Ray keeps the cluster's token under ~/.ray
        "CITELENS_CACHE_DIR": str(tmp_path / "c"),
    }
    # `ray` as this interpreter runs it (the workers import this checkout's citelens)
    ray_bin = [sys.executable, "-c", "import sys; from ray.scripts.scripts import main; sys.exit(main())"]
    # a token makes `ray start` turn Ray's token authentication on (docs/scale.md)
    subprocess.run([*ray_bin, "get-auth-token", "--generate"], env=env, capture_output=True, check=True)
    assert (home / ".ray" / "auth_token").exists()
    log = (tmp_path / "head.log").open("w")
    rt = tempfile.mkdtemp(prefix="cl-ray-")  # Ray's socket paths must stay under 108 bytes
    head = subprocess.Popen(
        [
            *ray_bin,
            "start",
            "--head",
            "--node-ip-address",
            "127.0.0.1",
            "--port",
            str(port),
            "--num-cpus",
            "2",
            "--include-dashboard",
            "false",
            "--disable-usage-stats",
            "--temp-dir",
            rt,
            "--block",
        ],
        env={**env, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"},  # as docs/scale.md says for loopback
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        started = tmp_path / "head.log"
        while "Ray runtime started" not in started.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "Token authentication is enabled" in (tmp_path / "head.log").read_text()
        local = run_citelens("check", str(v), "--venue", str(tmp_path / "local"), env=env)
        assert local.returncode == 0, local.stderr[-2000:]
        proc = run_citelens(
            "check",
            str(v),
            "--venue",
            str(tmp_path / "ray"),
            "--ray",
            f"127.0.0.1:{port}",
            env=env,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "InvalidAuthToken" not in proc.stderr
        assert "4/4 papers, 16 references" in proc.stderr, proc.stderr[-3000:]
        assert _statuses(tmp_path / "ray") == _statuses(tmp_path / "local")
    finally:
        _stop(head)
        log.close()
        shutil.rmtree(rt, ignore_errors=True)
