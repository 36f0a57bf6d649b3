"""Each decision of the verifier has one home, and the homes agree.

- source and method names are spelled once, in their StrEnums (no bare literal elsewhere);
- the offline shortcut makes exactly the lookups the scheduler makes, both from the plan's
  one table;
- an entry's identifiers come from one reader: the entry view, the verifier and the
  duplicate check read the same identifiers from the same entry, and no other module
  keeps an identifier pattern;
- why a verdict is UNVERIFIED is a field of the verdict, not words of its summary.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from citelens.core.fields import Field
from citelens.core.findings import Severity
from citelens.core.identifiers import arxiv_in_view, entry_identifiers
from citelens.core.settings import Settings
from citelens.core.source_names import Source
from citelens.documents.bibtex.parse import field_values, parse_bib
from citelens.documents.bibtex.view import entry_view
from citelens.fixes.published import published_version
from citelens.sources.methods import Method
from citelens.sources.records import Lookup, Outcome, PaperRecord
from citelens.sources.transport import Sources
from citelens.verify import offline, plan
from citelens.verify.cache import VerificationCache
from citelens.verify.identity import identifiers
from citelens.verify.match.discrepancy import Discrepancy, Kind
from citelens.verify.scheduler import verify_entries
from citelens.verify.status import Status, Unverified, Verification
from citelens.verify.verdict import Asked, decide
from tests.harness import ROOT

SERVER = ROOT / "server" / "citelens"

# Entries of every shape the plan distinguishes (and the spellings the reader knows).
SHAPES = r"""
@article{title_only, title={A study of nothing in particular}, author={Doe, Jane}, year=2020}
@article{crossref_doi, title={Deep residual learning}, author={He, K.}, year=2016,
  doi={10.1109/CVPR.2016.90}}
@misc{datacite_doi, title={A data set of things}, author={Roe, R.}, year=2021,
  doi={10.5281/zenodo.123456}}
@article{arxiv_eprint, title={Adam: a method}, author={Kingma, D.}, year=2015,
  eprint={1412.6980}, archivePrefix={arXiv}}
@misc{arxiv_doi, title={Attention is all you need}, author={Vaswani, A.}, year=2017,
  doi={10.48550/arXiv.1706.03762}}
@article{arxiv_in_journal, title={Some preprint}, author={Poe, E.}, year=2019,
  journal={arXiv preprint arXiv:1901.00001}}
