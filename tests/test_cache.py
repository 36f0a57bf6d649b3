"""The verification cache: what is kept, for how long, and how it fails."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from citelens.core.settings import Settings
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.verify import cache as cache_mod
from citelens.verify.cache import VerificationCache, clear_cache, lookup_key, open_cache


def found() -> Lookup:
    return Lookup("s2", "s2_batch", Outcome.FOUND, [PaperRecord("s2", "A paper", ["A B"], 2020)])


def test_keys_name_the_lookup_normalised() -> None:
    assert lookup_key("s2", "id", "DOI:10.1234/ABC") == "s2:id:doi:10.1234/abc"
    assert (lookup_key("s2", "match", "  Über {BERT}: Pre-training!  ")
            == lookup_key("s2", "match", "uber bert pre training"))


def test_found_is_kept_and_failures_are_not(tmp_path: Path) -> None:
    c = VerificationCache(tmp_path / "c")
    c.put("s2:id:doi:10.1/a", found())
    c.put("s2:id:doi:10.1/b", Lookup("s2", "s2_batch", Outcome.FAILED, [], "HTTP 503"))
    c.put("s2:id:doi:10.1/c", Lookup("s2", "s2_batch", Outcome.UNAVAILABLE, [], "down"))
    got = c.get("s2:id:doi:10.1/a")
    assert got is not None and got.records[0].title == "A paper"
    assert c.get("s2:id:doi:10.1/b") is None and c.get("s2:id:doi:10.1/c") is None
    assert len(c) == 1


def test_a_miss_is_not_reported_as_a_forged_row(tmp_path: Path) -> None:
    log: list[str] = []
    c = VerificationCache(tmp_path / "c", log.append)
    assert c.get("openalex:title:a title nobody asked about") is None
    c.put("s2:id:doi:10.1/a", found())
    assert c.get("s2:id:doi:10.1/a") is not None
    assert log == []


def test_not_found_expires_after_a_day_found_after_thirty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = VerificationCache(tmp_path / "c")
    c.put("nf", Lookup("crossref", "crossref_doi", Outcome.NOT_FOUND))
    c.put("f", found())
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 2 * 24 * 3600)
    assert c.get("nf") is None
    assert c.get("f") is not None
    monkeypatch.setattr(time, "time", lambda: real() + 31 * 24 * 3600)
    assert c.get("f") is None


def test_directory_is_user_only(tmp_path: Path) -> None:
    d = tmp_path / "fresh" / "cache"
    VerificationCache(d).close()
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700


def test_cache_dir_setting_and_clear(tmp_path: Path) -> None:
    s = Settings(cache_dir=str(tmp_path / "mine"))
    c = open_cache(s)
    c.put("k", found())
    c.close()
    where = clear_cache(s)
    assert str(tmp_path / "mine") in where and "1 answers dropped" in where
    assert open_cache(s).get("k") is None


def test_default_location_is_the_user_cache_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_mod.platformdirs, "user_cache_dir", lambda app: f"/x/{app}")
    assert str(cache_mod.default_cache_dir(Settings())) == "/x/citelens"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_directory_degrades_to_no_cache(tmp_path: Path) -> None:
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    logs: list[str] = []
    try:
        c = VerificationCache(d, logs.append)
        c.put("k", found())
        assert c.get("k") is None
    finally:
        d.chmod(0o700)
    assert len(logs) == 1


def test_unwritable_path_degrades_to_no_cache_with_one_log_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    logs: list[str] = []
    c = VerificationCache(blocker / "cache", logs.append)
    assert not c.enabled
    c.put("k", found())
    assert c.get("k") is None and c.clear() == 0
    assert len(logs) == 1 and "without a cache" in logs[0]


def test_corrupted_database_degrades_to_no_cache(tmp_path: Path) -> None:
    d = tmp_path / "c"
    d.mkdir()
    (d / "cache.db").write_bytes(b"garbage" * 1000)
    logs: list[str] = []
    c = VerificationCache(d, logs.append)
    c.put("k", found())
    assert c.get("k") is None
    assert len(logs) == 1
