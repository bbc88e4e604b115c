"""The aspect-guided perturbation study's Tables 1-4 and 7-9, from `praib robustness` reports of the demo and of
synthetic runs whose differences are known by hand."""

import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from praib.cli.main import main
from praib.tables import TABLES, make_tables
from praib.tables.aspect_guided_tables import Verdict
from tests.tables.checks import assert_cells_are_their_results
from tests.tables.perturbation_results import (
    DECISIONS,
    load,
    robustness_demo,
    robustness_meta_synthetic,
    robustness_review_synthetic,
    shares_synthetic,
)

KEYS = ["agp-1", "agp-2", "agp-3", "agp-4", "agp-7", "agp-8", "agp-9"]
META_KEYS = KEYS[2:]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("robustness")


@pytest.fixture(scope="module")
def demo(folder):
    return load([robustness_demo(folder)])


@pytest.fixture(scope="module")
def meta(folder):
    return load(robustness_meta_synthetic(folder))


@pytest.fixture(scope="module")
def reviews(folder):
    return load([robustness_review_synthetic(folder)])


def one(results, key):
    (built,) = make_tables(results, [key])
    return built


def rows_of(built, *labels):
    """The rows whose leading label cells read ``labels``."""
    return [row for row in built.rows if [cell.text() for cell in row[:len(labels)]] == list(labels)]


def test_every_table_from_the_demo_and_synthetic_runs_is_its_results(demo, meta, reviews):
    built = make_tables(demo + meta + reviews)
    assert {table.key for table in built} >= set(KEYS)
    ours = [table for table in built if table.key in KEYS]
    assert all(table.rows for table in ours)
    assert assert_cells_are_their_results(ours) > 120


def test_the_demo_fills_the_reviewer_tables_and_the_meta_reviewer_tables_name_their_command(demo):
    built = {table.key: table for table in make_tables(demo, KEYS)}
    assert_cells_are_their_results(built.values())
    # The demo flips accept-leaning ratings to strong reject: a review-level conclusion edit, after the paper's rows.
    (flip,) = rows_of(built["agp-1"], "human", "Conclusion (review)", "rating-flip")
    assert flip[-1].value < 0 and flip[-1].source.endswith("/perturbations/rating-flip/scores/rating/mean_difference")
    (overall,) = rows_of(built["agp-2"], "human", "Conclusion (review)", "rating-flip", "overall_score")
    assert overall[-1].text() == "↓ (before > after)"
    assert any("Paper / Contribution rows: reviews of papers perturbed with `contribution`, `overclaim-novelty` or "
               "`drop-citations`"
               in need for need in built["agp-1"].needs)
    for key in META_KEYS:
        assert not built[key].rows
        assert built[key].needs == ["the whole table: a report of meta-reviews: `praib robustness ORIGINAL "
                                    "PERTURBED... --record-kind meta_review --output REPORT.json`"]
        assert "Missing (—): the whole table" in built[key].to_markdown()


def test_table_1_against_hand_computed_differences(reviews):
    built = one(reviews, "agp-1")
    assert built.header == ["Reviewer", "Aspect", "Perturbation", "Contr.", "Sound.", "Prese.", "Overall"]
    texts = {row[2].text(): [cell.text() for cell in row[3:]] for row in built.rows}
    # remove-details: presentation -1 on all 8 papers, rating -1 on 4 of 8.
    assert texts["remove-details"] == ["0.00", "0.00", "-1.00", "-0.50"]
    # overclaim-novelty: contribution +1, -1, +1, -1, +1, -1, 0, 0.
    assert texts["overclaim-novelty"] == ["0.00", "0.00", "0.00", "0.00"]
    assert [row[1].text() for row in built.rows] == ["Contribution", "Soundness", "Presentation"]
    assert not built.needs


def test_table_2_prints_each_verdict_as_the_papers_arrow(reviews):
    built = one(reviews, "agp-2")
    verdicts = {(row[2].text(), row[3].text()): row[4] for row in built.rows}
    # Every presentation score falls by 1: all 8 signed ranks negative, Wilcoxon p = 1/256.
    assert verdicts["remove-details", "presentation_score"].text() == "↓ (before > after)"
    assert verdicts["remove-details", "presentation_score"].value == "decrease"
    # Nothing moved: every difference is 0, inside the ±0.5 margin.
    assert verdicts["remove-details", "soundness_score"].text() == "↔ (NSD + Equiv)"
    # Rating -1 on 4 of 8: Wilcoxon p = 1/16, not significant; TOST with ±1.0: mean -0.5, SD sqrt(2/7), so
    # t = 0.5 / (SD / sqrt 8) = 2.65 > t(0.95, 7) = 1.89 on the near side: equivalent.
    assert verdicts["remove-details", "overall_score"].text() == "↔ (NSD + Equiv)"
    # Contribution +1, -1, +1, -1, +1, -1, 0, 0: mean 0 but SD sqrt(6/7): t = 0.5 / 0.327 = 1.53 < 1.89, inconclusive.
    assert verdicts["overclaim-novelty", "contribution_score"].text() == "? (inconclusive)"
    assert [row[3].text() for row in built.rows[:4]] == ["contribution_score", "soundness_score", "overall_score",
                                                         "presentation_score"]


