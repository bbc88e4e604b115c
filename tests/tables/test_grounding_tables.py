"""PRAIB Tables 18-20 from the synthetic `praib grounding` run of tests/tables/grounding_results.py, whose ratings,
bins and correlations are known by hand (its docstring)."""

import math

import pytest

from praib.tables import load_result, make_tables
from tests.tables.checks import assert_cells_are_their_results
from tests.tables.grounding_results import grounding_run, review_rows

KEYS = ["praib-18", "praib-19", "praib-20"]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    monkeypatch = pytest.MonkeyPatch()
    try:
        output, result = grounding_run(tmp_path_factory.mktemp("grounding"), monkeypatch)
    finally:
        monkeypatch.undo()
    assert result.exit_code == 3, result.output  # b3's comment has no usable rating
    return {table.key: table for table in make_tables([load_result(output)], KEYS)}


def texts(row):
    return [cell.text() for cell in row]


def test_every_cell_is_its_results_value(tables):
    assert set(tables) == set(KEYS)
    # Table 18: 4 correlations; Table 19: 8 gains, 3 of them of empty bins; Table 20: 16 scores and gains.
    assert assert_cells_are_their_results(tables.values()) == 4 + 5 + 16


def test_table_18_correlations_of_grounding_specificity(tables):
    built = tables["praib-18"]
    assert built.header_groups == [("", 1), ("xrefs_count", 2), ("xrefs_count_density", 2)]
    rows = {row[0].text(): row for row in built.rows}
    assert list(rows) == ["Actionability", "Grounding specificity", "Helpfulness", "Verifiability"]
    gen, human = rows["Grounding specificity"][1], rows["Grounding specificity"][2]
    assert gen.value == pytest.approx(7.25 / 9.5) and gen.text() == "0.763"
    assert human.value == pytest.approx(9.5 / math.sqrt(95)) and human.text() == "0.975"
    assert texts(rows["Helpfulness"])[1:] == ["—"] * 4
    assert any(need.startswith("Actionability, Helpfulness, Verifiability: praib rates grounding specificity only")
               for need in built.needs)
    assert ("Judge: stub-revutil; Grounding specificity (grounding_specificity): judge not validated (run `praib "
            "judge validate --task grounding ...`).") in built.notes


def test_table_19_gains_per_model(tables):
    built = tables["praib-19"]
    assert built.header == ["Model", "Bin 0 (baseline)", "Bin 1 (Δ)", "Bin 2–5 (Δ)", "Bin >5 (Δ)"]
    assert [texts(row) for row in built.rows] == [["model-a/extended", "0.000", "-1.000", "+1.000", "—"],
                                                  ["model-b/extended", "0.000", "—", "—", "+3.000"]]


def test_table_20_scores_and_gains_of_the_humans_and_all_models(tables):
    built = tables["praib-20"]
    human, models = built.rows
    assert texts(human) == ["Human (OpenReview)", "1.750", "0.000", "3.000", "+1.250", "4.000", "+2.250",
                            "4.667", "+2.917"]
    assert texts(models) == ["All LLMs (aggregated)", "2.500", "0.000", "2.000", "-0.500", "4.000", "+1.500",
                             "5.000", "+2.500"]
    assert human[8].source.endswith("#/pooled/human/bins/>5/gain")


def test_every_empty_group_says_why(tmp_path, monkeypatch):
    """Human reviews without a weaknesses section and a model whose only comment got no usable rating: their cells
    print "—" with the reason."""
    rows = [{**row, "weaknesses": None, "text": "A review in prose, with no sections at all."}
            if row["source"] == "human" else row for row in review_rows() if row["review_id"] not in ("b1", "b2")]
    output, result = grounding_run(tmp_path, monkeypatch, rows)
    assert result.exit_code == 3, result.output
    tables = {table.key: table for table in make_tables([load_result(output)], KEYS)}
    no_comment = ("a weakness comment to rate in the human reviews (a weaknesses section whose items or paragraphs "
                  "have 50 characters or more)")
    assert f"OR: {no_comment}" in tables["praib-18"].needs
    assert f"Human row: {no_comment}" in tables["praib-20"].needs
    assert texts(tables["praib-20"].rows[0])[1:] == ["—"] * 8
    assert tables["praib-19"].needs == ["model-b/extended row: a usable rating of the model's reviews' comments (the "
                                        "judge gave none: see OUTPUT.failures.jsonl)"]
    assert texts(tables["praib-19"].rows[1]) == ["model-b/extended", "—", "—", "—", "—"]
    assert "warning: no review" not in result.output  # model a's comments are there to rate


def test_a_constant_rating_leaves_rho_undefined_and_says_so(tmp_path, monkeypatch):
    rows = [row for row in review_rows() if row["review_id"] in ("a1", "b1", "h2", "h3", "h4")]
    output, result = grounding_run(tmp_path, monkeypatch, rows)
    (table_18,) = make_tables([load_result(output)], ["praib-18"])
    # Model reviews a1 and b1 (ratings 3 and 2): fewer than 3, so ρ is undefined; h2-h4 have 3 ratings.
    assert [texts(table_18.rows[1])[i] for i in (1, 2, 3)] == ["—", "1.000", "—"]
    assert ("Gen: ρ is undefined with fewer than 3 rated reviews or a constant rating, count or density"
            in table_18.needs)
