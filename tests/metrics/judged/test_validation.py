"""Validating a judge against gold labels: stub judges whose every answer is known, scores by hand."""

import hashlib
import json

import numpy as np
import pytest

from praib.llm.judge import JUDGE_TEMPLATES, Judge
from praib.metrics.judged.judge_quality import INVALID, Estimate
from praib.metrics.judged.validation import (TASK_TEMPLATES, ValidationResult, find_validation, format_validation,
                                             read_gold, store_validation, template_fingerprint, validate_judge,
                                             validations_dir)
from praib.records import RecordError
from tests.doubles import StubBackend


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


# Ten passages: the judge gets 7 right, two wrong (p4, p9) and one unreadable (p10).
POLARITY = [("p1", "strength", "strength"), ("p2", "strength", "strength"), ("p3", "strength", "strength"),
            ("p4", "strength", "weakness"), ("p5", "weakness", "weakness"), ("p6", "weakness", "weakness"),
            ("p7", "weakness", "weakness"), ("p8", "weakness", "weakness"), ("p9", "weakness", "strength"),
            ("p10", "weakness", "I cannot tell")]


def _passage(item_id):
    return f"Passage {item_id} of a review."


def _polarity_gold(tmp_path):
    return _write(tmp_path / "polarity.jsonl", [{"id": i, "task": "polarity", "text": _passage(i), "label": gold}
                                                for i, gold, _ in POLARITY])


def _answers_by_passage(request):
    prompt = request.messages[-1][1]
    return next(answer for i, _, answer in POLARITY if _passage(i) in prompt)


@pytest.fixture
def polarity_run(tmp_path):
    backend = StubBackend(_answers_by_passage)
    judge = Judge(backend)
    result, wrong = validate_judge(judge, read_gold(_polarity_gold(tmp_path), "polarity"), resamples=200, seed=5)
    return result, wrong, judge, backend


def test_a_stub_judge_scores_what_its_answers_make_by_hand(polarity_run):
    result, _, _, backend = polarity_run
    assert backend.templates == ["judge:polarity"] * 10
    assert "Passage p1 of a review." in backend.prompts[0]
    assert result.counts["items"] == 10 and result.counts["correct"] == 7
    assert result.metrics["accuracy"].value == pytest.approx(0.7)
    # strength: precision 3/4, recall 3/4 (F1 3/4); weakness: precision 4/5, recall 4/6 (F1 8/11)
    assert result.metrics["macro_f1"].value == pytest.approx((3 / 4 + 8 / 11) / 2)
    # the unreadable answer is a category of its own: p_e = (4*4 + 6*5 + 0*1) / 100 = 0.46; (0.7 - 0.46) / 0.54
    assert result.metrics["cohen_kappa"].value == pytest.approx(4 / 9)
    strength, weakness = result.per_label["strength"], result.per_label["weakness"]
    assert (strength.precision.value, strength.recall.value, strength.gold, strength.judged) == (0.75, 0.75, 4, 4)
    assert (weakness.precision.value, weakness.recall.value) == pytest.approx((0.8, 4 / 6))
    assert result.confusion == {"strength": {"strength": 3, "weakness": 1, INVALID: 0},
                                "weakness": {"strength": 1, "weakness": 4, INVALID: 1}}
    assert result.baseline == {"label": "weakness", "accuracy": 0.6}


def test_the_intervals_are_the_seeded_bootstrap_of_the_items(polarity_run):
    result = polarity_run[0]
    correct = np.array([gold == answer for _, gold, answer in POLARITY])
    draws = np.random.default_rng(5).integers(0, 10, size=(200, 10))
    low, high = np.percentile(correct[draws].mean(axis=1), [2.5, 97.5])
    assert (result.metrics["accuracy"].low, result.metrics["accuracy"].high) == pytest.approx((low, high))
    assert result.bootstrap == {"resamples": 200, "seed": 5, "confidence": 0.95}
    for estimate in (*result.metrics.values(), *(s.recall for s in result.per_label.values())):
        assert estimate.low <= estimate.value <= estimate.high


def test_failed_answers_count_against_the_judge_and_are_recorded(polarity_run):
    result, _, judge, _ = polarity_run
    assert result.counts["failed"] == 1 and result.counts["failed_by_error"] == {"UnreadableAnswer": 1}
    [failure] = judge.failures.items
    assert (failure.item_id, failure.error, failure.raw) == ("p10/polarity", "UnreadableAnswer", "I cannot tell")


