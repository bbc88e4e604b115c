"""`praib leaderboard run` folders for the table tests: the demo run of `.ci/record-outputs` (two submissions, no
judge), and a synthetic judged run whose judged numbers are known by hand."""

import json
from pathlib import Path

from praib.leaderboard.run import run_leaderboard
from praib.leaderboard.submission import load_submission
from praib.llm.judge import Judge
from praib.records import coerce_record, load_records, records_to_dataset
from tests.evaluation.predictable_judge import HUMAN, MODEL, predictable_judge
from tests.paths import DEMO

N_BOOTSTRAP = 50


def submission(folder: Path, name: str, model: str, rows: list[dict]):
    folder = folder / name
    folder.mkdir(parents=True)
    (folder / "reviews.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({
        "model": model, "backend": "hand-written", "prompts": ["extended"], "sampling": {"temperature": 0.0},
        "date": "2026-01-05"}), encoding="utf-8")
    return load_submission(str(folder))


def leaderboard_demo(folder: Path, n_bootstrap: int = N_BOOTSTRAP) -> Path:
    """The demo walk-through's run: demo-model-a and demo-model-b (extended prompt) against the demo's human
    reviews."""
    rows = [json.loads(line) for line in (DEMO / "reviews.jsonl").read_text(encoding="utf-8").splitlines()]
    submissions = [submission(folder, f"model-{m}", f"demo-model-{m}",
                              [r for r in rows if r.get("model") == f"demo-model-{m}" and r.get("prompt") == "extended"])
                   for m in ("a", "b")]
    out = folder / "results-demo"
    run_leaderboard(submissions, load_records(DEMO / "reviews.jsonl", "review"), out, reference_label="demo",
                    n_bootstrap=n_bootstrap, workers=1)
    return out


def leaderboard_judged(folder: Path) -> Path:
    """Two papers, two human reviews each that engage with the maths (the judge says so of every text with
    "HUMAN REVIEW"); submission "plain" reviews each paper without maths, "mathy" with (its text is the human
    one's, with a rating). So Math: human 1, plain 0, mathy 1 (closest); P(+|+): plain 0, mathy 1; P(+|−) has no
    paper whose human reviews leave the maths alone."""
    common = {"venue": "ICLR", "year": 2025}
    human = records_to_dataset([coerce_record({"paper_id": paper, "source": "human", "text": HUMAN, "rating": rating,
                                               **common}, "review", "human")
                                for paper in ("p1", "p2") for rating in (3, 6)])

    def reviews(model, text):
        return [{"paper_id": paper, "source": model, "model": model, "prompt": "extended", "text": text, **common}
                for paper in ("p1", "p2")]

    mathy = HUMAN + "\n**Rating:** 6\n**Confidence:** 4"
    submissions = [submission(folder, "plain", "plain-lm", reviews("plain-lm", MODEL)),
                   submission(folder, "mathy", "mathy-lm", reviews("mathy-lm", mathy))]
    out = folder / "results-judged"
    run_leaderboard(submissions, human, out, reference_label="synthetic", n_bootstrap=N_BOOTSTRAP,
                    judge=Judge(predictable_judge()), workers=1)
    return out
