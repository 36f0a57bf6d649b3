"""Venue names: abbreviations, proceedings titles and journal names compared as one venue.

``data/venues.json`` maps canonical ids ("neurips", "pre", "apj", ...) to their
spellings. A name is normalised (case, punctuation, "Proceedings of the",
years, ordinals and edition numbers dropped) and looked up there; names not in
the table are compared by ISO-4 style abbreviation ("J. Mach. Learn. Res." =
"Journal of Machine Learning Research"), token containment and a fuzzy ratio.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from rapidfuzz import fuzz

from citelens.core.accents import strip_accents
from citelens.sources.records import PaperRecord

_DROP = frozenset(
    {
        "proceedings",
        "proc",
        "the",
        "of",
        "in",
        "on",
        "and",
        "for",
        "at",
        "to",
        "annual",
        "vol",
        "volume",
        "pp",
        "edition",
        "ed",
    }
)
_ORDINAL = re.compile(
    r"^(\d+(st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth"
    r"|ninth|tenth|eleventh|twelfth|\d+)$"
)
_LATEX_CMD = re.compile(r"\\([a-zA-Z]+|.)")
_PAREN = re.compile(r"\(([^()]{2,20})\)")
_APOS_YEAR = re.compile(r"['’‘]\d{2}\b")


@dataclass(frozen=True, slots=True)
class VenueTable:
    by_alias: dict[str, str]  # normalised alias -> canonical id
    names: dict[str, str]  # canonical id -> display name
    aliases: dict[str, tuple[str, ...]]  # canonical id -> normalised aliases
    preprint: frozenset[str]  # canonical ids of preprint servers
    acronyms: dict[str, tuple[str, ...]]  # canonical id -> its one-word aliases as written ("CVPR")


def _tokens(name: str) -> list[str]:
    """Normalised tokens of a venue name (no table lookup)."""
    text = unicodedata.normalize("NFKC", name)
    text = text.replace("\\&", " and ").replace("&", " and ")
    text = _LATEX_CMD.sub(lambda m: "" if len(m.group(1)) == 1 else " ", text)
    text = _APOS_YEAR.sub(" ", text)
    text = strip_accents(text).casefold()
    words = re.split(r"[^0-9a-z]+", text)
    return [w for w in words if w and w not in _DROP and not _ORDINAL.match(w)]


def _norm_text(name: str) -> str:
    return " ".join(_tokens(name))


@cache
def load_table() -> VenueTable:
    """The venue table shipped in ``citelens/data/venues.json`` (read once)."""
    raw = json.loads(resources.files("citelens").joinpath("data/venues.json").read_text(encoding="utf-8"))
    by_alias: dict[str, str] = {}
    names: dict[str, str] = {}
    aliases: dict[str, tuple[str, ...]] = {}
    acronyms: dict[str, tuple[str, ...]] = {}
    preprint: set[str] = set()
    for group in ("venues", "preprint"):
        for vid, spec in raw[group].items():
            names[vid] = spec["name"]
            normed = []
            for alias in [spec["name"], *spec["aliases"]]:
                n = _norm_text(alias)
                if n:
                    by_alias.setdefault(n, vid)
                    normed.append(n)
            aliases[vid] = tuple(dict.fromkeys(normed))
            acronyms[vid] = tuple(
                a
                for a in spec["aliases"]
                if a.isalnum() and any(c.isupper() for c in a) and _norm_text(a) != _norm_text(spec["name"])
            )
            if group == "preprint":
                preprint.add(vid)
    return VenueTable(by_alias, names, aliases, frozenset(preprint), acronyms)


@lru_cache(maxsize=4096)
def _resolve(name: str) -> tuple[str | None, str]:
    """``(canonical id or None, normalised text)`` for a venue name."""
    table = load_table()
    text = _norm_text(name)
    if not text:
        return None, ""
    if text in table.by_alias:
        return table.by_alias[text], text
    for m in _PAREN.finditer(name):  # "... Pattern Recognition (CVPR)"
        inner = _norm_text(m.group(1))
        if inner in table.by_alias:
            return table.by_alias[inner], text
    without_paren = _norm_text(_PAREN.sub(" ", name))
    if without_paren in table.by_alias:
        return table.by_alias[without_paren], text
    first = text.split()[0]
    if first in table.by_alias and table.by_alias[first] in table.preprint:
        return table.by_alias[first], text  # "arXiv preprint arXiv:1706.03762", "CoRR abs/..."
    toks = text.split()
    for vid, alias_list in table.aliases.items():
        for alias in alias_list:
            if _abbreviates(toks, alias.split()):
                return vid, text
    return None, text


def normalize_venue(name: str) -> str:
    """The canonical venue id of a name, or its normalised text when it is not in the table."""
    vid, text = _resolve(name or "")
    return vid or text


def is_preprint_venue(name: str) -> bool:
    """True for arXiv, CoRR, bioRxiv, medRxiv, SSRN and the like."""
    vid, _ = _resolve(name or "")
    return vid is not None and vid in load_table().preprint


def venue_display_name(name: str) -> str:
    """The table's display name for a venue, else the name as given."""
    vid, _ = _resolve(name or "")
    return load_table().names.get(vid, name) if vid else name


