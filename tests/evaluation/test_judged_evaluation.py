"""`praib evaluate --judge` end to end: judged metrics added to every group, through a stub judge whose
answers depend on the judge template and the text it is shown, so every number is known by hand."""

import json
import re

import pytest

from praib.evaluation.evaluate import evaluate_reviews
from praib.llm.judge import Judge
from praib.records import coerce_record, records_to_dataset
from tests.evaluation.predictable_judge import HUMAN, MODEL, predictable_answer, predictable_judge



def dataset():
    rows = [
        {"paper_id": "p1", "venue": "ICLR", "year": 2025, "decision": "Reject", "source": "human", "text": HUMAN,
         "rating": 3},
        {"paper_id": "p1", "venue": "ICLR", "year": 2025, "decision": "Reject", "source": "lm", "model": "lm",
         "prompt": "guidelines", "text": MODEL},
    ]
    return records_to_dataset([coerce_record(r, "review", f"row {i}") for i, r in enumerate(rows)])


@pytest.fixture
def results():
    stub = predictable_judge()
    out = evaluate_reviews(dataset(), judge=Judge(stub)).to_dict()
    out["_templates"] = stub.templates
    return out


def test_judged_metrics_by_hand(results):
    human, model = results["groups"]
    assert human["label"] == "human" and model["label"] == "lm/guidelines"
    assert human["math_engagement"]["mean"] == 1.0
    # The model never engages; the only paper is human-positive, so P(+|+) = 0/1 and P(+|-) is undefined.
    assert model["math_engagement"]["mean"] == 0.0
    assert model["math_engagement"]["p_pos_given_pos"] == 0.0
    assert model["math_engagement"]["p_pos_given_neg"] is None
    # Weaknesses: human hw1, hw2; generated gw1 covers hw1 only -> recall 1/2, precision 1/1.
    assert model["coverage_recall_weaknesses"]["mean"] == 0.5
    assert model["coverage_precision_weaknesses"]["mean"] == 1.0
    assert model["coverage_recall_strengths"]["mean"] == 1.0
    assert model["coverage_precision_strengths"]["mean"] == 1.0
    # Every item is (Method, Validity) on both sides -> identical label sets -> F1 = 1.
    assert model["target_aspect_f1"] == 1.0
    distribution = human["target_aspect_distribution"]["weaknesses"]
    assert distribution["targets"]["Method"] == 1.0 and distribution["aspects"]["Validity"] == 1.0
    assert distribution["n"] == 2 and distribution["targets"]["Theory"] == 0.0
    # The model recommends rejection of the rejected paper.
    assert model["rejection_rate"]["rate"] == 1.0


def test_judge_is_recorded_and_every_metric_went_through_it(results):
    assert results["judge"]["model"] == "stub-judge" and results["judge"]["temperature"] == 0.0
    assert results["invalid_judge_answers"] == {"math_engagement": 0, "atomic_extraction": 0,
                                                "target_aspect_labels": 0, "of_reviews": 2}
    assert {"judge:math_engagement", "judge:atomic_human", "judge:atomic_generated", "judge:coverage",
            "judge:target_strength", "judge:aspect_weakness"} <= set(results["_templates"])


