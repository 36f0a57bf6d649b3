"""The fields of one printed reference: authors, title, year, venue, DOI, arXiv id, URL.

Printed references come in a few shapes, and the reader tries them in this order:

- a quoted title: ``A. Vaswani, N. Shazeer, “Attention is all you need,” in NeurIPS, 2017``
  (IEEE, ACM's numbered styles);
- a year in parentheses after the authors: ``Vaswani, A., Shazeer, N. (2017). Attention is
  all you need. In NeurIPS.`` (APA, apalike, Harvard);
- sentences: ``Ashish Vaswani and Noam Shazeer. Attention is all you need. In NeurIPS,
  2017.`` (plain, alpha, natbib's plainnat, SIAM; LNCS's ``Vaswani, A., Shazeer, N.:
  Title. In: …``): the authors end at the first full stop (or LNCS's colon) that does not
  close an initial;
- the year after the authors, as a sentence of its own: ``Ashish Vaswani and Noam Shazeer.
  2017. Attention is all you need. In NeurIPS.`` (ACL, ACM) or after a comma: ``Vaswani,
  A., Shazeer, N., 2017. Attention is all you need. NeurIPS.`` (Elsevier's harv); the
  title is the sentence after the year;
- commas only: ``D. Helbing, J. Kim, Title words, Venue 12 (1997) 3–9`` (SIAM,
  Elsevier's numbered style).

:attr:`Fields.confident` says whether the reading is one to accuse on: a title of two
words or more that reads like a title, names that read like names, a year. A reference
read without confidence is never called "not found" on its fields (``verify/match/printed.py``:
"could not read", with its printed text). A slip costs nothing worse than a weaker
search: verification confirms a paper by the whole printed string, not by these fields
alone.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from citelens.core.identifiers import ARXIV_IN_PRINT, DOI_IN_PRINT
from citelens.documents.pdf.hyphens import marked, one_reading

_URL = re.compile(r"\b(https?://[^\s<>\"]+)", re.IGNORECASE)
_YEAR = re.compile(r"(?<![\d/.:-])(1[89]\d\d|20\d\d)([a-z])?(?![\d/])")
_PAREN_YEAR = re.compile(r"\(\s*(1[89]\d\d|20\d\d)([a-z])?\s*\)\.?")
_QUOTED = re.compile(r"[“\"]([^”\"]{8,}?)[,.]?[”\"]")
_INITIAL = re.compile(r"(?:^|[\s.\-])[A-Z]$|\.-[a-z]$|(?:^|\s)(?:[A-Z]|Th|Ch|Ph|Sh|Kh|Zh|Ts)$")
_ABBREV = frozenset(
    "et al vs eds ed inc jr sr st dr mr mrs ms prof proc vol no pp univ dept intl conf trans "
    "rev lett phys j comput sci eng".split()
)
_NOT_NAME = re.compile(r"\b(?:In|in|Proceedings|proceedings|Journal|Conference|University|arXiv|vol|pp)\b")
#: A family name as an inverted list prints it; DBLP's number ("0002, J. D.": BibTeX read
#: "Jie Ding 0002" as a family name "0002") stands for one.
_FAMILY_WORD = r"(?:[a-z]{1,3}\s+)*(?:[A-ZÀ-ÞĀ-ž][\w'’\-]*|0\d{3}(?=,))(?:\s+[A-ZÀ-Þ][\w'’\-]+)?"
_INITIALS = r"(?:[A-ZÀ-Þ][a-z]?\.(?:\s*-?\s*[A-ZÀ-Þ][a-z]?\.|-[a-z]\.)*)"
_ITEM = _FAMILY_WORD + r",\s+" + _INITIALS
_TRAILING_YEAR = re.compile(r",?\s*\(?(?:1[89]|20)\d\d[a-z]?\)?\.?\s*$")
_NAME_GOES_ON = re.compile(r"\s*[A-ZÀ-Þ][\w'’\-]+(?:,|\s+and\s+[A-ZÀ-Þ])")
_PARTICLE_WORDS = frozenset(
    "van von de der den da di del della la le dos das du ten ter el al bin y and".split()
)
_PERSON = re.compile(
    r"(?:and\s+)?(?:(?:[A-ZÀ-ÞĀ-ž]\.(?:-?[A-ZÀ-ÞĀ-ž]\.)*|[A-ZÀ-ÞĀ-ž][\w'’\-]*)\s*){0,3}"
    r"(?:(?:(?:van|von|de|der|den|da|di|del|la|le|ten|ter)\s+)*[A-ZÀ-ÞĀ-ž][\w'’\-]+"
    r"(?:\s+[^\W\d_a-zA-Z][\w'’\-]*)?(?:\s+\d{4})?|\d{4})"  # "Oleś ś": an accent set apart
)
#: "Vaswani, A., Shazeer, N., and Polosukhin, I." (ACM, APA, apalike): where it ends.
_INVERTED = re.compile(
    r"^" + _ITEM + r"(?:(?:,\s*(?:and\s+|&\s*)?|\s+and\s+|\s*&\s*)" + _ITEM + r")*"
    r"(?:,?\s*et\s+al\.)?"
)
#: The year as a sentence of its own after the authors: "2021." / "2021a." / ", 2021." / "(2021)."
_YEAR_SENTENCE = re.compile(r"^[,;]?\s*\(?(1[89]\d\d|20\d\d)([a-z])?\)?[.,:](?:\s+|$)")
_TITLE_GOES_ON = re.compile(r",\s*(?!in:|in\s+[A-Z0-9]|and\s+[A-Z]|pp\.|vol\.)[a-z]")
_IN_VENUE = re.compile(r",\s+(?:in:|In:?)\s+(?=[A-Z0-9])")
_SPLIT_NAMES = re.compile(r"\s*(?:,\s*and\s+|\s+and\s+|\s*&\s*|;\s*|,\s*)\s*")


@dataclass(slots=True)
class Fields:
    authors: list[str] = field(default_factory=list)  # as printed: "A. Vaswani", "Vaswani, A."
    families: list[str] = field(default_factory=list)  # "Vaswani"
    authors_cut: bool = False  # "et al." / "and others"
    title: str = ""
    year: int | None = None
    year_label: str = ""  # "2020a"
    venue: str = ""
    doi: str | None = None
    arxiv: str | None = None
    url: str | None = None
    confident: bool = False  # a title, names and a year that read as such (see the module)


def _strip_end(s: str) -> str:
    return s.strip().strip(" ,.;:")


def _identifiers(text: str, out: Fields) -> str:
    """DOI, arXiv id and URL into ``out``; the text without them."""
    m = DOI_IN_PRINT.search(text)
    if m:
        # (harv: "doi:10.48550/arxiv.1905.00245,arXiv:1905.00245": the DOI ends at the comma)
        out.doi = re.sub(r"[.,;:)\]}]+$", "", re.split(r",(?=[A-Za-z]+:)", m.group(1))[0])
    a = ARXIV_IN_PRINT.search(text)
    if a:
        out.arxiv = a.group(1)
    u = _URL.search(text)
    if u:
        out.url = re.sub(r"[.,;:)\]}]+$", "", u.group(1))
    text = _URL.sub(" ", text)
    text = re.sub(r"(?:doi\s*:?\s*)?\b10\.\d{4,9}/\S+", " ", text, flags=re.IGNORECASE)
    text = re.sub(r"\barxiv\s*:\s*[\w./-]*\d", " ", text, flags=re.IGNORECASE)  # "In ECCV. arXiv:0704.10195"
    text = re.sub(r"\b(?:URL|doi|DOI)\s*:?\s*(?=[.,;]|$)", " ", text)
    return " ".join(text.split())


def _sentence_end(text: str, start: int = 0) -> int:
    """The index of the first full stop (followed by a space) at or after ``start`` that does
    not close an initial or an abbreviation; -1 if none."""
    for m in re.finditer(r"[.?!](?=\s|$)", text[start:]):
        i = start + m.start()
        before = text[:i]
        word = re.split(r"[\s(]", before)[-1] if before else ""
        if word.lower() == "al" and before[: -len(word)].rstrip().lower().endswith("et"):
            return i  # "et al." closes an author list
        tail = before[-3:] if len(before) >= 3 else before
        if _INITIAL.search(tail) and len(re.split(r"[.-]", word)[-1]) <= 2:
            continue
        if word.lower().rstrip(".") in _ABBREV:
            continue
        return i
    return -1


#: A user name printed as an author (a software release's contributors: "jnburchett",
#: "marijana777"), among the people's names of the same list.
_HANDLE = re.compile(r"[a-z][a-z0-9_]*\d*[a-z0-9_-]{2,38}")


def _handles_among_names(names: list[str]) -> bool:
    """Whether ``names`` has a real name besides any user names in it."""
    return any(not _HANDLE.fullmatch(n.strip()) for n in names)


def _set_apart(word: str, i: int) -> bool:
    """A lower-case piece after a name's first word that starts with an accented letter: an
    accent set apart by the PDF or the .bib ("Jo ós", "Satarić ć", "Pospíš šil")."""
    return i > 0 and word[:1].isalpha() and not word[:1].isascii()


def _names_look_right(names: list[str]) -> bool:
    """Whether every name read is a name: at most five words, each capitalised (or with a
    capital inside: "vandenBerg"), an initial, a particle or an accented piece set apart; or
    a user name among people's names."""
    for n in names:
        words = [w.strip("()") for w in n.replace(",", " ").split()]  # "Yun (Raymond) Fei"
        if not words or len(words) > 5 or not all(words):
            return False
        if len(words) == 1 and _HANDLE.fullmatch(words[0]):
            continue
        ok = [
            w[0].isupper() or w.isdigit() or w.lower() in _PARTICLE_WORDS or _camel(w) or _set_apart(w, i)
            for i, w in enumerate(words)
        ]
        if not all(ok):
            return False
    return bool(names) and _handles_among_names(names)


