"""Which submission is closer to the human reviewers, and would the answer survive another sample of papers:
paired comparisons of leaderboard submissions, rank intervals and the papers a study needs.

Paired differences
    For submissions A and B, a metric and a slice (a venue, or ``"all"``), on the papers both reviewed in
    the slice (and the human reference's reviews of those papers): ``difference = distance_to_human(A) -
    distance_to_human(B)``, negative where A is closer. Each distance is the leaderboard's
    (:mod:`praib.leaderboard.run`, by the rule :data:`praib.metrics.registry.METRICS` gives the metric).
    The paired cluster bootstrap resamples the shared papers with replacement; each drawn paper brings all
    its reviews, human and of both submissions, and both submissions' values, the human values and both
    distances are recomputed on that same draw (means through per-paper sums, total variations, alpha with
    the model added: :func:`praib.leaderboard.run.slice_draws`). Draw b is row b of
    :func:`praib.leaderboard.run.bootstrap_weights` over the papers sorted by id, so the draws are seeded
    and do not depend on the order of the submissions.

    ``ci_low``, ``ci_high``: the 2.5th and 97.5th percentiles of the draws' differences, re-centred so that
    their median is the observed difference (:func:`recentred`: the bootstrap of a distance is biased, and
    the plain percentile interval too conservative). ``p_value``: twice the smaller share of those draws on
    either side of 0 (:func:`bootstrap_p_value`). ``p_adjusted``: Benjamini-Hochberg over every pair, metric
    and slice of the run; ``verdict``: ``A closer`` or ``B closer`` where ``p_adjusted <= fdr``, else ``no
    detectable difference``. ``standard_error``: the standard deviation of the draws' differences.
    ``min_detectable_difference`` = (z_0.975 + z_0.8) x SE: the true difference a two-sided test at 0.05
    detects with 80% power on these papers. ``papers_needed`` = n x (min_detectable_difference /
    |difference|)^2: the shared papers needed to detect the observed difference with 80% power, the standard
    error scaled as 1/sqrt(n) (a normal approximation).

    The p-value tests what a verdict claims, that A and B are not equally far from human. A paired
    permutation test (each paper's two submissions' reviews swapped at random) tests that A and B review
    alike: exact for two submissions of one process, it found two that were equally close in different ways
    (one rating above the panel, one as far below) different in up to a quarter of simulated runs, so it is
    not used. Where both distances are near 0 a distance folds and the test is conservative (the figures:
    ``benchmarks/comparison_calibration.py``).

Rank intervals
    Every submission of a slice on the same draws over the slice's papers (the human reference's and every
    submission's): in each draw the submissions are ranked by distance (rank 1 closest to human; ties share
    the better rank); ``rank`` is that of the point values, ``rank_low`` and ``rank_high`` the 2.5% and
    97.5% quantiles of the draws' ranks.

One set of draws
    A slice's rank draws are those of the run's own intervals (the same seed over the same sorted papers),
    and a pair whose shared papers are all the slice's papers (every submission reviewed the reference's
    papers: the usual benchmark) takes its differences from them: per slice, each submission's distances
    are drawn once and every pair is a difference of two arrays. Only a pair that shares fewer papers is
    drawn again, over its own papers (once per distinct set of shared papers). Whatever is drawn here (a
    runner's stored tables, pairs over fewer papers) is drawn for all the submissions that need the same papers
    in one pass (:func:`praib.leaderboard.run.slices_draws`), giving the draws each would get alone.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from itertools import combinations
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Sequence

import numpy as np
from datasets import Dataset, Features, Value

from praib.leaderboard.report import (LeaderboardResults, ReportError, _finite as _finite_number, format_number,
                                      format_p, load_results)
from praib.leaderboard.run import (ALL_VENUES, ReviewTable, ScoredRun, SliceDraws, _interval, _Slice,
                                   bootstrap_weights, score_run, slices_draws)
from praib.leaderboard.submission import Submission
from praib.metrics.perturbation.stats import benjamini_hochberg
from praib.metrics.registry import BY_NAME, DIFFERENCE, METRICS, difference_digits
from praib.records import HUMAN_SOURCE, RecordError, read_parquet_rows

if TYPE_CHECKING:
    import pyarrow as pa

#: The false discovery rate of the verdicts unless told otherwise.
DEFAULT_FDR = 0.05
#: z_0.975 + z_0.8: a two-sided test at 0.05 with 80% power.
POWER_Z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
A_CLOSER, B_CLOSER, NO_DIFFERENCE = "A closer", "B closer", "no detectable difference"

#: The files a run writes beside its results (:data:`praib.leaderboard.run.RESULT_FILES`).
COMPARISONS_FILE, RANKS_FILE = "comparisons.parquet", "ranks.parquet"
COMPARISON_FEATURES = Features({
    "metric": Value("string"),
    "venue": Value("string"),
    "submission_a": Value("string"),
    "submission_b": Value("string"),
    "n_papers": Value("int64"),
    "difference": Value("float64"),
    "ci_low": Value("float64"),
    "ci_high": Value("float64"),
    "p_value": Value("float64"),
    "p_adjusted": Value("float64"),
    "verdict": Value("string"),
    "standard_error": Value("float64"),
    "min_detectable_difference": Value("float64"),
    "papers_needed": Value("int64"),
})
RANK_FEATURES = Features({
    "submission": Value("string"),
    "metric": Value("string"),
    "venue": Value("string"),
    "n_papers": Value("int64"),
    "distance_to_human": Value("float64"),
    "rank": Value("int64"),
    "rank_low": Value("int64"),
    "rank_high": Value("int64"),
})


@dataclass(frozen=True)
class PairedDifference:
    """One row of ``comparisons.parquet``: A against B on one metric and slice (see the module)."""

    metric: str
    venue: str
    submission_a: str
    submission_b: str
    n_papers: int
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None
    verdict: str
    standard_error: float | None
    min_detectable_difference: float | None
    papers_needed: int | None

    def row(self) -> dict:
        return asdict(self)

    def closer(self) -> str | None:
        """The submission the verdict finds closer to human, None without a detectable difference."""
        return {A_CLOSER: self.submission_a, B_CLOSER: self.submission_b}.get(self.verdict)

    def swapped(self) -> "PairedDifference":
        """The same comparison as B against A."""
        def negated(value):
            return None if value is None else -value

        return replace(self, submission_a=self.submission_b, submission_b=self.submission_a,
                       difference=negated(self.difference), ci_low=negated(self.ci_high),
                       ci_high=negated(self.ci_low),
                       verdict={A_CLOSER: B_CLOSER, B_CLOSER: A_CLOSER}.get(self.verdict, self.verdict))

    def papers_for(self, difference: float) -> int | None:
        """The shared papers needed to detect a true ``difference`` with 80% power at 0.05 (two-sided),
        the standard error scaled as 1/sqrt(n); None without a standard error."""
        if self.standard_error is None or not self.n_papers:
            return None
        return papers_needed(self.n_papers, self.standard_error, difference)


@dataclass(frozen=True)
class RankInterval:
    """One row of ``ranks.parquet``: a submission's rank on one metric and slice and its 95% interval."""

    submission: str
    metric: str
    venue: str
    n_papers: int
    distance_to_human: float | None
    rank: int | None
    rank_low: int | None
    rank_high: int | None

    def row(self) -> dict:
        return asdict(self)


