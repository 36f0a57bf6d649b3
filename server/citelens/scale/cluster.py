"""``citelens check FOLDER --venue OUT --ray [ADDRESS]``: the venue check on Ray.

The driver lists the papers, keeps OUT (reports, summary.jsonl, summary.html: the same
files and the same resume as on one machine) and hands batches of papers to Ray tasks,
a few more than there are workers so none waits. A task checks its batch with the same
code as one machine (:func:`citelens.venue.run.check_batch`); its host clients ask
one :class:`~citelens.scale.limiter.RateLimiter` actor before each request, and its
verification cache is the ``cache`` setting's (a ``postgresql://`` URL shares the answers
between machines; the disk cache is per machine). The snapshot (setting ``snapshot``)
must be at the same path on every machine, and so must the papers (shared storage).

Without ADDRESS a local Ray instance is started with ``--workers`` CPUs: the same code
on one laptop with no cluster.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from citelens.core.settings import Settings
from citelens.scale.limiter import RateLimiter
from citelens.scale.ray_session import joined
from citelens.sources.names import source_name
from citelens.venue.run import MEMO_SIZE, Checked, Paper, VenueOutput, VenueRun, check_batch
from citelens.workspace.pipeline import Pipeline
from citelens.workspace.verdicts import Verdicts

Log = Callable[[str], None]
LIMITER_NAME = "citelens-rate-limiter"


#: What one Ray task hands back: the papers checked, the distinct entries it verified, and
#: the sources its clients found refusing (Pipeline.source_outs: key, the line with its fix).
BatchResult = tuple[list[Checked], int, list[tuple[str, str]]]


async def _batch(part: list[Paper], settings: Settings, limiter: Any) -> BatchResult:
    logs: list[str] = []
    pipeline = Pipeline(settings, logs.append)  # this task's event loop: its own clients

    async def pace(host: str, interval: float) -> None:
        delay = await limiter.slot.remote(host, interval)
        if delay > 0:
            await asyncio.sleep(delay)

    for h in pipeline.sources().hosts().values():
        h.shared_pacer = pace
    try:
        with tempfile.TemporaryDirectory(prefix="citelens-bbl-") as bbl:
            checked, distinct = await check_batch(part, pipeline, Verdicts(limit=MEMO_SIZE), Path(bbl))
        return checked, distinct, pipeline.source_outs()
    finally:
        await pipeline.aclose()


def batch_task(part: list[Paper], settings: Settings, limiter: Any) -> BatchResult:
    """One Ray task: a batch of papers, checked in the worker's own event loop."""
    return asyncio.run(_batch(part, settings, limiter))


def check_venue_on_ray(
    folder: str,
    out_dir: str,
    settings: Settings,
    *,
    address: str | None = None,
    workers: int = 2,
    batch_size: int = 16,
    log: Log | None = None,
    progress: Log | None = None,
    cleared: str | None = None,
) -> VenueRun:
    with joined(address, workers) as ray:
        output = VenueOutput(folder, out_dir, progress, settings, cleared)
        return _run(ray, output, settings, workers, batch_size, log)


def _run(
    ray: Any, output: VenueOutput, settings: Settings, workers: int, batch_size: int, log: Log | None
) -> VenueRun:
    limiter = ray.remote(RateLimiter).options(name=LIMITER_NAME, get_if_exists=True).remote()
    task = ray.remote(batch_task).options(num_cpus=1, max_retries=2)

    def load() -> str:  # the cluster's requests, as the shared limiter granted them
        granted: dict[str, int] = ray.get(limiter.counts.remote())
        if not granted:
            return "0 requests"
        busiest = max(granted, key=lambda h: granted[h])
        name = source_name(busiest, busiest)
        return f"{sum(granted.values())} requests, busiest host {name} ({granted[busiest]})"

    output.requests = load
    # a task's clients are its own: the driver says each source's refusal once (the log, the
    # report's header), whichever task met it first
    outs: dict[str, str] = {}
    output.outs = lambda: list(outs.items())

    def refused(found: list[tuple[str, str]]) -> None:
        for key, message in found:
            if key not in outs:
                outs[key] = message
                if log is not None:
                    log(message)
    batches = [output.todo[i : i + batch_size] for i in range(0, len(output.todo), batch_size)]
    pending: dict[Any, list[Paper]] = {}
    queue = iter(batches)

    def submit() -> None:
        part = next(queue, None)
        if part is not None:
            pending[task.remote(part, settings, limiter)] = part

    try:
        for _ in range(2 * max(1, workers)):
            submit()
        while pending:
            done, _rest = ray.wait(list(pending), num_returns=1)
            for ref in done:
                part = pending.pop(ref)
                try:
                    checked, distinct, found = ray.get(ref)
                except Exception as exc:  # a batch that failed is left for the next run
                    if log is not None:
                        log(f"batch of {len(part)} papers failed ({type(exc).__name__}); rerun to retry")
                    checked, distinct, found = [], 0, []
                    output.batch_failed()
                refused(found)
                output.add(checked, distinct)
                submit()
    finally:
        run = output.close()
    return run
