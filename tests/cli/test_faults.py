"""Nothing lost, one bad item sinks nothing: `praib generate`, `praib score` and `praib evaluate --judge`
against a loopback OpenAI-compatible server that injects every kind of fault (issue 18's table).

Each fault is planted on one item (a paper, or a review's judgements) by a marker in the prompt: the
item's next requests get the faulty replies, then normal ones."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from praib.records import load_records
from tests.chat_server import DROP, HANG, TRUNCATE, ChatServer, completion, pipeline_answer
from tests.runs import cached_answers, failures_of, invoke

PAPERS = [f"p{i}" for i in range(1, 6)]
MARKER = re.compile(r"\b(p\d+|r\d+)\b")


class FaultyServer(ChatServer):
    """``faults[marker]``: the replies the next requests about that item get, one each, before normal ones."""

    def __init__(self):
        super().__init__(self._reply)
        self.faults: dict[str, list] = {}

    def _reply(self, body):
        prompt = body["messages"][-1]["content"]
        found = MARKER.search(prompt)
        pending = self.faults.get(found.group(1)) if found else None
        if pending and _is_item_request(body):
            return pending.pop(0)
        return pipeline_answer(body)

    def markers(self, since=0):
        """The item of every request received (from the ``since``-th on), in order; requests for the labels
        of atomic items carry none."""
        return [m.group(1) for m in (MARKER.search(b["messages"][-1]["content"]) for b in self.bodies[since:]) if m]


def _is_item_request(body):
    # A fault on a review's judgements hits its math and atomic requests, which carry the review's text.
    return "choice" not in (body.get("structured_outputs") or {})


@pytest.fixture
def server():
    s = FaultyServer()
    yield s
    s.close()


@pytest.fixture
def papers(tmp_path):
    folder = tmp_path / "papers"
    folder.mkdir()
    for paper_id in PAPERS:
        (folder / f"{paper_id}.md").write_text(f"# Paper {paper_id}\n\nWe study sparse adapters ({paper_id}).\n")
    return folder


@pytest.fixture
def reviews(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps({
        "review_id": f"r{i}", "paper_id": f"p{i}", "venue": "ICLR", "year": 2025, "source": "human",
        "text": f"Review r{i}. The derivation of Eq. ({i}) is wrong.\n\nWeaknesses: no ablation.", "rating": 6,
    }) + "\n" for i in range(1, 6)))
    return path


def _generate(server, papers, out, cache, *extra):
    return ["generate", "m", str(papers), "--backend", "openai", "--base-url", server.url, "--prompt", "guidelines",
            "--venue", "ICLR", "--year", "2025", "-o", str(out), "--cache-dir", str(cache), "--no-progress",
            "--timeout", "0.5", *extra]


def _judge(server, cache, *extra):
    return ["--judge", "judge-model", "--judge-backend", "openai", "--judge-base-url", server.url,
            "--judge-timeout", "0.5", "--cache-dir", str(cache), "--no-progress", *extra]


def _score(server, reviews, out, cache, *extra):
    return ["score", str(reviews), "-o", str(out), *_judge(server, cache, *extra)]


def _evaluate(server, reviews, out, cache, *extra):
    return ["evaluate", str(reviews), "-o", str(out), "--workers", "1", *_judge(server, cache, *extra)]


SERVER_ERROR = (503, {}, b'{"error": "overloaded"}')
TRANSIENT = {
    "429 with Retry-After": (429, {"Retry-After": "0.05"}, b'{"error": "slow down"}'),
    "5xx": SERVER_ERROR,
    "truncated body": (TRUNCATE, {}, completion("m", "cut")),
    "hang": (HANG, {"seconds": 1.5}, completion("m", "late")),
    "dropped connection": (DROP, {}, b""),
    "200 not JSON": (200, {}, b"<html>proxy error</html>"),
    "200 empty choices": (200, {}, b'{"choices": []}'),
    "200 not UTF-8": (200, {}, b"\xff\xfe\x00{"),
}


@pytest.mark.parametrize("fault", sorted(TRANSIENT))
def test_a_server_failing_twice_is_retried_and_generate_loses_nothing(tmp_path, server, papers, fault):
    server.faults["p3"] = [TRANSIENT[fault]] * 2
    out = tmp_path / "reviews.jsonl"
    result = invoke(_generate(server, papers, out, tmp_path / "cache", "--max-tries", "3"))
    assert result.exit_code == 0, result.output
    assert sorted(load_records(out)["paper_id"]) == PAPERS
    assert sorted(server.markers()) == sorted(PAPERS + ["p3", "p3"])
    assert failures_of(out) == [] and cached_answers(tmp_path / "cache") == 5


@pytest.mark.parametrize("fault", ["5xx", "200 not JSON", "truncated body", "dropped connection"])
def test_a_server_failing_twice_is_retried_and_score_loses_nothing(tmp_path, server, reviews, fault):
    server.faults["r2"] = [TRANSIENT[fault]] * 2
    out = tmp_path / "judgements.jsonl"
    result = invoke(_score(server, reviews, out, tmp_path / "cache", "--judge-max-tries", "3"))
    assert result.exit_code == 0, result.output
    rows = load_records_json(out)
    assert [r["math_engages"] for r in rows] == [True] * 5 and all(r["atomic_valid"] for r in rows)
    assert failures_of(out) == []


def load_records_json(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_one_paper_failing_on_every_try_is_recorded_the_others_written_and_the_rerun_sends_only_it(
        tmp_path, server, papers):
    server.faults["p4"] = [(500, {}, b"internal error")] * 2
    out, cache = tmp_path / "reviews.jsonl", tmp_path / "cache"
    first = invoke(_generate(server, papers, out, cache, "--max-tries", "2"))
    assert first.exit_code == 3, first.output
    assert sorted(load_records(out)["paper_id"]) == ["p1", "p2", "p3", "p5"]
    [failure] = failures_of(out)
    assert {k: failure[k] for k in ("item_id", "stage", "error", "tries")} == {
        "item_id": "p4", "stage": "generate:guidelines", "error": "ServerError", "tries": 2}
    assert failure["message"] == f"HTTP 500 from {server.url}/chat/completions: b'internal error' (after 2 tries)"
    assert cached_answers(cache) == 4  # every answer that arrived
    assert "4 reviews of 5 papers (0 from cache, 4 generated now, 1 failed)" in first.output
    assert "failed: 1 of 5 papers got no review" in first.output and "failures.jsonl" in first.output

    sent = len(server.bodies)
    again = invoke(_generate(server, papers, out, cache, "--max-tries", "2"))
    assert again.exit_code == 0, again.output
    assert server.markers(since=sent) == ["p4"]
    assert sorted(load_records(out)["paper_id"]) == PAPERS and failures_of(out) == []



def test_credentials_in_the_servers_url_reach_the_server_and_no_file_or_line(tmp_path, server, papers):
    """A --base-url with a password: sent as HTTP Basic authentication, shown as user:*** in the failure
    record and the summary, and written nowhere (output, failures, cache, lock)."""
    server.faults["p4"] = [(500, {}, b"internal error")] * 2
    out, cache = tmp_path / "reviews.jsonl", tmp_path / "cache"
    args = _generate(server, papers, out, cache, "--max-tries", "2")
    args[args.index(server.url)] = server.url.replace("http://", "http://user:SECRET@")
    result = invoke(args)
    assert result.exit_code == 3, result.output
    assert {h.get("Authorization") for h in server.headers} == {"Basic dXNlcjpTRUNSRVQ="}  # base64, by hand
    shown = server.url.replace("http://", "http://user:***@")
    assert failures_of(out)[0]["message"] == f"HTTP 500 from {shown}/chat/completions: b'internal error' (after 2 tries)"
    assert f"HTTP 500 from {shown}" in result.output
    assert "SECRET" not in result.output
    for path in tmp_path.rglob("*"):
        assert path.is_dir() or b"SECRET" not in path.read_bytes(), path

@pytest.mark.parametrize("command", [_score, _evaluate])
def test_one_review_whose_judgements_always_fail_is_recorded_and_the_rerun_sends_only_it(
        tmp_path, server, reviews, command):
    server.faults["r4"] = [(500, {}, b"internal error")] * 4
    out, cache = tmp_path / ("judgements.jsonl" if command is _score else "results.json"), tmp_path / "cache"
    first = invoke(command(server, reviews, out, cache, "--judge-max-tries", "2"))
    assert first.exit_code == 3, first.output
    failures = failures_of(out)
    assert sorted((f["item_id"], f["error"], f["tries"]) for f in failures) == [
        ("r4/atomic", "ServerError", 2), ("r4/math", "ServerError", 2)]
    if command is _score:
        assert "judged 5 reviews with judge-model (1 with a failed judgement: see math_error, atomic_error)" \
            in first.output
        rows = {r["review_id"]: r for r in load_records_json(out)}
        assert rows["r4"]["math_engages"] is None and "HTTP 500" in rows["r4"]["math_error"]
        assert rows["r4"]["math_raw"] is None  # no answer arrived
        assert rows["r4"]["atomic_valid"] is False and "HTTP 500" in rows["r4"]["atomic_error"]
        assert all(rows[r]["math_engages"] for r in ("r1", "r2", "r3", "r5"))

    sent = len(server.bodies)
    again = invoke(command(server, reviews, out, cache, "--judge-max-tries", "2"))
    assert again.exit_code == 0, again.output
    # its math and atomic requests and nothing else: the labels of its atomic items ("simple method",
    # "no error bars") are in the cache already, asked for the other reviews' identical items
    assert sorted(server.markers(since=sent)) == ["r4", "r4"] and len(server.bodies) - sent == 2
    assert failures_of(out) == []


def test_a_hanging_judge_is_bounded_by_its_timeout_and_tries(tmp_path, server, reviews):
    server.faults["r1"] = [(HANG, {"seconds": 3}, b"")] * 4
    out = tmp_path / "judgements.jsonl"
    started = time.monotonic()
    result = invoke(_score(server, reviews, out, tmp_path / "cache", "--judge-timeout", "0.3",
                           "--judge-max-tries", "2"))
    assert time.monotonic() - started < 10
    assert result.exit_code == 3, result.output
    assert {(f["item_id"], f["error"]) for f in failures_of(out)} == {("r1/math", "Timeout"), ("r1/atomic", "Timeout")}
    assert all(f["message"].startswith(f"no response from {server.url}/chat/completions within 0.3 s")
               for f in failures_of(out))


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to fill a disk with")
def test_a_full_disk_names_the_file_and_the_rerun_sends_no_answered_request_again(tmp_path, server, papers):
    out, cache = tmp_path / "reviews.jsonl", tmp_path / "cache"
    partial = tmp_path / "reviews.partial.jsonl"
    partial.symlink_to("/dev/full")  # the output's disk is full (ENOSPC on every write); the cache's is not
    server.delay = 0.2  # every request is in flight when the first answer cannot be written
    result = invoke(_generate(server, papers, out, cache))
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == f"Error: cannot write {partial}: No space left on device"
    assert len(server.bodies) == 5 and cached_answers(cache) == 5  # answered, and kept though not written

    partial.unlink()  # room again
    again = invoke(_generate(server, papers, out, cache))
    assert again.exit_code == 0, again.output
    assert len(server.bodies) == 5  # the rerun sends nothing
    assert "(5 from cache, 0 generated now)" in again.output
    assert sorted(load_records(out)["paper_id"]) == PAPERS


def test_max_failures_stops_the_run_with_one_line_and_keeps_the_records(tmp_path, server, papers):
    for paper_id in PAPERS:
        server.faults[paper_id] = [(500, {}, b"down")]
    out = tmp_path / "reviews.jsonl"
    result = invoke(_generate(server, papers, out, tmp_path / "cache", "--max-tries", "1", "--concurrency", "1",
                              "--batch-size", "1", "--max-failures", "2"))
    assert result.exit_code == 1
    assert "Error: stopped: 2 items failed (--max-failures 2)" in result.output
    assert len(failures_of(out)) == 2 and len(server.bodies) == 2 and not out.exists()


def test_a_server_that_never_answers_stops_the_run_after_twenty_requests(tmp_path, server):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(30):
        (folder / f"q{i}.md").write_text(f"# Paper q{i}\n\nText.\n")
    server.answer = lambda body: (503, {}, b"maintenance")
    out = tmp_path / "reviews.jsonl"
    result = invoke(_generate(server, folder, out, tmp_path / "cache", "--max-tries", "1", "--concurrency", "1",
                              "--batch-size", "1"))
    assert result.exit_code == 1
    assert "none of the first 20 requests got an answer; is the server up?" in result.output
    assert len(server.bodies) == 20 and len(failures_of(out)) == 20


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["killed", "ctrl-c"])
def test_a_killed_run_resumes_without_repeating_an_answered_call(tmp_path, server, how):
    folder = tmp_path / "papers"
    folder.mkdir()
    ids = [f"p{i}" for i in range(1, 13)]
    for paper_id in ids:
        (folder / f"{paper_id}.md").write_text(f"# Paper {paper_id}\n\nWe study sparse adapters ({paper_id}).\n")
    # The later requests wait at a gate that opens only once the signal is sent: the run is still going when the
    # signal comes, however long a busy machine keeps this test from looking, and ends soon after it.
    gate = threading.Event()
    server.delay = lambda body: 0.25 if len(server.bodies) <= 6 or gate.wait(60) else 0
    out, cache = tmp_path / "reviews.jsonl", tmp_path / "cache"
    args = _generate(server, folder, out, cache, "--concurrency", "2")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # A shell that starts the suite in the background makes it ignore SIGINT, and the child would inherit that:
    # give the child the default, as a terminal's Ctrl-C finds it.
    run = subprocess.Popen([sys.executable, "-m", "praib.cli.main", *args], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while len(server.bodies) < 5 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.02)
        run.send_signal(how)
    finally:
        gate.set()
        run.wait(timeout=30)
    said = run.stdout.read().decode()
    if how == signal.SIGKILL:
        assert run.returncode == -signal.SIGKILL, said
    else:
        assert run.returncode == 130 and said.rstrip().endswith("Interrupted."), said
        assert "rerun the same command to resume: every answer that arrived is in the call cache" in said
        assert "Traceback" not in said
    time.sleep(0.5)  # replies in flight when the client died
    answered = cached_answers(cache)
    assert 0 < answered < len(ids)
    with sqlite3.connect(cache / "calls.sqlite3") as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    sent = len(server.bodies)
    server.delay = 0.0
    resumed = invoke(_generate(server, folder, out, cache, "--concurrency", "2"))
    assert resumed.exit_code == 0, resumed.output
    assert len(server.bodies) - sent == len(ids) - answered  # no answered call repeated
    assert f"({answered} from cache, {len(ids) - answered} generated now)" in resumed.output
    assert sorted(load_records(out)["paper_id"]) == sorted(ids)
