"""Parsing free-text reviews: one test per output format the supported prompts produce."""

import logging

import pytest

from praib import parsing
from praib.parsing import ReviewParser, parse_review, parse_reviews
from praib.records import PARSE_FAILED, PARSE_GIVEN, PARSE_OK, PARSE_PARTIAL, REVIEW_FEATURES, records_to_dataset
from praib.scales import generic_scales, venue_scales

ICLR_2025 = venue_scales("ICLR", 2025)
NEURIPS_2025 = venue_scales("NeurIPS", 2025)
NEURIPS_2024 = venue_scales("NeurIPS", 2024)
ICLR_2020 = venue_scales("ICLR", 2020)
GENERIC = generic_scales()


def test_bold_labels_of_the_guidelines_prompt():
    text = """Here is my review of the submission.

**Summary:** The paper introduces SparseMix, a routing scheme for mixture-of-experts layers that
prunes   experts at inference time.

**Strengths:**

- Simple to implement on top of existing MoE code.
- Consistent speed-ups (1.4x) on three language-modelling benchmarks.

**Weaknesses:** - Only one model size is evaluated. - No comparison with expert merging.

**Questions:**
1. How is the pruning threshold chosen?
2. Does the method hold for vision MoEs?

**Limitations:** The authors discuss the memory overhead of the router.

**Additional feedback:** Figure 3 is hard to read in greyscale.

**Rating:** 7

**Confidence:** 4
"""
    parsed = parse_review(text, GENERIC)
    assert parsed.sections == {
        "summary": "The paper introduces SparseMix, a routing scheme for mixture-of-experts layers that\n"
                   "prunes experts at inference time.",
        "strengths": "- Simple to implement on top of existing MoE code.\n"
                     "- Consistent speed-ups (1.4x) on three language-modelling benchmarks.",
        "weaknesses": "- Only one model size is evaluated. - No comparison with expert merging.",
        "questions": "1. How is the pruning threshold chosen?\n2. Does the method hold for vision MoEs?",
        "limitations": "The authors discuss the memory overhead of the router.",
        "additional_feedback": "Figure 3 is hard to read in greyscale.",
    }
    assert (parsed.rating, parsed.confidence, parsed.subscores, parsed.recommendation) == (7, 4, {}, None)
    assert (parsed.status, parsed.reason) == (PARSE_OK, None)


def test_repeated_markdown_hashes_and_scores_on_the_next_line():
    text = """## ## Summary

The authors propose a benchmark of 40 graph datasets for link prediction.

### ## Strengths

* **Breadth:** covers citation, biological and social graphs.
* **Reproducibility:** code and splits are released.

### ## Weaknesses

* **Baselines:** heuristics such as Adamic-Adar are missing.

## ## Numerical Ratings

### ### Quality:

3 (good)

### ### Clarity: 2

The tables in Section 4 are dense and the notation changes between sections.

### ### Significance:
3
### ### Originality:
2 (fair)

## ## Final Recommendation

Overall Score: 4: Borderline accept

Key Reason: A useful resource, but the baselines must be completed.

Confidence: 3 (Fairly confident)
"""
    parsed = parse_review(text, NEURIPS_2025)
    assert parsed.sections["summary"] == "The authors propose a benchmark of 40 graph datasets for link prediction."
    assert parsed.sections["strengths"] == ("* **Breadth:** covers citation, biological and social graphs.\n"
                                            "* **Reproducibility:** code and splits are released.")
    assert parsed.sections["weaknesses"] == "* **Baselines:** heuristics such as Adamic-Adar are missing."
    assert parsed.sections["questions"] is None
    assert parsed.subscores == {"quality": 3, "clarity": 2, "significance": 3, "originality": 2}
    assert (parsed.rating, parsed.confidence) == (4, 3)
    assert (parsed.status, parsed.reason) == (PARSE_OK, None)


