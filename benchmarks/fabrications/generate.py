"""Build the labelled fabrication set from real bibliography entries (deterministic).

    .venv/bin/python benchmarks/fabrications/generate.py [--bigbib DIR] [--out DIR]

The files are not committed (1.7 MB, partly GPL-3.0 metadata of the corpus):
:func:`ensure_generated` builds them on demand into
``benchmarks/fabrications/.cache/<key>/`` (git-ignored), keyed by
:data:`GENERATOR_VERSION`, the source of this file and ``bibload.py``, and the
corpus files read; a second run reuses them. Generation takes ~2 s.

Writes:

* ``truth.jsonl`` - the scholarly records a fake API serves: one PaperRecord
  JSON object per line, plus ``"_paper"`` (the paper it describes; several
  lines share it when Crossref, Semantic Scholar and arXiv describe one paper).
  Papers used by the set, plus real distractor papers from the same corpus.
* ``set.jsonl`` - one labelled entry per line: ``id``, ``label`` ("real" or
  "fabricated"), ``type``, ``subtype``, ``paper`` (the truth paper it derives
  from, or null), ``entry`` (EntryView fields, authors as {first,von,last,jr})
  and ``bibtex`` (the same entry as BibTeX, for an end-to-end run through the
  parser and the verifier against a fake server that serves truth.jsonl).

Sources: Physical Review E entries (physrev_e_1993_2024.bib of the folder
``CITELENS_BIGBIB`` names, see ``benchmarks/bigbib.py``), the entries with DOIs of the
real papers in tests/corpus/papers/ (astronomy, NLP, software,
citation analysis) and NeurIPS/ICML/ICLR entries (ml_conferences.bib, same folder).
The truth records are derived from those entries the way the sources render
them (full journal names, "First Last" display names, S2's venue strings,
an arXiv version a year earlier with a synthesised arXiv id). Perturbations
imitate what a language model inventing references writes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import sys
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # the repo root, for `benchmarks.*`

from benchmarks.bigbib import BIGBIB  # noqa: E402
from benchmarks.fabrications.bibload import plain_entry, read_entries  # noqa: E402
from tests.harness import CORPUS  # noqa: E402

from citelens.verify.match.venues import venue_display_name  # noqa: E402

#: Bump when the output changes for a reason the key does not see (e.g. a library upgrade).
GENERATOR_VERSION = "5"
CACHE_DIR = HERE / ".cache"
PAPERS = CORPUS / "papers"
SMALL_BIBS = ("astropy-v5.0/refs.bib", "thammegowda-dissertation/anthology.bib",
              "tsr-dockerfiles-rmd/bibliography.bib", "saier-phd-thesis/bib/dis.bib",
              "joss-gmr/paper.bib", "scipy-1.0/references.bib")
BIG_BIBS = ("physrev_e_1993_2024.bib", "ml_conferences.bib")
SEED = 20240611
N_REAL = 330
N_PER_TYPE = 40
N_DISTRACTORS = 700
TYPES = ("invented_title", "chimeric", "near_miss_title", "wrong_authors", "wrong_venue",
         "wrong_year", "fabricated_identifier", "doi_other_paper", "hybrid")
#: v5: the two shapes that passed as verified (issue 27), appended after the v4 rows
#: (whose keys and contents do not change), and the sources' disagreements.
NEW_TYPES = ("paraphrased_title", "preprint_as_published")
N_PREPRINT_ONLY_REAL = 30  # real entries of papers only known as arXiv preprints
N_PREPRINT_TITLE_REAL = 20  # real entries citing the preprint's title (it differs)
#: How sources disagree with each other and with the entry, each switched on for half the
#: papers (where it applies: a subtitle needs a colon, "et al." four authors...).
DISAGREEMENTS = ("crossref_subtitle", "erratum_title", "jats_markup", "mathml_title",
                 "html_entities", "all_caps_title", "truncated_title", "preprint_title",
                 "authors_et_al", "authors_cut_at_ten", "initials_in_source",
                 "diacritics_stripped", "print_online_year", "s2_venue_empty")
CURRENT_YEAR = 2025

Entry = dict[str, Any]


# --------------------------------------------------------------------------- reading sources


def sample_big_bib(path: Path, n: int, rng: random.Random, pattern: str = "") -> list[Entry]:
    """``n`` random entries of a huge .bib file without parsing all of it."""
    text = path.read_text(encoding="utf-8", errors="replace").replace("\x00", "")
    chunks = ["@" + c for c in text.split("\n@")[1:] if not pattern or re.search(pattern, c)]
    picked = rng.sample(chunks, min(len(chunks), n * 2))
    with tempfile.TemporaryDirectory(prefix="citelens-fab-") as tmpdir:
        tmp = Path(tmpdir) / "sample.bib"
        tmp.write_text("\n\n".join(picked), encoding="utf-8")
        out = [d for r in read_entries(tmp) if (d := plain_entry(r)) and d["authors"]
               and d["year"]]
    return out[:n]


def small_bibs(papers: Path) -> list[Entry]:
    out = []
    for rel in SMALL_BIBS:
        for raw in read_entries(papers / rel):
            d = plain_entry(raw)
            if d and d["doi"] and d["authors"] and d["year"] and len(d["title"]) > 12:
                d["origin"] = rel.split("/")[0]
                out.append(d)
    return out


# --------------------------------------------------------------------------- truth records


def display(a: dict[str, str]) -> str:
    return " ".join(p for p in (a["first"], a["von"], a["last"], a["jr"]) if p)


def ascii_fold(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


def s2_venue(venue: str, year: int) -> str:
    if venue in ("Phys. Rev. E", "Physical Review E"):
        return ("Physical review. E, Statistical, nonlinear, and soft matter physics"
                if 2001 <= year <= 2015 else "Physical review. E")
    return {"NeurIPS": "Neural Information Processing Systems",
            "Advances in Neural Information Processing Systems":
                "Neural Information Processing Systems",
            "AISTATS": "International Conference on Artificial Intelligence and Statistics",
            "UAI": "Conference on Uncertainty in Artificial Intelligence",
            "COLT": "Annual Conference Computational Learning Theory",
            "ICML": "International Conference on Machine Learning",
            "ICLR": "International Conference on Learning Representations"}.get(venue, venue)


def truth_records(pid: str, e: Entry, rng: random.Random, arxiv_id: str | None) -> list[Entry]:
    """The records Crossref / Semantic Scholar / arXiv would give for an entry's paper."""
    authors = [display(a) for a in e["authors"]]
    venue = e["venue"] or None
    full_venue = venue_display_name(venue) if venue else None
    recs = []
    if e["doi"]:
        recs.append({"source": "crossref", "title": e["title"], "authors": authors,
                     "year": e["year"], "venue": full_venue, "doi": e["doi"],
                     "publication_types": ["journal-article"]})
    s2_authors = [ascii_fold(a) if rng.random() < 0.3 else a for a in authors]
    s2_title = e["title"] if rng.random() < 0.7 else e["title"].lower().capitalize()
    recs.append({"source": "s2", "title": s2_title, "authors": s2_authors, "year": e["year"],
                 "venue": s2_venue(venue or "", e["year"]) if venue else None,
                 "venue_alternates": [venue] if venue and venue != full_venue else [],
                 "doi": e["doi"], "arxiv_id": arxiv_id,
                 "s2_paper_id": _s2id(pid)})
    if arxiv_id:
        recs.append({"source": "arxiv", "title": e["title"], "authors": authors,
                     "year": e["year"] - (1 if rng.random() < 0.6 else 0), "venue": "arXiv",
                     "arxiv_id": arxiv_id, "is_preprint": True})
    for r in recs:
        r["_paper"] = pid
    return recs


