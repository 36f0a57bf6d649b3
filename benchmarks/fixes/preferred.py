"""The editor's preferred code actions applied to every finding of a folder's .bib files, for
a checkout that has no ``citelens check --fix`` (before issue 33): the "before" of
``bench_fixes.py``. Run in that checkout's code (``PYTHONPATH=DIR/server``); uses only what
both versions have (``Session``, ``run_check``, ``fixes_for``).

    python -m benchmarks.fixes.preferred FOLDER"""

from __future__ import annotations  # noqa: I001 (workspace.session is an older checkout's)

import asyncio
import sys
from pathlib import Path
from typing import Any

from citelens.core.settings import from_sources
from citelens.documents.bibtex.edit import TextEdit, apply_edits
from citelens.fixes import rules
from citelens.workspace.check import run_check
from citelens.workspace.pipeline import Pipeline
from citelens.workspace.session import Session


def _context(session: Session) -> Any:
    try:
        from citelens.fixes.context import SessionContext
    except ImportError:  # before issue 33: the rules took the session
        return session
    return SessionContext(session)


async def _verdicts(folder: str) -> dict[str, Any]:
    pipeline = Pipeline(from_sources())
    try:
        result = await run_check([folder], pipeline)
    finally:
        await pipeline.aclose()
    return {e.key: v for e in result.entries if (v := result.verdict(e)) is not None}


def main(folder: str) -> int:
    verdicts = asyncio.run(_verdicts(folder))
    session = Session(from_sources())
    bibs = sorted(str(p) for p in Path(folder).glob("*.bib"))
    for bib in bibs:
        analysis = session.analyse(bib)
        for key, defs in analysis.definitions.items():
            view = session.entry_view(defs[0], analysis)
            if view is not None and key in verdicts:
                session.keep_verdict(view, verdicts[key])
    taken: dict[str, list[TextEdit]] = {}
    ctx = _context(session)
    applied = 0
    for f in session.findings():
        if f.path not in bibs:
            continue
        fixes = [x for x in rules.fixes_for(ctx, f.path, str(f.code), f.data) if x.preferred and x.edits]
        if not fixes:
            continue
        edits = [TextEdit(e.span.start, e.span.end, e.new) for e in fixes[0].edits]
        mine = taken.setdefault(f.path, [])
        if any(e.start < t.end and t.start < e.end for e in edits for t in mine):
            continue
        mine.extend(edits)
        applied += 1
    for path, edits in taken.items():
        text = session.store.text(path) or ""
        Path(path).write_bytes(apply_edits(text, edits).encode("utf-8"))
    print(f"applied {applied} preferred code actions", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
