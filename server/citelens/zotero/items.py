"""A fix of a .bib entry as a change of its Zotero item: pure decisions, no I/O.

The fields of the item a fix changes, in Zotero's names (the item JSON of the web API and of
Zotero's local API, zotero/dataserver): ``title``; ``creators`` (the authors; editors and
other creators kept); ``date`` (the .bib's ``year``); ``DOI`` (the line ``DOI: ...`` of
Extra for an item type with no DOI field); ``publicationTitle`` (``journal``,
``journaltitle``); ``proceedingsTitle`` / ``bookTitle`` (``booktitle``, by item type);
``pages`` (Better BibTeX writes ``-`` as ``--``); ``volume``; ``issue`` (``number``).

Better BibTeX renders the item, it does not copy it: a line ``tex.FIELD: value`` (or
``bibtex.`` / ``biblatex.`` for one translator; ``=`` for raw LaTeX) in Extra overrides the
field ``FIELD`` of the export, so a fix of that field changes that line; with
``useJournalAbbreviation`` the journal comes from ``journalAbbreviation``, which a fix does
not guess (left out, with the reason); with ``DOIandURL: url`` the export leaves DOIs out.

Only the fields that change are written (a PATCH body), each shown against the item's
current value; a field Zotero already has right is not written again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from citelens.core.latextext import latex_to_text
from citelens.core.model import Name
from citelens.documents.bibtex.names import split_names
from citelens.fixes.metadata import FieldChange
from citelens.zotero.profile import AutoExport

#: A Zotero object key (8 characters of this alphabet) and a library id.
ITEM_KEY = re.compile(r"[23456789ABCDEFGHIJKLMNPQRSTUVWXYZ]{8}")
_URI = re.compile(
    r"https?://zotero\.org/(users|groups)/(local/[A-Za-z0-9]{1,32}|[0-9]{1,12})/items/([0-9A-Z]{8})"
)
#: The .bib's venue field -> the Zotero field, by item type (else ``publicationTitle``).
_BOOKTITLE: Mapping[str, str] = MappingProxyType(
    {
        "conferencePaper": "proceedingsTitle",
        "bookSection": "bookTitle",
        "encyclopediaArticle": "encyclopediaTitle",
        "dictionaryEntry": "dictionaryTitle",
    }
)
_SIMPLE: Mapping[str, str] = MappingProxyType(
    {"title": "title", "doi": "DOI", "pages": "pages", "volume": "volume", "number": "issue"}
)
_TEX_LINE = re.compile(r"(?i)^(tex|bibtex|biblatex)\.([-_a-z0-9]+)\s*([:=])\s*(.*)$")
_DOI_LINE = re.compile(r"(?i)^DOI:\s*(.*)$")


@dataclass(frozen=True, slots=True)
class ItemRef:
    """A Zotero item as Better BibTeX names it: ``http://zotero.org/users/<id>/items/<KEY>``
    (``users/local/<key>`` for a library never synced), ``.../groups/<id>/items/<KEY>``."""

    library_type: str  # "users" or "groups"
    library_id: str  # digits, or "local/..." for a user library that was never synced
    key: str
    library_name: str = ""

    @classmethod
    def from_uri(cls, uri: object, library_name: object = "") -> ItemRef | None:
        """The item a Better BibTeX hit names, or None for an id this is not (checked:
        the id comes over the network and becomes part of a request path)."""
        m = _URI.fullmatch(uri) if isinstance(uri, str) else None
        if m is None or not ITEM_KEY.fullmatch(m.group(3)):
            return None
        name = library_name if isinstance(library_name, str) else ""
        return cls(m.group(1), m.group(2), m.group(3), name[:200])

    @property
    def synced(self) -> bool:
        """Whether zotero.org has the library (a local-only user library has no web API)."""
        return self.library_id.isdigit()

    @property
    def local_path(self) -> str:
        """The item's path in Zotero's local API (``users/0``: the local user)."""
        lib = "users/0" if self.library_type == "users" else f"groups/{self.library_id}"
        return f"/api/{lib}/items/{self.key}"

    @property
    def web_path(self) -> str | None:
        return f"/{self.library_type}/{self.library_id}/items/{self.key}" if self.synced else None

    @property
    def shown(self) -> str:
        where = self.library_name or ("My Library" if self.library_type == "users" else "a group library")
        return f"{where}, item {self.key}"


@dataclass(frozen=True, slots=True)
class Change:
    """One field of the item: its value now and the value written."""

    field: str  # the Zotero field ("DOI", "creators", "extra", ...)
    old: str
    new: str
    bib_field: str  # the .bib field it becomes ("doi")
    via: str = ""  # "Extra's tex.doi line", when the export reads the field from there

    @property
    def line(self) -> str:
        where = f" ({self.via})" if self.via else ""
        return f"{self.field}{where}: {self.old or '(empty)'} → {self.new or '(empty)'}"


@dataclass(frozen=True, slots=True)
class Proposal:
    """What a fix writes to one item: the changes against its current values (``version``),
    the PATCH body (the changed fields only), what the export then shows, what was left out."""

    item: ItemRef
    version: int
    item_type: str
    changes: tuple[Change, ...]
    body: Mapping[str, object]
    expect: Mapping[str, str]  # .bib field -> the plain value the next export shows
    notes: tuple[str, ...] = ()

    @property
    def lines(self) -> list[str]:
        return [c.line for c in self.changes]


def plain(value: str) -> str:
    """A BibTeX value as the plain Unicode text Zotero keeps."""
    return " ".join(latex_to_text(value).split())


def zotero_pages(value: str) -> str:
    """A .bib page range as Zotero writes it (``546--551`` -> ``546-551``)."""
    return plain(re.sub(r"\s*(?:-{1,3}|\\textendash\s*|\\textemdash\s*)\s*", "-", value))


def _same(zotero_field: str, a: str, b: str) -> bool:
    a, b = " ".join(a.split()), " ".join(b.split())
    return a.lower() == b.lower() if zotero_field in ("DOI", "pages") else a == b


def _extra_lines(extra: str) -> list[str]:
    return extra.split("\n") if extra else []


def _override(lines: Sequence[str], bib_field: str, job: AutoExport | None) -> int | None:
    """The index of the Extra line that gives the export its ``bib_field`` (the last one,
    as Better BibTeX reads them in order), or None."""
    translator = job.translator if job is not None else ""
    found = None
    for i, line in enumerate(lines):
        m = _TEX_LINE.match(line.strip())
        if m is None or m.group(2).lower() != bib_field:
            continue
        prefix = m.group(1).lower()
        if prefix == "tex" or not translator or translator.lower().endswith(prefix):
            found = i
    return found


def _creator_name(n: Name) -> dict[str, str]:
    last = " ".join(p for p in (n.von, n.last) if p)
    if n.jr:
        last = f"{last}, {n.jr}"
    if not n.first:
        return {"creatorType": "author", "name": last}
    return {"creatorType": "author", "firstName": n.first, "lastName": last}


def _shown_creators(creators: Sequence[Mapping[str, object]]) -> str:
    out = []
    for c in creators:
        if c.get("creatorType", "author") != "author":
            continue
        name = c.get("name")
        if isinstance(name, str) and name:
            out.append(name)
        else:
            out.append(", ".join(str(c.get(k) or "") for k in ("lastName", "firstName")).strip(", "))
    return "; ".join(out)


def _authors(data: Mapping[str, object], value: str) -> tuple[list[dict[str, object]], str, str] | None:
    """The item's creators with its authors replaced by those of the .bib value ``value``
    (editors and other creators kept, after the authors), and (old, new) as shown."""
    names, _others = split_names(value)
    names = [n for n in names if not n.is_others]
    if not names:
        return None
    current = data.get("creators")
    creators = [c for c in current if isinstance(c, dict)] if isinstance(current, list) else []
    kept = [dict(c) for c in creators if c.get("creatorType", "author") != "author"]
    new: list[dict[str, object]] = [dict(_creator_name(n)) for n in names]
    return new + kept, _shown_creators(creators), _shown_creators(new)


_YEAR = re.compile(r"\b(\d{4})\b")


class _Draft:
    """The changes of one proposal as they are decided, field by field."""

    def __init__(self, item: Mapping[str, object], job: AutoExport | None) -> None:
        raw = item.get("data")
        self.data: Mapping[str, object] = raw if isinstance(raw, dict) else {}
        self.job = job
        self.item_type = str(self.data.get("itemType", ""))
        self.lines = _extra_lines(str(self.data.get("extra") or ""))
        self.changes: list[Change] = []
        self.body: dict[str, object] = {}
        self.expect: dict[str, str] = {}
        self.notes: list[str] = []

    def text(self, name: str) -> str:
        v = self.data.get(name)
        return v if isinstance(v, str) else ""

    def add(self, fc: FieldChange) -> None:
        bib = fc.name
        new_raw = fc.new or ""
        new = zotero_pages(new_raw) if bib == "pages" else plain(new_raw)
        at = _override(self.lines, bib, self.job)
        if at is not None:
            self._extra_override(at, bib, new, new_raw)
        elif bib == "author":
            self._authors(fc)
        elif bib == "year":
            self._year(new)
        else:
            field = self._field_of(bib)
            if field is None:
                return
            if field not in self.data and self.data:
                if field == "DOI":  # an item type without a DOI field keeps it in Extra
                    self._doi_in_extra(new)
                else:
                    self.notes.append(f"{bib}: a Zotero {self.item_type or 'item'} has no {field} field")
                return
            self._set(field, bib, new, removing=fc.new is None)

    def _field_of(self, bib: str) -> str | None:
        if bib == "booktitle":
            return _BOOKTITLE.get(self.item_type, "publicationTitle")
        if bib in ("journal", "journaltitle"):
            abbreviation = self.text("journalAbbreviation")
            if self.job is not None and self.job.use_journal_abbreviation and abbreviation:
                self.notes.append(
                    f"{bib}: this auto-export writes the item's journal abbreviation "
                    f"({abbreviation}); change it in Zotero if it is wrong"
                )
                return None
            return "publicationTitle"
        if bib in _SIMPLE:
            return _SIMPLE[bib]
        self.notes.append(f"{bib}: not a field CiteLens writes to Zotero")
        return None

    def _extra_override(self, at: int, bib: str, new: str, new_raw: str) -> None:
        """Extra's ``tex.FIELD`` line is what the export writes: that line changes."""
        m = _TEX_LINE.match(self.lines[at].strip())
        assert m is not None
        raw = m.group(3) == "="
        value = new_raw if raw else new
        old_line = self.lines[at].strip()
        new_line = f"{m.group(1)}.{m.group(2)}{'=' if raw else ':'} {value}" if value else ""
        if new_line:
            self.lines[at] = new_line
        else:
            del self.lines[at]
        via = f"Extra's {m.group(1)}.{m.group(2)} line"
        self.changes.append(Change("extra", old_line, new_line, bib, via))
        self.body["extra"] = "\n".join(self.lines)
        self.expect[bib] = new

    def _authors(self, fc: FieldChange) -> None:
        if fc.new is None:
            return
        found = _authors(self.data, fc.new)
        if found is None:
            return
        creators, old, new = found
        if old != new:
            self.changes.append(Change("creators", old, new, "author"))
            self.body["creators"] = creators
        self.expect["author"] = plain(fc.new)

    def _year(self, new: str) -> None:
        old = self.text("date")
        self.expect["year"] = new
        year = _YEAR.search(old)
        if new and year is not None and year.group(1) == new:
            return
        self.changes.append(Change("date", old, new, "year"))
        self.body["date"] = new

    def _doi_in_extra(self, new: str) -> None:
        at = next((i for i, ln in enumerate(self.lines) if _DOI_LINE.match(ln.strip())), None)
        old_line = self.lines[at].strip() if at is not None else ""
        new_line = f"DOI: {new}" if new else ""
        if at is not None and new:
            self.lines[at] = new_line
        elif at is not None:
            del self.lines[at]
        elif new:
            self.lines.append(new_line)
        if old_line.lower() != new_line.lower():
            self.changes.append(Change("extra", old_line, new_line, "doi", "Extra's DOI line"))
            self.body["extra"] = "\n".join(self.lines)
        if self.job is None or self.job.doi_and_url != "url":
            self.expect["doi"] = new

    def _set(self, field: str, bib: str, new: str, removing: bool) -> None:
        old = self.text(field)
        if bib == "doi" and self.job is not None and self.job.doi_and_url == "url":
            self.notes.append("doi: this auto-export leaves DOIs out of the .bib (DOIandURL: url)")
        elif new or removing:
            self.expect[bib] = new
        if not _same(field, old, new):
            self.changes.append(Change(field, old, new, bib))
            self.body[field] = new