def test_hashes_inside_bold_and_subscores_inline_in_a_list():
    text = """**## Summary**

The paper studies calibration of retrieval-augmented language models.

**## Strengths**

\\* **Timely topic:** calibration of RAG systems is understudied.

**## Weaknesses**

\\* **Single retriever:** only BM25 is used.

**## Numerical Ratings**

- **Quality:** 3 (good) - **Clarity:** 4 (excellent) - **Significance:** 2 (fair) - **Originality:** 3 (good)

**## Final Recommendation**

"""
    text += ("**Overall Score:** 5 (Accept) **Key Reason:** Solid analysis with actionable findings. "
             "**Confidence:** 4 (Confident, but not absolutely certain)\n")
    parsed = parse_review(text, NEURIPS_2025)
    assert parsed.sections["summary"] == "The paper studies calibration of retrieval-augmented language models."
    assert parsed.sections["strengths"] == "\\* **Timely topic:** calibration of RAG systems is understudied."
    assert parsed.sections["weaknesses"] == "\\* **Single retriever:** only BM25 is used."
    assert parsed.subscores == {"quality": 3, "clarity": 4, "significance": 2, "originality": 3}
    assert (parsed.rating, parsed.confidence, parsed.status) == (5, 4, PARSE_OK)


def test_html_labels_are_stripped_and_entities_unescaped():
    text = ("<p><b>Summary:</b> The paper proposes <i>FlowEdit</i>, a training-free editor for rectified-flow "
            "models &amp; evaluates it on PIE-Bench.</p> <p><b>Strengths:</b> 1. <b>Novelty:</b> inversion-free "
            "editing. 2. <b>Speed:</b> 3&times; faster than DDIM inversion.</p> <p><b>Weaknesses:</b> 1. "
            "<b>Evaluation:</b> no user study.</p> <p><b>Questions:</b> Does it work for videos?</p> "
            "<p><b>Rating:</b> 8 (Strong accept) <b>Confidence:</b> 4 (Confident)</p>")
    parsed = parse_review(text, GENERIC)
    assert parsed.sections["summary"] == ("The paper proposes FlowEdit, a training-free editor for rectified-flow "
                                          "models & evaluates it on PIE-Bench.")
    assert parsed.sections["strengths"] == ("1. Novelty: inversion-free editing. 2. Speed: 3\u00d7 faster than "
                                            "DDIM inversion.")
    assert parsed.sections["weaknesses"] == "1. Evaluation: no user study."
    assert parsed.sections["questions"] == "Does it work for videos?"
    assert (parsed.rating, parsed.confidence, parsed.status) == (8, 4, PARSE_OK)


def test_literature_prompt_puts_the_rating_under_decision():
    text = """# Review

## Review Summary
The submission proposes a curriculum for offline RL that orders transitions by estimated return.

## Strengths
- Clear motivation.
- Gains on 9 of 12 D4RL tasks.

## Weaknesses
- The curriculum adds two hyper-parameters.

## Questions for Authors
- How sensitive is the method to the return estimator?

## Additional Feedback
Consider moving Algorithm 1 to the main text.

## Numerical assessment

### Soundness:
3
### Presentation:
2
### Contribution:
3

## Final Recommendation
**Decision:** 6: marginally above the acceptance threshold
**Key Reason:** Consistent gains with a simple method.
**Confidence:** 4
"""
    parsed = parse_review(text, ICLR_2025)
    assert parsed.sections == {
        "summary": "The submission proposes a curriculum for offline RL that orders transitions by estimated return.",
        "strengths": "- Clear motivation.\n- Gains on 9 of 12 D4RL tasks.",
        "weaknesses": "- The curriculum adds two hyper-parameters.",
        "questions": "- How sensitive is the method to the return estimator?",
        "limitations": None,
        "additional_feedback": "Consider moving Algorithm 1 to the main text.",
    }
    assert parsed.subscores == {"soundness": 3, "presentation": 2, "contribution": 3}
    assert (parsed.rating, parsed.confidence, parsed.recommendation) == (6, 4, None)
    assert parsed.status == PARSE_OK