def _s2id(pid: str) -> str:
    return hashlib.sha1(pid.encode()).hexdigest()


# --------------------------------------------------------------------------- perturbations

SUBSTITUTES = {
    "image": "video", "images": "videos", "video": "image", "learning": "training",
    "deep": "shallow", "networks": "models", "network": "model",
    "language": "speech", "translation": "summarization", "supervised": "unsupervised",
    "linear": "nonlinear", "nonlinear": "linear", "quantum": "classical",
    "classical": "quantum", "two-dimensional": "three-dimensional",
    "three-dimensional": "two-dimensional", "stochastic": "deterministic",
    "random": "correlated", "equilibrium": "nonequilibrium", "nonequilibrium": "equilibrium",
    "granular": "colloidal", "colloidal": "granular", "turbulent": "laminar",
    "stability": "instability", "synchronization": "desynchronization",
    "galaxies": "clusters", "galaxy": "cluster", "stars": "planets", "stellar": "galactic",
    "python": "julia", "software": "hardware", "citation": "reference", "citations": "references",
    "dynamics": "kinetics", "diffusion": "transport", "active": "passive", "model": "theory",
    "optimization": "inference", "graph": "hypergraph", "attention": "memory",
    "reinforcement": "imitation", "adversarial": "cooperative", "bayesian": "frequentist",
    "convex": "nonconvex", "sparse": "dense", "low-resource": "high-resource",
    "multilingual": "bilingual", "neural": "statistical",
}
ADJECTIVES = ("Efficient", "Robust", "Scalable", "Adaptive", "Hierarchical", "Unified",
              "Generalized", "Improved", "Universal", "Fast")
PLACEHOLDERS = ({"first": "John", "von": "", "last": "Doe", "jr": ""},
                {"first": "Jane", "von": "", "last": "Doe", "jr": ""},
                {"first": "", "von": "", "last": "Anonymous", "jr": ""},
                {"first": "Author", "von": "", "last": "One", "jr": ""},
                {"first": "Firstname", "von": "", "last": "Lastname", "jr": ""},
                {"first": "", "von": "", "last": "et al.", "jr": ""})
FAKE_VENUES = ("International Journal of Advanced Computational Physics",
               "Journal of Machine Learning Systems", "Transactions on Neural Computation",
               "Journal of Nonlinear Complex Systems", "International Conference on Deep "
               "Representation Learning", "Annals of Computational Linguistics",
               "Journal of Statistical Physics Letters", "Astrophysical Review Letters",
               "IEEE Transactions on Scientific Software", "Proceedings of the Workshop on "
               "Open Research Software")
STOP = {"a", "an", "the", "of", "for", "and", "in", "on", "with", "to", "by", "from", "via",
        "at", "as", "is", "are"}


def words(title: str) -> list[str]:
    return title.split()


