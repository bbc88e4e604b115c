"""The target-aspect study's Table 2 (how well each LLM annotator agrees with the authors' labels), laid out from
``praib judge validate`` results of the ``target`` and ``aspect`` tasks: one per judge model and task, any number
together."""

from __future__ import annotations

from typing import Sequence

from praib.tables.layout import Cell, Table, label
from praib.tables.registry import Numbers, Result, TableSpec, table

PAPER = "Target-aspect"
TASKS = (("target", "Target"), ("aspect", "Aspect"))
DIGITS = 2  # Target-aspect Table 2 prints two decimals (a judge validation, no registered metric)


@table("ta-2", PAPER, 2, "Inter-rater reliability between the human annotations and each LLM annotator, for the "
       "target and the aspect", "validation", combines=True)
def table_2(spec: TableSpec, results: Sequence[Result]) -> Table:
    found: dict[str, dict[str, Result]] = {}
    repeated = []
    for result in results:
        model, task = result.data["judge_model"], result.data["task"]
        if task not in dict(TASKS):
            continue
        if task in found.setdefault(model, {}):
            repeated.append(f"{model} / {task}")
            continue
        found[model][task] = result
    out = spec.new(header=["Model", *(name for _, name in TASKS)],
                   sources=[r.path for r in results if r.data["task"] in dict(TASKS)])
    for model, by_task in sorted(found.items()):
        out.rows.append([label(model), *(Numbers(by_task[task]).cell("metrics", "cohen_kappa", "value", digits=DIGITS)
                                         if task in by_task else Cell(None) for task, _ in TASKS)])
    golds = sorted({r.data["gold"] for by_task in found.values() for r in by_task.values()})
    out.notes = [f"Cohen's κ between the judge's labels and the gold labels (gold: {', '.join(golds) or 'none'}); "
                 "the study reports its inter-rater reliability without naming the coefficient."]
    if repeated:
        out.notes.append(f"Found in several results, read from the first given: {', '.join(repeated)}.")
    lacking = [f"{model} / {task}" for model, by_task in sorted(found.items()) for task, _ in TASKS
               if task not in by_task]
    if lacking:
        out.needs.append(f"{', '.join(lacking)}: `praib judge validate --task TASK --gold GOLD --judge MODEL "
                         "--output validation.json`")
    if not found:
        out.needs.append("every cell: validations of the target and aspect tasks (`praib judge validate --task "
                         "target|aspect ... --output validation.json`)")
    return out
