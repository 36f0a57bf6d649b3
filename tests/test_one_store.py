"""One store of settled verdicts for the three drivers (issue 42): ``citelens check`` and the
venue read and keep them in ``workspace/verdicts.Verdicts`` as the editor's engine does, each
distinct content verified once, and a database cache is never read on the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from citelens.core.model import EntryView, Name
from citelens.core.settings import Settings
from citelens.core.statuses import Status
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.verify.cache import VerificationCache, lookup_key
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Verification
from citelens.verify.verdict import Asked, decide
from citelens.workspace.check import run_check
from citelens.workspace.citesearch import search_papers
from citelens.workspace.engine import Engine
from citelens.workspace.pipeline import Pipeline
from citelens.workspace.verdicts import Verdicts
from tests.fakes.scholarly import SETTING_NAMES

ATTENTION = "@article{KEY, title={Attention is all you need}, author={Vaswani, Ashish}, year=2017}\n"
RESIDUAL = ("@article{KEY, title={Deep residual learning for image recognition}, author={He, Kaiming},"
            " year=2016}\n")


def _paper(folder: Path, bib: str, *keys: str) -> None:
    folder.mkdir(parents=True)
    (folder / "refs.bib").write_text(bib, encoding="utf-8")
    cites = ",".join(keys)
    (folder / "main.tex").write_text(
        "\\documentclass{article}\n\\begin{document}\nAs shown~\\cite{" + cites + "}.\n"
        "\\bibliography{refs}\n\\end{document}\n",
        encoding="utf-8",
    )


class _Verifier:
    """Answers as a source holding every cited paper would, through the verdict's own rules
    (``decide``), and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[EntryView] = []

    async def __call__(self, views: list[EntryView]) -> Mapping[str, Verification]:
        self.asked += views
        out = {}
        for v in views:
            paper = PaperRecord("crossref", v.title, [str(a) for a in v.authors], v.year)
            answer = Lookup("crossref", "crossref_title", Outcome.FOUND, [paper])
            out[v.key] = decide(v, [Asked(answer, None, v.title)], Settings())
        return out


def test_a_check_verifies_each_content_once_and_keeps_two_papers_same_key_apart(tmp_path: Path) -> None:
    """Paper A's ``smith2020`` and paper B's are two papers; B's ``jones`` says what A's
    ``smith2020`` says: two contents, two verifications, three verdicts each under its key;
    a second check with the same store (``--fix``'s, a venue's next paper) asks nothing."""
    _paper(tmp_path / "a", ATTENTION.replace("KEY", "smith2020"), "smith2020")
    _paper(tmp_path / "b", RESIDUAL.replace("KEY", "smith2020") + ATTENTION.replace("KEY", "jones"),
           "smith2020", "jones")
    verifier, store = _Verifier(), Verdicts()

    async def check() -> object:
        return await run_check([str(tmp_path / "a"), str(tmp_path / "b")], Pipeline(Settings()),
                               verifier=verifier, verdicts=store)

    result = asyncio.run(check())
    assert sorted(v.title for v in verifier.asked) == [
        "Attention is all you need", "Deep residual learning for image recognition"]
    got = {(Path(e.path).parent.name, e.key): result.verdict(e) for e in result.entries}  # type: ignore[attr-defined]
    assert {k: (v.key, v.status, v.match.title) for k, v in got.items() if v and v.match} == {
        ("a", "smith2020"): ("smith2020", Status.VERIFIED, "Attention is all you need"),
        ("b", "smith2020"): ("smith2020", Status.VERIFIED, "Deep residual learning for image recognition"),
        ("b", "jones"): ("jones", Status.VERIFIED, "Attention is all you need"),
    }
    assert len(store) == 2
    asyncio.run(check())
    assert len(verifier.asked) == 2  # the second check read the store


