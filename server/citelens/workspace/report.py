"""Output formats of ``citelens check``: text, JSON (version 2) and SARIF 2.1.0.

Each problem is one item, at one place, with its other places as related locations
(``workspace/problems.py``). The JSON shape is a contract that later versions extend::

    {"version": 2,
     "tool": {"name", "version"},
     "entries": [{"key", "file", "line", "type", "status", ...}],
     "diagnostics": [{"file", "range": {"start": {"line", "character"}, "end": {...}},
                      "severity", "code", "message", "key", "related": [{"file", "range",
                      "message"}]}],
     "summary": {...}}

One rule per format for places:

* JSON: every ``line`` and ``character`` is 0-based (LSP positions, characters in UTF-16
  code units), in ``diagnostics[].range``, ``related[].range`` and ``entries[].line`` alike
  (version 1 had a 1-based ``entries[].line``);
* text and SARIF: 1-based lines and columns, as editors and compilers print them (text
  columns count characters, SARIF columns UTF-16 code units: ``columnKind``).

JSON and SARIF leave out empty and default fields (no ``"key": null``, no empty lists, a
SARIF ``endLine`` equal to ``startLine``); an entry's audit trail has each step once, and
the lookups an offline run could not make ("offline: not in the cache") are counted once in
``summary.offline_lookups`` instead of repeated on every entry. Both are written item by item
(:func:`write`), never built as one string.
"""

from __future__ import annotations

import bisect
import functools
import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Any, TextIO

from citelens import __version__
from citelens.core.codes import VERDICT_CODES
from citelens.core.findings import Finding, Related, code_name, code_url
from citelens.core.model import BibEntry
from citelens.core.severity import Severity
from citelens.core.text import LineIndex, json_escaped, printable
from citelens.documents.pdf.hyphens import one_reading
from citelens.documents.pdf.read import is_pdf
from citelens.verify.verdict import offline_summary
from citelens.workspace.check import CheckResult
from citelens.workspace.store import DocumentStore

JSON_VERSION = 2
#: The severities ``--fail-on LEVEL`` fails on.
FAIL_ON = {
    s.value: frozenset(t for t in Severity if t.rank >= s.rank) for s in Severity if s is not Severity.HINT
}
#: The name of each severity's count in a summary (``to_json``'s and a venue paper's line).
SEVERITY_COUNT = {s.value: s.value if s is Severity.INFORMATION else f"{s.value}s" for s in Severity}
OFFLINE_MISS = "offline: not in the cache"
_RELATED_SHOWN = 5  # text: related places on the indented line before "and N more"
_HINT_GROUPS = 3  # text: hint lines summed by code and message before "N other hints"

_IndexOf = Callable[[str], LineIndex | None]
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _dumps(item: Any) -> str:
    """JSON text of ``item`` with the control characters the encoder leaves raw (U+009B,
    U+202E) escaped, for the JSON and SARIF reports alike."""
    return json_escaped(_encode(item))


def _indexes(store: DocumentStore) -> _IndexOf:
    """``store.line_index`` for one report: asked once per file, not once per finding
    (each asks the disk whether the file changed)."""
    return functools.cache(store.line_index)


def _printed(result: CheckResult, path: str, offset: int) -> dict[str, Any]:
    """Where a reference read from a PDF was printed: ``{"source": "pdf", "page", "label",
    "raw"}`` (a PDF has no lines a reader could open); {} for a source file."""
    source = result.printed.get(path)
    if source is None:
        return {"source": "pdf"} if is_pdf(path) else {}
    ref = source.at(offset)
    if ref is None:
        return {"source": "pdf"}
    return {"source": "pdf", "page": ref.page, "label": ref.label, "raw": one_reading(ref.text)}


_NOWHERE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}


