"""Which quick fixes a finding (or an entry) has, computed from its data and the current
text, never from the network: the entry is looked up again by key in the current text of
its .bib, and each edit changes exactly that entry's fields
(:mod:`citelens.documents.bibtex.edit`). A finding computed for an older version of its
document, or whose entry has changed since it was verified, has no fix.

Rules read a :class:`~citelens.fixes.context.FixContext`, so the editor's code actions and
``citelens check --fix`` get the same fixes. Whether a candidate is the entry's paper and
whether a preprint has a published version are verify's decisions (the verdict's settled
record, :attr:`~citelens.verify.status.Verification.right_papers`, its discrepancies),
read here, not made again.

Each fix says how far it may be trusted (:class:`~citelens.fixes.fix.Applicability`): the
field fix of a confident match is ``safe``; a preprint's published version, a merge (it
deletes an entry) and the field fix of a less than confident match of the same paper are
``unsafe``; another paper in place of the cited one (*Replace with:*, or fields from a
record that is not the entry's paper), a rewrite of the whole entry from a record and a
notice to open are ``display-only``: offered in the editor, where the writer picks, never
applied by ``citelens check --fix --unsafe-fixes``."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from citelens.core.codes import NOTICE_CODES, Code, notice_of, status_of
from citelens.core.fields import Field
from citelens.core.findings import FixData
from citelens.core.model import BibEntry, BibFile
from citelens.documents.bibtex import edit as bibedit
from citelens.documents.bibtex.edit import TextEdit
from citelens.documents.bibtex.render import detect_field_order, for_encoding
from citelens.documents.bibtex.style import Style, detect_style
from citelens.fixes.context import FixContext
from citelens.fixes.fix import Applicability, Fix, file_edits
from citelens.fixes.merge import merge_edits
from citelens.fixes.metadata import field_fix, right_papers
from citelens.fixes.published import published_version
from citelens.sources.names import source_name
from citelens.sources.records import PaperRecord
from citelens.verify import retraction
from citelens.verify.match.discrepancy import Kind
from citelens.verify.status import Status, Verification
from citelens.workspace.bibstyle import SAMPLE, FileStyle, as_written, file_style, styled

log = logging.getLogger("citelens")

MAX_CANDIDATES = 3
SAFE, UNSAFE, SHOWN = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY_ONLY


def fixes_for(ctx: FixContext, path: str, code: str, data: object) -> list[Fix]:
    """The fixes of one finding: its ``code`` and ``data`` (as the finding carried them,
    ``FixData`` and all) in the document ``path``. None for another server's data, a stale
    finding, or one whose fix cannot be computed (logged)."""
    fix = FixData.from_json(data)
    if fix is None or code not in Code.__members__:
        return []
    current = ctx.version(path)
    if current is not None and fix.version != current:
        return []  # the document changed since the finding was computed
    try:
        return _for_code(ctx, Code(code), fix)
    except Exception:  # a quick fix we cannot compute is not offered
        log.exception("quick fix for %s failed", code)
        return []


def entry_fixes(ctx: FixContext, bib_path: str, key: str, *, add_missing: bool = False) -> list[Fix]:
    """The fixes of an entry from its verdict, the first preferred: what ``citelens check
    --fix`` applies and the editor offers with the cursor in the entry. A fix answers a
    finding: a verified entry has none; ``add_missing`` (``--fix --add-missing``) puts the
    DOI and pages the entry lacks into its field fix (the editor offers them apart:
    :func:`missing_fields_fix`)."""
    at = _Entry(ctx, bib_path, key)
    if at.entry is None:
        return []
    v = ctx.verdict(at.entry)
    if v is None:
        return []
    try:
        return _verdict_fixes(at, v, None, add_missing=add_missing)
    except Exception:
        log.exception("quick fix for %s failed", key)
        return []


def missing_fields_fix(ctx: FixContext, bib_path: str, key: str) -> Fix | None:
    """The named choice of filling in what an entry lacks (its DOI, its pages) from the paper
    its verdict settled on, with nothing of what it has changed: the editor's *Add doi,
    pages from Crossref* with the cursor in the entry. None when nothing is missing."""
    at = _Entry(ctx, bib_path, key)
    v = ctx.verdict(at.entry) if at.entry is not None else None
    if v is None or v.status not in (Status.VERIFIED, Status.PARTIAL):
        return None
    try:
        return _field_fix(at, v, only_missing=True)
    except Exception:
        log.exception("quick fix for %s failed", key)
        return None


class _Entry:
    """The entry a finding is about, as it is now."""

    def __init__(self, ctx: FixContext, bib_path: str, key: str) -> None:
        self.ctx = ctx
        self.path = bib_path
        self.text = ctx.text(bib_path) or ""
        self.bib: BibFile | None = ctx.bib(bib_path)
        self.entry: BibEntry | None = None
        if self.bib is not None:
            self.entry = next((e for e in self.bib.entries if e.key == key), None)
            if self.entry is not None and not self.entry.path:
                self.entry.path = bib_path

    def fix(
        self, title: str, edits: Sequence[TextEdit], applicability: Applicability, changes: Sequence[str] = ()
    ) -> Fix | None:
        """A fix editing this entry's .bib (None when it would change nothing)."""
        encoding = self.ctx.encoding(self.path)
        real = [
            TextEdit(e.start, e.end, for_encoding(e.new, encoding))
            for e in edits
            if self.text[e.start : e.end] != e.new
        ]
        typed = file_edits({self.path: real}) if real else None
        if not typed:
            return None
        return Fix(title, typed, applicability, changes=tuple(changes))

    def style(self) -> tuple[Style, list[str]]:
        """This entry's style with the file's conventions, and the file's field order."""
        assert self.entry is not None and self.bib is not None
        fs, order = _file_style(self.text, _Same(self.bib))
        return styled(detect_style(self.text, self.entry), fs), order

    def written(self, record: PaperRecord) -> PaperRecord:
        """``record`` as this entry's file writes records (its venues, its URLs)."""
        assert self.bib is not None
        return as_written(record, _file_style(self.text, _Same(self.bib))[0])

    def file_style(self) -> FileStyle:
        assert self.bib is not None
        return _file_style(self.text, _Same(self.bib))[0]


