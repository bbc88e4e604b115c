"""Math engagement: the judge pipeline (stub and tiny real model), the rule-based proxy, and the
share / P(+|+) / P(+|-) arithmetic against a hand-computed table."""

import json
import math

import evaluate
import pytest

from praib.llm.backends import SamplingConfig, make_backend
from praib.llm.judge import Judge
from praib.metrics.judged.math_engagement import (
    ANSWER_SCHEMA,
    MathJudgement,
    detect_math_rule_based,
    judge_math_engagement,
    math_engagement_summary,
    math_rule_hits,
    method_agreement,
    rule_based_judgements,
)
from tests.doubles import StubBackend
from tests.paths import METRICS

METRIC = METRICS / "math_engagement"


# ---------------------------------------------------------------------------------------------
# the judge
# ---------------------------------------------------------------------------------------------


def test_stub_judge_end_to_end_with_invalid_answers_counted():
    backend = StubBackend([
        '{"rationale": "The review corrects the sign in Eq. (7).", "verdict": "yes"}',
        '```json\n{"rationale": "Only says the theory is weak.", "verdict": "no"}\n```',
        "I think it does engage.",                       # not JSON -> invalid
        '{"rationale": "unclear", "verdict": "maybe"}',  # verdict outside yes/no -> invalid
        '["yes"]',                                       # JSON but not an object -> invalid
        '{"rationale": " Mentions Lemma 2. ", "verdict": "Yes"}',
    ])
    texts = ["In Eq. (7) the sign is wrong.", "The theoretical analysis is weak.", "r3", "r4", None, "r5", "r6"]
    judgements = judge_math_engagement(texts, Judge(backend))

    assert [j.engages for j in judgements] == [True, False, None, None, None, None, True]
    assert all(j.method == "judge" for j in judgements)
    assert judgements[0].rationale == "The review corrects the sign in Eq. (7)."
    assert judgements[6].rationale == "Mentions Lemma 2."
    assert judgements[3] == MathJudgement(None, "unclear", "judge", "the verdict is 'maybe', not 'yes' or 'no'",
                                          '{"rationale": "unclear", "verdict": "maybe"}')
    assert judgements[2].error == "the answer is not JSON: 'I think it does engage.'"
    assert judgements[5].error == "expected a JSON object with a verdict, got list"
    assert judgements[4] == MathJudgement(None, None, "judge")  # the missing text is never sent

    assert len(backend.requests) == 6
    first = backend.requests[0]
    assert first.template == "judge:math_engagement" and first.sampling.temperature == 0.0
    assert json.loads(first.json_schema) == ANSWER_SCHEMA
    prompt = first.messages[0][1]
    assert "In Eq. (7) the sign is wrong." in prompt
    for phrase in ("specific equation", "formal result", "formal specification", "weaker", "does not count",
                   "Decision rule", "rationale", "verdict"):
        assert phrase in prompt

    # the invalid answers flow through to the summary as skipped reviews, never guessed
    summary = math_engagement_summary(["p"] * 7, ["human"] * 7, [j.engages for j in judgements])
    assert summary["skipped"] == 4 and summary["share"]["human"]["n"] == 3


def test_tiny_transformers_judge_runs_and_counts_garbage_as_invalid(tiny_model_dir):  # noqa: F811
    judge = Judge(make_backend("transformers", str(tiny_model_dir)),
                  SamplingConfig(max_new_tokens=12, temperature=0.0))
    texts = ["In Eq. (3) the sign is wrong.", "The paper is clear.", "The theoretical analysis is weak."]
    judgements = judge_math_engagement(texts, judge)
    assert len(judgements) == 3 and all(j.method == "judge" for j in judgements)
    assert all(j.engages in (True, False, None) for j in judgements)
    invalid = sum(j.engages is None for j in judgements)
    assert invalid >= 1  # a random 2-layer model does not write the required JSON
    summary = math_engagement_summary(["p1", "p1", "p1"], ["human", "gpt", "gpt"], [j.engages for j in judgements])
    assert summary["skipped"] == invalid
    assert judge.describe()["temperature"] == 0.0


# ---------------------------------------------------------------------------------------------
# aggregation against a hand-computed table
# ---------------------------------------------------------------------------------------------

