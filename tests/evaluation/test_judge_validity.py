"""Which stored judge validation stands behind each judged metric: the mapping of metrics to validation tasks,
the lookup by judge model, revision and templates (in the store, then in validations carried with the data),
and the lines that print it beside a second judge's agreement."""

import pytest

from praib.evaluation.judge_validity import (FAMILIES, VALIDATED_TASKS, family_of, judge_validations, validates,
                                             validity_lines)
from praib.metrics.judged.validation import store_validation
from praib.metrics.registry import METRICS, judged_metrics
from tests.evaluation.stored_validation import SUMMARY, hand_made_validation

STUB = {"model": "stub-judge", "model_revision": None, "backend": "stub"}


@pytest.mark.parametrize("metric, tasks", [
    ("math_engagement", ("math",)), ("math_p_pos_given_pos", ("math",)), ("math_p_pos_given_neg", ("math",)),
    ("math_methods_agreement", ("math",)), ("coverage_recall_strengths", ("coverage",)),
    ("coverage_precision_weaknesses", ("coverage",)), ("target_aspect_f1", ("target", "aspect")),
    ("target_aspect_distribution", ("target", "aspect")), ("atomic", ("atomic",)), ("rejection_rate", ()),
    ("grounding_specificity", ("grounding",)),
])
def test_each_judged_metric_rests_on_its_validation_tasks(metric, tasks):
    assert family_of(metric).tasks == tasks


def test_every_judged_metric_of_the_registry_has_a_family_and_the_rules_have_none():
    assert all(family_of(m.name) is not None for m in METRICS if m.judged)
    assert family_of("math_engagement_rules") is None and family_of("tkc") is None
    assert VALIDATED_TASKS == ("math", "coverage", "target", "aspect", "atomic")
    assert [f.name for f in FAMILIES if not f.tasks] == ["rejection rate"]


def test_grounding_specificity_is_praib_groundings_own_and_no_judged_run_lists_or_looks_it_up(tmp_path):
    """`praib grounding` computes it: judged evaluate and leaderboard runs list the families they compute."""
    grounding = family_of("grounding_specificity")
    assert grounding.command == "praib grounding" and grounding not in FAMILIES
    assert "grounding_specificity" not in judged_metrics() and "grounding" not in VALIDATED_TASKS
    store_validation(hand_made_validation("grounding"), tmp_path)
    assert "grounding" not in judge_validations(STUB, tmp_path)
    found = judge_validations(STUB, tmp_path, tasks=grounding.tasks)
    assert list(found) == ["grounding"] and found["grounding"]["summary"] == SUMMARY["grounding"]
    assert validity_lines(found, families=[grounding])[1:] == [
        f"  Grounding specificity (grounding_specificity): {SUMMARY['grounding']}"]


def test_the_stored_validation_of_this_judge_is_found_and_no_other(tmp_path):
    store_validation(hand_made_validation("math"), tmp_path)
    store_validation(hand_made_validation("coverage", model="other-judge"), tmp_path)
    store_validation(hand_made_validation("aspect", revision="rev2"), tmp_path)
    found = judge_validations(STUB, tmp_path)
    assert list(found) == list(VALIDATED_TASKS)
    assert found["math"]["summary"] == SUMMARY["math"] and found["math"]["found_in"] == "validations store"
    assert found["math"]["metrics"]["cohen_kappa"] == {"value": 0.62, "low": 0.55, "high": 0.69}
    assert (found["math"]["gold"], found["math"]["gold_size"]) == ("gold-math.jsonl", 30)
    # Another model, another revision: another judge, not validated.
    assert found["coverage"] is None and found["aspect"] is None and found["target"] is None
    assert judge_validations({**STUB, "model_revision": "rev2"}, tmp_path)["aspect"]["summary"] == SUMMARY["aspect"]


