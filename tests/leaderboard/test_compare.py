"""Paired comparisons of leaderboard submissions (praib.leaderboard.compare): a hand-worked paired cluster bootstrap on
three papers, an independent numpy bootstrap (the krippendorff package for alpha) on simulated submissions that share
only some papers, Benjamini-Hochberg against statsmodels and by hand, rank intervals and papers needed by hand, and
the properties a comparison must have (a copy compared with itself, order of the submissions, the run's own draws)."""

import math
import statistics

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from praib.evaluation.scored import ScoredReviews
from praib.leaderboard.compare import (A_CLOSER, B_CLOSER, NO_DIFFERENCE, POWER_Z, Comparison, PairedDifference,
                                       adjust, compare_tables, format_comparison, papers_needed, rank_intervals)
from praib.leaderboard.run import ReviewTable, bootstrap_weights
from praib.metrics.registry import text_metrics
from tests.leaderboard.simulated import MODEL, RATINGS_OF_ICLR, simulated_run


def table(reviews: list[tuple[str, float, float]]) -> ReviewTable:
    """Reviews (paper, FRE, rating) of ICLR 2025, every other text metric 0 and confidence 3."""
    n = len(reviews)
    columns = {"paper_id": [p for p, _, _ in reviews], "venue": ["ICLR"] * n, "year": [2025] * n,
               "rating": [r for _, _, r in reviews], "confidence": [3.0] * n}
    text = {metric: np.zeros(n) for metric in text_metrics()}
    text["fre"] = np.array([f for _, f, _ in reviews], dtype=float)
    return ReviewTable.from_scored(ScoredReviews(columns, text, "venue"))


# Three papers: the human panel's FRE, and submissions A and B, one review a paper each.
HUMAN = table([("p1", 40, 3), ("p1", 50, 5), ("p2", 60, 6), ("p3", 44, 5), ("p3", 46, 6)])
A = table([("p1", 30, 6), ("p2", 40, 6), ("p3", 20, 6)])
B = table([("p1", 45, 5), ("p2", 62, 6), ("p3", 30, 3)])


def test_the_paired_cluster_bootstrap_by_hand_on_three_papers():
    # The run's draws with seed 0 over the papers p1, p2, p3: row 0 takes each once (the point estimate).
    weights = bootstrap_weights(3, 5, seed=0)
    assert weights.tolist() == [[1, 1, 1], [0, 2, 1], [3, 0, 0], [3, 0, 0], [0, 1, 2], [0, 2, 1]]
    # FRE distance = |mean of the submission - mean of the human reviews| over the drawn papers' reviews.
    # Point: human (40+50+60+44+46)/5 = 48; A (30+40+20)/3 = 30: 18; B (45+62+30)/3 = 45.667: 2.333. A - B = 15.667.
    # Draw p2,p2,p3: human (60+60+44+46)/4 = 52.5; A (40+40+20)/3 = 33.333: 19.167; B (62+62+30)/3 = 51.333: 1.167.
    #   A - B = 18.
    # Draw p1,p1,p1: human 45; A 30: 15; B 45: 0. A - B = 15 (twice).
    # Draw p2,p3,p3: human (60+44+46+44+46)/5 = 48; A (40+20+20)/3 = 26.667: 21.333; B (62+30+30)/3 = 40.667: 7.333.
    #   A - B = 14.
    draws = [18, 15, 15, 14, 18]
    point = 18 - (48 - 137 / 3)
    # Re-centred on the point: median 15 moves to 15.667, so every draw moves by 2/3.
    centred = sorted(d + point - 15 for d in draws)  # 14.667, 15.667, 15.667, 18.667, 18.667
    # numpy's linear percentile of 5 values: 2.5% at position 0.1, 97.5% at position 3.9.
    low = centred[0] + 0.1 * (centred[1] - centred[0])
    high = centred[3] + 0.9 * (centred[4] - centred[3])
    se = statistics.stdev(draws)  # sqrt(14 / 4)

    comparison = compare_tables(HUMAN, {"A": A, "B": B}, n_bootstrap=5, seed=0)
    fre = comparison.between("A", "B", "fre")
    assert (fre.n_papers, fre.difference) == (3, pytest.approx(47 / 3))
    assert (fre.ci_low, fre.ci_high) == (pytest.approx(14.1 + 2 / 3), pytest.approx(18 + 2 / 3))
    assert (fre.ci_low, fre.ci_high) == (pytest.approx(low), pytest.approx(high))
    # Every re-centred draw is above 0: twice (0 + 1) / (5 + 1).
    assert fre.p_value == pytest.approx(1 / 3)
    assert fre.standard_error == pytest.approx(se) == pytest.approx(math.sqrt(3.5))
    assert fre.min_detectable_difference == pytest.approx(2.8015852 * se)
    # 3 x (5.241 / 15.667)^2 = 0.34 papers: one.
    assert fre.papers_needed == 1
    # B against A is the same comparison with the signs turned.
    turned = comparison.between("B", "A", "fre")
    assert (turned.difference, turned.ci_low, turned.ci_high) == (-fre.difference, -fre.ci_high, -fre.ci_low)


