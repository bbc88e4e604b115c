"""The target-aspect study's Tables 3-5 and 7-12: laid out from the demo data (no judge: every cell "—" and a
`needs` line), from judged synthetic runs (cells checked by hand), and from cells the paper prints, which praib's
own aggregation must turn into the paper's other cells."""

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.metrics.judged.target_aspect import _cell, _mean_of_kinds
from praib.tables import TABLES, load_result, make_tables
from tests.tables.results import evaluate_demo, evaluate_judged
from tests.tables.target_aspect_results import check_tables, evaluate_target_aspect, printed_result

KEYS = ["ta-3", "ta-4", "ta-5", "ta-7", "ta-8", "ta-9", "ta-10", "ta-11", "ta-12"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("target-aspect")


@pytest.fixture(scope="module")
def synthetic(folder):
    path = evaluate_target_aspect(folder)
    return {table.key: table for table in check_tables([path], KEYS)}


def cells(table, row_label):
    """The printed cells of the row labelled ``row_label``, by column name."""
    (row,) = [row for row in table.rows if row[0].text() == row_label]
    return dict(zip(table.header[1:], (cell.text() for cell in row[1:])))


def test_the_study_registers_every_table_the_issue_lists():
    assert [key for key in TABLES if key.startswith("ta-") and key != "ta-2"] == KEYS
    assert {TABLES[key].kind for key in KEYS} == {"evaluate"}
    assert TABLES["ta-2"].kind == "validation"  # the annotators' reliability: `praib judge validate` results


def test_every_table_from_the_demo_without_a_judge_is_empty_and_names_the_options(folder):
    tables = check_tables([evaluate_demo(folder)], KEYS)
    assert [table.key for table in tables] == KEYS
    for table in tables:
        assert all(cell.missing for cell in table.cells()), table.key
        assert len(table.rows) >= 4  # the demo's four model groups (two models x two prompts)
        (need,) = table.needs
        assert "`--judge MODEL` to `praib evaluate`" in need and "`--meta-reviews META_REVIEWS`" in need
        assert "Expert side: none, the run had no judge." in table.to_markdown()


def test_every_table_from_the_judged_demo(folder):
    """The demo reviews judged by the predictable judge: every item is (Method, Validity) on both sides."""
    tables = {table.key: table for table in check_tables([evaluate_judged(folder)], KEYS)}
    assert set(cells(tables["ta-3"], "demo-model-a/extended").values()) == {"1.000"}
    assert cells(tables["ta-8"], "F1 (demo-model-b/guidelines)")["Method"] == "1.000"
    assert cells(tables["ta-8"], "F1 (demo-model-b/guidelines)")["Theory"] == "—"
    # The demo's model reviews carry no recommendation, so the rejection rate is undefined and the table says why.
    assert set(cells(tables["ta-5"], "demo-model-a/extended").values()) == {"—"}
    assert "recommendation" in tables["ta-5"].needs[0]
    for table in tables.values():
        assert "Expert side: the human reviews of each paper" in table.to_markdown()


def test_table_3_by_hand(synthetic):
    table = synthetic["ta-3"]
    # model-y: strengths TP 1+1+1 of |M| 3, |E| 4; weaknesses TP 2+1+1 of |M| 4, |E| 5; overall TP 7, |M| 7, |E| 9.
    # F1 of summed counts = 2 TP / (|M| + |E|): 6/7, 8/9, 14/16. model-x: strengths TP 2, |M| 5, |E| 4 (F1 4/9);
    # weaknesses TP 3, |M| 5, |E| 5; overall TP 5, |M| 10, |E| 9 (F1 10/19). The paper orders rows by overall F1.
    assert [row[0].text() for row in table.rows] == ["model-y", "model-x"]
    assert [cell.text() for cell in table.rows[0][1:]] == ["0.875", "1.000", "0.778", "0.857", "1.000", "0.750",
                                                          "0.889", "1.000", "0.800"]
    assert [cell.text() for cell in table.rows[1][1:]] == ["0.526", "0.500", "0.556", "0.444", "0.400", "0.500",
                                                          "0.600", "0.600", "0.600"]
    assert table.header_groups == [("", 1), ("Overall", 3), ("Strength", 3), ("Weakness", 3)]
    assert not table.needs


def test_per_target_and_aspect_tables_by_hand(synthetic):
    # model-x, strengths, Method: named by both on p1 and p3, by the model only on p2 -> P 2/3, R 1, F1 0.8.
    # Experiment: the experts' only (p1) -> 0. Theory: neither side -> undefined.
    assert cells(synthetic["ta-8"], "F1 (model-x)") == {"Problem": "0.000", "Prior Research": "—", "Method": "0.800",
                                                        "Theory": "—", "Experiment": "0.000", "Conclusion": "—",
                                                        "Paper": "0.000"}
    assert cells(synthetic["ta-8"], "Prec (model-x)")["Method"] == "0.667"
    assert cells(synthetic["ta-8"], "Rec (model-x)")["Method"] == "1.000"
    # Weaknesses, Experiment: both on p1 and p2, the model only on p3 -> P 2/3, R 1, F1 0.8; Method: both on p2.
    assert cells(synthetic["ta-9"], "F1 (model-x)")["Experiment"] == "0.800"
    assert cells(synthetic["ta-9"], "F1 (model-x)")["Method"] == "1.000"
    # Both kinds: means of the strength and weakness cells (Method F1 (0.8 + 1) / 2, precision (2/3 + 1) / 2).
    assert cells(synthetic["ta-7"], "F1 (model-x)")["Method"] == "0.900"
    assert cells(synthetic["ta-7"], "Prec (model-x)")["Method"] == "0.833"
    assert cells(synthetic["ta-7"], "F1 (model-x)")["Experiment"] == "0.400"
    # Clarity: strengths model-only (p1) -> 0, weaknesses both (p2) -> 1, both kinds 0.5.
    assert cells(synthetic["ta-11"], "F1 (model-x)")["Clarity"] == "0.000"
    assert cells(synthetic["ta-12"], "F1 (model-x)")["Clarity"] == "1.000"
    assert cells(synthetic["ta-10"], "F1 (model-x)")["Clarity"] == "0.500"
    # model-y, Novelty: strengths the experts' only (p1) -> 0; weaknesses both (p1) -> 1.
    assert cells(synthetic["ta-11"], "F1 (model-y)")["Novelty"] == "0.000"
    assert cells(synthetic["ta-12"], "F1 (model-y)")["Novelty"] == "1.000"
    # The paper's rows: F1 of every model, then precision, then recall.
    assert [row[0].text() for row in synthetic["ta-10"].rows] == [
        "F1 (model-x)", "F1 (model-y)", "Prec (model-x)", "Prec (model-y)", "Rec (model-x)", "Rec (model-y)"]
    assert "a label that neither side names" in synthetic["ta-8"].needs[0]
    assert not synthetic["ta-10"].needs


def test_table_4_by_hand(synthetic):
    table = synthetic["ta-4"]
    assert table.header == ["Target / aspect", "model-x", "model-y"]
    assert cells(table, "Method") == {"model-x": "0.90", "model-y": "0.33"}
    assert cells(table, "Method: strength/weakness") == {"model-x": "0.80/1.00", "model-y": "0.67/0.00"}
    assert cells(table, "Problem: strength/weakness")["model-x"] == "0.00/—"  # no weakness names Problem
    assert cells(table, "Novelty: strength/weakness") == {"model-x": "1.00/0.00", "model-y": "0.00/1.00"}
    assert [row[0].text() for row in table.rows][::2] == ["Problem", "Method", "Theory", "Experiment",
                                                         "Novelty", "Impact", "Validity", "Clarity"]


def test_table_5_by_hand(synthetic):
    # Rejected papers p1 and p2: model-x recommends Reject, Accept (50%); model-y Reject, Reject (100%).
    # p3 was accepted, so neither model's recommendation on it counts.
    table = synthetic["ta-5"]
    assert [[cell.text() for cell in row] for row in table.rows] == [["model-y", "100.00"], ["model-x", "50.00"]]
    assert table.header == ["Model", "Rejection (%)"]


def test_tables_3_4_7_10_reproduce_the_papers_printed_cells(folder):
    """Cells the paper prints, through praib's aggregation, give the paper's other cells at its rounding."""

    def counted(precision, recall):
        # Counts whose summed precision and recall are the printed ones: TP / |M| and TP / |E|.
        p, r = round(precision * 1000), round(recall * 1000)
        return _cell([(p * r, r * 1000, p * 1000)])

    def printed(precision, recall, f1):
        return {"precision": precision, "recall": recall, "f1": f1}

    # Table 3: o1-mini given first, the paper's order (by overall F1) puts DeepSeek-R1 above it.
    table_3 = {
        "o1-mini": {"overall": counted(0.283, 0.491),
                    "by_kind": {"strength": counted(0.232, 0.578), "weakness": counted(0.343, 0.439)}},
        "DeepSeek-R1": {"overall": counted(0.314, 0.460),
                        "by_kind": {"strength": counted(0.254, 0.520), "weakness": counted(0.379, 0.424)}},
    }
    (table,) = check_tables([printed_result(folder, table_3, "table-3.json")], ["ta-3"])
    assert [[cell.text() for cell in row] for row in table.rows] == [
        ["DeepSeek-R1", "0.373", "0.314", "0.460", "0.341", "0.254", "0.520", "0.400", "0.379", "0.424"],
        ["o1-mini", "0.359", "0.283", "0.491", "0.331", "0.232", "0.578", "0.385", "0.343", "0.439"]]

    # Tables 8/9 (DeepSeek-R1, Problem and Method) and 11/12 (gpt-4o-mini, Validity): strength and weakness cells;
    # their mean is Tables 7/10's cell, and at two places Table 4's.
    by_kind_target = {"strength": {"Problem": printed(0.355, 0.447, 0.396), "Method": printed(0.617, 0.953, 0.749)},
                      "weakness": {"Problem": printed(0.287, 0.151, 0.198), "Method": printed(0.661, 0.764, 0.709)}}
    by_kind_aspect = {"strength": {"Validity": printed(0.431, 0.986, 0.599)},
                      "weakness": {"Validity": printed(0.912, 0.994, 0.951)}}
    model = {"by_kind_target": by_kind_target, "by_kind_aspect": by_kind_aspect,
             "by_target": {name: _mean_of_kinds(by_kind_target["strength"][name], by_kind_target["weakness"][name])
                           for name in ("Problem", "Method")},
             "by_aspect": {"Validity": _mean_of_kinds(by_kind_aspect["strength"]["Validity"],
                                                      by_kind_aspect["weakness"]["Validity"])}}
    path = printed_result(folder, {"deepseek-r1": model}, "tables-4-7-10.json")
    tables = {table.key: table for table in check_tables([path], ["ta-4", "ta-7", "ta-10"])}
    assert cells(tables["ta-7"], "F1 (deepseek-r1)")["Problem"] == "0.297"   # Table 7
    assert cells(tables["ta-7"], "F1 (deepseek-r1)")["Method"] == "0.729"    # Table 7
    assert cells(tables["ta-10"], "F1 (deepseek-r1)")["Validity"] == "0.775"  # Table 10 (gpt-4o-mini's row)
    assert cells(tables["ta-10"], "Rec (deepseek-r1)")["Validity"] == "0.990"
    assert cells(tables["ta-4"], "Problem") == {"deepseek-r1": "0.30"}                        # Table 4
    assert cells(tables["ta-4"], "Problem: strength/weakness") == {"deepseek-r1": "0.40/0.20"}
    assert cells(tables["ta-4"], "Method") == {"deepseek-r1": "0.73"}
    assert cells(tables["ta-4"], "Method: strength/weakness") == {"deepseek-r1": "0.75/0.71"}


def test_notes_say_the_expert_side_and_the_labelled_item_count(folder):
    path = printed_result(folder, {"m": {"overall": {"precision": 0.5, "recall": 0.5, "f1": 0.5}, "llm_items": 12}},
                          "meta.json")
    for table in make_tables([load_result(path)], KEYS):
        markdown = table.to_markdown()
        assert "Expert side: each paper's meta-review, restructured" in markdown, table.key
        if table.key != "ta-5":
            assert "Model items labelled: m 12." in markdown, table.key


def test_cli_renders_the_tables_of_a_judged_run(folder):
    path = evaluate_target_aspect(folder)
    runner = CliRunner()
    latex = runner.invoke(main, ["tables", str(path), "-t", "ta-3", "-t", "ta-5", "--format", "latex"])
    assert latex.exit_code == 0, latex.output
    assert "\\label{tab:ta-3}" in latex.output and "model-y & 100.00 \\\\" in latex.output
    markdown = runner.invoke(main, ["tables", str(path), "-t", "ta-12"])
    assert markdown.exit_code == 0 and "| F1 (model-y) | 1.000 |" in markdown.output
