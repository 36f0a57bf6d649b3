"""Titles compared as a reader would: tokens, subtitles, word changes, cut-off titles.

:func:`title_similarity` scores two titles 0..1. Case, punctuation, LaTeX braces, accents
and British/American spellings do not count; a subtitle on one side only still scores as
the same paper; but a content word changed, added or dropped keeps the score below the
"verified" threshold. :func:`title_words_changed` says which words a cited title changed
against every version of a paper, :func:`title_cut_off` whether an index cut a title off.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from citelens.core.source_names import Source
from citelens.core.titles import normalize_title
from citelens.sources.records import PaperRecord
from citelens.verify.match.venues import is_preprint_record

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


def _maybe_cut(record: PaperRecord, versions: Sequence[PaperRecord]) -> bool:
    """A title that is the cited title's first words may have been cut off by its index,
    unless the paper's title is known to end there: arXiv gives whole titles, and two
    independent sources with the same short title did not both cut it at the same word
    ("Denoising Diffusion Probabilistic Models" cited with "for Image Restoration" added).
    Semantic Scholar and OpenAlex are not independent here: both descend from the
    Microsoft Academic Graph and carry its cut-off titles, so their agreement proves nothing
    (and which of them a run read must not decide the verdict)."""
    if record.title_truncated:
        return True
    if record.source == "arxiv":
        return False
    words = _title_words(record.title or "")[0]
    lineage = _LINEAGE.get(record.source, record.source)
    return not any(
        v is not record
        and _LINEAGE.get(v.source, v.source) != lineage
        and _title_words(v.title or "")[0] == words
        for v in versions
    )


#: Sources whose titles come from one index (their cut-off titles are the same).
_LINEAGE: dict[str, str] = {Source.S2: "mag", Source.OPENALEX: "mag"}


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
        short = _cut_short(cited, v.title, True)
        if short and _maybe_cut(v, versions):
            confirmed = max(confirmed, len(_title_words(v.title)[0]))
            published_cut = published_cut or not is_preprint_record(v)
        elif not short and title_cut_off(cited, v):
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
        if published_cut and is_preprint_record(v):
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
