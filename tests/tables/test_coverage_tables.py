"""PRAIB Tables 2, 29 and 30 from the demo reviews judged by the predictable judge (tests/evaluation/
predictable_judge.py), whose items and coverage are known by hand: every human review gives 1 strength and 2
weaknesses, every model review 1 strength ("clear writing", covering the human one) and 1 weakness ("small data",
covering the first human weakness only)."""

import pytest

from praib.tables import load_result, make_tables
from tests.tables.checks import assert_cells_are_their_results
from tests.tables.results import evaluate_demo, evaluate_judged

KEYS = ["praib-2", "praib-29", "praib-30"]


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    return {table.key: table for table in make_tables([load_result(evaluate_judged(tmp_path_factory.mktemp("j")))],
                                                      KEYS)}


def texts(table):
    return [[cell.text() for cell in row] for row in table.rows]


def test_table_2_recall_and_counts_against_the_average_and_the_humans(judged):
    table = judged["praib-2"]
    assert table.header == ["Metric", "demo-model-a", "demo-model-b", "Model Avg.", "Human"]
    same = "1.00 ± 0.00"
    assert texts(table) == [["Strength Dimension", "", "", "", ""],
                            ["Atomic Recall", same, same, same, "—"],
                            ["Count", same, same, same, same],
                            ["Weakness Dimension", "", "", "", ""],
                            ["Atomic Recall", "0.50 ± 0.00", "0.50 ± 0.00", "0.50 ± 0.00", "—"],
                            ["Count", same, same, same, "2.00 ± 0.00"]]
    model_avg = table.rows[4][3].value[0]
    assert model_avg.source.endswith("#/across_models/extended/coverage_recall_weaknesses/mean/mean")
    assert "Model rows: the `extended` prompt." in table.notes and not table.needs


def test_tables_29_and_30_per_model_and_over_the_models(judged):
    weaknesses, strengths = judged["praib-29"], judged["praib-30"]
    assert weaknesses.header_groups == [("", 1), ("Recall", 2), ("Prec.", 2), ("Density", 2), ("Compact.", 2)]
    # Weaknesses: 1 of 2 human items covered (recall 0.5, density 0.5 generated items per human item); the one
    # generated item matches (precision 1, compaction 1); every review alike, so every SD is 0.
    row = ["0.50", "0.00", "1.00", "0.00", "0.50", "0.00", "1.00", "0.00"]
    assert texts(weaknesses) == [["demo-model-a", *row], ["demo-model-b", *row], ["Mean", *row],
                                 ["Std", *["0.00"] * 8]]
    assert texts(strengths)[0] == ["demo-model-a", *["1.00", "0.00"] * 4]
    # The best recall and precision are bold (both models tie).
    assert [weaknesses.rows[i][1].bold for i in range(4)] == [True, True, False, False]
    assert weaknesses.rows[2][1].source.endswith("#/across_models/extended/coverage_recall_weaknesses/mean/mean")
    assert weaknesses.rows[3][2].source.endswith("#/across_models/extended/coverage_recall_weaknesses/std/std")


def test_every_cell_is_its_results_value(judged):
    # Table 2: 2 rows x (2 models + average) x 2 numbers + 2 human counts x 2; Tables 29, 30: 4 rows x 8.
    assert assert_cells_are_their_results(judged.values()) == 24 + 4 + 32 + 32


def test_without_a_judge_the_tables_name_the_option(tmp_path):
    for table in make_tables([load_result(evaluate_demo(tmp_path))], KEYS):
        assert table.needs == ["every cell: add `--judge MODEL` to `praib evaluate` (math engagement, atomic items, "
                               "coverage)"]
        assert all(cell.missing for cell in table.cells())