def test_the_wrong_items_keep_the_judges_raw_answer(polarity_run):
    wrong = polarity_run[1]
    assert [(w["id"], w["gold"], w["judge"], w["raw"]) for w in wrong] == [
        ("p4", "strength", "weakness", "weakness"), ("p9", "weakness", "strength", "strength"),
        ("p10", "weakness", None, "I cannot tell")]
    assert wrong[0]["error"] is None and wrong[2]["error"].startswith("UnreadableAnswer: ")
    assert wrong[0]["text"] == _passage("p4")


def test_the_result_names_the_judge_its_templates_and_the_gold(polarity_run, tmp_path):
    result = polarity_run[0]
    assert (result.task, result.gold, result.gold_size) == ("polarity", "polarity.jsonl", 10)
    assert (result.judge_model, result.judge_revision, result.judge_backend) == ("stub-judge", "rev1", "stub")
    assert result.judge_settings["temperature"] == 0.0
    text = JUDGE_TEMPLATES.path("polarity").read_bytes()
    assert result.templates == {"polarity": {"template": "polarity", "sha256": hashlib.sha256(text).hexdigest()}}
    assert result.template_hash == hashlib.sha256(
        f"polarity={hashlib.sha256(text).hexdigest()}\n".encode()).hexdigest()
    assert result.date[:2] == "20" and result.praib_version
    assert ValidationResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result


def test_the_report_puts_chance_and_the_majority_class_beside_the_scores(polarity_run):
    text = format_validation(polarity_run[0])
    assert "accuracy                     0.700" in text
    assert "majority class (weakness)  0.600" in text
    assert "1 item without a usable answer, counted as wrong (1 UnreadableAnswer)" in text
    assert "weakness         1         4        1" in text  # the confusion row, with the invalid answer
    # kappa 0.44, but ten items leave its interval wide: [-0.18, 0.82]
    assert "Reading: κ's 95% interval includes 0: on this gold set the judge's agreement with the people cannot be " \
           "told apart from chance." in text


def test_a_judge_at_chance_is_called_so(tmp_path):
    # The judge says "weakness" whatever it reads: accuracy = the majority share, kappa 0.
    gold = read_gold(_polarity_gold(tmp_path), "polarity")
    result, _ = validate_judge(Judge(StubBackend(["weakness"])), gold, resamples=100)
    assert result.metrics["accuracy"].value == pytest.approx(0.6)
    assert result.metrics["cohen_kappa"].value == pytest.approx(0.0)
    text = format_validation(result)
    assert "cannot be told apart from chance" in text
    assert "accuracy is not above the majority class's 0.600 (always 'weakness')" in text


# ------------------------------------------------------------------ other tasks


def test_math_asks_as_the_math_metric_does_and_reads_its_verdict(tmp_path):
    rows = [{"id": f"r{i}", "task": "math", "text": f"Review {i}.", "label": label}
            for i, label in enumerate(["yes", "no", "yes", "No"])]
    answers = {"Review 0.": '{"rationale": "Eq. 3", "verdict": "yes"}', "Review 1.": '{"rationale": "-", "verdict": "yes"}',
               "Review 2.": "not JSON", "Review 3.": '{"rationale": "none", "verdict": "no"}'}
    backend = StubBackend(lambda request: next(a for text, a in answers.items() if text in request.messages[-1][1]))
    result, wrong = validate_judge(Judge(backend), read_gold(_write(tmp_path / "m.jsonl", rows), "math"), resamples=50)
    assert set(backend.templates) == {"judge:math_engagement"}
    assert backend.requests[0].json_schema is not None
    assert result.metrics["accuracy"].value == pytest.approx(0.5)
    assert result.confusion == {"yes": {"yes": 1, "no": 0, INVALID: 1}, "no": {"yes": 1, "no": 1, INVALID: 0}}
    assert [(w["id"], w["judge"], w["raw"]) for w in wrong] == [
        ("r1", "yes", '{"rationale": "-", "verdict": "yes"}'), ("r2", None, "not JSON")]


