"""Claim extraction: the sentence around a citation, as plain text.

:func:`extract_claim` runs on hover, so it only looks at a window of text around
the citation (never the whole document). The citation itself is replaced by a
marker, every other citation/reference/label/footnote is removed, the window is
cut at paragraph and structure boundaries (blank lines, sectioning, list items,
environments, table cells), converted to text (LaTeX with pylatexenc) and split
into sentences by :func:`split_sentences`, which knows that "et al.", "e.g.",
"Fig. 3", "Eq. (2)", "3.5" and initials such as "J. Smith" do not end a sentence.
"""

from __future__ import annotations

import html
import re

from citelens.claims.structure import pipe_table_lines
from citelens.core.dockind import DocKind
from citelens.core.latextext import latex_to_text
from citelens.core.model import Span

#: How many characters either side of the citation are looked at.
WINDOW = 2000
#: Sentences longer than this are narrowed to the ';'-clause holding the citation.
LONG_SENTENCE = 600
_MARK = "\ue000"  # private-use character: passes through pylatexenc untouched
_OTHER = "\ue001"  # where another citation was: may start a sentence, removed at the end

_ABBREVIATIONS = frozenset(
    """al e.g i.e cf vs etc fig figs eq eqs sec secs ref refs tab tabs no nos vol vols pp p
    ch chap chaps approx ca resp dr mr mrs ms prof st jr sr inc ltd co corp dept univ viz
    ibid op cit ed eds suppl supp app appx def thm lem prop cor alg ex incl eg ie
    fn art para sect nr min max est jan feb mar apr jun jul aug sep sept oct nov dec""".split()
)

# ---------------------------------------------------------------------------- sentences

_CODE = "\ue003"  # where a code span or \texttt started: a name that may start a sentence
_END = re.compile(r"[.!?]+[\"'”’)\]]*(?:\s+|(?=[\ue000\ue001\ue003]))")
_WORD_BEFORE = re.compile(r"([A-Za-z]+(?:\.[A-Za-z]+)*)$")
#: A word that starts lower-case but is a name ("mScarlet-I", "arXMLiv", "iPhone").
_CAMEL = re.compile(r"[a-z]+[A-Z]")


