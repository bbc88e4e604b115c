"""Judge quality: Cohen's kappa, Krippendorff's nominal alpha and accuracy on a labelled set, checked by hand."""

import krippendorff
import numpy as np
import pytest

from praib.metrics.judged.judge_quality import cohen_kappa, judge_accuracy, krippendorff_nominal, two_judge_agreement

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