def _range(index_of: _IndexOf, path: str, span: Any) -> dict[str, dict[str, int]]:
    if is_pdf(path):  # a PDF's place is its page (``page``), not a line of its text
        return {"start": dict(_NOWHERE["start"]), "end": dict(_NOWHERE["end"])}
    index = index_of(path)
    if index is None:
        return {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    s, e = index.range(span)
    return {
        "start": {"line": s.line, "character": s.character},
        "end": {"line": e.line, "character": e.character},
    }


def _rels() -> Callable[[str], str]:
    """``_rel`` for one report: the working directory asked once, not once per item."""
    cwd = os.getcwd()
    return lambda path: _rel_to(path, cwd)


@lru_cache(maxsize=1024)  # a few files, hundreds of thousands of findings
def _rel_to(path: str, cwd: str) -> str:
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if rel.startswith("../../..") else rel


def fails(result: CheckResult, fail_on: str = Severity.ERROR.value) -> bool:
    """Whether ``citelens check --fail-on LEVEL`` exits 1: a problem at LEVEL or above."""
    levels = FAIL_ON[fail_on]
    return any(f.severity in levels for f in result.findings)


def has_errors(result: CheckResult) -> bool:
    return fails(result, Severity.ERROR.value)


def _notice(f: Finding) -> dict[str, Any]:
    """The retraction / concern / correction notice of a finding (``notice``, ``noticeUrl``)."""
    notice = f.data.get("notice")
    if not isinstance(notice, dict):
        return {}
    return {"notice": dict(notice), "noticeUrl": f.data.get("notice_url")}


# ------------------------------------------------------------------------------- JSON


class _Offline:
    """The lookups offline runs could not make, counted by method (not repeated per entry)."""

    def __init__(self) -> None:
        self.lookups: Counter[str] = Counter()


def _audit(steps: Iterable[Any], offline: _Offline) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str, str, bool]] = set()
    missed: set[str] = set()
    for a in steps:
        if a.detail == OFFLINE_MISS:
            missed.add(a.method)
            continue
        k = (a.method, a.source, a.outcome, a.detail, a.cached)
        if k in seen:
            continue
        seen.add(k)
        out.append({k2: v for k2, v in a.to_json().items() if v})
    offline.lookups.update(missed)
    return out


def _entry_items(result: CheckResult, offline: _Offline, statuses: Counter[str]) -> Iterator[dict[str, Any]]:
    """Each entry with its verdict: the fields that are not empty or at their default
    (``None``, ``False``, ``""``, ``[]``, ``{}``, ``0``), the audit trail apart."""
    index_of = _indexes(result.store)
    rel = _rels()
    for e in result.entries:
        pdf = is_pdf(e.path)
        index = None if pdf else index_of(e.path)
        item: dict[str, Any] = {
            "key": e.key,
            "file": rel(e.path),
            "line": index.line_of(e.span.start) if index else 0,
            "type": e.entry_type,
            "status": "UNCHECKED",
        }
        if pdf:
            item.update(_printed(result, e.path, e.span.start))
        v = result.verdict(e)
        if v is not None and hasattr(v, "compact_json"):
            item.update(v.compact_json())
            audit = _audit(v.audit, offline)
            if audit:
                item["audit"] = audit
        statuses[item["status"]] += 1
        yield item


def _related_json(index_of: _IndexOf, rel: Callable[[str], str], r: Related) -> dict[str, Any]:
    return {"file": rel(r.path), "range": _range(index_of, r.path, r.span), "message": r.message}


def _diagnostic_items(result: CheckResult) -> Iterator[dict[str, Any]]:
    index_of = _indexes(result.store)
    rel = _rels()
    for f in result.findings:
        item: dict[str, Any] = {
            "file": rel(f.path),
            "range": _range(index_of, f.path, f.span),
            "severity": f.severity.value,
            "code": f.code,
            "message": f.message,
        }
        if f.key is not None:
            item["key"] = f.key
        if is_pdf(f.path):
            item.update({k: v for k, v in _printed(result, f.path, f.span.start).items() if k != "raw"})
        item.update(_class(f))
        if f.related:
            item["related"] = [_related_json(index_of, rel, r) for r in f.related]
        item.update(_notice(f))
        yield item