def propose(
    item: Mapping[str, object], ref: ItemRef, wanted: Sequence[FieldChange], job: AutoExport | None
) -> Proposal:
    """The changes of ``wanted`` (the .bib fix's fields) on the item (its API JSON:
    ``version`` and ``data``), against its current values."""
    draft = _Draft(item, job)
    for fc in wanted:
        draft.add(fc)
    version = item.get("version", draft.data.get("version", 0))
    return Proposal(
        item=ref,
        version=version if isinstance(version, int) else 0,
        item_type=draft.item_type,
        changes=tuple(draft.changes),
        body=MappingProxyType(draft.body),
        expect=MappingProxyType(draft.expect),
        notes=tuple(draft.notes),
    )


def exported_values(fields: Mapping[str, str]) -> dict[str, str]:
    """A .bib entry's fields as plain text, for comparison with a proposal's ``expect``."""
    return {k: (zotero_pages(v) if k == "pages" else plain(v)) for k, v in fields.items()}


def missing_in_export(expect: Mapping[str, str], fields: Mapping[str, str]) -> list[str]:
    """The fields of ``expect`` the exported entry (its raw ``fields``) does not show yet."""
    shown = exported_values(fields)
    out = []
    for name, want in expect.items():
        have = shown.get(name, "")
        if name == "author":
            mine = [n.last.lower() for n in split_names(fields.get(name, ""))[0] if not n.is_others]
            theirs = [n.last.lower() for n in split_names(want)[0] if not n.is_others]
            if mine != theirs:
                out.append(name)
        elif name in ("doi", "pages", "title", "journal", "journaltitle", "booktitle"):
            if " ".join(have.lower().split()) != " ".join(want.lower().split()):
                out.append(name)
        elif have != want:
            out.append(name)
    return out