@dataclass
class Comparison:
    """Every paired comparison and rank interval of a run (:func:`compare_tables`, :func:`load_comparison`)."""

    pairs: list[PairedDifference]
    ranks: list[RankInterval]
    fdr: float = DEFAULT_FDR
    n_bootstrap: int | None = None
    seed: int | None = None
    #: How many comparisons the adjustment ran over: all of the run's, also after :meth:`select`.
    n_adjusted: int | None = None
    _index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._index = {(p.metric, p.venue, p.submission_a, p.submission_b): p for p in self.pairs}
        if self.n_adjusted is None:
            self.n_adjusted = len(self.pairs)

    def comparison_rows(self) -> list[dict]:
        return [pair.row() for pair in self.pairs]

    def rank_rows(self) -> list[dict]:
        return [rank.row() for rank in self.ranks]

    def to_dict(self) -> dict:
        return {"fdr": self.fdr, "n_bootstrap": self.n_bootstrap, "seed": self.seed,
                "comparisons": self.comparison_rows(), "ranks": self.rank_rows()}

    def select(self, metric: str | None = None, venue: str | None = None) -> "Comparison":
        """The comparisons and ranks of one metric and/or slice."""
        def kept(item) -> bool:
            return (metric is None or item.metric == metric) and (venue is None or item.venue == venue)

        return Comparison([p for p in self.pairs if kept(p)], [r for r in self.ranks if kept(r)], self.fdr,
                          self.n_bootstrap, self.seed, self.n_adjusted)

    def between(self, a: str, b: str, metric: str, venue: str = ALL_VENUES) -> PairedDifference | None:
        """A against B (the difference negative where A is closer), whichever order the run stored them in."""
        found = self._index.get((metric, venue, a, b))
        if found is not None:
            return found
        found = self._index.get((metric, venue, b, a))
        return None if found is None else found.swapped()

    def metrics(self) -> list[str]:
        return list(dict.fromkeys([p.metric for p in self.pairs] + [r.metric for r in self.ranks]))

    def unresolved(self) -> list[PairedDifference]:
        """The comparisons whose every draw fell on one side of 0 (the smallest p-value the draws can give,
        2/(B+1)) but that the adjustment over all comparisons left undetected: more draws would resolve them."""
        if not self.n_bootstrap:
            return []
        floor = 2 / (self.n_bootstrap + 1) * (1 + 1e-9)
        return [p for p in self.pairs if p.p_value is not None and p.p_value <= floor and p.verdict == NO_DIFFERENCE]

    def resolution_note(self) -> str | None:
        """What to do about :meth:`unresolved` comparisons; None where there is none."""
        unresolved = self.unresolved()
        if not unresolved:
            return None
        return (f"{len(unresolved)} comparison(s) had every one of the {self.n_bootstrap} draws on one side of 0, "
                f"the smallest p-value {self.n_bootstrap} draws can give ({2 / (self.n_bootstrap + 1):.2g}), yet are "
                f"not detected after adjusting over the {self.n_adjusted} comparisons: rerun with more draws to "
                "resolve them.")

    def venues(self) -> list[str]:
        return list(dict.fromkeys([p.venue for p in self.pairs] + [r.venue for r in self.ranks]))


