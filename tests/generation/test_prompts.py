"""Prompt templates: every strategy renders, venue scales reach the prompt, and the parser reads
answers written in the format each prompt asks for."""

import re
import pytest

from praib.generation.prompts import PromptSpec, list_prompts, load_prompt
from praib.parsing import parse_review
from praib.records import PARSE_OK
from praib.scales import generic_scales, venue_scales

PAPER = "# A Paper\n\nWe propose SparseMix, a routing scheme for mixture-of-experts layers."
REVIEWS = ["First review: the method is simple. Rating: 6", "Second review: experiments are thin. Rating: 3"]
REBUTTAL = "We thank the reviewers and added two baselines."
GUIDELINES = "Reviewers should check the claims, the evidence and the clarity."

EXPECTED = {"extended", "generic_review", "guidelines", "llm_reviewer", "meta_review_dimensions",
            "meta_review_score", "meta_review_template", "openreviewer", "zero_generic", "zero_guide"}


def render(name, **kwargs):
    args = dict(paper_text=PAPER, knowledge_cutoff="2024-06", reviews=REVIEWS, rebuttal=REBUTTAL,
                venue_guidelines=GUIDELINES)
    args.update(kwargs)
    prompt = load_prompt(name)
    if prompt.spec.scale == "venue":
        args.setdefault("venue", "ICLR")
        args.setdefault("year", 2024)
    return load_prompt(name).render(**args)


def user_text(messages):
    assert messages[-1]["role"] == "user"
    return messages[-1]["content"]


def all_text(messages):
    return "\n".join(m["content"] for m in messages)


def listed_values(text, header):
    """The values of the '- N: label' list that follows ``header`` in a rendered prompt."""
    start = text.index(header)
    values = []
    for line in text[start + len(header):].split("\n")[1:]:
        m = re.match(r"- (\d+)(?::|$)", line)
        if m:
            values.append(int(m.group(1)))
        elif values and line.strip() == "":
            break
        elif values:
            break
    return values


# --- the catalogue -----------------------------------------------------------------------------

def test_list_prompts_is_sorted_and_complete():
    specs = list_prompts()
    names = [s.name for s in specs]
    assert names == sorted(names)
    assert EXPECTED <= set(names)
    assert "system" not in names and not any(n.startswith("_") for n in names)
    for spec in specs:
        assert isinstance(spec, PromptSpec)
        assert spec.scale in ("venue", "generic", "none")
        assert set(spec.inputs) <= {"paper", "reviews", "rebuttal"} and "paper" in spec.inputs
        assert spec.output in ("review", "meta_review")
        assert spec.description and spec.source and spec.path.is_file()


def test_spec_metadata():
    by_name = {s.name: s for s in list_prompts()}
    assert by_name["guidelines"].scale == "generic"
    assert by_name["extended"].scale == "venue"
    assert by_name["generic_review"].scale == "none"
    for name in ("meta_review_score", "meta_review_dimensions", "meta_review_template"):
        assert by_name[name].output == "meta_review"
        assert by_name[name].inputs == ("paper", "reviews", "rebuttal")
    assert by_name["extended"].inputs == ("paper",)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_builtin_prompt_renders(name):
    messages = render(name)
    assert messages[-1]["role"] == "user"
    assert all(set(m) == {"role", "content"} for m in messages)
    assert all(m["content"].strip() for m in messages)
    assert PAPER.strip() in all_text(messages)
    assert "{{" not in all_text(messages) and "{%" not in all_text(messages)
    prompt = load_prompt(name)
    assert prompt.source_text == prompt.spec.path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["extended", "openreviewer", "zero_generic", "llm_reviewer", "meta_review_template"])
@pytest.mark.parametrize("venue,year", [("ICLR", 2018), ("ICLR", 2020), ("ICLR", 2022), ("ICLR", 2025),
                                        ("NeurIPS", 2021), ("NeurIPS", 2023), ("NeurIPS", 2025)])
def test_venue_prompts_render_for_every_edition(name, venue, year):
    text = all_text(render(name, venue=venue, year=year))
    scales = venue_scales(venue, year)
    for value, label in scales.rating.labels.items():
        assert label.rstrip(".") in text
    if name != "meta_review_template":  # the template meta-review has no dimension scores
        for sub in scales.subscores:
            assert sub.replace("_", " ").capitalize() in text


