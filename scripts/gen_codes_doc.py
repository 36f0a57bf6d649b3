"""Write the code table of docs/diagnostics.md from the code registry (core/codes.REGISTRY).

    python scripts/gen_codes_doc.py          # rewrite the table
    python scripts/gen_codes_doc.py --check  # exit 1 when the page's table differs

Run it after adding a code or changing a code's default severity or place; the sections
below the table are prose, written by hand (tests/test_codes.py checks one per code).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from citelens.core.codes import REGISTRY, anchor  # noqa: E402

DOC = ROOT / "docs" / "diagnostics.md"
HEAD = "| code | default | where |\n|---|---|---|\n"


def table() -> str:
    """The table as the registry says: one row per code, in the order of ``Code``."""
    rows = "".join(
        f"| [{c}](#{anchor(c)}) | {row.severity.value}{row.severity_note} | {row.where} |\n"
        for c, row in REGISTRY.items()
    )
    return HEAD + rows


def render(page: str) -> str:
    """``page`` with its code table replaced by :func:`table`."""
    start = page.index(HEAD)
    end = page.index("\n\n", start) + 1
    return page[:start] + table() + page[end:]


if __name__ == "__main__":
    page = DOC.read_text(encoding="utf-8")
    new = render(page)
    if "--check" in sys.argv[1:]:
        if new != page:
            sys.stderr.write("docs/diagnostics.md: the code table differs from core/codes.REGISTRY; "
                             "run `python scripts/gen_codes_doc.py`\n")
            sys.exit(1)
        sys.exit(0)
    DOC.write_text(new, encoding="utf-8")
    sys.stdout.write(f"wrote {DOC}\n")
