"""Statistics of paired and treated scores: robustness tests and counterfactual treatment effects."""

from __future__ import annotations

import numpy as np


# ---------------------------------------------------------------------------
# Robustness tests of paired scores (aspect-guided perturbation seed, App. B.6)
# ---------------------------------------------------------------------------

# Equivalence margins of the aspect-guided seed: ±0.5 for 1-4 dimension scores and for
# decisions, ±1.0 for the 1-10 overall score. A scale whose span (max - min) is below 5
# gets the narrow margin, so a 1-5 confidence is treated like a dimension score.
NARROW_MARGIN, WIDE_MARGIN, WIDE_SPAN = 0.5, 1.0, 5
VERDICTS = ("increase", "decrease", "equivalent", "inconclusive")


def equivalence_margin(scale_values) -> float:
    """The seed's TOST margin for a score whose scale holds ``scale_values``."""
    values = [float(v) for v in scale_values]
    if not values:
        raise ValueError("a scale needs at least one value to choose a margin")
    return NARROW_MARGIN if max(values) - min(values) < WIDE_SPAN else WIDE_MARGIN


def _paired(original, perturbed) -> tuple[np.ndarray, np.ndarray, int]:
    """Finite pairs of the two arrays, and how many pairs had a missing value."""
    a = np.asarray([np.nan if v is None else v for v in original], dtype=float)
    b = np.asarray([np.nan if v is None else v for v in perturbed], dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired scores must be two lists of equal length, got {a.shape} and {b.shape}")
    keep = np.isfinite(a) & np.isfinite(b)
    return a[keep], b[keep], int((~keep).sum())


def wilcoxon_directional(original, perturbed) -> dict:
    """One-sided Wilcoxon signed-rank tests of perturbed - original (zero differences discarded,
    as in the seed): ``p_increase`` tests H1 median > 0, ``p_decrease`` H1 median < 0.
    Both are 1.0 when no pair changed; ``n_nonzero`` counts the pairs that did."""
    from scipy.stats import wilcoxon

    a, b, _ = _paired(original, perturbed)
    differences = b - a
    n_nonzero = int(np.count_nonzero(differences))
    if n_nonzero == 0:
        return {"p_increase": 1.0, "p_decrease": 1.0, "statistic": None, "n_nonzero": 0}
    greater = wilcoxon(differences, zero_method="wilcox", alternative="greater")
    less = wilcoxon(differences, zero_method="wilcox", alternative="less")
    return {"p_increase": float(greater.pvalue), "p_decrease": float(less.pvalue),
            "statistic": float(greater.statistic), "n_nonzero": n_nonzero}


def tost_paired(original, perturbed, margin: float) -> dict:
    """Two one-sided paired t-tests (Lakens 2017) that the mean of perturbed - original lies
    inside (-margin, +margin). ``p_value`` is the larger of the two one-sided p-values.

    Fewer than two pairs give None. When every difference is the same the t statistics are
    undefined; the mean is then known exactly, so p is 0.0 inside the margin and 1.0 outside.
    """
    from statsmodels.stats.weightstats import ttost_paired

    if margin <= 0:
        raise ValueError(f"the equivalence margin must be positive, got {margin}")
    a, b, _ = _paired(original, perturbed)
    if a.size < 2:
        return {"p_value": None, "p_lower": None, "p_upper": None}
    differences = b - a
    if np.all(differences == differences[0]):
        inside = 0.0 if abs(differences[0]) < margin else 1.0
        return {"p_value": inside, "p_lower": inside, "p_upper": inside}
    p_value, lower, upper = ttost_paired(b, a, -margin, margin)
    return {"p_value": float(p_value), "p_lower": float(lower[1]), "p_upper": float(upper[1])}


def verdict(original, perturbed, margin: float, alpha: float = 0.05) -> dict:
    """What a perturbation did to one paired score, by the seed's directional and invariance tests.

    "increase" / "decrease": a one-sided Wilcoxon test is significant at ``alpha``; otherwise
    "equivalent" when TOST shows the mean change lies within ±``margin``; otherwise
    "inconclusive" (too few pairs or too much spread to say either). Pairs with a missing
    score on either side are left out and counted in ``n_missing``.
    """
    a, b, n_missing = _paired(original, perturbed)
    directional = wilcoxon_directional(a, b)
    equivalence = tost_paired(a, b, margin)
    if directional["p_increase"] < alpha:
        label = "increase"
    elif directional["p_decrease"] < alpha:
        label = "decrease"
    elif equivalence["p_value"] is not None and equivalence["p_value"] < alpha:
        label = "equivalent"
    else:
        label = "inconclusive"
    return {
        "verdict": label,
        "n": int(a.size),
        "n_missing": n_missing,
        "mean_original": float(a.mean()) if a.size else None,
        "mean_perturbed": float(b.mean()) if b.size else None,
        "mean_difference": float((b - a).mean()) if a.size else None,
        "p_increase": directional["p_increase"],
        "p_decrease": directional["p_decrease"],
        "p_equivalence": equivalence["p_value"],
        "n_nonzero": directional["n_nonzero"],
        "margin": float(margin),
        "alpha": float(alpha),
    }


def benjamini_hochberg(p_values) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values (statsmodels ``fdr_bh``), in the input order;
    None entries stay None and do not count as tests."""
    from statsmodels.stats.multitest import multipletests

    present = [i for i, p in enumerate(p_values) if p is not None and np.isfinite(p)]
    adjusted: list[float | None] = [None] * len(p_values)
    if present:
        _, corrected, _, _ = multipletests([p_values[i] for i in present], method="fdr_bh")
        for i, value in zip(present, corrected):
            adjusted[i] = float(value)
    return adjusted


def transition_matrix(original, perturbed, values) -> dict:
    """Counts of (original value -> perturbed value) over ``values``: rows are the original
    value, columns the perturbed one (the seed's transition matrices). Pairs with a missing
    value are left out; a value outside ``values`` is an error."""
    values = list(values)
    index = {v: i for i, v in enumerate(values)}
    counts = np.zeros((len(values), len(values)), dtype=int)
    for before, after in zip(original, perturbed, strict=True):
        if before is None or after is None:
            continue
        if before not in index or after not in index:
            raise ValueError(f"transition {before!r} -> {after!r} is outside the values {values}")
        counts[index[before], index[after]] += 1
    return {"values": values, "counts": counts.tolist()}


def acceptance_rate_change(original_accepted, perturbed_accepted) -> dict:
    """Share of accepted papers before and after the perturbation, and the change
    (perturbed - original, as a fraction), over pairs with both decisions known."""
    pairs = [(bool(a), bool(b)) for a, b in zip(original_accepted, perturbed_accepted, strict=True)
             if a is not None and b is not None]
    n = len(pairs)
    if not n:
        return {"original": None, "perturbed": None, "change": None, "n": 0}
    before = sum(a for a, _ in pairs) / n
    after = sum(b for _, b in pairs) / n
    return {"original": before, "perturbed": after, "change": after - before, "n": n}


def category_shares(original, perturbed, values) -> dict:
    """Share of the pairs in each category of ``values`` before and after the perturbation, and the
    change (perturbed - original, as a fraction), over pairs with both sides known: the seed's
    Table 7 (final decision categories). Shares are None when no pair is known."""
    pairs = [(a, b) for a, b in zip(original, perturbed, strict=True) if a is not None and b is not None]
    n = len(pairs)
    shares = {}
    for value in values:
        before = sum(a == value for a, _ in pairs) / n if n else None
        after = sum(b == value for _, b in pairs) / n if n else None
        shares[value] = {"original": before, "perturbed": after, "change": None if n == 0 else after - before}
    return shares


# ---------------------------------------------------------------------------
# Average treatment effects of counterfactual edits (counterfactual review-logic seed, 6.1)
# ---------------------------------------------------------------------------

def ate_mixed_model(differences, paper_ids, critical) -> dict:
    """ATE of soundness-critical versus soundness-neutral edits on one review difference.

    Fits the linear mixed-effects model ``difference ~ critical + (1 | paper)`` (statsmodels
    ``mixedlm``, REML): the paper is a random effect because each paper has several
    counterfactuals. ``ate_neutral`` is the intercept, ``ate_critical`` intercept + slope, and
    ``p_value`` tests the slope (H0: both conditions have the same ATE). ``std_neutral`` is the
    sample standard deviation of the neutral differences (the ranking score's unit).
    Rows with a missing difference are left out and counted in ``n_missing``. When the model
    cannot be fitted the estimates are None and ``reason`` says why; optimiser warnings are
    kept in ``warnings`` and ``converged``.
    """
    import warnings

    import pandas as pd
    import statsmodels.formula.api as smf

    differences, paper_ids, critical = list(differences), list(paper_ids), list(critical)
    if not len(differences) == len(paper_ids) == len(critical):
        raise ValueError(f"differences, paper_ids and critical must be parallel, got lengths "
                         f"{len(differences)}, {len(paper_ids)} and {len(critical)}")
    frame = pd.DataFrame({"difference": [np.nan if d is None else float(d) for d in differences],
                          "paper": [str(p) for p in paper_ids], "critical": [int(bool(c)) for c in critical]})
    n_missing = int(frame["difference"].isna().sum())
    frame = frame.dropna(subset=["difference"])
    neutral = frame.loc[frame["critical"] == 0, "difference"].to_numpy(float)
    critical_values = frame.loc[frame["critical"] == 1, "difference"].to_numpy(float)
    result = {
        "ate_critical": None, "ate_neutral": None, "effect": None, "p_value": None,
        "mean_critical": float(critical_values.mean()) if critical_values.size else None,
        "mean_neutral": float(neutral.mean()) if neutral.size else None,
        "std_neutral": float(neutral.std(ddof=1)) if neutral.size > 1 else None,
        "n_critical": int(critical_values.size), "n_neutral": int(neutral.size),
        "n_papers": int(frame["paper"].nunique()), "n_missing": n_missing, "converged": None, "warnings": [],
        "reason": None,
    }
    if not critical_values.size or not neutral.size:
        result["reason"] = "needs differences of both critical and neutral edits"
        return result
    if frame["difference"].nunique() < 2:
        result["reason"] = "every difference is the same: the model is not identified"
        return result
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = smf.mixedlm("difference ~ critical", frame, groups=frame["paper"]).fit()
    result.update({
        "ate_neutral": float(fit.params["Intercept"]),
        "ate_critical": float(fit.params["Intercept"] + fit.params["critical"]),
        "effect": float(fit.params["critical"]),
        "p_value": float(fit.pvalues["critical"]),
        "converged": bool(fit.converged),
        "warnings": sorted({str(w.message).splitlines()[0] for w in caught}),
    })
    return result


def ranking_score(ate_critical: float | None, ate_neutral: float | None, std_neutral: float | None,
                  expected_direction: int = 1) -> float | None:
    """The counterfactual seed's ranking score for one review difference:
    ``expected_direction * (ATE_critical - ATE_neutral) / sd(neutral differences)``.
    ``expected_direction`` is +1 where a sound reviewer's difference should grow (soundness
    aspects) and -1 where it should fall (sentiment, score), so larger is always better.
    None when an input is missing or the neutral differences have no spread."""
    if ate_critical is None or ate_neutral is None or not std_neutral:
        return None
    if expected_direction not in (1, -1):
        raise ValueError(f"expected_direction must be +1 or -1, got {expected_direction}")
    return float(expected_direction * (ate_critical - ate_neutral) / std_neutral)


def perturbation_verdict(original, perturbed, margin: float | None = None, scale_values=None,
                         alpha: float = 0.05) -> dict:
    """:func:`verdict` with the margin chosen as the seed chooses it when none is given: by
    :func:`equivalence_margin` of ``scale_values``, else of the observed scores."""
    if margin is None:
        values = scale_values if scale_values is not None else [
            v for v in list(original) + list(perturbed) if v is not None]
        margin = equivalence_margin(values)
    return verdict(original, perturbed, margin, alpha)