def test_aspect_asks_each_kind_with_its_template(tmp_path):
    rows = [{"id": "s1", "task": "aspect", "kind": "strength", "text": "A bold new idea.", "label": "Novelty"},
            {"id": "w1", "task": "aspect", "kind": "weakness", "text": "Hard to follow.", "label": "clarity"},
            {"id": "w2", "task": "aspect", "kind": "Weakness", "text": "No baselines.", "label": "Validity"}]
    backend = StubBackend({"judge:aspect_strength": "Novelty", "judge:aspect_weakness": "Clarity"})
    result, wrong = validate_judge(Judge(backend), read_gold(_write(tmp_path / "a.jsonl", rows), "aspect"),
                                   resamples=50)
    assert sorted(backend.templates) == ["judge:aspect_strength", "judge:aspect_weakness", "judge:aspect_weakness"]
    assert result.counts["correct"] == 2 and [w["id"] for w in wrong] == ["w2"]
    assert list(result.templates) == ["aspect_strength", "aspect_weakness"]
    assert result.per_label["Validity"].recall.value == 0.0 and result.per_label["Validity"].precision.value is None


def test_coverage_shows_the_judge_the_base_and_the_target(tmp_path):
    rows = [{"id": "c1", "task": "coverage", "context": "The data set is small.", "text": "Only 100 examples are used.",
             "label": "yes"},
            {"id": "c2", "task": "coverage", "context": "The writing is clear.", "text": "Only 100 examples are used.",
             "label": "no"}]
    backend = StubBackend(["yes", "yes"])
    result, _ = validate_judge(Judge(backend), read_gold(_write(tmp_path / "c.jsonl", rows), "coverage"), resamples=50)
    assert "Base text: 'The data set is small.'" in backend.prompts[0]
    assert "Target text: 'Only 100 examples are used.'" in backend.prompts[0]
    assert result.metrics["accuracy"].value == 0.5 and result.baseline["accuracy"] == 0.5


ATOMIC_ROWS = [
    {"id": "rev1", "task": "atomic", "kind": "human", "text": "Review one.",
     "labels": {"strengths": ["a1 clear", "a2 novel"], "weaknesses": ["b1 small"]}},
    {"id": "rev2", "task": "atomic", "kind": "human", "text": "Review two.",
     "labels": {"strengths": ["c1 sound"], "weaknesses": []}},
]


def _atomic_answer(request):
    prompt = request.messages[-1][1]
    if request.template == "judge:atomic_human":
        return ('{"strengths": ["x1 clear writing"], "weaknesses": ["y1 small data", "y2 slow"]}'
                if "Review one." in prompt else "no JSON here")
    covered = ("'a1 clear'" in prompt and "'x1 clear writing'" in prompt) or (
        "'b1 small'" in prompt and "'y1 small data'" in prompt)
    return "yes" if covered else "no"


def test_atomic_is_recall_and_precision_of_the_gold_atoms_matched_by_the_coverage_judge(tmp_path):
    backend = StubBackend(_atomic_answer)
    judge = Judge(backend)
    result, wrong = validate_judge(judge, read_gold(_write(tmp_path / "at.jsonl", ATOMIC_ROWS), "atomic"),
                                   resamples=100)
    # Gold atoms: a1, a2, b1 (rev1) and c1 (rev2, whose extraction failed): 2 of 4 matched.
    # Extracted atoms: x1, y1, y2: x1 and y1 match. Recall 1/2, precision 2/3, F1 4/7.
    assert result.metrics["recall"].value == pytest.approx(1 / 2)
    assert result.metrics["precision"].value == pytest.approx(2 / 3)
    assert result.metrics["f1"].value == pytest.approx(4 / 7)
    strengths, weaknesses = result.per_label["strengths"], result.per_label["weaknesses"]
    assert (strengths.recall.value, strengths.precision.value, strengths.gold, strengths.judged) == (1 / 3, 1.0, 3, 1)
    assert (weaknesses.recall.value, weaknesses.precision.value, weaknesses.gold, weaknesses.judged) == (1.0, 0.5, 1, 2)
    assert result.counts["failed"] == 1 and result.confusion is None and result.baseline is None
    assert {k: result.counts[k] for k in ("gold_atoms", "gold_atoms_matched", "extracted_atoms",
                                          "extracted_atoms_matched")} == {"gold_atoms": 4, "gold_atoms_matched": 2,
                                                                          "extracted_atoms": 3,
                                                                          "extracted_atoms_matched": 2}
    # pairs judged: a1, a2 with x1 and b1 with y1, y2; none of rev2's (nothing extracted)
    assert backend.templates.count("judge:coverage") == 4
    assert [w["id"] for w in wrong] == ["rev1", "rev2"]
    assert wrong[0]["missed"] == {"strengths": ["a2 novel"], "weaknesses": []}
    assert wrong[0]["unmatched"] == {"strengths": [], "weaknesses": ["y2 slow"]}
    assert wrong[1]["raw"] == "no JSON here" and wrong[1]["missed"] == {"strengths": ["c1 sound"], "weaknesses": []}
    assert "recall of gold atoms" in format_validation(result)
    assert list(result.templates) == ["atomic_generated", "atomic_human", "coverage"]


