"""Score distributions pooled over venue-years (PRAIB Tables 16, 17), with Σ|Δ| in percentage points."""

import pytest

from praib.evaluation.evaluate import evaluate_reviews
from praib.records import coerce_record, records_to_dataset


def review(source, paper, rating, venue, year):
    return coerce_record({"paper_id": paper, "source": source, "venue": venue, "year": year, "summary": "S.",
                          "strengths": "A.", "weaknesses": "B.", "rating": rating, "confidence": 3,
                          "review_id": f"{source}-{paper}-{rating}"}, "review", "test")


def test_ratings_pooled_over_the_groups_venue_years_by_hand():
    rows = [review("llm", "a", 8, "ICLR", 2025), review("llm", "b", 8, "ICLR", 2025),
            review("llm", "c", 4, "NeurIPS", 2025),
            review("llm", "d", 4, "ICLR", 2025),  # 4 is not on ICLR 2025's scale: not counted
            review("human", "a", 6, "ICLR", 2025), review("human", "b", 8, "ICLR", 2025),
            review("human", "c", 4, "NeurIPS", 2025), review("human", "c", 5, "NeurIPS", 2025),
            review("human", "x", 3, "ICLR", 2024)]  # a venue-year the model has no review in
    result = evaluate_reviews(records_to_dataset(rows), workers=1)
    pooled = result.group("llm").pooled_distributions["rating"]
    # the union of ICLR 2025's (1, 3, 5, 6, 8, 10) and NeurIPS 2025's (1-6) scales
    assert pooled["values"] == [1, 2, 3, 4, 5, 6, 8, 10]
    assert pooled["venue_years"] == ["ICLR 2025", "NeurIPS 2025"]
    # model: 8 8 4 -> 2/3 at 8, 1/3 at 4; human: 6 8 4 5 -> 1/4 each
    assert pooled["model"]["8"] == pytest.approx(2 / 3) and pooled["human"]["5"] == pytest.approx(0.25)
    assert pooled["diff_pp"]["8"] == pytest.approx(100 * (2 / 3 - 1 / 4))
    # Σ|Δ| = 41.67 + 8.33 + 25 + 25 = 100 pp; total variation = 100 / 200 = 0.5
    assert pooled["sum_abs_diff_pp"] == pytest.approx(100.0) and pooled["total_variation"] == pytest.approx(0.5)
    assert (pooled["n_model"], pooled["n_human"]) == (3, 4)
    reference = result.reference.pooled_distributions["rating"]
    assert reference["venue_years"] == ["ICLR 2024", "ICLR 2025", "NeurIPS 2025"] and reference["n"] == 5
