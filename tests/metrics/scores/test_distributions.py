"""Score distributions, their differences and the confidence gap, checked by hand
(PRAIB Appendices F and G)."""

import pytest

from praib.metrics.scores.distributions import (
    DECISION_CLASSES,
    by_decision,
    confidence_gap,
    confidence_gap_to_medians,
    decision_class,
    distribution_difference,
    normalised_distribution,
    numbered_panel_medians,
    panel_medians,
)

SCALE = [1, 2, 3, 4, 5]
HUMAN = [1, 2, 2, 3, 3, 3, 4, 4, 4, 4]        # shares .1 .2 .3 .4 0
MODEL = [4, 4, 4, 5]                          # shares 0 0 0 .75 .25


def test_shares_of_ten_values_include_zeros():
    assert normalised_distribution(HUMAN, SCALE) == pytest.approx({1: .1, 2: .2, 3: .3, 4: .4, 5: 0.0})
    assert list(normalised_distribution(HUMAN, [5, 3, 1, 2, 4])) == SCALE


def test_missing_values_are_not_counted():
    assert normalised_distribution([None, 2, float("nan"), 4.0], SCALE) == {1: 0, 2: .5, 3: 0, 4: .5, 5: 0}


def test_values_outside_the_scale_are_named_in_the_error():
    with pytest.raises(ValueError, match=r"\[0, 7\]"):
        normalised_distribution([1, 7, 0, 7, 3], SCALE)


def test_no_values_give_undefined_shares():
    assert normalised_distribution([], SCALE) == dict.fromkeys(SCALE)
    assert normalised_distribution([None], [1, 2]) == {1: None, 2: None}


def test_difference_in_percentage_points_and_total_variation():
    result = distribution_difference(MODEL, HUMAN, SCALE)
    assert result["model"] == pytest.approx({1: 0, 2: 0, 3: 0, 4: .75, 5: .25})
    assert result["human"] == pytest.approx({1: .1, 2: .2, 3: .3, 4: .4, 5: 0})
    assert result["diff_pp"] == pytest.approx({1: -10, 2: -20, 3: -30, 4: 35, 5: 25})
    # 10 + 20 + 30 + 35 + 25 = 120 pp; the standard distance is half the sum of shares: 0.6
    assert result["sum_abs_diff_pp"] == pytest.approx(120)
    assert result["total_variation"] == pytest.approx(0.6)
    assert (result["n_model"], result["n_human"]) == (4, 10)


def test_identical_and_disjoint_distributions_bound_the_distance():
    same = distribution_difference([1, 2], [2, 1, 1, 2], [1, 2])
    assert same["total_variation"] == 0 and same["sum_abs_diff_pp"] == 0
    disjoint = distribution_difference([1, 1], [2], [1, 2])
    assert disjoint["total_variation"] == 1 and disjoint["sum_abs_diff_pp"] == 200


def test_difference_with_an_empty_side_is_undefined_not_an_error():
    result = distribution_difference([], HUMAN, SCALE)
    assert result["model"] == dict.fromkeys(SCALE)
    assert result["human"] == pytest.approx({1: .1, 2: .2, 3: .3, 4: .4, 5: 0})
    assert result["diff_pp"] == dict.fromkeys(SCALE)
    assert result["sum_abs_diff_pp"] is None and result["total_variation"] is None
    assert (result["n_model"], result["n_human"]) == (0, 10)
    assert distribution_difference([], [], [])["diff_pp"] == {}


def test_confidence_gap_against_medians_of_even_sized_panels():
    human_ids = ["p1", "p1", "p2", "p2", "p2", "p2", "p3", "p4"]
    human = [3, 4, 2, 5, 3, 4, 4, None]        # medians: p1 3.5, p2 3.5, p3 4; p4 has none
    model_ids = ["p1", "p1", "p2", "p3", "p4", "p9"]
    model = [4, 5, 3, None, 4, 4]
    # gaps: 0.5, 1.5, -0.5; p3 (no model confidence), p4 and p9 (no human one) are skipped
    result = confidence_gap(model_ids, model, human_ids, human)
    assert result == {"mean": pytest.approx(0.5), "std": pytest.approx(1.0), "n": 3, "n_papers": 2,
                      "n_skipped": 3}


def test_medians_taken_once_give_every_model_its_gap():
    medians = panel_medians(["p1", "p1", "p2", "p2", "p2", "p2", "p3", "p4"], [3, 4, 2, 5, 3, 4, 4, None])
    assert medians == {"p1": 3.5, "p2": 3.5, "p3": 4.0}
    result = confidence_gap_to_medians(["p1", "p1", "p2", "p3", "p4", "p9"], [4, 5, 3, None, 4, 4], medians)
    assert result == {"mean": pytest.approx(0.5), "std": pytest.approx(1.0), "n": 3, "n_papers": 2,
                      "n_skipped": 3}
    assert confidence_gap_to_medians(["p3"], [5.0], medians) == {"mean": 1.0, "std": None, "n": 1, "n_papers": 1,
                                                                  "n_skipped": 0}


