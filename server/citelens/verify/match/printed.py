"""References read from a PDF: what the print itself says, read by the verdict.

A printed reference is one string; the fields read from it (``documents/pdf/fields.py``)
may be cut or shifted (a title broken at a page, a name split by a hyphen, a venue read
into the title). The verdict (:func:`citelens.verify.verdict.decide`, the one writer of a
``Verification``) reads the string as printed besides the fields (``EntryView.printed``),
with these pure functions; the plan asks for it too (Crossref's ``query.bibliographic`` on
the whole string, the snapshot's title index: ``verify/plan.py``, ``verify/snapshot.py``):

- a candidate is **confirmed** (:func:`confirms`) when its title (or any version's; a
  subtitle may be left out), the family names of its first authors (the first alone when
  the print says "et al.") and its year (any version's) all appear in the printed string,
  compared as letters and digits only, accents folded: it is the entry's paper, whatever
  title was read, so a reference without a title read is still checked;
- a discrepancy whose true value (the paper's title, authors, year, venue, DOI, arXiv id)
  is in the printed string is the reader's slip (:func:`slips`): information, "as read
  from the PDF"; a verdict whose every warning is such a slip is VERIFIED;
- a reference whose fields were not read with confidence and that no candidate confirms is
  "could not read", with its printed text (:func:`unread_summary`), never NOT_FOUND;
- anything else stands: a title no candidate has, authors or a year the print gets wrong,
  a DOI that names another paper are the author's, as for a .bib.
"""

from __future__ import annotations

import dataclasses
import html
import re
import unicodedata
from collections.abc import Sequence

from citelens.core.accents import strip_accents
from citelens.core.fields import Field
from citelens.core.latextext import to_unicode
from citelens.core.model import EntryView, PrintedReference
from citelens.core.severity import Severity
from citelens.core.titles import MARKUP_TAG
from citelens.documents.pdf.hyphens import one_reading
from citelens.documents.pdf.read import anchored_view
from citelens.sources.records import PaperRecord
from citelens.verify.match.authors import record_authors_cut
from citelens.verify.match.discrepancy import Discrepancy, Kind, source_of

AS_READ = "as read from the PDF"
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_PREPRINT = re.compile(r"\barxiv\b|\bcorr\b|\bpreprint\b", re.IGNORECASE)
#: A DOI, a URL or an arXiv identifier in a printed reference (not a venue's name).
_IDENTIFIER_IN_PRINT = re.compile(
    r"(?:doi\s*:?\s*)?\b10\.\d{4,9}/\S+|https?://\S+|\barxiv\s*:\s*[\w./-]+|\babs/[\w./-]+", re.IGNORECASE
)
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
    """``text`` lower case, accents folded, "&" spelt "and", compatibility forms read as
    their letters ("ℝ" R, "ﬁ" fi): what :func:`_phrase` searches. A source's title with math
    in it, as LaTeX (``$\\ell_1$``, ``$\\tilde{O}(\\sqrt{T})$``) or MathML, is read as the
    PDF prints it (ℓ1, Õ(√T))."""
    if "<" in text:
        text = html.unescape(MARKUP_TAG.sub(" ", text))
    if "$" in text or "\\" in text:
        text = to_unicode(text)
    text = _GREEK.sub(" ", strip_accents(unicodedata.normalize("NFKC", text)))
    return text.lower().replace("&", " and ")


#: Greek letters do not count (pdflatex leaves out one set as text: "the arχiv" prints "the
#: ariv"; a source may write one as ``$\\beta$`` or as "β").
_GREEK = re.compile("[\u0370-\u03ff\u1f00-\u1fff]")


def phrase(title: str, text: str) -> bool:
    """Whether ``title`` is a field of the folded printed ``text`` (:func:`folded`): its
    letters and digits in order, at a field's boundaries (:func:`_phrase_at`)."""
    return _phrase(title, text, whole=True)


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


