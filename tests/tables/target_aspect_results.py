"""Result files for the target-aspect tables: a judged synthetic run whose (target, aspect) labels vary by item, so
every cell is known by hand; a result holding cells the paper prints; and the generic checks every table must pass."""

import json
import re
from pathlib import Path

from praib.evaluation.evaluate import evaluate_reviews
from praib.llm.judge import Judge
from praib.records import coerce_record, records_to_dataset
from praib.tables import load_result, make_tables
from tests.doubles import StubBackend
from tests.tables.checks import assert_cells_are_their_results

#: Each review's strengths and weaknesses as (target, aspect), and the model's recommendation. Papers p1 and p2
#: were rejected, p3 accepted. The hand computations in the tests start from this.
REVIEWS = {
    "human": {
        "p1": ([("Method", "Novelty"), ("Experiment", "Validity")], [("Experiment", "Validity"),
                                                                      ("Prior Research", "Novelty")], None),
        "p2": ([("Problem", "Impact")], [("Method", "Clarity"), ("Experiment", "Validity")], None),
        "p3": ([("Method", "Validity")], [("Theory", "Validity")], None),
    },
    "model-x": {
        "p1": ([("Method", "Novelty"), ("Method", "Validity"), ("Paper", "Clarity")], [("Experiment", "Validity")],
               "Reject"),
        "p2": ([("Method", "Impact")], [("Method", "Clarity"), ("Experiment", "Validity"), ("Paper", "Clarity")],
               "Accept"),
        "p3": ([("Method", "Validity")], [("Experiment", "Validity")], "Reject"),
    },
    "model-y": {
        "p1": ([("Experiment", "Validity")], [("Experiment", "Validity"), ("Prior Research", "Novelty")], "Reject"),
        "p2": ([("Problem", "Impact")], [("Experiment", "Validity")], "Reject"),
        "p3": ([("Method", "Validity")], [("Theory", "Validity")], "Accept"),
    },
}
DECISIONS = {"p1": "Reject", "p2": "Reject", "p3": "Accept"}

# An item names its own labels, so the stub judge can read them off whatever prompt shows the item.
ITEM = re.compile(r"\[(strength|weakness): ([^/\]]+) / ([^\]]+)\]")


def _item(kind: str, label: tuple) -> str:
    return f"[{kind}: {label[0]} / {label[1]}]"


def review_text(strengths, weaknesses, recommendation) -> str:
    """A review whose own bullet points are its items, as the judge extracts them too."""
    lines = ["**Summary:** A method.", "**Rating:** 3", "**Strengths:**", *(f"- {_item('strength', s)}" for s in strengths),
             "**Weaknesses:**", *(f"- {_item('weakness', w)}" for w in weaknesses)]
    if recommendation:
        lines.append(f"**Recommendation:** {recommendation}")
    return "\n".join(lines)


def labelling_answer(request):
    """A judge that extracts the items a review lists and labels each with the labels it names."""
    template, prompt = request.template, request.messages[-1][1]
    items = ITEM.findall(prompt)
    if template in ("judge:atomic_human", "judge:atomic_generated"):
        return json.dumps({side: [_item(kind, (target, aspect)) for kind, target, aspect in items if kind == one]
                           for side, one in (("strengths", "strength"), ("weaknesses", "weakness"))})
    if template.startswith("judge:target_"):
        return items[0][1]
    if template.startswith("judge:aspect_"):
        return items[0][2]
    if template == "judge:math_engagement":
        return json.dumps({"rationale": "r", "verdict": "no"})
    if template == "judge:coverage":
        return "no"
    raise AssertionError(f"unexpected judge template {template}")


def evaluate_target_aspect(folder: Path) -> Path:
    """`praib evaluate --judge` of :data:`REVIEWS`, written as the command writes it."""
    rows = []
    for source, papers in REVIEWS.items():
        for paper, (strengths, weaknesses, recommendation) in papers.items():
            row = {"review_id": f"{source}-{paper}", "paper_id": paper, "venue": "ICLR", "year": 2024,
                   "decision": DECISIONS[paper], "source": source,
                   "text": review_text(strengths, weaknesses, recommendation)}
            if source != "human":
                row.update(model=source, prompt="default")
            rows.append(coerce_record(row, "review", row["review_id"]))
    result = evaluate_reviews(records_to_dataset(rows), workers=1, judge=Judge(StubBackend(labelling_answer)))
    path = folder / "evaluate-target-aspect.json"
    path.write_text(json.dumps(result.to_dict()), encoding="utf-8")
    return path


def printed_result(folder: Path, target_aspect_by_model: dict, name: str = "printed.json") -> Path:
    """An evaluate result holding only the given ``target_aspect`` of each model (cells the paper prints)."""
    groups = [{"label": model, "group": {"source": model, "model": model, "prompt": None}, "is_reference": False,
               "target_aspect": target_aspect} for model, target_aspect in target_aspect_by_model.items()]
    data = {"groups": groups, "group_by": ["source", "model", "prompt"], "target_aspect_expert": "meta_reviews"}
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def check_tables(paths, keys) -> list:
    """The tables ``keys`` from the result files at ``paths``, each with rows and passing the shared check."""
    tables = make_tables([load_result(path) for path in paths], keys)
    assert all(table.rows for table in tables), [table.key for table in tables if not table.rows]
    assert_cells_are_their_results(tables)
    return tables
