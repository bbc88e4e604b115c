"""`praib judge validate`: a stub judge through the real command (backend factory, call cache, failure
records, the store), and the real DISAPERE release where the shared data folder has it."""

import json

import pytest
from click.testing import CliRunner

from praib.cli import judge as judge_cli
from praib.cli.main import main
from praib.llm.failures import EXIT_FAILED_ITEMS, read_failures
from praib.metrics.judged.validation import TASKS, ValidationResult, find_validation
from tests.doubles import StubBackend
from tests.paths import SHARED_DATA

# Eight passages: the judge gets 5 right, two wrong (p3, p8) and one unreadable (p6).
ITEMS = [("p1", "strength", "strength"), ("p2", "strength", "strength"), ("p3", "strength", "weakness"),
         ("p4", "weakness", "weakness"), ("p5", "weakness", "weakness"), ("p6", "weakness", "no idea"),
         ("p7", "weakness", "weakness"), ("p8", "weakness", "strength")]


@pytest.fixture
def backend(monkeypatch):
    def answer(request):
        return next(a for i, _, a in ITEMS if f"Passage {i}." in request.messages[-1][1])

    stub = StubBackend(answer, model="stub-judge", model_revision="rev7")
    monkeypatch.setattr("praib.llm.judge.make_backend", lambda kind, model, **options: stub)
    return stub


@pytest.fixture
def gold(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps({"id": i, "task": "polarity", "text": f"Passage {i}.", "label": g}) + "\n"
                            for i, g, _ in ITEMS))
    return path


def _validate(gold, tmp_path, *extra):
    return CliRunner().invoke(main, ["judge", "validate", "--task", "polarity", "--gold", str(gold), "--judge",
                                     "stub-judge", "--cache-dir", str(tmp_path / "cache"), "--bootstrap-resamples",
                                     "100", "--no-progress", *extra])


def test_validate_prints_writes_and_stores_the_result(backend, gold, tmp_path):
    output = tmp_path / "out" / "validation.json"
    result = _validate(gold, tmp_path, "-o", str(output))
    assert result.exit_code == EXIT_FAILED_ITEMS, result.output  # one item failed: recorded, run finished
    assert "accuracy                     0.625" in result.output
    assert "majority class (weakness)  0.625" in result.output
    assert "accuracy is not above the majority class's 0.625 (always 'weakness')" in result.output
    saved = ValidationResult.from_dict(json.loads(output.read_text()))
    assert (saved.judge_model, saved.judge_revision, saved.gold, saved.gold_size) == ("stub-judge", "rev7",
                                                                                      "gold.jsonl", 8)
    assert saved.counts["failed"] == 1 and saved.bootstrap["resamples"] == 100
    errors = [json.loads(line) for line in (output.parent / "validation.json.errors.jsonl").read_text().splitlines()]
    assert [(e["id"], e["judge"], e["raw"]) for e in errors] == [("p3", "weakness", "weakness"),
                                                                 ("p6", None, "no idea"), ("p8", "strength", "strength")]
    [failure] = read_failures(output.parent / "validation.json.failures.jsonl")
    assert (failure.item_id, failure.raw) == ("p6/polarity", "no idea")
    description = {"model": "stub-judge", "model_revision": "rev7", "backend": "stub"}
    assert find_validation(description, "polarity", tmp_path / "cache") == saved
    assert "Stored as " + str(tmp_path / "cache" / "validations" / "polarity") in result.output


def test_a_rerun_asks_only_what_failed_and_limit_cuts_the_gold_set(backend, gold, tmp_path):
    _validate(gold, tmp_path)
    asked = len(backend.requests)
    again = _validate(gold, tmp_path, "--limit", "3")
    assert len(backend.requests) == asked  # p1-p3 come from the call cache
    assert again.exit_code == 0, again.output
    assert "Gold: gold.jsonl" in again.output and "3 items" in again.output
    assert "accuracy                     0.667" in again.output


def test_validate_needs_a_task_gold_labels_and_a_judge(gold, tmp_path):
    for missing, message in ((["--gold", str(gold), "--judge", "m"], "give --task"),
                             (["--task", "math", "--judge", "m"], "give the human labels: --gold FILE"),
                             (["--task", "math", "--gold", str(gold)], "this command needs a judge")):
        result = CliRunner().invoke(main, ["judge", "validate", *missing])
        assert result.exit_code == 2 and message in result.output


def test_the_commands_task_list_is_the_librarys():
    assert judge_cli.TASKS == TASKS


@pytest.mark.skipif(not (SHARED_DATA / "disapere").exists(), reason="the DISAPERE release is not in the shared "
                                                                    "data folder")
def test_disapere_through_the_command(tmp_path, monkeypatch):
    stub = StubBackend(["weakness"])
    monkeypatch.setattr("praib.llm.judge.make_backend", lambda kind, model, **options: stub)
    result = CliRunner().invoke(main, ["judge", "validate", "--task", "polarity", "--gold",
                                       f"disapere:{SHARED_DATA / 'disapere'}", "--limit", "200", "--judge", "m",
                                       "--cache-dir", str(tmp_path), "--bootstrap-resamples", "50"])
    assert result.exit_code == 0, result.output
    assert "DISAPERE yields 4037 polarity items in all: weakness 2927, strength 1110" in result.output
    assert "200 items" in result.output and "cannot be told apart from chance" in result.output
