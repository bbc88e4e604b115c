"""Time and memory of ``praib leaderboard run`` at the scale of issue 32, side by side with another checkout.

    python benchmarks/leaderboard_scale.py --against DIR [--submissions 1,10] [--draws 1000] [--seed 0]
                                           [--workdir DIR] [--workers N]

The run of ``benchmarks/evaluate_scale.py --leaderboard`` (its files, written once into ``--workdir`` and kept): a
human reference of 15,000 reviews of 5,000 papers (ICLR and NeurIPS 2023-2025, three a paper) and submissions of
5,000 model reviews (Markdown that praib parses), ``--draws`` bootstrap draws. For every number of submissions,
``praib leaderboard run`` runs as a subprocess with the praib of ``--against`` (today's: e.g. ``git archive`` of main
into a folder) and then with this checkout's, one right after the other so that both see the same load. Printed
for each: the wall time; the CPU time of the command and its worker processes (user + system: what the load
takes away from the wall time, it does not change); the peak RSS of the process tree summed (polled every 0.05 s,
as ``evaluate_scale.py`` gives it: pages a forked worker shares with its parent are counted once per process, an
upper bound) and its peak PSS summed (each shared page split among the processes sharing it: the memory the run
takes); the peak RSS of the command's own process (all sampled by ``benchmarks/process_tree.py``). Then whether
both checkouts wrote the same results.parquet, comparisons.parquet and ranks.parquet, the load average before and after, and issue 32's targets. Needs psutil
(``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from evaluate_scale import _counts, leaderboard_files  # noqa: E402
from process_tree import Measured, run_measured  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
GB = 1e9
TABLES = ("results.parquet", "comparisons.parquet", "ranks.parquet")
#: Issue 32: 10 submissions in under half of today's time on the same machine; peak RSS under 1 GB.
TARGET_RATIO, TARGET_PEAK_GB = 0.5, 1.0


def load_average() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg()) + f" on {os.cpu_count()} cores"


def same_tables(first: Path, second: Path) -> bool:
    import pyarrow.parquet as pq

    return all(pq.read_table(first / name).equals(pq.read_table(second / name)) for name in TABLES)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, required=True,
                        help="another checkout of praib (today's), run alongside this one")
    parser.add_argument("--submissions", type=_counts, default=[1, 10], help="numbers of submissions (default 1,10)")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "praib-bench")
    parser.add_argument("--workers", type=int, default=None, help="--workers of both runs (default: theirs)")
    args = parser.parse_args(argv)
    workdir = args.workdir.expanduser()
    trees = {"today": args.against.resolve(), "new": HERE}
    reference, submissions = leaderboard_files(workdir, max(args.submissions), args.seed)
    print(f"{load_average()} (before); today = {trees['today']}, new = {HERE}")
    figures: dict[tuple[str, int], Measured] = {}
    for n in args.submissions:
        outputs = {}
        for name, tree in trees.items():
            outputs[name] = workdir / f"leaderboard-scale-{name}-{n}"
            command = [sys.executable, "-m", "praib.cli.main", "leaderboard", "run", *map(str, submissions[:n]),
                       "--reference", str(reference), "--n-bootstrap", str(args.draws), "--seed", str(args.seed),
                       "--no-progress", "-o", str(outputs[name])]
            if args.workers:
                command += ["--workers", str(args.workers)]
            environment = {**os.environ, "PYTHONPATH": str(tree), "TQDM_DISABLE": "1"}
            log = outputs[name].with_suffix(".log")
            m = figures[(name, n)] = run_measured(command, log, environment, pss=True, cwd=log.parent)
            print(f"{n:2d} submission(s), {name:5s}: {m.seconds:6.1f} s wall, {m.cpu_seconds:6.1f} s CPU; peak RSS "
                  f"summed {m.rss_summed / GB:.2f} GB, PSS summed {m.pss_summed / GB:.2f} GB, main process "
                  f"{m.rss_main / GB:.2f} GB ({load_average()})", flush=True)
        print(f"   same results, comparisons and ranks: {same_tables(*outputs.values())}")
    print(f"{load_average()} (after)")
    print("\n| submissions | | today | new | new / today |\n|---:|---|---:|---:|---:|")
    for n in args.submissions:
        today, new = figures[("today", n)], figures[("new", n)]
        for label, first, second, unit in (("wall", today.seconds, new.seconds, "s"),
                                           ("CPU", today.cpu_seconds, new.cpu_seconds, "s"),
                                           ("peak RSS summed", today.rss_summed / GB, new.rss_summed / GB, "GB"),
                                           ("peak PSS summed", today.pss_summed / GB, new.pss_summed / GB, "GB"),
                                           ("peak RSS, main process", today.rss_main / GB, new.rss_main / GB, "GB")):
            print(f"| {n} | {label} | {first:.2f} {unit} | {second:.2f} {unit} | {second / first:.2f} |")
    ten = max(args.submissions)
    today, new = figures[("today", ten)], figures[("new", ten)]
    ratio = new.seconds / today.seconds
    print(f"\ntarget: {ten} submissions in under {TARGET_RATIO:.0%} of today's time: {ratio:.0%}, "
          f"{'met' if ratio < TARGET_RATIO else 'NOT met'}")
    for n in args.submissions:
        m = figures[("new", n)]
        print(f"target: peak RSS under {TARGET_PEAK_GB:.0f} GB with {n} submission(s): summed {m.rss_summed / GB:.2f} "
              f"GB ({'met' if m.rss_summed < TARGET_PEAK_GB * GB else 'NOT met'}), PSS summed {m.pss_summed / GB:.2f}"
              f" GB ({'met' if m.pss_summed < TARGET_PEAK_GB * GB else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
