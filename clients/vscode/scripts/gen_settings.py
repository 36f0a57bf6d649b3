#!/usr/bin/env python3
"""Write the VS Code manifest's settings (contributes.configuration) from citelens.core.settings.

Every server setting in ``citelens.sources.transport.ALL_SETTINGS`` becomes ``citelens.<camelCaseKey>``
with the JSON type and default of its ``Settings`` field; ``citelens.server.*`` (how the
extension starts the server) are the only settings of the extension itself.

    python3 clients/vscode/scripts/gen_settings.py          # rewrite package.json
    python3 clients/vscode/scripts/gen_settings.py --check  # exit 1 if it is out of date
"""

from __future__ import annotations

import json
import sys
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MANIFEST = HERE.parent / "package.json"
REPO = HERE.parents[2]
if str(REPO / "server") not in sys.path:
    sys.path.insert(0, str(REPO / "server"))

from citelens.core.settings import DEFAULT_SEVERITY, USER_ONLY, Settings, needs_trust  # noqa: E402
from citelens.core.severity import SETTING_VALUES  # noqa: E402
from citelens.sources.transport import ALL_SETTINGS  # noqa: E402

SEVERITIES = list(SETTING_VALUES)

#: Settings of the extension itself (not sent to the server as such).
CLIENT_SETTINGS: dict[str, dict[str, Any]] = {
    "citelens.server.command": {
        "type": "array",
        "items": {"type": "string"},
        "default": ["citelens", "serve"],
        "description": "Command (program and arguments) that starts the CiteLens language "
        "server over stdio. Ignored when citelens.server.pythonPath is set. User or remote "
        "settings only: a workspace's .vscode/settings.json cannot set it (it would run a "
        "program the repository chose).",
        "scope": "machine",
    },
    "citelens.server.pythonPath": {
        "type": ["string", "null"],
        "default": None,
        "description": "Python interpreter with CiteLens installed; when set, the server is "
        "started as `<pythonPath> -m citelens serve`. User or remote settings only, like "
        "citelens.server.command.",
        "scope": "machine",
    },
}


def json_type(annotation: Any) -> str | list[str]:
    """The JSON schema type of a Settings field annotation."""
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        if len(inner) == 1 and len(args) == 2:
            base = json_type(inner[0])
            assert isinstance(base, str)
            return [base, "null"]
        raise TypeError(f"unsupported union {annotation!r}")
    if annotation is bool:
        return "boolean"
    if annotation is int:
        return "integer"
    if annotation is float:
        return "number"
    if annotation is str:
        return "string"
    if origin in (tuple, list):
        return "array"
    if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
        return "object"
    raise TypeError(f"no JSON type for {annotation!r}")


def json_default(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def build_properties() -> dict[str, dict[str, Any]]:
    hints = typing.get_type_hints(Settings)
    props: dict[str, dict[str, Any]] = dict(CLIENT_SETTINGS)
    for doc in ALL_SETTINGS:
        annotation = hints.get(doc.name, str)  # a host's base URL (its row) is a str
        schema: dict[str, Any] = {"type": json_type(annotation)}
        if schema["type"] == "array":
            schema["items"] = {"type": "string"}
        if schema["type"] == "object":
            schema["additionalProperties"] = {"type": "string", "enum": SEVERITIES}
            schema["propertyNames"] = {"enum": [*DEFAULT_SEVERITY, "default"]}
        schema["default"] = json_default(doc.default)
        description = doc.description
        if doc.env:
            description += f" Environment variable: {doc.env}."
        schema["description"] = description
        if doc.name in USER_ONLY:  # a workspace's .vscode/settings.json cannot set it
            schema["scope"] = "machine"
        props[f"citelens.{doc.key}"] = schema
    return props


def restricted_configurations() -> list[str]:
    """The settings a workspace's .vscode/settings.json sets only when the user trusts the
    workspace (``citelens.core.settings.TRUST_REQUIRED`` and every host's base URL): what
    decides what counts as verified, where verdicts come from, where a paper's text goes."""
    return sorted(
        f"citelens.{doc.key}" for doc in ALL_SETTINGS if needs_trust(doc.name) and doc.name not in USER_ONLY
    )


def render(manifest: dict[str, Any]) -> str:
    manifest["contributes"]["configuration"]["properties"] = build_properties()
    manifest["capabilities"] = {
        "untrustedWorkspaces": {
            "supported": "limited",
            "description": "In a workspace you have not trusted, its settings do not decide what "
            "counts as verified: the snapshot, the cache and its key, the sources' addresses, "
            "the title thresholds and the model endpoint come from your user settings or "
            "environment only.",
            "restrictedConfigurations": restricted_configurations(),
        }
    }
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    current = MANIFEST.read_text(encoding="utf-8")
    wanted = render(json.loads(current))
    if "--check" in argv:
        if wanted != current:
            print(
                f"{MANIFEST} is out of date with citelens.core.settings: "
                "run python3 clients/vscode/scripts/gen_settings.py",
                file=sys.stderr,
            )
            return 1
        return 0
    MANIFEST.write_text(wanted, encoding="utf-8")
    print(f"wrote {len(build_properties())} settings to {MANIFEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
