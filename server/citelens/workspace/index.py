"""Local checks of one project, with no network: undefined and duplicate keys,
unparseable bibliography text, missing bibliography files, unused entries."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from citelens.core.findings import Finding, Related, make_finding
from citelens.core.model import BibEntry, BibFile, Citation, SourceDocument, Span
from citelens.core.settings import Settings
from citelens.documents.bibtex.parse import unclosed_keys
from citelens.workspace.project import Project
from citelens.workspace.store import DocumentStore


@dataclass(slots=True)
class Analysis:
    project: Project
    sources: dict[str, SourceDocument] = field(default_factory=dict)
    bibs: list[BibFile] = field(default_factory=list)
    definitions: dict[str, list[BibEntry]] = field(default_factory=dict)
    first: dict[str, BibEntry] = field(default_factory=dict)  # the definition BibTeX uses
    bibitems: set[str] = field(default_factory=set)
    nocite_all: bool = False
    findings: list[Finding] = field(default_factory=list)
    # keys only found in an entry that is not closed: key -> (.bib path, span of the key)
    unclosed: dict[str, tuple[str, Span]] = field(default_factory=dict)

    @property
    def citations(self) -> dict[str, list[Citation]]:
        return {p: d.citations for p, d in self.sources.items()}

    def cited_keys(self) -> list[str]:
        """Cited keys in document order, each once."""
        seen: dict[str, None] = {}
        for path in self.project.files:
            doc = self.sources.get(path)
            if doc is not None:
                for c in doc.citations:
                    seen.setdefault(c.key, None)
        return list(seen)

    def entry(self, key: str) -> BibEntry | None:
        return self.first.get(key)


def _names(paths: list[str]) -> str:
    return ", ".join(os.path.basename(p) for p in paths) or "no bibliography"


def _unclosed_finding(settings: Settings, path: str, c: Citation, bib_path: str,
                      key_span: Span) -> Finding | None:
    name = os.path.basename(bib_path)
    return make_finding(
        settings, path, "UNDEFINED_CITATION",
        f"Citation key '{c.key}' is defined in {name} in an entry that is not closed "
        "(a '}' is missing); BibTeX reports an error there but still uses the entry",
        c.span, key=c.key, data={"key": c.key, "unclosed": True},
        related=[Related(bib_path, key_span, f"the entry '{c.key}' is not closed")],
    )


def analyze(store: DocumentStore, project: Project, settings: Settings) -> Analysis:
    """Parse what the project needs and run the local checks."""
    out = Analysis(project)
    for path in project.files:
        doc = store.source(path)
        if doc is not None:
            out.sources[path] = doc
            out.bibitems.update(doc.bibitems)
            out.nocite_all |= doc.nocite_all
    for bib_path in project.bib_paths:
        bib = store.bib(bib_path)
        if bib is None:
            continue
        out.bibs.append(bib)
        for entry in bib.entries:
            out.definitions.setdefault(entry.key, []).append(entry)
            out.first.setdefault(entry.key, entry)
        if bib.problems:
            text = store.text(bib_path) or ""
            for key, span in unclosed_keys(bib, text).items():
                out.unclosed.setdefault(key, (bib_path, span))
    findings: list[Finding | None] = []
    add = findings.append

    for path, ref in project.missing:
        add(make_finding(
            settings, path, "MISSING_BIBLIOGRAPHY",
            f"Bibliography file '{ref.target}' not found", ref.span, data={"target": ref.target},
        ))

    can_judge = not project.missing and (bool(project.bib_paths) or bool(out.bibitems))
    if can_judge:
        where = _names(project.bib_paths)
        for path, doc in out.sources.items():
            for c in doc.citations:
                if c.key in out.definitions or c.key in out.bibitems:
                    continue
                if c.key in out.unclosed:
                    add(_unclosed_finding(settings, path, c, *out.unclosed[c.key]))
                    continue
                add(make_finding(
                    settings, path, "UNDEFINED_CITATION",
                    f"Citation key '{c.key}' is not defined in {where}", c.span, key=c.key,
                    data={"key": c.key},
                ))

    for key, defs in out.definitions.items():
        if len(defs) < 2:
            continue
        for i, entry in enumerate(defs):
            others = [d for j, d in enumerate(defs) if j != i]
            related = [
                Related(d.path, d.key_span, f"'{key}' is also defined here") for d in others
            ]
            first = "this definition is used" if i == 0 else "BibTeX uses the first definition"
            add(make_finding(
                settings, entry.path, "DUPLICATE_KEY",
                f"Key '{key}' is defined {len(defs)} times ({first})", entry.key_span,
                key=key, related=related, data={"key": key, "index": i},
            ))

    for bib in out.bibs:
        for problem in bib.problems:
            add(make_finding(settings, bib.path, "BIB_SYNTAX", problem.message, problem.span))

    if settings.report_unused_entries and not out.nocite_all:
        cited = {c.key for d in out.sources.values() for c in d.citations}
        for key, defs in out.definitions.items():
            if key not in cited:
                add(make_finding(
                    settings, defs[0].path, "UNUSED_ENTRY", f"Entry '{key}' is never cited",
                    defs[0].key_span, key=key,
                ))
    out.findings = [f for f in findings if f is not None]
    return out
