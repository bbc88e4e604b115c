"""A command that writes a folder replaces it: a rerun leaves none of the earlier run's files behind, and
a folder that holds other files is refused unless --overwrite, which keeps them (README, "Command-line
conventions")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.records import load_records
from tests.paths import DEMO

MANIFEST = {"backend": "hand-written", "prompts": ["extended"], "sampling": {"temperature": 0.0},
            "date": "2026-01-05"}


def files(folder: Path) -> dict[str, bytes]:
    return {str(f.relative_to(folder)): f.read_bytes() for f in sorted(folder.rglob("*")) if f.is_file()}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="praib")


def submission(tmp_path: Path, model: str) -> Path:
    """The demo's extended-prompt reviews of ``model`` with their manifest, as a submission folder."""
    folder = tmp_path / model
    folder.mkdir()
    rows = [line for line in (DEMO / "reviews.jsonl").read_text(encoding="utf-8").splitlines()
            if json.loads(line).get("model") == model and json.loads(line).get("prompt") == "extended"]
    assert rows
    (folder / "reviews.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({"model": model, **MANIFEST}), encoding="utf-8")
    return folder


def leaderboard_run(output: Path, *submissions: Path, overwrite: bool = False):
    return invoke("leaderboard", "run", *submissions, "--demo", "--n-bootstrap", 5, "--no-progress", "-o", output,
                  *(["--overwrite"] if overwrite else []))


@pytest.fixture(scope="module")
def two_submissions(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("submissions")
    return submission(tmp_path, "demo-model-a"), submission(tmp_path, "demo-model-b")


def test_a_leaderboard_rerun_with_fewer_submissions_leaves_no_file_of_the_first(tmp_path, two_submissions):
    model_a, model_b = two_submissions
    output = tmp_path / "results"
    assert leaderboard_run(output, model_a, model_b).exit_code == 0
    assert {"details/demo-model-b.json", "manifests/demo-model-b.json"} <= set(files(output))
    rerun = leaderboard_run(output, model_a)
    assert rerun.exit_code == 0, rerun.output
    assert set(files(output)) == {"results.parquet", "results.jsonl", "run.json", "details/demo-model-a.json",
                                  "manifests/demo-model-a.json"}
    named = json.loads((output / "run.json").read_text(encoding="utf-8"))["submissions"]
    assert list(named) == ["demo-model-a"] and named["demo-model-a"].startswith(f"{model_a.name}/ (sha256:")
    assert [p.name for p in tmp_path.iterdir()] == ["results"]  # no temporary folder, no lock left


def test_a_results_folder_holding_other_files_is_refused_unless_overwrite_which_keeps_them(tmp_path,
                                                                                           two_submissions):
    model_a, model_b = two_submissions
    output = tmp_path / "results"
    assert leaderboard_run(output, model_a, model_b).exit_code == 0
    (output / "notes.txt").write_text("my notes on this run\n", encoding="utf-8")
    (output / "plots").mkdir()
    (output / "plots" / "alpha.png").write_bytes(b"\x89PNG mine")
    (output / "details" / "README").write_text("what the details are\n", encoding="utf-8")
    before = files(output)

    refused = leaderboard_run(output, model_a)
    assert refused.exit_code == 1
    assert refused.output.splitlines() == [
        f"Error: {output}: holds files that `praib leaderboard run` does not write (details/README, notes.txt, "
        "plots); give --overwrite to replace its own files there and keep these, or choose another --output"]
    assert files(output) == before

    overwritten = leaderboard_run(output, model_a, overwrite=True)
    assert overwritten.exit_code == 0, overwritten.output
    after = files(output)
    assert set(after) == {"results.parquet", "results.jsonl", "run.json", "details/demo-model-a.json",
                          "manifests/demo-model-a.json", "notes.txt", "plots/alpha.png", "details/README"}
    assert {name: after[name] for name in ("notes.txt", "plots/alpha.png", "details/README")} == {
        name: before[name] for name in ("notes.txt", "plots/alpha.png", "details/README")}
    assert after["results.jsonl"] != before["results.jsonl"]


def test_a_dataset_rebuilt_with_fewer_configs_keeps_the_repository_files_it_did_not_write(tmp_path):
    output = tmp_path / "praib"
    built = invoke("data", "build", "--reviews", DEMO / "reviews.jsonl", "--papers", DEMO / "papers.jsonl",
                   "-o", output)
    assert built.exit_code == 0, built.output
    assert "data/papers/train-00000-of-00001.parquet" in files(output)
    (output / ".gitattributes").write_text("*.parquet filter=lfs\n", encoding="utf-8")
    (output / ".git").mkdir()
    (output / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")

    refused = invoke("data", "build", "--reviews", DEMO / "reviews.jsonl", "-o", output)
    assert refused.exit_code == 1
    assert refused.output.startswith(f"Error: {output}: holds files that `praib data build` does not write "
                                     "(.git, .gitattributes); give --overwrite")
    assert "data/papers/train-00000-of-00001.parquet" in files(output)

    rebuilt = invoke("data", "build", "--reviews", DEMO / "reviews.jsonl", "-o", output, "--overwrite")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert set(files(output)) == {"README.md", "data/reviews/train-00000-of-00001.parquet", ".gitattributes",
                                  ".git/HEAD"}
    assert len(load_records(f"{output}:reviews")) == len(load_records(DEMO / "reviews.jsonl"))


def test_a_records_folder_resampled_without_reviews_loses_the_reviews_file(tmp_path):
    output = tmp_path / "sample"
    first = invoke("data", "sample", DEMO / "papers.jsonl", "--reviews", DEMO / "reviews.jsonl",
                   "--per-venue-year", 2, "-o", output)
    assert first.exit_code == 0, first.output
    assert set(files(output)) == {"papers.jsonl", "reviews.jsonl"}
    again = invoke("data", "sample", DEMO / "papers.jsonl", "--per-venue-year", 2, "-o", output)
    assert again.exit_code == 0, again.output
    assert set(files(output)) == {"papers.jsonl"}


def test_a_saved_dataset_output_is_replaced_and_a_folder_of_other_files_is_not_touched(tmp_path):
    output = tmp_path / "flipped"
    first = invoke("perturb", "rating-flip", DEMO / "reviews.jsonl", "-o", output, "--no-progress")
    assert first.exit_code == 0, first.output
    assert (output / "state.json").is_file()
    again = invoke("perturb", "rating-flip", DEMO / "reviews.jsonl", "-o", output, "--no-progress", "--seed", 1)
    assert again.exit_code == 0, again.output
    assert len(load_records(output)) == len(load_records(DEMO / "reviews.jsonl"))

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("\\chapter{Peer review}\n", encoding="utf-8")
    refused = invoke("perturb", "rating-flip", DEMO / "reviews.jsonl", "-o", mine, "--no-progress")
    assert refused.exit_code == 1
    assert refused.output.splitlines() == [
        f"Error: {mine}: holds files that `praib perturb` does not write (thesis.tex); give --overwrite to replace "
        "its own files there and keep these, or choose another --output"]
    assert files(mine) == {"thesis.tex": b"\\chapter{Peer review}\n"}
