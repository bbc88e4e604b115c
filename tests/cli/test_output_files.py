"""An output file is replaced only when praib wrote it and it is unchanged since (docs/cli.md, "an output
file"): praib records each file it writes in the ``.praib-written.json`` of the file's folder, as it does for
the files of an output folder, and refuses any other file in one line before the command runs, unless
--overwrite. A symbolic link is judged by the file it points to, and written through."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.records.atomic import RECORD, file_digest, record_written
from tests.chat_server import ChatServer
from tests.paths import DEMO, ROOT

MINE = b"my notes, not praib's\n"
REVIEW = "## Summary\nThe paper {paper} is sound.\n\n## Final Recommendation\n**Decision:** 6\n**Confidence:** 3\n"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="praib")


def refusal(path, option: str = "--output") -> str:
    return (f"Error: {path}: a file praib did not write (or one changed since); give --overwrite to replace it, "
            f"or choose another {option}")


def listing(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder``: a file's bytes, a link's target."""
    return {str(p.relative_to(folder)): os.readlink(p) if p.is_symlink() else p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_symlink() or p.is_file()}


def recorded(folder: Path, section: str = "outputs") -> dict[str, str]:
    """What the record of ``folder`` lists: the output files commands wrote there, or (``files``) the files its
    output folders wrote."""
    return json.loads((folder / RECORD).read_text(encoding="utf-8")).get(section, {})


def _commands(group: click.Group = main, path: str = "praib"):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, f"{path} {name}")
        else:
            yield f"{path} {name}", command


COMMANDS = dict(_commands())


def _output(command: click.Command) -> click.Parameter | None:
    return next((p for p in command.params if p.name == "output" and "--output" in p.opts), None)


WITH_OUTPUT = sorted(path for path, command in COMMANDS.items() if _output(command) is not None)
WITH_OUTPUT_FILE = [path for path in WITH_OUTPUT if _output(COMMANDS[path]).type.file_okay]


def test_the_commands_with_an_output_file_are_those_expected():
    # A command that gains -o is checked by the tests below as soon as it is in the tree; this list says which.
    assert set(WITH_OUTPUT_FILE) == {
        "praib counterfactual build", "praib counterfactual effects", "praib counterfactual extract",
        "praib counterfactual oracle", "praib counterfactual stats", "praib data pdf", "praib data verify-citations",
        "praib evaluate merge", "praib evaluate run", "praib generate", "praib grounding", "praib judge validate",
        "praib leaderboard eras", "praib leaderboard report", "praib meta-review", "praib perturb",
        "praib robustness", "praib score", "praib tables"}


@pytest.mark.parametrize("path", WITH_OUTPUT)
def test_every_command_with_an_output_has_overwrite_saying_what_it_does(path):
    command = COMMANDS[path]
    [overwrite] = [p for p in command.params if "--overwrite" in getattr(p, "opts", ())]
    assert overwrite.is_flag
    if _output(command).type.file_okay:
        assert "Replace an output file that praib did not write (or that changed since)." in overwrite.help
    if _output(command).type.dir_okay:
        assert "output folder" in overwrite.help


def _arguments(command: click.Command, tmp_path: Path) -> list[str]:
    """A value of each positional argument that click takes (the command never runs): records for a source,
    a folder where only a folder will do, a year for a number."""
    records = tmp_path / "inputs" / "reviews.jsonl"
    values = []
    for param in command.params:
        if not isinstance(param, click.Argument):
            continue
        if isinstance(param.type, click.types.IntParamType):
            value = "2020"
        elif isinstance(param.type, click.Path) and not param.type.file_okay:
            value = str(records.parent)
        else:
            value = str(records)
        values += [value] * (2 if param.nargs == -1 else 1)
    return values


