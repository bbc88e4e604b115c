"""The output lock: one process writes an output at a time, the next is refused at once and told who
holds it, a killed holder blocks nobody, and the lock is re-entrant within a process."""

import os
import re
import signal
import threading
import time

import pytest

from praib.records.locks import OutputLockedError, lock_path, output_lock
from tests.lock_holder import lock_held_elsewhere, try_elsewhere


def test_a_second_process_is_refused_at_once_and_told_who_holds_the_output(tmp_path):
    output = tmp_path / "reviews.jsonl"
    with lock_held_elsewhere(output) as holder:
        started = time.monotonic()
        with pytest.raises(OutputLockedError) as refused:
            with output_lock(output):
                pytest.fail("took a lock another process holds")
        assert time.monotonic() - started < 0.5
        name = re.escape(str(output))
        assert re.fullmatch(rf"{name} is being written by another praib run "
                            rf"\(pid {holder.pid}, started \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d: -c {name}\)",
                            str(refused.value)), str(refused.value)
        assert refused.value.holder["pid"] == holder.pid
        with output_lock(tmp_path / "reviews.parquet"):  # another output is another lock
            pass
    with output_lock(output):  # the holder let go
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == []



def test_the_holders_command_line_names_a_url_without_its_password(tmp_path):
    """What a lock records of its holder is printed to the next run and left on disk: no password."""
    output = tmp_path / "reviews.jsonl"
    with lock_held_elsewhere(output, "--judge-base-url", "http://user:SECRET@127.0.0.1:8000/v1"):
        assert "SECRET" not in lock_path(output).read_text()
        with pytest.raises(OutputLockedError) as refused:
            with output_lock(output):
                pytest.fail("took a lock another process holds")
    assert str(refused.value).endswith(f": -c {output} --judge-base-url http://user:***@127.0.0.1:8000/v1)")

def test_a_lock_left_by_a_killed_process_blocks_nobody(tmp_path):
    output = tmp_path / "results"
    with lock_held_elsewhere(output) as holder:
        holder.kill()
        assert holder.wait(timeout=30) == -signal.SIGKILL
        assert lock_path(output).exists()  # left behind, held by no process
        assert try_elsewhere(output) == "took"
        with output_lock(output):
            assert try_elsewhere(output) == "refused"
    assert not lock_path(output).exists()


def test_the_lock_is_re_entrant_within_a_process_and_held_until_the_outermost_release(tmp_path, monkeypatch):
    output = tmp_path / "reviews.jsonl"
    monkeypatch.chdir(tmp_path)
    with output_lock(output):
        with output_lock("reviews.jsonl"):  # the library's run loop inside a command: same file, other spelling
            assert try_elsewhere(output) == "refused"
        assert try_elsewhere(output) == "refused"
    assert try_elsewhere(output) == "took"


def test_two_names_of_one_output_share_its_lock(tmp_path):
    (tmp_path / "runs").mkdir()
    os.symlink(tmp_path / "runs", tmp_path / "latest")
    with lock_held_elsewhere(tmp_path / "runs" / "reviews.jsonl"):
        with pytest.raises(OutputLockedError):
            with output_lock(tmp_path / "latest" / "reviews.jsonl"):
                pass


def test_the_lock_file_sits_beside_the_output(tmp_path):
    assert lock_path(tmp_path / "out" / "reviews.jsonl") == tmp_path / "out" / "reviews.jsonl.lock"
    assert lock_path(tmp_path / "results") == tmp_path / "results.lock"


def _take_and_release(path, times, results):
    refused = nameless = 0
    for _ in range(times):
        try:
            with output_lock(path):
                pass
        except OutputLockedError as err:
            refused += 1
            nameless += err.holder is None
    results.put((refused, nameless))


def test_a_refusal_names_the_holder_even_in_the_moment_it_takes_or_lets_go_of_the_lock(tmp_path):
    """Two processes take and release one output's lock in a tight loop: a refused one never reports
    an unnamed holder (the lock file is empty while its holder is taking it, and gone while it lets go)."""
    import multiprocessing

    spawn = multiprocessing.get_context("spawn")
    results = spawn.Queue()
    workers = [spawn.Process(target=_take_and_release, args=(str(tmp_path / "reviews.jsonl"), 300, results))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    counts = [results.get(timeout=10) for _ in workers]
    assert sum(nameless for _, nameless in counts) == 0, counts


def test_a_full_disk_leaves_the_lock_held_without_its_holders_details(tmp_path, monkeypatch):
    output = tmp_path / "reviews.jsonl"

    def full_disk(descriptor, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("praib.records.locks.os.write", full_disk)
    with output_lock(output):  # the run goes on, and its own writes say what is wrong
        assert try_elsewhere(output) == "refused"
        assert lock_path(output).read_text() == ""
    assert not lock_path(output).exists()


def test_with_wait_a_second_process_waits_for_the_holder_to_let_go(tmp_path):
    output = tmp_path / "rows"
    with lock_held_elsewhere(output) as holder:
        threading.Timer(0.5, holder.stdin.close).start()  # the holder lets go after half a second
        started = time.monotonic()
        with output_lock(output, wait=30):
            waited = time.monotonic() - started
            assert try_elsewhere(output) == "refused"
    assert 0.4 < waited < 30
    with lock_held_elsewhere(output):
        started = time.monotonic()
        with pytest.raises(OutputLockedError):
            with output_lock(output, wait=0.3):
                pytest.fail("took a lock another process holds")
        assert 0.3 <= time.monotonic() - started < 5
