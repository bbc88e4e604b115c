"""Average treatment effects of counterfactual paper edits on a reviewer's reviews.

The counterfactual review-logic seed reviews each original paper and several counterfactual
versions of it: soundness-critical ones (its research logic is broken) and soundness-neutral
ones (surface edits only). For each review of a counterfactual it takes three review
differences, counterfactual minus original:

* ``aspect``: the number of soundness-related assertions (a sound reviewer adds some: +);
* ``sentiment``: the share of the review's assertions that are positive (should fall: -);
* ``score``: the overall rating (should fall: -).

Assertions, their sentiment and whether they concern soundness come from a judge
(``ate_assertions.jinja``, one call per review). Per reviewer and difference, a linear
mixed-effects model with the paper as random effect estimates the ATE of critical and of
neutral edits and tests whether they differ (:func:`praib.metrics.perturbation.stats.ate_mixed_model`); the
p-values are Benjamini-Hochberg corrected across reviewers per difference, as in the seed.
The ranking score averages, over the differences, the ATE gap in units of the neutral
differences' standard deviation (signed so that larger is better).

Review sensitivity compares each original review with the reviews of its neutral versions:
ROUGE-2 F1 of the texts (``rouge-score``) and the Jaccard index of their assertions. Two
assertions are the same element when the judge aligns them (``ate_alignment.jinja``: same
point, same part of the paper, same sentiment; one-to-one), so with ``m`` aligned pairs between
assertion sets A and B, Jaccard = m / (|A| + |B| - m).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Sequence

from datasets import Dataset

from praib.metrics.perturbation.robustness import PairingError, pair_records
from praib.records.ids import reviewer_label
from praib.metrics.perturbation.stats import ate_mixed_model, benjamini_hochberg, ranking_score
from praib.metrics.summary import summarise
from praib.records import CRITICAL, NEUTRAL
from praib.records.progress import progress_bar

# Difference name -> the direction a reviewer that notices broken research logic moves it.
DIFFERENCES = {"aspect": 1, "sentiment": -1, "score": -1}
SENTIMENTS = ("positive", "negative", "neutral")

ASSERTIONS_SCHEMA = {
    "type": "object",
    "properties": {"assertions": {"type": "array", "maxItems": 60, "items": {
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 400}, "sentiment": {"enum": list(SENTIMENTS)},
                       "soundness": {"type": "boolean"}},
        "required": ["text", "sentiment", "soundness"]}}},
    "required": ["assertions"],
}
ALIGNMENT_SCHEMA = {
    "type": "object",
    "properties": {"pairs": {"type": "array", "items": {
        "type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}}},
    "required": ["pairs"],
}


def _valid_assertions(answer: Any) -> list[dict] | None:
    if not isinstance(answer, dict) or not isinstance(answer.get("assertions"), list):
        return None
    items = answer["assertions"]
    for item in items:
        if (not isinstance(item, dict) or item.get("sentiment") not in SENTIMENTS
                or not isinstance(item.get("soundness"), bool) or not isinstance(item.get("text"), str)):
            return None
    return items


def _read_assertions(answer: Any) -> list[dict]:
    items = _valid_assertions(answer)
    if items is None:
        raise ValueError("expected {\"assertions\": [{\"text\", \"sentiment\", \"soundness\"}, ...]}")
    return items


def review_assertions(texts: list[str | None], judge, progress: bool = False, template: str = "ate_assertions",
                      ids: Sequence[str] | None = None) -> list[list[dict] | None]:
    """The judge's assertions of each review ({"text", "sentiment", "soundness"}); None for a
    review without text, a failed call or an answer that does not fit the schema (recorded as a
    failure named by ``ids``)."""
    asked = [i for i, text in enumerate(texts) if text and text.strip()]
    answers = judge.json(template, [{"review": texts[i]} for i in asked], ASSERTIONS_SCHEMA, progress=progress,
                         parse=_read_assertions,
                         ids=[f"{ids[i]}/assertions" for i in asked] if ids is not None else None)
    out: list[list[dict] | None] = [None] * len(texts)
    for i, answer in zip(asked, answers):
        out[i] = answer.value
    return out


def assertion_features(assertions: list[dict] | None) -> dict[str, float | None]:
    """The soundness-aspect count and the positive share of one review's assertions."""
    if assertions is None:
        return {"aspect": None, "sentiment": None}
    positive = sum(a["sentiment"] == "positive" for a in assertions)
    return {"aspect": float(sum(a["soundness"] for a in assertions)),
            "sentiment": positive / len(assertions) if assertions else None}


