"""The ``.bbl`` files of arXiv source bundles (the compiled bibliography, often without the
``.bib``) as BibTeX text the usual parser reads.

Two kinds: biblatex's (``\\entry{key}{type}{}`` with ``\\field{title}{...}``, ``\\name{author}``
and ``\\verb{doi}``) and BibTeX's (``\\bibitem[label]{key}`` then free text in
``\\newblock`` blocks: authors, title, then venue and year). Nothing is executed; a block
that cannot be read gives an entry with what could (a title at least), or none.
"""

from __future__ import annotations

import re

_BIBITEM = re.compile(r"\\bibitem\s*(?:\[(?:[^\[\]]|\[[^\]]*\])*\])?\s*\{([^}]*)\}")
_NEWBLOCK = re.compile(r"\\newblock\b")
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)[a-z]?\b")
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s{}\\,]+[^\s{}\\,.;])")
_ARXIV = re.compile(r"(?i)arxiv[:\s]*(?:abs/)?(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})")
_ENTRY = re.compile(r"\\entry\{([^}]*)\}\{([^}]*)\}")


def _brace_value(text: str, start: int) -> tuple[str, int]:
    """The balanced ``{...}`` group starting at ``text[start]`` (without its braces)."""
    if start >= len(text) or text[start] != "{":
        return "", start
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "\\":
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
    return text[start + 1 :], len(text)


def _clean(value: str) -> str:
    value = re.sub(r"\\(?:emph|textit|textbf|textsc|em|it|bf|sc)\b\s*", "", value)
    value = re.sub(r"\\(?:url|href)\s*\{[^}]*\}", "", value)
    value = value.replace("~", " ").replace("\\&", "&")
    return " ".join(value.split()).strip(" ,.;")


def _bib_value(value: str) -> str:
    """A value safe inside ``{...}``: braces balanced, else dropped."""
    depth = 0
    for c in value:
        depth += c == "{"
        depth -= c == "}"
        if depth < 0:
            break
    if depth != 0:
        value = value.replace("{", "").replace("}", "")
    return value


def _entry_text(key: str, kind: str, fields: dict[str, str]) -> str:
    key = re.sub(r"[\s,{}]", "", key) or "bbl"
    body = ",\n".join(f"  {k} = {{{_bib_value(v)}}}" for k, v in fields.items() if v)
    return f"@{kind}{{{key},\n{body}\n}}\n"


def _biblatex(text: str) -> list[str]:
    out = []
    for m in _ENTRY.finditer(text):
        end = text.find("\\endentry", m.end())
        block = text[m.end() : end if end != -1 else len(text)]
        fields: dict[str, str] = {}
        for f in re.finditer(r"\\field\{(\w+)\}", block):
            value, _ = _brace_value(block, f.end())
            name = {"journaltitle": "journal"}.get(f.group(1), f.group(1))
            if name in {"title", "journal", "booktitle", "year", "volume", "number", "pages", "eprint"}:
                fields.setdefault(name, _clean(value))
        for v in re.finditer(r"\\verb\{(doi|eprint|url)\}\s*\\verb\s+(\S+)", block):
            fields.setdefault(v.group(1), v.group(2))
        names = []
        nm = re.search(r"\\name\{author\}\{\d+\}\{[^}]*\}", block)
        if nm:
            group, _ = _brace_value(block, nm.end())
            for person in re.finditer(r"family=\{([^}]*)\}(?:[^{}]|\{[^}]*\})*?given=\{([^}]*)\}", group):
                names.append(f"{_clean(person.group(1))}, {_clean(person.group(2))}")
            if not names:
                names = [_clean(p) for p in re.findall(r"family=\{([^}]*)\}", group)]
        if names:
            fields["author"] = " and ".join(names)
        if "date" not in fields and "year" not in fields:
            d = re.search(r"\\field\{(?:year|date)\}\{(\d{4})", block)
            if d:
                fields["year"] = d.group(1)
        if fields.get("title"):
            out.append(_entry_text(m.group(1), m.group(2) or "misc", fields))
    return out


def _authors(block: str) -> str:
    block = _clean(block)
    parts = [p.strip() for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", block) if p.strip()]
    names = [p for p in parts if p.lower() not in {"et al", "others"} and len(p.split()) <= 5]
    return " and ".join(names)


def _bibtex(text: str) -> list[str]:
    out = []
    items = list(_BIBITEM.finditer(text))
    for i, m in enumerate(items):
        end = items[i + 1].start() if i + 1 < len(items) else len(text)
        body = text[m.end() : end].split("\\end{thebibliography}")[0]
        blocks = [b.strip() for b in _NEWBLOCK.split(body) if b.strip()]
        if len(blocks) < 2:
            continue
        fields: dict[str, str] = {"author": _authors(blocks[0]), "title": _clean(blocks[1])}
        rest = " ".join(blocks[2:])
        venue = re.sub(r"^In\s+", "", _clean(rest.split(",")[0])) if rest else ""
        if venue and not _YEAR.fullmatch(venue):
            fields["journal"] = venue
        years = _YEAR.findall(rest or body)
        if years:
            fields["year"] = years[-1]
        doi = _DOI.search(body)
        if doi:
            fields["doi"] = doi.group(1)
        ax = _ARXIV.search(body)
        if ax:
            fields["eprint"] = ax.group(1)
            fields["archiveprefix"] = "arXiv"
        if fields["title"]:
            out.append(_entry_text(m.group(1), "article" if "journal" in fields else "misc", fields))
    return out


def bbl_to_bibtex(text: str) -> str:
    """BibTeX entries for the references of a ``.bbl`` file (empty when it holds none)."""
    entries = _biblatex(text) if "\\entry{" in text else _bibtex(text)
    return "\n".join(entries)
