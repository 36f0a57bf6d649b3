"""Comparing a bibliography entry with the scholarly records of a paper.

* :func:`title_similarity` scores two titles 0..1. Case, punctuation, LaTeX
  braces, accents and British/American spellings do not count; a subtitle on
  one side only still scores as the same paper; but a content word changed,
  added or dropped keeps the score below the "verified" threshold.
* :func:`best_candidate` picks the record a title search most likely meant.
* :func:`compare` lists what the entry gets wrong against all versions of a
  paper (Semantic Scholar, Crossref, OpenAlex, arXiv...), using their spread
  as tolerance: an arXiv year one off, a venue abbreviation, initials for first
  names, "and others" are not discrepancies.
* :func:`identifier_conflict` tells that an identifier resolved to another paper.
"""

from __future__ import annotations

import datetime
import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from citelens.core.findings import Severity
from citelens.core.model import EntryView, Name
from citelens.core.normalize import normalize_arxiv, normalize_doi
from citelens.core.settings import Settings
from citelens.core.source_names import source_name
from citelens.core.titles import normalize_title, words
from citelens.sources.records import PaperRecord
from citelens.verify.coverage import INFORMATIONAL_TYPES
from citelens.verify.match.venues import is_preprint_venue, same_venue

_DEFAULTS = Settings()
CANDIDATE_THRESHOLD: float = _DEFAULTS.title_candidate_threshold
VERIFIED_THRESHOLD: float = _DEFAULTS.title_verified_threshold

_SEVERITY_RANK = {Severity.HINT: 0, Severity.INFORMATION: 1, Severity.WARNING: 2, Severity.ERROR: 3}

# --------------------------------------------------------------------------- text normalisation

_SUBTITLE = re.compile(r"\s*(?::|\s[-\u2013\u2014]{1,3}\s|\u2014|[.?!]\s)\s*")
# what every _SUBTITLE match contains, found without trying a match at every position:
# most titles have none (a quick no for each title of a big library)
_SUBTITLE_HINT = re.compile(r"[:.?!\u2014]|\s[-\u2013]")

STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "of",
        "for",
        "and",
        "in",
        "on",
        "with",
        "to",
        "by",
        "from",
        "via",
        "at",
        "as",
        "is",
        "are",
        "its",
        "into",
        "or",
        "using",
        "based",
        "toward",
        "towards",
        "we",
        "do",
        "be",
        "it",
        "this",
        "that",
        "their",
        "our",
        "can",
        "how",
        "what",
        "when",
        "why",
    }
)

SEQUEL_TOKEN = re.compile(r"^(i{1,3}|iv|v|vi{1,3}|ix|x|\d{1,2}|[a-h])$")


def stem(token: str) -> str:
    """Plural folding: 'networks' = 'network', 'studies' = 'study'."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


@lru_cache(maxsize=65536)
def title_tokens(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in normalize_title(text).split())


def split_subtitle(text: str) -> tuple[str, str] | None:
    if _SUBTITLE_HINT.search(text) is None:
        return None
    m = _SUBTITLE.search(text.strip())
    if m is None or m.start() == 0:
        return None
    return text[: m.start()], text[m.end() :]


# --------------------------------------------------------------------------- title similarity


def is_typo(a: str, b: str) -> bool:
    """Two tokens that are one misspelling apart (not a negation or a number)."""
    if abs(len(a) - len(b)) > 2 or min(len(a), len(b)) < 5 or a.isdigit() or b.isdigit():
        return False
    if a.endswith(b) or b.endswith(a):  # "supervised"/"unsupervised", "linear"/"nonlinear"
        return False
    limit = 2 if min(len(a), len(b)) >= 9 else 1
    return Levenshtein.distance(a, b, score_cutoff=limit) <= limit


@dataclass(frozen=True, slots=True)
class TokenDiff:
    only_a: tuple[str, ...]  # content tokens of a not in b
    only_b: tuple[str, ...]
    dice: float  # weighted Dice overlap (content words weigh 1, stopwords 0.2)


def token_diff(ta: Sequence[str], tb: Sequence[str]) -> TokenDiff:
    ca, cb = Counter(ta), Counter(tb)
    common = ca & cb
    left, right = ca - common, cb - common
    # pair leftover tokens that are typos of each other
    for a in list(left):
        for b in list(right):
            if right[b] and left[a] and is_typo(a, b):
                n = min(left[a], right[b])
                left[a] -= n
                right[b] -= n
                common[a] += n

    def weight(c: Counter[str]) -> float:
        return sum((0.2 if t in STOPWORDS else 1.0) * n for t, n in c.items() if n > 0)

    total = weight(ca) + weight(cb)
    dice = 2 * weight(common) / total if total else 0.0
    only_a = tuple(t for t, n in left.items() for _ in range(n) if t not in STOPWORDS)
    only_b = tuple(t for t, n in right.items() for _ in range(n) if t not in STOPWORDS)
    return TokenDiff(only_a, only_b, dice)


def _token_similarity(ta: Sequence[str], tb: Sequence[str]) -> float:
    if not ta or not tb:
        return 0.0
    if ta == tb:
        return 1.0
    diff = token_diff(ta, tb)
    chars = fuzz.ratio(" ".join(ta), " ".join(tb)) / 100.0
    score = 0.5 * diff.dice + 0.5 * chars
    changed = max(len(diff.only_a), len(diff.only_b))
    if changed == 0:
        return max(score, 0.95)  # same content words; only stopwords or order differ
    # a changed content word is decisive: never "verified"
    return min(score, 0.89 - 0.06 * (changed - 1))


def _content_count(tokens: Sequence[str]) -> int:
    return sum(1 for t in tokens if t not in STOPWORDS)


def _cut_off(short: Sequence[str], long: Sequence[str]) -> bool:
    """``short`` is ``long`` cut off by an index: its first words (the last one possibly
    cut mid-word), enough of them to name a paper."""
    n = len(short)
    if n < 3 or n >= len(long) or _content_count(short) < 2 or len(" ".join(short)) < 12:
        return False
    return list(short[:-1]) == list(long[: n - 1]) and long[n - 1].startswith(short[-1])


def title_cut_off(cited: str, record: PaperRecord) -> bool:
    """The record's title is the cited title cut off by its index (it says so, or it is
    the cited title's first words): it can neither confirm nor contradict the words after."""
    if record.title_truncated:
        return True
    return _cut_off(title_tokens(record.title or ""), title_tokens(cited))


