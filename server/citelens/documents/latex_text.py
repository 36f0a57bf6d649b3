"""LaTeX field values to plain Unicode, and titles to a comparable form.

:func:`to_unicode` uses pylatexenc (accents, ``\\i``, ``--``, math as Unicode
text where it can: ``$\\alpha$`` -> ``α``) and falls back to dropping commands
and braces if pylatexenc fails. Values without LaTeX syntax skip pylatexenc
entirely; results are cached. Neither function ever raises.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text

_CONVERTER = LatexNodes2Text(math_mode="text", strict_latex_spaces=False)
# characters that need pylatexenc; a value without them is plain text already
_LATEX_SYNTAX = re.compile(r"[\\$~]|--|''|``|!`|\?`")
# '%' and '&' written bare in a .bib value are text, not a comment / alignment tab
_BARE_SPECIAL = re.compile(r"(?<!\\)([%&])")
_WS = re.compile(r"\s+")
# C0 controls other than whitespace, and lone surrogates (they cannot be encoded as UTF-8)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_COMMAND = re.compile(r"\\(?:[A-Za-z@]+\*?|.)")
# '~' is a no-break space in LaTeX; a space is what a reader (and a matcher) means
_NBSP = "\u00a0"

_DASHES = dict.fromkeys(
    map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"), "-"
)
_QUOTES = dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032\u00b4\u0060"), "'")
_QUOTES.update(dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb"), '"'))
_PUNCT_CATEGORIES = ("P", "S")  # punctuation and symbols are dropped by normalize_title


@lru_cache(maxsize=65536)
def to_unicode(latex: str) -> str:
    """Plain Unicode for a BibTeX field value; whitespace collapsed, stripped."""
    try:
        if not isinstance(latex, str):
            return ""
        if not _LATEX_SYNTAX.search(latex):  # plain text, perhaps with protecting braces
            return _clean(latex.replace("{", "").replace("}", ""))
        journal = _ONE_MACRO.match(latex)
        if journal is not None and journal.group(1) in AAS_JOURNALS:
            return AAS_JOURNALS[journal.group(1)]
        text = _CONVERTER.latex_to_text(_BARE_SPECIAL.sub(r"\\\1", latex))
    except Exception:
        text = _fallback(latex)
    return _clean(text)


_ONE_MACRO = re.compile(r"^\s*\{?\s*\\([A-Za-z]+)\s*\}?\s*$")
#: Journal macros of AASTeX, used by ADS-exported .bib files (``journal = {\apj}``).
AAS_JOURNALS: dict[str, str] = {
    "aj": "AJ", "actaa": "Acta Astron.", "araa": "ARA&A", "apj": "ApJ", "apjl": "ApJL",
    "apjs": "ApJS", "ao": "Appl. Opt.", "apss": "Ap&SS", "aap": "A&A", "aapr": "A&A Rv",
    "aaps": "A&AS", "azh": "AZh", "baas": "BAAS", "jrasc": "JRASC", "memras": "MmRAS",
    "mnras": "MNRAS", "pra": "Phys. Rev. A", "prb": "Phys. Rev. B", "prc": "Phys. Rev. C",
    "prd": "Phys. Rev. D", "pre": "Phys. Rev. E", "prl": "Phys. Rev. Lett.", "pasp": "PASP",
    "pasj": "PASJ", "qjras": "QJRAS", "skytel": "S&T", "solphys": "Sol. Phys.",
    "sovast": "Soviet Ast.", "ssr": "Space Sci. Rev.", "zap": "ZAp", "nat": "Nature",
    "iaucirc": "IAU Circ.", "aplett": "Astrophys. Lett.", "apspr": "Astrophys. Space Phys. Res.",
    "bain": "Bull. Astron. Inst. Netherlands", "fcp": "Fund. Cosmic Phys.",
    "gca": "Geochim. Cosmochim. Acta", "grl": "Geophys. Res. Lett.", "jcp": "J. Chem. Phys.",
    "jgr": "J. Geophys. Res.", "jqsrt": "J. Quant. Spec. Radiat. Transf.",
    "memsai": "Mem. Soc. Astron. Italiana", "nphysa": "Nucl. Phys. A", "physrep": "Phys. Rep.",
    "physscr": "Phys. Scr", "planss": "Planet. Space Sci.", "procspie": "Proc. SPIE",
    "icarus": "Icarus", "jcap": "JCAP", "psj": "PSJ", "aas": "AAS Meeting Abstracts",
}


def _clean(text: str) -> str:
    text = _SURROGATE.sub("\ufffd", _CONTROL.sub("", text.replace(_NBSP, " ")))
    return _WS.sub(" ", text).strip()


def _fallback(latex: str) -> str:
    """Crude conversion: drop commands (keeping their arguments) and braces."""
    try:
        text = _COMMAND.sub(lambda m: _SYMBOL_COMMANDS.get(m.group()[1:], ""), latex)
        return text.replace("{", "").replace("}", "").replace("~", " ").replace("$", "")
    except Exception:  # pragma: no cover - defensive
        return ""


_SYMBOL_COMMANDS = {c: c for c in "&%$#_{}"} | {"\\": " ", " ": " "}


@lru_cache(maxsize=65536)
def normalize_title(s: str) -> str:
    """A title reduced for comparison: Unicode, NFKC, casefolded, no punctuation.

    Dashes and quotes of every kind count as one; punctuation and symbols become
    spaces; whitespace is collapsed. ``"{BERT}: Pre-training"`` and
    ``"BERT — pre‐training"`` give the same string.
    """
    try:
        text = unicodedata.normalize("NFKC", to_unicode(s)).casefold()
        text = text.translate(_DASHES).translate(_QUOTES)
        text = text.replace("'", "").replace('"', "")  # "don't" -> "dont"
        chars = [
            " " if unicodedata.category(c)[0] in _PUNCT_CATEGORIES else c
            for c in text
        ]
        return _WS.sub(" ", "".join(chars)).strip()
    except Exception:  # pragma: no cover - defensive
        return ""


def strip_accents(s: str) -> str:
    """``s`` without combining marks, with ``ø``/``ł``/``ß``-like letters spelled out in ASCII."""
    try:
        decomposed = unicodedata.normalize("NFKD", s.translate(_LETTERS))
        return "".join(c for c in decomposed if not unicodedata.combining(c))
    except Exception:  # pragma: no cover - defensive
        return s


_LETTERS = str.maketrans({
    "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ß": "ss",
    "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ı": "i", "þ": "th", "Þ": "Th",
    "ð": "d", "Ð": "D", "ħ": "h", "Ħ": "H",
})
