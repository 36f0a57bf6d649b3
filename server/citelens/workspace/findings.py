"""The editor's findings: every analysed project's, by source (its local checks, the
findings its verdicts give, the claim checks'), each once, the entries marked as checked
left out; and what was last reported of them, so that a report names only the files whose
findings or texts changed (:class:`~citelens.workspace.changes.Reported`).

Derived state only, kept between reports: the findings of a project's .bib while its
bibliographies and the verdicts are the same (the findings at its citations are cheap and
follow every keystroke), the duplicate pairs its entries' text gives, and the ``[checked]``
marks of each project file, read again when the file changes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from typing import Any

from citelens.checks.duplicates import Pairs, text_duplicates
from citelens.checks.verification import citation_findings, entry_level_findings
from citelens.core.findings import Finding
from citelens.core.model import EntryView
from citelens.core.settings import Settings
from citelens.verify.status import Verification
from citelens.workspace.changes import Changes, Reported
from citelens.workspace.checked import Mark, hide_marked, load_project_file, project_file
from citelens.workspace.index import Analysis
from citelens.workspace.problems import distinct
from citelens.workspace.projects import Projects
from citelens.workspace.verdicts import Verdicts

log = logging.getLogger("citelens")
#: Bibliographies larger than this have only their cited entries verified in the editor.
MAX_UNCITED = 2000


class Findings:
    """The findings of the analysed projects, and what was last reported of them."""

    def __init__(self, log_line: Callable[[str], None]) -> None:
        self.log = log_line
        #: What the last reports said, per file (a report names only the files that changed).
        self.reported = Reported()
        #: project root -> (signature, the BibFiles it was made from, its .bib's findings)
        self._entry_level: dict[str, tuple[object, tuple[Any, ...], list[Finding]]] = {}
        #: project file -> (its modification time, its [checked] marks)
        self._project_marks: dict[str, tuple[int, Mapping[str, list[Mark]]]] = {}
        #: project root -> (ids of the views, the views, the pairs their text gives)
        self._text_pairs: dict[str, tuple[tuple[int, ...], list[EntryView], Pairs]] = {}

    def forget(self) -> None:
        """The verdicts were forgotten: nothing derived from them is kept."""
        self._entry_level.clear()

    def all(
        self, projects: Projects, verdicts: Verdicts, settings: Settings, claims: list[Finding]
    ) -> list[Finding]:
        """Every finding of the analysed projects, each once (``problems.distinct``: two
        projects sharing a .bib find its problems twice), by source: local checks,
        verification, and ``claims``."""
        out: list[Finding] = []
        verify = bool(verdicts) and settings.verification_enabled
        for a in projects.analyses.values():
            out.extend(a.findings)
            if verify:
                out.extend(self._verification(projects, verdicts, settings, a))
        out.extend(claims)
        return hide_marked(
            distinct(out),
            list(projects.analyses.values()),
            projects.store.slice,
            projects.entry_view,
            self.project_marks,
        )

    def report(self, projects: Projects, findings: list[Finding]) -> Changes:
        """The findings of every file whose findings (or text) changed since the last
        report; an open document always has an entry the first time."""
        by_path: dict[str, list[Finding]] = {}
        for f in findings:
            by_path.setdefault(f.path, []).append(f)
        for path in projects.store.open_paths():  # an open document always gets an answer
            by_path.setdefault(path, [])
        return self.reported.changes(projects.store, by_path)

    def project_marks(self, analysis: Analysis) -> Mapping[str, list[Mark]]:
        """The ``[checked]`` marks of a project's file (``.citelens.toml`` or pyproject's
        ``[tool.citelens]``), read again when the file changes (by modification time)."""
        path = project_file(os.path.dirname(analysis.project.root))
        if path is None:
            return {}
        try:
            stamp = os.stat(path).st_mtime_ns
        except OSError:
            return {}
        kept = self._project_marks.get(path)
        if kept is None or kept[0] != stamp:
            loaded = load_project_file(path)
            if loaded.problem is not None:  # said once per version of the file
                self.log(loaded.problem)
            kept = self._project_marks[path] = (stamp, loaded.marks)
        return kept[1]

    def _verification(
        self, projects: Projects, verdicts: Verdicts, settings: Settings, analysis: Analysis
    ) -> list[Finding]:
        """Verification findings of one project. The .bib part (entries, duplicates) is
        kept while the bibliographies and the verdicts are unchanged; the part at the
        citations is cheap and follows every keystroke."""
        by_key: dict[str, Verification] = {}
        # In a whole library only cited entries are verified: look at those, not at 68,000.
        library = len(analysis.definitions) > MAX_UNCITED
        for key in analysis.cited_keys() if library else analysis.definitions:
            defs = analysis.definitions.get(key)
            h = projects.entry_hash(defs[0], analysis) if defs else None
            v = verdicts.of(h, key) if h else None
            if v is not None:
                by_key[key] = v
        bibs = tuple(analysis.bibs)
        sig = (verdicts.generation, settings, tuple(id(b) for b in bibs))
        cached = self._entry_level.get(analysis.project.root)
        try:
            if cached is not None and cached[0] == sig:
                entry_level = cached[2]
            else:
                entry_level = entry_level_findings(
                    bibs,
                    by_key,
                    settings,
                    lambda e: projects.entry_view(e, analysis),
                    only=set(by_key) if library else None,
                    text_pairs_of=lambda views: self._text_duplicates(analysis.project.root, views),
                )
                # keep the BibFiles alive with the signature, so their ids stay theirs
                self._entry_level[analysis.project.root] = (sig, bibs, entry_level)
            return entry_level + citation_findings(analysis.citations, analysis.bibs, by_key, settings)
        except Exception:
            log.exception("placing verification findings failed")
            return []

    def _text_duplicates(self, root: str, views: list[EntryView]) -> Pairs:
        """The duplicate pairs the entries' text gives, kept while the views are the same
        (views are kept per entry text): a new verdict does not compare the titles again."""
        ids = tuple(map(id, views))
        kept = self._text_pairs.get(root)
        if kept is not None and kept[0] == ids:
            return kept[2]
        pairs = text_duplicates(views)
        self._text_pairs[root] = (ids, views, pairs)  # the views kept: their ids stay theirs
        return pairs