def _folded_map(raw: str) -> tuple[str, list[int]]:
    """``folded(raw)`` and, for each of its characters, the index in ``raw`` it comes from."""
    out: list[str] = []
    at: list[int] = []
    for i, ch in enumerate(raw):
        piece = folded(ch)
        out.append(piece)
        at.extend([i] * len(piece))
    return "".join(out), at


def title_span(raw: str, title: str) -> tuple[int, int] | None:
    """Where ``title`` is printed in ``raw`` as a field of it (:func:`phrase`): (start, end)
    of the title's first and past its last letter or digit, indices into ``raw``."""
    chars = compact(title)
    if len(chars) < 8:
        return None
    text, at = _folded_map(raw)
    body = r"[\W_]*".join(map(re.escape, chars))
    m = re.search(rf"(?:^|[^\w\s]\s*|\s[^\w\s]+\s*)({body})(?=\s*(?:$|[^\w\s]))", text)
    if m is None:
        return None
    return at[m.start(1)], at[m.end(1) - 1] + 1


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
    # each printed name holds one of the paper's family names ("H. C. Robitaille" between two
    # of its authors is an author added, however its letters match the paper's initials)
    families = {compact(family_of(a)) for r in paper for a in r.authors} - {""}
    for chunk in re.split(r",|;|\band\b|&", text[:start]):
        words = [compact(w) for w in _NAME_WORD.findall(chunk)]
        words = [w for w in words if len(w) > 2 and w not in _NOT_NAMES]
        if words and families and not any(w in f or f in w for w in words for f in families):
            return False
    return True


def _authors_printed(record: PaperRecord, raw: str, text: str) -> bool:
    families = [f for f in map(family_of, record.authors) if compact(f)]
    if not families:
        return True  # nothing to compare: the title and the year decide
    cut = _ET_AL.search(raw)
    needed = families[: min(3, _names_before(raw[: cut.start()]))] if cut else families[:3]
    return all(
        _phrase(f, text, whole=False) or _phrase(_without_particles(f), text, whole=False) for f in needed
    )


def _without_particles(family: str) -> str:
    """A family name without its particles ("Van den Bossche": "Bossche"), which styles
    print, drop or move ("den Bossche, J.V.", "Maaten, L. van der")."""
    words = family.split()
    while len(words) > 1 and words[0].lower() in _PARTICLES:
        words = words[1:]
    return " ".join(words)


_INITIALS_ONLY = re.compile(r"(?:[A-Z][a-z]?\.?[\s-]*)+")


def _names_before(text: str) -> int:
    """How many names a printed author list holds before its "et al." (at least one):
    ``P. Virtanen, R. Gommers`` and ``Virtanen, P., Gommers, R.`` hold two."""
    parts = [p.strip() for p in re.split(r",|\band\b|&", text) if p.strip()]
    return max(1, sum(1 for p in parts if not _INITIALS_ONLY.fullmatch(p)))


_YEAR = re.compile(r"(?<![\d/.:-])((?:1[89]|20)\d\d)[a-z]?(?![\d/])")
#: APA's "(2021)." after the names: a year in parentheses that ends a field (not "… E 84,
#: 031927 (2011)]" inside a title).
_BRACKETED = re.compile(r"\[[^\[\]]*\]")
_PAREN_YEAR = re.compile(r"\(\s*((?:1[89]|20)\d\d)[a-z]?\s*\)(?=\s*(?:[.,:;]|$))")


def printed_years(raw: str, titles: Sequence[str] = ()) -> set[int]:
    """The reference's own year as printed: in parentheses after the authors (APA), else the
    last year in the string (not "the 2021 Conference" in a venue's name); a year inside one
    of ``titles`` where the print has it is the title's ("Publisher's Note: … (2011)")."""
    spans = [sp for t in titles if (sp := title_span(raw, t)) is not None]
    if spans:
        start, end = max(spans, key=lambda sp: sp[1] - sp[0])
        raw = raw[:start] + " " + raw[end:]
    raw = _BRACKETED.sub(" ", raw)  # "[Phys. Rev. E 84, 031927 (2011)]": a note's year, not the reference's
    paren = {int(y) for y in _PAREN_YEAR.findall(raw)}
    if paren:
        return paren
    years = _YEAR.findall(raw)
    return {int(years[-1])} if years else set()


