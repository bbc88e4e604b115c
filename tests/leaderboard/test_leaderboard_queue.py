"""The community leaderboard on local folders: `praib leaderboard submit` files requests into a queue,
`praib leaderboard process` takes them under a lease and publishes each submission's rows; the results
equal a direct `praib leaderboard run` of the same submissions, two runners never take one request, and a
runner killed at any moment leaves nothing that the next one does not finish."""

from __future__ import annotations

import datetime
import json
import shutil
import signal
import time
from collections import Counter
from pathlib import Path

import datasets
import pytest
from click.testing import CliRunner
from filelock import FileLock

from praib.cli.main import main
from praib.leaderboard import run as run_module, runner as runner_module
from praib.leaderboard.queue import claim, read_requests
from praib.leaderboard.runner import Runner
from praib.leaderboard.stores import LocalStore
from praib.records import load_records
from tests.leaderboard.boards import (N_BOOTSTRAP, all_perturbed, demo_rows, demo_submission, direct_run, process_args,
                                      praib, requests, run_tables, sorted_rows, start_praib, write_submission)
from tests.paths import DEMO


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def row_keys(path: Path) -> Counter:
    return Counter((r["submission"], r["metric"], r["venue"]) for r in sorted_rows(path))


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """Three submissions filed (one of them cannot be scored), one filed by hand with a bad manifest, an
    invalid one and a duplicate refused; then one runner processes the queue."""
    root = tmp_path_factory.mktemp("board")
    queue, results = root / "queue", root / "results"
    model_a = demo_submission(root / "in" / "model-a", "a")
    model_b = demo_submission(root / "in" / "model-b", "b")
    flipped = all_perturbed(root / "in" / "flipped")
    late = write_submission(root / "in" / "late", demo_rows("a", "guidelines"), date="last Tuesday")
    outputs = {"invalid": invoke("leaderboard", "submit", late, "--queue", queue)}
    for name, folder in (("model-a", model_a), ("model-b", model_b), ("flipped", flipped)):
        outputs[name] = invoke("leaderboard", "submit", folder, "--queue", queue)
    again = demo_submission(root / "in" / "again", "a")  # model-a's records under another folder name
    outputs["duplicate"] = invoke("leaderboard", "submit", again, "--queue", queue)

    # Anyone can upload a request to a Hub queue without praib: one whose manifest is bad.
    by_hand = requests(queue)["model-b"] | {"name": "by-hand", "submitted": "2026-01-01T00:00:00.000+00:00"}
    (queue / "by-hand.json").write_text(json.dumps(by_hand))
    (queue / "submissions" / "by-hand").mkdir()
    (queue / "submissions" / "by-hand" / "reviews.parquet").write_bytes(
        (queue / "submissions" / "model-b" / "reviews.parquet").read_bytes())
    manifest = json.loads((queue / "submissions" / "model-b" / "manifest.json").read_text()) | {"date": "soon"}
    (queue / "submissions" / "by-hand" / "manifest.json").write_text(json.dumps(manifest))

    outputs["process"] = invoke(*process_args(queue, results))
    return {"root": root, "queue": queue, "results": results, "outputs": outputs,
            "submissions": (model_a, model_b)}


def test_submit_files_a_pending_request_with_a_copy_of_the_submission(board):
    outputs, queue = board["outputs"], board["queue"]
    for name in ("model-a", "model-b", "flipped"):
        assert outputs[name].exit_code == 0, outputs[name].output
        assert outputs[name].output.startswith(f"filed {name} (")
    request = requests(queue)["model-a"]
    manifest = json.loads((board["submissions"][0] / "manifest.json").read_text())
    assert (request["model"], request["revision"], request["prompts"], request["manifest"]) == (
        "demo-model-a", "v1", ["extended"], manifest)
    assert request["n_reviews"] == 8 and request["dataset"] is None
    copied = load_records(queue / "submissions" / "model-a").to_list()
    assert copied == load_records(board["submissions"][0] / "reviews.jsonl").to_list()


def test_an_invalid_submission_is_refused_with_its_problems_and_not_filed(board):
    refused = board["outputs"]["invalid"]
    assert refused.exit_code == 1
    assert "  problem: manifest: field 'date' must be an ISO date YYYY-MM-DD, got 'last Tuesday'" in refused.output
    assert refused.output.splitlines()[-1].endswith("late: invalid submission, not filed")
    assert "late" not in requests(board["queue"])


def test_a_duplicate_is_refused_naming_the_first(board):
    refused = board["outputs"]["duplicate"]
    assert refused.exit_code == 1
    assert refused.output.startswith(f"Error: {board['root'] / 'in' / 'again'}: already filed as model-a on ")
    assert "same model 'demo-model-a', revision 'v1', prompts extended and records (sha256:" in refused.output
    assert sorted(requests(board["queue"])) == ["by-hand", "flipped", "model-a", "model-b"]


