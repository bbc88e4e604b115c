"""`praib leaderboard run` on two submissions built from the demo set: the results directory, the
run's numbers against the metric functions called directly (praib.metrics.text.readability, numpy, the
krippendorff package), and the bootstrap interval against an independent numpy bootstrap."""

import json
from collections import defaultdict
from importlib import resources
from pathlib import Path

import krippendorff
import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.leaderboard import run as run_module
from praib.leaderboard.run import RESULT_FEATURES, run_leaderboard
from praib.leaderboard.submission import load_submission
from praib.metrics.registry import judged_metrics
from praib.parsing import parse_reviews
from praib.metrics.text.readability import readability
from praib.records import REVIEW_SECTIONS, load_records
from tests.doubles import StubBackend

DEMO = Path(str(resources.files("praib").joinpath("data/demo")))
N_BOOTSTRAP = 300


def write_submission(directory: Path, rows, model) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "reviews.jsonl").open("w") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    (directory / "manifest.json").write_text(json.dumps({
        "model": model, "revision": "v1", "backend": "demo", "prompts": ["extended"],
        "sampling": {"temperature": 0.0}, "date": "2025-06-01", "knowledge_cutoff": "2024-06"}))
    return directory


def demo_rows():
    return [json.loads(line) for line in (DEMO / "reviews.jsonl").read_text().splitlines()]


def model_rows(model):
    return [r for r in demo_rows() if r.get("model") == model and r.get("prompt") == "extended"]


@pytest.fixture(scope="module")
def human():
    return [r for r in demo_rows() if r["source"] == "human"]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = tmp_path_factory.mktemp("leaderboard")
    submissions = [load_submission(str(write_submission(root / m, model_rows(m), m)))
                   for m in ("demo-model-a", "demo-model-b")]
    reference = load_records(DEMO / "reviews.jsonl")
    table = run_leaderboard(submissions, reference, root / "out", reference_label="demo",
                            n_bootstrap=N_BOOTSTRAP, seed=0, workers=1)
    rows = {(r["submission"], r["metric"], r["venue"]): r for r in table.to_list()}
    return root / "out", rows


def test_results_directory_follows_the_contract(results):
    out, rows = results
    table = pq.read_table(out / "results.parquet")
    assert table.column_names == list(RESULT_FEATURES)
    jsonl = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert jsonl == table.to_pylist()
    assert {r["submission"] for r in jsonl} == {"human", "demo-model-a", "demo-model-b"}
    assert {r["venue"] for r in jsonl} == {"all", "ICLR", "NeurIPS"}
    model_metrics = {r["metric"] for r in jsonl if r["submission"] == "demo-model-a"}
    assert model_metrics == {"tkc", "ttr", "fre", "fkg", "xref", "citations", "rating", "confidence",
                             "rating_gap", "rating_tv", "confidence_tv", "krippendorff_alpha"}
    assert json.loads((out / "manifests" / "demo-model-b.json").read_text())["model"] == "demo-model-b"
    details = json.loads((out / "details" / "demo-model-a.json").read_text())
    assert [g["label"] for g in details["groups"]] == ["human", "demo-model-a"]
    settings = json.loads((out / "run.json").read_text())
    assert (settings["n_bootstrap"], settings["seed"], settings["reference"]) == (N_BOOTSTRAP, 0, "demo")
    assert not (out / "eras.json").exists()  # the demo reference is all 2025: one era only


def test_text_metrics_match_readability_called_directly(results, human):
    _, rows = results
    for model in ("demo-model-a", "demo-model-b"):
        for venue in ("all", "ICLR", "NeurIPS"):
            texts = [r["text"] for r in model_rows(model) if venue in ("all", r["venue"])]
            for metric in ("tkc", "fre", "fkg", "ttr"):
                expected = np.mean([getattr(readability(t), metric) for t in texts])
                assert rows[(model, metric, venue)]["value"] == pytest.approx(expected)
            assert rows[(model, "tkc", venue)]["n_reviews"] == len(texts)
    # Human records carry sections, joined into the text; two are ratings-only and have no text.
    texts = ["\n\n".join(r[s] for s in REVIEW_SECTIONS if r.get(s)) for r in human]
    human_tkc = [readability(t).tkc for t in texts if t]
    assert len(human_tkc) == 24
    assert rows[("human", "tkc", "all")]["value"] == pytest.approx(np.mean(human_tkc))
    assert rows[("human", "tkc", "all")]["n_reviews"] == 26
    a = rows[("demo-model-a", "fre", "all")]
    assert a["human_value"] == rows[("human", "fre", "all")]["value"]
    assert a["distance_to_human"] == pytest.approx(abs(a["value"] - a["human_value"]))