# ----------------------------------------------------------------------------- statistics


def bootstrap_p_value(draws: np.ndarray) -> float | None:
    """Two-sided bootstrap p-value of ``difference == 0`` from the draws of the difference: twice the smaller
    share of draws on either side of 0, a draw at 0 counting on both sides, with one added to each count and
    to the number of draws (so the smallest p-value of B draws is 2/(B+1), never 0), at most 1. It is the
    smallest level at which the percentile interval excludes 0. None without a defined draw.

    A draw within rounding of 0 (1e-12 of the largest draw) is at 0: a metric on a discrete scale (a total
    variation of counts) lands on 0 exactly in some draws, and the last bit of a sum must not pick its side."""
    draws = draws[np.isfinite(draws)]
    if not len(draws):
        return None
    tolerance = 1e-12 * max(1.0, float(np.max(np.abs(draws))))
    below, above = np.count_nonzero(draws <= tolerance), np.count_nonzero(draws >= -tolerance)
    return float(min(1.0, 2 * (min(below, above) + 1) / (len(draws) + 1)))


def papers_needed(n_papers: int, standard_error: float, difference: float) -> int | None:
    """n x ((z_0.975 + z_0.8) x SE / |difference|)^2, rounded up: the papers at which the standard error,
    scaled as 1/sqrt(n), lets a two-sided test at 0.05 detect ``difference`` with 80% power. None for a
    zero difference (none can be detected)."""
    if not difference or not math.isfinite(difference):
        return None
    return max(1, math.ceil(n_papers * (POWER_Z * standard_error / abs(difference)) ** 2))


