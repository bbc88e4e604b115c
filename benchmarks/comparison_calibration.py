"""Calibration of the leaderboard's paired comparisons by simulation: false positives, false discoveries and power.

    python benchmarks/comparison_calibration.py [--runs 400] [--draws 500] [--bh-draws 2000] [--seed 0]

Simulated runs (``tests/leaderboard/simulated.py``): papers with a latent quality and a topic effect, a human
panel of three reviews a paper and submissions of one review a paper whose ratings, confidences and text metrics
are drawn from a known process. Each simulated run is compared as ``praib leaderboard run`` compares (``--draws``
bootstrap draws). Every figure is over ``--runs`` runs, printed with its Monte Carlo standard error.

1. False positives. Two submissions on the same papers that are equally close to human, compared on every metric;
   a nominal 5% test (p <= 0.05, before any multiplicity adjustment), on 30, 100 and 300 papers. Both from an
   LLM-like process (more lenient, less spread out and less readable than the panel); both from the human
   process (every distance near zero, where a distance, an absolute value, folds: the hardest case); and two that
   are equally close in different ways (one rates 0.7 above the panel, one 0.7 below: a test of "A and B review
   alike" finds these different, a test of "A is closer" must not). Printed per metric: the rate with praib's
   re-centred draws and, in brackets, with the plain percentile p-value of the same draws.
2. False discoveries. Whole comparisons of two submissions on 100 papers of ICLR and NeurIPS (36 comparisons: 12
   metrics on each venue and both pooled, Benjamini-Hochberg at 5%): with both submissions of one process (every
   comparison null), and with FRE planted (the 3 FRE comparisons true, 33 null). Printed: the mean share of false
   discoveries among the discoveries (the false discovery rate), and how often a run made any. With ``--bh-draws``
   draws (2,000: the smallest p-value, 2/2001, times 36 comparisons is under 5%, so a single comparison can be
   discovered and the check is not decided by the draws' resolution).
3. Power. A planted difference in FRE (2.5 points), rating TV and alpha: 100 pilot runs on 100 papers give the
   standard error (and, for TV and alpha, the difference: their mean observed one), and the papers-needed figure
   the number of papers that detects it with 80% power; runs on that many papers give the rate at which it is
   detected (p <= 0.05).
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.leaderboard.simulated import (HARSH, HUMAN, LENIENT, LEVEL, MODEL, false_discoveries,  # noqa: E402
                                         false_positive_rates, planted_power)

REQUIRED = ("fre", "rating_tv", "krippendorff_alpha")
#: The columns of the false-positive table: the three of issue 27's check first.
METRIC_ORDER = (*REQUIRED, "rating", "rating_gap", "confidence", "confidence_tv", "tkc", "ttr", "fkg", "xref",
                "citations")
#: Per metric: submission B's process, and the difference of distances it plants where that is known (B's reviews
#: 2.5 FRE points nearer the human ones); otherwise the mean difference of the pilot runs.
PLANTED = {"fre": (MODEL.shifted(fre_shift=2.5), 2.5),
           "rating_tv": (MODEL.shifted(rating_centre=5.6, rating_noise=1.3), None),
           "krippendorff_alpha": (MODEL.shifted(rating_slope=1.6), None)}


def load_average() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg()) + f" on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400, help="simulated runs of each scenario")
    parser.add_argument("--draws", type=int, default=500, help="bootstrap draws of each comparison")
    parser.add_argument("--bh-draws", type=int, default=2000, help="bootstrap draws of the false-discovery runs")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {load_average()}, "
          f"{args.draws} bootstrap draws, {args.runs} runs a scenario")

    processes = [("LLM-like", MODEL, None), ("human-like", HUMAN.shifted(reviews_per_paper=1), None),
                 ("lenient vs harsh", LENIENT, HARSH)]
    scenarios = [(f"{name}, {papers}", papers, a, b) for name, a, b in processes for papers in (30, 100, 300)]
    print(f"\n1. False positives at a nominal {LEVEL:.0%} (Monte Carlo error of a 5% rate: "
          f"{math.sqrt(LEVEL * (1 - LEVEL) / args.runs):.1%}): re-centred (plain percentile), per metric")
    print(f"{'scenario, papers':<22}" + "".join(
        f"{metric.removeprefix('krippendorff_') + (' *' if metric in REQUIRED else ''):>16}" for metric in METRIC_ORDER))
    for name, papers, a, b in scenarios:
        rates, plain = false_positive_rates(args.runs, papers, args.draws, a, args.seed, other=b)
        print(f"{name:<22}" + "".join(f" {rates[m].value:>7.1%} ({plain[m].value:>5.1%})" for m in METRIC_ORDER),
              flush=True)
    print("* the metrics of issue 27's check (a mean, total variation, alpha with the model added)")

    print(f"\n2. False discoveries with Benjamini-Hochberg at {LEVEL:.0%} ({args.runs} runs of 100 papers, "
          f"ICLR and NeurIPS, {args.bh_draws} draws)")
    for label, b, planted in (("every comparison null", MODEL, ()),
                              ("FRE planted (+2.5)", MODEL.shifted(fre_shift=2.5), ("fre",))):
        share, any_false, n_null = false_discoveries(args.runs, 100, args.bh_draws, b, planted, args.seed)
        print(f"{label:<24} {n_null} null comparisons a run: false discovery rate {share:.1%}, runs with any false "
              f"discovery {any_false.value:.1%} (MC error of 5%: {any_false.standard_error(LEVEL):.1%})")

    print(f"\n3. Planted differences at the papers needed for 80% power ({args.runs} runs each, p <= {LEVEL})")
    for metric, (b, difference) in PLANTED.items():
        power = planted_power(metric, b, 100, args.runs, 100, args.draws, difference, args.seed)
        print(f"{metric:<20} difference {power.difference:.4f}, standard error on {power.pilot_papers} papers "
              f"{power.standard_error:.4f}: papers needed {power.papers_needed}; detected in "
              f"{power.detected.value:.1%} of runs (predicted 80%; MC error {power.detected.standard_error(0.8):.1%})")
    print(f"\n{load_average()}, {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
