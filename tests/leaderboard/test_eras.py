"""`praib eras`: per-year means and pre/post-LLM Mann-Whitney tests, checked against scipy on
hand-made per-year data, and (optionally) on real ICLR 2019/2020 reviews (DISAPERE)."""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import mannwhitneyu

from praib.cli.main import main
from praib.leaderboard.eras import era_analysis, era_tables, spans_both_eras, split_year_for
from praib.metrics.text.readability import readability
from praib.records import coerce_record, records_to_dataset

DISAPERE = Path("/work/shared/data/disapere/disapere_review_rebuttal_pairs.jsonl")
TEXTS = ["The method is sound. Figure 2 is unclear.",
         "Experiments are limited to two datasets and the ablation in Table 3 is missing the obvious baseline.",
         "A well written paper with a clear contribution."]
# ICLR ratings per year (ICLR 2021-2023 scale 1-10 values; 2024-2025 on the 1,3,5,6,8,10 scale).
ICLR_RATINGS = {2021: [6, 5, 7, 4], 2022: [5, 6, 3], 2023: [8, 6, 5, 6], 2024: [6, 8, 8], 2025: [8, 6, 10, 8, 6]}
NEURIPS_RATINGS = {2022: [5, 6, 4], 2023: [7, 6, 7, 8]}


def make_reviews(ratings_by_venue):
    rows = []
    for venue, by_year in ratings_by_venue.items():
        for year, ratings in by_year.items():
            for i, rating in enumerate(ratings):
                rows.append(coerce_record({"paper_id": f"{venue}-{year}-{i}", "source": "human", "venue": venue,
                                           "year": year, "text": TEXTS[i % 3], "rating": rating,
                                           "confidence": 1 + i % 5}, "review", f"row {len(rows)}"))
    return records_to_dataset(rows)


@pytest.fixture(scope="module")
def analysis():
    return era_analysis(make_reviews({"ICLR": ICLR_RATINGS, "NeurIPS": NEURIPS_RATINGS}), workers=1)


def test_split_years_follow_praib():
    assert split_year_for("ICLR") == 2024 and split_year_for("NeurIPS") == 2023
    assert split_year_for("TMLR") == 2023 and split_year_for("ICLR", 2021) == 2021


def test_per_year_and_era_means(analysis):
    iclr = analysis["venues"]["ICLR"]
    assert iclr["split_year"] == 2024
    for year, ratings in ICLR_RATINGS.items():
        assert iclr["years"][str(year)]["rating"]["mean"] == pytest.approx(np.mean(ratings))
        assert iclr["years"][str(year)]["rating"]["std"] == pytest.approx(np.std(ratings, ddof=1))
        assert iclr["years"][str(year)]["n_reviews"] == len(ratings)
    pre = ICLR_RATINGS[2021] + ICLR_RATINGS[2022] + ICLR_RATINGS[2023]
    assert iclr["eras"]["pre"]["years"] == [2021, 2022, 2023]
    assert iclr["eras"]["pre"]["rating"]["mean"] == pytest.approx(np.mean(pre))
    tkc_2021 = np.mean([readability(TEXTS[i % 3]).tkc for i in range(4)])
    assert iclr["years"]["2021"]["tkc"]["mean"] == pytest.approx(tkc_2021)


def test_mann_whitney_matches_scipy(analysis):
    for venue, by_year, boundary in (("ICLR", ICLR_RATINGS, 2024), ("NeurIPS", NEURIPS_RATINGS, 2023)):
        pre = [r for y, rs in by_year.items() if y < boundary for r in rs]
        post = [r for y, rs in by_year.items() if y >= boundary for r in rs]
        expected = mannwhitneyu(post, pre, alternative="two-sided")
        test = analysis["venues"][venue]["tests"]["rating"]
        assert test["u"] == pytest.approx(expected.statistic)
        assert test["p"] == pytest.approx(expected.pvalue)
        # Rank-biserial by counting pairs: P(post > pre) - P(post < pre).
        wins = sum((a > b) - (a < b) for a in post for b in pre)
        assert test["effect_size"] == pytest.approx(wins / (len(post) * len(pre)))
        assert test["direction"] == "higher after"
        assert (test["n_pre"], test["n_post"]) == (len(pre), len(post))
        assert test["significant"] == (expected.pvalue < 0.05)


