"""The venue's records: a paper's line of summary.jsonl and what it holds, typed.

They stay plain JSON objects (they cross processes on a cluster, are appended to
summary.jsonl and read back when a run resumes, lines written by older versions included),
so each is a ``TypedDict``: mypy checks every key the venue writes and reads, and a reader
still meets what a line from disk holds (every key may be missing from an older line:
read them with ``.get``)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class Said(TypedDict):
    """A source asked about a reference, and its best answer ("found it", "was down")."""

    source: str
    said: str


class Record(TypedDict):
    """A paper a source holds, as a finding shows it (the match, the closest record)."""

    title: str
    authors: str
    year: Any
    venue: str
    doi: str
    source: str
    similarity: NotRequired[float]


#: ``class`` is a keyword: a finding's class is declared in the functional form.
_Classed = TypedDict("_Classed", {"class": str})


class Finding(_Classed):
    """One finding of a paper (venue/evidence.py): its class (fabricated, wrong-metadata,
    unchecked), what was written, what each source said, the paper found or the closest one."""

    key: Any
    status: Any
    title: str
    summary: Any
    file: Any
    line: int | None
    written: str
    fields: dict[str, str]
    sources: list[Said]
    discrepancies: list[str]
    page: NotRequired[Any]
    source: NotRequired[str]
    match: NotRequired[Record]
    closest: NotRequired[Record]
    fp: NotRequired[str]


class Retraction(TypedDict):
    """A cited paper a notice retracts: its key, the notice, where it is cited."""

    key: Any
    message: Any
    line: int
    file: Any
    url: Any
    fp: NotRequired[str]


class Cleared(TypedDict):
    """A reference a chair's cleared file names, taken out of the paper's line."""

    key: Any
    title: Any
    fp: Any


class Heading(TypedDict, total=False):
    """A paper's own title and authors, as its sources give them (evidence.paper_heading)."""

    title: str
    authors: str


class PaperLine(TypedDict, total=False):
    """A paper's line of summary.jsonl (run.paper_summary): what the index page, the paper's
    page, the cleared file and ``--fail-on`` read."""

    paper: str
    path: str
    title: str
    authors: str
    not_read: list[str]
    report: str
    entries: int
    read_from: str
    statuses: dict[str, int]
    classes: dict[str, int]
    likely_fabricated: int
    unread: int
    severity: dict[str, int]
    findings: list[Finding]
    retracted: list[Retraction]
    cleared: list[Cleared]
    not_fully_checked: list[str]
    seconds: float

