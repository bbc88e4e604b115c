"""Submissions built from the demo set, and the queue and results folders of a community leaderboard
(`praib leaderboard submit` / `process`), for the queue, runner, Hub and app tests."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from tests.paths import DEMO, ROOT

N_BOOTSTRAP = 20
PERTURBATION = {"kind": "rating_flip", "category": "review", "component": "review", "description": "flipped",
                "seed": 0}


def demo_rows(model: str, prompt: str) -> list[dict]:
    rows = [json.loads(line) for line in (DEMO / "reviews.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in rows if r.get("model") == f"demo-model-{model}" and r.get("prompt") == prompt]


def write_submission(folder: Path, rows: list[dict], revision: str = "v1", **manifest) -> Path:
    """A submission folder: ``reviews.jsonl`` and its manifest (model and prompts from the rows)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reviews.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "manifest.json").write_text(json.dumps({
        "model": rows[0]["model"], "revision": revision, "backend": "demo",
        "prompts": sorted({r["prompt"] for r in rows}), "sampling": {"temperature": 0.0}, "date": "2026-01-05",
        **manifest}))
    return folder


def demo_submission(folder: Path, model: str, prompt: str = "extended", revision: str = "v1") -> Path:
    return write_submission(folder, demo_rows(model, prompt), revision)


def all_perturbed(folder: Path) -> Path:
    """A valid submission with nothing to score: every review is of a perturbed paper."""
    rows = [{**r, "review_id": r["review_id"] + "-flip", "perturbation": PERTURBATION}
            for r in demo_rows("b", "extended")]
    return write_submission(folder, rows, revision="flipped")


def requests(queue: Path) -> dict[str, dict]:
    """The queue's request records by name."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(queue.glob("*.json"))}


#: The tables a leaderboard run writes that a runner recomputes over every finished submission.
RUN_TABLES = ("results.parquet", "comparisons.parquet", "ranks.parquet")


def sorted_rows(parquet: Path | bytes) -> list[dict]:
    """The rows of a Parquet file (a path, or its bytes), in a fixed order."""
    table = pq.read_table(io.BytesIO(parquet) if isinstance(parquet, bytes) else parquet)
    return sorted(table.to_pylist(), key=lambda r: tuple(str(v) for v in r.values()))


def run_tables(folder: Path) -> dict[str, list[dict]]:
    """The rows of each of :data:`RUN_TABLES` in a results folder."""
    return {name: sorted_rows(folder / name) for name in RUN_TABLES}


def praib(*args, env: dict | None = None, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`praib ARGS` in a fresh interpreter (this tree first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "praib.cli.main", *map(str, args)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


def start_praib(*args, env: dict | None = None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "praib.cli.main", *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def direct_run(tmp_path: Path, *submissions: Path, options: tuple = ()) -> Path:
    """`praib leaderboard run` of ``submissions`` with the runner tests' settings (and ``options``); its folder."""
    from click.testing import CliRunner

    from praib.cli.main import main

    out = tmp_path / "direct"
    result = CliRunner().invoke(main, ["leaderboard", "run", *map(str, submissions), "--demo", "--n-bootstrap",
                                       str(N_BOOTSTRAP), "--workers", "1", "--no-progress", "--output", str(out),
                                       *map(str, options)])
    assert result.exit_code == 0, result.output
    return out


def process_args(queue: Path | str, results: Path | str, *extra) -> list:
    return ["leaderboard", "process", "--queue", queue, "--results", results, "--demo", "--n-bootstrap",
            N_BOOTSTRAP, "--workers", 1, "--no-progress", *extra]
