"""A model's agreement with itself across two prompts (PRAIB §7), reported by praib evaluate."""

import krippendorff
import numpy as np
import pytest

from praib.evaluation.evaluate import evaluate_reviews
from praib.evaluation.table import behaviour_table
from praib.records import coerce_record, records_to_dataset


def reviews(rows):
    return records_to_dataset([coerce_record(row, "review", "test") for row in rows])


def rated(model, prompt, paper, rating, venue="ICLR", year=2025):
    return {"paper_id": paper, "source": model, "model": model, "prompt": prompt, "venue": venue, "year": year,
            "summary": "S.", "strengths": "A.", "weaknesses": "B.", "rating": rating, "confidence": 3,
            "review_id": f"{model}-{prompt}-{paper}"}


def test_a_model_under_two_prompts_is_compared_with_itself_per_venue():
    rows = [rated("m", "extended", p, r) for p, r in zip("abc", (1, 3, 6))]
    rows += [rated("m", "guidelines", p, r) for p, r in zip("abcd", (3, 3, 8, 10))]  # d: rated under one prompt
    rows += [rated("m", "extended", "e", 5, "NeurIPS", 2024), rated("other", "extended", "a", 6)]
    result = evaluate_reviews(reviews(rows), workers=1)
    (agreement,) = result.prompt_self_agreement  # "other" has one prompt only
    assert (agreement.reviewer, agreement.prompts) == ("m", ["extended", "guidelines"])
    # The papers rated under both prompts, each prompt a rater (the krippendorff package, ordinal).
    expected = krippendorff.alpha(reliability_data=np.array([[1, 3, 6], [3, 3, 8]], dtype=float),
                                  level_of_measurement="ordinal")
    assert agreement.alpha == {"ICLR": pytest.approx(expected)}  # NeurIPS: no paper under both
    assert agreement.per_year == {"ICLR": {"2025": pytest.approx(expected)}}
    assert f"Prompt self-consistency of m (extended vs guidelines): α ICLR {expected:.2f}." in behaviour_table(result)
    assert result.to_dict()["prompt_self_agreement"][0]["alpha"]["ICLR"] == pytest.approx(expected)


def test_no_self_agreement_without_grouping_by_prompt():
    rows = [rated("m", prompt, "a", 3) for prompt in ("extended", "guidelines")]
    assert evaluate_reviews(reviews(rows), group_by=("source", "model"), workers=1).prompt_self_agreement == []