def recentred(draws: np.ndarray, point: float) -> np.ndarray:
    """The defined draws of a difference shifted so that their median is the observed difference.

    A distance is an absolute value (or a total variation, a sum of them), and the bootstrap of a distance
    is biased towards larger values, most where the distance is small; so the draws of a difference of two
    distances lean towards zero from the observed difference, and the plain percentile interval and its
    p-value are conservative (in ``benchmarks/comparison_calibration.py``, at a nominal 5%: 1.7% false
    positives for total variation and 3.6% for alpha on 100 papers, 1.2% and 1.0% on 30; re-centred, 2.8%
    and 4.6%, 4.2% and 3.2%). Moving the draws' median onto the observed difference keeps their spread and
    shape and removes that median bias."""
    defined = draws[np.isfinite(draws)]
    if not len(defined):
        return defined
    median = np.median(defined)
    # Equal up to rounding (row 0 and the draws sum in different orders): no shift, so that a difference of
    # exactly zero in the draws stays zero rather than becoming 1e-16 on one side.
    return defined if math.isclose(point, median, rel_tol=1e-9, abs_tol=1e-12) else defined + (point - median)


def paired_difference(metric: str, venue: str, a: str, b: str, n_papers: int,
                      distance_a: np.ndarray, distance_b: np.ndarray) -> PairedDifference:
    """The comparison of A and B from their distances on the same draws (row 0: the point estimates), before
    the multiplicity adjustment (``p_adjusted`` None, no verdict yet): the interval and p-value are those of
    the draws re-centred on the observed difference (:func:`recentred`)."""
    draws = distance_a - distance_b
    point = _finite(draws[0])
    defined = draws[1:][np.isfinite(draws[1:])]
    if point is None or not len(defined):
        return PairedDifference(metric, venue, a, b, n_papers, point, None, None, None, None, NO_DIFFERENCE,
                                None, None, None)
    centred = recentred(defined, point)
    low, high = _interval(centred)
    se = float(np.std(defined, ddof=1)) if len(defined) > 1 else None
    return PairedDifference(metric, venue, a, b, n_papers, point, low, high, bootstrap_p_value(centred), None,
                            NO_DIFFERENCE, se, None if se is None else POWER_Z * se,
                            None if se is None else papers_needed(n_papers, se, point))


def adjust(pairs: list[PairedDifference], fdr: float) -> list[PairedDifference]:
    """``pairs`` with their Benjamini-Hochberg adjusted p-values (over all of them) and verdicts at ``fdr``:
    the closer submission is the one the observed difference favours (the re-centred draws' median is the
    observed difference, so a small p-value means they lie on its side of 0)."""
    adjusted = benjamini_hochberg([pair.p_value for pair in pairs])
    out = []
    for pair, p in zip(pairs, adjusted):
        verdict = NO_DIFFERENCE
        if p is not None and p <= fdr and pair.difference:
            verdict = A_CLOSER if pair.difference < 0 else B_CLOSER
        out.append(replace(pair, p_adjusted=p, verdict=verdict))
    return out


