"""The architecture invariants of docs/architecture.md, each held by a check.

Every paragraph of the doc that starts with ``**Architecture invariant:**`` states one
invariant in its first sentence; :func:`invariant` registers the check of that sentence, and
:func:`test_every_invariant_of_the_doc_has_a_check_and_every_check_a_line` fails when a line
has no check or a check no line. The code is read as source, not run (but for behavioural
checks where names are not enough, such as the key maker and ``strip_accents``).
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from citelens.core.accents import strip_accents
from citelens.core.codes import REGISTRY, Code
from citelens.core.dockind import DocKind
from citelens.core.fields import Field
from citelens.core.settings import DEFAULT_SEVERITY
from citelens.core.source_names import Source
from citelens.documents.bibtex import keys
from citelens.sources.transport import HOSTS
from citelens.verify.match.discrepancy import Kind
from citelens.verify.status import Status
from tests.harness import ROOT
from tests.reads import Places

DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "server" / "citelens"


def _modules() -> dict[str, ast.Module]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return out


MODULES = _modules()


def _imports(tree: ast.Module) -> Iterator[str]:
    """Every module named by an import anywhere in the file (functions and
    ``TYPE_CHECKING`` blocks included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def _graph() -> dict[str, set[str]]:
    return {name: {m for m in _imports(tree) if m in MODULES and m != name and m != "citelens"}
            for name, tree in MODULES.items()}


# --------------------------------------------------------------------------- the doc's lines

_MARK = "**Architecture invariant:**"
_F = TypeVar("_F", bound=Callable[..., None])
#: The sentence of each invariant and its check, filled by :func:`invariant` at import.
INVARIANTS: dict[str, str] = {}


def invariant(sentence: str) -> Callable[[_F], _F]:
    """Register the decorated test as the check of ``sentence`` (an invariant of the doc,
    as written there, markup included, whitespace collapsed)."""
    def register(check: _F) -> _F:
        assert sentence not in INVARIANTS, f"two checks of one invariant: {sentence}"
        INVARIANTS[sentence] = check.__name__
        return check
    return register


def _doc_invariants() -> list[str]:
    """The first sentence of every paragraph of the doc that starts with the mark."""
    text = DOC.read_text(encoding="utf-8")
    out = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if para.startswith(_MARK):
            m = re.match(r"(.+?\.)(?:\s|$)", para[len(_MARK):].strip())
            out.append(m.group(1) if m else para[len(_MARK):].strip())
    return out


def _module_list() -> list[str]:
    """The doc's module list: the code block under ``server/citelens/``."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split("server/citelens/\n", 1)[1].split("```", 1)[0]
    return block.splitlines()


def _layer_order() -> list[str]:
    """The folders of the module list, from the bottom up (as the doc lists them)."""
    return [m.group(1) for line in _module_list() if (m := re.match(r"^  (\w+)/\s", line))]


def test_every_invariant_of_the_doc_has_a_check_and_every_check_a_line() -> None:
    stated = _doc_invariants()
    assert len(stated) == len(set(stated)), "an invariant stated twice"
    assert [s for s in stated if s not in INVARIANTS] == [], "invariants of the doc without a check"
    assert sorted(s for s in INVARIANTS if s not in stated) == [], "checks without a line in the doc"


# --------------------------------------------------------------------------- the checks


@invariant("Only `lsp/` imports pygls or lsprotocol.")
def test_pygls_and_lsprotocol_only_in_the_lsp_layer() -> None:
    users = sorted(name for name, tree in MODULES.items()
                   if any(m.split(".")[0] in {"pygls", "lsprotocol"} for m in _imports(tree)))
    assert users and all(u.startswith("citelens.lsp.") for u in users), users


@invariant("Each folder imports only the folders below it in the module list, and every folder "
           "is in the list.")
def test_layers_import_downwards_only() -> None:
    order = _layer_order()
    assert order[:1] == ["core"] and order[-1:] == ["cli"], order
    packages = {name.split(".")[1] for name in MODULES if name.count(".") >= 2}
    assert packages <= set(order), f"packages without a layer: {sorted(packages - set(order))}"

    def layer(module: str) -> int:
        parts = module.split(".")
        return order.index(parts[1]) if len(parts) > 1 and parts[1] in order else -1

    upward = [(a, b) for a, deps in _graph().items() for b in deps
              if layer(a) >= 0 and layer(b) > layer(a)]
    assert upward == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


@invariant("No module imports, directly or through others, a module that imports it.")
def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


@invariant("`fixes/`, `checks/` and `verify/` never import `lsp/`, pygls or lsprotocol, not even "
           "through another module.")
def test_fixes_checks_and_verify_never_import_the_protocol() -> None:
    """The engine's decisions (verdicts, findings, quick fixes) know nothing of LSP."""
    graph = _graph()

    def reach(start: str) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for m in graph[todo.pop()] - seen:
                seen.add(m)
                todo.append(m)
        return seen

    engine = [n for n in MODULES if n.split(".")[1:2] in (["verify"], ["checks"], ["fixes"])]
    assert engine
    bad = {}
    for name in engine:
        imported = {m for n in reach(name) for m in _imports(MODULES[n])}
        protocol = sorted(m for m in imported
                          if m.split(".")[0] in {"pygls", "lsprotocol"} or m.startswith("citelens.lsp"))
        if protocol:
            bad[name] = protocol
    assert bad == {}


@invariant("A finding's severity is decided in one place: only `core/findings.severity_of` reads the "
           "severity settings.")
def test_a_findings_severity_is_decided_in_one_place() -> None:
    """No producer calls ``Settings.severity`` or reads ``DEFAULT_SEVERITY`` itself."""
    readers = sorted({
        name for name, tree in MODULES.items() for node in ast.walk(tree)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "severity")
        or (isinstance(node, ast.Name | ast.alias) and getattr(node, "id", getattr(node, "name", ""))
            == "DEFAULT_SEVERITY")
    })
    assert readers == ["citelens.core.findings", "citelens.core.settings"]