def _year_printed(records: list[PaperRecord], raw: str, titles: Sequence[str] = ()) -> bool:
    # a year either side: a paper's online and print years differ (Crossref's issued is often
    # the online one); no year printed: none contradicts
    years = {r.year + d for r in records if r.year for d in (-1, 0, 1)}
    printed = printed_years(raw, [*titles, *(r.title for r in records if r.title)])
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


def _true_value_printed(d: Discrepancy, paper: list[PaperRecord], raw: str, title_read: str = "") -> bool:
    """Whether the paper's own value of what ``d`` is about is in the printed string: then
    the difference is the reader's, not the author's. A year inside the title (the title
    read, or the paper's) is not the reference's year."""
    printed = folded(raw)
    if d.field == Field.TITLE:
        return any(_title_printed(r, printed) for r in paper)
    if d.field == Field.AUTHORS:
        return _authors_printed(paper[0], raw, printed) and _authors_block_agrees(paper, raw, printed)
    if d.field == Field.YEAR:
        return _year_printed(paper, raw, [title_read] if title_read else ())
    if d.field == Field.VENUE:
        # an identifier names no venue: "10.48550/arXiv.1811.12611" does not print the
        # venue "arXiv" ("In CVPR, 2008. doi: 10.48550/arXiv.0704.10243" cites a preprint as
        # published)
        venue_words = _IDENTIFIER_IN_PRINT.sub(" ", raw)
        names = [v for r in paper for v in (r.venue, *r.venue_alternates) if v]
        if any(len(compact(v)) >= 4 and _phrase(v, folded(venue_words), whole=False) for v in names):
            return True
        # printed as a preprint ("arXiv preprint arXiv:…", "CoRR"), and the paper has one
        return _PREPRINT.search(venue_words) is not None and any(r.arxiv_id or r.is_preprint for r in paper)
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


def names_paper(printed: PrintedReference, paper: Sequence[PaperRecord]) -> bool:
    """Whether the print names the paper whose records are ``paper`` (its best record
    first): its title, first authors and year are printed (:func:`confirms`), or, for the
    paper a printed identifier names, its title starts a field of the print and its first
    authors and year are printed. Then an identifier read from the print is the paper's,
    whatever title the reader made of the rest."""
    records = list(paper)
    return confirms(printed.text, records) or _identified_and_printed(printed.text, records)


def slips(
    printed: PrintedReference,
    paper: Sequence[PaperRecord],
    ds: Sequence[Discrepancy],
    *,
    misread: bool = False,
) -> list[Discrepancy]:
    """The discrepancies between the fields read and the paper, each warning whose true value
    (the paper's title, authors, year, venue, identifier) is in the printed string made the
    reader's slip: information, "as read from the PDF". Only for a paper the print names
    (:func:`confirms`: its whole title, a source's title cut short is not enough, since a
    near-miss title goes on from a real one's first words); what the print itself gets
    wrong stays the author's. ``misread``: the title read is not the paper's, so the venue
    and the names read beside it are the reader's too (the paper's first authors and year
    are in the print); identifiers are still judged on the print."""
    records = list(paper)
    raw = printed.text
    if not any(_serious(d) for d in ds) or not confirms(raw, records):
        return list(ds)

    def slip(d: Discrepancy) -> bool:
        if misread and d.field in (Field.VENUE, Field.AUTHORS):
            return True
        return _true_value_printed(d, records, raw, printed.title.replace("\u00ad", ""))

    return [_as_read(d) if _serious(d) and slip(d) else d for d in ds]


#: APA's ". . ." between the first authors and the last one.
_ELIDED = re.compile(r"(?<!\w)(?:\.\s*){3}|…")