def test_judged_run_through_the_cli_with_the_tiny_model(tmp_path, tiny_model_dir):
    from click.testing import CliRunner

    from praib.cli.main import main

    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in dataset().to_list()))
    output = tmp_path / "results.json"
    result = CliRunner().invoke(main, ["evaluate", str(path), "--judge", str(tiny_model_dir), "--judge-backend",
                                       "transformers", "--judge-max-new-tokens", "8", "--cache-dir",
                                       str(tmp_path / "cache"), "-o", str(output), "--no-progress"])
    # A random-weight judge writes no readable JSON: counted, reported and recorded, never guessed;
    # the run finishes with the failed items' status.
    assert result.exit_code == 3, result.output
    results = json.loads(output.read_text())
    assert results["judge"]["backend"] == "transformers"
    assert results["invalid_judge_answers"]["math_engagement"] == 2
    assert "Unreadable judge answers" in result.output
    failures = [json.loads(line) for line in (tmp_path / "results.json.failures.jsonl").read_text().splitlines()]
    assert sorted(f["stage"] for f in failures) == ["judge:atomic_generated", "judge:atomic_human",
                                                    "judge:math_engagement", "judge:math_engagement"]
    assert all(f["error"] == "UnreadableAnswer" and f["raw"] is not None for f in failures)
    model = results["groups"][1]
    for key in ("math_engagement", "coverage_recall_strengths", "coverage_recall_weaknesses",
                "coverage_precision_strengths", "coverage_precision_weaknesses", "target_aspect_f1"):
        assert key in model


def finds_maths_everywhere(request):
    """Like the first judge, except that it finds maths in every review."""
    if request.template == "judge:math_engagement":
        return json.dumps({"rationale": "r", "verdict": "yes"})
    return predictable_answer(request)


def test_second_judge_agreement_by_hand():
    second_stub = predictable_judge(finds_maths_everywhere, name="stub2", model="second-judge")
    results = evaluate_reviews(dataset(), judge=Judge(predictable_judge()), second_judge=Judge(second_stub)).to_dict()
    second = results["second_judge"]
    assert second["judge"]["model"] == "second-judge"
    # Math: first judge (yes, no), second (yes, yes). Agreement 1/2; p_e = 0.5 * 1 + 0.5 * 0 = 0.5 -> kappa 0.
    assert second["math_engagement"]["agreement"] == 0.5
    assert second["math_engagement"]["cohen_kappa"] == pytest.approx(0.0)
    # Same labels and coverage answers everywhere: full agreement (kappa undefined: one category).
    assert second["target_weakness"]["agreement"] == 1.0 and second["target_weakness"]["n"] == 3
    assert second["coverage_pairs"]["agreement"] == 1.0 and second["coverage_pairs"]["n"] == 3


def test_rule_based_math_and_atomic_statistics_sit_beside_the_judge(results):
    human, model = results["groups"]
    # HUMAN cites "Eq. (3)": the rules fire; the model review has no formal reference.
    assert human["math_engagement_rules"]["mean"] == 1.0 and human["math_engagement_rules"]["method"] == "rules"
    assert model["math_engagement_rules"]["mean"] == 0.0
    assert model["math_methods_agreement"]["agreement"] == 1.0
    stats = model["atomic"]["statistics"]["all"]
    assert stats["n_reviews"] == 1
    human_stats = human["atomic"]["statistics"]["reject"]
    assert human_stats["n_reviews"] == 1


def test_prefilter_savings_and_audit_are_reported():
    from praib.metrics.judged.coverage import EmbeddingPrefilter

    # A threshold no pair reaches: all 3 item pairs (2 weakness + 1 strength) are skipped.
    results = evaluate_reviews(dataset(), judge=Judge(predictable_judge()),
                               prefilter=EmbeddingPrefilter(threshold=0.999)).to_dict()
    prefilter = results["coverage_prefilter"]
    assert prefilter["pairs_total"] == 3 and prefilter["calls_saved"] == 3 and prefilter["judge_calls"] == 0
    # The audit judges the skipped pairs: hw1-gw1 and hs1-gs1 would have been "yes".
    assert prefilter["audit"]["sampled"] == 3 and prefilter["audit"]["changed"] == 2
    assert results["groups"][1]["coverage_recall_weaknesses"]["mean"] == 0.0


