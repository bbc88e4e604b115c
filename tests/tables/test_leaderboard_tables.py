"""PRAIB Table 1 from a `praib leaderboard run` folder: every number is the run's own, bold where the run marks the
submission closest to human, laid out as the `praib evaluate` version of the table; checked on the demo run and on a
synthetic judged run whose numbers are known by hand."""

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.leaderboard import run as run_module
from praib.records import HUMAN_SOURCE
from praib.tables import load_result, make_tables, resolve
from praib.tables.praib_leaderboard_tables import ALL_VENUES, HUMAN
from tests.tables.checks import assert_cells_are_their_results
from tests.tables.eras_results import check_tables, tables_of
from tests.tables.leaderboard_results import leaderboard_demo, leaderboard_judged
from tests.tables.results import evaluate_demo

MATH, P_POS, P_NEG = 7, 9, 10  # Table 1's judged columns


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("leaderboard")


@pytest.fixture(scope="module")
def demo(folder):
    path = leaderboard_demo(folder)
    return path, table_1(path)


@pytest.fixture(scope="module")
def judged(folder):
    path = leaderboard_judged(folder)
    return path, table_1(path)


def table_1(path):
    """Table 1 of the folder's tables (it also gives the comparison tables, tested in test_comparison_tables)."""
    return next(table for table in tables_of(path, "leaderboard") if table.key == "praib-1-leaderboard")


def rows_by_label(table):
    return {row[0].text(): row for row in table.rows}


def test_generic_checks_on_the_demo_run_and_a_judged_run(demo, judged):
    for path, table, at_least in ((*demo, 24),  # 3 rows × (4 readability, Cit., Xref., 2 venues of α)
                                  (*judged, 26)):  # also 3 Math and 2 P(+|+) cells
        check_tables(tables_of(path, "leaderboard"), "leaderboard", at_least=at_least)
        assert assert_cells_are_their_results([table]) >= at_least


def test_bold_is_exactly_where_the_run_marks_the_submission_closest_to_human(demo, judged):
    for path, table in (demo, judged):
        data = load_result(path).data
        bold = 0
        markdown, latex = table.to_markdown(), table.to_latex()
        for cell in table.cells():
            pointer = cell.source.split("#", 1)[1]
            row = resolve(data, pointer.rsplit("/", 1)[0])
            assert cell.bold == (pointer.endswith("/value") and row["closest_to_human"]), cell.source
            if cell.bold:
                bold += 1
                assert f"**{cell.text()}**" in markdown and f"\\textbf{{{cell.text()}}}" in latex
        assert bold >= 6


def test_demo_run_rows_columns_and_closest_submission(demo):
    path, table = demo
    assert [row[0].text() for row in table.rows] == ["Human", "demo-model-a", "demo-model-b"]
    assert table.header[8] == "α_r (ICLR/NeurIPS)"
    rows = rows_by_label(table)
    data = {(r["submission"], r["metric"], r["venue"]): r for r in load_result(path).data["rows"]}
    human_fre = data[("human", "fre", "all")]["value"]
    a, b = data[("model-a", "fre", "all")]["value"], data[("model-b", "fre", "all")]["value"]
    # model-b's FRE (45.7) is nearer the human 56.2 than model-a's (25.0): model-b's is bold.
    assert abs(b - human_fre) < abs(a - human_fre)
    assert rows["demo-model-b"][3].bold and not rows["demo-model-a"][3].bold and not rows["Human"][3].bold
    assert rows["demo-model-b"][3].text() == "45.7" and rows["Human"][3].text() == "56.2"
    # No judge: the judged columns are "—", and the needs say which option fills them.
    assert all(row[column].text() == "—" for row in table.rows for column in (MATH, P_POS, P_NEG))
    assert table.needs == [
        "Cit.'s verified count: `praib leaderboard run` does not verify citations "
        "(`praib evaluate --verify-citations` does, for praib-1)",
        "Math, P(+|+), P(+|−): add `--judge MODEL` to `praib leaderboard run`"]
    assert rows["Human"][5].text() == "—/0.38"  # 9 formatted references in 24 human reviews with text


def test_judged_run_against_hand_known_numbers(judged):
    _, table = judged
    rows = rows_by_label(table)
    assert list(rows) == ["Human", "plain-lm", "mathy-lm"]
    # The judge says every text with "HUMAN REVIEW" engages with the maths: every human review, no plain review and
    # every mathy review; so on the two papers (both engaged by their human reviews) P(+|+) is 0 and 1 and P(+|−)
    # has no paper.
    assert [rows[name][MATH].text() for name in rows] == ["1.000", "0.000", "1.000"]
    assert rows["mathy-lm"][MATH].bold and not rows["plain-lm"][MATH].bold
    assert (rows["plain-lm"][P_POS].text(), rows["mathy-lm"][P_POS].text()) == ("0.00", "1.00")
    assert rows["plain-lm"][P_NEG].text() == rows["mathy-lm"][P_NEG].text() == "—"
    assert not rows["mathy-lm"][P_POS].bold  # no human value to be close to
    assert rows["Human"][P_POS].text() == "—"
    # TKC by hand: the human text has 15 words, plain 14 (nearest, bold), mathy the human's and two score labels, 17.
    assert [rows[name][1].text() for name in rows] == ["15", "14", "17"]
    assert rows["plain-lm"][1].bold and not rows["mathy-lm"][1].bold
    assert table.header[8] == "α_r (ICLR)"
    assert any(need.startswith("a judged cell:") for need in table.needs)
    assert not any("--judge" in need for need in table.needs)
    assert "| mathy-lm | 17 |" in table.to_markdown()


def test_same_layout_and_numbers_as_the_evaluate_version(demo, folder):
    """The run's point values are evaluate's on the same reviews: both versions of Table 1 print the same cells."""
    _, table = demo
    (evaluated,) = make_tables([load_result(evaluate_demo(folder))], ["praib-1"])
    assert (table.header, table.header_groups) == (evaluated.header, evaluated.header_groups)
    assert evaluated.notes[1].split(" P(+|+)")[0] == table.notes[1].split(" P(+|+)")[0]
    ours, theirs = rows_by_label(table), rows_by_label(evaluated)
    assert list(ours) == list(theirs)
    for name in ours:
        columns = range(1, 9) if name != "Human" else range(1, 8)  # evaluate keeps no human α per venue
        assert [ours[name][c].text() for c in columns] == [theirs[name][c].text() for c in columns], name


def test_the_runs_names_for_its_pooled_slice_and_human_reference():
    assert (ALL_VENUES, HUMAN) == (run_module.ALL_VENUES, HUMAN_SOURCE)


def test_cli_renders_the_run_folder(demo):
    path, _ = demo
    result = CliRunner().invoke(main, ["tables", str(path), "-f", "latex"])
    assert result.exit_code == 0, result.output
    assert "\\label{tab:praib-1-leaderboard}" in result.output and "\\textbf{45.7}" in result.output
    assert "P(+$|$+)" in result.output
