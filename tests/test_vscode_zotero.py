"""Fix in Zotero in a real VS Code (code-server with the packaged extension, driven by Debian's
chromium through Playwright; see tests/test_vscode_e2e.py for the set-up).

Two papers, each with a refs.bib that a Better BibTeX auto-export of the fake Zotero writes
(tests/fakes/zotero.py; the fake profile's prefs.js names both): one from My Library, one from
a read-only group library. In each, Ctrl+. at the citation whose DOI belongs to another paper,
"Fix in Zotero", and VS Code's own notification with the change and its buttons: "Write to
Zotero". In My Library the fake Zotero receives a PATCH of the DOI alone, its export hook writes
refs.bib again and the finding leaves the Problems panel; in the group, Zotero answers 403, VS Code
says the write was refused, and nothing changes. Screenshots of each step land in the test's
folder (CITELENS_VSCODE_ZOTERO_SHOTS=DIR copies them there).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scholarly import running
from tests.fakes.zotero import (
    DWORK_NAOR_1992,
    MISMATCH_KEY,
    RIGHT_DOI,
    WRONG_DOI,
    BbtPaper,
    ZoteroFake,
    running_zotero,
    seed_paper,
)
from tests.test_vscode_e2e import _go_to, _open_file, _problems, _server_command
from tests.vscode.driver import CHROMIUM_ARGS, chromium, code_server, running_code_server

try:
    from playwright.sync_api import Page, sync_playwright
except ImportError:  # pragma: no cover - the test extra installs it
    Page = Any  # type: ignore[assignment,misc]
    sync_playwright = None  # type: ignore[assignment]

GROUP_KEY = "dwork92group"


@dataclass
class Seen:
    """What one paper's session showed."""

    actions: list[str] = field(default_factory=list)
    question: str = ""
    buttons: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    problems_before: str = ""
    problems_after: str = ""
    shots: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass
class Run:
    zotero: ZoteroFake
    mine: BbtPaper
    group: BbtPaper
    mine_before: str
    group_before: str
    fixed: Seen = field(default_factory=Seen)
    refused: Seen = field(default_factory=Seen)
    log: str = ""

    def context(self, seen: Seen) -> str:
        return f"errors: {seen.errors}\nsaid: {seen.said}\nshots: {seen.shots}\n{self.log[-4000:]}"


def _toasts(page: Page) -> list[str]:
    return [t.strip() for t in page.locator(".notification-toast").all_inner_texts()]


def _shot(page: Page, seen: Seen, tmp: Path, name: str) -> None:
    path = tmp / f"{len(seen.shots) + 1:02d}-{name}.png"
    page.screenshot(path=str(path))
    seen.shots.append(str(path))


def _wait_toast(page: Page, text: str, timeout_s: float) -> Any:
    toast = page.locator(".notification-toast").filter(has_text=text)
    toast.first.wait_for(state="visible", timeout=int(timeout_s * 1000))
    return toast.first


def _fix_in_zotero(page: Page, paper: BbtPaper, key: str, seen: Seen, tmp: Path, expect: str) -> None:
    _open_file(page, "main.tex")
    page.wait_for_selector(".squiggly-error", timeout=90_000)
    seen.problems_before = _problems(page)
    _shot(page, seen, tmp, "opened")
    line, col = paper.cite_position(key)
    _go_to(page, line + 1, col + 3)
    page.keyboard.press("Control+.")
    menu = page.locator(".action-widget")
    menu.wait_for(state="visible", timeout=20_000)
    page.wait_for_timeout(400)
    rows = [t.strip() for t in menu.locator(".monaco-list-row").all_inner_texts()]
    seen.actions = [t for t in rows if t != "Quick Fix"]  # the menu's header
    _shot(page, seen, tmp, "quick-fix-menu")
    for _ in range(len(seen.actions) + 1):  # the keyboard, as the menu wants it
        focused = menu.locator(".monaco-list-row.focused")
        if focused.count() and focused.first.inner_text().strip().startswith("Fix in Zotero"):
            break
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    # VS Code's notification: the change against the item, and the two buttons
    toast = _wait_toast(page, "Fix in Zotero", 30)
    page.wait_for_timeout(500)
    seen.question = toast.locator(".notification-list-item-message").inner_text()
    seen.buttons = [b.strip() for b in toast.locator(".monaco-button").all_inner_texts() if b.strip()]
    _shot(page, seen, tmp, "question")
    toast.locator(".monaco-button").filter(has_text="Write to Zotero").first.click()
    _wait_toast(page, expect, 60)
    page.wait_for_timeout(800)
    seen.said = _toasts(page)
    _shot(page, seen, tmp, "said")