def aligned_pairs(answer: Any, size_a: int, size_b: int) -> int | None:
    """Number of one-to-one aligned assertion pairs in a judge answer; pairs out of range or
    reusing an assertion are ignored. None when the answer does not fit the schema."""
    if not isinstance(answer, dict) or not isinstance(answer.get("pairs"), list):
        return None
    used_a, used_b = set(), set()
    for pair in answer["pairs"]:
        if (isinstance(pair, list) and len(pair) == 2 and all(isinstance(i, int) for i in pair)
                and 0 <= pair[0] < size_a and 0 <= pair[1] < size_b
                and pair[0] not in used_a and pair[1] not in used_b):
            used_a.add(pair[0])
            used_b.add(pair[1])
    return len(used_a)


def assertion_jaccard(n_a: int, n_b: int, aligned: int) -> float | None:
    """Jaccard index of two assertion sets with ``aligned`` shared elements."""
    union = n_a + n_b - aligned
    return aligned / union if union else None


def rouge2(reference: str | None, candidate: str | None) -> float | None:
    """ROUGE-2 F1 of two texts (rouge-score, Porter stemming); None if either is empty."""
    if not reference or not candidate:
        return None
    from rouge_score import rouge_scorer

    return float(rouge_scorer.RougeScorer(["rouge2"], use_stemmer=True).score(reference, candidate)["rouge2"].fmeasure)


@dataclass
class TreatmentEffects:
    """The result of :func:`counterfactual_effects`: the significance level, the judge (its description;
    None without one), the pairs, the review differences measured, the reviews the judge gave no valid
    assertions (None without a judge), and per reviewer label its counts, each difference's ATEs and tests,
    its ranking score and sensitivity (the JSON-ready mappings of :mod:`praib.metrics.perturbation.stats`).
    ``inputs``: where the reviews came from, when the caller says. :meth:`to_dict` gives the JSON
    ``praib counterfactual effects --output`` writes."""

    alpha: float
    judge: dict | None
    n_pairs: int
    differences: list[str]
    n_unjudged_reviews: int | None
    reviewers: dict[str, dict]
    inputs: dict | None = None

    def to_dict(self) -> dict:
        out = {"alpha": self.alpha, "judge": self.judge, "n_pairs": self.n_pairs,
               "differences": list(self.differences), "n_unjudged_reviews": self.n_unjudged_reviews,
               "reviewers": self.reviewers}
        if self.inputs is not None:
            out["inputs"] = self.inputs
        return out


