"""Adding a per-review text metric is its function and its registry entry: a toy metric registered in a
temporary registry is computed, kept and reported by every consumer with no other file changed:
``praib evaluate``'s JSON and table (streamed, with its per-review Parquet, and in memory), the leaderboard's
rows, its report, its comparisons and ``praib tables``. The expected numbers are counted by hand."""

from __future__ import annotations

import json
import math
import re

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.evaluation.evaluate import evaluate_reviews
from praib.metrics.registry import (BY_NAME, DIFFERENCE, METRICS, PER_REVIEW, Metric, TextFunction, kept_columns,
                                    registered, text_metrics)
from praib.records import load_records

HEDGES = re.compile(r"\b(?:may|might|perhaps|possibly)\b", re.IGNORECASE)


def count_hedges(text: str) -> int:
    """The toy metric: hedging words in a review."""
    return len(HEDGES.findall(text))


TOY = Metric("hedges", "specificity", "Hedges", 2, DIFFERENCE, PER_REVIEW, False, "hedging words", "a toy",
             compute=TextFunction(count_hedges, count=True))

#: (source, paper, text, rating, confidence); the hedges of each text counted by hand in the comment.
REVIEWS = [
    ("human", "p1", "The method may work. It might fail on larger data.", 6, 3),     # 2
    ("human", "p1", "The results are convincing and the writing is clear.", 8, 4),  # 0
    ("human", "p2", "Perhaps the proof is incomplete in the appendix.", 3, 4),       # 1
    ("human", "p2", "Possibly a strong paper. It may be accepted.", 5, 3),            # 2
    ("model-a", "p1", "This may be fine for the venue.", 6, 4),                        # 1
    ("model-a", "p2", "It is good work with solid experiments.", 8, 5),               # 0
    ("model-b", "p1", "The approach may, might or perhaps will help.", 5, 3),         # 3
    ("model-b", "p2", "Clear and thorough.", 3, 4),                                   # 0
]
HUMAN, MODEL_A, MODEL_B = [2, 0, 1, 2], [1, 0], [3, 0]


def _record(number: int, source: str, paper: str, text: str, rating: int, confidence: int) -> dict:
    record = {"review_id": f"r{number}", "paper_id": paper, "venue": "ICLR", "year": 2025, "decision": "accept",
              "source": source, "text": text, "rating": rating, "confidence": confidence}
    if source != "human":
        record.update(model=source, prompt="extended")
    return record


@pytest.fixture
def inputs(tmp_path):
    records = [_record(i, *review) for i, review in enumerate(REVIEWS)]
    (tmp_path / "reviews.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "reference.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records
                                                      if r["source"] == "human"))
    for name in ("model-a", "model-b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "reviews.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records if r["source"] == name))
        (folder / "manifest.json").write_text(json.dumps({"model": name, "backend": "hand-written",
                                                          "prompts": ["extended"], "sampling": {"temperature": 0.0},
                                                          "date": "2026-01-05"}))
    return tmp_path


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _sample_std(values: list[int]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def test_the_temporary_registry_adds_the_metric_and_restores_the_registry():
    before = list(METRICS)
    with registered(TOY):
        assert BY_NAME["hedges"] is TOY and text_metrics()[-1] == "hedges"
        assert kept_columns()[-1].name == "hedges" and kept_columns()[-1].count
    assert METRICS == before and "hedges" not in BY_NAME and "hedges" not in text_metrics()


def test_evaluate_writes_computes_and_prints_the_toy_metric(inputs):
    with registered(TOY):
        # Without a judge, evaluate streams: every batch scored, folded into a partial and written per review.
        printed = _invoke("evaluate", str(inputs / "reviews.jsonl"), "--workers", "1", "--no-progress",
                          "--output", str(inputs / "results.json"), "--per-review", str(inputs / "per-review"))
        in_memory = evaluate_reviews(load_records(inputs / "reviews.jsonl"), workers=1)
        assert in_memory.reference.hedges.mean == 1.25 and in_memory.group("model-b/extended").value("hedges") == 1.5
    groups = {g["label"]: g for g in json.loads((inputs / "results.json").read_text())["groups"]}
    assert groups["human"]["hedges"] == {"mean": 1.25, "std": pytest.approx(_sample_std(HUMAN)), "n": 4}
    assert groups["model-a/extended"]["hedges"] == {"mean": 0.5, "std": pytest.approx(_sample_std(MODEL_A)), "n": 2}
    assert groups["model-b/extended"]["hedges"]["mean"] == 1.5
    # The keys of the built-in metrics stay where they were, the new one after them.
    assert list(groups["human"])[7:14] == ["tkc", "ttr", "fre", "fkg", "xref", "citations", "hedges"]
    lines = printed.splitlines()
    assert lines[0].split()[-3:] == ["Hedges", "α", "ICLR"]
    assert lines[2].startswith("human (reference)") and "1.25 ± 0.96" in lines[2]
    assert "TKC/TTR/FRE/FKG/Cit./Xref./Hedges: mean ± std per review." in printed
    table = pq.read_table(inputs / "per-review")
    assert str(table.schema.field("hedges").type) == "int32"
    assert dict(zip(table["review_id"].to_pylist(), table["hedges"].to_pylist())) == {
        f"r{i}": count for i, count in enumerate(HUMAN[:2] + HUMAN[2:] + MODEL_A + MODEL_B)}


def test_the_leaderboard_its_report_and_praib_tables_show_the_toy_metric(inputs):
    results = inputs / "results"
    with registered(TOY):
        _invoke("leaderboard", "run", str(inputs / "model-a"), str(inputs / "model-b"), "--reference",
                str(inputs / "reference.jsonl"), "--n-bootstrap", "20", "--workers", "1", "--no-progress",
                "--output", str(results))
        _invoke("leaderboard", "report", str(results), "--output", str(inputs / "report.html"),
                "--markdown", str(inputs / "report.md"))
        tables = _invoke("tables", str(results), "--table", "leaderboard-ranks", "--table", "leaderboard-comparisons")
    rows = {(r["submission"], r["venue"]): r for r in map(json.loads, (results / "results.jsonl").read_text()
                                                          .splitlines()) if r["metric"] == "hedges"}
    assert rows[("human", "all")]["value"] == 1.25
    a, b = rows[("model-a", "all")], rows[("model-b", "all")]
    assert (a["value"], a["distance_to_human"]) == (0.5, 0.75) and (b["value"], b["distance_to_human"]) == (1.5, 0.25)
    assert b["closest_to_human"] and not a["closest_to_human"]
    report = (inputs / "report.md").read_text()
    other = report[report.index("## Other metrics"):]
    assert "| Submission | Hedges | Δ Hedges |" in other and "**1.50" in other
    assert "Hedges" in tables.split("Rank of each submission")[1].splitlines()[2]
    assert any(line.startswith("| Hedges | model-a | model-b |") for line in tables.splitlines())