class _Same:
    """A parsed .bib as a cache key: itself (by identity)."""

    __slots__ = ("bib",)

    def __init__(self, bib: BibFile) -> None:
        self.bib = bib

    def __hash__(self) -> int:
        return id(self.bib)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.bib is self.bib


@lru_cache(maxsize=4)
def _file_style(text: str, bib: _Same) -> tuple[FileStyle, list[str]]:
    """How the file writes its entries (names, venues, URLs, camel-case field names), and
    its field order (read once per text)."""
    entries = bib.bib.entries[:SAMPLE]
    return file_style(text, entries), detect_field_order(entries)


_VerdictFixes = Callable[[_Entry, Verification, FixData], list[Fix | None]]


def _for_code(ctx: FixContext, code: Code, fix: FixData) -> list[Fix]:
    at = _Entry(ctx, fix.bib, fix.key)
    if at.entry is None:
        return []
    if code is Code.DUPLICATE_ENTRY:
        return _duplicate_fixes(ctx, at, fix)
    if code in NOTICE_CODES:
        return _notice_fixes(at, code)
    status = status_of(code)
    if code not in _VERDICT_CODES or status is None or fix.status is not status:
        return []
    v = ctx.verdict(at.entry)
    if v is None or v.status is not status:
        return []  # the entry changed since: its verification is not this one any more
    return _verdict_fixes(at, v, fix)


_VERDICT_CODES = (Code.METADATA_MISMATCH, Code.DOI_MISMATCH, Code.NOT_FOUND)


def _verdict_fixes(
    at: _Entry, v: Verification, fix: FixData | None, *, add_missing: bool = False
) -> list[Fix]:
    if v.status is Status.NOT_FOUND:  # a title cut short may still name its paper
        out = [_field_fix(at, v, add_missing=add_missing), *_not_found_fixes(at, v, fix)]
    elif v.status in (Status.PARTIAL, Status.VERIFIED, Status.DOI_MISMATCH):
        out = [_field_fix(at, v, add_missing=add_missing), *_whole_entry_fixes(at, v)]
    else:
        out = []
    return [f for f in out if f is not None]


# --------------------------------------------------------------------------- verdicts


def _field_fix(
    at: _Entry, v: Verification, *, add_missing: bool = False, only_missing: bool = False
) -> Fix | None:
    """The fields the verdict found wrong, from the paper it identified; with
    ``add_missing`` also the fields the entry lacks; ``only_missing``: those alone."""
    assert at.entry is not None
    view = at.ctx.view(at.entry)
    if view is None:
        return None
    found = field_fix(
        at.entry, view, v, at.ctx.settings, add_missing=add_missing or only_missing, style=at.file_style()
    )
    if found is not None and only_missing:
        added = tuple(c for c in found.changes if c.old is None)
        found = dataclasses.replace(found, changes=added) if added else None
    if found is None:
        return None
    style, order = at.style()
    values = {c.name: c.new for c in found.changes if c.new is not None}
    remove = [c.name for c in found.changes if c.new is None]
    edits = bibedit.field_edits(at.text, at.entry, values, remove, order=order, style=style)
    applicability = SAFE if found.safe else UNSAFE if found.same_paper else SHOWN
    return at.fix(found.title, edits, applicability, [c.label for c in found.changes])


