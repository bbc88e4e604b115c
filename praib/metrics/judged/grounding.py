"""RevUtil's grounding specificity of review comments, and how it follows the cross-reference count (PRAIB
Appendix H.1, Tables 18-20).

RevUtil (Sadallah et al., EMNLP 2025) rates single review comments, the points of a review's weaknesses, on how
well the authors can tell which part of the paper a comment is about (grounding) and how clearly it says what is
wrong there (specificity), on a 1-5 scale (:data:`SCALE`). PRAIB splits each review's weaknesses into comments,
drops those shorter than 50 characters, has each rated, averages a review's ratings, and then asks whether the
review's cross-reference count (``xref``) follows that average: Spearman correlations with the count and with
its density (Table 18), and the mean by bin of the count, 0, 1, 2-5 and more than 5, with each bin's gain over
bin 0 (Tables 19 and 20).

The judge answers the built-in judge template ``grounding_specificity`` (RevUtil's rubric, its five labels and its
``###Instruction`` / ``###Review Point`` layout, so that a RevUtil checkpoint such as
``boda/RevUtil_Llama-3.1-8B-Instruct_score_only`` can be the judge) with JSON ``{"grounding_specificity_label":
"1".."5"}``. An answer that is not such JSON is counted and never guessed. ``praib judge validate --task
grounding`` checks a judge against human ratings (RevUtil's human-labelled comments, say).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from praib.llm.judge import Answer, Judge
from praib.metrics.summary import summarise
from praib.metrics.text.textstats import score_texts
from praib.parsing import strength_weakness_bullets

TEMPLATE = "grounding_specificity"
#: RevUtil's grounding specificity scale.
SCALE = {1: "Not Grounded", 2: "Weakly Grounded and Not Specific", 3: "Weakly Grounded and Specific",
         4: "Fully Grounded and Under-Specific", 5: "Fully Grounded and Specific"}
LABELS: tuple[str, ...] = tuple(str(score) for score in SCALE)
ANSWER_KEY = "grounding_specificity_label"
ANSWER_SCHEMA: dict = {
    "type": "object",
    "properties": {ANSWER_KEY: {"type": "string", "enum": list(LABELS)}},
    "required": [ANSWER_KEY],
    "additionalProperties": False,
}
#: PRAIB leaves out comments shorter than this (characters).
MIN_COMMENT_CHARS = 50
#: The bins of the cross-reference count, PRAIB's: (name, lowest, highest or None).
BINS: tuple[tuple[str, int, int | None], ...] = (("0", 0, 0), ("1", 1, 1), ("2-5", 2, 5), (">5", 6, None))
#: Cross-reference density: cross-references per this many word tokens of the review (Spearman's ρ does not
#: depend on the unit; PRAIB does not give one).
DENSITY_PER = 100

_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def weakness_comments(weaknesses: str | None, min_chars: int = MIN_COMMENT_CHARS) -> list[str]:
    """The comments of a review's weaknesses section: the items of its Markdown lists (``-``, ``*``, ``1.``, ...,
    as :func:`praib.parsing.strength_weakness_bullets` reads them), or, where it has no list, its paragraphs;
    comments shorter than ``min_chars`` characters are left out, as PRAIB leaves them out."""
    if not isinstance(weaknesses, str) or not weaknesses.strip():
        return []
    items = strength_weakness_bullets(f"## Weaknesses\n{weaknesses}")["weaknesses"]
    if not items:
        items = _BLANK_LINE.split(weaknesses)
    comments = [" ".join(item.split()) for item in items]
    return [comment for comment in comments if len(comment) >= min_chars]


def parse_answer(answer: Any) -> int:
    """The score of a judge's JSON answer (``{"grounding_specificity_label": "4"}``, the label given as a number
    or as "4: Fully Grounded and Under-Specific" too); a ValueError says why an answer has none."""
    if not isinstance(answer, dict) or ANSWER_KEY not in answer:
        raise ValueError(f"expected a JSON object with {ANSWER_KEY!r}")
    value = answer[ANSWER_KEY]
    found = re.match(r"\s*([1-5])(?:\s*:.*)?\s*$", str(value), re.DOTALL) if not isinstance(value, bool) else None
    if found is None:
        raise ValueError(f"the label is {value!r}, not one of {', '.join(LABELS)}")
    return int(found.group(1))


def judge_grounding(comments: Sequence[str], judge: Judge, template: str | Path = TEMPLATE, progress: bool = False,
                    ids: Sequence[str] | None = None) -> list[Answer]:
    """The judge's :class:`~praib.llm.judge.Answer` for each comment: its score (1-5) as the value, or none with
    the reason (a failure record named by ``ids`` each)."""
    if not comments:
        return []
    return judge.json(template, [{"review_point": comment} for comment in comments], ANSWER_SCHEMA,
                      progress=progress, ids=[f"{i}/grounding" for i in ids] if ids is not None else None,
                      parse=parse_answer)


def xref_bin(count: int) -> str:
    """The name of the bin of a cross-reference count (:data:`BINS`)."""
    return next(name for name, low, high in BINS if count >= low and (high is None or count <= high))


def spearman(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Spearman's ρ of paired values with its two-sided p-value (scipy), the pairs with a value on both sides;
    ρ None where it is undefined (fewer than 3 pairs, or one side constant)."""
    from scipy.stats import spearmanr

    pairs = [(a, b) for a, b in zip(x, y) if a is not None and b is not None]
    n = len(pairs)
    if n < 3 or len({a for a, _ in pairs}) < 2 or len({b for _, b in pairs}) < 2:
        return {"rho": None, "p_value": None, "n": n}
    result = spearmanr([a for a, _ in pairs], [b for _, b in pairs])
    return {"rho": float(result.statistic), "p_value": float(result.pvalue), "n": n}


