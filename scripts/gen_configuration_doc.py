"""Write docs/configuration.md from citelens.core.settings (run after adding a setting).

    python scripts/gen_configuration_doc.py          # rewrite docs/configuration.md
    python scripts/gen_configuration_doc.py --check  # exit 1 when the page differs

The whole page is generated: its prose is written here, never by hand in the page
(tests/test_settings_sync.py fails when the page is not this script's output)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from citelens.core.settings import DEFAULT_SEVERITY
from citelens.sources.names import source_name
from citelens.sources.transport import ALL_SETTINGS, HOSTS

HEADER = """# Configuration

Every setting, its default, and how to set it. One precedence, in every editor:

**a setting you set in the editor > the environment variable > the default.**

The editor's settings are `initializationOptions` or `workspace/configuration` under the
section `citelens` (VS Code: *Settings → Extensions → CiteLens*; Neovim:
`settings = { citelens = { ... } }`, see `clients/neovim`). The VS Code extension sends only
the settings you set (user, workspace or folder), never the defaults its manifest lists, so
an exported `CITELENS_S2_API_URL` applies until you set `citelens.s2ApiUrl`. A setting sent
as `null` counts as not set. The command line (`citelens check`) reads the environment.

This page is generated from `server/citelens/core/settings.py` by
`python scripts/gen_configuration_doc.py`; a test checks that it, the server and the VS Code
manifest list the same settings.

| setting | environment variable | default | description |
|---|---|---|---|
"""

FOOTER = """
## Diagnostic severities

`citelens.diagnosticSeverity` maps a diagnostic code to `error`, `warning`, `information`,
`hint` or `off`; the key `default` applies to codes not listed (LTeX-style). The defaults:

| code | default severity |
|---|---|
{rows}

Example (VS Code `settings.json`):

```json
{{
  "citelens.diagnosticSeverity": {{"NOT_FOUND": "error", "UNVERIFIED": "off"}},
  "citelens.mailto": "you@university.edu"
}}
```

Example (Neovim):

```lua
vim.lsp.config('citelens', {{
  settings = {{ citelens = {{ diagnosticSeverity = {{ NOT_FOUND = 'error' }}, mailto = 'you@university.edu' }} }},
}})
```

## Entries marked as checked

An entry you have checked by hand is not reported again, for one code or for all, in the
editor and in `citelens check` alike (ruff's `# noqa`, LTeX+'s "hide false positive"). Two
places say so:

* a comment on the line right before the entry in the `.bib`, which the code action
  *Mark as checked (NOT_FOUND)* or *Mark as checked (all codes)* writes (one new line, in
  the file's line endings; nothing else of the file changes). BibTeX, biber and
  bibtexparser ignore text outside entries, so the line stays:

  ```bibtex
  % citelens: checked NOT_FOUND 2026-11-27 #a1b2c3
  @article{{dempster1977,
  ```

  `ALL` for every code, several codes with commas (`NOT_FOUND,METADATA_MISMATCH`); the date
  is for the reader; `#a1b2c3` is the entry's fingerprint (its title, authors and DOI as
  read: layout, case, accents and braces do not count). When the title, the authors or the
  DOI change, the fingerprint no longer matches and the entry is checked again. A comment
  written without a fingerprint holds whatever the entry becomes.
* a project file, `.citelens.toml` (or `[tool.citelens]` in `pyproject.toml`) in the
  document's folder or a folder above it (the nearest one counts):

  ```toml
  [checked]
  dempster1977 = ["NOT_FOUND"]      # this code, whatever the entry becomes
  smith2021 = ["ALL #a1b2c3"]       # every code, while the entry's fingerprint is a1b2c3
  ```

  In `pyproject.toml` the table is `[tool.citelens.checked]`. The editor reads the file
  again when it changes (at the next edit). It is read as data, a regular file of at most
  1 MB; one that cannot be read (not TOML, nested too deep, too big) marks nothing and the
  log says why in one line, and the checks go on.

A mark belongs to its entry, the definition of that key in that `.bib` (a project file's
mark: in the projects under its folder): another paper's `smith2020` in its own `.bib` is
another entry, and its findings are not hidden. A mark hides the findings about its entry (`NOT_FOUND`, `DOI_MISMATCH`, `METADATA_MISMATCH`,
`DUPLICATE_ENTRY`, `UNVERIFIED`, `RETRACTED`, `EXPRESSION_OF_CONCERN`, `CORRECTION`,
`UNUSED_ENTRY`, `CLAIM_CONTRADICTED`, `CLAIM_UNSUPPORTED`), in the `.bib` and at its
citations; a syntax error, an undefined key or a key defined twice is never hidden. A venue
check (`citelens check FOLDER --venue OUT`) does not honour marks: the authors' word is not
the programme chair's, whose word is the venue's cleared file (`--cleared`, see
[scale.md](scale.md)).

## Other environment variables

| variable | meaning |
|---|---|
| `OPENAI_API_KEY` | used for claim checks when `CITELENS_LLM_API_KEY` is not set |

API keys (`S2_API_KEY`, `CITELENS_OPENALEX_API_KEY`, `CITELENS_LLM_API_KEY`) are sent only in
request headers or parameters to their own service; they never appear in logs, diagnostics,
hovers, cache keys or error messages.

## Cautious defaults

A `.bib` or a repository from a collaborator is not trusted input. So:

* `citelens.fetchEntryUrls` is **off** by default: a claim check (a hover) never makes the
  machine contact an address a `.bib` chose (its `url` field, an open-access link); only
  the configured sources are asked. Turn it on for full texts from entry URLs; private and
  loopback addresses still need `citelens.allowPrivateUrls`.