def rank_intervals(venue: str, n_papers: int, distances: dict[str, dict[str, np.ndarray]]) -> list[RankInterval]:
    """Each submission's rank per metric from its distances on common draws (row 0: the point estimates)."""
    names = list(distances)
    out = []
    for metric in next(iter(distances.values()), {}):
        stacked = np.vstack([distances[name][metric] for name in names])      # submissions x draws
        # Rank 1 + the number of submissions strictly closer: ties share the better rank; NaN is never closer.
        ranks = 1 + (stacked[None, :, :] < stacked[:, None, :]).sum(1)
        for i, name in enumerate(names):
            defined = np.isfinite(stacked[i, 1:])
            low = high = None
            if defined.any():
                low, high = (int(q) for q in np.quantile(ranks[i, 1:][defined], [0.025, 0.975],
                                                         method="inverted_cdf"))
            point = _finite(stacked[i, 0])
            out.append(RankInterval(name, metric, venue, n_papers, point,
                                    None if point is None else int(ranks[i, 0]), low, high))
    return out


def _finite(value) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


# ----------------------------------------------------------------------------- draws


def distances_of(series: dict[str, tuple[np.ndarray, np.ndarray | None]],
                 human_series: dict[str, tuple[np.ndarray, np.ndarray | None]]) -> dict[str, np.ndarray]:
    """Per metric, a submission's distance to human on each draw, from :func:`praib.leaderboard.run.slice_draws`
    of the submission and of the human reference on the same draws: a metric whose distance is to the human
    value (:data:`praib.metrics.registry.DIFFERENCE`) takes the human value of the same draw."""
    out = {}
    for metric, (value, distance) in series.items():
        if distance is None:
            assert BY_NAME[metric].distance == DIFFERENCE, metric
            distance = np.abs(value - human_series[metric][0])
        out[metric] = distance
    return out


class _Draws:
    """One set of draws over some papers of a slice, with each submission's distances on them: taken from the
    run's own draws (``drawn``, by side and venue) where those were over the same papers with the same seed,
    the others drawn together when first asked for (:meth:`draw`)."""

    def __init__(self, human: ReviewTable, tables: dict[str, ReviewTable], venue: str, papers: list,
                 n_bootstrap: int, seed: int, drawn: dict[tuple[str, str], SliceDraws]):
        self.human, self.tables, self.venue, self.papers = human, tables, venue, papers
        self.n_bootstrap, self.seed, self.drawn = n_bootstrap, seed, drawn
        self._weights: np.ndarray | None = None
        self._series: dict[str, dict[str, tuple[np.ndarray, np.ndarray | None]]] = {}
        self._distances: dict[str, dict[str, np.ndarray]] = {}

    def draw(self, names: Sequence[str]) -> None:
        """The series of the human reference and of the submissions ``names`` on these draws, those not in the
        run's own draws drawn in one pass (:func:`praib.leaderboard.run.slices_draws`)."""
        missing = []
        for name in (HUMAN_SOURCE, *names):
            known = self.drawn.get((name, self.venue))
            if name in self._series or name in missing:
                continue
            if known is not None and known.papers == self.papers:
                self._series[name] = known.series
            else:
                missing.append(name)
        if missing:
            if self._weights is None:
                self._weights = bootstrap_weights(len(self.papers), self.n_bootstrap, self.seed)
            pieces = [_Slice(None if name == HUMAN_SOURCE else self.tables[name], self.human, self.venue, self.papers)
                      for name in missing]
            self._series.update(zip(missing, slices_draws(pieces, self._weights)))

    def distances(self, name: str) -> dict[str, np.ndarray]:
        if name not in self._distances:
            self.draw([name])
            self._distances[name] = distances_of(self._series[name], self._series[HUMAN_SOURCE])
        return self._distances[name]


def _papers(table: ReviewTable, venue: str) -> set:
    return set(table.paper_id if venue == ALL_VENUES else table.paper_id[table.venue == venue])


def compare_run(scored: ScoredRun, fdr: float = DEFAULT_FDR) -> Comparison:
    """The comparisons of a scored run (:func:`praib.leaderboard.run.score_run`), on its own draws where the
    papers are the same (see the module)."""
    return compare_tables(scored.human, scored.tables, scored.n_bootstrap, scored.seed, fdr, scored.draws)


