"""Merging two entries of one paper (``DUPLICATE_ENTRY``): the kept entry takes what the
dropped one adds, the dropped one is deleted, and its citations are renamed in every
document that cites it through its .bib (open or not, with or without a project root
marker: :mod:`citelens.workspace.citing`). A merge that cannot be sure it reaches every
citation is not offered, and says which documents it could not check."""

from __future__ import annotations

import logging

from citelens.core.model import BibEntry
from citelens.documents.bibtex import edit as bibedit
from citelens.documents.bibtex.edit import TextEdit
from citelens.fixes.context import FixContext
from citelens.fixes.fix import FileEdit, file_edits
from citelens.workspace.rename import rename_citation

log = logging.getLogger("citelens")


class MergeRefused(Exception):
    """A merge would leave citations it cannot see undefined: the documents it could not check."""

    def __init__(self, unchecked: tuple[str, ...]) -> None:
        super().__init__("not merged: could not check " + "; ".join(unchecked))
        self.unchecked = unchecked


def merge_edits(
    ctx: FixContext, keep: BibEntry, keep_text: str, drop: BibEntry, drop_text: str
) -> tuple[FileEdit, ...] | None:
    """The edits of merging ``drop`` into ``keep`` (each with the current text of its .bib),
    or None when the merge is out of scope (a paper reading only the dropped entry's .bib
    would lose the entry it cites, or a document that may cite it could not be checked:
    logged with its name) or its edits overlap."""
    try:
        return merge_or_refuse(ctx, keep, keep_text, drop, drop_text)
    except MergeRefused as exc:
        log.info("merge of %s into %s: %s", drop.key, keep.key, exc)
        return None


def merge_or_refuse(
    ctx: FixContext, keep: BibEntry, keep_text: str, drop: BibEntry, drop_text: str
) -> tuple[FileEdit, ...] | None:
    """:func:`merge_edits`, raising :class:`MergeRefused` when a document that may cite the
    dropped key could not be checked."""
    edits: dict[str, list[TextEdit]] = {}
    same_file = keep.path == drop.path
    citing = ctx.citing(drop.path, (drop.key,))
    if citing.unchecked:
        raise MergeRefused(citing.unchecked)
    if not same_file:
        keep_citing = ctx.citing(keep.path, (drop.key,))
        if set(citing.documents) - set(keep_citing.documents):
            return None  # a paper reading only the dropped entry's .bib would lose it
    merged = bibedit.merge_entries(keep_text, keep, drop, None if same_file else drop_text)
    edits.setdefault(keep.path, []).append(merged)
    edits.setdefault(drop.path, []).append(bibedit.delete_entry(drop_text, drop))
    if keep.key != drop.key:
        for path in citing.documents:
            doc = ctx.source(path)
            text = ctx.text(path)
            if doc is None or text is None:
                raise MergeRefused((f"{path} (not read)",))
            for c in doc.citations:
                if c.key != drop.key:
                    continue
                others = [
                    (x.key, x.span)
                    for x in doc.citations
                    if x.command_span == c.command_span and x.span != c.span
                ]
                edits.setdefault(path, []).append(rename_citation(text, c.span, keep.key, others))
    return file_edits(edits)
