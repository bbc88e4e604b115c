"""ATEs of counterfactual edits: an oracle reviewer that reacts to broken research logic must
come out significant after Benjamini-Hochberg, a reviewer that does not must not."""

import json
import re

import numpy as np
import pytest
import statsmodels.formula.api as smf
from click.testing import CliRunner
from rouge_score import rouge_scorer

from praib.llm.backends import SamplingConfig
from praib.llm.judge import Judge
from praib.metrics.perturbation.robustness import PairingError
from praib.metrics.perturbation.treatment import (
    aligned_pairs,
    assertion_features,
    assertion_jaccard,
    counterfactual_effects,
    format_effects_table,
)
from tests.metrics.perturbation.study import build_study, dataset, reading_answer, reading_judge


@pytest.fixture(scope="module")
def study():
    original, variants, truth = build_study()
    result = counterfactual_effects(dataset(original), dataset(variants), Judge(reading_judge()))
    return result, truth


def test_oracle_is_significant_after_bh_and_null_is_not(study):
    result, _ = study
    oracle, null = result.reviewers["oracle/zero_generic"], result.reviewers["null/zero_generic"]
    for name in ("aspect", "sentiment", "score"):
        assert oracle["differences"][name]["significant"], name
        assert oracle["differences"][name]["p_corrected"] < 0.05
        assert not null["differences"][name]["significant"], name
    assert oracle["differences"]["score"]["ate_critical"] == pytest.approx(-2.0, abs=0.4)
    assert oracle["differences"]["score"]["ate_neutral"] == pytest.approx(0.0, abs=1e-9)
    assert oracle["differences"]["aspect"]["ate_critical"] > oracle["differences"]["aspect"]["ate_neutral"]
    assert oracle["differences"]["sentiment"]["ate_critical"] < oracle["differences"]["sentiment"]["ate_neutral"]
    assert oracle["ranking_score"] > 1 > abs(null["ranking_score"])
    assert (oracle["n_critical"], oracle["n_neutral"]) == (48, 64)
    json.dumps(result.to_dict())


@pytest.mark.filterwarnings("ignore::statsmodels.tools.sm_exceptions.ConvergenceWarning")
def test_score_effect_matches_statsmodels_and_bh_matches_a_hand_computation(study):
    result, truth = study
    p_values = {}
    for reviewer in ("oracle", "null"):
        frame = truth[truth["reviewer"] == reviewer].rename(columns={"score": "difference"})
        fit = smf.mixedlm("difference ~ critical", frame, groups=frame["paper"]).fit()
        effect = result.reviewers[f"{reviewer}/zero_generic"]["differences"]["score"]
        assert effect["effect"] == pytest.approx(fit.params["critical"], rel=1e-6)
        assert effect["p_value"] == pytest.approx(fit.pvalues["critical"], rel=1e-6)
        p_values[reviewer] = fit.pvalues["critical"]
    # BH with two tests: the smaller p doubles unless the larger is smaller than that.
    low, high = sorted(p_values.values())
    corrected = {r: result.reviewers[f"{r}/zero_generic"]["differences"]["score"]["p_corrected"]
                 for r in p_values}
    assert sorted(corrected.values()) == pytest.approx([min(2 * low, high), high])


def test_ranking_score_by_hand(study):
    result, truth = study
    oracle = truth[truth["reviewer"] == "oracle"]
    effect = result.reviewers["oracle/zero_generic"]["differences"]["aspect"]
    neutral_sd = oracle.loc[oracle["critical"] == 0].apply(
        lambda r: sum(bool(re.search("result|conclusion|claim|experiment", s.lower())) for s in r["variant"])
        - sum(bool(re.search("result|conclusion|claim|experiment", s.lower())) for s in r["original"]),
        axis=1).std(ddof=1)
    assert effect["std_neutral"] == pytest.approx(neutral_sd)
    assert effect["z"] == pytest.approx((effect["ate_critical"] - effect["ate_neutral"]) / neutral_sd)
    entry = result.reviewers["oracle/zero_generic"]
    defined = [e["z"] for e in entry["differences"].values() if e["z"] is not None]
    # The oracle never changes the score of a neutral version: that z is undefined and left out.
    assert entry["differences"]["score"]["z"] is None and len(defined) == 2
    assert entry["ranking_score"] == pytest.approx(sum(defined) / 2)
    sentiment = entry["differences"]["sentiment"]
    assert sentiment["z"] == pytest.approx(-(sentiment["ate_critical"] - sentiment["ate_neutral"])
                                           / sentiment["std_neutral"])


def test_sensitivity_against_rouge_score_and_set_jaccard(study):
    result, truth = study
    scorer = rouge_scorer.RougeScorer(["rouge2"], use_stemmer=True)
    for reviewer in ("oracle", "null"):
        neutral = truth[(truth["reviewer"] == reviewer) & (truth["critical"] == 0)]
        rouge = [scorer.score(" ".join(r.original), " ".join(r.variant))["rouge2"].fmeasure
                 for r in neutral.itertuples()]
        jaccard = [len(set(r.original) & set(r.variant)) / len(set(r.original) | set(r.variant))
                   for r in neutral.itertuples()]
        sensitivity = result.reviewers[f"{reviewer}/zero_generic"]["sensitivity"]
        assert sensitivity["rouge2"]["mean"] == pytest.approx(np.mean(rouge))
        assert sensitivity["assertion_jaccard"]["mean"] == pytest.approx(np.mean(jaccard))
        assert sensitivity["assertion_jaccard"]["n"] == 64


