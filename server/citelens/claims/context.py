"""The state one claim check carries through its steps: settings, clients, stage log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import httpx

from citelens.claims.result import Stage, StageOutcome, Step
from citelens.claims.urlsafety import Fetched, safe_fetch
from citelens.core.secrets import redact_url
from citelens.core.settings import Settings

if TYPE_CHECKING:
    from citelens.sources.transport import Sources


@dataclass(slots=True)
class Context:
    settings: Settings
    client: httpx.AsyncClient
    sources: Sources | None = None
    log: list[Stage] = field(default_factory=list)
    fetches: int = 0  # HTTP requests made by safe_fetch (full texts, landing pages)

    def stage(
        self,
        step: Step,
        source: str,
        outcome: StageOutcome,
        url: str = "",
        elapsed_ms: float = 0.0,
        detail: str = "",
    ) -> None:
        self.log.append(
            Stage(
                step,
                source,
                outcome,
                redact_url(url) if url else "",
                round(elapsed_ms, 1),
                self.scrub(detail)[:300],
            )
        )

    def scrub(self, text: str) -> str:
        s = self.settings
        for secret in (s.llm_api_key, s.s2_api_key, s.openalex_api_key):
            if secret:
                text = text.replace(secret, "***")
        return text

    async def fetch(
        self, url: str, *, timeout_s: float | None = None, trusted_base: str | None = None
    ) -> Fetched:
        """A safe GET of ``url`` (see :mod:`citelens.claims.urlsafety`).

        ``trusted_base``: the configured base URL (a setting, never data) ``url`` was
        built from; its origin is trusted even on a private address. Nothing is fetched
        offline, nor from an address found in data with ``fetchEntryUrls`` off.
        """
        if self.settings.offline:
            return Fetched(redact_url(url), error="offline: not fetched")
        if trusted_base is None and not self.settings.fetch_entry_urls:
            return Fetched(redact_url(url), error="not fetched: fetchEntryUrls is off")
        got = await safe_fetch(
            self.client,
            url,
            allow_private=self.settings.allow_private_urls,
            max_bytes=self.settings.fetch_max_bytes,
            timeout_s=timeout_s or self.settings.request_timeout_s * 3,
            trusted_base=trusted_base,
        )
        self.fetches += got.requests
        return got

    def source_requests(self) -> int:
        if self.sources is None:
            return 0
        return sum(self.sources.request_counts().values())
