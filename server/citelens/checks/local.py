"""The local checks of one project, with no network: undefined and duplicate keys,
unparseable bibliography text, missing bibliography files, unused entries
(``UNDEFINED_CITATION``, ``DUPLICATE_KEY``, ``BIB_SYNTAX``, ``MISSING_BIBLIOGRAPHY``,
``UNUSED_ENTRY``). They read a project's analysis (``workspace/index.py``), passed in."""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol

from citelens.core.caps import capped, more_text
from citelens.core.codes import Code
from citelens.core.dockind import DocKind
from citelens.core.findings import Finding, Related, make_finding
from citelens.core.model import BibEntry, BibFile, BibProblem, Citation, Reference, SourceDocument, Span
from citelens.core.settings import Settings
from citelens.core.severity import Severity


class _Project(Protocol):
    @property
    def bib_paths(self) -> Sequence[str]: ...
    @property
    def missing(self) -> Sequence[tuple[str, Reference]]: ...  # (file, reference)


class _Definitions(Protocol):
    def duplicated(self) -> Mapping[str, list[BibEntry]]: ...


class Parsed(Protocol):
    """What the checks read of a project's analysis."""

    @property
    def project(self) -> _Project: ...
    @property
    def sources(self) -> Mapping[str, SourceDocument]: ...
    @property
    def bibs(self) -> Sequence[BibFile]: ...
    @property
    def definitions(self) -> _Definitions: ...
    @property
    def first(self) -> Mapping[str, BibEntry]: ...  # the definition BibTeX uses
    @property
    def bibitems(self) -> Collection[str]: ...
    @property
    def nocite_all(self) -> bool: ...
    @property
    def unclosed(self) -> Mapping[str, tuple[str, Span]]: ...  # key -> (.bib, span of the key)


def local_findings(out: Parsed, settings: Settings, text_of: Callable[[str], str | None]) -> list[Finding]:
    """Every local finding of a project; ``text_of`` gives a source file's text."""
    project = out.project
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
        findings += _undefined(out, settings, text_of)
    findings += _unclosed_cites(out, settings, text_of)
    findings += _duplicate_keys(out, settings)
    findings += _syntax_findings(out, settings)
    if settings.report_unused_entries and not out.nocite_all:
        findings += _unused(out, settings)
    return [f for f in findings if f is not None]


def _names(paths: Sequence[str]) -> str:
    return ", ".join(os.path.basename(p) for p in paths) or "no bibliography"


def _syntax_findings(out: Parsed, settings: Settings) -> list[Finding | None]:
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
        for problem, more in capped(bib.problems, _message):
            related: list[Related] = []
            if starts and "is not closed" in problem.message:
                unclosed = _key_after(at, bib.path, starts, problem.span.start, problem.span.end)
                related = [
                    Related(path, c.span, f"'{c.key}' is cited here (BibTeX uses this entry, with an error)")
                    for path, c in cited.get(unclosed or "", ())
                ]
            found.append(
                make_finding(
                    settings,
                    bib.path,
                    Code.BIB_SYNTAX,
                    more_text(problem.message, more),
                    problem.span,
                    related=related,
                )
            )
    return found


def _message(problem: BibProblem) -> str:
    return problem.message


def _key_after(
    at: dict[tuple[str, int], str], bib_path: str, starts: list[int], start: int, end: int
) -> str | None:
    """The unclosed key read at the head of the problem ``start``..``end`` (where
    ``unclosed_keys`` reads it: the first key at or after ``start``, within its head)."""
    i = bisect_left(starts, start)
    if i < len(starts) and starts[i] < max(end, start + 1024):
        return at[(bib_path, starts[i])]
    return None


def _undefined(out: Parsed, settings: Settings, text_of: Callable[[str], str | None]) -> list[Finding | None]:
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
            if doc.language is DocKind.LATEX:
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
    return make_finding(
        settings,
        path,
        Code.UNDEFINED_CITATION,
        f"'{phrase}' is a search phrase, not a key: pick a paper from completion",
        Span(start, end),
        data={"key": phrase, "phrase": True},
        severity=Severity.INFORMATION,
    )


#: The characters of an unclosed citation read for the phrase typed in it.
_PHRASE_CHARS = 400


def _unclosed_kind(_span: Span) -> str:
    """Every unclosed citation is of one kind (capped together)."""
    return "unclosed citation"


def _unclosed_cites(
    out: Parsed, settings: Settings, text_of: Callable[[str], str | None]
) -> list[Finding | None]:
    """An information-level finding on a citation command whose ``{`` is never closed
    (``\\cite{attention is all you need`` at the end of a line): no key is read from it,
    so nothing else would be said (Neovim, whose completion waits for <C-x><C-o>, showed
    nothing at all)."""
    found: list[Finding | None] = []
    for path, doc in out.sources.items():
        source = (text_of(path) or "") if doc.unclosed_cites else ""
        for span, more in capped(doc.unclosed_cites, _unclosed_kind):
            # what was typed, up to a title's length (a line may hold 80,000 unclosed cites)
            text = source[span.start : min(span.end, span.start + _PHRASE_CHARS)]
            command, _, typed = text.partition("{")
            phrase = " ".join(typed.split())
            what = f"; to cite '{phrase}', pick a paper from completion (<C-x><C-o> in Neovim)"
            message = f"{command.strip()}{{ is not closed: end the keys with }}{what if phrase else ''}"
            found.append(
                make_finding(
                    settings,
                    path,
                    Code.UNDEFINED_CITATION,
                    more_text(message, more),
                    span,
                    data={"unclosed": True, "phrase": phrase},
                    severity=Severity.INFORMATION,
                )
            )
    return found


def _duplicate_keys(out: Parsed, settings: Settings) -> list[Finding | None]:
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


def _unused(out: Parsed, settings: Settings) -> list[Finding | None]:
    cited = {c.key for d in out.sources.values() for c in d.citations}
    return [
        make_finding(
            settings, entry.path, Code.UNUSED_ENTRY, f"Entry '{key}' is never cited", entry.key_span, key=key
        )
        for key, entry in out.first.items()
        if key not in cited
    ]