@article{arxiv_url, title={Another preprint}, author={Moe, M.}, year=2019,
  url={https://arxiv.org/abs/1902.00002v3}}
@article{doi_url, title={A paper by its link}, author={Zoe, Z.}, year=2018,
  url={https://doi.org/10.1000/XYZ.123}}
@article{pmid, title={Cancer cells and the immune system}, author={Lee, L.}, year=2012,
  journal={Lancet}, pmid={PMID: 22334455}}
@article{s2, title={A paper S2 knows}, author={Kay, K.}, year=2018, s2id={CorpusId:424242}}
@article{s2_hex, title={Another paper S2 knows}, author={Kay, K.}, year=2018,
  s2id={ABCDEF0123456789ABCDEF0123456789ABCDEF01}}
@article{everything, title={Clinical trials of everything}, author={Ng, A.}, year=2020,
  doi={10.1000/everything}, eprint={2001.00001}, archivePrefix={arXiv}, pmid={12345678},
  s2id={987654}}
"""


def _views() -> list:  # type: ignore[type-arg]
    return [entry_view(e) for e in parse_bib(SHAPES, "refs.bib").entries]


# ---------------------------------------------------------------------- names, once

#: Source names that are nothing else (``doi``, ``arxiv``, ``crossref``, ``s2``, ``publisher``
#: and ``snapshot`` are also BibTeX fields, identifier kinds or settings, so not checked).
_SOURCE_ONLY = {
    Source.OPENALEX,
    Source.PUBMED,
    Source.NCBI,
    Source.DBLP,
    Source.UNPAYWALL,
    Source.ARXIV_SITE,
    Source.RETRACTION_WATCH,
}
_ENUM_HOMES = {SERVER / "core" / "source_names.py", SERVER / "sources" / "methods.py"}


def _string_literals(tree: ast.AST) -> list[tuple[int, str, ast.AST | None]]:
    """(line, value, parent) of every string constant but docstrings."""
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            parent = parents.get(node)
            if isinstance(parent, ast.Expr):
                continue  # a docstring
            out.append((node.lineno, node.value, parent))
    return out


def _is_db_parameter(parent: ast.AST | None, value: str) -> bool:
    """``{"db": "pubmed"}``: the name of NCBI's database in a request, not our source."""
    return (
        isinstance(parent, ast.Dict)
        and value == "pubmed"
        and any(isinstance(k, ast.Constant) and k.value == "db" for k in parent.keys)
    )


def test_no_source_or_method_name_literal_outside_its_enum() -> None:
    methods = {m.value for m in Method} - {Method.ARXIV_ID}  # also a BibTeX field and an attribute
    sources = {s.value for s in _SOURCE_ONLY}
    bare = []
    for path in sorted(SERVER.rglob("*.py")):
        if path in _ENUM_HOMES:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, value, parent in _string_literals(tree):
            if value in methods or (value in sources and not _is_db_parameter(parent, value)):
                bare.append(f"{path.relative_to(ROOT)}:{line}: {value!r}")
    assert bare == []


# ---------------------------------------------------------------------- one plan


async def test_offline_lookups_are_the_lookups_the_scheduler_makes(tmp_path: Path) -> None:
    """Offline with a cache that may hold anything, every entry goes through the scheduler,
    which answers each lookup it would make "offline: not in the cache": its audit trail is
    the list of lookups the offline shortcut derives from the plan, for every shape."""
    views = _views()
    settings = Settings(offline=True, cache_dir=str(tmp_path / "cache"))
    cache = VerificationCache(tmp_path / "cache")
    sources = Sources.from_settings(settings)
    try:
        results = await verify_entries(views, settings, sources=sources, cache=cache)
    finally:
        await sources.aclose()
        cache.close()
    assert len(results) == len(views) == 12
    for view in views:
        planned = offline.lookups(view, identifiers(view))
        expected = Counter((p.method, p.source) for p in planned)
        made = Counter((a.method, a.source) for a in results[view.key].audit)
        assert made == expected, view.key
        assert results[view.key].unverified is Unverified.OFFLINE
    # the shapes really differ: identifier tiers by identifier, PubMed's title tier when biomedical
    by_key = {v.key: {p.method for p in offline.lookups(v, identifiers(v))} for v in views}
    assert Method.CROSSREF_DOI in by_key["crossref_doi"]
    assert Method.CROSSREF_DOI not in by_key["datacite_doi"]
    assert {Method.ARXIV_ID, Method.OPENALEX_DOIS} <= by_key["arxiv_doi"]
    assert {Method.PUBMED_ID, Method.PUBMED_TITLE} <= by_key["pmid"]
    assert by_key["title_only"] == {t.name for t in plan.title_tiers(views[0])}


def test_offline_lookups_follow_the_table() -> None:
    """Every identifier tier of the table appears in the lookups of an entry that has every
    identifier, in the table's order, with the table's cache kind."""
    view = next(v for v in _views() if v.key == "everything")
    planned = [p for p in offline.lookups(view, identifiers(view)) if p.field is not None]
    tiers = [t for t in plan.IDENTIFIER_TIERS for _ in t.values(identifiers(view))]
    assert [(p.method, p.source, p.kind) for p in planned] == [
        (t.method, t.source, t.cache_kind) for t in tiers
    ]


# ---------------------------------------------------------------------- one reader


def test_every_caller_reads_the_same_identifiers() -> None:
    entries = parse_bib(SHAPES, "refs.bib").entries
    for entry in entries:
        view = entry_view(entry)
        read = entry_identifiers(field_values(entry))
        assert (view.doi, view.arxiv_id, view.pmid, view.s2_id) == tuple(read), entry.key
        ids = identifiers(view)
        assert ids.doi == read.doi, entry.key
        assert (ids.arxiv or "") == arxiv_in_view(view), entry.key
    views = {v.key: v for v in _views()}
    assert views["doi_url"].doi == "10.1000/xyz.123"
    assert views["arxiv_doi"].arxiv_id == "1706.03762"
    assert views["arxiv_in_journal"].arxiv_id == "1901.00001"
    assert views["arxiv_url"].arxiv_id == "1902.00002"
    assert views["pmid"].pmid == "22334455"
    assert identifiers(views["s2"]).s2 == "CorpusId:424242"
    assert identifiers(views["everything"]).s2 == "CorpusId:987654"
    assert identifiers(views["s2_hex"]).s2 == "abcdef0123456789abcdef0123456789abcdef01"


#: Modules that read identifiers out of other text before any entry exists.
_OWN_PATTERNS = {SERVER / "documents" / "bbl.py"}  # a .bbl's \bibitem text -> BibTeX fields


#: What only an identifier pattern spells (in the lower-cased regex source): a DOI prefix,
#: doi.org or arxiv.org, an "arXiv:" prefix, a new-style arXiv number.
_IDENTIFIER_SHAPES = ("10\\.", "doi\\.org", "arxiv\\.org", "arxiv:", "arxiv\\s*:", "\\d{4}\\.\\d{4")


def test_identifier_patterns_live_in_one_module() -> None:
    """No module but core/identifiers.py compiles a DOI or arXiv pattern."""
    home = SERVER / "core" / "identifiers.py"
    found = []
    for path in sorted(SERVER.rglob("*.py")):
        if path == home or path in _OWN_PATTERNS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.args
                and isinstance(node.args[0], ast.Constant | ast.JoinedStr)
            ):
                text = ast.unparse(node.args[0]).lower()
                # an identifier's shape, not the word "arXiv" in a list of venue words
                if any(shape in text for shape in _IDENTIFIER_SHAPES):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


# ---------------------------------------------------------------------- the verdict says why


async def test_why_a_verdict_is_unverified_is_a_field(tmp_path: Path) -> None:
    text = SHAPES + "@article{untitled, author={Doe, J.}, year=2020}\n"
    views = [entry_view(e) for e in parse_bib(text, "refs.bib").entries]
    settings = Settings(offline=True, cache_dir=str(tmp_path / "cache"))
    results = await verify_entries(views, settings)
    untitled = results["untitled"]
    assert untitled.status is Status.UNVERIFIED
    assert untitled.unverified is Unverified.NO_TITLE and not untitled.worth_retrying
    offline_one = results["crossref_doi"]
    assert offline_one.unverified is Unverified.OFFLINE and offline_one.worth_retrying


# ---------------------------------------------------------------------- what the fixes read


def _record(source: str, title: str, doi: str, **kw: object) -> PaperRecord:
    return PaperRecord(source=source, title=title, authors=["Kaiming He"], year=2016, doi=doi, **kw)  # type: ignore[arg-type]


def test_a_doi_mismatch_names_the_entrys_own_papers() -> None:
    """The verdict lists the candidates that are the entry's paper (the quick fixes' "Fix
    DOI" reads them): not the wrong DOI's paper, not a paper with another title."""
    view = next(v for v in _views() if v.key == "crossref_doi")
    wrong = _record("s2", "A completely different paper about gardens", "10.1109/cvpr.2016.90")
    right = _record("crossref", "Deep residual learning", "10.1000/right")
    other = _record("openalex", "Deep residual learning for image recognition in gardens", "10.1000/o")
    asked = [
        Asked(Lookup("s2", "s2_batch", Outcome.FOUND, [wrong]), "doi", "DOI:10.1109/cvpr.2016.90"),
        Asked(Lookup("crossref", "crossref_doi", Outcome.FOUND, [wrong]), "doi", "10.1109/cvpr.2016.90"),
        Asked(Lookup("crossref", "crossref_search", Outcome.FOUND, [right, other]), None, view.title),
    ]
    v = decide(view, asked, Settings())
    assert v.status is Status.DOI_MISMATCH
    assert [r.doi for r in v.right_papers] == ["10.1000/right"]


def test_a_preprint_verdict_names_the_published_version() -> None:
    preprint = _record("arxiv", "Deep residual learning", "10.48550/arxiv.1512.03385", is_preprint=True,
                       arxiv_id="1512.03385")
    published = _record("crossref", "Deep residual learning", "10.1109/cvpr.2016.90", venue="CVPR")
    d = Discrepancy(Field.VENUE, Kind.PREPRINT_STATUS, Severity.WARNING, "published since", "arXiv",
                    "CVPR", "crossref")
    v = Verification("k", Status.PARTIAL, "", match=preprint, versions=[published], discrepancies=[d])
    found = published_version(v)  # the one rule (fixes/published.py): the version the verdict names
    assert found is not None and found.doi == published.doi and found.venue == "CVPR"
    assert found.arxiv_id == preprint.arxiv_id and not found.is_preprint  # completed from the preprint
    no_discrepancy = Verification("k", Status.PARTIAL, "", match=preprint, versions=[published])
    assert published_version(no_discrepancy) is None
    assert not hasattr(Verification, "published_version")  # the dead second rule is gone
