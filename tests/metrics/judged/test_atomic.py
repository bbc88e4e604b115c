import json

import pytest

from praib.metrics.judged.atomic import (
    ATOMIC_SCHEMA, AtomicItems, atomic_statistics, extract_atomic, extraction_fidelity, intra_review_overlap,
    overlap_summary, paired_with_human,
)
from praib.llm.judge import Judge
from tests.doubles import StubBackend


HUMAN_REVIEW = ("The idea is original and the writing is clear. However, the experiments use only two small "
                "datasets, which makes the claims hard to trust. The proof of Theorem 1 is missing a step.")


def test_extract_atomic_parses_json_and_counts_invalid_answers():
    good = json.dumps({"strengths": ["The idea is original and the writing is clear."],
                       "weaknesses": ["the experiments use only two small datasets, which makes the claims hard "
                                      "to trust.", "The proof of Theorem 1 is missing a step.", "  "]})
    backend = StubBackend([good, "I cannot do this", '{"strengths": "x", "weaknesses": []}', '{"strengths": []}'])
    items = extract_atomic([HUMAN_REVIEW] * 4, Judge(backend), "human")
    assert items[0] == AtomicItems(["The idea is original and the writing is clear."],
                                   ["the experiments use only two small datasets, which makes the claims hard to "
                                    "trust.", "The proof of Theorem 1 is missing a step."], True)
    assert [i.valid for i in items] == [True, False, False, False]
    assert sum(not i.valid for i in items) == 3
    request = backend.requests[0]
    assert json.loads(request.json_schema) == ATOMIC_SCHEMA and request.sampling.temperature == 0.0
    assert request.template == "judge:atomic_human" and HUMAN_REVIEW in request.messages[0][1]


def test_the_two_regimes_use_different_templates():
    backend = StubBackend(['{"strengths": [], "weaknesses": []}'])
    extract_atomic(["## Strengths\n- A\n## Weaknesses\n- B"], Judge(backend), "generated")
    extract_atomic(["free text"], Judge(backend), "human")
    generated, human = (r.messages[0][1] for r in backend.requests)
    assert backend.requests[0].template == "judge:atomic_generated" and "## Strengths\n- A" in generated
    assert generated != human and "polarity" in human and "polarity" not in generated
    with pytest.raises(ValueError, match="regime"):
        extract_atomic(["x"], Judge(backend), "meta")


def test_fidelity_is_one_for_verbatim_units_and_lower_for_paraphrase():
    verbatim = AtomicItems(["The idea is original and the writing is clear."],
                           ["The proof of Theorem 1 is missing a step."])
    assert extraction_fidelity(verbatim, HUMAN_REVIEW) == [1.0, 1.0]
    # ROUGE-L precision = LCS tokens / unit tokens; for "theorem 1 proof lacks a step" the LCS with the
    # source is "theorem 1 ... a step" (4 of 6 tokens)
    paraphrase = extraction_fidelity(["The argument for the lemma is incomplete"], HUMAN_REVIEW)
    assert paraphrase[0] < 1.0
    assert extraction_fidelity(["Theorem 1 proof lacks a step"], HUMAN_REVIEW)[0] == pytest.approx(4 / 6)
    assert extraction_fidelity(["", "..."], HUMAN_REVIEW) == []


def test_intra_review_overlap_by_hand():
    items = ["a b c", "a b c d", "x y"]
    # token sets: {a,b,c}, {a,b,c,d}, {x,y}
    # Jaccard: (1,2) 3/4, (1,3) 0, (2,3) 0 -> mean 0.25
    # ROUGE-L F: (1,2) LCS 3, P=3/4, R=3/3 -> 2*0.75/1.75 = 6/7; other pairs 0 -> mean 2/7
    # containment: item 1 inside item 2; items 2 and 3 inside nothing -> 1/3
    result = intra_review_overlap(items)
    assert result["jaccard"] == pytest.approx(0.25)
    assert result["rouge_l"] == pytest.approx(2 / 7)
    assert result["containment"] == pytest.approx(1 / 3)
    # a looser threshold: 3 of 4 tokens of item 2 are in item 1
    assert intra_review_overlap(items, containment_threshold=0.75)["containment"] == pytest.approx(2 / 3)
    assert intra_review_overlap(["only one"]) == {"rouge_l": None, "containment": None, "jaccard": None}
    summary = overlap_summary([AtomicItems(["p q"], items), AtomicItems(["p q", "p q"], ["z"]),
                               AtomicItems(valid=False)])
    assert summary["weaknesses"]["jaccard"] == {"mean": 0.25, "std": None, "n": 1}
    assert summary["strengths"]["containment"]["mean"] == 1.0


