"""Typed results of :func:`praib.evaluation.evaluate.evaluate_reviews`.

An :class:`EvaluationResult` holds one :class:`GroupResult` per group of reviews. Readers use the
attributes (``result.reference.fre.mean``: every registered text metric is one) or
:meth:`GroupResult.value` for any registered metric;
:meth:`EvaluationResult.to_dict` gives the JSON that ``praib evaluate --output`` writes, with the
keys documented in docs/evaluate.md.

The per-venue details of agreement, distributions and the judged metrics stay the JSON-ready
mappings their metric functions return (:mod:`praib.metrics.scores`, :mod:`praib.evaluation.judged`):
their shape is the metric's own and is documented with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from praib.metrics.registry import BY_NAME
from praib.metrics.summary import PaperXrefSummary, Summary, XrefSummary

__all__ = ["json_ready", "Summary", "XrefSummary", "PaperXrefSummary", "Skipped", "GroupResult", "InvalidJudgeAnswers",
           "JudgedRun", "PromptSelfAgreement", "PromptDelta", "RatiosToHuman", "AcrossModels", "EvaluationResult"]


def json_ready(value):
    """Plain Python containers and numbers, with NaN/inf as None, for JSON output."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else float(value)
    return value


@dataclass(frozen=True)
class Skipped:
    """Reviews of a group left out of a metric: without text, without a rating, without a confidence."""

    text_metrics: int
    rating: int
    confidence: int

    def to_dict(self) -> dict:
        return {"text_metrics": self.text_metrics, "rating": self.rating, "confidence": self.confidence}


