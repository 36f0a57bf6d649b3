"""A base URL the user configured is trusted; URLs that come from data are not.

An institutional arXiv mirror on a private or loopback address (``arxivUrl``) must
serve full texts with ``allowPrivateUrls`` off, as it serves the abstracts. The SSRF
guard still applies to what comes from data (an entry's ``url``, an open-access link)
and to a redirect that leaves the configured origin. Through the real server: the fake
scholarly APIs (the "mirror") and the fake model are on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from citelens.claims.urlsafety import check_url, safe_fetch
from tests.fakes.llm import FakeLLM
from tests.fakes.scholarly import ScholarlyFake
from tests.lsp_session import session
from tests.test_lsp_claims import (
    CLAIM_B,
    MONOTONE,
    Hovering,
    llm_settings,
    open_and_wait,
    position_of,
    write_project,
)

PRESET = "visual-studio-code"


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


def _settings(llm: FakeLLM) -> dict[str, Any]:
    # entry URLs are fetched (and checked) here: this test serves them itself
    return llm_settings(llm, allowPrivateUrls=False, fetchEntryUrls=True)


async def _check_claim(
    tmp_path: Path, fake: ScholarlyFake, llm: FakeLLM, paper: dict[str, Any], bib: str | None = None
) -> str:
    fake.add_paper(paper)
    doc, text = write_project(tmp_path, "hopper22", paper, CLAIM_B)
    if bib is not None:
        (tmp_path / "refs.bib").write_text(bib, encoding="utf-8")
    env = fake.env(cache=tmp_path / "cache")
    async with session(PRESET, tmp_path, env=env, settings=_settings(llm)) as client:
        u = await open_and_wait(client, doc, text)
        h = Hovering(client, u, position_of(text, "hopper22"))
        return await h.until_done(30)


async def test_full_text_from_a_loopback_arxiv_mirror_with_private_urls_off(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    # like arxiv.org, the mirror redirects to the versioned page: same origin, still trusted
    paper = {**MONOTONE, "html_redirect": "/arxiv/html/2205.01234v1"}
    final = await _check_claim(tmp_path, scholarly_server, llm, paper)
    assert "**✅ SUPPORTS**" in final, final
    assert "phase: full text" in final
    assert "fulltext · arxiv_html: accepted" in final
    assert "allowPrivateUrls" not in final
    assert llm.chat_calls() == 2  # phase 1, then phase 2 on the passages
    assert [r["path"] for r in scholarly_server.requests("arxiv_site")] == [
        "/html/2205.01234",
        "/html/2205.01234v1",
    ]


async def test_a_redirect_from_the_mirror_to_another_private_host_is_refused(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    target = f"http://127.0.0.2:{scholarly_server.port}/arxiv/html/2205.01234v1"
    paper = {**MONOTONE, "html_redirect": target}
    final = await _check_claim(tmp_path, scholarly_server, llm, paper)
    assert "fulltext · arxiv_html: failed (refused: address 127.0.0.2 is private" in final, final
    # the PDF on the configured origin is still fetched, so phase 2 runs
    assert "fulltext · arxiv_pdf: accepted" in final
    assert "**✅ SUPPORTS**" in final and llm.chat_calls() == 2
    assert [r["path"] for r in scholarly_server.requests("arxiv_site")] == [
        "/html/2205.01234",
        "/pdf/2205.01234",
    ]


async def test_an_entry_url_to_a_6to4_form_of_loopback_is_refused(
    tmp_path: Path, scholarly_server: ScholarlyFake, llm: FakeLLM
) -> None:
    # 2002:7f00:1:: is 6to4 for 127.0.0.1; the URL comes from the .bib: data, not trusted
    url = f"http://[2002:7f00:1::]:{scholarly_server.port}/arxiv/html/2205.01234"
    p = MONOTONE
    bib = (
        f"@article{{hopper22,\n  title = {{{p['title']}}},\n  author = {{{p['authors'][0]}}},\n"
        f"  journal = {{{p['venue']}}},\n  year = {{{p['year']}}},\n  doi = {{{p['doi']}}},\n"
        f"  url = {{{url}}},\n}}\n"
    )
    final = await _check_claim(tmp_path, scholarly_server, llm, MONOTONE, bib)
    assert "fulltext · entry_url: failed (refused: address 2002:7f00:1:: is private" in final, final
    assert "fulltext · arxiv_html: accepted" in final  # the configured mirror still serves


# ---------------------------------------------------------------------------- URL forms

EMBEDDED_PRIVATE = [
    "http://[2002:7f00:1::]/",  # 6to4 of 127.0.0.1
    "http://[2002:c0a8:101::1]/",  # 6to4 of 192.168.1.1
    "http://[2002:808:808::]/",  # 6to4, even of a public address
    "http://[::ffff:10.0.0.1]/",  # IPv4-mapped
    "http://[::ffff:7f00:1]/",  # IPv4-mapped, hex form
    "http://[::127.0.0.1]/",  # IPv4-compatible
    "http://[::a9fe:a9fe]/",  # IPv4-compatible 169.254.169.254
    "http://[64:ff9b::7f00:1]/",  # NAT64 of 127.0.0.1
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of the cloud metadata address
    "http://[64:ff9b:1::a00:1]/",  # local-use NAT64
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",  # Teredo
    "http://100.64.0.1/",  # shared address space (carrier-grade NAT)
]
AMBIGUOUS = [
    "http://127.0.0.1:80@example.org/",
    "http://example.org:80@127.0.0.1/",
    "http://user@example.org/",
    "http://example.org\\@127.0.0.1/",
    "http://127.0.0.1\\.example.org/",
    "http://example.org /paper.pdf",
    "http://example.org/pa\tper.pdf",
    "http://example.org/\x00",
    "http://exa\u2028mple.org/",
    "http://127.1/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://127.0.0.1./",
    "http://%31%32%37.0.0.1/",
    "http://[::1%25eth0]/",
    "http://example.org:99999/",
    "http://[not-ipv6]/",
]
REFUSED_DATA_URLS = EMBEDDED_PRIVATE + AMBIGUOUS


@pytest.mark.parametrize("url", REFUSED_DATA_URLS)
async def test_data_urls_to_embedded_private_or_ambiguous_forms_are_refused(url: str) -> None:
    assert await check_url(url, allow_private=False) is not None


@pytest.mark.parametrize("url", AMBIGUOUS)
async def test_ambiguous_urls_are_refused_even_with_private_urls_allowed(url: str) -> None:
    why = await check_url(url, allow_private=True) or ""
    assert why.startswith(("ambiguous URL", "malformed URL")), why


async def test_public_forms_and_the_configured_origin_are_allowed() -> None:
    assert await check_url("http://[64:ff9b::808:808]/paper.pdf", allow_private=False) is None
    assert await check_url("https://93.184.215.14/p.pdf", allow_private=False) is None
    base = "http://127.0.0.1:8080/mirror"
    assert await check_url("http://127.0.0.1:8080/pdf/1", False, trusted_base=base) is None
    assert await check_url("http://user:pw@127.0.0.1:8080/x", False, trusted_base=base) is None
    # another port, another host or another scheme is another origin
    for other in ("http://127.0.0.1:8081/x", "http://localhost:8080/x", "https://127.0.0.1:8080/x"):
        assert await check_url(other, False, trusted_base=base) is not None, other


async def test_safe_fetch_trusts_only_hops_on_the_configured_origin(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.add_paper(
        {**MONOTONE, "html_redirect": f"http://localhost:{scholarly_server.port}/arxiv/html/2205.01234v1"}
    )
    base = scholarly_server.root + "/arxiv"
    async with httpx.AsyncClient() as client:
        got = await safe_fetch(
            client,
            f"{base}/pdf/2205.01234",
            allow_private=False,
            max_bytes=1_000_000,
            timeout_s=5,
            trusted_base=base,
        )
        assert got.ok and got.body.startswith(b"%PDF")
        got = await safe_fetch(
            client,
            f"{base}/html/2205.01234",
            allow_private=False,
            max_bytes=1_000_000,
            timeout_s=5,
            trusted_base=base,
        )
        assert not got.ok and "refused" in got.error and got.requests == 1
        got = await safe_fetch(
            client, f"{base}/pdf/2205.01234", allow_private=False, max_bytes=1_000_000, timeout_s=5
        )  # not configured: data
        assert "refused" in got.error and got.requests == 0
