"""A venue in one command: ``citelens check FOLDER --venue OUT``.

Each folder under FOLDER is one paper (a project: ``.tex``, ``.bib``, ``.md``, or the
``.bbl`` an arXiv source bundle carries in place of its ``.bib``); each document file
directly in FOLDER is one paper too. Papers are checked with the same engine as ``citelens
check``, many at a time: each paper's entries join one verification run (``VerifyStream``)
as soon as the paper is read, every host works on all of them at its own rate, and a paper is
written as soon as its own verdicts are in (no batch of papers waits for its slowest entry).
Each distinct entry (by its content) is verified once across all papers: a verdict already
reached is read from the venue's store of settled verdicts (``workspace/verdicts.py``, the
store every driver keeps them in), an entry another paper is verifying is awaited. New papers start while
few enough entries wait for the sources; memory is bounded by the papers in flight, not the
venue.

Written to OUT: ``papers/NAME.json`` (the paper's report, as ``--format json``), one line
per paper in ``summary.jsonl`` (appended as each paper finishes: a run that is interrupted
resumes after the papers it finished) and ``summary.html`` (papers ranked by likely
fabricated references, each with its evidence).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from citelens.core.codes import Code
from citelens.core.dockind import CITING, DocKind, kind_of
from citelens.core.settings import Settings
from citelens.core.text import json_escaped
from citelens.documents.bbl import bbl_to_bibtex
from citelens.documents.pdf.read import is_pdf
from citelens.documents.read import read_text
from citelens.venue.cleared import FILE as CLEARED_FILE
from citelens.venue.cleared import apply_cleared, fingerprints, read_cleared
from citelens.venue.evidence import (
    CLASSES,
    FABRICATED,
    RETRACTED,
    UNCHECKED,
    UNREAD,
    entry_class,
    evidence,
    paper_heading,
    retractions,
    written_entries,
)
from citelens.venue.health import (
    FAIL_LEVELS,
    BatchHealth,
    host_load,
    resumed_metadata,
    run_metadata,
    utc_now,
)
from citelens.venue.page import rank_key, read_run, write_index, write_paper_page
from citelens.venue.records import Finding, Heading, PaperLine, Retraction
from citelens.workspace.check import CheckResult, UsageError, run_check
from citelens.workspace.files import documents_under, files_under
from citelens.workspace.pipeline import Pipeline
from citelens.workspace.report import SEVERITY_COUNT, to_json
from citelens.workspace.store import DocumentStore
from citelens.workspace.verdicts import Verdicts
from citelens.workspace.walls import PaperWalls, budget_of, paper_names, walls_for

if TYPE_CHECKING:  # (imported when first used: ``--no-verify`` builds no verifier)
    from citelens.verify.scheduler import VerifyStream

Log = Callable[[str], None]

#: Papers read, checked or waiting for their verdicts at the same time on one machine.
PAPERS_IN_FLIGHT = 256
#: More papers start while fewer entries than this wait for the sources: enough to keep every
#: host busy at its own rate (and the batched tiers' requests full), few enough that a paper
#: waits for its own entries, not for a backlog.
ENTRIES_WAITING = 1500
#: Settled verdicts a venue keeps (those used longest ago are let go first: a classic cited
#: by many papers stays).
MEMO_SIZE = 200_000
INDEX_EVERY = 5.0  # seconds between two writes of summary.html while the run goes
PROGRESS_EVERY = 5.0  # seconds between two progress lines while the run goes


@dataclass(frozen=True, slots=True)
class Paper:
    name: str  # unique, safe as a file name
    path: str  # a folder or a document


def list_papers(folder: str) -> list[Paper]:
    """The papers of a venue folder, in name order."""
    root = Path(folder)
    if not root.is_dir():
        raise UsageError(f"--venue needs a folder of papers, got {folder}")
    found = []
    for child in sorted(root.iterdir()):
        if child.name.startswith("."):
            continue
        if child.is_dir() or (
            child.is_file() and (kind_of(str(child)) in CITING or is_pdf(child))
        ):
            found.append(child)
    names = paper_names(c.name for c in found)  # unique and stable: `paper one`, `paper_one`
    return [Paper(names[c.name], str(c)) for c in found]


def _bbl_bibs(paper: Paper, out: Path, walls: PaperWalls | None = None) -> tuple[str, ...]:
    """BibTeX made from the paper's ``.bbl`` files when it has no ``.bib`` (written under OUT,
    never into the paper's folder); ``walls``: only those inside the paper, within its budget."""
    p = Path(paper.path)
    limit = walls.budget.files + 1 if walls is not None else None
    if not p.is_dir() or any(itertools.islice(documents_under(str(p), (DocKind.BIB,)), limit)):
        return ()
    made = []
    bbls = []
    for seen, f in enumerate(files_under(str(p)), 1):
        if walls is not None and walls.walked_enough(seen):
            break
        if f.lower().endswith(".bbl"):
            bbls.append(Path(f))
    for i, bbl in enumerate(sorted(bbls)):
        if walls is not None and walls.refuse(str(bbl), _size(bbl)) is not None:
            continue
        text = bbl_to_bibtex(read_text(bbl))
        if text:
            target = out / paper.name / f"{i}-{bbl.stem}.bib"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            made.append(str(target))
    return tuple(made)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def likely_fabricated(entry: dict[str, Any]) -> bool:
    """A report entry whose class is ``fabricated`` (``verify/classes.verdict_class``, the
    hover's and the reports' one definition)."""
    return entry_class(entry) == FABRICATED


