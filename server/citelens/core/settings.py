"""Every setting CiteLens has, with its default, in one place.

Settings come, lowest priority first, from the defaults below, the environment
(``CITELENS_*``), and the editor (``initializationOptions`` or
``workspace/configuration`` section ``citelens``; camelCase keys): a setting the user set
> its environment variable > the default. A key the editor leaves out (or sends as
``null``) is not set; the VS Code extension sends only what the user set. The table in
``docs/configuration.md`` and the VS Code manifest are checked against
:data:`SETTINGS` by a test, so the three never drift.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any

from citelens.core.codes import REGISTRY
from citelens.core.severity import SETTING_VALUES, Severity

#: Each code's default severity (derived from the code registry, ``core/codes.REGISTRY``).
DEFAULT_SEVERITY: Mapping[str, str] = MappingProxyType({c: row.severity.value for c, row in REGISTRY.items()})


@dataclass(frozen=True, slots=True)
class Settings:
    # --- parsing and local diagnostics
    extra_cite_commands: tuple[str, ...] = ()
    extra_bibliographies: tuple[str, ...] = ()
    report_unused_entries: bool = False
    file_encoding: str | None = None  # files that are not UTF-8: this encoding (else detected)
    diagnostic_severity: Mapping[str, str] = field(default_factory=dict)  # code -> severity|"off"
    # --- verification
    verification_enabled: bool = True
    verify_debounce_ms: int = 1500
    #: The base URLs the user set, by setting name (``s2_api_url``, ...). Each host's own row
    #: of the host registry (``sources/transport.HOSTS``) declares its setting, default and
    #: description: ``sources.transport.base_url`` reads them, and the editor key, the
    #: environment variable and the documentation of each are derived from the row.
    source_urls: Mapping[str, str] = field(default_factory=dict)
    s2_api_key: str | None = None
    openalex_api_key: str | None = None
    mailto: str | None = None
    s2_requests_per_second: float = 1.0
    request_timeout_s: float = 10.0
    retry_backoff_s: float = 2.0
    max_retries: int = 3
    verify_deadline_s: float = 900.0
    cache_dir: str | None = None
    snapshot: str | None = None
    cache: str | None = None
    cache_key: str | None = None  # the secret of every cache row's MAC (never logged)
    verified_max_age_days: float = 30.0
    offline: bool = False
    title_candidate_threshold: float = 0.70
    title_verified_threshold: float = 0.90
    # --- venue checks (citelens check FOLDER --venue OUT): one paper's budget
    venue_paper_max_files: int = 2_000
    venue_paper_max_mb: float = 64.0
    venue_paper_max_seconds: float = 300.0
    pdf_readers: int = 0  # PDFs read at once in the process (0: as many as the machine has cores)
    # --- claim checks
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    llm_model: str | None = None
    llm_model_phase2: str | None = None
    embedding_model: str | None = None
    claim_timeout_s: float = 30.0
    embedding_cosine_min: float = 0.50
    claim_diagnostics: bool = False
    hover_detail: str = "normal"
    allow_private_urls: bool = False
    fetch_entry_urls: bool = False  # a .bib from a collaborator is not trusted input
    fetch_max_bytes: int = 20_000_000
    # --- cite while writing
    paper_search: bool = True
    paper_search_debounce_ms: int = 300
    # --- Zotero (Better BibTeX auto-exports: fixes written to the Zotero item)
    zotero_profile: str | None = None
    zotero_auto_exports: tuple[str, ...] = ()
    zotero_url: str = "http://127.0.0.1:23119"
    zotero_web_api_url: str = "https://api.zotero.org"
    zotero_api_key: str | None = field(default=None, repr=False)  # a zotero.org key (never logged)
    zotero_export_wait_s: float = 60.0

    def severity(self, code: str) -> str:
        """The configured severity for a code: a map entry, else its ``default`` key, else ours."""
        sev = self.diagnostic_severity.get(code) or self.diagnostic_severity.get("default")
        return sev or DEFAULT_SEVERITY.get(code, Severity.WARNING.value)


@dataclass(frozen=True, slots=True)
class SettingDoc:
    name: str  # Settings attribute
    key: str  # editor key under "citelens." (camelCase)
    env: str | None  # environment variable
    description: str
    default: Any = None  # its default value


def _snake(key: str) -> str:
    return re.sub(r"([A-Z])", r"_\1", key).lower()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


_ENV: dict[str, str] = {
    "s2_api_key": "S2_API_KEY",
    "openalex_api_key": "CITELENS_OPENALEX_API_KEY",
    "mailto": "CITELENS_MAILTO",
    "file_encoding": "CITELENS_FILE_ENCODING",
    "cache_dir": "CITELENS_CACHE_DIR",
    "snapshot": "CITELENS_SNAPSHOT",
    "cache": "CITELENS_CACHE",
    "cache_key": "CITELENS_CACHE_KEY",
    "verified_max_age_days": "CITELENS_VERIFIED_MAX_AGE_DAYS",
    "offline": "CITELENS_OFFLINE",
    "request_timeout_s": "CITELENS_REQUEST_TIMEOUT",
    "retry_backoff_s": "CITELENS_RETRY_BACKOFF",
    "s2_requests_per_second": "CITELENS_S2_RPS",
    "verify_deadline_s": "CITELENS_VERIFY_DEADLINE",
    "venue_paper_max_files": "CITELENS_VENUE_PAPER_MAX_FILES",
    "venue_paper_max_mb": "CITELENS_VENUE_PAPER_MAX_MB",
    "venue_paper_max_seconds": "CITELENS_VENUE_PAPER_MAX_SECONDS",
    "pdf_readers": "CITELENS_PDF_READERS",
    "llm_base_url": "CITELENS_LLM_BASE_URL",
    "llm_api_key": "CITELENS_LLM_API_KEY",
    "llm_model": "CITELENS_LLM_MODEL",
    "llm_model_phase2": "CITELENS_LLM_MODEL_PHASE2",
    "embedding_model": "CITELENS_EMBEDDING_MODEL",
    "claim_timeout_s": "CITELENS_CLAIM_TIMEOUT",
    "embedding_cosine_min": "CITELENS_EMBEDDING_COSINE_MIN",
    "allow_private_urls": "CITELENS_ALLOW_PRIVATE_URLS",
    "fetch_entry_urls": "CITELENS_FETCH_ENTRY_URLS",
    "zotero_profile": "CITELENS_ZOTERO_PROFILE",
    "zotero_auto_exports": "CITELENS_ZOTERO_AUTO_EXPORTS",
    "zotero_url": "CITELENS_ZOTERO_URL",
    "zotero_web_api_url": "CITELENS_ZOTERO_WEB_API_URL",
    "zotero_api_key": "CITELENS_ZOTERO_API_KEY",
    "zotero_export_wait_s": "CITELENS_ZOTERO_EXPORT_WAIT",
}

_DESCRIPTIONS: dict[str, str] = {
    "extra_cite_commands": "Extra citation command names (without backslash) treated like \\cite.",
    "extra_bibliographies": "Extra .bib files (absolute or workspace-relative) used by every document.",
    "report_unused_entries": "Report bibliography entries that no document cites (UNUSED_ENTRY hint).",
    "file_encoding": "Encoding of files that are not valid UTF-8 (e.g. latin1, cp1252), as your "
    "editor reads them; unset: a LaTeX inputenc declaration, else Latin-1 when certain. A file "
    "whose encoding is uncertain is checked but never edited (renames, quick fixes).",
    "diagnostic_severity": f"Severity per diagnostic code ({', '.join(SETTING_VALUES)}); "
    'the key "default" applies to codes not listed.',
    "verification_enabled": "Verify bibliography entries against scholarly sources in the background.",
    "verify_debounce_ms": "Milliseconds to wait after the last edit before verifying changed entries.",
    "s2_api_key": "Semantic Scholar API key (sent as x-api-key; never logged).",
    "openalex_api_key": "OpenAlex API key (never logged).",
    "mailto": "Contact e-mail for the Crossref and OpenAlex polite pools.",
    "s2_requests_per_second": "Semantic Scholar request rate (1/s for the anonymous pool and "
    "introductory keys; raise it for keys with higher limits).",
    "request_timeout_s": "Timeout in seconds for every HTTP request.",
    "retry_backoff_s": "Seconds to wait after HTTP 429 when no Retry-After header is sent.",
    "max_retries": "Retries after HTTP 429 before a source is counted as failed for that lookup.",
    "verify_deadline_s": "Seconds one verification run may take (0: no limit); entries not "
    "decided by then are UNVERIFIED, and the next run continues from the cache.",
    "cache_dir": "Directory of the verification cache (default: the user cache directory).",
    "snapshot": "Path of a local snapshot index (built with citelens snapshot build) that "
    "verification asks before any API; an entry it does not hold goes on to the APIs.",
    "cache": "A postgresql:// URL: keep the verification cache in PostgreSQL, shared by the "
    "machines of a cluster (needs citelens[scale]); default: the local disk cache in cacheDir.",
    "cache_key": "Secret that signs every cached answer (HMAC-SHA256), so a row CiteLens did not "
    "write is ignored; required for a postgresql:// cache (give every machine the same key), "
    "optional for the disk cache (default: a random secret.key file, mode 0600, in cacheDir). "
    "Never logged.",
    "verified_max_age_days": "Days a cached answer that found a paper is trusted; after that the "
    "paper is looked up again, so a retraction or correction published since is reported.",
    "offline": "Use the cache only; never make network requests.",
    "title_candidate_threshold": "Title similarity (0-1) for a search result to be a candidate.",
    "title_verified_threshold": "Title similarity (0-1) needed for VERIFIED.",
    "venue_paper_max_files": "Venue checks: files one paper may have read (.tex, .bib, .md, .bbl); "
    "a paper with more is checked as far as that goes and reported as not fully checked.",
    "venue_paper_max_mb": "Venue checks: megabytes of files one paper may have read.",
    "venue_paper_max_seconds": "Venue checks: seconds one paper's files may take to read and "
    "parse, its PDFs' reading included (its verification has verifyDeadlineS from when it asks).",
    "pdf_readers": "PDFs read at once in one process (each in a child process of up to 1.5 GB); "
    "0: as many as the machine has cores.",
    "llm_base_url": "OpenAI-compatible endpoint for claim checks (e.g. http://localhost:11434/v1).",
    "llm_api_key": "API key for the LLM endpoint (falls back to OPENAI_API_KEY; never logged).",
    "llm_model": "Model for claim checks (phase 1, abstract).",
    "llm_model_phase2": "Model for phase 2 (full-text passages); defaults to llmModel.",
    "embedding_model": "Embedding model for passage retrieval (/v1/embeddings); "
    "without it passages are ranked with BM25.",
    "claim_timeout_s": "Seconds one claim check waits for the model, all its calls together; "
    "then the hover shows the evidence without a verdict.",
    "embedding_cosine_min": "Cosine similarity (0-1) a full-text passage needs to be kept as "
    "evidence; calibrate it for your embedding model with citelens eval claims.",
    "claim_diagnostics": "Run claim checks in the background and publish CLAIM_* diagnostics.",
    "hover_detail": 'What a hover shows: "normal" (the entry, the verdict and its evidence, notices, '
    'the claim check) or "verbose" (also the audit trail: match scores, the lookups tried, '
    "the claim check's stages with timings and addresses).",
    "fetch_entry_urls": "Let claim checks fetch pages and full texts from addresses found in data "
    "(an entry's url field, open-access links); off (the default): only the configured sources "
    "are asked, so a hover never makes the machine contact an address a .bib chose.",
    "allow_private_urls": "Allow fetching full texts from private and loopback addresses found in "
    "data (entry URLs, open-access links); configured base URLs are always trusted.",
    "fetch_max_bytes": "Maximum bytes downloaded for one full text.",
    "paper_search": "In a citation, when the typed text matches no key, also offer papers "
    "found by Semantic Scholar (OpenAlex, Crossref as fallbacks); accepting one adds its entry.",
    "paper_search_debounce_ms": "Milliseconds between two paper searches of one document "
    "while typing in a citation.",
    "zotero_profile": "Zotero profile folder whose prefs.js lists Better BibTeX's automatic "
    "exports (default: the Default=1 profile of profiles.ini in ~/.zotero/zotero, "
    "~/Library/Application Support/Zotero or %APPDATA%\\Zotero\\Zotero). A .bib an "
    "auto-export writes is fixed in the Zotero item, not in the file (docs/zotero.md). "
    "User settings only.",
    "zotero_auto_exports": "The .bib files a Better BibTeX automatic export writes, for when "
    "the Zotero profile cannot be read (another machine, a sandboxed Zotero).",
    "zotero_url": "Zotero's local server: Better BibTeX's JSON-RPC (an item by its citation "
    "key) and Zotero's local API (writes, Zotero 10). At the default address the port is the "
    "profile's extensions.zotero.httpServer.port. User settings only.",
    "zotero_web_api_url": "The Zotero web API, used to write an item when the local API "
    "cannot (Zotero 9 and older). User settings only.",
    "zotero_api_key": "A zotero.org API key with write access (zotero.org/settings/keys), "
    "for writes through the web API; never logged. User settings or the environment only, "
    "never a workspace's files.",
    "zotero_export_wait_s": "Seconds to watch a .bib after a write to Zotero for Better "
    'BibTeX\'s export before saying "written to Zotero, not exported yet".',
}

#: Settings that decide where a write goes or carry a secret: taken from the user's own
#: configuration or environment, never from a workspace's files (the VS Code manifest
#: gives them ``"scope": "machine"``, which a workspace's .vscode/settings.json cannot set).
USER_ONLY: frozenset[str] = frozenset(
    {"zotero_profile", "zotero_url", "zotero_web_api_url", "zotero_api_key"}
)

#: Settings that decide what counts as verified, where verdicts come from, or where a paper's
#: text and the user's keys go: the snapshot, the cache and its key, the hosts' base URLs
#: (every ``*_url``), the title thresholds, the model endpoint, which addresses may be
#: fetched. Taken from the user's own configuration or environment; from a workspace's files
#: (a repository's ``.vscode/settings.json``) only when the user trusts that workspace (VS
#: Code's workspace trust: the manifest lists them in ``restrictedConfigurations``; the
#: Neovim client: its ``citelens_trusted_workspaces``), see :func:`untrusted_dropped`.
#: (A repository's ``.citelens.toml`` holds marks only: codes, levels and marks are its.)
TRUST_REQUIRED: frozenset[str] = frozenset(
    {
        "snapshot",
        "cache_dir",
        "cache",
        "cache_key",
        "offline",
        "verified_max_age_days",
        "title_verified_threshold",
        "title_candidate_threshold",
        "allow_private_urls",
        "fetch_entry_urls",
    }
)


def needs_trust(name: str) -> bool:
    """Whether setting ``name`` (a Settings field or a host's ``*_url``) is one of
    :data:`TRUST_REQUIRED`: a workspace's files set it only when the user trusts it."""
    return name in TRUST_REQUIRED or name.endswith("_url")


#: Where a client says which values came from the workspace (the ``citelens`` settings
#: object's member ``client``): ``{"workspaceTrusted": bool, "fromWorkspace": [keys],
#: "userValues": {key: the user's own value}}``. A client that says nothing sends the user's.
CLIENT_INFO = "client"


def untrusted_dropped(editor: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The editor's ``citelens`` settings as they apply, and the keys it set from an
    untrusted workspace that were dropped: a setting that needs trust (:func:`needs_trust`),
    set in the workspace (``client.fromWorkspace``) while the workspace is not trusted
    (``client.workspaceTrusted``), takes the user's own value (``client.userValues``) or
    none (then the environment's, else the default). Codes, severities and the other
    settings of a workspace apply."""
    values = dict(editor)
    info = values.pop(CLIENT_INFO, None)
    if not isinstance(info, Mapping) or info.get("workspaceTrusted") is True:
        return values, []
    from_ws = info.get("fromWorkspace")
    user = info.get("userValues")
    user = user if isinstance(user, Mapping) else {}
    dropped = []
    for key in from_ws if isinstance(from_ws, list) else []:
        if not isinstance(key, str) or key not in values or not needs_trust(_snake(key)):
            continue
        dropped.append(key)
        if key in user and user[key] is not None:
            values[key] = user[key]
        else:
            del values[key]
    return values, sorted(dropped)


#: Every setting but the base URLs of the scholarly hosts, which each host's row declares
#: (``sources.transport.ALL_SETTINGS`` is this list with theirs in the place of ``source_urls``).
SETTINGS: tuple[SettingDoc, ...] = tuple(
    SettingDoc(
        f.name,
        _camel(f.name),
        _ENV.get(f.name),
        _DESCRIPTIONS[f.name],
        f.default_factory() if f.default is MISSING else f.default,  # type: ignore[operator]
    )
    for f in fields(Settings)
    if f.name != "source_urls"
)
#: A host's base URL setting ``<name>_url``: its environment variable and editor key.
_URL_ENV = re.compile(r"CITELENS_([A-Z0-9_]+_URL)")
_URL_KEY = re.compile(r"[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)*Url|[a-z][a-z0-9_]*_url")


def url_setting_doc(name: str, default: str, description: str) -> SettingDoc:
    """The documentation of a host's base URL setting ``name`` (``s2_api_url``): editor key
    ``s2ApiUrl``, environment variable ``CITELENS_S2_API_URL``."""
    return SettingDoc(name, _camel(name), f"CITELENS_{name.upper()}", description, default)


def _source_urls(env: Mapping[str, str], editor: Mapping[str, Any]) -> dict[str, str]:
    """The base URLs set in the environment or the editor (the editor first), by setting
    name: every ``CITELENS_*_URL`` variable and ``*Url`` key no other setting claims."""
    claimed = {d.env for d in SETTINGS} | {d.key for d in SETTINGS} | {d.name for d in SETTINGS}
    urls: dict[str, str] = {}
    for var, value in env.items():
        m = _URL_ENV.fullmatch(var)
        if m and var not in claimed and value:
            urls[m.group(1).lower()] = value
    for key, value in editor.items():
        if _URL_KEY.fullmatch(key) and key not in claimed and isinstance(value, str) and value:
            urls[_snake(key)] = value
    return urls


def _coerce(current: Any, value: Any) -> Any:
    """Turn a JSON or environment value into the type of the default."""
    if isinstance(current, bool):
        if isinstance(value, str):
            return value.strip().lower() in {"1", "true", "yes", "on"}
        return bool(value)
    if isinstance(current, int):
        return int(value)
    if isinstance(current, float):
        return float(value)
    if isinstance(current, tuple):
        if isinstance(value, str):
            return tuple(v.strip() for v in value.split(",") if v.strip())
        return tuple(str(v) for v in value)
    if isinstance(current, Mapping):
        return {str(k): str(v) for k, v in dict(value).items()}
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)


def _typed_default(name: str) -> Any:
    f = next(f for f in fields(Settings) if f.name == name)
    return {} if f.default is MISSING else f.default


def from_sources(env: Mapping[str, str] | None = None, editor: Mapping[str, Any] | None = None) -> Settings:
    """Build settings from the environment and the editor's ``citelens`` section."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for doc in SETTINGS:
        if doc.env and env.get(doc.env):
            values[doc.name] = _coerce(_typed_default(doc.name), env[doc.env])
    if "llm_api_key" not in values and env.get("OPENAI_API_KEY"):
        values["llm_api_key"] = env["OPENAI_API_KEY"]
    editor = editor or {}
    if isinstance(editor.get("citelens"), Mapping):
        editor = editor["citelens"]
    for doc in SETTINGS:
        for k in (doc.key, doc.name):
            if k in editor and editor[k] is not None:
                try:
                    values[doc.name] = _coerce(_typed_default(doc.name), editor[k])
                except (TypeError, ValueError):
                    pass  # a bad value keeps the default; the LSP layer logs it
                break
    return replace(Settings(), source_urls=_source_urls(env, editor), **values)
