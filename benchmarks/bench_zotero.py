"""Fix in Zotero (issue 44): what it costs, on a library of a few hundred items.

The fake Zotero (tests/fakes/zotero.py) with N items (default 300, most from the fake
scholarly database, the rest made up) exported by Better BibTeX to refs.bib, and a paper
citing all of them:

1. the quick fixes at the DOI_MISMATCH of that refs.bib (in process, verdicts set): the
   median time of ``textDocument/codeAction`` when the file is Better BibTeX's (the profile
   read, "Fix in Zotero" computed) and when it is not (no profile: what every .bib costs);
2. reading the Zotero profile: a prefs.js with N auto-export jobs and 2,000 other
   preferences, parsed (cold) and looked up again unchanged (warm, a stat per call);
3. the write (find by citation key, read, PATCH through the local API: four requests on
   loopback) and the export coming back (the fake exports after ``--export-delay``; Better
   BibTeX's own delay is 5 s by default): median of ``--writes`` round trips.

    .venv/bin/python -m benchmarks.bench_zotero [--items 300] [--runs 200] [--writes 20]

``--server DIR`` imports another checkout's ``server/`` (e.g. ``git archive f06a2b6 server |
tar -x -C /tmp/before``) for figure 1's plain-.bib case: the cost before issue 44.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _median_ms(samples: list[float]) -> str:
    p95 = sorted(samples)[max(0, int(len(samples) * 0.95) - 1)]
    return f"{statistics.median(samples) * 1000:.2f} ms (p95 {p95 * 1000:.2f})"


def code_action_times(folder: Path, env: dict[str, str], runs: int) -> list[float]:
    from lsprotocol import types as lsp
    from tests.fakes.zotero import DWORK_NAOR_1992, MISMATCH_KEY, RIGHT_DOI, WRONG_DOI
    from tests.lsp_session import uri

    from citelens.core.findings import Severity
    from citelens.core.settings import from_sources
    from citelens.lsp.actions import code_actions
    from citelens.lsp.state import CiteLensServer
    from citelens.sources.records import PaperRecord
    from citelens.verify.match.discrepancy import Discrepancy
    from citelens.verify.status import Status, Verification

    ls = CiteLensServer()
    ls.session.settings = dataclasses.replace(from_sources(env=env, editor={}), verification_enabled=False)
    bib = str(folder / "refs.bib")
    text = Path(bib).read_text(encoding="utf-8")
    ls.session.store.open(bib, text, 1)
    ls.session.projects.analyse(bib)
    parsed = ls.session.store.bib(bib)
    assert parsed is not None
    entry = next(e for e in parsed.entries if e.key == MISMATCH_KEY)
    right = PaperRecord(
        "crossref",
        DWORK_NAOR_1992["title"],
        DWORK_NAOR_1992["authors"],
        1992,
        DWORK_NAOR_1992["venue"],
        doi=RIGHT_DOI,
        pages="139-147",
    )
    wrong = PaperRecord(
        "s2", "Developing functional musculoskeletal tissues", ["E. Makris"], 2014, doi=WRONG_DOI
    )
    v = Verification(
        MISMATCH_KEY,
        Status.DOI_MISMATCH,
        "wrong DOI",
        match=wrong,
        discrepancies=[Discrepancy("doi", "identifier", Severity.ERROR, "doi")],
        candidates=[right],
        right_papers=[right],
    )
    h = ls.session.projects.entry_hash(entry, ls.session.analysis_for(bib))
    assert h
    ls.session.verdicts.keep(h, v)
    index = ls.session.store.line_index(bib)
    assert index is not None
    s, e = index.range(entry.fields["doi"].value_span)
    diag = lsp.Diagnostic(
        range=lsp.Range(lsp.Position(s.line, s.character), lsp.Position(e.line, e.character)),
        message="wrong DOI",
        code="DOI_MISMATCH",
        source="citelens",
        data={"key": MISMATCH_KEY, "bib": bib, "status": "DOI_MISMATCH", "version": 1, "field": "doi"},
    )
    params = lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri(bib)), diag.range, lsp.CodeActionContext(diagnostics=[diag])
    )
    titles = [a.title for a in code_actions(ls, params)]
    print(f"    actions: {titles[:2]}")
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        code_actions(ls, params)
        out.append(time.perf_counter() - t)
    return out


def profile_times(folder: Path, n_jobs: int, runs: int) -> tuple[float, list[float]]:
    from tests.fakes.zotero import ZoteroFake

    from citelens.core.settings import from_sources
    from citelens.zotero import profile

    z = ZoteroFake(folder)  # not started: only its profile writer
    job = {
        "enabled": True,
        "type": "collection",
        "translatorID": "ca65189f-8815-4afe-8c8b-8c7c15f0edca",
        "status": "done",
        "_library": "users/4711",
    }
    z.exports = [{**job, "id": i, "path": f"/home/ana/exports/collection {i}.bib"} for i in range(n_jobs)]
    prefs = z.write_profile(port=23119) / "prefs.js"
    with prefs.open("a", encoding="utf-8") as fh:
        for i in range(2000):
            fh.write(f'user_pref("extensions.other.pref{i}", "value {i}");\n')
    settings = from_sources(env={"CITELENS_ZOTERO_PROFILE": str(folder)}, editor={})
    bib = z.exports[-1]["path"]
    t = time.perf_counter()
    found = profile.auto_export(settings, bib)
    cold = time.perf_counter() - t
    assert found is not None and len(profile.read_profile(settings).exports) == n_jobs
    warm = []
    for _ in range(runs):
        t = time.perf_counter()
        profile.auto_export(settings, bib)
        warm.append(time.perf_counter() - t)
    return cold, warm


async def round_trips(z: Any, folder: Path, writes: int) -> tuple[list[float], list[float]]:
    from tests.fakes.zotero import MISMATCH_KEY, RIGHT_DOI, WRONG_DOI

    from citelens.fixes.metadata import FieldChange
    from citelens.zotero.client import ZoteroAccess
    from citelens.zotero.export import stamp, wait_for_export
    from citelens.zotero.plan import ZoteroFix
    from citelens.zotero.profile import auto_export
    from citelens.zotero.write import write_fix

    bib = str(folder / "refs.bib")
    settings = z.settings()
    access = ZoteroAccess(settings)
    job = auto_export(settings, bib)

    async def yes(*_a: object) -> bool:
        return True

    write_s, export_s = [], []
    async with access.session():
        for i in range(writes):
            old, new = (WRONG_DOI, RIGHT_DOI) if i % 2 == 0 else (RIGHT_DOI, WRONG_DOI)
            fix = ZoteroFix(bib, MISMATCH_KEY, (FieldChange("doi", old, new, ""),), True, "")
            before = stamp(bib)
            t = time.perf_counter()
            result = await write_fix(access, fix, yes, job)
            write_s.append(time.perf_counter() - t)
            assert result.written, result.message
            text = await wait_for_export(bib, before, 30, asyncio.sleep, time.monotonic)
            export_s.append(time.perf_counter() - t)
            assert text is not None and new in text
    return write_s, export_s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--writes", type=int, default=20)
    ap.add_argument("--export-delay", type=float, default=0.5)
    ap.add_argument("--server", help="another checkout's server/ folder (figure 1, plain .bib only)")
    args = ap.parse_args(argv)
    if args.server:
        sys.path.insert(0, str(Path(args.server).resolve()))
    from tests.fakes.zotero import library, running_zotero, synthetic_papers

    with (
        tempfile.TemporaryDirectory() as tmp,
        running_zotero(Path(tmp) / "profile", export_delay_s=args.export_delay) as z,
    ):
        paper = library(z, Path(tmp) / "paper", args.items, extra=synthetic_papers(args.items))
        print(f"library: {len(z.items)} items, refs.bib {paper.bib.stat().st_size // 1024} kB")
        import citelens

        print(f"code: {Path(citelens.__file__).parent}")
        have_zotero = Path(citelens.__file__).parent.joinpath("zotero").is_dir()
        print("1. quick fixes at the DOI_MISMATCH of refs.bib (in process)")
        plain = code_action_times(paper.dir, {"CITELENS_ZOTERO_PROFILE": str(Path(tmp) / "none")}, args.runs)
        print(f"   a plain .bib:            {_median_ms(plain)}")
        if have_zotero:
            bbt = code_action_times(paper.dir, z.env(), args.runs)
            print(f"   Better BibTeX's .bib:    {_median_ms(bbt)}")
            print(f"2. the profile: prefs.js with {args.items} auto-exports and 2,000 other preferences")
            cold, warm = profile_times(Path(tmp) / "big-profile", args.items, args.runs)
            print(f"   parsed (cold): {cold * 1000:.2f} ms; unchanged (warm): {_median_ms(warm)}")
            print(f"3. write and export round trips (fake export delay {args.export_delay} s)")
            write_s, export_s = asyncio.run(round_trips(z, paper.dir, args.writes))
            print(f"   write (find, read, PATCH): {_median_ms(write_s)}")
            print(f"   until the export is read back: {_median_ms(export_s)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
