"""One rate limiter per source for every worker of a cluster (run as a Ray actor).

Each host client still spaces its own requests; before it sends, it asks the limiter for
the next free start of that host across all workers and waits that long, so N workers
together keep the rate one process would (Semantic Scholar's 1 request/s is per key).
"""

from __future__ import annotations

import time


class RateLimiter:
    """Start times per host, handed out in order (a Ray actor runs one call at a time)."""

    def __init__(self) -> None:
        self.next_start: dict[str, float] = {}
        self.granted: dict[str, int] = {}

    def slot(self, host: str, interval: float) -> float:
        """Seconds the caller waits before its request to ``host`` may start."""
        now = time.time()
        start = max(now, self.next_start.get(host, 0.0))
        self.next_start[host] = start + max(0.0, interval)
        self.granted[host] = self.granted.get(host, 0) + 1
        return start - now

    def counts(self) -> dict[str, int]:
        return dict(self.granted)