def paper_summary(
    paper: Paper,
    report: dict[str, Any],
    seconds: float,
    titles: dict[str, str] | None = None,
    written: dict[str, tuple[str, dict[str, str]]] | None = None,
    heading: Heading | None = None,
    fps: dict[str, str] | None = None,
) -> PaperLine:
    """The paper's line of summary.jsonl: counts by status and by class, and each finding
    with its evidence (``venue/evidence.py``), fabricated ones first."""
    entries = report.get("entries") or []
    statuses: dict[str, int] = {}
    classes = dict.fromkeys(CLASSES, 0)
    findings: list[Finding] = []
    for e in entries:
        statuses[str(e.get("status"))] = statuses.get(str(e.get("status")), 0) + 1
        klass = entry_class(e)
        if klass is None:
            continue
        classes[klass] += 1
        if klass != UNCHECKED:
            key = str(e.get("key"))
            text, fields = (written or {}).get(key, ("", {}))
            found = evidence(e, klass, fields, text, (titles or {}).get(key, ""))
            if fps and key in fps:
                found["fp"] = fps[key]  # what a chair's cleared file names it by
            findings.append(found)
    findings.sort(key=lambda f: f["class"] != FABRICATED)
    retracted = retractions(report)
    for t in retracted:
        if fps and str(t.get("key")) in fps:
            t["fp"] = fps[str(t.get("key"))]
    classes[RETRACTED] = len(retracted)
    not_read = [
        str(d.get("message")) for d in report.get("diagnostics") or [] if d.get("code") == Code.PDF_NOT_READ
    ]
    # references a PDF's reader could not read: counted apart (a PDF mostly so is PDF_NOT_READ)
    unread = sum(1 for e in entries if e.get("unverified") == UNREAD)
    summary = report.get("summary") or {}
    line: PaperLine = {"paper": paper.name, "path": paper.path}
    if heading and "title" in heading:
        line["title"] = heading["title"]
        line["authors"] = heading.get("authors", "")
    if not_read:
        line["not_read"] = not_read
    line["report"] = f"papers/{paper.name}.json"
    line["entries"] = len(entries)
    # "the PDF": the references were read from the printed PDF (the folder had no source)
    line["read_from"] = "the PDF" if any(e.get("source") == "pdf" for e in entries) else "the sources"
    line["statuses"] = dict(sorted(statuses.items()))
    line["classes"] = classes
    line["likely_fabricated"] = classes[FABRICATED]
    line["unread"] = unread
    # problems by severity, for --fail-on across the venue
    line["severity"] = {k: int(summary.get(k, 0)) for k in SEVERITY_COUNT.values()}
    line["findings"] = findings
    line["retracted"] = retracted
    line["seconds"] = round(seconds, 2)
    return line


def finished(out: Path) -> set[str]:
    """The papers a previous run finished (their summary line was written)."""
    done = set()
    path = out / "summary.jsonl"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue  # a line cut by the interruption: the paper is done again
            if isinstance(item, dict) and isinstance(item.get("paper"), str):
                if (out / str(item.get("report", ""))).exists():
                    done.add(item["paper"])
    return done


@dataclass(slots=True)
class VenueRun:
    papers: int = 0
    skipped: int = 0
    references: int = 0
    distinct: int = 0
    seconds: float = 0.0
    failed_batches: int = 0
    #: what the run could not vouch for (``health.py``): the run exits non-zero
    problems: list[str] = dataclasses.field(default_factory=list)
    #: papers (this run's and earlier runs') with problems at each --fail-on level and above
    papers_with: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclass(slots=True)
