"""praib.metrics.perturbation.stats robustness and treatment-effect statistics, checked against scipy/statsmodels
called directly and against hand computations."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats as sps
from statsmodels.stats.weightstats import ttost_paired

from praib.metrics.perturbation.stats import (
    acceptance_rate_change,
    ate_mixed_model,
    benjamini_hochberg,
    category_shares,
    equivalence_margin,
    ranking_score,
    tost_paired,
    transition_matrix,
    verdict,
    wilcoxon_directional,
)
from praib.metrics.summary import summarise


def test_summarise_is_unchanged():
    assert summarise([1, 2, None, float("nan"), 3]) == {"mean": 2.0, "std": 1.0, "n": 3}


def test_wilcoxon_matches_scipy_and_finds_a_planted_increase():
    rng = np.random.default_rng(1)
    before = rng.integers(1, 5, 40).astype(float)
    after = before + rng.choice([0, 1, 1, 2], 40)
    result = wilcoxon_directional(before, after)
    differences = after - before
    assert result["p_increase"] == pytest.approx(sps.wilcoxon(differences, alternative="greater").pvalue)
    assert result["p_decrease"] == pytest.approx(sps.wilcoxon(differences, alternative="less").pvalue)
    assert result["n_nonzero"] == int(np.count_nonzero(differences))
    assert result["p_increase"] < 1e-4 < result["p_decrease"]


def test_wilcoxon_with_no_change_is_not_significant():
    assert wilcoxon_directional([3, 4, 2], [3, 4, 2]) == {"p_increase": 1.0, "p_decrease": 1.0,
                                                           "statistic": None, "n_nonzero": 0}


def test_tost_matches_statsmodels_and_the_seed_formula():
    before = np.array([5, 6, 3, 8, 6, 5, 6, 3, 8, 5], dtype=float)
    after = np.array([5, 6, 4, 8, 5, 5, 6, 3, 7, 6], dtype=float)
    result = tost_paired(before, after, margin=1.0)
    expected = ttost_paired(after, before, -1.0, 1.0)
    assert result["p_value"] == pytest.approx(expected[0])
    # The seed's t_l = (d + δ)/SE and t_u = (d - δ)/SE against t(n-1), by hand.
    d = after - before
    se = d.std(ddof=1) / np.sqrt(d.size)
    p_lower = sps.t.sf((d.mean() + 1.0) / se, d.size - 1)
    p_upper = sps.t.cdf((d.mean() - 1.0) / se, d.size - 1)
    assert result["p_lower"] == pytest.approx(p_lower)
    assert result["p_upper"] == pytest.approx(p_upper)
    assert result["p_value"] == pytest.approx(max(p_lower, p_upper))


def test_tost_with_constant_differences_and_too_few_pairs():
    assert tost_paired([1, 2, 3], [1, 2, 3], 0.5)["p_value"] == 0.0
    assert tost_paired([1, 2, 3], [2, 3, 4], 0.5)["p_value"] == 1.0
    assert tost_paired([1], [2], 0.5)["p_value"] is None
    with pytest.raises(ValueError, match="positive"):
        tost_paired([1, 2], [1, 2], 0)



@pytest.mark.parametrize("shift, margin, equivalent", [
    (0.25, 0.5, True), (-0.25, 0.5, True),     # inside the margin, up or down
    (1.0, 0.5, False), (-1.0, 0.5, False),     # outside it, up or down: a uniform 1-point drop is no equivalence
    (-0.75, 1.0, True), (-1.5, 1.0, False),
])
def test_tost_with_constant_differences_is_the_limit_of_the_t_tests(shift, margin, equivalent):
    """Identical differences leave the t statistics undefined; the mean is then known exactly. The shortcut's
    p-value is the limit statsmodels' TOST reaches as the spread of the differences goes to zero."""
    before = np.array([5.0, 6.0, 7.0, 8.0, 6.0, 5.0])
    after = before + shift                      # exact in binary: every difference is the same number
    assert tost_paired(before, after, margin) == {"p_value": 0.0 if equivalent else 1.0,
                                                  "p_lower": 0.0 if equivalent else 1.0,
                                                  "p_upper": 0.0 if equivalent else 1.0}
    spread = 1e-7 * np.array([1, -1, 1, -1, 1, -1])
    p_value = ttost_paired(after + spread, before, -margin, margin)[0]
    assert p_value == pytest.approx(0.0 if equivalent else 1.0, abs=1e-6)


def test_a_uniform_one_point_drop_over_few_pairs_is_not_called_equivalent():
    """Four pairs are too few for Wilcoxon (its smallest one-sided p is 1/16); TOST must not call the drop
    equivalent."""
    result = verdict([5, 6, 7, 8], [4, 5, 6, 7], margin=0.5)
    assert result["p_decrease"] == pytest.approx(1 / 16) and result["p_equivalence"] == 1.0
    assert result["verdict"] == "inconclusive"

def test_verdict_detects_a_planted_decrease():
    rng = np.random.default_rng(2)
    before = rng.integers(3, 9, 50).astype(float)
    after = before - 2 + rng.choice([-1, 0, 1], 50)
    result = verdict(before, after, margin=1.0)
    assert result["verdict"] == "decrease"
    assert result["p_decrease"] == pytest.approx(sps.wilcoxon(after - before, alternative="less").pvalue)
    assert result["mean_difference"] == pytest.approx((after - before).mean())
    assert result["n"] == 50 and result["margin"] == 1.0 and result["alpha"] == 0.05


