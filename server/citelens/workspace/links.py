"""Links in documents (``textDocument/documentLink``): identifiers in .bib entries and
the files that \\bibliography, \\addbibresource, \\input (and the like) name."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from citelens.core.identifiers import normalize_arxiv, normalize_doi
from citelens.core.model import BibFile, SourceDocument, Span
from citelens.workspace.project import resolve
from citelens.workspace.store import ReadStore


def _inner(text: str, span: Span) -> Span:
    """The value without its braces or quotes (and surrounding blanks)."""
    s, e = span.start, span.end
    while s < e and text[s] in '{" \t':
        s += 1
    while e > s and text[e - 1] in '}" \t':
        e -= 1
    return Span(s, e)


def bib_links(bib: BibFile, text: str) -> list[tuple[Span, str]]:
    """(span of the value, target URL) for each ``doi``, ``url`` and arXiv ``eprint``."""
    out: list[tuple[Span, str]] = []
    for entry in bib.entries:
        prefix = (entry.get("archiveprefix") or entry.get("eprinttype") or "").strip().lower()
        for name, f in entry.fields.items():
            target = None
            if name == "doi":
                doi = normalize_doi(f.value)
                target = f"https://doi.org/{quote(doi, safe='/:;()')}" if doi else None
            elif name == "url" and f.value.strip().startswith(("http://", "https://", "ftp://")):
                target = f.value.strip().replace("\\_", "_").replace("\\%", "%")
            elif name == "eprint" and prefix == "arxiv":
                arxiv = normalize_arxiv(f.value)
                target = f"https://arxiv.org/abs/{arxiv}" if arxiv else None
            if target:
                out.append((_inner(text, f.value_span), target))
    return out


def reference_links(store: ReadStore, doc: SourceDocument, root: str) -> list[tuple[Span, str]]:
    """(span of the name as written, resolved file path) for each bibliography and include."""
    bases = [Path(root).parent, Path(doc.path).parent]
    out: list[tuple[Span, str]] = []
    for ref in doc.bibliographies:
        path = resolve(store, ref.target, bases, ".bib")
        if path is not None:
            out.append((ref.span, path))
    for ref in doc.includes:
        path = resolve(store, ref.target, bases, ".tex")
        if path is not None:
            out.append((ref.span, path))
    return out
