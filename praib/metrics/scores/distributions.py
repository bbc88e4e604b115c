"""Score distributions of a reviewer against the human ones (PRAIB Appendices F and G).

Rating and confidence scores are compared as normalised distributions over the
venue's scale, as percentage-point differences per scale value, and, for
confidences, as the gap between a model's score and the median human score of the
same paper. Any of them can be computed per paper decision by splitting the columns
with ``by_decision`` first.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import compress, repeat

import numpy as np

from praib.metrics.summary import summarise
from praib.records.schema import HUMAN_SOURCE

DECISION_CLASSES = ("accept", "reject")

# Checked in this order, so that "Reject" is never read as an acceptance and an ICLR
# "Invite to Workshop Track" (rejected from the main conference) is a rejection.
_REJECT_WORDS = ("reject", "withdraw", "workshop")
_ACCEPT_WORDS = ("accept", "oral", "poster", "spotlight")


def decision_class(decision: str | None) -> str | None:
    """``"accept"``, ``"reject"`` or None for a venue's free-text decision.

    Any decision mentioning acceptance or a presentation format ("Accept (poster)",
    "ICLR 2017 Oral", "Spotlight") is ``"accept"``. Rejections, desk rejections,
    withdrawals and invitations to a workshop track are ``"reject"``: the split is
    between papers the main conference accepted and those it did not. Missing or
    unrecognised decisions are None.
    """
    if not isinstance(decision, str):
        return None
    text = decision.lower()
    if any(word in text for word in _REJECT_WORDS):
        return "reject"
    if any(word in text for word in _ACCEPT_WORDS):
        return "accept"
    return None


def by_decision(decisions: Sequence[str | None], *columns: Sequence) -> dict[str, tuple[list, ...]]:
    """The rows of parallel ``columns`` split by ``decision_class`` of ``decisions``.

    Returns ``{"accept": (column_0_rows, column_1_rows, ...), "reject": (...)}``; rows
    whose decision has no class are in neither. Each side of a comparison is split on
    its own, then the pieces are passed on::

        model = by_decision(model_decisions, model_paper_ids, model_confidences)
        human = by_decision(human_decisions, human_paper_ids, human_confidences)
        {d: confidence_gap(*model[d], *human[d]) for d in DECISION_CLASSES}
    """
    for column in columns:
        if len(column) != len(decisions):
            raise ValueError(f"{len(decisions)} decisions but a column of {len(column)} rows")
    classes = [decision_class(d) for d in decisions]
    return {
        d: tuple([value for value, c in zip(column, classes) if c == d] for column in columns)
        for d in DECISION_CLASSES
    }


def _scores(values: Sequence[float | None]) -> list:
    """The values that are scores: neither None nor NaN (a reference holds a million: whole numbers alone are
    taken at once, the others tested inline)."""
    if set(map(type, values)) <= {int}:
        return list(values)
    isnan = math.isnan
    return [v for v in values if v is not None and not isnan(v)]


def normalised_distribution(values: Sequence[float | None], scale_values: Sequence[int]) -> dict[int, float | None]:
    """Share of each scale value among ``values``: ``{v: count(v) / n}``, zeros included.

    None and NaN are missing and not counted in n. A value outside the scale raises
    ValueError naming the offending values: the caller decides whether such scores are
    parse errors to drop or a wrong scale. With no value at all every share is None.
    """
    return normalised_distribution_of_counts(Counter(_scores(values)), scale_values)


def normalised_distribution_of_counts(counts: Mapping[float, int],
                                      scale_values: Sequence[int]) -> dict[int, float | None]:
    """:func:`normalised_distribution` of the scores counted by value (``{value: count}``): ``{v: counts[v] / n}``
    over the scale, n being all that ``counts`` counts; ValueError for a value counted outside the scale."""
    scale = set(scale_values)
    outside = sorted(v for v, count in counts.items() if count and v not in scale)
    if outside:
        raise ValueError(f"values outside the scale {sorted(scale)}: {outside}")
    n = sum(counts.values())
    return {v: counts.get(v, 0) / n if n else None for v in sorted(scale)}


def distribution_difference(
    model_values: Sequence[float | None],
    human_values: Sequence[float | None],
    scale_values: Sequence[int],
) -> dict:
    """Model and human distributions over the scale and how far apart they are.

    With shares p (model) and q (human) per scale value v:

        diff_pp[v]      = 100 * (p_v - q_v)
        sum_abs_diff_pp = sum_v |diff_pp[v]|
        total_variation = 0.5 * sum_v |p_v - q_v|        in [0, 1]

    The column the PRAIB paper calls "total variation" (Appendix G.2, Table 17,
    "Sum|Delta|") is ``sum_abs_diff_pp``: the sum of absolute percentage-point
    differences, 200 times the standard total variation distance given here.

    Returns ``{"model": {v: share}, "human": {v: share}, "diff_pp": {v: pp},
    "sum_abs_diff_pp": float, "total_variation": float, "n_model": int,
    "n_human": int}``; when either side has no value, its shares, the differences and
    the distances are None.
    """
    return distribution_difference_of_counts(Counter(_scores(model_values)), Counter(_scores(human_values)),
                                             scale_values)


def distribution_difference_of_counts(model_counts: Mapping[float, int], human_counts: Mapping[float, int],
                                      scale_values: Sequence[int]) -> dict:
    """:func:`distribution_difference` of the scores counted by value (``{value: count}``): the same numbers,
    where the scores are counted by column (a reference holds a million)."""
    model = normalised_distribution_of_counts(model_counts, scale_values)
    human = normalised_distribution_of_counts(human_counts, scale_values)
    n_model, n_human = sum(model_counts.values()), sum(human_counts.values())
    if n_model and n_human:
        diff_pp = {v: 100 * (model[v] - human[v]) for v in model}
        abs_diff = float(_sum_abs_differences(np.array([model[v] for v in model]), np.array([human[v] for v in model])))
        sum_abs_diff_pp, total_variation = 100 * abs_diff, 0.5 * abs_diff
    else:
        diff_pp, sum_abs_diff_pp, total_variation = dict.fromkeys(model), None, None
    return {
        "model": model,
        "human": human,
        "diff_pp": diff_pp,
        "sum_abs_diff_pp": sum_abs_diff_pp,
        "total_variation": total_variation,
        "n_model": n_model,
        "n_human": n_human,
    }


def _sum_abs_differences(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """sum_v |p_v - q_v| along the last axis, added up value by value in scale order (numpy's
    pairwise sum would group the terms differently and change the last digits)."""
    differences = np.abs(p - q)
    total = np.zeros(differences.shape[:-1])
    for j in range(differences.shape[-1]):
        total = total + differences[..., j]
    return total


def total_variation(model_counts: np.ndarray, human_counts: np.ndarray) -> np.ndarray:
    """Total variation 0.5 * sum_v |p_v - q_v| between the distributions given by counts per
    scale value (last axis), one per leading row, e.g. per bootstrap draw of papers: the same
    number as :func:`distribution_difference`'s ``total_variation`` for the values counted.
    NaN where either side counts nothing."""
    model_counts, human_counts = np.asarray(model_counts, dtype=float), np.asarray(human_counts, dtype=float)
    n_model, n_human = model_counts.sum(-1, keepdims=True), human_counts.sum(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        tv = 0.5 * _sum_abs_differences(model_counts / n_model, human_counts / n_human)
    return np.where((n_model[..., 0] == 0) | (n_human[..., 0] == 0), np.nan, tv)


def gaps_to_panel_median(
    model_paper_ids: Sequence[str],
    model_scores: Sequence[float | None],
    human_paper_ids: Sequence[str],
    human_scores: Sequence[float | None],
) -> np.ndarray:
    """Per model review: its score minus the median human score of its paper; NaN for a model
    review without a score or whose paper has no human score (see :func:`confidence_gap`)."""
    _check_parallel(model_paper_ids, model_scores, human_paper_ids, human_scores)
    return gaps_to_medians(model_paper_ids, model_scores, panel_medians(human_paper_ids, human_scores,
                                                                        set(model_paper_ids)))


def _check_parallel(model_paper_ids: Sequence, model_scores: Sequence, human_paper_ids: Sequence,
                    human_scores: Sequence) -> None:
    for ids, scores, side in ((model_paper_ids, model_scores, "model"), (human_paper_ids, human_scores, "human")):
        if len(ids) != len(scores):
            raise ValueError(f"{len(ids)} {side} paper ids but {len(scores)} {side} scores")


def panel_medians(paper_ids: Sequence[str], scores: Sequence[float | None],
                  papers: set[str] | None = None) -> dict[str, float]:
    """The median of each paper's scores that are neither None nor NaN (of the ``papers`` only, when given), for
    :func:`gaps_to_medians`: the human side of the gaps, taken once for any number of models; the papers in the
    order of their first score; an even count's median is the mean of its middle two, as ``np.median`` gives it.
    The scores of a reference (a million) are sorted by paper and value at once, the papers told apart by Arrow's
    hash of their ids."""
    import pyarrow as pa

    values = np.array(scores, dtype=float)  # None is NaN
    taken = ~np.isnan(values)
    if papers is not None:
        taken &= np.fromiter((paper in papers for paper in paper_ids), dtype=bool, count=len(paper_ids))
    if not taken.any():
        return {}
    encoded = pa.array(paper_ids).filter(pa.array(taken)).dictionary_encode()
    codes, values = encoded.indices.to_numpy(zero_copy_only=False), values[taken]
    ordered = values[np.lexsort((values, codes))]
    sizes = np.bincount(codes, minlength=len(encoded.dictionary))
    middle = np.cumsum(sizes) - sizes + sizes // 2
    # An even count's median is the mean of its middle two (for an odd count the other branch is not taken).
    medians = np.where(sizes % 2 == 1, ordered[middle], (ordered[middle - 1] + ordered[middle]) / 2)
    return dict(zip(encoded.dictionary.to_pylist(), medians.tolist()))


def numbered_panel_medians(papers: np.ndarray, scores: np.ndarray, count: int) -> np.ndarray:
    """:func:`panel_medians` of papers given as numbers (0 to ``count`` - 1) and scores as floats (NaN: none), as an
    array by paper number, NaN for a paper without a score: the same numbers. Whole-number scores (a scale's) are
    counted per paper and each median read off the running counts, with no hash of the papers and no sort; any
    other scores go through :func:`panel_medians`."""
    taken = ~np.isnan(scores)
    papers, scores = papers[taken], scores[taken]
    medians = np.full(count, np.nan)
    if not len(scores):
        return medians
    lowest = scores.min()
    span = int(scores.max() - lowest) + 1
    # A table of papers x values no larger than a few times the scores (a scale's handful of values).
    if count * span > 8 * len(scores) + 1_000_000 or not (scores == np.floor(scores)).all():
        found = panel_medians(papers, scores)
        medians[list(found)] = list(found.values())
        return medians
    counts = np.bincount(papers * span + (scores - lowest).astype(np.intp), minlength=count * span)
    running = np.cumsum(counts.reshape(count, span), axis=1)
    sizes = running[:, -1]

    def score_at(place: np.ndarray) -> np.ndarray:  # the score at ``place`` of each paper's scores in order
        return lowest + np.count_nonzero(running <= place[:, None], axis=1)

    middle, below = score_at(sizes // 2), score_at((sizes - 1) // 2)
    # An even count's median is the mean of its middle two, as panel_medians takes it.
    return np.where(sizes == 0, np.nan, np.where(sizes % 2 == 1, middle, (below + middle) / 2))


def gaps_to_medians(model_paper_ids: Sequence[str], model_scores: Sequence[float | None],
                    medians: dict[str, float] | np.ndarray) -> np.ndarray:
    """:func:`gaps_to_panel_median` given the human :func:`panel_medians` (or :func:`numbered_panel_medians`, the
    papers given as their numbers, -1 for a paper without any)."""
    if isinstance(medians, np.ndarray):
        numbers = np.asarray(model_paper_ids, dtype=np.intp)
        found = np.where(numbers >= 0, medians[numbers], np.nan)
    else:
        if isinstance(model_paper_ids, np.ndarray):  # looked up as the medians' keys are: Python values
            model_paper_ids = model_paper_ids.tolist()
        found = np.fromiter(map(medians.get, model_paper_ids, repeat(np.nan)), dtype=float, count=len(model_paper_ids))
    # By column: the scores with None as NaN, less each paper's median (NaN without one).
    return np.array(model_scores, dtype=float) - found


def confidence_gap(
    model_paper_ids: Sequence[str],
    model_confidences: Sequence[float | None],
    human_paper_ids: Sequence[str],
    human_confidences: Sequence[float | None],
) -> dict:
    """Model confidence minus the median human confidence of the same paper (Appendix F.1).

    For every model review i of paper u(i) that has a confidence, and whose paper has
    at least one human confidence:

        gap_i = c_i - median{human confidences of u(i)}

    (an even-sized panel's median is the mean of its two middle values). Returns
    ``{"mean", "std": float | None, "n": int, "n_papers": int, "n_skipped": int}``:
    mean and sample standard deviation (ddof=1) of the gaps, None where there are too
    few; n the reviews compared, n_papers their distinct papers, n_skipped the model
    reviews without a confidence or without a human confidence for their paper.
    """
    _check_parallel(model_paper_ids, model_confidences, human_paper_ids, human_confidences)
    return confidence_gap_to_medians(model_paper_ids, model_confidences,
                                     panel_medians(human_paper_ids, human_confidences, set(model_paper_ids)))


def confidence_gap_to_medians(model_paper_ids: Sequence[str], model_confidences: Sequence[float | None],
                              medians: dict[str, float] | np.ndarray) -> dict:
    """:func:`confidence_gap` given the human :func:`panel_medians` (or :func:`numbered_panel_medians`: see
    :func:`gaps_to_medians`)."""
    gaps = gaps_to_medians(model_paper_ids, model_confidences, medians)
    compared = np.isfinite(gaps)
    if isinstance(model_paper_ids, np.ndarray):
        n_papers = len(np.unique(model_paper_ids[compared]))
    else:
        n_papers = len(set(compress(model_paper_ids, compared.tolist())))
    gaps = gaps[compared].tolist()
    return {
        **summarise(gaps),
        "n_papers": n_papers,
        "n_skipped": len(model_paper_ids) - len(gaps),
    }


def distributions_by_source(scores: Sequence[int | None], sources: Sequence[str], paper_ids: Sequence[str],
                            scale_values: Sequence[int] | None = None, human_source: str = HUMAN_SOURCE) -> dict:
    """The human score distribution, and for every other source its :func:`distribution_difference`
    from it plus ``gap_to_human_median`` (:func:`confidence_gap`). ``scale_values`` default to the
    observed scores."""
    values = sorted(scale_values or {s for s in scores if s is not None})
    human = [i for i, s in enumerate(sources) if s == human_source]
    human_scores = [scores[i] for i in human if scores[i] is not None]
    result = {human_source: {"distribution": normalised_distribution(human_scores, values)}}
    for source in sorted(set(sources) - {human_source}):
        rows = [i for i, s in enumerate(sources) if s == source]
        entry = distribution_difference([scores[i] for i in rows if scores[i] is not None], human_scores, values)
        entry["gap_to_human_median"] = confidence_gap(
            [paper_ids[i] for i in rows], [scores[i] for i in rows],
            [paper_ids[i] for i in human], [scores[i] for i in human])
        result[source] = entry
    return result