class Checked:
    """One paper's outcome, plain data (it crosses process boundaries on a cluster)."""

    paper: Paper
    report: dict[str, Any]
    line: PaperLine


def _checked(paper: Paper, result: CheckResult, seconds: float, partial: list[str]) -> Checked:
    """A paper's report and its summary line."""
    report = to_json(result)
    line = paper_summary(
        paper,
        report,
        seconds,
        _titles(result),
        written_entries(result),
        paper_heading(result),
        fingerprints(result),
    )
    if partial:
        line["not_fully_checked"] = partial
    return Checked(paper, report, line)


async def check_paper(
    paper: Paper,
    pipeline: Pipeline,
    stream: VerifyStream,
    verdicts: Verdicts,
    bbl_dir: Path,
    log: Log | None = None,
) -> Checked:
    """One paper's check: its entries' verdicts read from ``verdicts`` (the venue's store),
    the others verified through ``stream`` (the venue's) and kept there."""
    result, seconds, partial = await _one(paper, bbl_dir, pipeline, stream, verdicts, log)
    return _checked(paper, result, seconds, partial)


async def check_batch(
    part: list[Paper],
    pipeline: Pipeline,
    verdicts: Verdicts,
    bbl_dir: Path,
    log: Log | None = None,
) -> tuple[list[Checked], int]:
    """Check a batch of papers (a Ray task's), all at once, their entries through one stream
    of ``pipeline`` and the store ``verdicts``: (outcomes, distinct entries verified)."""
    stream = await pipeline.stream(log=log or (lambda _m: None))
    try:
        out = await asyncio.gather(*(check_paper(p, pipeline, stream, verdicts, bbl_dir, log) for p in part))
    finally:
        await stream.aclose()
    return list(out), stream.joined