def test_a_replaced_template_is_a_judge_not_yet_validated(tmp_path):
    store_validation(hand_made_validation("math"), tmp_path)
    store_validation(hand_made_validation("coverage"), tmp_path)
    strict = {**STUB, "templates": {"coverage": "coverage_strict"}}
    found = judge_validations(strict, tmp_path)
    # The stricter coverage prompt changes the coverage hash only: math is still this judge's.
    assert found["coverage"] is None and found["math"]["summary"] == SUMMARY["math"]
    store_validation(hand_made_validation("coverage", templates={"coverage": "coverage_strict"}), tmp_path)
    assert judge_validations(strict, tmp_path)["coverage"]["summary"] == SUMMARY["coverage"]
    assert judge_validations(STUB, tmp_path)["coverage"]["template_hash"] == hand_made_validation(
        "coverage").template_hash


def test_carried_validations_count_where_the_store_has_none(tmp_path):
    stored, carried = hand_made_validation("math"), hand_made_validation("math", date="2027-01-01T00:00:00+00:00")
    coverage = hand_made_validation("coverage")
    others = [("manifest of b", hand_made_validation("aspect", model="other-judge"))]
    store_validation(stored, tmp_path)
    found = judge_validations(STUB, tmp_path, [("manifest of a", carried), ("manifest of a", coverage), *others])
    assert found["math"]["found_in"] == "validations store" and found["math"]["date"] == stored.date
    assert found["coverage"]["found_in"] == "manifest of a"
    assert found["aspect"] is None  # carried, but of another judge
    assert validates(coverage, STUB) and not validates(coverage, {**STUB, "model": "other-judge"})
    assert not validates(coverage, {**STUB, "templates": {"coverage": str(tmp_path / "gone.jinja")}})


def test_one_line_per_judged_metric_family():
    validation = {task: None for task in VALIDATED_TASKS}
    validation["math"] = {"summary": SUMMARY["math"]}
    validation["aspect"] = {"summary": SUMMARY["aspect"]}
    assert validity_lines(validation) == [
        "Judge validity (stored `praib judge validate` results for this judge model, revision and templates):",
        f"  Math, P(+|+), P(+|-) (math_engagement): {SUMMARY['math']}",
        "  Cov. S/W (coverage_*): judge not validated (run `praib judge validate --task coverage ...`)",
        "  T/A F1 (target_aspect_*): target: judge not validated (run `praib judge validate --task target ...`); "
        f"aspect: {SUMMARY['aspect']}",
        "  atomic item statistics (atomic): judge not validated (run `praib judge validate --task atomic ...`)",
        "  rejection_rate: needs no judge (the reviews' recommendations and the papers' decisions)",
    ]


def test_the_second_judges_agreement_sits_beside_the_validation_or_says_why_there_is_none():
    second = {"judge": {"model": "judge-2"},
              "math_engagement": {"cohen_kappa": 0.0, "agreement": 0.5, "n": 2, "skipped": 0},
              "coverage_pairs": {"cohen_kappa": None, "agreement": 1.0, "n": 3, "skipped": 0},
              "target_strength": {"cohen_kappa": 0.25, "agreement": 0.8, "n": 5, "skipped": 0},
              "target_weakness": {"cohen_kappa": None, "agreement": None, "n": 0, "skipped": 2},
              "aspect_strength": {"cohen_kappa": 1.0, "agreement": 1.0, "n": 5, "skipped": 0},
              "aspect_weakness": {"cohen_kappa": -0.5, "agreement": 0.25, "n": 4, "skipped": 0}}
    lines = validity_lines({task: None for task in VALIDATED_TASKS}, second)
    assert lines[1].endswith("; second judge judge-2: math engagement: κ 0.00, agreement 0.50 (n 2)")
    assert lines[2].endswith("; second judge judge-2: coverage pairs: κ undefined (one label is all there is), "
                             "agreement 1.00 (n 3)")
    assert lines[3].endswith("; second judge judge-2: target strength: κ 0.25, agreement 0.80 (n 5); target "
                             "weakness: no item judged by both; aspect strength: κ 1.00, agreement 1.00 (n 5); "
                             "aspect weakness: κ -0.50, agreement 0.25 (n 4)")
    assert lines[4].endswith("; second judge judge-2: not compared (it re-judges the first judge's atomic items, "
                             "not their extraction)")
    assert "second judge" not in lines[5]