T, F, N = True, False, None
TABLE = [  # (paper, source, engages)
    ("p1", "human", T), ("p1", "human", F), ("p1", "human", F), ("p1", "A", T), ("p1", "B", F), ("p1", "B", T),
    ("p2", "human", F), ("p2", "human", F), ("p2", "A", T), ("p2", "B", F),
    ("p3", "human", T), ("p3", "human", T), ("p3", "human", F), ("p3", "A", F), ("p3", "B", T), ("p3", "B", N),
    ("p4", "human", T), ("p4", "human", N), ("p4", "A", T),
    ("p5", "A", F),  # no human review: in neither condition
]
IDS, SOURCES, LABELS = (list(column) for column in zip(*TABLE))


def test_shares_and_conditional_rates_with_any_rule():
    s = math_engagement_summary(IDS, SOURCES, LABELS)  # paper_rule="any"
    # human labels (None skipped): T F F | F F | T T F | T  -> 4 of 9
    assert s["share"]["human"]["mean"] == pytest.approx(4 / 9) and s["share"]["human"]["n"] == 9
    # A: p1 T, p2 T, p3 F, p4 T, p5 F -> 3/5; std (ddof=1) = sqrt((3 * 0.4^2 + 2 * 0.6^2) / 4) = sqrt(0.3)
    assert s["share"]["A"] == {"mean": pytest.approx(0.6), "std": pytest.approx(math.sqrt(0.3)), "n": 5}
    # B: p1 F T, p2 F, p3 T (the None skipped) -> 2/4
    assert s["share"]["B"]["mean"] == pytest.approx(0.5) and s["share"]["B"]["n"] == 4
    assert s["skipped"] == 2 and s["skipped_by_source"] == {"A": 0, "B": 1, "human": 1}
    # "any": p1 (1 of 3), p3 (2 of 3), p4 (1 of 1 labelled) are human-positive; p2 (0 of 2) negative; p5 no human
    assert s["papers"] == {"human_positive": 3, "human_negative": 1, "without_human": 1}
    # A on positive papers: p1 T, p3 F, p4 T -> 2/3; on negative papers: p2 T -> 1/1
    assert s["conditional"]["A"] == {"p_pos_given_pos": pytest.approx(2 / 3), "p_pos_given_neg": 1.0,
                                     "n_reviews_pos": 3, "n_reviews_neg": 1, "n_papers_pos": 3, "n_papers_neg": 1}
    # B on positive papers: p1 F T, p3 T -> 2/3; on negative papers: p2 F -> 0/1
    assert s["conditional"]["B"] == {"p_pos_given_pos": pytest.approx(2 / 3), "p_pos_given_neg": 0.0,
                                     "n_reviews_pos": 3, "n_reviews_neg": 1, "n_papers_pos": 2, "n_papers_neg": 1}
    assert "human" not in s["conditional"]


def test_conditional_rates_with_majority_rule():
    s = math_engagement_summary(IDS, SOURCES, LABELS, paper_rule="majority")
    # "majority" (more than half of the labelled human reviews): p1 1/3 no, p2 0/2 no, p3 2/3 yes, p4 1/1 yes
    assert s["papers"] == {"human_positive": 2, "human_negative": 2, "without_human": 1}
    # A: positive p3 F, p4 T -> 1/2; negative p1 T, p2 T -> 2/2
    assert s["conditional"]["A"]["p_pos_given_pos"] == pytest.approx(0.5)
    assert s["conditional"]["A"]["p_pos_given_neg"] == pytest.approx(1.0)
    # B: positive p3 T -> 1/1; negative p1 F T, p2 F -> 1/3
    assert s["conditional"]["B"]["p_pos_given_pos"] == pytest.approx(1.0)
    assert s["conditional"]["B"]["p_pos_given_neg"] == pytest.approx(1 / 3)
    # shares do not depend on the paper rule
    assert s["share"]["A"]["mean"] == pytest.approx(0.6)


def test_summary_edge_cases():
    s = math_engagement_summary(["p1", "p2"], ["human", "A"], [True, None])
    assert s["conditional"]["A"]["p_pos_given_pos"] is None and s["conditional"]["A"]["p_pos_given_neg"] is None
    assert s["share"]["A"] == {"mean": None, "std": None, "n": 0}
    with pytest.raises(ValueError, match="paper_rule"):
        math_engagement_summary([], [], [], paper_rule="all")
    with pytest.raises(ValueError, match="differ in length"):
        math_engagement_summary(["p"], [], [])


# ---------------------------------------------------------------------------------------------
# the rule-based proxy
# ---------------------------------------------------------------------------------------------