@pytest.mark.parametrize("path", WITH_OUTPUT_FILE)
@pytest.mark.parametrize("linked", [False, True], ids=["file", "link"])
def test_every_command_refuses_a_users_output_file_before_it_runs(path, linked, tmp_path):
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "reviews.jsonl").write_bytes((DEMO / "reviews.jsonl").read_bytes())
    mine = tmp_path / "notes.txt"
    mine.write_bytes(MINE)
    output = mine
    if linked:
        output = tmp_path / "link.txt"
        output.symlink_to(mine.name)
    before = listing(tmp_path)

    judged = ["--judge", "judge-model"] if any("--judge" in p.opts for p in COMMANDS[path].params) else []
    result = invoke(*path.split()[1:], *_arguments(COMMANDS[path], tmp_path), "-o", output, *judged)
    assert result.exit_code == 1, result.output
    assert result.output.splitlines() == [refusal(output)]
    assert listing(tmp_path) == before  # nothing written: no record, no lock, the link a link


def evaluate_demo(output: Path, *more):
    return invoke("evaluate", "--demo", "--workers", "1", "--no-progress", "-o", output, *more)


def results_of(path: Path) -> dict:
    results = json.loads(path.read_text(encoding="utf-8"))
    assert results["n_reviews"] == 58  # the demo's reviews, from the file evaluate wrote
    return results


def test_overwrite_replaces_a_users_file_and_a_rerun_then_needs_no_flag(tmp_path):
    mine = tmp_path / "notes.txt"
    mine.write_bytes(MINE)
    replaced = evaluate_demo(mine, "--overwrite")
    assert replaced.exit_code == 0, replaced.output
    results_of(mine)
    assert recorded(tmp_path) == {"notes.txt": file_digest(mine)}

    mine.write_bytes(MINE)  # the file is the user's again: praib's record no longer matches it
    refused = evaluate_demo(mine)
    assert refused.exit_code == 1 and refused.output.splitlines() == [refusal(mine)]
    assert mine.read_bytes() == MINE


def test_the_demo_twice_in_a_row_replaces_its_own_results(tmp_path):
    output = tmp_path / "results.json"
    for _ in range(2):
        result = evaluate_demo(output)
        assert result.exit_code == 0, result.output
        assert recorded(tmp_path) == {"results.json": file_digest(output)}
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD, "results.json"]  # no lock left


