"""The leaderboard app's tables, built from hand-made results without a browser (and without gradio), and
its page built by gradio where gradio is installed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from praib.leaderboard.app import (BY_NAME_ORDER, Board, about_markdown, comparison_table, file_request, load_board,
                                   leaderboard_table, metric_cell, queue_table, sort_choices, submission_metrics)
from praib.leaderboard.report import LeaderboardResults
from praib.leaderboard.stores import LocalStore
from praib.metrics.registry import METRICS
from tests.leaderboard.boards import demo_submission
from tests.leaderboard.report_page import parse
from tests.paths import ROOT


def row(submission, metric, venue, value, distance=None, closest=False, low=None, high=None):
    return {"submission": submission, "model": {"human": "human"}.get(submission, f"org/{submission}"),
            "metric": metric, "venue": venue, "value": value, "ci_low": low, "ci_high": high, "n_papers": 4,
            "n_reviews": 8, "human_value": None, "distance_to_human": distance, "closest_to_human": closest}


@pytest.fixture
def board(tmp_path):
    rows = [row("human", "fre", "all", 56.24, low=54.0, high=58.71), row("human", "fre", "ICLR", 55.0),
            row("human", "fre", "NeurIPS", 57.0), row("human", "tkc", "all", 190.0),
            row("alpha", "fre", "all", 45.7, 10.54, True, 42.0, 50.5), row("alpha", "fre", "ICLR", 44.0, 11.0),
            row("alpha", "tkc", "all", 390.0, 200.0),
            row("beta", "fre", "all", 25.0, 31.24, False, 20.5, 30.6), row("beta", "fre", "NeurIPS", 25.0, 32.0),
            row("beta", "tkc", "all", 422.0, 232.0),
            row("gamma", "fre", "all", 40.0, None), row("gamma", "robustness_rating_flip", "all", -1.5)]
    manifests = {"alpha": {"prompts": ["extended"]}, "beta": {"prompts": ["guidelines"]},
                 "gamma": {"prompts": ["extended", "guidelines"]}}
    return Board(LeaderboardResults(tmp_path, rows, manifests=manifests), "results",
                 ranks={("alpha", "fre", "all"): (1.0, 2.0)})


def names(table):
    return [r[0] for r in table[1]]


def test_a_cell_holds_the_value_its_interval_and_under_it_the_distance_star_and_rank_interval(board):
    assert metric_cell(board, board.results.row("alpha", "fre", "all")) == "45.7 [42.0, 50.5]\n★ Δ 10.5 (rank 1–2)"
    assert metric_cell(board, board.results.row("beta", "fre", "all")) == "25.0 [20.5, 30.6]\nΔ 31.2"
    assert metric_cell(board, board.results.row("human", "fre", "all")) == "56.2 [54.0, 58.7]"
    assert metric_cell(board, board.results.row("alpha", "tkc", "all")) == "390\nΔ 200"
    assert metric_cell(board, None) == "–"


def test_the_table_has_the_human_row_first_and_a_row_per_submission(board):
    header, rows = leaderboard_table(board)
    assert header == ["Submission", "Model", "Prompts", "TKC", "FRE", "robustness rating flip"]
    assert names((header, rows)) == ["human (reference)", "alpha", "beta", "gamma"]
    assert rows[1][:3] == ["alpha", "org/alpha", "extended"] and rows[3][2] == "extended, guidelines"


def test_filters_by_venue_prompt_search_and_family(board):
    assert names(leaderboard_table(board, "ICLR")) == ["human (reference)", "alpha"]
    assert names(leaderboard_table(board, "NeurIPS")) == ["human (reference)", "beta"]
    assert names(leaderboard_table(board, prompts=["guidelines"])) == ["human (reference)", "beta", "gamma"]
    assert names(leaderboard_table(board, search="ORG/BE")) == ["human (reference)", "beta"]
    header, _ = leaderboard_table(board, families=["readability"])
    assert header[3:] == ["TKC", "FRE"]


def test_sorting_by_a_metric_puts_the_closest_first_and_the_undefined_last(board):
    assert ("FRE: closest to human first", "fre") in sort_choices(board)
    assert all(value != "robustness_rating_flip" for _, value in sort_choices(board))
    assert names(leaderboard_table(board, sort_by="fre")) == ["human (reference)", "alpha", "beta", "gamma"]
    assert names(leaderboard_table(board, sort_by="tkc")) == ["human (reference)", "alpha", "beta", "gamma"]
    assert names(leaderboard_table(board, sort_by=BY_NAME_ORDER)) == ["human (reference)", "alpha", "beta", "gamma"]
    board.results.row("beta", "tkc", "all")["distance_to_human"] = 1.0
    assert names(leaderboard_table(board, sort_by="tkc")) == ["human (reference)", "beta", "alpha", "gamma"]


def test_a_submission_page_lists_every_result_with_its_interval(board):
    header, rows = submission_metrics(board, "alpha")
    assert header[:5] == ["Metric", "Family", "Venue", "Value", "95% interval"]
    assert rows[0] == ["FRE", "readability", "all", "45.7", "[42.0, 50.5]", "–", "10.5 ★"]
    assert len(rows) == 3


def test_comparisons_show_the_rows_of_the_chosen_metric_and_venue(board):
    board.comparisons = [{"metric": "fre", "venue": "all", "submission_a": "alpha", "submission_b": "beta",
                          "difference": -20.7004, "verdict": "A closer"},
                         {"metric": "tkc", "venue": "all", "submission_a": "alpha", "submission_b": "beta",
                          "difference": -32.0, "verdict": "no detectable difference"}]
    header, rows = comparison_table(board, "fre", "all")
    assert header == ["metric", "venue", "submission_a", "submission_b", "difference", "verdict"]
    assert rows == [["fre", "all", "alpha", "beta", "-20.700", "A closer"]]


def test_about_names_every_registered_metric_of_a_leaderboard_run_with_its_source():
    from markdown_it import MarkdownIt

    # Rendered as the page renders Markdown: one row per metric, seven cells each, whatever "|" they hold.
    rows = parse(MarkdownIt().enable("table").render(about_markdown())).tables[0]["rows"][1:]
    # Grounding specificity is `praib grounding`'s, not a leaderboard run's.
    shown = [m for m in METRICS if m.name != "grounding_specificity"]
    assert [r[:2] for r in rows] == [[m.label, m.name] for m in shown]
    assert all(len(r) == 7 and r[6].startswith(m.source) for r, m in zip(rows, shown))
    assert rows[0][5] == "|value − human value|"


def test_an_empty_results_folder_is_an_empty_board(tmp_path):
    board = load_board(str(tmp_path / "nothing-yet"))
    assert board.submissions == [] and leaderboard_table(board)[1] == []


def test_the_submit_form_files_a_request_or_shows_why_not(tmp_path):
    queue = LocalStore(tmp_path / "queue")
    assert file_request(queue, "  ") == "Give a Hub dataset id (ORG/NAME) or a path."
    missing = file_request(queue, str(tmp_path / "missing"))
    assert missing.startswith("**Not filed.**") and "manifest:" in missing
    filed = file_request(queue, str(demo_submission(tmp_path / "model-a", "a")))
    assert filed.startswith("**Filed** `model-a` (demo-model-a, 8 reviews) as **PENDING**")
    assert queue_table(queue)[1][0][:5] == ["model-a", "demo-model-a", "v1", "extended", "PENDING"]
    assert file_request(queue, str(demo_submission(tmp_path / "again" / "model-a", "a"))).startswith(
        "**Not filed.** " + str(tmp_path / "again" / "model-a") + ": already filed as model-a")


def test_praib_help_does_not_import_gradio():
    code = "import sys; from praib.cli.main import main; print('gradio' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.skipif(importlib.util.find_spec("gradio") is None, reason="the app needs gradio (praib[app])")
def test_the_app_builds_with_its_tabs(tmp_path):
    from praib.leaderboard.app import build_app

    app = build_app(str(tmp_path / "results"), str(tmp_path / "queue"))
    labels = {block.label for block in app.blocks.values() if type(block).__name__ == "Tab"}
    assert labels == {"Leaderboard", "Submission", "Comparisons", "About", "Submit"}