@pytest.mark.parametrize("scale", [[1, 2, 3, 4, 5], [1, 3, 5, 6, 8, 10], [-2.0, 0.5, 1.0, 7.25]])
def test_medians_of_numbered_papers_are_numpys_medians_of_each_paper(scale):
    """Papers given as numbers: each paper's median is numpy's (an even count's the mean of its middle two), NaN
    for a paper without a score, by counting whole-number scores (the second scale) and otherwise (the third);
    the gaps and the papers compared are those of the papers' ids."""
    import numpy as np

    rng = np.random.default_rng(7)
    papers = rng.integers(0, 300, 2000)
    scores = rng.choice(scale, 2000).astype(float)
    scores[rng.random(2000) < 0.1] = np.nan
    medians = numbered_panel_medians(papers, scores, 310)
    for paper in range(310):
        own = scores[(papers == paper) & ~np.isnan(scores)]
        assert (np.isnan(medians[paper]) if not len(own) else medians[paper] == np.median(own)), paper
    assert np.isnan(medians[300:]).all() and np.isfinite(medians[:300]).sum() > 250
    model = np.array([0, 0, 5, 305, -1, 17])
    confidences = np.array([scale[0], np.nan, scale[-1], scale[0], scale[0], scale[1]], dtype=float)
    by_id = panel_medians([f"p{p}" for p in papers], scores)
    assert confidence_gap_to_medians(model, confidences, medians) == confidence_gap_to_medians(
        [f"p{p}" for p in model], confidences.tolist(), by_id)


def test_confidence_gap_of_nothing():
    assert confidence_gap([], [], [], []) == {"mean": None, "std": None, "n": 0, "n_papers": 0, "n_skipped": 0}
    one = confidence_gap(["p1"], [5], ["p1", "p1"], [3, 4])
    assert one == {"mean": 1.5, "std": None, "n": 1, "n_papers": 1, "n_skipped": 0}
    assert confidence_gap(["p1"], [5], [], [])["n_skipped"] == 1


@pytest.mark.parametrize("decision, expected", [
    ("Accept (poster)", "accept"),
    ("Accept (Oral)", "accept"),
    ("accept", "accept"),
    ("ICLR 2017 Poster", "accept"),
    ("Spotlight", "accept"),
    ("Reject", "reject"),
    ("Desk Rejected", "reject"),
    ("Withdrawn", "reject"),
    ("ICLR 2018 Invite to Workshop Track", "reject"),
    ("Pending", None),
    ("", None),
    (None, None),
    (float("nan"), None),
])
def test_decision_class(decision, expected):
    assert decision_class(decision) == expected


def test_by_decision_splits_parallel_columns():
    decisions = ["Accept (poster)", "Reject", None, "reject", "Accept (oral)"]
    split = by_decision(decisions, ["a", "b", "c", "d", "e"], [1, 2, 3, 4, 5])
    assert set(split) == set(DECISION_CLASSES)
    assert split["accept"] == (["a", "e"], [1, 5])
    assert split["reject"] == (["b", "d"], [2, 4])
    assert by_decision([], [], []) == {"accept": ([], []), "reject": ([], [])}
    with pytest.raises(ValueError):
        by_decision(["Reject"], [1, 2])


def test_confidence_gap_and_distribution_by_decision():
    human_ids = ["p1", "p1", "p2", "p2", "p3", "p3"]
    human_conf = [3, 4, 2, 2, 5, 4]
    human_dec = ["Accept (poster)", "Accept (poster)", "Reject", "Reject", "Accept (oral)", "Accept (oral)"]
    model_ids = ["p1", "p2", "p3"]
    model_conf = [4, 4, 5]
    model_dec = ["Accept (poster)", "Reject", "Accept (oral)"]
    model, human = by_decision(model_dec, model_ids, model_conf), by_decision(human_dec, human_ids, human_conf)
    gaps = {d: confidence_gap(*model[d], *human[d]) for d in DECISION_CLASSES}
    # accept: p1 4 - 3.5 = 0.5, p3 5 - 4.5 = 0.5; reject: p2 4 - 2 = 2
    assert gaps["accept"] == {"mean": 0.5, "std": 0.0, "n": 2, "n_papers": 2, "n_skipped": 0}
    assert gaps["reject"] == {"mean": 2.0, "std": None, "n": 1, "n_papers": 1, "n_skipped": 0}

    (model_accept,) = by_decision(model_dec, model_conf)["accept"]
    (human_accept,) = by_decision(human_dec, human_conf)["accept"]
    accepted = distribution_difference(model_accept, human_accept, SCALE)
    # model {4, 5}: .5 .5; human {3, 4, 5, 4}: .25 .5 .25 -> diffs -25, 0, +25 pp
    assert accepted["diff_pp"] == pytest.approx({1: 0, 2: 0, 3: -25, 4: 0, 5: 25})
    assert accepted["sum_abs_diff_pp"] == pytest.approx(50)
    assert accepted["total_variation"] == pytest.approx(0.25)
