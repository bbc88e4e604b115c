"""The aspect-guided perturbation study's Tables 10-17: its main tables once per model, and the final decision's
simple and proportional mappings and the overall score as verdicts of their own, from synthetic reports whose
differences are known by hand (tests/tables/perturbation_results.py)."""

import pytest

from praib.metrics.perturbation.robustness import robustness_report
from praib.tables import TABLES, make_tables
from tests.tables.checks import assert_cells_are_their_results
from tests.tables.perturbation_results import (DECISIONS, PAPERS, RATINGS, _dataset, _edited, load,
                                               robustness_meta_synthetic, robustness_review_synthetic)
from tests.tables.results import write

KEYS = [f"agp-{n}" for n in range(10, 18)]
#: Each per-model table and the main table whose layout it repeats.
REPEATS = {"agp-10": "agp-2", "agp-11": "agp-1", "agp-12": "agp-8", "agp-13": "agp-7", "agp-17": "agp-9"}


def second_model(folder):
    """A second meta-reviewer, gemini-y (None CoT only): rating-flip rejects every paper and takes 3 from every
    overall score."""
    base = [{"paper_id": paper, "source": "gemini-y", "model": "gemini-y", "prompt": "meta_review_score",
             "rating": rating, "recommendation": decision} for paper, rating, decision in zip(PAPERS, RATINGS, DECISIONS)]
    flipped = _edited(base, "rating-flip", [-3] * 8, {i: "Reject" for i in range(8)})
    return write(folder, "meta-gemini.json", robustness_report(_dataset(base, "meta_review"),
                                                               _dataset(flipped, "meta_review"), kind="meta_review"))


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("per-model")
    return load([*robustness_meta_synthetic(folder), second_model(folder), robustness_review_synthetic(folder)])


def by_caption(tables):
    return {table.caption: table for table in tables}


def verdicts(table, kind):
    (row,) = [row for row in table.rows if row[2].text() == kind]
    return [cell.text() for cell in row[3:]]


def test_one_table_per_model_each_its_reports_numbers(reports):
    built = make_tables(reports, KEYS)
    assert [(t.key, t.title.rsplit("(", 1)[1]) for t in built] == [
        ("agp-10", "gpt-x)"), ("agp-11", "gpt-x)"),
        *((key, model) for key in KEYS[2:] for model in ("gemini-y)", "gpt-x)"))]
    assert assert_cells_are_their_results(built) > 100
    assert {TABLES[key].kind for key in KEYS} == {"robustness"} and all(TABLES[key].combines for key in KEYS)


def test_the_repeated_tables_are_the_main_tables_of_one_model(reports):
    only_gpt = [r for r in reports if "gemini" not in r.path]
    for key, main in REPEATS.items():
        (per_model,), (whole,) = make_tables(only_gpt, [key]), make_tables(only_gpt, [main])
        assert per_model.header == whole.header and per_model.caption.endswith("(gpt-x)")
        assert [[c.text() for c in row] for row in per_model.rows] == [[c.text() for c in row] for row in whole.rows]


def test_a_models_table_holds_its_own_reviewers_only(reports):
    tables = by_caption(make_tables(reports, ["agp-16"]))
    gemini = next(t for caption, t in tables.items() if caption.endswith("(gemini-y)"))
    # gemini-y has the None setting only: the other columns are dashes, and its rating-flip is a decrease.
    assert verdicts(gemini, "rating-flip") == ["—", "↓ (before > after)", "—"]
    assert all("gemini-y" in cell.source for cell in gemini.cells())
    assert any(need.startswith("Dimension column:") for need in gemini.needs)


def test_simple_and_proportional_mappings_of_the_final_decision(reports):
    (simple,) = [t for t in make_tables(reports, ["agp-14"]) if t.caption.endswith("(gpt-x)")]
    (proportional,) = [t for t in make_tables(reports, ["agp-15"]) if t.caption.endswith("(gpt-x)")]
    # Dimension, overclaim-novelty: papers 0 and 3 go from poster to spotlight. Simple mapping: +1 on 2 of 8, mean
    # 0.25, TOST (±0.5) fails on the upper side: inconclusive. Proportional mapping: poster 2.01 -> spotlight 2.76,
    # +0.75 on 2 of 8: mean 0.1875, SD 0.347, t = (0.5 - 0.1875) / (0.347 / sqrt 8) = 2.55 > t(0.95, 7) = 1.89 on
    # both sides: equivalent.
    assert verdicts(simple, "overclaim-novelty")[0] == "? (inconclusive)"
    assert verdicts(proportional, "overclaim-novelty")[0] == "↔ (NSD + Equiv.)"
    # Dimension, rating-flip: every paper rejected, five accepted before: a decrease under either mapping.
    assert verdicts(simple, "rating-flip")[0] == verdicts(proportional, "rating-flip")[0] == "↓ (before > after)"
    (row,) = [row for row in proportional.rows if row[2].text() == "overclaim-novelty"]
    assert row[3].source.endswith("/perturbations/overclaim-novelty/decision/proportional/verdict")


def test_table_16_is_table_4s_overall_score(reports):
    only_gpt = [r for r in reports if "gemini" not in r.path]
    (scores,), (table_4,) = make_tables(only_gpt, ["agp-16"]), make_tables(only_gpt, ["agp-4"])
    for row_16, row_4 in zip(scores.rows, table_4.rows):
        assert [c.value for c in row_16[3:]] == [c.value for c in row_4[4::2]]
    # Template, overclaim-novelty: ratings +2, -2, +2, -2, +2, -2, 0, 0 with the ±1.0 margin: inconclusive.
    assert verdicts(scores, "overclaim-novelty") == ["↑ (before < after)", "↔ (NSD + Equiv.)", "? (inconclusive)"]


def test_without_a_report_each_table_names_its_command():
    for key in KEYS:
        (empty,) = make_tables([], [key])
        assert empty.needs == ["the whole table: a result of `praib robustness ORIGINAL PERTURBED... --output "
                               "robustness.json`"]


def test_two_runs_of_one_model_given_a_source_each_get_a_table_each(tmp_path):
    """Runs of one model, each generated with its own --source: each run is a meta-reviewer of its own."""
    reports = []
    for run, move in (("run1", -1), ("run2", -2)):
        base = [{"paper_id": paper, "source": f"gpt-x-{run}", "model": "gpt-x", "prompt": "meta_review_score",
                 "rating": rating, "recommendation": decision}
                for paper, rating, decision in zip(PAPERS, RATINGS, DECISIONS)]
        flipped = _edited(base, "rating-flip", [move] * 8)
        reports.append(write(tmp_path, f"{run}.json", robustness_report(
            _dataset(base, "meta_review"), _dataset(flipped, "meta_review"), kind="meta_review")))
    built = make_tables(load(reports), ["agp-12"])
    assert [t.caption.rsplit("(", 1)[1] for t in built] == ["gpt-x-run1/gpt-x)", "gpt-x-run2/gpt-x)"]
    # Each run's overall-score difference under the None setting: -1 and -2 on every paper.
    assert [next(r for r in t.rows if r[2].text() == "rating-flip")[7].text() for t in built] == ["-1.00", "-2.00"]
    assert_cells_are_their_results(built)
