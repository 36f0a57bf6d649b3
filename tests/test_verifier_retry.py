"""The editor retries entries that an outage left UNVERIFIED, with one timer and backoff."""

from __future__ import annotations

import asyncio

import pytest

from citelens.core.settings import Settings
from citelens.lsp import verification as vmod
from citelens.verify.status import Status, Verification
from citelens.workspace.session import Session


def _verifier(monkeypatch: pytest.MonkeyPatch) -> tuple[vmod.Verifier, list[float | None]]:
    monkeypatch.setattr(vmod, "RETRY_FIRST_S", 0.02)
    v = vmod.Verifier(Session(Settings()), publish=lambda: None, publish_soon=lambda: None,
                      log_line=lambda _m, _l: None,
                      progress=lambda _n: None)  # type: ignore[arg-type,return-value]
    calls: list[float | None] = []
    v.schedule = lambda delay=None, force=False: calls.append(delay)  # type: ignore[method-assign]
    return v, calls


async def test_unverified_entries_are_checked_again_after_an_outage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    v, calls = _verifier(monkeypatch)
    down = Verification("a", Status.UNVERIFIED, "Not verified: could not ask Semantic Scholar",
                        content_hash="h1")
    fine = Verification("b", Status.VERIFIED, "Verified", content_hash="h2")
    verdicts = v.session.verdicts
    verdicts.update({"h1": down, "h2": fine})
    v._retry_later([down, fine])
    assert calls == [] and "h1" in verdicts
    await asyncio.sleep(0.1)
    assert calls == [0.0]  # scheduled again, without the debounce
    assert "h1" not in verdicts and "h2" in verdicts  # only the failed one is forgotten
    assert v._retry_delay == pytest.approx(0.04)  # backoff doubles while the outage lasts


async def test_no_timer_when_nothing_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    v, calls = _verifier(monkeypatch)
    fine = Verification("b", Status.VERIFIED, "Verified", content_hash="h2")
    v._retry_later([fine])
    await asyncio.sleep(0.06)
    assert calls == [] and v._retry is None