def test_every_request_ends_finished_or_failed_with_its_reason(board):
    assert board["outputs"]["process"].exit_code == 0, board["outputs"]["process"].output
    settled = requests(board["queue"])
    assert {name: r["status"] for name, r in settled.items()} == {
        "model-a": "FINISHED", "model-b": "FINISHED", "flipped": "FAILED", "by-hand": "FAILED"}
    assert settled["flipped"]["reason"].endswith("no review of an original paper to score (its 8 reviews are "
                                                 "all of perturbed papers)")
    assert settled["by-hand"]["reason"] == ("invalid submission: manifest: field 'date' must be an ISO date "
                                            "YYYY-MM-DD, got 'soon'")
    assert all(r["attempts"] == 1 and r["lease_expires"] is None for r in settled.values())
    # Oldest first: the request filed by hand carries the earliest time.
    taken = [line.split(":")[0] for line in board["outputs"]["process"].output.splitlines() if ": taken by " in line]
    assert taken == ["by-hand", "model-a", "model-b", "flipped"]


def test_results_equal_a_direct_leaderboard_run_of_the_finished_submissions(board, tmp_path):
    expected = direct_run(tmp_path, *board["submissions"])
    assert run_tables(board["results"]) == run_tables(expected)
    # The comparisons are of the two finished submissions: one pair on each metric and venue.
    pairs = sorted_rows(board["results"] / "comparisons.parquet")
    assert pairs and {(r["submission_a"], r["submission_b"]) for r in pairs} == {("model-a", "model-b")}
    assert {r["submission"] for r in sorted_rows(board["results"] / "ranks.parquet")} == {"model-a", "model-b"}
    # As a dataset, the results folder is its whole table (the card's default config), not every Parquet file.
    loaded = datasets.load_dataset(str(board["results"]), split="train")
    assert sorted(loaded.to_list(), key=lambda r: tuple(str(v) for v in r.values())) == run_tables(expected)[
        "results.parquet"]
    for folder in ("submissions", "scored"):
        assert {p.name for p in (board["results"] / folder).iterdir()} == {"model-a.parquet", "model-b.parquet"}
    run = json.loads((board["results"] / "run.json").read_text())
    assert run["submissions"] == {name: f"sha256:{requests(board['queue'])[name]['records_sha256'][:16]}"
                                  for name in ("model-a", "model-b")}
    assert (run["n_bootstrap"], run["seed"], run["fdr"]) == (N_BOOTSTRAP, 0, 0.05)
    assert run["reference"].startswith("reviews.jsonl (sha256:") and str(board["root"]) not in json.dumps(run)


def test_a_runner_scores_the_reference_once_and_compares_from_the_stored_reviews(board, tmp_path, monkeypatch):
    # A results store holding model-a's files as a runner left them, its request FINISHED, and two more
    # pending: the next runner scores the human reference once and each new submission once, and draws the
    # comparisons over all three from the stored per-review tables (model-a's texts are not scored again).
    results = tmp_path / "results"
    for path in ("human.parquet", "submissions/model-a.parquet", "scored/model-a.parquet",
                 "manifests/model-a.json", "details/model-a.json"):
        (results / path).parent.mkdir(parents=True, exist_ok=True)
        (results / path).write_bytes((board["results"] / path).read_bytes())
    queue = LocalStore(tmp_path / "queue")
    folders = [board["submissions"][0], demo_submission(tmp_path / "model-b", "b"),
               demo_submission(tmp_path / "a-guidelines", "a", "guidelines")]
    for folder in folders:
        assert invoke("leaderboard", "submit", folder, "--queue", queue.folder).exit_code == 0
    queue.commit({"model-a.json": json.dumps({**requests(queue.folder)["model-a"], "status": "FINISHED"}).encode()},
                 "model-a was processed before")
    scored = []
    score = run_module.ScoredReviews.score

    def counted(reviews, *args, **kwargs):
        scored.append(len(reviews))
        return score(reviews, *args, **kwargs)

    monkeypatch.setattr(run_module.ScoredReviews, "score", counted)
    runner = Runner(queue, LocalStore(results), load_records(DEMO / "reviews.jsonl"), "demo", N_BOOTSTRAP,
                    workers=1, say=lambda line: None)
    assert runner.run() == 2
    humans = len(load_records(DEMO / "reviews.jsonl").filter(lambda r: r["source"] == "human"))
    assert sorted(scored) == sorted([humans, len(demo_rows("b", "extended")), len(demo_rows("a", "guidelines"))])
    monkeypatch.undo()
    assert run_tables(results) == run_tables(direct_run(tmp_path, *folders))