def test_table_3_lays_each_setting_in_its_column(meta):
    built = one(meta, "agp-3")
    assert built.header == ["Mode", "Aspect", "Perturbation", "Dimension", "None", "Template"]
    texts = {row[2].text(): [cell.text() for cell in row[3:]] for row in built.rows if row[2].text() != "—"}
    assert texts == {"overclaim-novelty": ["1.00", "0.50", "0.00"],
                     "rating-flip": ["-2.00", "-2.00", "-0.75"],
                     "rebuttal-completeness": ["0.00", "—", "0.00"],
                     "injection-white-text": ["—", "—", "1.00"]}
    assert [(row[0].text(), row[1].text()) for row in built.rows] == [
        ("Paper", "Contribution"), ("Paper", "Soundness"), ("Paper", "Presentation"), ("Review", "Tone"),
        ("Review", "Correctness"), ("Review", "Conclusion"), ("Rebuttal", "Tone"), ("Rebuttal", "Completeness"),
        ("Rebuttal", "Presentation"), ("Paper", "injection")]
    # Each setting's cells come from the report that holds it.
    (overclaim,) = rows_of(built, "Paper", "Contribution")
    assert overclaim[3].source.split("#")[0].endswith("meta-dimension-none.json")
    assert overclaim[5].source.split("#")[0].endswith("meta-template.json")
    assert "/reviewers/gpt-x~1meta_review_score/" in overclaim[4].source
    assert any(need.startswith("Dimension / injection-white-text, None / injection-white-text, None / "
                               "rebuttal-completeness: that setting's reports lack the perturbation")
               for need in built.needs)
    assert any(need.startswith("Review / Correctness rows:") and "`--perturb-component reviews` " not in need
               and "--perturb-component reviews --perturbation KIND` (KIND `false-claims`)" in need
               for need in built.needs)


def test_a_setting_no_report_holds_is_a_column_of_dashes_with_the_prompt_that_makes_it(meta):
    built = one(meta[1:], "agp-9")
    assert built.header[3:] == ["Dimension", "None", "Template"]
    assert all(row[3].text() == row[4].text() == "—" for row in built.rows)
    assert any("Dimension column: meta-reviews with `praib meta-review MODEL PAPERS REVIEWS --prompt "
               "meta_review_dimensions`" in need for need in built.needs)


def test_table_4_verdicts_of_the_decision_and_the_overall_score(meta):
    built = one(meta, "agp-4")
    assert built.header_groups == [("", 3), ("Dimension", 2), ("None", 2), ("Template", 2)]
    texts = {row[2].text(): [cell.text() for cell in row[3:]] for row in built.rows if row[2].text() != "—"}
    # Dimension: every rating +1 (increase); papers 0 and 3 poster -> spotlight only, level +1 on 2 of 8: Wilcoxon
    # p = 1/4, and TOST (±0.5) fails on the upper side (mean 0.25, t = -1.53): inconclusive.
    # Template: ratings +2, -2, +2, -2, +2, -2, 0, 0 with the ±1.0 margin: t = 1.53, inconclusive.
    assert texts["overclaim-novelty"] == ["? Inconclusive", "↑ Increase", "↔ Invariance", "↔ Invariance",
                                          "↔ Invariance", "? Inconclusive"]
    # Dimension: every paper rejected, five of them accepted before (levels -1, -1, -1, -2, -3): p = 1/32.
    assert texts["rating-flip"] == ["↓ Decrease", "↓ Decrease", "↔ Invariance", "↓ Decrease", "↔ Invariance",
                                    "↓ Decrease"]
    assert all(isinstance(cell, Verdict) for row in built.rows for cell in row[3:])