def _is_boundary(text: str, dot: int, next_start: int) -> bool:
    """Is the punctuation at ``dot`` (followed by whitespace up to ``next_start``) an end?"""
    if next_start >= len(text):
        return True
    nxt = text[next_start]
    starts = nxt.isupper() or nxt.isdigit() or nxt in "\"'“‘`([" or nxt in (_MARK, _OTHER, _CODE)
    if not starts and not _CAMEL.match(text, next_start):
        return False
    if text[dot] != ".":
        return True
    m = _WORD_BEFORE.search(text, max(0, dot - 64), dot)  # not from 0: linear, not quadratic
    if m is None:
        return True
    word = m.group(1)
    if len(word) == 1:  # an initial: "J. Smith", "E. coli"
        return False
    if word.lower() in _ABBREVIATIONS:
        return word.lower() == "etc" and nxt.isupper() and not nxt.isdigit()
    return "." not in word or len(word) > 6  # "U.S." style acronyms never end a sentence


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` offsets of the sentences in ``text`` (a paragraph of plain text)."""
    out: list[tuple[int, int]] = []
    start = 0
    for m in _END.finditer(text):
        dot = m.start()
        if _is_boundary(text, dot, m.end()):
            out.append((start, m.end()))
            start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return out


# ---------------------------------------------------------------------------- LaTeX

_CITE_CMD = re.compile(r"\\([A-Za-z]*cite[A-Za-z]*|nocite)\*?")
_REF_CMD = re.compile(
    r"\\(?:refurlinline|refurl|ref|eqref|autoref|cref|Cref|pageref|nameref|vref|ruleref|label|url"
    r"|footnotemark|linkdest)(?![A-Za-z])\*?"
)
_FOOTNOTE = re.compile(r"\\footnote(?:text)?\b")
_COMMENT = re.compile(r"(?<!\\)%.*")
#: Commands that end the text around them (structure, preamble, floats, vertical space).
_BLOCK_COMMANDS = (
    r"part|chapter|(?:sub)*section|(?:sub)?paragraph|item|begin|end|caption|maketitle|newpage"
    r"|clearpage|cleardoublepage|bibliography|bibliographystyle|printbibliography|addbibresource"
    r"|nocite|usepackage|documentclass|(?:re)?newcommand|providecommand|newenvironment|input"
    r"|include|includegraphics|includeonly|tableofcontents|listoffigures|listoftables|appendix"
    r"|frontmatter|mainmatter|backmatter|vspace|vskip|medskip|bigskip|smallskip|centering"
    r"|noindent|hline|toprule|midrule|bottomrule|title|author|date|thanks|maketitle|pagebreak"
)
_LATEX_BREAK = re.compile(
    r"\n[ \t]*\n|\\(?:" + _BLOCK_COMMANDS + r")(?![A-Za-z])\*?"
    # the command's own arguments (\begin{document}, \section{Intro}) are not claim text
    r"(?:\s*\[[^\]\n]*\])?(?:\s*\{[^{}\n]*\})*|(?<!\\)&|\\\\"
)
#: Markup whose argument is text pylatexenc would drop or misread, made a plain group:
#: ``\texttt{numpy}`` -> ``{numpy}``, ``\href{url}{text}`` -> ``{text}``.
_KEEP_ARG = re.compile(
    r"\\(?:texttt|textsf|textup|textmd|mathtt|mathsf|mathbf|mathit|boldsymbol|bm)(?![A-Za-z])"
)
_LINK_TEXT = re.compile(r"\\(?:href|hyperlink|hyperref)\s*(?:\[[^\]\n]*\])?\s*\{(?:[^{}]|\{[^{}]*\})*\}")
_WORD_MACROS = (
    (re.compile(r"\\eg(?![A-Za-z])\s*"), "e.g. "),
    (re.compile(r"\\ie(?![A-Za-z])\s*"), "i.e. "),
    (re.compile(r"\\etal(?![A-Za-z])\s*"), "et al. "),
    (re.compile(r"\\cf(?![A-Za-z])\s*"), "cf. "),
    (re.compile(r"\\LaTeXe?(?![A-Za-z])(?:\{\})?"), "LaTeX"),
    (re.compile(r"\\TeX(?![A-Za-z])(?:\{\})?"), "TeX"),
)
#: ``. \texttt{name}``: a code name that starts a sentence although it is lower-case.
_CODE_AFTER_END = re.compile(r"([.!?][ \t\n]+)(?=\\texttt\b)")


def _skip_group(text: str, i: int, open_: str, close: str) -> int:
    """Index after the group opening at ``text[i] == open_`` (or ``i`` if none)."""
    if i >= len(text) or text[i] != open_:
        return i
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c == "\\":
            continue
        if c == open_ and (j == 0 or text[j - 1] != "\\"):
            depth += 1
        elif c == close and (j == 0 or text[j - 1] != "\\"):
            depth -= 1
            if depth == 0:
                return j + 1
    return len(text)


#: Reference commands with two arguments (``\refurl{url}{accessed}``).
_TWO_ARGS = frozenset({"refurl", "refurlinline"})


def _command_end(text: str, i: int, name: str) -> int:
    """End of a command's arguments starting at ``i`` (just after its name)."""
    multi = name.endswith("cites")
    two = name in _TWO_ARGS
    braces = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] in " \t\n" and text[j : j + 2] != "\n\n":
            j += 1
        if j < len(text) and text[j] == "[":
            i = _skip_group(text, j, "[", "]")
        elif j < len(text) and text[j] == "(" and multi:
            i = _skip_group(text, j, "(", ")")
        elif j < len(text) and text[j] == "{" and (multi or braces < (2 if two else 1)):
            i = _skip_group(text, j, "{", "}")
            braces += 1
        else:
            break
    return i


def _commands(text: str, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    out = []
    for m in pattern.finditer(text):
        name = m.group(0)[1:].rstrip("*")
        out.append((m.start(), _command_end(text, m.end(), name)))
    return out


def _cut(text: str, spans: list[tuple[int, int]], mark: str = "") -> str:
    parts, last = [], 0
    for a, b in sorted(spans):
        if a < last:
            continue
        parts.append(text[last:a] + mark)
        last = b
    parts.append(text[last:])
    return "".join(parts)


def _mark_latex(window: str, rel: Span) -> str:
    """The window with the target citation replaced by the marker."""
    for a, b in _commands(window, _CITE_CMD):
        if a <= rel.start and rel.end <= b:
            return window[:a] + _MARK + window[b:]
    return window[: rel.start] + _MARK + window[rel.end :]


_POINTER = re.compile(
    r"\s*(?:see|cf\.?|compare|for (?:details|more|a review|an overview)|e\.g\.,?)\b", re.IGNORECASE
)


def _pointer_only(body: str) -> bool:
    """A footnote whose sentence with the citation only points to it ("See \\cite{x}.",
    "[@x]", "Cf. @x", "\\url{...}, accessed 2020. See \\cite{x}.")."""
    at = body.find(_MARK)
    if at >= 0:  # the footnote's sentence holding the citation
        start = max(body.rfind(". ", 0, at), body.rfind(".\n", 0, at))
        end = body.find(". ", at)
        body = body[start + 1 if start >= 0 else 0 : end if end >= 0 else len(body)]
    rest = _cut(body, _commands(body, _CITE_CMD)) if "\\" in body else body
    rest = _MD_GROUP.sub(" ", _MD_INTEXT.sub(" ", rest)).replace(_MARK, " ").replace(_OTHER, " ")
    n = len(re.findall(r"[^\W\d_]{2,}", rest))
    return n <= 2 or (n <= 8 and _POINTER.match(rest) is not None)


#: Display math: ``$$...$$`` or ``\[...\]``, and the first character after it.
_DISPLAY_MATH = re.compile(r"(\$\$.+?\$\$|(?<!\\)\\\[.+?(?<!\\)\\\])(\s*)(\S?)", re.DOTALL)


def _display_math(text: str, plain: bool) -> str:
    """Display math that ends a sentence (the next word starts with a capital) ends the
    unit: it is not merged into the next sentence. Math inside a sentence stays (as plain
    text when ``plain``: Markdown)."""

    def one(m: re.Match[str]) -> str:
        math, space, nxt = m.group(1), m.group(2), m.group(3)
        if _MARK in math:
            return m.group(0)
        if (nxt and (nxt.isupper() or nxt == _OTHER)) or math.rstrip("$]\\ \n").endswith("."):
            return "\n\n" + nxt
        body = latex_to_text(_plain_markup("$" + math[2:-2] + "$")).replace("|", _PIPE) if plain else math
        return body + space + nxt

    return _DISPLAY_MATH.sub(one, text)


def _drop_footnotes(text: str) -> str:
    """Drop ``\\footnote{...}`` bodies, except the one with the marker (kept as its own unit)."""
    out, last = [], 0
    for m in _FOOTNOTE.finditer(text):
        if m.start() < last:
            continue
        j = m.end()
        while j < len(text) and text[j] in " \t\n":
            j += 1
        j = _skip_group(text, j, "[", "]")
        end = _skip_group(text, j, "{", "}")
        if end == j:
            continue
        out.append(text[last : m.start()])
        if _MARK in text[j:end]:
            body = text[j + 1 : end - 1]
            # "\footnote{See \cite{x}.}" points from the sentence it is attached to: the
            # citation is that sentence's; a footnote saying more is a unit of its own
            out.append(_MARK if _pointer_only(body) else "\n\n" + body + "\n\n")
        last = end
    out.append(text[last:])
    return "".join(out)


def _plain_markup(text: str) -> str:
    """Markup whose text pylatexenc would lose, as plain groups and words."""
    text = _CODE_AFTER_END.sub(r"\1" + _CODE, text)
    text = _LINK_TEXT.sub("", text)  # \href{url}: the {text} group after it stays
    text = _KEEP_ARG.sub("", text)
    for pattern, word in _WORD_MACROS:
        text = pattern.sub(word, text)
    return text


def _latex_unit(window: str) -> str:
    text = _COMMENT.sub("", window)
    text = _plain_markup(text)
    text = _drop_footnotes(text)
    text = _display_math(text, plain=False)
    text = _cut(text, _commands(text, _CITE_CMD), _OTHER)
    text = _cut(text, _commands(text, _REF_CMD))
    return _unit(text, _LATEX_BREAK)


def _unit(text: str, breaks: re.Pattern[str]) -> str:
    """The piece of ``text`` between the structure breaks around the marker."""
    at = text.find(_MARK)
    if at < 0:
        return ""
    start, end = 0, len(text)
    for m in breaks.finditer(text):
        if m.end() <= at:
            start = m.end()
        elif m.start() >= at:
            end = m.start()
            break
    return text[start:end]


# ---------------------------------------------------------------------------- Markdown

_KEY = r"@(?:\{[^}]*\}|[\w](?:[\w]|[:.#$%&\-+?<>~/](?=[\w]))*)"
_MD_GROUP = re.compile(r"\[[^\[\]]*" + _KEY + r"[^\[\]]*\]")
_MD_INTEXT = re.compile(r"(?<![\w@])-?" + _KEY + r"(?:\s*\[[^\[\]]*\])?")
_MD_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_MD_BREAK = re.compile(r"\n[ \t]*\n|\n[ \t]*(?:#{1,6}\s|[-*+]\s|\d+\.\s|>|```|\|)|\|")
_MD_INLINE = (
    (re.compile(r"!\[[^\]]*\]\([^)]*\)"), ""),  # images
    (re.compile(r"\[([^\]]*)\]\([^)]*\)"), r"\1"),  # links
    (re.compile(r"\[\^[^\]]*\]"), ""),  # footnote references
    (re.compile(r"`r [^`]*`"), ""),  # R Markdown inline code
    (re.compile(r"`([^`]*)`"), r"\1"),
    (re.compile(r"(\*\*|__|\*|(?<!\w)_(?=\S)|(?<=\S)_(?!\w))"), ""),
    (re.compile(r"<[^>]+>"), ""),  # inline HTML tags
)