def _count(n: int, one: str, many: str = "") -> str:
    """``1 error``, ``2 errors``: a count and its noun."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def _class(f: Finding) -> dict[str, Any]:
    """``{"class": "fabricated" | "wrong-metadata"}`` of a verification finding, else {}."""
    klass = f.data.get("class")
    return {"class": klass} if isinstance(klass, str) and klass else {}


def _reported_entries(result: CheckResult) -> set[tuple[str, str]]:
    """The entries (.bib, key) whose verdict is reported: a finding of their verdict's code
    is shown (an entry marked as checked, or whose code is off, is not counted in any class)."""
    out = set()
    for f in result.findings:
        if f.key is not None and f.code in VERDICT_CODES:
            bib = f.data.get("bib")
            out.add((bib if isinstance(bib, str) else f.path, f.key))
    return out


def _summary(result: CheckResult, statuses: Counter[str], offline: _Offline | None = None) -> dict[str, Any]:
    """Counts of problems (each once, whatever its number of places)."""
    by_sev = Counter(f.severity.value for f in result.findings)
    by_code = Counter(f.code for f in result.findings)
    # entries, not findings: one fabricated entry may have three wrong fields; and only the
    # entries the report shows a finding of (not one the writer marked as checked)
    shown = _reported_entries(result)
    by_class = Counter(
        k for place, v in result.verifications.items() if place in shown and (k := getattr(v, "klass", None))
    )
    out: dict[str, Any] = {
        "entries": len(result.entries),
        "citations": result.citations,
        "diagnostics": len(result.findings),
        **{name: by_sev.get(sev, 0) for sev, name in SEVERITY_COUNT.items()},
        "by_code": dict(sorted(by_code.items())),
        "by_class": dict(sorted(by_class.items())),
        "by_status": dict(sorted(statuses.items())),
    }
    if offline is not None and offline.lookups:
        out["offline_lookups"] = {"detail": OFFLINE_MISS, **dict(sorted(offline.lookups.items()))}
    return out


def to_json(result: CheckResult) -> dict[str, Any]:
    """The JSON report as one object (the ``citelens.report`` command, tests); ``write``
    streams the same items."""
    offline, statuses = _Offline(), Counter[str]()
    entries = list(_entry_items(result, offline, statuses))
    return {
        "version": JSON_VERSION,
        "tool": {"name": "citelens", "version": __version__},
        "entries": entries,
        "diagnostics": list(_diagnostic_items(result)),
        "summary": _summary(result, statuses, offline),
    }


def _write_json(result: CheckResult, out: TextIO) -> None:
    offline, statuses = _Offline(), Counter[str]()
    out.write(f'{{"version":{JSON_VERSION},"tool":{_dumps({"name": "citelens", "version": __version__})},\n')
    _write_list(out, "entries", _entry_items(result, offline, statuses))
    out.write(",\n")
    _write_list(out, "diagnostics", _diagnostic_items(result))
    out.write(f',\n"summary":{_dumps(_summary(result, statuses, offline))}}}\n')


def _write_list(out: TextIO, name: str, items: Iterable[dict[str, Any]]) -> None:
    """``"name":[`` then one item per line."""
    out.write(f'"{name}":[')
    sep = "\n"
    for item in items:
        out.write(sep)
        out.write(_dumps(item))
        sep = ",\n"
    out.write("\n]" if sep != "\n" else "]")


# ------------------------------------------------------------------------------- text


#: A printed reference's title on a text report's line: cut beyond this many characters.
_TITLE_SHOWN = 90


def _pdf_entries(result: CheckResult) -> Callable[[str, int], BibEntry | None]:
    """For one report: the entry read from a PDF that holds an offset of its text."""
    starts: dict[str, tuple[list[int], list[BibEntry]]] = {}
    for e in sorted((e for e in result.entries if e.path in result.printed), key=lambda e: e.span.start):
        at, entries = starts.setdefault(e.path, ([], []))
        at.append(e.span.start)
        entries.append(e)

    def entry(path: str, offset: int) -> BibEntry | None:
        at, entries = starts.get(path, ([], []))
        i = bisect.bisect_right(at, offset) - 1
        return entries[i] if i >= 0 else None

    return entry


def _as_printed(entry: BibEntry | None, raw: str) -> str:
    """A printed reference named as a reader finds it in the PDF: its title as read, else
    the start of the reference as printed; cut to :data:`_TITLE_SHOWN` characters."""
    title = entry.fields.get("title") if entry is not None else None
    text = " ".join((title.value if title is not None else "").split()) or " ".join(raw.split())
    if len(text) > _TITLE_SHOWN:
        text = text[: _TITLE_SHOWN - 1].rstrip() + "…"
    return f" “{text}”" if text else ""


def _place(
    index_of: _IndexOf,
    rel: Callable[[str], str],
    path: str,
    offset: int,
    result: CheckResult,
    pdf_entry: Callable[[str, int], BibEntry | None] | None = None,
) -> str:
    if is_pdf(path):
        where = _printed(result, path, offset)
        if "page" not in where:
            return rel(path)
        named = _as_printed(pdf_entry(path, offset), where["raw"]) if pdf_entry is not None else ""
        return f"{rel(path)}: page {where['page']}, {where['label']}{named}"
    index = index_of(path)
    if index is not None:
        line = index.line_of(offset)
        col = index.position(offset, "utf-32").character
    else:
        line = col = 0
    return f"{rel(path)}:{line + 1}:{col + 1}"


def _text_lines(result: CheckResult, verbose: bool) -> Iterator[str]:
    """The text report's lines, control characters escaped (``\\x1b``): a key, a file name
    or an API string never writes terminal escapes into a terminal or a CI log."""
    return map(printable, _lines(result, verbose))


def _lines(result: CheckResult, verbose: bool) -> Iterator[str]:
    index_of = _indexes(result.store)
    rel = _rels()
    pdf_entry = _pdf_entries(result) if result.printed else None
    hidden: Counter[tuple[str, str]] = Counter()
    order = sorted(result.findings, key=lambda f: (f.path, f.span.start, -f.severity.rank, f.code, f.message))
    for f in order:
        if f.severity is Severity.HINT and not verbose:
            hidden[(f.code, f.message)] += 1
            continue
        place = _place(index_of, rel, f.path, f.span.start, result, pdf_entry)
        yield f"{place}: {f.severity.value} {f.code}: {f.message}"
        if f.related:
            shown = [
                f"{_place(index_of, rel, r.path, r.span.start, result, pdf_entry)} ({r.message})"
                for r in f.related[:_RELATED_SHOWN]
            ]
            more = len(f.related) - len(shown)
            yield "    also: " + "; ".join(shown) + (f"; and {more} more" if more > 0 else "")
        klass = f.data.get("class_text")  # an entry's verdict: its class in words
        if isinstance(klass, str) and klass:
            yield f"    class: {klass}"
    groups = hidden.most_common()
    summed = [f"{n:,} {'hint' if n == 1 else 'hints'} {code}: {message}" for (code, message), n in groups]
    rest = sum(n for _, n in groups[_HINT_GROUPS:])
    summed = summed[:_HINT_GROUPS] + ([f"{rest:,} other hints"] if rest else [])
    for i, line in enumerate(summed):
        yield line + (" (--verbose lists each)" if i == len(summed) - 1 else "")
    offline = offline_summary(result.verifications.values())
    if offline:
        yield offline
    data = _summary(result, Counter())  # the text shows no statuses: no JSON of every entry
    yield (
        f"{_count(data['entries'], 'entry', 'entries')} checked: {_count(data['errors'], 'error')}, "
        f"{_count(data['warnings'], 'warning')}, {data['information']} information, "
        f"{_count(data['hints'], 'hint')}; {_count(data['citations'], 'citation')}"
    )
    if data["by_class"]:
        yield "entries by class: " + ", ".join(f"{n} {klass}" for klass, n in data["by_class"].items())


# ------------------------------------------------------------------------------- SARIF

_LEVELS = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFORMATION: "note",
    Severity.HINT: "note",
}


def _region(index_of: _IndexOf, path: str, span: Any) -> dict[str, Any]:
    r = _range(index_of, path, span)
    region = {"startLine": r["start"]["line"] + 1, "startColumn": r["start"]["character"] + 1}
    if r["end"]["line"] != r["start"]["line"]:  # SARIF: endLine defaults to startLine
        region["endLine"] = r["end"]["line"] + 1
    region["endColumn"] = r["end"]["character"] + 1
    return region


def _location(
    index_of: _IndexOf, rel: Callable[[str], str], path: str, span: Any, result: CheckResult | None = None
) -> dict[str, Any]:
    region = _region(index_of, path, span)
    if is_pdf(path) and result is not None:
        # a PDF has no lines: its region is the page (``properties.page``, SARIF's property
        # bag) with the reference as printed for a snippet
        where = _printed(result, path, span.start)
        region = {"startLine": 1}
        if "page" in where:
            region["snippet"] = {"text": where["raw"]}
            region["properties"] = {"page": where["page"], "label": where["label"], "source": "pdf"}
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": rel(path).replace(os.sep, "/")},
            "region": region,
        }
    }


def _sarif_rules(result: CheckResult) -> list[str]:
    return sorted({f.code for f in result.findings})


def _sarif_head(result: CheckResult, codes: list[str]) -> dict[str, Any]:
    rules = [
        {
            "id": c,
            "name": "".join(w[:1].upper() + w[1:] for w in code_name(c).split()),  # DOIMismatch
            "shortDescription": {"text": code_name(c)},
            "helpUri": code_url(c),
        }
        for c in codes
    ]
    return {
        "tool": {
            "driver": {
                "name": "CiteLens",
                "version": __version__,
                "informationUri": code_url("").rstrip("#"),
                "rules": rules,
            }
        },
        "columnKind": "utf16CodeUnits",
        "properties": {"entries": len(result.entries), "citations": result.citations},
    }


def _sarif_results(result: CheckResult, codes: list[str]) -> Iterator[dict[str, Any]]:
    index_of = _indexes(result.store)
    rel = _rels()
    rule_index = {c: i for i, c in enumerate(codes)}
    for f in result.findings:
        item: dict[str, Any] = {
            "ruleId": f.code,
            "ruleIndex": rule_index[f.code],
            "level": _LEVELS[f.severity],
            "message": {"text": f.message},
            "locations": [_location(index_of, rel, f.path, f.span, result)],
        }
        if f.related:
            item["relatedLocations"] = [
                {"id": i, **_location(index_of, rel, r.path, r.span, result), "message": {"text": r.message}}
                for i, r in enumerate(f.related, 1)
            ]
        extra = {**_notice(f), **_class(f)}
        if extra:
            item["properties"] = extra
        yield item


def to_sarif(result: CheckResult) -> dict[str, Any]:
    codes = _sarif_rules(result)
    run = {**_sarif_head(result, codes), "results": list(_sarif_results(result, codes))}
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}


def _write_sarif(result: CheckResult, out: TextIO) -> None:
    codes = _sarif_rules(result)
    head = _dumps(_sarif_head(result, codes))
    out.write('{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[\n')
    out.write(head[:-1] + ",\n")  # the run object, open: its results follow
    _write_list(out, "results", _sarif_results(result, codes))
    out.write("}\n]}\n")


# ------------------------------------------------------------------------------- entry points


def write(result: CheckResult, fmt: str, out: TextIO, *, verbose: bool = False) -> None:
    """The report in ``fmt`` (text, json, sarif), written to ``out`` item by item."""
    if fmt == "json":
        _write_json(result, out)
    elif fmt == "sarif":
        _write_sarif(result, out)
    else:
        for line in _text_lines(result, verbose):
            out.write(line + "\n")


def render(result: CheckResult, fmt: str, *, verbose: bool = False) -> str:
    """The report as one string (small reports; ``write`` streams)."""
    import io

    buf = io.StringIO()
    write(result, fmt, buf, verbose=verbose)
    return buf.getvalue()
