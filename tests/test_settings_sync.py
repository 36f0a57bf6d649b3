"""citelens.core.settings, the VS Code manifest and docs/configuration.md list the same settings.

citelens.core.settings (SETTINGS and the Settings dataclass) is the source of truth; a failure names
the file that is out of date and how to bring it back in line.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import pytest

from citelens.core.settings import USER_ONLY, Settings
from citelens.core.source_names import Source
from citelens.sources.transport import ALL_SETTINGS as SETTINGS
from citelens.sources.transport import base_url
from tests.harness import ROOT

MANIFEST = ROOT / "clients" / "vscode" / "package.json"
GENERATOR = ROOT / "clients" / "vscode" / "scripts" / "gen_settings.py"
DOCS = ROOT / "docs" / "configuration.md"
DOC_GENERATOR = ROOT / "scripts" / "gen_configuration_doc.py"
DOCS_REGENERATE = (
    "docs/configuration.md is not what scripts/gen_configuration_doc.py writes: write prose in "
    "the script (HEADER/FOOTER), then run `python scripts/gen_configuration_doc.py` and commit both"
)
REGENERATE = (
    "clients/vscode/package.json is out of date with citelens.core.settings: "
    "run `python3 clients/vscode/scripts/gen_settings.py` and commit package.json"
)


def _expected_schema(value: Any) -> tuple[Any, Any]:
    """(JSON type, JSON default) a setting whose Python default is ``value`` must have."""
    if value is None:  # every optional setting is a string (URL, key, model, path)
        return ["string", "null"], None
    if isinstance(value, bool):
        return "boolean", value
    if isinstance(value, int):
        return "integer", value
    if isinstance(value, float):
        return "number", value
    if isinstance(value, str):
        return "string", value
    if isinstance(value, tuple):
        return "array", list(value)
    if isinstance(value, Mapping):
        return "object", dict(value)
    raise AssertionError(f"test does not know the JSON type of {value!r}")


@pytest.fixture(scope="module")
def properties() -> dict[str, dict[str, Any]]:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    props: dict[str, dict[str, Any]] = manifest["contributes"]["configuration"]["properties"]
    return props


@pytest.mark.parametrize("doc", SETTINGS, ids=lambda d: d.key)
def test_manifest_has_setting_with_type_and_default(
    doc: Any, properties: dict[str, dict[str, Any]]
) -> None:
    key = f"citelens.{doc.key}"
    assert key in properties, f"{key} missing. {REGENERATE}"
    json_type, json_default = _expected_schema(doc.default)
    prop = properties[key]
    assert prop.get("type") == json_type, f"{key}: type {prop.get('type')!r}. {REGENERATE}"
    assert prop.get("default") == json_default and type(prop.get("default")) is type(
        json_default
    ), f"{key}: default {prop.get('default')!r}, settings say {json_default!r}. {REGENERATE}"
    assert prop.get("description", "").startswith(doc.description), (
        f"{key}: description differs from citelens.core.settings. {REGENERATE}"
    )


def test_manifest_has_nothing_else(properties: dict[str, dict[str, Any]]) -> None:
    known = {f"citelens.{d.key}" for d in SETTINGS}
    extra = sorted(k for k in properties if k not in known and not k.startswith("citelens.server."))
    assert not extra, f"settings the server does not have: {extra}. {REGENERATE}"
    assert {"citelens.server.command", "citelens.server.pythonPath"} <= set(properties)


def test_manifest_is_what_the_generator_writes() -> None:
    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, f"{REGENERATE}\n{proc.stderr}"


def test_configuration_doc_is_what_the_generator_writes() -> None:
    """docs/configuration.md is generated whole: a sentence written into the page by hand
    (the venue's cleared file) was dropped the next time the generator ran."""
    spec = importlib.util.spec_from_file_location("gen_configuration_doc", DOC_GENERATOR)
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    written = DOCS.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(written.splitlines(keepends=True),
                                        gen.render().splitlines(keepends=True),
                                        "docs/configuration.md", "generated"))
    assert not diff, f"{DOCS_REGENERATE}\n{diff}"
    proc = subprocess.run([sys.executable, str(DOC_GENERATOR), "--check"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr


def _docs_rows() -> list[str]:
    assert DOCS.is_file(), (
        "docs/configuration.md is missing: it must have one table row per setting in "
        "citelens.settings.SETTINGS"
    )
    return [
        ln for ln in DOCS.read_text(encoding="utf-8").splitlines() if ln.lstrip().startswith("|")
    ]


@pytest.mark.parametrize("doc", SETTINGS, ids=lambda d: d.key)
def test_docs_table_has_setting_and_env_var(doc: Any) -> None:
    key = f"`citelens.{doc.key}`"
    rows = [r for r in _docs_rows() if re.search(rf"`citelens\.{re.escape(doc.key)}`", r)]
    assert rows, (
        f"docs/configuration.md is out of date with citelens.core.settings: no table row for {key}"
    )
    if doc.env:
        assert any(f"`{doc.env}`" in r for r in rows), (
            f"docs/configuration.md is out of date with citelens.core.settings: the row for {key} "
            f"does not name its environment variable `{doc.env}`"
        )


def test_one_precedence_user_setting_then_environment_then_default() -> None:
    """docs/configuration.md: a setting the user set > its environment variable > the default;
    a key left out (or null) is not set."""
    from citelens.core.settings import Settings, from_sources

    env = {"CITELENS_S2_API_URL": "http://127.0.0.1:9/s2", "CITELENS_OFFLINE": "true"}

    def s2(editor: dict[str, Any], env: dict[str, str] = env) -> str:
        return base_url(from_sources(env=env, editor=editor), Source.S2)

    assert s2({}) == "http://127.0.0.1:9/s2"
    assert s2({"s2ApiUrl": None}) == "http://127.0.0.1:9/s2"
    assert s2({"s2ApiUrl": "http://x/s2"}) == "http://x/s2"
    assert from_sources(env=env, editor={"offline": False}).offline is False
    assert from_sources(env=env, editor={}).offline is True
    assert s2({}, {}) == base_url(Settings(), Source.S2) == "https://api.semanticscholar.org/graph/v1"


def test_cautious_defaults(properties: dict[str, dict[str, Any]]) -> None:
    """A repository's .vscode/settings.json cannot choose the program VS Code starts
    (scope ``machine``: user or remote settings only; it was ``machine-overridable``, which
    a trusted workspace may set), and a hover never contacts an address a .bib chose
    (``fetchEntryUrls`` off by default; it was on)."""
    for key in ("citelens.server.command", "citelens.server.pythonPath"):
        assert properties[key]["scope"] == "machine", key
    assert properties["citelens.fetchEntryUrls"]["default"] is False
    assert Settings().fetch_entry_urls is False


def test_settings_that_decide_verification_need_a_trusted_workspace() -> None:
    """Issue 41 #3: the snapshot, the cache, its key, every source's base URL (and the
    thresholds, the model endpoint, what may be fetched) are ``restrictedConfigurations``
    of the manifest: in a workspace the user has not trusted, VS Code does not take them
    from the repository's .vscode/settings.json. Before, nothing restricted them."""
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    untrusted = manifest["capabilities"]["untrustedWorkspaces"]
    assert untrusted["supported"] == "limited"
    restricted = set(untrusted["restrictedConfigurations"])
    for key in ("snapshot", "cacheDir", "cacheKey", "cache", "titleVerifiedThreshold", "llmBaseUrl"):
        assert f"citelens.{key}" in restricted, key
    urls = {f"citelens.{d.key}" for d in SETTINGS if d.name.endswith("_url") and d.name not in USER_ONLY}
    assert urls and urls <= restricted, urls - restricted
    # the harmless ones a repository keeps: codes, levels, its citation commands
    for key in ("diagnosticSeverity", "extraCiteCommands", "extraBibliographies", "verificationEnabled"):
        assert f"citelens.{key}" not in restricted, key


def test_the_server_drops_what_an_untrusted_workspace_set() -> None:
    """The rule the server applies to what the client says came from the workspace."""
    from citelens.core.settings import untrusted_dropped

    sent = {"snapshot": "/repo/snap.db", "cacheKey": "repo", "s2ApiUrl": "http://evil/",
            "diagnosticSeverity": {"NOT_FOUND": "hint"}, "mailto": "a@b.org",
            "client": {"workspaceTrusted": False,
                       "fromWorkspace": ["snapshot", "cacheKey", "s2ApiUrl", "diagnosticSeverity"],
                       "userValues": {"cacheKey": "mine"}}}
    values, dropped = untrusted_dropped(sent)
    assert dropped == ["cacheKey", "s2ApiUrl", "snapshot"]
    assert values == {"cacheKey": "mine", "diagnosticSeverity": {"NOT_FOUND": "hint"}, "mailto": "a@b.org"}
    trusted = {**sent, "client": {**sent["client"], "workspaceTrusted": True}}  # type: ignore[dict-item]
    assert untrusted_dropped(trusted)[1] == []
    assert untrusted_dropped({"snapshot": "/mine.db"}) == ({"snapshot": "/mine.db"}, [])  # no client info
