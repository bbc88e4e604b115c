"""Meta-reviewer runs with one input component perturbed, driven by a recording stub model."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.llm.cache import CachedBackend, CallCache
from praib.generation.prompts import load_prompt
from praib.generation.run import partial_path
from praib.llm.judge import Judge
from praib.generation.meta_review import parse_decision, run_meta_reviews
from praib.perturb.registry import apply_perturbation
from praib.records import PARSE_FAILED, PARSE_OK, PARSE_PARTIAL, coerce_record, load_records, records_to_dataset
from tests.doubles import StubBackend

DEMO = "praib/data/demo"
ANSWER = "Overall Score: 5\nFinal Decision: Accept as Poster"
PAPER_KIND, REVIEWS_KIND, REBUTTAL_KIND = "whitespace", "rating-flip", "rebuttal-completeness"


def _inputs(n_papers=2):
    papers = load_records(f"{DEMO}/papers.jsonl", "paper").select(range(n_papers))
    ids = set(papers["paper_id"])
    reviews = load_records(f"{DEMO}/reviews.jsonl", "review").filter(
        lambda r: r["paper_id"] in ids and r["source"] == "human")
    rebuttals = records_to_dataset([coerce_record(
        {"rebuttal_id": f"reb-{r['review_id']}", "paper_id": r["paper_id"], "review_id": r["review_id"],
         "venue": r["venue"], "year": r["year"], "source": "human",
         "text": f"We thank reviewer {r['reviewer_id']}. We added the ablation on {r['paper_id']} to Section 5."},
        "rebuttal", "test rebuttal") for r in reviews.to_list()], "rebuttal")
    return papers, reviews, rebuttals


def _prompts(backend):
    return [request.messages[-1][1] for request in backend.requests]


def test_decisions_are_read_from_the_last_final_decision_line():
    assert parse_decision("Final Decision: Reject\n...\n**Final Decision:** accept as spotlight") == \
        "Accept as Spotlight"
    assert parse_decision("Overall Score: 6") is None


@pytest.mark.parametrize("prompt", ["meta_review_score", "meta_review_dimensions", "meta_review_template"])
def test_every_input_reaches_the_prompt_and_the_answer_is_parsed(prompt):
    papers, reviews, rebuttals = _inputs()
    backend = StubBackend([ANSWER])
    run = run_meta_reviews(papers, reviews, rebuttals, backend, load_prompt(prompt), output=None, progress=False)
    assert len(backend.requests) == 2
    first = _prompts(backend)[0]
    assert papers[0]["text"].strip() in first
    for review in reviews.filter(lambda r: r["paper_id"] == papers[0]["paper_id"]).to_list():
        assert review["text"].strip()[:200] in first
        assert f"We thank reviewer {review['reviewer_id']}. We added the ablation on {papers[0]['paper_id']}" in first
    record = run.records[0]
    assert (record["rating"], record["recommendation"], record["parse_status"]) == (5, "Accept as Poster", "ok")
    assert record["perturbation"] is None and record["prompt"] == prompt
    assert record["generation"]["template"].startswith(f"{prompt}@")


def _component_run(component, kind):
    papers, reviews, rebuttals = _inputs()
    backend = StubBackend([ANSWER])
    run = run_meta_reviews(papers, reviews, rebuttals, backend, load_prompt("meta_review_score"),
                           component=component, kind=kind, seed=3, output=None, progress=False)
    return papers, reviews, rebuttals, backend, run


def test_a_perturbed_paper_reaches_the_prompt_with_the_original_reviews_and_rebuttals():
    papers, reviews, rebuttals, backend, run = _component_run("paper", PAPER_KIND)
    expected = apply_perturbation(PAPER_KIND, papers, seed=3, progress=False)
    for prompt, paper, original in zip(_prompts(backend), expected.to_list(), papers.to_list()):
        assert paper["text"] != original["text"]
        assert paper["text"].strip() in prompt and original["text"].strip() not in prompt
        assert all(r["text"].strip()[:200] in prompt for r in reviews.to_list() if r["paper_id"] == paper["paper_id"])
    assert [r["perturbation"] for r in run.records] == [p["perturbation"] for p in expected]
    assert run.records["paper_id"] == papers["paper_id"]


def test_perturbed_reviews_replace_the_originals_and_nothing_else_changes():
    papers, reviews, rebuttals, backend, run = _component_run("reviews", REVIEWS_KIND)
    expected = apply_perturbation(REVIEWS_KIND, reviews, seed=3, progress=False).to_list()
    changed = [(e, o) for e, o in zip(expected, reviews.to_list()) if e["rating"] != o["rating"]]
    assert changed
    prompts = dict(zip(run.records["paper_id"], _prompts(backend)))
    for perturbed, original in changed:
        # Demo reviews keep their scores in fields: the prompt states them under the text.
        shown = f"{perturbed['text'].strip()}\n\nRating: {perturbed['rating']}\nConfidence: {perturbed['confidence']}"
        assert shown in prompts[perturbed["paper_id"]]
        before = f"{original['text'].strip()}\n\nRating: {original['rating']}\nConfidence: {original['confidence']}"
        assert before not in prompts[perturbed["paper_id"]]
    for paper in papers.to_list():
        assert paper["text"].strip() in prompts[paper["paper_id"]]
        assert "We thank reviewer R1. We added the ablation on " + paper["paper_id"] in prompts[paper["paper_id"]]
    assert {r["perturbation"]["kind"] for r in run.records} == {REVIEWS_KIND}
    assert {r["perturbation"]["component"] for r in run.records} == {"review"}


def test_an_interrupted_run_resumes_and_an_identical_rerun_makes_no_calls(tmp_path):
    papers, reviews, rebuttals = _inputs(4)
    output = tmp_path / "meta.jsonl"

    failing = StubBackend([ANSWER], fail_after=2, failure=KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        run_meta_reviews(papers, reviews, rebuttals, CachedBackend(failing, CallCache(tmp_path / "c")),
                         load_prompt("meta_review_template"), output=output, batch_size=2, progress=False)
    assert len(partial_path(output).read_text().splitlines()) == 2 and not output.exists()
    calls = []
    for _ in range(2):
        inner = StubBackend([ANSWER])
        run = run_meta_reviews(papers, reviews, rebuttals, CachedBackend(inner, CallCache(tmp_path / "c")),
                               load_prompt("meta_review_template"), output=output, batch_size=2, progress=False)
        calls.append(len(inner.requests))
    assert calls == [2, 0]
    assert (run.n_from_cache, run.n_backend_calls) == (4, 0)
    assert not partial_path(output).exists()
    assert [json.loads(line)["paper_id"] for line in output.read_text().splitlines()] == papers["paper_id"]


def test_a_meta_review_served_from_the_cache_records_the_revision_of_the_cached_call(tmp_path):
    """Fixed defect: the meta-review loop recorded the backend's current revision, not the cached call's."""
    papers, reviews, rebuttals = _inputs(2)
    cache = CallCache(tmp_path / "c")
    run_meta_reviews(papers, reviews, rebuttals, CachedBackend(StubBackend([ANSWER]), cache),
                     load_prompt("meta_review_score"), output=None, progress=False)
    updated = StubBackend([ANSWER], model_revision="rev2")
    run = run_meta_reviews(papers, reviews, rebuttals, CachedBackend(updated, cache), load_prompt("meta_review_score"),
                           output=None, progress=False)
    assert updated.requests == []
    assert [r["generation"]["model_revision"] for r in run.records] == ["rev1", "rev1"]


def test_a_backend_that_loses_an_output_stops_a_meta_review_run(tmp_path):
    """Fixed defect: the meta-review loop did not check that every request got one output."""
    papers, reviews, rebuttals = _inputs(2)
    output = tmp_path / "meta.jsonl"
    with pytest.raises(RuntimeError, match="backend stub returned 1 outputs for 2 requests"):
        run_meta_reviews(papers, reviews, rebuttals, StubBackend([ANSWER], lose_output=True),
                         load_prompt("meta_review_score"),
                         output=output, batch_size=2, progress=False)
    assert not output.exists() and partial_path(output).read_text() == ""


def test_meta_review_parse_statuses_are_the_record_constants():
    """Fixed defect: the meta-review loop wrote its own status strings instead of praib.records' constants."""
    papers, reviews, rebuttals = _inputs(3)
    run = run_meta_reviews(papers, reviews, rebuttals, StubBackend([ANSWER, "Overall Score: 5", "No verdict."]),
                           load_prompt("meta_review_score"), output=None, progress=False)
    assert run.records["parse_status"] == [PARSE_OK, PARSE_PARTIAL, PARSE_FAILED]
    assert run.records["parse_reason"] == [None, "no final decision found", "no overall score and no final decision found"]
    assert str(run).startswith("3 meta-reviews; 1 parsed")


