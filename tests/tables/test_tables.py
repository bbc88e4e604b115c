"""`praib tables`: every table is laid out from result files, and every number in it is the number of the result
it names, printed with the paper's rounding."""

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.evaluation.evaluate import evaluate_reviews
from praib.records import load_records
from praib.tables import TABLES, load_result, make_tables
from praib.tables.layout import Cell, Table, joined, label
from tests.tables.checks import assert_cells_are_their_results
from tests.tables.results import DEMO, all_results, evaluate_demo, write


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return all_results(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="module")
def tables(results):
    return make_tables(results)


def test_every_registered_table_is_built_from_the_results(results, tables):
    kinds = {result.kind for result in results}
    assert {table.key for table in tables} == {key for key, spec in TABLES.items() if spec.kind in kinds}
    for table in tables:
        assert table.rows, f"{table.key} has no rows"
        assert all(len(row) == len(table.header) for row in table.rows), table.key


def test_every_number_is_the_value_at_its_pointer_in_its_result_file_and_prints_as_the_paper_rounds_it(tables):
    assert assert_cells_are_their_results(tables) > 300


def test_cells_print_the_papers_rounding_signs_and_units():
    assert Cell(531.57, "x", digits=0).text() == "532"
    assert Cell(0.46012, "x", digits=3).text() == "0.460"
    assert Cell(48.1, "x", digits=2, signed=True).text() == "+48.10"
    assert Cell(-0.0001, "x", digits=2, signed=True).text() == "0.00"
    assert Cell(0.0069, "x", digits=2, scale=100).text() == "0.69"
    assert Cell(None, "x", digits=2).text() == "—"
    assert joined(Cell(0.34, "a", digits=2), Cell(0.24, "b", digits=2)).text() == "0.34/0.24"
    table = Table("t", "P", 1, "T", header=["A", "B"], rows=[[label("x"), Cell(1.5, "p", digits=1)]],
                  needs=["B: run with --judge"])
    assert "| x | 1.5 |" in table.to_markdown()
    assert "Missing (—): B: run with --judge" in table.to_markdown()
    assert "x & 1.5 \\\\" in table.to_latex()


def test_table_17_against_hand_computed_cells(results):
    """Pooled rating shares of the demo's extended-prompt model a, minus the human shares, in points."""
    (table,) = make_tables(results[:1], ["praib-17"])
    rows = {row[0].text(): row for row in table.rows}
    # Human ratings of the demo: 26 reviews, 7 of them a 3 -> 26.92 %; model a (extended): 0 of 8 -> -26.92 pp.
    assert rows["3"][1].text() == "26.92" and rows["3"][2].text() == "-26.92"
    assert table.header[2] == "demo-model-a"



def test_tables_15_and_16_show_the_models_when_the_human_reviews_have_no_confidence(tmp_path):
    """Without human confidences the result keeps each model's shares under `distribution` (nothing to compare
    with); the tables read `model` only, and printed "—" in every model cell with no note."""
    reviews = load_records(DEMO / "reviews.jsonl", "review")
    reviews = reviews.map(lambda r: {"confidence": None if r["source"] == "human" else r["confidence"]})
    path = write(tmp_path, "no-human-confidence.json", evaluate_reviews(reviews, workers=1).to_dict())
    table_15, table_16 = make_tables([load_result(path)], ["praib-15", "praib-16"])
    assert table_15.header == ["Score", "Human", "demo-model-a", "demo-model-b"]
    rows = {row[0].text(): [cell.text() for cell in row[1:]] for row in table_15.rows}
    # The confidences written in the demo's model reviews, counted by hand (extended / guidelines):
    # a: 8 x 4 / 7 x 4 + 1 x 5; b: 7 x 4 + 1 x 3 / 5 x 4 + 2 x 3 (one review gives none).
    assert rows["3"] == ["—", "0.000/0.000", "0.125/0.286"]
    assert rows["4"] == ["—", "1.000/0.875", "0.875/0.714"]
    assert rows["5"] == ["—", "0.000/0.125", "0.000/0.000"]
    assert table_15.needs == ["Human: the human reviews with a confidence"]
    assert table_16.header == ["Score", "demo-model-a", "demo-model-b"] and not table_16.needs
    assert all(cell.text() != "—" for row in table_16.rows for cell in row)
    assert_cells_are_their_results([table_15, table_16])

def test_a_named_table_without_its_result_says_which_command_produces_it():
    (empty,) = make_tables([], ["praib-17"])
    assert not empty.rows
    assert empty.needs == ["the whole table: a result of `praib evaluate REVIEWS --output results.json`"]
    assert "Missing (—): the whole table" in empty.to_markdown()


def test_cli_lists_renders_and_refuses_bad_input(tmp_path):
    runner = CliRunner()
    listed = runner.invoke(main, ["tables", "--list"])
    assert listed.exit_code == 0 and all(key in listed.output for key in TABLES)
    path = evaluate_demo(tmp_path)
    rendered = runner.invoke(main, ["tables", str(path), "--table", "praib-17", "--format", "latex"])
    assert rendered.exit_code == 0 and "\\label{tab:praib-17}" in rendered.output
    written = runner.invoke(main, ["tables", str(path), "-t", "praib-9", "--output", str(tmp_path / "t.md")])
    assert written.exit_code == 0 and "PRAIB Table 9" in (tmp_path / "t.md").read_text()
    not_a_result = tmp_path / "x.json"
    not_a_result.write_text('{"a": 1}')
    refused = runner.invoke(main, ["tables", str(not_a_result)])
    assert refused.exit_code == 1 and "x.json: not a result praib writes" in refused.output
    unknown = runner.invoke(main, ["tables", str(path), "-t", "praib-99"])
    assert unknown.exit_code == 2 and "no table praib-99" in unknown.output