def test_power_constant_and_papers_needed_by_hand():
    # z_0.975 = 1.959964, z_0.8 = 0.841621.
    assert POWER_Z == pytest.approx(2.801585, abs=1e-6)
    # 100 papers, SE 0.5, difference 1: 100 * (2.801585 * 0.5 / 1)^2 = 196.2 -> 197.
    assert papers_needed(100, 0.5, 1.0) == 197
    assert papers_needed(100, 0.5, -1.0) == 197
    # Half the difference needs four times the papers.
    assert papers_needed(100, 0.5, 0.5) == 785
    assert papers_needed(100, 0.5, 0.0) is None


def _pair(p: float | None, difference: float = 1.0) -> PairedDifference:
    return PairedDifference("fre", "all", "a", "b", 10, difference, None, None, p, None, NO_DIFFERENCE, 1.0, 2.8, 10)


def test_benjamini_hochberg_by_hand():
    # Sorted: 0.01 (rank 1), 0.03 (2), 0.04 (3), 0.2 (4) of m = 4: 0.01*4/1 = 0.04, 0.03*4/2 = 0.06, 0.04*4/3 = 0.0533,
    # 0.2; each the least of itself and those above it: 0.04, 0.0533, 0.0533, 0.2.
    pairs = adjust([_pair(0.01, -2.0), _pair(0.04), _pair(0.03, 3.0), _pair(0.2), _pair(None)], fdr=0.05)
    assert [p.p_adjusted for p in pairs] == [pytest.approx(0.04), pytest.approx(0.16 / 3), pytest.approx(0.16 / 3),
                                             pytest.approx(0.2), None]
    assert [p.verdict for p in pairs] == [A_CLOSER, NO_DIFFERENCE, NO_DIFFERENCE, NO_DIFFERENCE, NO_DIFFERENCE]
    # At 10% the two of 0.0533 are detected too, each in the direction of its difference.
    assert [p.verdict for p in adjust(pairs, fdr=0.1)][:3] == [A_CLOSER, B_CLOSER, B_CLOSER]


def test_rank_intervals_by_hand():
    # Three submissions, row 0 the point estimates, then 8 draws; NaN: undefined in that draw.
    distances = {"x": np.array([1.0, 1, 1, 1, 1, 5, 1, 1, 1]),
                 "y": np.array([2.0, 2, 2, 0, 2, 2, 2, 2, np.nan]),
                 "z": np.array([2.0, 3, 3, 3, 3, 3, 3, 3, 0])}
    ranks = {r.submission: r for r in rank_intervals("all", 4, {name: {"fre": d} for name, d in distances.items()})}
    # Point: x 1, y and z tie at 2 and share rank 2.
    assert [ranks[n].rank for n in "xyz"] == [1, 2, 2]
    # Draw ranks: x 1,1,2,1,3,1,1,2 (y at 0 in draw 3, x at 5 in draw 5, z at 0 in draw 8); the 2.5% quantile is
    # the least rank at or above 2.5% of the draws, the 97.5% one the least at or above 97.5%: x 1-3.
    # y 2,2,1,2,1,2,2,- (undefined in draw 8): 1-2; z 3,3,3,3,2,3,3,1: 1-3.
    assert [(ranks[n].rank_low, ranks[n].rank_high) for n in "xyz"] == [(1, 3), (1, 2), (1, 3)]


def shared_papers_only(reviews: ReviewTable, papers: set) -> ReviewTable:
    columns = reviews.columns()
    keep = [i for i, p in enumerate(columns["paper_id"]) if p in papers]
    return ReviewTable.from_columns({name: [values[i] for i in keep] for name, values in columns.items()})


