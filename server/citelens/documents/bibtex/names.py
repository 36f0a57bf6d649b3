"""BibTeX author lists: splitting into names, and names into first/von/last/jr.

The rules are BibTeX's (as in *Tame the BeaST*): names are separated by the
word ``and`` at brace depth 0 (any case, any whitespace around it); a name
has the form ``First von Last``, ``von Last, First`` or ``von Last, Jr,
First``; the *von* part is the run of words that start with a lower-case
letter; a braced group is one word, and counts as upper case unless it starts
with a special character such as ``{\\"o}`` whose case is its letter's.
The parts are converted to Unicode. Nothing here raises.
"""

from __future__ import annotations

import re
from functools import lru_cache

from citelens.core.accents import strip_accents
from citelens.core.latextext import text_mode, to_unicode
from citelens.core.model import Authors, Name

_TRUNCATION = {"others", "et al", "et al.", "etal", "et. al.", "{others}"}
_NON_ALNUM = re.compile(r"[\W_]+")
#: "et al" / "et al." ending a name (matched on the name as written: a lower-cased copy can
#: be longer than the original, "İ".lower() is two characters, so its positions are not
#: the original's).
_ET_AL_END = re.compile(r"[eE][tT]\s[aA][lL]\.?$")
_SPECIAL_CHAR = re.compile(r"\{\\([A-Za-z]+|.)\s*\{?\s*\\?([A-Za-z])?")


def split_names(value: str) -> tuple[list[Name], bool]:
    """The names in a BibTeX ``author``/``editor`` value, and whether it ends in "and others"."""
    authors, truncated = author_list(value)
    return list(authors), truncated


def author_list(value: str) -> tuple[Authors, bool]:
    """A BibTeX ``author``/``editor`` value as an :class:`Authors` list, each name parsed
    when first read, and whether it ends in "and others" (known at once)."""
    try:
        written, truncated = _written_names(text_mode(value))
        return Authors(written, _parse_name, _last_part), truncated
    except Exception:  # pragma: no cover - defensive: never raise for odd input
        return Authors((), _parse_name), False


@lru_cache(maxsize=32768)
def _written_names(value: str) -> tuple[tuple[str, ...], bool]:
    """The names of an author list as written (split at "and", stripped), "others" and
    "et al." taken off and reported as the second value."""
    names: list[str] = []
    truncated = False
    for raw in _split_depth0(value):
        words = raw.strip()
        if not words:
            continue
        if words[0] in "oOeE{" and _is_truncation(words):  # "others", "et al.", "{others}"
            truncated = True
            continue
        if words[-1] in ".lL" and words[0] != "{" and (tail := _ET_AL_END.search(words)):
            truncated = True  # "Smith et al." written as one name
            words = words[: tail.start()].strip().rstrip(",")
            if not words:
                continue
        names.append(words)
    return tuple(names), truncated


def _is_truncation(words: str) -> bool:
    return " ".join(words.lower().split()) in _TRUNCATION


def family_key(name: Name) -> str:
    """The family name reduced for matching: no accents, lower case, letters and digits only."""
    try:
        return _NON_ALNUM.sub("", strip_accents(name.last).casefold())
    except Exception:  # pragma: no cover - defensive
        return ""


# --------------------------------------------------------------------------- splitting


_AND = re.compile(r"(?<=\s)[aA][nN][dD](?=\s|$)")


def _split_depth0(value: str) -> list[str]:
    """Split on the word "and" (any case) at brace depth 0."""
    if value.isascii() and "{" not in value and "}" not in value:
        return _AND.split(value)  # no braces: the scan below, in C
    return _split_depth0_scan(value)


#: The rest of the word "and" in any case, compared on the string as written: positions in a
#: lower-cased copy are not the original's ("İ".lower() is two characters).
_ND = frozenset({"nd", "nD", "Nd", "ND"})


