"""A seeded synthetic leaderboard run with texts to score, for checking that a faster run gives the same numbers
(``tests/leaderboard/test_run_outputs.py``, against ``tests/fixtures/leaderboard/synthetic_run.json``, which the
code of main at 5079516 wrote: :func:`record`).

It is built to reach every path of a run: a human reference over ICLR 2023 and 2024 (two year groups), NeurIPS 2024
and a venue without a scale file (rated on the generic scale); papers with one human review (no panel) and
papers no human reviewed; three submissions: one reviewing every paper at length (its text metrics far from
human: detected differences), one most of them (its pairs are drawn over their own shared papers) with perturbed
records besides (robustness rows), and one that rates on the generic scale; model reviews whose scores cannot be
parsed, ratings off their venue's scale and ratings no human gave. Texts are sentences of common words with section
references and citations, so that every text metric varies."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from praib.scales import generic_scales, venue_scales

N_BOOTSTRAP = 400
SEED = 7
#: Where :func:`record` writes what a run gave, and the test reads it.
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "leaderboard" / "synthetic_run.json"
OUTPUT_TABLES = ("results.parquet", "comparisons.parquet", "ranks.parquet")

VENUE_YEARS = (("ICLR", 2023), ("ICLR", 2024), ("NeurIPS", 2024), ("TMLR", 2024))
WORDS = ("the model learns a sparse representation of each graph and we show that training converges faster "
         "than the baseline while accuracy stays within noise however the ablation is missing for deeper "
         "networks and several claims about robustness rest on one dataset notation is heavy but consistent "
         "results hold across seeds reviewers would benefit from clearer motivation experiments approximation "
         "regularisation generalisation theoretical empirical").split()
FLIP = {"kind": "rating_flip", "category": "review", "component": "review", "description": "flipped", "seed": 0}


def _scales(venue: str, year: int):
    return generic_scales() if venue == "TMLR" else venue_scales(venue, year)


def _text(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 22))]
        if rng.random() < 0.25:
            words.insert(rng.randint(0, len(words)), f"Section {rng.randint(1, 7)}")
        if rng.random() < 0.2:
            words.append(f"[{rng.randint(1, 40)}]")
        if rng.random() < 0.1:
            words.append(f"(Smith et al., {rng.randint(2015, 2024)})")
        out.append(" ".join(words).capitalize() + rng.choice(".?."))
    return " ".join(out)


def _papers(rng: random.Random, n: int) -> list[dict]:
    papers = []
    for number in range(n):
        venue, year = VENUE_YEARS[number % len(VENUE_YEARS)] if number % 5 else rng.choice(VENUE_YEARS)
        papers.append({"paper_id": f"{venue.lower()}{year % 100}-{number:03d}", "venue": venue, "year": year,
                       "decision": rng.choice(("Accept (poster)", "Reject", "Reject")), "quality": rng.random()})
    return papers


def _rating(values, position: float, rng: random.Random, spread: float) -> int:
    index = round((position + rng.gauss(0, spread)) * (len(values) - 1))
    return values[min(len(values) - 1, max(0, index))]


def _human(paper: dict, reviewer: int, rng: random.Random) -> dict:
    scales = _scales(paper["venue"], paper["year"])
    return {"review_id": f"{paper['paper_id']}-R{reviewer}", "paper_id": paper["paper_id"], "venue": paper["venue"],
            "year": paper["year"], "decision": paper["decision"], "source": "human", "reviewer_id": f"R{reviewer}",
            "summary": _text(rng, 3), "strengths": _text(rng, rng.randint(1, 4)),
            "weaknesses": _text(rng, rng.randint(1, 5)), "questions": _text(rng, rng.randint(0, 2)),
            "rating": None if rng.random() < 0.04 else _rating(scales.rating.values, paper["quality"], rng, 0.3),
            "confidence": _rating(scales.confidence.values, rng.uniform(0.3, 1.0), rng, 0.15)}


def _model(paper: dict, model: str, lean: float, length: int, rng: random.Random, generic: bool) -> dict:
    scales = generic_scales() if generic else _scales(paper["venue"], paper["year"])
    rating = _rating(scales.rating.values, lean + 0.5 * paper["quality"], rng, 0.15)
    if rng.random() < 0.05:
        rating = 7 if rating != 7 else 4  # off ICLR's scale; a value no human of NeurIPS may have given
    confidence = _rating(scales.confidence.values, 0.75, rng, 0.2)
    text = "\n\n".join(f"**{name}:**\n{_text(rng, rng.randint(1, length))}"
                       for name in ("Summary", "Strengths", "Weaknesses", "Questions"))
    if rng.random() > 0.06:
        text += f"\n\n**Rating:** {rating}\n\n**Confidence:** {confidence}"
    return {"review_id": f"{paper['paper_id']}-{model}", "paper_id": paper["paper_id"], "venue": paper["venue"],
            "year": paper["year"], "decision": paper["decision"], "source": model, "model": model,
            "prompt": "guidelines", "text": text}


def write_board(folder: Path, n_papers: int = 90) -> tuple[Path, list[Path]]:
    """The reference (``reference.jsonl``) and the submission folders of the synthetic run, written into
    ``folder``; always the same records."""
    rng = random.Random(f"{SEED}/synthetic board")
    papers = _papers(rng, n_papers)
    reference = []
    for number, paper in enumerate(papers):
        if number % 17 == 16:
            continue  # a paper no human reviewed
        for reviewer in range(1, (1 if number % 11 == 10 else rng.choice((2, 3, 3, 4))) + 1):
            reference.append(_human(paper, reviewer, rng))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reference.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reference))
    submissions = []
    for name, lean, length, coverage, generic in (("model-all", 0.45, 9, 1.0, False),
                                                  ("model-most", 0.3, 4, 0.8, False),
                                                  ("model-generic", 0.4, 4, 1.0, True)):
        rows = [_model(paper, name, lean, length, rng, generic) for paper in papers if rng.random() < coverage]
        if name == "model-most":
            rows += [{**row, "review_id": row["review_id"] + "-flip", "perturbation": FLIP,
                      "text": re.sub(r"\*\*Rating:\*\* \d+", "**Rating:** 1", row["text"])}
                     for row in rows[::3]]
        sub = folder / name
        sub.mkdir(exist_ok=True)
        (sub / "reviews.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (sub / "manifest.json").write_text(json.dumps({
            "model": name, "revision": "v1", "backend": "synthetic", "prompts": ["guidelines"],
            "sampling": {"temperature": 0.0}, "date": "2026-01-05",
            **({"scale": "generic"} if generic else {})}))
        submissions.append(sub)
    return folder / "reference.jsonl", submissions


def run_outputs(folder: Path) -> dict:
    """``praib leaderboard run`` of the synthetic board (written into ``folder``) and ``praib leaderboard report``
    of its results, in a fresh process of this interpreter: the rows of every table it writes, its details and
    its printed lines, the report's Markdown, with nothing that changes from run to run (dates, paths, versions)."""
    import os
    import subprocess
    import sys

    import pyarrow.parquet as pq

    reference, submissions = write_board(folder / "board")
    results = folder / "results"
    command = [sys.executable, "-m", "praib.cli.main", "leaderboard"]
    environment = {**os.environ, "TQDM_DISABLE": "1"}
    run = subprocess.run([*command, "run", *map(str, submissions), "--reference", str(reference), "--n-bootstrap",
                          str(N_BOOTSTRAP), "--seed", str(SEED), "--no-progress", "-o", str(results)],
                         capture_output=True, text=True, env=environment, cwd=folder, check=True)
    subprocess.run([*command, "report", str(results), "--markdown", str(folder / "report.md"), "--output",
                    str(folder / "report.html")], capture_output=True, text=True, env=environment, cwd=folder,
                   check=True)
    return {
        **{name: _columns(pq.read_table(results / name).to_pylist()) for name in OUTPUT_TABLES},
        "results.jsonl": _columns([json.loads(line) for line in (results / "results.jsonl").read_text().splitlines()]),
        "details sha256": {path.stem: _sha256(path.read_bytes())
                           for path in sorted((results / "details").glob("*.json"))},
        "printed": run.stdout.replace(str(folder), "FOLDER").splitlines(),
        "report.md sha256": _sha256(_unstamped((folder / "report.md").read_text(), folder).encode()),
    }


def _unstamped(text: str, folder: Path) -> str:
    """``text`` without what differs between two runs of the same numbers: the folder, the date, the version."""
    text = re.sub(r"date = [0-9T:+-]+", "date = X", text.replace(str(folder), "FOLDER"))
    return re.sub(r"praib\\?_version = [0-9][\w.+-]*", "praib_version = X", text)


def _columns(rows: list[dict]) -> dict:
    """Rows as their column names and a list of values each (a smaller file than a dict a row)."""
    names = list(rows[0]) if rows else []
    return {"columns": names, "rows": [[row[name] for name in names] for row in rows]}


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def record() -> None:
    """Write :data:`FIXTURE` from this interpreter's praib (run once, with the code whose numbers are kept)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        outputs = run_outputs(Path(folder))
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(json.dumps(outputs, separators=(",", ":")).replace('],[', '],\n[') + "\n")


if __name__ == "__main__":
    record()
