"""The full leaderboard run: every submission scored against the human reference, with
cluster-bootstrap 95% intervals, per venue and pooled.

Per submission (its original records; perturbed ones are set aside) and per slice (each venue,
and ``"all"``), the metrics are:

``tkc``, ``ttr``, ``fre``, ``fkg``, ``xref``, ``citations``, ``rating``, ``confidence``
    (every per-review metric of the registry, :func:`praib.metrics.registry.per_review_metrics`)
    mean per review (:func:`praib.metrics.text.columns.text_columns` and the parsed scores);
    ``distance_to_human`` = |value - human value|.
``rating_gap``
    mean of (rating - median human rating of the same paper,
    :func:`praib.metrics.scores.distributions.gaps_to_panel_median`); distance = |gap|.
``rating_tv``, ``confidence_tv``
    total variation between the submission's and the human distribution on the scale
    (:func:`praib.metrics.scores.distributions.total_variation`), per venue-year, averaged with equal
    weight over the venue-years of the slice; it is its own distance.
``krippendorff_alpha``
    ordinal alpha of the human panels with the submission's ratings added (alpha_H+L of
    :func:`praib.metrics.scores.agreement.panel_agreement`, drawn by
    :func:`praib.metrics.scores.agreement.panel_alpha_draws`), averaged over year groups, then (for ``"all"``)
    over venues; distance = |alpha_H+L - alpha_H| over the same year groups. For the human row,
    alpha_H of :func:`praib.metrics.scores.agreement.alpha_by_venue`.
judged metrics (with a judge; pooled slice only, no interval)
    ``math_engagement`` (distance |value - human value|), ``math_p_pos_given_{pos,neg}`` (PRAIB's
    P(+|+) and P(+|-); no distance), ``coverage_{recall,precision}_{strengths,
    weaknesses}`` and ``target_aspect_f1`` (distance 1 - value: 1 means the human items are matched
    exactly), from :func:`praib.evaluation.evaluate.evaluate_reviews`.

Point values equal those of :func:`praib.evaluation.evaluate.evaluate_reviews` on the same records. The
interval is a cluster bootstrap over papers: the slice's papers (those with a review of the
submission or of the human reference), sorted by id, are resampled with replacement and each
drawn paper brings all its reviews, human and model. Draw b is
``rng.integers(0, n_papers, size=n_papers)`` with ``rng = numpy.random.default_rng(seed)`` created
afresh for every submission and slice, so all metrics of a slice share the same resamples (and every side
over the same papers the same ones: they are drawn once for all of them, :func:`sides_metrics`); the
interval is the 2.5th and 97.5th percentile of the draws where the metric is defined. Every review is
parsed and its text scored once (in worker processes, :func:`score_in_processes`; the texts are then
dropped unless a judge reads them), and every draw only reweights per-paper sums.
"""

from __future__ import annotations

import datetime
import functools
import gc
import hashlib
import json
import multiprocessing
import os
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Hashable, Iterator, Mapping, Sequence

import numpy as np
from datasets import Dataset, Features, Value

from praib._version import __version__
from praib.evaluation.evaluate import evaluate_reviews, on_scale, scale_values, year_group_of
from praib.evaluation.judge_validity import judge_validations
from praib.evaluation.results import EvaluationResult
from praib.evaluation.scored import ScoredReviews
from praib.evaluation.streamed import release_freed_memory
from praib.parsing import parse_reviews
from praib.records import HUMAN_SOURCE, perturbation_kind, read_parquet_rows
from praib.records.atomic import RECORD, replace_folder, write_text_atomically
from praib.records.progress import progress_bar
from praib.metrics.registry import (BY_NAME, DIFFERENCE, METRICS, SHORTFALL, judged_metrics, per_review_metrics,
                                    score_metrics, text_metrics)
from praib.metrics.scores.agreement import alpha_draws
from praib.metrics.scores.distributions import gaps_to_panel_median, total_variation
from praib.leaderboard.provenance import input_label
from praib.leaderboard.submission import Submission, carried_validations

if TYPE_CHECKING:
    from praib.llm.judge import Judge

ALL_VENUES = "all"
#: The files every results directory holds (:func:`run_leaderboard`), besides manifests/, details/ and eras.json.
RESULT_FILES = ("results.parquet", "results.jsonl", "comparisons.parquet", "ranks.parquet", "run.json")
RESULT_FEATURES = Features({
    "submission": Value("string"),
    "model": Value("string"),
    "metric": Value("string"),
    "venue": Value("string"),
    "value": Value("float64"),
    "ci_low": Value("float64"),
    "ci_high": Value("float64"),
    "n_papers": Value("int64"),
    "n_reviews": Value("int64"),
    "human_value": Value("float64"),
    "distance_to_human": Value("float64"),
    "closest_to_human": Value("bool"),
})


def review_table_features() -> Features:
    """A :class:`ReviewTable` as a Parquet table (:meth:`ReviewTable.columns`): one row per review, with the venue
    ("unknown" where the review has none), year, year group and the scale its scores were read on, its
    registered per-review metrics (:func:`praib.metrics.registry.per_review_metrics`: the text metrics, and the
    rating and confidence, NaN where absent or off the venue-year's scale)."""
    return Features({
        "paper_id": Value("string"),
        "venue": Value("string"),
        "year": Value("int64"),
        "year_group": Value("string"),
        "scale": Value("string"),
        **{metric: Value("float64") for metric in per_review_metrics()},
    })


