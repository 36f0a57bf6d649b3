"""Local checks of one project, with no network: undefined and duplicate keys,
unparseable bibliography text, missing bibliography files, unused entries."""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Callable, ItemsView, Iterator, Mapping, ValuesView
from dataclasses import dataclass, field

from citelens.core.codes import Code
from citelens.core.findings import Finding, Related, Severity, make_finding
from citelens.core.model import BibEntry, BibFile, Citation, SourceDocument, Span
from citelens.core.settings import Settings
from citelens.documents.bibtex.parse import key_table, unclosed_keys
from citelens.workspace.project import Project
from citelens.workspace.store import DocumentStore


class Definitions(Mapping[str, list[BibEntry]]):
    """Key -> every definition of it, in file order (the first is the one BibTeX uses).

    Built from the first definitions and the keys defined again, so 68,000 keys need no
    list each; a lookup returns a new list."""

    __slots__ = ("_first", "_more")

    def __init__(
        self, first: dict[str, BibEntry] | None = None, more: dict[str, list[BibEntry]] | None = None
    ) -> None:
        self._first = first if first is not None else {}
        self._more = more if more is not None else {}

    def __getitem__(self, key: str) -> list[BibEntry]:
        defs = self._more.get(key)
        return list(defs) if defs is not None else [self._first[key]]

    def __contains__(self, key: object) -> bool:
        return key in self._first

    def __iter__(self) -> Iterator[str]:
        return iter(self._first)

    def __len__(self) -> int:
        return len(self._first)

    def items(self) -> ItemsView[str, list[BibEntry]]:
        return _DefinitionItems(self)

    def values(self) -> ValuesView[list[BibEntry]]:
        return _DefinitionValues(self)

    def duplicated(self) -> dict[str, list[BibEntry]]:
        """The keys defined more than once, in the order of their first definitions."""
        return self._more


class _DefinitionItems(ItemsView[str, list[BibEntry]]):
    _mapping: Definitions

    def __iter__(self) -> Iterator[tuple[str, list[BibEntry]]]:
        more = self._mapping._more
        if not more:  # one list per key, no lookup per key (68,000 keys on each keystroke)
            return ((k, [e]) for k, e in self._mapping._first.items())
        return ((k, list(more[k]) if k in more else [e]) for k, e in self._mapping._first.items())


class _DefinitionValues(ValuesView[list[BibEntry]]):
    _mapping: Definitions

    def __iter__(self) -> Iterator[list[BibEntry]]:
        return (defs for _k, defs in _DefinitionItems(self._mapping))


@dataclass(slots=True)
class Analysis:
    project: Project
    sources: dict[str, SourceDocument] = field(default_factory=dict)
    bibs: list[BibFile] = field(default_factory=list)
    definitions: Definitions = field(default_factory=Definitions)
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


def _syntax_findings(out: Analysis, settings: Settings) -> list[Finding | None]:
    """BIB_SYNTAX for every problem of the bibliographies; an entry that is not closed names
    the citations of its key as related places (BibTeX still uses the entry: the key is not
    undefined, the missing brace is the error)."""
    cited: dict[str, list[tuple[str, Citation]]] = {}
    if out.unclosed:
        for path, doc in out.sources.items():
            for c in doc.citations:
                if c.key in out.unclosed and c.key not in out.first:
                    cited.setdefault(c.key, []).append((path, c))
    at: dict[tuple[str, int], str] = {}  # (.bib, start of its problem) -> the unclosed key
    for key, (bib_path, key_span) in out.unclosed.items():
        at[(bib_path, key_span.start)] = key
    found: list[Finding | None] = []
    for bib in out.bibs:
        starts = sorted(s for (b, s) in at if b == bib.path) if at else []
        for problem in bib.problems:
            related: list[Related] = []
            if starts and "is not closed" in problem.message:
                unclosed = _key_after(at, bib.path, starts, problem.span.start, problem.span.end)
                related = [
                    Related(path, c.span, f"'{c.key}' is cited here (BibTeX uses this entry, with an error)")
                    for path, c in cited.get(unclosed or "", ())
                ]
            found.append(
                make_finding(
                    settings, bib.path, Code.BIB_SYNTAX, problem.message, problem.span, related=related
                )
            )
    return found


def _key_after(
    at: dict[tuple[str, int], str], bib_path: str, starts: list[int], start: int, end: int
) -> str | None:
    """The unclosed key read at the head of the problem ``start``..``end`` (where
    ``unclosed_keys`` reads it: the first key at or after ``start``, within its head)."""
    i = bisect_left(starts, start)
    if i < len(starts) and starts[i] < max(end, start + 1024):
        return at[(bib_path, starts[i])]
    return None