def _camel(word: str) -> bool:
    """A name written with a capital inside ("vandenBerg", "deGrasse")."""
    return word[:1].islower() and any(c.isupper() for c in word[1:]) and word.isalpha()


def _comma_style(text: str) -> tuple[int, int] | None:
    """``D. Helbing, J. Kim, and H. Shin, Title words, Venue, 1997`` (SIAM and others: commas
    only): (where the title starts, where it ends), or None."""
    pos = 0
    names = 0
    all_dotted = True  # every name so far has an initial: "Content-Based Citation Recommendations" is no name
    for m in re.finditer(r",\s*(?:and\s+)?|\s+and\s+", text):
        chunk = text[pos : m.start()].strip()
        if names and re.fullmatch(r"et\s*al\.?", chunk):  # "…, T. Reddy, et al., Title, …"
            pos = m.end()
            break
        dotted = "." in chunk
        if names and (_HANDLE.fullmatch(chunk) or _PERSON.fullmatch(chunk)) and _names_go_on(text, pos):
            names += 1  # a user name among the names ("…, N. Crighton, jnburchett, …, and J. Werk, Title")
            pos = m.end()
            continue
        if (
            _PERSON.fullmatch(chunk)
            and (dotted or len(chunk.split()) <= 3)
            and (dotted or len(chunk.split()) >= 2 or names == 0)
            and (dotted or names == 0 or not all_dotted)
        ):
            names += 1
            all_dotted &= dotted
            pos = m.end()
            continue
        break
    if names == 0 or pos >= len(text):
        return None
    end = text.find(",", pos)
    # a title with commas goes on while the next part starts lower case ("On learning,
    # representing, and generalizing a task", "… (FITS), version 3.0")
    while end > pos and _TITLE_GOES_ON.match(text, end):
        nxt = text.find(",", end + 1)
        end = nxt if nxt > 0 else -1
    title_end = end if end > pos else len(text)
    return pos, title_end


