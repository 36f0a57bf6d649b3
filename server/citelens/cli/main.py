"""The ``citelens`` command: ``serve`` (language server), ``check`` (batch, for CI),
``cache clear``, ``eval claims``."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from citelens import __version__
from citelens.core.settings import Settings, from_sources
from citelens.core.severity import SETTING_VALUES, Severity
from citelens.core.statuses import Status, progress_counts
from citelens.core.text import printable

if TYPE_CHECKING:
    from citelens.workspace.check import CheckResult
    from citelens.workspace.verdicts import Verdicts


def _progress_bar() -> Callable[[int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    shown = [0.0]  # when the bar was last drawn: at most ten times a second (68,000 entries)

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - shown[0] < 0.1:
            return
        shown[0] = now
        width = 30
        filled = int(width * done / total) if total else width
        sys.stderr.write(f"\rVerifying citations [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def _left(seconds: float) -> str:
    if seconds >= 90:
        return f"~{round(seconds / 60)} min left"
    return f"~{max(5, round(seconds / 5) * 5)} s left"


class ProgressLines:
    """For a log, not a terminal (CI): "verified 64/183 entries · 2 not found · ~2 min left"
    every ``interval`` seconds while verification runs (a run may wait minutes on rate limits).
    The time left is estimated from the pace since the first verdict (reading the files and
    preparing the entries come before it)."""

    def __init__(self, interval: float, write: Callable[[str], None]) -> None:
        self.interval = interval
        self.write = write
        self.start: tuple[float, int] | None = None  # (time, entries done) at the first verdict
        self.last = 0.0
        self.by_status: dict[Status, int] = {}

    def verdict(self, ver: object) -> None:
        status = Status.named(getattr(ver, "status", None))
        if status is not None:
            self.by_status[status] = self.by_status.get(status, 0) + 1

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self.start is None:
            self.start, self.last = (now, done), now
        if done >= total or now - self.last < self.interval:
            return
        self.last = now
        parts = [f"verified {done}/{total} entries"]
        parts += progress_counts(self.by_status)
        since, first = self.start
        if done > first and now > since:
            parts.append(_left((now - since) / (done - first) * (total - done)))
        self.write(" · ".join(parts))


def _check(args: argparse.Namespace, settings: Settings) -> int:
    from citelens.workspace.check import UsageError, run_check
    from citelens.workspace.pipeline import Pipeline
    from citelens.workspace.report import fails, write
    from citelens.workspace.verdicts import Verdicts

    if args.offline:
        settings = dataclasses.replace(settings, offline=True)
    if args.no_verify:  # no request in any mode: a venue's batches and Ray workers read it here
        settings = dataclasses.replace(settings, verification_enabled=False)
    severity = dict(settings.diagnostic_severity)
    for item in args.severity or []:
        code, _, sev = item.partition("=")
        if sev not in SETTING_VALUES:
            print(
                f"citelens: --severity wants CODE={'|'.join(SETTING_VALUES)}, got {item!r}",
                file=sys.stderr,
            )
            return 2
        severity[code] = sev
    settings = dataclasses.replace(
        settings,
        diagnostic_severity=severity,
        report_unused_entries=settings.report_unused_entries or args.unused,
    )

    def log(msg: str) -> None:
        if not args.quiet:
            print(f"citelens: {printable(msg)}", file=sys.stderr, flush=True)

    if args.venue:
        return _venue(args, settings, log)
    progress = _progress_bar()
    lines: ProgressLines | None = None
    if progress is None and not args.quiet:
        progress = lines = ProgressLines(args.progress_interval, log)
    _batch_gc()
    results: list[CheckResult] = []
    diffs: list[str] = []

    async def check() -> int:
        # Only an int leaves asyncio.run: on exit it may repr() the task's result.
        pipeline = Pipeline(settings, log)  # the process's clients, cache and snapshot
        verdicts = Verdicts()  # the process's settled verdicts: --fix's second check reads them
        try:
            result = await run_check(
                args.paths,
                pipeline,
                verify=not args.no_verify,
                log=log,
                progress=progress,
                on_verdict=lines.verdict if lines is not None else None,
                verdicts=verdicts,
            )
        finally:
            await pipeline.aclose()
        if args.fix or args.diff:
            result = await _fixed(args, settings, result, log, diffs, verdicts)
        results.append(result)
        return 1 if fails(result, args.fail_on) else 0

    try:
        status = asyncio.run(check())
    except UsageError as exc:
        print(f"citelens: {printable(str(exc))}", file=sys.stderr)
        return 2
    if args.diff:
        sys.stdout.write("".join(diffs))
        return status
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            write(results[0], args.format, fh, verbose=args.verbose)
    else:
        write(results[0], args.format, sys.stdout, verbose=args.verbose)
    return status


async def _fixed(
    args: argparse.Namespace,
    settings: Settings,
    result: CheckResult,
    log: Callable[[str], None],
    diffs: list[str],
    verdicts: Verdicts,
) -> CheckResult:
    """``--fix`` / ``--diff``: the fixes of ``result`` applied (or shown), and the check run
    again on the fixed texts, whose findings decide the exit status (an entry no fix changed
    keeps its verdict: ``verdicts``, the first check's store)."""
    from citelens.fixes import apply
    from citelens.fixes.fix import Applicability
    from citelens.workspace.check import run_check
    from citelens.workspace.pipeline import Pipeline
    from citelens.workspace.store import DocumentStore
    from citelens.zotero import batch

    level = Applicability.UNSAFE if args.unsafe_fixes else Applicability.SAFE
    managed = batch.managed_files(result, settings)  # .bib files Better BibTeX writes
    run = apply.plan(
        result,
        settings,
        level,
        leave={p: batch.leave_reason(p) for p in managed},
        add_missing=args.add_missing,
    )
    for line in apply.summary_lines(run):
        log(("would fix " if args.diff else "fixed ") + line)
    for note in run.notes:
        log(note)
    zotero = await batch.fix_in_zotero(
        result, settings, managed, level, diff=args.diff, log=log, add_missing=args.add_missing
    )
    if args.diff:
        diffs.append(apply.unified_diff(run))
    else:
        said = len(run.notes)
        apply.write(run)
        for note in run.notes[said:]:  # a file that could not be written
            log(note)
    if run.unsafe_left and not args.unsafe_fixes:
        log(
            f"{len(run.unsafe_left)} more fixes are unsafe (a merge, a preprint's published version, "
            "a less than confident match of the same paper): --unsafe-fixes applies them"
        )
    if run.missing_left:
        n = run.missing_left
        lack, its = ("entry lacks", "its") if n == 1 else ("entries lack", "their")
        log(
            f"{n} {lack} a DOI or pages that {its} verified paper has (no finding: left as "
            "written): --add-missing fills them in"
        )
    if args.fix and not args.diff:
        written = f", {len(zotero.written)} written to Zotero" if managed else ""
        log(f"{len(run.applied)} fixes applied in {len(run.fixed)} files{written}")
    if not run.fixed and not zotero.exported:
        return result
    store = DocumentStore(settings.extra_cite_commands)
    for k, (path, text) in enumerate(sorted(run.fixed.items())):
        store.open(path, text, k + 1)  # the fixed texts, written or not
    pipeline = Pipeline(settings, log)
    try:
        return await run_check(
            args.paths, pipeline, store=store, verify=not args.no_verify, log=log, verdicts=verdicts
        )
    finally:
        await pipeline.aclose()


def _venue(args: argparse.Namespace, settings: Settings, log: Callable[[str], None]) -> int:
    from citelens.venue.run import check_venue
    from citelens.workspace.check import UsageError

    if len(args.paths) != 1:
        print("citelens: --venue takes one folder of papers", file=sys.stderr)
        return 2
    try:
        if args.ray is not None:
            from citelens.scale.cluster import check_venue_on_ray

            run = check_venue_on_ray(
                args.paths[0],
                args.venue,
                settings,
                address=args.ray or None,
                workers=args.workers,
                batch_size=args.batch or 16,
                log=log,
                progress=log,
                cleared=args.cleared,
            )
        else:
            run = check_venue(
                args.paths[0],
                args.venue,
                settings,
                log=log,
                progress=log,
                cleared=args.cleared,
            )
    except RuntimeError as exc:
        print(f"citelens: {exc}", file=sys.stderr)
        return 2
    except UsageError as exc:
        print(f"citelens: {exc}", file=sys.stderr)
        return 2
    papers = f"{run.papers} paper{'' if run.papers == 1 else 's'}"
    refs = f"{run.references} reference{'' if run.references == 1 else 's'}"
    log(
        f"venue: {papers} checked ({run.skipped} already done), {refs}, {run.distinct} distinct "
        f"verified, in {run.seconds:.0f} s; see {os.path.join(args.venue, 'summary.html')}"
    )
    from citelens.venue.health import venue_exit

    return venue_exit(args.venue, run, args.fail_on, log)


def _batch_gc() -> None:
    """Collect young objects only. A check keeps every entry of every bibliography (and
    its view, verdict and findings) until it prints: each full collection walks them all
    again, a third of the time of a 68,000-entry check. The cycles a check makes (LaTeX
    parse trees) die young and are still collected."""
    gen0, gen1, _gen2 = gc.get_threshold()
    gc.set_threshold(gen0, gen1, 1 << 30)


def _serve(args: argparse.Namespace) -> int:
    from citelens.lsp.server import create_server

    server = create_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0


def _cache_clear(settings: Settings) -> int:
    from citelens.verify.cache import clear_cache

    where = clear_cache(settings)
    print(f"citelens: cache cleared ({where})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="citelens", description="Check citations in LaTeX and Markdown papers."
    )
    parser.add_argument("--version", action="version", version=f"citelens {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    serve.add_argument("--stdio", action="store_true", help="use stdio (the default)")

    check = sub.add_parser("check", help="check documents and bibliographies (for CI)")
    check.add_argument("paths", nargs="+", metavar="PATH", help=".tex/.md/.bib files or folders")
    check.add_argument("--format", choices=["text", "json", "sarif"], default="text")
    check.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    check.add_argument("--offline", action="store_true", help="use the cache only (no network)")
    check.add_argument(
        "--no-verify", action="store_true", help="local checks only (undefined/duplicate keys, syntax)"
    )
    check.add_argument("--unused", action="store_true", help="also report entries never cited")
    check.add_argument(
        "--severity",
        action="append",
        metavar="CODE=LEVEL",
        help="override a diagnostic's severity (repeatable)",
    )
    check.add_argument(
        "--fail-on",
        choices=[s.value for s in Severity if s is not Severity.HINT],
        default=Severity.ERROR.value,
        help="exit 1 when a problem is at this level or above (default: error)",
    )
    check.add_argument(
        "--verbose", "-v", action="store_true", help="text: list every hint (else they are summed)"
    )
    check.add_argument("--quiet", "-q", action="store_true", help="no log lines on stderr")
    check.add_argument(
        "--progress-interval",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="when stderr is not a terminal, a progress line this often (default 10)",
    )
    check.add_argument(
        "--venue",
        metavar="OUT",
        help="PATH is a folder of papers (one per folder): write a report per paper, summary.jsonl and "
        "summary.html to OUT; a run resumes after the papers it finished",
    )
    check.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="with --venue: run on Ray (a cluster's ADDRESS, or a local instance without one)",
    )
    check.add_argument(
        "--fix", action="store_true", help="apply the safe fixes to the .bib files (and report what changed)"
    )
    check.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff: also the unsafe ones, each still the same paper (a merge, a "
        "preprint's published version, a less than confident match). A fix that puts another "
        "paper in place of the cited one is never applied by a command: the editor offers it, "
        "for you to pick",
    )
    check.add_argument(
        "--add-missing",
        action="store_true",
        help="with --fix or --diff: also add the DOI and pages an entry lacks, from its verified paper "
        "(a fix otherwise only answers a finding: a correct entry is left as written)",
    )
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--workers", type=int, default=2, metavar="N", help="with --ray: local Ray CPUs")
    check.add_argument(
        "--batch", type=int, default=0, metavar="N", help="with --ray: papers per Ray task (default 16)"
    )
    check.add_argument(
        "--cleared",
        metavar="FILE",
        help="with --venue: references a chair cleared, by fingerprint (default OUT/cleared.txt)",
    )

    cache = sub.add_parser("cache", help="manage the verification cache")
    cache_sub = cache.add_subparsers(dest="cache_command", required=True)
    cache_sub.add_parser("clear", help="delete every cached lookup")

    from citelens.cli import snapshot as snapshot_cli
    from citelens.cli import sources as sources_cli

    snapshot_cli.add_parser(sub)
    sources_cli.add_parser(sub)

    ev = sub.add_parser("eval", help="evaluate the claim checker on labelled data")
    ev.add_argument("what", choices=["claims"])
    ev.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = from_sources()
    if args.command == "serve":
        return _serve(args)
    if args.command == "check":
        return _check(args, settings)
    if args.command == "cache":
        return _cache_clear(settings)
    if args.command == "sources":
        from citelens.cli import sources as sources_cli

        return sources_cli.main(args, settings)
    if args.command == "snapshot":
        from citelens.cli import snapshot as snapshot_cli

        return snapshot_cli.main(args)
    if args.command == "eval":
        from citelens.cli.eval import main as eval_main

        return eval_main(list(args.rest))
    return 2


def run() -> None:
    """The ``citelens`` command. After a check, the process ends without freeing what it
    built one object at a time (a second on a 68,000-entry bibliography): the output is
    flushed and the cache closed by then. (mypy ends the same way.)"""
    argv = sys.argv[1:]
    status = main(argv)
    if argv[:1] == ["check"]:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
