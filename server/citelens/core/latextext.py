"""LaTeX text as plain Unicode: :func:`latex_to_text` (a field value, a sentence),
:func:`to_unicode` (the same, cached, for field values), :func:`text_mode` (``\\ifmmode``
resolved to its text branch), :func:`simple_latex_to_text` (the common cases without
pylatexenc) and :data:`AAS_JOURNALS` (the journal macros of AASTeX).

:func:`latex_to_text` uses pylatexenc (accents, ``\\i``, ``--``, math as Unicode text where
it can: ``$\\alpha$`` -> ``α``) and falls back to dropping commands and braces if
pylatexenc fails. Values without LaTeX syntax skip pylatexenc entirely; results are
cached. None of these functions ever raises.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latexwalker import get_default_latex_context_db

_CONVERTER = LatexNodes2Text(math_mode="text", strict_latex_spaces=False)
#: pylatexenc builds its default macro table anew for every walker unless given one (half
#: of the time of a short title): it is built once and only read.
_WALKER_CONTEXT = get_default_latex_context_db()
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


def latex_to_text(latex: str) -> str:
    """Plain Unicode for LaTeX text (a field value, a sentence); whitespace collapsed."""
    try:
        if not isinstance(latex, str):
            return ""
        if not _LATEX_SYNTAX.search(latex):  # plain text, perhaps with protecting braces
            return _clean(latex.replace("{", "").replace("}", ""))
        journal = _ONE_MACRO.match(latex)
        if journal is not None and journal.group(1) in AAS_JOURNALS:
            return AAS_JOURNALS[journal.group(1)]
        escaped = _BARE_SPECIAL.sub(r"\\\1", text_mode(latex))
        text = simple_latex_to_text(escaped)
        if text is None:
            text = _CONVERTER.latex_to_text(escaped, latex_context=_WALKER_CONTEXT)
    except Exception:
        text = _fallback(latex)
    return _clean(text)


#: Accent commands and the combining marks pylatexenc gives them.
_MARKS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "u": "\u0306",
    "v": "\u030c",
    "H": "\u030b",
    "c": "\u0327",
    "k": "\u0328",
    "r": "\u030a",
}
_ACCENT = re.compile(
    r"""\\(['`^"~=.])\s*(?:\{\s*(\\[ij](?![A-Za-z])|[A-Za-z])\s*\}|(\\[ij](?![A-Za-z])\s*|[A-Za-z]))"""
    r"|\\([uvHckr])(?:\s*\{\s*(\\[ij](?![A-Za-z])|[A-Za-z])\s*\}|\s+([A-Za-z]))"
)
#: Letters written as commands, and what pylatexenc gives them (a space after one is eaten).
_LETTERS_TEXT = {
    "ss": "ß",
    "aa": "å",
    "AA": "Å",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "o": "ø",
    "O": "Ø",
    "l": "ł",
    "L": "Ł",
    "i": "ı",
    "j": "ȷ",
}
_LETTER = re.compile(r"\\(ss|aa|AA|ae|AE|oe|OE|o|O|l|L|i|j)(?![A-Za-z])\s*")
#: APS exports write an accent for math and text mode: ``Mu\ifmmode \check{s}\else \v{s}\fi{}``.
_IFMMODE = re.compile(r"\\ifmmode(?![A-Za-z]).*?\\else(?![A-Za-z])\s*(.*?)\\fi(?![A-Za-z])", re.DOTALL)


def text_mode(latex: str) -> str:
    """``latex`` with each ``\\ifmmode A\\else B\\fi`` replaced by ``B``, what a text (a name,
    a title) shows; pylatexenc would keep both (``Muššićć`` for Mušić)."""
    return _IFMMODE.sub(r"\1", latex) if "\\ifmmode" in latex else latex


#: Commands whose argument is its own text (``\\mathrm{SiH}``): the group is kept.
_WRAPPER = re.compile(r"\\(?:mathrm|textrm|ensuremath|mbox)\s*(?=\{)")
#: Greek letters and arrows, as pylatexenc writes them (a test holds the two together).
_SYMBOLS_TEXT = dict(
    zip(
        "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu "
        "xi pi rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma "
        "Upsilon Phi Psi Omega rightarrow leftarrow leftrightarrow to".split(),
        "αβγδϵεζηθϑικλμνξπρστυϕφχψωΓΔΘΛΞΠΣΥΦΨΩ→←↔→",
        strict=True,
    )
)
_SYMBOL = re.compile(r"\\([A-Za-z]+)(?![A-Za-z])\s*")
_MATH_PLAIN = re.compile(r"\$([^$\\]*)\$")  # math without commands ("$q$-state") is its text
_PUNCT = re.compile(r"---|--|``|''|~|\\([&%_#])")
_PUNCT_TEXT = {"---": "\u2014", "--": "\u2013", "``": "\u201c", "''": "\u201d", "~": _NBSP}


def _accented(m: re.Match[str]) -> str:
    letter = (m.group(2) or m.group(3) or m.group(5) or m.group(6)).strip().lstrip("\\")
    return unicodedata.normalize("NFC", letter + _MARKS[m.group(1) or m.group(4)])


def _symbol(m: re.Match[str]) -> str:
    """A Greek letter or an arrow (and the spaces after it, as TeX reads them), else as is."""
    return _SYMBOLS_TEXT.get(m.group(1), m.group())


def simple_latex_to_text(latex: str) -> str | None:
    """What pylatexenc makes of text whose only LaTeX is accents on letters (``Schr\\"odinger``,
    ``{\\'e}``), dashes, quotes, ``~``, escaped ``& % _ #`` and math without commands
    (``$q$-state``); ``None`` for anything else.

    Most LaTeX in author names and titles is of this kind, and pylatexenc takes a third
    of a millisecond for each; tests check that both agree on every such value of the
    corpus."""
    text = latex
    if "\\" in text:
        text = _SYMBOL.sub(_symbol, _WRAPPER.sub("", text))
    if "$" in text:
        text = _MATH_PLAIN.sub(r"\1", text)
    text = _ACCENT.sub(_accented, text)
    if "\\" in text:
        text = _LETTER.sub(lambda m: _LETTERS_TEXT[m.group(1)], text)
    text = _PUNCT.sub(lambda m: m.group(1) or _PUNCT_TEXT[m.group()], text)
    if "\\" in text or "$" in text or "!`" in text or "?`" in text:
        return None
    return text.replace("{", "").replace("}", "")


#: :func:`latex_to_text` cached, for field values (they repeat across entries and calls).
to_unicode = lru_cache(maxsize=65536)(latex_to_text)

_ONE_MACRO = re.compile(r"^\s*\{?\s*\\([A-Za-z]+)\s*\}?\s*$")
#: Journal macros of AASTeX, used by ADS-exported .bib files (``journal = {\apj}``).
AAS_JOURNALS: dict[str, str] = {
    "aj": "AJ",
    "actaa": "Acta Astron.",
    "araa": "ARA&A",
    "apj": "ApJ",
    "apjl": "ApJL",
    "apjs": "ApJS",
    "ao": "Appl. Opt.",
    "apss": "Ap&SS",
    "aap": "A&A",
    "aapr": "A&A Rv",
    "aaps": "A&AS",
    "azh": "AZh",
    "baas": "BAAS",
    "jrasc": "JRASC",
    "memras": "MmRAS",
    "mnras": "MNRAS",
    "pra": "Phys. Rev. A",
    "prb": "Phys. Rev. B",
    "prc": "Phys. Rev. C",
    "prd": "Phys. Rev. D",
    "pre": "Phys. Rev. E",
    "prl": "Phys. Rev. Lett.",
    "pasp": "PASP",
    "pasj": "PASJ",
    "qjras": "QJRAS",
    "skytel": "S&T",
    "solphys": "Sol. Phys.",
    "sovast": "Soviet Ast.",
    "ssr": "Space Sci. Rev.",
    "zap": "ZAp",
    "nat": "Nature",
    "iaucirc": "IAU Circ.",
    "aplett": "Astrophys. Lett.",
    "apspr": "Astrophys. Space Phys. Res.",
    "bain": "Bull. Astron. Inst. Netherlands",
    "fcp": "Fund. Cosmic Phys.",
    "gca": "Geochim. Cosmochim. Acta",
    "grl": "Geophys. Res. Lett.",
    "jcp": "J. Chem. Phys.",
    "jgr": "J. Geophys. Res.",
    "jqsrt": "J. Quant. Spec. Radiat. Transf.",
    "memsai": "Mem. Soc. Astron. Italiana",
    "nphysa": "Nucl. Phys. A",
    "physrep": "Phys. Rep.",
    "physscr": "Phys. Scr",
    "planss": "Planet. Space Sci.",
    "procspie": "Proc. SPIE",
    "icarus": "Icarus",
    "jcap": "JCAP",
    "psj": "PSJ",
    "aas": "AAS Meeting Abstracts",
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


def plain_ascii(text: str) -> bool:
    """ASCII with nothing :func:`to_unicode` would change but spacing: no LaTeX, braces or control
    characters. Most titles."""
    return (
        text.isascii()
        and "{" not in text
        and "}" not in text
        and _LATEX_SYNTAX.search(text) is None
        and _CONTROL.search(text) is None
    )
