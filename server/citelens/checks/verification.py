"""Verification results as :class:`~citelens.core.findings.Finding` diagnostics.

Codes: ``DOI_MISMATCH`` (the identifier names another paper), ``NOT_FOUND``,
``METADATA_MISMATCH`` (the paper exists, some fields are wrong), ``UNVERIFIED``
(a source failed; nothing is claimed), and the notices of a found paper: ``RETRACTED``,
``EXPRESSION_OF_CONCERN`` (also at every citation) and ``CORRECTION`` (on the entry
only); ``DUPLICATE_ENTRY`` comes from :mod:`citelens.checks.duplicates`. A verdict names its
code (``Verification.code``, decided by ``verify/verdict.decide``) and its severity is
:func:`verdict_severity`. Each
lands in the .bib file on the field that is wrong (the entry key otherwise) and, for the
first three, at every citation of the key. ``Finding.data`` carries what a quick fix
needs: key, bib path, status, the matched record and candidate records as JSON, the field
and its value span.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence

from citelens.checks.duplicates import TextPairsOf, ViewOf, duplicate_findings
from citelens.core.codes import NOTICE_CODES, REGISTRY, Code
from citelens.core.findings import Finding, FixData, Related, severity_of
from citelens.core.model import BibEntry, BibField, BibFile, Citation, Span
from citelens.core.settings import Settings
from citelens.core.severity import Severity
from citelens.documents.bibtex.keytable import key_table
from citelens.sources.records import PaperRecord
from citelens.verify import retraction
from citelens.verify.match.discrepancy import Discrepancy, Kind
from citelens.verify.status import Status, Verification

#: BibTeX fields holding what a discrepancy is about, most likely first.
FIELD_NAMES: dict[str, tuple[str, ...]] = {
    "title": ("title",),
    "authors": ("author", "editor"),
    "year": ("year", "date"),
    "venue": (
        "journal",
        "journaltitle",
        "booktitle",
        "eventtitle",
        "publisher",
        "school",
        "institution",
        "howpublished",
        "organization",
    ),
    "doi": ("doi", "url", "note", "howpublished"),
    "arxiv": ("eprint", "arxiv", "arxivid", "url", "journal", "note", "howpublished"),
    "pmid": ("pmid", "url", "note"),
    "s2": ("s2id", "s2_id", "url"),
}


def code_of(v: Verification) -> Code | None:
    """A verdict's code (None for VERIFIED): the one its verdict names."""
    return v.code


def verdict_severity(
    settings: Settings, v: Verification, discrepancies: Sequence[Discrepancy] | None = None
) -> Severity | None:
    """The severity of a verdict's finding (None: its code is off): a miss of a book or
    thesis is information at most; a METADATA_MISMATCH is a warning by default when one of
    its ``discrepancies`` (all of the verdict's unless given) is."""
    code = code_of(v)
    if code is None:
        return None
    if v.status is Status.PARTIAL:
        ds = v.discrepancies if discrepancies is None else discrepancies
        worst = max((d.severity.rank for d in ds), default=Severity.INFORMATION.rank)
        default = Severity.WARNING if worst >= Severity.WARNING.rank else None
        return severity_of(settings, code, default=default)
    if v.status is Status.NOT_FOUND and v.informational:
        return severity_of(settings, code, at_most=Severity.INFORMATION)
    return severity_of(settings, code)


def _field(entry: BibEntry, what: str) -> BibField | None:
    for name in FIELD_NAMES.get(what, (what,)):
        f = entry.fields.get(name)
        if f is not None:
            return f
    return None


def _first_definitions(bib_files: Sequence[BibFile]) -> dict[str, BibEntry]:
    """Key -> the entry BibTeX uses (its first definition in file order); shared, read-only."""
    return key_table(bib_files)[0]


_BRIEF_FIELDS = (
    "source",
    "title",
    "authors",
    "year",
    "venue",
    "doi",
    "arxiv_id",
    "pmid",
    "s2_paper_id",
    "url",
    "volume",
    "issue",
    "pages",
    "publisher",
    "is_preprint",
    "publication_types",
)


