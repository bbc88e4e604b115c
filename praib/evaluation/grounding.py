"""``praib grounding``: RevUtil's grounding specificity of every review's weakness comments, per group of reviews,
against the cross-reference count (PRAIB Appendix H.1, Tables 18-20; :mod:`praib.metrics.judged.grounding`).

The human reviews (``source`` human) are the reference group; the other reviews are grouped by reviewer (source,
model and prompt, :func:`praib.records.ids.reviewer_label`). Besides each group, ``pooled`` holds the human reviews
and all model reviews together (Table 20's "All LLMs (aggregated)" row), so that Table 18's "Gen" column is the
correlation over every model review.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from praib.evaluation.judge_validity import family_of
from praib.llm.judge import Judge
from praib.metrics.judged.grounding import (BINS, DENSITY_PER, MIN_COMMENT_CHARS, SCALE, TEMPLATE, GroundingSummary,
                                            grounding_summary, judge_grounding, review_groundings, weakness_comments)
from praib.records import HUMAN_SOURCE
from praib.records.ids import reviewer_label

HUMAN, MODELS = "human", "models"
#: The registry's metric of these results and its judged family (label, decimals, validation tasks).
METRIC = "grounding_specificity"
FAMILY = family_of(METRIC)


@dataclass
class GroundingGroup:
    """One group of reviews: its label, what defines it (source, model, prompt), whether it is the human
    reference, and its :class:`~praib.metrics.judged.grounding.GroundingSummary`."""

    label: str
    group: dict[str, Any]
    is_reference: bool
    summary: GroundingSummary

    def to_dict(self) -> dict:
        return {"label": self.label, "group": self.group, "is_reference": self.is_reference, **self.summary.to_dict()}


@dataclass
class GroundingResult:
    """The groups, the pooled human and model reviews (None where there are none), the judge and, per
    validation task of :data:`FAMILY` (``grounding``), its stored validation or None
    (:func:`praib.evaluation.judge_validity.judge_validations`; None altogether where nobody looked it up),
    and where the reviews came from."""

    groups: list[GroundingGroup]
    pooled: dict[str, GroundingSummary | None]
    judge: dict[str, Any]
    judge_validation: dict[str, dict | None] | None = None
    input: str | None = None
    settings: dict[str, Any] = field(default_factory=lambda: {
        "template": TEMPLATE, "scale": {str(k): v for k, v in SCALE.items()}, "min_comment_chars": MIN_COMMENT_CHARS,
        "bins": [name for name, _, _ in BINS], "xref_density_per_tokens": DENSITY_PER})

    def to_dict(self) -> dict:
        return {"grounding_specificity": self.settings, "input": self.input, "judge": self.judge,
                "judge_validation": self.judge_validation, "groups": [g.to_dict() for g in self.groups],
                "pooled": {name: None if s is None else s.to_dict() for name, s in self.pooled.items()}}


def grounding_report(rows: Sequence[Mapping[str, Any]], judge: Judge, progress: bool = False) -> GroundingResult:
    """The grounding result of parsed review rows (their ``weaknesses`` section filled, as
    :func:`praib.parsing.parse_reviews` fills it), each review's comments rated by ``judge``."""
    rows = list(rows)
    comments = [weakness_comments(row.get("weaknesses")) for row in rows]
    names = [str(row.get("review_id") or f"row {i + 1}") for i, row in enumerate(rows)]
    flat = [(i, number) for i, mine in enumerate(comments) for number in range(1, len(mine) + 1)]
    answers = judge_grounding([comments[i][number - 1] for i, number in flat], judge, progress=progress,
                              ids=[f"{names[i]}/weakness {number}" for i, number in flat])
    scores: list[list[int | None]] = [[] for _ in rows]
    for (i, _), answer in zip(flat, answers):
        scores[i].append(answer.value if answer.ok else None)
    reviews = review_groundings(scores, [row.get("text") for row in rows])
    by_label: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_label.setdefault(HUMAN if row.get("source") == HUMAN_SOURCE else reviewer_label(row), []).append(i)
    groups = []
    for label, members in sorted(by_label.items(), key=lambda item: (item[0] != HUMAN, item[0])):
        first = rows[members[0]]
        groups.append(GroundingGroup(label, {name: first.get(name) for name in ("source", "model", "prompt")},
                                     label == HUMAN, grounding_summary([reviews[i] for i in members])))
    pooled = {}
    for name, wanted in ((HUMAN, True), (MODELS, False)):
        chosen = [reviews[i] for i, row in enumerate(rows) if (row.get("source") == HUMAN_SOURCE) == wanted]
        pooled[name] = grounding_summary(chosen) if chosen else None
    return GroundingResult(groups, pooled, judge.describe())


__all__ = ["FAMILY", "METRIC", "GroundingGroup", "GroundingResult", "grounding_report"]
