"""The oracle reviewer: restated reviews, a comment on the planted issue, ratings lowered through the scale."""

from __future__ import annotations

import json

from praib.llm.judge import Judge
from praib.perturb.oracle import lower_rating, oracle_reviews, steps_down
from praib.records import load_records, records_to_dataset
from praib.metrics.perturbation.treatment import counterfactual_effects
from tests.doubles import StubBackend

DEMO = "praib/data/demo"
ICLR_2025 = (1, 3, 5, 6, 8, 10)


def _human_reviews():
    reviews = load_records(f"{DEMO}/reviews.jsonl", "review")
    return reviews.filter(lambda r: r["source"] == "human")


def _variants(category_kinds=(("soundness-critical", "result-negated"), ("soundness-neutral", "spelling"))):
    papers = load_records(f"{DEMO}/papers.jsonl", "paper").to_list()
    rows = []
    for paper in papers:
        for category, kind in category_kinds:
            rows.append({**paper, "text": paper["text"] + " ", "perturbation": {
                "kind": kind, "category": category, "component": "paper", "seed": 0,
                "description": f"{kind} of {paper['paper_id']}: p4: '0.91' -> '0.51'"}})
    return records_to_dataset(rows, "paper")


def test_ratings_move_down_the_venue_scale_and_stop_at_its_bottom():
    assert lower_rating(6, ICLR_2025, 1) == 5
    assert lower_rating(6, ICLR_2025, 2) == 3
    assert lower_rating(3, ICLR_2025, 2) == 1
    assert lower_rating(1, ICLR_2025, 1) == 1
    assert lower_rating(7, ICLR_2025, 1) == 5  # 7 is not on the 2025 scale: step from 6
    assert lower_rating(None, ICLR_2025, 1) is None


def test_the_number_of_steps_is_fixed_by_seed_paper_review_and_edit():
    draws = [steps_down(0, "paper", f"review-{i}", "result-negated") for i in range(40)]
    assert set(draws) == {1, 2}
    assert draws == [steps_down(0, "paper", f"review-{i}", "result-negated") for i in range(40)]
    assert draws != [steps_down(1, "paper", f"review-{i}", "result-negated") for i in range(40)]


def test_without_a_judge_the_wording_is_kept_and_the_comment_appended():
    reviews = _human_reviews()
    oracle = oracle_reviews(reviews, _variants(), progress=False).to_list()
    originals = [r for r in oracle if r["perturbation"] is None]
    assert len(originals) == len(reviews) and {r["source"] for r in oracle} == {"oracle"}
    source = {r["reviewer_id"] + r["paper_id"]: r for r in reviews.to_list()}
    critical = [r for r in oracle if r["perturbation"] and r["perturbation"]["category"] == "soundness-critical"]
    neutral = [r for r in oracle if r["perturbation"] and r["perturbation"]["category"] == "soundness-neutral"]
    assert len(critical) == len(neutral) == len(reviews)
    first = next(r for r in critical if r["paper_id"] == "demo-iclr25-01" and r["reviewer_id"] == "R1")
    original = source["R1demo-iclr25-01"]
    comment = ("Soundness concern: A reported result contradicts the conclusion drawn from it, so the conclusion "
               "and the finding it supports are unsupported. (result-negated of demo-iclr25-01: p4: '0.91' -> '0.51')")
    assert first["text"] == original["text"] + "\n\n" + comment
    assert first["weaknesses"] == original["weaknesses"] + "\n- " + comment
    assert original["rating"] == 6 and first["rating"] in (5, 3)
    for review in critical:
        before = source[review["reviewer_id"] + review["paper_id"]]["rating"]
        assert review["rating"] < before or review["rating"] == 1
    for review in neutral:
        before = source[review["reviewer_id"] + review["paper_id"]]
        assert (review["rating"], review["text"]) == (before["rating"], before["text"])


def test_a_judge_paraphrases_each_review_once():
    backend = StubBackend(["Paraphrased review."])
    reviews = _human_reviews().select(range(3))  # the three reviews of demo-iclr25-01
    oracle = oracle_reviews(reviews, _variants(), judge=Judge(backend), progress=False).to_list()
    assert len(backend.requests) == 3
    assert reviews[0]["text"] in backend.requests[0].messages[0][1]
    neutral = [r for r in oracle if r["perturbation"] and r["perturbation"]["kind"] == "spelling"]
    assert [r["text"] for r in neutral] == ["Paraphrased review."] * 3
    critical = [r for r in oracle if r["perturbation"] and r["perturbation"]["kind"] == "result-negated"]
    assert all(r["text"].startswith("Paraphrased review.\n\nSoundness concern: ") for r in critical)


def oracle_assertions(request):
    """Judge answers for the ATE statistics: a review with the oracle's comment gets a negative soundness assertion."""
    prompt = request.messages[-1][1]
    assertions = [{"text": "The method is clearly presented.", "sentiment": "positive", "soundness": False}]
    if "Soundness concern:" in prompt:  # one or two assertions, so that the differences vary
        assertions += [{"text": "A result does not support its conclusion.", "sentiment": "negative",
                        "soundness": True}] * (1 + len(prompt) % 2)
    return json.dumps({"assertions": assertions})


def test_the_ate_statistics_find_the_oracle_significantly_affected():
    oracle = oracle_reviews(_human_reviews(), _variants(), progress=False)
    originals = oracle.filter(lambda r: r["perturbation"] is None)
    variants = oracle.filter(lambda r: r["perturbation"] is not None)
    result = counterfactual_effects(originals, variants, Judge(StubBackend(oracle_assertions)), sensitivity=False)
    effects = result.reviewers["oracle"]["differences"]
    assert effects["score"]["significant"] and effects["score"]["ate_critical"] < 0
    assert effects["aspect"]["significant"] and 1 <= effects["aspect"]["ate_critical"] <= 2
    assert effects["sentiment"]["significant"] and -2 / 3 <= effects["sentiment"]["ate_critical"] <= -0.5
    assert effects["score"]["mean_neutral"] == 0.0


def test_a_model_review_with_its_rating_only_in_the_text_is_lowered_in_field_and_text():
    reviews = load_records(f"{DEMO}/reviews.jsonl", "review").filter(
        lambda r: r["paper_id"] == "demo-iclr25-03" and r["model"] == "demo-model-a" and r["prompt"] == "extended")
    assert reviews[0]["rating"] is None and "**Decision:** 8: accept, good paper" in reviews[0]["text"]
    oracle = oracle_reviews(reviews, _variants(), progress=False).to_list()
    critical = next(r for r in oracle if r["perturbation"] and r["perturbation"]["category"] == "soundness-critical")
    neutral = next(r for r in oracle if r["perturbation"] and r["perturbation"]["category"] == "soundness-neutral")
    steps = steps_down(0, "demo-iclr25-03", reviews[0]["review_id"], "result-negated")
    lowered = {1: 6, 2: 5}[steps]  # 8 on ICLR 2025's scale (1, 3, 5, 6, 8, 10)
    assert critical["rating"] == lowered and neutral["rating"] == 8
    assert f"**Decision:** {lowered}:" in critical["text"] and "**Decision:** 8:" not in critical["text"]