# --- the extended prompt follows the venue's scales of the year ----------------------------------

def test_extended_iclr_2025_lists_the_six_point_rating_with_labels():
    text = user_text(render("extended", venue="ICLR", year=2025))
    assert listed_values(text, "**Decision:**") == [10, 8, 6, 5, 3, 1]
    for value, label in venue_scales("ICLR", 2025).rating.labels.items():
        assert f"- {value}: {label}" in text
    assert "- 7" not in text and "- 9" not in text
    assert listed_values(text, "**Confidence:**") == [5, 4, 3, 2, 1]
    for sub in ("Soundness", "Presentation", "Contribution"):
        assert listed_values(text, f"### {sub}:") == [4, 3, 2, 1]
    for section in ("## Review Summary", "## Strengths", "## Weaknesses", "## Questions for Authors",
                    "## Additional Feedback", "## Numerical assessment", "## Final Recommendation",
                    "**Key Reason:**", "**Core evaluative criterion:**"):
        assert section in text
    assert text.rstrip().endswith("Review:")


def test_extended_iclr_2021_lists_one_to_ten():
    text = user_text(render("extended", venue="ICLR", year=2021))
    assert listed_values(text, "**Decision:**") == list(range(10, 0, -1))
    assert "- 7: Good paper, accept" in text
    assert "## Numerical assessment" not in text  # ICLR 2021 had no sub-scores
    assert listed_values(text, "**Confidence:**") == [5, 4, 3, 2, 1]


def test_extended_iclr_2020_has_no_confidence_section():
    text = user_text(render("extended", venue="ICLR", year=2020))
    assert listed_values(text, "**Decision:**") == [8, 6, 3, 1]
    assert "- 6: Weak Accept" in text
    assert "Confidence" not in text


def test_extended_iclr_2023_uses_its_own_subscores():
    text = user_text(render("extended", venue="ICLR", year=2023))
    for title in ("Correctness", "Technical novelty and significance", "Empirical novelty and significance"):
        assert listed_values(text, f"### {title}:") == [4, 3, 2, 1]
    assert "### Soundness:" not in text


def test_extended_neurips_2024_has_soundness_presentation_contribution_and_one_to_ten():
    text = user_text(render("extended", venue="NeurIPS", year=2024))
    assert listed_values(text, "**Overall Score:**") == list(range(10, 0, -1))
    assert "- 10: Award quality" in text
    for sub in ("Soundness", "Presentation", "Contribution"):
        assert listed_values(text, f"### {sub}:") == [4, 3, 2, 1]
    for section in ("## Summary", "## Strengths", "## Weaknesses", "## Questions", "## Limitations",
                    "## Numerical Ratings", "## Final Recommendation"):
        assert section in text
    assert "### Quality:" not in text


def test_extended_neurips_2025_has_four_new_subscores_and_one_to_six():
    text = user_text(render("extended", venue="NeurIPS", year=2025))
    assert listed_values(text, "**Overall Score:**") == [6, 5, 4, 3, 2, 1]  # never a static 1-10
    assert "- 6: Strong Accept" in text and "- 10" not in text and "- 7" not in text
    for sub in ("Quality", "Clarity", "Significance", "Originality"):
        assert listed_values(text, f"### {sub}:") == [4, 3, 2, 1]
    assert "### Soundness:" not in text
    assert listed_values(text, "**Confidence:**") == [5, 4, 3, 2, 1]


def test_extended_neurips_2021_has_no_subscores():
    text = user_text(render("extended", venue="NeurIPS", year=2021))
    assert "## Numerical Ratings" not in text
    assert listed_values(text, "**Overall Score:**") == list(range(10, 0, -1))


def test_venue_aliases_and_openreview_groups_resolve():
    a = user_text(render("extended", venue="NeurIPS.cc/2025/Conference", year=2025))
    b = user_text(render("extended", venue="neurips", year=2025))
    assert listed_values(a, "**Overall Score:**") == listed_values(b, "**Overall Score:**") == [6, 5, 4, 3, 2, 1]


