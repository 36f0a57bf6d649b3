"""A real VS Code (code-server 4.100.3) with the packaged extension, driven by headless Chromium.

scripts/install-code-server.sh installs code-server from npm into a cache folder (once); the
extension is built and packaged like a release (tests/vscode/build.py) and installed with
``--install-extension``; the server is this checkout's ``citelens serve``; every scholarly API is
the fake on 127.0.0.1, whose addresses reach the server only through ``CITELENS_*`` environment
variables (no CiteLens URL setting is set). The test opens a small paper (tests/vscode/paper.py)
as a user does and checks what VS Code shows and what lands on disk.

Needs node + npm, Debian's chromium, ripgrep and libkrb5-dev (scripts/install-vscode-test-deps.sh,
run by .ci/run) and playwright (test extra). Anything missing fails the test with the reason.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.scholarly import ScholarlyFake, running
from tests.vscode.driver import CHROMIUM_ARGS, chromium, code_server, running_code_server
from tests.vscode.paper import FABRICATED_KEY, MISMATCH_KEY, RIGHT_DOI, WRONG_DOI, VsPaper, fake_papers, seed

try:
    from playwright.sync_api import Page, sync_playwright
except ImportError:  # pragma: no cover - the test extra installs it
    Page = Any  # type: ignore[assignment,misc]
    sync_playwright = None  # type: ignore[assignment]

TYPED = "matplotlib 2D graphics"
MATPLOTLIB = "Matplotlib: A 2D graphics environment"


def _server_command() -> list[str]:
    script = Path(sys.executable).parent / "citelens"
    return [str(script), "serve"] if script.is_file() else [sys.executable, "-m", "citelens", "serve"]


@dataclass
class Run:
    """What the scripted session saw; the tests below assert on it."""

    paper: VsPaper
    fake: ScholarlyFake
    first_squiggle_s: float | None = None
    problems: str = ""
    hover: str = ""
    code_actions: list[str] = field(default_factory=list)
    bib_after_fix: str = ""
    mark_actions: list[str] = field(default_factory=list)
    bib_after_mark: str = ""
    problems_after_mark: str = ""
    mark_screenshot: str = ""
    suggestions: str = ""
    bib_after_cite: str = ""
    tex_after_cite: str = ""
    fake_requests: int = 0
    errors: list[str] = field(default_factory=list)
    log: str = ""

    def context(self) -> str:
        return f"errors: {self.errors}\nproblems: {self.problems}\n{self.log}"


def _editor_text(page: Page, text: str) -> Any:
    return page.locator(".monaco-editor .view-lines span").filter(has_text=re.compile(re.escape(text))).last


def _command(page: Page, name: str) -> None:
    """Run a command from the Command Palette, as a user would."""
    page.keyboard.press("F1")
    page.wait_for_selector(".quick-input-widget input", state="visible", timeout=10_000)
    page.keyboard.type(name)
    page.wait_for_timeout(400)
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)


def _open_file(page: Page, name: str) -> None:
    page.keyboard.press("Control+p")
    page.wait_for_selector(".quick-input-widget input", state="visible", timeout=10_000)
    page.keyboard.type(name)
    row = page.locator(".quick-input-widget .monaco-list-row").filter(has_text=name).first
    row.wait_for(state="visible", timeout=10_000)
    row.click()
    page.locator(".tabs-container .tab.active").filter(has_text=name).wait_for(timeout=10_000)


def _go_to(page: Page, line: int, column: int) -> None:
    """Put the cursor at 1-based ``line``:``column`` (Go to Line/Column)."""
    page.keyboard.press("Control+g")
    page.wait_for_selector(".quick-input-widget input", state="visible", timeout=10_000)
    page.keyboard.type(f"{line}:{column}")
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)


def _wait_file(path: Path, needle: str, timeout_s: float = 20) -> str:
    deadline = time.monotonic() + timeout_s
    text = path.read_text(encoding="utf-8")
    while needle not in text and time.monotonic() < deadline:
        time.sleep(0.2)
        text = path.read_text(encoding="utf-8")
    return text


def _scenario(page: Page, run: Run, url: str) -> None:
    paper = run.paper
    page.goto(url)
    page.wait_for_selector(".monaco-workbench .part.editor", timeout=90_000)
    page.wait_for_timeout(1500)

    # 1. open the paper: the verdicts of the background verification appear as squiggles
    _open_file(page, "main.tex")
    start = time.monotonic()
    page.wait_for_selector(".squiggly-error", timeout=90_000)
    run.first_squiggle_s = time.monotonic() - start
    page.wait_for_selector(".squiggly-warning", timeout=60_000)

    page.keyboard.press("Control+Shift+m")  # Problems panel
    page.wait_for_selector(".markers-panel .monaco-list-row", timeout=20_000)
    page.wait_for_timeout(500)
    run.problems = page.locator(".markers-panel").inner_text()
    page.keyboard.press("Control+Shift+m")  # close it again (toggle)

    # 2. hover the citation whose DOI belongs to another paper
    page.keyboard.press("Escape")
    _editor_text(page, MISMATCH_KEY).hover()
    hover = page.locator(".monaco-hover:visible .monaco-hover-content, .monaco-hover:visible .hover-contents")
    hover.first.wait_for(state="visible", timeout=20_000)
    page.wait_for_timeout(1500)  # a hover is complete when sent; leave time to render
    run.hover = page.locator(".monaco-hover:visible").first.inner_text()
    # CITELENS_VSCODE_SCREENSHOT=docs/screenshot/citelens-vscode.png: README's screenshot,
    # the hover on the invented paper, under the wrong DOI's squiggle
    shot = os.environ.get("CITELENS_VSCODE_SCREENSHOT")
    if shot:
        page.mouse.move(5, 5)
        page.keyboard.press("Escape")
        page.wait_for_timeout(500)
        _editor_text(page, FABRICATED_KEY).hover()
        page.wait_for_timeout(2500)
        page.screenshot(path=shot)

    # 3. quick fix at the citation: the DOI in refs.bib is corrected, and saved
    page.mouse.move(5, 5)
    page.keyboard.press("Escape")
    line = paper.line_of(MISMATCH_KEY) + 1
    col = paper.tex.read_text(encoding="utf-8").splitlines()[line - 1].index(MISMATCH_KEY) + 3
    _go_to(page, line, col)
    page.keyboard.press("Control+.")
    menu = page.locator(".action-widget")
    menu.wait_for(state="visible", timeout=20_000)
    page.wait_for_timeout(300)
    run.code_actions = [t.strip() for t in menu.locator(".monaco-list-row").all_inner_texts()]
    for _ in range(len(run.code_actions) + 1):  # the keyboard, as the menu wants it
        focused = menu.locator(".monaco-list-row.focused")
        if focused.count() and RIGHT_DOI in focused.first.inner_text():
            break
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_timeout(800)
    _command(page, "File: Save All")
    run.bib_after_fix = _wait_file(paper.bib, RIGHT_DOI)

    # 3b. the writer's word: "Mark as checked (NOT_FOUND)" at the invented paper's citation
    _mark_as_checked(page, run)

    # 4. cite while writing: type a title inside the empty \cite{}, accept the paper
    _open_file(page, "main.tex")
    page.wait_for_timeout(500)
    line = paper.line_of("Matplotlib~\\cite{}") + 1
    col = paper.tex.read_text(encoding="utf-8").splitlines()[line - 1].index("\\cite{}") + len("\\cite{") + 1
    _go_to(page, line, col)
    page.keyboard.type(TYPED, delay=30)
    page.wait_for_timeout(500)
    page.keyboard.press("Control+Space")
    widget = page.locator(".suggest-widget")
    widget.wait_for(state="visible", timeout=20_000)
    deadline = time.monotonic() + 30
    while MATPLOTLIB.lower() not in widget.inner_text().lower() and time.monotonic() < deadline:
        page.wait_for_timeout(500)
        if not widget.is_visible():
            page.keyboard.press("Control+Space")
    run.suggestions = widget.inner_text()
    widget.locator(".monaco-list-row").filter(has_text=re.compile("Matplotlib", re.I)).first.click()
    page.wait_for_timeout(1500)
    _command(page, "File: Save All")
    run.bib_after_cite = _wait_file(paper.bib, "Hunter")
    run.tex_after_cite = _wait_file(paper.tex, "hunter")


def _problems(page: Page) -> str:
    page.keyboard.press("Control+Shift+m")  # Problems panel
    page.wait_for_selector(".markers-panel", timeout=20_000)
    page.wait_for_timeout(500)
    text = str(page.locator(".markers-panel").inner_text())
    page.keyboard.press("Control+Shift+m")
    return text


def _mark_as_checked(page: Page, run: Run) -> None:
    """Ctrl+. on the invented paper's citation, "Mark as checked (NOT_FOUND)", save: the
    comment line lands in refs.bib and the NOT_FOUND leaves the Problems panel."""
    paper = run.paper
    _open_file(page, "main.tex")
    page.mouse.move(5, 5)
    page.keyboard.press("Escape")
    line = paper.line_of(FABRICATED_KEY) + 1
    col = paper.tex.read_text(encoding="utf-8").splitlines()[line - 1].index(FABRICATED_KEY) + 3
    _go_to(page, line, col)
    page.keyboard.press("Control+.")
    menu = page.locator(".action-widget")
    menu.wait_for(state="visible", timeout=20_000)
    page.wait_for_timeout(300)
    run.mark_actions = [t.strip() for t in menu.locator(".monaco-list-row").all_inner_texts()]
    for _ in range(len(run.mark_actions) + 1):
        focused = menu.locator(".monaco-list-row.focused")
        if focused.count() and "Mark as checked (NOT_FOUND)" in focused.first.inner_text():
            break
        page.keyboard.press("ArrowDown")
    shot = os.environ.get("CITELENS_VSCODE_MARK_SCREENSHOT")
    if shot:  # what the menu looks like, for a person to look at
        page.screenshot(path=shot)
        run.mark_screenshot = shot
    page.keyboard.press("Enter")
    page.wait_for_timeout(800)
    _command(page, "File: Save All")
    run.bib_after_mark = _wait_file(paper.bib, "% citelens: checked NOT_FOUND")
    deadline = time.monotonic() + 30
    run.problems_after_mark = _problems(page)
    while FABRICATED_KEY in run.problems_after_mark and time.monotonic() < deadline:
        page.wait_for_timeout(1000)
        run.problems_after_mark = _problems(page)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, vsix: Path) -> Iterator[Run]:
    if sync_playwright is None:
        pytest.fail("playwright is not installed: it is in the test extra (pip install -e '.[test]')")
    browser_path = chromium()
    exe = code_server()
    tmp = tmp_path_factory.mktemp("vscode-e2e")
    paper = seed(tmp / "paper")
    with running() as fake:
        for p in fake_papers():
            fake.add_paper(p)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_") and k != "S2_API_KEY"}
        # the fake's addresses reach the server only through the environment
        env.update(fake.env())
        env.update(
            CITELENS_CACHE_DIR=str(tmp / "cache"),
            CITELENS_S2_RPS="1000",
            CITELENS_RETRY_BACKOFF="0.01",
            CITELENS_FETCH_ENTRY_URLS="false",
            XDG_CONFIG_HOME=str(tmp / "xdg-config"),
            XDG_DATA_HOME=str(tmp / "xdg-data"),
            HOME=str(tmp / "home"),
        )
        (tmp / "home").mkdir()
        settings = {
            # how to start the server (the extension's own setting, never sent to the server)
            "citelens.server.command": _server_command(),
            "workbench.startupEditor": "none",
            "workbench.tips.enabled": False,
            "telemetry.telemetryLevel": "off",
            "extensions.autoCheckUpdates": False,
            "extensions.autoUpdate": False,
            "update.mode": "none",
            "editor.quickSuggestions": {"other": False, "comments": False, "strings": False},
            "editor.hover.delay": 300,
            "security.workspace.trust.enabled": False,
            "window.commandCenter": False,
            "remote.autoForwardPorts": False,
        }
        result = Run(paper, fake)
        with running_code_server(exe, vsix, tmp, env, settings) as cs:
            assert sync_playwright is not None
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page(viewport={"width": 1280, "height": 760})
                    try:
                        _scenario(page, result, cs.folder_url(paper.dir))
                    except Exception as exc:  # keep what was seen; the tests say what is missing
                        result.errors.append(f"{type(exc).__name__}: {exc}")
                        page.screenshot(path=str(tmp / "failure.png"))
                        result.errors.append(f"screenshot: {tmp / 'failure.png'}")
                finally:
                    browser.close()
            result.fake_requests = fake.count()
            result.log = cs.server_log()
        yield result


def test_squiggles_appear_after_opening_the_paper(run: Run) -> None:
    assert run.first_squiggle_s is not None, run.context()
    assert "DOI_MISMATCH" in run.problems, run.context()
    assert "NOT_FOUND" in run.problems, run.context()
    assert FABRICATED_KEY in run.problems and WRONG_DOI in run.problems, run.problems
    print(f"first squiggle {run.first_squiggle_s:.2f} s after opening main.tex")


def test_environment_variables_reach_the_server_without_settings(run: Run) -> None:
    """No CiteLens URL is set in VS Code: the scholarly APIs are the fake only through
    CITELENS_*_URL, so the verdicts above (and the fake's request log) prove they arrived."""
    assert run.fake_requests > 0, run.context()
    assert "UNVERIFIED" not in run.problems, run.context()


def test_hover_on_a_wrong_doi(run: Run) -> None:
    assert run.hover, run.context()
    assert "Pricing via Processing or Combatting Junk Mail".lower() in run.hover.lower(), run.hover


def test_quick_fix_writes_the_right_doi(run: Run) -> None:
    assert run.bib_after_fix, run.context()
    assert RIGHT_DOI in run.bib_after_fix, (run.code_actions, run.context())
    assert WRONG_DOI not in run.bib_after_fix
    original = run.paper.bib.read_text(encoding="utf-8")
    assert original.count("@") >= 3


def test_mark_as_checked_writes_one_line_and_the_not_found_goes(run: Run) -> None:
    assert "Mark as checked (NOT_FOUND)" in run.mark_actions, (run.mark_actions, run.context())
    assert "Mark as checked (all codes)" in run.mark_actions, run.mark_actions
    lines = run.bib_after_mark.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith(f"@article{{{FABRICATED_KEY},"))
    assert re.fullmatch(r"% citelens: checked NOT_FOUND \d{4}-\d{2}-\d{2} #[0-9a-f]{6}", lines[at - 1]), lines
    assert "\n".join(lines[:at - 1] + lines[at:]).count("citelens: checked") == 0  # that line only
    assert FABRICATED_KEY not in run.problems_after_mark, run.problems_after_mark


def test_cite_while_writing_appends_the_entry(run: Run) -> None:
    assert MATPLOTLIB.lower() in run.suggestions.lower(), (run.suggestions, run.context())
    bib = run.bib_after_cite
    assert bib.count("Matplotlib: A 2D graphics environment") == 1, (bib, run.context())  # added once
    new = bib[bib.rindex("@"):]
    key = re.match(r"@\w+\{([^,]+),", new)
    assert key, new
    assert f"\\cite{{{key.group(1)}}}" in run.tex_after_cite, run.tex_after_cite
    # the file writes field names in lower case: so does the new entry
    fields = re.findall(r"^\s*(\w+)\s*=", new, re.M)
    assert fields and all(f == f.lower() for f in fields), new
    assert json.dumps(new)  # printable
