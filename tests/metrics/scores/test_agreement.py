"""Krippendorff's ordinal alpha: golden values by hand, a published example, and an
independent implementation of the formulas (PRAIB Appendix D) on random data."""

import math
import warnings
from collections import defaultdict

import krippendorff
import numpy as np
import pytest

from praib.metrics.scores.agreement import (HumanPanels, alpha_by_venue, ordinal_alpha, panel_agreement,
                                           panel_alpha_draws, self_agreement)


def rows(panels):
    """{paper: [ratings]} -> parallel (paper_ids, ratings) columns."""
    pairs = [(paper, r) for paper, ratings in panels.items() for r in ratings]
    return [p for p, _ in pairs], [r for _, r in pairs]


# Unequal panel sizes, values 1 < 2 < 3; p4 is rated once and so not pairable.
UNEQUAL = {"p1": [1, 1, 2], "p2": [2, 3], "p3": [3, 3, 3, 1], "p4": [2]}
# n_uc      c=1 c=2 c=3   m_u
#   p1       2   1   0     3
#   p2       0   1   1     2
#   p3       1   0   3     4
# n_c        3   2   4     n = 9   (p4 left out)
# ordinal delta^2: (1,2): (5 - 5/2)^2 = 6.25; (2,3): (6 - 6/2)^2 = 9; (1,3): (9 - 7/2)^2 = 30.25
# sum_u 1/(m_u - 1) sum_{c != k} n_uc n_uk delta^2:
#   p1: 2 * 2*1 * 6.25 / 2 = 12.5;  p2: 2 * 1*1 * 9 / 1 = 18;  p3: 2 * 1*3 * 30.25 / 3 = 60.5  -> 91
# D_o = 91 / n = 91 / 9
# D_e = 2 * (3*2*6.25 + 2*4*9 + 3*4*30.25) / (n (n - 1)) = 945 / 72
# alpha = 1 - (91/9) / (945/72) = 1 - 104/135 = 31/135
# (Appendix D.1 as printed normalises D_o by sum_u m_u (m_u - 1) = 20 instead, giving
#  D_o = 224.5 / 20 and alpha = 0.1448; Krippendorff weights each paper by m_u, not by
#  its number of pairs, and only the two agree when all panels have the same size.)
UNEQUAL_ALPHA = 31 / 135

# Two-valued panels for the model-added cases; with two values delta^2 is a constant
# factor that cancels, so alpha = 1 - (n - 1) o_13 / (n_1 n_3).
#   humans only:      p1 [1,1], p2 [3,3], p3 [1,3]: n_1 = n_3 = 3, o_13 = 1 -> 1 - 5*1/9 = 4/9
#   model agrees:     p1 +1, p2 +3:  n_1 = n_3 = 4, o_13 = 1             -> 1 - 7*1/16 = 9/16
#   model opposite:   p1 +3, p2 +1:  n_1 = n_3 = 4, o_13 = 2/2 + 2/2 + 1 = 3 -> 1 - 7*3/16 = -5/16
PANELS = {"p1": [1, 1], "p2": [3, 3], "p3": [1, 3]}


def reference_alpha(paper_ids, ratings):
    """Appendix D.1 written out with numpy, per-paper normalisation as Krippendorff defines it."""
    by_paper = defaultdict(list)
    for paper, r in zip(paper_ids, ratings):
        if r is not None and not math.isnan(r):
            by_paper[paper].append(r)
    panels = [r for r in by_paper.values() if len(r) >= 2]
    values = sorted({r for panel in panels for r in panel})
    if not panels or len(values) < 2:
        return None
    n_uc = np.array([[panel.count(v) for v in values] for panel in panels], dtype=float)
    m_u = n_uc.sum(axis=1)
    n_c = n_uc.sum(axis=0)
    n = n_c.sum()
    delta2 = np.zeros((len(values), len(values)))
    for c in range(len(values)):
        for k in range(len(values)):
            lo, hi = min(c, k), max(c, k)
            delta2[c, k] = (n_c[lo:hi + 1].sum() - (n_c[c] + n_c[k]) / 2) ** 2
    d_o = sum((np.outer(row, row) * delta2).sum() / (m - 1) for row, m in zip(n_uc, m_u)) / n
    d_e = (np.outer(n_c, n_c) * delta2).sum() / (n * (n - 1))
    return 1 - d_o / d_e