def record_title_similarity(cited: str, record: str) -> float:
    """:func:`title_similarity` of an entry's title and a source's: also tolerant of the
    record's title cut off by its index, and of words spaced differently ("pre-trained",
    MathML's "H 2" for "H$_2$")."""
    score = title_similarity(cited, record)
    if score >= 0.97:
        return score
    ta, tb = title_tokens(cited), title_tokens(record)
    if ta and tb and "".join(ta) == "".join(tb):
        return 0.97
    if _cut_off(tb, ta):
        return max(score, 0.93)
    return score


def title_similarity(a: str, b: str) -> float:
    """Similarity 0..1 of two titles, tolerant of subtitles present on one side only."""
    ta, tb = title_tokens(a), title_tokens(b)
    best = _token_similarity(ta, tb)
    if best >= 0.95:
        return best
    for one, other_tokens in ((a, tb), (b, ta)):
        parts = split_subtitle(one)
        if parts is None:
            continue
        for part in parts:
            tp = title_tokens(part)
            if _content_count(tp) < 2 or len(" ".join(tp)) < 12:
                continue  # "BERT" alone does not identify "BERT: Pre-training of ..."
            if _token_similarity(tp, other_tokens) >= 0.95:
                best = max(best, 0.93)
    return best


def title_word_changes(a: str, b: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Content words of title ``a`` missing from ``b`` and of ``b`` missing from ``a``."""
    d = token_diff(title_tokens(a), title_tokens(b))
    return d.only_a, d.only_b


def sequel_conflict(a: str, b: str) -> bool:
    """True for "Part I"/"Part II" style pairs: the only difference is a sequel number."""
    d = token_diff(title_tokens(a), title_tokens(b))
    changed = d.only_a + d.only_b
    return bool(changed) and all(SEQUEL_TOKEN.match(t) for t in changed)


# --------------------------------------------------------------------------- title words

#: Words whose presence or absence never makes another title ("and" is often "&").
_IGNORED_WORDS = frozenset({"a", "an", "the", "and"})
#: Spellings of one word: numerals written out, "towards"/"toward".
_SAME_WORD = {
    "towards": "toward",
    "amongst": "among",
    "whilst": "while",
    "versus": "vs",
    **{
        w: str(i)
        for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
    },
    "first": "1st",
    "second": "2nd",
    "third": "3rd",
    "fourth": "4th",
    "fifth": "5th",
}


def _word_key(token: str) -> str:
    if len(token) == 1 and not token.isascii():
        name = unicodedata.name(token, "")
        if name.startswith("GREEK"):  # "α" in one source, "alpha" in another
            return name.split()[-1].lower()
    return _SAME_WORD.get(token, token)


@lru_cache(maxsize=16384)
def _title_words(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(comparison keys, words as written) of a title, without articles and "and"."""
    shown = [t for t in normalize_title(text).split() if t not in _IGNORED_WORDS]
    return tuple(_word_key(t) for t in shown), tuple(shown)


def title_word_diff(cited: str, paper: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The words of ``cited`` substituted, inserted or dropped against ``paper``: (cited's
    words, the paper's words), both empty when the titles say the same. Not differences:
    case, punctuation, accents, LaTeX and markup, British/American spelling, hyphenation
    ("pre-trained" = "pretrained"), numerals written out, articles, "and"/"&", a
    misspelling, and a preposition inserted or dropped (a substituted one is a difference:
    "towards" for "for"). A singular for a plural is a difference."""
    _ka, wa = _title_words(cited)
    _kb, wb = _title_words(paper)
    only_a: list[str] = []
    only_b: list[str] = []
    for i1, i2, j1, j2 in _word_changes(cited, paper):
        only_a += wa[i1:i2]
        only_b += wb[j1:j2]
    return tuple(only_a), tuple(only_b)


def _word_changes(cited: str, paper: str) -> list[tuple[int, int, int, int]]:
    """The word ranges (cited start, end, paper start, end) that differ, in the words of
    :func:`_title_words`; see :func:`title_word_diff`."""
    ka, kb = _title_words(cited)[0], _title_words(paper)[0]
    if ka == kb:
        return []
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=ka, b=kb, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        sa, sb = ka[i1:i2], kb[j1:j2]
        if "".join(sa) == "".join(sb):
            continue  # hyphenation, spacing
        if len(sa) == 1 and len(sb) == 1 and is_typo(sa[0], sb[0]) and stem(sa[0]) != stem(sb[0]):
            continue  # a misspelling; a singular for a plural is not one
        if (not sa and all(t in STOPWORDS for t in sb)) or (not sb and all(t in STOPWORDS for t in sa)):
            continue
        out.append((i1, i2, j1, j2))
    return out


def _cut_short(cited: str, paper: str, truncated: bool) -> bool:
    """``paper`` is ``cited`` cut off by an index: its words are the start of the cited
    title (the last one possibly cut mid-word), two words or more short of it, or marked
    as cut by its source."""
    a, b = _title_words(cited)[0], _title_words(paper)[0]
    if len(b) < 3 or len(b) >= len(a):
        return False
    if list(a[: len(b) - 1]) != list(b[:-1]) or not a[len(b) - 1].startswith(b[-1]):
        return False
    return truncated or len(a) - len(b) >= 2


def _title_pairs(cited: str, paper: str) -> list[tuple[str, str]]:
    """The readings of (cited, paper) that may agree: as they are; the cited title without
    the paper's subtitle (a dropped subtitle); the paper's title without the cited one's
    (a subtitle the source keeps apart)."""
    pairs = [(cited, paper)]
    parts = split_subtitle(paper)
    if parts is not None:
        # "BERT: Pre-training of ..." cited without the acronym, or without the subtitle
        pairs += [(cited, p) for p in parts if _content_count(title_tokens(p)) >= 2]
    parts = split_subtitle(cited)
    if parts is not None:
        pairs += [(p, paper) for p in parts if _content_count(title_tokens(p)) >= 2]
    return pairs


def title_words_changed(
    cited: str, versions: Sequence[PaperRecord]
) -> tuple[PaperRecord, tuple[str, ...], tuple[str, ...]] | None:
    """The version of the paper whose title ``cited`` differs from by the fewest words, and
    those words; None when the cited title agrees with some version (every version counts:
    the arXiv title, the published one, a conference and a journal version).

    A title an index cut off says nothing about the words it lacks: it confirms the cited
    words it has (then a preprint's other wording there is no difference), and while the
    published title is known only cut off, a preprint's other words are no evidence."""
    best: tuple[int, PaperRecord, tuple[str, ...], tuple[str, ...]] | None = None
    confirmed = 0  # cited words a cut-off title confirms (it starts with them)
    published_cut = False
    full: list[PaperRecord] = []
    for v in versions:
        if not (v.title or "").strip():
            continue
        if _cut_short(cited, v.title, True):
            confirmed = max(confirmed, len(_title_words(v.title)[0]))
            published_cut = published_cut or not _version_is_preprint(v)
        elif title_cut_off(cited, v):
            # cut off, and not the cited title's first words: the words it has may differ
            covered = len(_title_words(v.title)[0]) - 1  # the last may be cut mid-word
            changes = [c for c in _word_changes(cited, v.title) if c[0] < covered]
            if changes:
                only_a = tuple(w for i1, i2, _j1, _j2 in changes for w in _title_words(cited)[1][i1:i2])
                only_b = tuple(w for _i1, _i2, j1, j2 in changes for w in _title_words(v.title)[1][j1:j2])
                if best is None or len(only_a) + len(only_b) < best[0]:
                    best = (len(only_a) + len(only_b), v, only_a, only_b)
        else:
            full.append(v)
    for v in full:
        for a, b in _title_pairs(cited, v.title):
            if not _word_changes(a, b):
                return None
    for v in full:
        if published_cut and _version_is_preprint(v):
            continue
        changes = _word_changes(cited, v.title)
        if confirmed and all(i1 < confirmed and i2 <= confirmed for i1, i2, _j1, _j2 in changes):
            continue  # where this version differs, a cut-off title has the cited words
        only_a, only_b = title_word_diff(cited, v.title)
        n = 2 * (len(only_a) + len(only_b)) + v.title.isupper()  # the fix offers this title
        if best is None or n < best[0]:
            best = (n, v, only_a, only_b)
    return (best[1], best[2], best[3]) if best else None


def describe_word_changes(only_cited: Sequence[str], only_paper: Sequence[str]) -> str:
    """ "cited: 'towards'; the paper: 'for'" and the like."""
    a, b = " ".join(only_cited), " ".join(only_paper)
    if a and b:
        return f"cited: '{a}'; the paper: '{b}'"
    if a:
        return f"cited: '{a}', which the paper's title does not have"
    return f"the paper's title has '{b}', which the cited title leaves out"


# --------------------------------------------------------------------------- names


def family_key(text: str) -> str:
    """A family name reduced for comparison: no accents, braces, case or punctuation."""
    return " ".join(words(text))


_SUFFIX_WORDS = frozenset({"jr", "sr", "ii", "iii", "iv", "phd", "md"})


def _record_name_tokens(display: str) -> tuple[str, frozenset[str]]:
    """(family key, all name tokens) of a display name: "Ashish Vaswani", "Vaswani, A."."""
    if "," in display:
        last, _, first = display.partition(",")
        fam = family_key(last)
        words = fam.split() + family_key(first).split()
        return fam.split()[-1] if fam else "", frozenset(words)
    words = [w for w in family_key(display).split() if w not in _SUFFIX_WORDS]
    return (words[-1] if words else ""), frozenset(words)


def _entry_family(name: Name) -> list[str]:
    return [w for w in family_key(name.last).split() if w not in _SUFFIX_WORDS]


def _name_matches(entry: Name, rec: tuple[str, frozenset[str]]) -> bool:
    fam = _entry_family(entry)
    if not fam:
        fam = family_key(entry.first).split()[-1:]  # a single-word name parsed as first
        if not fam:
            return False
    rec_family, rec_words = rec
    if fam[-1] == rec_family or all(w in rec_words for w in fam):
        return True
    # a typo in a long family name, or one transliteration letter ("Schroedinger")
    return (
        len(fam[-1]) >= 6
        and len(rec_family) >= 6
        and Levenshtein.distance(fam[-1], rec_family, score_cutoff=1) <= 1
    )


def display_name(name: Name) -> str:
    return " ".join(p for p in (name.von, name.last) if p) or name.first


_PLACEHOLDER_FULL = frozenset(
    {
        "john doe",
        "jane doe",
        "j doe",
        "john q doe",
        "jane q doe",
        "richard roe",
        "anonymous",
        "anon",
        "anonymous author",
        "anonymous authors",
        "author one",
        "author two",
        "author three",
        "first author",
        "second author",
        "third author",
        "firstname lastname",
        "first name last name",
        "first last",
        "name surname",
        "firstname surname",
        "author name",
        "your name",
        "unknown",
        "unknown author",
        "et al",
        "a author",
        "an author",
        "the authors",
        "author",
        "authors",
        "tbd",
        "todo",
        "xxx",
        "foo bar",
        "lastname",
        "surname",
        "a n other",
        "given family",
        "forename surname",
    }
)


def is_placeholder_author(name: Name) -> bool:
    """True for "John Doe", "Anonymous", "Author One", "Firstname Lastname", "et al."."""
    full = family_key(" ".join(p for p in (name.first, name.von, name.last) if p))
    last = family_key(name.last)
    if full in _PLACEHOLDER_FULL or last in {"anonymous", "anon", "lastname", "surname"}:
        return True
    return last in {"author", "doe"} and family_key(name.first) in {"", "a", "j", "john", "jane"}


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """One thing the entry says differently from the scholarly records."""

    field: str  # "title" | "authors" | "year" | "venue" | "doi" | "arxiv" | "pmid"
    kind: str  # see KINDS
    severity: Severity
    message: str  # says exactly what differs, e.g. "year: 2019 in the entry, 2020 in Crossref"
    entry_value: str = ""
    source_value: str = ""
    source: str = ""  # "s2", "crossref", ... ("" when no record was needed)
    #: FABRICATED or WRONG_METADATA ("" = WRONG_METADATA): see :attr:`klass`.
    category: str = ""

    @property
    def klass(self) -> str:
        """``fabricated`` (the reference looks invented: authors badly wrong, a placeholder
        author, an identifier no source knows, a title no record resembles) or
        ``wrong-metadata`` (a real paper cited with a wrong title word, venue, year, pages
        or identifier)."""
        return self.category or WRONG_METADATA

    def to_json(self) -> dict[str, object]:
        return {
            "field": self.field,
            "kind": self.kind,
            "severity": self.severity.value,
            "message": self.message,
            "entry_value": self.entry_value,
            "source_value": self.source_value,
            "source": self.source,
            "class": self.klass,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Discrepancy:
        return cls(
            field=str(data.get("field", "")),
            kind=str(data.get("kind", "")),
            severity=Severity(str(data.get("severity", "information"))),
            message=str(data.get("message", "")),
            entry_value=str(data.get("entry_value", "")),
            source_value=str(data.get("source_value", "")),
            source=str(data.get("source", "")),
            category=FABRICATED if data.get("class") == FABRICATED else "",
        )


#: The two classes of a finding (the NeurIPS 2026 programme-chair criteria): a reference
#: that looks invented, and a real paper cited with wrong details.
FABRICATED = "fabricated"
WRONG_METADATA = "wrong-metadata"

#: Discrepancy kinds.
KINDS = (
    "title",
    "title_words",
    "authors",
    "authors_missing",
    "authors_incomplete",
    "placeholder_author",
    "year",
    "year_future",
    "venue",
    "preprint_status",
    "venue_unpublished",
    "identifier",
)


@dataclass(slots=True)
class Comparison:
    """An entry compared with all versions of one paper."""

    title_score: float
    discrepancies: list[Discrepancy] = field(default_factory=list)
    source: str = ""  # the source of the version whose title matched best

    @property
    def severity(self) -> Severity | None:
        """The most severe discrepancy, or None when the entry agrees with the records."""
        if not self.discrepancies:
            return None
        return max((d.severity for d in self.discrepancies), key=_SEVERITY_RANK.__getitem__)

    @property
    def kinds(self) -> list[str]:
        return list(dict.fromkeys(d.kind for d in self.discrepancies))

    def at_least(self, severity: Severity) -> list[Discrepancy]:
        floor = _SEVERITY_RANK[severity]
        return [d for d in self.discrepancies if _SEVERITY_RANK[d.severity] >= floor]

    def to_json(self) -> dict[str, object]:
        return {
            "title_score": round(self.title_score, 4),
            "source": self.source,
            "discrepancies": [d.to_json() for d in self.discrepancies],
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Comparison:
        raw = data.get("discrepancies") or []
        items = raw if isinstance(raw, list) else []
        score = data.get("title_score", 0.0)
        return cls(
            title_score=float(score) if isinstance(score, int | float | str) else 0.0,
            discrepancies=[Discrepancy.from_json(d) for d in items if isinstance(d, dict)],
            source=str(data.get("source", "")),
        )


# --------------------------------------------------------------------------- candidates


def _year_ok(view: EntryView, record: PaperRecord) -> bool:
    return view.year is None or record.year is None or abs(view.year - record.year) <= 1


def best_candidate(
    view: EntryView,
    records: Iterable[PaperRecord],
    threshold: float = CANDIDATE_THRESHOLD,
    verified: float = VERIFIED_THRESHOLD,
) -> tuple[PaperRecord, float] | None:
    """The record a title search most likely meant, with its title score, or None.

    Among records scoring at least ``threshold``, a verified-level title wins,
    then a year within one of the entry's, then the higher score.
    """
    best: tuple[tuple[bool, bool, float], PaperRecord, float] | None = None
    for rec in records:
        try:
            score = record_title_similarity(view.title, rec.title or "")
        except Exception:  # a bad record never breaks a search
            continue
        if score < threshold:
            continue
        key = (score >= verified, _year_ok(view, rec), score)
        if best is None or key > best[0]:
            best = (key, rec, score)
    return (best[1], best[2]) if best else None


def is_same_paper(
    view: EntryView,
    record: PaperRecord,
    verified: float = VERIFIED_THRESHOLD,
    candidate: float = CANDIDATE_THRESHOLD,
) -> bool:
    """The record describes the entry's paper: a verified-level title, or a candidate-level
    title together with a shared identifier (DOI, arXiv id, PMID or S2 id)."""
    score = record_title_similarity(view.title, record.title or "")
    if score >= verified:
        return True
    return score >= candidate and _shares_identifier(view, record)


def contradicted_fields(view: EntryView, record: PaperRecord, current_year: int | None = None) -> set[str]:
    """``"authors"`` / ``"year"`` where ``record`` contradicts the entry (warning level),
    for every entry type alike: a book's lenient *reporting* does not make another
    paper's record the book's."""
    year_now = current_year if current_year is not None else datetime.date.today().year
    found = _compare_authors(view, [record]) + _compare_year(view, [record], year_now)
    return {d.field for d in found if d.severity is Severity.WARNING}


def is_confident_match(
    view: EntryView,
    record: PaperRecord,
    verified: float = VERIFIED_THRESHOLD,
    candidate: float = CANDIDATE_THRESHOLD,
) -> bool:
    """``record`` is the entry's paper, safe to copy metadata from: a verified-level title;
    or a candidate-level title with a shared identifier, or with authors and year present
    on both sides and neither contradicting the entry."""
    score = record_title_similarity(view.title, record.title or "")
    if score >= verified:
        return True
    if score < candidate:
        return False
    if _shares_identifier(view, record):
        return True
    if not view.authors or not record.authors or view.year is None or record.year is None:
        return False
    return not contradicted_fields(view, record)


def identifier_conflict(view: EntryView, record: PaperRecord, threshold: float = CANDIDATE_THRESHOLD) -> bool:
    """The entry's identifier resolved to ``record`` but its title is another paper's."""
    if not view.title.strip() or not (record.title or "").strip():
        return False
    return record_title_similarity(view.title, record.title) < threshold


_ARXIV_ID = re.compile(
    r"(?:arxiv[:/\s]*(?:abs/)?|abs/|arxiv\.org/(?:abs|pdf)/)\s*"
    r"(\d{4}\.\d{4,5}|[a-z-]+(?:\.[a-z]{2})?/\d{7})(?:v\d+)?",
    re.IGNORECASE,
)


def entry_arxiv_id(view: EntryView) -> str:
    """The arXiv id an entry cites: its eprint field, or one in its venue, DOI or URL."""
    if view.arxiv_id:
        return _arxiv_of(view.arxiv_id)
    doi = _doi_of(view.doi)
    if doi.startswith("10.48550/arxiv."):
        return doi.removeprefix("10.48550/arxiv.")
    for text in (view.venue, view.url or ""):
        m = _ARXIV_ID.search(text or "")
        if m:
            return m.group(1).lower()
    return ""


def _shares_identifier(view: EntryView, rec: PaperRecord) -> bool:
    doi = _doi_of(view.doi)
    ax = entry_arxiv_id(view)
    return bool(
        (doi and doi == _doi_of(rec.doi))
        or (ax and ax == _arxiv_of(rec.arxiv_id))
        or (view.pmid and view.pmid.strip() == (rec.pmid or "").strip())
        or (view.s2_id and view.s2_id == rec.s2_paper_id)
    )


def _doi_of(value: str | None) -> str:
    return normalize_doi(value) or ""


def _arxiv_of(value: str | None) -> str:
    return normalize_arxiv(value) or ""


# --------------------------------------------------------------------------- compare


def _src(rec: PaperRecord) -> str:
    return source_name(rec.source, "the record")


def _list_names(names: Sequence[str], limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _record_family_display(display: str) -> str:
    if "," in display:
        return display.partition(",")[0].strip()
    words = [w for w in display.split() if family_key(w) not in _SUFFIX_WORDS]
    return words[-1] if words else display


#: Lengths at which sources cut author lists without saying so ("stops at ten names").
_LIST_CAPS = frozenset({10, 20, 25, 50, 100})


def record_authors_cut(rec: PaperRecord, cited: int) -> bool:
    """The source's author list is not the whole list: it ended in "et al."/"others", or it
    stops at a round cap while the entry names more authors."""
    return rec.authors_truncated or (len(rec.authors) in _LIST_CAPS and cited > len(rec.authors))


def _author_problems(entry: list[Name], truncated: bool, rec: PaperRecord) -> list[Discrepancy]:
    parsed = [_record_name_tokens(a) for a in rec.authors]
    cut = record_authors_cut(rec, len(entry))
    used: set[int] = set()
    unmatched_entry: list[Name] = []
    for i, name in enumerate(entry):
        order = ([i] if i < len(parsed) else []) + list(range(len(parsed)))
        hit = next((j for j in order if j not in used and _name_matches(name, parsed[j])), None)
        if hit is None:
            if cut and i >= len(parsed):
                continue  # past the end of a list the source cut short
            unmatched_entry.append(name)
        else:
            used.add(hit)
    src = _src(rec)
    entry_names = [display_name(n) for n in entry]
    rec_names = [_record_family_display(a) for a in rec.authors]
    lists = (
        f"entry has {_list_names(entry_names)}{' and others' if truncated else ''}; "
        f"{src} has {_list_names(rec_names)}"
    )
    out: list[Discrepancy] = []
    category = ""
    if unmatched_entry:
        if len(unmatched_entry) * 2 > len(entry) or not used:
            msg = f"authors: {lists}"
            category = FABRICATED  # most of the authors are not this paper's
        else:
            who = ", ".join(display_name(n) for n in unmatched_entry)
            verb = "is not an author" if len(unmatched_entry) == 1 else "are not authors"
            msg = f"authors: {who} {verb} of this paper in {src} ({lists})"
        out.append(
            Discrepancy(
                "authors",
                "authors",
                Severity.WARNING,
                msg,
                "; ".join(entry_names),
                "; ".join(rec_names),
                rec.source,
                category,
            )
        )
    missing = [j for j in range(len(parsed)) if j not in used]
    if used and missing and not unmatched_entry:
        last_used = max(used)
        middle = [j for j in missing if j < last_used]
        if middle and len(parsed) <= 30:
            who = ", ".join(f"{rec_names[j]} ({_ordinal(j + 1)} of {len(parsed)})" for j in middle)
            out.append(
                Discrepancy(
                    "authors",
                    "authors_missing",
                    Severity.WARNING,
                    f"authors: the entry leaves out {who} in {src} ({lists})",
                    "; ".join(entry_names),
                    "; ".join(rec_names),
                    rec.source,
                )
            )
        elif not truncated and not middle and not cut:
            out.append(
                Discrepancy(
                    "authors",
                    "authors_incomplete",
                    Severity.INFORMATION,
                    f"authors: the entry lists {len(used)} of the {len(parsed)} authors in {src} "
                    "without 'and others'",
                    "; ".join(entry_names),
                    "; ".join(rec_names),
                    rec.source,
                )
            )
    return out


def _compare_authors(view: EntryView, versions: Sequence[PaperRecord]) -> list[Discrepancy]:
    entry = [n for n in view.authors if not n.is_others]
    truncated = view.authors_truncated or any(n.is_others for n in view.authors)
    out = [
        Discrepancy(
            "authors",
            "placeholder_author",
            Severity.WARNING,
            f"authors: “{' '.join(p for p in (n.first, n.von, n.last) if p)}” "
            "looks like a placeholder, not a real author",
            " ".join(p for p in (n.first, n.von, n.last) if p),
            category=FABRICATED,
        )
        for n in entry
        if is_placeholder_author(n)
    ]
    if not entry and truncated:  # author = {et al.}: a list with nobody in it
        out.append(
            Discrepancy(
                "authors",
                "placeholder_author",
                Severity.WARNING,
                "authors: only “et al.”, no author is named",
                "et al.",
                category=FABRICATED,
            )
        )
    real = [n for n in entry if not is_placeholder_author(n)]
    with_authors = [v for v in versions if v.authors]
    if not real or not with_authors:
        return out
    # a whole author list is the evidence; lists cut short only when no source has one
    whole = [v for v in with_authors if not record_authors_cut(v, len(real))]
    with_authors = whole or with_authors
    results = [_author_problems(real, truncated, v) for v in with_authors]

    def cost(ds: list[Discrepancy]) -> int:
        return sum(_SEVERITY_RANK[d.severity] for d in ds)

    return out + min(results, key=cost)


def _compare_year(view: EntryView, versions: Sequence[PaperRecord], current_year: int) -> list[Discrepancy]:
    if view.year is None:
        return []
    if view.year > current_year:
        return [
            Discrepancy(
                "year",
                "year_future",
                Severity.WARNING,
                f"year: {view.year} in the entry is in the future",
                str(view.year),
            )
        ]
    dated = [v for v in versions if v.year is not None]
    if not dated:
        return []
    closest = min(dated, key=lambda v: abs((v.year or 0) - view.year))  # type: ignore[operator]
    gap = abs((closest.year or 0) - view.year)
    if gap == 0:
        return []
    others = sorted({(v.year, _src(v)) for v in dated}, key=lambda t: (t[0] or 0, t[1]))
    where = ", ".join(f"{y} in {s}" for y, s in others)
    severity = Severity.INFORMATION if gap == 1 else Severity.WARNING
    return [
        Discrepancy(
            "year",
            "year",
            severity,
            f"year: {view.year} in the entry, {where}",
            str(view.year),
            str(closest.year),
            closest.source,
        )
    ]


def _version_is_preprint(v: PaperRecord) -> bool:
    return v.is_preprint or (bool(v.venue) and is_preprint_venue(v.venue or ""))


#: Venue fields that say the paper is not (yet) published anywhere.
_NOT_YET_PUBLISHED = re.compile(
    r"\b(preprint|submitted|under review|in review|in press|to appear|forthcoming|accepted"
    r"|in preparation|manuscript|working paper|unpublished)\b",
    re.IGNORECASE,
)


def _publisher_doi(doi: str | None) -> bool:
    """A DOI that is not a preprint server's (arXiv 10.48550, Zenodo, bioRxiv/medRxiv's
    10.1101 are preprints or data)."""
    d = _doi_of(doi)
    return bool(d) and not d.startswith(("10.48550/", "10.5281/", "10.1101/", "10.21203/", "10.20944/"))


def _compare_venue(view: EntryView, versions: Sequence[PaperRecord]) -> list[Discrepancy]:
    venue = (view.venue or "").strip()
    if not venue:
        return []
    paper_arxiv = {_arxiv_of(v.arxiv_id) for v in versions if v.arxiv_id}
    cited_arxiv = entry_arxiv_id(view)
    arxiv_conflict = bool(cited_arxiv and paper_arxiv and cited_arxiv not in paper_arxiv)
    published = [v for v in versions if v.venue and not _version_is_preprint(v)]
    if is_preprint_venue(venue):
        if not published:
            return []
        v = published[0]
        sev = Severity.WARNING if arxiv_conflict else Severity.INFORMATION
        msg = f"venue: the entry cites a preprint ({venue}); the paper is published in {v.venue}"
        if arxiv_conflict:
            ids = ", ".join(sorted(paper_arxiv))
            msg += f", and arXiv:{cited_arxiv} is not its arXiv id ({ids})"
        return [
            Discrepancy(
                "venue", "preprint_status", sev, msg + f" ({_src(v)})", venue, v.venue or "", v.source
            )
        ]
    if any(
        same_venue(venue, v.venue or "", v.venue_alternates)
        for v in versions
        if v.venue or v.venue_alternates
    ):
        return []
    if not published:
        pre = [v for v in versions if _version_is_preprint(v)]
        if not (pre or paper_arxiv) or _NOT_YET_PUBLISHED.search(venue):
            return []
        if any(_publisher_doi(v.doi) for v in versions):
            return []  # a DOI of a publisher: a published version exists, venue unknown
        known = f"arXiv:{sorted(paper_arxiv)[0]}" if paper_arxiv else f"a preprint ({pre[0].venue})"
        return [
            Discrepancy(
                "venue",
                "venue_unpublished",
                Severity.WARNING,
                f"venue: no source shows this paper published in {venue}; the sources know it as "
                f"{known} (a paper accepted recently may not be indexed yet)",
                venue,
                known,
                (pre or versions)[0].source,
            )
        ]
    names = list(dict.fromkeys(f"{v.venue} in {_src(v)}" for v in published))
    return [
        Discrepancy(
            "venue",
            "venue",
            Severity.WARNING,
            f"venue: {venue} in the entry; {'; '.join(names[:3])}",
            venue,
            published[0].venue or "",
            published[0].source,
        )
    ]


def _compare_identifiers(view: EntryView, versions: Sequence[PaperRecord]) -> list[Discrepancy]:
    out: list[Discrepancy] = []
    doi = _doi_of(view.doi)
    known = {_doi_of(v.doi): v for v in versions if v.doi}
    arxiv_known = {_arxiv_of(v.arxiv_id) for v in versions if v.arxiv_id}
    if doi and known and doi not in known:
        arxiv_doi = doi.startswith("10.48550/arxiv.") and doi.removeprefix("10.48550/arxiv.") in arxiv_known
        if not arxiv_doi:
            v = next(iter(known.values()))
            out.append(
                Discrepancy(
                    "doi",
                    "identifier",
                    Severity.WARNING,
                    f"doi: {doi} in the entry; {_src(v)} has {_doi_of(v.doi)} for this paper",
                    doi,
                    _doi_of(v.doi),
                    v.source,
                )
            )
    ax = _arxiv_of(view.arxiv_id) if view.arxiv_id else ""
    if ax and arxiv_known and ax not in arxiv_known and not is_preprint_venue(view.venue or ""):
        v = next(v for v in versions if v.arxiv_id)
        out.append(
            Discrepancy(
                "arxiv",
                "identifier",
                Severity.WARNING,
                f"arxiv: {ax} in the entry; {_src(v)} has {_arxiv_of(v.arxiv_id)} for this paper",
                ax,
                _arxiv_of(v.arxiv_id),
                v.source,
            )
        )
    pmids = {(v.pmid or "").strip(): v for v in versions if v.pmid}
    if view.pmid and pmids and view.pmid.strip() not in pmids:
        v = next(iter(pmids.values()))
        out.append(
            Discrepancy(
                "pmid",
                "identifier",
                Severity.WARNING,
                f"pmid: {view.pmid} in the entry; {_src(v)} has {v.pmid} for this paper",
                view.pmid,
                v.pmid or "",
                v.source,
            )
        )
    return out


def _compare_title(
    view: EntryView, versions: Sequence[PaperRecord], verified: float, candidate: float
) -> tuple[float, str, list[Discrepancy]]:
    scored = [(record_title_similarity(view.title, v.title or ""), v) for v in versions if v.title]
    if not scored or not view.title.strip():
        return 0.0, "", []
    score, best = max(scored, key=lambda t: t[0])
    if score >= verified:
        changed = title_words_changed(view.title, versions)
        if changed is None:
            return score, best.source, []
        rec, only_entry, only_rec = changed
        msg = (
            f"title: {describe_word_changes(only_entry, only_rec)} "
            f"(the paper is “{rec.title}” in {_src(rec)})"
        )
        return (
            score,
            best.source,
            [Discrepancy("title", "title_words", Severity.WARNING, msg, view.title, rec.title, rec.source)],
        )
    only_entry, only_rec = title_word_changes(view.title, best.title)
    detail = ""
    if only_entry or only_rec:
        parts = []
        if only_entry:
            parts.append(f"entry has “{' '.join(only_entry)}”")
        if only_rec:
            parts.append(f"{_src(best)} has “{' '.join(only_rec)}”")
        detail = " (" + "; ".join(parts) + ")"
    sev = Severity.WARNING if score >= candidate else Severity.ERROR
    msg = f"title: “{view.title}” in the entry; {_src(best)} has “{best.title}”{detail}"
    category = FABRICATED if sev is Severity.ERROR else ""
    return (
        score,
        best.source,
        [Discrepancy("title", "title", sev, msg, view.title, best.title, best.source, category)],
    )


def compare(
    view: EntryView,
    versions: Sequence[PaperRecord],
    *,
    verified_threshold: float = VERIFIED_THRESHOLD,
    candidate_threshold: float = CANDIDATE_THRESHOLD,
    current_year: int | None = None,
) -> Comparison:
    """Compare an entry with every record describing its paper (one per source/version).

    Placeholder authors and years in the future are reported even without records.
    Entries of informal types (books, theses, reports, software, web pages) get
    information-level discrepancies, except placeholder authors and future years.
    Never raises.
    """
    year_now = current_year if current_year is not None else datetime.date.today().year
    try:
        score, source, found = _compare_title(view, versions, verified_threshold, candidate_threshold)
        found += _compare_authors(view, versions)
        found += _compare_year(view, versions, year_now)
        found += _compare_venue(view, versions)
        found += _compare_identifiers(view, versions)
    except Exception as exc:  # bad input becomes a result, not a crash
        return Comparison(
            0.0,
            [
                Discrepancy(
                    "entry",
                    "error",
                    Severity.INFORMATION,
                    f"could not compare the entry: {type(exc).__name__}",
                )
            ],
        )
    if _is_informal(view):
        # Sources index books, theses and software badly: their disagreements are
        # information. A placeholder author or a year in the future is wrong anywhere.
        found = [d if d.kind in _ALWAYS_WARN else _as_information(d) for d in found]
    return Comparison(score, found, source)


_ALWAYS_WARN = frozenset({"placeholder_author", "year_future"})


def _is_informal(view: EntryView) -> bool:
    t = view.entry_type.lower()
    if t == "misc":
        return bool(view.url)
    return t in INFORMATIONAL_TYPES


def _as_information(d: Discrepancy) -> Discrepancy:
    if _SEVERITY_RANK[d.severity] <= _SEVERITY_RANK[Severity.INFORMATION]:
        return d
    return Discrepancy(
        d.field, d.kind, Severity.INFORMATION, d.message, d.entry_value, d.source_value, d.source
    )
