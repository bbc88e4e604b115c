"""The counterfactual review-logic study's Tables 4-6, from `praib counterfactual effects` results of the demo
(the oracle reviewer), of a synthetic run known by hand, and of a judged simulated study."""

import math

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.tables import make_tables
from praib.tables.counterfactual_tables import JUDGE_NEEDED
from tests.tables.checks import assert_cells_are_their_results
from tests.tables.perturbation_results import (
    effects_demo,
    effects_judged,
    effects_synthetic,
    load,
)

KEYS = ["cf-4", "cf-5", "cf-6"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("effects")


@pytest.fixture(scope="module")
def demo(folder):
    return load([effects_demo(folder)])


@pytest.fixture(scope="module")
def synthetic(folder):
    return load([effects_synthetic(folder)])


@pytest.fixture(scope="module")
def judged(folder):
    return load([effects_judged(folder)])


def tables_of(results):
    return {table.key: table for table in make_tables(results, KEYS)}


def texts(table):
    return {row[0].text(): [cell.text() for cell in row[1:]] for row in table.rows}


def test_every_table_from_the_demo_and_synthetic_runs_is_its_results(demo, synthetic, judged):
    built = make_tables(demo + synthetic + judged)
    ours = [table for table in built if table.key in KEYS]
    assert sorted(table.key for table in ours) == sorted(KEYS * 3)
    assert all(table.rows for table in ours)
    assert assert_cells_are_their_results(ours) > 20


def test_the_demo_oracle(demo):
    built = tables_of(demo)
    # The oracle restates the original review for neutral versions and keeps their rating: no spread, so no z.
    assert texts(built["cf-4"]) == {"oracle": ["—"]}
    assert built["cf-4"].needs == ["z of oracle: undefined for every difference (Score: the neutral differences have "
                                   "no spread (SD 0 or one difference), so the gap has no unit)"]
    # Its score falls for every critical version only: p far below 0.0005 before and after correction.
    assert texts(built["cf-5"]) == {"oracle": ["—", "—", "—", "—", "0.000", "0.000"]}
    assert built["cf-5"].needs == [f"Aspects, Sentiment: {JUDGE_NEEDED}"]
    assert texts(built["cf-6"]) == {"oracle": ["1.000", "—"]}


def test_tables_against_a_run_known_by_hand(synthetic):
    built = tables_of(synthetic)
    # Critical differences -2, -3, -2, -1 (mean -2), neutral 0, 1, -1, 0, 0, 1, 0, -1 (mean 0, SD sqrt(4/7)); each
    # paper has one critical and two neutral versions, so the mixed model's slope is the difference of the means:
    # z = -(-2 - 0) / sqrt(4/7) = sqrt(7) = 2.6458.
    (hand, null) = built["cf-4"].rows
    assert hand[0].text() == "hand/zero_generic" and hand[1].text() == "2.65"
    assert hand[1].value == pytest.approx(math.sqrt(7), abs=1e-4)
    assert null[1].text() == "—" and "z of null/zero_generic: undefined for every difference (Score: every " \
        "difference is the same: the model is not identified)" in built["cf-4"].needs
    # BH over the one fitted reviewer leaves its p-value as it is.
    assert texts(built["cf-5"])["hand/zero_generic"][4] == texts(built["cf-5"])["hand/zero_generic"][5]
    assert hand[1].source.endswith("#/reviewers/hand~1zero_generic/ranking_score")
    # ROUGE-2: 7 of 8 neutral reviews repeat the text (1); "the cat sat down" vs "the cat ran down" share 1 of 3
    # bigrams (1/3): (7 + 1/3) / 8 = 0.917.
    assert texts(built["cf-6"]) == {"hand/zero_generic": ["0.917", "—"], "null/zero_generic": ["0.917", "—"]}
    assert built["cf-6"].needs == [f"Assertion Jaccard: {JUDGE_NEEDED}"]


def test_a_judged_run_fills_every_column(judged):
    built = tables_of(judged)
    assert not any(table.needs for table in built.values())
    assert all(cell.text() != "—" for table in built.values() for row in table.rows for cell in row)
    # Ranked by z: the oracle, which reacts to broken research logic, above the reviewer that does not.
    assert [row[0].text() for row in built["cf-4"].rows] == ["oracle/zero_generic", "null/zero_generic"]
    assert built["cf-5"].header_groups == [("", 1), ("Aspects", 2), ("Sentiment", 2), ("Score", 2)]


def test_without_sensitivity_table_6_names_the_option(demo, folder, tmp_path):
    # The demo fixture wrote the oracle's reviews into the folder.
    path = tmp_path / "effects.json"
    run = CliRunner().invoke(main, ["counterfactual", "effects", str(folder / "oracle.originals.jsonl"),
                                    str(folder / "oracle.jsonl"), "--no-sensitivity", "--no-progress",
                                    "--output", str(path)])
    assert run.exit_code == 0, run.output
    built = tables_of(load([path]))["cf-6"]
    assert texts(built) == {"oracle": ["—", "—"]}
    assert built.needs == ["every cell: run `praib counterfactual effects` without `--no-sensitivity`"]
