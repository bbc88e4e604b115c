"""LLM-driven perturbations through a stub backend: the prompt sent, the section edited, the record kept."""

import pytest

from praib.llm.cache import CachedBackend, CallCache
from praib.llm.judge import Judge
from praib.perturb.registry import apply_perturbation
from praib.perturb.reviews import generate_claim_buckets
from praib.perturb.rewrite import SpanEdit, check_span_answer, parse_span_edits
from praib.perturb.validation import EditBounds
from praib.records import coerce_record, records_to_dataset
from tests.doubles import StubBackend

PAPER = """# Fast Graphs

## 1 Introduction
We study sparse graphs. Prior work (Lee, 2020) samples edges uniformly.

## 2 Method
We train a 5-layer CNN with batch size 64 and seed 3. The loss is cross-entropy.

## 3 Experiments
We report the mean over 5 runs with a paired t-test.

## References
Lee. Sampling. 2020.
"""


def span_answer(start, end, edited):
    return f"1. Text Span to Edit\n- Start Words: {start}\n- Ending Words: {end}\n2. Edited Text Span\n{edited}\n"


def paper_records(text=PAPER):
    return records_to_dataset([coerce_record({"paper_id": "p1", "venue": "ICLR", "year": 2025, "title": "Fast Graphs",
                                              "text": text}, "paper", "test")], "paper")


def user_prompts(backend):
    return [dict(r.messages)["user"] for r in backend.requests]


def test_remove_details_edits_only_the_soundness_sections():
    answers = [span_answer("We train a", "and seed 3.", "We train a deep network."),  # 2 Method
               span_answer("We report the", "t-test.", "We report results.")]        # 3 Experiments
    backend = StubBackend(answers)
    out = apply_perturbation("remove-details", paper_records(), judge=Judge(backend), seed=5)
    prompts = user_prompts(backend)
    assert len(prompts) == 2
    assert "Section: 2 Method\nWe train a 5-layer CNN with batch size 64 and seed 3." in prompts[0]
    assert "Remove critical implementation details" in prompts[0] and "Start Words:" in prompts[0]
    assert "Section: 3 Experiments\nWe report the mean over 5 runs" in prompts[1]
    assert all(r.template == "perturb:paper_remove_details" for r in backend.requests)
    expected = (PAPER.replace("We train a 5-layer CNN with batch size 64 and seed 3.", "We train a deep network.")
                .replace("We report the mean over 5 runs with a paired t-test.", "We report results."))
    assert out[0]["text"] == expected
    assert out[0]["perturbation"] == {
        "kind": "remove-details", "category": "soundness", "component": "paper", "seed": 5,
        "description": "2 spans rewritten in 2 of 2 targeted sections (2 Method; 3 Experiments)"}


def test_overclaim_novelty_targets_contribution_sections_and_counts_spans_not_found():
    backend = StubBackend([span_answer("We study", "uniformly.", "We are the first to study sparse graphs.")
                                + span_answer("Nothing like", "this here", "x")])
    out = apply_perturbation("overclaim-novelty", paper_records(), judge=Judge(backend))
    assert len(backend.requests) == 1 and "Section: 1 Introduction" in user_prompts(backend)[0]
    assert out[0]["text"] == PAPER.replace(
        "We study sparse graphs. Prior work (Lee, 2020) samples edges uniformly.",
        "We are the first to study sparse graphs.")
    assert out[0]["perturbation"]["description"] == (
        "1 span rewritten in 1 of 1 targeted sections (1 Introduction); 1 span named by the model not found")


