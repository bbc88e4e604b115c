"""Calibration of the paired comparisons by simulation, at a modest size (benchmarks/comparison_calibration.py runs
it at full size): two submissions drawn from one process are found different at about the nominal rate for a mean
(FRE), total variation and alpha with the model added, and two equally close in different ways no more often;
Benjamini-Hochberg keeps false discoveries over 36 null comparisons rare; and a planted difference is detected about
as often as the papers-needed figure predicts."""

from tests.leaderboard.simulated import (BOTH, HARSH, LENIENT, MODEL, false_discoveries, false_positive_rates,
                                         planted_power)


def test_two_submissions_of_one_process_differ_at_about_the_nominal_rate():
    # 300 runs of 120 papers: the Monte Carlo standard error of a 5% rate is 1.3%; within 2.5 of them. (On fewer
    # papers the bootstrap is conservative for total variation and alpha: see docs/benchmarks.md.)
    rates, _ = false_positive_rates(runs=300, n_papers=120, n_bootstrap=200, seed=100)
    for metric in ("fre", "rating_tv", "krippendorff_alpha"):
        assert rates[metric].within(0.05, standard_errors=2.5), (metric, rates[metric])


def test_two_submissions_equally_close_in_different_ways_are_not_found_different_more_often_than_the_nominal_rate():
    # One rates 0.7 above the human panel, the other 0.7 below: neither is closer, yet they review differently. A
    # verdict says which is closer to human, so it must not tell these apart more often than its level. (A paired
    # permutation test, which asks whether the two review alike, did so in 12% of such runs for rating TV and 25%
    # for alpha.) 150 runs: the Monte Carlo standard error of a 5% rate is 1.8%; at most 2.5 of them above it.
    rates, _ = false_positive_rates(runs=150, n_papers=100, n_bootstrap=200, process=LENIENT, other=HARSH, seed=400)
    for metric in ("rating", "rating_tv", "krippendorff_alpha"):
        assert rates[metric].value <= 0.05 + 2.5 * rates[metric].standard_error(0.05), (metric, rates[metric])


def test_benjamini_hochberg_keeps_false_discoveries_among_null_comparisons_rare():
    # 36 null comparisons a run (12 metrics on ICLR, NeurIPS and both pooled, 30 papers each); 1500 draws, so that
    # one comparison alone can be discovered (2/1501 x 36 < 5%). Any discovery is false: the share of runs with
    # one is the false discovery rate, at most 5% (within 2.5 Monte Carlo standard errors of 40 runs; without the
    # adjustment most runs would have one, and so would runs on 10 papers a venue, where the bootstrap's tails
    # are too light).
    assert len(BOTH) == 2
    share, any_false, n_null = false_discoveries(runs=40, n_papers=60, n_bootstrap=1500, seed=200)
    assert n_null == 36
    assert any_false.value <= 0.05 + 2.5 * any_false.standard_error(0.05), any_false
    assert share <= any_false.value


def test_a_planted_difference_is_detected_as_often_as_the_papers_needed_predict():
    # B's reviews are 2.5 FRE points nearer the human ones: A's distance to human exceeds B's by 2.5. Pilot runs on
    # 100 papers give the standard error, the papers-needed figure the papers for 80% power, and runs on that
    # many papers detect the difference within 10 percentage points of 80%.
    power = planted_power("fre", MODEL.shifted(fre_shift=2.5), pilot_runs=30, runs=150, pilot_papers=100,
                          n_bootstrap=200, difference=2.5, seed=300)
    assert 120 <= power.papers_needed <= 320
    assert abs(power.detected.value - 0.8) <= 0.1, power