@dataclass(eq=False)
class ReviewTable:
    """The scored reviews of one side (a submission or the human reference) as per-review arrays
    indexed for the bootstrap; a rating or confidence off its venue-year's scale is NaN, left out of every
    metric as :func:`praib.evaluation.evaluate.off_scale` says. ``scale``: the one the scores were read on
    ("venue" or "generic"), which gives the domain of the total variations."""

    paper_id: np.ndarray
    venue: np.ndarray
    year: np.ndarray
    year_group: np.ndarray
    values: dict[str, np.ndarray]
    scale: str

    @classmethod
    def from_scored(cls, scored: ScoredReviews) -> "ReviewTable":
        columns, _ = on_scale(scored.columns, scored.scale)
        values = {k: scored.text_scores[k] for k in text_metrics()}
        for kind in score_metrics():
            values[kind] = np.array([np.nan if v is None else v for v in columns[kind]], dtype=float)
        return cls(np.asarray(columns["paper_id"], dtype=object),
                   np.asarray([v or "unknown" for v in columns["venue"]], dtype=object),
                   np.asarray(columns["year"], dtype=object),
                   np.asarray([year_group_of(v, y) if v else str(y) for v, y in
                               zip(columns["venue"], columns["year"])], dtype=object),
                   values, scored.scale)

    @classmethod
    def from_columns(cls, columns: Mapping[str, Sequence]) -> "ReviewTable":
        """The table :meth:`columns` gave (e.g. read back from Parquet): nothing is parsed or scored again.
        A ``ValueError`` names a missing column or a table with more than one scale."""
        missing = [name for name in review_table_features() if name not in columns]
        if missing:
            raise ValueError(f"not a table of scored reviews: missing column(s) {', '.join(missing)}")
        scales = set(columns["scale"])
        if len(scales) != 1:
            raise ValueError(f"not a table of scored reviews: it needs one scale, found {sorted(scales, key=str)}")
        return cls(np.asarray(columns["paper_id"], dtype=object), np.asarray(columns["venue"], dtype=object),
                   np.asarray(columns["year"], dtype=object), np.asarray(columns["year_group"], dtype=object),
                   {metric: np.array([np.nan if v is None else v for v in columns[metric]], dtype=float)
                    for metric in per_review_metrics()},
                   scales.pop())

    def columns(self) -> dict[str, list]:
        """The table as :func:`review_table_features`' columns, which :meth:`from_columns` reads back."""
        return {"paper_id": self.paper_id.tolist(), "venue": self.venue.tolist(), "year": self.year.tolist(),
                "year_group": self.year_group.tolist(), "scale": [self.scale] * len(self),
                **{metric: self.values[metric].tolist() for metric in per_review_metrics()}}

    def __len__(self) -> int:
        return len(self.paper_id)


def bootstrap_weights(n_papers: int, n_bootstrap: int, seed: int) -> np.ndarray:
    """Row 0: every paper once (the point estimate); row b: how often draw b took each paper."""
    rng = np.random.default_rng(seed)
    weights = np.ones((n_bootstrap + 1, n_papers), dtype=float)
    for b in range(n_bootstrap):
        weights[b + 1] = np.bincount(rng.integers(0, n_papers, size=n_papers), minlength=n_papers)
    return weights


#: The most arrays' columns one product of :class:`_Products` takes (a matrix of 10 MB over 5,000 papers).
_COLUMNS_A_PRODUCT = 256
#: Below this, every partial sum of a product of whole-number weights and multiples of 1/4 is a float exactly.
_EXACT_SUMS_BELOW = 2.0 ** 50


class _Products:
    """The products ``weights @ x`` of the per-paper sums and counts of any number of slices over one set of
    draws (:func:`bootstrap_weights`: whole numbers), asked for first (:meth:`ask`) and made together
    (:meth:`make`), each ``x`` once however often it is asked for (the human reference's counts, in every
    submission's slice).

    An ``x`` of multiples of 1/4 (counts, scores, gaps to a median) whose sums stay below
    :data:`_EXACT_SUMS_BELOW` has an exact product, whatever order its terms are added in: all of those of a
    ``group`` (the papers that can have a value, e.g. those of one venue-year) go into one matrix product over
    those papers' weights, one pass over them. Any other ``x`` (a sum of TTR or of FRE values) is multiplied
    alone, as ``weights @ x``, the product every run made, so that its terms are added in the same order and give
    the same last bits."""

    def __init__(self, weights: np.ndarray):
        self.weights = weights
        self._largest = float(weights.max()) if weights.size else 0.0
        self._asked: dict[tuple, tuple[np.ndarray, Hashable]] = {}
        self._made: dict[tuple, np.ndarray] = {}

    def ask(self, x: np.ndarray, group: Hashable = None) -> Callable[[], np.ndarray]:
        """``weights @ x`` (``x``: papers x ...), to be read once :meth:`make` has run."""
        x = np.ascontiguousarray(x, dtype=float)
        key = (x.shape, hashlib.blake2b(x.data, digest_size=16).digest())
        self._asked.setdefault(key, (x, group))
        return lambda: self._made[key]

    def _exact(self, x: np.ndarray) -> bool:
        quarters = x * 4
        return bool(np.array_equal(quarters, np.round(quarters))
                    and np.abs(x).sum() * self._largest < _EXACT_SUMS_BELOW)

    def make(self) -> None:
        groups: dict[Hashable, list[tuple]] = defaultdict(list)
        for key, (x, group) in self._asked.items():
            if self._exact(x):
                groups[group].append(key)
            else:
                self._made[key] = self.weights @ x
        n_papers = self.weights.shape[1]

        def width(key) -> int:
            return int(np.prod(self._asked[key][0].shape[1:], dtype=int))

        batches = []
        for keys in groups.values():  # a group's arrays in batches, so that a run of many sides stays small
            batch, columns = [], 0
            for key in keys:
                if batch and columns + width(key) > _COLUMNS_A_PRODUCT:
                    batches.append(batch)
                    batch, columns = [], 0
                batch.append(key)
                columns += width(key)
            batches.append(batch)
        for keys in batches:
            stacked = np.hstack([self._asked[key][0].reshape(n_papers, -1) for key in keys])
            used = np.flatnonzero(stacked.any(axis=1))
            product = (self.weights[:, used] @ stacked[used] if 2 * len(used) < n_papers
                       else self.weights @ stacked)
            start = 0
            for key in keys:
                self._made[key] = np.ascontiguousarray(product[:, start:start + width(key)]).reshape(
                    (len(self.weights), *self._asked[key][0].shape[1:]))
                start += width(key)
        self._asked = {}


