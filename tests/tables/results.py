"""Result files for the table tests: each kind praib writes, from the demo data and from a synthetic judged run,
written to disk as the commands write them, so the tables are built from files as a user's would be."""

import json
from pathlib import Path

from praib.evaluation.evaluate import evaluate_reviews
from praib.llm.judge import Judge
from praib.records import load_records
from praib.tables import load_result
from tests.evaluation.predictable_judge import predictable_judge
from tests.paths import ROOT

DEMO = ROOT / "praib" / "data" / "demo"


def write(folder: Path, name: str, data) -> Path:
    """``data`` (a typed result with ``to_dict()``, or its JSON) written as the command would write it."""
    path = folder / name
    path.write_text(json.dumps(data.to_dict() if hasattr(data, "to_dict") else data), encoding="utf-8")
    return path


def evaluate_demo(folder: Path) -> Path:
    """`praib evaluate --demo`'s result."""
    return write(folder, "evaluate-demo.json", evaluate_reviews(load_records(DEMO / "reviews.jsonl", "review"),
                                                                workers=1).to_dict())


def evaluate_judged(folder: Path) -> Path:
    """The demo reviews judged by a judge whose answers are known by hand (a synthetic judged run)."""
    result = evaluate_reviews(load_records(DEMO / "reviews.jsonl", "review"), workers=1,
                              judge=Judge(predictable_judge()))
    return write(folder, "evaluate-judged.json", result.to_dict())


def all_results(folder: Path) -> list:
    return [load_result(path) for path in (evaluate_demo(folder), evaluate_judged(folder))]