def test_split_year_override_and_era_span():
    reviews = make_reviews({"ICLR": ICLR_RATINGS})
    assert spans_both_eras(reviews)
    assert not spans_both_eras(make_reviews({"ICLR": {2021: [5, 6], 2022: [3, 6]}}))
    result = era_analysis(reviews, split_year=2022, workers=1)
    assert result["venues"]["ICLR"]["eras"]["pre"]["years"] == [2021]
    assert result["venues"]["ICLR"]["tests"]["rating"]["u"] == pytest.approx(
        mannwhitneyu([r for y in (2022, 2023, 2024, 2025) for r in ICLR_RATINGS[y]], ICLR_RATINGS[2021]).statistic)


def test_table_and_cli(analysis, tmp_path):
    table = era_tables(analysis)
    assert "ICLR: pre (< 2024) vs post (>= 2024)" in table and "NeurIPS: pre (< 2023) vs post (>= 2023)" in table
    path = tmp_path / "human.jsonl"
    make_reviews({"ICLR": ICLR_RATINGS}).to_json(str(path), lines=True)
    out = tmp_path / "eras.json"
    result = CliRunner().invoke(main, ["leaderboard", "eras", str(path), "--output", str(out), "--workers", "1", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "Rating" in result.output and "U" in result.output
    saved = json.loads(out.read_text())
    assert saved["venues"]["ICLR"]["years"]["2025"]["rating"]["mean"] == pytest.approx(np.mean(ICLR_RATINGS[2025]))


@pytest.mark.skipif(not DISAPERE.exists(), reason="shared real data not available")
def test_real_iclr_2019_2020_reviews():
    rows, fre = [], {2019: [], 2020: []}
    for number, line in enumerate(DISAPERE.read_text().splitlines(), start=1):
        raw = json.loads(line)
        year = int(raw["conference"][-4:])
        rows.append(coerce_record({"paper_id": raw["forum_id"], "source": "human", "venue": "ICLR", "year": year,
                                   "text": raw["review_text"], "rating": raw["rating"]}, "review", f"line {number}"))
        score = readability(raw["review_text"]).fre
        if score is not None:
            fre[year].append(score)
    reviews = records_to_dataset(rows)
    assert not spans_both_eras(reviews)  # both years are pre-LLM
    result = era_analysis(reviews, split_year=2020)["venues"]["ICLR"]
    assert result["years"]["2019"]["n_reviews"] == 309 and result["years"]["2020"]["n_reviews"] == 197
    expected = mannwhitneyu(fre[2020], fre[2019], alternative="two-sided")
    assert result["tests"]["fre"]["u"] == pytest.approx(expected.statistic)
    assert result["tests"]["fre"]["p"] == pytest.approx(expected.pvalue)
    assert 35 < result["eras"]["pre"]["fre"]["mean"] < 55  # PRAIB Table 4: ICLR 2019 FRE 43.47


def test_iclr_years_up_to_2018_form_one_column_as_in_table_4(tmp_path):
    from praib.leaderboard.report import era_series

    ratings = {2017: [6, 7], 2018: [5, 4, 8], 2019: [6, 3], 2024: [8, 6, 6]}
    result = era_analysis(make_reviews({"ICLR": ratings}), workers=1)["venues"]["ICLR"]
    assert list(result["years"]) == ["<=2018", "2019", "2024"]
    assert result["years"]["<=2018"]["n_reviews"] == 5
    assert result["years"]["<=2018"]["rating"]["mean"] == pytest.approx(np.mean([6, 7, 5, 4, 8]))
    assert result["eras"]["pre"]["years"] == [2017, 2018, 2019]
    series = next(s for s in era_series({"metrics": ["rating"], "venues": {"ICLR": result}}))
    assert series["years"] == [2018, 2019, 2024] and series["year_labels"] == ["<=2018", "2019", "2024"]


def test_scores_outside_the_venue_scale_are_left_out_and_counted():
    # ICLR 2024 rates on 1, 3, 5, 6, 8, 10 and asks confidence on 1-5: 99 and 7 are typos, not reviews' scores.
    reviews = make_reviews({"ICLR": {2024: [6, 99, 8]}})
    reviews = reviews.map(lambda row, i: {"confidence": 7 if i == 2 else row["confidence"]}, with_indices=True)
    analysis = era_analysis(reviews, workers=1)
    post = analysis["venues"]["ICLR"]["eras"]["post"]
    assert post["rating"]["mean"] == 7.0 and post["rating"]["n"] == 2  # (6 + 8) / 2
    assert post["confidence"]["n"] == 2
    assert analysis["n_out_of_scale"] == {"rating": 1, "confidence": 1}
    assert "Left out as outside their venue-year's scale: 1 rating(s), 1 confidence(s)." in era_tables(analysis)