def test_verdict_without_an_effect_is_equivalent_with_enough_pairs_and_inconclusive_with_few():
    rng = np.random.default_rng(3)
    before = rng.integers(1, 5, 300).astype(float)
    noise = rng.choice([-1, 0, 1], 300)
    after = before + noise
    large = verdict(before, after, margin=0.5)
    assert large["verdict"] == "equivalent"
    assert large["p_equivalence"] == pytest.approx(ttost_paired(after, before, -0.5, 0.5)[0])
    small = verdict(before[:5], after[:5], margin=0.5)
    assert small["verdict"] == "inconclusive"


def test_verdict_skips_and_counts_missing_pairs():
    result = verdict([3, None, 4, 2, float("nan")], [3, 2, None, 2, 1], margin=0.5)
    assert result["n"] == 2 and result["n_missing"] == 3


@pytest.mark.parametrize("values, margin", [
    ((1, 2, 3, 4), 0.5),              # dimension scores
    ((0, 1, 2, 3), 0.5),              # decision levels
    ((1, 2, 3, 4, 5), 0.5),           # confidence
    (tuple(range(1, 11)), 1.0),       # overall score
    ((1, 3, 5, 6, 8, 10), 1.0),       # ICLR 2022-2025 rating
])
def test_equivalence_margin_follows_the_seed(values, margin):
    assert equivalence_margin(values) == margin


def test_benjamini_hochberg_against_a_hand_computation():
    # Sorted p: 0.01, 0.03, 0.04, 0.20 (m = 4); adjusted p_(k) = min_{j >= k} p_(j) m / j.
    adjusted = benjamini_hochberg([0.01, 0.04, 0.03, 0.20, None])
    assert adjusted[:4] == pytest.approx([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.20])
    assert adjusted[4] is None
    assert benjamini_hochberg([]) == []


def _counterfactual_frame(effect, seed, papers=30):
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(papers):
        paper_shift = rng.normal(0, 0.7)
        for condition in (1, 1, 1, 0, 0, 0, 0):
            rows.append({"paper": f"p{p}", "critical": condition,
                         "difference": paper_shift + effect * condition + rng.normal(0, 0.5)})
    return pd.DataFrame(rows)


def test_mixed_model_matches_statsmodels_and_recovers_a_planted_effect():
    frame = _counterfactual_frame(effect=-2.0, seed=4)
    result = ate_mixed_model(frame["difference"], frame["paper"], frame["critical"])
    fit = smf.mixedlm("difference ~ critical", frame, groups=frame["paper"]).fit()
    assert result["ate_neutral"] == pytest.approx(fit.params["Intercept"])
    assert result["effect"] == pytest.approx(fit.params["critical"])
    assert result["ate_critical"] == pytest.approx(fit.params["Intercept"] + fit.params["critical"])
    assert result["p_value"] == pytest.approx(fit.pvalues["critical"])
    assert result["effect"] == pytest.approx(-2.0, abs=0.2)
    assert result["p_value"] < 1e-10
    neutral = frame.loc[frame["critical"] == 0, "difference"]
    assert result["std_neutral"] == pytest.approx(neutral.std(ddof=1))
    assert (result["n_critical"], result["n_neutral"], result["n_papers"]) == (90, 120, 30)


def test_mixed_model_without_an_effect_is_not_significant():
    frame = _counterfactual_frame(effect=0.0, seed=5)
    assert ate_mixed_model(frame["difference"], frame["paper"], frame["critical"])["p_value"] > 0.05


def test_mixed_model_counts_missing_and_needs_both_conditions():
    result = ate_mixed_model([1.0, None, 2.0], ["a", "a", "b"], [True, False, True])
    assert result["n_missing"] == 1 and result["n_neutral"] == 0
    assert result["p_value"] is None and result["ate_critical"] is None
    assert "both critical and neutral" in result["reason"]
    flat = ate_mixed_model([1.0, 1.0, 1.0, 1.0], ["a", "a", "b", "b"], [True, False, True, False])
    assert flat["p_value"] is None and "same" in flat["reason"] and flat["mean_critical"] == 1.0
    with pytest.raises(ValueError, match="parallel"):
        ate_mixed_model([1.0], ["a", "b"], [True])


def test_ranking_score_by_hand():
    assert ranking_score(-2.0, 0.5, 0.5, expected_direction=-1) == pytest.approx(5.0)
    assert ranking_score(1.5, 0.5, 2.0) == pytest.approx(0.5)
    assert ranking_score(1.5, 0.5, 0.0) is None
    assert ranking_score(None, 0.5, 1.0) is None


def test_transition_matrix_by_hand():
    result = transition_matrix([1, 1, 2, 3, None], [1, 2, 2, 1, 3], values=[1, 2, 3])
    assert result == {"values": [1, 2, 3], "counts": [[1, 1, 0], [0, 1, 0], [1, 0, 0]]}
    with pytest.raises(ValueError, match="outside"):
        transition_matrix([1], [4], values=[1, 2, 3])


def test_acceptance_rate_change_by_hand():
    result = acceptance_rate_change([True, True, False, False, None], [True, False, False, False, True])
    assert result == {"original": 0.5, "perturbed": 0.25, "change": -0.25, "n": 4}
    assert acceptance_rate_change([], [])["change"] is None


def test_category_shares_by_hand():
    # Four known pairs (the fifth has no perturbed value): 0 -> 0, 1 -> 0, 1 -> 2, 2 -> 2.
    result = category_shares([0, 1, 1, 2, 3], [0, 0, 2, 2, None], values=[0, 1, 2, 3])
    assert result == {0: {"original": 0.25, "perturbed": 0.5, "change": 0.25},
                      1: {"original": 0.5, "perturbed": 0.0, "change": -0.5},
                      2: {"original": 0.25, "perturbed": 0.5, "change": 0.25},
                      3: {"original": 0.0, "perturbed": 0.0, "change": 0.0}}
    assert category_shares([None], [1], values=[1]) == {1: {"original": None, "perturbed": None, "change": None}}