def test_zero_shot_and_reviewer_prompts_follow_the_venue_scale():
    text = user_text(render("zero_generic", venue="NeurIPS", year=2025))
    assert "Rating: [one of 1, 2, 3, 4, 5, 6]" in text
    assert "Quality: [one of 1, 2, 3, 4]" in text
    assert "## Limitations" in text
    text = user_text(render("llm_reviewer", venue="ICLR", year=2024))
    assert "1 = strong reject. 3 = reject, not good enough." in text
    assert text.index("Contribution\n") < text.index("Soundness\n") < text.index("Presentation\n")
    text = user_text(render("meta_review_score", venue="NeurIPS", year=2025))
    assert "6 = Strong Accept" in text and "10 =" not in text


def test_guidelines_prompt_uses_the_generic_scale():
    text = user_text(render("guidelines", venue="NeurIPS", year=2025))
    assert "from 1 (Strong reject) to 10 (Strong accept)" in text
    assert "from 1 (Educated guess) to 5 (Absolutely certain)" in text
    assert "NeurIPS 2025" in text
    for label in ("**Summary:**", "**Strengths:**", "**Weaknesses:**", "**Questions:**", "**Limitations:**",
                  "**Additional feedback:**", "**Rating:**", "**Confidence:**"):
        assert label in text
    # the venue is optional for the venue-agnostic prompt
    assert "A good review" in user_text(load_prompt("guidelines").render(paper_text=PAPER))


# --- system prompt --------------------------------------------------------------------------------

def test_system_prompt_carries_the_knowledge_cutoff():
    messages = render("guidelines", knowledge_cutoff="October 2023")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Your knowledge cutoff: October 2023" in messages[0]["content"]
    messages = render("extended", knowledge_cutoff="2024-12", venue="ICLR", year=2025)
    assert messages[0]["role"] == "system" and "2024-12" in messages[0]["content"]
    assert "2024-12" not in messages[1]["content"]


def test_system_prompt_without_cutoff_has_no_cutoff_line():
    messages = load_prompt("guidelines").render(paper_text=PAPER)
    assert messages[0]["role"] == "system"
    assert "cutoff" not in messages[0]["content"].lower()


def test_openreviewer_puts_its_instructions_in_the_system_message():
    messages = render("openreviewer", venue="ICLR", year=2025, knowledge_cutoff="2024-06")
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    assert "Your knowledge cutoff: 2024-06" in system
    assert "# Review" in system and "**Decision:**" in system
    assert listed_values(system, "**Decision:**") == [10, 8, 6, 5, 3, 1]
    assert user.strip() == PAPER.strip()


def test_prompts_without_system_flag_send_only_a_user_message():
    assert [m["role"] for m in render("generic_review")] == ["user"]
    assert [m["role"] for m in render("meta_review_score")] == ["user"]


# --- meta-review inputs ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["meta_review_score", "meta_review_dimensions", "meta_review_template"])
def test_meta_review_prompts_include_every_review_and_the_rebuttal(name):
    reviews = [f"Review text number {i}, with its own points." for i in range(1, 5)]
    text = user_text(render(name, reviews=reviews, rebuttal="The authors' single rebuttal."))
    positions = [text.index(r) for r in reviews]
    assert positions == sorted(positions)
    assert "The authors' single rebuttal." in text
    assert PAPER.strip() in text
    for i in range(1, 5):
        assert f"Review {i}" in text


def test_meta_review_rebuttal_is_optional_and_can_be_one_per_review():
    text = user_text(render("meta_review_template", rebuttal=None))
    assert "rebuttal" not in text.split("Reviews & Rebuttals Content:")[1].lower()
    text = user_text(render("meta_review_score", reviews=["R-one", "R-two"], rebuttal=["Reply-one", None]))
    assert text.index("R-one") < text.index("Reply-one") < text.index("R-two")
    with pytest.raises(ValueError, match="rebuttals for 2 reviews"):
        render("meta_review_score", reviews=["R-one", "R-two"], rebuttal=["only one"])


def test_meta_review_template_structure():
    text = user_text(render("meta_review_template"))
    for field in ("Metareview:", "Justification For Why Not Higher Score:", "Justification For Why Not Lower Score:",
                  "Overall Score:", "Final Decision:", "Accept as Poster", "Accept as Spotlight", "Accept as Oral"):
        assert field in text
    # Prompt E.4's fields in its order, each asking what the paper asks under it: the acknowledged contributions
    # under "Why Not Higher", the expected revisions under "Why Not Lower".
    higher, lower = text.split("Justification For Why Not Higher Score:")[1].split("Justification For Why Not Lower Score:")
    assert "contributions the reviewers acknowledge" in higher
    assert "revisions" in lower.split("Overall Score:")[0] and "revisions" not in higher


