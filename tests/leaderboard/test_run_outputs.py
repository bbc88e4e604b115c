"""A leaderboard run gives, to the last bit, the numbers that main at 5079516 gave on the same seeded synthetic run
(``tests/leaderboard/synthetic_board.py``; the fixture was written by that code, before the run was restructured
for speed): every row of results.parquet, comparisons.parquet and ranks.parquet, every detail file, the lines it
prints and the report. Since then, by design, the details of model-all and model-most count their model
reviews' text ratings off the venue scale as off scale instead of parsed partially (12 and 4 partial, 5 and 1 off
scale, where they had 17 and 5 partial): their two hashes were re-recorded; every number, line and the report are
unchanged."""

import json

import pytest

from tests.leaderboard.synthetic_board import FIXTURE, OUTPUT_TABLES, run_outputs


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    return run_outputs(tmp_path_factory.mktemp("synthetic-run"))


@pytest.fixture(scope="module")
def recorded():
    return json.loads(FIXTURE.read_text())


def test_the_recorded_run_reaches_every_path(recorded):
    """The fixture holds what the board is meant to reach, so that equality below means something."""
    results = [dict(zip(recorded["results.parquet"]["columns"], row)) for row in recorded["results.parquet"]["rows"]]
    comparisons = [dict(zip(recorded["comparisons.parquet"]["columns"], row))
                   for row in recorded["comparisons.parquet"]["rows"]]
    assert {row["venue"] for row in results} == {"all", "ICLR", "NeurIPS", "TMLR"}
    assert {"robustness_rating_rating_flip", "rating_tv", "krippendorff_alpha"} <= {row["metric"] for row in results}
    assert len({(row["venue"], row["n_papers"]) for row in comparisons}) == 8  # pairs over all papers, and fewer
    assert {row["verdict"] for row in comparisons} == {"A closer", "B closer", "no detectable difference"}


@pytest.mark.parametrize("table", [*OUTPUT_TABLES, "results.jsonl"])
def test_every_row_is_the_recorded_one(outputs, recorded, table):
    assert outputs[table]["columns"] == recorded[table]["columns"]
    for number, (row, expected) in enumerate(zip(outputs[table]["rows"], recorded[table]["rows"])):
        assert row == expected, f"{table} row {number}: {dict(zip(recorded[table]['columns'], expected))}"
    assert len(outputs[table]["rows"]) == len(recorded[table]["rows"])


def test_details_printed_lines_and_report_are_the_recorded_ones(outputs, recorded):
    assert outputs["details sha256"] == recorded["details sha256"]
    assert outputs["printed"] == recorded["printed"]
    assert outputs["report.md sha256"] == recorded["report.md sha256"]
