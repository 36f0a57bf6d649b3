"""API keys never leave the request headers: not in output, logs, diagnostics, hovers or cache.

The keys get distinctive values; the fakes are put in modes that tempt a leak
(``echo``: a 400 whose body repeats the request URL and headers; failing modes
whose errors reach the user), and everything a user or a log collector could see
is searched for them. Each test also checks that the key *was* sent (so a client
that drops its keys cannot pass by leaking nothing).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from tests.fakes.llm import MODEL, FakeLLM
from tests.fakes.scholarly import ScholarlyFake
from tests.harness import ROOT
from tests.lsp_session import diagnostics, open_doc, session, wait_for

S2_KEY = "S2KEY-zq7Xv41pLm0Rt9"
OPENALEX_KEY = "OAKEY-kd83Jf02Qa7Zp1"
LLM_KEY = "sk-LLMKEY-w8Ne5Tb3Yc6Hq2"
MAILTO = "mailto-secret-4471@example.org"
SECRETS = (S2_KEY, OPENALEX_KEY, LLM_KEY, MAILTO)
MODES = ("echo", "5xx", "down")
SCHOLARLY = ("s2", "crossref", "openalex", "arxiv", "doi", "ncbi", "unpaywall")

BIB = r"""@article{scipy2020,
  title = {{SciPy} 1.0: Fundamental Algorithms for Scientific Computing in {Python}},
  author = {Virtanen, Pauli and others}, journal = {Nature Methods}, year = {2020},
  doi = {10.1038/s41592-019-0686-2}}
@article{hunter2007, title = {Matplotlib: A {2D} Graphics Environment}, author = {Hunter, J. D.},
  journal = {Computing in Science \& Engineering}, year = {2007}}
@inproceedings{vaswani2017, title = {Attention is All you Need}, author = {Vaswani, Ashish},
  booktitle = {NeurIPS}, year = {2017}, eprint = {1706.03762}}
@article{made2021, title = {Hyperbolic Entanglement of Quantum Llamas in Gravitational Pastures},
  author = {Halvorsen, Ingrid}, journal = {Nature}, year = {2021}, pmid = {99999999}}