def test_closest_to_human_marks_the_nearest_submission(results):
    _, rows = results
    for metric in ("tkc", "fre", "rating_tv", "krippendorff_alpha"):
        for venue in ("all", "ICLR", "NeurIPS"):
            a, b = rows[("demo-model-a", metric, venue)], rows[("demo-model-b", metric, venue)]
            assert a["closest_to_human"] == (a["distance_to_human"] <= b["distance_to_human"])
            assert b["closest_to_human"] == (b["distance_to_human"] <= a["distance_to_human"])
            assert not rows[("human", "krippendorff_alpha", venue)]["closest_to_human"]


def test_bootstrap_interval_matches_an_independent_numpy_bootstrap(results, human):
    """Cluster bootstrap by hand: sorted paper ids, draw b = rng.integers(0, n, n), mean over all
    reviews of the drawn papers, 2.5th / 97.5th percentiles."""
    _, rows = results
    reviews = model_rows("demo-model-a")
    papers = sorted({r["paper_id"] for r in reviews} | {r["paper_id"] for r in human})
    by_paper = defaultdict(list)
    for r in reviews:
        by_paper[r["paper_id"]].append(readability(r["text"]).tkc)
    rng = np.random.default_rng(0)
    means = []
    for _ in range(N_BOOTSTRAP):
        drawn = rng.integers(0, len(papers), size=len(papers))
        means.append(np.mean([v for i in drawn for v in by_paper[papers[i]]]))
    low, high = np.percentile(means, [2.5, 97.5])
    row = rows[("demo-model-a", "tkc", "all")]
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert row["ci_low"] < row["value"] < row["ci_high"]


def _reliability(panels):
    """Raters x papers matrix (NaN where a rater did not rate a paper) for the krippendorff package."""
    width = max(len(r) for r in panels.values())
    return np.array([[r[k] if k < len(r) else np.nan for r in panels.values()] for k in range(width)], dtype=float)


def test_krippendorff_alpha_matches_the_package(results, human):
    _, rows = results
    parsed = parse_reviews(load_records(DEMO / "reviews.jsonl")).to_list()
    for venue in ("ICLR", "NeurIPS"):
        panels = defaultdict(list)
        for r in human:
            if r["venue"] == venue and r.get("rating") is not None:
                panels[r["paper_id"]].append(r["rating"])
        panels = {p: v for p, v in panels.items() if len(v) >= 2}
        alpha_h = krippendorff.alpha(reliability_data=_reliability(panels), level_of_measurement="ordinal")
        assert rows[("human", "krippendorff_alpha", venue)]["value"] == pytest.approx(alpha_h)
        for model in ("demo-model-a", "demo-model-b"):
            with_model = {p: list(v) for p, v in panels.items()}
            for r in parsed:
                if r["model"] == model and r["prompt"] == "extended" and r["paper_id"] in with_model \
                        and r["rating"] is not None:
                    with_model[r["paper_id"]].append(r["rating"])
            alpha_hl = krippendorff.alpha(reliability_data=_reliability(with_model), level_of_measurement="ordinal")
            row = rows[(model, "krippendorff_alpha", venue)]
            assert row["value"] == pytest.approx(alpha_hl)
            assert row["distance_to_human"] == pytest.approx(abs(alpha_hl - alpha_h))
    pooled = rows[("human", "krippendorff_alpha", "all")]["value"]
    assert pooled == pytest.approx(np.mean([rows[("human", "krippendorff_alpha", v)]["value"]
                                            for v in ("ICLR", "NeurIPS")]))