def test_bare_number_after_final_recommendation_beats_numerical_ratings():
    text = """### # Detailed comments

1. The related work misses recent work on machine teaching.
2. Table 2 mixes two metrics.

### ## Summary

A method for teaching humans fine-grained visual categories with counterfactual images.

### ## Strengths

1. The idea is interesting.

### ## Weaknesses

1. The baselines are weak.

### ## Numerical Ratings

3

## Final Recommendation

4

## Confidence:

5
"""
    parsed = parse_review(text, NEURIPS_2025)
    assert parsed.sections["additional_feedback"] == ("1. The related work misses recent work on machine teaching.\n"
                                                      "2. Table 2 mixes two metrics.")
    assert parsed.sections["strengths"] == "1. The idea is interesting."
    assert (parsed.rating, parsed.confidence, parsed.status) == (4, 5, PARSE_OK)


def test_human_neurips_2024_review_with_a_combined_section():
    text = """Summary:
This work analyses grokking in modular arithmetic through the lens of weight norm.

Strengths And Weaknesses:
The analysis is careful and the figures are clear.
However, the experiments are limited to one-layer transformers.

Questions:
Does the effect persist with AdamW?

Limitations:
Yes.

Ethics Flag: No
Soundness: 3 good
Presentation: 4 excellent
Contribution: 2 fair
Rating: 7: Accept: Technically solid paper, with high impact on at least one sub-area.
Confidence: 4: You are confident in your assessment, but not absolutely certain.
Code Of Conduct: Yes
"""
    parsed = parse_review(text, NEURIPS_2024)
    combined = ("The analysis is careful and the figures are clear.\n"
                "However, the experiments are limited to one-layer transformers.")
    assert parsed.sections["strengths"] == combined
    assert parsed.sections["weaknesses"] == combined
    assert parsed.sections["limitations"] == "Yes."
    assert parsed.subscores == {"soundness": 3, "presentation": 4, "contribution": 2}
    assert (parsed.rating, parsed.confidence) == (7, 4)
    assert parsed.status == PARSE_OK
    assert parsed.reason == "strengths and weaknesses came as one combined section, stored in both fields"


def test_combined_section_only_fills_the_part_without_its_own_section():
    text = """Summary of the paper: A new tokenizer for protein sequences.

Strengths and weaknesses:
The tokenizer halves sequence length.

Weaknesses:
- Downstream gains are within noise.

Rating: 5
Confidence: 3
"""
    parsed = parse_review(text, NEURIPS_2024)
    assert parsed.sections["summary"] == "A new tokenizer for protein sequences."
    assert parsed.sections["strengths"] == "The tokenizer halves sequence length."
    assert parsed.sections["weaknesses"] == "- Downstream gains are within noise."
    assert (parsed.rating, parsed.confidence, parsed.status, parsed.reason) == (5, 3, PARSE_OK, None)


def test_section_synonyms():
    text = """Review Summary: The paper adapts LoRA to speech recognition.

Strong points:
+ Cheap to train.

Weak points:
+ No results on noisy speech.

Questions for Authors:
Which layers receive adapters?

Additional comments:
Typo in Eq. 3.

Rating: 6
"""
    parsed = parse_review(text, ICLR_2025)
    assert parsed.sections == {
        "summary": "The paper adapts LoRA to speech recognition.",
        "strengths": "+ Cheap to train.",
        "weaknesses": "+ No results on noisy speech.",
        "questions": "Which layers receive adapters?",
        "limitations": None,
        "additional_feedback": "Typo in Eq. 3.",
    }
    assert (parsed.rating, parsed.status) == (6, PARSE_OK)

    pros_cons = parse_review("Paper summary\nA dataset of 3D scans.\n\nPros\n- Large.\n\nCons\n- Noisy labels.\n\n"
                             "Detailed comments\nSection 3 needs a diagram.\n\nRating: 3", ICLR_2025)
    assert pros_cons.sections["summary"] == "A dataset of 3D scans."
    assert pros_cons.sections["strengths"] == "- Large."
    assert pros_cons.sections["weaknesses"] == "- Noisy labels."
    assert pros_cons.sections["additional_feedback"] == "Section 3 needs a diagram."
    assert pros_cons.rating == 3