def _harv_names(text: str) -> re.Match[str] | None:
    """Elsevier harv's year after an inverted list that a name printed whole interrupts
    ("Gao, Z.K., Anonymous, 2010."), where the names end; None when the list reads as
    :data:`_INVERTED` alone, or what stands before the year is not names."""
    h = _HARV_YEAR.search(text)
    if h is None or h.start() > len(text) * 0.6:
        return None
    inv = _INVERTED.match(text)
    if inv is None or inv.end() >= h.start() - 1:
        return None  # the inverted names reach the year: the usual reading does
    names = _names(text[: h.start()])[0]
    return h if len(names) >= 2 and _names_look_right(names) else None


def _reads_as_name_list(block: str) -> bool:
    """Whether ``block`` is a list of names and nothing else: a part too long for a name (a
    title run into it: "T. Palpanas, First-Year Wilkinson … Parameters, ApJS (2020)") is not
    left out to make it one."""
    parts = [p for p in _SPLIT_NAMES.split(block) if p and p.strip()]
    return all(len(p) < 80 for p in parts) and _names_look_right(_names(block)[0])


def _names_go_on(text: str, pos: int) -> bool:
    """Whether only names (people's or user names) stand between ``pos`` and a last name
    after "and" in a comma-separated list."""
    last = re.compile(r",?\s*and\s+([^,]+),").search(text, pos)
    if last is None or not _PERSON.fullmatch(name := last.group(1).strip()) or "." not in name:
        return False  # the last name after "and" is a person's with an initial ("and J. Werk,")
    chunks = [c.strip() for c in text[pos : last.start()].split(",") if c.strip()]
    return any(_HANDLE.fullmatch(c) for c in chunks) and all(
        _HANDLE.fullmatch(c) or _PERSON.fullmatch(c) for c in chunks
    )


