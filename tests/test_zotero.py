"""Fixes that survive Zotero: the profile, the field mapping and the write flow against the fake
Zotero (tests/fakes/zotero.py, made from the formats in tests/fakes/SOURCES_ZOTERO.md)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

from citelens.core.settings import Settings, from_sources
from citelens.fixes.metadata import FieldChange
from citelens.zotero.client import ZoteroAccess
from citelens.zotero.export import check_export, stamp, wait_for_export
from citelens.zotero.items import ItemRef, propose
from citelens.zotero.plan import ZoteroFix
from citelens.zotero.profile import (
    AutoExport,
    auto_export,
    default_profile_path,
    local_server,
    parse_prefs,
    pref_key,
    read_profile,
)
from citelens.zotero.write import Outcome, write_fix
from tests.fakes.zotero import (
    BETTER_BIBLATEX,
    USER_ID,
    ZoteroFake,
    bbt_pref_name,
    render_entry,
    running_zotero,
    title_case,
)

WRONG = "10.1073/pnas.1414271111"
RIGHT = "10.1007/3-540-48071-4_10"
KEY = "dwork92pricingvia"
DWORK = {
    "title": "Pricing via processing or combatting junk mail",
    "creators": [
        {"creatorType": "author", "firstName": "Cynthia", "lastName": "Dwork"},
        {"creatorType": "author", "firstName": "Moni", "lastName": "Naor"},
    ],
    "date": "1992",
    "proceedingsTitle": "Advances in Cryptology — CRYPTO' 92",
    "pages": "139-147",
    "DOI": WRONG,
}


def _doi_fix(bib: Path) -> ZoteroFix:
    return ZoteroFix(
        str(bib), KEY, (FieldChange("doi", WRONG, RIGHT, f"doi {WRONG} -> {RIGHT}"),), True, "Fix DOI"
    )


def _library(z: ZoteroFake, tmp: Path, **job: Any) -> Path:
    z.add_item("conferencePaper", KEY, **DWORK)
    z.add_item(
        "journalArticle",
        "hunter2007",
        title="Matplotlib: a 2D graphics environment",
        creators=[{"creatorType": "author", "firstName": "J. D.", "lastName": "Hunter"}],
        date="2007",
        publicationTitle="Computing in Science & Engineering",
        volume="9",
        issue="3",
        pages="90-95",
        DOI="10.1109/MCSE.2007.55",
    )
    bib = tmp / "paper" / "refs.bib"
    bib.parent.mkdir(parents=True, exist_ok=True)
    z.add_export(bib, **job)
    return bib


class Asked:
    """The writer's side of the question: what was shown, what they answer."""

    def __init__(self, answers: list[bool] | None = None) -> None:
        self.shown: list[tuple[list[str], str, bool]] = []
        self.answers = answers or [True, True, True]

    async def __call__(self, proposal: Any, where: str, again: bool) -> bool:
        self.shown.append((proposal.lines, where, again))
        return self.answers[len(self.shown) - 1]


async def _write(
    z: ZoteroFake, fix: ZoteroFix, ask: Asked, job: AutoExport | None = None, **settings: Any
) -> tuple[Any, list[str], ZoteroAccess]:
    logged: list[str] = []
    slept: list[float] = []
    now = [0.0]

    async def sleep(s: float) -> None:  # a clock that the waits move
        slept.append(s)
        now[0] += s

    access = ZoteroAccess(z.settings(**settings), log=logged.append, sleep=sleep, clock=lambda: now[0])
    async with access.session():
        result = await write_fix(access, fix, ask, job)
    logged += [f"slept {s}" for s in slept]
    return result, logged, access


# --------------------------------------------------------------------------- the profile


def test_the_preference_key_is_better_bibtexs() -> None:
    # encodeURIComponent, then .!'()* as %xx in lower case (content/auto-export.ts)
    assert pref_key("/home/ana/Papers (2026)/refs.bib") == (
        "extensions.zotero.translators.better-bibtex.autoExport."
        "%2Fhome%2Fana%2FPapers%20%282026%29%2Frefs%2ebib"
    )
    assert pref_key("/tmp/Jürgen's.bib").endswith("%2Ftmp%2FJ%C3%BCrgen%27s%2ebib")
    for path in ("/a b/c.d!e'f(g)h*i~j-k_l.bib", "C:\\Users\\ana\\refs.bib", "/ü/€/𝄞.bib"):
        assert pref_key(path) == bbt_pref_name(path)  # the fake's own encoding agrees