def _mark_markdown(window: str, rel: Span) -> str:
    for m in _MD_GROUP.finditer(window):
        if m.start() <= rel.start and rel.end <= m.end():
            return window[: m.start()] + _MARK + window[m.end() :]
    for m in _MD_INTEXT.finditer(window):
        if m.start() <= rel.start and rel.end <= m.end():
            return window[: m.start()] + _MARK + window[m.end() :]
    return window[: rel.start] + _MARK + window[rel.end :]


_MD_MATH = re.compile(r"(?<![\\$])\$(?!\s)([^$\n]+?)(?<![\s\\])\$(?!\d)")
_PIPE = "\ue002"  # a "|" inside math: not a table cell
_MD_LIST_START = re.compile(r"^\s*(?:(?:>\s*)+|(?:[-*+]|\d+[.)])\s+)")
_MD_CODE_START = re.compile(r"([.!?][ \t\n]+)(?=`)")
_MD_LATEX_REF = re.compile(r"\\[A-Za-z]*ref\*?\{[^{}\n]*\}")


def _md_math(m: re.Match[str]) -> str:
    """Inline math as plain text (``$p(\\boldsymbol{y}|x)$`` -> ``p(y|x)``), one piece."""
    return latex_to_text(_plain_markup("$" + m.group(1) + "$")).replace("|", _PIPE)