@invariant("Feature code takes a typed server or session, never `ls: Any`.")
def test_no_server_handle_typed_any() -> None:
    loose = [f"{name}.{node.name}" for name, tree in MODULES.items()
             for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
             for a in node.args.args
             if a.arg == "ls" and (a.annotation is None or ast.unparse(a.annotation) == "Any")]
    assert loose == []


#: Each normaliser, the secret list and the coverage policy, and the one module that defines it.
ONE_HOME = {
    "normalize_doi": "citelens.core.identifiers", "normalize_arxiv": "citelens.core.identifiers",
    "normalize_pmid": "citelens.core.identifiers", "source_name": "citelens.sources.names",
    "SOURCE_NAMES": "citelens.sources.names",
    "strip_accents": "citelens.core.accents",
    "to_unicode": "citelens.core.latextext", "latex_to_text": "citelens.core.latextext",
    "normalize_title": "citelens.core.titles", "title_key": "citelens.core.titles",
    "redact_url": "citelens.core.secrets", "SECRET_PARAMS": "citelens.core.secrets",
    "INFORMATIONAL_TYPES": "citelens.verify.coverage",
}


@invariant("One definition of each normaliser, of the secret list, of the entry types the "
           "indexes cover badly, of the severities' names and of arXiv's DOI prefix.")
def test_each_normaliser_and_the_secret_list_have_one_definition() -> None:
    where: dict[str, list[str]] = {}
    for name, tree in MODULES.items():
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.FunctionDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            for n in names:
                if n in ONE_HOME:
                    where.setdefault(n, []).append(name)
    assert {n: m for n, m in where.items() if m != [ONE_HOME[n]]} == {}
    assert set(where) == set(ONE_HOME)
    assert _written_again() == []


#: The severities' names (``core/severity.Severity``) and arXiv's DOI prefix
#: (``core/identifiers.ARXIV_DOI_PREFIX``), each written in its one module.
_SEVERITY_NAMES = {"error", "warning", "information", "hint"}
_ARXIV_DOI = "10.48550"


def _written_again() -> list[str]:
    """Severity names listed (two or more in a tuple, list, set, ``Literal[...]`` or as a
    table's keys) outside ``core/severity.py``, and arXiv's DOI prefix in code (docstrings
    apart) outside ``core/identifiers.py``: ``SEVERITIES = ["error", "warning", ...]``."""
    found = []
    for name, tree in MODULES.items():
        docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            listed = (_keys(node) if isinstance(node, ast.Dict)
                      else _strings(node) if isinstance(node, ast.Tuple | ast.List | ast.Set) else [])
            if name != "citelens.core.severity" and len(_SEVERITY_NAMES & set(listed)) > 1:
                found.append(f"{name}:{node.lineno}: severities listed")
            if (name != "citelens.core.identifiers" and isinstance(node, ast.Constant)
                    and isinstance(node.value, str) and _ARXIV_DOI in node.value and id(node) not in docs):
                found.append(f"{name}:{node.lineno}: arXiv's DOI prefix")
    return found


def test_the_one_definition_check_finds_severities_and_the_arxiv_prefix_written_again() -> None:
    """The copies this check replaced, as they were written (issue 42)."""
    MODULES["citelens.fake_copies"] = ast.parse(
        'SeverityName = Literal["error", "warning", "information", "hint"]\n'
        'COUNT = {"error": "errors", "warning": "warnings"}\n'
        'ok = doi.startswith("10.48550/")\n'
        'def f():\n    """An arXiv DOI (10.48550/arXiv.1706.03762) is read here."""\n'
    )
    try:
        assert [w.split(": ")[1] for w in _written_again()] == [
            "severities listed", "severities listed", "arXiv's DOI prefix"]
    finally:
        del MODULES["citelens.fake_copies"]


def _latin_letters() -> list[str]:
    ranges = [(0xC0, 0x24F), (0x1E00, 0x1EFF)]
    return [chr(c) for lo, hi in ranges for c in range(lo, hi + 1) if chr(c).isalpha()]


@invariant("The key maker and `strip_accents` agree on every accented letter.")
def test_key_maker_and_strip_accents_agree_on_every_accented_letter() -> None:
    """A re-implemented folding once made keys like ``Jrgensen`` from Jørgensen (issue 21):
    names are not enough, so this runs both on every Latin letter."""
    differ = {}
    for letter in _latin_letters():
        folded = "".join(c for c in strip_accents(letter) if c.isascii() and c.isalnum())
        made = keys.last_name_of(f"Ab{letter}cd")
        if made != f"Ab{folded}cd":
            differ[letter] = (made, folded)
    assert differ == {}
    assert keys.last_name_of("Jørgensen") == "Jorgensen"
    assert keys.last_name_of("Weiß") == "Weiss"
    assert keys.last_name_of("Łukasiewicz") == "Lukasiewicz"


_MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter",
                  "WeakValueDictionary", "WeakKeyDictionary"}


@invariant("No module-level mutable state outside named cache objects.")
def test_no_module_level_mutable_state() -> None:
    """State lives on the server instance or on the feature that changes it: no module-level
    ``global``, no lower-case module-level dict/list/set (a hidden cache shared by every
    server in the process), and memoised functions are bounded (``lru_cache(maxsize=N)``) or
    load packaged data once (``cache`` on a function without arguments)."""
    found: list[str] = []
    for name, tree in MODULES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                found.append(f"{name}: global {', '.join(node.names)}")
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                var = target.id if isinstance(target, ast.Name) else ""
                v = node.value
                mutable = isinstance(v, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp
                                     | ast.SetComp) or (
                    isinstance(v, ast.Call) and ast.unparse(v.func).split(".")[-1] in _MUTABLE_CALLS)
                if mutable and var and not var.isupper() and var != "__all__":
                    found.append(f"{name}.{var}")
                elif mutable and var and _changed_in_functions(tree, var):
                    found.append(f"{name}.{var}: a module-level table changed at run time")
            if isinstance(node, ast.FunctionDef):
                for d in node.decorator_list:
                    text = ast.unparse(d)
                    if "lru_cache" in text and "maxsize=" not in text:
                        found.append(f"{name}.{node.name}: unbounded {text}")
                    if text.split(".")[-1] == "cache" and node.args.args:
                        found.append(f"{name}.{node.name}: @cache on a function with arguments")
    assert found == []


_MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem",
             "clear", "remove", "discard", "appendleft", "popleft", "__setitem__"}


def _changed_in_functions(tree: ast.Module, var: str) -> bool:
    """Whether a function of the module writes into the module-level container ``var``
    (``VAR[k] = v``, ``del VAR[k]``, ``VAR.setdefault(...)``...): an upper-case name is a
    constant table only if nothing fills it at run time (a cache by another name)."""
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        for node in ast.walk(fn):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign | ast.Delete):
                targets = list(node.targets)
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            if any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == var
                   for t in targets):
                return True
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == var
                    and node.func.attr in _MUTATORS):
                return True
    return False


def test_a_module_level_cache_under_a_constant_name_is_found() -> None:
    """The check behind the invariant: a constant-looking name filled at run time is state."""
    cache = ast.parse("_SEEN: dict[str, int] = {}\ndef f(k):\n    _SEEN[k] = 1\n")
    table = ast.parse("_SPELLING = {'colour': 'color'}\ndef f(w):\n    return _SPELLING.get(w, w)\n")
    popped = ast.parse("_T = {}\ndef f(k):\n    return lambda _: _T.pop(k, None)\n")
    assert _changed_in_functions(cache, "_SEEN")
    assert not _changed_in_functions(table, "_SPELLING")
    assert _changed_in_functions(popped, "_T")


_UNSAFE_IMPORTS = {"pickle", "marshal", "shelve", "dill", "cloudpickle"}


@invariant("Nothing read from disk or the network is executed: no module unpickles, or calls "
           "`eval` or `exec`.")
def test_nothing_read_is_executed() -> None:
    found = [f"{name}: import {m}" for name, tree in MODULES.items() for m in _imports(tree)
             if m.split(".")[0] in _UNSAFE_IMPORTS]
    found += [f"{name}: {ast.unparse(node.func)}()" for name, tree in MODULES.items()
              for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in {"eval", "exec", "__import__"}]
    assert found == []


@invariant("Every folder and module the module list names exists, the module in the folder it is "
           "listed under.")
def test_every_module_the_list_names_exists() -> None:
    folder = ""
    missing = []
    for line in _module_list():
        m = re.match(r"^  (\w+)/\s", line)
        if m:
            folder = m.group(1)
            if not (PACKAGE / folder / "__init__.py").is_file():
                missing.append(f"{folder}/")
        for name in re.findall(r"(?<![\w./])(\w+)\.py\b", line):
            if not folder or not any((PACKAGE / folder).rglob(f"{name}.py")):
                missing.append(f"{folder}/{name}.py")
    assert missing == []


# --------------------------------------------------------------------------- tests stay inside

#: Test source that names a place above the repository (the harness's ROOT is the top).
_CLIMBING = re.compile(r"ROOT\.parent\b|\.parent\.parent\.parent|parents\[[2-9]\]|os\.pardir"
                       r"|CITELENS_(?:CORPUS|FIXTURES)\b")


@invariant("No test reads a file outside the repository.")
def test_no_test_reads_outside_the_repository() -> None:
    """Each test is held to it while it runs (tests/conftest.py fails it); here, what the
    modules read while they were collected, and test source that climbs out."""
    from tests.conftest import READS

    assert READS.unwatched == [], "test modules read outside the repository when collected"
    climbing = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
                for path in sorted((ROOT / "tests").rglob("*.py"))
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if _CLIMBING.search(line)]
    probe = [c for c in climbing if c.startswith("tests/test_architecture.py:")
             and c.endswith("# the guard's probe")]
    assert len(probe) == 1 and [c for c in climbing if c not in probe] == []


def test_the_guard_sees_reads_beside_the_clone(tmp_path: Path) -> None:
    """Not vacuous: opening, listing or handing a program a path beside the clone is seen
    (a missing file too: the hook runs before the open), and the repository, the temporary
    folder and the installed packages are not."""
    from tests.conftest import READS

    beside = ROOT.parent / "shared" / "corpus" / "no-such.bib"  # the guard's probe
    with READS.watch() as seen:
        with pytest.raises(OSError):
            beside.open(encoding="utf-8")
        with contextlib.suppress(OSError):
            os.listdir(beside.parent)
        subprocess.run([sys.executable, "-c", "pass", str(beside)], check=True)
    assert seen == [f"open {beside}", f"os.listdir {beside.parent}",
                    f"subprocess.Popen {beside}"]
    with READS.watch() as seen:
        (tmp_path / "x.bib").write_text("@misc{k,}\n", encoding="utf-8")
        (ROOT / "README.md").read_text(encoding="utf-8")
        sorted(os.listdir(ROOT / "tests" / "corpus" / "papers"))
        subprocess.run([sys.executable, "-c", "import json, pytest"], check=True, cwd=ROOT)
    assert seen == []


def test_outside_is_beside_the_clone_or_off_the_machines_usual_places() -> None:
    where = Places(root="/w/clone", beside="/w", allowed=("/w/other/.venv/lib",),
                   general=("/tmp", "/root", "/usr"))
    assert where.outside("/w/shared/corpus/papers/x.bib")
    assert where.outside("/w/other/tests/data.json")  # another checkout
    assert where.outside("/mnt/data/x.bib")
    assert not where.outside("/w/clone/tests/corpus/x.bib")
    assert not where.outside("/w/other/.venv/lib/site-packages/m.py")
    assert not where.outside("/tmp/pytest-of-root/x.bib")
    assert not where.outside("/usr/lib/python3.11/json/__init__.py")
    in_tmp = Places(root="/tmp/clone", beside="/tmp", allowed=(), general=("/tmp",))
    assert in_tmp.outside("/tmp/shared/x.bib") and not in_tmp.outside("/tmp/pytest-1/x.bib")


# --------------------------------------------------------------------------- registries

#: Code values that are only codes (a verdict's status shares DOI_MISMATCH, NOT_FOUND,
#: UNVERIFIED: a table keyed by status strings is not a table of codes).
_ONLY_CODES = {c.value for c in Code} - {s.value for s in Status}
#: The hosts by the ``Source`` member code names them by (a host CiteLens did not start with
#: spells itself in its own client module, a ``str``: code never lists it as a member).
_HOSTS = {h.source.name for h in HOSTS if isinstance(h.source, Source)}