def _scenario(page: Page, run: Run, url_of: Any, tmp: Path) -> None:
    page.goto(url_of(run.mine.dir))
    page.wait_for_selector(".monaco-workbench .part.editor", timeout=90_000)
    page.wait_for_timeout(1500)
    try:
        _fix_in_zotero(page, run.mine, MISMATCH_KEY, run.fixed, tmp / "mine", "Fixed in Zotero")
        deadline = time.monotonic() + 60
        run.fixed.problems_after = _problems(page)
        while "DOI_MISMATCH" in run.fixed.problems_after and time.monotonic() < deadline:
            page.wait_for_timeout(1000)
            run.fixed.problems_after = _problems(page)
        _shot(page, run.fixed, tmp / "mine", "after")
    except Exception as exc:  # keep what was seen; the tests say what is missing
        run.fixed.errors.append(f"{type(exc).__name__}: {exc}")
        _shot(page, run.fixed, tmp / "mine", "failure")
    page.goto(url_of(run.group.dir))
    page.wait_for_selector(".monaco-workbench .part.editor", timeout=90_000)
    page.wait_for_timeout(1500)
    try:
        _fix_in_zotero(page, run.group, GROUP_KEY, run.refused, tmp / "group", "Zotero refused the write")
        page.wait_for_timeout(1500)
        run.refused.problems_after = _problems(page)
        _shot(page, run.refused, tmp / "group", "after")
    except Exception as exc:
        run.refused.errors.append(f"{type(exc).__name__}: {exc}")
        _shot(page, run.refused, tmp / "group", "failure")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, vsix: Path) -> Iterator[Run]:
    if sync_playwright is None:
        pytest.fail("playwright is not installed: it is in the test extra (pip install -e '.[test]')")
    browser_path = chromium()
    exe = code_server()
    tmp = tmp_path_factory.mktemp("vscode-zotero")
    for d in ("mine", "group"):
        (tmp / d).mkdir()
    with running_zotero(tmp / "profile", export_delay_s=0.5) as z, running() as fake:
        z.add_group(7, "Reading group", editable=False)
        mine = seed_paper(z, tmp / "paper")
        group = seed_paper(z, tmp / "group-paper", library="groups/7", key=GROUP_KEY)
        fake.add_paper(DWORK_NAOR_1992)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_") and k != "S2_API_KEY"}
        env.update(fake.env())
        env.update(z.env())  # the profile and Zotero's address reach the server as a user's env
        env.update(
            CITELENS_CACHE_DIR=str(tmp / "cache"),
            CITELENS_S2_RPS="1000",
            CITELENS_RETRY_BACKOFF="0.01",
            XDG_CONFIG_HOME=str(tmp / "xdg-config"),
            XDG_DATA_HOME=str(tmp / "xdg-data"),
            HOME=str(tmp / "home"),
        )
        (tmp / "home").mkdir()
        settings = {
            "citelens.server.command": _server_command(),
            "workbench.startupEditor": "none",
            "workbench.tips.enabled": False,
            "telemetry.telemetryLevel": "off",
            "extensions.autoCheckUpdates": False,
            "extensions.autoUpdate": False,
            "update.mode": "none",
            "security.workspace.trust.enabled": False,
            "window.commandCenter": False,
            "remote.autoForwardPorts": False,
        }
        result = Run(
            z, mine, group, mine.bib.read_text(encoding="utf-8"), group.bib.read_text(encoding="utf-8")
        )
        with running_code_server(exe, vsix, tmp, env, settings) as cs:
            assert sync_playwright is not None
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page(viewport={"width": 1280, "height": 760})
                    _scenario(page, result, cs.folder_url, tmp)
                finally:
                    browser.close()
            result.log = cs.server_log()
        shots = os.environ.get("CITELENS_VSCODE_ZOTERO_SHOTS")
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            for seen, name in ((result.fixed, "mine"), (result.refused, "group")):
                for s in seen.shots:
                    shutil.copy(s, Path(shots) / f"{name}-{Path(s).name}")
        yield result


def test_fix_in_zotero_is_offered_first(run: Run) -> None:
    seen = run.fixed
    assert seen.actions, run.context(seen)
    assert seen.actions[0] == f"Fix in Zotero: DOI → {RIGHT_DOI}", seen.actions
    assert seen.actions[1] == "Edit the .bib anyway (the next export overwrites it)", seen.actions


def test_vscode_shows_the_change_and_its_buttons(run: Run) -> None:
    seen = run.fixed
    assert f"DOI: {WRONG_DOI} → {RIGHT_DOI}" in seen.question, run.context(seen)
    assert "My Library" in seen.question and "Zotero's local API" in seen.question, seen.question
    assert seen.buttons[:2] == ["Write to Zotero", "Cancel"], seen.buttons


def test_zotero_gets_the_doi_alone_and_the_export_clears_the_finding(run: Run) -> None:
    seen = run.fixed
    mine = [p for p in run.zotero.patches() if "/users/0/" in p.path]
    assert [p.body for p in mine] == [{"DOI": RIGHT_DOI}], run.context(seen)
    assert run.mine.bib.read_text(encoding="utf-8") == run.mine_before.replace(WRONG_DOI, RIGHT_DOI)
    assert "DOI_MISMATCH" in seen.problems_before
    assert "DOI_MISMATCH" not in seen.problems_after, seen.problems_after
    said = " ".join(seen.said)
    assert re.search(r"Fixed in Zotero, exported: dwork92pricingvia in refs\.bib", said), said


def test_a_read_only_group_is_refused_and_nothing_changes(run: Run) -> None:
    seen = run.refused
    assert seen.actions and seen.actions[0].startswith("Fix in Zotero"), run.context(seen)
    said = " ".join(seen.said)
    assert "Zotero refused the write" in said and "Reading group" in said, said
    group = [p for p in run.zotero.patches() if "/groups/7/" in p.path]
    assert [p.status for p in group] == [403]
    assert run.group.bib.read_text(encoding="utf-8") == run.group_before
    assert "DOI_MISMATCH" in seen.problems_after