def compare_tables(human: ReviewTable, tables: dict[str, ReviewTable], n_bootstrap: int = 1000, seed: int = 0,
                   fdr: float = DEFAULT_FDR, drawn: dict[tuple[str, str], SliceDraws] | None = None) -> Comparison:
    """Every pair of submissions (``tables`` by name: their original records' tables), metric and slice
    compared, and every submission's rank intervals, against the ``human`` reference (see the module).
    ``drawn``: draws already made with this ``n_bootstrap`` and ``seed`` (:attr:`ScoredRun.draws`)."""
    drawn = drawn or {}
    venues = [ALL_VENUES, *sorted(set(human.venue), key=str)]
    order = {m.name: i for i, m in enumerate(METRICS)}
    pairs, ranks = [], []
    for venue in venues:
        reviewed = {name: _papers(tables[name], venue) for name in sorted(tables)}
        reviewed = {name: papers for name, papers in reviewed.items() if papers}
        if not reviewed:
            continue
        everything = sorted(set().union(_papers(human, venue), *reviewed.values()), key=str)
        common = _Draws(human, tables, venue, everything, n_bootstrap, seed, drawn)
        common.draw(list(reviewed))
        ranks += rank_intervals(venue, len(everything), {name: common.distances(name) for name in reviewed})
        shared_by_pair = {(a, b): tuple(sorted(reviewed[a] & reviewed[b], key=str))
                          for a, b in combinations(reviewed, 2)}
        by_papers: dict[tuple, _Draws] = {tuple(everything): common}
        for shared in dict.fromkeys(shared_by_pair.values()):
            if shared and shared not in by_papers:
                by_papers[shared] = _Draws(human, tables, venue, list(shared), n_bootstrap, seed, {})
                by_papers[shared].draw([name for pair, papers in shared_by_pair.items() if papers == shared
                                        for name in pair])
        for (a, b), shared in shared_by_pair.items():
            if not shared:
                continue
            draws = by_papers[shared]
            distance_a, distance_b = draws.distances(a), draws.distances(b)
            pairs += [paired_difference(metric, venue, a, b, len(shared), distance_a[metric], distance_b[metric])
                      for metric in distance_a]
    pairs.sort(key=lambda p: (order.get(p.metric, len(order)), venues.index(p.venue)))
    ranks.sort(key=lambda r: (order.get(r.metric, len(order)), venues.index(r.venue),
                              r.rank is None, r.rank or 0, r.submission))
    return Comparison(adjust(pairs, fdr), ranks, fdr, n_bootstrap, seed)


# ----------------------------------------------------------------------------- files


def comparison_tables(comparison: Comparison) -> dict[str, "pa.Table"]:
    """``comparisons.parquet`` and ``ranks.parquet`` by file name, as Arrow tables typed by
    :data:`COMPARISON_FEATURES` and :data:`RANK_FEATURES`."""
    import pyarrow as pa

    # Through pyarrow with the features' schema (which carries them for `datasets`): a run of one submission
    # has no pair, and datasets cannot build a table of no rows.
    return {name: pa.Table.from_pylist(rows, schema=features.arrow_schema)
            for name, rows, features in ((COMPARISONS_FILE, comparison.comparison_rows(), COMPARISON_FEATURES),
                                         (RANKS_FILE, comparison.rank_rows(), RANK_FEATURES))}


def write_comparison(comparison: Comparison, folder: Path) -> None:
    """``comparisons.parquet`` and ``ranks.parquet`` in ``folder`` (:func:`comparison_tables`)."""
    import pyarrow.parquet as pq

    for name, table in comparison_tables(comparison).items():
        pq.write_table(table, folder / name)