def test_a_killed_meta_review_run_appends_to_its_partial_file_like_a_review_run(tmp_path):
    """Without a cache the partial file is all that survives: a second killed run appends to it."""
    papers, reviews, rebuttals = _inputs(3)
    output = tmp_path / "meta.jsonl"
    for calls in (1, 2):
        with pytest.raises(KeyboardInterrupt):
            dies = StubBackend([ANSWER], fail_after=calls, failure=KeyboardInterrupt())
            run_meta_reviews(papers, reviews, rebuttals, dies, load_prompt("meta_review_score"),
                             output=output, batch_size=1, progress=False)
    kept = [json.loads(line)["paper_id"] for line in partial_path(output).read_text().splitlines()]
    first, second = papers["paper_id"][:2]
    assert kept == [first, first, second] and not output.exists()


def test_a_review_prompt_or_half_a_perturbation_is_refused():
    papers, reviews, rebuttals = _inputs(1)
    with pytest.raises(ValueError, match="does not write meta-reviews"):
        run_meta_reviews(papers, reviews, rebuttals, StubBackend([ANSWER]), load_prompt("extended"),
                         output=None, progress=False)
    with pytest.raises(ValueError, match="give both"):
        run_meta_reviews(papers, reviews, rebuttals, StubBackend([ANSWER]), load_prompt("meta_review_score"),
                         component="paper", output=None, progress=False)


