"""How human reviewing changed across years and between the pre- and post-LLM eras
(PRAIB Tables 4-6, Figure 2).

Per venue and year (years that share one rating scale, as ICLR up to 2018, form one group, as in
PRAIB Table 4), the mean, standard deviation (ddof=1) and count of the per-review metrics
(TKC, TTR, FRE, FKG, cross-references, citations, rating, confidence), with the cross-references also counted
in PRAIB's own categories (``xref`` -> ``paper``, :data:`praib.metrics.text.xref.PAPER_XREF_TYPES`); per venue and
era the same summaries; and per metric a two-sided Mann-Whitney U test between the eras' per-review values
(``scipy.stats.mannwhitneyu``). The era boundary is the first review cycle after ChatGPT's
release (30 November 2022), per venue as in PRAIB Table 5: ICLR reviews from 2024 on and
NeurIPS reviews from 2023 on are post-LLM (ICLR 2023 was reviewed in autumn 2022); other venues
split at 2023 unless told. The effect size is the rank-biserial correlation
``r = 2 U_post / (n_post n_pre) - 1`` in [-1, 1]: positive when post-LLM values tend to be larger.
"""

from __future__ import annotations

import logging
from collections import defaultdict

import numpy as np
from datasets import Dataset

from praib.evaluation.evaluate import on_scale, unknown_scales, year_group_of
from praib.evaluation.scored import ScoredReviews
from praib.metrics.registry import BY_NAME, per_review_metrics, score_metrics, text_metrics
from praib.metrics.summary import summarise

logger = logging.getLogger(__name__)

#: First post-LLM year per venue (PRAIB Table 5); other venues use DEFAULT_SPLIT_YEAR.
SPLIT_YEARS = {"ICLR": 2024, "NeurIPS": 2023}
DEFAULT_SPLIT_YEAR = 2023
SIGNIFICANCE = 0.05


def split_year_for(venue: str, split_year: int | None = None) -> int:
    """First post-LLM year of ``venue``: ``split_year`` when given, else PRAIB's boundary."""
    if split_year is not None:
        return split_year
    return next((year for name, year in SPLIT_YEARS.items() if name.lower() == str(venue).lower()),
                DEFAULT_SPLIT_YEAR)


def _venue_years(reviews: Dataset) -> dict[str, set[int]]:
    years: dict[str, set[int]] = defaultdict(set)
    for venue, year in zip(reviews["venue"], reviews["year"]):
        if venue and year is not None:
            years[venue].add(year)
    return years


def spans_both_eras(reviews: Dataset, split_year: int | None = None) -> bool:
    """Whether some venue has reviews on both sides of its era boundary."""
    return any(min(years) < split_year_for(venue, split_year) <= max(years)
               for venue, years in _venue_years(reviews).items())


def mann_whitney(pre: np.ndarray, post: np.ndarray) -> dict:
    """Two-sided Mann-Whitney U of post- against pre-LLM values, with the rank-biserial effect size."""
    from scipy.stats import mannwhitneyu

    pre, post = pre[np.isfinite(pre)], post[np.isfinite(post)]
    if not len(pre) or not len(post):
        return {"u": None, "p": None, "effect_size": None, "direction": None, "significant": None,
                "n_pre": int(len(pre)), "n_post": int(len(post))}
    result = mannwhitneyu(post, pre, alternative="two-sided")
    effect = 2 * float(result.statistic) / (len(post) * len(pre)) - 1
    p = float(result.pvalue)
    return {
        "u": float(result.statistic),
        "p": p if np.isfinite(p) else None,
        "effect_size": effect,
        "direction": "higher after" if effect > 0 else "lower after" if effect < 0 else "no change",
        "significant": bool(np.isfinite(p) and p < SIGNIFICANCE),
        "n_pre": int(len(pre)),
        "n_post": int(len(post)),
    }