def _members(node: ast.AST, enum: str, strings: set[str] | None = None) -> list[str]:
    """The members of ``enum`` a dict, tuple, set or list display names (``Enum.X``, or a
    string in ``strings``): its keys for a dict."""
    if isinstance(node, ast.Dict):
        items: list[ast.expr | None] = list(node.keys)
    elif isinstance(node, (ast.Tuple, ast.Set, ast.List)):
        items = list(node.elts)
    else:
        return []
    out = []
    for k in items:
        if isinstance(k, ast.Attribute) and isinstance(k.value, ast.Name) and k.value.id == enum:
            out.append(k.attr)
        elif strings and isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value in strings:
            out.append(k.value)
    return out


def _second_registries() -> list[str]:
    """Tables keyed by codes outside ``core/codes.REGISTRY``, and listings of the hosts (all
    but two of them, or more) outside ``sources/transport.HOSTS`` (and the names and order
    of ``sources/names``); a few sources listed for their own reason (the snapshot's
    dumps) are not a listing of the hosts."""
    found = []
    for name, tree in MODULES.items():
        for node in ast.walk(tree):
            if name != "citelens.core.codes" and isinstance(node, ast.Dict):
                if len(_members(node, "Code", _ONLY_CODES)) >= 2:
                    found.append(f"{name}:{node.lineno} keyed by Code")
            if name not in ("citelens.sources.transport", "citelens.sources.names"):
                if len(set(_members(node, "Source")) & _HOSTS) >= len(_HOSTS) - 2:
                    found.append(f"{name}:{getattr(node, 'lineno', 0)} lists the hosts")
    return found


@invariant("Each diagnostic code is one row of `core/codes.REGISTRY` and each scholarly host one "
           "row of `sources/transport.HOSTS`.")
def test_codes_and_hosts_are_one_registry_row_each() -> None:
    assert _second_registries() == []
    assert list(REGISTRY) == list(Code)
    assert list(DEFAULT_SEVERITY) == list(Code)  # derived, not written again


def test_the_registry_check_finds_a_second_table() -> None:
    hosts = ", ".join(f"Source.{h}" for h in sorted(_HOSTS))
    tree = ast.parse(f'X = {{Code.RETRACTED: "a", "CORRECTION": "b", "NOT_FOUND": "c"}}\nY = ({hosts})\n'
                     "Z = (Source.OPENALEX, Source.CROSSREF, Source.ARXIV)")
    dicts = [n for n in ast.walk(tree) if isinstance(n, ast.Dict)]
    tuples = [n for n in ast.walk(tree) if isinstance(n, ast.Tuple)]
    assert _members(dicts[0], "Code", _ONLY_CODES) == ["RETRACTED", "CORRECTION"]
    assert len(set(_members(tuples[0], "Source")) & _HOSTS) >= len(_HOSTS) - 2  # the hosts again
    assert len(set(_members(tuples[1], "Source")) & _HOSTS) < len(_HOSTS) - 2  # a few, for a reason


#: Each verdict concept, and the one module that defines it (a second definition, under any
#: of these names, fails; the severity rank is checked by its tables below).
ONE_CONCEPT = {
    "match_reason": "citelens.verify.match.compare",  # is this record the entry's paper, and why
    "own_papers": "citelens.verify.match.compare",  # a DOI_MISMATCH's own papers (verdict, DOI fix)
    "published_version": "citelens.fixes.published",  # the published version of a cited preprint
    "verdict_class": "citelens.verify.classes",  # fabricated / wrong-metadata / not-found
    "is_informational": "citelens.verify.coverage",  # an entry the indexes cover badly
    "disagreement_is_information": "citelens.verify.coverage",  # ... derived from it
    "arxiv_of_doi": "citelens.core.identifiers",  # the arXiv id of an arXiv DOI
    "CANDIDATE_FLOOR": "citelens.verify.match.compare",  # a search hit worth offering
}
_SEVERITIES = {"HINT", "INFORMATION", "WARNING", "ERROR"}


def _severity_named(items: list[ast.expr | None], owner: ast.AST) -> set[str]:
    named = set(_members(owner, "Severity"))
    return named | {k.value.upper() for k in items if isinstance(k, ast.Constant)
                    and isinstance(k.value, str) and k.value.upper() in _SEVERITIES}


def _severity_tables() -> list[str]:
    """Ranks of every severity outside ``core/severity.py``, whose ``Severity.rank`` is the
    one rank: a table of numbers (``{Severity.HINT: 0, ...}``) or a named order
    (``_ORDER = ("hint", ..., "error")``); a translation (SARIF levels, LSP numbers) is not one."""
    found = []
    for name, tree in MODULES.items():
        if name == "citelens.core.severity":
            continue
        for node in ast.walk(tree):
            rank = False
            if isinstance(node, ast.Dict) and all(
                isinstance(v, ast.Constant) and isinstance(v.value, int) for v in node.values
            ):
                rank = _severity_named(list(node.keys), node) >= _SEVERITIES
            elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List)):
                rank = _severity_named(list(node.value.elts), node.value) >= _SEVERITIES
            if rank:
                found.append(f"{name}:{getattr(node, 'lineno', 0)}")
    return found


@invariant("One definition of each verdict concept: the same paper, the entry's own papers, "
           "the published version, the class, an informational entry, an arXiv DOI's id, the "
           "severity rank and the candidate floor.")
def test_each_verdict_concept_has_one_definition() -> None:
    where: dict[str, list[str]] = {}
    for name, tree in MODULES.items():
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            where.update({n: [*where.get(n, []), name] for n in names if n in ONE_CONCEPT})
    assert {n: m for n, m in where.items() if m != [ONE_CONCEPT[n]]} == {}
    assert set(where) == set(ONE_CONCEPT)
    assert _severity_tables() == []


def test_the_severity_check_finds_a_second_rank() -> None:
    tree = ast.parse("R = {Severity.HINT: 0, Severity.INFORMATION: 1, Severity.WARNING: 2, "
                     'Severity.ERROR: 3}\nO = ("hint", "information", "warning", "error")')
    MODULES["citelens.fake_rank"] = tree
    try:
        assert sorted(_severity_tables()) == ["citelens.fake_rank:1", "citelens.fake_rank:2"]
    finally:
        del MODULES["citelens.fake_rank"]


