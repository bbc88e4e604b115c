"""The judged metrics of review groups, for ``praib evaluate --judge``.

Every review with text is judged once: math engagement (PRAIB Appendix K) and
atomic strengths/weaknesses (Appendix I; the human regime for human reviews, the
generated regime otherwise). The points the target-aspect study labels then get a
target and an aspect: a generated review's own strength and weakness bullet points
(the generic-review prompt asks for them), or its atomic items when it has no bullets
under both headings; a human review's atomic items. Per group this gives:

* ``math_engagement``: share of engaging reviews; for a model group also P(+|+)
  and P(+|-) against the human reviews of the same papers;
* ``coverage_{recall,precision,density,compaction}_{strengths,weaknesses}``: how the
  group's atomic items cover the human items of the same paper (Appendix J);
* ``target_aspect_f1`` and ``target_aspect``: agreement of the group's
  (target, aspect) label sets with the human reviews' per paper, and
  ``target_aspect["llm_items"]``: how many of the group's reviews were labelled by
  their bullet points and how many fell back to their atomic items;
* ``rejection_rate``: share of reject recommendations on rejected papers;
* ``math_engagement_rules`` and ``math_methods_agreement``: the offline rule-based
  detector, labelled as such, and its agreement with the judge;
* ``atomic``: counts and lengths of atomic items (overall and by decision), the
  weakness-to-strength ratio, intra-review overlap and extraction fidelity; for a model
  group also its counts against the human reviews of the same papers (``paired_with_human``).

:func:`second_judge_agreement` re-runs the judged decisions with another judge on
the same inputs and reports the two judges' agreement, and :func:`judgement_records`
gives every review's judgements as a table (``praib score``).

All calls go through one :class:`praib.llm.judge.Judge`, normally behind the on-disk
call cache, so an interrupted judged run resumes and a re-run costs nothing.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

import numpy as np

from datasets import Dataset, Features, List, Value

from praib.metrics.judged.atomic import (AtomicItems, atomic_statistics, extract_atomic, extraction_fidelity,
                                        overlap_summary, paired_with_human)
from praib.metrics.judged.coverage import EmbeddingPrefilter, coverage_for_papers, judge_many, review_pairs
from praib.metrics.summary import summarise
from praib.llm.judge import Judge
from praib.metrics.judged.judge_quality import two_judge_agreement
from praib.metrics.item import Score
from praib.metrics.judged.math_engagement import (detect_math_rule_based, judge_math_engagement, math_engagement_summary,
                                                  method_agreement, rule_score)
from praib.parsing import strength_weakness_bullets
from praib.records import HUMAN_SOURCE
from praib.metrics.judged.target_aspect import (agreement_report, label_distribution, label_items, rejection_rate,
                            restructure_meta_review)

KINDS = (("strengths", "strength"), ("weaknesses", "weakness"))
# Which items of a review got target and aspect labels.
BULLET_POINTS, ATOMIC_ITEMS = "bullet_points", "atomic_items"


class ReviewJudgements:
    """Judgements of every review of an evaluation, indexed by row; :meth:`item_scores` gives each
    per-review judged metric (and its rule-based counterpart) as one :class:`~praib.metrics.item.Score`
    a review."""

    def __init__(self, columns: dict, judge: Judge, progress: bool = False):
        texts = columns["text"]
        rows = [i for i, text in enumerate(texts) if text and text.strip()]
        self.rows = rows
        # Failure records name a review by its id (its row when the records carry none).
        review_ids = columns.get("review_id") or [None] * len(texts)
        self.ids = [str(rid) if rid else f"row {i + 1}" for i, rid in enumerate(review_ids)]
        self.math: list[bool | None] = [None] * len(texts)
        self.math_rationale: list[str | None] = [None] * len(texts)
        self.math_error: list[str | None] = [None] * len(texts)
        self.math_raw: list[str | None] = [None] * len(texts)
        self.math_scores: list[Score | None] = [None] * len(texts)
        for i, judgement in zip(rows, judge_math_engagement([texts[i] for i in rows], judge, progress=progress,
                                                            ids=[self.ids[i] for i in rows])):
            self.math[i], self.math_rationale[i] = judgement.engages, judgement.rationale
            self.math_error[i], self.math_raw[i] = judgement.error, judgement.raw
            self.math_scores[i] = judgement.score()
        self.math_rules: list[bool | None] = [None] * len(texts)
        self.math_rule_scores: list[Score | None] = [None] * len(texts)
        for i in rows:
            self.math_rules[i] = detect_math_rule_based(texts[i])
            self.math_rule_scores[i] = rule_score(texts[i])
        self.atomic: list[AtomicItems | None] = [None] * len(texts)
        for regime, wanted in (("human", True), ("generated", False)):
            chosen = [i for i in rows if (columns["source"][i] == HUMAN_SOURCE) == wanted]
            for i, items in zip(chosen, extract_atomic([texts[i] for i in chosen], judge, regime, progress=progress,
                                                       ids=[self.ids[i] for i in chosen])):
                self.atomic[i] = items
        # The items labelled with a target and an aspect, per (row, side): as in the target-aspect study,
        # a generated review's own bullet points, when it lists both strengths and weaknesses; else its
        # atomic items, like a human review's. The atomic items stay what coverage and statistics use.
        self.labelled: list[str | None] = [None] * len(texts)
        self.labelled_items: dict[tuple[int, str], list[str]] = {}
        for i in rows:
            bullets = None if columns["source"][i] == HUMAN_SOURCE else strength_weakness_bullets(texts[i])
            if bullets and all(bullets[side] for side, _ in KINDS):
                self.labelled[i], items = BULLET_POINTS, bullets
            else:  # an unreadable extraction has no atomic items either
                self.labelled[i], items = ATOMIC_ITEMS, {side: self.atomic[i].side(side) for side, _ in KINDS}
            for side, _ in KINDS:
                self.labelled_items[(i, side)] = items[side]
        # Labels per (row, side): one batch per kind over every labelled item of every review.
        self.labels: dict[tuple[int, str], list[tuple[str | None, str | None]]] = {}
        self.invalid_labels = 0
        for side, kind in KINDS:
            owners = [(i, number, item) for i in rows
                      for number, item in enumerate(self.labelled_items[(i, side)], 1)]
            labelled = label_items([item for _, _, item in owners], kind, judge, progress=progress,
                                   ids=[f"{self.ids[i]}/{kind} {number}" for i, number, _ in owners])
            self.invalid_labels += sum(labelled.invalid.values())
            for (i, _, _), label in zip(owners, labelled):
                self.labels.setdefault((i, side), []).append(label)

    def item_scores(self) -> dict[str, list[Score | None]]:
        """Per judged per-review result (the judge's math engagement, and the rule-based detector beside it),
        each review's :class:`~praib.metrics.item.Score` by row (None for a review without text)."""
        return {"math_engagement": self.math_scores, "math_engagement_rules": self.math_rule_scores}


def meta_review_expert_labels(meta_reviews: dict[Any, str], human_texts: dict[Any, list[str]], judge: Judge,
                              progress: bool = False) -> dict[tuple[Any, str], list]:
    """(target, aspect) labels of each paper's meta-review points, per side: the meta-review is
    turned into strengths and weaknesses by the three-step restructuring chain (using the
    paper's human reviews to make points self-contained), then labelled like review items."""
    points: dict[tuple[Any, str], list[str]] = {}
    for paper_id, text in meta_reviews.items():
        restructured = restructure_meta_review(text, judge, reviews=human_texts.get(paper_id),
                                               item_id=f"meta-review of {paper_id}")
        for side, _ in KINDS:
            points[(paper_id, side)] = restructured[side]
    labels: dict[tuple[Any, str], list] = {}
    for side, kind in KINDS:
        owners = [(key, number, item) for key, items in points.items() if key[1] == side
                  for number, item in enumerate(items, 1)]
        labelled = label_items([item for _, _, item in owners], kind, judge, progress=progress,
                               ids=[f"meta-review of {key[0]}/{kind} {number}" for key, number, _ in owners])
        for (key, _, _), label in zip(owners, labelled):
            labels.setdefault(key, []).append(label)
    return labels


def group_judged_metrics(columns: dict, rows: Sequence[int], reference_rows: Sequence[int], is_reference: bool,
                         judgements: ReviewJudgements, judge: Judge,
                         prefilter: EmbeddingPrefilter | None = None,
                         expert_labels: dict[tuple[Any, str], list] | None = None) -> dict[str, Any]:
    """The judged metrics of the reviews at ``rows`` against the human reviews at ``reference_rows``.
    ``expert_labels`` ((paper, side) -> labels, e.g. from meta-reviews) replaces the human reviews'
    labels as the expert side of the target/aspect agreement."""
    paper = columns["paper_id"]
    common = _per_review_metrics(columns, rows, judgements)
    if is_reference:
        summary = math_engagement_summary([paper[i] for i in rows], [HUMAN_SOURCE] * len(rows),
                                          [judgements.math[i] for i in rows])
        return {"math_engagement": summary["share"].get(HUMAN_SOURCE), **common}

    group_label = "group"
    both = list(rows) + list(reference_rows)
    summary = math_engagement_summary([paper[i] for i in both],
                                      [group_label] * len(rows) + [HUMAN_SOURCE] * len(reference_rows),
                                      [judgements.math[i] for i in both])
    math = {**summary["share"][group_label], **summary["conditional"].get(group_label, {}),
            "papers": summary["papers"], "skipped": summary["skipped_by_source"][group_label]}

    human_items, model_items = _items_by_paper(paper, judgements, reference_rows), _items_by_paper(paper, judgements, rows)
    coverage = coverage_for_papers(human_items, model_items, judge, prefilter=prefilter)
    common["atomic"]["paired_with_human"] = paired_with_human(model_items, human_items)
    coverage.pop("per_pair", None)

    per_paper = []
    for side, kind in KINDS:
        model_labels: dict[Any, list] = defaultdict(list)
        expert: dict[Any, list] = defaultdict(list)
        for i in rows:
            model_labels[paper[i]].extend(judgements.labels.get((i, side), []))
        if expert_labels is None:
            for i in reference_rows:
                expert[paper[i]].extend(judgements.labels.get((i, side), []))
        else:
            for (paper_id, label_side), labels in expert_labels.items():
                if label_side == side:
                    expert[paper_id].extend(labels)
        for paper_id in sorted(set(model_labels) & set(expert), key=str):
            per_paper.append({"paper_id": paper_id, "kind": kind, "model": model_labels[paper_id],
                              "expert": expert[paper_id]})
    target_aspect = agreement_report(per_paper)
    generated = [judgements.labelled[i] for i in rows
                 if judgements.labelled[i] is not None and columns["source"][i] != HUMAN_SOURCE]
    target_aspect["llm_items"] = {"bullet_points": generated.count(BULLET_POINTS),
                                  "atomic_fallback": generated.count(ATOMIC_ITEMS)}

    return {
        "math_engagement": math,
        **common,
        **{key: value for key, value in coverage.items() if key.startswith("coverage_")},
        "coverage_judge_calls": coverage.get("judge_calls"),
        "coverage_invalid_answers": coverage.get("invalid_answers"),
        **({"coverage_prefilter": coverage["prefilter"]} if "prefilter" in coverage else {}),
        "target_aspect_f1": target_aspect.get("target_aspect_f1"),
        "target_aspect": target_aspect,
        "rejection_rate": rejection_rate([columns["recommendation"][i] for i in rows],
                                         [columns["decision"][i] for i in rows]),
    }


def _per_review_metrics(columns: dict, rows: Sequence[int], judgements: ReviewJudgements) -> dict[str, Any]:
    """The rule-based math detector beside the judge, and the atomic-item statistics."""
    items = [judgements.atomic[i] for i in rows if judgements.atomic[i] is not None]
    fidelity = [score for i in rows if judgements.atomic[i] is not None and judgements.atomic[i].valid
                for score in extraction_fidelity(judgements.atomic[i], columns["text"][i])]
    return {
        "target_aspect_distribution": {side: label_distribution([label for i in rows
                                                                 for label in judgements.labels.get((i, side), [])])
                                       for side, _ in KINDS},
        "math_engagement_rules": {**summarise(judgements.math_rules[i] for i in rows), "method": "rules"},
        "math_methods_agreement": method_agreement([judgements.math[i] for i in rows],
                                                   [judgements.math_rules[i] for i in rows]),
        "atomic": {
            "statistics": atomic_statistics(items, [columns["decision"][i] for i in rows
                                                    if judgements.atomic[i] is not None],
                                            [columns["venue"][i] for i in rows if judgements.atomic[i] is not None]),
            "overlap": overlap_summary(items),
            "fidelity_rouge_l": summarise(fidelity),
        },
    }


def _items_by_paper(paper_ids: Sequence[Any], judgements: ReviewJudgements,
                    rows: Sequence[int]) -> dict[Any, list[AtomicItems]]:
    """The extracted atomic items of the reviews at ``rows``, grouped by paper."""
    items: dict[Any, list[AtomicItems]] = defaultdict(list)
    for i in rows:
        if judgements.atomic[i] is not None:
            items[paper_ids[i]].append(judgements.atomic[i])
    return items


def second_judge_agreement(columns: dict, judgements: ReviewJudgements, first: Judge, second: Judge,
                           reference_rows: Sequence[int], progress: bool = False) -> dict[str, Any]:
    """Agreement of two judges on the same decisions: math engagement of every review,
    the target and the aspect of every labelled item (bullet points, or atomic items as the
    first judge extracted them), and every coverage pair. Cohen's kappa, Krippendorff's alpha
    and raw agreement for each."""
    texts = [columns["text"][i] for i in judgements.rows]
    second_math = [j.engages for j in judge_math_engagement(texts, second, progress=progress,
                                                            ids=[judgements.ids[i] for i in judgements.rows])]
    result: dict[str, Any] = {
        "judge": second.describe(),
        "math_engagement": two_judge_agreement([judgements.math[i] for i in judgements.rows], second_math),
    }
    for side, kind in KINDS:
        owners = [(i, number, item) for i in judgements.rows
                  for number, item in enumerate(judgements.labelled_items[(i, side)], 1)]
        # Labels were stored in this same review and item order when the first judge ran.
        first_labels = [label for i in judgements.rows for label in judgements.labels.get((i, side), [])]
        second_labels = label_items([item for _, _, item in owners], kind, second, progress=progress,
                                    ids=[f"{judgements.ids[i]}/{kind} {number}" for i, number, _ in owners])
        result[f"target_{kind}"] = two_judge_agreement([t for t, _ in first_labels], [t for t, _ in second_labels])
        result[f"aspect_{kind}"] = two_judge_agreement([a for _, a in first_labels], [a for _, a in second_labels])
    reference = set(reference_rows)
    _, pairs = review_pairs(_items_by_paper(columns["paper_id"], judgements, reference_rows),
                            _items_by_paper(columns["paper_id"], judgements,
                                            [i for i in judgements.rows if i not in reference]))
    decisions = [np.concatenate([m.yes.ravel() for m in judge_many(pairs, judge)]) if pairs else np.array([])
                 for judge in (first, second)]
    result["coverage_pairs"] = two_judge_agreement(decisions[0].tolist(), decisions[1].tolist())
    return result


JUDGEMENT_FEATURES = Features({
    "review_id": Value("string"),
    "paper_id": Value("string"),
    "source": Value("string"),
    "judge_model": Value("string"),
    "math_engages": Value("bool"),
    "math_rationale": Value("string"),
    "math_error": Value("string"),
    "math_raw": Value("string"),
    "math_rules": Value("bool"),
    "atomic_valid": Value("bool"),
    "atomic_error": Value("string"),
    "atomic_raw": Value("string"),
    "strengths": List(Value("string")),
    "weaknesses": List(Value("string")),
    "labelled": Value("string"),
    "labelled_strengths": List(Value("string")),
    "labelled_weaknesses": List(Value("string")),
    "strength_targets": List(Value("string")),
    "strength_aspects": List(Value("string")),
    "weakness_targets": List(Value("string")),
    "weakness_aspects": List(Value("string")),
})


def judgement_records(columns: dict, judgements: ReviewJudgements, judge: Judge) -> Dataset:
    """One row of :data:`JUDGEMENT_FEATURES` per review with text: what the judge decided, and where it
    failed why and what it said (``math_error``/``math_raw``, ``atomic_error``/``atomic_raw``, null
    otherwise; a label the judge could not give is null in the target and aspect lists). The targets and
    aspects are those of ``labelled_strengths`` / ``labelled_weaknesses``, which ``labelled`` names: the
    review's bullet points or its atomic items."""
    rows = []
    for i in judgements.rows:
        atomic = judgements.atomic[i]
        labels = {side: judgements.labels.get((i, side), []) for side, _ in KINDS}
        rows.append({
            "review_id": columns["review_id"][i], "paper_id": columns["paper_id"][i],
            "source": columns["source"][i], "judge_model": judge.backend.model,
            "math_engages": judgements.math[i], "math_rationale": judgements.math_rationale[i],
            "math_error": judgements.math_error[i], "math_raw": judgements.math_raw[i],
            "math_rules": judgements.math_rules[i],
            "atomic_valid": None if atomic is None else atomic.valid,
            "atomic_error": None if atomic is None else atomic.error,
            "atomic_raw": None if atomic is None else atomic.raw,
            "strengths": [] if atomic is None else atomic.strengths,
            "weaknesses": [] if atomic is None else atomic.weaknesses,
            "labelled": judgements.labelled[i],
            "labelled_strengths": judgements.labelled_items[(i, "strengths")],
            "labelled_weaknesses": judgements.labelled_items[(i, "weaknesses")],
            "strength_targets": [t for t, _ in labels["strengths"]],
            "strength_aspects": [a for _, a in labels["strengths"]],
            "weakness_targets": [t for t, _ in labels["weaknesses"]],
            "weakness_aspects": [a for _, a in labels["weaknesses"]],
        })
    if not rows:
        return Dataset.from_dict({name: [] for name in JUDGEMENT_FEATURES}, features=JUDGEMENT_FEATURES)
    return Dataset.from_list(rows, features=JUDGEMENT_FEATURES)
