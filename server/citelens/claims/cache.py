"""The persistent cache of claim results (diskcache).

Directory: ``Settings.cache_dir`` or ``CITELENS_CACHE_DIR`` or the platform user
cache, subfolder ``claims``, created with mode 0o700. The key is a hash of the
claim text, the paper's identity, the models, the prompt version and a
non-default embedding cutoff, never of an API key or endpoint credential. Values are
JSON text (:mod:`citelens.core.datacache`): nothing read back is ever unpickled, and an
unreadable or malformed row is a miss (the claim is checked again and the row
overwritten).
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
from citelens.core import datacache
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


def open_cache(settings: Settings, directory: str | Path | None = None) -> diskcache.Cache | None:
    """The claim cache, or ``None`` when the directory cannot be used (then nothing is cached)."""
    path = Path(directory) if directory else cache_dir(settings)
    try:
        return datacache.open_cache(path)
    except Exception:  # an unusable cache means: no cache
        return None


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


def load(cache: diskcache.Cache | None, key: str) -> ClaimResult | None:
    if cache is None:
        return None
    try:
        data = datacache.get_json(cache, key)
        result = ClaimResult.from_json(data) if isinstance(data, dict) else None
    except Exception:  # a damaged cache entry is a miss, never a crash
        return None
    return result if result is not None and datacache.valid_fields(result) else None


def store(cache: diskcache.Cache | None, key: str, result: ClaimResult) -> None:
    if cache is None or result.transient:
        return
    try:
        datacache.set_json(cache, key, result.to_json(), TTL_S)
    except Exception:  # a full disk must not break the check
        pass
