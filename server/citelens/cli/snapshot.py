"""``citelens snapshot build OUT --openalex DIR [--dblp FILE] [--arxiv FILE] [--crossref DIR]``
and ``citelens snapshot info FILE``."""

from __future__ import annotations

import argparse
import sqlite3
import sys

from citelens.core.source_names import Source
from citelens.snapshot.build import Subset, build
from citelens.snapshot.store import Snapshot, SnapshotError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    snap = sub.add_parser("snapshot", help="build a local snapshot of the scholarly indexes")
    snap_sub = snap.add_subparsers(dest="snapshot_command", required=True)
    b = snap_sub.add_parser("build", help="turn public bulk dumps into one snapshot index")
    b.add_argument("out", metavar="OUT", help="the snapshot file to write (SQLite)")
    b.add_argument(
        "--openalex", metavar="DIR", help="OpenAlex works snapshot (data/works/updated_date=*/part_*.gz)"
    )
    b.add_argument("--dblp", metavar="FILE", help="DBLP XML dump (dblp.xml.gz)")
    b.add_argument("--arxiv", metavar="FILE", help="arXiv metadata snapshot (JSON Lines)")
    b.add_argument("--crossref", metavar="DIR", help="Crossref public data file (folder of *.json.gz)")
    b.add_argument("--from-year", type=int, metavar="YEAR", help="keep works published in YEAR or later")
    b.add_argument(
        "--type",
        action="append",
        metavar="TYPE",
        help="keep works of this type (repeatable): article, preprint, ...",
    )
    b.add_argument(
        "--field",
        action="append",
        metavar="FIELD",
        help="keep works of this field (repeatable): an OpenAlex field ('Computer Science') or an arXiv "
        "category ('cs', 'cs.LG'); DBLP is computer science",
    )
    b.add_argument(
        "--abstracts", action="store_true", help="keep abstracts (for claim checks; about 3x the size)"
    )
    i = snap_sub.add_parser("info", help="what a snapshot holds")
    i.add_argument("path", metavar="FILE")


def main(args: argparse.Namespace) -> int:
    if args.snapshot_command == "info":
        try:
            snap = Snapshot(args.path)
        except SnapshotError as exc:
            print(f"citelens: {exc}", file=sys.stderr)
            return 2
        print(f"{args.path}: {snap.info.works} works from {snap.info.sources}, data of {snap.info.date}")
        snap.close()
        return 0
    inputs: dict[str, str] = {
        k: getattr(args, k)
        for k in (Source.OPENALEX, Source.CROSSREF, Source.DBLP, Source.ARXIV)
        if getattr(args, k)
    }
    if not inputs:
        print(
            "citelens: snapshot build needs at least one of --openalex, --dblp, --arxiv, --crossref",
            file=sys.stderr,
        )
        return 2
    subset = Subset(
        args.from_year,
        frozenset(t.lower() for t in args.type or []),
        frozenset(f.lower() for f in args.field or []),
    )
    try:
        built = build(
            args.out,
            inputs,
            subset,
            keep_abstracts=args.abstracts,
            log=lambda m: print(f"citelens: {m}", file=sys.stderr),
        )
    except (FileNotFoundError, OSError) as exc:
        print(f"citelens: {exc}", file=sys.stderr)
        return 2
    except sqlite3.Error as exc:  # "database or disk is full": the partial file was removed
        print(f"citelens: snapshot build failed, nothing written to {args.out}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"citelens: snapshot build interrupted, nothing written to {args.out}", file=sys.stderr)
        return 130
    print(f"citelens: {built.summary()}", file=sys.stderr)
    return 0
