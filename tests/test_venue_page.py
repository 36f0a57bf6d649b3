"""The venue report in a real browser (Playwright driving Debian's chromium): a venue checked
against the fake scholarly APIs on loopback, then summary.html opened from the disk as a
chair opens it: counts by class, the ranking, sorting, filtering by class, searching by
author, and a paper's page with each finding's evidence."""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import pytest

from tests.fakes.scholarly import ScholarlyFake
from tests.harness import run_citelens
from tests.test_venue import WATER, venue
from tests.vscode.driver import CHROMIUM_ARGS, chromium

sync_api = pytest.importorskip("playwright.sync_api")


def _venue(tmp_path: Path) -> Path:
    v = venue(tmp_path)  # paper-a: 1 fabricated of 2; paper-b: 1 of 2 (.bbl); paper-c: clean
    d = v / "paper-d"
    d.mkdir()
    d.joinpath("main.tex").write_text(
        "\\documentclass{article}\\title{Ice and Water Revisited}\\author{Ann Author \\and Bob Writer}"
        "\\begin{document}\\cite{water}\\bibliography{refs}\\end{document}\n"
    )
    d.joinpath("refs.bib").write_text(
        "% a DOI that resolves nowhere\n"
        + WATER.replace("10.1126/science.169.3946.635", "10.1126/science.169.9999.999")
    )
    return v


def _names(page: object) -> list[str]:
    rows = page.locator("#papers tbody tr")  # type: ignore[attr-defined]
    return [
        rows.nth(i).locator("td").nth(1).locator(".folder").inner_text().split(" ·")[0]
        for i in range(rows.count())
        if rows.nth(i).is_visible()
    ]


def test_the_venue_page_sorts_filters_searches_and_opens_a_paper(
    tmp_path: Path, scholarly_server: ScholarlyFake
) -> None:
    browser_path = chromium()
    v = _venue(tmp_path)
    out = tmp_path / "out"
    proc = run_citelens(
        "check", str(v), "--venue", str(out), env={**os.environ, **scholarly_server.env(cache=tmp_path / "c")}
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto((out / "summary.html").as_uri())
            # the venue's counts by class, and the run's metadata
            assert page.locator("#total-fabricated").inner_text() == "2"
            assert page.locator("#total-wrong-metadata").inner_text() == "1"
            assert "finished" in page.locator("#meta").inner_text()
            assert "references could not be checked" in page.locator("#meta").inner_text()
            # ranked by the share of likely fabricated references (1 of 2 before 0 of 1)
            ranked = _names(page)
            assert set(ranked[:2]) == {"paper-a", "paper-b"} and set(ranked[2:]) == {"paper-c", "paper-d"}
            page.screenshot(path=str(tmp_path / "venue.png"), full_page=True)
            # sorting: by references, fewest first, then most first
            page.locator("th[data-k=refs]").click()
            page.locator("th[data-k=refs]").click()
            assert _names(page)[-2:] == ["paper-a", "paper-b"]  # 2 references each: last when fewest first
            page.locator("th[data-k=refs]").click()
            assert _names(page)[:2] == ["paper-a", "paper-b"]
            # filtering by class: wrong metadata is paper-d only; clicking again shows all
            page.locator(".counts button[data-k=wrong]").click()
            assert _names(page) == ["paper-d"] and page.locator("#shown").inner_text() == "1"
            page.locator(".counts button[data-k=wrong]").click()
            assert len(_names(page)) == 4
            # search by author
            page.locator("#q").fill("bob writer")
            assert _names(page) == ["paper-d"]
            page.locator("#q").fill("")
            # a paper's page: each finding's evidence
            page.locator("#q").fill("revisited")
            page.locator("#papers tbody tr:visible a").first.click()
            page.wait_for_load_state()
            assert page.locator("h1").inner_text() == "Ice and Water Revisited"
            finding = page.locator(".finding#water")
            text = finding.inner_text()
            assert "wrong metadata" in text and "resolves nowhere" in text
            assert "10.1126/science.169.9999.999" in finding.locator("pre.written").inner_text()  # as written
            assert "Semantic Scholar" in text  # what each source said
            doi = finding.locator("a[href='https://doi.org/10.1126/science.169.3946.635']")
            assert doi.count() == 1  # the paper found, linked
            bib = finding.locator("a.bib")
            assert bib.inner_text().endswith("refs.bib:2")  # the entry's 1-based line
            href = bib.get_attribute("href", timeout=1000)
            assert href == "../../venue/paper-d/refs.bib", href  # relative: the report moves with the papers
            target = urllib.parse.urljoin(page.url, href)
            assert Path(urllib.parse.unquote(urllib.parse.urlparse(target).path)).is_file(), target
            page.screenshot(path=str(tmp_path / "paper.png"), full_page=True)
            page.go_back()
            page.locator("a[href='papers/paper-a.html']").click()
            fabricated = page.locator(".finding#invented").inner_text()
            assert "likely fabricated" in fabricated and "Closest record" not in fabricated
        finally:
            browser.close()
