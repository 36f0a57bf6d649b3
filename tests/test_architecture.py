"""The layout the architecture doc describes holds in the code (read as source, not run):
no import cycles between modules, pygls/lsprotocol only in the LSP layer, one definition of
every normaliser and of the secret list."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tests.conftest import ROOT

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


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_layers_import_downwards_only() -> None:
    """core < sources < documents < snapshot < verify < claims < checks < workspace < scale <
    lsp < cli: a package never imports one above it, and every package has its place."""
    order = ["core", "sources", "documents", "snapshot", "verify", "claims", "checks", "workspace",
             "scale", "lsp", "cli"]
    packages = {name.split(".")[1] for name in MODULES if name.count(".") >= 2}
    assert packages <= set(order), f"packages without a layer: {sorted(packages - set(order))}"

    def layer(module: str) -> int:
        parts = module.split(".")
        return order.index(parts[1]) if len(parts) > 1 and parts[1] in order else -1

    upward = [(a, b) for a, deps in _graph().items() for b in deps
              if layer(a) >= 0 and layer(b) > layer(a)]
    assert upward == []


def test_pygls_and_lsprotocol_only_in_the_lsp_layer() -> None:
    users = sorted(name for name, tree in MODULES.items()
                   if any(m.split(".")[0] in {"pygls", "lsprotocol"} for m in _imports(tree)))
    assert users and all(u.startswith("citelens.lsp.") for u in users), users


def test_no_server_handle_typed_any() -> None:
    """Feature code gets a typed server or session, never ``ls: Any``."""
    loose = [f"{name}.{node.name}" for name, tree in MODULES.items()
             for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
             for a in node.args.args
             if a.arg == "ls" and (a.annotation is None or ast.unparse(a.annotation) == "Any")]
    assert loose == []


#: Each normaliser, the secret list and the coverage policy, and the one module that defines it.
ONE_HOME = {
    "normalize_doi": "citelens.core.normalize", "normalize_arxiv": "citelens.core.normalize",
    "normalize_pmid": "citelens.core.normalize", "source_name": "citelens.core.normalize",
    "SOURCE_NAMES": "citelens.core.normalize",
    "strip_accents": "citelens.core.accents",
    "to_unicode": "citelens.core.latextext", "latex_to_text": "citelens.core.latextext",
    "normalize_title": "citelens.core.titles", "title_key": "citelens.core.titles",
    "redact_url": "citelens.core.secrets", "SECRET_PARAMS": "citelens.core.secrets",
    "INFORMATIONAL_TYPES": "citelens.verify.coverage",
}


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


_MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter",
                  "WeakValueDictionary", "WeakKeyDictionary"}


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
            if isinstance(node, ast.FunctionDef):
                for d in node.decorator_list:
                    text = ast.unparse(d)
                    if "lru_cache" in text and "maxsize=" not in text:
                        found.append(f"{name}.{node.name}: unbounded {text}")
                    if text.split(".")[-1] == "cache" and node.args.args:
                        found.append(f"{name}.{node.name}: @cache on a function with arguments")
    assert found == []
