"""Merging two entries of one paper (``DUPLICATE_ENTRY``): the kept entry takes what the
dropped one adds, the dropped one is deleted, and its citations are renamed, in the
documents of the projects using its .bib only."""

from __future__ import annotations

from citelens.core.model import BibEntry
from citelens.documents.bibtex import edit as bibedit
from citelens.documents.bibtex.edit import TextEdit
from citelens.fixes.fix import FileEdit, file_edits
from citelens.workspace.project import uses_bib
from citelens.workspace.rename import rename_citation
from citelens.workspace.session import Session


def merge_edits(
    session: Session, keep: BibEntry, keep_text: str, drop: BibEntry, drop_text: str
) -> tuple[FileEdit, ...] | None:
    """The edits of merging ``drop`` into ``keep`` (each with the current text of its .bib),
    or None when the merge is out of scope (a paper reading only the dropped entry's .bib
    would lose the entry it cites) or its edits overlap."""
    edits: dict[str, list[TextEdit]] = {}
    same_file = keep.path == drop.path
    if not same_file and not all(uses_bib(p, keep.path) for p in session.projects_using_bib(drop.path)):
        return None
    merged = bibedit.merge_entries(keep_text, keep, drop, None if same_file else drop_text)
    edits.setdefault(keep.path, []).append(merged)
    edits.setdefault(drop.path, []).append(bibedit.delete_entry(drop_text, drop))
    if keep.key != drop.key:
        for path, c in session.all_citations(drop.key, drop.path):  # this .bib's projects only
            doc = session.store.source(path)
            text = session.store.text(path)
            if doc is None or text is None:
                continue
            others = [
                (x.key, x.span)
                for x in doc.citations
                if x.command_span == c.command_span and x.span != c.span
            ]
            edits.setdefault(path, []).append(rename_citation(text, c.span, keep.key, others))
    return file_edits(edits)