@dataclass(frozen=True)
class GroupResult:
    """Every metric of one group of reviews (one source/model/prompt by default) against the human
    reference. ``is_reference`` marks the human group itself."""

    group: Mapping[str, Any]
    label: str
    is_reference: bool
    n_reviews: int
    n_unparsed: int
    n_partially_parsed: int
    #: Ratings and confidences given off their venue-year's scale, by kind: left out of every metric
    #: (:func:`praib.evaluation.evaluate.off_scale`).
    n_out_of_scale: Mapping[str, int]
    #: Each registered text metric's summary over the group, by name (in the JSON, each under its own name;
    #: also an attribute: ``group.tkc``).
    text_metrics: Mapping[str, Summary]
    krippendorff_alpha: Mapping[str, float | None]
    krippendorff: Mapping[str, Any]
    rating_distribution: Mapping[str, Any]
    confidence_distribution: Mapping[str, Any]
    #: Rating and confidence distributions pooled over the group's venue-years (PRAIB Tables 16, 17).
    pooled_distributions: Mapping[str, Any]
    confidence_gap: Mapping[str, Any] | None
    skipped: Skipped
    verified_citations: Mapping[str, Any] | None = None
    #: The judged metrics by key (``math_engagement``, ``coverage_*``, ``target_aspect_f1``, ...),
    #: present when the run had a judge.
    judged: Mapping[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str):
        text_metrics = self.__dict__.get("text_metrics") or {}
        if name in text_metrics:
            return text_metrics[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def value(self, metric: str) -> float | None:
        """The value of a registered per-review or judged metric (its mean where it has a summary);
        None where the group has none."""
        entry = BY_NAME[metric]
        if not entry.scalar:
            return None
        if entry.reported_with is not None:
            return (self._raw(entry.reported_with) or {}).get(entry.result_key)
        raw = self._raw(metric)
        if isinstance(raw, Summary):
            return raw.mean
        return raw.get("mean") if isinstance(raw, Mapping) else raw

    def _raw(self, key: str):
        if key in self.judged:
            return self.judged[key]
        if key in self.text_metrics:
            return self.text_metrics[key]
        return getattr(self, key, None) if key in _GROUP_FIELDS else None

    def to_dict(self) -> dict:
        out = {}
        for name in _GROUP_FIELDS:
            value = getattr(self, name)
            if name == "verified_citations" and value is None:
                continue
            if name == "text_metrics":
                out.update({metric: summary.to_dict() for metric, summary in value.items()})
                continue
            out[name] = value.to_dict() if isinstance(value, (Summary, Skipped)) else value
        return json_ready({**out, **self.judged})


_GROUP_FIELDS = tuple(name for name in GroupResult.__dataclass_fields__ if name != "judged")


@dataclass(frozen=True)
class InvalidJudgeAnswers:
    """Judge answers that could not be read, left out and never guessed."""

    math_engagement: int
    atomic_extraction: int
    target_aspect_labels: int
    of_reviews: int

    def to_dict(self) -> dict:
        return {"math_engagement": self.math_engagement, "atomic_extraction": self.atomic_extraction,
                "target_aspect_labels": self.target_aspect_labels, "of_reviews": self.of_reviews}


@dataclass(frozen=True)
class JudgedRun:
    """What a judged evaluation ran with and how its judge fared."""

    judge: Mapping[str, Any]
    target_aspect_expert: str
    invalid_judge_answers: InvalidJudgeAnswers
    coverage_prefilter: Mapping[str, Any] | None = None
    second_judge: Mapping[str, Any] | None = None
    #: Per validation task, the judge's stored validation (:func:`praib.evaluation.judge_validity.judge_validations`)
    #: or None where it is not validated; None altogether where nobody looked it up.
    validation: Mapping[str, Any] | None = None

    def to_dict(self) -> dict:
        out = {"judge": dict(self.judge), "target_aspect_expert": self.target_aspect_expert,
               "invalid_judge_answers": self.invalid_judge_answers.to_dict()}
        if self.coverage_prefilter is not None:
            out["coverage_prefilter"] = self.coverage_prefilter
        if self.second_judge is not None:
            out["second_judge"] = self.second_judge
        if self.validation is not None:
            out["judge_validation"] = self.validation
        return out


@dataclass(frozen=True)
class PromptSelfAgreement:
    """Ordinal alpha of one reviewer (a group's values but its prompt) with itself under two prompts
    (PRAIB §7): per venue the mean over its year groups where defined, and per year group."""

    reviewer: str
    prompts: list[str]
    alpha: dict[str, float | None]
    per_year: dict[str, dict[str, float | None]]

    def to_dict(self) -> dict:
        return {"reviewer": self.reviewer, "prompts": list(self.prompts), "alpha": dict(self.alpha),
                "per_year": {venue: dict(years) for venue, years in self.per_year.items()}}


@dataclass(frozen=True)
class PromptDelta:
    """How one reviewer's mean metrics differ between two of its prompts (PRAIB Table 12; the registry's
    :func:`~praib.metrics.registry.compared_metrics`): ``delta[metric]`` is
    the mean under ``prompts[0]`` minus the mean under ``prompts[1]`` (names in sorted order, so
    ``extended`` − ``guidelines`` as in the paper); None where either mean is missing."""

    reviewer: str
    prompts: list[str]
    delta: dict[str, float | None]

    def to_dict(self) -> dict:
        return {"reviewer": self.reviewer, "prompts": list(self.prompts), "delta": dict(self.delta)}


@dataclass(frozen=True)
class RatiosToHuman:
    """Each model group's mean metrics divided by the human reference's (PRAIB Table 13), by group label, and
    per prompt their mean and standard deviation over the model groups of that prompt (the table's
    "Mean ± Std" row; ``"all"`` when the groups have no prompt)."""

    by_group: dict[str, dict[str, float | None]]
    by_prompt: dict[str, dict[str, Summary]]

    def to_dict(self) -> dict:
        return {"by_group": {label: dict(ratios) for label, ratios in self.by_group.items()},
                "by_prompt": {prompt: {metric: summary.to_dict() for metric, summary in metrics.items()}
                              for prompt, metrics in self.by_prompt.items()}}


@dataclass(frozen=True)
class AcrossModels:
    """How the model groups of each prompt spread on the judged results of
    :data:`praib.metrics.registry.SPREAD_OVER_MODELS`: per prompt and
    metric, the mean and standard deviation (ddof=1) over the model groups of their means (``mean``) and of their
    standard deviations (``std``), e.g. ``by_prompt["extended"]["coverage_recall_weaknesses"]["mean"]["std"]``:
    the SD over the models of their mean recall (PRAIB Tables 29 and 30, rows Mean and Std; Table 2, Model Avg.)."""

    by_prompt: dict[str, dict[str, dict[str, Summary]]]

    def to_dict(self) -> dict:
        return {prompt: {metric: {stat: summary.to_dict() for stat, summary in stats.items()}
                         for metric, stats in metrics.items()}
                for prompt, metrics in self.by_prompt.items()}


@dataclass
class EvaluationResult:
    """The behavioural profile of every group of a set of reviews: the result of ``praib evaluate``."""

    praib_version: str
    group_by: list[str]
    scale: str
    n_reviews: int
    n_reference_reviews: int
    groups: list[GroupResult]
    judged: JudgedRun | None = None
    #: Each reviewer with reviews under two or more prompts: its alpha with itself, per pair of prompts.
    prompt_self_agreement: list[PromptSelfAgreement] = field(default_factory=list)
    #: Each reviewer with reviews under two or more prompts: its mean metrics' differences, per pair of prompts.
    prompt_deltas: list[PromptDelta] = field(default_factory=list)
    #: Model groups' mean metrics over the human reference's; None without a reference.
    ratios_to_human: RatiosToHuman | None = None
    #: The spread of the judged coverage and atomic counts over the model groups; None without a judge.
    across_models: AcrossModels | None = None
    #: Where the reviews and the reference came from, when the caller names them (``praib evaluate`` does).
    input: str | None = None
    reference_source: str | None = None

    @property
    def reference(self) -> GroupResult | None:
        """The human reference group, None where the run had no human reviews."""
        return next((g for g in self.groups if g.is_reference), None)

    def group(self, label: str) -> GroupResult:
        """The group whose label is ``label`` (e.g. ``"demo-model-a/extended"``)."""
        for group in self.groups:
            if group.label == label:
                return group
        raise KeyError(f"no group {label!r}; groups: {', '.join(g.label for g in self.groups)}")

    def to_dict(self) -> dict:
        out = {
            **(self.judged.to_dict() if self.judged is not None else {}),
            "praib_version": self.praib_version,
            "group_by": list(self.group_by),
            "scale": self.scale,
            "n_reviews": self.n_reviews,
            "n_reference_reviews": self.n_reference_reviews,
            "groups": [g.to_dict() for g in self.groups],
            "prompt_self_agreement": [a.to_dict() for a in self.prompt_self_agreement],
            "prompt_deltas": [d.to_dict() for d in self.prompt_deltas],
            "ratios_to_human": None if self.ratios_to_human is None else self.ratios_to_human.to_dict(),
            **({"across_models": self.across_models.to_dict()} if self.across_models is not None else {}),
        }
        if self.input is not None:
            out["input"] = self.input
            out["reference"] = self.reference_source
        return json_ready(out)