def test_openreview_rating_line_with_its_label():
    text = """Summary Of The Paper:
The paper proposes a pruning criterion based on second-order information.

Strength And Weaknesses:
Strengths: theory is sound.
Weaknesses: experiments only on CIFAR-10.

Rating: 6: marginally above the acceptance threshold
Confidence: 3: You are fairly confident in your assessment.
"""
    parsed = parse_review(text, venue_scales("ICLR", 2024))
    assert parsed.sections["summary"] == "The paper proposes a pruning criterion based on second-order information."
    assert parsed.sections["strengths"] == "theory is sound."
    assert parsed.sections["weaknesses"] == "experiments only on CIFAR-10."
    assert (parsed.rating, parsed.confidence, parsed.status) == (6, 3, PARSE_OK)


def test_iclr_2020_has_no_confidence_and_maps_label_only_ratings():
    text = """Summary: The paper studies label smoothing for knowledge distillation.
Strengths: Thorough ablations.
Weaknesses: The theory only covers linear models.
Rating: Weak Accept
Confidence: 4
"""
    parsed = parse_review(text, ICLR_2020)
    assert (parsed.rating, parsed.confidence, parsed.status) == (6, None, PARSE_OK)
    assert parsed.reason == "confidence ignored: the ICLR 2020 scale has no confidence"


def test_label_only_values_map_through_the_scale_or_are_reported():
    base = "Summary: S.\nStrengths: A.\nWeaknesses: B.\n"
    mapped = parse_review(base + "Rating: Borderline accept\nConfidence: 4", NEURIPS_2025)
    assert (mapped.rating, mapped.status) == (4, PARSE_OK)
    iclr = parse_review(base + "Rating: marginally above the acceptance threshold", venue_scales("ICLR", 2024))
    assert iclr.rating == 6
    generic = parse_review(base + "Rating: Strong accept\nConfidence: Absolutely certain", GENERIC)
    assert (generic.rating, generic.confidence) == (10, 5)
    full_label = parse_review(base + "Rating: 5\nConfidence: You are fairly confident in your assessment. It is "
                              "possible that you did not understand some parts of the submission or that you are "
                              "unfamiliar with some pieces of related work. Math/other details were not carefully "
                              "checked.", venue_scales("ICLR", 2024))
    assert (full_label.rating, full_label.confidence, full_label.status) == (5, 3, PARSE_OK)
    unknown = parse_review(base + "Rating: Outstanding", venue_scales("ICLR", 2024))
    assert (unknown.rating, unknown.status) == (None, PARSE_PARTIAL)
    assert unknown.reason == "rating 'Outstanding' matches no label on the ICLR 2024 scale"


def test_a_number_wins_over_a_disagreeing_label():
    parsed = parse_review("Summary: S.\nStrengths: A.\nWeaknesses: B.\nRating: 8 (Reject)\nConfidence: 2",
                          NEURIPS_2024)
    assert (parsed.rating, parsed.confidence) == (8, 2)


