"""PRAIB Table 9's layout: each model's rows (conference, year, α_H, α_H+L, Δ) under the model's name in italics,
as the paper prints them, with a prompt's name as the records give it."""

import pytest

from praib.evaluation.evaluate import evaluate_reviews
from praib.records import load_records
from praib.tables import load_result, make_tables
from tests.tables.checks import assert_cells_are_their_results
from tests.tables.results import DEMO, evaluate_demo, write


def texts(table):
    return [[cell.text() for cell in row] for row in table.rows]


@pytest.fixture(scope="module")
def demo_table(tmp_path_factory):
    (table,) = make_tables([load_result(evaluate_demo(tmp_path_factory.mktemp("demo")))], ["praib-9"])
    return table


def test_rows_are_grouped_under_each_models_italic_heading(demo_table):
    assert demo_table.header == ["Conference", "Year", "α_H", "α_H+L", "Δ"]
    layout = [row[:2] for row in texts(demo_table)]
    # The demo's human and model reviews are of ICLR 2025 and NeurIPS 2025 papers; the extended prompt's models.
    assert layout == [["demo-model-a", ""], ["ICLR", "2025"], ["NeurIPS", "2025"],
                      ["demo-model-b", ""], ["ICLR", "2025"], ["NeurIPS", "2025"]]
    headings = [row for row in demo_table.rows if row[0].italic]
    assert [row[0].text() for row in headings] == ["demo-model-a", "demo-model-b"]
    assert all(cell.text() == "" for row in headings for cell in row[1:])
    markdown = demo_table.to_markdown()
    assert "| *demo-model-a* |  |  |  |  |" in markdown and "| ICLR | 2025 |" in markdown
    latex = demo_table.to_latex()
    assert "\\begin{tabular}{llrrr}" in latex  # the heading rows are no label columns
    assert "\\multicolumn{5}{l}{\\textit{demo-model-b}} \\\\" in latex
    assert assert_cells_are_their_results([demo_table]) == 12


def test_a_prompt_name_with_underscores_is_printed_as_given(tmp_path):
    """Without an extended prompt every model group is shown, each heading naming its prompt as the records do."""
    renamed = {"extended": "temp_0_1", "guidelines": "temp_0_7"}
    reviews = load_records(DEMO / "reviews.jsonl", "review").map(
        lambda r: {"prompt": renamed.get(r["prompt"], r["prompt"])})
    path = write(tmp_path, "results.json", evaluate_reviews(reviews, workers=1))
    (table,) = make_tables([load_result(path)], ["praib-9"])
    headings = [row[0].text() for row in table.rows if row[0].italic]
    assert headings == ["demo-model-a (temp_0_1)", "demo-model-a (temp_0_7)", "demo-model-b (temp_0_1)",
                        "demo-model-b (temp_0_7)"]
    assert "| *demo-model-a (temp_0_1)* |" in table.to_markdown()
    assert "\\multicolumn{5}{l}{\\textit{demo-model-b (temp\\_0\\_7)}} \\\\" in table.to_latex()
    assert table.notes[0] == "The evaluation has no `extended` prompt group: every model group is shown."
    assert assert_cells_are_their_results([table]) == 24
