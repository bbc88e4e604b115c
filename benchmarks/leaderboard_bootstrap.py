"""Bootstrap confidence intervals of a leaderboard run: praib's one-pass bootstrap against
re-scoring every resample with ``praib evaluate``.

    python benchmarks/leaderboard_bootstrap.py [--papers 200] [--draws 200] [--baseline-draws 10] [--seed 0]

Builds a synthetic benchmark (seeded) from the demo reviews' texts: ``--papers`` ICLR 2025 papers,
each with three human reviews and one review by the submitted model, ratings drawn on the venue
scale. praib's run (:func:`praib.leaderboard.run.score_submissions`) scores every review once and
draws ``--draws`` cluster resamples of papers over the per-review values. The baseline is the
straightforward cluster bootstrap: resample the papers, then score the resampled reviews with
:func:`praib.evaluation.evaluate.evaluate_reviews`, once per draw; it is timed over ``--baseline-draws``
draws and its per-draw time scaled to ``--draws`` (each draw costs the same). Printed: both
times and their ratio, and the two CIs of FRE for the model, which agree up to bootstrap noise.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from praib.evaluation.evaluate import evaluate_reviews  # noqa: E402
from praib.leaderboard.run import score_submissions  # noqa: E402
from praib.leaderboard.submission import Submission  # noqa: E402
from praib.records import coerce_record, load_records, records_to_dataset  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "praib" / "data" / "demo" / "reviews.jsonl"
RATINGS = (1, 3, 5, 6, 8, 10)


def synthetic_reviews(n_papers: int, seed: int):
    rng = np.random.default_rng(seed)
    demo = load_records(DEMO, "review").to_list()
    human_texts = [r["text"] for r in demo if r["source"] == "human" and r.get("text")]
    model_texts = [r["text"] for r in demo if r["source"] != "human" and r.get("text")]
    human, model = [], []
    for paper in range(n_papers):
        base = rng.integers(1, 5)
        for reviewer in range(3):
            human.append({"paper_id": f"p{paper}", "source": "human", "venue": "ICLR", "year": 2025,
                          "reviewer_id": f"r{reviewer}", "text": human_texts[rng.integers(len(human_texts))],
                          "rating": RATINGS[min(5, base + rng.integers(0, 2))], "confidence": int(rng.integers(2, 6))})
        model.append({"paper_id": f"p{paper}", "source": "model", "model": "model", "prompt": "extended",
                      "venue": "ICLR", "year": 2025, "text": model_texts[rng.integers(len(model_texts))],
                      "rating": RATINGS[min(5, base + 1)], "confidence": 4})
    return ([coerce_record(r, "review", "synthetic") for r in human],
            [coerce_record(r, "review", "synthetic") for r in model])


def resample(rows: list[dict], papers: np.ndarray) -> list[dict]:
    """The reviews of the drawn papers; a paper drawn twice comes twice, under distinct ids."""
    by_paper: dict[str, list[dict]] = {}
    for row in rows:
        by_paper.setdefault(row["paper_id"], []).append(row)
    return [{**row, "paper_id": f"{paper}#{copy}", "review_id": f"{row['review_id']}#{copy}"}
            for copy, paper in enumerate(papers) for row in by_paper[paper]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=200)
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--baseline-draws", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    human, model = synthetic_reviews(args.papers, args.seed)
    reference, submitted = records_to_dataset(human, "review"), records_to_dataset(model, "review")
    submission = Submission("model", "synthetic", submitted, {"model": "model"})

    started = time.perf_counter()
    rows, _ = score_submissions([submission], reference, n_bootstrap=args.draws, seed=args.seed, workers=1)
    praib_seconds = time.perf_counter() - started
    fre = next(r for r in rows if r["submission"] == "model" and r["metric"] == "fre" and r["venue"] == "all")

    rng = np.random.default_rng(args.seed)
    paper_ids = np.array(sorted({r["paper_id"] for r in model}))
    draws = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory():
        for _ in range(args.baseline_draws):
            drawn = rng.choice(paper_ids, size=len(paper_ids), replace=True)
            result = evaluate_reviews(records_to_dataset(resample(model, drawn), "review"),
                                      records_to_dataset(resample(human, drawn), "review"), workers=1)
            group = next(g for g in result.groups if not g.is_reference)
            draws.append(group.fre.mean)
    baseline_seconds = (time.perf_counter() - started) / args.baseline_draws * args.draws

    print(f"{args.papers} papers, {len(human)} human and {len(model)} model reviews, {args.draws} bootstrap draws")
    print(f"praib one-pass bootstrap:      {praib_seconds:8.2f} s")
    print(f"re-scoring every resample:     {baseline_seconds:8.2f} s "
          f"(measured over {args.baseline_draws} draws, scaled to {args.draws})")
    print(f"speed-up:                      {baseline_seconds / praib_seconds:8.1f}x  "
          f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores: compare runs at similar load)")
    print(f"FRE of the model: {fre['value']:.2f}, praib 95% CI [{fre['ci_low']:.2f}, {fre['ci_high']:.2f}]; "
          f"baseline draws range [{min(draws):.2f}, {max(draws):.2f}] over {len(draws)} draws")


if __name__ == "__main__":
    main()
