"""Progress where output is not a terminal: plain lines for a long stage (here every update, with
PRAIB_PROGRESS_INTERVAL=0), nothing with --no-progress or for a short stage, and no library's bar."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from tests.paths import DEMO

# datasets' bars: "Map:", "Map (num_proc=4):", "Filter:", "Generating train split:", "Saving the dataset (1/1 shards):".
LIBRARY_BARS = re.compile(r"(?:^|\r)(?:Map|Filter|Generating \w+ split|Saving the dataset|Creating json from Arrow "
                          r"format)[^:\n]*:", re.MULTILINE)


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def assert_plain(output: str) -> None:
    """No bar drawing of any kind, and no bar of a library."""
    assert "\r" not in output and "\x1b[" not in output
    assert not LIBRARY_BARS.search(output), LIBRARY_BARS.search(output).group()


@pytest.fixture(scope="module")
def submissions(tmp_path_factory) -> list[Path]:
    tmp_path = tmp_path_factory.mktemp("submissions")
    folders = []
    for model in ("demo-model-a", "demo-model-b"):
        folder = tmp_path / model
        folder.mkdir()
        rows = [line for line in (DEMO / "reviews.jsonl").read_text(encoding="utf-8").splitlines()
                if json.loads(line).get("model") == model and json.loads(line).get("prompt") == "extended"]
        (folder / "reviews.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
        (folder / "manifest.json").write_text(json.dumps({"model": model, "backend": "hand-written",
                                                          "prompts": ["extended"], "date": "2026-01-05",
                                                          "sampling": {"temperature": 0.0}}), encoding="utf-8")
        folders.append(folder)
    return folders


def test_a_leaderboard_run_shows_each_stage_in_plain_lines(tmp_path, submissions, monkeypatch):
    monkeypatch.setenv("PRAIB_PROGRESS_INTERVAL", "0")
    output = invoke("leaderboard", "run", *submissions, "--demo", "--n-bootstrap", 5, "-o", tmp_path / "results")
    assert_plain(output)
    progress = [line for line in output.splitlines() if re.match(r"[\w -]+: \d+/\d+ ", line)]
    # The demo's human reference: 26 reviews in 2 venues (bootstrapped per venue and pooled); 8 per model.
    assert [line.split(" (")[0].split(" in ")[0] for line in progress if "/" in line.split(":")[1]] == [
        *(f"text metrics: {n}/26" for n in (26, 26)),
        *(f"human reference bootstrap: {n}/3" for n in (1, 2, 3, 3)),
        *(f"text metrics: {n}/8" for n in (8, 8)),
        *(f"demo-model-a bootstrap: {n}/3" for n in (1, 2, 3, 3)),
        *(f"text metrics: {n}/8" for n in (8, 8)),
        *(f"demo-model-b bootstrap: {n}/3" for n in (1, 2, 3, 3))]
    assert re.search(r"^human reference bootstrap: 2/3 \(67%\) after 0:\d\d$", output, re.MULTILINE)
    assert re.search(r"^demo-model-b bootstrap: 3/3 in 0:\d\d$", output, re.MULTILINE)


def test_no_progress_and_short_stages_print_no_progress_line(tmp_path, submissions, monkeypatch):
    quiet = invoke("leaderboard", "run", *submissions, "--demo", "--n-bootstrap", 5, "-o", tmp_path / "default")
    assert_plain(quiet)
    assert "bootstrap" not in quiet and "text metrics" not in quiet  # every stage is shorter than 30 s
    monkeypatch.setenv("PRAIB_PROGRESS_INTERVAL", "0")
    hidden = invoke("leaderboard", "run", *submissions, "--demo", "--n-bootstrap", 5, "--no-progress",
                    "-o", tmp_path / "hidden")
    assert "bootstrap" not in hidden and "text metrics" not in hidden
    assert hidden.splitlines()[-1] == f"wrote 99 result rows to {tmp_path / 'hidden'}"


def test_no_bar_of_datasets_leaks_from_the_commands_that_filter_or_load_with_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PRAIB_PROGRESS_INTERVAL", "0")
    neutral = tmp_path / "neutral.jsonl"
    built = invoke("counterfactual", "build", DEMO / "papers.jsonl", "--edits", "language-errors,whitespace",
                   "-o", neutral)
    assert_plain(built)
    assert "language-errors: 8/8 in 0:00" in built.splitlines()
    variants = tmp_path / "variants.jsonl"
    variants.write_text((DEMO / "critical_papers.jsonl").read_text(encoding="utf-8")
                        + neutral.read_text(encoding="utf-8"), encoding="utf-8")
    oracle = invoke("counterfactual", "oracle", DEMO / "reviews.jsonl", variants, "-o", tmp_path / "oracle.jsonl")
    assert_plain(oracle)
    assert oracle.splitlines()[-1].startswith("232 oracle reviews")
    invoke("data", "build", "--reviews", DEMO / "reviews.jsonl", "-o", tmp_path / "praib")
    evaluated = invoke("evaluate", tmp_path / "praib", "--workers", 1)
    assert_plain(evaluated)
    assert re.search(r"^reviews: 58 in 0:\d\d$", evaluated, re.MULTILINE)
