"""An entry, a paper record and a verdict as text for a user: the one renderer (texlab's
``citeproc::render`` is the model). Hovers (lsp/hover.py, lsp/cite_hover.py) and completion's
detail and documentation (lsp/completion.py) all read it, so an entry reads the same wherever
it is shown; tests/test_architecture.py fails when a second module renders one.

Pure functions, written so that no Markdown escape is needed (Neovim shows backslashes
literally): every string from a .bib or an API goes through ``core/mdplain.plain``, links are
built only from validated identifiers and http(s) URLs."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING
from urllib.parse import quote

from citelens.core.codes import notice_of
from citelens.core.fields import Field
from citelens.core.identifiers import is_s2_paper_id, normalize_arxiv, normalize_doi
from citelens.core.mdplain import code, link_target, plain
from citelens.core.model import BibEntry, EntryView
from citelens.documents.bibtex.parse import field_values
from citelens.sources.names import source_name
from citelens.verify.status import Status

if TYPE_CHECKING:
    from citelens.sources.records import PaperRecord
    from citelens.verify.status import Verification

STATUS_MARK = {
    Status.VERIFIED: "✅ Verified",
    Status.PARTIAL: "⚠️ Partially verified",
    Status.DOI_MISMATCH: "❌ Identifier points to another paper",
    Status.NOT_FOUND: "❌ Not found",
    Status.UNVERIFIED: "❔ Not verified",
}


def _escape(text: str) -> str:
    """Text as written, with no backslash escapes (Neovim would show them): see mdplain."""
    return plain(text)


def _people(names: list[str], limit: int = 6) -> str:
    if len(names) > limit:
        return ", ".join(names[:limit]) + f", … ({len(names)} authors)"
    return ", ".join(names)


def _links(doi: str | None, arxiv: str | None, url: str | None = None, s2: str | None = None) -> list[str]:
    """Links built only from validated identifiers (a DOI, an arXiv id, a Semantic Scholar
    paperId) and from an http(s) URL, percent-encoded: a .bib or an API answer cannot plant
    an image, a ``command:`` link or a fake status line in the hover."""
    out = []
    doi = normalize_doi(doi)
    if doi:
        out.append(f"DOI [{_escape(doi)}](https://doi.org/{quote(doi, safe='/:;')})")
    arxiv = normalize_arxiv(arxiv)
    if arxiv:
        out.append(f"arXiv [{_escape(arxiv)}](https://arxiv.org/abs/{quote(arxiv, safe='/:')})")
    if s2 and is_s2_paper_id(s2):
        out.append(f"[Semantic Scholar](https://www.semanticscholar.org/paper/{s2.strip().lower()})")
    target = link_target(url)
    if target and not out:
        out.append(f"[link]({target})")
    return out


def entry_section(entry: BibEntry, view: EntryView | None, line: int | None) -> str:
    lines: list[str] = []
    if view is not None:
        title = view.title or "(no title)"
        lines.append(f"**{_escape(title)}**")
        names = [" ".join(p for p in (n.first, n.von, n.last) if p) for n in view.authors]
        if view.authors_truncated:
            names.append("others")
        if names:
            lines.append(_escape(_people(names)))
        meta = " · ".join(str(x) for x in (view.year, view.venue) if x)
        if meta:
            lines.append(_escape(meta))
        links = _links(view.doi, view.arxiv_id, view.url)
        if links:
            lines.append(" · ".join(links))
    where = os.path.basename(entry.path) + (f":{line + 1}" if line is not None else "")
    lines.append(f"{code(f'@{entry.entry_type}{{{entry.key}}}')} in {_escape(where)}")
    return "  \n".join(lines)


def _record_line(r: PaperRecord) -> str:
    parts = [f"*{_escape(r.title)}*"]
    if r.authors:
        parts.append(_escape(_people(r.authors, 4)))
    meta = " · ".join(str(x) for x in (r.year, r.venue) if x)
    if meta:
        parts.append(_escape(meta))
    links = _links(r.doi, r.arxiv_id, r.url, r.s2_paper_id)
    if links:
        parts.append(" · ".join(links))
    return "  \n".join(parts)


def record_brief(r: PaperRecord) -> str:
    """One line: the paper's title, first author, year and its link."""
    who = _escape(_first_author(r.authors))
    meta = ", ".join(x for x in (who, str(r.year or "")) if x)
    links = _links(r.doi, r.arxiv_id, r.url, None if (r.doi or r.arxiv_id) else r.s2_paper_id)
    return f"*{_escape(r.title)}*" + (f" ({meta})" if meta else "") + (f" · {links[0]}" if links else "")


