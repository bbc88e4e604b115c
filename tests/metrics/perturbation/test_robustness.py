"""Pairing of original and perturbed reviews, and the directional/invariance report and CLI."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats as sps

from praib.cli.main import main
from praib.records import coerce_record, records_to_dataset
from praib.metrics.perturbation.robustness import (
    PairingError,
    decision_level,
    proportional_levels,
    format_robustness_table,
    pair_records,
    record_scores,
    robustness_report,
)


def dataset(rows, kind="review"):
    return records_to_dataset([coerce_record(row, kind, f"row {i}") for i, row in enumerate(rows)], kind)


def study(papers=30, seed=0):
    """ICLR 2024 reviews by one model; a 'soundness' edit lowers the rating by 2 steps of the
    scale and turns accepts into rejects, a 'typos' edit changes nothing."""
    rng = np.random.default_rng(seed)
    scale = [1, 3, 5, 6, 8, 10]
    original, perturbed = [], []
    for i in range(papers):
        step = int(rng.integers(2, 6))
        row = {"paper_id": f"p{i}", "source": "model-x", "prompt": "extended", "venue": "ICLR", "year": 2024,
               "rating": scale[step], "confidence": int(rng.integers(2, 5)),
               "subscores": {"soundness": int(rng.integers(1, 5)), "presentation": 3},
               "recommendation": "accept" if scale[step] >= 6 else "reject"}
        original.append(row)
        perturbed.append({**row, "rating": scale[step - 2], "recommendation": "reject",
                          "perturbation": {"kind": "soundness", "category": "paper", "component": "paper"}})
        perturbed.append({**row, "perturbation": {"kind": "typos", "category": "presentation", "component": "paper"}})
    return original, perturbed


def test_pairs_by_paper_source_model_prompt_and_reviewer():
    base = {"paper_id": "p1", "source": "m", "rating": 5}
    original = dataset([{**base, "reviewer_id": "r1"}, {**base, "reviewer_id": "r2", "rating": 3}])
    perturbed = dataset([{**base, "reviewer_id": "r2", "rating": 1, "perturbation": {"kind": "tone"}}])
    paired = pair_records(original, perturbed)
    assert len(paired["pairs"]) == 1 and len(paired["originals"]) == 2
    pair = paired["pairs"][0]
    assert pair["original"]["rating"] == 3 and pair["perturbed"]["rating"] == 1
    assert pair["key"] == ("p1", "m", None, None, "r2")


def test_pairing_errors_are_counted_and_named():
    original = dataset([{"paper_id": "p1", "source": "m", "rating": 5},
                        {"paper_id": "p1", "source": "m", "rating": 6},
                        {"paper_id": "p2", "source": "m", "rating": 5, "perturbation": {"kind": "tone"}}])
    perturbed = dataset([{"paper_id": "p9", "source": "m", "perturbation": {"kind": "tone"}},
                         {"paper_id": "p8", "source": "m", "perturbation": {"kind": "tone"}},
                         {"paper_id": "p1", "source": "m"},
                         {"paper_id": "p1", "source": "m", "perturbation": {"kind": "tone"}},
                         {"paper_id": "p1", "source": "m", "perturbation": {"kind": "tone"}}])
    with pytest.raises(PairingError) as caught:
        pair_records(original, perturbed)
    message = str(caught.value)
    assert "1 originals carrying a perturbation: original record 2 (paper_id=p2, source=m)" in message
    assert "1 duplicate originals: original record 1 (paper_id=p1, source=m)" in message
    assert "2 perturbed records without an original" in message and "paper_id=p9" in message and "p8" in message
    assert "1 perturbed records without a perturbation struct: perturbed record 2" in message
    assert "1 duplicate perturbed records: perturbed record 4" in message


def test_decision_levels_and_rating_decisions():
    assert [decision_level(t) for t in ("Reject", "Accept as Poster", "Accept as Spotlight", "Accept (Oral)",
                                         "weak accept", "borderline reject", "no idea", None)] == [0, 1, 2, 3, 1, 0,
                                                                                                None, None]
    # ICLR 2020's rating scale is made of decisions; ICLR 2024's is not.
    assert record_scores({"venue": "ICLR", "year": 2020, "rating": 3})["decision"] == 0
    assert record_scores({"venue": "ICLR", "year": 2020, "rating": 6})["decision"] == 1
    assert "decision" not in record_scores({"venue": "ICLR", "year": 2024, "rating": 6})
    assert record_scores({"venue": "ICLR", "year": 2024, "rating": 6, "recommendation": "reject",
                          "subscores": [{"name": "soundness", "value": 2}]}) == {
        "rating": 6, "decision": 0, "soundness": 2}


def test_proportional_decision_levels_by_hand():
    """Mid-ranks of ICLR 2024's 5,779 decisions (3,519 rejects, 1,808 posters, 366 spotlights, 86 orals):
    1759.5, 4423, 5510, 5736 of 5,779, rescaled to reject 0 and oral 3."""
    ridits = [1759.5 / 5779, 4423 / 5779, 5510 / 5779, 5736 / 5779]
    expected = {level: 3 * (r - ridits[0]) / (ridits[3] - ridits[0]) for level, r in enumerate(ridits)}
    assert proportional_levels() == pytest.approx(expected, abs=1e-12)
    assert round(proportional_levels()[1], 3) == 2.009 and round(proportional_levels()[2], 3) == 2.829
    assert proportional_levels({0: 1, 1: 1, 2: 1, 3: 1}) == pytest.approx({0: 0.0, 1: 1.0, 2: 2.0, 3: 3.0})


def test_report_detects_the_planted_decrease_and_the_invariance():
    original, perturbed = study()
    report = robustness_report(dataset(original), dataset(perturbed))
    assert report.margins == {"confidence": 0.5, "decision": 0.5, "presentation": 0.5, "rating": 1.0,
                                 "soundness": 0.5}
    results = report.reviewers["model-x/extended"]["perturbations"]
    soundness, typos = results["soundness"], results["typos"]
    assert soundness["n_pairs"] == typos["n_pairs"] == 30 and soundness["n_unperturbed"] == 0
    assert soundness["scores"]["rating"]["verdict"] == "decrease"
    before = np.array([r["rating"] for r in original], float)
    after = np.array([p["rating"] for p in perturbed if p["perturbation"]["kind"] == "soundness"], float)
    assert soundness["scores"]["rating"]["p_decrease"] == pytest.approx(
        sps.wilcoxon(after - before, alternative="less").pvalue)
    assert soundness["scores"]["soundness"]["verdict"] == "equivalent"
    assert {s["verdict"] for s in typos["scores"].values()} == {"equivalent"}
    # Decisions: every accept becomes a reject.
    accepts = sum(r["rating"] >= 6 for r in original)
    decision = soundness["decision"]
    assert decision["transition"]["counts"] == [[30 - accepts, 0, 0, 0], [accepts, 0, 0, 0], [0] * 4, [0] * 4]
    assert decision["acceptance_rate"] == {"original": accepts / 30, "perturbed": 0.0, "change": -accepts / 30,
                                           "n": 30}
    assert decision["cohen_kappa"] == 0.0  # the perturbed side has one label: p_o = p_e
    assert decision["category_shares"]["reject"] == pytest.approx({"original": (30 - accepts) / 30, "perturbed": 1.0,
                                                                   "change": accepts / 30})
    assert decision["category_shares"]["accept (poster)"]["change"] == -accepts / 30
    assert decision["category_shares"]["oral"] == {"original": 0.0, "perturbed": 0.0, "change": 0.0}
    assert typos["decision"]["cohen_kappa"] == 1.0
    # The proportional mapping: each poster that becomes a reject falls 2.0094 (by hand below), none rises.
    proportional = decision["proportional"]
    assert proportional["mean_difference"] == pytest.approx(-accepts / 30 * 2.009430403621275)
    assert proportional["verdict"] == "decrease" and proportional["margin"] == 0.5
    assert typos["decision"]["proportional"]["verdict"] == "equivalent"
    json.dumps(report.to_dict())

    table = format_robustness_table(report)
    lines = table.splitlines()
    assert lines[1].split()[:4] == ["Perturbation", "n", "rating", "confidence"]
    soundness_row = next(line for line in lines if line.startswith("soundness"))
    assert "↓ p<0.001" in soundness_row and "≈" in soundness_row
    assert "↓" not in next(line for line in lines if line.startswith("typos"))


def test_report_counts_unperturbed_originals_and_takes_margin_overrides():
    original, perturbed = study(papers=12)
    some = [p for p in perturbed if p["paper_id"] not in ("p0", "p1") or p["perturbation"]["kind"] == "typos"]
    report = robustness_report(dataset(original), dataset(some), margins={"rating": 2.5})
    results = report.reviewers["model-x/extended"]["perturbations"]
    assert results["soundness"]["n_unperturbed"] == 2 and results["typos"]["n_unperturbed"] == 0
    assert report.margins["rating"] == 2.5
    assert results["soundness"]["scores"]["rating"]["margin"] == 2.5
    with pytest.raises(ValueError, match="novelty"):
        robustness_report(dataset(original), dataset(some), margins={"novelty": 1.0})


def test_small_samples_are_inconclusive():
    original, perturbed = study(papers=3)
    report = robustness_report(dataset(original), dataset(perturbed))
    scores = report.reviewers["model-x/extended"]["perturbations"]["soundness"]["scores"]
    assert scores["rating"]["verdict"] == "inconclusive"


def test_meta_reviews_pair_without_reviewer_id(tmp_path):
    original = dataset([{"paper_id": "p1", "source": "m", "rating": 5, "recommendation": "Accept as Poster"}],
                       "meta_review")
    perturbed = dataset([{"paper_id": "p1", "source": "m", "rating": 3, "recommendation": "Reject",
                          "perturbation": {"kind": "review-conclusion", "component": "review"}}], "meta_review")
    report = robustness_report(original, perturbed, kind="meta_review")
    result = report.reviewers["m"]["perturbations"]["review-conclusion"]
    assert result["decision"]["acceptance_rate"]["change"] == -1.0
    assert result["scores"]["rating"]["verdict"] == "inconclusive"


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(path)


def test_cli_prints_the_table_and_writes_a_verdict_per_score(tmp_path):
    original, perturbed = study()
    soundness = [p for p in perturbed if p["perturbation"]["kind"] == "soundness"]
    typos = [p for p in perturbed if p["perturbation"]["kind"] == "typos"]
    out = tmp_path / "robustness.json"
    result = CliRunner().invoke(main, [
        "robustness", write_jsonl(tmp_path / "o.jsonl", original),
        write_jsonl(tmp_path / "s.jsonl", soundness),
        write_jsonl(tmp_path / "t.jsonl", typos),
        "--margin", "confidence=0.75", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "soundness" in result.output and "↓" in result.output
    report = json.loads(out.read_text())
    scores = report["reviewers"]["model-x/extended"]["perturbations"]["soundness"]["scores"]
    assert scores["rating"]["verdict"] == "decrease"
    assert scores["confidence"]["margin"] == 0.75
    assert set(scores) == {"rating", "confidence", "soundness", "presentation", "decision"}


def test_cli_reports_unpaired_records(tmp_path):
    original, perturbed = study(papers=4)
    result = CliRunner().invoke(main, [
        "robustness", write_jsonl(tmp_path / "o.jsonl", original[:2]),
        write_jsonl(tmp_path / "p.jsonl", perturbed), "--output", str(tmp_path / "r.json")])
    assert result.exit_code != 0
    assert "4 perturbed records without an original" in result.output
    bad = CliRunner().invoke(main, [
        "robustness", str(tmp_path / "o.jsonl"), str(tmp_path / "p.jsonl"),
        "--margin", "rating", "--output", str(tmp_path / "r.json")])
    assert bad.exit_code != 0 and "KEY=VALUE" in bad.output


def test_cli_refuses_an_empty_file_and_says_when_no_score_can_be_tested(tmp_path):
    original, perturbed = study(papers=3)
    (tmp_path / "empty.jsonl").write_text("")
    empty = CliRunner().invoke(main, ["robustness", write_jsonl(tmp_path / "o.jsonl", original),
                                      str(tmp_path / "empty.jsonl"), "-o", str(tmp_path / "r.json")])
    assert empty.exit_code != 0 and "empty.jsonl: empty: no records" in empty.output
    unscored = [{"paper_id": r["paper_id"], "source": "m", "text": "no scores here"} for r in original]
    edited = [{**r, "perturbation": {"kind": "tone"}} for r in unscored]
    result = CliRunner().invoke(main, ["robustness", write_jsonl(tmp_path / "u.jsonl", unscored),
                                       write_jsonl(tmp_path / "e.jsonl", edited),
                                       "-o", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    assert "no score is known on both sides of any pair" in result.output


def test_reviewer_label_names_a_local_model_directory_by_its_folder():
    from praib.records.ids import reviewer_label

    assert reviewer_label({"source": "tiny", "model": "/tmp/tiny", "prompt": "guidelines"}) == "tiny/guidelines"
    assert reviewer_label({"source": "Qwen/Qwen2.5-7B", "model": "Qwen/Qwen2.5-7B"}) == "Qwen/Qwen2.5-7B"
    assert reviewer_label({"source": "team-a", "model": "Qwen/Qwen2.5-7B"}) == "team-a/Qwen/Qwen2.5-7B"
    assert reviewer_label({"source": "human", "model": None, "prompt": None}) == "human"


def test_cli_adds_the_score_ate_table_for_counterfactual_variants(tmp_path):
    from tests.metrics.perturbation.study import build_study

    original, variants, _ = build_study(papers=12)
    (tmp_path / "o.jsonl").write_text("".join(json.dumps(r) + "\n" for r in original))
    (tmp_path / "v.jsonl").write_text("".join(json.dumps(r) + "\n" for r in variants))
    out = tmp_path / "robustness.json"
    result = CliRunner().invoke(main, ["robustness", str(tmp_path / "o.jsonl"),
                                       str(tmp_path / "v.jsonl"), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert "Average treatment effects of soundness-critical versus soundness-neutral edits" in result.output
    effects = json.loads(out.read_text())["treatment_effects"]["reviewers"]
    assert effects["oracle/zero_generic"]["differences"]["score"]["significant"]
    assert not effects["null/zero_generic"]["differences"]["score"]["significant"]
