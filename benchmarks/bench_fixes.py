"""``citelens check --fix`` scored field by field: real papers with one error each and
correct entries (``benchmarks/fixes/generate.py``), the fix applied against the fake APIs
serving those papers, every field compared with the truth.

    .venv/bin/python -m benchmarks.bench_fixes [-v] [--seed N] [--unsafe] [--add-missing]
        [--disagreements] [--code DIR]

Prints: the wrong entries fully right after the fix (target >= 90%), the correct entries
kept right, the entries made worse (a field right before and wrong after; target at most 1
in 325), entries lost or re-keyed (target 0), per error kind, whether ``--fix --diff``
left the files untouched, and the entries ``--fix`` changed though the check reported no
finding on them (target 0: a fix answers a finding; the DOI and pages an entry lacks are
filled in by the named choice ``--add-missing``, which the ``doi_pages_missing`` kind
needs). ``--code DIR``: run DIR/server's code instead (another checkout); a checkout
without ``--fix`` (before issue 33) gets its preferred code actions applied instead
(``benchmarks/fixes/preferred.py``). ``-v`` lists every entry not fully right, every one
made worse and every one changed with no finding."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.fixes.generate import STYLES, generate, write
from benchmarks.fixes.score import score
from tests.fakes.scholarly import running
from tests.harness import run_citelens

from citelens.core.model import BibEntry
from citelens.documents.bibtex.parse import parse_bib
from citelens.documents.read import read_text


def _entries(folder: Path) -> dict[str, list[BibEntry]]:
    out: dict[str, list[BibEntry]] = {}
    for style in STYLES:
        for e in parse_bib(read_text(folder / f"{style}.bib"), str(folder / f"{style}.bib")).entries:
            out.setdefault(e.key, []).append(e)
    return out


def _fields(entry: BibEntry) -> dict[str, str]:
    return {name: f.value for name, f in entry.fields.items()}


def _keys_with_findings(folder: Path, env: dict[str, str]) -> set[str] | None:
    """The keys ``citelens check`` reports a finding on (JSON report; the answers are cached
    by then), None when it cannot be read."""
    proc = run_citelens("check", str(folder), "--format", "json", "-q", env=env, timeout=1800)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        return None
    return {str(d["key"]) for d in report.get("diagnostics", []) if d.get("key")}


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for style in STYLES:
        h.update((folder / f"{style}.bib").read_bytes())
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--unsafe", action="store_true", help="--unsafe-fixes too")
    ap.add_argument("--add-missing", action="store_true", help="--add-missing too (fill in DOI and pages)")
    ap.add_argument(
        "--disagreements", action="store_true", help="sources describe papers differently"
    )
    ap.add_argument("--code", help="another checkout's code (DIR/server)")
    args = ap.parse_args(argv)
    gen = generate(args.seed, disagreements=args.disagreements)
    items = [json.loads(json.dumps(it.__dict__)) for it in gen.items]
    with tempfile.TemporaryDirectory() as tmp, running(gen.papers) as fake:
        folder = Path(tmp) / "refs"
        write(gen, folder)
        before = {k: v[0] for k, v in _entries(folder).items()}
        env = {k: v for k, v in os.environ.items() if not k.startswith("CITELENS_")}
        env.update(fake.env(), CITELENS_CACHE_DIR=str(Path(tmp) / "cache"))
        env["CITELENS_S2_REQUESTS_PER_SECOND"] = "100"
        if args.code:
            env["PYTHONPATH"] = str(Path(args.code).resolve() / "server") + os.pathsep + str(Path.cwd())
        extra = ["--unsafe-fixes"] if args.unsafe else []
        extra += ["--add-missing"] if args.add_missing else []
        digest = _digest(folder)
        t0 = time.perf_counter()
        diff = run_citelens("check", str(folder), "--fix", "--diff", *extra, "-q", env=env, timeout=1800)
        untouched = _digest(folder) == digest
        found = _keys_with_findings(folder, env)
        fixed_by = "check --fix"
        if "unrecognized arguments" in diff.stderr:  # a checkout before --fix
            fixed_by = "preferred code actions"
            proc = __import__("subprocess").run(
                [sys.executable, "-m", "benchmarks.fixes.preferred", str(folder)],
                env=env,
                capture_output=True,
                text=True,
                timeout=1800,
                check=False,
            )
        else:
            proc = run_citelens("check", str(folder), "--fix", *extra, "-q", env=env, timeout=1800)
        wall = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            print(proc.stderr[-3000:], file=sys.stderr)
            return 2
        after = _entries(folder)
    s = score(items, before, after)
    unasked = sorted(
        k
        for k, e in before.items()
        if found is not None and k not in found and [_fields(x) for x in after.get(k, [])] != [_fields(e)]
    )
    print(
        f"{len(items)} entries ({s.wrong} with one error, {s.correct} correct), {len(gen.papers)} papers; "
        f"fixed by {fixed_by}{' --unsafe-fixes' if args.unsafe else ''} in {wall:.0f} s"
    )
    print(s.line())
    for kind, (n, ok) in sorted(s.by_kind.items()):
        print(f"  {kind:18} {ok:3}/{n:3} fully right")
    if fixed_by == "check --fix":
        print(
            f"--fix --diff left the files untouched: {'yes' if untouched else 'NO'} "
            f"(diff of {diff.stdout.count(chr(10))} lines)"
        )
    if found is not None:
        print(
            f"entries --fix changed with no finding on them: {len(unasked)}/{len(before) - len(found)} "
            f"(target 0 without --add-missing)"
        )
    if args.verbose:
        for key in unasked:
            print("UNASKED", key)
        for line in s.worse:
            print("WORSE", line)
        for line in s.lost:
            print("LOST", line)
        for line in s.left:
            print("LEFT", line)
    ok = s.fixed >= 0.9 * s.wrong and len(s.worse) * 325 <= s.total and not s.lost and untouched
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
