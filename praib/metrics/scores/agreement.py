"""Agreement of reviewers' ratings: Krippendorff's alpha with the ordinal distance.

The units are papers and the raters are whoever reviewed them, so every paper has
its own number of ratings (Krippendorff's "missing data" case). With ``n_uc`` the
number of ratings of value ``c`` given to paper ``u``, ``m_u = sum_c n_uc`` and
only papers with ``m_u >= 2`` (pairable) taken into account:

    o_ck     = sum_u n_uc * (n_uk - [c == k]) / (m_u - 1)        coincidences
    n_c      = sum_k o_ck,   n = sum_c n_c
    delta_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2          ordinal distance, c <= k
    D_o      = 1 / n * sum_c sum_k o_ck * delta_ck
    D_e      = 1 / (n * (n - 1)) * sum_c sum_k n_c * n_k * delta_ck
    alpha    = 1 - D_o / D_e

This is Krippendorff's definition, computed by the ``krippendorff`` package. The
PRAIB paper (Appendix D.1) prints D_o with the single normaliser
``1 / sum_u m_u (m_u - 1)`` instead of the per-paper ``1 / (n (m_u - 1))``; the two
coincide when every paper has the same number of ratings and differ otherwise, and
we follow Krippendorff. Because rating scales change between years, alpha is
computed per venue and year group and the per-year values are averaged with equal
weight (Appendix D.1); Appendix D.2 compares the human panel alone with the panel
that also includes a model's ratings.
"""

from __future__ import annotations

import math
import re
import warnings
from collections import defaultdict
from collections.abc import Sequence
from itertools import repeat

import krippendorff
import numpy as np

from praib.records.schema import HUMAN_SOURCE


def _pairable_value_counts(paper_ids: Sequence[str],
                           ratings: Sequence[float | None]) -> tuple[np.ndarray, np.ndarray]:
    """The papers x values count matrix of the papers with at least two valid ratings,
    and its value domain (the sorted distinct values of those ratings)."""
    if len(paper_ids) != len(ratings):
        raise ValueError(f"{len(paper_ids)} paper ids but {len(ratings)} ratings")
    values = np.array(ratings, dtype=float)  # None is NaN
    valid = ~np.isnan(values)
    # Each paper's place among the papers sorted by id (the rows of the matrix): coded by hash, only the distinct
    # ids sorted.
    papers, codes = codes_by_first_appearance(_take(paper_ids, np.flatnonzero(valid)))
    by_id = np.empty(len(papers), dtype=np.intp)
    by_id[sorted(range(len(papers)), key=papers.__getitem__)] = np.arange(len(papers))
    unit = by_id[codes]
    unit_sizes = np.bincount(unit)
    # A paper rated once has no pair to disagree within; Krippendorff leaves it out of
    # the marginals too, so it is dropped before the value domain is taken.
    pairable = unit_sizes[unit] >= 2
    unit, values = unit[pairable], values[valid][pairable]
    domain, value_index = np.unique(values, return_inverse=True)
    counts = np.zeros((len(unit_sizes), len(domain)), dtype=int)
    np.add.at(counts, (unit, value_index), 1)
    return counts[unit_sizes >= 2], domain


def ordinal_alpha(paper_ids: Sequence[str], ratings: Sequence[float | None]) -> float | None:
    """Krippendorff's ordinal alpha of ``ratings``, the unit of each being its paper id.

    Ratings that are None or NaN are missing; papers left with fewer than two ratings
    are not pairable and do not count. Only the order of the rating values matters.
    Returns None where alpha is undefined: no pairable paper, or a single distinct
    value among the pairable ratings (D_e = 0; the package would raise or return NaN).
    """
    return alpha_of_counts(*_pairable_value_counts(paper_ids, ratings))


def alpha_of_counts(counts: np.ndarray, domain: Sequence[float]) -> float | None:
    """Ordinal alpha of a papers x values matrix of rating counts over ``domain`` (its columns,
    in order); a paper appearing in k rows counts k times, as in a resample of papers. Papers
    with fewer than two ratings and values nobody gave are left out first, so the number is
    that of :func:`ordinal_alpha` on the same ratings. None where undefined."""
    counts = np.ascontiguousarray(counts)
    pairable = counts.sum(1) >= 2
    if not pairable.all():  # (a copy only where some row goes: a matrix of the panels of a venue holds 40,000)
        counts = counts[pairable]
    given = counts.sum(0) > 0
    if len(counts) == 0 or np.count_nonzero(given) < 2:
        return None
    # Always the columns taken by the mask: the package sums the coincidences in the order of the matrix's layout,
    # and a copy taken so is laid out column by column (the matrix itself would change the last digits).
    return float(krippendorff.alpha(value_counts=counts[:, given], value_domain=np.asarray(domain)[given],
                                    level_of_measurement="ordinal"))