def test_the_cli_writes_meta_reviews_of_the_demo_papers(tmp_path, monkeypatch):
    papers, reviews, rebuttals = _inputs(2)
    rebuttals.to_json(str(tmp_path / "rebuttals.jsonl"), lines=True)
    backend = StubBackend([ANSWER])
    monkeypatch.setattr("praib.llm.backends.make_backend", lambda kind, model, **options: backend)
    args = ["meta-review", "m", f"{DEMO}/papers.jsonl", f"{DEMO}/reviews.jsonl",
            "--rebuttals", str(tmp_path / "rebuttals.jsonl"), "--prompt", "meta_review_dimensions",
            "--perturb-component", "paper", "--perturbation", PAPER_KIND, "--backend", "openai",
            "--output", str(tmp_path / "meta.jsonl"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "8 meta-reviews (0 from cache, 8 generated now); 8 parsed (score and decision); 0 paper(s) skipped" \
        in result.output
    records = load_records(tmp_path / "meta.jsonl", "meta_review")
    assert {p["kind"] for p in records["perturbation"]} == {PAPER_KIND}
    assert "We thank reviewer R1. We added the ablation on demo-iclr25-01" in backend.requests[0].messages[-1][1]
    again = CliRunner().invoke(main, args)
    assert "(8 from cache, 0 generated now)" in again.output and len(backend.requests) == 8


def test_a_rebuttal_rewritten_by_the_judge_reaches_the_prompt_in_place_of_the_original():
    papers, reviews, rebuttals = _inputs(1)
    # The registry's span-edit answer format: the whole rebuttal is replaced.
    judge = Judge(StubBackend(["Start Words: We thank\nEnding Words: to Section 5.\n"
                                    "Edited Text Span:\nWe respond only to the first concern."]))
    backend = StubBackend([ANSWER])
    run = run_meta_reviews(papers, reviews, rebuttals, backend, load_prompt("meta_review_score"),
                           component="rebuttal", kind=REBUTTAL_KIND, judge=judge, output=None, progress=False)
    [prompt] = _prompts(backend)
    assert prompt.count("We respond only to the first concern.") == len(rebuttals)
    assert "We thank reviewer" not in prompt
    assert papers[0]["text"].strip() in prompt and reviews[0]["text"].strip() in prompt
    assert run.records[0]["perturbation"]["kind"] == REBUTTAL_KIND
    assert run.records[0]["perturbation"]["component"] == "rebuttal"


def test_dimension_cot_keeps_the_study_dimensions_for_a_venue_year_without_sub_scores():
    """ICLR 2020 had no sub-score scales: the Dimension CoT still asks for contribution, soundness and
    presentation on 1-4 (Prompt E.3), and their scores are read from the answer."""
    papers, reviews, rebuttals = _inputs(1)
    papers = records_to_dataset([{**papers[0], "year": 2020}], "paper")
    reviews = records_to_dataset([{**r, "year": 2020} for r in reviews.to_list()], "review")
    backend = StubBackend(["Contribution: 3\nSoundness: 2\nPresentation: 4\nOverall Score: 5\n"
                           "Final Decision: Reject"])
    run = run_meta_reviews(papers, reviews, None, backend, load_prompt("meta_review_dimensions"), output=None,
                           progress=False)
    prompt = _prompts(backend)[0]
    assert "Dimension Scores (1 to 4):" in prompt
    assert prompt.index("Contribution\n") < prompt.index("Soundness\n") < prompt.index("Presentation\n")
    assert "4 = Excellent: a significant new research topic" in prompt
    assert {s["name"]: s["value"] for s in run.records[0]["subscores"]} == {
        "contribution": 3, "soundness": 2, "presentation": 4}