"""
TEX = (
    "\\documentclass{article}\n\\begin{document}\n"
    "SciPy provides fundamental algorithms for scientific computing~\\cite{scipy2020}.\n"
    "Matplotlib is a 2D graphics environment~\\cite{hunter2007}.\n"
    "Attention alone is all you need for translation~\\cite{vaswani2017}.\n"
    "Llamas entangle hyperbolically~\\cite{made2021}.\n"
    "\\bibliography{refs}\n\\end{document}\n"
)


def _paper(tmp_path: Path) -> Path:
    d = tmp_path / "paper"
    d.mkdir()
    (d / "refs.bib").write_text(BIB, encoding="utf-8")
    (d / "main.tex").write_text(TEX, encoding="utf-8")
    return d


def _env(fake: ScholarlyFake, cache: Path, llm: FakeLLM | None = None) -> dict[str, str]:
    env = {**os.environ, **fake.env(), "S2_API_KEY": S2_KEY, "CITELENS_OPENALEX_API_KEY":
           OPENALEX_KEY, "CITELENS_LLM_API_KEY": LLM_KEY, "OPENAI_API_KEY": LLM_KEY,
           "CITELENS_MAILTO": MAILTO, "CITELENS_CACHE_DIR": str(cache),
           "CITELENS_REQUEST_TIMEOUT": "3", "CITELENS_RETRY_BACKOFF": "0.01",
           "CITELENS_S2_RPS": "1000"}
    if llm is not None:
        env.update(CITELENS_LLM_BASE_URL=llm.url, CITELENS_LLM_MODEL=MODEL,
                   CITELENS_ALLOW_PRIVATE_URLS="1")
    return env


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _cache_leaks(cache: Path) -> list[str]:
    out = []
    for f in cache.rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            out += [f"{f.name}: {s}" for s in SECRETS if s.encode() in data]
    return out


def _keys_were_sent(fake: ScholarlyFake) -> None:
    s2 = fake.requests("s2")
    assert s2, "Semantic Scholar was never asked"
    assert all(r["headers"].get("x-api-key") == S2_KEY for r in s2)
    oa = fake.requests("openalex")
    assert oa, "OpenAlex was never asked"
    assert all(r["query"].get("api_key") == OPENALEX_KEY for r in oa)


def _assert_cache_private(cache: Path) -> None:
    assert cache.is_dir()
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700, oct(cache.stat().st_mode)
    assert not _cache_leaks(cache), _cache_leaks(cache)


def _check(paper: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "citelens", "check", str(paper), *args],
                          env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode in (0, 1), proc.stderr
    return proc


@pytest.mark.parametrize("mode", MODES)
def test_check_never_prints_or_caches_a_key(
        scholarly_server: ScholarlyFake, tmp_path: Path, mode: str) -> None:
    paper = _paper(tmp_path)
    cache = tmp_path / "cache"
    for src in SCHOLARLY:
        scholarly_server.set_mode(src, mode)
    env = _env(scholarly_server, cache)
    formats = ("json", "text", "sarif") if mode != "down" else ("json",)
    for fmt in formats:
        proc = _check(paper, env, "--format", fmt)
        assert proc.stdout.strip()
        if fmt == "json":
            entries = json.loads(proc.stdout)["entries"]
            assert len(entries) == 4  # the report really covers the entries
        assert not _leaks(proc.stdout + proc.stderr), (fmt, _leaks(proc.stdout + proc.stderr))
    out = tmp_path / "report.json"
    proc = _check(paper, env, "--format", "json", "-o", str(out))
    assert not _leaks(proc.stdout + proc.stderr + out.read_text(encoding="utf-8"))
    _keys_were_sent(scholarly_server)
    _assert_cache_private(cache)


def test_check_with_healthy_sources_keeps_keys_out_of_the_cache(
        scholarly_server: ScholarlyFake, tmp_path: Path) -> None:
    paper = _paper(tmp_path)
    cache = tmp_path / "cache"
    proc = _check(paper, _env(scholarly_server, cache), "--format", "json")
    assert not _leaks(proc.stdout + proc.stderr)
    statuses = {e["key"]: e["status"] for e in json.loads(proc.stdout)["entries"]}
    assert statuses["scipy2020"] == "VERIFIED", statuses
    _keys_were_sent(scholarly_server)
    _assert_cache_private(cache)
    assert any(f.is_file() and f.stat().st_size for f in cache.rglob("*"))


def _echo_auth(request: dict) -> str:
    """A 'model' that repeats the request headers back in its answer."""
    return json.dumps({"verdict": "supported", "confidence": 0.9,
                       "reason": f"headers were {request.get('headers')}",
                       "quote": str(request.get("headers"))})


@pytest.mark.parametrize("mode", ["echo", "llm-error"])
async def test_language_server_never_shows_a_key(
        scholarly_server: ScholarlyFake, tmp_path: Path, mode: str,
        capfd: pytest.CaptureFixture[str]) -> None:
    """``echo``: every scholarly API echoes the request, the model repeats its headers;
    ``llm-error``: sources healthy, every model call fails with an error message that
    echoes the Authorization header (as some proxies do)."""
    paper = _paper(tmp_path)
    cache = tmp_path / "cache"
    if mode == "echo":
        for src in SCHOLARLY:
            scholarly_server.set_mode(src, "echo")
    with FakeLLM() as llm:
        if mode == "llm-error":
            llm.chat_status = 500
        else:
            llm.responder = _echo_auth
        env = _env(scholarly_server, cache, llm)
        settings = {"verificationEnabled": True, "verifyDebounceMs": 0}
        seen: list[str] = []
        async with session("visual-studio-code", paper, env=env, settings=settings) as client:
            u = open_doc(client, paper / "main.tex")
            await diagnostics(client, u)
            await wait_for(lambda: any("verified 4 entries" in m.message
                                       for m in client.log_messages), 30, "verification")
            for _ in range(3):  # later hovers show the finished claim checks
                for line in (2, 3, 4, 5):
                    pos = lsp.Position(line, TEX.splitlines()[line].index("\\cite{") + 7)
                    hover = await client.text_document_hover_async(
                        lsp.HoverParams(lsp.TextDocumentIdentifier(u), pos))
                    assert hover is not None
                    seen.append(json.dumps(hover.contents, default=str))
                await asyncio.sleep(0.5)
            seen += [m.message for m in client.log_messages]
            seen += [m.message for m in client.messages]
            seen += [json.dumps([d.message, d.data, str(d.related_information)], default=str)
                     for ds in client.diagnostics.values() for d in ds]
        if mode == "llm-error":
            assert llm.calls(), "the model was never asked"
        assert all(c["headers"].get("Authorization") == f"Bearer {LLM_KEY}"
                   for c in llm.calls())
    err = capfd.readouterr()
    seen += [err.out, err.err]
    leaks = [(s, text[:300]) for text in seen for s in _leaks(text)]
    assert not leaks, leaks
    _keys_were_sent(scholarly_server)
    _assert_cache_private(cache)
