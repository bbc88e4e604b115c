"""The leaderboard's run in one pass: the reviews of all sides scored in tasks over worker processes
(:func:`praib.leaderboard.run.score_in_processes`) as in one call, and the bootstrap of all sides
(:func:`praib.leaderboard.run.sides_metrics`), whose products with one set of draws made together give every draw
to the last bit, as each slice drawn alone does."""

from __future__ import annotations

import gc
import multiprocessing
import os

import numpy as np
import pytest

from praib.evaluation.scored import ScoredReviews
from praib.leaderboard import run as run_module
from praib.leaderboard.run import ALL_VENUES, _Products, bootstrap_weights, sides_metrics, slice_metrics
from praib.leaderboard.submission import load_submission
from praib.records import load_records
from tests.leaderboard.simulated import BOTH, LENIENT, MODEL, simulated_run
from tests.leaderboard.synthetic_board import write_board


@pytest.mark.parametrize("columns_a_product", [256, 3])
def test_every_product_is_the_one_of_its_array_alone_to_the_bit(monkeypatch, columns_a_product):
    """Counts, scores and halves may be stacked into one matrix product (their sums are exact in any order; so many
    of them at most, 3 here to make several products); a sum of fractional values (a mean of TTR or FRE) must be
    multiplied alone, as it always was, or its last bits move."""
    monkeypatch.setattr(run_module, "_COLUMNS_A_PRODUCT", columns_a_product)
    rng = np.random.default_rng(3)
    weights = bootstrap_weights(2000, 300, seed=1)
    counts = rng.integers(0, 4, size=2000).astype(float)
    sparse = np.zeros((2000, 6))
    sparse[:150] = rng.integers(0, 3, size=(150, 6))  # one venue-year's papers only
    arrays = {
        "counts": counts,
        "ratings": counts * rng.integers(1, 11, size=2000),
        "halves": rng.integers(-9, 10, size=2000) / 2,
        "fractional": rng.normal(40.0, 12.0, size=2000),
        "nearly whole": counts + 1e-9,
        "too large to be exact": counts * 2.0 ** 45,
        "sparse counts": sparse,
    }
    products = _Products(weights)
    asked = {name: products.ask(x, group="venue-year" if name == "sparse counts" else None)
             for name, x in arrays.items()}
    again = products.ask(counts.copy())
    products.make()
    for name, x in arrays.items():
        alone = weights @ x
        assert asked[name]().shape == alone.shape
        assert np.array_equal(asked[name](), alone), name
    assert again() is asked["counts"]()


@pytest.mark.parametrize("workers", [1, 2])
def test_sides_drawn_together_give_the_draws_of_each_side_drawn_alone(workers):
    """The human reference and three submissions (one also reviewing papers no human reviewed, so with draws over
    papers of its own) in one pass a venue, the venues here or in two worker processes, against slice_metrics side
    by side and venue by venue."""
    human, tables = simulated_run(60, {"model": MODEL, "lenient": LENIENT}, seed=11, venues=BOTH)
    _, more = simulated_run(70, {"more": MODEL}, seed=12, venues=BOTH)
    sides = {"human": None, **tables, **more}
    venues = [ALL_VENUES, "ICLR", "NeurIPS"]
    together = sides_metrics(sides, human, venues, 200, seed=5, workers=workers)
    for name, table in sides.items():
        for venue in venues:
            metrics, n_papers, n_reviews, draws = slice_metrics(table, human, venue, 200, seed=5)
            found = together[(name, venue)]
            assert (found[0], found[1], found[2]) == (metrics, n_papers, n_reviews)
            assert len(draws.papers) == (70 if name == "more" and venue == ALL_VENUES else
                                         35 if name == "more" else 60 if venue == ALL_VENUES else 30)
            assert found[3].papers == draws.papers
            assert list(found[3].series) == list(draws.series)
            for metric, (value, distance) in draws.series.items():
                assert np.array_equal(found[3].series[metric][0], value, equal_nan=True), (name, venue, metric)
                assert (distance is None) == (found[3].series[metric][1] is None)
                if distance is not None:
                    assert np.array_equal(found[3].series[metric][1], distance, equal_nan=True)