def test_table_7_changes_in_the_decision_categories_in_points(meta):
    built = one(meta, "agp-7")
    assert built.header[3:] == ["Prompt Setting", "Accept as Poster (pp)", "Reject (pp)", "Accept as Oral (pp)",
                                "Accept as Spotlight (pp)"]
    # Baseline: 3 posters, 3 rejects, 1 spotlight, 1 oral of 8. overclaim-novelty (Dimension): 2 posters become
    # spotlights: -2/8 and +2/8. rating-flip (Dimension): all 8 rejected: poster -3/8, reject +5/8, oral and
    # spotlight -1/8.
    assert DECISIONS.count("Accept as Poster") == 3 and DECISIONS.count("Reject") == 3
    (overclaim,) = rows_of(built, "Paper", "Contribution", "overclaim-novelty", "Dimension")
    assert [cell.text() for cell in overclaim[4:]] == ["-25.00", "0.00", "0.00", "25.00"]
    (flip,) = rows_of(built, "Review", "Conclusion", "rating-flip", "Dimension")
    assert [cell.text() for cell in flip[4:]] == ["-37.50", "62.50", "-12.50", "-12.50"]
    assert flip[4].value == pytest.approx(-0.375) and flip[4].source.endswith(
        "/decision/category_shares/accept (poster)/change")


@pytest.mark.parametrize("changes, printed", [
    # The paper's Table 7, Paper / Contribution / Dimension: with its 508 papers, -0.79% is 4 papers, 5.51% 28.
    ({"Accept as Poster": -4, "Reject": -28, "Accept as Oral": 28, "Accept as Spotlight": 4},
     ["-0.79", "-5.51", "5.51", "0.79"]),
    # Review / Conclusion / Dimension: -46.65% (237 papers), +45.87% (233), +0.20% (1), +0.59% (3).
    ({"Accept as Poster": -237, "Reject": 233, "Accept as Oral": 1, "Accept as Spotlight": 3},
     ["-46.65", "45.87", "0.20", "0.59"]),
])
def test_table_7_reproduces_rows_printed_in_the_paper_from_their_counts(tmp_path, changes, printed):
    built = one(load([shares_synthetic(tmp_path, changes)]), "agp-7")
    (row,) = rows_of(built, "Paper", "Contribution", "overclaim-novelty", "Dimension")
    assert [cell.text() for cell in row[4:]] == printed


def test_table_8_dimension_scores_from_the_dimension_setting(meta):
    built = one(meta, "agp-8")
    assert built.header[3:] == ["Contribution", "Soundness", "Presentation", "Ov. Dim.", "Ov. None", "Ov. Temp."]
    (overclaim,) = rows_of(built, "Paper", "Contribution")
    # Contribution +1 for papers 0 and 1 of 8.
    assert [cell.text() for cell in overclaim[3:]] == ["0.25", "0.00", "0.00", "1.00", "0.50", "0.00"]
    assert "/reviewers/gpt-x~1meta_review_dimensions/" in overclaim[3].source


def test_table_9_kappa_of_the_final_decisions(meta):
    built = one(meta, "agp-9")
    (overclaim,) = rows_of(built, "Paper", "Contribution")
    after = list(DECISIONS)
    after[0] = after[3] = "Accept as Spotlight"
    assert overclaim[3].value == pytest.approx(cohen_kappa_score(DECISIONS, after))
    assert overclaim[3].text() == "0.667"  # p_o = 6/8, p_e = 16/64
    (flip,) = rows_of(built, "Review", "Conclusion")
    assert flip[3].text() == "0.000"  # every perturbed decision is a reject: p_o = p_e = 3/8


def test_verdict_cells_print_every_verdict():
    words = (("equivalent", "Invariance"),)
    assert Verdict("equivalent", "f#/x", words=words).text() == "↔ Invariance"
    assert Verdict("increase", "f#/x").text() == "↑ increase"
    assert Verdict("inconclusive", "f#/x").text() == "? inconclusive"
    assert Verdict(None, "f#/x", words=words).text() == "—"


def test_cli_renders_the_meta_reviewer_tables_from_several_reports(meta):
    paths = [result.path for result in meta]
    rendered = CliRunner().invoke(main, ["tables", *paths, "-t", "agp-4", "-f", "latex"])
    assert rendered.exit_code == 0, rendered.output
    assert "\\label{tab:agp-4}" in rendered.output
    assert ("overclaim-novelty & ? Inconclusive & $\\uparrow$ Increase & $\\leftrightarrow$ Invariance"
            in rendered.output)
    listed = CliRunner().invoke(main, ["tables", "--list"])
    assert all(f"{key} " in listed.output for key in KEYS)
    assert all(TABLES[key].kind == "robustness" and TABLES[key].combines for key in KEYS)