def _checked(path: Path, rows: list[dict], features: Features) -> list[dict]:
    """The rows of one of the files, each with every column of ``features`` and values of its type (a number
    that is not finite read as missing); anything else is a :class:`ReportError` naming the row."""
    checked = []
    for number, row in enumerate(rows, 1):
        where = f"{path}: row {number}"
        missing = [column for column in features if column not in row]
        if missing:
            raise ReportError(f"{where}: missing column(s) {', '.join(missing)}")
        out = {}
        for column in features:
            value, kind = row[column], features[column].dtype
            if kind == "float64":
                value = _finite_number(value, where, column)
            elif value is not None and (isinstance(value, bool) or not isinstance(value, int if kind == "int64"
                                                                                   else str)):
                expected = "an integer" if kind == "int64" else "text"
                raise ReportError(f"{where}: field '{column}': expected {expected}, found {value!r:.60}")
            out[column] = value
        checked.append(out)
    return checked


def read_comparison_rows(directory: Path) -> tuple[list[dict], list[dict]] | None:
    """The checked rows of a run folder's ``comparisons.parquet`` and ``ranks.parquet``; None where it has
    neither (a run from before comparisons)."""
    paths = (directory / COMPARISONS_FILE, directory / RANKS_FILE)
    present = [path.is_file() for path in paths]
    if not any(present):
        return None
    if not all(present):
        missing = paths[present.index(False)]
        raise ReportError(f"{missing}: missing, beside {paths[present.index(True)].name} (both are written by "
                          "`praib leaderboard run`)")
    try:
        return tuple(_checked(path, read_parquet_rows(path), features)
                     for path, features in zip(paths, (COMPARISON_FEATURES, RANK_FEATURES)))
    except RecordError as err:
        raise ReportError(str(err)) from None


def comparison_of(results: LeaderboardResults) -> Comparison:
    """The comparisons a loaded results folder holds (:func:`praib.leaderboard.report.load_results`)."""
    if results.comparisons is None:
        raise ReportError(f"{results.directory}: no {COMPARISONS_FILE} (`praib leaderboard run` writes it; this "
                          "run is from a version without comparisons: run it again)")
    run = results.run or {}
    return Comparison([PairedDifference(**row) for row in results.comparisons],
                      [RankInterval(**row) for row in results.ranks], run.get("fdr", DEFAULT_FDR),
                      run.get("n_bootstrap"), run.get("seed"))


def load_comparison(directory: str | Path) -> Comparison:
    """The comparisons and rank intervals a ``praib leaderboard run`` folder holds, with the run's settings."""
    return comparison_of(load_results(directory))


def compare_submissions(submissions: Sequence[Submission], reference: Dataset, n_bootstrap: int = 1000,
                        seed: int = 0, fdr: float = DEFAULT_FDR, workers: int | None = None) -> Comparison:
    """Score ``submissions`` against the human reviews of ``reference`` as ``praib leaderboard run`` does
    (:func:`praib.leaderboard.run.score_run`, no judge) and compare them: the comparisons a run would write,
    in memory."""
    return compare_run(score_run(submissions, reference, n_bootstrap, seed, workers=workers), fdr)


# ----------------------------------------------------------------------------- text


def _aligned(rows: list[list[str]], left: int) -> list[str]:
    """Rows of cells as aligned text, the first ``left`` columns to the left, the rest to the right."""
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) if c < left else cell.rjust(w) for c, (cell, w) in enumerate(zip(row, widths)))
            .rstrip() for row in rows]


def verdict_text(pair: PairedDifference) -> str:
    closer = pair.closer()
    return f"{closer} closer" if closer else pair.verdict