def test_total_variation_and_rating_gap_by_hand(results, human):
    _, rows = results
    parsed = parse_reviews(load_records(DEMO / "reviews.jsonl")).to_list()
    iclr_scale = (1, 3, 5, 6, 8, 10)
    model = [r["rating"] for r in parsed if r["model"] == "demo-model-b" and r["prompt"] == "extended"
             and r["venue"] == "ICLR"]
    people = [r["rating"] for r in human if r["venue"] == "ICLR"]
    p = np.array([model.count(v) for v in iclr_scale]) / len(model)
    q = np.array([people.count(v) for v in iclr_scale]) / len(people)
    row = rows[("demo-model-b", "rating_tv", "ICLR")]
    assert row["value"] == pytest.approx(0.5 * np.abs(p - q).sum())
    assert row["distance_to_human"] == row["value"]

    medians = defaultdict(list)
    for r in human:
        medians[r["paper_id"]].append(r["rating"])
    gaps = [r["rating"] - np.median(medians[r["paper_id"]]) for r in parsed
            if r["model"] == "demo-model-b" and r["prompt"] == "extended"]
    assert rows[("demo-model-b", "rating_gap", "all")]["value"] == pytest.approx(np.mean(gaps))


def test_run_is_deterministic_under_its_seed(results, human, tmp_path):
    _, rows = results
    submission = load_submission(str(write_submission(tmp_path / "demo-model-a", model_rows("demo-model-a"),
                                                      "demo-model-a")))
    reference = load_records(DEMO / "reviews.jsonl")
    again = run_module.score_submissions([submission], reference, n_bootstrap=N_BOOTSTRAP, seed=0, workers=1)[0]
    for r in again:
        if r["submission"] == "demo-model-a":
            original = rows[("demo-model-a", r["metric"], r["venue"])]
            assert (r["value"], r["ci_low"], r["ci_high"]) == (original["value"], original["ci_low"],
                                                               original["ci_high"])
    other = run_module.score_submissions([submission], reference, n_bootstrap=N_BOOTSTRAP, seed=1, workers=1)[0]
    tkc = next(r for r in other if (r["submission"], r["metric"], r["venue"]) == ("demo-model-a", "tkc", "all"))
    assert tkc["ci_low"] != rows[("demo-model-a", "tkc", "all")]["ci_low"]


def test_perturbed_records_give_robustness_and_leave_the_other_metrics_alone(results, tmp_path):
    _, rows = results
    originals = model_rows("demo-model-a")
    perturbed = [{**{k: v for k, v in r.items() if k not in ("review_id", "text")},
                  "summary": "Edited paper.", "rating": 1, "confidence": 5,
                  "perturbation": {"kind": "drop_figures", "category": "presentation", "component": "paper",
                                   "description": "figures removed", "seed": 0}} for r in originals]
    submission = load_submission(str(write_submission(tmp_path / "demo-model-a", originals + perturbed,
                                                      "demo-model-a")))
    out = tmp_path / "out"
    table = run_leaderboard([submission], load_records(DEMO / "reviews.jsonl"), out, reference_label="demo",
                            n_bootstrap=N_BOOTSTRAP, seed=0, workers=1)
    new = {(r["submission"], r["metric"], r["venue"]): r for r in table.to_list()}
    assert new[("demo-model-a", "tkc", "all")] == rows[("demo-model-a", "tkc", "all")] | {"closest_to_human": True}
    parsed = parse_reviews(load_records(DEMO / "reviews.jsonl")).to_list()
    ratings = [r["rating"] for r in parsed if r["model"] == "demo-model-a" and r["prompt"] == "extended"]
    change = new[("demo-model-a", "robustness_rating_drop_figures", "all")]
    assert change["value"] == pytest.approx(1 - np.mean(ratings))
    assert change["n_reviews"] == 8
    details = json.loads((out / "details" / "demo-model-a.json").read_text())
    verdicts = next(iter(details["robustness"]["reviewers"].values()))["perturbations"]["drop_figures"]
    assert verdicts["scores"]["rating"]["verdict"] == "decrease"


