"""The typed result of evaluate_reviews: attributes, registered metric values, and the JSON keys."""

import math

import pytest

from praib.evaluation.evaluate import evaluate_reviews
from praib.evaluation.results import EvaluationResult, GroupResult, Summary, XrefSummary
from praib.records import coerce_record, records_to_dataset


def _reviews():
    rows = [
        {"paper_id": "p1", "source": "human", "venue": "ICLR", "year": 2025, "rating": 6, "confidence": 3,
         "text": "alpha beta gamma"},
        {"paper_id": "p1", "source": "human", "venue": "ICLR", "year": 2025, "rating": 3, "confidence": 4,
         "text": "alpha beta gamma delta epsilon"},
        {"paper_id": "p1", "source": "lm", "model": "lm", "prompt": "p", "venue": "ICLR", "year": 2025,
         "rating": 8, "confidence": 4, "text": "one two three four"},
    ]
    return records_to_dataset([coerce_record(r, "review", f"row {i}") for i, r in enumerate(rows)], "review")


def test_groups_are_typed_and_carry_hand_computed_values():
    result = evaluate_reviews(_reviews(), workers=1)
    assert isinstance(result, EvaluationResult)
    assert [g.label for g in result.groups] == ["human", "lm/p"]
    human = result.reference
    assert isinstance(human, GroupResult) and human.is_reference and human.n_reviews == 2
    # Token counts 3 and 5: mean 4, sample standard deviation sqrt(2).
    assert isinstance(human.tkc, Summary)
    assert human.tkc.mean == 4.0 and human.tkc.std == pytest.approx(math.sqrt(2)) and human.tkc.n == 2
    assert isinstance(human.xref, XrefSummary) and human.xref.mean == 0.0
    model = result.group("lm/p")
    assert model.tkc.mean == 4.0 and model.tkc.std is None
    # Type-token ratio of "one two three four" is 1.
    assert model.value("ttr") == 1.0
    assert model.value("tkc") == model.tkc.mean
    assert model.skipped.text_metrics == 0 and model.skipped.rating == 0


def test_an_unknown_group_names_the_groups():
    result = evaluate_reviews(_reviews(), workers=1)
    with pytest.raises(KeyError, match="groups: human, lm/p"):
        result.group("nobody")


def test_to_dict_keeps_the_documented_keys():
    data = evaluate_reviews(_reviews(), workers=1).to_dict()
    assert list(data) == ["praib_version", "group_by", "scale", "n_reviews", "n_reference_reviews", "groups",
                          "prompt_self_agreement", "prompt_deltas", "ratios_to_human"]
    group = data["groups"][1]
    assert list(group) == ["group", "label", "is_reference", "n_reviews", "n_unparsed", "n_partially_parsed",
                           "n_out_of_scale", "tkc", "ttr", "fre", "fkg", "xref", "citations", "krippendorff_alpha",
                           "krippendorff", "rating_distribution", "confidence_distribution", "pooled_distributions",
                           "confidence_gap", "skipped"]
    assert group["tkc"] == {"mean": 4.0, "std": None, "n": 1}
    assert list(group["xref"]) == ["mean", "std", "n", "per_100_tokens", "per_type", "paper"]
    assert group["skipped"] == {"text_metrics": 0, "rating": 0, "confidence": 0}


def test_scored_reviews_given_by_the_caller_give_the_same_result():
    from praib.evaluation.scored import ScoredReviews

    reviews = _reviews()
    human = reviews.filter(lambda row: row["source"] == "human")
    models = reviews.filter(lambda row: row["source"] != "human")
    group_by = ("source", "model", "prompt")
    scored_human = ScoredReviews.score(human, "venue", group_by, workers=1)
    scored_models = ScoredReviews.score(models, "venue", group_by, workers=1)
    assert evaluate_reviews(scored_models, scored_human, workers=1) == evaluate_reviews(models, human, workers=1)


def test_scored_reviews_on_another_scale_are_refused():
    from praib.evaluation.scored import ScoredReviews

    scored = ScoredReviews.score(_reviews(), "generic", ("model", "prompt"), workers=1)
    with pytest.raises(ValueError, match="on the generic scale .* cannot be evaluated on the venue scale"):
        evaluate_reviews(scored, workers=1)


def _panel_reviews(source: str, ratings: dict[str, list[int]]):
    rows = [{"paper_id": paper, "source": source, "model": None if source == "human" else source,
             "venue": "ICLR", "year": 2025, "decision": "Accept (poster)" if paper in ("p1", "p2") else "Reject",
             "rating": rating, "confidence": 2 + (i % 3), "text": f"review {i} of {paper} " * (i + 1)}
            for paper, values in ratings.items() for i, rating in enumerate(values)]
    return records_to_dataset([coerce_record(r, "review", f"row {i}") for i, r in enumerate(rows)], "review")


def test_one_scored_reference_serves_many_evaluations_as_a_fresh_one_would():
    """A leaderboard evaluates every submission against one scored reference: what is taken of it (its own entry,
    panels, medians) is taken once and kept with it, and every result is the one a freshly scored reference gives,
    whichever submission came first (the second rates a paper 10, a value no human gave: a wider scale)."""
    from praib.evaluation.scored import ScoredReviews

    human = _panel_reviews("human", {"p1": [6, 8, 8], "p2": [3, 5], "p3": [1, 3, 3], "p4": [5, 6]})
    first = _panel_reviews("lm-a", {"p1": [8], "p2": [3], "p3": [5], "p5": [6]})
    second = _panel_reviews("lm-b", {"p1": [10], "p2": [6], "p4": [1]})
    shared = ScoredReviews.score(human, "venue", ("source", "model"), workers=1)
    for group_by in (("source",), ("source", "model")):
        for models in (first, second, first):
            scored = ScoredReviews.score(models, "venue", group_by, workers=1)
            expected = evaluate_reviews(models, human, group_by=group_by, workers=1)
            assert evaluate_reviews(scored, shared, group_by=group_by, workers=1) == expected
            assert expected.group("lm-a" if models is first else "lm-b").krippendorff_alpha["ICLR"] is not None
    assert sorted(shared.as_reference) == [("venue", ("source",)), ("venue", ("source", "model"))]


def test_a_reference_taken_once_finds_each_submissions_papers_by_id():
    """The evaluation numbers a submission's papers among all the ids it holds: a later submission with a paper
    the reference lacks (sorted first) numbers the same papers otherwise, and they are found in the reference
    taken before by their ids (panels, medians), as a freshly scored reference finds them."""
    from praib.evaluation.scored import ScoredReviews

    human = _panel_reviews("human", {"p1": [6, 8, 8], "p2": [3, 5], "p3": [1, 3, 3], "p4": [5, 6]})
    first = _panel_reviews("lm-a", {"p1": [8], "p2": [3], "p3": [5]})
    second = _panel_reviews("lm-b", {"a0": [5], "p2": [8], "p3": [1], "p4": [3]})
    shared = ScoredReviews.score(human, "venue", ("source",), workers=1)
    for models in (first, second):
        expected = evaluate_reviews(models, human, group_by=("source",), workers=1)
        got = evaluate_reviews(ScoredReviews.score(models, "venue", ("source",), workers=1), shared,
                               group_by=("source",), workers=1)
        assert got == expected
    group = expected.group("lm-b")
    assert group.confidence_gap["n_papers"] == 3 and group.krippendorff["ICLR"]["n_model_ratings"] == 3