def near_miss(title: str, rng: random.Random, pool: list[str]) -> tuple[str, str]:
    ws = words(title)
    subs = [i for i, w in enumerate(ws) if w.lower().strip(",.:") in SUBSTITUTES]
    roll = rng.random()
    if subs and roll < 0.55:
        i = rng.choice(subs)
        w = ws[i].strip(",.:")
        new = SUBSTITUTES[w.lower()]
        ws[i] = ws[i].replace(w, new.capitalize() if w[0].isupper() else new)
        return " ".join(ws), "substituted"
    content = [i for i, w in enumerate(ws) if w.lower() not in STOP and len(w) > 3]
    if roll < 0.75 and content:
        i = rng.choice(content)
        other = [w for t in rng.sample(pool, 5) for w in words(t)
                 if w.lower() not in STOP and len(w) > 4 and w.lower() not in title.lower()]
        if other:
            ws[i] = rng.choice(other)
            return " ".join(ws), "replaced"
    if roll < 0.9 or len(content) < 3:
        pos = rng.choice([i for i, w in enumerate(ws) if w.lower() not in STOP] or [0])
        adj = rng.choice(ADJECTIVES)
        ws.insert(pos, adj if pos == 0 else adj.lower())
        return " ".join(ws), "added"
    del ws[rng.choice(content)]
    return " ".join(ws), "dropped"


