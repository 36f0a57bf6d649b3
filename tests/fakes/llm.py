"""A fake OpenAI-compatible model server: a real HTTP server on 127.0.0.1.

Answers

* ``POST /v1/chat/completions`` in the real response shape
  (``choices[0].message.content``, ``usage``, ``model``...), from a queue of scripted
  replies (:meth:`FakeLLM.reply`), else from ``FakeLLM.responder(request)`` (default:
  :func:`rule_based`, a keyword judge that reads the ``<claim>``, ``<abstract>`` and
  ``<passage>`` blocks of CiteLens's prompts);
* ``POST /v1/embeddings`` with ``data[i].embedding`` from ``FakeLLM.embedder(text)``
  (default: a hashed bag of words);
* any other ``GET`` path from ``FakeLLM.pages`` (static documents: HTML, PDF, JATS),
  so that full-text fetches can be tested against the same server.

Every request is recorded (``fake.requests``: path, method, headers, JSON body) so
tests can count model calls and check that ``Authorization`` was sent.

Standalone, for a language server under test in another process::

    python -m tests.fakes.llm --port 8998
    CITELENS_LLM_BASE_URL=http://127.0.0.1:8998/v1 CITELENS_LLM_MODEL=fake-model ...
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from citelens.core.settings import Settings

Request = dict[str, Any]
Reply = str | Callable[[Request], str]
MODEL = "fake-model"

_STOP = frozenset(
    "a an the of in on for to and or is are was were be been by with as at from that this these "
    "those it its we our their than then which who into not no has have had can may also using "
    "used use show shows shown showed".split()
)
#: Words that make a statement negative for the rule-based judge.
NEGATIONS = ("does not", "do not", "did not", "no effect", "no significant", "not improve",
             "fails to", "failed to", "no evidence", "cannot", "never", "worse than",
             "no improvement", "contrary")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1}


def _block(prompt: str, tag: str) -> list[str]:
    return [m.strip() for m in re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", prompt, re.DOTALL)]


def _negative(text: str) -> bool:
    t = " " + " ".join(text.lower().split()) + " "
    return any(f" {n} " in t or f" {n}." in t or f" {n}," in t for n in NEGATIONS)


def judge_text(claim: str, evidence: str) -> dict[str, str]:
    """The rule-based verdict for ``claim`` given ``evidence`` (deterministic)."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", evidence) if s.strip()]
    cw = _words(claim)
    best, best_cov = "", 0.0
    for s in sentences:
        cov = len(cw & _words(s)) / len(cw) if cw else 0.0
        if cov > best_cov:
            best, best_cov = s, cov
    if best_cov >= 0.6:
        if _negative(best) != _negative(claim):
            return {"verdict": "CONTRADICTS", "rationale": "The paper states the opposite.",
                    "evidence": best}
        return {"verdict": "SUPPORTS", "rationale": "The paper states this.", "evidence": best}
    return {"verdict": "NOT_ENOUGH_INFO", "rationale": "The evidence does not address it.",
            "evidence": ""}


def rule_based(request: Request) -> str:
    """Default responder: judge the prompt's claim against its passages (else its abstract)."""
    messages = request.get("json", {}).get("messages", [])
    prompt = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    claims = _block(prompt, "claim")
    evidence = _block(prompt, "passage") or _block(prompt, "abstract")
    if not claims:
        return json.dumps({"verdict": "NOT_ENOUGH_INFO", "rationale": "no claim", "evidence": ""})
    return json.dumps(judge_text(claims[0], " ".join(evidence)))