def _split_depth0_scan(value: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    n = len(value)
    while i < n:
        c = value[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
        elif (
            depth == 0
            and c in "aA"
            and value[i + 1 : i + 3] in _ND
            and i > 0
            and value[i - 1].isspace()
            and (i + 3 == n or value[i + 3].isspace())
        ):
            parts.append(value[start:i])
            i += 3
            start = i
            continue
        i += 1
    parts.append(value[start:])
    return parts


_SEPARATORS = {seps: re.compile(f"[{re.escape(seps)}]") for seps in (",", " \t\r\n~")}


def _tokens(text: str, seps: str) -> list[str]:
    """Split ``text`` at brace depth 0 on any of ``seps`` (empty tokens kept)."""
    if "{" not in text and "}" not in text and seps in _SEPARATORS:
        return _SEPARATORS[seps].split(text)  # no braces: the scan below, in C
    return _tokens_scan(text, seps)


def _tokens_scan(text: str, seps: str) -> list[str]:
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for c in text:
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
        if depth == 0 and c in seps:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    return out


def _words(text: str) -> list[str]:
    return [w for w in _tokens(text, " \t\r\n~") if w]


def _is_lower(word: str) -> bool:
    """BibTeX's case of a word: its first letter at depth 0, or a special character's."""
    depth = 0
    i = 0
    while i < len(word):
        c = word[i]
        if c == "{":
            if depth == 0 and word.startswith("{\\", i):
                m = _SPECIAL_CHAR.match(word, i)
                if m is not None:
                    letter = m.group(2) or (m.group(1) if m.group(1).isalpha() else "")
                    if letter:
                        return letter[0].islower()
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
        elif depth == 0 and c.isalpha():
            return c.islower()
        elif depth == 0 and c == "\\":  # \"o written without braces: look at the letter
            m = re.match(r"\\[^A-Za-z]\s*\{?([A-Za-z])", word[i:])
            if m is not None:
                return m.group(1).islower()
        i += 1
    return False  # caseless (digits, a brace group): not part of "von"


@lru_cache(maxsize=65536)  # authors recur across a library's entries
def _parse_name(text: str) -> Name:
    first, von, last, jr = _parts(text)
    return Name(first=_join(first), von=_join(von), last=_join(last), jr=_join(jr))


#: "Last, First" with Last one plain word (most names of a library): that word is the last
#: part as written and as converted (nothing in it is LaTeX).
_PLAIN_LAST_FIRST = re.compile(r"([A-Za-z][A-Za-z.'-]*)\s*,")


def _last_part(text: str) -> str:
    """``_parse_name(text).last``, without converting the other parts."""
    m = _PLAIN_LAST_FIRST.match(text)
    if m is not None and "--" not in m.group(1) and "''" not in m.group(1):
        return m.group(1)
    return _join(_parts(text)[2])


def _parts(text: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """The words of a name's First, von, Last and Jr parts."""
    parts = [p.strip() for p in _tokens(text, ",")]
    if len(parts) == 1:
        words = _words(parts[0])
        if not words:
            return [], [], [], []
        # von starts at the first lower-case word before the last word ...
        body = words[:-1]
        von_start = next((i for i, w in enumerate(body) if _is_lower(w)), None)
        if von_start is None:
            return body, [], words[-1:], []
        # ... and ends at the last lower-case word before the last word
        von_end = max(i for i, w in enumerate(body) if _is_lower(w)) + 1
        return words[:von_start], words[von_start:von_end], words[von_end:], []
    von_last = _words(parts[0])
    jr = _words(parts[1]) if len(parts) >= 3 else []
    first = _words(" ".join(parts[2:] if len(parts) >= 3 else parts[1:]))
    von, last = _split_von_last(von_last)
    return first, von, last, jr


def _split_von_last(words: list[str]) -> tuple[list[str], list[str]]:
    """In "von Last", von runs to the last lower-case word that is not the final word."""
    if len(words) <= 1:
        return [], words
    lows = [i for i, w in enumerate(words[:-1]) if _is_lower(w)]
    if not lows:
        return [], words
    return words[: lows[-1] + 1], words[lows[-1] + 1 :]


def _join(words: list[str]) -> str:
    return to_unicode(" ".join(words)) if words else ""
