"""A submission's per-review table as the leaderboard runner stores it (`scored/<name>.parquet`) and reads it
back to draw the comparisons: the same arrays, so the same comparisons, without scoring a text again."""

from __future__ import annotations

import numpy as np
import pytest

from praib.evaluation.scored import ScoredReviews
from praib.leaderboard.compare import compare_tables
from praib.leaderboard.run import ReviewTable
from praib.leaderboard.runner import read_review_table, review_table_bytes
from praib.leaderboard.stores import StoreError
from praib.metrics.registry import per_review_metrics, text_metrics
from tests.leaderboard.simulated import HUMAN, MODEL, simulated_run


def odd_reviews() -> ReviewTable:
    """Reviews without a venue or year, a rating off ICLR 2025's scale (7), a missing confidence and a text
    metric that is not defined (NaN)."""
    columns = {"paper_id": ["p00000", "p00001", "p00002"], "venue": ["ICLR", None, "ICLR"],
               "year": [2025, None, 2025], "rating": [7.0, 3.0, 8.0], "confidence": [3.0, None, 2.0]}
    text = {metric: np.array([1.0, np.nan, 2.5]) for metric in text_metrics()}
    return ReviewTable.from_scored(ScoredReviews(columns, text, "generic"))


def round_trip(table: ReviewTable) -> ReviewTable:
    return read_review_table(review_table_bytes(table), "scored/x.parquet")


def test_a_table_read_back_holds_the_same_values():
    table = odd_reviews()
    back = round_trip(table)
    assert back.scale == "generic"
    for name in ("paper_id", "venue", "year", "year_group"):
        assert getattr(back, name).tolist() == getattr(table, name).tolist()
    assert back.venue.tolist() == ["ICLR", "unknown", "ICLR"] and back.year.tolist() == [2025, None, 2025]
    for metric in per_review_metrics():
        np.testing.assert_array_equal(back.values[metric], table.values[metric])
    assert back.values["rating"][0] == 7.0  # on the generic scale 7 is a rating
    assert np.isnan(back.values["confidence"][1]) and np.isnan(back.values["fre"][1])


def test_tables_read_back_give_the_comparisons_of_the_tables_scored():
    human, tables = simulated_run(24, {"a": MODEL, "b": HUMAN}, seed=5)
    tables["odd"] = odd_reviews()
    direct = compare_tables(human, tables, n_bootstrap=30, seed=2)
    stored = compare_tables(human, {name: round_trip(t) for name, t in tables.items()}, n_bootstrap=30, seed=2)
    assert direct.pairs and stored.comparison_rows() == direct.comparison_rows()
    assert stored.rank_rows() == direct.rank_rows()


def test_a_file_that_is_no_table_of_scored_reviews_is_named():
    with pytest.raises(StoreError, match=r"^scored/x.parquet: not a Parquet table of scored reviews"):
        read_review_table(b"not parquet", "scored/x.parquet")
    columns = odd_reviews().columns()
    with pytest.raises(ValueError, match="missing column\\(s\\) year_group"):
        ReviewTable.from_columns({k: v for k, v in columns.items() if k != "year_group"})
    with pytest.raises(ValueError, match="it needs one scale, found \\['generic', 'venue'\\]"):
        ReviewTable.from_columns({**columns, "scale": ["generic", "venue", "venue"]})
    with pytest.raises(StoreError, match="^scored/x.parquet: missing"):
        read_review_table(None, "scored/x.parquet")