def _class_line(v: Verification) -> list[str]:
    """``Class: …`` of a verdict that has one, in the words every report uses
    (``Verification.class_text``, from ``verify/classes.py``)."""
    text = v.class_text
    return [f"Class: {_escape(text)}"] if text else []


def _match_lines(v: Verification, verbose: bool) -> list[str]:
    """What the identifier resolves to (a DOI_MISMATCH: and the entry's own paper, the fix),
    or, verbose, the record matched."""
    if v.match is None:
        return []
    source = source_name(v.match.source)
    if v.status is not Status.DOI_MISMATCH:
        return [f"Matched in {source}: " + _record_line(v.match)] if verbose else []
    out = [f"The identifier resolves, in {source}, to: " + record_brief(v.match)]
    if v.right_papers:  # the fix: the entry's own paper, with its identifier
        own = v.right_papers[0]
        out.append(f"The entry's own paper, in {source_name(own.source)}: " + record_brief(own))
    return out


def verification_section(v: Verification | None, pending: bool = False, verbose: bool = False) -> str:
    """The verdict in one line with its evidence (what the identifier resolves to, the
    closest candidate, the fields that disagree); ``verbose`` adds the audit trail."""
    if v is None:
        return "⏳ Verification of this entry is still running" if pending else ""
    lines = [f"**{STATUS_MARK[v.status]}** — {_escape(v.summary)}", *_class_line(v)]
    lines += _match_lines(v, verbose)
    said = (Field.DOI, Field.ARXIV, Field.PMID)  # by the line above, with the link
    for d in v.discrepancies:
        if not verbose and v.status is Status.DOI_MISMATCH and d.field in said:
            continue  # the line above says it, with the link
        lines.append(f"- {_escape(d.message)}")
    if v.candidates and v.status is Status.NOT_FOUND:
        lines.append("Closest candidate (not this paper): " + record_brief(v.candidates[0]))
    if not verbose:
        return "  \n".join(lines)
    details = []
    if v.score:
        details.append(f"title match {v.score:.2f}")
    if v.method:
        details.append(f"method `{v.method}`")
    if v.checked_at:
        details.append(f"checked {v.checked_at[:16].replace('T', ' ')} UTC")
    if details:
        lines.append(" · ".join(details))
    if v.candidates and v.status is Status.NOT_FOUND and len(v.candidates) > 1:
        lines.append("Other close papers:")
        lines.extend(f"- {_escape(c.title)} ({c.year or 'n.d.'})" for c in v.candidates[1:3])
    if v.audit:
        # a search that answered with other papers did not find this one
        other = "other papers" if v.status is Status.NOT_FOUND else "found"
        tiers = ", ".join(
            f"`{a.method}: {other if a.outcome == 'found' else a.outcome}`"
            + (" (cached)" if a.cached else "")
            for a in v.audit
        )
        lines.append(f"Tiers tried: {tiers}")
    return "  \n".join(lines)


def notice_section(v: Verification | None) -> str:
    """The paper's retraction, expression of concern or corrections, for the top of the
    hover: one line each, with a link to the notice. Plain words, DOIs only inside links,
    so no Markdown escape is needed (Neovim shows backslashes literally)."""
    from citelens.verify import retraction

    if v is None or not v.notices:
        return ""
    lines = []
    for n in v.notices:
        code = retraction.code_of(n)
        if code is None:
            continue
        head = retraction.headline(n, code)
        url = retraction.notice_url(n)
        ident = n.get("doi") or (f"PMID {n['pmid']}" if n.get("pmid") else "")
        what = retraction.kind_name(n)
        link = (
            f"[{what} notice {_escape(ident)}]({url})"
            if url and ident
            else f"{what} (the notice is not named)"
        )
        when = f", {n['date']}" if n.get("date") else ""
        lines.append(f"{notice_of(code).mark} **{head}**: {link}{when}, per {retraction.notice_source(n)}")
    return "  \n".join(lines)


def _short_author(view: EntryView) -> str:
    if not view.authors:
        return ""
    last = view.authors[0].last or view.authors[0].first
    return last + (" et al." if len(view.authors) > 1 or view.authors_truncated else "")