class VenueOutput:
    """OUT as the driver writes it: the papers left to check, a report, a summary line and
    a page per finished paper (appended at once: a run that stops resumes after it), the
    run's health and metadata (``run.json``), the index page as the run goes, progress."""

    def __init__(
        self,
        folder: str,
        out_dir: str,
        progress: Log | None = None,
        settings: Settings | None = None,
        cleared: str | None = None,
        requests: Callable[[], str] | None = None,
        outs: Callable[[], list[tuple[str, str]]] | None = None,
    ) -> None:
        self.out = Path(out_dir)
        self.requests = requests  # "N requests, slowest host ..." (this machine's clients)
        #: the sources not asked now, and why (Pipeline.source_outs): the report's header
        #: says each refusal once, with its fix
        self.outs = outs
        self._outs_said: dict[str, str] = {}
        (self.out / "papers").mkdir(parents=True, exist_ok=True)
        self.papers = list_papers(folder)
        done = finished(self.out)
        self.todo = [p for p in self.papers if p.name not in done]
        self.run = VenueRun(skipped=len(self.papers) - len(self.todo))
        self.progress = progress
        if self.run.skipped and progress is not None:
            progress(f"resuming: {self.run.skipped} of {len(self.papers)} papers already checked")
        self.started = time.monotonic()
        self.health = BatchHealth()
        #: papers finish in any order (those with references the sources take longest to
        #: settle, fabricated ones, last); the health watch reads them in the venue's order,
        #: or "not found jumping" at the end of every run would be the finishing order's
        self._place = {p.name: i for i, p in enumerate(self.todo)}
        self._held: dict[int, list[dict[str, Any]]] = {}
        self._next = 0
        self.meta = run_metadata(settings, len(self.papers))
        if self.run.skipped:  # the papers of the earlier runs stay in the report: so do their counts
            earlier = read_run(self.out)
            self.meta = resumed_metadata(earlier, self.meta)
            self.health.carry(earlier.get("health"))
        self.rows = {str(r["paper"]): r for r in _rows(self.out)}
        self.cleared = read_cleared(Path(cleared) if cleared else self.out / CLEARED_FILE)
        for row in self.rows.values():  # a chair's word reaches the papers already checked
            if self.cleared and any(x.get("fp") in self.cleared for x in _flagged(row)):
                apply_cleared(row, _diagnostics(self.out / str(row.get("report", ""))), self.cleared)
                write_paper_page(self.out, row)
        self._said: set[str] = set()
        self._progress_at = 0.0
        self._index_at = 0.0
        _end_cut_line(self.out / "summary.jsonl")
        self._summary = (self.out / "summary.jsonl").open("a", encoding="utf-8")
        self._write_run(final=False)

    def add(self, checked: list[Checked], distinct: int, *, total: bool = False) -> None:
        """Write finished papers; ``distinct``: entries they verified (``total``: so far in
        the run, not since the last call)."""
        run = self.run
        for c in checked:
            (self.out / "papers" / f"{c.paper.name}.json").write_text(
                json_escaped(json.dumps(c.report, indent=1, ensure_ascii=False)) + "\n", encoding="utf-8"
            )
            apply_cleared(c.line, c.report.get("diagnostics") or [], self.cleared)
            write_paper_page(self.out, c.line)
            self._summary.write(json_escaped(json.dumps(c.line, ensure_ascii=False)) + "\n")
            self._summary.flush()
            self.rows[c.paper.name] = c.line
            self._watch(c)
            run.papers += 1
            run.references += int(c.line["entries"])
        run.distinct = distinct if total else run.distinct + distinct
        for problem in self.health.problems():
            if problem not in self._said and self.progress is not None:
                self.progress(f"RUN HEALTH: {problem}")
            self._said.add(problem)
        self._write_run(final=False)
        now = time.monotonic()
        last = run.skipped + run.papers >= len(self.papers)
        if self.progress is not None and (last or now - self._progress_at >= PROGRESS_EVERY):
            self._progress_at = now
            el = now - self.started
            self.progress(
                f"{run.skipped + run.papers}/{len(self.papers)} papers, {run.references} references "
                f"({run.distinct} distinct verified) in {el:.0f} s: "
                f"{run.papers / el if el else 0:.1f} papers/s, {run.references / el if el else 0:.0f} "
                f"references/s; {self.health.local} answered locally"
                + (f"; {self.requests()}" if self.requests is not None else "")
            )

    def _watch(self, c: Checked) -> None:
        """Count a finished paper's entries in the run's health, in the venue's order."""
        entries = c.report.get("entries") or []
        place = self._place.get(c.paper.name)
        if place is None:
            self.health.add(entries)
            return
        self._held[place] = entries
        while self._next in self._held:
            self.health.add(self._held.pop(self._next))
            self._next += 1

    def batch_failed(self) -> None:
        """A batch of papers that failed as a whole (a Ray task): the run is not complete."""
        self.run.failed_batches += 1

    def _write_run(self, final: bool) -> None:
        meta = self.meta
        meta["papers_done"] = self.run.skipped + self.run.papers
        meta["health"] = self.health.to_json()
        meta["failed_batches"] = self.run.failed_batches
        for key, message in self.outs() if self.outs is not None else []:
            self._outs_said.setdefault(key, message)
        if self._outs_said:
            meta["sources_out"] = list(self._outs_said.values())
        meta["cleared"] = sum(len(r.get("cleared") or []) for r in self.rows.values())
        if final:
            meta["finished"] = utc_now()
        tmp = self.out / "run.json.tmp"
        tmp.write_text(json_escaped(json.dumps(meta, indent=1, ensure_ascii=False)) + "\n", encoding="utf-8")
        os.replace(tmp, self.out / "run.json")
        now = time.monotonic()
        if final or now - self._index_at >= INDEX_EVERY:
            write_index(self.out, list(self.rows.values()), meta)
            self._index_at = time.monotonic()

    def close(self) -> VenueRun:
        for place in sorted(self._held):  # after a paper that did not finish (a failed batch)
            self.health.add(self._held.pop(place))
        self._summary.close()
        self.run.seconds = time.monotonic() - self.started
        self._write_run(final=True)
        self.run.problems = self.health.problems()
        for row in self.rows.values():
            sev = row.get("severity") or {}
            for level, keys in FAIL_LEVELS.items():
                if any(int(sev.get(k, 0)) for k in keys):
                    self.run.papers_with[level] = self.run.papers_with.get(level, 0) + 1
        return self.run


