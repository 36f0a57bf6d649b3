"""The fix benchmark's set: real papers, one error each, and correct entries in the forms
people write, deterministically (a seed), with the truth to score against.

The papers are the fake APIs' own data (``tests/fakes/papers.json``, recorded from the real
APIs) and the 300 real entries of ``benchmarks/data/bib300_papers.json``, so the fake
serves every one. Papers without a venue, of a preprint server or a data archive, with a
title of fewer than four words, or with more than 30 authors are left out. A paper with no
page range gets a made-up one (``synthetic_pages``: bib300's records carry none), which the
fake then serves as the paper's pages, so that wrong and missing pages can be scored.

With ``disagreements``, the sources describe some papers differently, as real ones do
(``_disagree``). Each selected paper becomes one entry written in one of three file styles (``STYLES``: LF
with braces and two spaces; CRLF with quotes, tabs, ``Title``-case names and bare years;
aligned ``=`` with ``First Last`` authors), with the user's own fields a fix must keep (a
note, a URL, keywords, an abstract). Wrong entries carry one error of ``KINDS``; the others
are left correct. ``truth`` is the entry as it should read."""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from citelens.core.accents import strip_accents
from citelens.documents.bibtex.render import bibtex_author

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SOURCES = (ROOT / "tests" / "fakes" / "papers.json", ROOT / "benchmarks" / "data" / "bib300_papers.json")

KINDS = (
    "year",
    "venue",
    "author_dropped",
    "author_misspelled",
    "authors_swapped",
    "doi_neighbour",
    "title_truncated",
    "pages_wrong",
    "doi_pages_missing",
)
STYLES = ("lf_braces", "crlf_quotes", "aligned_first_last")
_SKIP_VENUES = re.compile(
    r"arxiv|\bcorr\b|zenodo|biorxiv|medrxiv|ssrn|figshare|github|institute of technology|thesis",
    re.IGNORECASE,
)
_PROCEEDINGS = re.compile(r"proceedings|conference|workshop|symposium|findings of|meeting", re.IGNORECASE)


@dataclass
class Item:
    key: str
    style: str
    kind: str  # one of KINDS, or "correct"
    truth: dict[str, Any]  # field -> value as it should read (title, author list, year, ...)
    written: dict[str, Any]  # what the generated entry says
    paper: int  # index into the papers served


@dataclass
class Generated:
    items: list[Item] = field(default_factory=list)
    papers: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # style -> .bib text


def _papers() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for path in SOURCES:
        data = json.loads(path.read_text(encoding="utf-8"))
        for p in data["papers"] if isinstance(data, dict) else data:
            title = str(p.get("title") or "")
            venue = str(p.get("venue") or "")
            doi = str(p.get("doi") or "")
            key = re.sub(r"\W+", "", title.lower())
            if (
                not venue
                or _SKIP_VENUES.search(venue)
                or doi.startswith(("10.5281/", "10.48550/", "10.1101/"))
                or len(title.split()) < 4
                or not p.get("authors")
                or len(p["authors"]) > 30
                or not p.get("year")
                or key in seen
                or any(len(a.split()) < 2 or "," in a for a in p["authors"])
            ):
                continue
            seen.add(key)
            out.append(dict(p))
    return out


def synthetic_pages(rng: random.Random) -> str:
    start = rng.randint(1, 900)
    return f"{start}-{start + rng.randint(4, 20)}"


def _family(name: str) -> str:
    return name.split()[-1]


def _given(name: str) -> str:
    return " ".join(name.split()[:-1])


def _disagree(p: dict[str, Any], rng: random.Random) -> None:
    """How sources describe a paper differently, as real ones do (the keys of
    ``tests/fakes/scholarly.title_as``): S2's and OpenAlex's names without accents,
    Crossref's with initials, Crossref's online year one before the print year, an index's
    title in capitals."""
    roll = rng.random()
    if roll < 0.25:
        p["s2_authors"] = [strip_accents(a) for a in p["authors"]]
    elif roll < 0.45:
        p["authors_crossref"] = [f"{a.split()[0][0]}. {a.split()[-1]}" for a in p["authors"]]
    elif roll < 0.6:
        p["crossref_online_year"] = int(p["year"]) - 1
    elif roll < 0.7:
        p["crossref_title"] = str(p["title"]).upper()