def test_a_submission_with_nothing_to_score_is_refused_not_left_out(tmp_path):
    runner = CliRunner()
    other = write_submission(tmp_path / "demo-model-b", model_rows("demo-model-b"), "demo-model-b")
    # Benchmark papers of which neither the submissions nor the reference review any.
    papers = [json.loads(line) for line in (DEMO / "papers.jsonl").read_text().splitlines()]
    unreviewed = tmp_path / "papers.jsonl"
    unreviewed.write_text("".join(json.dumps({**p, "paper_id": "new-" + p["paper_id"]}) + "\n" for p in papers))
    result = runner.invoke(main, ["leaderboard", "run", str(other), "--demo", "--benchmark-papers", str(unreviewed),
                                  "-o", str(tmp_path / "out"), "--no-progress"])
    assert result.exit_code == 1
    assert result.output.strip().endswith(f": none of its 58 reviews is of one of the 8 papers of {unreviewed}")
    assert not (tmp_path / "out").exists()

    edit = {"kind": "drop_figures", "category": "presentation", "component": "paper", "description": "d", "seed": 0}
    perturbed_only = write_submission(tmp_path / "demo-model-a",
                                      [{**r, "perturbation": edit} for r in model_rows("demo-model-a")],
                                      "demo-model-a")
    result = runner.invoke(main, ["leaderboard", "run", str(other), str(perturbed_only), "--demo",
                                  "-o", str(tmp_path / "out"), "--no-progress"])
    assert result.exit_code == 1
    assert result.output.strip() == (f"Error: {perturbed_only}: no review of an original paper to score "
                                     "(its 8 reviews are all of perturbed papers)")
    assert not (tmp_path / "out").exists()