def test_table_ranks_the_oracle_first(study):
    result, _ = study
    lines = format_effects_table(result).splitlines()
    assert lines[0].split()[:4] == ["Reviewer", "n", "crit", "n"]
    assert lines[2].startswith("oracle/zero_generic") and lines[3].startswith("null/zero_generic")
    assert lines[2].count("*") == 3 and "*" not in lines[3]


def test_assertion_helpers():
    assert assertion_features(None) == {"aspect": None, "sentiment": None}
    assert assertion_features([]) == {"aspect": 0.0, "sentiment": None}
    items = [{"text": "a", "sentiment": "positive", "soundness": True},
             {"text": "b", "sentiment": "negative", "soundness": True},
             {"text": "c", "sentiment": "neutral", "soundness": False},
             {"text": "d", "sentiment": "positive", "soundness": False}]
    assert assertion_features(items) == {"aspect": 2.0, "sentiment": 0.5}
    # Out-of-range and reused indices do not count: one-to-one alignment.
    assert aligned_pairs({"pairs": [[0, 0], [0, 1], [1, 0], [2, 5], [1, 1]]}, 3, 2) == 2
    assert aligned_pairs("not json", 3, 2) is None
    assert assertion_jaccard(3, 2, 2) == pytest.approx(2 / 3)
    assert assertion_jaccard(0, 0, 0) is None


def test_invalid_judge_answers_are_counted_not_guessed():
    original, variants, _ = build_study(papers=3)

    broken = reading_judge(lambda request: "I cannot do that." if request.template == "judge:ate_assertions"
                           else reading_answer(request))
    result = counterfactual_effects(dataset(original), dataset(variants), Judge(broken))
    assert result.n_unjudged_reviews == len(original) + len(variants)
    effect = result.reviewers["oracle/zero_generic"]["differences"]["aspect"]
    assert effect["n_missing"] == 21 and effect["p_value"] is None
    assert result.reviewers["oracle/zero_generic"]["sensitivity"]["assertion_jaccard"]["n"] == 0
    assert f"{len(original) + len(variants)} reviews got no valid assertions" in format_effects_table(result)


def test_variants_need_a_soundness_category():
    original, variants, _ = build_study(papers=2)
    variants[0]["perturbation"]["category"] = "presentation"
    with pytest.raises(PairingError, match="presentation"):
        counterfactual_effects(dataset(original), dataset(variants), Judge(reading_judge()))


def test_effects_command_with_a_stub_judge(tmp_path, monkeypatch):
    from praib.cli import robustness as cli_robustness

    original, variants, _ = build_study(papers=10)
    (tmp_path / "o.jsonl").write_text("".join(json.dumps(r) + "\n" for r in original))
    (tmp_path / "v.jsonl").write_text("".join(json.dumps(r) + "\n" for r in variants))
    backend = reading_judge()
    made = {}

    def make_judge(kind, model, *, max_new_tokens, cache_dir, failures, **options):
        made.update(kind=kind, model=model, max_new_tokens=max_new_tokens)
        return Judge(backend, SamplingConfig(max_new_tokens=max_new_tokens, temperature=0.0), failures)

    monkeypatch.setattr("praib.llm.judge.make_judge", make_judge)
    out = tmp_path / "effects.json"
    result = CliRunner().invoke(cli_robustness.effects, [
        str(tmp_path / "o.jsonl"), str(tmp_path / "v.jsonl"),
        "--judge", "stub-model", "--judge-backend", "openai", "--judge-max-new-tokens", "256",
        "--output", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert made == {"kind": "openai", "model": "stub-model", "max_new_tokens": 256}
    assert result.output.splitlines()[2].startswith("oracle/zero_generic")
    written = json.loads(out.read_text())
    assert written["reviewers"]["oracle/zero_generic"]["differences"]["score"]["significant"]
    assert written["judge"]["model"] == "reading-judge"
    assert set(backend.templates) == {"judge:ate_assertions", "judge:ate_alignment"}



def test_without_a_judge_only_the_score_effect_and_rouge_are_measured(study, tmp_path):
    original, variants, truth = build_study()
    result = counterfactual_effects(dataset(original), dataset(variants))
    oracle, null = result.reviewers["oracle/zero_generic"], result.reviewers["null/zero_generic"]
    assert result.differences == ["score"] and result.judge is None
    assert set(oracle["differences"]) == {"score"}
    judged = study[0].reviewers["oracle/zero_generic"]["differences"]["score"]
    assert oracle["differences"]["score"]["effect"] == pytest.approx(judged["effect"])
    assert oracle["differences"]["score"]["significant"] and not null["differences"]["score"]["significant"]
    assert oracle["sensitivity"]["assertion_jaccard"]["n"] == 0
    assert oracle["sensitivity"]["rouge2"] == study[0].reviewers["oracle/zero_generic"]["sensitivity"]["rouge2"]

    (tmp_path / "o.jsonl").write_text("".join(json.dumps(r) + "\n" for r in original))
    (tmp_path / "v.jsonl").write_text("".join(json.dumps(r) + "\n" for r in variants))
    from praib.cli import robustness as cli_robustness

    printed = CliRunner().invoke(cli_robustness.effects, [
        str(tmp_path / "o.jsonl"), str(tmp_path / "v.jsonl"),
        "--output", str(tmp_path / "e.json"), "--no-progress"])
    assert printed.exit_code == 0, printed.output
    assert "p score (BH)" in printed.output and "p aspect" not in printed.output
    assert "need --judge" in printed.output