def test_score_writes_every_review_judgement(tmp_path, tiny_model_dir):
    from click.testing import CliRunner

    from praib.cli.main import main
    from praib.evaluation.judged import JUDGEMENT_FEATURES
    from praib.records import save_records

    path = save_records(dataset(), tmp_path / "reviews.parquet")
    output = tmp_path / "judgements.parquet"
    result = CliRunner().invoke(main, ["score", str(path), "--judge", str(tiny_model_dir), "--judge-max-new-tokens",
                                       "8", "--cache-dir", str(tmp_path / "cache"), "-o", str(output),
                                       "--no-progress"])
    assert result.exit_code == 3, result.output  # the random-weight judge's answers cannot be read
    import datasets

    table = datasets.Dataset.from_parquet(str(output))
    assert len(table) == 2 and set(JUDGEMENT_FEATURES) == set(table.column_names)
    assert table["math_rules"] == [True, False]
    # each failed judgement keeps its reason in the row
    assert list(table["math_engages"]) == [None, None] and list(table["atomic_valid"]) == [False, False]
    assert all(e.startswith("the answer is not JSON") for e in list(table["math_error"]) + list(table["atomic_error"]))
    assert all(raw for raw in list(table["math_raw"]) + list(table["atomic_raw"]))  # what the judge said
    assert table["judge_model"] == [str(tiny_model_dir)] * 2


def test_judgement_records_with_a_stub_judge():
    from praib.evaluation.judged import ReviewJudgements, judgement_records

    columns = dataset().to_dict()
    judge = Judge(predictable_judge())
    table = judgement_records(columns, ReviewJudgements(columns, judge), judge)
    human, model = table.to_list()
    assert (human["math_engages"], model["math_engages"]) == (True, False)
    assert human["weaknesses"] == ["hw1 small data", "hw2 no ablation"]
    assert model["weakness_targets"] == ["Method"] and model["strength_aspects"] == ["Validity"]


def test_a_judged_rerun_is_free_through_the_call_cache(tmp_path):
    from praib.llm.cache import CachedBackend, CallCache

    first_stub, second_stub = predictable_judge(), predictable_judge()
    first = evaluate_reviews(dataset(), judge=Judge(CachedBackend(first_stub, CallCache(tmp_path))))
    assert first_stub.templates  # the first run asked the judge
    again = evaluate_reviews(dataset(), judge=Judge(CachedBackend(second_stub, CallCache(tmp_path))))
    assert second_stub.templates == []  # every call came from the on-disk cache
    assert again.groups == first.groups


def restructures_meta_reviews(request):
    """Restructures any meta-review into one strength and one weakness; labels the meta-review's
    weakness (mw1) with the target Theory, everything else as the first stub does."""
    if request.template.startswith("judge:meta_review_"):
        return json.dumps({"summary": "s", "strengths": ["ms1 clear"], "weaknesses": ["mw1 proof gap"],
                           "judgement": "Reject"})
    if request.template.startswith("judge:target_") and "mw1" in request.messages[-1][1]:
        return "Theory"
    return predictable_answer(request)


def test_meta_reviews_can_be_the_expert_side_of_target_aspect_agreement():
    from praib.records import coerce_record, records_to_dataset

    meta = records_to_dataset([coerce_record({"paper_id": "p1", "source": "human", "text": "The AC summary."},
                                             "meta_review", "meta")], "meta_review")
    stub = predictable_judge(restructures_meta_reviews)
    results = evaluate_reviews(dataset(), judge=Judge(stub), meta_reviews=meta).to_dict()
    assert results["target_aspect_expert"] == "meta_reviews"
    assert {"judge:meta_review_restructure", "judge:meta_review_augment",
            "judge:meta_review_paraphrase"} <= set(stub.templates)
    model = results["groups"][1]
    # Model: {(strength, Method, Validity), (weakness, Method, Validity)};
    # meta-review: {(strength, Method, Validity), (weakness, Theory, Validity)} -> P = R = 1/2, F1 = 1/2.
    assert model["target_aspect_f1"] == pytest.approx(0.5)
    assert model["target_aspect"]["by_kind"]["strength"]["f1"] == 1.0
    assert model["target_aspect"]["by_kind"]["weakness"]["f1"] == 0.0


