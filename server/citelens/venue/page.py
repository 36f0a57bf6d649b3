"""The venue report as a web page a chair triages from: ``summary.html`` and a page per paper.

Static HTML with a small inline script, no external asset (it opens from the disk, offline):

- the top says what the run could not vouch for (``run.json``'s health problems: a source
  down for a large share of the run, "not found" jumping), then the run's metadata (snapshot
  date, when, which sources answered, how many references could not be checked, references
  a chair cleared) and the venue's counts by class (fabricated, wrong metadata, retracted,
  could not check), each a filter;
- the papers ranked by their share of likely fabricated references, the count beside it;
  every column sorts, a class filters, a box searches titles, authors and folder names;
- ``papers/NAME.html``: each finding with its evidence (``evidence.py``).

Rows are plain ``<tr>`` with the data the script needs on their first cell. The index is
written at the start, every few seconds as papers finish and at the end; a paper's page
when it finishes: a run that is killed leaves a report of what it finished.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from citelens.core.statuses import Status
from citelens.core.text import printable_lines
from citelens.venue.cleared import clear_line
from citelens.venue.evidence import FABRICATED, RETRACTED, UNCHECKED, WRONG_METADATA
from citelens.venue.records import Finding, PaperLine, Record, Retraction

CLASS_LABEL = {
    FABRICATED: "likely fabricated",
    WRONG_METADATA: "wrong metadata",
    RETRACTED: "retracted",
    UNCHECKED: "could not check",
}
#: the row's data attribute of each class (the filter buttons name them)
_DATA = {FABRICATED: "fabricated", WRONG_METADATA: "wrong", RETRACTED: "retracted", UNCHECKED: "unchecked"}
_e = html.escape

_STYLE = (
    "body{font:14px system-ui,sans-serif;margin:1.5em auto;max-width:80em;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.35em;"
    "text-align:left;vertical-align:top}th{cursor:pointer;user-select:none;background:#f6f6f6}"
    "th.sorted-asc::after{content:' \\25B2'}th.sorted-desc::after{content:' \\25BC'}"
    ".n{text-align:right;white-space:nowrap}.s{color:#555;font-size:90%}"
    ".alarm{background:#fde8e8;border:2px solid #c00;padding:.6em 1em;margin:1em 0}"
    ".note{background:#fff8e1;border:1px solid #c90;padding:.6em 1em;margin:1em 0}"
    ".counts button{margin:.2em;padding:.4em .8em;border:1px solid #888;border-radius:4px;background:#fff;"
    "cursor:pointer}.counts button.on{background:#224;color:#fff}"
    ".fabricated{color:#a00;font-weight:bold}.wrong-metadata{color:#a60}.retracted{color:#707}"
    ".finding{border:1px solid #ddd;border-radius:4px;padding:.6em 1em;margin:1em 0}"
    "pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;word-break:break-word}"
    "input[type=search]{padding:.4em;width:24em}"
)

_SCRIPT = """
(function(){
 var body=document.querySelector('#papers tbody'), rows=[].slice.call(body.rows);
 var q=document.getElementById('q'), klass='', dir={};
 function d(r,k){return r.cells[0].dataset[k]||''}
 function show(){var t=q.value.toLowerCase(), n=0;
  rows.forEach(function(r){var ok=(!t||d(r,'search').indexOf(t)>=0)&&(!klass||+d(r,klass)>0);
   r.style.display=ok?'':'none'; if(ok)n++;});
  document.getElementById('shown').textContent=n;}
 q.addEventListener('input',show);
 [].forEach.call(document.querySelectorAll('.counts button'),function(b){
  b.addEventListener('click',function(){klass=(klass===b.dataset.k)?'':b.dataset.k;
   [].forEach.call(document.querySelectorAll('.counts button'),function(o){
    o.classList.toggle('on',o.dataset.k===klass)});show();});});
 [].forEach.call(document.querySelectorAll('#papers th[data-k]'),function(th){
  th.addEventListener('click',function(){var k=th.dataset.k, num=th.dataset.num==='1';
   dir[k]=dir[k]==='desc'?'asc':'desc'; var s=dir[k]==='asc'?1:-1;
   rows.sort(function(a,b){var x=d(a,k),y=d(b,k);
    return s*(num?(+x)-(+y):x.localeCompare(y))||(d(a,'name').localeCompare(d(b,'name')));});
   rows.forEach(function(r){body.appendChild(r)});
   [].forEach.call(document.querySelectorAll('#papers th'),function(o){o.className=''});
   th.className='sorted-'+dir[k];});});
 show();
})();
"""


def rank_key(row: PaperLine) -> tuple[float, int, int, int, str]:
    """Share of likely fabricated references, then their count, then retractions."""
    refs = int(row.get("entries", 0))
    fab = int(row.get("likely_fabricated", 0))
    return (
        -(fab / refs if refs else 0.0),
        -fab,
        -len(row.get("retracted") or []),
        -len(row.get("not_read") or []),
        str(row.get("paper")),
    )


def _classes(row: PaperLine) -> dict[str, int]:
    c = row.get("classes")
    if isinstance(c, dict):
        return {k: int(c.get(k, 0)) for k in CLASS_LABEL}
    return {  # a line written before classes were counted
        FABRICATED: int(row.get("likely_fabricated", 0)),
        WRONG_METADATA: 0,
        RETRACTED: len(row.get("retracted") or []),
        UNCHECKED: int((row.get("statuses") or {}).get(Status.UNVERIFIED, 0)),
    }


def page_name(row: PaperLine) -> str:
    return f"papers/{row['paper']}.html"


def _doi_link(doi: str) -> str:
    return f"<a href='https://doi.org/{_e(doi, quote=True)}'>{_e(doi)}</a>" if doi else ""


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _meta(run: dict[str, Any]) -> list[str]:
    parts = []
    problems = (run.get("health") or {}).get("problems") or []
    if problems:
        items = "".join(f"<li>{_e(str(p))}</li>" for p in problems)
        parts.append(
            "<div class=alarm id=health><b>This run is not healthy: its verdicts are not all to be "
            f"trusted.</b><ul>{items}</ul></div>"
        )
    refused = [str(m) for m in run.get("sources_out") or [] if m]
    if refused:  # said once: what refused during the run, and how to give it what it needs
        items = "".join(f"<li>{_e(m)}</li>" for m in refused)
        parts.append(
            f"<div class=note id=sources-out><b>Sources that refused during the run</b><ul>{items}</ul></div>"
        )
    if run.get("failed_batches"):
        parts.append(
            f"<div class=alarm><b>{int(run['failed_batches'])} batch(es) of papers failed</b>: "
            "rerun the same command to check them.</div>"
        )
    health = run.get("health") or {}
    state = "finished " + _e(str(run.get("finished"))) if run.get("finished") else "<b>in progress</b>"
    snap = run.get("snapshot") or {}
    snap_text = (
        f"snapshot of {_e(str(snap.get('date') or '?'))} ({_e(str(snap.get('sources') or ''))})"
        if snap
        else "no snapshot (the APIs only)"
    )
    answered = ", ".join(
        f"{_e(str(v.get('label', s)))} {int(v.get('answered', 0))}/{int(v.get('asked', 0))}"
        + (f" <b>({int(v.get('failed', 0))} failed)</b>" if v.get("failed") else "")
        for s, v in sorted((health.get("sources") or {}).items())
    )
    cleared = (
        f"; <b id=cleared>{int(run['cleared'])}</b> references cleared by a chair (not flagged)"
        if run.get("cleared")
        else ""
    )
    resumed = [str(r) for r in run.get("resumed") or [] if r]
    again = f" (resumed {_e(_and(resumed))})" if resumed else ""
    parts.append(
        "<p class=s id=meta>"
        f"Started {_e(str(run.get('started', '?')))}{again}, {state}; {snap_text}; "
        f"{int(run.get('papers_done', 0))} of {int(run.get('papers_total', 0))} papers done. "
        f"Sources that answered (references answered/asked): {answered or 'none asked'}. "
        f"<b>{int(health.get('unchecked', 0))}</b> references could not be checked "
        f"(UNVERIFIED: a source could not be asked; not a finding); "
        f"<b id=unread>{int(health.get('unread', 0))}</b> references could not be read from their "
        f"PDFs (not a finding){cleared}.</p>"
    )
    return parts


def index_html(rows: list[PaperLine], run: dict[str, Any]) -> str:
    rows = sorted(rows, key=rank_key)
    totals = dict.fromkeys(CLASS_LABEL, 0)
    for r in rows:
        for k, n in _classes(r).items():
            totals[k] += n
    refs = sum(int(r.get("entries", 0)) for r in rows)
    unread_papers = sum(1 for r in rows if r.get("not_read"))
    out = [
        "<!doctype html><html lang=en><meta charset='utf-8'>"
        "<meta name=viewport content='width=device-width'><title>CiteLens venue report</title>",
        f"<style>{_STYLE}</style>",
        "<h1>CiteLens venue report</h1>",
        *_meta(run),
        f"<p>{len(rows)} papers, {refs} references; <b id=not-read>{unread_papers}</b> papers not read "
        "(their references were not all checked: never counted as clean). "
        "Counts by class across the venue (click to filter "
        "the papers):</p><div class=counts>",
        *(
            f"<button data-k='{_DATA[k]}' class='{k}'>{_e(label)}: <b id='total-{k}'>{totals[k]}</b></button>"
            for k, label in CLASS_LABEL.items()
        ),
        "</div><p><input type=search id=q placeholder='Search titles, authors, folders'> "
        "<span class=s><span id=shown>0</span> papers shown. Ranked by the share of likely fabricated "
        "references; click a column to sort.</span></p>",
        "<table id=papers><thead><tr><th data-k=rank data-num=1>#</th><th data-k=name>Paper</th>"
        "<th data-k=refs data-num=1 class=n>References</th>"
        "<th data-k=share data-num=1 class=n>Likely fabricated</th>"
        "<th data-k=wrong data-num=1 class=n>Wrong metadata</th>"
        "<th data-k=retracted data-num=1 class=n>Retracted</th>"
        "<th data-k=unchecked data-num=1 class=n>Could not check</th><th>Findings</th></tr></thead><tbody>",
    ]
    for i, r in enumerate(rows, 1):
        c = _classes(r)
        n = int(r.get("entries", 0))
        share = c[FABRICATED] / n if n else 0.0
        title = str(r.get("title") or "")
        authors = str(r.get("authors") or "")
        search = " ".join((title, authors, str(r["paper"]))).lower()
        top = []
        for f in (r.get("findings") or [])[:3]:
            top.append(
                f"<div><span class='{_e(str(f.get('class')))}'>{_e(str(f.get('status')))}</span> "
                f"“{_e(str(f.get('title') or f.get('key')))}”</div>"
            )
        more = len(r.get("findings") or []) - 3
        if more > 0:
            top.append(f"<div class=s>and {more} more</div>")
        for why in r.get("not_read") or []:
            top.append(f"<div><b>NOT READ</b> {_e(str(why))}: its references were not checked</div>")
        for note in r.get("not_fully_checked") or []:
            top.append(f"<div><b>{_e(str(note))}</b></div>")
        for t in r.get("retracted") or []:
            top.append(f"<div class=retracted>RETRACTED: {_e(str(t.get('key')))}</div>")
        data = (
            f"data-rank='{i}' data-name='{_e(str(r['paper']).lower())}' data-search='{_e(search)}' "
            f"data-refs='{n}' data-share='{share:.6f}' data-fabricated='{c[FABRICATED]}' "
            f"data-wrong='{c[WRONG_METADATA]}' "
            f"data-retracted='{c[RETRACTED]}' data-unchecked='{c[UNCHECKED]}'"
        )
        heading = f"<b>{_e(title)}</b><div class=s>{_e(authors)}</div>" if title else ""
        # a paper not read is never shown as a clean "0 (0%)"
        fabricated = (
            f"<b>{c[FABRICATED]}</b> ({share:.0%})"
            if not r.get("not_read") or c[FABRICATED]
            else "<b class=alarm>not read</b>"
        )
        out.append(
            f"<tr><td {data}>{i}</td><td><a href='{_e(page_name(r), quote=True)}'>"
            f"{heading or _e(str(r['paper']))}</a><div class='s folder'>{_e(str(r['paper']))} · "
            f"from {_e(str(r.get('read_from') or 'the sources'))}</div></td>"
            f"<td class=n>{n}</td><td class=n>{fabricated}</td>"
            f"<td class=n>{c[WRONG_METADATA]}</td><td class=n>{c[RETRACTED]}</td>"
            f"<td class=n>{c[UNCHECKED]}</td><td>{''.join(top)}</td></tr>"
        )
    out.append("</tbody></table>")
    out.append(f"<script>{_SCRIPT}</script>")
    return "\n".join(out) + "\n"


def _record_html(label: str, r: Record) -> str:
    bits = [
        f"“{_e(str(r.get('title') or ''))}”",
        _e(str(r.get("authors") or "")),
        _e(str(r.get("year") or "")),
        _e(str(r.get("venue") or "")),
        _doi_link(str(r.get("doi") or "")),
    ]
    sim = f" (title similarity {r['similarity']})" if r.get("similarity") is not None else ""
    return f"<div><b>{_e(label)}</b>{sim}: {', '.join(b for b in bits if b)}</div>"


def _bib_link(f: Finding | Retraction, paper_dir: str, page_dir: Path | None) -> str:
    """A link to the file a finding is in, relative to the page (``page_dir``): the report
    and the papers moved or zipped together still link (an absolute ``file://`` broke)."""
    file, line = str(f.get("file") or ""), f.get("line")
    if not file:
        return ""
    where = f"{_e(file)}:{int(line)}" if isinstance(line, int) else _e(file)
    page = f.get("page")
    if isinstance(page, int):
        where = f"{_e(file)}, page {page} (read from the PDF)"
    path = file if os.path.isabs(file) else os.path.abspath(file)
    if not os.path.exists(path) and paper_dir:
        path = os.path.join(os.path.abspath(paper_dir), os.path.basename(file))
    try:
        href = quote(Path(os.path.relpath(path, page_dir.resolve())).as_posix()) if page_dir else ""
    except ValueError:  # another drive (Windows): no relative path exists
        href = ""
    return f"<a class=bib href='{_e(href or Path(path).as_uri(), quote=True)}'>{where}</a>"


def paper_html(row: PaperLine, page_dir: Path | None = None) -> str:
    """A paper's page; ``page_dir``: the folder it is written to (its links to the papers'
    files are relative to it)."""
    c = _classes(row)
    title = str(row.get("title") or row["paper"])
    out = [
        "<!doctype html><html lang=en><meta charset='utf-8'>"
        f"<title>{_e(title)}: CiteLens</title><style>{_STYLE}</style>",
        "<p><a href='../summary.html'>&larr; the venue</a></p>",
        f"<h1>{_e(title)}</h1>",
        f"<p class=s>{_e(str(row.get('authors') or ''))}</p>",
        f"<p>Folder <code>{_e(str(row['paper']))}</code>, {int(row.get('entries', 0))} references "
        f"(read from {_e(str(row.get('read_from') or 'the sources'))}): "
        + ", ".join(f"<span class='{k}'>{c[k]} {_e(v)}</span>" for k, v in CLASS_LABEL.items())
        + f". <a href='{_e(Path(str(row.get('report'))).name, quote=True)}'>The full report (JSON)</a>.</p>",
    ]
    for why in row.get("not_read") or []:
        out.append(f"<div class=alarm><b>NOT READ</b> {_e(str(why))}: its references were not checked</div>")
    for note in row.get("not_fully_checked") or []:
        out.append(f"<div class=alarm>{_e(str(note))}</div>")
    for t in row.get("retracted") or []:
        url = str(t.get("url") or "")
        link = f" <a href='{_e(url, quote=True)}'>notice</a>" if url.startswith("https://") else ""
        out.append(
            f"<div class='finding'><span class=retracted>RETRACTED</span> <b>{_e(str(t.get('key')))}</b>: "
            f"{_e(str(t.get('message')))}{link} "
            f"<span class=s>{_bib_link(t, str(row.get('path') or ''), page_dir)}"
            "</span></div>"
        )
    cleared = row.get("cleared") or []
    if cleared:
        items = "".join(
            f"<li><b>{_e(str(x.get('key')))}</b> “{_e(str(x.get('title') or ''))}” "
            f"<code>{_e(str(x.get('fp')))}</code></li>"
            for x in cleared
        )
        out.append(
            f"<div class=cleared><b>{len(cleared)} reference(s) cleared by a chair</b> (in the cleared "
            f"file): not flagged.<ul>{items}</ul></div>"
        )
    for f in row.get("findings") or []:
        klass = str(f.get("class"))
        said = ", ".join(f"{_e(s['source'])} {_e(s['said'])}" for s in f.get("sources") or [])
        fields = f.get("fields") or {}
        out.append(
            f"<div class=finding id='{_e(str(f.get('key')), quote=True)}'>"
            f"<div><span class='{_e(klass)}'>{_e(CLASS_LABEL.get(klass, klass))}</span> · "
            f"{_e(str(f.get('status')))} · <b>{_e(str(f.get('key')))}</b> · "
            f"{_bib_link(f, str(row.get('path') or ''), page_dir)}</div>"
            f"<p>{_e(str(f.get('summary') or ''))}</p>"
            + (f"<div>DOI as written: {_doi_link(str(fields.get('doi')))}</div>" if fields.get("doi") else "")
            + "<div><b>The entry as written</b></div>"
            f"<pre class=written>{_e(str(f.get('written') or ''))}</pre>"
            f"<div><b>What each source said</b>: {said or 'no source was asked'}</div>"
            + "".join(f"<div class=s>{_e(str(d))}</div>" for d in f.get("discrepancies") or [])
            + (_record_html("The paper found", f["match"]) if isinstance(f.get("match"), dict) else "")
            + (_record_html("Closest record", f["closest"]) if isinstance(f.get("closest"), dict) else "")
            + (
                "<div class=s>Checked by a person and fine? Add this line to the venue's cleared file "
                "(cleared.txt) and later runs will not flag it:"
                f"<pre class=clear>{_e(clear_line(f['fp'], f, row['paper']))}</pre></div>"
                if f.get("fp")
                else ""
            )
            + "</div>"
        )
    if not row.get("findings") and not row.get("retracted"):
        out.append("<p>No finding.</p>")
    return "\n".join(out) + "\n"


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a reader (or a kill) never sees half a page. Every control
    character a title, a key or a PDF label brought (ESC, BEL, U+009B, a bidi override) is
    shown escaped (``\\x1b``), on the page and in its bytes: the page's own markup has none."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(printable_lines(text), encoding="utf-8")
    os.replace(tmp, path)


def write_paper_page(out: Path, row: PaperLine) -> None:
    page = out / page_name(row)
    _write(page, paper_html(row, page.parent))


def read_run(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((out / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_index(out: Path, rows: list[PaperLine], run: dict[str, Any] | None = None) -> Path:
    path = out / "summary.html"
    _write(path, index_html(rows, read_run(out) if run is None else run))
    return path
