"""Progress where output is not a terminal: plain lines for a long stage (here every update, with
PRAIB_PROGRESS_INTERVAL=0), nothing with --no-progress or for a short stage, and no library's bar. Every
long command runs to its end with progress on and its output in files, as in a log or a CI job; on a
(pseudo-)terminal it draws tqdm bars."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from tests.chat_server import ChatServer, pipeline_answer
from tests.paths import DEMO
from tests.sources.pdfs import PAGES, write_pdf

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
    # The demo's human reference: 26 reviews in 2 venues (bootstrapped per venue and pooled); 8 per model. All are
    # scored in worker processes, the reference first: its bootstrap runs while they score the submissions, which
    # are bootstrapped together.
    assert [line.split(" (")[0].split(" in ")[0] for line in progress if "/" in line.split(":")[1]] == [
        *(f"parse and score human reference: {n}/26" for n in (26, 26)),
        *(f"human reference bootstrap: {n}/3" for n in (1, 2, 3, 3)),
        *(f"parse and score demo-model-a: {n}/8" for n in (8, 8)),
        *(f"parse and score demo-model-b: {n}/8" for n in (8, 8)),
        *(f"submissions bootstrap: {n}/3" for n in (1, 2, 3, 3))]
    assert re.search(r"^human reference bootstrap: 2/3 \(67%\) after 0:\d\d$", output, re.MULTILINE)
    assert re.search(r"^submissions bootstrap: 3/3 in 0:\d\d$", output, re.MULTILINE)


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


# An answer to the span-editing prompts of LLM perturbations, for the reviews below.
SPAN_EDIT = ("1. Text Span to Edit\n- Start Words: The derivation\n- Ending Words: is wrong.\n"
             "2. Edited Text Span\nThe derivation is plainly wrong, as anyone can check.\n")


@pytest.fixture(scope="module")
def server():
    chat = ChatServer(lambda body: SPAN_EDIT if "Start Words" in body["messages"][-1]["content"]
                      else pipeline_answer(body))
    yield chat
    chat.close()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, submissions) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("inputs")
    papers, pdfs = folder / "papers", folder / "pdfs"
    papers.mkdir()
    pdfs.mkdir()
    for i in (1, 2, 3):
        (papers / f"p{i}.md").write_text(f"# Paper p{i}\n\nWe study sparse adapters (p{i}).\n")
    for i in (1, 2):
        write_pdf(pdfs / f"p{i}.pdf", PAGES)
    reviews = folder / "reviews.jsonl"
    reviews.write_text("".join(json.dumps({
        "review_id": f"r{i}", "paper_id": f"p{i}", "venue": "ICLR", "year": 2025, "source": "human", "rating": 6,
        "text": f"Review r{i}. The derivation of Eq. ({i}) is wrong.\n\nWeaknesses: no ablation."}) + "\n"
        for i in (1, 2, 3)))
    gold = folder / "gold.jsonl"
    gold.write_text("".join(json.dumps({"id": f"g{i}", "task": "polarity", "text": f"Passage {i}.",
                                        "label": "strength"}) + "\n" for i in (1, 2, 3)))
    return {"papers": papers, "pdfs": pdfs, "reviews": reviews, "gold": gold, "submission": submissions[0]}


def _judge(server, out):
    return ["--judge", "judge-model", "--judge-backend", "openai", "--judge-base-url", server.url,
            "--cache-dir", out / "cache"]


# Each long command: its arguments (given the inputs, the server and a fresh folder), the output it writes
# there, and the last progress line of each of its counted stages.
LONG_COMMANDS = {
    "generate": (lambda i, s, out: ["generate", "m", i["papers"], "--backend", "openai", "--base-url", s.url,
                                    "--prompt", "guidelines", "--venue", "ICLR", "--year", "2025",
                                    "-o", out / "reviews.jsonl", "--cache-dir", out / "cache"],
                 "reviews.jsonl", [r"m / guidelines: 3/3 in 0:\d\d, cached=0"]),
    "score": (lambda i, s, out: ["score", i["reviews"], "-o", out / "scored.jsonl", *_judge(s, out)],
              "scored.jsonl", [r"openai: 3/3 in 0:\d\d"]),
    "perturb (an LLM kind)": (lambda i, s, out: ["perturb", "review-tone", i["reviews"], "-o", out / "tone.jsonl",
                                                 *_judge(s, out)],
                              "tone.jsonl", [r"openai: 3/3 in 0:\d\d"]),
    "evaluate --judge": (lambda i, s, out: ["evaluate", i["reviews"], "-o", out / "result.json", "--workers", 1,
                                            *_judge(s, out)],
                         "result.json", [r"text metrics: 3/3 in 0:\d\d", r"openai: 3/3 in 0:\d\d"]),
    "judge validate": (lambda i, s, out: ["judge", "validate", "--task", "polarity", "--gold", i["gold"],
                                          "--bootstrap-resamples", 20, "-o", out / "validation.json",
                                          *_judge(s, out)],
                       "validation.json", [r"openai: 3/3 in 0:\d\d"]),
    "leaderboard run": (lambda i, s, out: ["leaderboard", "run", i["submission"], "--demo", "--n-bootstrap", 5,
                                           "-o", out / "results"],
                        "results",
                        [r"human reference bootstrap: 3/3 in 0:\d\d", r"submissions bootstrap: 3/3 in 0:\d\d"]),
    "data pdf": (lambda i, s, out: ["data", "pdf", i["pdfs"], "-o", out / "papers.jsonl"],
                 "papers.jsonl", [r"pdf: 2/2 in 0:\d\d"]),
}


def _run_praib(args, stdout, stderr, **env):
    """``praib ARGS`` in a process of its own, as a shell runs it; returns its exit status."""
    environment = {**os.environ, **env}
    environment.pop("TQDM_DISABLE", None)  # the suite's setting; a user's shell has none
    return subprocess.run([sys.executable, "-m", "praib.cli.main", *map(str, args)], stdout=stdout, stderr=stderr,
                          stdin=subprocess.DEVNULL, env=environment, timeout=300).returncode


@pytest.mark.parametrize("command", sorted(LONG_COMMANDS))
def test_every_long_command_runs_to_its_end_with_progress_into_files(tmp_path, inputs, server, command):
    make_args, output, stages = LONG_COMMANDS[command]
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        status = _run_praib(make_args(inputs, server, tmp_path), stdout, stderr, PRAIB_PROGRESS_INTERVAL="0")
    said = err.read_text()
    assert status == 0, said
    assert (tmp_path / output).exists()
    assert_plain(said + out.read_text())
    for stage in stages:
        assert re.search(f"^{stage}$", said, re.MULTILINE), (stage, said)


@pytest.mark.parametrize("hidden", [False, True], ids=["pipes", "pipes, --no-progress"])
def test_generate_finishes_into_pipes_with_progress_and_without(tmp_path, inputs, server, hidden):
    args = [*LONG_COMMANDS["generate"][0](inputs, server, tmp_path), *(["--no-progress"] if hidden else [])]
    run = subprocess.run([sys.executable, "-m", "praib.cli.main", *map(str, args)], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, env={**os.environ, "PRAIB_PROGRESS_INTERVAL": "0"}, timeout=300)
    assert run.returncode == 0, run.stderr
    assert_plain(run.stdout + run.stderr)
    assert ("m / guidelines: 3/3 in 0:" in run.stderr) is not hidden
    assert run.stderr.rstrip().endswith(f"wrote {tmp_path / 'reviews.jsonl'}")


def test_generate_on_a_terminal_draws_tqdm_bars_and_finishes(tmp_path, inputs, server):
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 24 rows of 100 columns
    drawn = bytearray()

    def read_terminal():
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the last process holding the terminal closed it
                return
            if not chunk:
                return
            drawn.extend(chunk)

    reader = threading.Thread(target=read_terminal, daemon=True)
    reader.start()
    try:
        status = _run_praib(LONG_COMMANDS["generate"][0](inputs, server, tmp_path), follower, follower)
    finally:
        os.close(follower)
        reader.join(timeout=10)
        os.close(leader)
    said = drawn.decode(errors="replace")
    assert status == 0, said
    assert (tmp_path / "reviews.jsonl").exists()
    # tqdm's bar, redrawn in place (a carriage return, no newline), ending with the postfix.
    assert re.search(r"\rm / guidelines: 100%\|█+\| 3/3 \[[^]\n]*, cached=0\]", said), repr(said)
    assert said.rstrip().endswith(f"wrote {tmp_path / 'reviews.jsonl'}")
