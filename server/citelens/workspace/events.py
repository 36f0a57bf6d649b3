"""What can happen to the editor's engine: a closed set of events, each a frozen dataclass.

The engine takes them through one :meth:`Engine.apply <citelens.workspace.engine.Engine.apply>`
and answers each with :class:`~citelens.workspace.changes.Changes` (what to send, what to
run, when to retry); the language server is an adapter that turns LSP messages, its timers
and its background run into events and renders the changes. Grouped by what they touch:

* the documents (:data:`DocumentEvent`): opened, changed, saved, closed, and "the edits
  gathered" (a burst of keystrokes ended, or a request wants the latest text);
* the workspace (:data:`WorkspaceEvent`): settings, workspace folders, files on disk;
* verification (:data:`VerificationEvent`): a verdict settled (streamed as it is decided),
  a run ended (finished, cancelled, failed), the retry of an outage is due, "verify now",
  the cache cleared;
* the editor's own (:data:`EditorEvent`): background results are due for a report, papers
  offered in completion, a paper's entry added.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from citelens.verify.status import Verification
from citelens.workspace.changes import Edit

# --------------------------------------------------------------------------- documents


@dataclass(frozen=True, slots=True)
class Opened:
    """``didOpen``: analysed now (its project found again), verified without the debounce."""

    edit: Edit


@dataclass(frozen=True, slots=True)
class Changed:
    """``didChange``: the store has the text at once; the analysis waits for :class:`Gathered`."""

    edit: Edit


@dataclass(frozen=True, slots=True)
class Saved:
    """``didSave``: analysed now (its project found again), verified without the debounce."""

    path: str


@dataclass(frozen=True, slots=True)
class Closed:
    """``didClose``: the file on disk counts again."""

    path: str


@dataclass(frozen=True, slots=True)
class Gathered:
    """The edits that arrived together are analysed once (a burst ended, or a request wants
    the latest text)."""


# --------------------------------------------------------------------------- workspace


@dataclass(frozen=True, slots=True)
class SettingsChanged:
    """The editor's ``citelens`` settings (initialize, ``didChangeConfiguration``)."""

    values: Mapping[str, Any] | None


@dataclass(frozen=True, slots=True)
class FoldersChanged:
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FilesChanged:
    """Files changed on disk (watched files; a .bib an export rewrote). ``verify_now``:
    check what changed without the debounce, even if no analysed project uses them."""

    paths: tuple[str, ...]
    verify_now: bool = False


# --------------------------------------------------------------------------- verification


class Outcome(StrEnum):
    """How a verification run ended."""

    FINISHED = "finished"
    CANCELLED = "cancelled"  # superseded (an edit, new settings) or cancelled by the user
    STOPPED = "stopped"  # the server shuts down
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class VerdictSettled:
    """A run decided one entry (streamed: kept at once, so a cancelled run keeps what it
    reached)."""

    run: int
    verdict: Verification


@dataclass(frozen=True, slots=True)
class RunEnded:
    """A run ended; ``verdicts``: its verdicts by entry key when it finished."""

    run: int
    outcome: Outcome
    verdicts: Mapping[str, Verification] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RetryDue:
    """The time the engine named for entries an outage left UNVERIFIED has come."""

    hashes: frozenset[str]


@dataclass(frozen=True, slots=True)
class VerifyNow:
    """``citelens.verifyNow``: every verdict forgotten, every entry checked again now."""


@dataclass(frozen=True, slots=True)
class CacheCleared:
    """``citelens.clearCache``: the answers cached on disk and every verdict forgotten."""


# --------------------------------------------------------------------------- the editor's


@dataclass(frozen=True, slots=True)
class ReportDue:
    """Background results (verdicts, claim checks) are to be reported; ``every``: report
    every file again (the client's position encoding changed)."""

    every: bool = False


@dataclass(frozen=True, slots=True)
class PapersOffered:
    """Completion offered papers in ``doc``: (their new key, the ``citelens.addPaper``
    arguments). An offered key typed in and undefined gets its entry all the same."""

    doc: str
    offers: tuple[tuple[str, dict[str, Any]], ...]


@dataclass(frozen=True, slots=True)
class PaperAdded:
    """A paper's entry was added to ``bib`` under ``key`` (completion offers it first)."""

    bib: str
    key: str


DocumentEvent = Opened | Changed | Saved | Closed | Gathered
WorkspaceEvent = SettingsChanged | FoldersChanged | FilesChanged
VerificationEvent = VerdictSettled | RunEnded | RetryDue | VerifyNow | CacheCleared
EditorEvent = ReportDue | PapersOffered | PaperAdded
#: Everything the engine takes.
Event = DocumentEvent | WorkspaceEvent | VerificationEvent | EditorEvent