def format_comparison(comparison: Comparison) -> str:
    """The comparisons and rank intervals as two text tables, with how to read them."""
    lines = []
    if comparison.pairs:
        lines.append(f"Paired comparisons: difference = distance to human of A minus that of B (negative: A is "
                     f"closer), on the papers both reviewed; 95% paired cluster-bootstrap interval; verdicts at a "
                     f"false discovery rate of {comparison.fdr:g} (Benjamini-Hochberg over all "
                     f"{comparison.n_adjusted} comparisons of the run).")
        header = ["metric", "venue", "A", "B", "papers", "difference", "95% CI", "p", "p (BH)", "verdict",
                  "min. detectable", "papers needed"]
        rows = [header]
        for pair in comparison.pairs:
            digits = difference_digits(pair.metric)
            rows.append([pair.metric, pair.venue, pair.submission_a, pair.submission_b, str(pair.n_papers),
                         format_number(pair.difference, digits),
                         f"[{format_number(pair.ci_low, digits)}, {format_number(pair.ci_high, digits)}]",
                         format_p(pair.p_value), format_p(pair.p_adjusted), verdict_text(pair),
                         format_number(pair.min_detectable_difference, digits),
                         "–" if pair.papers_needed is None else str(pair.papers_needed)])
        lines += _aligned(rows, left=4)
        lines.append(PAPERS_NEEDED_NOTE)
        if comparison.resolution_note():
            lines.append("Note: " + comparison.resolution_note())
    else:
        lines.append("No pair to compare: the run has fewer than two submissions with reviews of the same papers.")
    lines += ["", "Rank intervals: rank 1 is the closest to human; the interval holds 95% of the ranks over the "
              "bootstrap draws (ties share the better rank)."]
    rows = [["metric", "venue", "rank", "submission", "distance", "95% interval", "papers"]]
    for rank in comparison.ranks:
        rows.append([rank.metric, rank.venue, "–" if rank.rank is None else str(rank.rank), rank.submission,
                     format_number(rank.distance_to_human, difference_digits(rank.metric)),
                     rank_interval_text(rank), str(rank.n_papers)])
    lines += _aligned(rows, left=2) if comparison.ranks else ["No rank: the run has no submission."]
    return "\n".join(lines) + "\n"


def rank_interval_text(rank: RankInterval) -> str:
    return "–" if rank.rank_low is None else f"{rank.rank_low}–{rank.rank_high}"


PAPERS_NEEDED_NOTE = ("min. detectable: the true difference a two-sided test at 0.05 detects with 80% power on "
                      "these papers, (z_0.975 + z_0.8) x the bootstrap standard error; papers needed: the shared "
                      "papers that would detect the observed difference with 80% power, the standard error scaled "
                      "as 1/sqrt(n): an approximation.")


def format_plan(comparison: Comparison, difference: float | None = None) -> str:
    """For every pair, metric and slice: the papers a study needs to detect ``difference`` (in the metric's
    own units of distance to human; by default the pair's observed difference) with 80% power at 0.05, from
    the run's standard errors."""
    target = (f"a difference of {difference:g} in distance to human (in each metric's own units)"
              if difference is not None else "each pair's observed difference in distance to human")
    lines = [f"Papers needed to detect {target} between two submissions, with 80% power in a two-sided test at "
             "0.05: n x ((z_0.975 + z_0.8) x SE / difference)^2, from each pair's paired-bootstrap standard error "
             "SE on its n shared papers, scaled as 1/sqrt(n): an approximation, as good as the run's papers are "
             "like the study's."]
    rows = [["metric", "venue", "A", "B", "papers now", "standard error", "min. detectable now", "difference",
             "papers needed"]]
    for pair in comparison.pairs:
        digits = difference_digits(pair.metric)
        wanted = pair.difference if difference is None else difference
        needed = pair.papers_for(wanted) if wanted is not None else None
        rows.append([pair.metric, pair.venue, pair.submission_a, pair.submission_b, str(pair.n_papers),
                     format_number(pair.standard_error, digits + 1),
                     format_number(pair.min_detectable_difference, digits), format_number(wanted, digits),
                     "–" if needed is None else str(needed)])
    lines += _aligned(rows, left=4) if comparison.pairs else ["No pair to plan from: the run compared none."]
    return "\n".join(lines) + "\n"