def test_unequal_panels_by_hand():
    assert ordinal_alpha(*rows(UNEQUAL)) == pytest.approx(UNEQUAL_ALPHA)


def test_krippendorffs_published_ordinal_example():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers x 12
    # units with missing values; ordinal alpha = 0.815. Unit 12 has a single value.
    observers = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    paper_ids = [f"u{unit}" for observer in observers for unit in range(len(observer))]
    ratings = [r for observer in observers for r in observer]
    assert round(ordinal_alpha(paper_ids, ratings), 3) == 0.815


def test_matches_an_independent_implementation_on_random_data():
    rng = np.random.default_rng(7)
    for _ in range(30):
        n_papers, n_values = rng.integers(3, 40), rng.integers(2, 8)
        sizes = rng.integers(1, 7, size=n_papers)
        paper_ids = [f"p{u}" for u, size in enumerate(sizes) for _ in range(size)]
        # Each paper's ratings scatter around its own level, so alpha is far from 0 too.
        level = rng.integers(1, n_values + 1, size=n_papers).repeat(sizes)
        ratings = [float(v) for v in np.clip(level + rng.integers(-1, 2, size=len(level)), 1, n_values)]
        for i in rng.choice(len(ratings), size=len(ratings) // 5, replace=False):
            ratings[i] = None if i % 2 else float("nan")
        expected = reference_alpha(paper_ids, ratings)
        got = ordinal_alpha(paper_ids, ratings)
        assert (got is None) == (expected is None)
        if expected is not None:
            assert got == pytest.approx(expected, abs=1e-12)


def test_appendix_d1_pooled_form_agrees_when_panels_have_equal_size():
    rng = np.random.default_rng(11)
    paper_ids = [f"p{u}" for u in range(25) for _ in range(3)]
    ratings = list(rng.integers(1, 6, size=len(paper_ids)))
    panels = [ratings[i:i + 3] for i in range(0, len(ratings), 3)]
    values = sorted(set(ratings))
    n_uc = np.array([[panel.count(v) for v in values] for panel in panels], dtype=float)
    n_c, n = n_uc.sum(axis=0), len(ratings)
    delta2 = np.array([[(n_c[min(c, k):max(c, k) + 1].sum() - (n_c[c] + n_c[k]) / 2) ** 2
                        for k in range(len(values))] for c in range(len(values))])
    d_o = sum((np.outer(row, row) * delta2).sum() for row in n_uc) / sum(3 * 2 for _ in panels)
    d_e = (np.outer(n_c, n_c) * delta2).sum() / (n * (n - 1))
    assert ordinal_alpha(paper_ids, ratings) == pytest.approx(1 - d_o / d_e)


def test_only_the_order_of_values_matters_and_missing_is_absent():
    paper_ids, ratings = rows(UNEQUAL)
    stretched = [{1: -4.0, 2: 10.0, 3: 1000.0}[r] for r in ratings]
    assert ordinal_alpha(paper_ids, stretched) == pytest.approx(UNEQUAL_ALPHA)
    padded_ids = paper_ids + ["p1", "p5", "p5"]
    assert ordinal_alpha(padded_ids, ratings + [None, float("nan"), 3]) == pytest.approx(UNEQUAL_ALPHA)
    assert ordinal_alpha(paper_ids[::-1], ratings[::-1]) == pytest.approx(UNEQUAL_ALPHA)


@pytest.mark.parametrize("panels", [
    {},
    {"p1": [3], "p2": [5]},                          # nobody pairable
    {"p1": [None, 4], "p2": [float("nan"), 2]},      # pairable only before dropping missing
    {"p1": [4, 4], "p2": [4, 4, 4]},                 # one value: no expected disagreement
    {"p1": [4, 4], "p2": [2]},                       # the other value is only in an unpairable paper
])
def test_undefined_alpha_is_none(panels):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ordinal_alpha(*rows(panels)) is None


def test_perfect_agreement_is_one():
    assert ordinal_alpha(*rows({"p1": [1, 1], "p2": [2, 2, 2], "p3": [5, 5]})) == 1.0


def test_mismatched_columns_raise():
    with pytest.raises(ValueError):
        ordinal_alpha(["p1", "p1"], [1])


def venue_columns(slices):
    """{(venue, year_group): {paper: [ratings]}} -> four parallel columns."""
    out = ([], [], [], [])
    for (venue, year), panels in slices.items():
        ids, ratings = rows(panels)
        out[0].extend(ids)
        out[1].extend(ratings)
        out[2].extend([venue] * len(ids))
        out[3].extend([year] * len(ids))
    return out


def test_alpha_by_venue_averages_years_with_equal_weight():
    columns = venue_columns({
        ("ICLR", "2024"): UNEQUAL,
        ("ICLR", "<=2018"): {"a": [5, 5], "b": [5, 5, 5]},     # undefined: reported, not averaged
        ("ICLR", "2025"): PANELS,
        ("NeurIPS", "2024"): {"n1": [1, 1], "n2": [2, 2]},
    })
    result = alpha_by_venue(*columns)
    iclr = result["ICLR"]
    assert list(iclr["per_year"]) == ["<=2018", "2024", "2025"]
    assert iclr["per_year"]["<=2018"] is None
    assert iclr["per_year"]["2024"] == pytest.approx(31 / 135)
    assert iclr["per_year"]["2025"] == pytest.approx(4 / 9)
    assert iclr["alpha"] == pytest.approx((31 / 135 + 4 / 9) / 2)
    # pairable papers of the averaged years: p1-p3 (9 ratings) and p1-p3 of 2025 (6 ratings)
    assert (iclr["n_papers"], iclr["n_ratings"]) == (6, 15)
    assert result["NeurIPS"] == {"alpha": 1.0, "per_year": {"2024": 1.0}, "n_papers": 2, "n_ratings": 4}


def test_alpha_by_venue_with_no_defined_year():
    result = alpha_by_venue(["a", "a"], [3, 3], ["ICLR", "ICLR"], ["2023", "2023"])
    assert result == {"ICLR": {"alpha": None, "per_year": {"2023": None}, "n_papers": 0, "n_ratings": 0}}
    assert alpha_by_venue([], [], [], []) == {}


def panel_columns(panels, venue="ICLR", year="2025"):
    ids, ratings = rows(panels)
    return ids, ratings, [venue] * len(ids), [year] * len(ids)


def test_model_agreeing_with_unanimous_panels_raises_alpha_by_hand():
    result = panel_agreement(*panel_columns(PANELS), ["p1", "p2"], [1, 3])["ICLR"]
    assert result["alpha_human"] == pytest.approx(4 / 9)
    assert result["alpha_with_model"] == pytest.approx(9 / 16)
    assert result["delta"] == pytest.approx(9 / 16 - 4 / 9)
    assert result["per_year"] == {"2025": {"alpha_human": result["alpha_human"],
                                           "alpha_with_model": result["alpha_with_model"],
                                           "delta": result["delta"]}}
    assert (result["n_papers"], result["n_model_ratings"]) == (3, 2)


def test_model_rating_the_opposite_extreme_lowers_alpha_by_hand():
    result = panel_agreement(*panel_columns(PANELS), ["p1", "p2"], [3, 1])["ICLR"]
    assert result["alpha_with_model"] == pytest.approx(-5 / 16)
    assert result["delta"] == pytest.approx(-5 / 16 - 4 / 9)


def test_model_on_an_ordinal_scale_agreeing_or_extreme():
    panels = {"a": [2, 2, 2], "b": [4, 4], "c": [6, 6, 6], "d": [2, 4, 3], "e": [5, 6]}
    columns = panel_columns(panels)
    alpha_h = ordinal_alpha(*rows(panels))
    agreeing = panel_agreement(*columns, ["a", "b", "c"], [2, 4, 6])["ICLR"]
    extreme = panel_agreement(*columns, ["a", "b", "c"], [6, 6, 2])["ICLR"]
    assert agreeing["alpha_human"] == extreme["alpha_human"] == pytest.approx(alpha_h)
    assert agreeing["delta"] >= 0
    assert extreme["delta"] < 0


def test_several_model_ratings_per_paper_are_all_raters():
    ids, ratings = rows({"p1": [1, 1, 1], "p2": [3, 3, 3], "p3": [1, 3]})
    result = panel_agreement(*panel_columns(PANELS), ["p1", "p1", "p2", "p2"], [1, 1, 3, 3])["ICLR"]
    assert result["alpha_with_model"] == pytest.approx(ordinal_alpha(ids + ["p1", "p2"], ratings + [1, 3]))
    assert result["n_model_ratings"] == 4


def test_model_ratings_without_a_human_panel_are_left_out_and_counted():
    panels = dict(PANELS, p4=[2])                     # a single human review is no panel
    with pytest.warns(UserWarning, match="^3 model ratings"):
        result = panel_agreement(*panel_columns(panels), ["p1", "p2", "p4", "p9", "p9", "p3"],
                                 [1, 3, 1, 2, 3, None])["ICLR"]
    assert result["alpha_human"] == pytest.approx(4 / 9)
    assert result["alpha_with_model"] == pytest.approx(9 / 16)
    assert result["n_model_ratings"] == 2


def test_panel_agreement_averages_over_years_the_model_rated():
    columns = [a + b + c for a, b, c in zip(panel_columns(PANELS, year="2024"),
                                            panel_columns(UNEQUAL, year="2025"),
                                            panel_columns({"x": [1, 2], "y": [2, 2]}, year="2023"))]
    columns[0] = [f"{year}-{paper}" for paper, year in zip(columns[0], columns[3])]
    model_ids = ["2024-p1", "2024-p2", "2025-p1", "2025-p2"]
    model_ratings = [3, 1, 3, 1]
    result = panel_agreement(*columns, model_ids, model_ratings)["ICLR"]
    assert list(result["per_year"]) == ["2023", "2024", "2025"]
    assert result["per_year"]["2023"]["alpha_with_model"] is None   # the model rated none of its panels
    assert result["per_year"]["2023"]["delta"] is None
    assert result["per_year"]["2024"]["alpha_with_model"] == pytest.approx(-5 / 16)
    with_model_2025 = ordinal_alpha(*rows({"p1": [1, 1, 2, 3], "p2": [2, 3, 1], "p3": [3, 3, 3, 1]}))
    assert result["per_year"]["2025"]["alpha_with_model"] == pytest.approx(with_model_2025)
    assert result["alpha_human"] == pytest.approx((4 / 9 + 31 / 135) / 2)
    assert result["alpha_with_model"] == pytest.approx((-5 / 16 + with_model_2025) / 2)
    assert result["delta"] == pytest.approx(result["alpha_with_model"] - result["alpha_human"])
    assert (result["n_papers"], result["n_model_ratings"]) == (6, 4)


def test_panels_taken_once_serve_every_model_even_one_rating_a_value_no_human_gave():
    panels = HumanPanels(*panel_columns(PANELS))
    ids, ratings = rows(PANELS)  # the panels rate 1 and 3 only
    between = panels.agreement(["p1", "p3"], [2, 2])["ICLR"]
    assert between["alpha_with_model"] == pytest.approx(ordinal_alpha(ids + ["p1", "p3"], ratings + [2, 2]))
    assert between["alpha_human"] == pytest.approx(4 / 9)
    agreeing = panels.agreement(["p1", "p2"], [1, 3])["ICLR"]  # after the other, as if alone
    assert agreeing == panel_agreement(*panel_columns(PANELS), ["p1", "p2"], [1, 3])["ICLR"]
    assert agreeing["alpha_with_model"] == pytest.approx(9 / 16)


def test_panel_agreement_without_model_ratings():
    result = panel_agreement(*panel_columns(PANELS), [], [])["ICLR"]
    assert result["alpha_human"] is None and result["alpha_with_model"] is None and result["delta"] is None
    assert result["per_year"]["2025"] == {"alpha_human": pytest.approx(4 / 9), "alpha_with_model": None,
                                          "delta": None}
    assert (result["n_papers"], result["n_model_ratings"]) == (0, 0)


def test_self_agreement_keeps_only_papers_rated_under_both_prompts():
    a_ids, a = ["p1", "p2", "p3", "p4", "p5"], [1, 3, 1, 2, None]
    b_ids, b = ["p1", "p2", "p3", "p3", "p5", "p6"], [1, 3, 3, 1, 2, 3]
    # p1 [1, 1], p2 [3, 3], p3 [1, 3, 1]; p4, p5 and p6 lack a rating under one prompt.
    # Two values: n_1 = 4, n_3 = 3, n = 7; only p3 disagrees, o_13 = 2*1 / (3 - 1) = 1
    # -> alpha = 1 - (n - 1) o_13 / (n_1 n_3) = 1 - 6 / 12 = 1/2
    assert self_agreement(a_ids, a, b_ids, b) == pytest.approx(0.5)
    assert self_agreement(["p1"], [2], ["p2"], [2]) is None
    assert self_agreement([], [], [], []) is None


def test_reference_implementation_reproduces_the_hand_value():
    # Guards the independent implementation itself against a shared mistake.
    assert reference_alpha(*rows(UNEQUAL)) == pytest.approx(UNEQUAL_ALPHA)


def test_panel_alpha_draws_equal_the_krippendorff_package_draw_by_draw():
    rng = np.random.default_rng(7)
    human = rng.integers(0, 3, size=(40, 5)) * (rng.random((40, 5)) < 0.5)
    model = np.zeros_like(human)
    model[:25, 3] = 1  # the model rated 25 of the 40 papers
    weights = rng.multinomial(40, np.full(40, 1 / 40), size=50)
    weights[0, :25] = 0  # a draw without any paper the model rated
    alpha_human, alpha_with_model = panel_alpha_draws(human, model, [1, 2, 3, 4, 5], weights)
    for draw, (a_h, a_hl) in enumerate(zip(alpha_human, alpha_with_model)):
        take = np.repeat(np.arange(40), weights[draw])
        panels = human[take][human[take].sum(1) >= 2]
        assert a_h == pytest.approx(krippendorff.alpha(value_counts=panels, level_of_measurement="ordinal"),
                                    abs=1e-12)
        if draw == 0:
            assert np.isnan(a_hl)
            continue
        both = (human + model)[take]
        both = both[both.sum(1) >= 2]
        assert a_hl == pytest.approx(krippendorff.alpha(value_counts=both, level_of_measurement="ordinal"),
                                     abs=1e-12)


def test_panel_agreement_equals_the_krippendorff_package_on_random_panels():
    """Panels of two venues and two year groups each, rows shuffled, some ratings missing; a model rating some
    panels (once or twice), papers without a panel and a value no human gave: each year group's alpha_H and
    alpha_H+L are the package's on count matrices built here paper by paper."""
    rng = np.random.default_rng(32)
    places = [("ICLR", "2023"), ("ICLR", "2024"), ("NeurIPS", "2023"), ("NeurIPS", "2024")]
    human, model = [], []
    for number in range(240):
        venue, year = places[number % 4]
        paper = f"{venue}-{year}-{rng.integers(10**6):06d}-{number}"
        quality = rng.integers(1, 6)
        for _ in range(rng.integers(1, 5)):
            rating = None if rng.random() < 0.1 else int(np.clip(quality + rng.integers(-1, 2), 1, 5))
            human.append((paper, rating, venue, year))
        for _ in range(rng.integers(0, 3)):
            model.append((paper, None if rng.random() < 0.1 else int(rng.choice([1, 3, 5, 6]))))
    model.append(("a paper nobody reviewed", 4))
    human = [human[i] for i in rng.permutation(len(human))]
    with pytest.warns(UserWarning, match="model ratings are of papers without a human panel"):
        result = panel_agreement(*map(list, zip(*human)), *map(list, zip(*model)))

    valid = defaultdict(list)
    for paper, rating, venue, year in human:
        if rating is not None:
            valid[(venue, year, paper)].append(rating)
    for venue, year in places:
        panels = sorted(p for (v, y, p), ratings in valid.items() if (v, y) == (venue, year) and len(ratings) >= 2)
        added = {p: [r for q, r in model if q == p and r is not None] for p in panels}
        domain = sorted({r for p in panels for r in valid[(venue, year, p)]} | {r for p in panels for r in added[p]})

        def counts(with_model):
            return np.array([[(valid[(venue, year, p)] + (added[p] if with_model else [])).count(v) for v in domain]
                             for p in panels])

        def package_alpha(matrix):
            given = matrix.sum(0) > 0
            return krippendorff.alpha(value_counts=matrix[:, given], value_domain=np.array(domain)[given],
                                      level_of_measurement="ordinal")

        got = result[venue]["per_year"][year]
        assert got["alpha_human"] == package_alpha(counts(False))
        assert got["alpha_with_model"] == package_alpha(counts(True))