def test_readme_command_one_twice_as_a_user_runs_it(tmp_path):
    """README's first command, in a fresh process each time, its output in the working folder."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "praib.cli.main", "evaluate", "--demo", "--output",
                               "results.json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    results_of(tmp_path / "results.json")


def test_praibs_file_changed_afterwards_is_the_users(tmp_path):
    output = tmp_path / "results.json"
    assert evaluate_demo(output).exit_code == 0
    with output.open("a", encoding="utf-8") as handle:
        handle.write("my remark\n")
    edited = output.read_bytes()
    refused = evaluate_demo(output)
    assert refused.exit_code == 1 and refused.output.splitlines() == [refusal(output)]
    assert output.read_bytes() == edited


def test_a_link_to_praibs_own_file_is_written_through(tmp_path):
    (tmp_path / "runs").mkdir()
    target = tmp_path / "runs" / "results.json"
    assert evaluate_demo(target).exit_code == 0
    first = target.stat().st_ino
    link = tmp_path / "latest.json"
    link.symlink_to("runs/results.json")

    again = evaluate_demo(link)
    assert again.exit_code == 0, again.output
    assert link.is_symlink() and os.readlink(link) == "runs/results.json"
    assert target.stat().st_ino != first  # replaced by the new results
    results_of(target)
    assert recorded(tmp_path / "runs") == {"results.json": file_digest(target)}
    assert not (tmp_path / RECORD).exists()  # the record is the target's folder's


def generate(server: ChatServer, papers: Path, output: Path, *more):
    return invoke("generate", "model-a", papers, "--backend", "openai", "--base-url", server.url, "--prompt",
                  "extended", "--venue", "ICLR", "--year", "2025", "--output", output, "--no-cache",
                  "--concurrency", 1, "--max-tries", 1, "--no-progress", *more)


def test_failure_records_follow_the_rule_and_a_rerun_after_failed_items_needs_no_flag(tmp_path):
    papers = tmp_path / "papers"
    papers.mkdir()
    for paper in ("alpha", "beta"):
        (papers / f"{paper}.md").write_text(f"# Paper {paper}\n\nPAPER-ID {paper}\n\nWe study message passing.\n")
    failing = {"beta"}

    def answer(body):
        paper = re.search(r"PAPER-ID (\w+)", body["messages"][-1]["content"]).group(1)
        return (500, {}, b"overloaded") if paper in failing else REVIEW.format(paper=paper)

    output, failures = tmp_path / "reviews.jsonl", tmp_path / "reviews.jsonl.failures.jsonl"
    server = ChatServer(answer)
    try:
        failures.write_bytes(MINE)
        refused = generate(server, papers, output)
        assert refused.exit_code == 1 and refused.output.splitlines() == [refusal(failures)]
        assert server.bodies == [] and failures.read_bytes() == MINE and not output.exists()
        failures.unlink()

        partly = generate(server, papers, output)
        assert partly.exit_code == 3, partly.output  # beta failed: recorded in the failure records
        assert "beta" in failures.read_text(encoding="utf-8")
        assert recorded(tmp_path) == {"reviews.jsonl": file_digest(output), failures.name: file_digest(failures)}

        failing.clear()
        rerun = generate(server, papers, output)  # what the warning says to do
        assert rerun.exit_code == 0, rerun.output
        assert not failures.exists()  # praib's own, stale: removed, and so is its entry
        assert recorded(tmp_path) == {"reviews.jsonl": file_digest(output)}
        assert sorted(json.loads(line)["paper_id"] for line in output.read_text(encoding="utf-8").splitlines()) == [
            "alpha", "beta"]
    finally:
        server.close()


def test_a_users_markdown_file_is_refused_too(tmp_path):
    (tmp_path / "results").mkdir()
    mine = tmp_path / "summary.md"
    mine.write_bytes(MINE)
    refused = invoke("leaderboard", "report", tmp_path / "results", "-o", tmp_path / "report.html", "--markdown", mine)
    assert refused.exit_code == 1 and refused.output.splitlines() == [refusal(mine, "--markdown")]
    assert listing(tmp_path) == {"summary.md": MINE}


def _record_many(folder: str, writer: int, count: int) -> None:
    for index in range(count):
        name = f"w{writer}-{index}.txt"
        Path(folder, name).write_text(name, encoding="utf-8")
        record_written(folder, {name: file_digest(Path(folder, name))})


def test_processes_recording_files_of_one_folder_at_once_keep_each_others_entries(tmp_path):
    writers, count = 6, 40
    context = multiprocessing.get_context("fork")
    processes = [context.Process(target=_record_many, args=(str(tmp_path), writer, count)) for writer in range(writers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [process.exitcode for process in processes] == [0] * writers
    assert len(recorded(tmp_path, "files")) == writers * count
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".lock") == []


def test_runs_writing_different_files_of_one_folder_at_once_each_record_theirs(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [subprocess.Popen([sys.executable, "-m", "praib.cli.main", "evaluate", "--demo", "--workers", "1",
                              "--no-progress", "-o", str(tmp_path / f"{index}.json")],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for index in range(3)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0], outputs
    assert recorded(tmp_path) == {f"{index}.json": file_digest(tmp_path / f"{index}.json") for index in range(3)}


def submission(tmp_path: Path, model: str) -> Path:
    """The demo's reviews of ``model`` by the extended prompt, with a manifest: a leaderboard submission."""
    folder = tmp_path / model
    folder.mkdir()
    rows = [row for row in map(json.loads, (DEMO / "reviews.jsonl").read_text(encoding="utf-8").splitlines())
            if row.get("model") == model and row.get("prompt") == "extended"]
    (folder / "reviews.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({"model": model, "backend": "hand-written", "prompts": [
        "extended"], "sampling": {"temperature": 0.0}, "date": "2026-01-05"}), encoding="utf-8")
    return folder


def leaderboard_run(output: Path, *submissions: Path):
    return invoke("leaderboard", "run", *submissions, "--demo", "--n-bootstrap", 5, "--no-progress", "-o", output)