def test_cli_run_and_push_request(tmp_path, monkeypatch):
    submission = write_submission(tmp_path / "demo-model-b", model_rows("demo-model-b"), "demo-model-b")
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(main, ["leaderboard", "run", str(submission), "--demo", "--n-bootstrap", "50",
                                  "--output", str(out), "--workers", "1", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "demo-model-b             tkc" in result.output
    assert (out / "results.parquet").exists()

    pushed, uploaded = [], []
    monkeypatch.setattr("datasets.Dataset.push_to_hub",
                        lambda self, repo_id, **kw: pushed.append((repo_id, self.to_list(), kw)))
    monkeypatch.setattr("huggingface_hub.HfApi.upload_folder", lambda self, **kw: uploaded.append(kw))
    result = runner.invoke(main, ["leaderboard", "push", str(out), "org/board", "--token", "t"])
    assert result.exit_code == 0, result.output
    assert pushed[0][0] == "org/board" and pushed[0][2] == {"token": "t", "private": False}
    assert pushed[0][1] == pq.read_table(out / "results.parquet").to_pylist()
    assert uploaded[0]["repo_id"] == "org/board" and uploaded[0]["repo_type"] == "dataset"
    assert uploaded[0]["folder_path"] == str(out)
    assert runner.invoke(main, ["leaderboard", "push", str(tmp_path), "org/b"]).exit_code == 1


def test_judged_metrics_come_from_the_judge():
    from praib.llm.judge import Judge
    from praib.leaderboard.submission import Submission
    from praib.records import coerce_record, records_to_dataset
    from tests.evaluation.predictable_judge import HUMAN, MODEL, predictable_judge

    common = {"venue": "ICLR", "year": 2025, "decision": "Reject"}
    human_rows = [coerce_record({"paper_id": "p1", "source": "human", "text": HUMAN, "rating": r, **common},
                                "review", "human") for r in (3, 5)]
    model = records_to_dataset([coerce_record({"paper_id": "p1", "source": "lm", "model": "lm",
                                               "prompt": "guidelines", "text": MODEL, **common}, "review", "lm")])
    submission = Submission("lm", "memory", model, {"model": "lm"})
    rows, _ = run_module.score_submissions([submission], records_to_dataset(human_rows), n_bootstrap=10,
                                           judge=Judge(predictable_judge()), workers=1)
    judged = {r["metric"]: r for r in rows if r["submission"] == "lm" and r["ci_low"] is None
              and r["metric"] in judged_metrics()}
    # The stub says the human reviews engage with the maths and the model's does not; the model's one
    # weakness covers the first of the two human weaknesses, and its strength the human strength.
    assert (judged["math_engagement"]["value"], judged["math_engagement"]["human_value"]) == (0.0, 1.0)
    assert judged["math_engagement"]["distance_to_human"] == 1.0
    assert judged["coverage_recall_weaknesses"]["value"] == 0.5
    assert judged["coverage_recall_weaknesses"]["distance_to_human"] == 0.5
    assert judged["coverage_recall_strengths"]["value"] == 1.0
    assert judged["coverage_precision_weaknesses"]["value"] == 1.0
    assert all(r["venue"] == "all" for r in judged.values())
    # PRAIB's P(+|+): the human reviews engage with the maths of p1, the model's review does not.
    conditional = {r["metric"]: r for r in rows if r["metric"].startswith("math_p_")}
    assert conditional.keys() == {"math_p_pos_given_pos"}
    assert conditional["math_p_pos_given_pos"]["value"] == 0.0
    assert conditional["math_p_pos_given_pos"]["distance_to_human"] is None


def test_cli_says_when_the_judge_gave_no_usable_answer(tmp_path, monkeypatch):
    from praib.llm.judge import Judge

    babbler = StubBackend(["lorem ipsum"], name="babbler", model="babbler", model_revision=None)
    monkeypatch.setattr("praib.llm.judge.make_judge", lambda *args, failures, **options: Judge(babbler, failures=failures))
    submission = write_submission(tmp_path / "demo-model-b", model_rows("demo-model-b")[:2], "demo-model-b")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["leaderboard", "run", str(submission), "--demo", "--n-bootstrap", "5",
                                       "--judge", "babbler", "--output", str(out), "--workers", "1",
                                       "--no-progress"])
    assert result.exit_code == 3, result.output  # finished, with the unreadable answers recorded as failed items
    warning = next(line for line in result.output.splitlines() if line.startswith("warning:"))
    assert "demo-model-b: no judged metric is defined" in warning and "math_engagement 2" in warning
    assert (tmp_path / "out.failures.jsonl").exists()
    report = CliRunner().invoke(main, ["leaderboard", "report", str(out), "--output", str(tmp_path / "r.html"),
                                       "--markdown", str(tmp_path / "r.md")])
    assert report.exit_code == 0, report.output
    assert "the judge gave no usable answer" in (tmp_path / "r.md").read_text()


def test_counterfactual_reviews_with_a_judge_give_ate_rows():
    from praib.llm.judge import Judge
    from praib.leaderboard.submission import Submission
    from praib.metrics.perturbation.treatment import counterfactual_effects
    from tests.metrics.perturbation.study import build_study, dataset, reading_judge

    original, variants, _ = build_study(papers=6)
    original = [r for r in original if r["source"] == "oracle"]
    variants = [r for r in variants if r["source"] == "oracle"]
    human = [{"paper_id": r["paper_id"], "source": "human", "text": "The results support the claim.", "rating": 5}
             for r in original for _ in range(2)]
    submission = Submission("oracle", "memory", dataset(original + variants), {"model": "oracle"})
    rows, details = run_module.score_submissions([submission], dataset(human), n_bootstrap=5,
                                                 judge=Judge(reading_judge()), workers=1)
    ate = {r["metric"]: r for r in rows if r["submission"] == "oracle" and r["metric"].startswith("ate_")}
    # The same effects as praib.metrics.perturbation.treatment called directly on the submission's records.
    direct = counterfactual_effects(dataset(original), dataset(variants), Judge(reading_judge()))
    entry = direct.reviewers["oracle/zero_generic"]
    assert ate["ate_ranking_score"]["value"] == pytest.approx(entry["ranking_score"])
    for name, effect in entry["differences"].items():
        assert ate[f"ate_{name}_critical"]["value"] == pytest.approx(effect["ate_critical"])
        assert ate[f"ate_{name}_neutral"]["value"] == pytest.approx(effect["ate_neutral"])
    assert ate["ate_score_critical"]["value"] < -0.5 and ate["ate_score_neutral"]["value"] == pytest.approx(0.0)
    assert details["oracle"]["treatment_effects"]["reviewers"].keys() == {"oracle/zero_generic"}
    assert any(r["metric"].startswith("robustness_") for r in rows)