POSITIVE = [
    "In Eq. (7) the sign is wrong.",
    "Proposition 1 does not imply the stated result, since the bound only holds for bounded losses.",
    "The proof of Theorem 3.1 relies on Assumption 2, which is never justified.",
    "Lemma A.2 seems to need convexity of the objective.",
    "Equations 3 and 4 use inconsistent notation for the step size.",
    "Definition~1 makes the feasible set empty.",
    r"The architecture $H^l = W^l \Phi(S^l H^{l-1}) + b^l$ is not equivalent to the proposed formulation.",
    r"The loss \(L = \sum_i x_i\) counts every sample twice.",
    r"How sensitive are the results to the choice of \lambda?",
    "Why is α fixed to 0.5 throughout?",
    "The update h_t = W h_{t-1} + b is not the recurrence given in Section 3.",
    "The variable x_i is never defined in the objective.",
]
NEGATIVE = [
    "The theoretical analysis is weak.",
    "The proofs are not rigorous and the math is hard to follow.",
    "The authors rely on KL divergence and gradient descent, which are standard.",
    "Accuracy improved by 10% over the strongest baseline.",
    "They use a 5x5 matrix and a batch size of 32.",
    "See Table 3, Figure 2 and Section 4 for the main results.",
    "Running the full benchmark costs $5 to $10 per model.",
    "The learning_rate and max_new_tokens settings are not reported.",
    "We set k = 5 neighbours, as in prior work.",
    "The paper is well written and the theory section is clear.",
    "The paper claims 3 times faster training, which the experiments do not support.",
    "",
    None,
]


@pytest.mark.parametrize("text", POSITIVE)
def test_rule_based_detector_positives(text):
    assert detect_math_rule_based(text), math_rule_hits(text)


@pytest.mark.parametrize("text", NEGATIVE)
def test_rule_based_detector_negatives(text):
    assert not detect_math_rule_based(text), math_rule_hits(text)


def test_rule_based_judgements_are_labelled_as_rules():
    judgements = rule_based_judgements(["In Eq. (7) the sign is wrong.", "The theory is weak.", None])
    assert [j.engages for j in judgements] == [True, False, None]
    assert all(j.method == "rules" for j in judgements)
    assert "numbered_formal_reference" in judgements[0].rationale


def test_method_agreement_reports_kappa_agreement_and_n():
    judge = [True, True, True, True, True, True, False, False, False, False, None]
    rules = [True, True, True, True, False, False, True, False, False, False, True]
    result = method_agreement(judge, rules)
    # same 2x2 table as tests/metrics/judged/test_judge_quality.py: p_o = 0.7, p_e = 0.5, kappa = 0.4
    assert result["n"] == 10 and result["skipped"] == 1
    assert result["agreement"] == pytest.approx(0.7) and result["cohen_kappa"] == pytest.approx(0.4)
    assert result["judge_positive_rate"] == pytest.approx(0.6) and result["rules_positive_rate"] == pytest.approx(0.5)


# ---------------------------------------------------------------------------------------------
# the evaluate module
# ---------------------------------------------------------------------------------------------


def test_evaluate_module_loads_offline_and_matches_praib():
    texts = [t for t in POSITIVE[:4]] + [t for t in NEGATIVE[:5]] + [None]
    ids = ["p1", "p1", "p1", "p2", "p2", "p2", "p3", "p3", "p3", "p3"]
    sources = ["human", "human", "gpt", "human", "gpt", "gpt", "human", "human", "gpt", "gpt"]
    module = evaluate.load(str(METRIC))
    assert module.config_name == "default" and "P(+|+)" in module.description
    result = module.compute(predictions=texts, paper_ids=ids, sources=sources, return_per_review=True)
    expected = math_engagement_summary(ids, sources, [detect_math_rule_based(t) if t else None for t in texts])
    assert result["method"] == "rules"
    assert {k: v for k, v in result.items() if k not in ("method", "per_review")} == expected
    # by hand: p1 human T T -> positive, gpt T; p2 human T -> positive, gpt F F; p3 human F F -> negative, gpt F, None
    assert result["conditional"]["gpt"]["p_pos_given_pos"] == pytest.approx(1 / 3)
    assert result["conditional"]["gpt"]["p_pos_given_neg"] == 0.0
    assert result["skipped"] == 1
    assert [r["method"] for r in result["per_review"]] == ["rules"] * 10
    assert evaluate.load(str(METRIC), "rules").compute(predictions=texts, paper_ids=ids, sources=sources) == {
        k: v for k, v in result.items() if k != "per_review"}
    with pytest.raises(ValueError, match="judge_math_engagement"):
        evaluate.load(str(METRIC), "judge")
