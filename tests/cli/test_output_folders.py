"""A command that writes a folder replaces the files praib wrote there: a rerun leaves none of the earlier
run's files behind, and a folder that holds other files (or praib's, changed since) is refused unless
--overwrite, which keeps them; praib decides by its record of what it wrote, never by names (docs/cli.md; issue 26, items 2 and 5)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.records import load_records
from praib.records.atomic import RECORD
from tests.killed_writer import run_killed, start_killed
from tests.paths import DEMO

MANIFEST = {"backend": "hand-written", "prompts": ["extended"], "sampling": {"temperature": 0.0},
            "date": "2026-01-05"}


def files(folder: Path) -> dict[str, bytes]:
    """The files in ``folder`` with their bytes, but for praib's record of them."""
    return {str(f.relative_to(folder)): f.read_bytes() for f in sorted(folder.rglob("*"))
            if f.is_file() and f.name != RECORD}


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
    assert set(files(output)) == {"results.parquet", "results.jsonl", "comparisons.parquet", "ranks.parquet",
                                  "run.json", "details/demo-model-a.json", "manifests/demo-model-a.json"}
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
        f"Error: {output}: holds files praib did not write there, or that changed since (details/README, notes.txt, "
        "plots); give --overwrite to keep them and replace only praib's own, or choose another --output"]
    assert files(output) == before

    overwritten = leaderboard_run(output, model_a, overwrite=True)
    assert overwritten.exit_code == 0, overwritten.output
    after = files(output)
    assert set(after) == {"results.parquet", "results.jsonl", "comparisons.parquet", "ranks.parquet", "run.json",
                          "details/demo-model-a.json", "manifests/demo-model-a.json", "notes.txt", "plots/alpha.png",
                          "details/README"}
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
    assert refused.output.startswith(f"Error: {output}: holds files praib did not write there, or that changed "
                                     "since (.git, .gitattributes); give --overwrite")
    assert "data/papers/train-00000-of-00001.parquet" in files(output)

    rebuilt = invoke("data", "build", "--reviews", DEMO / "reviews.jsonl", "-o", output, "--overwrite")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert set(files(output)) == {"README.md", "statistics.json", "data/reviews/train-00000-of-00001.parquet",
                                  ".gitattributes", ".git/HEAD"}
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
        f"Error: {mine}: holds files praib has no record of writing (thesis.tex; a folder without {RECORD} is all "
        "yours); give --overwrite to keep them and replace only praib's own, or choose another --output"]
    assert files(mine) == {"thesis.tex": b"\\chapter{Peer review}\n"}


def test_files_named_like_praibs_are_the_users_until_praib_records_them(tmp_path, two_submissions):
    """Issue 26, item 2: the user's details/precious.json, manifests/my-notes.json and eras.json in the output
    folder were deleted (exit 0), and with --overwrite their details/mine.json too."""
    model_a, _ = two_submissions
    output = tmp_path / "results"
    mine = {"details/precious.json": b'{"mine": 1}', "manifests/my-notes.json": b'{"notes": []}',
            "eras.json": b'{"my": "eras"}'}
    for name, data in mine.items():
        (output / name).parent.mkdir(parents=True, exist_ok=True)
        (output / name).write_bytes(data)

    refused = leaderboard_run(output, model_a)
    assert refused.exit_code == 1
    assert refused.output.startswith(f"Error: {output}: holds files praib has no record of writing (details, "
                                     "eras.json, manifests; ")
    assert files(output) == mine

    kept = leaderboard_run(output, model_a, overwrite=True)
    assert kept.exit_code == 0, kept.output
    assert {name: files(output)[name] for name in mine} == mine
    (output / "details" / "mine.json").write_bytes(b"my notes on the details, not JSON\n")
    again = leaderboard_run(output, model_a, overwrite=True)
    assert again.exit_code == 0, again.output
    assert set(files(output)) == {"results.parquet", "results.jsonl", "comparisons.parquet", "ranks.parquet",
                                  "run.json", "details/demo-model-a.json", "manifests/demo-model-a.json", *mine,
                                  "details/mine.json"}
    assert files(output)["details/mine.json"] == b"my notes on the details, not JSON\n"
    report = invoke("leaderboard", "report", output, "-o", tmp_path / "report.html")  # reads praib's files only
    assert report.exit_code == 0, report.output
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "demo-model-a" in page and "precious" not in page


def test_a_file_praib_wrote_and_the_user_changed_is_theirs(tmp_path, two_submissions):
    model_a, _ = two_submissions
    output = tmp_path / "results"
    assert leaderboard_run(output, model_a).exit_code == 0
    (output / "results.jsonl").write_text("my edited results\n", encoding="utf-8")
    before = files(output)

    refused = leaderboard_run(output, model_a)
    assert refused.output.splitlines() == [
        f"Error: {output}: holds files praib did not write there, or that changed since (results.jsonl); give "
        "--overwrite to keep them and replace only praib's own, or choose another --output"]
    clash = leaderboard_run(output, model_a, overwrite=True)
    assert clash.exit_code == 1
    assert clash.output.splitlines() == [
        f"Error: {output}: results.jsonl: a file of yours (praib did not write it there, or it changed since) where "
        "`praib leaderboard run` writes its own; --overwrite keeps your files: move it away or choose another "
        "--output"]
    assert files(output) == before


def user_files(folder: Path, count: int) -> None:
    for i in range(count):
        (folder / f"note-{i:05d}.txt").write_text(f"note {i}\n", encoding="utf-8")


def praib_stderr(*args) -> tuple[int, list[str]]:
    """Run praib in a process of its own: its exit status and the lines it printed on stderr."""
    done = subprocess.run([sys.executable, "-m", "praib.cli.main", *map(str, args)], capture_output=True, text=True,
                          timeout=300)
    return done.returncode, done.stderr.splitlines()