#: One entry a citation command cites: its key, its view (None when undefined), its verdict,
#: whether it is being verified now.
CitedRow = tuple[str, "EntryView | None", "Verification | None", bool]


def citation_list(rows: list[CitedRow]) -> str:
    """The hover on a citation command: one line per cited entry, in citation order.

    ``rows``: (key, the entry's view or None when undefined, its verdict, verifying now).
    """
    n = len(rows)
    lines = [f"**Cites {n} {'entry' if n == 1 else 'entries'}**", ""]
    for key, view, v, pending in rows:
        if view is None:
            lines.append(f"- {code(key)} — ❌ not defined in any bibliography of this document")
            continue
        who = " ".join(x for x in (_short_author(view), str(view.year or "")) if x)
        parts = [x for x in (who, view.title and f"*{_escape(view.title)}*") if x]
        status = STATUS_MARK[v.status] if v is not None else "⏳ verifying" if pending else ""
        if status:
            parts.append(status)
        lines.append(f"- {code(key)} — " + " · ".join(parts))
    return "\n".join(lines)


def outline_detail(entry: BibEntry) -> str:
    """An entry in a .bib's outline: ``@article Attention Is All You Need`` (the title's
    first 80 characters; a big file's fields are read again, they are not all held)."""
    title = field_values(entry).get("title") or ""
    return f"@{entry.entry_type} {title[:80]}".strip()


# --------------------------------------------------------------------------- completion


def _first_author(authors: list[str]) -> str:
    """``Vaswani et al.``: the first author's family name (``Vaswani, A.`` or ``Ashish
    Vaswani``), ``et al.`` when there are more."""
    if not authors:
        return ""
    name = authors[0]
    first = name.split(",")[0].strip() if "," in name else (name.split() or [""])[-1]
    return first + (" et al." if len(authors) > 1 else "")


def key_detail(view: EntryView) -> str:
    """A key's completion detail: ``Vaswani 2017`` (first author's last name, year)."""
    first = view.authors[0].last if view.authors else ""
    return " ".join(str(x) for x in (first, view.year) if x)


def key_documentation(view: EntryView, markdown: bool) -> str:
    """A key's completion documentation: the .bib's title as text, never Markdown of its
    own (a link, an image)."""
    return plain(view.title) if markdown else view.title


def paper_detail(record: PaperRecord) -> str:
    """``Vaswani et al., 2017, NeurIPS``: first author, year, venue."""
    venue = record.venue or ("arXiv" if record.arxiv_id else "")
    return ", ".join(x for x in (_first_author(record.authors), str(record.year or ""), venue) if x)


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def first_sentences(text: str, n: int = 2, limit: int = 400) -> str:
    parts = _SENTENCE.split(" ".join(text.split()))
    out = " ".join(parts[:n])
    return out if len(out) <= limit else out[: limit - 1].rstrip() + "…"


def paper_documentation(record: PaperRecord, existing: str | None, bib_name: str, key: str = "") -> str:
    """Authors, venue and year, DOI / arXiv id, the abstract's first sentences, and what
    accepting does (the key it inserts; whether the paper is already there). Plain lines
    with no emphasis, code spans or escapes: it reads the same as Markdown and as plain text
    (Neovim shows completion documentation as written). Every string from the API or a
    .bib goes through ``plain``: it is never Markdown of its own (a link, an image)."""
    lines = [plain(record.title)]
    if record.authors:
        shown = ", ".join(record.authors[:6]) + (" et al." if len(record.authors) > 6 else "")
        lines.append(plain(shown))
    where = ", ".join(x for x in (record.venue or "", str(record.year or "")) if x)
    if where:
        lines.append(plain(where))
    ids = []
    if record.doi:
        ids.append(f"DOI {plain(record.doi)}")
    if record.arxiv_id:
        ids.append(f"arXiv:{plain(record.arxiv_id)}")
    if ids:
        lines.append(" · ".join(ids))
    if record.abstract:
        lines.append(plain(first_sentences(record.abstract)))
    if existing:
        lines.append(f"✓ already in {plain(bib_name)} as {plain(existing)}")
    else:
        inserts = f"inserts {plain(key)} and " if key else ""
        lines.append(f"Accepting {inserts}adds this entry to {plain(bib_name)}.")
    return "\n\n".join(lines)