def counterfactual_effects(original: Dataset, variants: Dataset, judge=None, alpha: float = 0.05,
                           sensitivity: bool = True, progress: bool = False) -> TreatmentEffects:
    """ATEs of soundness-critical versus soundness-neutral edits per reviewer.

    ``original`` holds the reviews of the original papers, ``variants`` the reviews of their
    counterfactual versions, each with a ``perturbation`` struct whose ``category`` is
    ``soundness-critical`` or ``soundness-neutral``; they pair as in
    :func:`praib.metrics.perturbation.robustness.pair_records`. ``rating`` must be parsed already (see
    :func:`praib.parsing.parse_reviews`). With ``sensitivity`` the judge also aligns the
    assertions of each original review and each review of a neutral version.

    Without a judge only the score difference is measured, and sensitivity is ROUGE-2 alone:
    assertions, their sentiment and their alignment all come from the judge.
    """
    measured = DIFFERENCES if judge is not None else {"score": DIFFERENCES["score"]}
    pairs = pair_records(original, variants, "review")["pairs"]
    wrong = sorted({str(p["perturbation"].get("category")) for p in pairs} - {CRITICAL, NEUTRAL})
    if wrong:
        raise PairingError(f"variant reviews must have perturbation category {CRITICAL!r} or {NEUTRAL!r}; "
                           f"found {', '.join(wrong)}")
    # Judge each distinct review once; an original review is shared by all its variants.
    reviews: dict[int, dict] = {}
    for pair in pairs:
        reviews.setdefault(id(pair["original"]), pair["original"])
        reviews.setdefault(id(pair["perturbed"]), pair["perturbed"])
    order = list(reviews)
    texts = [reviews[k].get("text") for k in order]
    assertions = dict(zip(order, review_assertions(texts, judge, progress,
                                                   ids=[str(reviews[k].get("review_id")) for k in order])
                          if judge is not None
                          else [None] * len(order)))
    features = {}
    for key, row in reviews.items():
        features[key] = {**assertion_features(assertions[key]),
                         "score": None if row.get("rating") is None else float(row["rating"])}

    by_reviewer: dict[str, list[dict]] = defaultdict(list)
    for pair in pairs:
        before, after = features[id(pair["original"])], features[id(pair["perturbed"])]
        pair["differences"] = {name: None if before[name] is None or after[name] is None
                               else after[name] - before[name] for name in measured}
        by_reviewer[reviewer_label(pair["original"])].append(pair)

    reviewers: dict[str, dict] = {}
    for label, group in sorted(by_reviewer.items()):
        effects = {}
        for name in measured:
            effects[name] = ate_mixed_model([p["differences"][name] for p in group],
                                            [p["original"]["paper_id"] for p in group],
                                            [p["perturbation"]["category"] == CRITICAL for p in group])
        reviewers[label] = {"n_pairs": len(group),
                            "n_critical": sum(p["perturbation"]["category"] == CRITICAL for p in group),
                            "n_neutral": sum(p["perturbation"]["category"] == NEUTRAL for p in group),
                            "differences": effects}
    labels = list(reviewers)
    for name, direction in measured.items():
        corrected = benjamini_hochberg([reviewers[label]["differences"][name]["p_value"] for label in labels])
        for label, p in zip(labels, corrected):
            effect = reviewers[label]["differences"][name]
            effect["p_corrected"] = p
            effect["significant"] = p is not None and p < alpha
            effect["z"] = ranking_score(effect["ate_critical"], effect["ate_neutral"], effect["std_neutral"],
                                        direction)
    for entry in reviewers.values():
        scores = [e["z"] for e in entry["differences"].values() if e["z"] is not None]
        entry["ranking_score"] = sum(scores) / len(scores) if scores else None
    if sensitivity:
        _add_sensitivity(reviewers, by_reviewer, assertions, judge, progress)
    return TreatmentEffects(alpha, judge.describe() if judge is not None else None, len(pairs), list(measured),
                            sum(a is None for a in assertions.values()) if judge is not None else None, reviewers)


