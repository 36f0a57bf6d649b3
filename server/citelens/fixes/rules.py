"""Which quick fixes a finding has, computed from its data and the current text, never
from the network: the entry is looked up again by key in the current text of its .bib,
and each edit changes exactly that entry (:mod:`citelens.documents.bibtex.edit`). A
finding computed for an older version of its document, or whose entry has changed since
it was verified, has no fix.

Whether a candidate is the entry's paper and whether a preprint has a published version
are verify's decisions (:func:`~citelens.verify.match.compare.is_same_paper`, the
verdict's discrepancies), read here, not made again."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from citelens.checks.verification import status_of
from citelens.core.codes import Code
from citelens.core.findings import FixData
from citelens.core.model import BibEntry
from citelens.core.source_names import source_name
from citelens.documents.bibtex import edit as bibedit
from citelens.documents.bibtex.edit import TextEdit
from citelens.documents.bibtex.render import latex_escape
from citelens.fixes.fix import Fix, file_edits
from citelens.fixes.merge import merge_edits
from citelens.fixes.published import published_version
from citelens.sources.records import PaperRecord
from citelens.verify import retraction
from citelens.verify.match.compare import is_same_paper
from citelens.verify.status import Verification
from citelens.workspace.index import Analysis
from citelens.workspace.session import Session

log = logging.getLogger("citelens")

MAX_CANDIDATES = 3


def fixes_for(session: Session, path: str, code: str, data: object) -> list[Fix]:
    """The fixes of one finding: its ``code`` and ``data`` (as the finding carried them,
    ``FixData`` and all) in the document ``path``. None for another server's data, a stale
    finding, or one whose fix cannot be computed (logged)."""
    fix = FixData.from_json(data)
    if fix is None or code not in Code.__members__:
        return []
    current = session.store.version(path)
    if current is not None and fix.version != current:
        return []  # the document changed since the finding was computed
    try:
        return _for_code(session, Code(code), fix, data if isinstance(data, dict) else {})
    except Exception:  # a quick fix we cannot compute is not offered
        log.exception("quick fix for %s failed", code)
        return []


class _Entry:
    """The entry a finding is about, as it is now."""

    def __init__(self, session: Session, bib_path: str, key: str) -> None:
        self.session = session
        self.path = bib_path
        self.text = session.store.text(bib_path) or ""
        bib = session.store.bib(bib_path)
        self.entry: BibEntry | None = None
        if bib is not None:
            self.entry = next((e for e in bib.entries if e.key == key), None)
            if self.entry is not None and not self.entry.path:
                self.entry.path = bib_path
        self.analysis: Analysis | None = session.analysis_for(bib_path)

    def fix(self, title: str, edits: Sequence[TextEdit], *, preferred: bool = False) -> Fix | None:
        """A fix editing this entry's .bib (None when it would change nothing)."""
        return _fix(title, {self.path: [e for e in edits if self.text[e.start : e.end] != e.new]}, preferred)


def _fix(title: str, edits: Mapping[str, Sequence[TextEdit]], preferred: bool = False) -> Fix | None:
    typed = file_edits({p: es for p, es in edits.items() if es})
    if not typed:
        return None
    return Fix(title, typed, preferred)


_VerdictFixes = Callable[[_Entry, Verification, FixData, Mapping[str, object]], list[Fix | None]]


def _for_code(session: Session, code: Code, fix: FixData, data: Mapping[str, object]) -> list[Fix]:
    at = _Entry(session, fix.bib, fix.key)
    if at.entry is None:
        return []
    if code is Code.DUPLICATE_ENTRY:
        return _duplicate_fixes(session, at, fix)
    if code in _NOTICE_TITLES:
        return _notice_fixes(at, code)
    rule = _VERDICT_FIXES.get(code)
    status = status_of(code)
    if rule is None or status is None or fix.status.upper() != status.value:
        return []
    v = session.verdict(at.entry, at.analysis)
    if v is None or v.status is not status:
        return []  # the entry changed since: its verification is not this one any more
    return [f for f in rule(at, v, fix, data) if f is not None]


# --------------------------------------------------------------------------- verdicts


def _metadata_fixes(
    at: _Entry, v: Verification, _fix: FixData, data: Mapping[str, object]
) -> list[Fix | None]:
    assert at.entry is not None
    out = _field_fixes(at, data)
    published = published_version(v)
    if published is not None:
        edit = bibedit.replace_entry(at.text, at.entry, published, same_paper=True)
        out.append(at.fix("Update preprint to published version", [edit], preferred=not out))
    if v.match is not None:
        edit = bibedit.replace_entry(at.text, at.entry, v.match, same_paper=True)
        title = f"Replace entry with {source_name(v.match.source)} metadata"
        out.append(at.fix(title, [edit], preferred=published is None and not out))
    return out


#: Discrepancy kinds a one-field fix mends: the field and the action's wording.
_FIELD_FIXES = {"title_words": "title", "title": "title", "venue": "venue"}