def test_a_second_process_finds_nothing_to_do_and_changes_nothing(board):
    before = sorted_rows(board["results"] / "results.parquet")
    again = invoke(*process_args(board["queue"], board["results"]))
    assert again.exit_code == 0 and again.output.strip().endswith("settled 0 requests; none pending in "
                                                                  f"{board['queue']}")
    assert sorted_rows(board["results"] / "results.parquet") == before


def test_results_scored_with_other_settings_or_holding_other_files_are_refused(board, tmp_path):
    other = invoke("leaderboard", "process", "--queue", board["queue"], "--results", board["results"], "--demo",
                   "--n-bootstrap", N_BOOTSTRAP + 1, "--no-progress")
    assert other.exit_code == 1
    assert f"n_bootstrap {N_BOOTSTRAP} (here {N_BOOTSTRAP + 1})" in other.output
    other_fdr = invoke(*process_args(board["queue"], board["results"], "--fdr", 0.1))
    assert other_fdr.exit_code == 1 and "fdr 0.05 (here 0.1)" in other_fdr.output
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my own notes")
    refused = invoke(*process_args(board["queue"], mine))
    assert refused.exit_code == 1 and "holds files that `praib leaderboard process` does not write (notes.txt)" \
        in refused.output
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    # Results written before the runner stored each submission's per-review table: no comparison can be drawn.
    older = tmp_path / "older"
    shutil.copytree(board["results"], older, ignore=shutil.ignore_patterns("scored"))
    refused = invoke(*process_args(board["queue"], older))
    assert refused.exit_code == 1 and refused.output == (
        f"Error: {older}: submissions/model-a.parquet, submissions/model-b.parquet without a per-review table in "
        "scored/ (written by a praib before comparisons): file the submissions again into a new queue and results "
        "store\n")


def test_a_claim_that_loses_the_race_takes_the_next_request(tmp_path):
    queue = LocalStore(tmp_path / "queue")
    for model in ("a", "b"):
        assert invoke("leaderboard", "submit", demo_submission(tmp_path / f"model-{model}", model),
                      "--queue", queue.folder).exit_code == 0
    commit = queue.commit
    rival = []

    def another_runner_commits_first(files, message, parent=None):
        if not rival:  # between this runner's read and its commit, another runner claims
            queue.commit = commit
            rival.append(claim(queue, "rival", 60))
            queue.commit = another_runner_commits_first
        return commit(files, message, parent)

    queue.commit = another_runner_commits_first
    taken = claim(queue, "me", 60)
    assert (rival[0].name, rival[0].runner) == ("model-a", "rival")
    assert (taken.name, taken.runner) == ("model-b", "me")
    assert {r.name: (r.status, r.runner) for r in read_requests(queue)[1]} == {
        "model-a": ("RUNNING", "rival"), "model-b": ("RUNNING", "me")}


def test_two_runners_started_at_once_process_each_of_four_requests_once(tmp_path):
    queue, results = tmp_path / "queue", tmp_path / "results"
    folders = [demo_submission(tmp_path / "in" / "a-extended", "a"),
               demo_submission(tmp_path / "in" / "a-guidelines", "a", "guidelines"),
               demo_submission(tmp_path / "in" / "b-extended", "b"),
               write_submission(tmp_path / "in" / "a-extended-v2", demo_rows("a", "extended")[:6], revision="v2")]
    for folder in folders:
        assert invoke("leaderboard", "submit", folder, "--queue", queue).exit_code == 0
    fdr = ("--fdr", 0.25)  # any false discovery rate, as long as every runner gives the same
    runners = [start_praib(*process_args(queue, results, *fdr)) for _ in range(2)]
    outputs = [r.communicate(timeout=300) for r in runners]
    assert [r.returncode for r in runners] == [0, 0], outputs
    taken = Counter(line.split(":")[0] for out, _ in outputs for line in out.splitlines() if ": taken by " in line)
    assert taken == Counter({f.name: 1 for f in folders})
    settled = requests(queue)
    assert {(r["status"], r["attempts"]) for r in settled.values()} == {("FINISHED", 1)}
    assert run_tables(results) == run_tables(direct_run(tmp_path, *folders, options=fdr))
    assert json.loads((results / "run.json").read_text())["fdr"] == 0.25


