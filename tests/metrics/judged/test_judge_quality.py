"""Judge quality: Cohen's kappa, Krippendorff's nominal alpha and accuracy on a labelled set, checked by hand."""

import krippendorff
import numpy as np
import pytest

from praib.metrics.judged.judge_quality import (INVALID, Estimate, annotator_agreement, cohen_kappa, judge_accuracy,
                                                krippendorff_nominal, label_scores, percentile_bootstrap,
                                                two_judge_agreement)

# A 2x2 table of two judges over 10 items:
#                 judge b: yes   judge b: no
#   judge a: yes       4             2
#   judge a: no        1             3
A = [True] * 6 + [False] * 4
B = [True] * 4 + [False] * 2 + [True] * 1 + [False] * 3


def test_cohen_kappa_of_a_hand_computed_2x2_table():
    # p_o = (4 + 3) / 10 = 0.7; a says yes 6/10, b says yes 5/10
    # p_e = 0.6 * 0.5 + 0.4 * 0.5 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    assert cohen_kappa(A, B) == pytest.approx(0.4)
    assert cohen_kappa(B, A) == pytest.approx(0.4)


def test_krippendorff_nominal_alpha_by_hand_and_against_the_library():
    # 20 pairable values: 11 yes, 9 no. Each of the 3 disagreeing items adds one yes-no and one no-yes
    # coincidence: observed mismatches 6. Expected mismatches 2 * 11 * 9 = 198.
    # alpha = 1 - (20 - 1) * 6 / 198 = 84 / 198 = 14 / 33
    assert krippendorff_nominal(A, B) == pytest.approx(14 / 33)
    data = np.array([A, B], dtype=float)
    assert krippendorff_nominal(A, B) == pytest.approx(krippendorff.alpha(data, level_of_measurement="nominal"))


def test_kappa_matches_statsmodels_and_sklearn_when_installed():
    a = ["x", "y", "z", "x", "x", "y", "z", "z", "x", "y", "y", "x"]
    b = ["x", "y", "y", "x", "z", "y", "z", "x", "x", "y", "z", "x"]
    # by hand: agree on 8 of 12 -> p_o = 8/12; a: x5 y4 z3, b: x5 y4 z3 -> p_e = (25 + 16 + 9) / 144 = 50/144
    assert cohen_kappa(a, b) == pytest.approx((8 / 12 - 50 / 144) / (1 - 50 / 144))
    checked = 0
    try:
        from sklearn.metrics import cohen_kappa_score
        assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
        checked += 1
    except ImportError:
        pass
    try:
        from statsmodels.stats.inter_rater import cohens_kappa
        labels = sorted(set(a) | set(b))
        table = np.zeros((3, 3))
        for x, y in zip(a, b):
            table[labels.index(x), labels.index(y)] += 1
        assert cohen_kappa(a, b) == pytest.approx(cohens_kappa(table).kappa)
        checked += 1
    except ImportError:
        pass
    if not checked:
        pytest.skip("neither scikit-learn nor statsmodels is installed (the hand-computed value was checked)")


def test_two_judge_agreement_skips_missing_labels():
    result = two_judge_agreement(A + [None, True], B + [True, None])
    assert result["n"] == 10 and result["skipped"] == 2
    assert result["agreement"] == pytest.approx(0.7)
    assert result["cohen_kappa"] == pytest.approx(0.4)
    assert result["krippendorff_alpha"] == pytest.approx(14 / 33)


def test_degenerate_agreement_is_none_not_an_error():
    assert cohen_kappa([], []) is None
    assert cohen_kappa([True, True], [True, True]) is None  # chance agreement is 1
    assert krippendorff_nominal([True, True], [True, True]) is None
    assert two_judge_agreement([None], [True]) == {"cohen_kappa": None, "krippendorff_alpha": None,
                                                   "agreement": None, "n": 0, "skipped": 1}
    with pytest.raises(ValueError, match="differ in length"):
        cohen_kappa([True], [True, False])


def test_judge_accuracy_and_confusion_by_hand():
    labels = [True, True, False, None, False, True]
    gold = [True, False, False, True, None, True]
    # gold-labelled items: (T,T) right, (T,F) wrong, (F,F) right, (None,T) invalid -> wrong, (T,T) right
    result = judge_accuracy(labels, gold)
    assert result["n"] == 5 and result["correct"] == 3 and result["invalid"] == 1
    assert result["accuracy"] == pytest.approx(3 / 5)
    assert result["confusion"] == {"yes": {"yes": 2, "invalid": 1}, "no": {"yes": 1, "no": 1}}
    assert judge_accuracy(["a", "b"], ["a", "c"])["confusion"] == {"a": {"a": 1}, "c": {"b": 1}}
    assert judge_accuracy([], [])["accuracy"] is None


# Ten items: the judge gets 7 right, answers two wrongly (items 4 and 9) and one not at all (item 10).
GOLD = ["S", "S", "S", "S", "W", "W", "W", "W", "W", "W"]
JUDGED = ["S", "S", "S", "W", "W", "W", "W", "W", "S", None]


