"""Claim extraction and the claim gate: exact match on citing sentences in real papers' forms.

    .venv/bin/python -m benchmarks.bench_claim_cases [-v]

Reads ``tests/data/claims/extraction/{cases,held_out,held_out_2}.jsonl`` (how they were made: SOURCES.md
there) and prints how many citations give exactly the claim a reader picks, or correctly
no claim (a table cell, a caption, a heading, a list of names), per file and language.
"""

from __future__ import annotations

import argparse
from collections import Counter

from tests.test_claims_extraction_cases import judged_text, load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list the mismatches")
    args = parser.parse_args()
    for name in ("cases.jsonl", "held_out.jsonl", "held_out_2.jsonl"):
        right: Counter[str] = Counter()
        total: Counter[str] = Counter()
        for case in load(name):
            got = judged_text(case)
            ok = got == case["expected"]
            for k in ("all", case["language"]):
                total[k] += 1
                right[k] += ok
            if args.verbose and not ok:
                print(f"  {case['key']}: want {case['expected']!r}\n  {' ' * len(case['key'])}  got  {got!r}")
        parts = "  ".join(f"{k} {right[k]}/{total[k]}" for k in ("all", "latex", "markdown"))
        print(f"{name:16} exactly right: {parts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