def _field_fixes(at: _Entry, data: Mapping[str, object]) -> list[Fix | None]:
    """The paper's title for a title with wrong words, the venue a source shows the paper
    published in for a wrong venue: an edit of that one field, nothing else."""
    assert at.entry is not None
    disc = data.get("discrepancy")
    if not isinstance(disc, dict) or disc.get("kind") not in _FIELD_FIXES:
        return []
    value = str(disc.get("source_value") or "").strip()
    if not value:
        return []
    if _FIELD_FIXES[str(disc["kind"])] == "title":
        name, label = "title", f"Use the paper's title: “{value}”"
    else:
        field = data.get("field")
        if not isinstance(field, str) or field not in ("journal", "booktitle", "journaltitle"):
            return []
        name, label = field, f"Change {field} to {value}"
    edit = bibedit.replace_field(at.text, at.entry, name, latex_escape(value))
    return [at.fix(label, [edit], preferred=True)]


def _right_papers(at: _Entry, v: Verification) -> list[PaperRecord]:
    """Candidates of a DOI_MISMATCH that verify holds to be the entry's paper (not the
    record the wrong identifier names)."""
    assert at.entry is not None
    view = at.session.entry_view(at.entry, at.analysis)
    if view is None:
        return []
    settings = at.session.settings
    wrong = v.match.doi.lower() if v.match is not None and v.match.doi else None
    return [
        c
        for c in v.candidates
        if is_same_paper(view, c, settings.title_verified_threshold, settings.title_candidate_threshold)
        and not (wrong and c.doi and c.doi.lower() == wrong)
    ]


def _doi_fixes(at: _Entry, v: Verification, _fix: FixData, _data: Mapping[str, object]) -> list[Fix | None]:
    assert at.entry is not None
    out: list[Fix | None] = []
    about_doi = any(x.field == "doi" for x in v.discrepancies if x.kind == "identifier")
    right = _right_papers(at, v)
    paper = right[0] if right else None
    if about_doi and "doi" in at.entry.fields:
        if paper is not None and paper.doi:
            edit = bibedit.replace_field(at.text, at.entry, "doi", paper.doi)
            out.append(at.fix(f"Fix DOI: {paper.doi}", [edit], preferred=True))
        else:
            out.append(at.fix("Remove DOI", [bibedit.remove_field(at.text, at.entry, "doi")], preferred=True))
    if paper is not None:
        drop = ["doi"] if about_doi and not paper.doi else []
        edit = bibedit.replace_entry(at.text, at.entry, paper, same_paper=True, drop=drop)
        out.append(at.fix(f"Replace entry with {source_name(paper.source)} metadata", [edit]))
    return out


def _not_found_fixes(
    at: _Entry, v: Verification, fix: FixData, _data: Mapping[str, object]
) -> list[Fix | None]:
    assert at.entry is not None
    if v.informational:
        return []  # a book or thesis is often just not indexed: never swap in another paper
    out: list[Fix | None] = []
    for c in (_records(fix.candidates) or v.candidates)[:MAX_CANDIDATES]:
        if c.title:
            edit = bibedit.replace_entry(at.text, at.entry, c, same_paper=False)
            out.append(at.fix(f"Replace with: {c.title} ({c.year or 'n.d.'})", [edit]))
    return out


def _records(values: Sequence[dict[str, object]]) -> list[PaperRecord]:
    out = []
    for r in values:
        try:
            out.append(PaperRecord.from_json(r))
        except (TypeError, ValueError, KeyError):
            continue
    return out


_VERDICT_FIXES: dict[Code, _VerdictFixes] = {
    Code.METADATA_MISMATCH: _metadata_fixes,
    Code.DOI_MISMATCH: _doi_fixes,
    Code.NOT_FOUND: _not_found_fixes,
}


# --------------------------------------------------------------------------- duplicates


def _duplicate_fixes(session: Session, at: _Entry, fix: FixData) -> list[Fix]:
    if fix.duplicate_of is None or fix.duplicate_bib is None:
        return []
    other = _Entry(session, fix.duplicate_bib, fix.duplicate_of)
    if other.entry is None or at.entry is None or other.entry is at.entry:
        return []
    out = []
    for keep, drop in ((other, at), (at, other)):
        assert keep.entry is not None and drop.entry is not None
        edits = merge_edits(session, keep.entry, keep.text, drop.entry, drop.text)
        if edits:
            # a merge deletes an entry: never the preferred fix (applied without a look)
            out.append(Fix(f"Merge duplicate into {keep.entry.key}", edits))
    return out


# --------------------------------------------------------------------------- notices

_NOTICE_TITLES = {
    Code.RETRACTED: "Open the retraction notice",
    Code.EXPRESSION_OF_CONCERN: "Open the expression of concern",
    Code.CORRECTION: "Open the correction notice",
}


def _notice_fixes(at: _Entry, code: Code) -> list[Fix]:
    """ "Open the retraction notice": the notice of the entry's current verdict."""
    assert at.entry is not None
    v = at.session.verdict(at.entry, at.analysis)
    top = retraction.worst(v.notices) if v is not None else None
    url = retraction.notice_url(top) if top is not None else None
    if top is None or url is None or retraction.code_of(top) != code:
        return []  # the entry changed since, or the notice has no address
    title = "Open the withdrawal notice" if top.get("kind") == "withdrawal" else _NOTICE_TITLES[code]
    return [Fix(title, url=url)]