def generate(seed: int = 33, wrong_share: float = 0.75, disagreements: bool = False) -> Generated:
    rng = random.Random(seed)
    papers = _papers()
    gen = Generated(papers=papers)
    for i, p in enumerate(papers):
        pages = str(p.get("pages") or "")
        if not re.fullmatch(r"\s*\d+\s*[-\u2013]+\s*\d+\s*", pages):
            p["pages"] = synthetic_pages(rng)
            p["synthetic_pages"] = True
        p["pages"] = re.sub(r"\s*[-\u2013]+\s*", "-", str(p["pages"]).strip())
        a, b = p["pages"].split("-")
        if len(b) < len(a):  # 2310-5 -> 2310-2315
            p["pages"] = f"{a}-{a[: len(a) - len(b)]}{b}"
        if disagreements:
            _disagree(p, rng)
        style = STYLES[i % len(STYLES)]
        kind = "correct" if rng.random() >= wrong_share else KINDS[(i // len(STYLES)) % len(KINDS)]
        truth = {
            "title": p["title"],
            "authors": list(p["authors"]),
            "year": int(p["year"]),
            "venue": p["venue"],
            "pages": p["pages"].replace("-", "--"),
            "doi": p.get("doi") or None,
            "type": "inproceedings" if _PROCEEDINGS.search(p["venue"]) else "article",
            "note": f"read {2020 + i % 5}",
            "url": f"https://example.org/paper/{i}" if i % 4 == 0 else None,
        }
        written = dict(truth, authors=list(truth["authors"]))
        kind = _inject(kind, written, truth, rng, papers, i)
        key = re.sub(r"[^a-z]", "", _family(truth["authors"][0]).lower())[:12] + str(truth["year"]) + f"_{i}"
        gen.items.append(Item(key, style, kind, truth, written, i))
    for style in STYLES:
        gen.files[style] = render_file([it for it in gen.items if it.style == style], style)
    return gen


def _inject(
    kind: str,
    w: dict[str, Any],
    truth: dict[str, Any],
    rng: random.Random,
    papers: list[dict[str, Any]],
    i: int,
) -> str:
    """Put one error of ``kind`` into ``w``; a kind that does not fit the paper falls back
    to the year."""
    authors = w["authors"]
    if kind == "venue":
        others = [p["venue"] for p in papers if p["venue"] != truth["venue"]]
        w["venue"] = rng.choice(others)
    elif kind == "author_dropped" and len(authors) >= 2:
        del authors[rng.randrange(1, len(authors))]
    elif kind == "author_misspelled":
        j = rng.randrange(len(authors))
        fam = _family(authors[j])
        if len(fam) < 4:
            return _inject("year", w, truth, rng, papers, i)
        k = rng.randrange(1, len(fam) - 1)
        fam2 = (
            fam[:k] + fam[k + 1] + fam[k] + fam[k + 2 :] if fam[k] != fam[k + 1] else fam[:k] + fam[k + 1 :]
        )
        authors[j] = (_given(authors[j]) + " " + fam2).strip()
    elif kind == "authors_swapped" and len(authors) >= 2:
        j = rng.randrange(len(authors) - 1)
        authors[j], authors[j + 1] = authors[j + 1], authors[j]
    elif kind == "doi_neighbour" and truth["doi"] and truth["doi"][-1].isdigit():
        last = int(truth["doi"][-1])
        w["doi"] = truth["doi"][:-1] + str((last + 1) % 10)
    elif kind == "title_truncated" and len(truth["title"].split()) >= 6:
        words = truth["title"].split()
        w["title"] = " ".join(words[: max(4, len(words) * 3 // 5)])
    elif kind == "pages_wrong":
        a, b = (int(x) for x in truth["pages"].split("--"))
        shift = rng.choice((-1, 1)) * rng.randint(10, 90)
        w["pages"] = f"{max(1, a + shift)}--{max(2, b + shift)}"
    elif kind == "doi_pages_missing" and truth["doi"]:
        w["doi"] = None
        w["pages"] = None
    elif kind in (
        "year",
        "author_dropped",
        "authors_swapped",
        "doi_neighbour",
        "title_truncated",
        "doi_pages_missing",
    ):
        w["year"] = truth["year"] + rng.choice((-3, -2, -1, 1, 2))
        return "year"
    return kind


def _bibtex_name(name: str) -> str:
    return bibtex_author(name)


def _escape(s: str) -> str:
    return s.replace("&", r"\&").replace("%", r"\%").replace("_", r"\_").replace("#", r"\#")


def render_entry(it: Item, style: str) -> str:
    w = it.written
    first_last = style == "aligned_first_last"
    author = " and ".join(a if first_last else _bibtex_name(a) for a in w["authors"])
    venue_field = "booktitle" if w["type"] == "inproceedings" else "journal"
    fields: list[tuple[str, str]] = [
        ("title", _escape(w["title"])),
        ("author", _escape(author)),
        (venue_field, _escape(w["venue"])),
        ("year", str(w["year"])),
    ]
    if w["pages"]:
        fields.append(("pages", w["pages"]))
    if w["doi"]:
        fields.append(("doi", w["doi"]))
    fields.append(("note", w["note"]))
    if w.get("url"):
        fields.append(("url", w["url"]))
    if style == "lf_braces":
        body = ",\n".join(f"  {n} = {{{v}}}" for n, v in fields)
        return f"@{w['type']}{{{it.key},\n{body},\n}}"
    if style == "crlf_quotes":
        lines = []
        for n, v in fields:
            val = v if n == "year" else f'"{v}"'
            lines.append(f"\t{n[0].upper() + n[1:]} = {val}")
        return f"@{w['type'].capitalize()}{{{it.key},\r\n" + ",\r\n".join(lines) + "\r\n}"
    width = max(len(n) for n, _ in fields)
    body = ",\n".join(f"    {n.ljust(width)} = {{{v}}}" for n, v in fields)
    return f"@{w['type']}{{{it.key},\n{body}\n}}"


def render_file(items: list[Item], style: str) -> str:
    nl = "\r\n" if style == "crlf_quotes" else "\n"
    head = f"% fix benchmark, style {style}{nl}{nl}"
    return head + (nl + nl).join(render_entry(it, style) for it in items) + nl


def write(gen: Generated, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for style, text in gen.files.items():
        with open(folder / f"{style}.bib", "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    (folder / "truth.json").write_text(
        json.dumps([asdict(it) for it in gen.items], indent=1), encoding="utf-8"
    )