def independent_draws(human: ReviewTable, a: ReviewTable, b: ReviewTable, n_bootstrap: int, seed: int):
    """The paired cluster bootstrap written plainly: the shared papers drawn with replacement, every review of a
    drawn paper copied once per draw of it, and each distance computed on the copies (alpha by the krippendorff
    package on the copied panels). Returns per metric the differences A - B, row 0 on the papers as they are."""
    papers = sorted(set(a.paper_id) & set(b.paper_id))
    rng = np.random.default_rng(seed)
    draws = [np.arange(len(papers))] + [rng.integers(0, len(papers), size=len(papers)) for _ in range(n_bootstrap)]

    def by_paper(side):
        found = {p: [] for p in papers}
        for i, p in enumerate(side.paper_id):
            if p in found:
                found[p].append(i)
        return found

    human_rows, a_rows, b_rows = by_paper(human), by_paper(a), by_paper(b)

    def distances(side, rows, drawn):
        taken = [i for p in drawn for i in rows[papers[p]]]
        human_taken = [i for p in drawn for i in human_rows[papers[p]]]
        fre = abs(side.values["fre"][taken].mean() - human.values["fre"][human_taken].mean())
        counts = [np.array([np.sum(values == v) for v in RATINGS_OF_ICLR]) for values in
                  (side.values["rating"][taken], human.values["rating"][human_taken])]
        tv = 0.5 * np.abs(counts[0] / counts[0].sum() - counts[1] / counts[1].sum()).sum()
        gaps = [side.values["rating"][i] - np.median(human.values["rating"][human_rows[papers[p]]])
                for p in drawn for i in rows[papers[p]]]
        panels = [human.values["rating"][human_rows[papers[p]]] for p in drawn]
        added = [np.append(panel, side.values["rating"][rows[papers[p]]]) for panel, p in zip(panels, drawn)]

        def alpha(units):
            data = np.full((max(len(u) for u in units), len(units)), np.nan)
            for column, unit in enumerate(units):
                data[:len(unit), column] = unit
            return krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")

        return {"fre": fre, "rating_tv": tv, "rating_gap": abs(np.mean(gaps)),
                "krippendorff_alpha": abs(alpha(added) - alpha(panels))}

    rows = [(distances(a, a_rows, drawn), distances(b, b_rows, drawn)) for drawn in draws]
    return len(papers), {metric: np.array([da[metric] - db[metric] for da, db in rows]) for metric in rows[0][0]}


def test_an_independent_numpy_bootstrap_gives_the_same_intervals_on_the_papers_both_reviewed():
    human, tables = simulated_run(40, {"a": MODEL, "b": MODEL.shifted(fre_shift=3.0, rating_slope=1.4)}, seed=3)
    # B reviewed 30 of the 40 papers: the pair is compared on those, the human reviews of the others left out.
    tables["b"] = shared_papers_only(tables["b"], set(sorted(set(tables["b"].paper_id))[5:35]))
    comparison = compare_tables(human, tables, n_bootstrap=60, seed=7)
    n_papers, differences = independent_draws(human, tables["a"], tables["b"], n_bootstrap=60, seed=7)
    assert n_papers == 30
    for metric, draws in differences.items():
        pair = comparison.between("a", "b", metric)
        point, defined = draws[0], draws[1:][np.isfinite(draws[1:])]
        centred = defined + point - np.median(defined)
        low, high = np.percentile(centred, [2.5, 97.5])
        below, above = np.sum(centred <= 1e-9), np.sum(centred >= -1e-9)  # 0 up to rounding: both sides
        assert pair.n_papers == 30, metric
        assert pair.difference == pytest.approx(point, rel=1e-9), metric
        assert (pair.ci_low, pair.ci_high) == (pytest.approx(low, rel=1e-9), pytest.approx(high, rel=1e-9)), metric
        assert pair.p_value == pytest.approx(min(1, 2 * (min(below, above) + 1) / (len(defined) + 1))), metric
        assert pair.standard_error == pytest.approx(np.std(defined, ddof=1), rel=1e-9), metric
    # The planted FRE difference (B's reviews 3 points more readable, nearer the human FRE): every draw says so.
    assert comparison.between("a", "b", "fre").p_value == pytest.approx(2 / 61)


@pytest.fixture(scope="module")
def three_submissions():
    """Three submissions on 60 papers of ICLR and NeurIPS, B's reviews 6 FRE points more readable (nearer human)."""
    human, tables = simulated_run(60, {"a": MODEL, "b": MODEL.shifted(fre_shift=6.0), "c": MODEL}, seed=11,
                                  venues=(("ICLR", 2025), ("NeurIPS", 2024)))
    return compare_tables(human, tables, n_bootstrap=1000, seed=0, fdr=0.1)