_MD_INLINE_NOTE = re.compile(r"\^\[")
_MD_NOTE_DEFINITION = re.compile(r"^[ \t]{0,3}\[\^[^\]\n]*\]:[ \t]*", re.MULTILINE)


def _md_footnotes(text: str) -> str:
    """Pandoc footnotes: an inline ``^[...]`` is dropped, unless it holds the citation (then
    it is a unit of its own, or, when it only points to the citation, the citation belongs
    to the sentence it is attached to); a ``[^1]:`` definition's label is not text."""
    # "^[See @x.]" taken whole as the citation's group: the footnote points from its sentence
    text = text.replace("^" + _MARK, _MARK)
    out, last = [], 0
    for m in _MD_INLINE_NOTE.finditer(text):
        if m.start() < last:
            continue
        end = _skip_group(text, m.start() + 1, "[", "]")
        body = text[m.start() + 2 : end - 1]
        out.append(text[last : m.start()])
        if _MARK in body:
            out.append(_MARK if _pointer_only(body) else "\n\n" + body + "\n\n")
        last = end
    out.append(text[last:])
    return _MD_NOTE_DEFINITION.sub("\n\n", "".join(out))


def _table_pipes_only(text: str) -> str:
    """``text`` with every ``|`` outside a pipe table made a plain bar: only a table's
    ``|`` separates cells ("p(x | y) is bounded" is one sentence)."""
    if "|" not in text:
        return text
    parts, last = [], 0
    for a, b in pipe_table_lines(text):
        parts.append(text[last:a].replace("|", _PIPE))
        parts.append(text[a:b])
        last = b
    parts.append(text[last:].replace("|", _PIPE))
    return "".join(parts)


