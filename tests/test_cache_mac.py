"""A verdict read back is one CiteLens wrote (issue 32, break 2): the claim cache's rows
carry the same HMAC as the verification cache's, and the cache's secret file is refused
when others may read or write it. (The forged verification row, online and offline through
the real ``citelens check``: ``tests/test_hostile_input.py``.)"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from citelens.claims import cache as claim_cache
from citelens.claims.result import ClaimResult, Status, Verdict
from citelens.core import cachesecret
from citelens.core.settings import Settings
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.verify.cache import VerificationCache


def _rows(db: Path) -> dict[str, str]:
    con = sqlite3.connect(db)
    try:
        return dict(con.execute("SELECT key, value FROM Cache").fetchall())
    finally:
        con.close()


def _write(db: Path, key: str, value: str) -> None:
    con = sqlite3.connect(db)
    try:
        con.execute("UPDATE Cache SET value = ? WHERE key = ?", (value, key))
        con.commit()
    finally:
        con.close()


def test_a_planted_claim_result_is_a_miss(tmp_path: Path) -> None:
    """A CONTRADICTS result rewritten as SUPPORTS, with no MAC, with a MAC under a guessed
    key, and with the MAC the row had: each is a miss (the claim is checked again). Before,
    claim rows had no binding at all, and a planted SUPPORTS was shown on hover."""
    settings = Settings(cache_dir=str(tmp_path / "c"))
    cache = claim_cache.open_cache(settings)
    assert cache is not None
    real = ClaimResult("a claim", "doi:10.1234/x", Status.VERDICT, Verdict.CONTRADICTS, "no")
    claim_cache.store(cache, "k", real)
    assert claim_cache.load(cache, "k") == real
    cache.close()
    db = tmp_path / "c" / "claims" / "cache.db"
    row = json.loads(_rows(db)["k"])
    body = {**row["result"], "verdict": Verdict.SUPPORTS.value, "rationale": "planted"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    for forged in ({"result": body}, body,
                   {"result": body, "mac": cachesecret.row_mac(b"guessed", "k", text)},
                   {"result": body, "mac": row["mac"]}):
        _write(db, "k", json.dumps(forged))
        cache = claim_cache.open_cache(settings)
        assert cache is not None
        assert claim_cache.load(cache, "k") is None, forged
        cache.close()
    assert (tmp_path / "c" / "claims" / "secret.key").stat().st_mode & 0o777 == 0o600


def test_a_secret_file_others_can_read_means_no_cache(tmp_path: Path) -> None:
    """``secret.key`` readable by others (anyone could forge rows with it): the cache is not
    used, with one line naming the file, never the secret."""
    d = tmp_path / "c"
    VerificationCache(d).close()
    secret = (d / "secret.key").read_text()
    os.chmod(d / "secret.key", 0o644)
    lines: list[str] = []
    cache = VerificationCache(d, lines.append)
    assert not cache.enabled
    assert len(lines) == 1 and "secret.key" in lines[0] and "mode 644" in lines[0], lines
    assert secret not in lines[0]


def test_the_cache_key_setting_binds_rows_across_machines(tmp_path: Path) -> None:
    """With ``cacheKey``, two caches (two machines) read each other's rows; a third with
    another key does not."""
    rec = PaperRecord(source="crossref", title="A paper", year=2020, doi="10.1234/x")
    answer = Lookup("crossref", "doi", Outcome.FOUND, [rec])
    one = VerificationCache(tmp_path / "one", secret=cachesecret.from_setting("k1"))
    one.put("crossref:doi:10.1234/x", answer)
    one.close()
    for key, hit in (("k1", True), ("k2", False)):
        two = VerificationCache(tmp_path / "one", secret=cachesecret.from_setting(key))
        got = two.get("crossref:doi:10.1234/x")
        assert (got is not None) == hit, key
        two.close()
