"""Every command that writes an --output holds its lock while it runs: two `praib generate` runs on
one output (different models) no longer lose records, the second is refused at once."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.records import load_records
from praib.records.atomic import RECORD
from praib.records.locks import lock_path
from tests.chat_server import ChatServer
from tests.lock_holder import lock_held_elsewhere

PAPERS = ("alpha", "beta", "gamma")
REVIEW = "## Summary\nThe paper {pid} is sound.\n\n## Final Recommendation\n**Decision:** 6\n**Confidence:** 3\n"
PRAIB = Path(sys.executable).with_name("praib")


def praib(*args):
    command = [str(PRAIB)] if PRAIB.exists() else [sys.executable, "-m", "praib.cli.main"]
    return command + [str(a) for a in args]


def generate_args(model, server, papers, output):
    return ["generate", model, papers, "--backend", "openai", "--base-url", server.url, "--prompt", "extended",
            "--venue", "ICLR", "--year", "2025", "--output", output, "--no-cache", "--concurrency", 1,
            "--max-tries", 1, "--no-progress"]


def test_a_second_generate_on_the_same_output_is_refused_and_the_first_loses_nothing(tmp_path):
    papers = tmp_path / "papers"
    papers.mkdir()
    for pid in PAPERS:
        (papers / f"{pid}.md").write_text(f"# Paper {pid}\n\nPAPER-ID {pid}\n\nWe study message passing.\n")
    let_answer = threading.Event()

    def answer(body):
        let_answer.wait(timeout=120)  # the first run holds its output until the test lets it finish
        return REVIEW.format(pid=re.search(r"PAPER-ID (\w+)", body["messages"][-1]["content"]).group(1))

    server = ChatServer(answer)
    output = tmp_path / "reviews.jsonl"
    first = subprocess.Popen(praib(*generate_args("model-a", server, papers, output)), cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not server.bodies and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.bodies, "the first run sent no request"

        started = time.monotonic()
        second = subprocess.run(praib(*generate_args("model-b", server, papers, output)), cwd=tmp_path,
                                capture_output=True, text=True, timeout=120)
        waited = time.monotonic() - started
        assert first.poll() is None  # refused while the first still runs: it did not wait for it
        assert waited < 10, f"the refusal took {waited:.1f} s"
        assert second.returncode == 1
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert re.fullmatch(rf"Error: {re.escape(str(output))} is being written by another praib run "
                            rf"\(pid {first.pid}, "
                            r"started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d: \S*praib\S* generate model-a .*\); "
                            r"wait for it or choose another --output", lines[0]), lines[0]
        assert {b["model"] for b in server.bodies} == {"model-a"}
    finally:
        let_answer.set()
        stdout, stderr = first.communicate(timeout=120)
        server.close()
    assert first.returncode == 0, stderr
    records = load_records(output)
    assert sorted(records["paper_id"]) == sorted(PAPERS)
    assert set(records["model"]) == {"model-a"}
    assert [r["rating"] for r in records] == [6, 6, 6]
    # no lock, no partial file; the record of the file praib wrote (docs/cli.md, "an output file")
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD, "papers", "reviews.jsonl"]


def commands_with_an_output(group=main, prefix=()):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from commands_with_an_output(command, prefix + (name,))
        elif any(p.name == "output" for p in command.params):
            yield prefix + (name,), command


def minimal_arguments(command, tmp_path):
    """Values that get every required argument of ``command`` past click's own checks."""
    (tmp_path / "folder").mkdir(exist_ok=True)
    (tmp_path / "file.jsonl").write_text(json.dumps({"paper_id": "p1", "source": "human"}) + "\n")
    args = []
    for param in command.params:
        if isinstance(param, click.Argument) and param.required:
            if isinstance(param.type, click.types.IntParamType):
                args.append("2024")
            elif isinstance(param.type, click.Path) and not param.type.file_okay:
                args.append(str(tmp_path / "folder"))
            else:
                args.append(str(tmp_path / "file.jsonl"))
    return args


COMMANDS = dict(commands_with_an_output())


def test_every_command_that_writes_an_output_is_listed():
    names = {" ".join(path) for path in COMMANDS}
    assert {"generate", "score", "evaluate run", "evaluate merge", "meta-review", "perturb", "robustness", "counterfactual build",
            "leaderboard run", "leaderboard report", "data build", "data collect", "data import-dump"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_with_an_output_is_refused_while_another_run_holds_it(tmp_path, path):
    output = tmp_path / "held-output"
    with lock_held_elsewhere(output) as holder:
        arguments = minimal_arguments(COMMANDS[path], tmp_path)
        result = CliRunner().invoke(main, [*path, *arguments, "--output", str(output)])
        assert result.exit_code == 1, result.output
        assert f"held-output is being written by another praib run (pid {holder.pid}," in result.output
    assert not lock_path(output).exists()
