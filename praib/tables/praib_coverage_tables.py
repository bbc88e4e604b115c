"""PRAIB's coverage tables (Tables 2, 29 and 30), laid out from a judged ``praib evaluate`` result.

The model columns (Table 2) or rows (Tables 29, 30) are the model groups of the extended prompt (every model group
when the evaluation has no such prompt); the aggregate ("Model Avg.", "Mean", "Std") is the result's
``across_models`` entry of that prompt: the mean and standard deviation over the models of each model's mean and
standard deviation.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from praib.metrics.registry import BY_NAME
from praib.tables.layout import Cell, Table, joined, label
from praib.tables.praib_tables import EXTENDED, JUDGE_NEEDED, Groups, _one_prompt_note
from praib.tables.registry import Result, TableSpec, table

PAPER = "PRAIB"
SIDES = (("strengths", "strength", "Strength Dimension"), ("weaknesses", "weakness", "Weakness Dimension"))
#: The coverage statistics of Tables 29 and 30, in their column order, with the paper's column names.
STATISTICS = (("recall", "Recall"), ("precision", "Prec."), ("density", "Density"), ("compaction", "Compact."))
# PRAIB Tables 2, 29 and 30 print two decimals, as the registry's table column does for coverage recall.
DIGITS = BY_NAME["coverage_recall_strengths"].table_digits


def _prompt(groups: Groups) -> str | None:
    """The ``across_models`` prompt the model columns are of: extended where the groups have it, else the one
    prompt the models share ("all" when they have none)."""
    across = groups.result.data.get("across_models") or {}
    if EXTENDED in across and any(g["group"].get("prompt") == EXTENDED for _, g in groups.models()):
        return EXTENDED
    return next(iter(across)) if len(across) == 1 else None


def _mean_sd(groups: Groups, index: int, *path: str) -> Cell:
    return joined(groups.cell(index, *path, "mean", digits=DIGITS), groups.cell(index, *path, "std", digits=DIGITS),
                  separator=" ± ")


def _across(groups: Groups, prompt: str | None, metric: str, stat: str, of: str) -> Cell:
    """``stat`` (mean, std) over the models of their ``of`` (mean, std) of ``metric``."""
    if prompt is None:
        return Cell(None)
    return groups.numbers.cell("across_models", prompt, metric, of, stat, digits=DIGITS)


@table("praib-2", PAPER, 2, "Coverage (atomic recall) and item counts for strengths and weaknesses, per model, "
       "their average and the human baseline", "evaluate")
def table_2(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = Groups(results[0])
    models = groups.named()
    reference = groups.reference
    prompt = _prompt(groups)
    out = spec.new(header=["Metric", *(name for _, _, name in models), "Model Avg.", "Human"],
                   sources=[groups.result.path])
    for side, kind, heading in SIDES:
        out.rows.append([label(heading), *[label("")] * (len(models) + 2)])
        recall, count = f"coverage_recall_{side}", f"atomic_{kind}_count"
        out.rows.append([label("Atomic Recall"), *(_mean_sd(groups, index, recall) for index, _, _ in models),
                         joined(_across(groups, prompt, recall, "mean", "mean"),
                                _across(groups, prompt, recall, "mean", "std"), separator=" ± "),
                         label("—")])
        count_path = ("atomic", "statistics", "all", f"{kind}_count")
        out.rows.append([label("Count"), *(_mean_sd(groups, index, *count_path) for index, _, _ in models),
                         joined(_across(groups, prompt, count, "mean", "mean"),
                                _across(groups, prompt, count, "mean", "std"), separator=" ± "),
                         Cell(None) if reference is None else _mean_sd(groups, reference[0], *count_path)])
    out.notes = _one_prompt_note(groups, EXTENDED) + [
        "Atomic Recall: per model review, the share of the human atomic items of the same paper that some item of "
        "the review covers (the coverage judge), mean ± SD over the reviews; Count: atomic items per review. Model "
        "Avg.: the mean over the models of their means ± the mean of their SDs. Human recall: not applicable."]
    if not groups.judged():
        out.needs.append(f"every cell: {JUDGE_NEEDED}")
    elif reference is None:
        out.needs.append("Human: human reviews in the evaluation (the reference)")
    return out


def _coverage_table(spec: TableSpec, results: Sequence[Result], side: str) -> Table:
    groups = Groups(results[0])
    models = groups.named()
    prompt = _prompt(groups)
    out = spec.new(header=["Model", *(stat for _ in STATISTICS for stat in ("μ", "σ"))],
                   header_groups=[("", 1), *((name, 2) for _, name in STATISTICS)], sources=[groups.result.path])
    for index, _, name in models:
        out.rows.append([label(name), *(groups.cell(index, f"coverage_{stat}_{side}", of, digits=DIGITS)
                                        for stat, _ in STATISTICS for of in ("mean", "std"))])
    _bold_best(out, [1 + 2 * i for i, (stat, _) in enumerate(STATISTICS) if stat in ("recall", "precision")])
    for row_name, stat in (("Mean", "mean"), ("Std", "std")):
        out.rows.append([label(row_name), *(_across(groups, prompt, f"coverage_{name}_{side}", stat, of)
                                            for name, _ in STATISTICS for of in ("mean", "std"))])
    out.notes = _one_prompt_note(groups, EXTENDED) + [
        f"Per model, over its reviews (mean μ, SD σ): Recall, the share of the human {side} of the same paper that "
        f"some generated item covers; Prec., the share of generated {side} that match some human item; Density, "
        "generated items per human item; Compact., human items per generated item. Mean, Std: over the models, of "
        "each column. Bold: best recall and precision."]
    if not groups.judged():
        out.needs.append(f"every cell: {JUDGE_NEEDED}")
    return out


def _bold_best(out: Table, columns: Sequence[int]) -> None:
    """Marks the highest value of each of ``columns`` bold (every one that ties)."""
    for column in columns:
        values = [row[column].value for row in out.rows if isinstance(row[column].value, (int, float))]
        if not values:
            continue
        best = max(values)
        for row in out.rows:
            if row[column].value == best:
                row[column] = replace(row[column], bold=True)


@table("praib-29", PAPER, 29, "Weakness coverage statistics per model and aggregated (mean ± std)", "evaluate")
def table_29(spec: TableSpec, results: Sequence[Result]) -> Table:
    return _coverage_table(spec, results, "weaknesses")


@table("praib-30", PAPER, 30, "Strength coverage statistics per model and aggregated (mean ± std)", "evaluate")
def table_30(spec: TableSpec, results: Sequence[Result]) -> Table:
    return _coverage_table(spec, results, "strengths")
