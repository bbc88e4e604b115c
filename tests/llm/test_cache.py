"""The on-disk call cache: key stability and sensitivity, sending only misses, resuming a killed run."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading

import pytest

from praib.llm.backends import GenerationRequest, SamplingConfig
from praib.llm.cache import CachedBackend, CallCache
from tests.doubles import StubBackend

BASE = GenerationRequest(
    messages=(("system", "You are a reviewer."), ("user", "Review this paper.")),
    sampling=SamplingConfig(max_new_tokens=512, temperature=0.0, top_p=1.0, seed=0),
    template="zero_shot/iclr/2025",
    json_schema=None,
    choices=None,
)


def echo(**options):
    """A stub backend that echoes the last message and the seed."""
    return StubBackend(lambda r: f"out: {r.messages[-1][1]} / seed {r.sampling.seed}", name="fake", model="fake-model",
                       **options)


def paper(i, seed=0):
    return dataclasses.replace(BASE, messages=(("user", f"paper {i}"),), sampling=SamplingConfig(seed=seed))


def test_key_is_stable_and_hex():
    k = CallCache.key("vllm", "m", BASE)
    assert k == CallCache.key("vllm", "m", dataclasses.replace(BASE))
    assert len(k) == 64 and int(k, 16) >= 0


@pytest.mark.parametrize("change", [
    {"template": "few_shot/iclr/2025"},
    {"template": None},
    {"messages": (("system", "You are a reviewer."), ("user", "Review this paper!"))},
    {"messages": (("user", "You are a reviewer."), ("user", "Review this paper."))},
    {"messages": (("user", "Review this paper."),)},
    {"sampling": SamplingConfig(max_new_tokens=513)},
    {"sampling": dataclasses.replace(BASE.sampling, temperature=0.7)},
    {"sampling": dataclasses.replace(BASE.sampling, top_p=0.9)},
    {"sampling": dataclasses.replace(BASE.sampling, seed=1)},
    {"json_schema": '{"type":"object"}'},
    {"choices": ("Accept", "Reject")},
    {"choices": ("Reject", "Accept")},
])
def test_key_changes_with_every_field(change):
    assert CallCache.key("vllm", "m", dataclasses.replace(BASE, **change)) != CallCache.key("vllm", "m", BASE)


def test_key_depends_on_backend_and_model():
    k = CallCache.key("vllm", "m", BASE)
    assert CallCache.key("openai", "m", BASE) != k
    assert CallCache.key("vllm", "m2", BASE) != k


def test_key_same_across_processes():
    code = (
        "from praib.llm.backends import GenerationRequest, SamplingConfig\n"
        "from praib.llm.cache import CallCache\n"
        "r = GenerationRequest(messages=(('system', 'You are a reviewer.'), ('user', 'Review this paper.')),"
        " sampling=SamplingConfig(max_new_tokens=512), template='zero_shot/iclr/2025')\n"
        "print(CallCache.key('vllm', 'm', r))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "123"}).stdout.strip()
    assert out == CallCache.key("vllm", "m", BASE)


def test_callcache_get_put_len_persist(tmp_path):
    c = CallCache(tmp_path / "cache")
    assert len(c) == 0 and c.get("k") is None
    c.put("k", "hello ✓", model_revision="abc")
    c.put("k2", "")
    assert c.get("k") == "hello ✓" and c.get("k2") == "" and len(c) == 2
    assert c.metadata("k") == {"model_revision": "abc"}
    # a second object on the same directory sees the rows at once (committed immediately)
    c2 = CallCache(tmp_path / "cache")
    assert c2.get("k") == "hello ✓" and len(c2) == 2
    assert (tmp_path / "cache" / "calls.sqlite3").exists()
    journal = c2._conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert journal.lower() == "wal"


def test_callcache_threads(tmp_path):
    c = CallCache(tmp_path)

    def work(t):
        for i in range(50):
            c.put(f"{t}-{i}", str(i))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(c) == 200


def test_cached_backend_sends_only_misses(tmp_path):
    inner = echo()
    cb = CachedBackend(inner, CallCache(tmp_path))
    assert (cb.name, cb.model, cb.model_revision) == ("fake", "fake-model", "rev1")
    first = cb.generate([paper(0), paper(1)])
    assert first == ["out: paper 0 / seed 0", "out: paper 1 / seed 0"]
    assert (cb.hits, cb.misses) == (0, 2)

    reqs = [paper(1), paper(2), paper(0), paper(3), paper(2), paper(1, seed=5)]
    out = cb.generate(reqs)
    assert out == [f"out: {r.messages[-1][1]} / seed {r.sampling.seed}" for r in reqs]
    # one inner call with only the misses, duplicates sent once, in order of first appearance
    assert len(inner.batches) == 2
    assert inner.batches[1] == [paper(2), paper(3), paper(1, seed=5)]
    assert (cb.hits, cb.misses) == (3, 5)

    # a repeated run costs nothing
    assert cb.generate(reqs) == out
    assert len(inner.batches) == 2
    assert cb.cache.metadata(CallCache.key("fake", "fake-model", paper(3)))["model_revision"] == "rev1"


def test_cached_backend_empty(tmp_path):
    inner = echo()
    assert CachedBackend(inner, tmp_path).generate([]) == []
    assert inner.batches == []


def test_resume_after_interrupted_run(tmp_path):
    reqs = [paper(i) for i in range(10)]
    # the run is killed on the inner backend's third call; chunks of 3 requests per call
    killed = echo(fail_after=6, failure=RuntimeError("killed"))
    cb = CachedBackend(killed, CallCache(tmp_path / "c"), chunk_size=3)
    with pytest.raises(RuntimeError, match="killed"):
        cb.generate(reqs)
    assert len(CallCache(tmp_path / "c")) == 6

    # a new process would open a new cache object on the same directory
    fresh = echo()
    cb2 = CachedBackend(fresh, CallCache(tmp_path / "c"))
    out = cb2.generate(reqs)
    assert out == [f"out: paper {i} / seed 0" for i in range(10)]
    assert fresh.requests == reqs[6:]
    assert len(fresh.batches) == 1  # the remaining misses go in one call
    assert (cb2.hits, cb2.misses) == (6, 4)


def test_resume_after_interrupt_between_generate_calls(tmp_path):
    """A driver that calls generate once per batch: the batches done before the crash are kept."""
    batches = [[paper(i) for i in range(j, j + 2)] for j in range(0, 8, 2)]
    killed = CachedBackend(echo(fail_after=4, failure=RuntimeError("killed")), tmp_path)
    with pytest.raises(RuntimeError):
        for b in batches:
            killed.generate(b)
    fresh = echo()
    resumed = CachedBackend(fresh, tmp_path)
    for b in batches:
        resumed.generate(b)
    assert fresh.requests == batches[2] + batches[3]


def test_cached_backend_with_transformers(tmp_path, tiny_model_dir):  # noqa: F811
    from praib.llm.backends import make_backend

    inner = make_backend("transformers", str(tiny_model_dir))
    cb = CachedBackend(inner, tmp_path)
    r = GenerationRequest(messages=(("user", "Review."),), sampling=SamplingConfig(max_new_tokens=4))
    a = cb.generate([r])
    b = CachedBackend(inner, CallCache(tmp_path)).generate([r])
    assert a == b and len(CallCache(tmp_path)) == 1
    row = json.loads(json.dumps(CallCache(tmp_path).metadata(CallCache.key("transformers", str(tiny_model_dir), r))))
    assert row["backend"] == "transformers" and row["model_revision"] == inner.model_revision
