"""The judged metrics of review groups, for ``praib evaluate --judge``.

Every review with text is judged once: math engagement (PRAIB Appendix K) and
atomic strengths/weaknesses (Appendix I; the human regime for human reviews, the
generated regime otherwise). Each atomic item then gets a target and an aspect
label (target-aspect agreement). Per group this gives:

* ``math_engagement``: share of engaging reviews; for a model group also P(+|+)
  and P(+|-) against the human reviews of the same papers;
* ``coverage_{recall,precision,density,compaction}_{strengths,weaknesses}``: how the
  group's atomic items cover the human items of the same paper (Appendix J);
* ``target_aspect_f1`` and ``target_aspect``: agreement of the group's
  (target, aspect) label sets with the human reviews' per paper;
* ``rejection_rate``: share of reject recommendations on rejected papers.

All calls go through one :class:`praib.judge.Judge`, normally behind the on-disk
call cache, so an interrupted judged run resumes and a re-run costs nothing.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Sequence

from .atomic import AtomicItems, extract_atomic
from .coverage import EmbeddingPrefilter, coverage_for_papers
from .judge import Judge
from .math_engagement import judge_math_engagement, math_engagement_summary
from .records import HUMAN_SOURCE
from .target_aspect import agreement_report, label_items, rejection_rate

KINDS = (("strengths", "strength"), ("weaknesses", "weakness"))


class ReviewJudgements:
    """Judgements of every review of an evaluation, indexed by row."""

    def __init__(self, columns: dict, judge: Judge, progress: bool = False):
        texts = columns["text"]
        rows = [i for i, text in enumerate(texts) if text and text.strip()]
        self.math = [None] * len(texts)
        for i, judgement in zip(rows, judge_math_engagement([texts[i] for i in rows], judge, progress=progress)):
            self.math[i] = judgement.engages
        self.atomic: list[AtomicItems | None] = [None] * len(texts)
        for regime, wanted in (("human", True), ("generated", False)):
            chosen = [i for i in rows if (columns["source"][i] == HUMAN_SOURCE) == wanted]
            for i, items in zip(chosen, extract_atomic([texts[i] for i in chosen], judge, regime, progress=progress)):
                self.atomic[i] = items
        # Labels per (row, kind): one batch per kind over every atomic item of every review.
        self.labels: dict[tuple[int, str], list[tuple[str | None, str | None]]] = {}
        self.invalid_labels = 0
        for side, kind in KINDS:
            owners = [(i, item) for i in rows if self.atomic[i] and self.atomic[i].valid
                      for item in self.atomic[i].side(side)]
            labelled = label_items([item for _, item in owners], kind, judge, progress=progress)
            self.invalid_labels += sum(labelled.invalid.values())
            for (i, _), label in zip(owners, labelled):
                self.labels.setdefault((i, side), []).append(label)


def group_judged_metrics(columns: dict, rows: Sequence[int], reference_rows: Sequence[int], is_reference: bool,
                         judgements: ReviewJudgements, judge: Judge,
                         prefilter: EmbeddingPrefilter | None = None) -> dict[str, Any]:
    """The judged metrics of the reviews at ``rows`` against the human reviews at ``reference_rows``."""
    paper = columns["paper_id"]
    if is_reference:
        summary = math_engagement_summary([paper[i] for i in rows], [HUMAN_SOURCE] * len(rows),
                                          [judgements.math[i] for i in rows])
        return {"math_engagement": summary["share"].get(HUMAN_SOURCE)}

    group_label = "group"
    both = list(rows) + list(reference_rows)
    summary = math_engagement_summary([paper[i] for i in both],
                                      [group_label] * len(rows) + [HUMAN_SOURCE] * len(reference_rows),
                                      [judgements.math[i] for i in both])
    math = {**summary["share"][group_label], **summary["conditional"].get(group_label, {}),
            "papers": summary["papers"], "skipped": summary["skipped_by_source"][group_label]}

    human_items: dict[Any, list[AtomicItems]] = defaultdict(list)
    for i in reference_rows:
        if judgements.atomic[i] is not None:
            human_items[paper[i]].append(judgements.atomic[i])
    generated_items: dict[Any, list[AtomicItems]] = defaultdict(list)
    for i in rows:
        if judgements.atomic[i] is not None:
            generated_items[paper[i]].append(judgements.atomic[i])
    coverage = coverage_for_papers(human_items, generated_items, judge, prefilter=prefilter)
    coverage.pop("per_pair", None)

    per_paper = []
    for side, kind in KINDS:
        model_labels: dict[Any, list] = defaultdict(list)
        expert_labels: dict[Any, list] = defaultdict(list)
        for i in rows:
            model_labels[paper[i]].extend(judgements.labels.get((i, side), []))
        for i in reference_rows:
            expert_labels[paper[i]].extend(judgements.labels.get((i, side), []))
        for paper_id in sorted(set(model_labels) & set(expert_labels), key=str):
            per_paper.append({"paper_id": paper_id, "kind": kind, "model": model_labels[paper_id],
                              "expert": expert_labels[paper_id]})
    target_aspect = agreement_report(per_paper)

    return {
        "math_engagement": math,
        **{key: value for key, value in coverage.items() if key.startswith("coverage_")},
        "coverage_judge_calls": coverage.get("judge_calls"),
        "coverage_invalid_answers": coverage.get("invalid_answers"),
        **({"coverage_prefilter": coverage["prefilter"]} if "prefilter" in coverage else {}),
        "target_aspect_f1": target_aspect.get("target_aspect_f1"),
        "target_aspect": target_aspect,
        "rejection_rate": rejection_rate([columns["recommendation"][i] for i in rows],
                                         [columns["decision"][i] for i in rows]),
    }
