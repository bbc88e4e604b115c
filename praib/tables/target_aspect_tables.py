"""The target-aspect agreement study's tables (Tables 3, 4, 5 and 7-12), laid out from a judged ``praib evaluate``.

The study ("Automatically Evaluating the Paper Reviewing Capability of Large Language Models") labels every
strength and weakness with a target (which part of the paper) and an aspect (which quality of it) and
compares each model's labels with the experts' per paper. ``praib evaluate --judge`` writes, per model
group, ``target_aspect`` (:func:`praib.metrics.judged.target_aspect.agreement_report`: ``overall``,
``by_kind``, ``by_target``, ``by_aspect``, ``by_kind_target``, ``by_kind_aspect``) and ``rejection_rate``;
these tables only lay those numbers out. Models are the paper's rows (Tables 3, 5, 7-12) or columns
(Table 4); the human reference group is the experts' side, so it has no row of its own.
"""

from __future__ import annotations

from typing import Sequence

from praib.metrics.judged.target_aspect import ASPECTS, TARGETS
from praib.tables.layout import Cell, Table, joined, label
from praib.tables.praib_tables import Groups, model_name
from praib.tables.registry import Result, TableSpec, table

PAPER = "Target-aspect"
#: The paper's columns, in its order (Tables 7-12); Table 4 prints a few of them.
PAPER_TARGETS = ("Problem", "Prior Research", "Method", "Theory", "Experiment", "Conclusion", "Paper")
PAPER_ASPECTS = ("Novelty", "Impact", "Validity", "Clarity")
TABLE_4_TARGETS = ("Problem", "Method", "Theory", "Experiment")
KIND_NAMES = {"strength": "strengths", "weakness": "weaknesses"}
MEASURES = (("F1", "f1"), ("Prec", "precision"), ("Rec", "recall"))

NO_JUDGE = ("add `--judge MODEL` to `praib evaluate` (and `--meta-reviews META_REVIEWS` for the paper's expert "
            "side, each paper's restructured meta-review)")
HOW_COUNTED = ("Each item (a strength or weakness) has one target and one aspect, labelled by the run's judge; a "
               "paper's label set is the set of distinct labels of its items of one kind.")
LABEL_CELLS = ("A cell scores the presence of the label: per paper, whether the model's and the experts' items of "
               "that kind name it; precision = papers where both do / papers where the model does, recall = the "
               "same / papers where the experts do, F1 = 2PR/(P+R), over the papers where either side names it.")
BOTH_KINDS = "Over both kinds, each of F1, precision and recall is the mean of its strength and weakness cells."
UNDEFINED = ("a label that neither side names in any paper: reviews that name it (without any, its precision and "
             "recall are undefined)")


class Models:
    """The model groups of one ``praib evaluate`` result, each with the name its row or column shows."""

    def __init__(self, result: Result):
        self.groups = Groups(result)
        self.result = result
        self.all = self.groups.models()
        names = [model_name(group) for _, group in self.all]
        # Model names repeat when the run is grouped by more than the model (e.g. by prompt): the group's label then.
        self.names = {index: (name if names.count(name) == 1 else str(group["label"]))
                      for (index, group), name in zip(self.all, names)}

    def cell(self, index: int, *path, **printed) -> Cell:
        return self.groups.cell(index, *path, **printed)

    @property
    def judged(self) -> bool:
        return "target_aspect_expert" in self.result.data

    def new(self, spec: TableSpec, header: list[str], **fields) -> Table:
        return spec.new(header=header, sources=[self.result.path], notes=[expert_note(self.result.data)], **fields)


def expert_note(data: dict) -> str:
    """Which expert side the run compared with (``target_aspect_expert``), said in every table's notes."""
    expert = data.get("target_aspect_expert")
    if expert == "meta_reviews":
        return ("Expert side: each paper's meta-review, restructured into strengths and weaknesses by the paper's "
                "three-step chain (`--meta-reviews`), as in the paper.")
    if expert == "human_reviews":
        return ("Expert side: the human reviews of each paper; the paper compares with its restructured meta-review "
                "instead (add `--meta-reviews META_REVIEWS` to `praib evaluate --judge`).")
    return "Expert side: none, the run had no judge."


