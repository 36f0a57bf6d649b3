"""The one home of every normaliser.

- identifiers: :func:`normalize_doi`, :func:`normalize_arxiv`, :func:`normalize_pmid`,
  :func:`is_s2_paper_id` (what a user or an API wrote -> the canonical form, ``None`` when
  it is no identifier);
- text: :func:`to_unicode` (LaTeX -> Unicode), :func:`strip_accents`,
  :func:`normalize_title` (titles compared by the matcher), :func:`title_key` (the cache key
  of a title search);
- :data:`SOURCE_NAMES` / :func:`source_name` (how a source is named to a user);
- :data:`SECRET_PARAMS` / :func:`redact_url` (what never appears in a log or a message);
- :data:`INFORMATIONAL_TYPES` (entry types the indexes cover badly).

:func:`to_unicode` uses pylatexenc (accents, ``\\i``, ``--``, math as Unicode text where
it can: ``$\\alpha$`` -> ``α``) and falls back to dropping commands and braces if
pylatexenc fails. Values without LaTeX syntax skip pylatexenc entirely; results are
cached. None of these functions ever raises.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

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


def strip_accents(s: str) -> str:
    """``s`` without combining marks, with ``ø``/``ł``/``ß``-like letters spelled out in ASCII."""
    if s.isascii():  # nothing to decompose or spell out (most titles): skip the walk
        return s
    try:
        decomposed = unicodedata.normalize("NFKD", s.translate(_LETTERS))
        return "".join(c for c in decomposed if not unicodedata.combining(c))
    except Exception:  # pragma: no cover - defensive
        return s


_LETTERS = str.maketrans(
    {
        "ø": "o",
        "Ø": "O",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ı": "i",
        "þ": "th",
        "Þ": "Th",
        "ð": "d",
        "Ð": "D",
        "ħ": "h",
        "Ħ": "H",
    }
)


# --------------------------------------------------------------------------- identifiers

_DOI_PREFIX = re.compile(
    r"^(?:https?://)?(?:dx\.)?(?:www\.)?doi\.org/|^doi:\s*|^doi\s+|^urn:doi:", re.IGNORECASE
)
_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_ARXIV_NEW = r"\d{4}\.\d{4,5}"
_ARXIV_OLD = r"[a-z][a-z.\-]*(?:\.[A-Z]{2})?/\d{7}"
_ARXIV_BARE = re.compile(rf"^(?:arxiv:\s*)?({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_DOI = re.compile(rf"^10\.48550/arxiv\.({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?$", re.IGNORECASE)
_ARXIV_URL = re.compile(
    rf"arxiv\.org/(?:abs|pdf|html)/({_ARXIV_NEW}|{_ARXIV_OLD})(?:v\d+)?(?:\.pdf)?/?(?:[?#]\S*)?$",
    re.IGNORECASE,
)
_ARXIV_VERSION = re.compile(r"v(\d+)$")
_PMID = re.compile(r"^(?:pmid:?\s*)", re.IGNORECASE)
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_ID_ESCAPES = str.maketrans({"{": None, "}": None})
_ID_ESCAPED = re.compile(r"\\([_%&#$~])")
_URL_MACRO = re.compile(r"^\\(?:url|href)\s*\{(.*?)\}", re.DOTALL)


def plain_identifier(value: str) -> str:
    """An identifier as written, without braces, escapes or ``\\url{}``."""
    if "\\" not in value and "{" not in value and "}" not in value:
        return value.strip()  # nothing to remove (most values: a quarter of an entry view)
    value = value.strip()
    m = _URL_MACRO.match(value)
    if m is not None:
        value = m.group(1)
    return _ID_ESCAPED.sub(r"\1", value).translate(_ID_ESCAPES).strip()


def normalize_doi(value: str | None) -> str | None:
    """``"https://doi.org/10.1093/MIND/LIX.236.433"`` -> ``"10.1093/mind/lix.236.433"``.

    Accepts a bare DOI, ``doi:``/``urn:doi:`` prefixes, doi.org URLs (percent-encoded or
    not) and BibTeX spellings (``\\url{…}``, ``\\_``); ``None`` for anything else.
    """
    if not isinstance(value, str) or not value:
        return None
    doi = plain_identifier(value)
    if "%" in doi:
        doi = unquote(doi)
    doi = _DOI_PREFIX.sub("", doi).strip().rstrip(".,;").lower()
    return doi if _DOI.match(doi) else None


def normalize_arxiv(value: str | None) -> str | None:
    """``"arXiv:1706.03762v5"`` -> ``"1706.03762"``; ``"astro-ph/0601001v1"`` stays old-style.

    Also accepts abs/pdf/html URLs and the DataCite DOI ``10.48550/arXiv.1706.03762``.
    Old-style ids keep arXiv's spelling: ``math.GT/0309136``, ``hep-th/9711200``.
    """
    if not isinstance(value, str) or not value:
        return None
    text = plain_identifier(value)
    for pattern in (_ARXIV_BARE, _ARXIV_DOI):
        m = pattern.match(text)
        if m is not None:
            return _canonical_arxiv(m.group(1))
    m = _ARXIV_URL.search(text)
    return _canonical_arxiv(m.group(1)) if m is not None else None


def _canonical_arxiv(ident: str) -> str:
    """Old-style ids: archive in lower case, a two-letter subject class in upper case."""
    archive, slash, number = ident.partition("/")
    if not slash:
        return ident
    name, dot, cls = archive.partition(".")
    cls = cls.upper() if len(cls) == 2 else cls.lower()
    return f"{name.lower()}{dot}{cls}/{number}"


def arxiv_version(value: str) -> int | None:
    """The version number of ``1706.03762v5`` (5), or ``None``."""
    m = _ARXIV_VERSION.search(value.strip())
    return int(m.group(1)) if m else None


def normalize_pmid(value: str | None) -> str | None:
    """``"PMID: 25349395"`` -> ``"25349395"``."""
    if not isinstance(value, str) or not value:
        return None
    s = _PMID.sub("", value.strip())
    return s if s.isdigit() else None


def is_s2_paper_id(value: str) -> bool:
    """A bare Semantic Scholar paperId: 40 hex digits."""
    return bool(_HEX40.match(value.strip().lower()))


# --------------------------------------------------------------------------- titles

#: A markup tag as sources put them in titles: JATS (``<jats:italic>``), MathML
#: (``<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML" display="inline">``, far
#: longer than a short tag), HTML (``<i>``, ``<sub>``). Only tag-shaped text: "a < b" stays.
MARKUP_TAG = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s+[^<>]*)?/?>")
_WORD_SPLIT = re.compile(r"[\W_]+")
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b"), "-")
_SPELLING = {
    "colour": "color",
    "centre": "center",
    "centres": "centers",
    "fibre": "fiber",
    "fibres": "fibers",
    "metre": "meter",
    "litre": "liter",
    "theatre": "theater",
    "modelling": "modeling",
    "modelled": "modeled",
    "labelled": "labeled",
    "labelling": "labeling",
    "travelling": "traveling",
    "signalling": "signaling",
    "tunnelling": "tunneling",
    "channelling": "channeling",
    "cancelled": "canceled",
    "catalogue": "catalog",
    "analogue": "analog",
    "dialogue": "dialog",
    "defence": "defense",
    "licence": "license",
    "offence": "offense",
    "grey": "gray",
    "aluminium": "aluminum",
    "programme": "program",
    "programmes": "programs",
    "sulphur": "sulfur",
    "aeroplane": "airplane",
    "oestrogen": "estrogen",
    "haemoglobin": "hemoglobin",
    "anaemia": "anemia",
    "paediatric": "pediatric",
    "tumour": "tumor",
    "tumours": "tumors",
    "judgement": "judgment",
    "ageing": "aging",
    "artefact": "artifact",
    "artefacts": "artifacts",
}
_SUFFIXES = (
    ("isations", "izations"),
    ("isation", "ization"),
    ("ising", "izing"),
    ("ised", "ized"),
    ("ises", "izes"),
    ("isers", "izers"),
    ("iser", "izer"),
    ("ise", "ize"),
    ("ysing", "yzing"),
    ("ysed", "yzed"),
    ("yser", "yzer"),
    ("yse", "yze"),
    ("ours", "ors"),
    ("oured", "ored"),
    ("ouring", "oring"),
    ("ourite", "orite"),
    ("our", "or"),
)


@lru_cache(maxsize=65536)
def _spelling(token: str) -> str:
    if token in _SPELLING:
        return _SPELLING[token]
    if len(token) >= 6:
        for brit, amer in _SUFFIXES:
            if token.endswith(brit):
                return token[: -len(brit)] + amer
    return token


def fold(text: str) -> str:
    """``text`` as the matcher compares words: Unicode, no accents, casefolded."""
    return strip_accents(to_unicode(unicodedata.normalize("NFKC", text))).casefold()


def words(text: str) -> list[str]:
    """The words of :func:`fold`\\ ed ``text`` (punctuation and underscores split)."""
    return [w for w in _WORD_SPLIT.split(text.lower() if _plain_ascii(text) else fold(text)) if w]


def _plain_ascii(text: str) -> bool:
    """ASCII with nothing :func:`fold` would change but case, spacing and punctuation (which
    :func:`words` splits away): no LaTeX, braces or control characters. Most titles."""
    return (
        text.isascii()
        and "{" not in text
        and "}" not in text
        and _LATEX_SYNTAX.search(text) is None
        and _CONTROL.search(text) is None
    )


@lru_cache(maxsize=65536)
def normalize_title(text: str) -> str:
    """A title reduced for comparison: no markup, accents, case, punctuation; US spelling.

    ``"{BERT}: Pre-training"`` and ``"BERT — pre‐training"`` give the same string.
    """
    if not text:
        return ""
    if "<" in text:
        text = MARKUP_TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)  # "&amp;" is "&", not the word "amp"
    text = text.translate(_DASHES)
    return " ".join(_spelling(w) for w in words(text))


_NON_WORD = re.compile(r"[^\w\s]")


@lru_cache(maxsize=4096)  # every title tier of an entry asks for the same title
def title_key(title: str) -> str:
    """Case, accents, braces, punctuation and spacing removed: the cache key of a title search."""
    text = strip_accents(title).casefold().replace("{", "").replace("}", "")
    return _WS.sub(" ", _NON_WORD.sub(" ", text)).strip()


# --------------------------------------------------------------------------- sources

#: How each source (and each host) is named to a user.
SOURCE_NAMES: dict[str, str] = {
    "s2": "Semantic Scholar",
    "crossref": "Crossref",
    "doi": "doi.org",
    "openalex": "OpenAlex",
    "arxiv": "arXiv",
    "arxiv_site": "arXiv (site)",
    "pubmed": "PubMed",
    "ncbi": "PubMed",
    "unpaywall": "Unpaywall",
    "dblp": "DBLP",
    "snapshot": "the local snapshot",
    # who reports a retraction or correction notice (verify/retraction.py)
    "retraction-watch": "Retraction Watch",
    "publisher": "the publisher",
}


def source_name(source: str | None, default: str = "") -> str:
    """``"s2"`` -> ``"Semantic Scholar"``; an unknown source keeps its own name."""
    if not source:
        return default
    return SOURCE_NAMES.get(source, source)


# --------------------------------------------------------------------------- secrets

#: Query parameters whose values never appear in a log line, a message or a cache key.
SECRET_PARAMS = frozenset(
    {"api_key", "apikey", "key", "token", "access_token", "mailto", "email", "sig", "signature"}
)


def redact_url(url: str) -> str:
    """``url`` without user info, fragment, and secret-looking query parameters."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port:
            netloc += f":{parts.port}"
        query = [
            (k, v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if k.lower() not in SECRET_PARAMS
        ]
        return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), ""))
    except ValueError:
        return "<url>"


# --------------------------------------------------------------------------- entry types

#: Entry types the indexes cover badly (books, theses, reports, software, data, web pages):
#: their absence or disagreement with a record is information, never a warning.
INFORMATIONAL_TYPES = frozenset(
    {
        "book",
        "inbook",
        "booklet",
        "phdthesis",
        "mastersthesis",
        "thesis",
        "techreport",
        "report",
        "software",
        "dataset",
        "data",
        "online",
        "webpage",
        "electronic",
        "www",
        "manual",
        "unpublished",
        "standard",
        "patent",
        "misc",
    }
)