def test_the_newcomers_tasks_name_files_and_names_that_exist() -> None:
    """docs/architecture.md's three tasks stay true: every file they name exists and every
    ``module.name`` they name is defined there."""
    text = DOC.read_text(encoding="utf-8").split("## A newcomer's three tasks", 1)[1]
    files = set(re.findall(r"`((?:[\w.]+/)*[\w]+\.(?:py|md|json))`", text))
    assert files, "the section names no files"
    missing = [f for f in files if not (PACKAGE / f).is_file() and not (ROOT / f).is_file()
               and not any(p.name == f for p in ROOT.glob("docs/*.md"))]
    assert missing == []
    undefined = []
    for module, name in re.findall(r"`((?:\w+/)*\w+)\.([A-Za-z_]\w*)`", text):
        if name in ("py", "md", "json"):
            continue
        parts = module.split("/")
        candidates = [m for m in MODULES if m.split(".")[-len(parts):] == parts]
        defined = any(
            (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name)
            or (isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in n.targets))
            or (isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id == name)
            for m in candidates for n in ast.walk(MODULES[m])
        )
        if not defined:
            undefined.append(f"{module}.{name}")
    assert undefined == []


_ENUMS_BY_ATTRIBUTE = {"kind", "field", "status", "code", "language"}
#: Variables and calls that hold one of those enums (``kind_of(path)``: a document's kind).
_ENUMS_BY_NAME = {"kind", "field", "status", "code", "language", "kind_of"}


def _holds_enum(n: ast.expr) -> bool:
    """``d.kind``, ``v.status``, ``doc.language``, a variable ``status``, ``kind_of(path)``."""
    if isinstance(n, ast.Call):
        f = n.func
        called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return called == "kind_of"
    if isinstance(n, ast.Attribute):
        return n.attr in _ENUMS_BY_ATTRIBUTE
    return isinstance(n, ast.Name) and n.id in _ENUMS_BY_NAME


def _as_string(n: ast.expr) -> bool:
    """A member read as its string: ``v.status.value``, ``d.kind.name``."""
    return isinstance(n, ast.Attribute) and n.attr in ("name", "value") and _holds_enum(n.value)


def _strings(n: ast.expr | None) -> list[str]:
    items = n.elts if isinstance(n, (ast.Tuple, ast.Set, ast.List)) else [n]
    return [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def _keys(d: ast.Dict) -> list[str]:
    return [k for n in d.keys for k in _strings(n)]


def _string_comparisons() -> list[str]:
    """Enum members read as strings (``verify/match/discrepancy.Kind``, ``core/fields.Field``,
    ``core/statuses.Status``, ``core/codes.Code``, ``core/dockind.DocKind``):

    - what holds one (``d.kind``, ``v.status``, ``kind_of(path)``, a variable ``status``)
      compared with a member's value: ``d.kind == "identifier"``, ``kind_of(p) == "bib"``;
    - a status or a code written as a string (``"NOT_FOUND"``: only they have these values)
      compared with anything, keying a table (``{"NOT_FOUND": ...}.get(status)``) or reading
      one (``counts.get("UNVERIFIED", 0)``, ``counts["NOT_FOUND"]``);
    - a member's ``.value`` or ``.name`` compared with anything: ``v.status.value != s.upper()``."""
    values = {m.value for e in (Code, Field, Kind, Status, DocKind) for m in e}
    verdicts = {m.value for e in (Code, Status) for m in e}  # (only they have these values)
    found = []
    for name, tree in MODULES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                words = [v for s in sides for v in _strings(s)]
                if (
                    (any(map(_holds_enum, sides)) and any(v in values for v in words))
                    or any(v in verdicts for v in words)
                    or any(map(_as_string, sides))
                ):
                    found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
            elif isinstance(node, ast.Dict) and len(verdicts & set(_keys(node))) > 1:
                found.append(f"{name}:{node.lineno}: a table keyed by statuses or codes as strings")
            elif isinstance(node, (ast.Call, ast.Subscript)) and verdicts & set(_strings(_key_read(node))):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found


def _key_read(node: ast.Call | ast.Subscript) -> ast.expr | None:
    """The key a table is read by: ``counts.get("UNVERIFIED", 0)``, ``counts["NOT_FOUND"]``."""
    if isinstance(node, ast.Subscript):
        return node.slice
    f = node.func
    return node.args[0] if isinstance(f, ast.Attribute) and f.attr == "get" and node.args else None


@invariant("Discrepancy kinds, entry fields, verdict statuses, codes and document kinds are compared "
           "as enum members, never as strings.")
def test_kinds_fields_statuses_and_codes_are_compared_as_members() -> None:
    assert _string_comparisons() == []


def test_the_string_check_finds_a_string_comparison() -> None:
    """The comparisons this invariant replaced, as they were written (issue 42), each caught."""
    code = """\
x = d.kind == "identifier" or v.status.name in ("NOT_FOUND",)
if status == "DOI_MISMATCH": pass  # verify/classes.verdict_class
if v is None or v.status.value != fix.status.upper(): pass  # fixes/marks.py
if fix.status.upper() != status.value: pass  # fixes/rules.py
if kind_of(path) == "bib": pass  # lsp/, workspace/ (24 times)
if kind in {"latex", "markdown"}: pass
if doc.language == "latex": pass  # checks/local.py
if entry.get("status") == "UNVERIFIED": pass  # venue/evidence.py
why = {"NOT_FOUND": "a", "DOI_MISMATCH": "b"}.get(status)  # verify/classes.class_text
unchecked = (row.get("statuses") or {}).get("UNVERIFIED", 0)  # venue/page.py
"""
    MODULES["citelens.fake_kinds"] = ast.parse(code)
    try:
        assert len(_string_comparisons()) == 11
    finally:
        del MODULES["citelens.fake_kinds"]
    members = ast.parse("if kind_of(p) is DocKind.BIB and v.status is Status.NOT_FOUND: pass\n"
                        "if d.kind == Kind.TITLE or code in MARKABLE or kind == other: pass")
    MODULES["citelens.fake_members"] = members
    try:
        assert _string_comparisons() == []
    finally:
        del MODULES["citelens.fake_members"]


# --------------------------------------------------------------------------- one renderer

#: The one module that renders an entry, a paper record or a verdict for a user.
RENDERER = "citelens.workspace.render"
#: What makes text Markdown for a user: core/mdplain's functions, or emphasis, a link or a
#: code span written into an f-string.
_MARKDOWN_CALLS = {"plain", "code", "link_target"}


def _renders_a_paper_as_markdown(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``fn`` reads a paper's title with its authors or year and writes Markdown of them."""
    attrs = {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)}
    if "title" not in attrs or not attrs & {"authors", "year"}:
        return False
    for n in ast.walk(fn):
        if isinstance(n, ast.Call):
            f = n.func
            called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if called in _MARKDOWN_CALLS:
                return True
        if isinstance(n, ast.JoinedStr):
            text = "".join(v.value for v in n.values
                           if isinstance(v, ast.Constant) and isinstance(v.value, str))
            if "*" in text or "](" in text or "`" in text:
                return True
    return False


def _paper_renderers(tree: ast.Module) -> list[str]:
    return [fn.name for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and _renders_a_paper_as_markdown(fn)]


@invariant("An entry is rendered as Markdown in one module: `workspace/render.py`.")
def test_an_entry_is_rendered_as_markdown_in_one_module() -> None:
    elsewhere = {name: found for name, tree in MODULES.items()
                 if name != RENDERER and (found := _paper_renderers(tree))}
    assert elsewhere == {}
    assert _paper_renderers(MODULES[RENDERER])  # the check sees the renderer's own


def test_the_one_renderer_check_catches_a_copy() -> None:
    """The copies this invariant replaced, as they were written (issue 36): each is caught."""
    copies = [
        # lsp/completion.key_item: a key's detail and documentation
        "def key_item(view, markdown):\n"
        "    first = view.authors[0].last if view.authors else ''\n"
        "    detail = ' '.join(str(x) for x in (first, view.year) if x)\n"
        "    return detail, plain(view.title) if markdown else view.title\n",
        # workspace/citesearch.documentation
        "def documentation(record):\n"
        "    lines = [plain(record.title)]\n"
        "    lines.append(plain(', '.join(record.authors[:6])))\n"
        "    return '\\n\\n'.join(lines)\n",
        # lsp/hover_text._record_brief, with its own escape
        "def brief(r):\n"
        "    who = r.authors[0] if r.authors else ''\n"
        "    return f'*{_escape(r.title)}* ({who}, {r.year})'\n",
    ]
    assert all(_paper_renderers(ast.parse(c)) for c in copies)
    # reading a title, authors and year for a key or a plain message is not rendering
    assert not _paper_renderers(ast.parse(
        "def parts(v):\n    return KeyParts(v.title, v.authors, v.year, f'{v.title} ({v.year})')\n"))


#: What ``lsp/`` may import of CiteLens (issue 42: the editor is an adapter over the engine).
LSP_MAY_IMPORT = ("citelens.lsp", "citelens.workspace", "citelens.fixes", "citelens.zotero", "citelens.core")


def _lsp_modules() -> dict[str, ast.Module]:
    return {name: tree for name, tree in MODULES.items() if name.startswith("citelens.lsp")}


def _registrars(modules: dict[str, ast.Module]) -> list[str]:
    """The modules that register a handler with pygls (``server.feature(...)``,
    ``server.command(...)``)."""
    return sorted(name for name, tree in modules.items()
                  if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                         and n.func.attr in ("feature", "command") for n in ast.walk(tree)))