def test_a_report_written_into_a_results_folder_is_listed_apart_and_kept_by_the_folders_rerun(tmp_path):
    """A folder that is itself a praib output: the file a command writes into it is recorded beside the folder's
    own files, not as one of them, so that rerunning the report works and rerunning the folder keeps it."""
    model_a, model_b = submission(tmp_path, "demo-model-a"), submission(tmp_path, "demo-model-b")
    results = tmp_path / "results"
    assert leaderboard_run(results, model_a, model_b).exit_code == 0
    report = results / "report.html"
    for _ in range(2):
        written = invoke("leaderboard", "report", results, "-o", report)
        assert written.exit_code == 0, written.output
    record = json.loads((results / RECORD).read_text(encoding="utf-8"))
    assert record["outputs"] == {"report.html": file_digest(report)}
    assert "report.html" not in record["files"]
    page = report.read_bytes()

    rerun = leaderboard_run(results, model_a)  # no --overwrite: the report is praib's
    assert rerun.exit_code == 0, rerun.output
    assert report.read_bytes() == page
    record = json.loads((results / RECORD).read_text(encoding="utf-8"))
    assert record["outputs"] == {"report.html": file_digest(report)}
    assert "details/demo-model-b.json" not in record["files"] and "details/demo-model-a.json" in record["files"]


# The files commands write beside their output, by the output's name: each is judged as the output is.
BESIDE = {
    "praib score": ["out.jsonl.judge.json"],
    "praib perturb": ["out.jsonl.stats.json", "out.jsonl.claims.jsonl"],
    "praib judge validate": ["out.jsonl.errors.jsonl"],
    "praib counterfactual build": ["out.jsonl.stats.json", "out.logic.jsonl", "out.attempts.jsonl"],
    "praib counterfactual oracle": ["out.originals.jsonl"],
}


@pytest.mark.parametrize("path, side", [(path, side) for path, sides in BESIDE.items() for side in sides])
def test_a_users_file_where_a_command_writes_beside_its_output_is_refused(path, side, tmp_path):
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "reviews.jsonl").write_bytes((DEMO / "reviews.jsonl").read_bytes())
    mine = tmp_path / side
    mine.write_bytes(MINE)
    before = listing(tmp_path)
    arguments = _arguments(COMMANDS[path], tmp_path)
    if path == "praib perturb":
        arguments = ["rating-flip", *arguments[1:]]
    result = invoke(*path.split()[1:], *arguments, "-o", tmp_path / "out.jsonl", "--judge", "judge-model")
    assert result.exit_code == 1, result.output
    assert result.output.splitlines() == [refusal(mine)]
    assert listing(tmp_path) == before


def test_a_file_praib_wrote_beside_its_output_is_replaced_by_a_rerun_and_a_changed_one_refused(tmp_path):
    output, statistics = tmp_path / "flipped.jsonl", tmp_path / "flipped.jsonl.stats.json"

    def flip(*more):
        return invoke("perturb", "rating-flip", DEMO / "reviews.jsonl", "-o", output, "--no-progress", *more)

    for _ in range(2):  # the second run replaces both of praib's files without a flag
        result = flip()
        assert result.exit_code == 0, result.output
        assert json.loads(statistics.read_text(encoding="utf-8"))["output"] == str(output)
    assert recorded(tmp_path) == {"flipped.jsonl": file_digest(output),
                                  "flipped.jsonl.stats.json": file_digest(statistics)}
    statistics.write_bytes(MINE)  # changed since praib wrote it: the user's now
    refused = flip()
    assert refused.exit_code == 1 and refused.output.splitlines() == [refusal(statistics)]
    assert statistics.read_bytes() == MINE
    replaced = flip("--overwrite")
    assert replaced.exit_code == 0, replaced.output
    assert json.loads(statistics.read_text(encoding="utf-8"))["output"] == str(output)
    assert recorded(tmp_path)["flipped.jsonl.stats.json"] == file_digest(statistics)
