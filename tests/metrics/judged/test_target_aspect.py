"""Target / aspect labelling and agreement: stub judge end to end, hand-computed arithmetic,
the evaluate module offline, and one run through the transformers backend on the tiny model."""

from __future__ import annotations

import json
import math

import evaluate
import pytest

from praib.llm.judge import Judge
from praib.metrics.judged.target_aspect import (
    ASPECTS, TARGETS, agreement_report, label_distribution, label_items, label_set_agreement, rejection_rate,
    restructure_meta_review)
from tests.doubles import StubBackend
from tests.paths import METRICS

METRIC = METRICS / "target_aspect"


def scripted(script):
    """A stub judge that answers by (judge template, item text): the test controls every answer."""

    def answer(request):
        template = request.template.split(":", 1)[1]
        answers = [a for (t, needle), a in script.items() if t == template and needle in request.messages[0][1]]
        return answers[0] if answers else "no idea"

    return StubBackend(answer)


# --- labelling through the judge -------------------------------------------------------------

def test_label_items_uses_the_kind_specific_prompts_and_counts_invalid_answers():
    script = {
        ("target_weakness", "no strong baselines"): "Experiment",
        ("target_weakness", "idea is incremental"): "Target 2: Method",  # loose answer, mapped by Judge.choose
        ("target_weakness", "banana"): "Fruit",                           # outside the set -> None, counted
        ("aspect_weakness", "no strong baselines"): "Validity",
        ("aspect_weakness", "idea is incremental"): "Novelty",
        ("aspect_weakness", "banana"): "Clarity",
    }
    backend = scripted(script)
    items = ["There are no strong baselines.", "The idea is incremental.", "banana"]
    labels = label_items(items, "weaknesses", Judge(backend))
    assert list(labels) == [("Experiment", "Validity"), ("Method", "Novelty"), (None, "Clarity")]
    assert labels.invalid == {"target": 1, "aspect": 0}
    # two calls per item: all target prompts, then all aspect prompts, constrained to the label sets
    assert [r.template for r in backend.requests] == ["judge:target_weakness"] * 3 + ["judge:aspect_weakness"] * 3
    assert backend.requests[0].choices == TARGETS and backend.requests[3].choices == ASPECTS
    assert "There are no strong baselines." in backend.requests[0].messages[0][1]
    assert backend.requests[0].sampling.temperature == 0.0


def test_label_items_strength_prompts_empty_input_and_bad_kind():
    backend = scripted({("target_strength", "clear"): "Paper", ("aspect_strength", "clear"): "Clarity"})
    labels = label_items(["Very clear writing."], "strength", Judge(backend))
    assert list(labels) == [("Paper", "Clarity")] and labels.invalid == {"target": 0, "aspect": 0}
    assert {r.template for r in backend.requests} == {"judge:target_strength", "judge:aspect_strength"}
    assert list(label_items([], "strength", Judge(backend))) == []
    with pytest.raises(ValueError):
        label_items(["x"], "opinion", Judge(backend))


def test_all_four_prompts_render_with_the_item_and_name_every_label():
    judge = Judge(scripted({}))
    for name in ("target_strength", "target_weakness", "aspect_strength", "aspect_weakness"):
        text = judge.render(name, item="ITEM-TEXT")
        assert "ITEM-TEXT" in text
        for label in (TARGETS if name.startswith("target") else ASPECTS):
            assert label in text, (name, label)


# --- one paper's label sets ------------------------------------------------------------------