async def run_venue(
    folder: str,
    out_dir: str,
    pipeline: Pipeline,
    *,
    log: Log | None = None,
    progress: Log | None = None,
    cleared: str | None = None,
) -> VenueRun:
    """Check every paper of ``folder`` on this machine: up to ``PAPERS_IN_FLIGHT`` at a time,
    a new one while fewer than ``ENTRIES_WAITING`` entries wait for the sources; each paper
    is written as soon as its own verdicts are in."""
    output = VenueOutput(
        folder, out_dir, progress, pipeline.settings, cleared, host_load(pipeline), pipeline.source_outs
    )
    expected = 50 * len(output.todo)  # (a guess at the references: how many lookups to remember)
    stream = await pipeline.stream(log=log or (lambda _m: None), expected=expected)
    verdicts = Verdicts(limit=MEMO_SIZE)
    room = asyncio.Semaphore(PAPERS_IN_FLIGHT)
    tasks: set[asyncio.Task[None]] = set()

    async def one(paper: Paper) -> None:
        try:
            checked = await check_paper(paper, pipeline, stream, verdicts, output.out / "bbl", log)
            output.add([checked], stream.joined, total=True)
        finally:
            room.release()

    try:
        for paper in output.todo:
            await room.acquire()
            await stream.fewer_than(ENTRIES_WAITING)  # the sources' backlog, not the venue, in memory
            task = asyncio.ensure_future(one(paper))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        await stream.aclose()
        run = output.close()
    return run


def _flagged(row: PaperLine) -> list[Finding | Retraction]:
    return [*(row.get("findings") or []), *(row.get("retracted") or [])]


def _diagnostics(path: Path) -> list[dict[str, Any]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    diags = data.get("diagnostics") if isinstance(data, dict) else None
    return diags if isinstance(diags, list) else None


def _end_cut_line(path: Path) -> None:
    """A line cut short by an interruption ends where it was cut, not in the next line."""
    if path.exists() and path.stat().st_size:
        with path.open("rb+") as fh:
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")


def _titles(result: CheckResult) -> dict[str, str]:
    out = {}
    for e in result.entries:
        f = e.fields.get("title")
        if f is not None:
            out[e.key] = " ".join(f.value.replace("{", "").replace("}", "").split())
    return out


async def _one(
    paper: Paper,
    bbl_dir: Path,
    pipeline: Pipeline,
    stream: VerifyStream,
    verdicts: Verdicts,
    log: Log | None,
) -> tuple[CheckResult, float, list[str]]:
    """One paper's check, inside its walls and budget (``workspace/walls.py``): the result,
    its seconds, and why it was not fully checked (empty: it was)."""
    t0 = time.monotonic()
    settings = pipeline.settings
    venue = os.path.dirname(paper.path)
    walls = walls_for(paper.path, venue, budget_of(settings), settings.extra_bibliographies)
    if isinstance(walls, str):  # a link out of the venue: nothing of it is read
        if log is not None:
            log(f"{paper.name}: {walls}")
        return CheckResult(DocumentStore()), time.monotonic() - t0, [walls]
    extra = _bbl_bibs(paper, bbl_dir, walls)
    walls.allowed = walls.allowed | frozenset(extra)
    mine = dataclasses.replace(settings, extra_bibliographies=settings.extra_bibliographies + extra)
    store = DocumentStore(settings.extra_cite_commands, settings.file_encoding)
    store.walls = walls
    try:
        # the authors' "checked" marks are their word, not the chair's: not honoured here
        result = await run_check(
            [paper.path],
            pipeline,
            settings=mine,
            store=store,
            verifier=stream.verify,
            verdicts=verdicts,
            marks=False,
        )
    except UsageError as exc:
        if log is not None:
            log(f"{paper.name}: {exc}")
        result = CheckResult(DocumentStore())
    partial = [f"not fully checked: {why}" for why in walls.notes]
    if partial and log is not None:
        log(f"{paper.name}: {'; '.join(partial)}")
    return result, time.monotonic() - t0, partial


def _rows(out: Path) -> list[PaperLine]:
    rows: dict[str, PaperLine] = {}
    path = out / "summary.jsonl"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and isinstance(item.get("paper"), str):
                # a paper checked again: its last line (from disk: every key is read with .get)
                rows[item["paper"]] = cast("PaperLine", item)
    return sorted(
        rows.values(),
        key=rank_key,
    )


def write_html(out: Path) -> Path:
    """summary.html from what OUT holds (``venue/page.py``)."""
    return write_index(out, _rows(out))


def check_venue(
    folder: str,
    out_dir: str,
    settings: Settings,
    *,
    log: Log | None = None,
    progress: Log | None = None,
    cleared: str | None = None,
) -> VenueRun:
    """The whole venue on this machine: one pipeline (verification cache, sources, snapshot)
    and one verification stream for every paper."""

    async def go() -> VenueRun:
        pipeline = Pipeline(settings, log or (lambda _m: None))
        try:
            return await run_venue(
                folder,
                out_dir,
                pipeline,
                log=log,
                progress=progress,
                cleared=cleared,
            )
        finally:
            await pipeline.aclose()

    return asyncio.run(go())