# ------------------------------------------------------------------ several annotators


def test_several_annotators_give_the_majority_label_and_their_own_agreement(tmp_path):
    # A and B agree on p1-p4 and disagree on p5 and p6 (a tie: no majority label).
    a, b = ["strength", "strength", "weakness", "weakness", "strength", "weakness"], \
        ["strength", "strength", "weakness", "weakness", "weakness", "strength"]
    judged = ["strength", "strength", "weakness", "strength", "strength", "strength"]
    rows = [{"id": f"p{i + 1}", "task": "polarity", "text": _passage(f"p{i + 1}"), "label": label, "annotator": who}
            for who, labels in (("A", a), ("B", b)) for i, label in enumerate(labels)]
    backend = StubBackend(lambda r: judged[int(r.messages[-1][1].split("Passage p")[1].split()[0]) - 1])
    result, _ = validate_judge(Judge(backend), read_gold(_write(tmp_path / "two.jsonl", rows), "polarity"),
                               resamples=50)
    assert len(backend.requests) == 6  # the tied items are asked too, for the kappa against each annotator
    assert result.counts["items"] == 4 and result.counts["no_majority"] == 2
    assert result.metrics["accuracy"].value == pytest.approx(3 / 4)
    annotators = result.annotators
    # A vs B: p_o 4/6, p_e 1/2 -> 1/3; alpha 1 - 11 * 4 / (2 * 6 * 6) = 7/18 (12 values, 6 of each label)
    assert annotators["pairwise_kappa"] == {"A / B": pytest.approx(1 / 3)}
    assert annotators["krippendorff_alpha"] == pytest.approx(7 / 18)
    # judge vs A: agree on p1 p2 p3 p5, judge S5 W1, A S3 W3: p_e = (15 + 3) / 36 = 1/2 -> 1/3; vs B the same
    assert annotators["judge_kappa"] == {"A": pytest.approx(1 / 3), "B": pytest.approx(1 / 3)}
    assert annotators["mean_judge_kappa"] == pytest.approx(1 / 3)
    assert "Annotators (the ceiling): 2 on 6 shared items" in format_validation(result)


# ------------------------------------------------------------------ the gold file


GOOD = {"id": "p1", "task": "polarity", "text": "Fine work.", "label": "strength"}


@pytest.mark.parametrize("rows, message", [
    ([{**GOOD, "label": "praise"}], "line 1: field 'label': expected one of strength, weakness, found 'praise'"),
    ([{**GOOD, "task": "tone"}], "line 1: field 'task': expected one of math, aspect, target, polarity, atomic, "
                                 "coverage, grounding, found 'tone'"),
    ([GOOD, {**GOOD, "text": ""}], "line 2: field 'text': is required and missing"),
    ([{**GOOD, "text": 3}], "line 1: field 'text': expected text, got int 3"),
    ([{**GOOD, "labels": ["strength"]}], "line 1: field 'labels': is not for the polarity task: give 'label'"),
    ([{**GOOD, "kind": "strength"}], "line 1: field 'kind': is for the tasks aspect, target, atomic, not polarity"),
    ([{**GOOD, "rater": "A"}], "line 1: unknown fields rater; a gold row has id, task, text, context, kind, label"),
    ([GOOD, GOOD], "line 2: field 'annotator': item 'p1' is already on line 1: rows of one item are the labels"),
    ([{**GOOD, "annotator": "A"}, {**GOOD, "annotator": "A"}], "line 2: field 'annotator': item 'p1' already has a "
                                                                "label of annotator 'A' on line 1"),
    ([{**GOOD, "annotator": "A"}, {**GOOD, "annotator": "B", "text": "Other."}], "line 2: field 'text': differs"),
    (["p1"], "line 1: expected a JSON object, got str"),
    ([{**GOOD, "task": "math"}], "holds no polarity items (it holds 1 math)"),
])
def test_a_bad_gold_row_is_one_line_naming_the_file_and_line(tmp_path, rows, message):
    path = _write(tmp_path / "gold.jsonl", rows)
    with pytest.raises(RecordError) as caught:
        read_gold(path, "polarity")
    assert str(caught.value).startswith(str(path))
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("task, row, message", [
    ("aspect", {"id": "w", "task": "aspect", "text": "t", "label": "Clarity"}, "field 'kind': is required"),
    ("aspect", {"id": "w", "task": "aspect", "text": "t", "kind": "bad", "label": "Clarity"},
     "field 'kind': expected one of strength, weakness"),
    ("coverage", {"id": "c", "task": "coverage", "text": "t", "label": "yes"}, "field 'context': is required"),
    ("atomic", {"id": "r", "task": "atomic", "kind": "human", "text": "t", "labels": {"strengths": []}},
     "field 'labels': expected {\"strengths\""),
    ("atomic", {"id": "r", "task": "atomic", "kind": "human", "text": "t", "label": "x"},
     "field 'label': is not for the atomic task"),
])
def test_each_task_checks_its_own_fields(tmp_path, task, row, message):
    path = _write(tmp_path / "gold.jsonl", [row])
    with pytest.raises(RecordError) as caught:
        read_gold(path, task)
    assert str(caught.value).startswith(f"{path}: line 1: ")
    assert message in str(caught.value)


