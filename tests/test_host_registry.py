"""A scholarly host is declared once: its row in ``sources/transport.HOSTS``.

Its base URL setting (name, default, description; the editor key, the environment variable,
docs/configuration.md and the VS Code manifest are derived) and its rate live in the row;
its method names live in its client module. These tests fail when a host's URL setting is
written anywhere else in the product, or when a new host's method names are added to the
shared ``sources/methods.py`` instead of its own module.
"""

from __future__ import annotations

import ast
from pathlib import Path

from citelens.core.settings import SETTINGS, Settings, from_sources, url_setting_doc
from citelens.core.source_names import Source
from citelens.sources.methods import Method
from citelens.sources.transport import ALL_SETTINGS, HOSTS, base_url
from tests.harness import ROOT

PACKAGE = ROOT / "server" / "citelens"
REGISTRY = PACKAGE / "sources" / "transport.py"
#: The hosts whose method names ``sources/methods.py`` has held since before the registry
#: (the prefix of each name). A new host's names go in its client module, not here.
METHODS_PY_HOSTS = {"s2", "crossref", "doi", "openalex", "arxiv", "pubmed", "snapshot"}


def _code_strings_and_names(path: Path) -> set[str]:
    """The string constants (docstrings left out), names and attribute names of a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            out.add(node.value)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


def test_a_hosts_url_setting_is_written_only_in_its_registry_row() -> None:
    spellings = {}
    for h in HOSTS:
        doc = url_setting_doc(*h.url)
        spellings |= {doc.name: h.source, doc.key: h.source, doc.env: h.source}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == REGISTRY:
            continue
        for word in _code_strings_and_names(path) & set(spellings):
            found.append(f"{path.relative_to(ROOT)}: {word!r} ({spellings[word]}'s URL setting)")
    assert not found, (
        "a host's base URL setting is declared by its row in sources/transport.HOSTS; "
        "read it with sources.transport.base_url(settings, Source.X):\n" + "\n".join(found)
    )
    settings_fields = {d.name for d in SETTINGS}
    assert not settings_fields & {h.url[0] for h in HOSTS}, "core/settings.py declares a host's URL"


def test_every_host_url_setting_is_listed_once_with_its_row_default() -> None:
    names = [d.name for d in ALL_SETTINGS]
    assert len(names) == len(set(names))
    for h in HOSTS:
        doc = next(d for d in ALL_SETTINGS if d.name == h.url[0])
        assert doc.default == h.url[1] == base_url(Settings(), h.source)
        assert doc.env == f"CITELENS_{h.url[0].upper()}"


def test_a_host_url_set_in_the_environment_or_editor_reaches_its_client() -> None:
    env = {"CITELENS_NCBI_EUTILS_URL": "http://127.0.0.1:9/eutils"}
    assert base_url(from_sources(env=env, editor={}), Source.NCBI) == "http://127.0.0.1:9/eutils"
    editor = {"citelens": {"ncbiEutilsUrl": "http://127.0.0.1:8/e"}}
    assert base_url(from_sources(env=env, editor=editor), Source.NCBI) == "http://127.0.0.1:8/e"
    # another setting that ends in Url keeps its own field, not a host's
    llm = from_sources(env={"CITELENS_LLM_BASE_URL": "http://127.0.0.1:7/v1"}, editor={})
    assert llm.llm_base_url == "http://127.0.0.1:7/v1" and "llm_base_url" not in llm.source_urls


def test_a_new_hosts_method_names_are_not_written_in_the_shared_methods_module() -> None:
    strays = sorted(m.value for m in Method if m.value.split("_")[0] not in METHODS_PY_HOSTS)
    assert not strays, (
        "a host added since the registry declares its method names in its own client module "
        f"(a StrEnum there, see docs/architecture.md), not in sources/methods.py: {strays}"
    )
