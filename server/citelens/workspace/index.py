"""The local analysis of one project, with no network: its sources and bibliographies
parsed, every key's definitions, the keys of unclosed entries; the local checks on it are
:mod:`citelens.checks.local`."""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, ValuesView
from dataclasses import dataclass, field

from citelens.checks.local import local_findings
from citelens.core.findings import Finding
from citelens.core.model import BibEntry, BibFile, Citation, SourceDocument, Span
from citelens.core.settings import Settings
from citelens.documents.bibtex.keytable import key_table
from citelens.documents.bibtex.parse import unclosed_keys
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


def analyze(store: DocumentStore, project: Project, settings: Settings) -> Analysis:
    """Parse what the project needs and run the local checks (:mod:`citelens.checks.local`)."""
    out = Analysis(project)
    _read_sources(store, project, out)
    _read_bibs(store, project, out)
    out.findings = local_findings(out, settings, store.text)
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
