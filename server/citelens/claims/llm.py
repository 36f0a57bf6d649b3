"""A small client for any OpenAI-compatible endpoint: chat completions and embeddings.

Works with OpenAI, Ollama (``http://localhost:11434/v1``), vLLM, llama.cpp's server
and the test fake. The API key travels only in the ``Authorization`` header and is
scrubbed from every error text. Nothing here raises for a remote problem.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx

from citelens.claims.prompts import RETRY
from citelens.claims.verdicts import Judgement, parse_judgement
from citelens.core.settings import Settings

OPENAI_BASE_URL = "https://api.openai.com/v1"
#: Local models can be slow: one completion may take this long.
LLM_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class LLMConfig:
    base_url: str
    model: str
    model_phase2: str
    embedding_model: str | None
    api_key: str | None  # never shown: excluded from repr
    timeout_s: float = LLM_TIMEOUT_S

    def __repr__(self) -> str:
        return (
            f"LLMConfig(base_url={self.base_url!r}, model={self.model!r}, "
            f"model_phase2={self.model_phase2!r}, embedding_model={self.embedding_model!r})"
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMConfig | None:
        """The endpoint to use, or ``None`` when claim checks have no model configured."""
        if not settings.llm_model:
            return None
        base = settings.llm_base_url or (OPENAI_BASE_URL if settings.llm_api_key else None)
        if not base:
            return None
        return cls(
            base_url=base.rstrip("/"),
            model=settings.llm_model,
            model_phase2=settings.llm_model_phase2 or settings.llm_model,
            embedding_model=settings.embedding_model,
            api_key=settings.llm_api_key,
        )

    def headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json"}
        if self.api_key:
            h["Authorization"] = f"Bearer {self.api_key}"
        return h

    def scrub(self, text: str) -> str:
        return text.replace(self.api_key, "***") if self.api_key else text


@dataclass(slots=True)
class Call:
    """What one model exchange produced, for the stage log."""

    ok: bool
    detail: str
    elapsed_ms: float
    url: str


async def _post(
    client: httpx.AsyncClient, config: LLMConfig, path: str, payload: dict[str, Any]
) -> tuple[Any, Call]:
    url = config.base_url + path
    started = time.monotonic()

    def call(ok: bool, detail: str) -> Call:
        return Call(ok, config.scrub(detail)[:300], (time.monotonic() - started) * 1000, url)

    try:
        response = await client.post(url, json=payload, headers=config.headers(), timeout=config.timeout_s)
    except httpx.TimeoutException:
        return None, call(False, f"no answer within {config.timeout_s:g} s")
    except httpx.HTTPError as e:
        return None, call(False, f"cannot reach the model endpoint: {type(e).__name__}")
    if response.status_code != 200:
        return None, call(False, f"HTTP {response.status_code}: {response.text[:200]}")
    try:
        return response.json(), call(True, "HTTP 200")
    except ValueError:
        return None, call(False, "the endpoint answered with something that is not JSON")


async def chat(
    client: httpx.AsyncClient, config: LLMConfig, model: str, messages: list[dict[str, str]]
) -> tuple[str | None, Call]:
    """The content of one chat completion (temperature 0, JSON mode), or ``None``."""
    payload = {
        "model": model,
        "messages": messages,
        "temperature": 0,
        "response_format": {"type": "json_object"},
    }
    data, info = await _post(client, config, "/chat/completions", payload)
    if data is None:
        return None, info
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        info.ok, info.detail = False, "response without choices[0].message.content"
        return None, info
    if not isinstance(content, str):
        info.ok, info.detail = False, "message content is not text"
        return None, info
    return content, info


@dataclass(slots=True)
class JudgeOutcome:
    judgement: Judgement | None
    error: str
    calls: list[Call]


async def judge(
    client: httpx.AsyncClient, config: LLMConfig, model: str, messages: list[dict[str, str]]
) -> JudgeOutcome:
    """Ask for a verdict; an unparsable answer is retried once, then reported as an error."""
    calls: list[Call] = []
    history = list(messages)
    problem = ""
    for attempt in range(2):
        content, info = await chat(client, config, model, history)
        calls.append(info)
        if content is None:
            return JudgeOutcome(None, info.detail, calls)
        parsed = parse_judgement(content)
        if not isinstance(parsed, str):
            return JudgeOutcome(parsed, "", calls)
        problem = parsed
        info.ok, info.detail = False, f"unusable answer: {parsed}"
        if attempt == 0:
            history = [
                *history,
                {"role": "assistant", "content": content[:2000]},
                {"role": "user", "content": RETRY},
            ]
    return JudgeOutcome(None, f"the model's answer was malformed twice ({problem})", calls)


async def embed(
    client: httpx.AsyncClient, config: LLMConfig, texts: list[str]
) -> tuple[list[list[float]] | None, Call]:
    """One embedding per text (same order), or ``None`` when the endpoint fails."""
    if not config.embedding_model:
        return None, Call(False, "no embedding model configured", 0.0, "")
    data, info = await _post(client, config, "/embeddings", {"model": config.embedding_model, "input": texts})
    if data is None:
        return None, info
    try:
        items = sorted(data["data"], key=lambda d: int(d.get("index", 0)))
        vectors = [[float(x) for x in item["embedding"]] for item in items]
    except (KeyError, TypeError, ValueError):
        info.ok, info.detail = False, "response without data[i].embedding"
        return None, info
    if len(vectors) != len(texts):
        info.ok, info.detail = False, f"{len(vectors)} embeddings for {len(texts)} texts"
        return None, info
    return vectors, info
