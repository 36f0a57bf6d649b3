"""Entries an outage left UNVERIFIED are checked again: the engine's policy says which and when
(1, 2, 4… up to 16 minutes while the outage lasts), the editor keeps one timer and applies
``RetryDue`` when it fires."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from citelens.core.settings import Settings
from citelens.lsp.verification import Verifier
from citelens.verify.status import Status, Verification
from citelens.workspace.changes import Changes, Retry
from citelens.workspace.engine import Engine
from citelens.workspace.events import Event, Outcome, RetryDue, RunEnded
from citelens.workspace.runs import RETRY_FIRST_S, RETRY_MAX_S

DOWN = Verification("a", Status.UNVERIFIED, "Not verified: could not ask Semantic Scholar", content_hash="h1")
FINE = Verification("b", Status.VERIFIED, "Verified", content_hash="h2")


def test_a_finished_run_names_what_an_outage_left_unverified_and_when() -> None:
    engine = Engine(Settings())
    delays = []
    for _ in range(6):
        retry = engine.apply(RunEnded(1, Outcome.FINISHED, {"a": DOWN, "b": FINE})).retry
        assert retry is not None and retry.hashes == {"h1"}  # only the one a source failed
        delays.append(retry.after_s)
    assert delays == [RETRY_FIRST_S, 120.0, 240.0, 480.0, RETRY_MAX_S, RETRY_MAX_S]  # 1, 2, 4… 16 min
    # the outage is over: nothing to retry, and the next outage starts at a minute again
    assert engine.apply(RunEnded(2, Outcome.FINISHED, {"b": FINE})).retry == Retry(None)
    again = engine.apply(RunEnded(3, Outcome.FINISHED, {"a": DOWN})).retry
    assert again == Retry(RETRY_FIRST_S, frozenset({"h1"}))
    # a cancelled run says nothing of retries (the run that superseded it will)
    assert engine.apply(RunEnded(4, Outcome.CANCELLED, {})).retry is None


def test_offline_nothing_is_retried() -> None:
    engine = Engine(Settings(offline=True))
    assert engine.apply(RunEnded(1, Outcome.FINISHED, {"a": DOWN})).retry == Retry(None)


def test_when_the_retry_is_due_only_the_failed_verdict_is_forgotten() -> None:
    engine = Engine(Settings())
    engine.verdicts.keep("h1", DOWN)
    engine.verdicts.keep("h2", FINE)
    changes = engine.apply(RetryDue(frozenset({"h1"})))
    assert "h1" not in engine.verdicts and "h2" in engine.verdicts
    assert changes.run is None and changes.hurry  # nothing open to verify: a waiting run starts now


async def test_the_editor_keeps_one_timer_and_applies_the_retry_when_it_fires() -> None:
    events: list[Event] = []
    verifier = Verifier(Engine(Settings()), events.append, log_line=lambda _m, _l: None,
                        progress=lambda _n: None)  # type: ignore[arg-type,return-value]
    verifier.follow(Changes(retry=Retry(0.02, frozenset({"h1"}))))
    verifier.follow(Changes(retry=Retry(0.03, frozenset({"h3"}))))  # a new one replaces it
    assert events == []
    await asyncio.sleep(0.1)
    assert events == [RetryDue(frozenset({"h3"}))]
    verifier.follow(Changes(retry=Retry(0.02, frozenset({"h1"}))))
    verifier.follow(Changes(retry=Retry(None)))  # the outage is over: the timer is cancelled
    await asyncio.sleep(0.06)
    assert events == [RetryDue(frozenset({"h3"}))]


@pytest.mark.parametrize("outcome", [Outcome.FINISHED, Outcome.FAILED])
def test_a_run_that_ended_lets_the_next_plan_start(outcome: Outcome) -> None:
    """What a run covered is no longer covered once it ended, whatever its end."""
    engine = Engine(Settings())
    engine.runs.checking = frozenset({"h1"})
    engine.runs.current = 7
    engine.apply(RunEnded(7, outcome, {}))
    assert engine.runs.checking == frozenset()


class _Progress:
    async def begin(self) -> None:
        pass

    def report(self, done: int, total: int) -> None:
        pass

    def count(self, status: Status) -> None:
        pass

    def end(self, message: str = "done") -> None:
        pass


async def test_a_streamed_verdict_crosses_into_the_engine_once() -> None:
    """Each verdict a run decides is one event (``VerdictSettled``: kept, counted, reported
    soon), the run's end one more (``RunEnded``); nothing else of the run reaches the engine."""
    from citelens.workspace.changes import Run
    from citelens.workspace.events import VerdictSettled

    verdicts = [Verification(k, Status.VERIFIED, "Verified", content_hash=f"h{k}") for k in "abc"]

    class Session:
        async def verify(self, run: Run, **kw: Any) -> dict[str, Verification]:
            for v in verdicts:
                kw["on_verdict"](v)
                await asyncio.sleep(0)
            return {v.key: v for v in verdicts}

    events: list[Event] = []
    verifier = Verifier(Session(), events.append, log_line=lambda _m, _l: None,  # type: ignore[arg-type]
                        progress=lambda _n: _Progress())  # type: ignore[arg-type,return-value]
    verifier.start(Run(5, (), 0.0))
    await verifier.wait()
    assert events == [*(VerdictSettled(5, v) for v in verdicts), RunEnded(5, Outcome.FINISHED, {
        v.key: v for v in verdicts})]


async def test_open_and_save_start_a_run_waiting_for_its_debounce_now() -> None:
    from citelens.workspace.changes import Run

    started = asyncio.Event()

    class Session:
        async def verify(self, run: Run, **kw: Any) -> dict[str, Verification]:
            started.set()
            return {}

    events: list[Event] = []
    verifier = Verifier(Session(), events.append, log_line=lambda _m, _l: None,  # type: ignore[arg-type]
                        progress=lambda _n: _Progress())  # type: ignore[arg-type,return-value]
    verifier.start(Run(1, (), 30.0))  # the debounce
    await asyncio.sleep(0.05)
    assert not started.is_set()
    verifier.hurry()
    await asyncio.wait_for(started.wait(), 5)
    await verifier.wait()
    assert events == [RunEnded(1, Outcome.FINISHED, {})]