def test_the_studys_contribution_perturbation_is_one_kind_with_all_of_its_methods():
    """Prompt E.5 asks for exaggerated originality, removed citations, unsupported comparisons and weakly supported
    contribution statements in one edit of the contribution sections."""
    backend = StubBackend([span_answer("We study", "uniformly.", "We are the first to study sparse graphs.")])
    out = apply_perturbation("contribution", paper_records(), judge=Judge(backend))
    prompt = user_prompts(backend)[0]
    assert len(backend.requests) == 1 and "Section: 1 Introduction" in prompt
    for method in ("claims of originality", "Remove the references to foundational", "comparative claims",
                   "insufficiently supported"):
        assert method in prompt
    assert out[0]["text"] == PAPER.replace(
        "We study sparse graphs. Prior work (Lee, 2020) samples edges uniformly.",
        "We are the first to study sparse graphs.")
    assert (out[0]["perturbation"]["kind"], out[0]["perturbation"]["category"]) == ("contribution", "contribution")


def test_the_studys_review_tone_perturbation_is_dismissive_and_sarcastic_in_one_kind():
    row = coerce_record({"paper_id": "p1", "source": "human", "summary": "A method for graphs.",
                         "weaknesses": "- The evaluation seems limited.", "rating": 5}, "review", "t")
    backend = StubBackend([span_answer("The evaluation", "limited.", "The fatally flawed evaluation.")])
    out = apply_perturbation("review-tone", records_to_dataset([row], "review"), judge=Judge(backend))[0]
    prompt = user_prompts(backend)[0]
    assert "dismissive and sarcastic" in prompt and "competence" in prompt and "significance" in prompt
    assert out["weaknesses"] == "- The fatally flawed evaluation." and out["perturbation"]["category"] == "tone"


def test_presentation_edits_every_section_but_the_references():
    backend = StubBackend(["no edits"])
    out = apply_perturbation("presentation", paper_records(), judge=Judge(backend))
    sections = [p.split("Section: ")[1].split("\n")[0] for p in user_prompts(backend)]
    # the title heading has no body; an answer naming no span is asked again once, then rejected
    assert sections == ["1 Introduction", "2 Method", "3 Experiments"] * 2
    assert out[0]["text"] == PAPER
    assert out[0]["perturbation"]["description"] == (
        "unchanged: 3 sections rejected: the answer names no span in the format asked for "
        "(Start Words, Ending Words, Edited Text Span)")


def test_aspect_kind_without_matching_sections_leaves_the_paper():
    out = apply_perturbation("remove-details", paper_records("# T\n\n## 1 Introduction\nHello.\n"),
                             judge=Judge(StubBackend(["x"])))
    assert out[0]["text"] == "# T\n\n## 1 Introduction\nHello.\n"
    assert out[0]["perturbation"]["description"] == (
        "unchanged: no sections of type method, theory, experiments, results")


def test_review_tone_edits_text_and_the_section_field_that_holds_the_span():
    row = coerce_record({"paper_id": "p1", "source": "human", "summary": "A method for graphs.",
                         "weaknesses": "- The evaluation seems limited.", "rating": 5}, "review", "t")
    backend = StubBackend([span_answer("The evaluation", "limited.", "The evaluation is fatally flawed.")])
    out = apply_perturbation("tone-dismissive", records_to_dataset([row], "review"), judge=Judge(backend))[0]
    assert "Review:\nA method for graphs.\n\n- The evaluation seems limited." in user_prompts(backend)[0]
    assert "harsh and dismissive" in user_prompts(backend)[0]
    assert out["weaknesses"] == "- The evaluation is fatally flawed."
    assert out["text"] == "A method for graphs.\n\n- The evaluation is fatally flawed."
    assert out["summary"] == "A method for graphs." and out["rating"] == 5
    assert out["perturbation"]["description"] == "1 span rewritten in the text"


def test_rebuttal_completeness_rewrites_the_rebuttal():
    rebuttal = {"rebuttal_id": "b1", "paper_id": "p1", "review_id": "r1", "venue": None, "year": None,
                "source": "authors", "text": "We added Table 3 with 5 seeds (p < 0.01). Thanks!",
                "perturbation": None}
    backend = StubBackend([span_answer("We added", "0.01).", "We will consider this suggestion.")])
    out = apply_perturbation("rebuttal-completeness", records_to_dataset([rebuttal], "rebuttal"),
                             judge=Judge(backend), seed=2)[0]
    assert "Do not invent technical content" in user_prompts(backend)[0]
    assert out["text"] == "We will consider this suggestion. Thanks!"
    assert (out["paper_id"], out["rebuttal_id"], out["perturbation"]["component"]) == ("p1", "b1", "rebuttal")