def era_analysis(reviews: Dataset | ScoredReviews, split_year: int | None = None, workers: int | None = None,
                 progress: bool = False) -> dict:
    """Per venue: per-year and per-era summaries of every per-review metric of the registry
    (:func:`praib.metrics.registry.per_review_metrics`: the text metrics and scores) and, for each metric, the
    Mann-Whitney U test between eras. ``split_year`` (the first post-LLM year) overrides the
    per-venue boundaries of :data:`SPLIT_YEARS`. Reviews without venue or year are left out and
    counted, and so are ratings and confidences outside their venue-year's scale. ``reviews`` may be scored
    already on the venue scale (:class:`~praib.evaluation.scored.ScoredReviews`: a leaderboard run's human
    reference), and are then not scored again."""
    if isinstance(reviews, ScoredReviews):
        if reviews.scale != "venue":
            raise ValueError(f"era analysis reads scores on the venue scale, not the {reviews.scale} scale")
        scored = reviews
    else:
        scored = ScoredReviews.score(reviews, "venue", workers=workers, progress=progress)
    columns, scores = scored.columns, scored.text_scores
    era_metrics = per_review_metrics()
    values = {metric: scores[metric] for metric in text_metrics()}
    unknown = unknown_scales(zip(columns["venue"], columns["year"]), "venue")
    if unknown:
        logger.warning("%s", unknown)
    kept, out_of_scale = on_scale(columns, "venue")
    for kind in score_metrics():
        values[kind] = np.array([np.nan if v is None else v for v in kept[kind]], dtype=float)
    venue = np.asarray(columns["venue"], dtype=object)
    year = np.array([-1 if y is None else y for y in columns["year"]])
    placed = np.array([bool(v) for v in venue]) & (year >= 0)

    result: dict = {"metrics": list(era_metrics), "split_years": {}, "n_skipped": int((~placed).sum()),
                    "n_out_of_scale": out_of_scale, "venues": {}}
    for name in sorted({v for v in venue[placed]}, key=str):
        boundary = split_year_for(name, split_year)
        result["split_years"][name] = boundary
        in_venue = placed & (venue == name)
        # Editions that share a rating scale form one column, as ICLR <=2018 in PRAIB Table 4.
        group = np.array([year_group_of(name, y) for y in year.tolist()], dtype=object)
        per_year = {}
        for y in sorted(set(year[in_venue].tolist())):
            key = year_group_of(name, y)
            if key not in per_year:
                rows = in_venue & (group == key)
                per_year[key] = {"n_reviews": int(rows.sum()),
                                 **{m: summarise(values[m][rows]) for m in era_metrics}}
                if "xref" in era_metrics:
                    # The count in PRAIB's own categories, a detail of Xref. (not a metric: neither compared nor
                    # tested) that PRAIB Table 4's note gives beside it.
                    per_year[key]["xref"]["paper"] = summarise(scores["xref_paper"][rows])
        pre, post = in_venue & (year < boundary), in_venue & (year >= boundary)
        eras = {}
        for era, rows in (("pre", pre), ("post", post)):
            eras[era] = {"years": sorted(set(year[rows].tolist())), "n_reviews": int(rows.sum()),
                         **{m: summarise(values[m][rows]) for m in era_metrics}}
        tests = {m: mann_whitney(values[m][pre], values[m][post]) for m in era_metrics}
        result["venues"][name] = {"split_year": boundary, "years": per_year, "eras": eras, "tests": tests}
    return result


def _cell(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _layout(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def era_tables(analysis: dict) -> str:
    """Per venue, the per-year means (as PRAIB Table 4) and the era comparison (as Table 6)."""
    blocks = []
    for name, venue in analysis["venues"].items():
        years = list(venue["years"])
        rows = [[f"{name} (mean per review)", *years]]
        rows.append(["Reviews", *[str(venue["years"][y]["n_reviews"]) for y in years]])
        for m in analysis["metrics"]:
            rows.append([BY_NAME[m].era_label, *[_cell(venue["years"][y][m]["mean"]) for y in years]])
        blocks.append("\n".join(_layout(rows)))
        boundary = venue["split_year"]
        rows = [[f"{name}: pre (< {boundary}) vs post (>= {boundary})", "Pre-mean", "Post-mean", "U", "p",
                 "r", f"Significant ({SIGNIFICANCE})"]]
        for m in analysis["metrics"]:
            test = venue["tests"][m]
            p = test["p"]
            rows.append([BY_NAME[m].era_label, _cell(venue["eras"]["pre"][m]["mean"]), _cell(venue["eras"]["post"][m]["mean"]),
                         _cell(test["u"], 1), "-" if p is None else "< 0.001" if p < 0.001 else f"{p:.3f}",
                         _cell(test["effect_size"], 3),
                         "-" if test["significant"] is None else "yes" if test["significant"] else "no"])
        blocks.append("\n".join(_layout(rows)))
    notes = ("Mann-Whitney U: two-sided, post- against pre-LLM per-review values; r: rank-biserial correlation, "
             "positive when post-LLM values are larger.")
    if analysis["n_skipped"]:
        notes += f" {analysis['n_skipped']} review(s) without venue or year were left out."
    outside = [f"{n} {kind}(s)" for kind, n in analysis.get("n_out_of_scale", {}).items() if n]
    if outside:
        notes += f" Left out as outside their venue-year's scale: {', '.join(outside)}."
    return "\n\n".join(blocks + [notes])
