"""Author lists compared: family names, initials, "and others", placeholder authors,
lists an index cut short (:func:`record_authors_cut`), and the author discrepancies of an
entry against every version of its paper.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

from citelens.core.fields import Field
from citelens.core.model import EntryView, Name
from citelens.core.severity import Severity
from citelens.core.titles import words
from citelens.sources.records import PaperRecord
from citelens.verify.match.discrepancy import FABRICATED, Discrepancy, Kind, source_of


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
    hits: list[int] = []  # the record's position of each entry name found, in the entry's order
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
            hits.append(hit)
    src = source_of(rec)
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
                Field.AUTHORS,
                Kind.AUTHORS,
                Severity.WARNING,
                msg,
                "; ".join(entry_names),
                "; ".join(rec_names),
                rec.source,
                category,
            )
        )
    if not unmatched_entry and hits != sorted(hits):
        out.append(
            Discrepancy(
                Field.AUTHORS,
                Kind.AUTHORS_ORDER,
                Severity.INFORMATION,
                f"authors: the paper's authors in another order ({lists})",
                "; ".join(entry_names),
                "; ".join(rec_names),
                rec.source,
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
                    Field.AUTHORS,
                    Kind.AUTHORS_MISSING,
                    Severity.WARNING,
                    f"authors: the entry leaves out {who} in {src} ({lists})",
                    "; ".join(entry_names),
                    "; ".join(rec_names),
                    rec.source,
                )
            )
        elif not truncated and not middle and not cut:
            # A two-author paper cited with its first author alone, without "and others",
            # is a wrong entry (the citation reads as a single-author paper): a warning.
            # Longer lists cut short are style more often than error: information.
            alone = len(parsed) == 2 and len(used) == 1
            out.append(
                Discrepancy(
                    Field.AUTHORS,
                    Kind.AUTHORS_INCOMPLETE,
                    Severity.WARNING if alone else Severity.INFORMATION,
                    f"authors: the entry lists {len(used)} of the {len(parsed)} authors in {src} "
                    "without 'and others'",
                    "; ".join(entry_names),
                    "; ".join(rec_names),
                    rec.source,
                )
            )
    return out


def compare_authors(view: EntryView, versions: Sequence[PaperRecord]) -> list[Discrepancy]:
    entry = [n for n in view.authors if not n.is_others]
    truncated = view.authors_truncated or any(n.is_others for n in view.authors)
    out = [
        Discrepancy(
            Field.AUTHORS,
            Kind.PLACEHOLDER_AUTHOR,
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
                Field.AUTHORS,
                Kind.PLACEHOLDER_AUTHOR,
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
        return sum(d.severity.rank for d in ds)

    return out + min(results, key=cost)
