"""The leaderboard's point values are `praib evaluate`'s: for every registered metric the leaderboard
reports on the demo set (both demo models, every venue and pooled), the value equals the one read
from :func:`praib.evaluation.evaluate.evaluate_reviews` on the same reviews of the same slice (the
judged metrics through a stub judge with fixed answers). And every text, of the human reference and
of the submissions, is scored once per run."""

import json
from collections import Counter
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from praib.metrics.text import columns as columns_module
from praib.evaluation.evaluate import evaluate_reviews
from praib.leaderboard.run import ALL_VENUES, score_submissions, select_rows
from praib.leaderboard.submission import load_submission
from praib.metrics.registry import BY_NAME, DIFFERENCE, score_metrics, text_metrics
from praib.metrics.scores.distributions import confidence_gap
from praib.parsing import parse_reviews
from praib.records import HUMAN_SOURCE, load_records, perturbation_kind

DEMO = Path(str(resources.files("praib").joinpath("data/demo")))
MODELS = ("demo-model-a", "demo-model-b")


def _write_submission(directory: Path, model: str) -> Path:
    directory.mkdir(parents=True)
    rows = [json.loads(line) for line in (DEMO / "reviews.jsonl").read_text().splitlines()]
    with (directory / "reviews.jsonl").open("w") as handle:
        for row in rows:
            if row.get("model") == model and row.get("prompt") == "extended":
                handle.write(json.dumps(row) + "\n")
    (directory / "manifest.json").write_text(json.dumps({
        "model": model, "backend": "demo", "prompts": ["extended"], "sampling": {"temperature": 0.0},
        "date": "2025-06-01"}))
    return directory


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    root = tmp_path_factory.mktemp("submissions")
    return [load_submission(str(_write_submission(root / model, model))) for model in MODELS]


@pytest.fixture(scope="module")
def reference():
    return load_records(DEMO / "reviews.jsonl")


@pytest.fixture(scope="module")
def leaderboard(submissions, reference):
    rows, _ = score_submissions(submissions, reference, n_bootstrap=0, workers=1)
    return {(r["submission"], r["metric"], r["venue"]): r for r in rows}


def _mean_score(distributions: dict) -> float | None:
    """The mean score of a side, from evaluate's per-venue-year distributions and counts."""
    total = 0.0
    for entry in distributions.values():
        shares = entry["distribution"] if "distribution" in entry else entry["model"]
        if entry["n"]:
            total += entry["n"] * sum(float(value) * share for value, share in shares.items())
    n = sum(entry["n"] for entry in distributions.values())
    return total / n if n else None


def _mean_of_defined(values) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def _evaluate_values(model_reviews, human_reviews, scale) -> tuple[dict, dict]:
    """``{metric: (value, distance)}`` of the model and of the human reference, as evaluate reports
    them for these reviews (alpha pooled over venues as the leaderboard pools it)."""
    result = evaluate_reviews(model_reviews, human_reviews, group_by=("source",), scale=scale, workers=1)
    human = result.reference
    model = next(g for g in result.groups if not g.is_reference)
    model_values, human_values = {}, {}
    for name in text_metrics():
        model_values[name] = (model.value(name), None)
        human_values[name] = (human.value(name), None)
    for kind in score_metrics():
        model_values[kind] = (_mean_score(getattr(model, f"{kind}_distribution")), None)
        human_values[kind] = (_mean_score(getattr(human, f"{kind}_distribution")), None)
        tv = _mean_of_defined(e["total_variation"] for e in getattr(model, f"{kind}_distribution").values())
        model_values[f"{kind}_tv"] = (tv, tv)
    # The rating gap is what evaluate reports as the confidence gap, on the ratings.
    parsed_model, parsed_human = parse_reviews(model_reviews, scale=scale), parse_reviews(human_reviews, scale=scale)
    gap = confidence_gap(parsed_model["paper_id"], parsed_model["rating"], parsed_human["paper_id"],
                         parsed_human["rating"])["mean"]
    model_values["rating_gap"] = (gap, None if gap is None else abs(gap))
    agreement = model.krippendorff.values()
    alpha = _mean_of_defined(a["alpha_with_model"] for a in agreement)
    change = _mean_of_defined(None if a["delta"] is None else abs(a["delta"]) for a in agreement)
    model_values["krippendorff_alpha"] = (alpha, change)
    human_values["krippendorff_alpha"] = (_mean_of_defined(human.krippendorff_alpha.values()), None)
    return model_values, human_values