def test_off_scale_ratings_are_kept_to_be_counted_off_scale_and_other_scores_rejected_with_the_reason():
    text = """**Summary:** A study of optimiser warm-up.
**Strengths:** Extensive sweeps.
**Weaknesses:** Only small models.
**Soundness:** 3
**Presentation:** 5
**Rating:** 7
**Confidence:** I checked the main derivations but not the appendix.
"""
    parsed = parse_review(text, ICLR_2025)
    # 7 is not on ICLR 2025's scale: kept, as a rating given in a field is, for evaluate to count off scale.
    assert (parsed.rating, parsed.confidence, parsed.status) == (7, None, PARSE_PARTIAL)
    assert parsed.subscores == {"soundness": 3}
    assert parsed.reason == ("no confidence found; presentation 5 is not on the ICLR 2025 scale (1, 2, 3, 4); "
                             "rating 7 is not on the ICLR 2025 scale (1, 3, 5, 6, 8, 10): kept, counted off scale")
    # Alone, it leaves the review parsed.
    parsed = parse_review(text.replace("**Presentation:** 5", "**Presentation:** 3").replace(
        "I checked the main derivations but not the appendix.", "4"), ICLR_2025)
    assert (parsed.rating, parsed.confidence, parsed.status) == (7, 4, PARSE_OK)
    # A confidence off the 1-5 scale follows the same rule; one that is not a whole number is still rejected.
    parsed = parse_review(text.replace("**Presentation:** 5", "**Presentation:** 3").replace(
        "I checked the main derivations but not the appendix.", "7"), ICLR_2025)
    assert (parsed.rating, parsed.confidence, parsed.status) == (7, 7, PARSE_OK)
    assert parsed.reason.endswith("confidence 7 is not on the ICLR 2025 scale (1, 2, 3, 4, 5): kept, counted off scale")
    parsed = parse_review(text.replace("I checked the main derivations but not the appendix.", "3.5"), ICLR_2025)
    assert (parsed.confidence, parsed.status) == (None, PARSE_PARTIAL)


def test_fractional_scores_are_rejected():
    text = """## Summary
A contrastive objective for tabular data.
## Strengths
- Strong results on 20 OpenML datasets.
## Weaknesses
- Tuning budget differs across baselines.
## Numerical Ratings
### Quality: 3.5 (Good) - promising but needs depth.
### Clarity: 3 (Good)
## Final Recommendation
**Overall Score:** 3.5
**Confidence:** 4
"""
    parsed = parse_review(text, NEURIPS_2025)
    assert parsed.subscores == {"clarity": 3}
    assert (parsed.rating, parsed.confidence, parsed.status) == (None, 4, PARSE_PARTIAL)
    assert parsed.reason == ("rating 3.5 is not on the NeurIPS 2025 scale (1, 2, 3, 4, 5, 6); "
                             "quality 3.5 is not on the NeurIPS 2025 scale (1, 2, 3, 4)")



@pytest.mark.parametrize("written, rating, reason", [
    ("8/10", 8, None), ("**8**/10", 8, None), ("8 out of 10", 8, None),
    # 3 is on the 1-10 scale, but "3/5" is three out of five: not a value of this scale (issue 26, item 8).
    ("3/5", None, "rating 3 out of 5 is not on the ICLR 2021 scale (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)"),
    ("4 out of 5", None, "rating 4 out of 5 is not on the ICLR 2021 scale (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)"),
])
def test_a_score_out_of_a_total_is_read_only_when_the_total_is_the_top_of_the_scale(written, rating, reason):
    parsed = parse_review(f"Summary: S.\nStrengths: A.\nWeaknesses: B.\nRating: {written}\nConfidence: 4",
                          venue_scales("ICLR", 2021))
    assert (parsed.rating, parsed.reason) == (rating, reason)

def test_aspect_guided_reviewer_format_without_confidence():
    text = """Summary: The paper pre-trains code embeddings in two stages.
Strength: Large-scale evaluation across nine languages.
Weakness: The contrastive stage is not ablated.
Contribution: 3
Soundness: 2
Presentation: 3
Rating: 6
"""
    parsed = parse_review(text, GENERIC)
    assert parsed.subscores == {"soundness": 2, "presentation": 3, "contribution": 3}
    assert (parsed.rating, parsed.confidence, parsed.status, parsed.reason) == (6, None, PARSE_OK, None)

    one_line = parse_review("Soundness: 3; Presentation: 2; Contribution: 2\nRating: 1", GENERIC)
    assert one_line.subscores == {"soundness": 3, "presentation": 2, "contribution": 2}
    assert one_line.rating == 1


