"""The community leaderboard with its queue and results on the Hub: the same commands against a loopback
server that keeps dataset repositories as the Hub does (tests/fake_hub.py), reached through HF_ENDPOINT
by huggingface_hub alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.fake_hub import FakeHub
from tests.leaderboard.boards import (RUN_TABLES, demo_submission, direct_run, praib, process_args, run_tables,
                                      sorted_rows)
from tests.paths import ROOT


def hub_env(endpoint: str, home) -> dict:
    # Any request to another host goes to a dead proxy and fails, so nothing can reach the real Hub.
    return {"HF_ENDPOINT": endpoint, "HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0", "HF_TOKEN": "hf_test",
            "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HOME": str(home), "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}


@pytest.fixture
def hub():
    with FakeHub() as hub:
        hub.create("org/requests")
        hub.create("org/results")
        yield hub


def in_python(code: str, env: dict) -> str:
    """Run ``code`` in a fresh interpreter (huggingface_hub reads HF_ENDPOINT at import); its stdout."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env={**os.environ, "PYTHONPATH": str(ROOT),
                                                                               **env},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_submit_and_process_with_queue_and_results_on_the_hub(hub, tmp_path):
    env = hub_env(hub.endpoint, tmp_path / "hf")
    folders = [demo_submission(tmp_path / "model-a", "a"), demo_submission(tmp_path / "model-b", "b")]
    for folder in folders:
        filed = praib("leaderboard", "submit", folder, "--queue", "org/requests", env=env)
        assert filed.returncode == 0, filed.stderr
    again = praib("leaderboard", "submit", folders[0], "--queue", "org/requests", env=env)
    assert again.returncode == 1 and "already filed as model-a" in again.stderr
    processed = praib(*process_args("org/requests", "org/results"), env=env)
    assert processed.returncode == 0, processed.stderr

    queue = hub.repositories["org/requests"]
    files = queue.files("main")
    assert {json.loads(files[f"{name}.json"])["status"] for name in ("model-a", "model-b")} == {"FINISHED"}
    assert {"submissions/model-a/reviews.parquet", "submissions/model-b/manifest.json"} <= set(files)
    # Every change of a request was a commit on the revision it read (a claim that loses a race fails).
    assert [c["parentCommit"] is not None for c in queue.commits] == [True] * len(queue.commits)
    assert len(queue.commits) == 2 + 2 * 2  # two submissions, then a claim and a settlement each

    published = hub.repositories["org/results"].files("main")
    assert {"results.parquet", "run.json", "human.parquet", "submissions/model-a.parquet",
            "submissions/model-b.parquet", "scored/model-a.parquet", "scored/model-b.parquet", "details/model-a.json",
            "manifests/model-b.json", "comparisons.parquet", "ranks.parquet"} <= set(published)
    assert {name: sorted_rows(published[name]) for name in RUN_TABLES} == run_tables(direct_run(tmp_path, *folders))
    assert "/" not in json.loads(published["run.json"])["reference"].split(" (")[0]
    # The app reads the results dataset as it reads a folder.
    shown = in_python("""
        from praib.leaderboard.app import leaderboard_table, load_board
        print([row[0] for row in leaderboard_table(load_board("org/results"), "NeurIPS")[1]])
    """, env)
    assert shown.strip() == "['human (reference)', 'model-a', 'model-b']"
    # Only huggingface_hub's endpoints were asked.
    assert {path.split("/")[1] for _, path in hub.requests} <= {"api", "datasets"}


def test_a_commit_on_a_stale_revision_is_refused_and_a_bad_request_file_left_out(hub, tmp_path):
    printed = in_python("""
        from praib.leaderboard.queue import read_requests
        from praib.leaderboard.stores import HubStore
        store = HubStore("org/requests")
        stale = store.snapshot()
        print(store.commit({"a.json": b"{}"}, "first", parent=stale.version))
        print(store.commit({"b.json": b"{}"}, "second", parent=stale.version))
        print(store.snapshot().paths, store.read("a.json", store.snapshot().version), store.read("missing.json"))
        print(read_requests(store)[1])
    """, hub_env(hub.endpoint, tmp_path / "hf"))
    assert printed.splitlines() == ["True", "False", "('.gitattributes', 'a.json') b'{}' None", "[]"]
    assert len(hub.repositories["org/requests"].commits) == 2


def test_a_missing_hub_dataset_is_one_line_saying_what_to_do(hub, tmp_path):
    filed = praib("leaderboard", "submit", demo_submission(tmp_path / "model-a", "a"), "--queue", "org/nothing",
                  env=hub_env(hub.endpoint, tmp_path / "hf"))
    assert filed.returncode == 1
    assert filed.stderr.splitlines() == ["Error: org/nothing: no such dataset on the Hub (create it with `hf repo "
                                         "create org/nothing --repo-type dataset`; for a local folder write "
                                         "./org/nothing)"]