@invariant("Of CiteLens, `lsp/` imports only `workspace`, `fixes`, `core` and `zotero`, and it registers "
           "its handlers in one dispatch table.")
def test_lsp_imports_only_the_engines_layers_and_registers_in_one_table() -> None:
    below = {}
    for name, tree in _lsp_modules().items():
        found = {m for m in _imports(tree) if m in MODULES and m.startswith("citelens.")
                 and not m.startswith(LSP_MAY_IMPORT)}
        if found:
            below[name] = found
    assert below == {}
    assert _registrars(_lsp_modules()) == ["citelens.lsp.server"]


#: The engine's parts that change (held by the engine, never by the editor's handlers).
_ENGINE_PARTS = {"Engine", "Projects", "Verdicts", "Runs", "Findings", "DocumentStore", "Pipeline",
                 "PaperSearch"}


def _reaches_the_engine(modules: dict[str, ast.Module]) -> list[str]:
    """Where ``lsp/`` could change the engine other than through ``Engine.apply``: a module
    that imports one of its changing parts (``lsp/state.py`` builds the engine, nothing
    else); ``lsp/state.py`` using the engine other than to apply an event; the server's
    ``session`` typed as anything but the read-only ``Queries``."""
    found = []
    for name, tree in modules.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("citelens."):
                parts = {a.name for a in node.names} & _ENGINE_PARTS
                if parts - ({"Engine"} if name == "citelens.lsp.state" else set()):
                    found.append(f"{name} imports {sorted(parts)}")
            if (isinstance(node, ast.Attribute) and node.attr == "_engine"
                    and name != "citelens.lsp.state"):
                found.append(f"{name} reaches the engine itself")
    state = modules.get("citelens.lsp.state")
    if state is not None:
        uses = {ast.unparse(p) for n in ast.walk(state) for p in [n]
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute)
                and n.value.attr == "_engine"}
        found += [f"citelens.lsp.state uses {u}" for u in sorted(uses - {"self._engine.apply"})]
        typed = [ast.unparse(n.annotation) for n in ast.walk(state) if isinstance(n, ast.AnnAssign)
                 and ast.unparse(n.target) == "self.session"]
        if typed != ["Queries"]:
            found.append(f"CiteLensServer.session is typed {typed}, not Queries")
    return found


@invariant("The editor changes the engine only through `Engine.apply`; its handlers read it through "
           "`workspace/queries.Queries`.")
