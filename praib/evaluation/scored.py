"""Parsed reviews as one table of columns, with every per-review text metric computed once.

``evaluate_reviews`` and the leaderboard both read reviews through :class:`ScoredReviews`, so a
set of reviews shared between calls (the human reference of a leaderboard run, a submission scored
for its table and for its bootstrap) is parsed and scored once.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from datasets import Dataset

from praib.metrics.text.columns import text_columns
from praib.parsing import ReviewParser

#: The fields every metric of ``evaluate_reviews`` reads.
SCORED_FIELDS = ("review_id", "paper_id", "venue", "year", "decision", "source", "text", "rating", "confidence",
                 "recommendation", "parse_status")


@dataclass
class ScoredReviews:
    """The parsed fields of a set of reviews (``columns``, one list per field, in record order) and the
    columns of :func:`praib.metrics.text.columns.text_columns` for their texts (``text_scores``).
    ``scale`` is the one the reviews were parsed on ("venue" or "generic")."""

    columns: dict[str, list]
    text_scores: dict[str, np.ndarray]
    scale: str
    #: What evaluations against these reviews as their human reference took of them, by scale and grouping
    #: (:func:`praib.evaluation.evaluate.group_entries`): taken once for any number of evaluations.
    as_reference: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def score(cls, reviews: Dataset, scale: str = "venue", extra_fields: Sequence[str] = (),
              workers: int | None = None, progress: bool = False) -> "ScoredReviews":
        """Parse ``reviews`` on ``scale`` and score their texts; ``extra_fields`` are kept beside
        :data:`SCORED_FIELDS` (e.g. the fields results are grouped by). Venues without a scale file are
        parsed on the generic scale without a warning: whoever computes metrics from them names them
        (:func:`praib.evaluation.evaluate.unknown_scales`)."""
        unknown = [c for c in extra_fields if c not in reviews.column_names]
        if unknown:
            raise ValueError(f"cannot group by {', '.join(unknown)}: not a review field "
                             f"({', '.join(reviews.column_names)})")
        # Parsed as dicts, not through a Dataset: its row-by-row feature encoding cost more than the parse.
        parser = ReviewParser(scale, warn_unknown=False)
        parsed = parser.parse_in_processes(reviews.to_list(), workers or os.cpu_count() or 1)
        columns = {name: [row[name] for row in parsed] for name in dict.fromkeys([*SCORED_FIELDS, *extra_fields])}
        return cls(columns, text_columns(columns["text"], workers=workers, progress=progress), scale)

    def __len__(self) -> int:
        return len(self.columns["paper_id"])

    def without_texts(self) -> "ScoredReviews":
        """These reviews with their texts dropped (None) and everything else kept: enough for every metric but
        those that read the texts again (a judge's, the citation check)."""
        return ScoredReviews({**self.columns, "text": [None] * len(self)}, self.text_scores, self.scale)

    def rows(self) -> list[dict]:
        """The reviews as one dict each (the fields kept)."""
        names = list(self.columns)
        return [dict(zip(names, values)) for values in zip(*self.columns.values())]

    def concat(self, other: "ScoredReviews") -> "ScoredReviews":
        """These reviews followed by ``other``'s (the fields both have)."""
        if other.scale != self.scale:
            raise ValueError(f"cannot join reviews parsed on the {self.scale} scale with ones parsed on "
                             f"the {other.scale} scale")
        fields = [f for f in self.columns if f in other.columns]
        return ScoredReviews({f: self.columns[f] + other.columns[f] for f in fields},
                             {k: np.concatenate([v, other.text_scores[k]]) for k, v in self.text_scores.items()},
                             self.scale)