def test_voice_rewrites_the_chosen_paragraphs_whole():
    text = "# T\n\nWe trained the model.\n\nThe data was cleaned by us.\n"
    backend = StubBackend(["The model was trained by us.", "We cleaned the data."])
    out = apply_perturbation("voice", paper_records(text), judge=Judge(backend), fraction=1.0)[0]
    assert [p.rsplit("Paragraph:\n", 1)[1] for p in user_prompts(backend)] == [
        "We trained the model.\n", "The data was cleaned by us.\n"]
    assert out["text"] == "# T\n\nThe model was trained by us.\n\nWe cleaned the data.\n"
    assert out["perturbation"]["description"] == "2 of 2 paragraphs rewritten between active and passive voice"


def test_llm_edits_go_through_the_call_cache(tmp_path):
    inner = StubBackend(lambda request: span_answer("We train a", "seed 3.", "We train a network.")
                        if "Section: 2 Method" in request.messages[-1][1] else
                        span_answer("We report", "t-test.", "We report one run."))
    judge = Judge(CachedBackend(inner, CallCache(tmp_path)))
    first = apply_perturbation("remove-details", paper_records(), judge=judge)
    assert len(inner.requests) == 2
    second = apply_perturbation("remove-details", paper_records(), judge=judge)
    assert len(inner.requests) == 2 and second.to_list() == first.to_list()


def test_false_claim_buckets_are_generated_from_the_papers():
    backend = StubBackend(["False Claim: No baselines.\nWhy the claim is false: Table 1.\n"
                                "Why the claim is weakness: x\nFalse Claim: One seed.\nWhy the claim is false: y\n"
                                "Why the claim is weakness: z"])
    buckets = generate_claim_buckets(paper_records(), Judge(backend))
    assert buckets == {"p1": ["No baselines.", "One seed."]}
    assert "Write 5 false claims" in user_prompts(backend)[0] and "We train a 5-layer CNN" in user_prompts(backend)[0]


def test_own_template_replaces_the_builtin(tmp_path):
    own = tmp_path / "tone.jinja"
    own.write_text("Be rude to: {{ text }}")
    backend = StubBackend([span_answer("Fine", "paper.", "Fine paper, if you like trivia.")])
    row = coerce_record({"paper_id": "p1", "source": "human", "text": "Fine paper."}, "review", "t")
    apply_perturbation("tone-sarcastic", records_to_dataset([row], "review"), judge=Judge(backend),
                       template_file=str(own))
    assert user_prompts(backend) == ["Be rude to: Fine paper."]
    with pytest.raises(ValueError, match="no perturbation template"):
        apply_perturbation("tone-sarcastic", records_to_dataset([row], "review"), judge=Judge(backend),
                           template_file=str(tmp_path / "missing.jinja"))


def test_span_edit_parsing_and_application():
    answer = ('1.Text Span to Edit\n-Start Words: "The loss"\n-Ending Words: "entropy."\n2. Edited Text Span\n'
              "The loss is standard.\n\n1.Text Span to Edit\n-Start Words: Alpha\n-Ending Words: Alpha\n"
              "2. Edited Text Span\nBeta")
    edits = parse_span_edits(answer)
    assert edits == [SpanEdit("The loss", "entropy.", "The loss is standard."), SpanEdit("Alpha", "Alpha", "Beta")]
    any_length = EditBounds("text", (0.0, 10.0), None)
    (text, applied, missed), problem = check_span_answer(any_length, "Alpha. The loss is cross-entropy. End.", answer)
    assert text == "Beta. The loss is standard. End." and problem is None
    assert applied == [("The loss is cross-entropy.", "The loss is standard."), ("Alpha", "Beta")] and missed == 0
