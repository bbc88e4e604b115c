"""The target-aspect study's Table 2 (each LLM annotator against the authors' labels) from `praib judge validate`
results of two stub judges whose answers are known by hand."""

import json
import re

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.tables import load_result, make_tables
from tests.doubles import StubBackend
from tests.tables.checks import assert_cells_are_their_results

# (id, gold label, what judge-a answers, what judge-b answers), per task. Judge a is right on every target and on
# 3 of 4 aspects; judge b is validated on the targets only, 2 of 4 right.
ITEMS = {"target": [("t1", "Method", "Method", "Method"), ("t2", "Experiment", "Experiment", "Method"),
                    ("t3", "Theory", "Theory", "Theory"), ("t4", "Paper", "Paper", "Method")],
         "aspect": [("a1", "Clarity", "Clarity", None), ("a2", "Novelty", "Novelty", None),
                    ("a3", "Validity", "Validity", None), ("a4", "Impact", "Clarity", None)]}


@pytest.fixture(scope="module")
def validations(tmp_path_factory):
    folder = tmp_path_factory.mktemp("validations")
    monkeypatch = pytest.MonkeyPatch()
    outputs = []
    try:
        for judge, column, tasks in (("judge-a", 2, ("target", "aspect")), ("judge-b", 3, ("target",))):
            answers = {item: row[column] for rows in ITEMS.values() for row in rows for item in [row[0]]}
            stub = StubBackend(lambda request: answers[re.search(r"Item (\w+)\.", request.messages[-1][1]).group(1)],
                               model=judge)
            monkeypatch.setattr("praib.llm.judge.make_backend", lambda kind, model, stub=stub, **options: stub)
            for task in tasks:
                gold = folder / f"{task}.jsonl"
                gold.write_text("".join(json.dumps({"id": i, "task": task, "kind": "weakness", "text": f"Item {i}.",
                                                    "label": label}) + "\n" for i, label, _, _ in ITEMS[task]))
                output = folder / f"{judge}-{task}.json"
                result = CliRunner().invoke(main, ["judge", "validate", "--task", task, "--gold", str(gold), "--judge",
                                                   judge, "--cache-dir", str(folder / "cache"), "-o", str(output),
                                                   "--bootstrap-resamples", "20", "--no-progress"])
                assert result.exit_code == 0, result.output
                outputs.append(output)
    finally:
        monkeypatch.undo()
    return [load_result(path) for path in outputs]


def test_table_2_kappa_per_annotator_model_and_task(validations):
    (table,) = make_tables(validations, ["ta-2"])
    assert table.header == ["Model", "Target", "Aspect"]
    rows = {row[0].text(): [cell.text() for cell in row[1:]] for row in table.rows}
    # judge-a: every target right (kappa 1); aspects 3 of 4 with gold {C, N, V, I} and answers {C, N, V, C}:
    # p_o = 3/4, p_e = (1*2 + 1*1 + 1*1 + 1*0) / 16 = 1/4, kappa = (3/4 - 1/4) / (3/4) = 2/3.
    # judge-b: targets gold {M, E, T, P}, answers {M, M, T, M}: p_o = 2/4, p_e = (1*3 + 1*1) / 16 = 1/4, kappa 1/3.
    assert rows == {"judge-a": ["1.00", "0.67"], "judge-b": ["0.33", "—"]}
    assert table.needs == ["judge-b / aspect: `praib judge validate --task TASK --gold GOLD --judge MODEL --output "
                           "validation.json`"]
    assert assert_cells_are_their_results([table]) == 3