def _brief(record: PaperRecord) -> dict[str, object]:
    """A record as a quick fix needs it: no abstract, at most 30 authors."""
    data = {k: getattr(record, k) for k in _BRIEF_FIELDS}
    data["authors"] = list(record.authors[:30])
    return data


def _data(entry: BibEntry, v: Verification, **extra: object) -> dict[str, object]:
    """The finding's data: the quick fix's :class:`FixData`, and what people and reports
    read (summary, matched record, where in the entry)."""
    fix = FixData(
        entry.key, entry.path, v.status, candidates=tuple(_brief(c) for c in v.candidates[:3])
    )
    data: dict[str, object] = {
        **fix.to_json(),
        "class": v.klass,
        "summary": v.summary,
        "match": _brief(v.match) if v.match else None,
        "candidates": list(fix.candidates),
        "informational": v.informational,
    }
    data.update(extra)
    return data


def _on_field(entry: BibEntry, what: str) -> tuple[Span, dict[str, object]]:
    f = _field(entry, what)
    if f is None:
        return entry.key_span, {"field": None}
    return f.value_span, {"field": f.name, "value_span": [f.value_span.start, f.value_span.end]}


def _entry_findings(entry: BibEntry, v: Verification, settings: Settings) -> list[Finding]:
    code = code_of(v)
    if code is None:
        return []
    if v.status is Status.PARTIAL:
        out = []
        for d in v.discrepancies:
            sev = verdict_severity(settings, v, [d])
            if sev is None:
                continue
            span, where = _on_field(entry, d.field)
            data = _data(entry, v, discrepancy=d.to_json(), **{"class": d.klass}, **where)
            out.append(Finding(entry.path, span, code, d.message, sev, entry.key, data=data))
        return out
    sev = verdict_severity(settings, v)
    if sev is None:
        return []
    if v.status is Status.DOI_MISMATCH:
        ident = next((d for d in v.discrepancies if d.kind == Kind.IDENTIFIER), None)
        span, where = _on_field(entry, ident.field if ident else "doi")
    else:
        span, where = entry.key_span, {"field": None}
    data = _data(entry, v, class_text=v.class_text, **where)
    return [Finding(entry.path, span, code, v.summary, sev, entry.key, data=data)]


def _cited(
    citations: Mapping[str, Sequence[Citation]],
    defs: Mapping[str, BibEntry],
    results: Mapping[str, Verification],
) -> Iterator[tuple[str, Citation, BibEntry, Verification]]:
    """(path, citation, its entry, the entry's verdict) for every citation of a verified key."""
    for path, cits in citations.items():
        for c in cits:
            v = results.get(c.key)
            entry = defs.get(c.key)
            if v is not None and entry is not None:
                yield path, c, entry, v


def _at_citation(
    path: str,
    c: Citation,
    entry: BibEntry,
    v: Verification,
    code: Code,
    message: str,
    sev: Severity,
    **extra: object,
) -> Finding:
    """A finding at a citation, pointing at its entry. Light data (a key may be cited hundreds
    of times and every diagnostic is sent on each change): quick fixes read the entry's verdict."""
    related = [Related(entry.path, entry.key_span, f"entry {entry.key}")]
    data: dict[str, object] = {
        "key": entry.key,
        "bib": entry.path,
        "status": v.status.value,
        "class": v.klass,
        "field": None,
        **extra,
    }
    return Finding(path, c.span, code, f"{c.key}: {message}", sev, c.key, related=related, data=data)


def _citation_findings(
    citations: Mapping[str, Sequence[Citation]],
    defs: Mapping[str, BibEntry],
    results: Mapping[str, Verification],
    settings: Settings,
) -> list[Finding]:
    out = []
    for path, c, entry, v in _cited(citations, defs, results):
        code = v.code
        if code is None or not REGISTRY[code].joins_entry:  # (its row: shown at every citation)
            continue
        sev = verdict_severity(settings, v)
        if sev is not None:
            out.append(_at_citation(path, c, entry, v, code, v.summary, sev))
    return out


