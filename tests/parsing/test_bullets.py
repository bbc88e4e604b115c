"""A generated review's own strength and weakness bullet points, the items the target-aspect study labels."""

import json
from importlib.resources import files

from praib.generation.prompts import TEMPLATES_DIR
from praib.parsing import strength_weakness_bullets

DEMO_REVIEWS = files("praib").joinpath("data/demo/reviews.jsonl").read_text().splitlines()
DEMO_MODEL_REVIEWS = [row for row in map(json.loads, DEMO_REVIEWS) if row["source"] != "human"]


def flat_list_after(text, heading):
    """The ``- `` lines after the line that holds only ``heading`` (in any markup), up to the next other
    non-blank line: the items of the flat one-line-per-item lists the demo models write."""
    lines = text.splitlines()
    start = next(n for n, line in enumerate(lines) if line.strip("#* :").lower() == heading)
    items = []
    for line in lines[start + 1:]:
        if line.startswith("- "):
            items.append(line[2:])
        elif line.strip():
            break
    return items


def test_the_demo_model_reviews_give_their_own_bullets():
    # Two of the 32 model reviews have no Markdown list under the headings: an HTML review whose points
    # are numbered inline in one paragraph, and a refusal with no sections at all.
    without = {"demo-neurips25-01-demo-model-b-guidelines", "demo-neurips25-04-demo-model-b-guidelines"}
    assert len(DEMO_MODEL_REVIEWS) == 32
    for row in DEMO_MODEL_REVIEWS:
        bullets = strength_weakness_bullets(row["text"])
        if row["review_id"] in without:
            assert bullets == {"strengths": [], "weaknesses": []}, row["review_id"]
        else:
            assert bullets == {"strengths": flat_list_after(row["text"], "strengths"),
                               "weaknesses": flat_list_after(row["text"], "weaknesses")}, row["review_id"]
            assert bullets["strengths"] and bullets["weaknesses"], row["review_id"]


def test_a_demo_review_by_hand():
    row = next(r for r in DEMO_MODEL_REVIEWS if r["review_id"] == "demo-iclr25-01-demo-model-b-guidelines")
    assert strength_weakness_bullets(row["text"]) == {
        "strengths": ["Principled replacement for uniform edge dropping, with a clear guarantee for the linearised "
                      "case.",
                      "Lemma 2 makes the method practical on graphs with tens of millions of edges.",
                      "Honest runtime accounting in Figure 2."],
        "weaknesses": ["Theorem 1 does not address degree renormalisation, so the guarantee does not directly apply "
                       "to the models trained in Section 3.",
                       "Only node classification is evaluated.",
                       "Averaged accuracy drops in Table 1 may hide larger losses on the largest graphs.",
                       "Neighbour-sampling baselines are missing."],
    }


def test_the_shape_the_generic_review_prompt_asks_for():
    # The template's own answer skeleton, each header followed by its point as a model fills it in.
    skeleton = (TEMPLATES_DIR / "generic_review.jinja").read_text().split("[[ Your Response ]]\n", 1)[1]
    for n in (1, 2, 3):
        skeleton = skeleton.replace("**Strength header**:\n", f"**Strength header**: praise {n}\n", 1)
        skeleton = skeleton.replace("**Weakness header**:\n", f"**Weakness header**: criticism {n}\n", 1)
    bullets = strength_weakness_bullets(skeleton)
    assert bullets["strengths"] == [f"**Strength header**: praise {n}" for n in (1, 2, 3)]
    # The final judgement's rationale and recommendation are bullets too, but of another section.
    assert bullets["weaknesses"] == [f"**Weakness header**: criticism {n}" for n in (1, 2, 3)]


def test_multi_line_items_nested_items_and_every_list_marker():
    text = """# Summary of paper
The paper proposes SparseMix, a routing scheme for mixture-of-experts layers.

# Strengths
Overall the paper has clear merits:

1. **Simplicity**: the method takes ten lines on top of an
   existing MoE layer, and the released code
runs as is.
   - Algorithm 1 is complete.
   - The notation is consistent,
     also in the appendix.
2) **Speed**: consistent speed-ups (1.4x) on three benchmarks.
\t* measured on A100s

* **Scope**: three model families.

+ **Reproducibility**: seeds and configurations are listed.

These points outweigh the issues below.

# Weaknesses
- **Scale**: only one model size is evaluated.
---
### Minor
- **Typos**: Eq. 3 has a stray index.
* * *
# Final Judgement
- **Rationale of recommendation**: useful and simple.
- **Recommendation**: Accept
"""
    assert strength_weakness_bullets(text) == {
        "strengths": [
            "**Simplicity**: the method takes ten lines on top of an existing MoE layer, and the released code runs "
            "as is.\n- Algorithm 1 is complete.\n- The notation is consistent, also in the appendix.",
            "**Speed**: consistent speed-ups (1.4x) on three benchmarks.\n* measured on A100s",
            "**Scope**: three model families.",
            "**Reproducibility**: seeds and configurations are listed.",
        ],
        "weaknesses": ["**Scale**: only one model size is evaluated.", "**Typos**: Eq. 3 has a stray index."],
    }


def test_no_list_under_the_headings_gives_no_items():
    prose = """**Summary:** A new tokenizer for protein sequences.
**Strengths:** The tokenizer halves sequence length and the evaluation is broad.
**Weaknesses:** - Downstream gains are within noise. - No comparison with BPE.
**Questions:**
- Why not BPE?
**Rating:** 4
"""
    # The dashes on the label's own line are prose, not a Markdown list; the questions' list is no strength.
    assert strength_weakness_bullets(prose) == {"strengths": [], "weaknesses": []}
    only_strengths = "## Strengths\n- Clear.\n\n## Weaknesses\nThe evaluation is thin.\n"
    assert strength_weakness_bullets(only_strengths) == {"strengths": ["Clear."], "weaknesses": []}
    assert strength_weakness_bullets("") == {"strengths": [], "weaknesses": []}
    assert strength_weakness_bullets(None) == {"strengths": [], "weaknesses": []}


def test_a_combined_section_gives_items_only_where_labels_split_it():
    unsplit = """Summary: A study of grokking.

Strengths And Weaknesses:
- The analysis is careful.
- The experiments are limited to one-layer transformers.

Rating: 5
"""
    # One list of both kinds: its points are not said to be strengths or weaknesses.
    assert strength_weakness_bullets(unsplit) == {"strengths": [], "weaknesses": []}
    split = """## Strengths and Weaknesses
**Strengths:**
- The analysis is careful.

**Weaknesses:**
1. The experiments are limited to one-layer transformers.
2. No weight decay ablation.

## Questions
- Does it hold for AdamW?
"""
    assert strength_weakness_bullets(split) == {
        "strengths": ["The analysis is careful."],
        "weaknesses": ["The experiments are limited to one-layer transformers.", "No weight decay ablation."],
    }


def test_bulleted_labels_and_repeated_sections():
    text = """- **Strengths:**
  - Fused kernel, well tested.
  - Open source.
- **Weaknesses:**
  - No long-context benchmark.

Strengths:
* Fast on long inputs.
"""
    assert strength_weakness_bullets(text) == {
        "strengths": ["Fused kernel, well tested.", "Open source.", "Fast on long inputs."],
        "weaknesses": ["No long-context benchmark."],
    }
