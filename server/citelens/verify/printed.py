"""References read from a PDF: a reader's slip is never the author's fault.

A printed reference is one string; the fields read from it (``documents/pdf/fields.py``)
may be cut or shifted (a title broken at a page, a name split by a hyphen, a venue read
into the title). So the verdict the engine reached from those fields is checked once more
against the string as printed:

- candidates: the papers the engine found by the title read (its match, the match's other
  versions, its close candidates), then Crossref's answer to the whole string
  (``query.bibliographic``, :func:`citelens.sources.crossref.search_reference`, cached like
  every lookup);
- a candidate is **confirmed** when its title (or any version's; a subtitle may be left
  out), the family names of its first authors (the first alone when the print says "et
  al.") and its year (any version's) all appear in the printed string, compared as
  letters and digits only, accents folded;
- a confirmed paper turns NOT_FOUND (and an entry with no title read) into VERIFIED; a
  discrepancy whose true value (the paper's title, authors, year, venue, DOI, arXiv id) is
  in the printed string is the reader's slip: information, "as read from the PDF"; a
  verdict whose every warning is such a slip is VERIFIED;
- anything else stands: a title no candidate has, authors or a year the print gets wrong,
  a DOI that names another paper are the author's, as for a .bib.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Mapping

from citelens.core.accents import strip_accents
from citelens.core.fields import Field
from citelens.core.findings import Severity
from citelens.core.settings import Settings
from citelens.snapshot.store import Snapshot, SnapshotError
from citelens.sources import crossref
from citelens.sources.methods import Method
from citelens.sources.records import Outcome, PaperRecord
from citelens.sources.transport import Sources
from citelens.verify import plan
from citelens.verify.cache import VerificationCache, lookup_key
from citelens.verify.status import AuditStep, Discrepancy, Status, Unverified, Verification

AS_READ = "as read from the PDF"
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_PREPRINT = re.compile(r"\barxiv\b|\bcorr\b|\bpreprint\b", re.IGNORECASE)
_ET_AL = re.compile(r"\bet\.?\s*al\b|\bothers\b", re.IGNORECASE)
_SUFFIX = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
_PARTICLES = frozenset({"van", "von", "de", "der", "den", "da", "di", "del", "la", "le", "dos", "du"})


def compact(text: str) -> str:
    """Letters and digits only, lower case, accents folded: how a title or a name is looked
    for in a printed string (line breaks, hyphens, quotes and spacing do not count)."""
    return _NON_ALNUM.sub("", folded(text))


def family_of(display: str) -> str:
    """The family name of a source's display name ("Ashish Vaswani", "P. G. van Dokkum",
    "Vaswani, Ashish")."""
    name = display.strip()
    if "," in name:
        return name.split(",")[0].strip()
    words = [w for w in name.split() if w.lower() not in _SUFFIX]
    if not words:
        return ""
    out = [words[-1]]
    for w in reversed(words[:-1]):
        if w.lower() in _PARTICLES:
            out.insert(0, w)
        else:
            break
    return " ".join(out)


def folded(text: str) -> str:
    """``text`` lower case, accents folded, "&" spelt "and": what :func:`_phrase` searches."""
    return strip_accents(text).lower().replace("&", " and ")


def _phrase(words: str, text: str, *, whole: bool, colon_after: bool = True) -> bool:
    return _phrase_at(words, text, whole=whole, colon_after=colon_after) >= 0


def _phrase_at(words: str, text: str, *, whole: bool, colon_after: bool = True) -> int:
    """Whether the letters and digits of ``words`` appear in order in the folded ``text``,
    anything but letters and digits between them (spaces, hyphens, quotes, a line break),
    starting and ending at a word boundary; ``whole``: at a boundary of a field too (start of
    the text or after punctuation, end of the text or before punctuation), so a title with a
    word added before or after it ("Robust COFFIN: ...", a source's title cut short) is not
    the printed one."""
    chars = compact(words)
    if not chars:
        return -1
    body = r"[\W_]*".join(map(re.escape, chars))
    if whole:
        after = r"[^\w\s]" if colon_after else r"[^\w\s:]"
        pattern = rf"(?:^|[^\w\s]\s*|\s[^\w\s]+\s*)({body})(?=\s*(?:$|{after}))"
    else:
        pattern = rf"(?<![0-9a-z])({body})(?![0-9a-z])"
    m = re.search(pattern, text)
    return m.start(1) if m else -1


#: A notice's word Crossref sometimes gives as the title, the paper's title as its subtitle.
_NOTICE_TITLE = re.compile(r"^\s*(?:erratum|corrigendum|publisher'?s note|correction)\s*:\s*", re.IGNORECASE)


def _title_printed(record: PaperRecord, text: str) -> bool:
    if len(compact(record.title)) >= 8 and _phrase(record.title, text, whole=True):
        return True
    rest = _NOTICE_TITLE.sub("", record.title)
    if rest != record.title and len(compact(rest)) >= 12 and _phrase(rest, text, whole=True):
        return True
    main = record.title.split(":")[0]  # a subtitle left out, not cut: "Main." but not "Main: Other"
    return (
        main != record.title
        and len(compact(main)) >= 12
        and _phrase(main, text, whole=True, colon_after=False)
    )


def _title_start(paper: list[PaperRecord], text: str) -> int:
    """Where the paper's title starts in the printed (folded) string, or -1."""
    for r in paper:
        for t in (r.title, r.title.split(":")[0]):
            if len(compact(t)) >= 8:
                at = _phrase_at(t, text, whole=True)
                if at >= 0:
                    return at
    return -1


_NAME_WORD = re.compile(r"[^\W\d_][\w'’\-]+")
_NOT_NAMES = frozenset({"and", "et", "al", "others", "in", "the", "von", "van", "de", "der"})


def _authors_block_agrees(paper: list[PaperRecord], raw: str, text: str) -> bool:
    """Whether the names printed before the title are the paper's: every word of the author
    block is a word of one of its authors' names (or a given name the paper has only as an
    initial). An author added, swapped in or invented is printed there, and is the author's."""
    start = _title_start(paper, text)
    if start < 0:
        return False
    tokens = {
        compact(w)
        for r in paper
        for a in r.authors
        for w in re.split(r"[\s.\-]+", strip_accents(a).lower())
        if w
    }
    initials = {t[0] for t in tokens if len(t) <= 2}
    for w in _NAME_WORD.findall(text[:start]):
        c = compact(w)
        if len(c) <= 2 or c in _NOT_NAMES or c in tokens:
            continue
        if c[0] in initials and not any(c == compact(family_of(a)) for r in paper for a in r.authors):
            continue  # a given name the paper writes as an initial
        return False
    return True


def _authors_printed(record: PaperRecord, raw: str, text: str) -> bool:
    families = [f for f in map(family_of, record.authors) if compact(f)]
    if not families:
        return True  # nothing to compare: the title and the year decide
    cut = _ET_AL.search(raw)
    needed = families[: min(3, _names_before(raw[: cut.start()]))] if cut else families[:3]
    return all(_phrase(f, text, whole=False) for f in needed)


_INITIALS_ONLY = re.compile(r"(?:[A-Z][a-z]?\.?[\s-]*)+")


def _names_before(text: str) -> int:
    """How many names a printed author list holds before its "et al." (at least one):
    ``P. Virtanen, R. Gommers`` and ``Virtanen, P., Gommers, R.`` hold two."""
    parts = [p.strip() for p in re.split(r",|\band\b|&", text) if p.strip()]
    return max(1, sum(1 for p in parts if not _INITIALS_ONLY.fullmatch(p)))


_YEAR = re.compile(r"(?<![\d/.:-])((?:1[89]|20)\d\d)[a-z]?(?![\d/])")
_PAREN_YEAR = re.compile(r"\(\s*((?:1[89]|20)\d\d)[a-z]?\s*\)")


def printed_years(raw: str) -> set[int]:
    """The reference's own year as printed: in parentheses after the authors (APA), else the
    last year in the string (not "the 2021 Conference" in a venue's name)."""
    paren = {int(y) for y in _PAREN_YEAR.findall(raw)}
    if paren:
        return paren
    years = _YEAR.findall(raw)
    return {int(years[-1])} if years else set()


def _year_printed(records: list[PaperRecord], raw: str) -> bool:
    # a year either side: a paper's online and print years differ (Crossref's issued is often
    # the online one); no year printed: none contradicts
    years = {r.year + d for r in records if r.year for d in (-1, 0, 1)}
    printed = printed_years(raw)
    return not years or not printed or not years.isdisjoint(printed)


def confirms(raw: str, paper: list[PaperRecord]) -> bool:
    """Whether the printed string ``raw`` names the paper whose records are ``paper`` (its
    best record first): a title of it, its first authors' family names and a year of it."""
    if not paper:
        return False
    printed = folded(raw)
    return (
        any(_title_printed(r, printed) for r in paper)
        and _authors_printed(paper[0], raw, printed)
        and _year_printed(paper, raw)
    )


def _identified_and_printed(raw: str, paper: list[PaperRecord]) -> bool:
    """For the paper a printed identifier names: its title starts a field of the print (a
    source may cut a title short: "astroquery: An Astronomical Web-querying"), at least four
    words of it, and its first authors and year are printed."""
    text = folded(raw)
    starts = any(len(r.title.split()) >= 4 and re.search(_field_start(r.title), text) for r in paper)
    return starts and _authors_printed(paper[0], raw, text) and _year_printed(paper, raw)


def _field_start(title: str) -> str:
    body = r"[\W_]*".join(map(re.escape, compact(title)))
    return rf"(?:^|[^\w\s]\s*|\s[^\w\s]+\s*){body}(?![0-9a-z])"


def _true_value_printed(d: Discrepancy, paper: list[PaperRecord], raw: str) -> bool:
    """Whether the paper's own value of what ``d`` is about is in the printed string: then
    the difference is the reader's, not the author's."""
    printed = folded(raw)
    if d.field == Field.TITLE:
        return any(_title_printed(r, printed) for r in paper)
    if d.field == Field.AUTHORS:
        return _authors_printed(paper[0], raw, printed) and _authors_block_agrees(paper, raw, printed)
    if d.field == Field.YEAR:
        return _year_printed(paper, raw)
    if d.field == Field.VENUE:
        names = [v for r in paper for v in (r.venue, *r.venue_alternates) if v]
        if any(len(compact(v)) >= 4 and _phrase(v, printed, whole=False) for v in names):
            return True
        # printed as a preprint ("arXiv preprint arXiv:…", "CoRR"), and the paper has one
        return _PREPRINT.search(raw) is not None and any(r.arxiv_id or r.is_preprint for r in paper)
    if d.field == Field.DOI:
        return any(r.doi and compact(r.doi) in compact(raw) for r in paper)
    if d.field == Field.ARXIV:
        return any(r.arxiv_id and compact(r.arxiv_id) in compact(raw) for r in paper)
    return False


def _as_read(d: Discrepancy) -> Discrepancy:
    return dataclasses.replace(
        d, severity=Severity.INFORMATION, message=f"{d.message} ({AS_READ})", category=""
    )


def _serious(d: Discrepancy) -> bool:
    return d.severity.rank >= Severity.WARNING.rank


def reconcile(
    v: Verification,
    raw: str,
    found: list[PaperRecord],
    step: AuditStep | None = None,
    from_snapshot: frozenset[int] = frozenset(),
) -> Verification:
    """The verdict on a printed reference, from the engine's verdict ``v`` on the fields read
    and ``found`` (the papers the whole string found, best first)."""
    audit = [*v.audit, step] if step is not None else v.audit
    if v.status in (Status.PARTIAL, Status.VERIFIED) and v.match is not None:
        paper = [v.match, *v.versions]
        if not any(_serious(d) for d in v.discrepancies) or not confirms(raw, paper):
            return v
        ds = [
            _as_read(d) if _serious(d) and _true_value_printed(d, paper, raw) else d for d in v.discrepancies
        ]
        if any(_serious(d) for d in ds):
            return dataclasses.replace(v, discrepancies=ds)
        summary = f"{v.summary} (the differences are the PDF reader's: the printed reference has the paper's)"
        return dataclasses.replace(v, status=Status.VERIFIED, discrepancies=ds, summary=summary)
    if v.status is Status.DOI_MISMATCH:
        # the identifier's own paper is the one printed: the title read was the slip
        paper = [r for r in (v.match, *v.versions) if r is not None]
        if paper and (confirms(raw, paper) or _identified_and_printed(raw, paper)):
            return dataclasses.replace(
                v,
                status=Status.VERIFIED,
                summary=f"Verified in {paper[0].source}: the printed identifier names this paper, and its "
                f"title, authors and year are printed ({AS_READ}: the title read from the PDF differed)",
                discrepancies=[_as_read(d) for d in v.discrepancies],
                right_papers=[],
            )
        return v
    undecided = v.status is Status.UNVERIFIED and v.unverified is Unverified.NO_TITLE
    if v.status is not Status.NOT_FOUND and not undecided:
        return v  # UNVERIFIED: a source failed
    for cand in [*v.candidates, *found]:
        if confirms(raw, [cand]):
            return dataclasses.replace(
                v,
                status=Status.VERIFIED,
                summary=f"Verified in {cand.source}: its title, authors and year are printed in the "
                f"reference ({AS_READ}, found by the whole printed reference)",
                match=cand,
                score=1.0,
                method=_method_of(cand, found, from_snapshot, v.method),
                discrepancies=[],
                audit=audit,
                unverified=None,
                informational=False,
            )
    return dataclasses.replace(v, audit=audit) if step is not None else v


async def _reference_search(
    raw: str, sources: Sources, cache: VerificationCache, settings: Settings
) -> tuple[list[PaperRecord], AuditStep | None]:
    key = lookup_key("crossref", "reference", raw)
    hit = cache.get(key)
    cached = hit is not None
    if hit is None:
        if settings.offline:
            return [], None
        hit = await crossref.search_reference(sources.crossref, raw)
        cache.put(key, hit)
    step = AuditStep(Method.CROSSREF_REFERENCE, hit.source, hit.outcome.value, hit.detail, cached)
    return (hit.records if hit.outcome is Outcome.FOUND else []), step


def _cut_short(raw: str, record: PaperRecord) -> bool:
    """A candidate whose title starts a field of the print and goes on there (a source cut it
    short: "Early and Reliable Event Detection" for "... Event Detection Using ..."), with
    its first authors and year printed: worth asking for its full title."""
    text = folded(raw)
    return (
        len(record.title.split()) >= 3
        and re.search(_field_start(record.title), text) is not None
        and _authors_printed(record, raw, text)
        and _year_printed([record], raw)
    )


async def _full_versions(
    raw: str, candidates: list[PaperRecord], sources: Sources, cache: VerificationCache, settings: Settings
) -> list[PaperRecord]:
    """The full records (arXiv by id, else Crossref by DOI) of the candidates a source may
    have cut short (:func:`_cut_short`), at most two, cached like every lookup."""
    out: list[PaperRecord] = []
    for c in [c for c in candidates if _cut_short(raw, c)][:2]:
        if c.arxiv_id:
            tier, value = plan.ARXIV_IDS, c.arxiv_id
        elif c.doi:
            tier, value = (plan.DOI_CSL if plan.is_datacite(c.doi) else plan.CROSSREF_DOI), c.doi
        else:
            continue
        key = lookup_key(tier.source, tier.kind, value)
        hit = cache.get(key)
        if hit is None and not settings.offline:
            hit = (await tier.ask(sources, [value])).get(value)
            if hit is not None:
                cache.put(key, hit)
        if hit is not None and hit.outcome is Outcome.FOUND:
            out.extend(hit.records)
    return out


def _method_of(
    cand: PaperRecord, found: list[PaperRecord], from_snapshot: frozenset[int], default: str
) -> str:
    if not any(cand is f for f in found):
        return default
    return Method.SNAPSHOT_REFERENCE if id(cand) in from_snapshot else Method.CROSSREF_REFERENCE


def _wants_search(v: Verification) -> bool:
    if v.status is Status.NOT_FOUND:
        return True
    return v.status is Status.UNVERIFIED and v.unverified is Unverified.NO_TITLE


def _snapshot_search(snapshot: Snapshot, raw: str) -> list[PaperRecord]:
    """Works of the local snapshot whose title the printed string holds as a field (its
    full-text index over titles, asked with each field that could be the title)."""
    text = folded(raw)

    def score(_query: str, title: str) -> float:
        return 1.0 if len(compact(title)) >= 8 and _phrase(title, text, whole=True) else 0.0

    out: list[PaperRecord] = []
    try:
        for segment in _title_like(raw):
            out.extend(r for _s, r in snapshot.by_title(segment, score, 0.5, 5))
            if out:
                break
    except SnapshotError:
        return []
    return out


_FIELD_BREAK = re.compile(r"[“”\"]|(?<=[a-z0-9)?])[.?]\s+(?=[A-Z0-9“\"])|\(\s*(?:1[89]|20)\d\d[a-z]?\s*\)\.?")


def _title_like(raw: str) -> list[str]:
    """The fields of a printed reference that could be its title (between quotes, full stops
    or the year in parentheses; three words or more), longest first, at most four."""
    parts = [p.strip(" ,.;:") for p in _FIELD_BREAK.split(raw)]
    fields = [p for p in parts if 3 <= len(p.split()) <= 60]
    return sorted(fields, key=len, reverse=True)[:4]


async def confirm_printed(
    raws: Mapping[str, str],
    verdicts: Mapping[str, Verification],
    sources: Sources,
    cache: VerificationCache,
    settings: Settings,
    snapshot: Snapshot | None = None,
) -> dict[str, Verification]:
    """``verdicts`` with each printed reference's (``raws``: key -> the reference as printed)
    reconciled with its printed string (:func:`reconcile`)."""
    out = dict(verdicts)

    async def one(key: str, raw: str, v: Verification) -> None:
        found: list[PaperRecord] = []
        local: frozenset[int] = frozenset()
        step = None
        if _wants_search(v) and not any(confirms(raw, [c]) for c in v.candidates):
            if snapshot is not None:
                found = await asyncio.to_thread(_snapshot_search, snapshot, raw)
                local = frozenset(id(r) for r in found)
            if not any(confirms(raw, [c]) for c in found):
                more, step = await _reference_search(raw, sources, cache, settings)
                found += more
            if not any(confirms(raw, [c]) for c in found):
                found += await _full_versions(raw, [*v.candidates, *found], sources, cache, settings)
        out[key] = reconcile(v, raw, found, step, local)

    # the host client paces the requests (Crossref's rate and concurrency)
    await asyncio.gather(
        *(one(k, raw, v) for k, raw in raws.items() if raw and (v := verdicts.get(k)) is not None)
    )
    return out
