"""The fast incremental sync gives exactly the text pygls's own gives, for any edit."""

from __future__ import annotations

import random

from lsprotocol import types as lsp
from pygls.workspace.text_document import TextDocument

from citelens.lsp.textsync import apply_incremental_change

ORIGINAL = TextDocument._apply_incremental_change


def test_same_text_as_pygls_for_random_edits() -> None:
    rng = random.Random(3)
    pieces = ["abc", "é", "😀x", "\n", "\r\n", "\r", "@article{k,\n  title = {T},\n}\n", ""]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 30)))
        n_lines = text.count("\n") + 2
        a, b = (lsp.Position(rng.randrange(n_lines), rng.randrange(6)) for _ in range(2))
        if (b.line, b.character) < (a.line, a.character):
            a, b = b, a
        change = lsp.TextDocumentContentChangePartial(range=lsp.Range(a, b), text=rng.choice(pieces))
        want = TextDocument("file:///x.bib", text)
        ORIGINAL(want, change)
        got = TextDocument("file:///x.bib", text)
        apply_incremental_change(got, change)
        assert got.source == want.source, (text, change)
