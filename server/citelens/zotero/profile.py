"""Which .bib files a Better BibTeX auto-export writes, read from the Zotero profile.

Since Better BibTeX 6.7.228 each auto-export is a preference of the Zotero profile, in its
``prefs.js``: ``extensions.zotero.translators.better-bibtex.autoExport.<key>`` whose value is
the job as JSON (``path``, ``translatorID``, ``useJournalAbbreviation``, ``DOIandURL``,
``status``, ...); ``<key>`` is ``encodeURIComponent(path)`` with ``.!'()*`` escaped too
(retorquere/zotero-better-bibtex, content/auto-export.ts). The profile is the ``Default=1``
section of ``profiles.ini`` in Zotero's folder (zotero/zotero, chrome/content/zotero/xpcom/
profile.js); the same ``prefs.js`` gives the port of Zotero's local server
(``extensions.zotero.httpServer.port``) and whether its local API is on
(``extensions.zotero.httpServer.localAPI.enabled``).

Files are read with bounds (regular files only, at most 16 MB) and parsed once per change
(by size and modification time). Nothing read is executed: ``prefs.js`` is JavaScript, and
only its ``user_pref("name", value);`` statements with literal values are read.
"""

from __future__ import annotations

import json
import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from urllib.parse import urlsplit, urlunsplit

from citelens.core.settings import Settings
from citelens.documents.read import read_file

AUTO_EXPORT_PREF = "extensions.zotero.translators.better-bibtex.autoExport."
PORT_PREF = "extensions.zotero.httpServer.port"
LOCAL_API_PREF = "extensions.zotero.httpServer.localAPI.enabled"
DEFAULT_PORT = 23119
DEFAULT_URL = f"http://127.0.0.1:{DEFAULT_PORT}"
#: Better BibTeX's two BibTeX translators (translators/Better BibTeX.json, Better BibLaTeX.json).
TRANSLATORS: Mapping[str, str] = MappingProxyType(
    {
        "ca65189f-8815-4afe-8c8b-8c7c15f0edca": "Better BibTeX",
        "f895aa0d-f28e-47fe-b247-2ea77c6ed583": "Better BibLaTeX",
    }
)
MAX_PROFILE_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class AutoExport:
    """One auto-export job: the file it writes and how it renders fields."""

    path: str
    translator: str = ""  # "Better BibTeX", "Better BibLaTeX"; "" when a setting names it
    use_journal_abbreviation: bool = False
    doi_and_url: str = "both"  # "both", "doi", "url"
    status: str = ""
    from_setting: bool = False  # named by zoteroAutoExports, not read from the profile

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


@dataclass(frozen=True, slots=True)
class Profile:
    """What CiteLens reads of the Zotero profile."""

    folder: str | None = None
    port: int | None = None
    local_api: bool | None = None  # None: the preference is not in prefs.js
    exports: Mapping[str, AutoExport] = field(default_factory=dict)  # by the file's real path
    problem: str | None = None  # why the profile could not be read


def default_folders(system: str | None = None, env: Mapping[str, str] | None = None) -> list[str]:
    """Where Zotero keeps ``profiles.ini`` on this platform (the Flatpak's folder too)."""
    system = system or platform.system()
    env = os.environ if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    if system == "Darwin":
        return [os.path.join(home, "Library", "Application Support", "Zotero")]
    if system == "Windows":
        appdata = env.get("APPDATA") or os.path.join(home, "AppData", "Roaming")
        return [os.path.join(appdata, "Zotero", "Zotero")]
    return [
        os.path.join(home, ".zotero", "zotero"),
        os.path.join(home, ".var", "app", "org.zotero.Zotero", ".zotero", "zotero"),
    ]


def find_profile(settings: Settings) -> tuple[str | None, str | None]:
    """The profile folder (the setting, else ``Default=1`` of ``profiles.ini``) and why none
    was found."""
    if settings.zotero_profile:
        folder = os.path.expanduser(settings.zotero_profile)
        if os.path.isfile(os.path.join(folder, "prefs.js")):
            return folder, None
        if os.path.isfile(os.path.join(folder, "profiles.ini")):
            return _default_profile(folder)
        return None, f"zoteroProfile {folder} has neither prefs.js nor profiles.ini"
    for base in default_folders():
        if os.path.isfile(os.path.join(base, "profiles.ini")):
            return _default_profile(base)
    return None, "no Zotero profile found (set zoteroProfile, or zoteroAutoExports)"