def _markdown_unit(window: str) -> str:
    def comment(m: re.Match[str]) -> str:
        body = m.group(0)
        return "\n\n" + body[4:-3] + "\n\n" if _MARK in body else " "

    text = _MD_COMMENT.sub(comment, window)
    text = _md_footnotes(text)
    text = _display_math(text, plain=True)
    text = _MD_GROUP.sub(_OTHER, text)
    text = _MD_INTEXT.sub(_OTHER, text)
    text = _MD_MATH.sub(_md_math, text)
    text = _MD_LATEX_REF.sub("", text)
    text = _MD_CODE_START.sub(r"\1" + _CODE, text)
    text = _table_pipes_only(text)
    unit = _MD_LIST_START.sub("", _unit(text, _MD_BREAK))
    for pattern, repl in _MD_INLINE:
        unit = pattern.sub(repl, unit)
    return html.unescape(unit)


# ---------------------------------------------------------------------------- the claim

_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?)\]])")
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;]?\s*\)|\[\s*[,;]?\s*\]")


#: What is left of a parenthetical whose citation was removed: "(e.g.,)", "(cf. )", "(see)".
_LEFTOVER = re.compile(r"\s*\([\s,;]*(?:(?:(?:e\.g|i\.e|cf)\.|see|also|and)[\s,;]*)*\)")
#: What is left of "(see @x for an overview)": a pointer to the citation, nothing more.
_POINTER_LEFTOVER = re.compile(
    r"\s*\(\s*(?:(?:e\.g\.|cf\.|see|also)[\s,;]*)+(?:for|and)\s+(?:an?\s+|more\s+|further\s+)?"
    r"(?:overview|review|survey|details|discussion|examples?|references therein)\s*\)",
    re.IGNORECASE,
)
_TRAILING_DASH = re.compile(r"\s+[–—]+\s*$")  # an epigraph's "-- \citet{x}"
_DANGLING = re.compile(r"\s*[,;]\s*(?=[)\]])|,\s*(?:cf\.|e\.g\.)\s*(?=[)\]])")
_COMMA_BEFORE_END = re.compile(r"[,;]+(?=[.!?](?:\s|$))")
_OPEN_PUNCT = re.compile(r"([(\[])\s*[,;]\s*")