def test_the_editor_changes_the_engine_only_through_apply() -> None:
    assert _reaches_the_engine(_lsp_modules()) == []


def test_the_one_apply_check_finds_a_handler_that_changes_the_engine() -> None:
    """What the editor did before issue 42, each caught."""
    before = {
        "citelens.lsp.state": ast.parse(
            "class S:\n    def __init__(self):\n        self._engine = Engine()\n"
            "        self.session: Engine = self._engine\n"
            "    def flush(self):\n        self._engine.apply(x)\n        self._engine.update()\n"),
        "citelens.lsp.verification": ast.parse(
            "from citelens.workspace.verdicts import Verdicts\n"
            "def retry(ls):\n    ls._engine.forget_unverified(x)\n"),
    }
    assert _reaches_the_engine(before) == [
        "citelens.lsp.verification imports ['Verdicts']",
        "citelens.lsp.verification reaches the engine itself",
        "citelens.lsp.state uses self._engine.update",
        "CiteLensServer.session is typed ['Engine'], not Queries",
    ]
    assert _registrars({"citelens.lsp.fake": ast.parse("def register(s):\n    s.feature(M)(h)\n")}) == [
        "citelens.lsp.fake"]


# --------------------------------------------------------------------------- one writer, one store

#: The one module that makes a ``Verification`` (``decide`` and its kin).
WRITER = "citelens.verify.verdict"
#: A verdict's lists, which only its writer fills.
_VERDICT_LISTS = {"audit", "notices", "versions", "candidates", "discrepancies", "right_papers"}
_MUTATORS = {"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse"}


def _verdicts_written(modules: dict[str, ast.Module]) -> list[str]:
    """Where a module other than ``verify/verdict.py`` makes a ``Verification`` (calls it)
    or fills one of its lists in place (``v.audit.append(...)``, ``v.notices.extend(...)``);
    assigning one of its fields is refused by the dataclass itself (frozen)."""
    found = []
    for name, tree in modules.items():
        if name == WRITER:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if called == "Verification":
                found.append(f"{name}:{node.lineno}: makes a Verification")
            if (isinstance(f, ast.Attribute) and f.attr in _MUTATORS and isinstance(f.value, ast.Attribute)
                    and f.value.attr in _VERDICT_LISTS):
                found.append(f"{name}:{node.lineno}: {ast.unparse(f)}")
    return found


def _made_by(tmp: Path) -> set[str]:
    """The modules that made each ``Verification`` of an offline ``citelens check`` of two
    papers whose ``smith2020`` differ and of entries of one shape (copied offline): a copy
    with changes (``dataclasses.replace``) is made too, so it is found at run time."""
    import asyncio
    import dataclasses as dc

    from citelens.core.settings import Settings
    from citelens.verify.status import Verification
    from citelens.workspace.check import run_check
    from citelens.workspace.pipeline import Pipeline

    entry = "@article{smith2020, title={TITLE}, author={Smith, Ann}, year=2020}\n"
    for paper, title in (("a", "A first paper of nobody"), ("b", "A second paper of nobody")):
        (tmp / paper).mkdir()
        (tmp / paper / "refs.bib").write_text(entry.replace("TITLE", title), encoding="utf-8")
        (tmp / paper / "main.tex").write_text(
            "\\documentclass{article}\n\\begin{document}\n\\cite{smith2020}\n\\bibliography{refs}\n"
            "\\end{document}\n", encoding="utf-8")
    made: set[str] = set()
    real = Verification.__init__

    def spy(self: Verification, *args: object, **kw: object) -> None:
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_globals.get("__name__") == dc.__name__:
            frame = frame.f_back  # (dataclasses.replace makes its copy through __init__)
        made.add(str(frame.f_globals.get("__name__")))
        real(self, *args, **kw)  # type: ignore[arg-type]

    async def check() -> None:
        settings = Settings(offline=True, cache_dir=str(tmp / "cache"))
        pipeline = Pipeline(settings)
        try:
            await run_check([str(tmp / "a"), str(tmp / "b")], pipeline)
        finally:
            await pipeline.aclose()

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Verification, "__init__", spy)
        asyncio.run(check())
    return made


@invariant("`verify/verdict.py` is the one writer of a `Verification`: no other module makes one, "
           "copies one with changes or changes one.")
def test_one_writer_of_verification(tmp_path: Path) -> None:
    from citelens.verify.status import Verification

    assert Verification.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert _verdicts_written(MODULES) == []
    assert _made_by(tmp_path) == {WRITER}


def test_the_one_writer_check_finds_a_second_writer() -> None:
    """What the scheduler did before issue 42 (the retraction signal added after ``decide``),
    and a verdict made elsewhere, each caught."""
    before = ast.parse(
        "def _with_signal(self, v, answer, cached):\n"
        "    v.audit.append(AuditStep(answer.method, answer.source))\n"
        "    v.notices = combine([v.notices])\n"
        "def internal(key):\n    return Verification(key, Status.UNVERIFIED, '')\n")
    assert _verdicts_written({"citelens.verify.scheduler": before}) == [
        "citelens.verify.scheduler:2: v.audit.append",
        "citelens.verify.scheduler:5: makes a Verification",
    ]


#: The drivers that verify: the editor's engine, ``citelens check``, the venue.
DRIVERS = ("citelens.workspace.engine", "citelens.workspace.check", "citelens.venue.run")
STORE = "citelens.workspace.verdicts"
_MAPPING = re.compile(r"(?:dict|Mapping|MutableMapping|OrderedDict)\[str, (?:Verification|Any)\]")


def _second_stores(modules: dict[str, ast.Module]) -> list[str]:
    """A driver that does not keep its verdicts in ``workspace/verdicts.Verdicts``, and any
    other object that keeps verdicts by their content hash (an attribute typed as a mapping
    of strings to verdicts: the venue's memo was one)."""
    found = [f"{d} does not use {STORE}.Verdicts" for d in DRIVERS
             if d in modules and f"{STORE}.Verdicts" not in set(_imports(modules[d]))]
    for name, tree in modules.items():
        if name == STORE:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute)
                    and _MAPPING.fullmatch(ast.unparse(node.annotation))):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node.target)} keeps verdicts")
    return found