# A review as the generic-review prompt asks for it: its own bullets are the items the target-aspect study labels.
BULLETED = """# Summary of paper
A method.
# Strengths
- **Clarity**: clear writing.
- **Scope**: three datasets,
  spanning two domains.
# Weaknesses
- **Data**: small data.
  - only 500 examples
# Final Judgement
- **Rationale of recommendation**: the data is too small.
- **Recommendation**: Reject
"""
# The item texts the judge is shown by the four label templates (the text between the triple quotes).
ITEM = re.compile(r'"""\n(.*?)\n"""', re.S)


def bullets_and_fallback():
    """p1 and p2 each have the human review; the model wrote bullets for p1, prose for p2 (MODEL)."""
    rows = [{"paper_id": paper, "venue": "ICLR", "year": 2025, "decision": "Reject", "source": source, "text": text,
             **({"rating": 3} if source == "human" else {"model": "lm", "prompt": "generic_review"})}
            for paper, model_text in (("p1", BULLETED), ("p2", MODEL))
            for source, text in (("human", HUMAN), ("lm", model_text))]
    return records_to_dataset([coerce_record(r, "review", f"row {i}") for i, r in enumerate(rows)])


def scope_is_an_experiment(request):
    """Like the first stub, except that the strength about the datasets has the target Experiment."""
    if request.template.startswith("judge:target_") and "three datasets" in request.messages[-1][1]:
        return "Experiment"
    return predictable_answer(request)


def labelled_texts(stub, template):
    return [ITEM.search(r.messages[-1][1]).group(1) for r in stub.requests if r.template == template]


def test_a_model_review_is_labelled_by_its_own_bullets_else_by_its_atomic_items():
    stub = predictable_judge(scope_is_an_experiment)
    results = evaluate_reviews(bullets_and_fallback(), judge=Judge(stub)).to_dict()
    human, model = results["groups"]
    # Rows: p1 human, p1 model (bullets), p2 human, p2 model (no list: its atomic items gs1, gw1).
    strengths = ["hs1 clear", "**Clarity**: clear writing.", "**Scope**: three datasets, spanning two domains.",
                 "hs1 clear", "gs1 clear writing"]
    weaknesses = ["hw1 small data", "hw2 no ablation", "**Data**: small data.\n- only 500 examples",
                  "hw1 small data", "hw2 no ablation", "gw1 small data"]
    for kind, items in (("strength", strengths), ("weakness", weaknesses)):
        for part in ("target", "aspect"):
            assert labelled_texts(stub, f"judge:{part}_{kind}") == items
            # one batch per template, as before
            assert [len(b) for b in stub.batches if b[0].template == f"judge:{part}_{kind}"] == [len(items)]
    assert model["target_aspect"]["llm_items"] == {"bullet_points": 1, "atomic_fallback": 1}
    # p1: M = {(s, Method, Validity), (s, Experiment, Validity), (w, Method, Validity)},
    #     E = {(s, Method, Validity), (w, Method, Validity)}: TP 2, |M| 3, |E| 2.
    # p2: M = E = {(s, Method, Validity), (w, Method, Validity)}: TP 2, |M| 2, |E| 2.
    # P = 4/5, R = 4/4, F1 = 2 * 0.8 / 1.8 = 8/9.
    assert model["target_aspect_f1"] == pytest.approx(8 / 9)
    assert model["target_aspect"]["by_kind"]["strength"]["precision"] == pytest.approx(2 / 3)
    # The group's label shares are those of the same items: 1 of its 3 strengths is about an experiment.
    assert model["target_aspect_distribution"]["strengths"]["targets"]["Experiment"] == pytest.approx(1 / 3)
    assert model["target_aspect_distribution"]["weaknesses"]["n"] == 2
    assert human["target_aspect_distribution"]["weaknesses"]["n"] == 4
    # Coverage still compares atomic items: no bullet reaches the coverage judge.
    coverage_prompts = [r.messages[-1][1] for r in stub.requests if r.template == "judge:coverage"]
    assert coverage_prompts and not any("Clarity" in p or "500 examples" in p for p in coverage_prompts)
    assert model["coverage_recall_weaknesses"]["mean"] == 0.5 and model["atomic"]["statistics"]["all"]["n_reviews"] == 2


