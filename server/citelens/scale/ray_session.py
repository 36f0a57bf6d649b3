"""Joining Ray safely: a private local instance on loopback, or a cluster the user names.

``--ray --workers N`` (no address) starts a Ray instance of its own, whatever ran before:
``address="local"`` (an earlier ``ray start`` leaves ``ray_current_cluster`` in Ray's temp
folder, and Ray would otherwise join that cluster, dead or not), a private temp folder
removed afterwards, no dashboard, and every process bound to loopback. Ray turns the
node address ``127.0.0.1`` into the machine's outward address unless clusters are
switched off for the process (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, read when Ray is
imported and by the processes it starts): with it, its coordinator, node manager, workers
and this driver listen on 127.0.0.1 only.

``--ray HOST:PORT`` joins the cluster whose head listens there (``ray start --head``):
a loopback HOST keeps this driver on loopback too, and when Ray's token authentication
is on (Ray's default for ``ray start``) the driver presents the token Ray finds where it
keeps it (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``): a driver
left in Ray's default mode would retry "InvalidAuthToken" until it gives up. The token is
never read here, only whether Ray has one. ``ray://HOST:PORT`` (Ray Client) needs
``ray[client]``, which ``citelens[scale]`` does not install: it is refused with that advice.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
_NO_CLUSTER = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _host(address: str) -> str:
    return address.rsplit(":", 1)[0] if ":" in address and not address.endswith("]") else address


def _has_token(env: MutableMapping[str, str]) -> bool:
    if env.get("RAY_AUTH_TOKEN"):
        return True
    path = env.get("RAY_AUTH_TOKEN_PATH")
    return Path(path).is_file() if path else (Path.home() / ".ray" / "auth_token").is_file()


@contextlib.contextmanager
def _env(changes: dict[str, str]) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def ray_env(address: str | None, env: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """The environment Ray needs set before it is imported, for ``address`` (None: local)."""
    env = os.environ if env is None else env
    out: dict[str, str] = {}
    if address is None or _host(address) in LOOPBACK:
        out[_NO_CLUSTER] = "0"  # node address stays 127.0.0.1: every listener on loopback
    if address is not None and "RAY_AUTH_MODE" not in env and _has_token(env):
        out["RAY_AUTH_MODE"] = "token"
    return out


@contextlib.contextmanager
def joined(address: str | None, workers: int) -> Iterator[Any]:
    """Ray, initialised for this run (the ``ray`` module), shut down afterwards."""
    if address is not None and address.startswith("ray://"):
        raise RuntimeError(
            f"--ray {address}: Ray Client needs pip install 'ray[client]'; "
            "give the head's address instead: --ray HOST:6379 (the GCS port of `ray start --head`)"
        )
    with _env(ray_env(address)):
        try:
            import ray
            from ray._private import ray_constants
        except ImportError as exc:
            raise RuntimeError("--ray needs Ray: pip install 'citelens[scale]'") from exc
        if address is None or _host(address) in LOOPBACK:
            # Ray read the variable when first imported; an earlier import in this process
            # would have missed it.
            ray_constants.ENABLE_RAY_CLUSTER = False
        if ray.is_initialized():
            yield ray  # the caller's own Ray session: left as it is
            return
        temp = None
        try:
            if address is None:
                temp = tempfile.mkdtemp(prefix="citelens-ray-")
                ray.init(
                    address="local",
                    num_cpus=max(1, workers),
                    _node_ip_address="127.0.0.1",
                    _temp_dir=temp,
                    include_dashboard=False,
                    log_to_driver=False,
                )
            else:
                try:
                    ray.init(address=address, log_to_driver=False, include_dashboard=False)
                except (ConnectionError, RuntimeError) as exc:
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    raise RuntimeError(f"could not join the Ray cluster at {address}: {first}") from None
            yield ray
        finally:
            if ray.is_initialized():
                ray.shutdown()
            if temp is not None:
                shutil.rmtree(temp, ignore_errors=True)
