"""How long the leaderboard app takes to show its table with many submissions, against a board of two.

    python benchmarks/leaderboard_app.py [--submissions 50] [--baseline 2] [--seed 0] [--no-browser]

Builds two results folders as ``praib leaderboard process`` writes them: the demo's two submissions are
scored once (:func:`praib.leaderboard.run.score_submissions`, 20 bootstrap draws), then copied under
``--submissions`` (and ``--baseline``) names with their values shifted by seeded noise, each with its
details and manifest. Measured per folder: the server side of a page load (reading the folder and
building the table: :func:`praib.leaderboard.app.load_board` and
:func:`praib.leaderboard.app.leaderboard_table`), and, unless ``--no-browser``, the page itself:
``praib leaderboard app`` started on a loopback port, then Debian's headless Chromium (Selenium) timed
from the request to the table's first rows on screen. Printed: the times, their ratio, and the load
average (compare runs at similar load).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from praib.leaderboard.app import leaderboard_table, load_board  # noqa: E402
from praib.leaderboard.run import RESULT_FEATURES, score_submissions  # noqa: E402
from praib.leaderboard.submission import load_submission  # noqa: E402
from praib.records import load_records  # noqa: E402

DEMO = ROOT / "praib" / "data" / "demo" / "reviews.jsonl"


def scored_demo(scratch: Path):
    rows = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    submissions = []
    for model in ("a", "b"):
        folder = scratch / f"model-{model}"
        folder.mkdir()
        (folder / "reviews.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows
                                                      if r.get("model") == f"demo-model-{model}"
                                                      and r["prompt"] == "extended"))
        (folder / "manifest.json").write_text(json.dumps({"model": f"demo-model-{model}", "revision": "v1",
                                                          "backend": "demo", "prompts": ["extended"],
                                                          "sampling": {}, "date": "2026-01-05"}))
        submissions.append(load_submission(str(folder)))
    return submissions, score_submissions(submissions, load_records(DEMO, "review"), n_bootstrap=20, workers=1)


def write_board(folder: Path, n: int, scored, rng) -> None:
    import pyarrow.parquet as pq
    from datasets import Dataset

    submissions, (rows, details) = scored
    human = [r for r in rows if r["submission"] == "human"]
    out = list(human)
    (folder / "details").mkdir(parents=True)
    (folder / "manifests").mkdir()
    for number in range(n):
        source = submissions[number % 2]
        name = f"model-{number:03d}"
        for row in (r for r in rows if r["submission"] == source.name):
            shift = 1 + rng.normal(0, 0.05)
            moved = {k: (v * shift if isinstance(v, float) and k not in ("human_value",) else v) for k, v in row.items()}
            out.append({**moved, "submission": name, "model": f"org/{name}", "closest_to_human": False})
        (folder / "details" / f"{name}.json").write_text(json.dumps(details[source.name]))
        (folder / "manifests" / f"{name}.json").write_text(json.dumps({**source.manifest, "model": f"org/{name}"}))
    pq.write_table(Dataset.from_list(out, features=RESULT_FEATURES).data.table, folder / "results.parquet")
    (folder / "run.json").write_text(json.dumps({"reference": "reviews.jsonl", "n_bootstrap": 20, "seed": 0,
                                                 "judge": None}))


def server_side(folder: Path, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        board = load_board(str(folder))
        leaderboard_table(board)
        best = min(best, time.perf_counter() - started)
    return best


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def in_browser(folder: Path, profile: Path) -> tuple[float, float]:
    """(seconds until the app answers, seconds from the page's request to its table's rows)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    port = free_port()
    started = time.perf_counter()
    app = subprocess.Popen([sys.executable, "-m", "praib.cli.main", "leaderboard", "app", str(folder), "--port",
                            str(port)], env={**os.environ, "PYTHONPATH": str(ROOT), "GRADIO_ANALYTICS_ENABLED": "False"},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except OSError:
                time.sleep(0.2)
        serving = time.perf_counter() - started
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
                         f"--user-data-dir={profile}"):
            options.add_argument(argument)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            started = time.perf_counter()
            driver.get(f"http://127.0.0.1:{port}/")
            WebDriverWait(driver, 120, poll_frequency=0.05).until(lambda d: d.execute_script(
                "return document.querySelectorAll('#leaderboard [role=row] [role=gridcell]').length > 0 && "
                "document.querySelector('#leaderboard').innerText.includes('model-000')"))
            return serving, time.perf_counter() - started
        finally:
            driver.quit()
    finally:
        app.terminate()
        app.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=50)
    parser.add_argument("--baseline", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        scored = scored_demo(scratch)
        rng = np.random.default_rng(args.seed)
        timings = {}
        for n in (args.baseline, args.submissions):
            folder = scratch / f"board-{n}"
            write_board(folder, n, scored, rng)
            timings[n] = [server_side(folder)]
            if not args.no_browser:
                timings[n] += in_browser(folder, scratch / f"profile-{n}")
    base, many = timings[args.baseline], timings[args.submissions]
    print(f"{'':32}{args.baseline:>8} subm.{args.submissions:>8} subm.   ratio")
    labels = ["read the results, build the table", "app start until it answers", "page request to table rows"]
    for label, a, b in zip(labels, base, many):
        print(f"{label:32}{a:>12.3f} s{b:>10.3f} s{b / a:>8.1f}x")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
