"""Judge validations written by hand, with numbers chosen so that every line that prints them is known
(the evaluation, command-line and leaderboard tests share them)."""

from praib.metrics.judged.judge_quality import Estimate
from praib.metrics.judged.validation import LABELS, LabelScore, ValidationResult, template_fingerprint

# What each hand-made result prints (ValidationResult.summary) on the gold set "gold-TASK.jsonl" of 30 items.
SUMMARY = {"math": "κ 0.620 [0.550, 0.690], accuracy 0.810 [0.750, 0.870] on gold-math.jsonl (30 items)",
           "coverage": "κ 0.410 [0.300, 0.520], accuracy 0.700 [0.600, 0.800] on gold-coverage.jsonl (30 items)",
           "aspect": "κ 0.050 [-0.100, 0.200], accuracy 0.300 [0.200, 0.400] on gold-aspect.jsonl (30 items)",
           "grounding": "κ 0.450 [0.350, 0.550], accuracy 0.600 [0.500, 0.700] on gold-grounding.jsonl (30 items)"}
SCORES = {"math": ((0.81, 0.75, 0.87), (0.62, 0.55, 0.69)), "coverage": ((0.7, 0.6, 0.8), (0.41, 0.3, 0.52)),
          "aspect": ((0.3, 0.2, 0.4), (0.05, -0.1, 0.2)), "grounding": ((0.6, 0.5, 0.7), (0.45, 0.35, 0.55))}


def hand_made_validation(task, model="stub-judge", revision=None, templates=None, date="2026-01-05T00:00:00+00:00"):
    """A stored validation of the judge ``model``/``revision`` (asking with ``templates``, its
    ``--judge-template`` replacements) on ``task``, with the scores of :data:`SCORES`."""
    accuracy, kappa = (Estimate(*numbers) for numbers in SCORES[task])
    used, template_hash = template_fingerprint(task, templates)
    label = LABELS[task][0]
    return ValidationResult(
        task=task, gold=f"gold-{task}.jsonl", gold_source=f"/data/gold-{task}.jsonl", gold_size=30,
        judge_model=model, judge_revision=revision, judge_backend="stub", judge_settings={"temperature": 0.0},
        templates=used, template_hash=template_hash,
        metrics={"accuracy": accuracy, "macro_f1": Estimate(0.5, 0.4, 0.6), "cohen_kappa": kappa},
        per_label={label: LabelScore(Estimate(0.8), Estimate(0.8), 15, 15)},
        confusion={label: {label: 12}}, counts={"items": 30, "correct": round(accuracy.value * 30), "failed": 0,
                                                "failed_by_error": {}, "left_out": {}, "no_majority": 0},
        baseline={"label": label, "accuracy": 0.5}, annotators=None,
        bootstrap={"resamples": 1000, "seed": 0, "confidence": 0.95}, date=date, praib_version="test")