def test_p_adjusted_is_statsmodels_benjamini_hochberg_over_every_pair_metric_and_venue_of_the_run(three_submissions):
    comparison = three_submissions
    # 3 pairs x 12 metrics x (ICLR, NeurIPS, pooled)
    assert len(comparison.pairs) == 108
    tested = [pair for pair in comparison.pairs if pair.p_value is not None]
    reject, adjusted, _, _ = multipletests([pair.p_value for pair in tested], alpha=0.1, method="fdr_bh")
    assert [pair.p_adjusted for pair in tested] == pytest.approx(adjusted.tolist())
    assert [pair.verdict != NO_DIFFERENCE for pair in tested] == reject.tolist()
    assert any(reject) and not all(reject)
    # Each difference found is one where the adjusted p-value says so, towards the submission nearer human.
    for pair in tested:
        if pair.verdict != NO_DIFFERENCE:
            assert (pair.verdict == A_CLOSER) == (pair.difference < 0)


def test_differences_the_draws_cannot_resolve_after_the_adjustment_are_named(three_submissions):
    # At 5% over 108 comparisons, the 4 FRE comparisons whose 1000 draws all lie on one side of 0 (p = 2/1001)
    # adjust to 2/1001 * 108/4 = 0.054: not detected, and named with what resolves them.
    at_five = Comparison(adjust(three_submissions.pairs, 0.05), three_submissions.ranks, 0.05, 1000, 0)
    unresolved = at_five.unresolved()
    assert [(p.metric, p.p_value) for p in unresolved] == [("fre", pytest.approx(2 / 1001))] * 4
    assert at_five.resolution_note().startswith("4 comparison(s) had every one of the 1000 draws on one side of 0")
    assert "rerun with more draws to resolve them" in format_comparison(at_five)
    assert three_submissions.unresolved() == [] and three_submissions.resolution_note() is None


def test_a_copy_of_a_submission_compared_with_itself_differs_by_nothing_everywhere():
    human, tables = simulated_run(30, {"a": MODEL, "b": MODEL.shifted(fre_shift=5.0)}, seed=2,
                                  venues=(("ICLR", 2025), ("NeurIPS", 2024)))
    tables["a copy"] = tables["a"]
    comparison = compare_tables(human, tables, n_bootstrap=100, seed=0)
    copies = [pair for pair in comparison.pairs if {pair.submission_a, pair.submission_b} == {"a", "a copy"}]
    assert len(copies) == 36
    for pair in copies:
        assert (pair.difference, pair.ci_low, pair.ci_high, pair.p_value, pair.verdict) == (
            0.0, 0.0, 0.0, 1.0, NO_DIFFERENCE) or pair.difference is None, pair
    assert sum(pair.difference is not None for pair in copies) >= 33
    ranks = {(r.submission, r.metric, r.venue): r for r in comparison.ranks}
    for (name, metric, venue), rank in ranks.items():
        if name == "a":
            copy = ranks[("a copy", metric, venue)]
            assert (copy.rank, copy.rank_low, copy.rank_high) == (rank.rank, rank.rank_low, rank.rank_high)


def test_the_comparison_does_not_depend_on_the_order_of_the_submissions():
    human, tables = simulated_run(30, {"a": MODEL, "b": MODEL.shifted(fre_shift=2.0), "c": MODEL}, seed=4)
    forward = compare_tables(human, tables, n_bootstrap=50, seed=1)
    backward = compare_tables(human, dict(reversed(tables.items())), n_bootstrap=50, seed=1)
    assert forward.to_dict() == backward.to_dict()
    assert compare_tables(human, tables, n_bootstrap=50, seed=2).to_dict() != forward.to_dict()


def test_undefined_everywhere_gives_no_interval_and_no_verdict():
    # Every rating the same: alpha is undefined in every draw.
    flat = table([("p1", 40, 5), ("p1", 50, 5), ("p2", 60, 5)])
    comparison = compare_tables(flat, {"A": table([("p1", 30, 5), ("p2", 40, 5)]),
                                       "B": table([("p1", 45, 5), ("p2", 62, 5)])}, n_bootstrap=20, seed=0)
    alpha = comparison.between("A", "B", "krippendorff_alpha")
    assert (alpha.difference, alpha.ci_low, alpha.p_value, alpha.verdict) == (None, None, None, NO_DIFFERENCE)
    assert all(r.rank is None for r in comparison.ranks if r.metric == "krippendorff_alpha")
