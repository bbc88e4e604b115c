"""The metrics/ate and metrics/perturbation_tests evaluate modules, checked against scipy and
statsmodels called directly."""


import evaluate
import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats as sps
from statsmodels.stats.weightstats import ttost_paired
from tests.paths import METRICS



def load(name):
    return evaluate.load(str(METRICS / name))


def test_perturbation_tests_module_finds_a_decrease_with_scipys_p_value():
    before, after = [4, 4, 3, 4, 3, 4, 4, 3], [2, 2, 1, 2, 1, 1, 2, 1]
    result = load("perturbation_tests").compute(original=before, perturbed=after, margin=0.5)
    assert result["verdict"] == "decrease"
    differences = np.subtract(after, before)
    assert result["p_decrease"] == pytest.approx(sps.wilcoxon(differences, alternative="less").pvalue)
    assert result["mean_difference"] == pytest.approx(-2.125)


def test_perturbation_tests_module_equivalence_and_margin_from_the_scale():
    rng = np.random.default_rng(11)
    before = rng.integers(1, 11, 200).astype(float)
    after = before + rng.choice([-1, 0, 0, 1], 200)
    tests = load("perturbation_tests")
    result = tests.compute(original=before.tolist(), perturbed=after.tolist(), scale=list(range(1, 11)))
    assert result["margin"] == 1.0 and result["verdict"] == "equivalent"
    assert result["p_equivalence"] == pytest.approx(ttost_paired(after, before, -1.0, 1.0)[0])
    few = tests.compute(original=[3, 2, 4], perturbed=[2, 2, 3], scale=[1, 2, 3, 4])
    assert few["margin"] == 0.5 and few["verdict"] == "inconclusive"
    strict = tests.compute(original=before.tolist(), perturbed=after.tolist(), margin=0.05, alpha=0.01)
    assert strict["verdict"] == "inconclusive" and strict["alpha"] == 0.01


def test_ate_module_matches_statsmodels_mixedlm():
    rng = np.random.default_rng(12)
    rows = []
    for p in range(25):
        shift = rng.normal(0, 0.5)
        for critical in (1, 1, 1, 0, 0, 0, 0):
            rows.append({"paper": f"p{p}", "critical": critical,
                         "difference": shift + 1.5 * critical + rng.normal(0, 0.6)})
    frame = pd.DataFrame(rows)
    result = load("ate").compute(
        differences=frame["difference"].tolist(), paper_ids=frame["paper"].tolist(),
        conditions=["soundness-critical" if c else "soundness-neutral" for c in frame["critical"]])
    fit = smf.mixedlm("difference ~ critical", frame, groups=frame["paper"]).fit()
    assert result["effect"] == pytest.approx(fit.params["critical"])
    assert result["p_value"] == pytest.approx(fit.pvalues["critical"])
    assert result["effect"] == pytest.approx(1.5, abs=0.3) and result["p_value"] < 1e-6
    sd = frame.loc[frame["critical"] == 0, "difference"].std(ddof=1)
    assert result["ranking_score"] == pytest.approx(fit.params["critical"] / sd)


def test_ate_module_signs_the_ranking_score_and_rejects_unknown_conditions():
    ate = load("ate")
    kwargs = dict(differences=[-2, -3, 0, 1, -2, -1, 0, -1], paper_ids=["a"] * 4 + ["b"] * 4,
                  conditions=["critical", "critical", "neutral", "neutral"] * 2)
    down = ate.compute(**kwargs, expected_direction=-1)
    # Plain means: critical -2.0, neutral 0.0; neutral differences 0, 1, 0, -1 have sd sqrt(2/3).
    assert down["mean_critical"] == -2.0 and down["mean_neutral"] == 0.0
    assert down["std_neutral"] == pytest.approx(np.sqrt(2 / 3))
    assert down["ranking_score"] == pytest.approx(
        -(down["ate_critical"] - down["ate_neutral"]) / np.sqrt(2 / 3))
    with pytest.raises(ValueError, match="unknown conditions"):
        ate.compute(differences=[1.0], paper_ids=["a"], conditions=["presentation"])
