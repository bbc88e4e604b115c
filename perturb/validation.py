"""Checks every LLM-driven edit passes before it is accepted, and the bounded retry of a rejected one.

An edit is the model's answer for one unit: a paragraph (``voice``), a paper section or a whole
review or rebuttal (the span-edit kinds), the edited paragraphs of a counterfactual projection. It
is accepted only when it can be read, touches only what it may, differs from the original, and its
length and word overlap with the original stay within the bounds of its kind (:data:`EDIT_BOUNDS`,
the table of docs/perturbations.md). A rejected unit is asked again, with the reasons it was rejected added to the
prompt (so the retry is a new request, not the cached answer), up to ``max_tries`` answers; then it
is left unedited and recorded in the run's failure log as ``RejectedEdit`` with the reason.
:class:`EditTally` counts accepted and rejected edits per kind for the command's summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence

from praib.llm.failures import FailedItem

from praib.perturb.structure import inline_spans

#: Error class of a failure record whose edit failed its checks after every try.
REJECTED_EDIT = "RejectedEdit"
#: Answers asked per unit unless a kind's ``max_tries`` option says otherwise (one retry).
MAX_TRIES = 2


@dataclass(frozen=True)
class EditBounds:
    """What one edit of a kind is, and the bounds its text must keep against the original.

    ``length_ratio``: (lowest, highest) characters of the edited text over the original's;
    ``min_overlap``: lowest ROUGE-1 F-measure between them (rouge-score's tokens, no stemming), None
    where the kind may rewrite freely; ``keep_protected``: every maths, code, URL, HTML tag and
    citation key of the original must still be there. Every kind must change the text."""

    unit: str
    length_ratio: tuple[float, float]
    min_overlap: float | None
    keep_protected: bool = False


#: The soundness-critical projections' bounds, on each edited paragraph: a minimal change keeps most words.
PROJECTION_BOUNDS = EditBounds("paragraph", (0.5, 2.0), 0.3)

#: Bounds per kind. Span-edit kinds measure each span the answer names (old span against new span);
#: ``voice`` the whole paragraph. Values leave room for the edit each prompt asks for and none for noise.
EDIT_BOUNDS: dict[str, EditBounds] = {
    "voice": EditBounds("paragraph", (0.6, 1.6), 0.5, keep_protected=True),
    "presentation": EditBounds("section", (0.5, 2.0), 0.3, keep_protected=True),
    # The study's contribution perturbation inflates claims and drops citations at once: the widest of both.
    "contribution": EditBounds("section", (0.2, 3.0), 0.15),
    "overclaim-novelty": EditBounds("section", (0.4, 3.0), 0.15),
    "drop-citations": EditBounds("section", (0.2, 1.2), 0.3),
    "remove-details": EditBounds("section", (0.2, 1.2), 0.2),
    "review-tone": EditBounds("review", (0.5, 3.0), 0.15, keep_protected=True),
    "tone-dismissive": EditBounds("review", (0.5, 3.0), 0.15, keep_protected=True),
    "tone-sarcastic": EditBounds("review", (0.5, 3.0), 0.15, keep_protected=True),
    "rebuttal-tone": EditBounds("rebuttal", (0.5, 3.0), 0.15, keep_protected=True),
    "rebuttal-presentation": EditBounds("rebuttal", (0.5, 2.0), 0.3, keep_protected=True),
    "rebuttal-completeness": EditBounds("rebuttal", (0.1, 2.0), None),
    **{kind: PROJECTION_BOUNDS for kind in ("finding-causal", "finding-inverted", "finding-unconditional",
                                            "conclusion-extra-result", "result-negated", "result-weakened")},
}


def _squeezed(text: str) -> str:
    return " ".join(text.split())


@lru_cache(maxsize=1)
def _rouge1():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)


def word_overlap(original: str, edited: str) -> float | None:
    """ROUGE-1 F-measure of ``edited`` against ``original``; None when the original has no word."""
    from rouge_score import tokenize

    if not tokenize.tokenize(original, None):
        return None
    return _rouge1().score(original, edited)["rouge1"].fmeasure


def check_edit(bounds: EditBounds, original: str, edited: str) -> str | None:
    """Why ``edited`` may not replace ``original`` under ``bounds`` (the first check it fails), None
    when it may."""
    if not edited.strip():
        return "the answer is empty"
    if _squeezed(edited) == _squeezed(original):
        return "the answer repeats the original unchanged"
    ratio = len(edited.strip()) / max(1, len(original.strip()))
    low, high = bounds.length_ratio
    if ratio < low:
        return f"length ratio {ratio:.2f} below {low:g}"
    if ratio > high:
        return f"length ratio {ratio:.2f} above {high:g}"
    overlap = word_overlap(original, edited) if bounds.min_overlap is not None else None
    if overlap is not None and overlap < bounds.min_overlap:
        return f"word overlap {overlap:.2f} below {bounds.min_overlap:g}"
    if bounds.keep_protected:
        lost = [original[start:end] for start, end in inline_spans(original) if original[start:end] not in edited]
        if lost:
            return f"the protected span {lost[0][:60]!r} (maths, code, URL, tag or citation key) is changed or missing"
    return None


@dataclass(frozen=True)
class Checked:
    """How one unit's edit ended: ``value`` (what the check made of the accepted answer) when
    ``error`` is None; else ``error`` is :data:`REJECTED_EDIT` or the class of the missing answer,
    and ``reason`` says why. ``tries``: answers asked."""

    value: Any = None
    tries: int = 0
    error: str | None = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def rejected(self) -> bool:
        return self.error == REJECTED_EDIT


def ask_checked(judge: Any, template: str | Path, items: Sequence[dict], ids: Sequence[str],
                check: Callable[[int, str], tuple[Any, str | None]], *, label: str, max_tries: int = MAX_TRIES,
                progress: bool = False) -> list[Checked]:
    """One :class:`Checked` per item: ``template`` rendered with the item (and ``rejected``, the
    reasons its earlier answers were rejected) through ``judge``, each answer passed to
    ``check(index, text)`` -> (value, None) or (None, why it is rejected). A rejected item is asked
    again until ``max_tries`` answers; every item is settled once in ``judge.failures``."""
    if max_tries < 1:
        raise ValueError(f"max_tries must be at least 1, got {max_tries}")
    outcomes: list[Checked | None] = [None] * len(items)
    reasons: list[list[str]] = [[] for _ in items]
    pending = list(range(len(items)))
    for attempt in range(1, max_tries + 1):
        if not pending:
            break
        answers = judge.text(template, [{**items[i], "rejected": list(reasons[i])} for i in pending], label=label,
                             progress=progress, ids=[ids[i] for i in pending], final=False)
        again = []
        for i, answer in zip(pending, answers):
            if not answer.ok:  # no answer arrived: the backend has already retried what a retry can cure
                outcomes[i] = Checked(None, attempt, answer.error, answer.reason)
                judge.failures.failed(FailedItem(ids[i], label, answer.error, answer.reason, attempt, answer.raw))
                continue
            value, problem = check(i, answer.value)
            if problem is None:
                outcomes[i] = Checked(value, attempt)
                judge.failures.succeeded()
            elif attempt < max_tries:
                reasons[i].append(problem)
                again.append(i)
            else:
                outcomes[i] = Checked(None, attempt, REJECTED_EDIT, problem)
                judge.failures.failed(FailedItem(ids[i], label, REJECTED_EDIT,
                                                 f"edit rejected after {attempt} answer(s): {problem}", attempt,
                                                 answer.value))
        pending = again
    return outcomes


def describe_rejections(outcomes: Sequence[Checked], unit: str, limit: int = 3) -> str:
    """``2 paragraphs rejected: word overlap 0.04 below 0.5; ...``, or an empty string."""
    reasons = list(dict.fromkeys(o.reason for o in outcomes if o.rejected))
    count = sum(o.rejected for o in outcomes)
    if not count:
        return ""
    shown = "; ".join(reasons[:limit]) + ("; ..." if len(reasons) > limit else "")
    return f"{count} {unit}{'s' if count != 1 else ''} rejected: {shown}"


@dataclass
class EditTally:
    """Accepted, rejected and unanswered LLM edits of a run, per kind (and the unit one edit is)."""

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, unit: str, outcomes: Sequence[Checked]) -> None:
        counts = self.counts.setdefault(kind, {"accepted": 0, "rejected": 0, "unanswered": 0})
        self.units[kind] = unit
        for outcome in outcomes:
            counts["accepted" if outcome.ok else "rejected" if outcome.rejected else "unanswered"] += 1

    def describe(self) -> str:
        """``voice: 20 of 24 paragraphs accepted, 4 rejected``, one clause per kind."""
        parts = []
        for kind, counts in self.counts.items():
            total = sum(counts.values())
            text = f"{kind}: {counts['accepted']} of {total} {self.units[kind]}s accepted"
            text += "".join(f", {counts[key]} {key}" for key in ("rejected", "unanswered") if counts[key])
            parts.append(text)
        return "; ".join(parts)


__all__ = ["EDIT_BOUNDS", "MAX_TRIES", "PROJECTION_BOUNDS", "REJECTED_EDIT", "Checked", "EditBounds", "EditTally",
           "ask_checked", "check_edit", "describe_rejections", "word_overlap"]
