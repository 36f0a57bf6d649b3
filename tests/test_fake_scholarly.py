"""The fake scholarly server answers like the real APIs and obeys its switches."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time

import httpx
import pypdf
import pytest

from tests.fakes.scholarly import ScholarlyFake, running
from tests.fakes.scholarly import scholarly_server as scholarly_server  # fixture
from tests.harness import FIXTURES, ROOT

APIS = FIXTURES / "apis"


def recorded(name: str) -> tuple[dict[str, object], bytes]:
    meta = json.loads((APIS / f"{name}.meta.json").read_text())
    body = (APIS / str(meta["file"])).read_bytes()
    return meta, body


def test_not_found_answers_match_the_recordings(scholarly_server: ScholarlyFake) -> None:
    u = scholarly_server.urls()
    with httpx.Client() as c:
        r = c.get(u["crossref"] + "/works/10.1371/notarealdoi")
        _, body = recorded("crossref/work_10.1371_notarealdoi_404")
        assert (r.status_code, r.content) == (404, body)
        assert r.headers["content-type"].startswith("text/plain")

        r = c.get(u["s2"] + "/paper/search/match", params={"query": "zzzz qqqq"})
        _, body = recorded("s2/search_match_404_title_match_not_found")
        assert r.status_code == 404 and r.json() == json.loads(body)

        r = c.get(u["s2"] + "/paper/DOI:10.1101/2024.04.01.587366")
        _, body = recorded("s2/paper_DOI_10.1101_2024.04.01.587366_404")
        assert r.status_code == 404 and r.json() == json.loads(body)

        r = c.get(u["s2"] + "/paper/search", params={"query": "zzzz qqqq"})
        assert r.json() == json.loads(recorded("s2/search_no_results")[1])

        r = c.get(u["openalex"] + "/works/doi:10.1046/j.1365-2699.2003.00795")
        _, body = recorded("openalex/work_doi_10.1046_j.1365-2699.2003.00795_404")
        assert r.status_code == 404 and r.text.strip() == body.decode().strip()

        r = c.get(u["doi"] + "/10.1126/foo")
        assert r.status_code == 404 and "<title>Error: DOI Not Found</title>" in r.text

        r = c.get(u["arxiv"] + "/query", params={"id_list": "abc"})
        _, body = recorded("arxiv/query_id_list_abc_400_error_feed")
        assert r.status_code == 400 and "incorrect id format for abc" in r.text
        assert r.text.splitlines()[:2] == body.decode().splitlines()[:2]


def test_found_answers_have_the_recorded_shape(scholarly_server: ScholarlyFake) -> None:
    u = scholarly_server.urls()
    with httpx.Client() as c:
        fields = "paperId,corpusId,externalIds,title,authors,year,venue,journal,citationCount"
        mine = c.get(u["s2"] + "/paper/DOI:10.1073/pnas.1414271111",
                     params={"fields": fields}).json()
        real = json.loads(recorded("s2/paper_DOI_10.1073_pnas.1414271111")[1])
        assert set(mine) <= set(real) | {"corpusId"}
        assert mine["externalIds"]["PubMed"] == real["externalIds"]["PubMed"]
        assert c.get(u["s2"] + "/paper/ARXIV:1706.03762").json().keys() == {"paperId", "title"}

        mine = c.get(u["crossref"] + "/works/10.1073/pnas.1414271111").json()
        real = json.loads(recorded("crossref/work_10.1073_pnas.1414271111")[1])
        assert mine.keys() == real.keys() and mine["message-type"] == "work"
        assert mine["message"]["title"] == real["message"]["title"]

        batch = c.post(u["s2"] + "/paper/batch", params={"fields": "title"},
                       json={"ids": ["CorpusId:10888161", "CorpusId:1"]}).json()
        assert batch[1] is None and batch[0]["title"].startswith("Developing functional")


def test_faults_switch_and_count_down(scholarly_server: ScholarlyFake) -> None:
    url = scholarly_server.urls()["s2"] + "/paper/ARXIV:1706.03762"
    with httpx.Client() as c:
        scholarly_server.set_mode("s2", "429", count=2, retry_after=1)
        first, second, third = (c.get(url) for _ in range(3))
        assert (first.status_code, second.status_code, third.status_code) == (429, 429, 200)
        assert first.headers["retry-after"] == "1" and first.json()["code"] == "429"
        scholarly_server.set_mode("s2", "down")
        with pytest.raises(httpx.TransportError):
            c.get(url)
        scholarly_server.set_mode("s2", "up")
        assert c.get(url).status_code == 200
        scholarly_server.set_mode("s2", "malformed", count=1)
        with pytest.raises(json.JSONDecodeError):
            json.loads(c.get(url).content)
    assert [r["status"] for r in scholarly_server.requests("s2")] == [429, 429, 200, "closed",
                                                                      200, 200]
    with pytest.raises(ValueError):
        scholarly_server.set_mode("s2", "sideways")


def test_rate_limit_enforcement_answers_429(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.set_rate_limit("crossref", per_second=5)
    url = scholarly_server.urls()["crossref"] + "/works/10.1073/pnas.1414271111"
    with httpx.Client() as c:
        fast = [c.get(url).status_code for _ in range(3)]
        time.sleep(0.25)
        slow = c.get(url).status_code
    assert fast[0] == 200 and 429 in fast[1:]
    assert slow == 200


def test_control_endpoint_and_database_changes(scholarly_server: ScholarlyFake) -> None:
    root = scholarly_server.root
    new = {"title": "A Paper Added At Run Time", "authors": ["Ada Lovelace"], "year": 1843,
           "doi": "10.5555/RUNTIME.1", "arxiv": "2401.00001"}
    with httpx.Client() as c:
        added = c.post(root + "/_control", json={"action": "add_paper", "paper": new}).json()
        assert len(added["s2_paper_id"]) == 40
        assert c.get(scholarly_server.urls()["crossref"] + "/works/10.5555/runtime.1"
                     ).status_code == 200
        c.post(root + "/_control", json={"source": "openalex", "mode": "5xx", "count": 1})
        assert c.get(scholarly_server.urls()["openalex"] + "/works/doi:10.5555/runtime.1"
                     ).status_code == 503
        log = c.get(root + "/_control/requests", params={"source": "openalex"}).json()
        assert [e["status"] for e in log] == [503]
        assert c.get(root + "/_control/counts").json()["crossref"] == 1
        assert c.post(root + "/_control", json={"action": "nope"}).status_code == 400
        c.post(root + "/_control", json={"action": "load", "papers": [new]})
        assert len(scholarly_server.db.papers) == 1
        assert c.get(scholarly_server.urls()["s2"] + "/paper/DOI:10.1073/pnas.1414271111"
                     ).status_code == 404


def test_arxiv_site_pdf_has_extractable_text(scholarly_server: ScholarlyFake) -> None:
    scholarly_server.add_paper({"title": "Full Text Paper", "authors": ["A. B"],
                                "arxiv": "2402.00002", "abstract": "Short abstract.",
                                "full_text": "Introduction\nWe measured 42 widgets."})
    site = scholarly_server.urls()["arxiv_site"]
    with httpx.Client() as c:
        pdf = c.get(site + "/pdf/2402.00002v1")
        html = c.get(site + "/html/2402.00002")
        assert c.get(site + "/html/1706.03762").status_code == 404  # no full text
    assert pdf.headers["content-type"] == "application/pdf"
    text = "\n".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(pdf.content)).pages)
    assert "We measured 42 widgets." in text
    assert "We measured 42 widgets." in html.text


def test_env_points_every_source_at_the_server() -> None:
    with running([]) as fake:
        env = fake.env()
        settings = fake.settings()
    assert env["CITELENS_S2_API_URL"] == f"{fake.root}/s2/graph/v1"
    assert settings.source_urls["ncbi_eutils_url"] == env["CITELENS_NCBI_EUTILS_URL"]
    assert len(env) == 8 and all(v.startswith("http://127.0.0.1:") for v in env.values())


def test_standalone_process_serves_and_obeys_control() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.scholarly", "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        root = first.split(" on ")[1].split()[0]
        with httpx.Client(timeout=5) as c:
            assert c.get(root + "/s2/graph/v1/paper/ARXIV:1706.03762").status_code == 200
            c.post(root + "/_control", json={"source": "s2", "mode": "5xx"})
            assert c.get(root + "/s2/graph/v1/paper/ARXIV:1706.03762").status_code == 503
    finally:
        proc.terminate()
        proc.wait(timeout=5)


# ---------------------------------------------------------------------- the 2026 limits


def test_openalex_meters_its_daily_budget_like_its_gateway(scholarly_server: ScholarlyFake) -> None:
    """A search costs $0.001, a filter $0.0001, a lookup by DOI nothing; every answer says
    what is left; past the budget a priced call is the gateway's 429, a free one still
    answers; a key has its own budget."""
    fake = scholarly_server
    fake.set_openalex_budget(0.0021, 1.0, reset_s=3600)
    oa = fake.urls()["openalex"]
    search = {"filter": "title.search:attention is all you need"}
    with httpx.Client() as c:
        first = c.get(oa + "/works", params=search)
        assert first.status_code == 200 and first.json()["results"]
        assert first.headers["x-ratelimit-cost-usd"] == "0.001"
        assert first.headers["x-ratelimit-remaining-usd"] == "0.0011"
        assert first.headers["x-ratelimit-limit-usd"] == "0.0021"
        assert 3590 <= int(first.headers["x-ratelimit-reset"]) <= 3600
        listed = c.get(oa + "/works", params={"filter": "doi:10.1038/s41592-019-0686-2"})
        assert listed.headers["x-ratelimit-cost-usd"] == "0.0001"
        assert c.get(oa + "/works", params=search).status_code == 200  # $0.0000 left
        spent = c.get(oa + "/works", params=search)
        assert spent.status_code == 429
        body = spent.json()
        assert body["error"] == "Rate limit exceeded"
        assert body["message"].startswith("Insufficient budget. This request costs $0.001 but "
                                          "you only have $0 remaining. Resets at midnight UTC.")
        assert spent.headers["x-ratelimit-cost-required-usd"] == "0.001"
        assert spent.headers["x-ratelimit-remaining-usd"] == "0"
        assert 3590 <= int(spent.headers["retry-after"]) <= 3600
        free = c.get(oa + "/works/doi:10.1038/s41592-019-0686-2")
        assert free.status_code == 200 and free.headers["x-ratelimit-cost-usd"] == "0"
        keyed = c.get(oa + "/works", params={**search, "api_key": "k1"})
        assert keyed.status_code == 200 and keyed.headers["x-ratelimit-limit-usd"] == "1"
    assert fake.spent_usd() == 0.0031  # every payer: the IP $0.0021, the key $0.001
    assert round(fake.openalex_left("k1"), 4) == 0.999


def test_openalex_keys_and_its_rate_limit_endpoint(scholarly_server: ScholarlyFake) -> None:
    fake = scholarly_server
    fake.set_openalex_budget(0.10, 1.0, keys={"good-key-123"})
    oa = fake.urls()["openalex"]
    with httpx.Client() as c:
        bad = c.get(oa + "/works/W1", params={"api_key": "wrong"})
        assert bad.status_code == 401 and bad.json()["error"] == "Invalid or missing API key"
        assert c.get(oa + "/rate-limit").status_code == 401
        status = c.get(oa + "/rate-limit", params={"api_key": "good-key-123"})
        assert status.status_code == 200 and "x-ratelimit-remaining-usd" not in status.headers
        info = status.json()
        assert info["api_key"] == "goo...123" and info["rate_limit"]["daily_budget_usd"] == 1


def test_s2_shared_pool_bursts_and_keyed_rate(scholarly_server: ScholarlyFake) -> None:
    fake = scholarly_server
    fake.set_s2_pool(2, 5, key_rps=1.0, keys={"s2-key"})
    url = fake.urls()["s2"] + "/paper/CorpusId:10888161"
    with httpx.Client() as c:
        codes = [c.get(url).status_code for _ in range(10)]
        assert codes == [429, 429, 200, 200, 200] * 2
        assert "retry-after" not in c.get(url).headers
        assert c.get(url, headers={"x-api-key": "nope"}).json() == {"message": "Forbidden"}
        assert c.get(url, headers={"x-api-key": "s2-key"}).status_code == 200
        assert c.get(url, headers={"x-api-key": "s2-key"}).status_code == 429  # 1/s


def test_challenge_pages_and_bot_checks(scholarly_server: ScholarlyFake) -> None:
    fake = scholarly_server
    fake.add_paper({"title": "A Paper Behind a Bot Check", "authors": ["Ada Lovelace"],
                    "year": 2021, "doi": "10.1109/bot.2021.1", "landing_status": 202})
    u = fake.urls()
    with httpx.Client() as c:
        fake.set_mode("crossref", "challenge", count=1)
        page = c.get(u["crossref"] + "/works/10.1038/s41592-019-0686-2")
        assert page.status_code == 200 and "Making sure you&#39;re not a bot!" in page.text
        assert page.headers["content-type"].startswith("text/html")
        fake.set_mode("s2", "accepted", count=1)
        accepted = c.get(u["s2"] + "/paper/CorpusId:10888161")
        assert accepted.status_code == 202 and accepted.content == b""
        landing = c.get(u["doi"] + "/10.1109/bot.2021.1", follow_redirects=True,
                        headers={"Accept": "application/vnd.citationstyles.csl+json"})
        assert landing.status_code == 202 and landing.content == b""