# --- errors ---------------------------------------------------------------------------------------

def test_unknown_prompt_name_lists_the_available_ones():
    with pytest.raises(ValueError) as err:
        load_prompt("no_such_prompt")
    message = str(err.value)
    assert "no_such_prompt" in message and "extended" in message and "guidelines" in message


@pytest.mark.parametrize("kwargs,missing", [
    (dict(paper_text=PAPER), "venue and year"),
    (dict(paper_text=PAPER, venue="ICLR"), "year"),
    (dict(paper_text=PAPER, year=2025), "venue"),
])
def test_venue_scaled_prompt_needs_venue_and_year(kwargs, missing):
    with pytest.raises(ValueError, match=f"'extended'.*missing parameter {missing}"):
        load_prompt("extended").render(**kwargs)


def test_unknown_venue_or_year_is_a_value_error():
    with pytest.raises(ValueError, match="'extended'.*no scale file"):
        load_prompt("extended").render(paper_text=PAPER, venue="NoSuchConf", year=2024)
    with pytest.raises(ValueError, match="'extended'.*no scale for year 1999"):
        load_prompt("extended").render(paper_text=PAPER, venue="ICLR", year=1999)


def test_missing_paper_reviews_and_guidelines():
    with pytest.raises(ValueError, match="'guidelines'.*paper_text"):
        load_prompt("guidelines").render(paper_text="  ")
    with pytest.raises(ValueError, match="'meta_review_score'.*reviews"):
        load_prompt("meta_review_score").render(paper_text=PAPER, venue="ICLR", year=2024)
    with pytest.raises(ValueError, match="'zero_guide'.*venue_guidelines"):
        load_prompt("zero_guide").render(paper_text=PAPER, venue="ICLR", year=2024)
    # a venue with a scale file but no built-in description needs venue_description
    with pytest.raises(ValueError, match="'zero_generic'.*venue_description"):
        load_prompt("zero_generic").render(paper_text=PAPER, venue="generic", year=2024)


def test_zero_prompts_take_venue_description_and_guidelines():
    text = user_text(load_prompt("zero_generic").render(paper_text=PAPER, venue="generic", year=2024,
                                                        venue_description="robotics and control"))
    assert "robotics and control" in text
    text = user_text(render("zero_guide", venue="ICLR", year=2025, venue_guidelines="CHECK THE PROOFS"))
    assert "CHECK THE PROOFS" in text and "## Reviewing Guidelines" in text
    text = user_text(render("zero_generic", venue="ICLR", year=2025))
    assert "## Reviewer Instructions" in text and GUIDELINES not in text


# --- user templates -------------------------------------------------------------------------------

def test_user_template_with_header_loads_and_renders(tmp_path):
    path = tmp_path / "mine.jinja"
    path.write_text("""{#
name: my_meta
description: my own meta-review prompt
source: in-house
scale: venue
inputs: [paper, reviews]
output: meta_review
system: true
params:
  tone: required
#}
{%- import "_macros.jinja" as m with context -%}
Tone: {{ tone }}. Paper: {{ paper_text }}
Scores allowed: {{ m.values_of(rating_scale) }}
{{ m.reviews_block(reviews, rebuttal, rebuttals) }}
""", encoding="utf-8")
    prompt = load_prompt(path)
    assert prompt.spec.name == "my_meta" and prompt.spec.output == "meta_review"
    assert prompt.spec.inputs == ("paper", "reviews") and prompt.spec.path == path
    messages = prompt.render(paper_text="P", venue="NeurIPS", year=2025, reviews=["alpha", "beta"], tone="calm",
                             knowledge_cutoff="2025-01")
    assert messages[0]["role"] == "system" and "2025-01" in messages[0]["content"]
    text = messages[1]["content"]
    assert "Tone: calm" in text and "Scores allowed: 1, 2, 3, 4, 5, 6" in text and "alpha" in text and "beta" in text
    with pytest.raises(ValueError, match="'my_meta'.*tone"):
        prompt.render(paper_text="P", venue="NeurIPS", year=2025, reviews=["alpha"])
    # a path given as a string also loads
    assert load_prompt(str(path)).spec.name == "my_meta"