def test_statistics_split_by_decision_by_hand():
    reviews = [
        AtomicItems(["aa", "bbbb"], ["c"]),              # accept: S=2 W=1, chars S=6 W=1, W/S 0.5
        AtomicItems(["dddd"], ["e", "ff", "ggg"]),       # accept: S=1 W=3, chars S=4 W=6, W/S 3
        AtomicItems([], ["hh", "i"]),                    # reject: S=0 W=2, chars S=0 W=3, no W/S
        AtomicItems(["jjj"], ["kkkkk", "l", "m", "n"]),  # reject: S=1 W=4, chars S=3 W=8, W/S 4
        AtomicItems(valid=False),                        # reject, invalid: left out
        AtomicItems(["o"], []),                          # no decision class: only in "all"
    ]
    decisions = ["Accept (poster)", "ICLR 2025 Oral", "Reject", "Reject", "Reject", None]
    venues = ["ICLR", "NeurIPS", "ICLR", "ICLR", "ICLR", None]
    stats = atomic_statistics(reviews, decisions, venues)
    # Table 22's conference split: ICLR holds reviews 1, 3, 4 (W 1, 2, 4; S 2, 0, 1); the invalid one is left out.
    assert stats["by_venue"]["ICLR"]["n_reviews"] == 3 and stats["by_venue"]["ICLR"]["weakness_count"]["mean"] == 7 / 3
    assert stats["by_venue"]["NeurIPS"]["strength_chars"]["mean"] == 4.0 and set(stats["by_venue"]) == {"ICLR", "NeurIPS"}
    assert stats["invalid"] == 1 and stats["all"]["n_reviews"] == 5
    accept, reject = stats["accept"], stats["reject"]
    assert accept["strength_count"]["mean"] == 1.5 and accept["weakness_count"]["mean"] == 2.0
    assert accept["strength_chars"]["mean"] == 5.0 and accept["weakness_chars"]["mean"] == 3.5
    assert accept["total_chars"]["mean"] == 8.5 and accept["total_count"]["mean"] == 3.5
    assert accept["ws_ratio"]["mean"] == 1.75 and accept["ws_ratio"]["n"] == 2
    assert accept["strength_count"]["std"] == pytest.approx(0.7071067811865476)
    assert reject["n_reviews"] == 2 and reject["strength_count"]["mean"] == 0.5
    assert reject["weakness_count"]["mean"] == 3.0 and reject["weakness_chars"]["mean"] == 5.5
    assert reject["ws_ratio"] == {"mean": 4.0, "std": None, "n": 1, "min": 4.0, "q1": 4.0, "median": 4.0, "q3": 4.0,
                                  "max": 4.0}  # zero-strength review excluded
    # Quartiles interpolate between order statistics (Table 21): accept weakness counts 1, 3.
    assert {k: accept["weakness_count"][k] for k in ("min", "q1", "median", "q3", "max")} == {
        "min": 1.0, "q1": 1.5, "median": 2.0, "q3": 2.5, "max": 3.0}
    # all weakness chars 1, 6, 3, 8, 0 -> sorted 0 1 3 6 8: Q1 at position 1, Q3 at position 3.
    assert stats["all"]["weakness_chars"]["q1"] == 1.0 and stats["all"]["weakness_chars"]["q3"] == 6.0
    # all: ratios 0.5, 3, 4 and 0 (the last review has one strength and no weakness)
    assert stats["all"]["ws_ratio"]["n"] == 4 and stats["all"]["ws_ratio"]["median"] == 1.75
    assert stats["all"]["strength_count"]["mean"] == pytest.approx(5 / 5)


def test_extraction_through_the_tiny_transformers_model(tiny_model_dir):
    from praib.llm.backends import SamplingConfig, TransformersBackend

    judge = Judge(TransformersBackend(str(tiny_model_dir)), SamplingConfig(max_new_tokens=8, temperature=0.0))
    items = extract_atomic(["The paper presents a novel attention mechanism. It lacks baselines."], judge, "generated")
    assert len(items) == 1 and isinstance(items[0], AtomicItems)  # the answer is gibberish: usually invalid
    stats = atomic_statistics(items)
    assert stats["invalid"] + stats["all"]["n_reviews"] == 1


def test_counts_paired_with_the_human_reviews_of_the_same_paper_by_hand():
    """PRAIB Tables 25, 26: every (model review, human review) pair of a paper."""
    model = {"p1": [AtomicItems(["a", "b"], ["c", "d", "e", "f"])],       # S=2 W=4
             "p2": [AtomicItems(["a"], ["b"])],                            # S=1 W=1
             "p3": [AtomicItems(["a"], ["b"])]}                            # no human review: unpaired
    human = {"p1": [AtomicItems(["x"], ["y", "z"]), AtomicItems([], ["y"])],  # S=1 W=2; S=0 W=1
             "p2": [AtomicItems(["x", "y"], []), AtomicItems(valid=False)]}   # S=2 W=0; unread: left out
    paired = paired_with_human(model, human)
    assert paired["n_pairs"] == 3 and paired["n_papers"] == 2
    # Weaknesses: pairs (4,2), (4,1), (1,0): ratios 2, 4 (the zero-human pair has none); differences 2, 3, 1.
    assert paired["weaknesses"]["ratio"]["mean"] == 3.0 and paired["weaknesses"]["ratio"]["n"] == 2
    assert paired["weaknesses"]["difference"]["mean"] == 2.0 and paired["weaknesses"]["difference"]["median"] == 2.0
    # Strengths: (2,1), (2,0), (1,2): ratios 2, 0.5; differences 1, 2, -1.
    assert paired["strengths"]["ratio"]["median"] == 1.25
    assert paired["strengths"]["difference"]["mean"] == pytest.approx(2 / 3)
    # Totals: (6,3), (6,1), (2,2): ratios 2, 6, 1 -> median 2, std of (2, 6, 1) = sqrt(7).
    assert paired["total"]["ratio"]["median"] == 2.0
    assert paired["total"]["ratio"]["std"] == pytest.approx(7 ** 0.5)