def test_judgements_name_the_labelled_items_and_the_second_judge_labels_the_same_ones():
    from praib.evaluation.judged import ReviewJudgements, judgement_records, second_judge_agreement

    columns = bullets_and_fallback().to_dict()
    judge = Judge(predictable_judge(scope_is_an_experiment))
    judgements = ReviewJudgements(columns, judge)
    table = judgement_records(columns, judgements, judge).to_list()
    assert [row["labelled"] for row in table] == ["atomic_items", "bullet_points", "atomic_items", "atomic_items"]
    bulleted = table[1]
    assert bulleted["strengths"] == ["gs1 clear writing"]  # the atomic items are kept beside the bullets
    assert bulleted["labelled_strengths"] == ["**Clarity**: clear writing.",
                                              "**Scope**: three datasets, spanning two domains."]
    assert bulleted["strength_targets"] == ["Method", "Experiment"]
    assert table[3]["labelled_weaknesses"] == ["gw1 small data"] and table[3]["weakness_targets"] == ["Method"]

    second_stub = predictable_judge(name="stub2", model="second-judge")
    second = second_judge_agreement(columns, judgements, judge, Judge(second_stub), reference_rows=[0, 2])
    assert labelled_texts(second_stub, "judge:target_strength") == [
        "hs1 clear", "**Clarity**: clear writing.", "**Scope**: three datasets, spanning two domains.", "hs1 clear",
        "gs1 clear writing"]
    # The second judge calls the datasets strength a Method: 4 of the 5 strength targets agree.
    assert second["target_strength"]["agreement"] == pytest.approx(4 / 5)


def test_the_per_review_parquet_of_a_judged_run_carries_each_review_s_scores(tmp_path):
    """Each judged per-review result is one typed score a review (value, answer, explanation, metadata), beside
    the text metrics: the stub judge finds maths in the human review only, with rationale "r"; the rules fire on
    the human review's "Eq. (3)" and on nothing in the model's."""
    import pyarrow.parquet as pq

    evaluate_reviews(dataset(), judge=Judge(predictable_judge()), per_review=tmp_path / "rows")
    (part,) = (tmp_path / "rows").glob("part-*.parquet")
    assert part.name == "part-00000-of-00001.parquet"
    human, model = pq.read_table(part).to_pylist()
    assert (human["source"], model["source"], model["model"], model["prompt"]) == ("human", "lm", "lm", "guidelines")
    assert human["math_engagement"] == {"value": 1.0, "answer": "yes", "explanation": "r",
                                        "metadata": '{"method": "judge"}'}
    assert model["math_engagement"]["value"] == 0.0 and model["math_engagement"]["answer"] == "no"
    rules = json.loads(human["math_engagement_rules"]["metadata"])
    assert human["math_engagement_rules"]["value"] == 1.0 and rules["hits"]["numbered_formal_reference"] == ["Eq. (3"]
    assert human["math_engagement_rules"]["answer"] is None and model["math_engagement_rules"]["value"] == 0.0
    assert human["tkc"] == len(re.findall(r"[A-Za-z]+", HUMAN))


def test_a_review_the_judge_could_not_read_scores_none_with_the_reason():
    from praib.metrics.judged.math_engagement import MathJudgement

    failed = MathJudgement(None, None, "judge", "the verdict is 'maybe', not 'yes' or 'no'", '{"verdict": "maybe"}')
    assert failed.score().to_dict() == {"value": None, "answer": '{"verdict": "maybe"}',
                                        "explanation": "the verdict is 'maybe', not 'yes' or 'no'",
                                        "metadata": {"method": "judge", "error": "the verdict is 'maybe', not 'yes' "
                                                                                 "or 'no'"}}