def _items_note(models: Models) -> list[str]:
    """How many model items were labelled, where the result says (``target_aspect.llm_items``)."""
    counts = [(models.names[index], group["target_aspect"]["llm_items"]) for index, group in models.all
              if isinstance(group.get("target_aspect"), dict) and "llm_items" in group["target_aspect"]]
    if not counts:
        return []
    return ["Model items labelled: " + "; ".join(f"{name} {count}" for name, count in counts) + "."]


def _needs(out: Table, models: Models, undefined: str = UNDEFINED) -> None:
    """What fills the table's empty cells: a judge, or (in a judged run) what ``undefined`` says."""
    if not models.judged:
        out.needs.append(f"every cell: {NO_JUDGE}")
    elif any(cell.missing for cell in out.cells()):
        out.needs.append(undefined)


@table("ta-3", PAPER, 3, "Overall agreement of the (target, aspect) sets of model and expert strengths and "
       "weaknesses", "evaluate")
def table_3(spec: TableSpec, results: Sequence[Result]) -> Table:
    models = Models(results[0])
    out = models.new(spec, header=["Model", *(["F1", "Precision", "Recall"] * 3)],
                     header_groups=[("", 1), ("Overall", 3), ("Strength", 3), ("Weakness", 3)])
    for index, _ in models.all:
        where = [("target_aspect", "overall"), *(("target_aspect", "by_kind", kind) for kind in KIND_NAMES)]
        out.rows.append([label(models.names[index]),
                         *(models.cell(index, *path, key, digits=3)  # Target-aspect Table 3
                           for path in where for _, key in MEASURES)])
    # The paper orders the models by overall F1, best first.
    out.rows.sort(key=lambda row: (row[1].missing, -(row[1].value or 0)))
    out.notes += [HOW_COUNTED + " Overall compares sets of (kind, target, aspect), so a strength never matches a "
                  "weakness. Precision = Σ shared labels / Σ model labels, recall = Σ shared labels / Σ expert "
                  "labels, summed over the papers either side labelled, and F1 = 2PR/(P+R) of those (the mean of "
                  "the per-paper values is in the JSON as `per_paper_mean`). Rows: by overall F1, highest first, as in the paper."]
    out.notes += _items_note(models)
    _needs(out, models, "models with no paper in common with the expert side: expert and model reviews of the "
                        "same papers (the same `paper_id`)")
    return out


@table("ta-4", PAPER, 4, "F1 per target and aspect, over both kinds and as strength/weakness", "evaluate")
def table_4(spec: TableSpec, results: Sequence[Result]) -> Table:
    models = Models(results[0])
    out = models.new(spec, header=["Target / aspect", *models.names.values()])
    for part, kind_part, names in (("by_target", "by_kind_target", TABLE_4_TARGETS),
                                   ("by_aspect", "by_kind_aspect", PAPER_ASPECTS)):
        for name in names:
            out.rows.append([label(name), *(models.cell(index, "target_aspect", part, name, "f1",
                                                        digits=2)  # Target-aspect Table 4
                                            for index, _ in models.all)])
            out.rows.append([label(f"{name}: strength/weakness"),
                             *(joined(*(models.cell(index, "target_aspect", kind_part, kind, name, "f1",
                                                    digits=2)  # Target-aspect Table 4
                                        for kind in KIND_NAMES))
                               for index, _ in models.all)])
    out.notes += [HOW_COUNTED + " " + LABEL_CELLS + " " + BOTH_KINDS + " Columns: every model of the run (the paper "
                  "prints three); rows: the paper's targets and aspects, the rest are in Tables 7-12 (ta-7 ... ta-12)."]
    out.notes += _items_note(models)
    _needs(out, models)
    return out