def elided_last_author(printed: PrintedReference, paper: Sequence[PaperRecord]) -> list[Discrepancy]:
    """APA's "First, A., Second, B., . . . Last, Z. (2021).": the names read stop at the
    ". . ." (the last one is not the next author), and the one after it is the paper's last
    author; a warning when a source that has the whole list (not cut at a round number)
    has no author of that name. Nothing when no source has the whole list."""
    m = _ELIDED.search(printed.text)
    if m is None:
        return []
    name = re.match(r"\s*([^\W\d_][\w'’\- ]*?),", printed.text[m.end() :])
    if name is None:
        return []
    last = compact(name.group(1))
    whole = [r for r in paper if r.authors and not record_authors_cut(r, len(r.authors) + 1)]
    if not whole or not last or any(last == compact(family_of(a)) for r in whole for a in r.authors):
        return []
    rec = whole[0]
    src = source_of(rec)
    return [
        Discrepancy(
            Field.AUTHORS,
            Kind.AUTHORS,
            Severity.WARNING,
            f"authors: {name.group(1)} (printed last, after “. . .”) is not an author of this paper in "
            f"{src} (whose last author is {family_of(rec.authors[-1])})",
            name.group(1),
            "; ".join(family_of(a) for a in rec.authors),
            rec.source,
        )
    ]


def anchored(view: EntryView, paper: Sequence[PaperRecord]) -> EntryView | None:
    """``view`` (a reference read from a PDF) read again around the title of the paper whose
    records are ``paper``, when the print names that paper (:func:`confirms`) but the title
    read is not its title: a name, a venue or half a title was read as the title ("J. D. Mu
    noz", "Angluin's Theorem for Indexed Families of r.e"), so the names, venue and year
    read beside it were cut in the wrong places. The print is then read as the paper's title
    places it (``documents/pdf/read.anchored_view``: the names before it, the venue after
    it), and compared as any entry is: a venue or a year the print gets wrong stays the
    author's. None when the title read is the paper's (or goes on from it: a subtitle a
    source leaves out)."""
    ref = view.printed
    records = list(paper)
    if ref is None or not confirms(ref.text, records):
        return None
    titles = sorted({r.title for r in records if r.title}, key=lambda t: -len(compact(t)))
    mains = [t.split(":")[0] for t in titles if ":" in t and len(compact(t.split(":")[0])) >= 12]
    span = next((sp for t in [*titles, *mains] if (sp := title_span(ref.text, t)) is not None), None)
    if span is None or compact(view.title).startswith(compact(ref.text[span[0] : span[1]])):
        return None
    return anchored_view(view, *span)


def title_reading(printed: PrintedReference, records: Sequence[PaperRecord]) -> str | None:
    """The title read, each hyphen printed at a line end (U+00AD) read as the candidates'
    titles write it: kept when one of them writes the compound with a hyphen or a space
    ("edge-exchangeable", "Monte-Carlo"), dropped when one writes the word whole
    ("gen-eralised": "generalised", "FACTO-RIE": "FACTORIE"); judged against the
    candidates, not a dictionary. Where no candidate writes it either way, the one reading
    (``hyphens.one_reading``). None when the title has no such hyphen."""
    if "\u00ad" not in printed.title:
        return None
    titles = [folded(r.title) for r in records if r.title]

    def one(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        low_l, low_r = folded(left), folded(right)
        if any(f"{low_l}-{low_r}" in t or f"{low_l} {low_r}" in t or f"{low_l}‐{low_r}" in t for t in titles):
            return f"{left}-{right}"
        if any(low_l + low_r in t for t in titles):
            return left + right
        return one_reading(m.group(0))

    return one_reading(_MARKED.sub(one, printed.title))


_MARKED = re.compile(r"(\w+)\u00ad(\w+)")


def unread_summary(printed: PrintedReference) -> str:
    """The verdict's words for a reference whose fields could not be read with confidence
    and that no source confirmed from its printed text: the reader's failure, not the
    author's. The printed text is said, so a person can look."""
    text = one_reading(printed.text)
    shown = text if len(text) <= 300 else text[:299] + "…"
    return (
        "Could not read this reference's title, names and year from the PDF with confidence, "
        f"and no source recognised its printed text: “{shown}” (page {printed.page})"
    )