def _default_profile(base: str) -> tuple[str | None, str | None]:
    ini = os.path.join(base, "profiles.ini")
    text, why = read_file(ini)
    if text is None or why is not None:
        return None, f"{ini}: {why or 'not read'}"
    path = default_profile_path(text)
    if path is None:
        return None, f"{ini} names no profile"
    relative, where = path
    folder = os.path.join(base, *where.split("/")) if relative else where
    if not os.path.isdir(folder):
        return None, f"{ini} names {folder}, which does not exist"
    return folder, None


def default_profile_path(ini: str) -> tuple[bool, str] | None:
    """``(is relative, Path)`` of the ``Default=1`` profile of ``profiles.ini``, else of the
    last profile section (Zotero's own rule, xpcom/profile.js)."""
    current: dict[str, str] | None = None
    chosen: dict[str, str] | None = None
    for line in ini.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            current = {}
            continue
        if current is None or "=" not in line:
            continue
        key, _, value = line.partition("=")
        current[key] = value
        if key == "Default" and value == "1":
            chosen = current
    chosen = chosen or current
    if not chosen or not chosen.get("Path"):
        return None
    return chosen.get("IsRelative") == "1", chosen["Path"]


# --------------------------------------------------------------------------- prefs.js

_STATEMENT = re.compile(r"(?:user_pref|pref|sticky_pref)\s*\(\s*")
_COMMA = re.compile(r"\s*,\s*")
_LITERAL = re.compile(r"(true|false|-?\d+)")
_CLOSE = re.compile(r"\s*\)\s*;")
_DOUBLE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_SINGLE = re.compile(r"'((?:[^'\\\n]|\\.)*)'")
_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|.)")
_UNRESERVED = re.compile(r"[A-Za-z0-9\-_.!~*'()]")
_ESCAPES: Mapping[str, str] = MappingProxyType(
    {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0"}
)


def parse_prefs(text: str) -> dict[str, object]:
    """The literal preferences of a ``prefs.js``: ``user_pref("name", value);`` with a
    string, number or boolean value (the last one wins). Anything else is skipped."""
    out: dict[str, object] = {}
    pos = 0
    while True:
        m = _STATEMENT.search(text, pos)
        if m is None:
            return out
        pos = m.end()
        name = _string(text, pos)
        if name is None:
            continue
        key, pos = name
        m2 = _COMMA.match(text, pos)
        if m2 is None:
            continue
        pos = m2.end()
        value: object
        literal = _string(text, pos)
        if literal is not None:
            value, pos = literal
        else:
            m3 = _LITERAL.match(text, pos)
            if m3 is None:
                continue
            word = m3.group(1)
            value = word == "true" if word in ("true", "false") else int(word)
            pos = m3.end()
        m4 = _CLOSE.match(text, pos)
        if m4 is None:
            continue
        pos = m4.end()
        out[key] = value


def _string(text: str, pos: int) -> tuple[str, int] | None:
    """A JavaScript string literal at ``pos`` (``"..."`` or ``'...'``, on one line) and the
    position after it, escapes decoded (``\\n``, ``\\"``, ``\\xNN``, ``\\uNNNN``)."""
    if pos >= len(text) or text[pos] not in "\"'":
        return None
    m = (_DOUBLE if text[pos] == '"' else _SINGLE).match(text, pos)
    if m is None:
        return None
    body = m.group(1)
    return (_ESCAPE.sub(_unescape, body) if "\\" in body else body), m.end()


def _unescape(m: re.Match[str]) -> str:
    e = m.group(1)
    if len(e) > 1:  # xNN, uNNNN
        return chr(int(e[1:], 16))
    return _ESCAPES.get(e, e)


def pref_key(path: str) -> str:
    """The preference name of the auto-export of ``path`` (Better BibTeX's ``#key``:
    ``encodeURIComponent`` with ``.!'()*`` escaped in lower-case hexadecimal)."""
    encoded = "".join(
        c if _UNRESERVED.fullmatch(c) else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in path
    )
    return AUTO_EXPORT_PREF + re.sub(r"[.!'()*]", lambda m: f"%{ord(m.group(0)):x}", encoded)


def auto_exports(prefs: Mapping[str, object]) -> dict[str, AutoExport]:
    """The auto-export jobs of a profile's preferences, by the real path of their file: a
    job with a Better BibTeX or Better BibLaTeX translator (a CSL JSON export is no .bib)."""
    out: dict[str, AutoExport] = {}
    for name, value in prefs.items():
        if not name.startswith(AUTO_EXPORT_PREF) or not isinstance(value, str):
            continue
        try:
            job = json.loads(value)
        except ValueError:
            continue
        if not isinstance(job, dict) or not isinstance(job.get("path"), str) or not job["path"]:
            continue
        translator = TRANSLATORS.get(str(job.get("translatorID", "")))
        if translator is None or job.get("enabled") is False:
            continue
        doi_and_url = job.get("DOIandURL")
        ae = AutoExport(
            path=job["path"],
            translator=translator,
            use_journal_abbreviation=job.get("useJournalAbbreviation") is True,
            doi_and_url=doi_and_url if doi_and_url in ("both", "doi", "url") else "both",
            status=str(job.get("status", "")),
        )
        out[same_file(ae.path)] = ae
    return out


def same_file(path: str) -> str:
    """``path`` as a key that two spellings of one file share."""
    return os.path.normcase(os.path.realpath(os.path.expanduser(path)))


@lru_cache(maxsize=8)
def _read_prefs(path: str, mtime_ns: int, size: int) -> tuple[Profile, ...]:
    """The parsed ``prefs.js`` (one per change of the file: size and modification time)."""
    del mtime_ns, size  # the cache key
    text, why = read_file(path)
    if text is None or why is not None:
        return (Profile(folder=os.path.dirname(path), problem=f"{path}: {why or 'not read'}"),)
    # one statement a line (Zotero writes prefs.js so): only the lines that matter are parsed
    wanted = (AUTO_EXPORT_PREF, PORT_PREF, LOCAL_API_PREF)
    prefs = parse_prefs("\n".join(line for line in text.splitlines() if any(w in line for w in wanted)))
    port = prefs.get(PORT_PREF)
    local = prefs.get(LOCAL_API_PREF)
    return (
        Profile(
            folder=os.path.dirname(path),
            port=port if isinstance(port, int) and 0 < port < 65536 else None,
            local_api=local if isinstance(local, bool) else None,
            exports=MappingProxyType(auto_exports(prefs)),
        ),
    )


def read_profile(settings: Settings) -> Profile:
    """The profile's port, local API flag and auto-exports (none and the reason when it
    cannot be read)."""
    folder, why = find_profile(settings)
    if folder is None:
        return Profile(problem=why)
    path = os.path.join(folder, "prefs.js")
    try:
        st = os.stat(path)
    except OSError as exc:
        return Profile(folder=folder, problem=f"{path}: {exc.strerror or exc}")
    if st.st_size > MAX_PROFILE_BYTES:
        return Profile(folder=folder, problem=f"{path} is larger than {MAX_PROFILE_BYTES >> 20} MB")
    return _read_prefs(path, st.st_mtime_ns, st.st_size)[0]


def auto_export(settings: Settings, bib_path: str, profile: Profile | None = None) -> AutoExport | None:
    """The auto-export that writes ``bib_path`` (from the profile, else the setting
    ``zoteroAutoExports``), or None: a file CiteLens may edit as any other."""
    key = same_file(bib_path)
    for named in settings.zotero_auto_exports:
        if same_file(named) == key:
            found = (profile or read_profile(settings)).exports.get(key)
            return found or AutoExport(path=bib_path, from_setting=True)
    if not bib_path.lower().endswith(".bib"):
        return None
    return (profile or read_profile(settings)).exports.get(key)


def local_server(settings: Settings, profile: Profile | None = None) -> str:
    """Zotero's local server: the setting, with the profile's port when the setting is the
    default address (Zotero listens on ``extensions.zotero.httpServer.port``)."""
    url = settings.zotero_url.rstrip("/")
    if url != DEFAULT_URL:
        return url
    port = (profile or read_profile(settings)).port
    if port is None or port == DEFAULT_PORT:
        return url
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, f"{parts.hostname}:{port}", parts.path, "", ""))
