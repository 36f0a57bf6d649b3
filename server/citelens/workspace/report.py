"""Output formats of ``citelens check``: text, JSON (version 1) and SARIF 2.1.0.

The JSON shape is a contract that later versions extend and never break::

    {"version": 1,
     "entries": [{"key", "file", "line", "status", ...}],
     "diagnostics": [{"file", "range": {"start": {"line", "character"}, "end": {...}},
                      "severity", "code", "message", "key"}],
     "summary": {...}}

Ranges are LSP-style (0-based lines, UTF-16 characters); ``entries[].line`` and the
text format are 1-based, as editors and compilers print them.
"""

from __future__ import annotations

import functools
import json
import os
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from citelens import __version__
from citelens.core.findings import Finding, Severity, code_url
from citelens.core.text import LineIndex
from citelens.verify.run import offline_summary
from citelens.workspace.check import CheckResult
from citelens.workspace.store import DocumentStore

_SEV_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFORMATION: 2, Severity.HINT: 3}


_IndexOf = Callable[[str], LineIndex | None]


def _indexes(store: DocumentStore) -> _IndexOf:
    """``store.line_index`` for one report: asked once per file, not once per finding
    (each asks the disk whether the file changed)."""
    return functools.cache(store.line_index)


def _range(index_of: _IndexOf, f: Finding) -> dict[str, dict[str, int]]:
    index = index_of(f.path)
    if index is None:
        return {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    s, e = index.range(f.span)
    return {
        "start": {"line": s.line, "character": s.character},
        "end": {"line": e.line, "character": e.character},
    }


def _rel(path: str) -> str:
    return _rel_to(path, os.getcwd())


@lru_cache(maxsize=1024)  # a few files, hundreds of thousands of findings
def _rel_to(path: str, cwd: str) -> str:
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if rel.startswith("../../..") else rel


def has_errors(result: CheckResult) -> bool:
    return any(f.severity is Severity.ERROR for f in result.findings)


def _notice(f: Finding) -> dict[str, Any]:
    """The retraction / concern / correction notice of a finding (``notice``, ``noticeUrl``)."""
    notice = f.data.get("notice")
    if not isinstance(notice, dict):
        return {}
    return {"notice": dict(notice), "noticeUrl": f.data.get("notice_url")}


def to_json(result: CheckResult) -> dict[str, Any]:
    index_of = _indexes(result.store)
    entries: list[dict[str, Any]] = []
    for e in result.entries:
        index = index_of(e.path)
        line = index.line_of(e.span.start) + 1 if index else 0
        item: dict[str, Any] = {
            "key": e.key,
            "file": _rel(e.path),
            "line": line,
            "type": e.entry_type,
            "status": "UNCHECKED",
        }
        v = result.verifications.get(e.key)
        if v is not None and hasattr(v, "to_json"):
            data = v.to_json()
            data.pop("key", None)
            item.update(data)
        entries.append(item)
    diagnostics = [
        {
            "file": _rel(f.path),
            "range": _range(index_of, f),
            "severity": f.severity.value,
            "code": f.code,
            "message": f.message,
            "key": f.key,
            "related": [
                {
                    "file": _rel(r.path),
                    "message": r.message,
                    "range": _range(index_of, Finding(r.path, r.span, f.code, r.message, f.severity)),
                }
                for r in f.related
            ],
            **_notice(f),
        }
        for f in result.findings
    ]
    statuses = Counter(str(e.get("status")) for e in entries)
    return {
        "version": 1,
        "tool": {"name": "citelens", "version": __version__},
        "entries": entries,
        "diagnostics": diagnostics,
        "summary": _summary(result, statuses),
    }


def _summary(result: CheckResult, statuses: Counter[str]) -> dict[str, Any]:
    by_sev = Counter(f.severity.value for f in result.findings)
    by_code = Counter(f.code for f in result.findings)
    return {
        "entries": len(result.entries),
        "citations": result.citations,
        "diagnostics": len(result.findings),
        "errors": by_sev.get("error", 0),
        "warnings": by_sev.get("warning", 0),
        "information": by_sev.get("information", 0),
        "hints": by_sev.get("hint", 0),
        "by_code": dict(sorted(by_code.items())),
        "by_status": dict(sorted(statuses.items())),
    }


def to_text(result: CheckResult) -> str:
    lines: list[str] = []
    index_of = _indexes(result.store)
    order = sorted(
        result.findings, key=lambda f: (f.path, f.span.start, _SEV_ORDER[f.severity], f.code, f.message)
    )
    for f in order:
        index = index_of(f.path)
        if index is not None:
            line = index.line_of(f.span.start)
            col = index.position(f.span.start, "utf-32").character
        else:
            line = col = 0
        lines.append(f"{_rel(f.path)}:{line + 1}:{col + 1}: {f.severity.value} {f.code}: {f.message}")
    offline = offline_summary(result.verifications.values())
    if offline:
        lines.append(offline)
    data = _summary(result, Counter())  # the text shows no statuses: no JSON of every entry
    lines.append(
        f"{data['entries']} entries checked: {data['errors']} errors, {data['warnings']} warnings, "
        f"{data['information']} information, {data['hints']} hints; "
        f"{data['citations']} citations"
    )
    return "\n".join(lines) + "\n"


def to_sarif(result: CheckResult) -> dict[str, Any]:
    levels = {
        Severity.ERROR: "error",
        Severity.WARNING: "warning",
        Severity.INFORMATION: "note",
        Severity.HINT: "note",
    }
    codes = sorted({f.code for f in result.findings})
    rules = [
        {
            "id": c,
            "name": c.title().replace("_", ""),
            "helpUri": code_url(c),
            "shortDescription": {"text": c.replace("_", " ").capitalize()},
        }
        for c in codes
    ]
    results = []
    index_of = _indexes(result.store)
    for f in result.findings:
        r = _range(index_of, f)
        extra = _notice(f)
        results.append(
            {
                **({"properties": extra} if extra else {}),
                "ruleId": f.code,
                "ruleIndex": codes.index(f.code),
                "level": levels[f.severity],
                "message": {"text": f.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": _rel(f.path).replace(os.sep, "/")},
                            "region": {
                                "startLine": r["start"]["line"] + 1,
                                "startColumn": r["start"]["character"] + 1,
                                "endLine": r["end"]["line"] + 1,
                                "endColumn": r["end"]["character"] + 1,
                            },
                        }
                    }
                ],
            }
        )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
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
                "results": results,
            }
        ],
    }


def render(result: CheckResult, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(to_json(result), indent=2, ensure_ascii=False) + "\n"
    if fmt == "sarif":
        return json.dumps(to_sarif(result), indent=2, ensure_ascii=False) + "\n"
    return to_text(result)