def _tidy(text: str) -> str:
    text = text.replace(_MARK, " ").replace(_OTHER, " ").replace(_CODE, "").replace(_PIPE, "|")
    text = text.replace("\u00a0", " ")
    text = _SPACES.sub(" ", text)
    text = _DANGLING.sub("", text)
    text = _LEFTOVER.sub("", text)
    text = _POINTER_LEFTOVER.sub("", text)
    text = _OPEN_PUNCT.sub(r"\1", text)
    text = _EMPTY_BRACKETS.sub("", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _COMMA_BEFORE_END.sub("", text)  # "\\cite{a}, \\cite{b}." leaves ",."
    text = re.sub(r"\(\s+", "(", text)
    text = re.sub(r"([,;])\1+", r"\1", text)
    text = re.sub(r"(?<!\.)\.\s*\.(?!\.)", ".", text)  # "et al. ." after a removed citation
    text = _TRAILING_DASH.sub("", text)
    return _SPACES.sub(" ", text).strip()


def _sentence_with_mark(plain: str) -> str:
    at = plain.find(_MARK)
    if at < 0:
        return plain
    sentences = split_sentences(plain)
    for i, (a, b) in enumerate(sentences):
        if a <= at < b or (at == b and i == len(sentences) - 1):
            after = plain[at + 1 : b].replace(_OTHER, " ").lstrip()
            if not plain[a:at].strip() and i > 0 and (not after or after[0].isupper()):
                a, b = sentences[i - 1][0], at + 1  # "... shown.\cite{x} Next": the one before
            sentence = plain[a:b]
            if len(sentence) > LONG_SENTENCE and ";" in sentence:
                rel = at - a
                left = sentence.rfind(";", 0, rel)
                right = sentence.find(";", rel)
                sentence = sentence[left + 1 : right if right >= 0 else len(sentence)]
            return sentence
    return plain


def extract_claim(text: str, citation_span: Span, language: DocKind) -> str:
    """The sentence (or clause) around the citation at ``citation_span``, as plain text.

    ``citation_span`` may cover the key alone or the whole citation command/group.
    Other citations, references, labels and footnotes are removed. Never raises:
    odd input gives the best text available ("" when there is none).
    """
    try:
        start = max(0, min(citation_span.start, len(text)))
        end = max(start, min(citation_span.end, len(text)))
        a, b = max(0, start - WINDOW), min(len(text), end + WINDOW)
        window = text[a:b]
        rel = Span(start - a, end - a)
        if language == DocKind.MARKDOWN:
            unit = _markdown_unit(_mark_markdown(window, rel))
            plain = unit
        else:
            unit = _latex_unit(_mark_latex(window, rel))
            plain = latex_to_text(unit)
        if _MARK not in plain:  # the converter swallowed the marker (e.g. inside an argument)
            plain = plain + _MARK
        return _tidy(_sentence_with_mark(plain))
    except Exception:  # a hover must never fail on odd input
        return ""


# ---------------------------------------------------------------------------- datasets

#: Citation markers as citing sentences in datasets carry them (SCITANCE, SciFact): "[12]",
#: "[3, 5-7]", "(Smith et al., 2019; Jones 2020)", "[CITATION]", "@@CITATION", "\\cite{x}", "[@x]".
_MARKERS = re.compile(
    r"\[\s*\d+(?:\s*[-–,;]\s*\d+)*\s*\]"
    r"|\[\s*(?:CITATION|CITE|REF)\s*\]|@@CITATION|\bCITATION\b"
    r"|\((?:[^()]*?\b(?:et al\.|and|&)\s*)?[A-Z][^()]*?,?\s+(?:19|20)\d\d[a-z]?"
    r"(?:\s*[;,]\s*[^()]*?(?:19|20)\d\d[a-z]?)*\)"
)


def strip_citation_markers(claim: str, language: DocKind = DocKind.LATEX) -> str:
    """A dataset's citing sentence without its citation markers, tidied as the editor's
    claims are (``"as shown before [3, 4]."`` -> ``"as shown before."``)."""
    try:
        text = _MARKERS.sub(_OTHER, claim)
        if "\\" in text and language != DocKind.MARKDOWN:
            text = _cut(text, _commands(text, _CITE_CMD), _OTHER)
        else:
            text = _MD_GROUP.sub(_OTHER, text)
        return _tidy(text)
    except Exception:  # odd input: the claim as given
        return " ".join(claim.split())