def _whole_entry_fixes(at: _Entry, v: Verification) -> list[Fix | None]:
    """Rewrites of the whole entry from a record: every field the record has, right or not
    (display-only: offered for a look in the editor, never applied by ``--fix``); the
    published version of a cited preprint (unsafe: another version is cited)."""
    assert at.entry is not None
    out: list[Fix | None] = []
    style, _order = at.style()
    if v.status is Status.DOI_MISMATCH:
        view = at.ctx.view(at.entry)
        right = right_papers(v, view, at.ctx.settings) if view is not None else []
        if right:
            paper = right[0]
            about_doi = any(x.field == Field.DOI for x in v.discrepancies if x.kind == Kind.IDENTIFIER)
            drop = ["doi"] if about_doi and not paper.doi else []
            edit = bibedit.replace_entry(
                at.text, at.entry, at.written(paper), same_paper=True, drop=drop, style=style
            )
            out.append(at.fix(f"Replace entry with {source_name(paper.source)} metadata", [edit], SHOWN))
        return out
    if v.status is not Status.PARTIAL or v.match is None:
        return out
    published = published_version(v)
    if published is not None:
        edit = bibedit.replace_entry(at.text, at.entry, at.written(published), same_paper=True, style=style)
        out.append(at.fix("Update preprint to published version", [edit], UNSAFE))
    edit = bibedit.replace_entry(at.text, at.entry, at.written(v.match), same_paper=True, style=style)
    out.append(at.fix(f"Replace entry with {source_name(v.match.source)} metadata", [edit], SHOWN))
    return out


def _not_found_fixes(at: _Entry, v: Verification, fix: FixData | None) -> list[Fix | None]:
    """Another paper in place of the entry's: display-only, the writer picks it in the editor
    (a batch command never puts another paper in place of the cited one: a fabricated
    reference would come out VERIFIED)."""
    assert at.entry is not None
    if v.informational:
        return []  # a book or thesis is often just not indexed: never swap in another paper
    out: list[Fix | None] = []
    style, _order = at.style()
    candidates = (_records(fix.candidates) if fix is not None else []) or v.candidates
    for c in candidates[:MAX_CANDIDATES]:
        if c.title:
            edit = bibedit.replace_entry(at.text, at.entry, at.written(c), same_paper=False, style=style)
            out.append(at.fix(f"Replace with: {c.title} ({c.year or 'n.d.'})", [edit], SHOWN))
    return out


def _records(values: Sequence[Mapping[str, object]]) -> list[PaperRecord]:
    out = []
    for r in values:
        try:
            out.append(PaperRecord.from_json(dict(r)))
        except (TypeError, ValueError, KeyError):
            continue
    return out


# --------------------------------------------------------------------------- duplicates


def _duplicate_fixes(ctx: FixContext, at: _Entry, fix: FixData) -> list[Fix]:
    if fix.duplicate_of is None or fix.duplicate_bib is None:
        return []
    other = _Entry(ctx, fix.duplicate_bib, fix.duplicate_of)
    if other.entry is None or at.entry is None or other.entry is at.entry:
        return []
    out = []
    for keep, drop in ((other, at), (at, other)):
        assert keep.entry is not None and drop.entry is not None
        edits = merge_edits(ctx, keep.entry, keep.text, drop.entry, drop.text)
        if edits:
            # a merge deletes an entry: unsafe (never applied without a look)
            out.append(Fix(f"Merge duplicate into {keep.entry.key}", edits, UNSAFE))
    return out


# --------------------------------------------------------------------------- notices


def _notice_fixes(at: _Entry, code: Code) -> list[Fix]:
    """ "Open the retraction notice": the notice of the entry's current verdict."""
    assert at.entry is not None
    v = at.ctx.verdict(at.entry)
    top = retraction.worst(v.notices) if v is not None else None
    url = retraction.notice_url(top) if top is not None else None
    if top is None or url is None or retraction.code_of(top) != code:
        return []  # the entry changed since, or the notice has no address
    title = "Open the withdrawal notice" if top.get("kind") == "withdrawal" else notice_of(code).action
    return [Fix(title, applicability=Applicability.DISPLAY_ONLY, url=url)]