def analyze(store: DocumentStore, project: Project, settings: Settings) -> Analysis:
    """Parse what the project needs and run the local checks."""
    out = Analysis(project)
    _read_sources(store, project, out)
    _read_bibs(store, project, out)
    findings: list[Finding | None] = []
    for path, ref in project.missing:
        findings.append(
            make_finding(
                settings,
                path,
                Code.MISSING_BIBLIOGRAPHY,
                f"Bibliography file '{ref.target}' not found",
                ref.span,
                data={"target": ref.target},
            )
        )
    if not project.missing and (bool(project.bib_paths) or bool(out.bibitems)):
        findings += _undefined(out, settings, store.text)
    findings += _duplicate_keys(out, settings)
    findings += _syntax_findings(out, settings)
    if settings.report_unused_entries and not out.nocite_all:
        findings += _unused(out, settings)
    out.findings = [f for f in findings if f is not None]
    return out


def _read_sources(store: DocumentStore, project: Project, out: Analysis) -> None:
    for path in project.files:
        doc = store.source(path)
        if doc is not None:
            out.sources[path] = doc
            out.bibitems.update(doc.bibitems)
            out.nocite_all |= doc.nocite_all


def _read_bibs(store: DocumentStore, project: Project, out: Analysis) -> None:
    for bib_path in project.bib_paths:
        bib = store.bib(bib_path)
        if bib is None:
            continue
        out.bibs.append(bib)
        if bib.problems:
            text = store.raw_text(bib_path) or ""
            for key, span in unclosed_keys(bib, text).items():
                out.unclosed.setdefault(key, (bib_path, span))
    first, more = key_table(out.bibs)
    out.first = first
    out.definitions = Definitions(first, more)


def _undefined(
    out: Analysis, settings: Settings, text_of: Callable[[str], str | None]
) -> list[Finding | None]:
    where = _names(out.project.bib_paths)
    found: list[Finding | None] = []
    for path, doc in out.sources.items():
        cits = doc.citations
        text: str | None = None
        i = 0
        while i < len(cits):
            c = cits[i]
            if c.key in out.first or c.key in out.bibitems or c.key in out.unclosed:
                i += 1
                continue  # an unclosed entry's key: BIB_SYNTAX at the entry names the citation
            # keys have no spaces: undefined words of one \cite{} with only spaces between
            # them are a phrase being typed (a title to search), one hint, not an error a word
            j = i
            if doc.language == "latex":
                while j + 1 < len(cits) and cits[j + 1].command_span == c.command_span:
                    nxt = cits[j + 1]
                    if nxt.key in out.first or nxt.key in out.bibitems or nxt.key in out.unclosed:
                        break
                    if text is None:
                        text = text_of(path) or ""
                    gap = text[cits[j].span.end : nxt.span.start]
                    if not gap or gap.strip():
                        break
                    j += 1
            if j > i:
                found.append(_phrase_hint(settings, path, text or "", cits[i].span.start, cits[j].span.end))
                i = j + 1
                continue
            found.append(
                make_finding(
                    settings,
                    path,
                    Code.UNDEFINED_CITATION,
                    f"Citation key '{c.key}' is not defined in {where}",
                    c.span,
                    key=c.key,
                    data={"key": c.key},
                )
            )
            i += 1
    return found


def _phrase_hint(settings: Settings, path: str, text: str, start: int, end: int) -> Finding | None:
    """One information-level finding for a search phrase typed in a citation."""
    phrase = " ".join(text[start:end].split())
    finding = make_finding(
        settings,
        path,
        Code.UNDEFINED_CITATION,
        f"'{phrase}' is a search phrase, not a key: pick a paper from completion",
        Span(start, end),
        data={"key": phrase, "phrase": True},
    )
    if finding is not None:
        finding.severity = Severity.INFORMATION
    return finding


def _duplicate_keys(out: Analysis, settings: Settings) -> list[Finding | None]:
    found: list[Finding | None] = []
    for key, defs in out.definitions.duplicated().items():
        for i, entry in enumerate(defs):
            others = [d for j, d in enumerate(defs) if j != i]
            related = [Related(d.path, d.key_span, f"'{key}' is also defined here") for d in others]
            first = "this definition is used" if i == 0 else "BibTeX uses the first definition"
            found.append(
                make_finding(
                    settings,
                    entry.path,
                    Code.DUPLICATE_KEY,
                    f"Key '{key}' is defined {len(defs)} times ({first})",
                    entry.key_span,
                    key=key,
                    related=related,
                    data={"key": key, "index": i},
                )
            )
    return found


def _unused(out: Analysis, settings: Settings) -> list[Finding | None]:
    cited = {c.key for d in out.sources.values() for c in d.citations}
    return [
        make_finding(
            settings, entry.path, Code.UNUSED_ENTRY, f"Entry '{key}' is never cited", entry.key_span, key=key
        )
        for key, entry in out.first.items()
        if key not in cited
    ]