@table("ta-5", PAPER, 5, "Rejection percentage by model (papers the venue rejected; 100% is best)", "evaluate")
def table_5(spec: TableSpec, results: Sequence[Result]) -> Table:
    models = Models(results[0])
    out = models.new(spec, header=["Model", "Rejection (%)"])
    for index, _ in models.all:
        rate = models.cell(index, "rejection_rate", "rate")
        out.rows.append([label(models.names[index]),
                         Cell(rate.value, rate.source, digits=2, scale=100)])  # Target-aspect Table 5: percent
    out.rows.sort(key=lambda row: (row[1].missing, -(row[1].value or 0)))
    out.notes += ["The share of the model's reviews recommending rejection among its reviews of papers the venue "
                  "rejected (the records' `decision`); a review without a readable recommendation (Accept or "
                  "Reject) is left out (`rejection_rate.unparsed` counts them). Rows: by rejection, highest first."]
    _needs(out, models, "models without a rate: their reviews of rejected papers need a recommendation praib can "
                        "read (a final Accept or Reject, e.g. `Final judgement: Reject`), and the papers a `decision`")
    return out


def _appendix_table(spec: TableSpec, results: Sequence[Result], part: Sequence[str], labels: Sequence[str],
                    title: str) -> Table:
    """Tables 7-12: one row per metric and model (F1, then precision, then recall), one column per label."""
    models = Models(results[0])
    out = models.new(spec, header=[title, *labels])
    for short, key in MEASURES:
        for index, _ in models.all:
            out.rows.append([label(f"{short} ({models.names[index]})"),
                             *(models.cell(index, "target_aspect", *part, name, key, digits=3)  # Tables 7-12
                               for name in labels)])
    praib_only = [name for name in (TARGETS if labels == PAPER_TARGETS else ASPECTS) if name not in labels]
    how = BOTH_KINDS if len(part) == 1 else f"Items of one kind: the {KIND_NAMES[part[1]]}."
    out.notes += [f"{HOW_COUNTED} {LABEL_CELLS} {how} The paper's table leaves out praib's other labels "
                  f"({', '.join(praib_only)}); they are in the JSON."]
    out.notes += _items_note(models)
    _needs(out, models)
    return out


@table("ta-7", PAPER, 7, "F1, precision and recall per target, strengths and weaknesses", "evaluate")
def table_7(spec: TableSpec, results: Sequence[Result]) -> Table:
    return _appendix_table(spec, results, ("by_target",), PAPER_TARGETS, "Target")


@table("ta-8", PAPER, 8, "F1, precision and recall per target, strengths", "evaluate")
def table_8(spec: TableSpec, results: Sequence[Result]) -> Table:
    return _appendix_table(spec, results, ("by_kind_target", "strength"), PAPER_TARGETS, "Target")


@table("ta-9", PAPER, 9, "F1, precision and recall per target, weaknesses", "evaluate")
def table_9(spec: TableSpec, results: Sequence[Result]) -> Table:
    return _appendix_table(spec, results, ("by_kind_target", "weakness"), PAPER_TARGETS, "Target")


@table("ta-10", PAPER, 10, "F1, precision and recall per aspect, strengths and weaknesses", "evaluate")
def table_10(spec: TableSpec, results: Sequence[Result]) -> Table:
    return _appendix_table(spec, results, ("by_aspect",), PAPER_ASPECTS, "Aspect")


@table("ta-11", PAPER, 11, "F1, precision and recall per aspect, strengths", "evaluate")
def table_11(spec: TableSpec, results: Sequence[Result]) -> Table:
    return _appendix_table(spec, results, ("by_kind_aspect", "strength"), PAPER_ASPECTS, "Aspect")


@table("ta-12", PAPER, 12, "F1, precision and recall per aspect, weaknesses", "evaluate")
def table_12(spec: TableSpec, results: Sequence[Result]) -> Table:
    return _appendix_table(spec, results, ("by_kind_aspect", "weakness"), PAPER_ASPECTS, "Aspect")
