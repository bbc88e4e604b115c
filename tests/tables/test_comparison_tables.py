"""The comparisons of a `praib leaderboard run` folder as tables (leaderboard-comparisons, leaderboard-ranks): every
number is the folder's own, the pooled slice only, the verdict bold where a difference is detected and rank 1 bold; a
folder written before comparisons gives empty tables that say what fills them."""

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.tables import load_result, make_tables
from tests.tables.checks import assert_cells_are_their_results
from tests.tables.leaderboard_results import leaderboard_demo

KEYS = ["leaderboard-comparisons", "leaderboard-ranks"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    # 400 draws: p-values down to 2/401, so that differences survive the adjustment over the 36 comparisons.
    path = leaderboard_demo(tmp_path_factory.mktemp("comparisons"), n_bootstrap=400)
    return path, dict(zip(KEYS, make_tables([load_result(path)], KEYS)))


def test_every_cell_is_the_folders_own_number(demo):
    _, tables = demo
    # 12 metrics x (papers, difference, 2 CI ends, p, verdict, min. detectable, papers needed), less undefined ones;
    # 2 submissions x 12 metrics x (rank, low, high).
    assert assert_cells_are_their_results([tables["leaderboard-comparisons"]]) >= 80
    assert assert_cells_are_their_results([tables["leaderboard-ranks"]]) == 72


def test_the_pooled_comparisons_with_bold_verdicts_and_rank_one(demo):
    path, tables = demo
    data = load_result(path).data
    pooled = [row for row in data["comparisons"] if row["venue"] == "all"]
    comparisons = tables["leaderboard-comparisons"]
    assert [row[0].text() for row in comparisons.rows] == ["TKC", "TTR", "FRE", "FKG", "Xref.", "Cit.", "Rating",
                                                          "Confidence", "Rating gap", "Rating TV", "Confidence TV",
                                                          "α"]
    for row, source in zip(comparisons.rows, pooled):
        verdict = row[comparisons.header.index("Verdict")]
        assert verdict.value == source["verdict"]
        assert verdict.bold == (source["verdict"] != "no detectable difference")
    # FRE pooled: model-a's distance to human minus model-b's is positive, model-b closer, 4 decimals of FRE's 1 + 1.
    fre = comparisons.rows[2]
    assert [cell.text() for cell in fre[:3]] == ["FRE", "model-a", "model-b"]
    assert fre[4].text() == f"{next(r for r in pooled if r['metric'] == 'fre')['difference']:.2f}"
    markdown, latex = comparisons.to_markdown(), comparisons.to_latex()
    assert "**B closer**" in markdown and "\\textbf{B closer}" in latex
    assert "A $-$ B" in latex and "\\label{tab:leaderboard-comparisons}" in latex
    ranks = tables["leaderboard-ranks"]
    assert [row[0].text() for row in ranks.rows] == ["model-a", "model-b"]
    for row in ranks.rows:
        for cell in row[1:]:
            assert cell.bold == (cell.value[0].value == 1)
    assert ranks.rows[1][ranks.header.index("FRE")].text() == "1 [1–1]"


def test_a_folder_written_before_comparisons_gives_tables_that_say_what_fills_them(demo, tmp_path):
    path, _ = demo
    old = tmp_path / "old"
    old.mkdir()
    for name in ("results.parquet", "results.jsonl", "run.json"):
        (old / name).write_bytes((path / name).read_bytes())
    tables = make_tables([load_result(old)], KEYS)
    for built in tables:
        assert built.rows == [] and any("comparisons.parquet and ranks.parquet" in need for need in built.needs)
    printed = CliRunner().invoke(main, ["tables", str(old), "--table", "leaderboard-comparisons"])
    assert printed.exit_code == 0 and "Missing (—): every cell: a run folder with comparisons.parquet" in printed.output