* `citelens.server.command` and `citelens.server.pythonPath` (the program VS Code starts)
  have the scope `machine`: they are read from user (or remote machine) settings only, never
  from a workspace's `.vscode/settings.json`, which a repository carries.
* The Zotero settings that decide where a fix is written or carry a key (`zoteroApiKey`,
  `zoteroUrl`, `zoteroWebApiUrl`, `zoteroProfile`) have the scope `machine` too: a
  repository cannot send your Zotero writes elsewhere or set a key (see `docs/zotero.md`).
* **Workspace trust.** The settings that decide what counts as verified or where verdicts
  (and a paper's text) come from or go, the snapshot (`snapshot`), the cache (`cache`,
  `cacheDir`, `cacheKey`, `verifiedMaxAgeDays`, `offline`), every source's address (the
  `*Url` settings, `llmBaseUrl`), the title thresholds and what may be fetched
  (`fetchEntryUrls`, `allowPrivateUrls`), are taken from your user settings or environment,
  never from a repository's `.vscode/settings.json`, unless you trust that workspace. In VS
  Code they are the extension's `restrictedConfigurations` (Workspaces: Manage Workspace
  Trust); in Neovim, the client reads a workspace's `.vscode/settings.json` too and trusts it
  only when you list it: `vim.g.citelens_trusted_workspaces = {{ '~/papers/mine' }}` (or
  `true`). A value an untrusted workspace sets is ignored, with a line in the server's log
  ("citelens.snapshot from the workspace's settings is ignored: …"), and yours (or the
  environment's) applies; a workspace keeps its harmless settings (codes, severities, citation
  commands). A repository's `.citelens.toml` holds marks only.
* `cacheDir`: CiteLens creates the folders it needs with mode 0700 and never changes the mode
  of a folder it did not create (`/tmp` stays 1777). A cache in a shared or synced folder is
  readable by whoever shares it; each row is bound to its lookup (see `docs/reliability.md`).
"""


def _default(value: object) -> str:
    if value in (None, (), {}):
        return "—" if value is None else f"`{json.dumps(list(value) if value == () else value)}`"  # type: ignore[arg-type]
    return f"`{json.dumps(value)}`"


KEYS = """
## Keys: what each source takes, what it buys, what runs without it

Every source is asked without a key or an address; each of these buys its own rate or
budget. The key never leaves its setting: it goes only to its own service, in a header or
a parameter, and never into a log, a message, a cache key or the remembered state.

| source | setting / environment variable | where | with it | without it |
|---|---|---|---|---|
{rows}

A source that refuses (its daily budget spent, the key refused, a challenge page or an HTTP
202 where its data belongs, a wait longer than a check can afford) is left out of the run at
once, with no wait, and said once with the fix: in `citelens check`'s log, in the editor's
notification and log, at the top of a venue report. "Not found" never waits for OpenAlex:
Semantic Scholar, Crossref, PubMed and each identifier's registry decide it, and OpenAlex's
title searches (fast, but priced) are asked first only for a reference Crossref seldom holds
(a conference paper, report, thesis or misc entry with no DOI, a NeurIPS, ICML, ICLR, PMLR
or JMLR paper: Crossref's one-at-a-time search is asked after them, if still needed), and
otherwise only once Crossref's search did not find it. So a spent budget makes a check slower, never another
verdict. A budget spent is remembered until its reset in `sources.json` in the cache folder
(`cacheDir`), so the next check does not spend a request learning it again.
`citelens sources` shows each source's state (key set or not, never the key; the budget left
as its rate headers said; the last refusal and when it ends); `citelens sources --check`
also sends each one a request that costs nothing.
"""


def _key_rows() -> str:
    """One row per key a host takes, and the contact e-mail of the hosts with a polite pool
    (from the host registry, ``sources/transport.HOSTS``)."""
    rows = []
    for h in HOSTS:
        if h.key is not None:
            k = h.key.hint()
            rows.append(
                f"| {source_name(h.source)} | `citelens.{k.editor_key}` / `{k.env}` | {k.where} | "
                f"{h.key.buys} | {h.key.without} |"
            )
    for h in HOSTS:
        if h.polite_rate is not None:
            polite, plain = h.polite_rate, h.rate
            rows.append(
                f"| {source_name(h.source)} | `citelens.mailto` / `CITELENS_MAILTO` | your e-mail "
                f"address | its polite pool: {1 / polite.min_interval_s:g} requests/s, "
                f"{polite.max_concurrency} at once | its public pool: {1 / plain.min_interval_s:g} "
                f"requests/s, {plain.max_concurrency} at a time |"
            )
    return "\n".join(rows)


def render() -> str:
    rows = [
        f"| `citelens.{s.key}` | {'`' + s.env + '`' if s.env else '—'} | {_default(s.default)} | "
        f"{s.description.replace('|', '/')} |"
        for s in ALL_SETTINGS
    ]
    sev = "\n".join(f"| `{c}` | {v} |" for c, v in DEFAULT_SEVERITY.items())
    return HEADER + "\n".join(rows) + "\n" + KEYS.format(rows=_key_rows()) + FOOTER.format(rows=sev)


PAGE = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


def main(argv: list[str]) -> int:
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != render():
            sys.stderr.write(
                f"{PAGE} is not what scripts/gen_configuration_doc.py writes: edit the script's "
                "text (not the page) and run it\n"
            )
            return 1
        return 0
    if argv:
        sys.stderr.write(__doc__ + "\n")
        return 2
    PAGE.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {PAGE}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