def _add_sensitivity(reviewers: dict, by_reviewer: dict, assertions: dict, judge, progress: bool) -> None:
    neutral = [(label, p) for label, group in by_reviewer.items() for p in group
               if p["perturbation"]["category"] == NEUTRAL]
    rouge = {id(p): rouge2(p["original"].get("text"), p["perturbed"].get("text"))
             for _, p in progress_bar(neutral, desc="ROUGE-2", enabled=progress)}
    jaccard: dict[int, float | None] = {}
    to_align = []
    for _, pair in neutral:
        a, b = assertions[id(pair["original"])], assertions[id(pair["perturbed"])]
        if a is None or b is None:
            jaccard[id(pair)] = None
        elif not a or not b:
            # Nothing to align: the overlap is empty (or undefined when both are empty).
            jaccard[id(pair)] = assertion_jaccard(len(a), len(b), 0)
        else:
            to_align.append((pair, a, b))
    answers = [] if judge is None else judge.json(
        "ate_alignment", [{"assertions_a": [x["text"] for x in a], "assertions_b": [x["text"] for x in b]}
                          for _, a, b in to_align], ALIGNMENT_SCHEMA, progress=progress,
        ids=[f"{pair['original'].get('review_id')} ~ {pair['perturbed'].get('review_id')}/alignment"
             for pair, _, _ in to_align])
    for (pair, a, b), answer in zip(to_align, answers):
        aligned = aligned_pairs(answer.value, len(a), len(b))
        jaccard[id(pair)] = None if aligned is None else assertion_jaccard(len(a), len(b), aligned)
    for label in reviewers:
        pairs = [p for group_label, p in neutral if group_label == label]
        reviewers[label]["sensitivity"] = {"rouge2": summarise(rouge[id(p)] for p in pairs),
                                           "assertion_jaccard": summarise(jaccard[id(p)] for p in pairs)}


def format_effects_table(result: TreatmentEffects) -> str:
    """Reviewers ranked by ranking score (the seed's Table 4), with the BH-corrected p-value of
    each difference (its Table 5) and, when computed, review sensitivity (its Table 6)."""
    ranked = sorted(result.reviewers.items(),
                    key=lambda item: (item[1]["ranking_score"] is None, -(item[1]["ranking_score"] or 0.0)))
    measured = result.differences
    header = ["Reviewer", "n crit", "n neut", "z", *(f"p {name} (BH)" for name in measured), "ROUGE-2",
              "Assertion Jaccard"]
    rows = []
    for label, entry in ranked:
        cells = [label, str(entry["n_critical"]), str(entry["n_neutral"]), _number(entry["ranking_score"], "+.2f")]
        for name in measured:
            effect = entry["differences"][name]
            cells.append(_number(effect["p_corrected"], ".3g") + ("*" if effect["significant"] else ""))
        sensitivity = entry.get("sensitivity") or {}
        for key in ("rouge2", "assertion_jaccard"):
            cells.append(_number((sensitivity.get(key) or {}).get("mean"), ".3f"))
        rows.append(cells)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines.append(f"z: mean over differences of the signed ATE gap (critical - neutral) in neutral standard "
                 f"deviations; * significant after Benjamini-Hochberg at {result.alpha:g}.")
    if result.judge is None:
        lines.append("Without a judge only the score difference and ROUGE-2 are measured; the soundness aspect "
                     "and sentiment differences and the assertion Jaccard need --judge.")
    if result.n_unjudged_reviews:
        lines.append(f"{result.n_unjudged_reviews} reviews got no valid assertions from the judge: their aspect "
                     f"and sentiment differences are missing (n_missing in the JSON).")
    return "\n".join(lines)


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


_CONDITIONS = {CRITICAL: True, "critical": True, NEUTRAL: False, "neutral": False}


def treatment_effect(differences, paper_ids, conditions, expected_direction: int = 1) -> dict:
    """:func:`praib.metrics.perturbation.stats.ate_mixed_model` of one review difference per counterfactual,
    with ``conditions`` named (``soundness-critical``/``critical``, ``soundness-neutral``/``neutral``),
    plus its ``ranking_score`` signed by ``expected_direction``."""
    unknown = sorted(set(conditions) - set(_CONDITIONS))
    if unknown:
        raise ValueError(f"unknown conditions {unknown}; use {', '.join(_CONDITIONS)}")
    result = ate_mixed_model(differences, paper_ids, [_CONDITIONS[c] for c in conditions])
    result["ranking_score"] = ranking_score(result["ate_critical"], result["ate_neutral"],
                                            result["std_neutral"], expected_direction)
    return result