def test_prefs_js_values_and_escapes() -> None:
    text = (
        "// Mozilla User Preferences\n"
        'user_pref("extensions.zotero.httpServer.port", 23120);\n'
        'user_pref("extensions.zotero.httpServer.localAPI.enabled", true);\n'
        'user_pref("a.string", "say \\"hi\\"\\n\\u00e9\\\\");\n'
        "user_pref('single', 'q');\n"
        'user_pref("broken", ;\n'
        'user_pref("after.broken", false);\n'
    )
    prefs = parse_prefs(text)
    assert prefs["extensions.zotero.httpServer.port"] == 23120
    assert prefs["extensions.zotero.httpServer.localAPI.enabled"] is True
    assert prefs["a.string"] == 'say "hi"\né\\'
    assert prefs["single"] == "q"
    assert prefs["after.broken"] is False and "broken" not in prefs


def test_profiles_ini_default_is_the_default_profile() -> None:
    ini = (
        "[General]\nStartWithLastProfile=1\n\n[Profile1]\nPath=a.old\nIsRelative=1\n\n"
        "[Profile0]\nName=default\nIsRelative=1\nPath=Profiles/b.default\nDefault=1\n\n[Install1]\nX=1\n"
    )
    assert default_profile_path(ini) == (True, "Profiles/b.default")
    assert default_profile_path("[Profile0]\nPath=/abs/p\nIsRelative=0\n") == (False, "/abs/p")
    assert default_profile_path("[General]\n") is None


def test_a_bbt_export_is_recognised_from_the_profile(tmp_path: Path) -> None:
    with running_zotero(tmp_path / "zotero", export_delay_s=0.01) as z:
        bib = _library(z, tmp_path, useJournalAbbreviation=True, DOIandURL="doi")
        z.add_export(tmp_path / "paper" / "other.bib", translator=BETTER_BIBLATEX)
        settings = z.settings()
        profile = read_profile(settings)
        assert profile.problem is None and profile.port == z.port and profile.local_api is True
        job = auto_export(settings, str(bib))
        assert job is not None and job.translator == "Better BibTeX"
        assert job.use_journal_abbreviation and job.doi_and_url == "doi"
        other = auto_export(settings, str(tmp_path / "paper" / "other.bib"))
        assert other is not None and other.translator == "Better BibLaTeX"
        # another spelling of the same file, and a file no export writes
        assert auto_export(settings, str(tmp_path / "paper" / ".." / "paper" / "refs.bib")) is not None
        assert auto_export(settings, str(tmp_path / "paper" / "mine.bib")) is None
        # the profile's port is used when the address is the default one
        default_url = dataclasses.replace(settings, zotero_url="http://127.0.0.1:23119")
        assert local_server(default_url) == f"http://127.0.0.1:{z.port}"