def test_label_scores_by_hand():
    result = label_scores(JUDGED, GOLD, labels=["S", "W"], resamples=50)
    assert (result["n"], result["correct"], result["invalid"]) == (10, 7, 1)
    assert result["accuracy"].value == pytest.approx(0.7)
    # strength: 3 of the 4 judged S are S, 3 of the 4 gold S judged S. weakness: 4 of 5, 4 of 6.
    # F1: S 0.75, W 2 * 0.8 * (2/3) / (0.8 + 2/3) = 8/11; macro-F1 = (3/4 + 8/11) / 2 = 65/88
    assert result["macro_f1"].value == pytest.approx(65 / 88)
    # kappa: the invalid answer is a category of its own. Gold S4 W6 invalid 0, judge S4 W5 invalid 1:
    # p_e = (4 * 4 + 6 * 5 + 0 * 1) / 100 = 0.46; kappa = (0.7 - 0.46) / 0.54 = 4/9
    assert result["cohen_kappa"].value == pytest.approx(4 / 9)
    strength, weakness = result["per_label"]["S"], result["per_label"]["W"]
    assert (strength["precision"].value, strength["recall"].value) == pytest.approx((0.75, 0.75))
    assert (weakness["precision"].value, weakness["recall"].value) == pytest.approx((0.8, 4 / 6))
    assert (strength["gold"], strength["judged"], weakness["gold"], weakness["judged"]) == (4, 4, 6, 5)
    assert result["confusion"] == {"S": {"S": 3, "W": 1, INVALID: 0}, "W": {"S": 1, "W": 4, INVALID: 1}}
    assert result["majority"] == {"label": "W", "accuracy": 0.6}


def _hand_bootstrap(gold, judged, resamples, seed):
    """The percentile bootstrap written out with numpy: accuracy, kappa and macro-F1 per resample."""
    gold, judged = np.array(gold), np.array([j if j is not None else "-" for j in judged])
    values = {"accuracy": [], "cohen_kappa": [], "macro_f1": [], "precision S": []}
    for rows in np.random.default_rng(seed).integers(0, len(gold), size=(resamples, len(gold))):
        g, j = gold[rows], judged[rows]
        p_o = np.mean(g == j)
        p_e = sum(np.mean(g == c) * np.mean(j == c) for c in set(g) | set(j))
        values["accuracy"].append(p_o)
        if p_e < 1:
            values["cohen_kappa"].append((p_o - p_e) / (1 - p_e))
        f1 = []
        for c in set(g):
            tp, predicted, true = np.sum((g == c) & (j == c)), np.sum(j == c), np.sum(g == c)
            precision, recall = (tp / predicted if predicted else 0.0), tp / true
            f1.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
        values["macro_f1"].append(np.mean(f1))
        if np.sum(j == "S"):
            values["precision S"].append(np.sum((g == "S") & (j == "S")) / np.sum(j == "S"))
    return {name: tuple(np.percentile(v, [2.5, 97.5])) for name, v in values.items()}


@pytest.mark.parametrize("seed", [0, 7])
def test_label_score_intervals_are_the_seeded_percentile_bootstrap(seed):
    result = label_scores(JUDGED, GOLD, resamples=300, seed=seed)
    expected = _hand_bootstrap(GOLD, JUDGED, 300, seed)
    for name in ("accuracy", "cohen_kappa", "macro_f1"):
        assert (result[name].low, result[name].high) == pytest.approx(expected[name], abs=1e-12), name
    precision = result["per_label"]["S"]["precision"]
    assert (precision.low, precision.high) == pytest.approx(expected["precision S"], abs=1e-12)
    assert label_scores(JUDGED, GOLD, resamples=300, seed=seed) == result


def test_percentile_bootstrap_skips_undefined_values_and_says_when_none_is_defined():
    # Mean of the items drawn; a resample drawing item 0 only is undefined for "odd".
    data = np.array([0.0, 1.0, 2.0])
    bounds = percentile_bootstrap(lambda rows: {"mean": data[rows].mean(), "never": None}, 3, resamples=400, seed=3)
    draws = np.random.default_rng(3).integers(0, 3, size=(400, 3))
    assert bounds["mean"] == pytest.approx(tuple(np.percentile(data[draws].mean(axis=1), [2.5, 97.5])))
    assert bounds["never"] == (None, None)


def test_label_scores_of_undefined_numbers_and_bad_input():
    same = label_scores(["W", "W"], ["W", "W"], resamples=10)
    assert same["accuracy"].value == 1.0 and same["cohen_kappa"] == Estimate(None)
    assert same["per_label"]["W"]["precision"].value == 1.0
    never = label_scores(["W", "W"], ["S", "W"], resamples=10)["per_label"]["S"]
    assert never["precision"].value is None and never["recall"].value == 0.0
    with pytest.raises(ValueError, match="invalid"):
        label_scores(["W"], [INVALID], resamples=10)
    with pytest.raises(ValueError, match="differ in length"):
        label_scores(["W"], ["W", "S"])


def test_annotator_agreement_by_hand():
    # Two annotators on six items; they disagree on items 5 and 6; C labels one item only.
    a = {1: "S", 2: "S", 3: "W", 4: "W", 5: "S", 6: "W"}
    b = {1: "S", 2: "S", 3: "W", 4: "W", 5: "W", 6: "S"}
    result = annotator_agreement({"A": a, "B": b})
    # kappa: p_o = 4/6, both S3 W3 so p_e = 1/2: (2/3 - 1/2) / (1/2) = 1/3
    assert result["pairwise_kappa"] == {"A / B": pytest.approx(1 / 3)}
    # alpha: 12 values, 6 S and 6 W; 4 mismatching pairs; 1 - (12 - 1) * 4 / (2 * 6 * 6) = 7/18
    assert result["krippendorff_alpha"] == pytest.approx(7 / 18)
    assert (result["annotators"], result["items"]) == (2, 6)
    three = annotator_agreement({"A": a, "B": b, "C": {1: "S"}})
    assert three["items"] == 6 and three["pairwise_kappa"]["A / C"] is None  # one shared item: one label
    assert three["mean_pairwise_kappa"] == pytest.approx(1 / 3)
