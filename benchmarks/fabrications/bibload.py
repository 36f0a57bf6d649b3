"""Read real .bib files into plain-Unicode dicts and EntryViews (benchmark helper).

Uses bibtexparser and pylatexenc directly so the benchmark does not depend on
the project's own parser; the end-to-end run will use that parser instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bibtexparser
from bibtexparser.middlewares import names as bnames
from pylatexenc.latex2text import LatexNodes2Text

from citelens.core.model import EntryView, Name

_L2T = LatexNodes2Text(math_mode="text", strict_latex_spaces=True)
_ARXIV = re.compile(r"(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})", re.IGNORECASE)


def unicode(text: str) -> str:
    if "\\" not in text and "$" not in text:
        return " ".join(text.replace("{", "").replace("}", "").split())
    try:
        return " ".join(_L2T.latex_to_text(text).split())
    except Exception:
        return " ".join(text.replace("{", "").replace("}", "").split())


def split_authors(raw: str) -> tuple[list[dict[str, str]], bool]:
    """Structured authors (Unicode) and whether the list ends in "and others"."""
    out: list[dict[str, str]] = []
    truncated = False
    for person in bnames.split_multiple_persons_names(" ".join(raw.split())):
        if person.strip().lower() == "others":
            truncated = True
            continue
        try:
            p = bnames.parse_single_name_into_parts(person)
        except Exception:
            out.append({"first": "", "von": "", "last": unicode(person), "jr": ""})
            continue
        out.append({k: unicode(" ".join(getattr(p, k))) for k in ("first", "von", "last", "jr")})
    return out, truncated


def read_entries(path: Path) -> Iterator[dict[str, Any]]:
    """Entries of a .bib file as dicts of raw (LaTeX) field values plus type and key."""
    lib = bibtexparser.parse_string(  # type: ignore[attr-defined]
        path.read_text(encoding="utf-8", errors="replace"))
    for e in lib.entries:
        fields = {f.key.lower(): str(f.value) for f in e.fields}
        yield {"entry_type": e.entry_type.lower(), "key": e.key, "fields": fields}


#: AASTeX journal macros (the journals' own abbreviations).
AAS_MACROS = {"apj": "ApJ", "apjl": "ApJL", "apjs": "ApJS", "aj": "AJ", "aap": "A&A",
              "astap": "A&A", "mnras": "MNRAS", "pasp": "PASP", "nat": "Nature",
              "araa": "ARA&A", "aaps": "A&AS", "pasj": "PASJ", "icarus": "Icarus",
              "jcap": "JCAP", "prd": "Phys. Rev. D", "physrep": "Phys. Rep."}


def plain_entry(raw: dict[str, Any]) -> dict[str, Any] | None:
    """A raw entry in the JSON shape used by the benchmark set, or None without a title."""
    f = raw["fields"]
    title = unicode(f.get("title", ""))
    if not title:
        return None
    authors, truncated = split_authors(f.get("author", ""))
    year_m = re.search(r"\d{4}", f.get("year", ""))
    journal = f.get("journal") or ""
    macro = re.fullmatch(r"\\([a-z]+)", journal.strip())
    if macro and macro.group(1) in AAS_MACROS:
        journal = AAS_MACROS[macro.group(1)]
    venue = unicode(journal or f.get("booktitle") or f.get("publisher")
                    or f.get("school") or f.get("institution") or "")
    doi = (f.get("doi") or "").strip().lower() or None
    if doi:
        doi = re.sub(r"^(https?://)?(dx\.)?doi\.org/", "", doi)
    eprint = f.get("eprint") or ""
    arxiv = None
    if eprint and (f.get("archiveprefix", "").lower() == "arxiv" or _ARXIV.fullmatch(eprint)):
        m = _ARXIV.search(eprint)
        arxiv = m.group(1) if m else None
    return {
        "key": raw["key"], "entry_type": raw["entry_type"], "title": title,
        "authors": authors, "authors_truncated": truncated,
        "year": int(year_m.group()) if year_m else None, "venue": venue, "doi": doi,
        "arxiv_id": arxiv, "pmid": f.get("pmid") or None, "s2_id": f.get("s2id") or None,
        "url": f.get("url") or None,
    }


def to_view(d: dict[str, Any]) -> EntryView:
    return EntryView(
        key=d["key"], entry_type=d["entry_type"], title=d["title"],
        authors=tuple(Name(a["first"], a["von"], a["last"], a["jr"]) for a in d["authors"]),
        authors_truncated=bool(d["authors_truncated"]), year=d["year"], venue=d["venue"] or "",
        doi=d["doi"], arxiv_id=d["arxiv_id"], pmid=d["pmid"], s2_id=d["s2_id"], url=d["url"],
    )