def _names(block: str) -> tuple[list[str], bool]:
    # APA's ". . ." before the last name: names left out, so the one after it is not the
    # next author (it is the last); the list is read as cut there
    apa = re.search(r"[,\s]*(?:(?<!\w)(?:\.\s*){3}|…)", block)
    if apa is not None:
        block = block[: apa.start()]
    block = _strip_end(block)
    cut = apa is not None or bool(re.search(r"\bet\s*al\b|\bothers\b", block, re.IGNORECASE))
    block = re.sub(
        r",?\s*(?:et\s*al\.?|(?:and\s+)?(?:\d+\s+)?others)\s*$", "", block, flags=re.IGNORECASE
    )
    parts = [p.strip() for p in _SPLIT_NAMES.split(block) if p and p.strip()]
    names: list[str] = []
    # "Vaswani, A., Shazeer, N." : a family then its initials, joined back; a name printed
    # whole among them stays one ("…, Eubank, N., maxalbert, Bilogur, A., …", "Gao, Z.K., Anonymous")
    pairs = sum(1 for a, b in itertools.pairwise(parts) if _is_initials(b) and not _is_initials(a))
    inverted = len(parts) >= 2 and (
        (_is_initials(parts[1]) and not _is_initials(parts[0])) or pairs * 3 >= len(parts)
    )  # (or most are pairs: "ejeschke, Lim, P.L., Rajul, Rupak, Tollerud, E., …")
    i = 0
    while inverted and i < len(parts):
        if i + 1 < len(parts) and _is_initials(parts[i + 1]) and not _is_initials(parts[i]):
            names.append(f"{parts[i]}, {parts[i + 1]}")
            i += 2
        else:
            names.append(parts[i])
            i += 1
    if not inverted:
        names = parts
    # DBLP's "Jie Ding 0002": the number left out, unless only initials would be left ("B. D.
    # 0001": BibTeX read the number as the family name, and the .bib compares it so)
    names = [n if _is_initials(m := re.sub(r"\s+\d{4}$", "", n)) else m for n in names]
    return [n for n in names if n and len(n) < 80 and not n.isdigit()], cut


def _is_initials(s: str) -> bool:
    return re.fullmatch(r"(?:(?:[A-Z]\.?|[A-Z][a-z]\.|(?<=-)[a-z]\.?)[\s-]*){1,4}", s.strip()) is not None


def family(name: str) -> str:
    """The family name of a printed name: ``Vaswani, A.`` and ``A. Vaswani`` give Vaswani."""
    name = name.strip()
    if "," in name:
        return name.split(",")[0].strip()
    words = [w for w in name.split() if not _is_initials(w)]
    if not words:
        return name.split()[-1] if name.split() else ""
    particles = _PARTICLE_WORDS - {"and"}
    out = [words[-1]]
    for w in reversed(words[:-1]):
        if w.lower() in particles:
            out.insert(0, w)
        else:
            break
    return " ".join(out)


def _year(text: str, out: Fields) -> None:
    years = list(_YEAR.finditer(text))
    if years:
        y = years[-1]
        out.year, out.year_label = int(y.group(1)), y.group(1) + (y.group(2) or "")


def read_fields(text: str) -> Fields:
    """The fields of one printed reference (its label already removed), read on its one
    reading (``hyphens.one_reading``); the title keeps the marks of the hyphens printed at
    line ends (U+00AD), which the verdict reads against the candidates' titles."""
    out = _read(one_reading(text))
    out.title = marked(out.title, text)
    return out


#: "No date" where a year is printed (ACM's "[n. d.]", APA's "(n.d.)"): no year, no name.
_NO_DATE = re.compile(r"[\[(]\s*n\.\s*d\.\s*[\])]\.?")
#: Elsevier harv's ", 2010. " after the names.
_HARV_YEAR = re.compile(r",\s*((?:1[89]|20)\d\d)([a-z])?\.\s+(?=\S)")


