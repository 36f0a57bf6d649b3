"""A fake Zotero with Better BibTeX on 127.0.0.1, made from the real formats (SOURCES_ZOTERO.md).

One HTTP server answers like

================  ==========================================================================
path              answers
================  ==========================================================================
``/better-bibtex/json-rpc``   Better BibTeX's JSON-RPC 2.0: ``item.search`` (CSL JSON hits
                              with ``id`` = the item's URI, ``library``, ``citekey``)
``/api/...``      Zotero's local API: ``GET /api/`` (``Zotero-Server-ID``), ``POST
                  /api/local/authorize``, ``GET|PATCH /api/{users/0|groups/ID}/items/KEY``,
                  as Zotero 10 (``local_mode="zotero10"``), Zotero 9 (``"zotero9"``: reads
                  only, a PATCH is 501) or with the local API off (``"off"``: 403)
``/web/...``      the Zotero web API (api.zotero.org): ``GET|PATCH /{users|groups}/ID/items/
                  KEY`` with ``Zotero-API-Key``, versions, 412, 403, ``Backoff``, 429 +
                  ``Retry-After``
================  ==========================================================================

and an export hook: after each write the fake renders every auto-export's .bib again the
way Better BibTeX renders fields (:func:`render_bib`: title case with ``{{...}}`` around
the words Zotero has capitalised, ``year = 2020`` bare, pages with ``--``, ``tex.*`` lines
of Extra as fields, ``DOIandURL``, journal abbreviations), after ``export_delay_s`` (and
``sync_delay_s`` more for a write through the web API: the desktop gets it at its next
sync). :meth:`ZoteroFake.write_profile` writes a ``profiles.ini`` and a ``prefs.js`` naming
the auto-exports as Better BibTeX 6.7.228+ keeps them.

Use::

    with running_zotero(tmp_path) as z:
        z.add_item(...); z.add_export(tmp_path / "refs.bib")
        settings = z.settings()
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from citelens.core.settings import Settings, from_sources

BETTER_BIBTEX = "ca65189f-8815-4afe-8c8b-8c7c15f0edca"
BETTER_BIBLATEX = "f895aa0d-f28e-47fe-b247-2ea77c6ed583"
USER_ID = 4711
SERVER_ID = "a1B2c3D4e5F6"
KEY_ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"

#: Fields of the item types the tests use (zotero/zotero-schema schema.json, version 41).
ITEM_FIELDS: dict[str, list[str]] = {
    "journalArticle": [
        "title",
        "abstractNote",
        "publicationTitle",
        "publisher",
        "place",
        "date",
        "volume",
        "issue",
        "section",
        "partNumber",
        "partTitle",
        "pages",
        "series",
        "seriesTitle",
        "seriesText",
        "journalAbbreviation",
        "DOI",
        "citationKey",
        "url",
        "accessDate",
        "PMID",
        "PMCID",
        "ISSN",
        "archive",
        "archiveLocation",
        "shortTitle",
        "language",
        "libraryCatalog",
        "callNumber",
        "rights",
        "extra",
    ],
    "conferencePaper": [
        "title",
        "abstractNote",
        "proceedingsTitle",
        "conferenceName",
        "publisher",
        "place",
        "date",
        "eventPlace",
        "volume",
        "issue",
        "numberOfVolumes",
        "pages",
        "series",
        "seriesNumber",
        "DOI",
        "ISBN",
        "citationKey",
        "url",
        "accessDate",
        "ISSN",
        "archive",
        "archiveLocation",
        "shortTitle",
        "language",
        "libraryCatalog",
        "callNumber",
        "rights",
        "extra",
    ],
    "bookSection": [
        "title",
        "abstractNote",
        "bookTitle",
        "series",
        "seriesNumber",
        "volume",
        "numberOfVolumes",
        "edition",
        "date",
        "publisher",
        "place",
        "originalDate",
        "originalPublisher",
        "originalPlace",
        "format",
        "pages",
        "ISBN",
        "DOI",
        "citationKey",
        "url",
        "accessDate",
        "ISSN",
        "archive",
        "archiveLocation",
        "shortTitle",
        "language",
        "libraryCatalog",
        "callNumber",
        "rights",
        "extra",
    ],
    "book": [
        "title",
        "abstractNote",
        "series",
        "seriesNumber",
        "volume",
        "numberOfVolumes",
        "edition",
        "date",
        "publisher",
        "place",
        "originalDate",
        "originalPublisher",
        "originalPlace",
        "format",
        "numPages",
        "ISBN",
        "DOI",
        "citationKey",
        "url",
        "accessDate",
        "ISSN",
        "archive",
        "archiveLocation",
        "shortTitle",
        "language",
        "libraryCatalog",
        "callNumber",
        "rights",
        "extra",
    ],
    "preprint": [
        "title",
        "abstractNote",
        "genre",
        "repository",
        "archiveID",
        "place",
        "date",
        "series",
        "seriesNumber",
        "DOI",
        "citationKey",
        "url",
        "accessDate",
        "archive",
        "archiveLocation",
        "shortTitle",
        "language",
        "libraryCatalog",
        "callNumber",
        "rights",
        "extra",
    ],
}
#: Better BibTeX's entry types (translators/bibtex/bibtex.ts) for these item types.
ENTRY_TYPES = {
    "journalArticle": "article",
    "conferencePaper": "inproceedings",
    "bookSection": "incollection",
    "book": "book",
    "preprint": "misc",
}
#: Words Better BibTeX's title casing leaves in lower case (content/csl-titlecase.ts, abridged).
STOP_WORDS = frozenset(
    "a an and as at but by down for from in into nor of on onto or over so the till "
    "to up via with yet".split()
)
_ACCENTS = {
    "ä": '{\\"a}',
    "ö": '{\\"o}',
    "ü": '{\\"u}',
    "Ä": '{\\"A}',
    "Ö": '{\\"O}',
    "Ü": '{\\"U}',
    "é": "{\\'e}",
    "è": "{\\`e}",
    "á": "{\\'a}",
    "à": "{\\`a}",
    "í": "{\\'i}",
    "ó": "{\\'o}",
    "ú": "{\\'u}",
    "ç": "{\\c c}",
    "ñ": "{\\~n}",
    "ø": "{\\o}",
    "å": "{\\aa}",
    "ß": "{\\ss}",
    "ë": '{\\"e}',
    "ï": '{\\"i}',
    "—": "---",
    "–": "--",
}
AUTO_EXPORT_PREF = "extensions.zotero.translators.better-bibtex.autoExport."


def bbt_pref_name(path: str) -> str:
    """Better BibTeX's preference name of an auto-export (content/auto-export.ts ``#key``):
    ``encodeURIComponent(path)`` (urllib's ``quote`` with the same unreserved set), then
    ``.!'()*`` as ``%`` and their code in lower-case hexadecimal."""
    encoded = quote(path, safe="-_.!~*'()")
    return AUTO_EXPORT_PREF + re.sub(r"[.!'()*]", lambda m: "%" + format(ord(m.group(0)), "x"), encoded)


_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


# ====================================================================== Better BibTeX's rendering


def _escape(text: str) -> str:
    """Unicode as LaTeX commands and the specials escaped (Better BibTeX's BibTeX default)."""
    out = []
    for c in text:
        if c in "&%$#_":
            out.append("\\" + c)
        elif c in "{}":
            out.append("\\" + c)
        else:
            out.append(_ACCENTS.get(c, c))
    return "".join(out)


def title_case(title: str) -> str:
    """Better BibTeX's title of an English item: each word capitalised except the small
    words (the first word and a word after a colon are capitalised too), and the words
    Zotero has with capitals (an acronym, a name, a title already in title case) protected
    in ``{{...}}`` (runs of them in one pair)."""
    tokens = re.findall(r"\S+|\s+", title)
    out: list[str] = []
    run: list[str] = []
    first = True

    def flush() -> None:
        if run:
            out.append("{{" + "".join(run).rstrip() + "}}" + ("".join(run)[len("".join(run).rstrip()) :]))
            run.clear()

    for tok in tokens:
        if tok.isspace():
            (run if run else out).append(tok)
            continue
        word = re.sub(r"^\W+|\W+$", "", tok)
        protect = not first and any(c.isupper() for c in word)
        if protect:
            run.append(_escape(tok))
        else:
            flush()
            if first or word.lower() not in STOP_WORDS:
                tok = re.sub(r"[A-Za-z]", lambda m: m.group(0).upper(), tok, count=1)
            out.append(_escape(tok))
        first = tok.endswith(":")
    flush()
    return "".join(out).strip()


def _names(creators: list[dict[str, Any]], kind: str) -> str:
    out = []
    for c in creators:
        if c.get("creatorType") != kind:
            continue
        if c.get("name"):
            out.append("{" + _escape(c["name"]) + "}")
        else:
            out.append(f"{_escape(c.get('lastName', ''))}, {_escape(c.get('firstName', ''))}".rstrip(", "))
    return " and ".join(out)


def _tex_lines(extra: str, translator: str) -> list[tuple[str, str, bool]]:
    """Extra's ``tex.FIELD: value`` lines (``bibtex.``/``biblatex.`` for one translator,
    ``=`` for raw LaTeX): (field, value, raw)."""
    out = []
    for line in extra.split("\n"):
        m = re.match(r"(?i)^(tex|bibtex|biblatex)\.([-_a-z0-9]+)\s*([:=])\s*(.*)$", line.strip())
        if m is None:
            continue
        prefix = m.group(1).lower()
        if prefix == "tex" or (prefix == "bibtex") == (translator == BETTER_BIBTEX):
            out.append((m.group(2).lower(), m.group(4), m.group(3) == "="))
    return out


def render_entry(item: dict[str, Any], job: Mapping[str, Any]) -> str:
    d = item["data"]
    translator = job.get("translatorID", BETTER_BIBTEX)
    latex = translator == BETTER_BIBLATEX
    fields: list[tuple[str, str]] = []

    def put(name: str, value: str, brace: bool = True) -> None:
        if value:
            fields.append((name, "{" + value + "}" if brace else value))

    put("title", _escape(d["title"]) if latex else title_case(d.get("title", "")))
    venue = d.get("proceedingsTitle") or d.get("bookTitle")
    if venue:
        put("booktitle", title_case(venue))
    put("author", _names(d.get("creators", []), "author"))
    put("editor", _names(d.get("creators", []), "editor"))
    date = d.get("date", "")
    iso = re.match(r"(\d{4})(?:-(\d{1,2}))?", date)
    year = iso.group(1) if iso else (re.search(r"\d{4}", date) or [""])[0]
    if latex:
        put("date", date)
    elif year:
        fields.append(("year", year))
        if iso and iso.group(2) and 1 <= int(iso.group(2)) <= 12:
            fields.append(("month", _MONTHS[int(iso.group(2)) - 1]))
    journal = d.get("publicationTitle", "")
    if job.get("useJournalAbbreviation") and d.get("journalAbbreviation"):
        journal = d["journalAbbreviation"]
    put("journaltitle" if latex else "journal", _escape(journal))
    put("volume", _escape(d.get("volume", "")))
    put("number", _escape(d.get("issue", "")))
    put("pages", re.sub(r"\s*-+\s*", "--", d.get("pages", "")))
    put("publisher", _escape(d.get("publisher", "")))
    doi = d.get("DOI", "")
    extra = d.get("extra", "")
    doi_line = re.search(r"(?im)^DOI:\s*(\S+)\s*$", extra)
    if not doi and doi_line:
        doi = doi_line.group(1)
    url = d.get("url", "")
    both = job.get("DOIandURL", "both")  # "doi"/"url": that one when the item has both
    if doi and (both != "url" or not url):
        put("doi", doi)
    if url and (both != "doi" or not doi):
        put("url", url)
    for name, value, raw in _tex_lines(extra, translator):
        rendered = "{" + (value if raw else _escape(value)) + "}"
        at = next((i for i, (n, _v) in enumerate(fields) if n == name), None)
        if at is None:
            fields.append((name, rendered))
        else:
            fields[at] = (name, rendered)
    kind = ENTRY_TYPES.get(d["itemType"], "misc")
    body = ",\n".join(f"  {n} = {v}" for n, v in fields)
    return f"@{kind}{{{d['citationKey']},\n{body}\n}}\n"


def render_bib(items: list[dict[str, Any]], job: Mapping[str, Any]) -> str:
    """An auto-export's file: every item of its library, by citation key."""
    entries = sorted(
        (i for i in items if i["data"].get("citationKey")), key=lambda i: i["data"]["citationKey"]
    )
    return "\n".join(render_entry(i, job) for i in entries)


# ====================================================================== the library


@dataclass
class Library:
    kind: str  # "users" or "groups"
    id: int
    name: str
    editable: bool = True
    version: int = 1
    synced: bool = True  # a user library never synced has a local URI


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int = 0


@dataclass
class ZoteroFake:
    profile_dir: Path
    host: str = "127.0.0.1"
    local_mode: str = "zotero10"  # "zotero10", "zotero9", "off"
    authorize: str = "always"  # "always" (Always Allow), "once" (Allow), "deny"
    export_delay_s: float = 0.1
    sync_delay_s: float = 0.3
    export_enabled: bool = True
    regenerate_keys: bool = False  # an older Better BibTeX: an unpinned key follows the metadata
    web_keys: dict[str, dict[str, str]] = field(default_factory=dict)  # key -> {"users/4711": "write"}
    web_backoff_s: int = 0  # a Backoff header on the next answers
    web_backoff_count: int = 0
    web_retry_after: list[tuple[str, int]] = field(default_factory=list)  # (method, s): a 429 for it
    conflict_once: bool = False  # the next PATCH meets a change made meanwhile (412)
    libraries: dict[str, Library] = field(default_factory=dict)
    items: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (library, key) -> item
    exports: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    local_keys: dict[str, bool] = field(default_factory=dict)  # key -> remembered
    exported: int = 0
    _lock: threading.RLock = field(default_factory=threading.RLock)
    _server: ThreadingHTTPServer | None = None
    _timers: list[threading.Timer] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.libraries.setdefault(f"users/{USER_ID}", Library("users", USER_ID, "My Library"))

    # ------------------------------------------------------------------ setup
    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def web_url(self) -> str:
        return self.url + "/web"

    def add_group(self, gid: int, name: str, editable: bool = True) -> None:
        self.libraries[f"groups/{gid}"] = Library("groups", gid, name, editable)

    def add_item(
        self,
        item_type: str,
        citekey: str,
        *,
        library: str = f"users/{USER_ID}",
        key: str | None = None,
        pinned: bool = True,
        **values: Any,
    ) -> dict[str, Any]:
        """An item of ``library`` with the given fields (``creators`` a list of dicts)."""
        with self._lock:
            lib = self.libraries[library]
            key = key or self._new_key(citekey)
            data: dict[str, Any] = {"key": key, "version": 0, "itemType": item_type}
            for f in ITEM_FIELDS[item_type]:
                data[f] = ""
            data["creators"] = []
            data["tags"], data["collections"], data["relations"] = [], [], {}
            data.update(values)
            data["citationKey"] = citekey
            lib.version += 1
            data["version"] = lib.version
            item = {"key": key, "version": lib.version, "pinned": pinned, "data": data}
            self.items[(library, key)] = item
            return item

    def _new_key(self, seed: str) -> str:
        n = abs(hash((seed, len(self.items))))
        out = ""
        for _ in range(8):
            n, r = divmod(n, len(KEY_ALPHABET))
            out += KEY_ALPHABET[r]
        return out

    def item(self, citekey: str) -> dict[str, Any]:
        return next(i for i in self.items.values() if i["data"]["citationKey"] == citekey)

    def add_export(
        self,
        path: str | Path,
        *,
        library: str = f"users/{USER_ID}",
        translator: str = BETTER_BIBTEX,
        **options: Any,
    ) -> dict[str, Any]:
        """An auto-export job writing ``path`` (written now), as Better BibTeX stores it."""
        lib = self.libraries[library]
        job = {
            "enabled": True,
            "type": "library",
            "id": 1 if lib.kind == "users" else lib.id + 1,
            "translatorID": translator,
            "path": str(path),
            "recursive": False,
            "status": "done",
            "error": "",
            "exportNotes": False,
            "useJournalAbbreviation": False,
            "DOIandURL": "both",
            "created": 1767225600000,
            "updated": 1767225600000,
            "_library": library,
        }
        job.update(options)
        self.exports.append(job)
        self._export(job)
        self.write_profile()
        return job

    def write_profile(self, port: int | None = None, local_api: bool = True) -> Path:
        """``profiles.ini`` in ``profile_dir`` naming ``Profiles/abcd1234.default`` (Default=1),
        whose ``prefs.js`` has the auto-exports, the server port and the local API flag."""
        base = self.profile_dir
        prof = base / "Profiles" / "abcd1234.default"
        prof.mkdir(parents=True, exist_ok=True)
        (base / "profiles.ini").write_text(
            "[General]\nStartWithLastProfile=1\n\n[Profile1]\nName=old\nIsRelative=1\n"
            "Path=Profiles/zzzz9999.old\n\n[Profile0]\nName=default\nIsRelative=1\n"
            "Path=Profiles/abcd1234.default\nDefault=1\n",
            encoding="utf-8",
        )
        lines = [
            "// Mozilla User Preferences",
            "",
            "// DO NOT EDIT THIS FILE.",
            "",
            'user_pref("extensions.zotero.export.lastTranslator", "' + BETTER_BIBTEX + '");',
            f'user_pref("extensions.zotero.httpServer.localAPI.enabled", {str(local_api).lower()});',
            f'user_pref("extensions.zotero.httpServer.port", {port or self.port});',
        ]
        for job in self.exports:
            stored = {k: v for k, v in job.items() if not k.startswith("_")}
            value = json.dumps(stored, separators=(",", ":"))
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            name = bbt_pref_name(job["path"])
            lines.append(f'user_pref("{name}", "{escaped}");')
        (prof / "prefs.js").write_text("\n".join(lines[:4] + sorted(lines[4:])) + "\n", encoding="utf-8")
        return prof

    def settings(self, **overrides: Any) -> Settings:
        return dataclasses.replace(from_sources(env=self.env(), editor={}), **overrides)

    def env(self) -> dict[str, str]:
        return {
            "CITELENS_ZOTERO_PROFILE": str(self.profile_dir),
            "CITELENS_ZOTERO_URL": self.url,
            "CITELENS_ZOTERO_WEB_API_URL": self.web_url,
            "CITELENS_ZOTERO_EXPORT_WAIT": "10",
        }

    # ------------------------------------------------------------------ server
    def start(self, port: int = 0) -> ZoteroFake:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer((self.host, port), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        for t in self._timers:
            t.cancel()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def patches(self) -> list[Request]:
        return [r for r in self.requests if r.method == "PATCH" and r.body]

    # ------------------------------------------------------------------ the export hook
    def _export(self, job: dict[str, Any]) -> None:
        with self._lock:
            items = [i for (lib, _k), i in self.items.items() if lib == job["_library"]]
            text = render_bib(copy.deepcopy(items), job)
            path = Path(job["path"])
            tmp = path.with_name(f".{path.name}.bbt-tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
            self.exported += 1

    def _changed(self, library: str, web: bool) -> None:
        if not self.export_enabled:
            return
        delay = self.export_delay_s + (self.sync_delay_s if web else 0.0)
        for job in self.exports:
            if job["_library"] == library:
                t = threading.Timer(delay, self._export, (job,))
                t.daemon = True
                self._timers.append(t)
                t.start()

    # ------------------------------------------------------------------ answers
    def _hit(self, library: str, item: dict[str, Any]) -> dict[str, Any]:
        lib = self.libraries[library]
        d = item["data"]
        lib_uri = "users/local/Xy7Qp2Lm" if lib.kind == "users" and not lib.synced else f"{lib.kind}/{lib.id}"
        csl: dict[str, Any] = {
            "id": f"http://zotero.org/{lib_uri}/items/{item['key']}",
            "type": {
                "journalArticle": "article-journal",
                "conferencePaper": "paper-conference",
                "bookSection": "chapter",
                "book": "book",
            }.get(d["itemType"], "article"),
            "title": d.get("title", ""),
        }
        if d.get("DOI"):
            csl["DOI"] = d["DOI"]
        authors = [
            {"family": c.get("lastName", ""), "given": c.get("firstName", "")}
            for c in d.get("creators", [])
            if c.get("creatorType") == "author"
        ]
        if authors:
            csl["author"] = authors
        year = re.search(r"\d{4}", d.get("date", ""))
        if year:
            csl["issued"] = {"date-parts": [[int(year.group(0))]]}
        return {**csl, "library": lib.name, "citekey": d["citationKey"]}

    def json_rpc(self, request: Any) -> dict[str, Any]:
        if (
            not isinstance(request, dict)
            or request.get("jsonrpc") != "2.0"
            or not isinstance(request.get("method"), str)
        ):
            return {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": None}
        if request["method"] != "item.search":
            return {
                "jsonrpc": "2.0",
                "error": {"code": -32601, "message": f"Method not found: {request['method']}"},
                "id": None,
            }
        params = request.get("params") or []
        terms = params[0] if params else []
        hits = []
        with self._lock:
            for (lib, _key), item in self.items.items():
                ok = True
                for term in terms:
                    name, op, value = term[0], term[1], term[2]
                    have = item["key"] if name == "key" else item["data"].get(name, "")
                    ok = ok and op == "is" and have == value
                if ok:
                    hits.append(self._hit(lib, item))
        return {"jsonrpc": "2.0", "result": hits, "id": request.get("id")}

    def _library_of(self, parts: list[str]) -> str | None:
        """``users/0`` and ``users/<id>`` (local API), ``groups/<id>``: the library's name."""
        if parts[0] == "users":
            return f"users/{USER_ID}" if parts[1] in ("0", str(USER_ID)) else None
        name = f"groups/{parts[1]}"
        return name if name in self.libraries else None

    def local(
        self, method: str, path: str, headers: Mapping[str, str], body: Any
    ) -> tuple[int, dict[str, str], Any]:
        sid = {"Zotero-Server-ID": SERVER_ID} if self.local_mode == "zotero10" else {}
        if self.local_mode == "off":
            return 403, {}, "Local API is not enabled"
        if path == "/api/local/authorize":
            if self.local_mode != "zotero10":
                return 404, {}, "No endpoint found\n"
            if headers.get("zotero-server-id") not in (None, SERVER_ID):
                return 412, sid, "Zotero-Server-ID does not match this server"
            if self.authorize == "deny":
                return 403, sid, {"denied": True}
            key = "".join(KEY_ALPHABET[(i * 7 + len(self.local_keys)) % len(KEY_ALPHABET)] for i in range(32))
            self.local_keys[key] = self.authorize == "always"
            return 200, sid, {"key": key, "remember": self.authorize == "always"}
        if path in ("/api", "/api/"):
            return 200, sid, "Nothing to see here."
        m = re.fullmatch(r"/api/(users|groups)/([0-9]+)/items/([A-Z0-9]{8})", path)
        if m is None:
            return 404, sid, "No endpoint found\n"
        if method not in ("GET", "PATCH"):
            return 400, sid, "Endpoint does not support method\n"
        library = self._library_of([m.group(1), m.group(2)])
        if library is None:
            return (400 if m.group(1) == "users" else 404), sid, "Not found"
        if method == "PATCH":
            if self.local_mode == "zotero9":
                return 501, {}, "Method not implemented\n"
            if not headers.get("zotero-server-id"):
                return 428, sid, "Zotero-Server-ID not provided"
            if headers["zotero-server-id"] != SERVER_ID:
                return 412, sid, "Zotero-Server-ID does not match this server"
            key = headers.get("zotero-api-key")
            if not key:
                return (
                    401,
                    {**sid, "WWW-Authenticate": 'Zotero-API-Key realm="Zotero Local API"'},
                    "API key required -- POST /api/local/authorize to obtain one",
                )
            if key not in self.local_keys:
                return 401, sid, "Invalid or expired API key"
            if not self.local_keys[key]:
                del self.local_keys[key]  # "Allow": one use
            if not self.libraries[library].editable:
                return 403, sid, "Write access denied"
            return self._patch(library, m.group(3), headers, body, sid, "item", web=False)
        item = self.items.get((library, m.group(3)))
        if item is None:
            return 404, sid, "Not found"
        return (
            200,
            {**sid, "Last-Modified-Version": str(item["version"])},
            self._item_json(library, item, local=True),
        )

    def _item_json(self, library: str, item: dict[str, Any], local: bool) -> dict[str, Any]:
        lib = self.libraries[library]
        data = copy.deepcopy(item["data"])
        return {
            "key": item["key"],
            "version": item["version"],
            "library": {"type": "user" if lib.kind == "users" else "group", "id": lib.id, "name": lib.name},
            "links": {
                "self": {
                    "href": f"{'http://localhost/api' if local else 'https://api.zotero.org'}"
                    f"/{library}/items/{item['key']}",
                    "type": "application/json",
                }
            },
            "meta": {"numChildren": 0},
            "data": data,
        }

    def _patch(
        self,
        library: str,
        key: str,
        headers: Mapping[str, str],
        body: Any,
        extra: dict[str, str],
        kind: str,
        web: bool,
    ) -> tuple[int, dict[str, str], Any]:
        item = self.items.get((library, key))
        if item is None:
            return 404, extra, "Item not found"
        if not isinstance(body, dict):
            return 400, extra, "Uploaded data must be a JSON object"
        if self.conflict_once:  # someone else changed the item meanwhile
            self.conflict_once = False
            lib = self.libraries[library]
            lib.version += 1
            item["version"] = item["data"]["version"] = lib.version
            item["data"]["extra"] = (item["data"].get("extra", "") + "\nedited elsewhere").strip()
        header = headers.get("if-unmodified-since-version")
        if header is None and "version" not in body:
            return 428, extra, "If-Unmodified-Since-Version not provided"
        expected = int(header if header is not None else body["version"])
        if item["version"] > expected:
            return (
                412,
                {**extra, "Last-Modified-Version": str(item["version"])},
                f"{kind.capitalize()} has been modified since specified version "
                f"(expected {expected}, found {item['version']})",
            )
        data = item["data"]
        before = (data.get("title"), json.dumps(data.get("creators")), data.get("date"))
        for k, v in body.items():
            if k in ("key", "version"):
                continue
            if k not in data:
                return 400, extra, f"'{k}' is not a valid field for type '{data['itemType']}'"
            data[k] = v
        lib = self.libraries[library]
        lib.version += 1
        item["version"] = data["version"] = lib.version
        if (
            self.regenerate_keys
            and not item["pinned"]
            and before != (data.get("title"), json.dumps(data.get("creators")), data.get("date"))
        ):
            first = next(
                (c.get("lastName", "") for c in data["creators"] if c.get("creatorType") == "author"), ""
            )
            year = re.search(r"\d{4}", data.get("date", ""))
            data["citationKey"] = re.sub(r"\W", "", first.lower()) + (year.group(0) if year else "")
        self._changed(library, web)
        return 204, {**extra, "Last-Modified-Version": str(lib.version)}, ""

    def web(
        self, method: str, path: str, headers: Mapping[str, str], body: Any
    ) -> tuple[int, dict[str, str], Any]:
        extra: dict[str, str] = {}
        if self.web_backoff_count > 0:
            self.web_backoff_count -= 1
            extra["Backoff"] = str(self.web_backoff_s)
        if self.web_retry_after and self.web_retry_after[0][0] == method:
            return 429, {**extra, "Retry-After": str(self.web_retry_after.pop(0)[1])}, "Too many requests"
        m = re.fullmatch(r"/(users|groups)/([0-9]+)/items/([A-Z0-9]{8})", path)
        if m is None:
            return 404, extra, "Not found"
        library = f"{m.group(1)}/{m.group(2)}"
        if library not in self.libraries:
            return 404, extra, "Not found"
        key = headers.get("zotero-api-key")
        if key is not None and key not in self.web_keys:
            return 403, extra, "Invalid key"
        access = self.web_keys.get(key or "", {}).get(library)
        if access is None:
            return 403, extra, "Forbidden"
        if method == "PATCH":
            if access != "write" or not self.libraries[library].editable:
                return 403, extra, "Write access denied"
            return self._patch(library, m.group(3), headers, body, extra, "item", web=True)
        item = self.items.get((library, m.group(3)))
        if item is None:
            return 404, extra, "Item does not exist"
        return (
            200,
            {**extra, "Last-Modified-Version": str(item["version"])},
            self._item_json(library, item, local=False),
        )


class _Handler(BaseHTTPRequestHandler):
    fake: ZoteroFake
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    wbufsize = 1 << 16  # one write per answer (flushed by handle_one_request)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def _handle(self, method: str) -> None:
        fake = self.fake
        path = urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        req = Request(method, path, headers, body)
        with fake._lock:
            fake.requests.append(req)
            if path == "/better-bibtex/json-rpc" and method == "POST":
                status, hdrs, out = 200, {}, fake.json_rpc(body)
            elif path.startswith("/api"):
                status, hdrs, out = fake.local(method, path, headers, body)
                hdrs = (
                    {**hdrs, "Zotero-API-Version": "3", "Zotero-Schema-Version": "41"}
                    if fake.local_mode != "off"
                    else hdrs
                )
            elif path.startswith("/web/"):
                status, hdrs, out = fake.web(method, path[len("/web") :], headers, body)
                hdrs = {**hdrs, "Zotero-API-Version": "3"}
            else:
                status, hdrs, out = 404, {}, "No endpoint found\n"
            req.status = status
        data = json.dumps(out).encode() if not isinstance(out, str) else out.encode()
        self.send_response(status)
        if status != 204:
            self.send_header("Content-Type", "application/json" if not isinstance(out, str) else "text/plain")
            self.send_header("Content-Length", str(len(data)))
        for k, v in hdrs.items():
            self.send_header(k, v)
        self.end_headers()
        if status != 204:
            self.wfile.write(data)


@contextlib.contextmanager
def running_zotero(profile_dir: str | Path, **options: Any) -> Iterator[ZoteroFake]:
    fake = ZoteroFake(Path(profile_dir), **options).start()
    try:
        yield fake
    finally:
        fake.stop()


def wait_until(predicate: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# ================================================ a paper whose .bib Better BibTeX writes

WRONG_DOI = "10.1073/pnas.1414271111"  # a PNAS paper on collagen (tests/fakes/papers.json)
RIGHT_DOI = "10.1007/3-540-48071-4_10"
MISMATCH_KEY = "dwork92pricingvia"
#: The real paper behind MISMATCH_KEY, for the fake scholarly server.
DWORK_NAOR_1992: dict[str, Any] = {
    "title": "Pricing via Processing or Combatting Junk Mail",
    "authors": ["Cynthia Dwork", "Moni Naor"],
    "year": 1992,
    "venue": "Advances in Cryptology — CRYPTO' 92",
    "doi": RIGHT_DOI,
    "pages": "139-147",
    "type": "proceedings-article",
    "publication_types": ["Conference"],
}
TEX = r"""\documentclass{article}
\begin{document}
Pricing junk mail by computation~\cite{KEY}; plotting~\cite{hunter2007}.
\bibliographystyle{plain}
\bibliography{refs}
\end{document}
"""


@dataclass(frozen=True)
class BbtPaper:
    dir: Path
    tex: Path
    bib: Path

    def cite_position(self, key: str) -> tuple[int, int]:
        """0-based (line, column) of ``key`` in main.tex."""
        for n, line in enumerate(self.tex.read_text(encoding="utf-8").splitlines()):
            if key in line:
                return n, line.index(key)
        raise LookupError(key)


def seed_paper(
    z: ZoteroFake, folder: Path, library: str = f"users/{USER_ID}", key: str = MISMATCH_KEY
) -> BbtPaper:
    """A LaTeX project whose refs.bib is ``library``'s Better BibTeX auto-export: Dwork &
    Naor 1992 with a PNAS paper's DOI in Zotero, and Hunter's Matplotlib paper as it is."""
    folder.mkdir(parents=True, exist_ok=True)
    z.add_item(
        "conferencePaper",
        key,
        library=library,
        title="Pricing via processing or combatting junk mail",
        creators=[
            {"creatorType": "author", "firstName": "Cynthia", "lastName": "Dwork"},
            {"creatorType": "author", "firstName": "Moni", "lastName": "Naor"},
        ],
        date="1992",
        proceedingsTitle="Advances in Cryptology — CRYPTO' 92",
        pages="139-147",
        DOI=WRONG_DOI,
    )
    z.add_item(
        "journalArticle",
        "hunter2007",
        library=library,
        title="Matplotlib: a 2D graphics environment",
        creators=[{"creatorType": "author", "firstName": "J. D.", "lastName": "Hunter"}],
        date="2007",
        publicationTitle="Computing in Science & Engineering",
        volume="9",
        issue="3",
        pages="90-95",
        DOI="10.1109/MCSE.2007.55",
    )
    bib = folder / "refs.bib"
    z.add_export(bib, library=library)
    tex = folder / "main.tex"
    tex.write_text(TEX.replace("KEY", key), encoding="utf-8")
    (folder / ".latexmkrc").write_text("", encoding="utf-8")
    return BbtPaper(folder, tex, bib)


# ================================================ a library to try it with, from the command line


def item_of(paper: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """A paper of the fake scholarly database as a Zotero item (type, fields)."""
    creators = []
    for name in paper.get("authors") or []:
        first, _, last = str(name).rpartition(" ")
        creators.append({"creatorType": "author", "firstName": first, "lastName": last or first})
    conference = paper.get("type") == "proceedings-article" or "Conference" in (
        paper.get("publication_types") or []
    )
    fields: dict[str, Any] = {
        "title": paper["title"],
        "creators": creators,
        "date": str(paper.get("year") or ""),
        "DOI": paper.get("doi") or "",
        "pages": str(paper.get("pages") or "").replace("–", "-").replace(" ", ""),
        "volume": str(paper.get("volume") or ""),
    }
    if conference:
        fields["proceedingsTitle"] = paper.get("venue") or ""
        return "conferencePaper", fields
    fields["publicationTitle"] = paper.get("venue") or ""
    fields["issue"] = str(paper.get("issue") or "")
    return "journalArticle", fields


_WORDS = (
    "adaptive sparse graph neural inference robust learning protein folding dynamics quantum "
    "error correction bayesian optimisation streaming estimation causal discovery federated "
    "privacy spectral clustering kernel methods molecular simulation climate downscaling"
).split()
_FAMILIES = "Okafor Lindqvist Tanaka Moreau Haddad Novak Osei Petrov Ruiz Chen Kowalski Silva".split()
_GIVEN = "Ada Bruno Chiara Dmitri Esra Farid Greta Hugo Ines Jonas Kemi Lars".split()
_JOURNALS = ("Journal of Synthetic Results", "Annals of Made-Up Science", "Transactions on Examples")


def synthetic_papers(n: int) -> list[dict[str, Any]]:
    """``n`` made-up papers (deterministic) for the scholarly fake and the library."""
    out = []
    for i in range(n):
        words = [_WORDS[(i * 7 + k * 3) % len(_WORDS)] for k in range(4 + i % 4)]
        authors = [
            f"{_GIVEN[(i + k) % len(_GIVEN)]} {_FAMILIES[(i * 5 + k) % len(_FAMILIES)]}"
            for k in range(1 + i % 3)
        ]
        out.append(
            {
                "title": " ".join(words).capitalize() + f" ({i})",
                "authors": authors,
                "year": 1995 + i % 30,
                "venue": _JOURNALS[i % len(_JOURNALS)],
                "doi": f"10.5555/synthetic.{i}",
                "pages": f"{i + 1}-{i + 12}",
                "volume": str(1 + i % 40),
                "type": "journal-article",
                "publication_types": ["JournalArticle"],
            }
        )
    return out


def library(
    z: ZoteroFake,
    folder: Path,
    n: int,
    library: str = f"users/{USER_ID}",
    extra: list[dict[str, Any]] | None = None,
) -> BbtPaper:
    """``seed_paper``'s project with ``n`` items in all: the others from the fake scholarly
    database and ``extra`` papers, each cited once in main.tex."""
    from tests.fakes.scholarly import load_papers

    keys: set[str] = {MISMATCH_KEY, "hunter2007"}
    dois = {RIGHT_DOI.lower(), WRONG_DOI.lower(), "10.1109/mcse.2007.55", ""}
    cited: list[str] = []
    for p in [*load_papers(), *(extra or [])]:
        if len(keys) >= n:
            break
        if not p.get("title") or not p.get("authors") or not p.get("year"):
            continue
        doi = str(p.get("doi") or "").lower()
        if doi in dois or any("et al" in str(a) or "others" in str(a) for a in p["authors"]):
            continue  # the paper's own items, and the fake's made-up placeholders, once
        dois.add(doi)
        last = re.sub(r"[^a-z]", "", str(p["authors"][0]).rpartition(" ")[2].lower()) or "anon"
        word = next((w for w in re.findall(r"[a-z]+", p["title"].lower()) if len(w) > 3), "paper")
        key = f"{last}{p['year']}{word}"
        if key in keys:
            continue
        keys.add(key)
        cited.append(key)
        kind, fields = item_of(p)
        z.add_item(kind, key, library=library, **fields)
    paper = seed_paper(z, folder, library)
    lines = [f"See~\\cite{{{k}}}." for k in cited]
    text = paper.tex.read_text(encoding="utf-8").replace(
        "\\bibliographystyle", "\n".join(lines) + "\n\\bibliographystyle"
    )
    paper.tex.write_text(text, encoding="utf-8")
    return paper


def main(argv: list[str] | None = None) -> None:
    import argparse

    from tests.fakes.scholarly import ScholarlyFake

    ap = argparse.ArgumentParser(description="A fake Zotero with Better BibTeX (and the fake scholarly APIs)")
    ap.add_argument("--folder", required=True, help="where the profile and the paper go")
    ap.add_argument("--items", type=int, default=300, help="items in the library (default 300)")
    ap.add_argument("--port", type=int, default=0, help="Zotero's port (default: any free one)")
    ap.add_argument("--local-mode", choices=("zotero10", "zotero9", "off"), default="zotero10")
    ap.add_argument("--read-only-group", action="store_true", help="the library is a read-only group")
    ap.add_argument("--web-key", help="a zotero.org key the fake web API accepts, with write access")
    ap.add_argument("--export-delay", type=float, default=2.0, help="seconds before the export")
    args = ap.parse_args(argv)
    folder = Path(args.folder).resolve()
    scholarly = ScholarlyFake()
    scholarly.add_paper(DWORK_NAOR_1992)
    scholarly.start()
    z = ZoteroFake(folder / "zotero", local_mode=args.local_mode, export_delay_s=args.export_delay)
    z.start(args.port)
    lib = f"users/{USER_ID}"
    if args.read_only_group:
        z.add_group(7, "Reading group", editable=False)
        lib = "groups/7"
    if args.web_key:
        z.web_keys[args.web_key] = {lib: "write"}
    made_up = synthetic_papers(max(0, args.items))
    for p in made_up:
        scholarly.add_paper(p)
    paper = library(z, folder / "paper", args.items, lib, made_up)
    env = {**scholarly.env(), **z.env(), "CITELENS_ZOTERO_EXPORT_WAIT": "60"}
    print(f"fake Zotero on {z.url} ({len(z.items)} items, local API: {args.local_mode}); paper: {paper.dir}")
    for k, v in env.items():
        print(f"export {k}={v}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        z.stop()
        scholarly.stop()


if __name__ == "__main__":
    main()
