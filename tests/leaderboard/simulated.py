"""Simulated leaderboard runs for calibrating the paired comparisons (tests and
``benchmarks/comparison_calibration.py``): a human reference and submissions whose reviews are drawn
paper by paper from a known process, as per-review tables (no text to score).

Each paper has a latent quality q ~ N(0, 1) and a topic effect on the readability of every review of it
t ~ N(0, 1). A side (the human panel, or a submission) writes ``reviews_per_paper`` reviews of each paper,
independently given the paper: its rating is ``rating_centre + rating_slope * q + N(0, rating_noise)``
rounded to the nearest value of the venue's scale, its confidence ``confidence_centre + N(0,
confidence_noise)`` rounded to 1-5, and each text metric ``mean + paper_sd * t + N(0, noise_sd)``. Two
submissions drawn from the same :class:`Process` on the same papers differ by chance alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from praib.evaluation.scored import ScoredReviews
from praib.leaderboard.compare import (PairedDifference, _Draws, bootstrap_p_value, compare_tables, paired_difference,
                                       papers_needed)
from praib.leaderboard.run import ALL_VENUES, ReviewTable
from praib.metrics.registry import text_metrics

#: The venue-years papers are drawn from, with their rating scales; papers alternate between those given.
SCALES = {("ICLR", 2025): np.array([1, 3, 5, 6, 8, 10]), ("NeurIPS", 2024): np.arange(1, 11)}
ICLR, BOTH = (("ICLR", 2025),), (("ICLR", 2025), ("NeurIPS", 2024))
RATINGS_OF_ICLR = SCALES[("ICLR", 2025)]
CONFIDENCES = np.array([1, 2, 3, 4, 5])
#: Per text metric: (mean, paper_sd, noise_sd) of human reviews; submissions shift the mean.
HUMAN_TEXT = {"tkc": (450.0, 60.0, 180.0), "ttr": (0.58, 0.02, 0.06), "fre": (43.0, 4.0, 9.0),
              "fkg": (11.8, 0.8, 2.0), "xref": (1.5, 0.5, 1.5), "citations": (0.8, 0.4, 1.2)}


@dataclass(frozen=True)
class Process:
    """How one side reviews a paper (see the module)."""

    reviews_per_paper: int
    rating_centre: float
    rating_slope: float
    rating_noise: float
    confidence_centre: float
    confidence_noise: float
    text_shift: float = 0.0  # added to every text metric's mean, in units of its noise_sd
    fre_shift: float = 0.0  # added to FRE's mean besides, in FRE points

    def shifted(self, **changes) -> "Process":
        return replace(self, **changes)


HUMAN = Process(3, 5.3, 1.6, 1.5, 3.6, 0.8)
#: An LLM-like reviewer: more lenient and less spread out than the panel, and less readable (lower FRE).
MODEL = Process(1, 6.2, 0.9, 1.0, 4.1, 0.5, text_shift=-1.0)
#: Two reviewers equally close to the panel in different ways: one rates 0.7 above it, the other 0.7 below, and
#: otherwise review as a panel member does. Their distances to human (rating, rating TV, alpha with the model added)
#: differed by at most 0.003 on 20,000 papers, against standard errors of 0.03 to 0.3 on 100.
LENIENT, HARSH = (HUMAN.shifted(reviews_per_paper=1, rating_centre=HUMAN.rating_centre + 0.7),
                  HUMAN.shifted(reviews_per_paper=1, rating_centre=HUMAN.rating_centre - 0.7))


def _snap(values: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return scale[np.abs(values[:, None] - scale[None, :]).argmin(1)]


def side(process: Process, quality: np.ndarray, topic: np.ndarray, venue_years: list[tuple[str, int]],
         rng: np.random.Generator) -> ReviewTable:
    """One side's reviews of the papers whose quality, topic effect and venue-year are given."""
    k = process.reviews_per_paper
    papers = np.repeat(np.arange(len(quality)), k)
    n = len(papers)
    rating = process.rating_centre + process.rating_slope * quality[papers] + rng.normal(0, process.rating_noise, n)
    of_review = [venue_years[p] for p in papers]
    for venue_year in set(venue_years):
        here = np.array([v == venue_year for v in of_review], dtype=bool)
        rating[here] = _snap(rating[here], SCALES[venue_year])
    confidence = _snap(process.confidence_centre + rng.normal(0, process.confidence_noise, n), CONFIDENCES)
    text = {}
    for metric in text_metrics():
        mean, paper_sd, noise_sd = HUMAN_TEXT[metric]
        mean += process.text_shift * noise_sd + (process.fre_shift if metric == "fre" else 0.0)
        text[metric] = mean + paper_sd * topic[papers] + rng.normal(0, noise_sd, n)
    columns = {"paper_id": [f"p{p:05d}" for p in papers], "venue": [v for v, _ in of_review],
               "year": [y for _, y in of_review], "rating": rating.astype(float).tolist(),
               "confidence": confidence.astype(float).tolist()}
    return ReviewTable.from_scored(ScoredReviews(columns, text, "venue"))


def simulated_run(n_papers: int, submissions: dict[str, Process], seed: int, human: Process = HUMAN,
                  venues: tuple[tuple[str, int], ...] = ICLR) -> tuple[ReviewTable, dict[str, ReviewTable]]:
    """The human reference and each submission (by name) on the same ``n_papers`` papers, which alternate
    between ``venues`` (venue-years)."""
    rng = np.random.default_rng(seed)
    quality, topic = rng.normal(size=n_papers), rng.normal(size=n_papers)
    venue_years = [venues[p % len(venues)] for p in range(n_papers)]
    return (side(human, quality, topic, venue_years, rng),
            {name: side(process, quality, topic, venue_years, rng) for name, process in submissions.items()})