@invariant("The three drivers keep settled verdicts in one store, `workspace/verdicts.Verdicts`.")
def test_the_three_drivers_keep_verdicts_in_one_store() -> None:
    assert all(d in MODULES for d in DRIVERS)
    assert _second_stores(MODULES) == []


def test_the_one_store_check_finds_a_second_memo() -> None:
    """The venue's memo and ``citelens check``'s verdicts before issue 42, each caught."""
    before = {
        "citelens.venue.run": ast.parse(
            "class VenueVerifier:\n    def __init__(self, stream, memo=None):\n"
            "        self.memo: OrderedDict[str, Any] = OrderedDict() if memo is None else memo\n"),
        "citelens.workspace.check": ast.parse("from citelens.workspace.store import DocumentStore\n"),
    }
    assert _second_stores(before) == [
        "citelens.workspace.check does not use citelens.workspace.verdicts.Verdicts",
        "citelens.venue.run does not use citelens.workspace.verdicts.Verdicts",
        "citelens.venue.run:3: self.memo keeps verdicts",
    ]


#: What ``venue/`` may import of the layers beneath ``workspace/`` (issue 42: the venue is an
#: adapter over the engine): names, a verdict's class and a title's similarity, read to say
#: why a paper is ranked where it is, the snapshot's date for run.json, and the stream's type;
#: never a source's client, the plan, the scheduler's run or ``decide``.
VENUE_MAY_IMPORT = ("citelens.venue", "citelens.workspace", "citelens.core", "citelens.documents",
                    "citelens.sources.names", "citelens.verify.classes", "citelens.verify.match.titles",
                    "citelens.snapshot.store", "citelens.verify.scheduler.VerifyStream")


def _venue_layering(modules: dict[str, ast.Module]) -> list[str]:
    """Imports that break the venue package's place: a module outside ``venue/``, ``cli/`` and
    ``scale/`` importing it, or a venue module reaching beneath the engine."""
    found = []
    for name, tree in modules.items():
        names = {m for m in _imports(tree) if m.startswith("citelens.")}
        if not name.startswith(("citelens.venue", "citelens.cli", "citelens.scale")):
            found += [f"{name} imports {m}" for m in sorted(names) if m.startswith("citelens.venue")]
        elif name.startswith("citelens.venue"):
            # ``from citelens.verify.scheduler import VerifyStream`` names the module and the type
            allowed = names & {"citelens.verify.scheduler"} if (
                "citelens.verify.scheduler.VerifyStream" in names) else set()
            found += [f"{name} imports {m}" for m in sorted(names - allowed)
                      if not m.startswith(VENUE_MAY_IMPORT)]
    return found


@invariant("The venue is its own package, `venue/`, beside `cli/` and `lsp/`: only `cli/` and "
           "`scale/` import it, and it verifies only through the engine (`workspace/check.run_check`).")
def test_the_venue_is_an_adapter_over_the_engine() -> None:
    assert {n for n in MODULES if n.startswith("citelens.venue.")} >= {
        "citelens.venue.run", "citelens.venue.page", "citelens.venue.evidence",
        "citelens.venue.health", "citelens.venue.cleared"}
    assert not any(n.startswith("citelens.workspace.venue") for n in MODULES)
    assert "citelens.workspace.check.run_check" in set(_imports(MODULES["citelens.venue.run"]))
    assert _venue_layering(MODULES) == []


def test_the_venue_check_finds_the_engine_reaching_up_and_the_venue_reaching_down() -> None:
    found = _venue_layering({
        "citelens.workspace.report": ast.parse("from citelens.venue.evidence import FABRICATED\n"),
        "citelens.venue.run": ast.parse(
            "from citelens.verify.scheduler import VerifyStream\n"
            "from citelens.verify.plan import next_title_step\n"
            "from citelens.sources import s2\n"),
        "citelens.cli.main": ast.parse("from citelens.venue.run import check_venue\n"),
    })
    assert found == [
        "citelens.workspace.report imports citelens.venue.evidence",
        "citelens.workspace.report imports citelens.venue.evidence.FABRICATED",
        "citelens.venue.run imports citelens.sources",
        "citelens.venue.run imports citelens.sources.s2",
        "citelens.venue.run imports citelens.verify.plan",
        "citelens.venue.run imports citelens.verify.plan.next_title_step",
    ]


SCHEDULER = "citelens.verify.scheduler"
#: The plan's tables the scheduler runs (the order of the tiers, not a choice among them).
_PLAN_TABLES = {"FIRST_ID_TIER", "ID_CHAINS", "TITLE_HOSTS", "VERSION_TIERS"}
_SOURCE_VALUES = {h.source for h in HOSTS} | {"pubmed", "s2", "crossref", "openalex", "arxiv", "doi"}


def _scheduler_decides(tree: ast.Module) -> list[str]:
    """What in the scheduler is a rule of the plan: a status, a source or a method named, or
    a tier of the plan's table named apart from the tables it runs."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in ("Status", "Source", "Method") or (
                    node.value.id == "plan" and node.attr.isupper() and node.attr not in _PLAN_TABLES):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Constant) and node.value in _SOURCE_VALUES:
            found.append(f"{node.lineno}: {node.value!r}")
    return found


@invariant("`verify/scheduler.py` only executes the plan: it names no status, source or method, and no tier "
           "but through the plan's tables.")
def test_the_scheduler_only_executes_the_plan() -> None:
    assert _scheduler_decides(MODULES[SCHEDULER]) == []


def test_the_scheduler_check_finds_the_rules_it_held() -> None:
    """The retraction signal's tiers and the snapshot's settle rule, as the scheduler held them."""
    before = ast.parse(
        "def _signal_tier(doi):\n"
        "    return plan.OPENALEX_DOIS if plan.is_datacite(doi) else plan.CROSSREF_DOIS\n"
        "def settles(v):\n"
        "    return v.status in (Status.VERIFIED, Status.PARTIAL) and v.source != 'crossref'\n")
    assert sorted(_scheduler_decides(before)) == [
        "2: plan.CROSSREF_DOIS", "2: plan.OPENALEX_DOIS", "4: 'crossref'", "4: Status.PARTIAL",
        "4: Status.VERIFIED"]
