"""What the paired comparisons and rank intervals add to a ``praib leaderboard run``.

    python benchmarks/comparison_overhead.py [--submissions 10] [--draws 1000] [--seed 0] [--workdir DIR]
                                             [--workers N]

The run of ``benchmarks/evaluate_scale.py --leaderboard`` (written once into ``--workdir`` and kept): a human
reference of 15,000 reviews of 5,000 papers (ICLR and NeurIPS 2023-2025) and ``--submissions`` submissions of
5,000 model reviews each. In one process, as ``praib leaderboard run`` does them: the scoring of every
submission with its bootstrap intervals (:func:`praib.leaderboard.run.score_run`: the run as it was before
comparisons, the baseline), then the comparisons of every pair, metric and venue with the rank intervals
(:func:`praib.leaderboard.compare.compare_run`, on the run's own draws) and their two Parquet files. Printed:
both times, the share the comparisons add (the budget of issue 27: under 20%) and the load average before and
after. Then the comparisons again with every draw made afresh (:func:`praib.leaderboard.compare.compare_tables`
without the run's draws: what submissions that reviewed different papers cost at worst), with the time of its
costliest metric, alpha with the model added.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from evaluate_scale import leaderboard_files  # noqa: E402

from praib.leaderboard import run as run_module  # noqa: E402
from praib.leaderboard.compare import compare_run, compare_tables, write_comparison  # noqa: E402
from praib.leaderboard.submission import load_submission  # noqa: E402
from praib.records import load_records  # noqa: E402

BUDGET = 0.20


def load_average() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg()) + f" on {os.cpu_count()} cores"


def redrawn_seconds(scored) -> tuple[float, float]:
    """The comparisons with every draw made afresh, and the time spent in alpha with the model added."""
    spent = 0.0
    alpha = run_module._Slice.alpha

    def timed(self, weights, with_model, shared=None):
        nonlocal spent
        started = time.perf_counter()
        try:
            return alpha(self, weights, with_model, shared)
        finally:
            spent += time.perf_counter() - started

    run_module._Slice.alpha = timed
    started = time.perf_counter()
    try:
        compare_tables(scored.human, scored.tables, scored.n_bootstrap, scored.seed)
    finally:
        run_module._Slice.alpha = alpha
    return time.perf_counter() - started, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=10)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=Path.home() / ".cache" / "praib-bench")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()

    reference_path, folders = leaderboard_files(args.workdir.expanduser(), args.submissions, args.seed)
    submissions = [load_submission(str(folder)) for folder in folders]
    reference = load_records(str(reference_path), "review")
    print(load_average() + " (before)")
    started = time.perf_counter()
    scored = run_module.score_run(submissions, reference, args.draws, args.seed, workers=args.workers)
    baseline = time.perf_counter() - started
    started = time.perf_counter()
    comparison = compare_run(scored)
    with tempfile.TemporaryDirectory() as folder:
        write_comparison(comparison, Path(folder))
    added = time.perf_counter() - started
    print(load_average() + " (after)")
    redrawn, alpha = redrawn_seconds(scored)
    print(f"{len(reference):,} human reviews, {args.submissions} submissions of {len(submissions[0].reviews):,} "
          f"reviews, {args.draws} bootstrap draws; {len(comparison.pairs):,} comparisons, "
          f"{len(comparison.ranks):,} rank intervals")
    print(f"scoring and bootstrap intervals (the run before comparisons): {baseline:7.1f} s")
    print(f"comparisons, rank intervals and their files:                  {added:7.1f} s "
          f"({added / baseline:.1%} of the baseline; budget {BUDGET:.0%}: "
          f"{'met' if added < BUDGET * baseline else 'NOT met'})")
    print(f"the comparisons with every draw made afresh:                   {redrawn:7.1f} s "
          f"({redrawn / baseline:.1%}; of which alpha with the model added {alpha:.1f} s)")


if __name__ == "__main__":
    main()