def test_a_runner_killed_mid_run_is_finished_by_the_next_after_its_lease(tmp_path):
    queue, results = tmp_path / "queue", tmp_path / "results"
    folder = demo_submission(tmp_path / "model-a", "a")
    assert invoke("leaderboard", "submit", folder, "--queue", queue).exit_code == 0
    results.mkdir()
    # Held here, the results folder's lock stops the runner where it publishes, whatever its speed.
    with FileLock(results / LocalStore.LOCK):
        first = start_praib(*process_args(queue, results, "--lease", 6))
        deadline = time.monotonic() + 120
        while requests(queue)["model-a"]["status"] != "RUNNING" and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    held = requests(queue)["model-a"]
    assert held["status"] == "RUNNING" and held["attempts"] == 1
    assert claim(LocalStore(queue), "too-soon", 60) is None  # its lease still runs
    time.sleep(max(0.0, _seconds_until(held["lease_expires"])))
    after = praib(*process_args(queue, results))
    assert after.returncode == 0, after.stderr
    settled = requests(queue)["model-a"]
    assert (settled["status"], settled["attempts"]) == ("FINISHED", 2) and settled["runner"] != held["runner"]
    assert run_tables(results) == run_tables(direct_run(tmp_path, folder))


def _seconds_until(moment: str) -> float:
    return (datetime.datetime.fromisoformat(moment) - datetime.datetime.now(datetime.timezone.utc)).total_seconds()


class Killed(BaseException):
    """A runner's death at one moment of its work (nothing after it runs)."""


def _die(*args, **kwargs):
    raise Killed


@pytest.mark.parametrize("moment", ["scoring", "publishing", "recomputing", "settling"])
def test_a_runner_killed_at_any_moment_leaves_one_finished_request_and_no_row_twice(tmp_path, monkeypatch, moment):
    queue, results = LocalStore(tmp_path / "queue"), LocalStore(tmp_path / "results")
    folders = [demo_submission(tmp_path / "model-a", "a"), demo_submission(tmp_path / "model-b", "b")]
    for folder in folders:
        assert invoke("leaderboard", "submit", folder, "--queue", queue.folder).exit_code == 0

    def runner(lease: float) -> Runner:
        return Runner(queue, results, load_records(DEMO / "reviews.jsonl"), "demo", N_BOOTSTRAP, workers=1,
                      lease_seconds=lease, say=lambda line: None)

    assert runner(60).process_next().status == "FINISHED"  # model-a, before the runner that dies
    with monkeypatch.context() as patch:
        if moment == "scoring":
            patch.setattr(runner_module, "score_run", _die)
        elif moment == "publishing":
            patch.setattr(results, "commit", _die)
        elif moment == "recomputing":
            patch.setattr(runner_module, "recompute", _die)
        else:
            patch.setattr(runner_module, "settle", _die)
        with pytest.raises(Killed):
            runner(0.2).process_next()
    assert {r.name: r.status for r in read_requests(queue)[1]} == {"model-a": "FINISHED", "model-b": "RUNNING"}
    time.sleep(0.3)
    settled = runner(60).process_next()
    assert (settled.name, settled.status, settled.attempts) == ("model-b", "FINISHED", 2)
    assert runner(60).process_next() is None
    keys = row_keys(results.folder / "results.parquet")
    assert max(keys.values()) == 1
    assert run_tables(results.folder) == run_tables(direct_run(tmp_path, *folders))


def test_a_runner_whose_lease_ran_out_leaves_the_request_to_the_runner_that_took_it_over(tmp_path, monkeypatch):
    queue, results = LocalStore(tmp_path / "queue"), LocalStore(tmp_path / "results")
    folders = [demo_submission(tmp_path / "model-a", "a"), demo_submission(tmp_path / "model-b", "b")]
    for folder in folders:
        assert invoke("leaderboard", "submit", folder, "--queue", queue.folder).exit_code == 0
    reference = load_records(DEMO / "reviews.jsonl")
    said = {"slow": [], "other": []}
    score = runner_module.score_run
    overtaken = []

    def slower_than_its_lease(*args, **kwargs):
        if not overtaken:  # the slow runner's first scoring outlasts its lease; meanwhile another runner takes over
            overtaken.append(True)
            time.sleep(0.3)
            other = Runner(queue, results, reference, "demo", N_BOOTSTRAP, workers=1, say=said["other"].append)
            assert other.process_next().status == "FINISHED"
        return score(*args, **kwargs)

    monkeypatch.setattr(runner_module, "score_run", slower_than_its_lease)
    slow = Runner(queue, results, reference, "demo", N_BOOTSTRAP, workers=1, lease_seconds=0.2,
                  say=said["slow"].append)
    assert slow.run() == 1  # model-b: it goes on after leaving model-a to the other runner
    assert said["slow"][1] == "model-a: taken over by another runner after this one's lease ran out; left to it"
    settled = {r.name: r for r in read_requests(queue)[1]}
    assert (settled["model-a"].status, settled["model-a"].attempts) == ("FINISHED", 2)
    assert settled["model-a"].runner == said["other"][0].split()[3] != slow.id == settled["model-b"].runner
    assert run_tables(results.folder) == run_tables(direct_run(tmp_path, *folders))