def _read(text: str) -> Fields:
    out = Fields()
    rest = _identifiers(_NO_DATE.sub(" ", text), out)
    q = _QUOTED.search(rest)
    p = _PAREN_YEAR.search(rest)
    before = rest[: q.start()].rstrip() if q else ""
    # IEEE's "Names, “Title,” Venue": names, then a comma (or "et al.,") right before the quote
    quoted = bool(q and before.endswith((",", ":")) and _names_read(_names(before)[0], before))
    if q and quoted:  # (a quote inside a title, "… nonequilibrium “entropic” temperature", is not it)
        authors, out.authors_cut = _names(rest[: q.start()])
        out.authors = authors
        out.title = _strip_end(q.group(1))
        venue = rest[q.end() :]
        _year(venue or rest, out)
        out.venue = _venue(venue)
    elif p and p.start() > 0 and p.start() < len(rest) * 0.6 and not _NOT_NAME.search(rest[: p.start()]):
        out.authors, out.authors_cut = _names(rest[: p.start()])
        out.year, out.year_label = int(p.group(1)), p.group(1) + (p.group(2) or "")
        after = rest[p.end() :].strip()
        end = _sentence_end(after)
        out.title = _strip_end(after[:end] if end > 0 else after)
        out.venue = _venue(after[end + 1 :] if end > 0 else "")
    elif (h := _harv_names(rest)) is not None:  # "Gao, Z.K., Anonymous, 2010. Title. Venue."
        out.authors, out.authors_cut = _names(rest[: h.start()])
        out.year, out.year_label = int(h.group(1)), h.group(1) + (h.group(2) or "")
        after = rest[h.end() :]
        end = _sentence_end(after)
        venue_at = _IN_VENUE.search(after)  # harv: "Title, in: Venue"
        if venue_at is not None and (end < 0 or venue_at.start() < end):
            end = venue_at.start()
        out.title = _strip_end(after[:end] if end > 0 else after)
        out.venue = _venue(after[end + 1 :] if end > 0 else "")
    else:
        inv = _INVERTED.match(rest)
        one = inv is not None and len(re.findall(_ITEM, inv.group(0))) < 2
        if inv and (
            inv.end() >= len(rest) or len(inv.group(0)) <= 4 or (one and _NAME_GOES_ON.match(rest, inv.end()))
        ):
            inv = None  # "Chikashi Arita, P. L. Krapivsky, and ...": given names first after all
        end = inv.end() - 1 if inv else _sentence_end(rest)
        comma = _comma_style(rest)
        if comma is not None and (
            end <= 0 or not _reads_as_name_list(rest[:end]) or not rest[end + 1 :].strip()
        ):
            out.authors, out.authors_cut = _names(rest[: comma[0]])
            out.title = _strip_end(rest[comma[0] : comma[1]])
            out.venue = _venue(rest[comma[1] :])
            end = -1
        elif end > 0:
            out.authors, out.authors_cut = _names(rest[:end])
            after = rest[end + 1 :].strip()
            y = _YEAR_SENTENCE.match(after)
            if y is not None:  # ACL, ACM: "Authors. 2021. Title."; harv: "Authors, 2021. Title."
                out.year, out.year_label = int(y.group(1)), y.group(1) + (y.group(2) or "")
                after = after[y.end() :].strip()
            t_end = _sentence_end(after)
            venue_at = _IN_VENUE.search(after)  # harv: "Title, in: Venue"
            if venue_at is not None and (t_end < 0 or venue_at.start() < t_end):
                t_end = venue_at.start()
            out.title = _strip_end(_TRAILING_YEAR.sub("", after[:t_end] if t_end > 0 else after))
            out.venue = _venue(after[t_end + 1 :] if t_end > 0 else "")
        else:
            out.title = _strip_end(rest)
        if out.year is None:
            _year(rest, out)
    out.title = _strip_end(out.title)
    out.families = [f for f in (family(a) for a in out.authors) if f]
    out.confident = _confident(out, quoted)
    return out


_NOT_TITLE = re.compile(
    r"^(?:in:?\s|proceedings\b|proc\.|journal\b|arxiv\b|et\s+al\b|pp\.|pages\b|vol\.|volume\b)"
    r"|\barxiv preprint\b|\bpp\.\s*\d",
    re.IGNORECASE,
)
#: An unquoted "title" that starts with a year is a year read as the title ("2021. In …").
_YEAR_FIRST = re.compile(r"^(?:1[89]|20)\d\d[a-z]?(?:[.,;:)]|\s*$)")