def test_rows_of_other_tasks_are_skipped_and_labels_read_in_any_case(tmp_path):
    path = _write(tmp_path / "mixed.jsonl", [GOOD, {**GOOD, "id": "m", "task": "math", "label": "yes"},
                                             {**GOOD, "id": 7, "label": "WEAKNESS"}])
    gold = read_gold(path, "polarity")
    assert [(item.id, item.label) for item in gold.items] == [("p1", "strength"), ("7", "weakness")]


# ------------------------------------------------------------------ the store


def test_the_store_round_trip_and_the_lookup_by_judge_and_task(polarity_run, tmp_path):
    result, _, judge, _ = polarity_run
    cache = tmp_path / "cache"
    path = store_validation(result, cache)
    assert path.parent == validations_dir(cache) / "polarity"
    description = judge.describe()
    assert find_validation(description, "polarity", cache) == result
    assert find_validation(description, "aspect", cache) is None
    assert find_validation({**description, "model_revision": "rev2"}, "polarity", cache) is None
    assert find_validation({**description, "model": "another"}, "polarity", cache) is None
    assert find_validation(description, "polarity", tmp_path / "elsewhere") is None
    with pytest.raises(ValueError, match="unknown task 'tone'"):
        find_validation(description, "tone", cache)


def test_a_replaced_template_is_another_judge(tmp_path):
    own = tmp_path / "my_polarity.jinja"
    own.write_text("Strength or weakness? {{ item }}\n")
    description = {"model": "m", "model_revision": None, "backend": "stub"}
    _, built_in = template_fingerprint("polarity")
    _, replaced = template_fingerprint("polarity", {"polarity": str(own)})
    assert built_in != replaced
    own.write_text("Is this praise? {{ item }}\n")
    assert template_fingerprint("polarity", {"polarity": str(own)})[1] != replaced
    assert find_validation({**description, "templates": {"polarity": str(tmp_path / "gone.jinja")}}, "polarity",
                           tmp_path) is None
    assert set(TASK_TEMPLATES) == {"math", "aspect", "target", "polarity", "atomic", "coverage", "grounding"}


def test_the_latest_result_of_several_gold_sets_is_found(polarity_run, tmp_path):
    result, _, judge, _ = polarity_run
    older = ValidationResult(**{**result.__dict__, "gold": "older.jsonl", "date": "2020-01-01T00:00:00+00:00"})
    store_validation(older, tmp_path)
    store_validation(result, tmp_path)
    assert find_validation(judge.describe(), "polarity", tmp_path) == result
    assert len(list((validations_dir(tmp_path) / "polarity").glob("*.json"))) == 2


def test_a_broken_store_file_is_named(polarity_run, tmp_path):
    result, _, judge, _ = polarity_run
    path = store_validation(result, tmp_path)
    path.write_text('{"task": "polarity"}')
    with pytest.raises(RecordError, match=f"{path}: not a validation result"):
        find_validation(judge.describe(), "polarity", tmp_path)


def test_an_estimate_round_trips():
    assert Estimate.from_dict(Estimate(0.5, 0.25, 0.75).to_dict()) == Estimate(0.5, 0.25, 0.75)