def test_user_template_without_header_gets_defaults(tmp_path):
    path = tmp_path / "plain.jinja"
    path.write_text("Review this for {{ venue_name }} {{ year }} (max {{ rating_scale[0][0] }}):\n{{ paper_text }}\n",
                    encoding="utf-8")
    prompt = load_prompt(path)
    assert (prompt.spec.name, prompt.spec.scale, prompt.spec.inputs, prompt.spec.output) == \
        ("plain", "venue", ("paper",), "review")
    messages = prompt.render(paper_text="P", venue="iclr", year=2020)
    assert messages == [{"role": "user", "content": "Review this for ICLR 2020 (max 8):\nP\n"}]


def test_user_template_with_undefined_variable_names_it(tmp_path):
    path = tmp_path / "broken.jinja"
    path.write_text("{{ paper_text }} {{ audience }}", encoding="utf-8")
    with pytest.raises(ValueError, match="'broken'.*audience"):
        load_prompt(path).render(paper_text="P", venue="ICLR", year=2024)
    with pytest.raises(ValueError, match="not found"):
        load_prompt(tmp_path / "missing.jinja")


def test_bad_metadata_is_rejected(tmp_path):
    path = tmp_path / "bad.jinja"
    path.write_text("{#\nname: bad\nscale: stars\n#}\n{{ paper_text }}", encoding="utf-8")
    with pytest.raises(ValueError, match="scale must be one of"):
        load_prompt(path)


# --- the parser reads answers in the format each prompt asks for -----------------------------------

GUIDELINES_ANSWER = """**Summary:** The paper proposes SparseMix, a routing scheme that prunes experts at inference.

**Strengths:**
- Simple to implement.
- Consistent speed-ups on three benchmarks.

**Weaknesses:**
- Only one model size.

**Questions:** How is the threshold chosen?

**Limitations:** Memory overhead of the router is discussed.

**Additional feedback:** Figure 3 is hard to read.

**Rating:** 7

**Confidence:** 4
"""

EXTENDED_ICLR_2025_ANSWER = """## Review Summary
The paper proposes SparseMix, a routing scheme for mixture-of-experts layers.

## Strengths
- Simple to implement on top of existing code.
- Consistent speed-ups.

## Weaknesses
- Only one model size is evaluated.

## Questions for Authors
- How is the pruning threshold chosen?

## Additional Feedback
Figure 3 is hard to read.

## Numerical assessment
### Soundness:
3: good

### Presentation:
2: fair

### Contribution:
3: good

## Final Recommendation
**Decision:** 6: marginally above the acceptance threshold

**Key Reason:** Useful and simple, but the evaluation is narrow.
**Confidence:** 4: You are confident in your assessment, but not absolutely certain.

**Core evaluative criterion:** Yes, it adds practical knowledge.
"""

EXTENDED_ICLR_2020_ANSWER = """## Review Summary
The paper proposes SparseMix.

## Strengths
- Simple.

## Weaknesses
- Narrow evaluation.

## Questions for Authors
- Which threshold?

## Additional Feedback
None.

## Final Recommendation
**Decision:** 3: Weak Reject

**Key Reason:** The evaluation is too narrow.
"""

EXTENDED_NEURIPS_2025_ANSWER = """## Summary
The paper proposes SparseMix, a routing scheme for mixture-of-experts layers.

## Strengths
- Simple and effective.

## Weaknesses
- Only one model size.

## Questions
1. How is the threshold chosen? A convincing answer would raise my score.

## Limitations
Yes.

## Numerical Ratings
### Quality:
3 (good)

### Clarity:
2 (fair)

### Significance:
3 (good)

### Originality:
2 (fair)

## Final Recommendation

**Overall Score:** 4: Borderline accept

**Key Reason:** Solid but limited evaluation.

**Confidence:** 3: You are fairly confident in your assessment.

**Core evaluative criterion:** Partly.
"""

EXTENDED_NEURIPS_2021_ANSWER = """## Summary
The paper proposes SparseMix.

## Strengths
- Simple.

## Weaknesses
- Narrow.

## Questions
1. Which threshold?

## Limitations
Yes.

## Final Recommendation

**Overall Score:** 7: A good submission; accept.

**Key Reason:** Clear gains.

**Confidence:** 2
"""