def test_reviews_scored_in_tasks_over_processes_are_scored_as_in_one_call(tmp_path, monkeypatch):
    """score_in_processes cuts the reviews of every set into tasks (here of 7 reviews: human reviews with fields,
    model reviews whose Markdown is parsed, on the venue and the generic scale) and joins them back: the same
    parsed columns and text scores, to the bit, as ScoredReviews.score of each set at once; the texts dropped."""
    reference, submissions = write_board(tmp_path)
    sets = [(load_records(str(reference), "review"), "venue"),
            (load_submission(str(submissions[0])).reviews, "venue"),
            (load_submission(str(submissions[2])).reviews, "generic")]
    monkeypatch.setattr(run_module, "TASK_REVIEWS", 7)
    for (reviews, scale), scored in zip(sets, run_module.score_in_processes(sets, workers=2, keep_texts=False)):
        whole = ScoredReviews.score(reviews, scale, workers=1)
        assert len(reviews) > 7 * 5
        assert scored.scale == scale and list(scored.columns) == list(whole.columns)
        for name, values in whole.columns.items():
            assert scored.columns[name] == (values if name != "text" else [None] * len(values)), name
        assert list(scored.text_scores) == list(whole.text_scores)
        for name, values in whole.text_scores.items():
            assert np.array_equal(scored.text_scores[name], values, equal_nan=True), name
    kept = next(run_module.score_in_processes(sets[1:2], workers=2, keep_texts=True))
    assert kept.columns["text"] == sets[1][0]["text"]


def test_a_task_that_fails_or_a_worker_that_dies_stops_the_scoring_with_its_error(tmp_path, monkeypatch):
    """A bad review raised in a worker process reaches the caller as it was raised; a worker killed mid-task (out
    of memory) gives an error that says so, where a pool would wait for its result for ever."""
    reference, _ = write_board(tmp_path)
    sets = [(load_records(str(reference), "review"), "venue")]
    monkeypatch.setattr(run_module, "TASK_REVIEWS", 50)
    score = ScoredReviews.score

    def failing(reviews, scale, *args, **kwargs):
        if reviews[0]["review_id"] == sets[0][0][100]["review_id"]:
            raise ValueError("a review that cannot be scored")
        return score(reviews, scale, *args, **kwargs)

    monkeypatch.setattr(ScoredReviews, "score", failing)
    with pytest.raises(ValueError, match="a review that cannot be scored"):
        list(run_module.score_in_processes(sets, workers=2))

    def dying(reviews, scale, *args, **kwargs):
        if reviews[0]["review_id"] == sets[0][0][100]["review_id"]:
            os._exit(9)
        return score(reviews, scale, *args, **kwargs)

    monkeypatch.setattr(ScoredReviews, "score", dying)
    with pytest.raises(RuntimeError, match="stopped without a result"):
        list(run_module.score_in_processes(sets, workers=2))


def test_the_worker_processes_end_with_the_last_set_not_with_the_caller(tmp_path, monkeypatch):
    """A caller that takes the sets it asked for and goes on (a run, to its bootstrap) holds no idle process that
    keeps its memory, nor objects frozen out of the garbage collector."""
    reference, submissions = write_board(tmp_path)
    sets = [(load_records(str(reference), "review"), "venue"), (load_submission(str(submissions[0])).reviews, "venue")]
    monkeypatch.setattr(run_module, "TASK_REVIEWS", 50)
    scored = run_module.score_in_processes(sets, workers=2)
    next(scored)
    assert len(multiprocessing.active_children()) == 2 and gc.get_freeze_count() > 0
    next(scored)
    assert multiprocessing.active_children() == [] and gc.get_freeze_count() == 0