def moving(beside: Path) -> bool:
    """Whether a replacement of the folder ``results`` in ``beside`` is moving files: its staging folder has
    a journal (or, before issue 26, its temporary folder had taken in files of the user's)."""
    return any(p.name.startswith(".results.") and ((p / ".praib-journal.json").exists()
                                                   or next(p.glob("note-*"), None) is not None)
               for p in beside.iterdir())


def test_a_run_killed_while_it_replaces_the_folder_leaves_every_user_file_in_place(tmp_path, two_submissions):
    """Issue 26, item 3: killed while the swap moved a folder of user files, a run left most of them in a
    hidden temporary folder, and the next run said nothing. Here a real SIGKILL lands as the replacement
    starts moving files, with 10,000 of the user's files in the folder."""
    model_a, _ = two_submissions
    output = tmp_path / "results"
    assert leaderboard_run(output, model_a).exit_code == 0
    user_files(output, 10_000)
    run = ["leaderboard", "run", model_a, "--demo", "--n-bootstrap", "5", "--no-progress", "-o", output, "--overwrite"]
    child = start_killed("never", 0, output, *map(str, run))
    while not moving(tmp_path) and child.poll() is None:
        time.sleep(0.002)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    assert len(list(output.glob("note-*.txt"))) == 10_000
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".results.")]

    status, lines = praib_stderr(*run)
    assert status == 0, lines
    assert len([line for line in lines if line.startswith("praib: ")]) == len(left)  # one line, when it left one
    assert [p.name for p in tmp_path.iterdir()] == ["results"]
    assert len(list(output.glob("note-*.txt"))) == 10_000
    assert set(files(output)) - {f"note-{i:05d}.txt" for i in range(10_000)} == {
        "results.parquet", "results.jsonl", "comparisons.parquet", "ranks.parquet", "run.json",
        "details/demo-model-a.json", "manifests/demo-model-a.json"}


def test_the_next_run_finishes_a_replacement_killed_midway_and_says_so(tmp_path, two_submissions):
    model_a, model_b = two_submissions
    output = tmp_path / "results"
    assert leaderboard_run(output, model_a).exit_code == 0
    user_files(output, 3)
    run = ["leaderboard", "run", model_a, model_b, "--demo", "--n-bootstrap", "5", "--no-progress", "-o", output,
           "--overwrite"]
    killed = run_killed("move", 2, output, *map(str, run))  # two of its files moved in, the others not yet
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    [staging] = [p for p in tmp_path.iterdir() if p.name.startswith(".results.praib-")]

    status, lines = praib_stderr("leaderboard", "report", output, "-o", tmp_path / "report.html")
    assert status == 0, lines  # a command that only reads the folder leaves it be
    (tmp_path / "report.html").unlink()
    (tmp_path / RECORD).unlink()  # which listed report.html
    status, lines = praib_stderr(*run)
    assert status == 0, lines
    assert [line for line in lines if line.startswith("praib: ")] == [
        f"praib: finished replacing {output}, which a praib run (pid {killed_pid(staging)}) was killed in the "
        "middle of"]
    assert [p.name for p in tmp_path.iterdir()] == ["results"]
    assert {"details/demo-model-b.json", "note-00000.txt"} <= set(files(output))


def killed_pid(staging: Path) -> int:
    return int(staging.name.split("-")[1])


def test_a_temporary_folder_of_an_older_praib_is_named_and_left_alone(tmp_path, two_submissions, caplog):
    model_a, _ = two_submissions
    output = tmp_path / "results"
    assert leaderboard_run(output, model_a).exit_code == 0
    left = tmp_path / ".results.4242-0123abcd.tmp"
    left.mkdir()
    (left / "note-00001.txt").write_text("a note of the user's that an older praib moved here\n")
    assert leaderboard_run(output, model_a).exit_code == 0
    assert caplog.messages == [
        f"{left}: a folder left by a praib run killed while it replaced {output} (before praib kept a record of its "
        "files); it may hold files of yours: look through it, then delete it"]
    assert (left / "note-00001.txt").is_file()


def test_a_symbolic_link_output_is_written_through_to_its_target(tmp_path, two_submissions):
    """Issue 26, item 5: a symlinked output, a folder or a file, was replaced by a regular one."""
    model_a, _ = two_submissions
    (tmp_path / "elsewhere").mkdir()
    folder_link = tmp_path / "results"
    folder_link.symlink_to(tmp_path / "elsewhere" / "results", target_is_directory=True)
    for _ in range(2):
        result = leaderboard_run(folder_link, model_a)
        assert result.exit_code == 0, result.output
        assert folder_link.is_symlink()
        assert "run.json" in files(tmp_path / "elsewhere" / "results")

    file_link = tmp_path / "flipped.jsonl"
    file_link.symlink_to(tmp_path / "elsewhere" / "flipped.jsonl")
    for seed in (0, 1):
        result = invoke("perturb", "rating-flip", DEMO / "reviews.jsonl", "-o", file_link, "--seed", seed,
                        "--no-progress")
        assert result.exit_code == 0, result.output
        assert file_link.is_symlink()
        assert len(load_records(tmp_path / "elsewhere" / "flipped.jsonl")) == len(load_records(DEMO / "reviews.jsonl"))
    # The run's statistics go beside the name given, as its failure records would, and are recorded there as
    # praib's (the record of the output itself goes beside its target, in elsewhere/).
    assert sorted(p.name for p in tmp_path.iterdir()) == [".praib-written.json", "elsewhere", "flipped.jsonl",
                                                          "flipped.jsonl.stats.json", "results"]