def _venue_slice(reviews, venue):
    return reviews if venue == ALL_VENUES else select_rows(reviews, lambda row: row["venue"] == venue)


def test_point_values_equal_evaluate_for_every_registered_metric(submissions, reference, leaderboard):
    human_reviews = select_rows(reference, lambda row: row["source"] == HUMAN_SOURCE)
    venues = [ALL_VENUES, *sorted(set(human_reviews["venue"]))]
    reported = {metric for (_, metric, _) in leaderboard if metric in BY_NAME}
    checked = set()
    for submission in submissions:
        for venue in venues:
            model_reviews = _venue_slice(submission.reviews, venue)
            if not len(model_reviews):
                continue
            model_values, human_values = _evaluate_values(model_reviews, _venue_slice(human_reviews, venue),
                                                          submission.scale)
            for metric, (value, distance) in model_values.items():
                row = leaderboard[(submission.name, metric, venue)]
                if BY_NAME[metric].distance == DIFFERENCE:
                    distance = None if value is None else abs(value - human_values[metric][0])
                assert row["value"] == pytest.approx(value, rel=1e-12, abs=1e-12), (submission.name, metric, venue)
                assert row["distance_to_human"] == pytest.approx(distance, rel=1e-12, abs=1e-12), \
                    (submission.name, metric, venue)
                checked.add(metric)
            for metric, (value, _) in human_values.items():
                row = leaderboard[(HUMAN_SOURCE, metric, venue)]
                assert row["value"] == pytest.approx(value, rel=1e-12, abs=1e-12), (HUMAN_SOURCE, metric, venue)
    assert checked == reported


def test_every_text_is_scored_once_per_run(submissions, reference, monkeypatch):
    scored = Counter()
    real = columns_module.score_texts

    def counting(texts, *args, **kwargs):
        texts = list(texts)
        scored.update(texts)
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(columns_module, "score_texts", counting)
    score_submissions(submissions, reference, n_bootstrap=0, workers=1)
    human_texts = [row["text"] for row in reference if row["source"] == HUMAN_SOURCE]
    submission_texts = [row["text"] for s in submissions for row in s.reviews]
    assert len(submissions) == 2 and human_texts and submission_texts
    texts = human_texts + submission_texts
    assert {text: scored[text] for text in texts} == {text: texts.count(text) for text in texts}


def test_judged_point_values_equal_evaluate(submissions, reference):
    from praib.llm.judge import Judge
    from praib.metrics.registry import METRICS, SHORTFALL, judged_metrics
    from tests.evaluation.predictable_judge import predictable_judge

    submission = submissions[0]
    rows, _ = score_submissions([submission], reference, n_bootstrap=0, judge=Judge(predictable_judge()), workers=1)
    judged = {r["metric"]: r for r in rows if r["submission"] == submission.name and BY_NAME.get(r["metric"])
              and BY_NAME[r["metric"]].judged}
    originals = select_rows(submission.reviews, lambda row: perturbation_kind(row) is None)
    human_reviews = select_rows(reference, lambda row: row["source"] == HUMAN_SOURCE)
    result = evaluate_reviews(originals, human_reviews, group_by=("source",), scale=submission.scale, workers=1,
                              judge=Judge(predictable_judge()))
    human = result.reference
    model = next(g for g in result.groups if not g.is_reference)
    expected = {m.name for m in METRICS if m.judged and model.value(m.name) is not None}
    assert set(judged_metrics()) <= expected and set(judged) == expected
    for metric, row in judged.items():
        value, entry = model.value(metric), BY_NAME[metric]
        assert row["venue"] == ALL_VENUES and row["value"] == pytest.approx(value, rel=1e-12, abs=1e-12), metric
        if entry.distance == DIFFERENCE:
            distance = abs(value - human.value(metric))
        else:
            distance = 1.0 - value if entry.distance == SHORTFALL else None
        if distance is None:
            assert row["distance_to_human"] is None, metric
        else:
            assert row["distance_to_human"] == pytest.approx(distance, rel=1e-12, abs=1e-12), metric