OPENREVIEWER_ANSWER = """# Review

The paper proposes SparseMix, a routing scheme for mixture-of-experts layers.

## Review Summary
SparseMix prunes experts at inference time; the approach is well motivated.

## Strengths
- Simple to implement.

## Weaknesses
- Only one model size.

## Questions for Authors
- How is the threshold chosen?

## Additional Feedback
- Improve Figure 3.

## Numerical assessment
### Soundness:
3

### Presentation:
3

### Contribution:
2

## Final Recommendation
**Decision:**
8: accept, good paper

**Key Reason:**
Strong results on three benchmarks.
**Confidence:**
3: You are fairly confident in your assessment.

**Core evaluative criterion:** Yes.
"""

GENERIC_REVIEW_ANSWER = """# Summary of paper
The paper proposes SparseMix, a routing scheme for mixture-of-experts layers.
# Strengths
- **Simplicity**: the method is easy to implement.
- **Speed**: consistent speed-ups on three benchmarks.
# Weaknesses
- **Scale**: only one model size is evaluated.
- **Baselines**: no comparison with expert merging.
# Final Judgement
- **Rationale of recommendation**: useful and simple, with a narrow but convincing evaluation.
- **Recommendation**: Accept
"""

ZERO_ANSWER_ICLR_2024 = """Review Report
## Summary
The paper proposes SparseMix, a routing scheme for mixture-of-experts layers.

## Strengths
- Simple to implement.

## Weaknesses
- Only one model size.

## Questions
- How is the threshold chosen?

Soundness: 3
Presentation: 2
Contribution: 3
Rating: 5
Confidence: 4
"""

ZERO_ANSWER_NEURIPS_2024 = """Review Report
## Summary
The paper proposes SparseMix.

## Strengths
- Simple.

## Weaknesses
- Narrow.

## Questions
- Which threshold?

## Limitations
The authors discuss memory overhead.

Soundness: 3
Presentation: 3
Contribution: 2
Rating: 6
Confidence: 3
"""

LLM_REVIEWER_ANSWER = """## Summary
The paper proposes SparseMix, a routing scheme for mixture-of-experts layers.

## Strength
- Simple to implement.

## Weakness
- Only one model size.

## Scores
Contribution: 3
Soundness: 3
Presentation: 4
Rating: 8
"""

META_SCORE_ANSWER = """Overall Score: 6
Final Decision: Accept as Poster
"""

META_DIMENSIONS_ANSWER = """Contribution: 3
The reviewers agree that the routing idea is new.
Soundness: 2
The rebuttal added baselines, but one model size remains.
Presentation: 3
Clear enough.
Overall Score: 5
The concerns on scale outweigh the strengths.
Final Decision: Reject
The paper is not ready.
"""

META_TEMPLATE_ANSWER = """Metareview: The paper proposes SparseMix. Reviewers praise its simplicity and criticise the narrow evaluation;
the rebuttal added two baselines, which resolves the main concern.
Justification For Why Not Higher Score: Only one model size is evaluated.
Justification For Why Not Lower Score: The speed-ups are consistent and the method is simple.
Overall Score: 8
Final Decision: Accept as Spotlight
"""

