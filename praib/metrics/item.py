"""One item's score under one metric, typed the way inspect_ai's scorers type theirs: the value, the answer
it was read from, why, and whatever else the metric knows about it. A judged per-review metric gives one
per review (:meth:`praib.metrics.judged.math_engagement.MathJudgement.score`), and so does its rule-based
counterpart; the per-review Parquet of ``praib evaluate --per-review`` carries them
(:mod:`praib.evaluation.per_review`), so a viewer and any later analysis read every metric's items alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["Score"]


@dataclass(frozen=True)
class Score:
    """``value``: the item's number (a share's 1 or 0, a count, a score), None where the item could not be
    scored; ``answer``: what the judge answered (its verdict, or its raw text where that could not be read),
    None for a rule; ``explanation``: the judge's rationale, why the item has no value, or which rules fired;
    ``metadata``: the rest (how it was decided, the error class, the rules' matches)."""

    value: float | None
    answer: str | None = None
    explanation: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"value": self.value, "answer": self.answer, "explanation": self.explanation,
                "metadata": dict(self.metadata)}