# ----------------------------------------------------------------------------- calibration

#: The nominal level of one comparison.
LEVEL = 0.05


def paired_draws(n_papers: int, a: Process, b: Process, seed: int,
                 n_bootstrap: int) -> dict[str, tuple[PairedDifference, float | None]]:
    """Submissions ``a`` and ``b`` on the same simulated papers, compared on the pooled slice as
    :func:`praib.leaderboard.compare.compare_tables` compares them (its draws and its
    :func:`~praib.leaderboard.compare.paired_difference`), per metric; with each, the plain percentile p-value
    of the same draws (as drawn, not re-centred)."""
    human, tables = simulated_run(n_papers, {"a": a, "b": b}, seed)
    papers = sorted(set(human.paper_id), key=str)
    draws = _Draws(human, tables, ALL_VENUES, papers, n_bootstrap, seed, {})
    distance_a, distance_b = draws.distances("a"), draws.distances("b")
    return {metric: (paired_difference(metric, ALL_VENUES, "a", "b", n_papers, distance_a[metric],
                                       distance_b[metric]),
                     bootstrap_p_value((distance_a[metric] - distance_b[metric])[1:]))
            for metric in distance_a}


def _rejected(p: float | None) -> bool:
    return p is not None and p <= LEVEL


@dataclass(frozen=True)
class Rate:
    """How often something happened in ``runs`` simulated runs, with its Monte Carlo standard error."""

    hits: int
    runs: int

    @property
    def value(self) -> float:
        return self.hits / self.runs

    def standard_error(self, expected: float) -> float:
        return math.sqrt(expected * (1 - expected) / self.runs)

    def within(self, expected: float, standard_errors: float) -> bool:
        return abs(self.value - expected) <= standard_errors * self.standard_error(expected)


def false_positive_rates(runs: int, n_papers: int, n_bootstrap: int, process: Process = MODEL,
                         seed: int = 0, other: Process | None = None) -> tuple[dict[str, Rate], dict[str, Rate]]:
    """Per metric, how often two submissions of the same ``process`` (or of ``process`` and ``other``, where those
    are equally close to human on the metric) are found to differ at :data:`LEVEL` (p-value of the comparison,
    before any multiplicity adjustment): with praib's re-centred draws, and with the plain percentile p-value of
    the same draws."""
    hits: dict[str, int] = {}
    plain: dict[str, int] = {}
    for run in range(runs):
        for metric, (pair, plain_p) in paired_draws(n_papers, process, other or process, seed + run,
                                                     n_bootstrap).items():
            hits[metric] = hits.get(metric, 0) + _rejected(pair.p_value)
            plain[metric] = plain.get(metric, 0) + _rejected(plain_p)
    return {m: Rate(h, runs) for m, h in hits.items()}, {m: Rate(h, runs) for m, h in plain.items()}


def false_discoveries(runs: int, n_papers: int, n_bootstrap: int, b: Process = MODEL, planted: tuple[str, ...] = (),
                      seed: int = 0) -> tuple[float, Rate, int]:
    """Runs of the whole comparison (:func:`praib.leaderboard.compare.compare_tables`: every metric on ICLR,
    NeurIPS and both pooled, Benjamini-Hochberg over all of them at :data:`LEVEL`) of a submission of
    :data:`MODEL` against ``b``, where only the ``planted`` metrics truly differ. Returns the mean share of false
    discoveries among the discoveries (0 for a run without any), how often a run made any false discovery, and
    how many comparisons were null in each run."""
    shares, any_false, n_null = [], 0, 0
    for run in range(runs):
        human, tables = simulated_run(n_papers, {"a": MODEL, "b": b}, seed + run, venues=BOTH)
        comparison = compare_tables(human, tables, n_bootstrap, seed + run, fdr=LEVEL)
        discovered = [pair for pair in comparison.pairs if pair.closer() is not None]
        false = [pair for pair in discovered if pair.metric not in planted]
        n_null = sum(pair.metric not in planted for pair in comparison.pairs)
        shares.append(len(false) / len(discovered) if discovered else 0.0)
        any_false += bool(false)
    return float(np.mean(shares)), Rate(any_false, runs), n_null


@dataclass(frozen=True)
class Power:
    """A planted difference: its size and standard error in pilot runs, the papers that the papers-needed figure
    says detect it with 80% power, and how often runs of that many papers detected it."""

    metric: str
    difference: float
    standard_error: float
    pilot_papers: int
    papers_needed: int
    detected: Rate


def planted_power(metric: str, b: Process, pilot_runs: int, runs: int, pilot_papers: int, n_bootstrap: int,
                  difference: float | None = None, seed: int = 0) -> Power:
    """Pilot runs of :data:`MODEL` against ``b`` on ``pilot_papers`` papers give the mean standard error of
    ``metric``'s difference (and the difference itself, the mean observed one, unless the planted ``difference``
    is known); the papers-needed figure (:func:`~praib.leaderboard.compare.papers_needed`) gives the papers that
    detect it with 80% power; then runs on that many papers say how often it is detected at :data:`LEVEL`
    (two-sided)."""
    pilot = [paired_draws(pilot_papers, MODEL, b, seed + run, n_bootstrap)[metric][0] for run in range(pilot_runs)]
    if difference is None:
        difference = float(np.mean([pair.difference for pair in pilot]))
    standard_error = float(np.mean([pair.standard_error for pair in pilot]))
    needed = papers_needed(pilot_papers, standard_error, difference)
    detected = sum(_rejected(paired_draws(needed, MODEL, b, seed + pilot_runs + run, n_bootstrap)[metric][0].p_value)
                   for run in range(runs))
    return Power(metric, difference, standard_error, pilot_papers, needed, Rate(detected, runs))