def test_final_judgement_gives_the_recommendation():
    text = """# Summary of paper
The paper proposes a retrieval benchmark for chemistry questions.

# Strengths
- **Domain coverage**: 12 sub-fields of chemistry.

# Weaknesses
- **Annotation quality**: inter-annotator agreement is not reported.
- **Limitations:** the benchmark is English-only.

# Final Judgement
- **Rationale of recommendation**: Useful data, but the quality control is insufficient for acceptance.
- **Recommendation**: Reject
"""
    parsed = parse_review(text, GENERIC)
    assert parsed.sections["weaknesses"] == ("- **Annotation quality**: inter-annotator agreement is not reported.\n"
                                             "- **Limitations:** the benchmark is English-only.")
    assert parsed.sections["limitations"] is None
    assert (parsed.recommendation, parsed.rating) == ("reject", None)
    assert (parsed.status, parsed.reason) == (PARSE_PARTIAL, "no rating found")


def test_verdict_on_the_line_after_a_final_judgement_header():
    parsed = parse_review("## Summary\nA new loss.\n\n## Final Judgement\n\n**Accept**\n", GENERIC)
    assert (parsed.recommendation, parsed.rating, parsed.sections["summary"]) == ("accept", None, "A new loss.")


def test_first_valid_value_wins_over_an_earlier_off_scale_one():
    text = ("**Summary:** A.\n**Strengths:** B.\n**Weaknesses:** C.\n**Rating:** 8 (Strong accept)\n\n"
            "## Final Recommendation\n\n**Overall Score:** 5 (Accept)\n**Confidence:** 4\n")
    parsed = parse_review(text, NEURIPS_2025)
    assert (parsed.rating, parsed.confidence, parsed.status, parsed.reason) == (5, 4, PARSE_OK, None)


@pytest.mark.parametrize("decision, expected", [
    ("Final Decision: Accept as Poster", "accept"),
    ("Final Decision: Reject", "reject"),
    ("Recommendation: Weak Accept", "accept"),
    ("**Decision:** borderline reject", "reject"),
])
def test_meta_reviewer_score_and_decision(decision, expected):
    parsed = parse_review(f"Metareview: The reviewers agree the method is sound.\nOverall Score: 8\n{decision}\n",
                          ICLR_2025)
    assert (parsed.rating, parsed.recommendation) == (8, expected)
    assert parsed.sections["summary"] is None


def test_subheaders_stay_in_their_section_and_filler_is_dropped():
    text = """Sure! Here is a detailed review.

## Summary
A sparse attention kernel.

## Strengths
### Engineering
- Fused   kernel,   well   tested.



- Open source.

## Weaknesses
- No long-context benchmark.

## Overall impression
I enjoyed reading it. Hope this helps!

## Rating
5
"""
    parsed = parse_review(text, ICLR_2025)
    assert parsed.sections["summary"] == "A sparse attention kernel."
    assert parsed.sections["strengths"] == "### Engineering\n- Fused kernel, well tested.\n\n- Open source."
    assert parsed.sections["weaknesses"] == "- No long-context benchmark."
    assert (parsed.rating, parsed.status) == (5, PARSE_OK)


@pytest.mark.parametrize("text, reason", [
    ("", "empty text"),
    ("  \n\t \n ", "empty text"),
    ("\x00\x1f\ufffd\ufffd %%% ::: ### ***", "no review sections or scores found"),
    ("b'\\x89PNG\\r\\n\\x1a\\n\\x00\\x00\\x00\\rIHDR'", "no review sections or scores found"),
    ("I think this paper is quite good overall and the authors did a nice job with the experiments.",
     "no review sections or scores found"),
])
def test_broken_inputs_fail_with_a_reason(text, reason):
    parsed = parse_review(text, ICLR_2025)
    assert (parsed.status, parsed.reason) == (PARSE_FAILED, reason)
    assert set(parsed.sections) == {"summary", "strengths", "weaknesses", "questions", "limitations",
                                    "additional_feedback"}
    assert not any(parsed.sections.values())
    assert (parsed.rating, parsed.confidence, parsed.subscores, parsed.recommendation) == (None, None, {}, None)


def test_review_that_stops_midway_is_partial():
    parsed = parse_review("## Summary\nThe paper proposes a new optimiser.\n\n## Strengths\n- Converges fas",
                          ICLR_2025)
    assert parsed.sections["summary"] == "The paper proposes a new optimiser."
    assert parsed.sections["strengths"] == "- Converges fas"
    assert (parsed.status, parsed.reason) == (PARSE_PARTIAL, "no weaknesses section found; no rating found")