def _confident(f: Fields, quoted: bool) -> bool:
    """Whether the reading is one to accuse on: a title of two to sixty words (or a quoted
    one of eight letters or more) that does not read as a venue, a year or page numbers nor
    end at a line-end hyphen (the reference was cut), and names that read as names (none
    needed before a quoted title: "et al., “Title,” …")."""
    words = f.title.split()
    if len(words) == 1 and len(words[0].split("-")) >= 3 and sum(c.isalpha() for c in words[0]) >= 12:
        words = words[0].split("-")  # words joined by hyphens: "1989-excavation-report-Madjebebe"
    return (
        (2 <= len(words) <= 60 or (quoted and len(f.title) >= 8 and len(words) <= 60))
        and not f.title.endswith(("-", "\u00ad"))  # a reference cut at a line end
        and _NOT_TITLE.search(f.title) is None
        and (quoted or _YEAR_FIRST.match(f.title) is None)
        and (_names_read(f.authors, "") or ((quoted or f.authors_cut) and not f.authors))
        and not _reads_as_names(f.title)
    )


def _reads_as_names(title: str) -> bool:
    """A "title" that is a list of names ("0001, M.R., Munos, R., Valko, M"): the names were
    cut in the wrong place."""
    m = _INVERTED.match(title)
    return m is not None and len(re.findall(_ITEM, m.group(0))) >= 2


def _names_read(names: list[str], block: str) -> bool:
    """Whether ``names`` read as an author list: each name of one to six words with a
    capitalised one among them (an accent the PDF set apart leaves a lower-case piece:
    "Belić ć", "P loszajczak"); an empty list when ``block`` is only "et al."."""
    if not names:
        return bool(re.fullmatch(r"\s*et\s*al\.?\s*,?\s*", block))
    words = [n.replace(",", " ").split() for n in names]
    return _handles_among_names(names) and all(
        0 < len(w) <= 6 and (any(x[0].isupper() for x in w) or (len(w) == 1 and _HANDLE.fullmatch(w[0])))
        for w in words
    )


def _venue(text: str) -> str:
    text = re.sub(r"^\s*(?:in:?)\s+", "", text.strip(" ,.;:"), flags=re.IGNORECASE)
    text = re.split(r",|\(|\b(?:pages|pp\.|vol\.|volume)\b|(?<=\s)\d+\s*[:(]|\s\d+\s*$", text)[0]
    text = re.sub(r"\s*\b(?:1[89]|20)\d\d[a-z]?$", "", _strip_end(text))  # a year alone is no venue
    return _strip_end(text)[:200] if re.search(r"[^\W\d_]{2}", text) else ""


#: What may stand between the names and the title: a year (ACL "2021.", harv ", 2021.", APA
#: "(2021)."), a colon (LNCS), a label's stray punctuation.
#: The last year in what is printed before the title, and a stop after it.
_HEAD_YEAR = re.compile(
    r"[,.]?\s*\(?\s*(?:1[89]|20)\d\d[a-z]?\s*\)?[.,:]\s*(?=\S*\s*\S)(?!.*\b(?:1[89]|20)\d\d\b)"
)
_HEAD_END = re.compile(r"[\s,.;:]*(?:\(?\s*(?:1[89]|20)\d\d[a-z]?\s*\)?)?[\s,.;:“\"]*$")


def read_around(text: str, start: int, end: int) -> Fields:
    """The fields of a printed reference whose title is known to be ``text[start:end]`` (a
    paper's title found in the print: ``verify/match/printed.anchored``): the names are what
    is printed before it, the venue what follows it, the year the reference's own (not one
    inside the title). Read with confidence: the title is no guess."""
    out = Fields(title=_strip_end(text[start:end]))
    head, tail = one_reading(_NO_DATE.sub(" ", text[:start])), one_reading(text[end:])
    # the year after the names (ACL "2021.", harv ", 2021.", APA "(2021).") ends them: what
    # stands between it and the title is the title's ("Erratum:"), not a name
    y = _HEAD_YEAR.search(head)
    out.authors, out.authors_cut = _names(_HEAD_END.sub("", head[: y.start()] if y else head))
    out.families = [f for f in (family(a) for a in out.authors) if f]
    rest = _identifiers(tail, out)
    out.venue = _venue(rest)
    outside = head + " " + rest
    p = _PAREN_YEAR.search(outside)
    if p is not None:
        out.year, out.year_label = int(p.group(1)), p.group(1) + (p.group(2) or "")
    else:
        _year(outside, out)
    out.confident = True
    return out