def acronym(name: str) -> str | None:
    """The venue's acronym as it is written ("CVPR", "NeurIPS"), when the table knows the
    venue and has one."""
    vid, _ = _resolve(name or "")
    found = load_table().acronyms.get(vid, ()) if vid else ()
    return found[0] if found else None


def written_as_acronym(name: str) -> bool | None:
    """Whether ``name`` writes a venue the table knows by its acronym ("CVPR", "Proc. of
    NeurIPS") rather than its name; None for a venue the table does not know."""
    vid, text = _resolve(name or "")
    table = load_table()
    if vid is None or vid in table.preprint or " " not in _norm_text(table.names[vid]):
        return None  # unknown, a preprint server, or a name of one word ("Nature")
    return text in {_norm_text(a) for a in table.acronyms.get(vid, ())}


def _abbreviates(short: list[str], long: list[str]) -> bool:
    """ISO-4 style: each short token is a prefix of the corresponding long token."""
    if len(short) != len(long) or not short or short == long:
        return False
    for s, t in zip(short, long, strict=True):
        if not t.startswith(s):
            return False
        if s.isdigit() != t.isdigit():
            return False
    return any(len(s) >= 2 for s in short)


def _texts_match(a: str, b: str) -> bool:
    if not a or not b:
        return False
    if a == b:
        return True
    ta, tb = a.split(), b.split()
    if _abbreviates(ta, tb) or _abbreviates(tb, ta):
        return True
    small, big = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if len(small) >= 3 and set(small) <= set(big) and big[: len(small)] == small:
        return True  # "journal physics a" vs "journal physics a mathematical theoretical"
    return len(a) >= 8 and len(b) >= 8 and fuzz.ratio(a, b) >= 92.0


def same_venue(a: str, b: str, alternates: Iterable[str] = ()) -> bool:
    """True when ``a`` names the venue ``b`` (or one of its ``alternates``) names."""
    ida, texta = _resolve(a or "")
    if not texta:
        return False
    for other in (b, *alternates):
        if not other:
            continue
        idb, textb = _resolve(other)
        if not textb:
            continue
        if ida is not None and idb is not None:
            if ida == idb:
                return True
            continue
        if _texts_match(texta, textb):
            return True
        known = ida or idb
        if known is not None:  # one side is in the table: try its spellings on the other text
            plain = textb if ida else texta
            if any(_texts_match(alias, plain) for alias in load_table().aliases[known]):
                return True
    return False


def is_preprint_record(record: PaperRecord) -> bool:
    """A record of the paper's preprint: marked so, or its venue is a preprint server."""
    return record.is_preprint or (bool(record.venue) and is_preprint_venue(record.venue or ""))