def test_the_report_command_reads_the_editors_verdicts_and_leaves_them_unchanged(tmp_path: Path) -> None:
    """``citelens.report`` checks the workspace through the engine's store: what the editor
    settled is not asked again (every source here is unreachable), and only ``apply``
    changes the engine's verdicts."""
    _paper(tmp_path / "a", ATTENTION.replace("KEY", "smith2020"), "smith2020")
    dead = {name: "http://127.0.0.1:9" for name in SETTING_NAMES.values()}
    engine = Engine(Settings(cache_dir=str(tmp_path / "cache"), source_urls=dead))
    tex = str(tmp_path / "a" / "main.tex")
    engine.projects.analyse(tex)
    analysis = engine.analysis_for(tex)
    assert analysis is not None
    entry = analysis.definitions["smith2020"][0]
    h = engine.projects.entry_hash(entry, analysis)
    assert h is not None
    view = engine.entry_view(entry, analysis)
    assert view is not None
    verdict = asyncio.run(_Verifier()([view]))["smith2020"]
    engine.verdicts.keep(h, verdict)
    generation = engine.verdicts.generation

    report = asyncio.run(engine.workspace_report("json"))
    assert isinstance(report, dict)
    assert [(e["key"], e["status"]) for e in report["entries"]] == [("smith2020", "VERIFIED")]
    assert engine.verdicts.generation == generation and list(engine.verdicts) == [h]


# --------------------------------------------------------------------------- off the loop


class _RemoteStore:
    """A database's store (``verify/pgcache.PgStore``'s calls), in memory, that notes the
    thread of every call."""

    def __init__(self) -> None:
        self.rows: dict[str, str] = {}
        self.threads: list[tuple[str, int]] = []

    def _note(self, call: str) -> None:
        self.threads.append((call, threading.get_ident()))

    def get(self, key: str) -> str | None:
        self._note("get")
        return self.rows.get(key)

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        self._note("get_many")
        return {k: self.rows[k] for k in keys if k in self.rows}

    def set(self, key: str, value: str, expire: float | None = None) -> bool:
        self._note("set")
        self.rows[key] = value
        return True

    def iterkeys(self) -> Iterator[str]:
        self._note("iterkeys")
        return iter(list(self.rows))

    def __len__(self) -> int:
        self._note("len")
        return len(self.rows)

    def clear(self) -> int:
        self._note("clear")
        n = len(self.rows)
        self.rows.clear()
        return n

    def close(self) -> None:
        pass


def _view(key: str, title: str, doi: str | None = None) -> EntryView:
    return EntryView(key, "article", title, (Name("Ann", "", "Author", ""),), False, 2020, "A Journal",
                     doi, None, None, None, None)


def test_a_database_cache_is_read_and_written_off_the_event_loop(tmp_path: Path) -> None:
    """docs/architecture.md: every database read and write runs in a thread. An offline
    check whose lookups are remembered (1,000 entries), a paper S2 alone found (its
    retraction signal read from the cache), a paper search of cite-while-writing and the
    editor's "clear the cache" all reach the database from another thread than the loop's."""
    store = _RemoteStore()
    cache = VerificationCache(None)
    cache.use_store(store, "postgresql://db/citelens", b"k" * 32)
    paper = PaperRecord("s2", "A paper only Semantic Scholar holds", ["Ann Author"], 2020,
                        doi="10.1234/s2only")
    cache.put(lookup_key("s2", "id", "DOI:10.1234/s2only"),
              Lookup("s2", "s2_batch", Outcome.FOUND, [paper]))
    cache.put(lookup_key("s2", "cite_title_search", "attention is all you need"),
              Lookup("s2", "s2_search", Outcome.FOUND, [paper]))
    store.threads.clear()
    views = [_view("s2only", paper.title, "10.1234/s2only")]
    views += [_view(f"k{i}", f"An entry no cache holds number {i}") for i in range(1000)]
    settings = Settings(offline=True, cache_dir=str(tmp_path / "c"))

    async def run() -> tuple[int, dict[str, Verification]]:
        loop = threading.get_ident()
        verdicts = await verify_entries(views, settings, cache=cache)
        await search_papers(None, "Attention is all you need", cache)  # type: ignore[arg-type]
        assert [c for c, t in store.threads if t == loop] == []
        pipeline = Pipeline(Settings(cache="postgresql://db/citelens"))
        pipeline._cache = cache  # (the database opened)
        pipeline.clear_cache()
        await asyncio.sleep(0.2)
        return loop, verdicts

    loop, verdicts = asyncio.run(run())
    assert verdicts["s2only"].status is Status.VERIFIED, verdicts["s2only"].summary
    calls = {c for c, _t in store.threads}
    assert {"get_many", "iterkeys", "get", "clear"} <= calls, calls
    assert [c for c, t in store.threads if t == loop] == []