def panel_alpha_draws(human_counts: np.ndarray, model_counts: np.ndarray, domain: Sequence[float],
                      weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """alpha_H and alpha_H+L (see :func:`panel_agreement`) of the panels of one venue and year
    group, per row of ``weights``. ``human_counts`` and ``model_counts`` are panels x ``domain``
    counts of the human ratings and of the model ratings added to each panel; ``weights`` is
    draws x panels, how often each draw takes each panel (a row of ones takes each once).
    NaN where undefined; alpha_H+L also where the draw holds no model rating."""
    weights = np.asarray(weights)
    alpha_with_model = alpha_draws(human_counts + model_counts, domain, weights)
    alpha_with_model[weights @ model_counts.sum(1) == 0] = np.nan
    return alpha_draws(human_counts, domain, weights), alpha_with_model


def alpha_draws(counts: np.ndarray, domain: Sequence[float], weights: np.ndarray) -> np.ndarray:
    """Ordinal alpha of the papers x ``domain`` rating ``counts`` per row of ``weights`` (draws x papers, how
    often each draw takes each paper); NaN where undefined. A single row is computed by the library itself
    (:func:`alpha_of_counts`), more rows by one matrix product (:func:`_alpha_of_draws`)."""
    weights = np.asarray(weights)
    if len(weights) == 1:  # a point estimate: the library's own computation
        counts = np.ascontiguousarray(counts)
        if not (weights[0] == 1).all():  # each paper taken as often as the draw says
            counts = counts[np.repeat(np.arange(len(counts)), weights[0].astype(int))]
        return np.array([_nan_for_none(alpha_of_counts(counts, domain))])
    return _alpha_of_draws(counts, weights)


def _nan_for_none(value: float | None) -> float:
    return np.nan if value is None else value


def _alpha_of_draws(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Ordinal alpha of the papers x values ``counts`` resampled by each row of ``weights`` (draws x
    papers); NaN where undefined. The number :func:`alpha_of_counts` gives for each draw (to rounding):
    a draw's coincidences are the weighted sum of its papers' coincidences, so one matrix product gives
    those of every draw, where calling the ``krippendorff`` package per draw costs a thousand calls per
    venue-year for each submission of a leaderboard."""
    counts = np.asarray(counts, dtype=float)
    ratings = counts.sum(1)
    pairable = ratings >= 2
    counts, weights = counts[pairable], np.asarray(weights, dtype=float)[:, pairable]
    values = counts.shape[1]
    # o_ck of each paper: n_uc * (n_uk - [c == k]) / (m_u - 1)
    per_paper = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(values)) \
        / (ratings[pairable] - 1)[:, None, None]
    coincidences = (weights @ per_paper.reshape(len(counts), values * values)).reshape(len(weights), values, values)
    marginals = coincidences.sum(2)                                   # n_c per draw
    total = marginals.sum(1)                                          # n per draw
    below = np.cumsum(marginals, axis=1) - marginals                  # sum of n_g for g < c
    # delta_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2 for c <= k, symmetric
    low, high = np.minimum.outer(np.arange(values), np.arange(values)), np.maximum.outer(np.arange(values),
                                                                                          np.arange(values))
    spans = (below + marginals)[:, high] - below[:, low]
    delta = (spans - (marginals[:, :, None] + marginals[:, None, :]) / 2) ** 2
    observed = (coincidences * delta).sum((1, 2))
    expected = (marginals[:, :, None] * marginals[:, None, :] * delta).sum((1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1 - (total - 1) * observed / expected
    defined = (np.count_nonzero(marginals > 0, axis=1) >= 2) & (expected > 0)
    return np.where(defined, alpha, np.nan)


def _year_order(year_group: str) -> tuple:
    # "<=2018" must come before "2019", which plain string order does not give.
    match = re.search(r"\d+", str(year_group))
    return (int(match.group()) if match else math.inf, str(year_group))


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _take(column: Sequence, rows: np.ndarray) -> list:
    """The values of ``column`` at ``rows`` (positions), as a list: at once where the column is an array."""
    if isinstance(column, np.ndarray):
        return column[rows].tolist()
    return [column[i] for i in np.asarray(rows, dtype=np.intp).tolist()]


def codes_by_first_appearance(values: Sequence) -> tuple[list, np.ndarray]:
    """The distinct ``values`` in order of first appearance, and each value's position among them (by column:
    Arrow hashes strings and whole numbers, also an array of them, any other values go through a dict)."""
    import pyarrow as pa  # not at import time: praib's commands that never compare ratings start without it

    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        encoded = pa.array(values).dictionary_encode()
        return encoded.dictionary.to_pylist(), encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp)
    if isinstance(values, np.ndarray) and values.dtype == object and len(values):
        # An array of a few distinct objects (a reference's venues and year groups): pandas hashes them in place,
        # where Arrow first copies every string.
        import pandas as pd

        codes, distinct = pd.factorize(values)
        if not (codes < 0).any():  # else a None among them, which pandas leaves out: a dict below
            return distinct.tolist(), codes.astype(np.intp)
    arrow_type = {str: pa.string(), int: pa.int64()}.get(type(values[0])) if len(values) else None
    if arrow_type is not None:
        try:
            encoded = pa.array(values, type=arrow_type).dictionary_encode()
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            encoded = None
        if encoded is not None and encoded.null_count == 0:
            return encoded.dictionary.to_pylist(), encoded.indices.to_numpy(zero_copy_only=False).astype(np.intp)
    positions: dict = {}
    codes = np.fromiter((positions.setdefault(v, len(positions)) for v in values), dtype=np.intp, count=len(values))
    return list(positions), codes


def row_codes_by_first_appearance(*columns: Sequence) -> tuple[list[tuple], np.ndarray]:
    """:func:`codes_by_first_appearance` of the rows of parallel ``columns`` (as tuples), each column coded on
    its own and the codes combined."""
    combined, size = np.zeros(len(columns[0]), dtype=np.int64), 1
    for column in columns:
        distinct, codes = codes_by_first_appearance(column)
        combined, size = combined * max(len(distinct), 1) + codes, size * max(len(distinct), 1)
    if size > len(combined):  # many distinct rows: sorted
        _, first, codes = np.unique(combined, return_index=True, return_inverse=True)
        codes = codes.reshape(-1)
    else:  # few (venues and years): a table of every combination, no sort of the rows
        first = np.full(size, len(combined))
        np.minimum.at(first, combined, np.arange(len(combined)))
        present = np.flatnonzero(first < len(combined))
        table = np.empty(size, dtype=np.intp)
        table[present] = np.arange(len(present))
        first, codes = first[present], table[combined]
    order = np.argsort(first)
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    rows = [tuple(column[i] for column in columns) for i in first[order].tolist()]
    return rows, rank[codes]


def _slices(paper_ids: Sequence[str], ratings: Sequence[float | None], venues: Sequence[str],
            year_groups: Sequence[str]) -> dict[str, dict[str, np.ndarray]]:
    """Row positions (ascending) per venue and year group, the venues in order of first appearance, the years in
    chronological order."""
    if not len(paper_ids) == len(ratings) == len(venues) == len(year_groups):
        raise ValueError(f"{len(paper_ids)} paper ids, {len(ratings)} ratings, {len(venues)} venues and "
                         f"{len(year_groups)} year groups: the columns must be parallel")
    pairs, codes = row_codes_by_first_appearance(venues, year_groups)
    order = np.argsort(codes, kind="stable")
    bounds = np.cumsum(np.bincount(codes, minlength=len(pairs)))
    rows: dict[str, dict[str, np.ndarray]] = defaultdict(dict)
    for (venue, year), stop, size in zip(pairs, bounds.tolist(), np.diff(bounds, prepend=0).tolist()):
        rows[venue][year] = order[stop - size:stop]
    return {venue: {year: by_year[year] for year in sorted(by_year, key=_year_order)}
            for venue, by_year in rows.items()}


def alpha_by_venue(
    paper_ids: Sequence[str],
    ratings: Sequence[float | None],
    venues: Sequence[str],
    year_groups: Sequence[str],
) -> dict[str, dict]:
    """Ordinal alpha per venue and year group, and its unweighted mean over the years.

        alpha_venue = 1 / |Y| * sum_{y in Y} alpha_{venue, y}

    where Y holds the year groups whose alpha is defined. Returns
    ``{venue: {"alpha": float | None, "per_year": {year_group: float | None},
    "n_papers": int, "n_ratings": int}}``; the counts are the pairable papers and
    their ratings in the years of Y, i.e. what the mean was computed from.
    """
    result = {}
    for venue, by_year in _slices(paper_ids, ratings, venues, year_groups).items():
        per_year, n_papers, n_ratings = {}, 0, 0
        for year, rows in by_year.items():
            counts, domain = _pairable_value_counts(_take(paper_ids, rows), _take(ratings, rows))
            per_year[year] = alpha_of_counts(counts, domain)  # ordinal_alpha of the year's ratings
            if per_year[year] is not None:
                n_papers += len(counts)
                n_ratings += int(counts.sum())
        result[venue] = {
            "alpha": _mean([a for a in per_year.values() if a is not None]),
            "per_year": per_year,
            "n_papers": n_papers,
            "n_ratings": n_ratings,
        }
    return result


def panel_agreement(
    human_paper_ids: Sequence[str],
    human_ratings: Sequence[float | None],
    human_venues: Sequence[str],
    human_year_groups: Sequence[str],
    model_paper_ids: Sequence[str],
    model_ratings: Sequence[float | None],
) -> dict[str, dict]:
    """Agreement of the human panels alone and with a model's ratings added (Appendix D.2).

    A human panel is a paper with at least two valid human ratings. For each venue and
    year group, alpha_H is the ordinal alpha of the panels and alpha_H+L that of the
    same panels with every valid model rating of their papers added as one more rater;
    panels the model did not rate stay as they are, and both alphas cover the same
    papers. delta = alpha_H+L - alpha_H; a negative delta means the model disagrees
    with the panels more than their members disagree with each other.

    A year group is averaged into the venue's values only if both alphas are defined
    there and the model rated at least one of its panels, so that at venue level too
    delta = mean(alpha_H+L) - mean(alpha_H) = mean(delta_y). Model ratings of papers
    without a human panel cannot be placed in any venue: they are left out and a
    warning gives their number.

    Returns ``{venue: {"alpha_human", "alpha_with_model", "delta": float | None,
    "per_year": {year_group: {"alpha_human", "alpha_with_model", "delta"}},
    "n_papers": int, "n_model_ratings": int}}``, the counts being the panels and the
    model ratings added to them in the averaged years.
    """
    if len(model_paper_ids) != len(model_ratings):
        raise ValueError(f"{len(model_paper_ids)} model paper ids but {len(model_ratings)} model ratings")
    return HumanPanels(human_paper_ids, human_ratings, human_venues, human_year_groups).agreement(
        model_paper_ids, model_ratings)


class HumanPanels:
    """The human side of :func:`panel_agreement`, prepared once for the ratings of any number of models: per
    venue and year group, the ratings of the papers with two or more valid human ratings, and their counts."""

    def __init__(self, human_paper_ids: Sequence[str], human_ratings: Sequence[float | None],
                 human_venues: Sequence[str], human_year_groups: Sequence[str]) -> None:
        slices = _slices(human_paper_ids, human_ratings, human_venues, human_year_groups)
        # By column (a reference holds a million ratings): each paper's code, the rows with a valid rating, and
        # how many each paper has.
        papers, paper_codes = codes_by_first_appearance(human_paper_ids)
        valid = ~np.isnan(np.array(human_ratings, dtype=float))  # None is NaN
        #: Each paper's code (the model's papers are looked up in it), and whether its paper has a panel.
        self._code = dict(zip(papers, range(len(papers))))
        self._panelled = np.bincount(paper_codes[valid], minlength=len(papers)) >= 2
        in_panel = self._panelled[paper_codes]
        # Each paper's place among the papers sorted by id: a year's panels are in that order.
        by_id = np.array(sorted(range(len(papers)), key=papers.__getitem__), dtype=np.intp)
        id_rank = np.empty(len(papers), dtype=np.intp)
        id_rank[by_id] = np.arange(len(papers))
        self._years: dict[str, dict[str, tuple]] = {}
        #: Per venue and year group, each paper's row among its panels (-1: none there), by paper code.
        self._rows: dict[tuple[str, str], np.ndarray] = {}
        for venue, by_year in slices.items():
            self._years[venue] = {}
            for year, rows in by_year.items():
                rows = rows[in_panel[rows] & valid[rows]]
                ranks, panel_rows = np.unique(id_rank[paper_codes[rows]], return_inverse=True)
                panels = [papers[code] for code in by_id[ranks].tolist()]
                values = _take(human_ratings, rows)
                domain = sorted(set(values))
                # Each rating's column (its place in the domain) and each panel's count of it, at once.
                cells = panel_rows * len(domain) + np.searchsorted(np.array(domain, dtype=float),
                                                                   np.array(values, dtype=float))
                counts = np.bincount(cells, minlength=len(panels) * len(domain)).reshape(len(panels), len(domain))
                self._years[venue][year] = panels, domain, counts
                self._rows[(venue, year)] = np.full(len(papers), -1, dtype=np.intp)
                self._rows[(venue, year)][by_id[ranks]] = np.arange(len(panels))
        # alpha_H of each venue and year group, the same for every model: computed for the first one.
        self._alpha_human: dict[tuple[str, str], np.ndarray] = {}

    def _alpha_draws(self, venue: str, year: str, human_counts: np.ndarray, model_counts: np.ndarray,
                     domain: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """:func:`panel_alpha_draws` of the panels of ``venue`` and ``year`` taken once each, alpha_H computed once:
        it leaves out the values nobody gave, so the columns of values only a model gave do not change it."""
        one_draw = np.ones((1, len(human_counts)))
        if (venue, year) not in self._alpha_human:
            self._alpha_human[(venue, year)] = alpha_draws(human_counts, domain, one_draw)
        alpha_with_model = alpha_draws(human_counts + model_counts, domain, one_draw)
        alpha_with_model[one_draw @ model_counts.sum(1) == 0] = np.nan
        return self._alpha_human[(venue, year)], alpha_with_model

    def agreement(self, model_paper_ids: Sequence[str], model_ratings: Sequence[float | None]) -> dict[str, dict]:
        """:func:`panel_agreement` of these panels and a model's ratings."""
        if len(model_paper_ids) != len(model_ratings):
            raise ValueError(f"{len(model_paper_ids)} model paper ids but {len(model_ratings)} model ratings")
        # By column: the model's valid ratings, each paper's code (-1: no human rating) and whether it has a panel.
        rated = np.flatnonzero(~np.isnan(np.array(model_ratings, dtype=float)))  # None is NaN
        codes = np.fromiter(map(self._code.get, _take(model_paper_ids, rated), repeat(-1)),
                            dtype=np.intp, count=len(rated))
        panelled = codes >= 0
        panelled[panelled] = self._panelled[codes[panelled]]
        n_unmatched = int(np.count_nonzero(~panelled))
        rated, codes = rated[panelled], codes[panelled]
        if n_unmatched:
            warnings.warn(f"{n_unmatched} model ratings are of papers without a human panel "
                          "(two or more human ratings) and were left out", stacklevel=2)
        result = {}
        for venue, by_year in self._years.items():
            per_year, averaged, n_papers, n_model_ratings = {}, [], 0, 0
            for year, (panels, human_domain, human_counts) in by_year.items():
                # The model's ratings of these panels and their rows: counted, so their order does not matter.
                rows = self._rows[(venue, year)][codes]
                ratings = _take(model_ratings, rated[rows >= 0])
                rows = rows[rows >= 0]
                domain = sorted({*human_domain, *ratings})
                if domain != human_domain:  # values only the model gave: columns of zeros for the panels
                    widened = np.zeros((len(panels), len(domain)), dtype=int)
                    widened[:, [domain.index(v) for v in human_domain]] = human_counts
                    human_counts = widened
                column = {v: j for j, v in enumerate(domain)}
                model_counts = np.zeros((len(panels), len(domain)), dtype=int)
                np.add.at(model_counts, (rows, np.array([column[r] for r in ratings], dtype=np.intp)), 1)
                draw_human, draw_with_model = self._alpha_draws(venue, year, human_counts, model_counts, domain)
                alpha_human = None if np.isnan(draw_human[0]) else float(draw_human[0])
                alpha_with_model = None if np.isnan(draw_with_model[0]) else float(draw_with_model[0])
                both = alpha_human is not None and alpha_with_model is not None
                per_year[year] = {
                    "alpha_human": alpha_human,
                    "alpha_with_model": alpha_with_model,
                    "delta": alpha_with_model - alpha_human if both else None,
                }
                if both:
                    averaged.append(per_year[year])
                    n_papers += len(panels)
                    n_model_ratings += len(ratings)
            alpha_human = _mean([y["alpha_human"] for y in averaged])
            alpha_with_model = _mean([y["alpha_with_model"] for y in averaged])
            result[venue] = {
                "alpha_human": alpha_human,
                "alpha_with_model": alpha_with_model,
                "delta": alpha_with_model - alpha_human if averaged else None,
                "per_year": per_year,
                "n_papers": n_papers,
                "n_model_ratings": n_model_ratings,
            }
        return result


def self_agreement(
    paper_ids_a: Sequence[str],
    ratings_a: Sequence[float | None],
    paper_ids_b: Sequence[str],
    ratings_b: Sequence[float | None],
) -> float | None:
    """Ordinal alpha between two rating runs of one model (e.g. two prompts) as raters.

    Only papers with a valid rating in both runs count; all their ratings from both runs
    are kept, so repeated samples under one prompt are raters too. None where alpha is
    undefined (see ``ordinal_alpha``).
    """
    def rated(ids: Sequence[str], ratings: Sequence[float | None]) -> set[str]:
        if len(ids) != len(ratings):
            raise ValueError(f"{len(ids)} paper ids but {len(ratings)} ratings")
        return set(_take(ids, np.flatnonzero(~np.isnan(np.array(ratings, dtype=float)))))  # None is NaN

    both = rated(paper_ids_a, ratings_a) & rated(paper_ids_b, ratings_b)
    pairs = [(p, r) for p, r in zip([*paper_ids_a, *paper_ids_b], [*ratings_a, *ratings_b]) if p in both]
    return ordinal_alpha([p for p, _ in pairs], [r for _, r in pairs])


def self_agreement_by_venue(
    paper_ids_a: Sequence[str], ratings_a: Sequence[float | None], venues_a: Sequence[str],
    year_groups_a: Sequence[str],
    paper_ids_b: Sequence[str], ratings_b: Sequence[float | None], venues_b: Sequence[str],
    year_groups_b: Sequence[str],
) -> dict[str, dict]:
    """:func:`self_agreement` of two rating runs per venue and year group (those both runs rated),
    and per venue its unweighted mean over the year groups where it is defined, as
    :func:`alpha_by_venue` averages. Returns ``{venue: {"alpha": float | None, "per_year": {year_group:
    float | None}}}``."""
    a = _slices(paper_ids_a, ratings_a, venues_a, year_groups_a)
    b = _slices(paper_ids_b, ratings_b, venues_b, year_groups_b)
    result = {}
    for venue in sorted(set(a) & set(b), key=str):
        per_year = {year: self_agreement(_take(paper_ids_a, a[venue][year]), _take(ratings_a, a[venue][year]),
                                         _take(paper_ids_b, b[venue][year]), _take(ratings_b, b[venue][year]))
                    for year in a[venue] if year in b[venue]}
        if per_year:
            result[venue] = {"alpha": _mean([v for v in per_year.values() if v is not None]), "per_year": per_year}
    return result


def agreement_by_source(paper_ids: Sequence[str], ratings: Sequence[float | None], sources: Sequence[str],
                        venues: Sequence[str], year_groups: Sequence[str],
                        human_source: str = HUMAN_SOURCE) -> dict:
    """Per venue, the human panel's :func:`alpha_by_venue` under ``human_source`` and, for every other
    source, :func:`panel_agreement` of the human panel with that source's ratings added."""
    human = [i for i, s in enumerate(sources) if s == human_source]
    human_args = ([paper_ids[i] for i in human], [ratings[i] for i in human],
                  [venues[i] for i in human], [year_groups[i] for i in human])
    result = {human_source: alpha_by_venue(*human_args)}
    for source in sorted(set(sources) - {human_source}):
        rows = [i for i, s in enumerate(sources) if s == source]
        result[source] = panel_agreement(*human_args, [paper_ids[i] for i in rows], [ratings[i] for i in rows])
    return result