def test_huge_text_is_parsed():
    filler = "The method is evaluated on many datasets. " * 50_000
    parsed = parse_review(f"Summary: {filler}\nStrengths: S.\nWeaknesses: W.\nRating: 8\nConfidence: 5", ICLR_2025)
    assert len(parsed.sections["summary"]) == len(filler) - 1
    assert (parsed.rating, parsed.confidence, parsed.status) == (8, 5, PARSE_OK)


def _review(**fields):
    return {**{name: None for name in REVIEW_FEATURES}, "subscores": [], **fields}


def test_parse_reviews_keeps_every_row_and_fills_only_text_records(caplog):
    given_text = "Summary\n\nA given review."
    parsed_text = "Summary: A GAN for tables.\nStrengths: Fast.\nWeaknesses: Small data.\nRating: 7\nConfidence: 3"
    unknown_text = "Summary: X.\nStrengths: Y.\nWeaknesses: Z.\nRating: 7\nConfidence: 3"
    rows = [
        _review(review_id="given", paper_id="p1", source="human", venue="ICLR", year=2025, text=given_text,
                summary="A given review.", rating=6, confidence=4, subscores=[{"name": "soundness", "value": 3}]),
        _review(review_id="text", paper_id="p1", source="gpt", venue="ICLR", year=2025, text=parsed_text),
        _review(review_id="empty", paper_id="p2", source="gpt", venue="ICLR", year=2025),
        _review(review_id="unknown-1", paper_id="p3", source="gpt", venue="FooConf", year=2023, text=unknown_text),
        _review(review_id="blank", paper_id="p3", source="gpt", venue="ICLR", year=2025, text="   "),
        _review(review_id="unknown-2", paper_id="p4", source="gpt", venue="FooConf", year=2023, text=unknown_text),
        _review(review_id="given-status", paper_id="p5", source="human", rating=3, parse_status=PARSE_OK),
    ]
    with caplog.at_level(logging.WARNING, logger="praib.parsing"):
        out = parse_reviews(records_to_dataset(rows))
    assert out.features == REVIEW_FEATURES
    assert out["review_id"] == ["given", "text", "empty", "unknown-1", "blank", "unknown-2", "given-status"]
    assert out["text"] == [r["text"] for r in rows]
    assert len([r for r in caplog.records if "FooConf" in r.getMessage()]) == 1

    given, text, empty, unknown, blank, _, given_status = out.to_list()
    assert (given["parse_status"], given["rating"], given["strengths"]) == (PARSE_GIVEN, 6, None)
    assert given["subscores"] == [{"name": "soundness", "value": 3}]
    assert (text["summary"], text["strengths"], text["weaknesses"]) == ("A GAN for tables.", "Fast.", "Small data.")
    # 7 is not on the ICLR 2025 scale: kept as a field's rating would be, for evaluate to count off scale.
    assert (text["rating"], text["confidence"], text["parse_status"]) == (7, 3, PARSE_OK)
    assert text["parse_reason"] == "rating 7 is not on the ICLR 2025 scale (1, 3, 5, 6, 8, 10): kept, counted off scale"
    assert (empty["parse_status"], empty["parse_reason"]) == (PARSE_FAILED, "no text")
    assert (blank["parse_status"], blank["parse_reason"]) == (PARSE_FAILED, "no text")
    # A venue without a scale file falls back to the generic 1-10 scale.
    assert (unknown["rating"], unknown["confidence"], unknown["parse_status"]) == (7, 3, PARSE_OK)
    assert given_status["parse_status"] == PARSE_OK