def test_label_set_agreement_by_hand():
    # M = {(Method, Novelty), (Experiment, Validity)} (the duplicate counts once)
    # E = {(Method, Novelty), (Paper, Clarity)}; M & E = {(Method, Novelty)}
    # P = 1/2, R = 1/2, F1 = 2 * 1/4 / 1 = 1/2
    r = label_set_agreement([("Method", "Novelty"), ("Experiment", "Validity"), ("Method", "Novelty")],
                            [("Method", "Novelty"), ("Paper", "Clarity")])
    assert r == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5})
    # M = {(Experiment, Validity)}, E = {(Experiment, Validity), (Prior Research, Novelty)}
    # P = 1/1, R = 1/2, F1 = 2 * 1/2 / (3/2) = 2/3
    r = label_set_agreement([("Experiment", "Validity")], [("Experiment", "Validity"), ("Prior Research", "Novelty")])
    assert r == pytest.approx({"precision": 1.0, "recall": 0.5, "f1": 2 / 3})


def test_label_set_agreement_empty_sets_and_invalid_labels():
    assert label_set_agreement([], []) == {"precision": None, "recall": None, "f1": None}
    assert label_set_agreement([], [("Method", "Validity")]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert label_set_agreement([("Method", "Validity")], []) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    # a label with a None part (invalid judge answer) is dropped: only None labels = empty set
    assert label_set_agreement([(None, "Validity")], []) == {"precision": None, "recall": None, "f1": None}
    assert label_set_agreement([(None, "Validity"), ("Method", "Validity")], [("Method", "Validity")]) == {
        "precision": 1.0, "recall": 1.0, "f1": 1.0}


# --- the report over papers ------------------------------------------------------------------

PER_PAPER = [
    {"paper_id": "A", "kind": "strength",
     "model": [("Method", "Novelty"), ("Experiment", "Validity"), ("Method", "Novelty")],
     "expert": [("Method", "Novelty"), ("Paper", "Clarity")]},
    {"paper_id": "A", "kind": "weakness",
     "model": [("Experiment", "Validity")],
     "expert": [("Experiment", "Validity"), ("Prior Research", "Novelty")]},
    {"paper_id": "B", "kind": "strength", "model": [("Problem", "Impact")], "expert": []},
    {"paper_id": "B", "kind": "weakness", "model": [("Method", "Validity"), (None, "Validity")],
     "expert": [("Experiment", "Validity")]},
    {"paper_id": "C", "kind": "strength", "model": [], "expert": []},
    {"paper_id": "C", "kind": "weakness", "model": [], "expert": []},
]


def test_agreement_report_overall_and_by_kind_by_hand():
    report = agreement_report(PER_PAPER)
    # overall, labels tagged with the kind:
    # A: M = {s-MN, s-EV, w-EV} (3), E = {s-MN, s-PC, w-EV, w-PN} (4), TP = 2
    # B: M = {s-PI, w-MV} (the None label dropped), E = {w-EV}, TP = 0
    # C: both empty -> left out, so n = 2
    # summed: TP = 2, |M| = 5, |E| = 5 -> P = R = F1 = 0.4 (the study's cells: F1 of the summed P and R)
    overall = report["overall"]
    assert overall["n_papers"] == 2
    assert {k: overall[k] for k in ("precision", "recall", "f1")} == pytest.approx(
        {"precision": 0.4, "recall": 0.4, "f1": 0.4})
    assert report["target_aspect_f1"] == pytest.approx(0.4)
    # per paper: A P 2/3, R 1/2, F1 4/7; B 0, 0, 0
    mean = overall["per_paper_mean"]
    assert mean["f1"]["mean"] == pytest.approx(2 / 7) and mean["f1"]["std"] == pytest.approx((4 / 7) / math.sqrt(2))
    assert mean["precision"]["mean"] == pytest.approx(1 / 3) and mean["recall"]["mean"] == pytest.approx(1 / 4)

    # strengths: A (TP 1, |M| 2, |E| 2), B (0, 1, 0) -> P = 1/3, R = 1/2, F1 = 2 * (1/6) / (5/6) = 2/5
    strength = report["by_kind"]["strength"]
    assert strength["n_papers"] == 2 and strength["f1"] == pytest.approx(0.4)
    assert (strength["precision"], strength["recall"]) == pytest.approx((1 / 3, 0.5))
    assert strength["per_paper_mean"]["f1"]["mean"] == pytest.approx(0.25)  # A 1/2, B 0
    # weaknesses: A (1, 1, 2), B (0, 1, 1) -> P = 1/2, R = 1/3, F1 = 2/5
    weakness = report["by_kind"]["weakness"]
    assert (weakness["precision"], weakness["recall"], weakness["f1"]) == pytest.approx((0.5, 1 / 3, 0.4))


def test_agreement_report_per_target_and_aspect_scores_presence_by_hand():
    report = agreement_report(PER_PAPER)
    weakness_targets, strength_targets = report["by_kind_target"]["weakness"], report["by_kind_target"]["strength"]
    # Experiment in weaknesses: A both name it (1, 1, 1); B only the experts (0, 0, 1) -> P 1, R 1/2, F1 2/3
    experiment = weakness_targets["Experiment"]
    assert experiment["n_papers"] == 2
    assert (experiment["precision"], experiment["recall"], experiment["f1"]) == pytest.approx((1, 0.5, 2 / 3))
    # Method in strengths: A both (model's (Method, Novelty) and the experts' -- presence, not the pair) -> 1
    assert strength_targets["Method"]["f1"] == 1.0
    # Experiment in strengths: only the model names it (A) -> 0; Theory: nobody -> nothing to score
    assert strength_targets["Experiment"]["f1"] == 0.0
    assert weakness_targets["Theory"] == {"precision": None, "recall": None, "f1": None, "n_papers": 0}
    # Both kinds (Tables 7 and 10): the mean of the strength and weakness cells.
    assert report["by_target"]["Experiment"] == pytest.approx({"precision": 0.5, "recall": 0.25, "f1": 1 / 3})
    assert report["by_target"]["Method"]["f1"] == pytest.approx(0.5)     # strength 1, weakness 0 (B: model only)
    assert report["by_target"]["Paper"]["f1"] == 0.0                      # strength 0, weakness undefined
    assert report["by_target"]["Theory"]["f1"] is None
    # Validity: weaknesses A (1, 1, 1), B (1, 1, 1) -> 1; strengths A model only -> 0; both 1/2
    assert report["by_kind_aspect"]["weakness"]["Validity"]["f1"] == 1.0
    assert report["by_aspect"]["Validity"]["f1"] == pytest.approx(0.5)


def test_cells_are_computed_as_the_published_tables_are():
    from praib.metrics.judged.target_aspect import _cell, _mean_of_kinds

    def cell_of(precision: float, recall: float) -> dict:
        # Counts whose summed precision and recall are the published ones: TP / |M| and TP / |E|.
        p, r = round(precision * 1000), round(recall * 1000)
        return _cell([(p * r, r * 1000, p * 1000)])

    # Table 3, overall: DeepSeek-R1 P 0.314, R 0.460 -> F1 0.373; o1-mini P 0.283, R 0.491 -> 0.359.
    assert cell_of(0.314, 0.460)["f1"] == pytest.approx(0.373, abs=0.001)
    assert cell_of(0.283, 0.491)["f1"] == pytest.approx(0.359, abs=0.001)
    # Tables 11 and 12, gpt-4o-mini, Validity: strengths P 0.431, R 0.986 -> F1 0.599; weaknesses P 0.912,
    # R 0.994 -> 0.951; Table 10 (both): F1 0.775, precision 0.671, recall 0.990.
    # The published P and R are rounded to 3 places, so the F1 they give may be off by up to 0.001.
    strength, weakness = cell_of(0.431, 0.986), cell_of(0.912, 0.994)
    assert strength["f1"] == pytest.approx(0.599, abs=0.001) and weakness["f1"] == pytest.approx(0.951, abs=0.001)
    both = _mean_of_kinds(strength, weakness)
    assert both["f1"] == pytest.approx(0.775, abs=0.001)
    assert (both["precision"], both["recall"]) == pytest.approx((0.671, 0.990), abs=0.001)
    # The both-kinds F1 is the mean of the two F1s, not the F1 of the mean P and R (which is 0.80).
    assert 2 * both["precision"] * both["recall"] / (both["precision"] + both["recall"]) == pytest.approx(0.80, abs=0.01)


def test_label_distribution_by_hand():
    model = [label for entry in PER_PAPER for label in entry["model"]]
    # 7 items: (M,N) (E,V) (M,N) (E,V) (P,I) (M,V) (None,V)
    # targets over the 6 labelled: Method 3/6, Experiment 2/6, Problem 1/6, the rest 0
    # aspects over 7: Novelty 2/7, Validity 4/7, Impact 1/7
    d = label_distribution(model)
    assert d["n"] == 7 and d["unlabelled"] == {"targets": 1, "aspects": 0}
    assert d["targets"] == pytest.approx({"Problem": 1 / 6, "Prior Research": 0.0, "Method": 0.5, "Theory": 0.0,
                                          "Experiment": 1 / 3, "Conclusion": 0.0, "Paper": 0.0,
                                          "Review process": 0.0})
    assert d["aspects"] == pytest.approx({"Impact": 1 / 7, "Novelty": 2 / 7, "Clarity": 0.0, "Validity": 4 / 7,
                                          "Not-specific": 0.0, "Irrelevant": 0.0})
    assert list(d["targets"]) == list(TARGETS)
    empty = label_distribution([])
    assert empty["n"] == 0 and set(empty["targets"].values()) == {0.0}


def test_rejection_rate_by_hand():
    recommendations = ["reject", "accept", "Reject.", None, "accept", "reject", "accept"]
    decisions = ["Reject", "Reject", "Reject", "Reject", "Accept (poster)", "ICLR 2020 Oral", None]
    r = rejection_rate(recommendations, decisions)
    # rejected papers: reject, accept, Reject., None -> 2 of the 3 parsed recommend rejection
    assert r["rate"] == pytest.approx(2 / 3) and r["n"] == 3 and r["unparsed"] == 1
    # accepted papers: accept, reject -> 1 of 2; the paper without a decision is in neither
    assert r["accepted"] == {"rate": 0.5, "n": 2, "unparsed": 0}
    assert rejection_rate([], [])["rate"] is None
    with pytest.raises(ValueError):
        rejection_rate(["reject"], [])


# --- meta-review chain -----------------------------------------------------------------------

def test_restructure_meta_review_runs_the_three_steps_in_order():
    step1 = {"summary": "S", "strengths": ["clear"], "weaknesses": ["weak baselines"], "judgement": "Reject"}
    step2 = {"summary": "S", "strengths": ["Clarity: clear writing"],
             "weaknesses": ["Baselines: reviewer x notes no comparison with B"], "judgement": "Reject"}
    step3 = {"summary": "S", "strengths": ["Clear presentation: clear writing"],
             "weaknesses": ["Missing baselines: no comparison with B"], "judgement": "Reject"}
    backend = scripted({("meta_review_restructure", "META"): json.dumps(step1),
                               ("meta_review_augment", "REVIEW-ONE"): json.dumps(step2),
                               ("meta_review_paraphrase", "reviewer x"): json.dumps(step3)})
    result = restructure_meta_review("META text", Judge(backend), reviews=["REVIEW-ONE", "REVIEW-TWO"])
    assert result["strengths"] == step3["strengths"] and result["weaknesses"] == step3["weaknesses"]
    assert result["failed_steps"] == []
    assert [r.template for r in backend.requests] == [
        "judge:meta_review_restructure", "judge:meta_review_augment", "judge:meta_review_paraphrase"]
    assert "weak baselines" in backend.requests[1].messages[0][1]  # step 2 sees step 1's points
    assert all(r.json_schema for r in backend.requests)


def test_restructure_meta_review_without_reviews_and_with_failures():
    step1 = {"summary": "S", "strengths": [], "weaknesses": ["w1"], "judgement": "Reject"}
    backend = scripted({("meta_review_restructure", "META"): json.dumps(step1)})
    result = restructure_meta_review("META", Judge(backend))  # no reviews: step 2 skipped; step 3 answers junk
    assert result["weaknesses"] == ["w1"] and result["failed_steps"] == ["paraphrase"]
    assert [r.template for r in backend.requests] == ["judge:meta_review_restructure", "judge:meta_review_paraphrase"]
    failed = restructure_meta_review("META", Judge(scripted({})))
    assert failed["strengths"] == [] and failed["failed_steps"] == ["restructure"]


# --- the evaluate module ---------------------------------------------------------------------

def _rows(per_paper):
    rows = {"paper_ids": [], "kinds": [], "sides": [], "targets": [], "aspects": []}
    for entry in per_paper:
        for side in ("model", "expert"):
            for target, aspect in entry[side]:
                rows["paper_ids"].append(entry["paper_id"])
                rows["kinds"].append(entry["kind"])
                rows["sides"].append(side)
                rows["targets"].append(target)
                rows["aspects"].append(aspect)
    return rows


def test_evaluate_module_loads_offline_and_matches_the_function():
    module = evaluate.load(str(METRIC))
    result = module.compute(**_rows(PER_PAPER))
    expected = agreement_report(PER_PAPER)
    # paper C had no items at all, so it has no rows; it was left out of the report anyway
    assert result["target_aspect_f1"] == pytest.approx(0.4)
    for key in ("overall", "by_kind", "by_target", "by_aspect", "by_kind_target", "by_kind_aspect"):
        assert json.dumps(result[key], sort_keys=True) == json.dumps(expected[key], sort_keys=True)
    model = [label for entry in PER_PAPER for label in entry["model"]]
    assert result["distribution"]["model"] == label_distribution(model)
    assert "Automatically Evaluating the Paper Reviewing Capability" in module.citation


def test_evaluate_module_docstring_example():
    r = evaluate.load(str(METRIC)).compute(
        paper_ids=["p", "p", "p"], kinds=["weakness"] * 3, sides=["model", "model", "expert"],
        targets=["Method", "Experiment", "Method"], aspects=["Validity", "Validity", "Validity"])
    # M = {MV, EV}, E = {MV}: P = 1/2, R = 1, F1 = 2/3
    assert r["target_aspect_f1"] == pytest.approx(2 / 3)


# --- the real transformers backend on the tiny model -----------------------------------------

def test_pipeline_through_transformers_backend_on_tiny_model(tiny_model_dir):  # noqa: F811
    from praib.llm.backends import SamplingConfig, make_backend

    judge = Judge(make_backend("transformers", str(tiny_model_dir)),
                  sampling=SamplingConfig(max_new_tokens=8, temperature=0.0))
    strengths = label_items(["The method is novel.", "Experiments are thorough."], "strength", judge)
    weaknesses = label_items(["Missing baselines."], "weakness", judge)
    for labels in (strengths, weaknesses):
        # the tiny model's answers are meaningless, but each is a label or a counted None
        assert all(t in TARGETS or t is None for t, _ in labels)
        assert all(a in ASPECTS or a is None for _, a in labels)
        assert labels.invalid["target"] == sum(t is None for t, _ in labels)
        assert labels.invalid["aspect"] == sum(a is None for _, a in labels)
    report = agreement_report([
        {"paper_id": "p", "kind": "strength", "model": list(strengths), "expert": [("Method", "Novelty")]},
        {"paper_id": "p", "kind": "weakness", "model": list(weaknesses), "expert": [("Experiment", "Validity")]},
    ])
    assert report["target_aspect_f1"] is None or 0.0 <= report["target_aspect_f1"] <= 1.0
    # the chain runs too; gibberish JSON is reported as a failed step rather than raising
    result = restructure_meta_review("The paper is clear but the baselines are weak.", judge)
    assert isinstance(result["strengths"], list) and isinstance(result["failed_steps"], list)