def invented_title(rng: random.Random, pool: list[str]) -> str:
    """A plausible title nobody wrote: the head of one real title joined to the tail of another."""
    a, b = rng.sample(pool, 2)
    wa, wb = words(a), words(b)
    cut_a = max(2, min(len(wa) - 1, len(wa) // 2 + rng.randint(-1, 1)))
    joins = [i for i, w in enumerate(wb) if w.lower() in ("for", "in", "of", "with", "on", "via")]
    tail = wb[joins[0]:] if joins and joins[0] > 0 else ["for", *wb[len(wb) // 2:]]
    head = [w for w in wa[:cut_a] if w.lower() not in ("for", "in", "of", "with", "on")]
    if rng.random() < 0.3:
        head = [rng.choice(("Towards", "On", "Learning", "Understanding")), *head]
    return " ".join(head + tail)


def initials(first: str) -> str:
    return " ".join(p[0] + "." for p in re.split(r"[\s]+", first) if p and p[0].isalpha())


def fake_name(rng: random.Random, names: list[dict[str, str]]) -> dict[str, str]:
    a, b = rng.sample(names, 2)
    return {"first": a["first"], "von": "", "last": b["last"], "jr": ""}


# --------------------------------------------------------------------------- v5: paraphrases

#: Function words a paraphrase swaps ("towards" for "for": the commonest invented variant).
FUNCTION_SWAPS = {"for": ("towards", "toward", "in", "with"), "of": ("for", "in", "on"),
                  "in": ("for", "on", "of"), "on": ("in", "for"), "with": ("via", "for"),
                  "via": ("with", "through"), "from": ("of", "for"), "to": ("towards", "for"),
                  "towards": ("for",), "toward": ("for",), "through": ("via",),
                  "using": ("with", "via"), "under": ("in", "with"), "by": ("via", "with")}
SYNONYMS = {"learning": "training", "method": "approach", "methods": "approaches",
            "approach": "method", "model": "framework", "models": "frameworks",
            "analysis": "study", "study": "analysis", "efficient": "fast", "large": "big",
            "networks": "nets", "network": "net", "dynamics": "behavior", "theory": "model",
            "systems": "models", "system": "model", "estimation": "inference",
            "representation": "embedding", "generation": "synthesis",
            "detection": "recognition", "recognition": "detection", "prediction": "forecasting",
            "evidence": "support", "properties": "features", "effects": "impacts",
            "effect": "impact", "structure": "organization", "transition": "change",
            "transitions": "changes", "random": "stochastic", "algorithm": "procedure",
            "algorithms": "procedures", "neural": "deep", "data": "datasets"}
PARAPHRASE_KINDS = ("function_word", "number", "synonym", "inserted", "dropped")


def _plural(w: str) -> str | None:
    """The other number of a content word ("networks" <-> "network"), or None."""
    lw = w.lower()
    if len(lw) < 4 or not (lw.isascii() and lw.isalpha()) or lw in STOP or lw.endswith("ly"):
        return None
    if lw.endswith("ies") and len(lw) > 5:
        return w[:-3] + "y"
    if lw.endswith("s") and not lw.endswith(("ss", "us", "is", "sis")):
        return w[:-1]
    if lw.endswith("y") and lw[-2] not in "aeiou":
        return w[:-1] + "ies"
    if lw.endswith(("ing", "ed", "al", "ic", "ous", "ive", "ble", "ar")):
        return None  # not a noun
    return w + "s"


def paraphrase(title: str, kind: str, rng: random.Random) -> tuple[str, str] | None:
    """``title`` with one word substituted, inserted or dropped, as a model paraphrasing
    a real title writes it; (title, kind) or None when ``kind`` does not apply."""
    ws = title.split()
    core = [i for i, w in enumerate(ws) if i > 0 and w.strip(",.:;?").lower() not in STOP
            and w.strip(",.:;?").isalpha() and len(w) > 3]
    if kind == "function_word":
        at = [i for i, w in enumerate(ws) if w.lower() in FUNCTION_SWAPS and 0 < i < len(ws) - 1]
        if not at:
            return None
        i = rng.choice(at)
        ws[i] = rng.choice(FUNCTION_SWAPS[ws[i].lower()])
    elif kind == "number":
        at = [i for i in core if _plural(ws[i].strip(",.:;?"))]
        if not at:
            return None
        i = rng.choice(at)
        w = ws[i].strip(",.:;?")
        ws[i] = ws[i].replace(w, _plural(w) or w)
    elif kind == "synonym":
        at = [i for i in range(len(ws)) if ws[i].strip(",.:;?").lower() in SYNONYMS]
        if not at:
            return None
        i = rng.choice(at)
        w = ws[i].strip(",.:;?")
        new = SYNONYMS[w.lower()].rstrip("_")
        ws[i] = ws[i].replace(w, new.capitalize() if w[0].isupper() else new)
    elif kind == "inserted":
        at = [i for i in core if ws[i - 1].lower() in STOP or i == 1]
        if not at:
            return None
        i = rng.choice(at)
        adj = rng.choice(ADJECTIVES)
        ws.insert(i, adj if ws[i][0].isupper() else adj.lower())
    else:  # dropped
        at = [i for i in core if ":" not in ws[i] and len(ws) > 4]
        if not at:
            return None
        del ws[rng.choice(at)]
    new_title = " ".join(ws)
    return (new_title, kind) if new_title != title else None


# --------------------------------------------------------------------------- v5: preprints

INVENTED_VENUES = ("Symposium on Regularization Techniques", "Journal of Deep Representation "
                   "Learning", "International Conference on Scalable Inference Systems",
                   "Transactions on Machine Perception", "Workshop on Neural Reasoning "
                   "Benchmarks", "Journal of Foundation Model Research",
                   "Conference on Generative Modeling and Alignment",
                   "International Journal of Learning Dynamics")
REAL_VENUES = ("CVPR", "ICCV", "ECCV", "ICML", "NeurIPS", "ICLR", "AAAI", "IJCAI", "ACL",
               "EMNLP", "Journal of Machine Learning Research",
               "IEEE Transactions on Pattern Analysis and Machine Intelligence",
               "Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition")


def arxiv_doi(arxiv: str) -> str:
    return f"10.48550/arXiv.{arxiv}"


def make_preprint_only(pid: str, truth: list[Entry], d: Entry) -> None:
    """Turn a paper into one every source knows only as an arXiv preprint: no Crossref
    record, S2 without a venue, its DOI arXiv's."""
    truth[:] = [r for r in truth if not (r["_paper"] == pid and r["source"] == "crossref")]
    for r in truth:
        if r["_paper"] == pid and r["source"] == "s2":
            r.update(venue=None, venue_alternates=[], doi=arxiv_doi(d["truth_arxiv"]))
    d["doi"] = arxiv_doi(d["truth_arxiv"])
    d["venue"] = ""


# --------------------------------------------------------------------------- v5: disagreements


def _wrap_word(title: str, rng: random.Random, left: str, right: str) -> str:
    ws = title.split(" ")
    at = [i for i, w in enumerate(ws) if w.isalpha() and len(w) > 3]
    if not at:
        return title
    i = rng.choice(at)
    ws[i] = f"{left}{ws[i]}{right}"
    return " ".join(ws)


MATHML_OPEN = ('<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML" display="inline">'
               "<mml:mi>")
MATHML_CLOSE = "</mml:mi></mml:math>"


def _entities(title: str) -> str | None:
    if " and " in title:
        return title.replace(" and ", " &amp; ", 1)
    if "'" in title:
        return title.replace("'", "&#39;", 1)
    if "-" in title:
        return title.replace("-", "&#8208;", 1)
    return title.replace(" ", "&#160;", 1) if " " in title else None


def disagreement_render(d: Entry, recs: list[Entry], on: set[str], rng: random.Random,
                        avoid: frozenset[str] = frozenset()) -> tuple[dict[str, Any], list[str]]:
    """The fake's per-source overrides for a paper (keys of tests.fakes.scholarly.title_as)
    and the disagreement kinds that applied. The preprint's title is never one in
    ``avoid`` (a paraphrase the set cites as fabricated must not be a real version)."""
    render: dict[str, Any] = {}
    applied: list[str] = []
    src = {r["source"]: r for r in recs}
    title = (src.get("crossref") or src.get("s2") or recs[0])["title"]
    authors = list((src.get("s2") or recs[0])["authors"])
    if "crossref" in src:
        t, subtitle = title, ""
        if "crossref_subtitle" in on and ":" in t:
            t, subtitle = (x.strip() for x in t.split(":", 1))
            applied.append("crossref_subtitle")
        if "all_caps_title" in on:
            t, subtitle = t.upper(), subtitle.upper()
            applied.append("all_caps_title")
        if "html_entities" in on and (e := _entities(t)) is not None:
            t = e
            applied.append("html_entities")
        if "jats_markup" in on:
            t = _wrap_word(t, rng, *rng.choice((("<i>", "</i>"), ("<jats:italic>", "</jats:italic>"),
                                                ("<scp>", "</scp>"))))
            applied.append("jats_markup")
        if "mathml_title" in on:
            t = _wrap_word(t, rng, MATHML_OPEN, MATHML_CLOSE)
            applied.append("mathml_title")
        if "erratum_title" in on:
            t, subtitle = "ERRATUM", f"{t}: {subtitle}" if subtitle else t
            applied.append("erratum_title")
        if t != title:
            render["crossref_title"] = t
        if subtitle:
            render["crossref_subtitle"] = subtitle
        cr_authors = list(src["crossref"]["authors"])
        if "initials_in_source" in on:
            cr_authors = [" ".join([*(p[0] + "." for p in a.split()[:-1] if p[0].isalpha()),
                                    a.split()[-1]]) if len(a.split()) > 1 else a
                          for a in cr_authors]
            applied.append("initials_in_source")
        if "authors_et_al" in on and len(cr_authors) >= 4:
            cr_authors = [*cr_authors[:3], "et al."]
            applied.append("authors_et_al")
        if cr_authors != src["crossref"]["authors"]:
            render["authors_crossref"] = cr_authors
        if "print_online_year" in on and d["year"]:
            render["crossref_online_year"] = d["year"] - 1
            applied.append("print_online_year")
    s2_authors = authors
    if "diacritics_stripped" in on and any(not a.isascii() for a in authors):
        s2_authors = [ascii_fold(a) for a in s2_authors]
        applied.append("diacritics_stripped")
    if "authors_cut_at_ten" in on and len(authors) > 10:
        s2_authors = s2_authors[:10]
        applied.append("authors_cut_at_ten")
    if s2_authors != authors:
        render["s2_authors"] = s2_authors
    ws = title.split()
    if "truncated_title" in on and len(ws) >= 7:
        keep = max(4, int(len(ws) * 0.6))
        render["s2_title"] = " ".join(ws[:keep]) + (" ..." if rng.random() < 0.5 else "")
        applied.append("truncated_title")
    if "preprint_title" in on and "arxiv" in src:
        for kind in ("synonym", "function_word", "inserted"):
            pre = paraphrase(title, kind, rng)
            if pre is not None and pre[0] not in avoid:
                render["arxiv_title"] = pre[0]
                applied.append("preprint_title")
                break
    if "s2_venue_empty" in on and "crossref" not in src and "arxiv" in src:
        render["s2_venue_empty"] = True
        applied.append("s2_venue_empty")
    return render, applied


# --------------------------------------------------------------------------- build


def to_bibtex(e: Entry) -> str:
    def person(a: dict[str, str]) -> str:
        last = " ".join(p for p in (a["von"], a["last"]) if p)
        return ", ".join(p for p in (last, a["jr"], a["first"]) if p)

    names = [person(a) for a in e["authors"]] + (["others"] if e["authors_truncated"] else [])
    vfield = "journal" if e["entry_type"] == "article" else (
        "booktitle" if e["entry_type"] in ("inproceedings", "incollection") else "howpublished")
    fields = [("title", "{" + e["title"] + "}"), ("author", " and ".join(names)),
              (vfield, e["venue"]), ("year", str(e["year"]) if e["year"] else ""),
              ("doi", e["doi"] or ""), ("eprint", e["arxiv_id"] or ""),
              ("archiveprefix", "arXiv" if e["arxiv_id"] else "")]
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields if v)
    return f"@{e['entry_type']}{{{e['key']},\n{body}\n}}"


def clean_entry(e: Entry) -> Entry:
    keys = ("key", "entry_type", "title", "authors", "authors_truncated", "year", "venue", "doi",
            "arxiv_id", "pmid", "s2_id", "url")
    out = {k: e.get(k) for k in keys}
    out["authors"] = [dict(a) for a in e["authors"]]
    out["s2_id"] = None  # the set must not hand the verifier the answer
    out["url"] = None
    return out


def build(bigbib: Path, papers: Path = PAPERS) -> tuple[list[Entry], list[Entry]]:
    """(set rows, truth records) generated from the large bibliographies in ``bigbib`` and
    the corpus papers; deterministic."""
    rng = random.Random(SEED)
    pre = sample_big_bib(bigbib / "physrev_e_1993_2024.bib", 900, rng)
    for d in pre:
        d["origin"] = "pre"
    ml = sample_big_bib(bigbib / "ml_conferences.bib", 380, rng,
                        r"booktitle = \{(Advances in Neural Information Processing Systems|ICML|ICLR"
                        r"|AISTATS|UAI|COLT)\}")
    for d in ml:
        d["origin"] = "ml"
    small = small_bibs(papers)
    seen: set[str] = set()
    papers: list[Entry] = []
    for d in small + ml + pre:
        norm = re.sub(r"\W+", " ", d["title"].lower()).strip()
        if norm in seen or (d["doi"] and d["doi"] in seen):
            continue  # one paper per title and per DOI
        seen.update((norm, d["doi"] or norm))
        papers.append(d)
    rng.shuffle(papers)
    truth: list[Entry] = []
    by_pid: dict[str, Entry] = {}
    arxiv_counter = 0
    for i, d in enumerate(papers):
        d["pid"] = f"P{i:04d}"
        arxiv = d["arxiv_id"]
        if not arxiv and (d["origin"] == "ml" or (d["origin"] != "pre" and rng.random() < 0.3)):
            arxiv_counter += 1
            yy = max(7, min(24, d["year"] - 2000 - 1)) if d["year"] > 2007 else 7
            arxiv = f"{yy:02d}{(arxiv_counter % 12) + 1:02d}.{10000 + arxiv_counter:05d}"
        arxiv_doi = re.fullmatch(r"10\.48550/arxiv\.(.+)", d["doi"] or "", re.IGNORECASE)
        if arxiv and arxiv_doi:
            # an arXiv DOI names its paper's arXiv id: never synthesise a second one (v2 gave
            # 7 papers two ids, a contradiction the verifier rightly reported on a real entry)
            arxiv = arxiv_doi.group(1)
        d["truth_arxiv"] = arxiv
        truth += truth_records(d["pid"], d, rng, arxiv)
        by_pid[d["pid"]] = d
    used = papers[: N_REAL + N_PER_TYPE * len(TYPES)]
    title_pool = [p["title"] for p in papers]
    name_pool = [a for p in papers for a in p["authors"] if a["first"] and len(a["last"]) > 2]
    venue_pool = sorted({p["venue"] for p in papers if p["venue"]})
    rows: list[Entry] = []
    borrowed: set[str] = set()  # papers whose DOI a fabricated entry carries

    def emit(label: str, typ: str, sub: str, pid: str | None, e: Entry) -> None:
        e = clean_entry(e)
        e["key"] = f"{typ[:4]}{len(rows):04d}"
        rows.append({"id": len(rows), "label": label, "type": typ, "subtype": sub, "paper": pid,
                     "entry": e, "bibtex": to_bibtex(e)})

    # ---- real entries, naturally varied
    variations = ("untouched", "initials", "and_others", "title_case", "sentence_case",
                  "dropped_subtitle", "venue_abbreviation", "arxiv_version", "british_spelling",
                  "missing_fields", "accents_ascii")
    for k, d in enumerate(used[:N_REAL]):
        e = json.loads(json.dumps(d))
        sub = variations[k % len(variations)]
        if sub == "initials":
            for a in e["authors"]:
                a["first"] = initials(a["first"])
        elif sub == "and_others" and len(e["authors"]) >= 3:
            e["authors"] = e["authors"][: rng.randint(1, 2)]
            e["authors_truncated"] = True
        elif sub == "title_case":
            e["title"] = " ".join(w if w.lower() in STOP else w[:1].upper() + w[1:]
                                  for w in e["title"].split())
        elif sub == "sentence_case":
            e["title"] = e["title"][:1] + e["title"][1:].lower()
        elif sub == "dropped_subtitle" and ":" in e["title"]:
            head = e["title"].split(":")[0]
            if len([w for w in head.split() if w.lower() not in STOP]) >= 2:
                e["title"] = head
        elif sub == "venue_abbreviation" and e["venue"]:
            e["venue"] = {"Phys. Rev. E": "Physical Review E", "NeurIPS": "NIPS",
                          "Advances in Neural Information Processing Systems":
                              rng.choice(("NeurIPS", "NIPS", "Proc. NeurIPS")),
                          "ApJ": "The Astrophysical Journal", "AJ": "Astron. J.",
                          "A&A": "Astronomy and Astrophysics", "MNRAS": "Mon. Not. R. Astron. Soc.",
                          "AISTATS": "Proceedings of the International Conference on Artificial "
                          "Intelligence and Statistics", "COLT": "Conference on Learning Theory",
                          "ICML": "Proceedings of the International Conference on Machine "
                          "Learning", "ICLR": "International Conference on Learning "
                          "Representations (ICLR)"}.get(e["venue"], e["venue"])
        elif sub == "arxiv_version" and d["truth_arxiv"]:
            arx = next(r for r in truth if r["_paper"] == d["pid"] and r["source"] == "arxiv")
            e["venue"] = f"arXiv preprint arXiv:{d['truth_arxiv']}"
            e["year"] = arx["year"]
            e["arxiv_id"] = d["truth_arxiv"]
            e["doi"] = None
            e["entry_type"] = "article"
        elif sub == "british_spelling":
            e["title"] = re.sub(r"iz(e|ed|es|ing|ation|ations)\b", r"is\1", e["title"])
            e["title"] = re.sub(r"\b(colo|behavio|favo|neighbo)r", r"\1ur", e["title"])
        elif sub == "missing_fields":
            e["venue"] = ""
            e["doi"] = None
            if rng.random() < 0.5:
                e["year"] = None
        elif sub == "accents_ascii":
            for a in e["authors"]:
                a["last"] = ascii_fold(a["last"])
                a["first"] = ascii_fold(a["first"])
        emit("real", "real", sub, d["pid"], e)

    # ---- fabricated entries
    fab = used[N_REAL:]
    for t_i, typ in enumerate(TYPES):
        for k, d in enumerate(fab[t_i * N_PER_TYPE:(t_i + 1) * N_PER_TYPE]):
            e = json.loads(json.dumps(d))
            sub = typ
            pid: str | None = d["pid"]
            if typ == "invented_title":
                e["title"] = invented_title(rng, title_pool)
                e["doi"] = None
                pid = None
            elif typ == "chimeric":
                other = rng.choice(papers)
                e["authors"] = json.loads(json.dumps(other["authors"]))[:6]
                e["authors_truncated"] = len(other["authors"]) > 6
                e["year"] = other["year"] if rng.random() < 0.5 else e["year"]
                e["doi"] = None
                sub = "authors_of_another_paper"
            elif typ == "near_miss_title":
                e["title"], sub = near_miss(e["title"], rng, title_pool)
                e["doi"] = None if rng.random() < 0.7 else e["doi"]
            elif typ == "wrong_authors":
                sub = ("swap_in", "missing_middle", "extra", "placeholder", "all_different")[k % 5]
                au = e["authors"]
                if sub == "missing_middle" and len(au) < 3:
                    sub = "swap_in"
                if sub == "swap_in":
                    au[rng.randrange(len(au))] = fake_name(rng, name_pool)
                elif sub == "missing_middle":
                    del au[rng.randrange(1, len(au) - 1)]
                    e["authors_truncated"] = False
                elif sub == "extra":
                    au.insert(rng.randint(1, len(au)), fake_name(rng, name_pool))
                elif sub == "placeholder":
                    ph = rng.choice(PLACEHOLDERS)
                    e["authors"] = [ph] if ph["last"] == "et al." or rng.random() < 0.5 \
                        else [*au[:1], ph]
                else:
                    e["authors"] = [fake_name(rng, name_pool) for _ in range(rng.randint(1, 4))]
                e["doi"] = None if rng.random() < 0.5 else e["doi"]
            elif typ == "wrong_venue":
                if k % 2 == 0 or not venue_pool:
                    e["venue"] = rng.choice(FAKE_VENUES)
                    sub = "nonexistent_venue"
                else:
                    e["venue"] = rng.choice([v for v in venue_pool if v != d["venue"]])
                    sub = "other_real_venue"
                e["doi"] = None
            elif typ == "wrong_year":
                if k % 4 == 0:
                    e["year"] = CURRENT_YEAR + rng.randint(1, 3)
                    sub = "future"
                else:
                    e["year"] = d["year"] + rng.choice((-5, -4, -3, -2, 2, 3, 4))
                    sub = "shifted"
                e["doi"] = None
            elif typ == "fabricated_identifier":
                if d["doi"] and k % 3:
                    prefix = d["doi"].split("/")[0]
                    e["doi"] = f"{prefix}/{rng.randint(10**6, 10**7 - 1)}"
                    sub = "doi"
                else:
                    e["arxiv_id"] = f"{rng.randint(15, 23)}{rng.randint(1, 12):02d}." \
                                    f"{rng.randint(0, 99999):05d}"
                    e["doi"] = None
                    sub = "arxiv_id"
            elif typ == "doi_other_paper":
                other = rng.choice([p for p in papers if p["doi"] and p is not d])
                e["doi"] = other["doi"]
                borrowed.add(other["pid"])
            elif typ == "hybrid":
                sub = ("near_miss+year", "extra_author+venue", "near_miss+authors",
                       "year+swap_in")[k % 4]
                if "near_miss" in sub:
                    e["title"], _ = near_miss(e["title"], rng, title_pool)
                if "year" in sub:
                    e["year"] = d["year"] + rng.choice((-1, 1, 2))
                if "extra_author" in sub or "swap_in" in sub:
                    e["authors"].insert(rng.randint(1, len(e["authors"])),
                                        fake_name(rng, name_pool))
                    if "swap_in" in sub and len(e["authors"]) > 1:
                        e["authors"].pop(0)
                if "authors" in sub and "swap_in" not in sub:
                    e["authors"][-1] = fake_name(rng, name_pool)
                if "venue" in sub:
                    e["venue"] = rng.choice(venue_pool + list(FAKE_VENUES))
                e["doi"] = None
            emit("fabricated", typ, sub, pid, e)

    # the truth must hold the borrowed DOIs' papers, or "DOI of another paper" is in fact
    # a DOI that resolves nowhere (v3 lost 6 of 40 that way)
    used_pids = {r["paper"] for r in rows} | {p["pid"] for p in used} | borrowed
    distractors = [p["pid"] for p in papers if p["pid"] not in used_pids][:N_DISTRACTORS]
    keep = used_pids | set(distractors)
    truth = [r for r in truth if r["_paper"] in keep]
    extend_v5(rows, truth, [by_pid[pid] for pid in distractors], emit)
    return rows, truth


def extend_v5(rows: list[Entry], truth: list[Entry], spare: list[Entry],
              emit: Any) -> None:
    """v5 (issue 27): paraphrased titles and preprints cited as published (fabricated), real
    entries of preprint-only papers and of preprint titles, and the sources' disagreements
    on every paper. Uses its own random stream, so the v4 rows stay as they were."""
    rng = random.Random(SEED + 27)
    ml = [d for d in spare if d["origin"] == "ml" and d["truth_arxiv"]]
    preprint_only = ml[:60]  # 30 cited as published, 30 cited as what they are
    elsewhere = ml[60:70]  # published papers cited with their arXiv id and another venue
    preprint_title = ml[70:70 + N_PREPRINT_TITLE_REAL]
    taken = {d["pid"] for d in preprint_only + elsewhere + preprint_title}
    for d in preprint_only:
        make_preprint_only(d["pid"], truth, d)

    def entry_of(d: Entry) -> Entry:
        e = json.loads(json.dumps(d))
        e["arxiv_id"] = None
        return e

    # ---- paraphrased titles: everything right (authors, year, venue, DOI) but one word
    n_kind = N_PER_TYPE // len(PARAPHRASE_KINDS)
    counts = dict.fromkeys(PARAPHRASE_KINDS, 0)
    for d in (d for d in spare if d["pid"] not in taken):
        if sum(counts.values()) >= N_PER_TYPE:
            break
        for kind in sorted(PARAPHRASE_KINDS, key=lambda k: counts[k]):
            if counts[kind] >= n_kind:
                continue
            got = paraphrase(d["title"], kind, rng)
            if got is None:
                continue
            e = entry_of(d)
            e["title"] = got[0]
            emit("fabricated", "paraphrased_title", kind, d["pid"], e)
            counts[kind] += 1
            taken.add(d["pid"])
            break

    # ---- preprints cited as published in a venue where they never appeared
    for k, d in enumerate(preprint_only[:30] + elsewhere):
        e = entry_of(d)
        e["doi"] = None
        if k % 2 == 0:
            e["doi"] = arxiv_doi(d["truth_arxiv"])
        else:
            e["arxiv_id"] = d["truth_arxiv"]
        if k >= 30:
            sub = "published_elsewhere"
            e["venue"] = rng.choice([v for v in REAL_VENUES if v != d["venue"] and
                                     venue_display_name(v) != venue_display_name(d["venue"])])
            e["entry_type"] = "inproceedings"
        elif k % 5 < 2 or (k % 5 == 4 and k % 2):
            sub = "invented_venue"
            e["venue"] = rng.choice(INVENTED_VENUES)
            e["entry_type"] = "article"
        else:
            sub = "real_venue"
            e["venue"] = rng.choice(REAL_VENUES)
            e["entry_type"] = "inproceedings"
        emit("fabricated", "preprint_as_published", sub, d["pid"], e)

    # ---- real entries: preprint-only papers cited as preprints
    styles = ("arxiv_journal", "eprint_misc", "arxiv_doi", "corr")
    for k, d in enumerate(preprint_only[30:]):
        e = entry_of(d)
        style = styles[k % len(styles)]
        e["doi"] = None
        if style == "arxiv_journal":
            e.update(entry_type="article", venue=f"arXiv preprint arXiv:{d['truth_arxiv']}")
        elif style == "eprint_misc":
            e.update(entry_type="misc", venue="", arxiv_id=d["truth_arxiv"])
        elif style == "arxiv_doi":
            e.update(entry_type="article", venue="arXiv", doi=arxiv_doi(d["truth_arxiv"]))
        else:
            e.update(entry_type="article", venue="CoRR", arxiv_id=d["truth_arxiv"])
        emit("real", "real", f"preprint_only_{style}", d["pid"], e)

    # ---- the sources' disagreements, each on for half the papers (where it applies)
    by_paper: dict[str, list[Entry]] = {}
    for r in truth:
        by_paper.setdefault(r["_paper"], []).append(r)
    spare_pids = {d["pid"] for d in preprint_title}
    papers = {d["pid"]: d for d in spare}
    for row in rows:
        if row["paper"] and row["paper"] not in papers:
            papers[row["paper"]] = {"year": row["entry"]["year"]}
    for pid in sorted(by_paper):
        recs = by_paper[pid]
        on = {kind for kind in DISAGREEMENTS if rng.random() < 0.5}
        if pid in spare_pids:
            on.add("preprint_title")
        d = papers.get(pid) or {"year": recs[0].get("year")}
        avoid = frozenset(r["entry"]["title"] for r in rows
                          if r["paper"] == pid and r["label"] == "fabricated")
        render, applied = disagreement_render({"year": recs[0].get("year") or d.get("year")},
                                              recs, on, rng, avoid)
        recs[0]["_render"] = render
        recs[0]["_disagreements"] = applied

    # ---- real entries citing the preprint's own title (it differs from the published one)
    for k, d in enumerate(preprint_title):
        arxiv_title = (by_paper[d["pid"]][0]["_render"] or {}).get("arxiv_title")
        if not arxiv_title:
            continue
        e = entry_of(d)
        e["title"] = arxiv_title
        if k % 2:
            e.update(venue=f"arXiv preprint arXiv:{d['truth_arxiv']}", doi=None,
                     entry_type="article", arxiv_id=d["truth_arxiv"])
        else:
            e["arxiv_id"] = d["truth_arxiv"]  # the published venue, the preprint's title
        emit("real", "real", "preprint_title", d["pid"], e)
    disagreements = {pid: recs[0]["_disagreements"] for pid, recs in by_paper.items()}
    for row in rows:
        row["disagreements"] = disagreements.get(row["paper"] or "", [])


def write(out: Path, rows: list[Entry], truth: list[Entry]) -> None:
    """``set.jsonl`` and ``truth.jsonl`` in ``out``, each replaced atomically (concurrent
    test workers may generate at once)."""
    out.mkdir(parents=True, exist_ok=True)
    for name, items, sort in (("truth.jsonl", truth, True), ("set.jsonl", rows, False)):
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for item in items:
                fh.write(json.dumps(item, ensure_ascii=False, sort_keys=sort) + "\n")
        os.replace(tmp, out / name)


def cache_key(bigbib: Path, papers: Path = PAPERS) -> str:
    """Generator version + its source + the identity (size, mtime) of the corpus files read."""
    h = hashlib.sha256(GENERATOR_VERSION.encode())
    for src in (HERE / "generate.py", HERE / "bibload.py"):
        h.update(src.read_bytes())
    for f in [bigbib / b for b in BIG_BIBS] + [papers / r for r in SMALL_BIBS]:
        st = f.stat()
        h.update(f"{f.name}:{st.st_size}:{int(st.st_mtime)}".encode())
    return f"v{GENERATOR_VERSION}-{h.hexdigest()[:12]}"


def ensure_generated(bigbib: Path | None = None, cache_dir: Path | None = None) -> Path:
    """The directory holding ``set.jsonl`` and ``truth.jsonl`` for the large bibliographies
    in ``bigbib`` (default: :data:`benchmarks.bigbib.BIGBIB`), generating them first unless
    a previous run already did. Raises FileNotFoundError without them."""
    bigbib = bigbib or BIGBIB
    out = (cache_dir or CACHE_DIR) / cache_key(bigbib)
    if not ((out / "set.jsonl").is_file() and (out / "truth.jsonl").is_file()):
        rows, truth = build(bigbib)
        write(out, rows, truth)
        for old in out.parent.glob("v*-*"):  # earlier generator versions
            if old != out and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)
    return out


def load_set(directory: Path) -> list[Entry]:
    return [json.loads(line) for line in
            (directory / "set.jsonl").read_text(encoding="utf-8").splitlines()]


def load_truth(directory: Path) -> list[Entry]:
    return [json.loads(line) for line in
            (directory / "truth.jsonl").read_text(encoding="utf-8").splitlines()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bigbib", type=Path, default=BIGBIB,
                    help="the folder holding the large bibliographies (default: CITELENS_BIGBIB)")
    ap.add_argument("--out", type=Path, help="write here (default: the cache folder)")
    args = ap.parse_args()
    if args.out:
        rows, truth = build(args.bigbib)
        write(args.out, rows, truth)
        out = args.out
    else:
        out = ensure_generated(args.bigbib)
        rows, truth = load_set(out), load_truth(out)
    print(f"{len(rows)} entries ({sum(r['label'] == 'real' for r in rows)} real), "
          f"{len(truth)} truth records for {len({r['_paper'] for r in truth})} papers -> {out}")


if __name__ == "__main__":
    main()
