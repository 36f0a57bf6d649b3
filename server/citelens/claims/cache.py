"""The persistent cache of claim results (diskcache).

Directory: ``Settings.cache_dir`` or ``CITELENS_CACHE_DIR`` or the platform user
cache, subfolder ``claims``, created with mode 0o700. The key is a hash of the
claim text, the paper's identity, the models, the prompt version and a
non-default embedding cutoff, never of an API key or endpoint credential. Values are
JSON text (:mod:`citelens.core.datacache`): nothing read back is ever unpickled, and an
unreadable or malformed row is a miss (the claim is checked again and the row
overwritten). Each row carries an HMAC-SHA256 of its key and content under the cache's
secret (:mod:`citelens.core.cachesecret`: ``cacheKey``, else the ``secret.key`` of this
folder), so a row CiteLens did not write ("supported", planted) is a miss too.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import diskcache
import platformdirs

from citelens.claims.prompts import PROMPT_VERSION
from citelens.claims.ranking import COSINE_MIN
from citelens.claims.result import ClaimResult
from citelens.core import cachesecret, datacache
from citelens.core.settings import Settings

#: How long a result stays (seconds): papers do not change, models and prompts are in the key.
TTL_S = 60 * 60 * 24 * 90


def cache_dir(settings: Settings) -> Path:
    base = (
        settings.cache_dir
        or os.environ.get("CITELENS_CACHE_DIR")
        or platformdirs.user_cache_dir("citelens", appauthor=False)
    )
    return Path(base) / "claims"


class ClaimCache:
    """The claim results' disk cache and the secret its rows are bound with."""

    def __init__(self, cache: diskcache.Cache, secret: bytes) -> None:
        self.cache = cache
        self.secret = secret

    def mac(self, key: str, text: str) -> str:
        return cachesecret.row_mac(self.secret, key, text)

    def close(self) -> None:
        self.cache.close()


def open_cache(settings: Settings, directory: str | Path | None = None) -> ClaimCache | None:
    """The claim cache, or ``None`` when the directory cannot be used (then nothing is cached)."""
    path = Path(directory) if directory else cache_dir(settings)
    try:
        cache = datacache.open_cache(path)
    except Exception:  # an unusable cache means: no cache
        return None
    try:
        if settings.cache_key:
            secret = cachesecret.from_setting(settings.cache_key)
        else:
            secret = cachesecret.load_or_create(path)
    except OSError:  # a secret file that is not ours: no cache
        cache.close()
        return None
    return ClaimCache(cache, secret)


def cache_key(claim: str, paper: str, settings: Settings, abstract_only: bool = False) -> str:
    parts: dict[str, Any] = {
        "claim": " ".join(claim.split()),
        "paper": paper,
        "model": settings.llm_model,
        "model2": settings.llm_model_phase2 or settings.llm_model,
        "embedding": settings.embedding_model,
        "prompt": PROMPT_VERSION,
        "abstract_only": abstract_only,
    }
    if settings.embedding_model and settings.embedding_cosine_min != COSINE_MIN:
        parts["cosine_min"] = settings.embedding_cosine_min  # other passages, other verdict
    return "claim:" + hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _text(result: dict[str, Any]) -> str:
    return json.dumps(result, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def load(cache: ClaimCache | None, key: str) -> ClaimResult | None:
    if cache is None:
        return None
    try:
        data = datacache.get_json(cache.cache, key)
        body = data.get("result") if isinstance(data, dict) else None
        if not isinstance(body, dict) or not cachesecret.same(data.get("mac"), cache.mac(key, _text(body))):
            return None  # not a row this cache's CiteLens wrote
        result = ClaimResult.from_json(body)
    except Exception:  # a damaged cache entry is a miss, never a crash
        return None
    return result if result is not None and datacache.valid_fields(result) else None


def store(cache: ClaimCache | None, key: str, result: ClaimResult) -> None:
    if cache is None or result.transient:
        return
    try:
        body = result.to_json()
        datacache.set_json(cache.cache, key, {"result": body, "mac": cache.mac(key, _text(body))}, TTL_S)
    except Exception:  # a full disk must not break the check
        pass