def entry_level_findings(
    bib_files: Sequence[BibFile],
    results: Mapping[str, Verification],
    settings: Settings,
    view_of: ViewOf | None = None,
    only: Collection[str] | None = None,
    text_pairs_of: TextPairsOf | None = None,
) -> list[Finding]:
    """The findings in the .bib files: on the wrong field of each entry, and duplicates
    (among the keys in ``only`` when given: the editor's view of a whole library)."""
    defs = _first_definitions(bib_files)
    if only is not None:
        defs = {k: defs[k] for k in only if k in defs}
    out: list[Finding] = []
    for key, entry in defs.items():
        v = results.get(key)
        if v is None:
            continue
        try:
            out += _entry_findings(entry, v, settings)
            out += notice_findings(entry, v, settings)
        except (AttributeError, KeyError, TypeError, ValueError):
            continue
    out += duplicate_findings(defs, results, settings, view_of, text_pairs_of)
    return out


def citation_findings(
    citations: Mapping[str, Sequence[Citation]],
    bib_files: Sequence[BibFile],
    results: Mapping[str, Verification],
    settings: Settings,
) -> list[Finding]:
    """The findings at every citation of a key whose entry is wrong."""
    defs = _first_definitions(bib_files)
    return _citation_findings(citations, defs, results, settings) + notice_citation_findings(
        citations, defs, results, settings
    )


# ---------------------------------------------------------------------- retractions

#: Notice codes reported at every citation too (a correction stays on the entry).
_NOTICE_AT_CITATIONS = tuple(c for c in NOTICE_CODES if REGISTRY[c].joins_entry)


def _notice(v: Verification) -> tuple[Code, dict[str, str]] | None:
    """(code, deciding notice) of a verdict's notices, if any."""
    top = retraction.worst(v.notices)
    code = retraction.code_of(top) if top else None
    if top is None or code is None:
        return None
    return code, top


def notice_data(v: Verification, top: dict[str, str]) -> dict[str, object]:
    return {
        "notice": dict(top),
        "notice_url": retraction.notice_url(top),
        "notices": [dict(n) for n in v.notices],
    }


def notice_findings(entry: BibEntry, v: Verification, settings: Settings) -> list[Finding]:
    """``RETRACTED`` (error), ``EXPRESSION_OF_CONCERN`` (warning) or ``CORRECTION``
    (information; never above it: the paper stands) on the entry key."""
    found = _notice(v)
    if found is None:
        return []
    code, top = found
    sev = severity_of(settings, code, at_most=Severity.INFORMATION if code is Code.CORRECTION else None)
    if sev is None:
        return []
    return [
        Finding(
            entry.path,
            entry.key_span,
            code,
            retraction.message(v.notices),
            sev,
            entry.key,
            data=_data(entry, v, field=None, **{"class": None}, **notice_data(v, top)),
        )
    ]


def notice_citation_findings(
    citations: Mapping[str, Sequence[Citation]],
    defs: Mapping[str, BibEntry],
    results: Mapping[str, Verification],
    settings: Settings,
) -> list[Finding]:
    """``RETRACTED`` and ``EXPRESSION_OF_CONCERN`` at every citation of the paper."""
    out = []
    for path, c, entry, v in _cited(citations, defs, results):
        found = _notice(v) if v.notices else None
        if found is None:
            continue
        code, top = found
        sev = severity_of(settings, code)
        if code not in _NOTICE_AT_CITATIONS or sev is None:
            continue
        message = retraction.message(v.notices)
        notice = {"notice": dict(top), "notice_url": retraction.notice_url(top), "class": None}
        out.append(_at_citation(path, c, entry, v, code, message, sev, **notice))
    return out


def verification_findings(
    bib_files: Sequence[BibFile],
    citations: Mapping[str, Sequence[Citation]],
    results: Mapping[str, Verification],
    settings: Settings,
    view_of: ViewOf | None = None,
) -> list[Finding]:
    """Every finding the verification results give, in the .bib files and at citations.

    ``citations`` maps a source file's path to the citations in it. Never raises
    for odd input: an entry that cannot be placed is skipped.
    """
    return entry_level_findings(bib_files, results, settings, view_of) + citation_findings(
        citations, bib_files, results, settings
    )