def test_the_setting_names_exports_when_the_profile_cannot_be_read(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@misc{a, title={A}}\n", encoding="utf-8")
    settings = from_sources(env={"CITELENS_ZOTERO_PROFILE": str(tmp_path / "none")}, editor={})
    assert read_profile(settings).problem
    assert auto_export(settings, str(bib)) is None
    named = dataclasses.replace(settings, zotero_auto_exports=(str(bib),))
    job = auto_export(named, str(bib))
    assert job is not None and job.from_setting


def test_disabled_jobs_and_csl_exports_are_not_bib_files() -> None:
    from citelens.zotero.profile import auto_exports

    job = {"path": "/x/refs.bib", "translatorID": "f4b52ab0-f878-4556-85a0-c7aeedd09dfc"}  # Better CSL JSON
    disabled = {"path": "/x/b.bib", "translatorID": "ca65189f-8815-4afe-8c8b-8c7c15f0edca", "enabled": False}
    prefs = {pref_key(j["path"]): json.dumps(j) for j in (job, disabled)}
    assert auto_exports(prefs) == {}


# --------------------------------------------------------------------------- Better BibTeX's rendering


def test_the_fake_renders_titles_as_better_bibtex_does() -> None:
    # test/fixtures/export/Auto-Export ignores DOIURL settings #2573 (Zotero's title -> the .bib's)
    assert title_case(
        "Integration of Machine Learning Task Definition in Model-Based Systems Engineering using SysML"
    ) == (
        "Integration of {{Machine Learning Task Definition}} in {{Model-Based Systems Engineering}} "
        "Using {{SysML}}"
    )


# --------------------------------------------------------------------------- the field mapping


def _item(**data: Any) -> dict[str, Any]:
    return {
        "key": "ABCD2345",
        "version": 7,
        "data": {
            "itemType": "journalArticle",
            "title": "",
            "DOI": "",
            "extra": "",
            "date": "",
            "pages": "",
            "publicationTitle": "",
            "journalAbbreviation": "",
            "creators": [],
            **data,
        },
    }


REF = ItemRef("users", str(USER_ID), "ABCD2345", "My Library")


def test_only_the_changed_fields_are_written() -> None:
    item = _item(DOI=WRONG, title="Pricing via processing", pages="139-147")
    p = propose(
        item,
        REF,
        [FieldChange("doi", WRONG, RIGHT, ""), FieldChange("pages", "139-147", "139--147", "")],
        None,
    )
    assert dict(p.body) == {"DOI": RIGHT}  # Zotero's 139-147 is the .bib's 139--147
    assert p.lines == [f"DOI: {WRONG} → {RIGHT}"] and p.version == 7
    assert p.expect["doi"] == RIGHT


def test_extra_tex_lines_override_fields() -> None:
    item = _item(DOI=WRONG, extra=f"Citation Key: x\ntex.doi: {WRONG}\nbiblatex.doi: other")
    p = propose(item, REF, [FieldChange("doi", WRONG, RIGHT, "")], AutoExport("/r.bib", "Better BibTeX"))
    assert dict(p.body) == {"extra": f"Citation Key: x\ntex.doi: {RIGHT}\nbiblatex.doi: other"}
    assert p.changes[0].via == "Extra's tex.doi line"
    # a raw (=) line gets the LaTeX value
    item = _item(extra="tex.title= {The {A} title}")
    p = propose(item, REF, [FieldChange("title", None, "The {B} title", "")], None)
    assert dict(p.body) == {"extra": "tex.title= The {B} title"}


def test_creators_date_and_venues() -> None:
    item = _item(
        itemType="conferencePaper",
        proceedingsTitle="CRYPTO",
        date="1993-05-02",
        creators=[
            {"creatorType": "author", "firstName": "C.", "lastName": "Dwork"},
            {"creatorType": "editor", "firstName": "E.", "lastName": "Brickell"},
        ],
    )
    del item["data"]["publicationTitle"]
    p = propose(
        item,
        REF,
        [
            FieldChange("author", "Dwork, C.", "Dwork, Cynthia and Naor, Moni", ""),
            FieldChange("year", "1993", "1992", ""),
            FieldChange("booktitle", "CRYPTO", "Advances in Cryptology {\\textemdash} CRYPTO '92", ""),
        ],
        None,
    )
    body = dict(p.body)
    assert body["creators"] == [
        {"creatorType": "author", "firstName": "Cynthia", "lastName": "Dwork"},
        {"creatorType": "author", "firstName": "Moni", "lastName": "Naor"},
        {"creatorType": "editor", "firstName": "E.", "lastName": "Brickell"},
    ]
    assert body["date"] == "1992" and body["proceedingsTitle"] == "Advances in Cryptology — CRYPTO '92"


def test_journal_abbreviations_and_doi_and_url_are_said() -> None:
    item = _item(publicationTitle="Nature Comm.", journalAbbreviation="Nat. Commun.")
    job = AutoExport("/r.bib", "Better BibTeX", use_journal_abbreviation=True, doi_and_url="url")
    p = propose(
        item,
        REF,
        [FieldChange("journal", "Nat. Commun.", "Science", ""), FieldChange("doi", None, RIGHT, "")],
        job,
    )
    assert dict(p.body) == {"DOI": RIGHT}
    assert any("journal abbreviation" in n for n in p.notes)
    assert any("DOIandURL: url" in n for n in p.notes) and "doi" not in p.expect


def test_a_type_without_doi_keeps_it_in_extra() -> None:
    item = {
        "key": "ABCD2345",
        "version": 3,
        "data": {"itemType": "letter", "title": "x", "extra": "DOI: 10.1/old"},
    }
    p = propose(item, REF, [FieldChange("doi", "10.1/old", "10.1/new", "")], None)
    assert dict(p.body) == {"extra": "DOI: 10.1/new"}


def test_item_uris_are_checked() -> None:
    assert ItemRef.from_uri("http://zotero.org/users/4711/items/ABCD2345") == ItemRef(
        "users", "4711", "ABCD2345"
    )
    local = ItemRef.from_uri("http://zotero.org/users/local/Xy7Qp2Lm/items/ABCD2345")
    assert local is not None and not local.synced and local.local_path == "/api/users/0/items/ABCD2345"
    assert ItemRef.from_uri("http://zotero.org/groups/12/items/ABCD2345/../../x") is None
    assert ItemRef.from_uri("http://evil.example/users/1/items/ABCD2345") is None
    assert ItemRef.from_uri("http://zotero.org/users/1/items/ABCD234O") is None  # O is no key letter


# --------------------------------------------------------------------------- writing


async def test_zotero_10_local_api_patches_the_doi_alone_and_bbt_exports(tmp_path: Path) -> None:
    with running_zotero(tmp_path / "zotero", export_delay_s=0.05) as z:
        bib = _library(z, tmp_path)
        assert f"doi = {{{WRONG}}}" in bib.read_text()
        before = stamp(str(bib))
        ask = Asked()
        result, logged, access = await _write(z, _doi_fix(bib), ask, auto_export(z.settings(), str(bib)))
        assert result.outcome is Outcome.WRITTEN, result.message
        assert ask.shown == [([f"DOI: {WRONG} → {RIGHT}"], "Zotero's local API", False)]
        (patch,) = z.patches()
        assert patch.body == {"DOI": RIGHT}
        assert patch.path.startswith("/api/users/0/items/")
        assert patch.headers["zotero-server-id"] == "a1B2c3D4e5F6"
        assert patch.headers["if-unmodified-since-version"] == str(result.proposal.version)
        assert access.local_key  # "Always Allow": kept for the session
        text = await wait_for_export(str(bib), before, 5, asyncio.sleep, asyncio.get_running_loop().time)
        assert text is not None and f"doi = {{{RIGHT}}}" in text
        shown = check_export(text, str(bib), KEY, result.proposal.expect)
        assert shown.present and shown.missing == ()
        assert not any(access.local_key in line for line in logged)  # the key is never logged


async def test_zotero_9_answers_501_and_the_web_api_writes(tmp_path: Path) -> None:
    with running_zotero(
        tmp_path / "zotero", local_mode="zotero9", export_delay_s=0.01, sync_delay_s=0.01
    ) as z:
        z.web_keys["s3cretKEY"] = {f"users/{USER_ID}": "write"}
        bib = _library(z, tmp_path)
        result, logged, _ = await _write(z, _doi_fix(bib), Asked(), zotero_api_key="s3cretKEY")
        assert result.outcome is Outcome.WRITTEN and result.via == "zotero.org (the web API)", result.message
        probe = [r for r in z.requests if r.method == "PATCH" and r.path.startswith("/api/")]
        assert [r.status for r in probe] == [501] and probe[0].body == {}  # the probe writes nothing
        (patch,) = z.patches()
        assert patch.path == f"/web/users/{USER_ID}/items/{z.item(KEY)['key']}"
        assert patch.headers["zotero-api-key"] == "s3cretKEY" and patch.body == {"DOI": RIGHT}
        assert not any("s3cretKEY" in line for line in logged)


async def test_no_way_to_write_says_what_to_set_up(tmp_path: Path) -> None:
    with running_zotero(tmp_path / "zotero", local_mode="zotero9") as z:
        bib = _library(z, tmp_path)
        ask = Asked()
        result, _, _ = await _write(z, _doi_fix(bib), ask)
        assert result.outcome is Outcome.CANNOT_WRITE
        assert "Zotero 9 or older" in result.message and "zoteroApiKey" in result.message
        assert ask.shown == [] and z.patches() == []


async def test_412_reads_again_and_shows_the_change_again(tmp_path: Path) -> None:
    with running_zotero(tmp_path / "zotero") as z:
        bib = _library(z, tmp_path)
        z.conflict_once = True  # the item changes in Zotero between the read and the write
        ask = Asked()
        result, _, _ = await _write(z, _doi_fix(bib), ask)
        assert result.outcome is Outcome.WRITTEN, result.message
        assert [again for _lines, _where, again in ask.shown] == [False, True]
        statuses = [r.status for r in z.patches()]
        assert statuses == [412, 204]
        versions = [int(r.headers["if-unmodified-since-version"]) for r in z.patches()]
        assert versions[1] > versions[0]  # written against the version read again
        assert z.item(KEY)["data"]["DOI"] == RIGHT


async def test_cancelled_after_412_writes_nothing(tmp_path: Path) -> None:
    with running_zotero(tmp_path / "zotero") as z:
        bib = _library(z, tmp_path)
        z.conflict_once = True
        result, _, _ = await _write(z, _doi_fix(bib), Asked([True, False]))
        assert result.outcome is Outcome.CANCELLED
        assert z.item(KEY)["data"]["DOI"] == WRONG


async def test_a_read_only_group_refuses_and_nothing_changes(tmp_path: Path) -> None:
    with running_zotero(tmp_path / "zotero", export_delay_s=0.01) as z:
        z.add_group(99, "Lab (read-only)", editable=False)
        z.add_item("conferencePaper", KEY, library="groups/99", **DWORK)
        bib = tmp_path / "lab.bib"
        z.add_export(bib, library="groups/99")
        text = bib.read_text()
        result, _, _ = await _write(z, _doi_fix(bib), Asked())
        assert result.outcome is Outcome.REFUSED
        assert (
            "403" in result.message and "read-only" in result.message and "Lab (read-only)" in result.message
        )
        assert [r.status for r in z.patches()] == [403]
        await asyncio.sleep(0.1)
        assert bib.read_text() == text and z.item(KEY)["data"]["DOI"] == WRONG


async def test_none_or_several_items_are_refused(tmp_path: Path) -> None:
    with running_zotero(tmp_path / "zotero") as z:
        bib = _library(z, tmp_path)
        missing = ZoteroFix(str(bib), "nosuchkey", _doi_fix(bib).changes, True, "")
        result, _, _ = await _write(z, missing, Asked())
        assert result.outcome is Outcome.NOT_FOUND and "nosuchkey" in result.message
        z.add_group(5, "Group A")
        z.add_item("conferencePaper", KEY, library="groups/5", **DWORK)
        ask = Asked()
        result, _, _ = await _write(z, _doi_fix(bib), ask)
        assert result.outcome is Outcome.AMBIGUOUS and "2 Zotero items" in result.message
        assert "Group A" in result.message and ask.shown == [] and z.patches() == []


async def test_backoff_and_retry_after_are_honoured(tmp_path: Path) -> None:
    with running_zotero(tmp_path / "zotero", local_mode="off") as z:
        z.web_keys["k"] = {f"users/{USER_ID}": "write"}
        bib = _library(z, tmp_path)
        z.web_backoff_s, z.web_backoff_count = 7, 1  # on the read: wait 7 s before the write
        z.web_retry_after = [("PATCH", 3)]  # the write first meets a 429
        result, logged, _ = await _write(z, _doi_fix(bib), Asked(), zotero_api_key="k")
        assert result.outcome is Outcome.WRITTEN, result.message
        waits = [float(line.split()[1]) for line in logged if line.startswith("slept")]
        assert waits == [7.0, 3.0]
        assert [r.method for r in z.requests if r.path.startswith("/web/")] == ["GET", "PATCH", "PATCH"]


async def test_a_denied_dialog_and_unreachable_zotero(tmp_path: Path) -> None:
    with running_zotero(tmp_path / "zotero", authorize="deny") as z:
        bib = _library(z, tmp_path)
        result, _, _ = await _write(z, _doi_fix(bib), Asked())
        assert result.outcome is Outcome.REFUSED and "not allowed" in result.message
        assert z.patches() == []
    result, _, _ = await _write(z, _doi_fix(bib), Asked())  # the fake has stopped
    assert result.outcome is Outcome.UNREACHABLE and "Zotero is not running" in result.message


async def test_a_key_allowed_once_is_asked_for_again(tmp_path: Path) -> None:
    with running_zotero(tmp_path / "zotero", authorize="once") as z:
        bib = _library(z, tmp_path)
        access = ZoteroAccess(z.settings())
        async with access.session():
            r1 = await write_fix(access, _doi_fix(bib), Asked(), None)
            back = ZoteroFix(str(bib), KEY, (FieldChange("doi", RIGHT, WRONG, ""),), True, "")
            r2 = await write_fix(access, back, Asked(), None)
        assert r1.written and r2.written
        assert sum(r.path == "/api/local/authorize" for r in z.requests) == 2


def test_render_entry_in_biblatex() -> None:
    item = {
        "key": "ABCD2345",
        "data": {
            "itemType": "journalArticle",
            "title": "A title",
            "citationKey": "k",
            "creators": [],
            "date": "2020-03-01",
            "publicationTitle": "J",
            "DOI": "10.1/x",
            "url": "https://x",
            "extra": "tex.note: hi & bye",
        },
    }
    text = render_entry(item, {"translatorID": BETTER_BIBLATEX, "DOIandURL": "doi"})
    assert "date = {2020-03-01}" in text and "journaltitle = {J}" in text
    assert "doi = {10.1/x}" in text and "url =" not in text and "note = {hi \\& bye}" in text


def test_settings_defaults_are_the_real_hosts() -> None:
    s = Settings()
    assert s.zotero_url == "http://127.0.0.1:23119" and s.zotero_web_api_url == "https://api.zotero.org"
    assert s.zotero_api_key is None


# --------------------------------------------------------------------------- the round trip


async def test_no_export_in_time_is_said(tmp_path: Path) -> None:
    from citelens.zotero.export import not_exported_message

    with running_zotero(tmp_path / "zotero", export_enabled=False) as z:
        bib = _library(z, tmp_path)
        before = stamp(str(bib))
        result, _, _ = await _write(z, _doi_fix(bib), Asked())
        assert result.written
        clock = asyncio.get_running_loop().time
        assert await wait_for_export(str(bib), before, 0.6, asyncio.sleep, clock) is None
        msg = not_exported_message(str(bib), 0.6, result.via)
        assert msg.startswith("Written to Zotero, not exported yet: refs.bib has not changed"), msg


async def test_a_regenerated_citation_key_is_said(tmp_path: Path) -> None:
    from citelens.zotero.export import exported_message

    with running_zotero(tmp_path / "zotero", export_delay_s=0.05, regenerate_keys=True) as z:
        z.add_item(
            "journalArticle",
            "smith2020deep",
            pinned=False,
            title="Deep nets",
            creators=[{"creatorType": "author", "firstName": "Ann", "lastName": "Smith"}],
            date="2020",
        )
        bib = tmp_path / "refs.bib"
        z.add_export(bib)
        before = stamp(str(bib))
        fix = ZoteroFix(str(bib), "smith2020deep", (FieldChange("year", "2020", "2021", ""),), True, "")
        access = ZoteroAccess(z.settings())
        async with access.session():
            result = await write_fix(access, fix, Asked(), None)
            assert result.written and result.item is not None
            text = await wait_for_export(str(bib), before, 5, asyncio.sleep, asyncio.get_running_loop().time)
            assert text is not None
            shown = check_export(text, str(bib), "smith2020deep", result.proposal.expect)
            assert not shown.present
            new_key = await access.citation_key_of(result.item)
        assert new_key == "smith2021"
        msg = exported_message(str(bib), "smith2020deep", shown, new_key)
        assert "gave the item the citation key smith2021" in msg and "still cite smith2020deep" in msg


def test_where_writes_go_and_the_key_are_user_settings_only() -> None:
    """A repository's .vscode/settings.json cannot send Zotero writes elsewhere or set the
    key: VS Code reads settings of scope ``machine`` from user (or remote) settings only."""
    from tests.harness import ROOT

    manifest = json.loads((ROOT / "clients" / "vscode" / "package.json").read_text(encoding="utf-8"))
    props = manifest["contributes"]["configuration"]["properties"]
    for key in ("zoteroApiKey", "zoteroUrl", "zoteroWebApiUrl", "zoteroProfile"):
        assert props[f"citelens.{key}"]["scope"] == "machine", key
    assert "scope" not in props["citelens.zoteroAutoExports"]  # naming files is harmless
    assert "k-123" not in repr(Settings(zotero_api_key="k-123"))  # never in a log line