class _Slice:
    """The reviews of one venue (or all) of both sides, indexed by the slice's papers: by default every
    paper either side reviewed in the venue; given ``papers`` (sorted by id), those papers, each side's
    reviews of other papers left out (e.g. the papers two submissions share, for a paired comparison)."""

    def __init__(self, model: ReviewTable | None, human: ReviewTable, venue: str, papers: list | None = None):
        def rows(table):
            if table is None:
                return np.zeros(0, dtype=int)
            found = np.arange(len(table)) if venue == ALL_VENUES else np.flatnonzero(table.venue == venue)
            if papers is not None:
                kept = set(papers)
                found = found[np.array([p in kept for p in table.paper_id[found]], dtype=bool)]
            return found

        self.model, self.human, self.venue = model, human, venue
        self.model_rows, self.human_rows = rows(model), rows(human)
        ids = set(human.paper_id[self.human_rows])
        if model is not None:
            ids |= set(model.paper_id[self.model_rows])
        self.papers = sorted(ids, key=str) if papers is None else list(papers)
        index = {p: i for i, p in enumerate(self.papers)}
        self.model_paper = (np.array([index[p] for p in model.paper_id[self.model_rows]], dtype=int)
                            if model is not None else np.zeros(0, dtype=int))
        self.human_paper = np.array([index[p] for p in human.paper_id[self.human_rows]], dtype=int)

    def side(self, is_model: bool):
        return (self.model, self.model_rows, self.model_paper) if is_model else \
            (self.human, self.human_rows, self.human_paper)

    def mean(self, values: np.ndarray, is_model: bool, products: _Products) -> Callable[[], np.ndarray]:
        """Per draw of ``products``: the mean of one side's finite ``values``, paper-weighted."""
        _, rows, paper = self.side(is_model)
        values = values[rows]
        finite = np.isfinite(values)
        sums = products.ask(np.bincount(paper[finite], weights=values[finite], minlength=len(self.papers)))
        counts = products.ask(np.bincount(paper[finite], minlength=len(self.papers)).astype(float))

        def mean() -> np.ndarray:
            with np.errstate(invalid="ignore", divide="ignore"):
                return sums() / counts()
        return mean

    def rating_gap(self) -> np.ndarray:
        """Per model review of the slice: rating minus the median human rating of its paper (NaN without)."""
        gap = np.full(len(self.model), np.nan)
        gap[self.model_rows] = gaps_to_panel_median(
            self.model_paper, self.model.values["rating"][self.model_rows],
            self.human_paper, self.human.values["rating"][self.human_rows])
        return gap

    def _counts(self, table, rows, paper, kind, keep, domain) -> np.ndarray:
        """Papers x domain counts of the ``kind`` scores of ``rows[keep]`` (a score not in ``domain`` is not
        counted)."""
        counts = np.zeros((len(self.papers), len(domain)))
        if not len(domain):
            return counts
        domain = np.asarray(domain, dtype=float)
        order = np.argsort(domain, kind="stable")
        values = table.values[kind][rows[keep]]
        at = np.minimum(np.searchsorted(domain[order], values), len(domain) - 1)
        found = domain[order][at] == values
        np.add.at(counts, (paper[keep][found], order[at[found]]), 1)
        return counts

    def total_variation(self, kind: str, products: _Products) -> Callable[[], np.ndarray]:
        """Per draw of ``products``: TV between model and human distributions, averaged over venue-years."""
        per_year = []
        model_venue = self.model.venue[self.model_rows]
        model_year = np.asarray(self.model.year, dtype=object)[self.model_rows]
        human_venue = self.human.venue[self.human_rows]
        human_year = np.asarray(self.human.year, dtype=object)[self.human_rows]
        for venue, year in sorted(set(zip(model_venue, model_year)), key=lambda k: (str(k[0]), k[1] or 0)):
            domain = scale_values(None if venue == "unknown" else venue, year, kind, self.model.scale)
            if not domain:
                continue
            in_model = (model_venue == venue) & (model_year == year)
            in_human = (human_venue == venue) & (human_year == year)
            group = (venue, year)  # the papers of a venue-year are the only ones with counts
            per_year.append((
                products.ask(self._counts(self.model, self.model_rows, self.model_paper, kind, in_model, domain),
                             group),
                products.ask(self._counts(self.human, self.human_rows, self.human_paper, kind, in_human, domain),
                             group)))
        n_draws = len(products.weights)
        return lambda: _nanmean_rows([total_variation(p(), q()) for p, q in per_year], n_draws)

    def alpha(self, weights: np.ndarray, with_model: bool,
              shared: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per weight row: the slice's alpha (per year group, then venue, then mean of venues) and,
        with the model, |alpha_H+L - alpha_H| over the same year groups. ``shared``: the weights of each year
        group's panels and the human reference's alpha_H by year group and rating values, kept there for the next
        slice over the same papers."""
        shared = {} if shared is None else shared
        human_venue = self.human.venue[self.human_rows]
        human_group = self.human.year_group[self.human_rows]
        human_ratings = self.human.values["rating"][self.human_rows]
        rated = np.isfinite(human_ratings)
        panel_size = np.bincount(self.human_paper[rated], minlength=len(self.papers))
        model_ratings = self.model.values["rating"][self.model_rows] if with_model else np.zeros(0)
        model_rated = np.isfinite(model_ratings)
        values, deltas = [], []
        for venue in sorted(set(human_venue[rated]), key=str):
            with_alpha, without_alpha = [], []
            for group in sorted(set(human_group[rated & (human_venue == venue)]), key=str):
                keep = rated & (human_venue == venue) & (human_group == group)
                panels = np.zeros(len(self.papers), dtype=bool)
                panels[self.human_paper[keep]] = True
                panels &= panel_size >= 2
                model_keep = model_rated & panels[self.model_paper] if with_model else model_rated
                domain = sorted(set(human_ratings[keep]) | set(model_ratings[model_keep]))
                human_counts = self._counts(self.human, self.human_rows, self.human_paper, "rating", keep,
                                            domain)[panels]
                if (venue, group) not in shared:
                    shared[(venue, group)] = weights[:, panels]
                panel_weights = shared[(venue, group)]
                if (venue, group, tuple(domain)) not in shared:
                    shared[(venue, group, tuple(domain))] = alpha_draws(human_counts, domain, panel_weights)
                a_h = shared[(venue, group, tuple(domain))]
                if with_model:
                    model_counts = self._counts(self.model, self.model_rows, self.model_paper, "rating",
                                                model_keep, domain)[panels]
                    a_hl = alpha_draws(human_counts + model_counts, domain, panel_weights)
                    a_hl[panel_weights @ model_counts.sum(1) == 0] = np.nan
                    both = np.isfinite(a_h) & np.isfinite(a_hl)
                    without_alpha.append(np.where(both, a_h, np.nan))
                    with_alpha.append(np.where(both, a_hl, np.nan))
                else:
                    with_alpha.append(a_h)
            venue_value = _nanmean_rows(with_alpha, len(weights))
            values.append(venue_value)
            if with_model:
                deltas.append(np.abs(venue_value - _nanmean_rows(without_alpha, len(weights))))
        return _nanmean_rows(values, len(weights)), _nanmean_rows(deltas, len(weights))


def _nanmean_rows(columns: list[np.ndarray], n: int) -> np.ndarray:
    if not columns:
        return np.full(n, np.nan)
    stacked = np.vstack(columns)
    defined = np.isfinite(stacked).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(defined > 0, np.nansum(stacked, 0) / np.maximum(defined, 1), np.nan)


def _interval(draws: np.ndarray) -> tuple[float | None, float | None]:
    draws = draws[np.isfinite(draws)]
    if not len(draws):
        return None, None
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(low), float(high)


def _finite(value) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


Series = dict[str, tuple[np.ndarray, "np.ndarray | None"]]


def slices_draws(pieces: Sequence[_Slice], weights: np.ndarray) -> list[Series]:
    """:func:`slice_draws` of slices over the same papers and human reviews (one venue's slice of the human
    reference and of every submission), on the same draws, in one pass: their products with the weights made
    together (:class:`_Products`) and the human reference's alpha once for all."""
    products, shared = _Products(weights), {}
    finishers = [_series_of(piece, products, shared) for piece in pieces]
    products.make()
    return [finish() for finish in finishers]


def _series_of(piece: _Slice, products: _Products, shared: dict) -> Callable[[], Series]:
    """The products :func:`slice_draws` needs of ``piece``, asked of ``products``; what gives its series once
    they are made."""
    is_model = piece.model is not None
    table, _, _ = piece.side(is_model)
    means = {metric: piece.mean(table.values[metric], is_model, products) for metric in per_review_metrics()}
    gap = piece.mean(piece.rating_gap(), True, products) if is_model else None
    variations = {kind: piece.total_variation(kind, products) for kind in score_metrics()} if is_model else {}

    def finish() -> Series:
        series: Series = {metric: (mean(), None) for metric, mean in means.items()}
        if is_model:
            drawn_gap = gap()
            series["rating_gap"] = (drawn_gap, np.abs(drawn_gap))
            for kind, variation in variations.items():
                drawn = variation()
                series[f"{kind}_tv"] = (drawn, drawn)
        alpha, delta = piece.alpha(products.weights, with_model=is_model, shared=shared)
        series["krippendorff_alpha"] = (alpha, delta if is_model else None)
        return series
    return finish


def slice_draws(piece: _Slice, weights: np.ndarray) -> Series:
    """Per metric, one value per row of ``weights`` of the slice's model side (its human side where the
    slice has no model) and, for a metric that carries its own distance to human (rating gap, total
    variation, alpha with the model added), the distance's; None for a metric whose distance is to the
    human value (:data:`praib.metrics.registry.DIFFERENCE`)."""
    return slices_draws([piece], weights)[0]


@dataclass
class SliceDraws:
    """One side's bootstrap draws on one slice: the slice's papers (sorted by id; the draws are
    :func:`bootstrap_weights` over them) and :func:`slice_draws`' values and distances on each draw."""

    papers: list
    series: Series


SliceMetrics = tuple[dict[str, dict], int, int, SliceDraws]


def _slice_metrics(piece: _Slice, series: Series) -> SliceMetrics:
    _, rows, paper = piece.side(piece.model is not None)
    out = {}
    for metric, (value, distance) in series.items():
        low, high = _interval(value[1:])
        out[metric] = {"value": _finite(value[0]), "ci_low": low, "ci_high": high,
                       "distance": None if distance is None else _finite(distance[0])}
    return out, len(set(paper.tolist())), len(rows), SliceDraws(piece.papers, series)


def slice_metrics(model: ReviewTable | None, human: ReviewTable, venue: str, n_bootstrap: int,
                  seed: int) -> SliceMetrics:
    """``{metric: {"value", "ci_low", "ci_high", "distance"}}`` of one side on one slice, with the
    slice's paper and review counts of that side and the draws behind the intervals. ``model`` None
    scores the human reference itself."""
    piece = _Slice(model, human, venue)
    return _slice_metrics(piece, slice_draws(piece, bootstrap_weights(len(piece.papers), n_bootstrap, seed)))


def sides_metrics(sides: Mapping[str, ReviewTable | None], human: ReviewTable, venues: Sequence[str],
                  n_bootstrap: int, seed: int, progress: bool = False, desc: str = "bootstrap",
                  workers: int = 1) -> dict[tuple[str, str], SliceMetrics]:
    """:func:`slice_metrics` of every side (a submission's table by name; None: the human reference itself) on
    every venue, by (side, venue), in one pass a venue (:func:`venue_metrics`); the venues in ``workers``
    processes (:func:`_fork_map`) where they can be forked."""
    processes = min(workers, len(venues))
    if _can_fork(processes):
        per_venue = _fork_map(_venue_task, venues, processes, (sides, human, n_bootstrap, seed))
    else:
        per_venue = (venue_metrics(sides, human, venue, n_bootstrap, seed) for venue in venues)
    found = {}
    for metrics in progress_bar(per_venue, desc=desc, total=len(venues), enabled=progress):
        found.update(metrics)
    return found


def venue_metrics(sides: Mapping[str, ReviewTable | None], human: ReviewTable, venue: str, n_bootstrap: int,
                  seed: int) -> dict[tuple[str, str], SliceMetrics]:
    """:func:`slice_metrics` of every side on ``venue``, in one pass: the slices over the same papers (every
    submission that reviewed the reference's papers) share one set of draws, the weights are drawn once per
    number of papers, and their products are made together (:func:`slices_draws`)."""
    found = {}
    by_papers: dict[tuple, dict[str, _Slice]] = defaultdict(dict)
    for name, table in sides.items():
        piece = _Slice(table, human, venue)
        by_papers[tuple(piece.papers)][name] = piece
    weights: dict[int, np.ndarray] = {}
    for papers, pieces in by_papers.items():
        if len(papers) not in weights:
            weights[len(papers)] = bootstrap_weights(len(papers), n_bootstrap, seed)
        for (name, piece), series in zip(pieces.items(), slices_draws(list(pieces.values()), weights[len(papers)])):
            found[(name, venue)] = _slice_metrics(piece, series)
    return found


def _venue_task(venue: str) -> dict[tuple[str, str], SliceMetrics]:
    sides, human, n_bootstrap, seed = _forked
    return venue_metrics(sides, human, venue, n_bootstrap, seed)


def select_rows(reviews: Dataset, keep, fields: Sequence[str] | None = None) -> Dataset:
    """The rows of ``reviews`` for which ``keep(row)`` holds (without datasets' progress bars). With ``fields``,
    ``row`` holds only those of them the reviews have, and nothing else is read (not the texts)."""
    if fields is not None:
        reviews_read = reviews.select_columns([f for f in fields if f in reviews.column_names])
    else:
        reviews_read = reviews
    return reviews.select([i for i, row in enumerate(reviews_read.to_list()) if keep(row)])


def _is_original(row: dict) -> bool:
    return perturbation_kind(row) is None


def _is_human_original(row: dict) -> bool:
    return row["source"] == HUMAN_SOURCE and perturbation_kind(row) is None


#: The most reviews one scoring task of :func:`score_in_processes` takes: a submission of 5,000 is two tasks, so
#: that the processes share even a run of one submission evenly.
TASK_REVIEWS = 2500
#: What the tasks of the processes :func:`_fork_map` forks read: they inherit it, nothing is sent to them.
_forked: object = None


def _can_fork(processes: int) -> bool:
    return processes >= 2 and "fork" in multiprocessing.get_all_start_methods()


def _fork_map(function: Callable, tasks: Sequence, processes: int, shared: object) -> Iterator:
    """``function(task)`` of every task, in order, in ``processes`` processes forked from this one once for all
    tasks, which read ``shared`` (as :data:`_forked`) from the memory they share with this one; only the results
    are sent back. The processes end as soon as the last result is taken, not when the caller lets go of the
    iterator; one that dies (killed, out of memory) stops it with an error rather than a wait for ever."""
    global _forked
    _forked = shared
    gc.collect()
    release_freed_memory()  # a forked process starts with all this one holds: not what it freed
    gc.freeze()  # nor copies of it: a collection in a process would write to every object it inherited
    pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"))

    def finish() -> None:  # once or twice: the second time does nothing
        global _forked
        pool.shutdown(cancel_futures=True)  # after an error, or a caller that stops early: no task left to run
        gc.unfreeze()
        _forked = None

    try:
        results = pool.map(function, tasks)
        for number in range(len(tasks)):
            try:
                result = next(results)
            except BrokenProcessPool:
                raise RuntimeError("a worker process stopped without a result (killed, or out of memory?)") from None
            if number == len(tasks) - 1:
                finish()
            yield result
    finally:
        finish()


def score_in_processes(review_sets: Sequence[tuple[Dataset, str]], workers: int | None = None,
                       keep_texts: bool = True, progress: bool = False,
                       labels: Sequence[str] | None = None) -> Iterator[ScoredReviews]:
    """Each ``(reviews, scale)`` parsed and scored (:meth:`ScoredReviews.score`), in order, their texts dropped
    unless ``keep_texts`` (:meth:`ScoredReviews.without_texts`: a leaderboard reads texts again only with a judge).

    The reviews of all sets are cut into tasks of at most :data:`TASK_REVIEWS` that ``workers`` processes
    (default: the CPU count), forked once for all of them (:func:`_fork_map`), score one after the other, each
    task in its process alone; a set is given as soon as its tasks are done, so that the caller works on it
    while the processes score the next. The same scores as one call of :meth:`ScoredReviews.score` a set: every
    review is parsed and scored on its own. Where processes cannot be forked, or one is enough, each set is
    scored here with ``workers``. With ``progress``, the wait for each set is a stage of its own, named by
    ``labels``."""
    tasks = [(number, start, min(start + TASK_REVIEWS, len(reviews)))
             for number, (reviews, _) in enumerate(review_sets) for start in range(0, len(reviews), TASK_REVIEWS)]
    processes = min(workers or os.cpu_count() or 1, len(tasks))
    if not _can_fork(processes):
        for reviews, scale in review_sets:
            scored = ScoredReviews.score(reviews, scale, workers=workers, progress=progress)
            yield scored if keep_texts else scored.without_texts()
        return
    done = _fork_map(_score_task, tasks, processes, (review_sets, keep_texts))
    for number, (reviews, scale) in enumerate(review_sets):
        # A stage of its own: the caller's stages (a bootstrap, a judge's requests) come between two sets.
        bar = progress_bar(desc=" ".join(["parse and score", *(labels or ())[number:number + 1]]),
                           total=len(reviews), unit="review", enabled=progress)
        parts = []
        try:
            for _ in range(-(-len(reviews) // TASK_REVIEWS)):
                parts.append(next(done))
                bar.update(len(parts[-1]))
        finally:
            bar.close()
        if not parts:  # no review: nothing to send to a process
            scored = ScoredReviews.score(reviews, scale, workers=1)
            parts = [scored if keep_texts else scored.without_texts()]
        yield functools.reduce(ScoredReviews.concat, parts)


def _score_task(task: tuple[int, int, int]) -> ScoredReviews:
    number, start, stop = task
    review_sets, keep_texts = _forked
    reviews, scale = review_sets[number]
    scored = ScoredReviews.score(reviews.select(range(start, stop)), scale, workers=1)
    return scored if keep_texts else scored.without_texts()


def _perturbation_details(submission: Submission, judge: "Judge | None") -> tuple[dict, list[tuple[str, dict]]]:
    """Robustness verdicts (and, with a judge, counterfactual ATEs) of a submission's perturbed
    records against its originals, and the result metrics they give when the submission has a
    single reviewer (model and prompt): ``robustness_<score>_<edit>`` (mean change, perturbed
    minus original) and ``ate_<difference>_{critical,neutral}``, ``ate_ranking_score``."""
    from praib.metrics.perturbation.robustness import robustness_report
    from praib.metrics.perturbation.treatment import CRITICAL, NEUTRAL, counterfactual_effects

    parsed = parse_reviews(submission.reviews, scale=submission.scale)
    originals = select_rows(parsed, lambda row: perturbation_kind(row) is None)
    perturbed = select_rows(parsed, lambda row: perturbation_kind(row) is not None)
    robustness_result = robustness_report(originals, perturbed)
    details = {"robustness": robustness_result.to_dict()}
    metrics: list[tuple[str, dict]] = []
    reviewers = robustness_result.reviewers
    robustness, critical, neutral = (BY_NAME[name] for name in ("robustness_{score}_{edit}", "ate_{difference}_critical",
                                                               "ate_{difference}_neutral"))
    if len(reviewers) == 1:
        for edit, result in next(iter(reviewers.values()))["perturbations"].items():
            for score, entry in result["scores"].items():
                metrics.append((robustness.named(score=score, edit=edit), {"value": entry["mean_difference"]}))
    counterfactual = select_rows(perturbed,
                                 lambda row: row["perturbation"]["category"] in (CRITICAL, NEUTRAL))
    if judge is not None and len(counterfactual):
        effects_result = counterfactual_effects(originals, counterfactual, judge)
        details["treatment_effects"] = effects_result.to_dict()
        effects = effects_result.reviewers
        if len(effects) == 1:
            entry = next(iter(effects.values()))
            for name, effect in entry["differences"].items():
                metrics.append((critical.named(difference=name), {"value": effect["ate_critical"]}))
                metrics.append((neutral.named(difference=name), {"value": effect["ate_neutral"]}))
            metrics.append(("ate_ranking_score", {"value": entry["ranking_score"]}))
    return details, metrics


def _judged_rows(result: EvaluationResult) -> dict[str, dict]:
    group = next(g for g in result.groups if not g.is_reference)
    human_group = result.reference
    out = {}
    for name in judged_metrics():
        value = group.value(name)
        if value is None:
            continue
        metric = BY_NAME[name]
        human_value = (human_group.value(name) if metric.distance == DIFFERENCE and human_group is not None
                       else None)
        distance = (abs(value - human_value) if human_value is not None
                    else 1.0 - value if metric.distance == SHORTFALL else None)
        out[name] = {"value": value, "ci_low": None, "ci_high": None, "distance": distance,
                     "human_value": human_value}
        # E.g. PRAIB Table 1's P(+|+) and P(+|-) with the math engagement: how often the submission
        # engages with the maths of papers whose human reviews do / do not. No human value, so no distance.
        for part in (m for m in METRICS if m.reported_with == name):
            part_value = group.value(part.name)
            if part_value is not None:
                out[part.name] = {"value": part_value, "ci_low": None, "ci_high": None, "distance": None,
                                  "human_value": None}
    return out


def mark_closest(rows: list[dict]) -> None:
    """Mark, per metric and venue, the submission rows nearest to the human reference (ties all marked)."""
    best: dict[tuple, float] = {}
    for row in rows:
        if row["submission"] != HUMAN_SOURCE and row["distance_to_human"] is not None:
            key = (row["metric"], row["venue"])
            best[key] = min(best.get(key, np.inf), row["distance_to_human"])
    for row in rows:
        row["closest_to_human"] = (row["submission"] != HUMAN_SOURCE and row["distance_to_human"] is not None
                                   and row["distance_to_human"] == best[(row["metric"], row["venue"])])


def _refuse_unscorable(submissions: Sequence[Submission]) -> None:
    """A submission without a review of an original paper would have no result row: refuse it rather
    than leave it out of the leaderboard."""
    for submission in submissions:
        edits = submission.reviews["perturbation"]
        if all(edit is not None for edit in edits):
            raise ValueError(f"{submission.source}: no review of an original paper to score"
                             + (f" (its {len(edits)} reviews are all of perturbed papers)" if edits else ""))


@dataclass
class ScoredRun:
    """A scored leaderboard run: the results rows (``RESULT_FEATURES``), each submission's
    :func:`praib.evaluation.evaluate.evaluate_reviews` details by name, the per-review tables the
    bootstrap drew from (the human reference's, and each submission's original records by name) and its
    draws by (side, venue) (the human reference's under ``"human"``), on which the paired comparisons
    build (:func:`praib.leaderboard.compare.compare_run`)."""

    rows: list[dict]
    details: dict[str, dict]
    human: ReviewTable
    tables: dict[str, ReviewTable]
    draws: dict[tuple[str, str], SliceDraws]
    n_bootstrap: int
    seed: int
    reference: "ScoredReference | None" = None


@dataclass
class ScoredReference:
    """The human reference scored once for any number of runs over it (:func:`score_reference`): its
    original human reviews, parsed and scored per scale (its venue scale for the bootstrap table, another
    when a submission asks for it, :meth:`on_scale`), its table, its result rows per venue and the draws
    behind them, with the ``n_bootstrap`` and ``seed`` they were drawn with; ``texts``: whether the scored
    reviews keep their texts (a judge reads them; without one they are dropped once scored)."""

    reviews: Dataset
    scored: dict[str, ScoredReviews]
    table: ReviewTable
    venues: list[str]
    rows: list[dict]
    draws: dict[tuple[str, str], SliceDraws]
    n_bootstrap: int
    seed: int
    texts: bool = True

    def on_scale(self, scale: str, workers: int | None = None, progress: bool = False) -> ScoredReviews:
        """The reviews parsed and scored on ``scale``, the first time it is asked for."""
        if scale not in self.scored:
            self.scored[scale] = next(score_in_processes([(self.reviews, scale)], workers, self.texts, progress))
        return self.scored[scale]

    def values(self) -> dict[tuple[str, str], float | None]:
        """The reference's value of each metric on each venue."""
        return {(row["metric"], row["venue"]): row["value"] for row in self.rows}


def score_reference(reference: Dataset, n_bootstrap: int = 1000, seed: int = 0, workers: int | None = None,
                    progress: bool = False, keep_texts: bool = True) -> ScoredReference:
    """The human reviews of ``reference`` (source ``human``, original papers) scored (in ``workers`` processes,
    :func:`score_in_processes`; their texts dropped unless ``keep_texts``: a judge needs them), with their result
    rows per venue and their bootstrap draws, for :func:`score_run` to take as they are."""
    human_reviews = _human_originals(reference)
    scored = next(score_in_processes([(human_reviews, "venue")], workers, keep_texts, progress, ["human reference"]))
    return _reference_of(human_reviews, scored, n_bootstrap, seed, progress, keep_texts)


def _human_originals(reference: Dataset) -> Dataset:
    human_reviews = select_rows(reference, _is_human_original, fields=("source", "perturbation"))
    if not len(human_reviews):
        raise ValueError("the reference holds no human review (source 'human')")
    return human_reviews


def _reference_of(human_reviews: Dataset, scored: ScoredReviews, n_bootstrap: int, seed: int, progress: bool,
                  keep_texts: bool) -> ScoredReference:
    """The scored reference of these human reviews, scored on the venue scale: its table, rows and draws."""
    human = ReviewTable.from_scored(scored)
    venues = [ALL_VENUES, *sorted(set(human.venue), key=str)]
    rows: list[dict] = []
    draws: dict[tuple[str, str], SliceDraws] = {}
    found = sides_metrics({HUMAN_SOURCE: None}, human, venues, n_bootstrap, seed, progress,
                          "human reference bootstrap")
    for venue in venues:
        metrics, n_papers, n_reviews, draws[(HUMAN_SOURCE, venue)] = found[(HUMAN_SOURCE, venue)]
        for metric, m in metrics.items():
            rows.append(_row(HUMAN_SOURCE, HUMAN_SOURCE, metric, venue, m, n_papers, n_reviews, m["value"], None))
    return ScoredReference(human_reviews, {"venue": scored}, human, venues, rows, draws, n_bootstrap, seed,
                           keep_texts)


def score_submissions(submissions: Sequence[Submission], reference: "Dataset | ScoredReference",
                      n_bootstrap: int = 1000, seed: int = 0, judge: "Judge | None" = None,
                      workers: int | None = None, progress: bool = False) -> tuple[list[dict], dict[str, dict]]:
    """The results rows (``RESULT_FEATURES``) of the human reference and every submission, and the
    :func:`praib.evaluation.evaluate.evaluate_reviews` details of each submission by name (:func:`score_run`)."""
    scored = score_run(submissions, reference, n_bootstrap, seed, judge, workers, progress)
    return scored.rows, scored.details


def score_run(submissions: Sequence[Submission], reference: "Dataset | ScoredReference", n_bootstrap: int = 1000,
              seed: int = 0, judge: "Judge | None" = None, workers: int | None = None,
              progress: bool = False) -> ScoredRun:
    """Score the human reference (unless given scored, :func:`score_reference`, with the same ``n_bootstrap``
    and ``seed``) and every submission: the reviews of all parsed and scored once, in ``workers`` processes
    (:func:`score_in_processes`), their texts dropped once scored unless a ``judge`` reads them; each
    submission's details computed here as its scores come back, while the processes score the next; then the
    bootstrap of all in one pass (:func:`sides_metrics`). With ``progress``, each stage (the scoring, the
    bootstrap, the judge's requests) shows its own."""
    names = [s.name for s in submissions]
    if len(set(names)) != len(names) or HUMAN_SOURCE in names:
        raise ValueError(f"submission names must be distinct and not '{HUMAN_SOURCE}': {', '.join(names)}")
    _refuse_unscorable(submissions)
    keep_texts = judge is not None
    scales = list(dict.fromkeys(s.scale for s in submissions))
    if not isinstance(reference, ScoredReference):
        # The reference's reviews go first into the processes that score the submissions': its bootstrap is
        # drawn here while they score the next.
        human_reviews = _human_originals(reference)
        reference_sets = [(human_reviews, scale) for scale in ("venue", *(s for s in scales if s != "venue"))]
    elif (reference.n_bootstrap, reference.seed) != (n_bootstrap, seed):
        raise ValueError(f"the reference was drawn with n_bootstrap {reference.n_bootstrap} and seed "
                         f"{reference.seed}, not {n_bootstrap} and {seed}")
    elif judge is not None and not reference.texts:
        raise ValueError("the reference was scored without its texts (score_reference(keep_texts=False)); "
                         "a judge needs them")
    else:
        reference_sets = [(reference.reviews, scale) for scale in scales if scale not in reference.scored]
    # The reference is parsed and scored once per scale the submissions use, each submission once:
    # evaluate_reviews takes them as they are.
    originals = [select_rows(s.reviews, _is_original, fields=("perturbation",)) for s in submissions]
    scored_sets = score_in_processes([*reference_sets, *((reviews, s.scale) for s, reviews in
                                                         zip(submissions, originals))], workers, keep_texts, progress,
                                     ["human reference"] * len(reference_sets) + names)
    if not isinstance(reference, ScoredReference):
        reference = _reference_of(human_reviews, next(scored_sets), n_bootstrap, seed, progress, keep_texts)
        reference_sets = reference_sets[1:]
    for _, scale in reference_sets:
        reference.scored[scale] = next(scored_sets)
    human, venues = reference.table, reference.venues
    rows = [dict(row) for row in reference.rows]
    human_values = reference.values()
    draws = dict(reference.draws)
    scored = [_score_submission(submission, reviews, scored_reviews, reference, judge, progress)
              for submission, reviews, scored_reviews in zip(submissions, originals, scored_sets)]
    tables = {submission.name: one.table for submission, one in zip(submissions, scored)}
    found = sides_metrics(tables, human, venues, n_bootstrap, seed, progress, "submissions bootstrap",
                          workers or os.cpu_count() or 1)
    details: dict[str, dict] = {}
    for submission, one in zip(submissions, scored):
        model_name = submission.manifest.get("model") or submission.name
        details[submission.name] = one.details
        for venue in venues:
            metrics, n_papers, n_reviews, draws[(submission.name, venue)] = found[(submission.name, venue)]
            if not n_reviews:
                continue
            for metric, m in metrics.items():
                human_value = human_values.get((metric, venue), 0.0 if m["distance"] is not None else None)
                distance = m["distance"]
                if distance is None and m["value"] is not None and human_value is not None:
                    distance = abs(m["value"] - human_value)
                rows.append(_row(submission.name, model_name, metric, venue, m, n_papers, n_reviews,
                                 human_value, distance))
        n_papers = len(set(one.table.paper_id.tolist()))
        for metric, m in one.judged.items():
            rows.append(_row(submission.name, model_name, metric, ALL_VENUES, m, n_papers, len(one.table),
                             m["human_value"], m["distance"]))
        for metric, m in one.perturbation_metrics:
            rows.append(_row(submission.name, model_name, metric, ALL_VENUES,
                             {"value": _finite(m["value"]), "ci_low": None, "ci_high": None},
                             n_papers, one.n_perturbed, None, None))
    mark_closest(rows)
    return ScoredRun(rows, details, human, tables, draws, n_bootstrap, seed, reference)


@dataclass
class _ScoredSubmission:
    """What a run keeps of one submission once it is scored (:func:`_score_submission`): its original records'
    table, its details, its judged metrics (with a judge) and the metrics of its perturbed records."""

    table: ReviewTable
    details: dict
    judged: dict[str, dict]
    perturbation_metrics: list[tuple[str, dict]]
    n_perturbed: int


def _score_submission(submission: Submission, originals: Dataset, scored: ScoredReviews, reference: ScoredReference,
                      judge: "Judge | None", progress: bool) -> _ScoredSubmission:
    """What a run keeps of a submission whose original records (``originals``) are ``scored``: their table, the
    details (:func:`praib.evaluation.evaluate.evaluate_reviews` against the reference scored on the submission's
    scale) and its perturbed records' robustness (and, with a judge, treatment effects)."""
    result = evaluate_reviews(scored, reference.on_scale(submission.scale), group_by=("source",),
                              scale=submission.scale, judge=judge, progress=progress)
    details = result.to_dict()
    perturbation_metrics: list[tuple[str, dict]] = []
    if len(originals) < len(submission.reviews):
        extra, perturbation_metrics = _perturbation_details(submission, judge)
        details.update(extra)
    return _ScoredSubmission(ReviewTable.from_scored(scored), details,
                             _judged_rows(result) if judge is not None else {}, perturbation_metrics,
                             len(submission.reviews) - len(originals))


def _row(submission, model, metric, venue, m, n_papers, n_reviews, human_value, distance) -> dict:
    return {"submission": submission, "model": model, "metric": metric, "venue": venue, "value": m["value"],
            "ci_low": m["ci_low"], "ci_high": m["ci_high"], "n_papers": int(n_papers), "n_reviews": int(n_reviews),
            "human_value": human_value, "distance_to_human": distance, "closest_to_human": False}


def _write_json(path: Path, data) -> None:
    write_text_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def run_leaderboard(submissions: Sequence[Submission], reference: Dataset, output: str | Path,
                    reference_label: str, n_bootstrap: int = 1000, seed: int = 0, judge: "Judge | None" = None,
                    workers: int | None = None, progress: bool = False,
                    cache_dir: str | Path | None = None, fdr: float = 0.05) -> Dataset:
    """Score every submission (:func:`score_run`), compare them pair by pair
    (:func:`praib.leaderboard.compare.compare_run`, verdicts at false discovery rate ``fdr``) and write the
    results directory: ``results.parquet`` / ``results.jsonl``, ``comparisons.parquet``, ``ranks.parquet``,
    ``manifests/``, ``details/``, ``eras.json`` (when the human reference spans both eras) and ``run.json``,
    in place of those an earlier run wrote there (:func:`praib.records.atomic.replace_folder`, which keeps
    every other file). Returns the results table. With a judge, ``run.json`` records its validations
    (:func:`praib.evaluation.judge_validity.judge_validations`): those stored beside the call cache in
    ``cache_dir``, else those a submission's manifest carries."""
    import pyarrow.parquet as pq

    from praib.leaderboard.compare import compare_run, write_comparison

    scored = score_run(submissions, reference, n_bootstrap, seed, judge, workers, progress)
    rows, details = scored.rows, scored.details
    comparison = compare_run(scored, fdr)
    results = Dataset.from_list(rows, features=RESULT_FEATURES)
    eras = reference_eras(reference, scored.reference, workers)
    with replace_folder(output) as folder:
        pq.write_table(results.data.table, folder / "results.parquet")
        write_comparison(comparison, folder)
        (folder / "results.jsonl").write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                                              encoding="utf-8")
        for submission in submissions:
            _write_json(folder / "manifests" / f"{submission.name}.json", submission.manifest)
            _write_json(folder / "details" / f"{submission.name}.json", details[submission.name])
        if eras is not None:
            _write_json(folder / "eras.json", eras)
        _write_json(folder / "run.json", {
            "reference": reference_label,
            "submissions": {s.name: input_label(s.source) for s in submissions},
            "n_bootstrap": n_bootstrap,
            "seed": seed,
            "fdr": fdr,
            "judge": judge.describe() if judge is not None else None,
            "judge_validation": judge_validations(judge.describe(), cache_dir, carried_validations(
                {s.name: s.manifest for s in submissions}))
            if judge is not None else None,
            "praib_version": __version__,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        })
    return results


def reference_eras(reference: Dataset, scored: ScoredReference, workers: int | None = None) -> dict | None:
    """The era analysis (:func:`praib.leaderboard.eras.era_analysis`) of the human reviews of ``reference`` when
    they span both eras, else None: from their scores in ``scored`` (its reference, scored for the run) when it
    holds them all (the reference has no perturbed human record), else scored afresh."""
    from praib.leaderboard.eras import era_analysis, spans_both_eras

    human_reviews = select_rows(reference, lambda row: row["source"] == HUMAN_SOURCE, fields=("source",))
    if not spans_both_eras(human_reviews):
        return None
    scored_human = scored.scored["venue"]
    return era_analysis(scored_human if len(scored_human) == len(human_reviews) else human_reviews, workers=workers)


def push_results(directory: str | Path, repo_id: str, token: str | None = None, private: bool = False) -> None:
    """Publish a results directory as a Hub dataset: the results table through
    ``Dataset.push_to_hub`` and the JSON side files (manifests, details, eras, run settings)
    uploaded beside it."""
    from huggingface_hub import HfApi

    directory = Path(directory)
    results_file = directory / "results.parquet"
    if not results_file.is_file():
        raise FileNotFoundError(f"{directory}: no results.parquet (write it with `praib leaderboard run`)")
    read_parquet_rows(results_file)  # a damaged file is named here, before anything is sent
    results = Dataset.from_parquet(str(results_file), features=RESULT_FEATURES)
    results.push_to_hub(repo_id, token=token, private=private)
    HfApi(token=token).upload_folder(repo_id=repo_id, repo_type="dataset", folder_path=str(directory),
                                     allow_patterns=["*.json", "manifests/*.json", "details/*.json"],
                                     ignore_patterns=[RECORD],
                                     commit_message="praib leaderboard: manifests, details and run settings")