@dataclass(frozen=True)
class ReviewGrounding:
    """One review: its comments' scores (None where the judge gave none), its cross-reference count and their
    density (per :data:`DENSITY_PER` word tokens, ``xref_per_100_tokens`` of the text metrics; both None for a
    review without text, which then counts in no bin and no correlation)."""

    scores: tuple[int | None, ...]
    xref: int | None
    density: float | None

    @property
    def mean(self) -> float | None:
        scored = [s for s in self.scores if s is not None]
        return sum(scored) / len(scored) if scored else None


@dataclass
class GroundingSummary:
    """The grounding specificity of a set of reviews: how many reviews and comments were rated, the per-review
    mean score (mean, sample SD, n over the reviews with a rated comment), its Spearman correlations with the
    cross-reference count and density, and per bin of the count the mean score, the reviews and the gain over
    bin 0 (None where a bin, or bin 0, has no review)."""

    reviews: int
    reviews_scored: int
    comments: int
    comments_scored: int
    score: dict[str, Any]
    spearman: dict[str, dict[str, Any]]
    bins: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"reviews": self.reviews, "reviews_scored": self.reviews_scored, "comments": self.comments,
                "comments_scored": self.comments_scored, "comments_failed": self.comments - self.comments_scored,
                "score": self.score, "spearman": self.spearman, "bins": self.bins}


def review_groundings(scores: Sequence[Sequence[int | None]], texts: Sequence[str | None]) -> list[ReviewGrounding]:
    """Each review's :class:`ReviewGrounding` from its comments' scores and its text, whose cross-references praib's
    text metrics count (``xref``, ``xref_per_100_tokens``; NaN, kept as None, for a review without text)."""
    metrics = score_texts(list(texts), workers=1)
    return [ReviewGrounding(tuple(mine), None if xref != xref else int(xref), None if density != density else
                            float(density))
            for mine, xref, density in zip(scores, metrics["xref"], metrics["xref_per_100_tokens"])]


def grounding_from_scores(scores: Sequence[Sequence[int | None]], texts: Sequence[str | None]) -> dict:
    """What ``praib grounding`` reports of one group of reviews (:meth:`GroundingSummary.to_dict`), from each review's
    comment scores (1-5; None for a comment the judge gave none) and its text: the judge-free part, which the
    ``evaluate`` module ``metrics/grounding_specificity`` serves. A score off RevUtil's scale is a ValueError."""
    if len(scores) != len(texts):
        raise ValueError(f"{len(scores)} reviews' scores but {len(texts)} texts")
    for number, mine in enumerate(scores, 1):
        off = [score for score in mine if score is not None and score not in SCALE]
        if off:
            raise ValueError(f"review {number}: score {off[0]!r} is not on RevUtil's scale (1-5)")
    return grounding_summary(review_groundings(scores, texts)).to_dict()


def grounding_summary(reviews: Sequence[ReviewGrounding]) -> GroundingSummary:
    """:class:`GroundingSummary` of ``reviews``."""
    rated = [review for review in reviews if review.mean is not None]
    means = [review.mean for review in rated]
    bins: dict[str, dict[str, Any]] = {}
    for name, _, _ in BINS:
        inside = [review.mean for review in rated if review.xref is not None and xref_bin(review.xref) == name]
        bins[name] = {"mean": sum(inside) / len(inside) if inside else None, "n": len(inside)}
    base = bins[BINS[0][0]]["mean"]
    for entry in bins.values():
        entry["gain"] = entry["mean"] - base if entry["mean"] is not None and base is not None else None
    return GroundingSummary(
        reviews=len(reviews), reviews_scored=len(rated),
        comments=sum(len(review.scores) for review in reviews),
        comments_scored=sum(s is not None for review in reviews for s in review.scores),
        score=summarise(means),
        spearman={"xref": spearman(means, [review.xref for review in rated]),
                  "xref_density": spearman(means, [review.density for review in rated])},
        bins=bins)


__all__ = ["ANSWER_SCHEMA", "BINS", "DENSITY_PER", "LABELS", "MIN_COMMENT_CHARS", "SCALE", "TEMPLATE",
           "GroundingSummary", "ReviewGrounding", "grounding_from_scores", "grounding_summary", "judge_grounding",
           "parse_answer", "review_groundings", "spearman", "weakness_comments", "xref_bin"]