def hashed_embedding(text: str, dims: int = 256) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words have a high cosine."""
    v = [0.0] * dims
    for w in _words(text):
        v[int(hashlib.md5(w.encode()).hexdigest(), 16) % dims] += 1.0
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that gave up (time-cap tests) is not an error of the fake


@dataclass
class Page:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class FakeLLM:
    """The fake server; use as a context manager or with :meth:`start`/:meth:`stop`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self._port = port
        self.replies: deque[Reply] = deque()
        self.responder: Callable[[Request], str] = rule_based
        self.embedder: Callable[[str], list[float]] = hashed_embedding
        self.pages: dict[str, Page] = {}
        self.requests: list[Request] = []
        self.chat_status = 200  # set to e.g. 500 to make every completion fail
        self.delay_s = 0.0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeLLM:
        self._server = _QuietServer((self.host, self._port), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the fake first"
        return int(self._server.server_address[1])

    @property
    def root(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL (``.../v1``)."""
        return self.root + "/v1"

    def settings(self, **overrides: Any) -> Settings:
        """Settings pointing claim checks at this fake (loopback fetches allowed)."""
        base = Settings(llm_base_url=self.url, llm_model=MODEL, allow_private_urls=True,
                        request_timeout_s=5.0)
        fields_ = {f.name for f in fields(Settings)}
        urls = {k: str(v) for k, v in overrides.items() if k not in fields_ and k.endswith("_url")}
        rest = {k: v for k, v in overrides.items() if k not in urls}
        return replace(base, source_urls={**base.source_urls, **urls}, **rest)  # a host's base URL

    # ------------------------------------------------------------------ scripting

    def reply(self, *contents: Reply | dict[str, Any]) -> None:
        """Queue chat replies: strings are sent as the message content, dicts as JSON."""
        for c in contents:
            self.replies.append(json.dumps(c) if isinstance(c, dict) else c)

    def page(self, path: str, body: str | bytes, content_type: str = "text/html; charset=utf-8",
             status: int = 200, headers: dict[str, str] | None = None) -> str:
        """Serve ``body`` at ``path``; returns its full URL."""
        data = body.encode() if isinstance(body, str) else body
        self.pages[path] = Page(data, content_type, status, dict(headers or {}))
        return self.root + path

    # ------------------------------------------------------------------ inspection

    def calls(self, path: str = "/v1/chat/completions") -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r["path"] == path]

    def chat_calls(self) -> int:
        return len(self.calls("/v1/chat/completions"))

    def embedding_calls(self) -> int:
        return len(self.calls("/v1/embeddings"))

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
        self.replies.clear()

    # ------------------------------------------------------------------ answering

    def _record(self, entry: Request) -> None:
        with self._lock:
            self.requests.append(entry)

    def chat(self, request: Request) -> tuple[int, dict[str, Any]]:
        if self.chat_status != 200:
            auth = request.get("headers", {}).get("Authorization", "")
            # like some proxies, echo what was sent: the client must scrub it from errors
            return self.chat_status, {"error": {"message": f"scripted failure ({auth})",
                                                "type": "server"}}
        nxt = self.replies.popleft() if self.replies else self.responder
        content = nxt(request) if callable(nxt) else nxt
        body = request.get("json", {})
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", MODEL),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def embeddings(self, request: Request) -> tuple[int, dict[str, Any]]:
        body = request.get("json", {})
        inputs = body.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        data = [{"object": "embedding", "index": i, "embedding": self.embedder(str(t))}
                for i, t in enumerate(inputs)]
        return 200, {"object": "list", "data": data, "model": body.get("model", "fake-embed"),
                     "usage": {"prompt_tokens": 1, "total_tokens": 1}}


def _handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, body: bytes, ctype: str,
                  headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            fake._record({"path": self.path, "method": "GET", "headers": dict(self.headers)})
            if fake.delay_s:
                time.sleep(fake.delay_s)
            page = fake.pages.get(self.path)
            if page is None:
                self._send(404, b"<html><body>Not Found</body></html>", "text/html")
                return
            self._send(page.status, page.body, page.content_type, page.headers)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = None
            path = self.path.split("?", 1)[0]
            entry: Request = {"path": path, "method": "POST", "headers": dict(self.headers),
                              "json": body}
            fake._record(entry)
            if fake.delay_s:
                time.sleep(fake.delay_s)
            if not isinstance(body, dict):
                status, data = 400, {"error": {"message": "body is not JSON"}}
            elif path == "/v1/chat/completions":
                status, data = fake.chat(entry)
            elif path == "/v1/embeddings":
                status, data = fake.embeddings(entry)
            else:
                status, data = 404, {"error": {"message": f"unknown path {path}"}}
            self._send(status, json.dumps(data).encode(), "application/json")

    return Handler


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="fake OpenAI-compatible server (rule-based)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8998)
    args = parser.parse_args(argv)
    fake = FakeLLM(args.host, args.port).start()
    print(f"fake LLM at {fake.url} (model {MODEL})", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