def test_parsing_in_processes_gives_the_rows_in_order_and_warns_once(caplog):
    texts = ["Summary: A.\nStrengths: B.\nWeaknesses: C.\nRating: {}\nConfidence: 3".format(r) for r in (1, 3, 6, 8)]
    rows = [_review(review_id=f"r{i}", paper_id=f"p{i}", source="gpt", venue="FooConf" if i % 7 == 0 else "ICLR",
                    year=2023 if i % 7 == 0 else 2025, text=texts[i % 4]) for i in range(2600)]
    with caplog.at_level(logging.WARNING, logger="praib.parsing"):
        spread = ReviewParser().parse_in_processes(rows, workers=2)
    warned = [r for r in caplog.records if "FooConf" in r.getMessage()]
    assert len(warned) == 1  # by the calling process, before the workers start
    assert spread == ReviewParser().parse(rows)
    assert [r["review_id"] for r in spread] == [f"r{i}" for i in range(2600)]
    assert [r["rating"] for r in spread[:4]] == [1, 3, 6, 8]  # r0 is of FooConf: the generic scale holds 1


def test_parse_reviews_with_the_generic_scale():
    rows = [_review(paper_id="p1", source="gpt", venue="ICLR", year=2025,
                    text="Summary: A.\nStrengths: B.\nWeaknesses: C.\nRating: 7\nConfidence: 5")]
    out = parse_reviews(records_to_dataset(rows), scale="generic")
    assert (out[0]["rating"], out[0]["confidence"], out[0]["parse_status"]) == (7, 5, PARSE_OK)
    with pytest.raises(ValueError, match="unknown scale 'neurips'"):
        parse_reviews(records_to_dataset(rows), scale="neurips")


def test_parse_gives_new_rows_of_every_field_in_order_and_leaves_the_records_alone():
    complete = _review(review_id="given", source="human", venue="ICLR", year=2025, summary="S.", rating=6)
    partial = {"rating": 6, "review_id": "short", "summary": "S."}  # some of the fields, in another order
    before = [dict(complete), dict(partial)]
    rows = ReviewParser().parse([complete, partial])
    assert [complete, partial] == before
    for row, record in zip(rows, (complete, partial)):
        assert row is not record and list(row) == list(REVIEW_FEATURES)
        assert (row["review_id"], row["rating"], row["summary"]) == (record["review_id"], 6, "S.")
        assert (row["subscores"], row["parse_status"]) == ([], PARSE_GIVEN)
    assert (rows[0]["venue"], rows[1]["venue"]) == ("ICLR", None)


def test_blanks_at_line_edges_and_runs_of_blank_lines_are_cleaned_from_the_sections():
    text = ("Summary: A model \n of tables.\n\n\n\nStill the summary.\nStrengths:\n\n\n - Fast. \n"
            "Weaknesses: Small data.\nRating: 6\nConfidence: 3")
    parsed = parse_review(text, ICLR_2025)
    assert parsed.sections["summary"] == "A model\nof tables.\n\nStill the summary."
    assert (parsed.sections["strengths"], parsed.sections["weaknesses"]) == ("- Fast.", "Small data.")


def test_a_section_under_several_labels_is_joined_by_one_blank_line():
    text = ("Summary: S.\nStrengths: F.\nWeaknesses: W.\nAdditional feedback:\nMinor comments:\n- Typo in Eq. 3.\n\n"
            "Comments: first.\n\n\nSuggestions:\nsecond.\nRating: 6\nConfidence: 3")
    parsed = parse_review(text, ICLR_2025)
    assert parsed.sections["additional_feedback"] == "- Typo in Eq. 3.\n\nfirst.\n\nsecond."
    assert (parsed.rating, parsed.confidence, parsed.status) == (6, 3, PARSE_OK)


def test_the_line_caches_stay_within_their_characters():
    cache = parsing._BoundedCache()
    line = "x" * parsing._CACHED_LINE_LENGTH
    kept = 2 * parsing._LINE_CACHE_CHARACTERS // len(line)
    most = 0
    for number in range(kept):
        key = f"{number:07d}{line}"
        cache.keep(key, None, len(key))
        most = max(most, cache.characters)
    assert most <= parsing._LINE_CACHE_CHARACTERS
    assert 0 < len(cache) < kept and cache.characters == sum(map(len, cache))