# (prompt, venue, year, answer, rating, confidence, subscores, recommendation, labels the prompt must ask for)
ANSWERS = [
    ("guidelines", None, None, GUIDELINES_ANSWER, 7, 4, {}, None,
     ["**Summary:**", "**Rating:**", "**Confidence:**"]),
    ("extended", "ICLR", 2025, EXTENDED_ICLR_2025_ANSWER, 6, 4,
     {"soundness": 3, "presentation": 2, "contribution": 3}, None,
     ["## Review Summary", "### Soundness:", "**Decision:**", "**Confidence:**", "**Key Reason:**"]),
    ("extended", "ICLR", 2020, EXTENDED_ICLR_2020_ANSWER, 3, None, {}, None,
     ["## Review Summary", "**Decision:**", "- 3: Weak Reject"]),
    ("extended", "NeurIPS", 2025, EXTENDED_NEURIPS_2025_ANSWER, 4, 3,
     {"quality": 3, "clarity": 2, "significance": 3, "originality": 2}, None,
     ["## Summary", "### Quality:", "**Overall Score:**", "**Confidence:**"]),
    ("extended", "NeurIPS", 2021, EXTENDED_NEURIPS_2021_ANSWER, 7, 2, {}, None,
     ["## Limitations", "**Overall Score:**", "- 7: A good submission; accept."]),
    ("openreviewer", "ICLR", 2025, OPENREVIEWER_ANSWER, 8, 3,
     {"soundness": 3, "presentation": 3, "contribution": 2}, None,
     ["# Review", "## Numerical assessment", "**Decision:**"]),
    ("generic_review", None, None, GENERIC_REVIEW_ANSWER, None, None, {}, "accept",
     ["# Summary of paper", "- **Strength header**:", "# Final Judgement", "**Recommendation**"]),
    ("zero_generic", "ICLR", 2024, ZERO_ANSWER_ICLR_2024, 5, 4,
     {"soundness": 3, "presentation": 2, "contribution": 3}, None,
     ["Review Report", "## Summary", "Soundness: [one of 1, 2, 3, 4]", "Rating: [one of 1, 3, 5, 6, 8, 10]"]),
    ("zero_guide", "NeurIPS", 2024, ZERO_ANSWER_NEURIPS_2024, 6, 3,
     {"soundness": 3, "presentation": 3, "contribution": 2}, None,
     ["Review Report", "## Limitations", "Rating: [one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"]),
    ("llm_reviewer", "ICLR", 2024, LLM_REVIEWER_ANSWER, 8, None,
     {"soundness": 3, "presentation": 4, "contribution": 3}, None,
     ["(1) Summary (2) Strength", "(3) Weakness (4) Scores", "Rating"]),
    ("meta_review_score", "ICLR", 2024, META_SCORE_ANSWER, 6, None, {}, "accept",
     ["Overall Score: [value]", "Final Decision: [category]"]),
    ("meta_review_dimensions", "ICLR", 2024, META_DIMENSIONS_ANSWER, 5, None,
     {"soundness": 2, "presentation": 3, "contribution": 3}, "reject",
     ["Dimension Scores", "Overall Score", "Final Decision"]),
    ("meta_review_template", "ICLR", 2024, META_TEMPLATE_ANSWER, 8, None, {}, "accept",
     ["Metareview:", "Justification For Why Not Higher Score:", "Overall Score:", "Final Decision:"]),
]


def test_every_builtin_prompt_has_a_parse_example():
    assert {a[0] for a in ANSWERS} == EXPECTED


@pytest.mark.parametrize("name,venue,year,answer,rating,confidence,subscores,recommendation,labels", ANSWERS,
                         ids=[f"{a[0]}-{a[1]}-{a[2]}" for a in ANSWERS])
def test_answers_in_the_prompts_format_parse(name, venue, year, answer, rating, confidence, subscores,
                                             recommendation, labels):
    prompt = load_prompt(name)
    kwargs = {k: v for k, v in dict(venue=venue, year=year).items() if v is not None}
    text = all_text(render(name, **kwargs))
    for label in labels:  # the example uses the labels the prompt asks for
        assert label in text, label
    scales = venue_scales(venue, year) if prompt.spec.scale == "venue" else generic_scales()
    parsed = parse_review(answer, scales)
    assert parsed.rating == rating, parsed.reason
    assert parsed.confidence == confidence, parsed.reason
    assert parsed.subscores == subscores, parsed.reason
    assert parsed.recommendation == recommendation
    if prompt.spec.output == "review":
        assert parsed.sections["summary"] and parsed.sections["strengths"] and parsed.sections["weaknesses"]
    if prompt.spec.output == "review" and rating is not None:
        assert parsed.status == PARSE_OK, parsed.reason


def test_extended_answer_does_not_parse_on_a_static_scale():
    # A 1-10 answer is off the NeurIPS 2025 scale, which is why the prompt lists the 1-6 scale: the 8 is kept
    # for evaluate to count off scale and leave out, as a rating given in a field is.
    parsed = parse_review(EXTENDED_NEURIPS_2025_ANSWER.replace("4: Borderline accept", "8"),
                          venue_scales("NeurIPS", 2025))
    assert parsed.rating == 8
    assert "rating 8 is not on the NeurIPS 2025 scale (1, 2, 3, 4, 5, 6): kept, counted off scale" in parsed.reason
