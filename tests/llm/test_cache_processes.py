"""One call cache shared by several processes at once (runs of different models on one machine, each
with its own output): every answer each of them stores is kept, and none fails on a locked database."""

from __future__ import annotations

import multiprocessing

from praib.llm.cache import CallCache

WORKERS, PUTS = 4, 200


def answer(worker: int, call: int) -> str:
    return f"review {call} by model {worker}"


def store_answers(directory, worker: int, start) -> None:
    """One process of a run: opens the cache when all start together, stores each answer as it comes
    and reads it back."""
    start.wait()
    with CallCache(directory) as cache:
        for call in range(PUTS):
            cache.put(f"{worker}/{call}", answer(worker, call), model_revision=f"rev-{worker}")
            assert cache.get(f"{worker}/{call}") == answer(worker, call)


def test_processes_writing_one_cache_at_once_lose_nothing(tmp_path):
    directory = tmp_path / "calls"
    spawn = multiprocessing.get_context("spawn")
    start = spawn.Event()
    workers = [spawn.Process(target=store_answers, args=(directory, worker, start)) for worker in range(WORKERS)]
    for process in workers:
        process.start()
    start.set()
    for process in workers:
        process.join(timeout=300)
    assert [process.exitcode for process in workers] == [0] * WORKERS  # a "database is locked" would be 1

    with CallCache(directory) as cache:
        assert len(cache) == WORKERS * PUTS
        stored = cache.get_many([f"{worker}/{call}" for worker in range(WORKERS) for call in range(PUTS)])
        assert stored == {f"{worker}/{call}": answer(worker, call) for worker in range(WORKERS) for call in range(PUTS)}
        assert cache.metadata(f"{WORKERS - 1}/{PUTS - 1}") == {"model_revision": f"rev-{WORKERS - 1}"}
