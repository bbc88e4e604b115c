"""Reviews in the formats other tools write (AI-Scientist review JSON, OpenReview notes v1 and v2) are read by the
one loader as the praib records their mapping tables say, and evaluate to the numbers of those records written by
hand; --source names whose reviews a CSV or JSONL without a source column holds. Every peer file here is written
by hand in the shape its tool writes, not made by praib."""

import json
import logging

import pytest
from click.testing import CliRunner

import praib
from praib.cli.main import main
from praib.records import RecordError, load_records

# Human reviews of the two papers the peer reviews below review, the reference of every evaluation here.
HUMAN = [
    {"paper_id": "gated-adapter", "source": "human", "reviewer_id": "R1", "rating": 4, "confidence": 3,
     "text": "The adapter is a small change. The evaluation uses two benchmarks (Table 2)."},
    {"paper_id": "gated-adapter", "source": "human", "reviewer_id": "R2", "rating": 6, "confidence": 4,
     "text": "Solid engineering. The ablation in Section 4 is missing."},
    {"paper_id": "sparse-experts", "source": "human", "reviewer_id": "R3", "rating": 7, "confidence": 4,
     "text": "Routing is clearly described. Figure 3 shows the gains."},
    {"paper_id": "sparse-experts", "source": "human", "reviewer_id": "R1", "rating": 5, "confidence": 2,
     "text": "The experiments are limited to one model size."},
]

# What AI-Scientist's perform_review returns and launch_scientist saves (review.txt holds this JSON).
AI_SCIENTIST = {
    "Summary": "The paper adds a gated adapter for long-context retrieval.",
    "Strengths": ["Simple to reproduce.", "Gains on both benchmarks (Table 2)."],
    "Weaknesses": ["Only two benchmarks.", "No ablation of the gate."],
    "Originality": 2, "Quality": 3, "Clarity": 3, "Significance": 2,
    "Questions": ["How sensitive is the gate to its initialisation?"],
    "Limitations": ["English only."],
    "Ethical Concerns": False,
    "Soundness": 3, "Presentation": 3, "Contribution": 2,
    "Overall": 5, "Confidence": 4, "Decision": "Reject",
}
# The same review as a praib record, written by hand from the mapping table of docs/records.md.
AI_SCIENTIST_RECORD = {
    "paper_id": "gated-adapter", "source": "ai-scientist", "model": "ai-scientist",
    "summary": "The paper adds a gated adapter for long-context retrieval.",
    "strengths": "- Simple to reproduce.\n- Gains on both benchmarks (Table 2).",
    "weaknesses": "- Only two benchmarks.\n- No ablation of the gate.",
    "questions": "- How sensitive is the gate to its initialisation?",
    "limitations": "- English only.",
    "additional_feedback": "Ethical concerns: no",
    "text": "## Summary\n\nThe paper adds a gated adapter for long-context retrieval.\n\n"
            "## Strengths\n\n- Simple to reproduce.\n- Gains on both benchmarks (Table 2).\n\n"
            "## Weaknesses\n\n- Only two benchmarks.\n- No ablation of the gate.\n\n"
            "## Questions\n\n- How sensitive is the gate to its initialisation?\n\n"
            "## Limitations\n\n- English only.",
    "rating": 5, "confidence": 4, "recommendation": "Reject", "parse_status": "given",
    "subscores": {"originality": 2, "quality": 3, "clarity": 3, "significance": 2, "soundness": 3,
                  "presentation": 3, "contribution": 2},
}


def _write(path, value):
    path.write_text(value if isinstance(value, str) else json.dumps(value, indent=2), encoding="utf-8")
    return path


def _jsonl(path, rows):
    return _write(path, "".join(json.dumps(row) + "\n" for row in rows))


def _results(reviews, reference):
    result = praib.evaluate(str(reviews), str(reference)).to_dict()
    result.pop("praib_version")
    return result


def test_an_ai_scientist_review_file_is_the_record_of_its_mapping_and_evaluates_alike(tmp_path):
    reference = _jsonl(tmp_path / "human.jsonl", HUMAN)
    review = _write(tmp_path / "gated-adapter.json", AI_SCIENTIST)  # the paper id is the file's stem
    by_hand = _jsonl(tmp_path / "by-hand.jsonl", [AI_SCIENTIST_RECORD])
    [read] = load_records(review).to_list()
    [expected] = load_records(by_hand).to_list()
    assert read == expected
    assert read["rating"] == 5 and read["recommendation"] == "Reject"
    results = _results(review, reference)
    assert results == _results(by_hand, reference)
    [model] = [g for g in results["groups"] if not g["is_reference"]]
    assert model["label"] == "ai-scientist" and model["n_unparsed"] == 0
    # The words of the five sections (10, 3 + 5, 3 + 5, 8, 2) and of their five headings.
    assert model["tkc"]["mean"] == 41
    # Overall on the generic 1-10 scale: the review names no venue.
    shares = model["rating_distribution"]["unknown venue None"]["model"]
    assert list(shares) == [str(n) for n in range(1, 11)] and shares["5"] == 1.0


def test_a_list_of_ai_scientist_reviews_keeps_their_own_ids_and_source(tmp_path):
    reviews = [{**AI_SCIENTIST, "paper_id": "sparse-experts", "model": "gpt-4o", "source": "gpt-4o"},
               {**AI_SCIENTIST, "Overall": 3, "Strengths": "One strength, as text."}]
    read = load_records(_write(tmp_path / "reviews.json", reviews)).to_list()
    assert [(r["paper_id"], r["source"], r["model"], r["rating"]) for r in read] == [
        ("sparse-experts", "gpt-4o", "gpt-4o", 5), ("reviews", "ai-scientist", "ai-scientist", 3)]
    assert read[1]["strengths"] == "One strength, as text."
    named = load_records(tmp_path / "reviews.json", source_name="claude").to_list()
    assert [(r["source"], r["model"]) for r in named] == [("gpt-4o", "gpt-4o"), ("claude", "claude")]


def test_a_folder_of_ai_scientist_reviews_takes_each_paper_id_from_its_file(tmp_path):
    folder = tmp_path / "reviews"
    folder.mkdir()
    _write(folder / "gated-adapter.json", AI_SCIENTIST)
    _write(folder / "sparse-experts.json", {**AI_SCIENTIST, "Overall": 7})
    read = load_records(folder).to_list()
    assert sorted((r["paper_id"], r["rating"]) for r in read) == [("gated-adapter", 5), ("sparse-experts", 7)]


def test_a_bad_ai_scientist_field_is_one_line_naming_file_record_and_key(tmp_path):
    path = _write(tmp_path / "p.json", [{**AI_SCIENTIST, "Ethical Concerns": "maybe"}])
    with pytest.raises(RecordError, match=r"p.json: record 0: field 'Ethical Concerns': expected true or false"):
        load_records(path)
    path = _write(tmp_path / "q.json", {**AI_SCIENTIST, "Overall": "high"})
    with pytest.raises(RecordError, match=r"q.json: record 0: field 'rating': expected an integer, got 'high'"):
        load_records(path)


# What the OpenReview API v2 returns for /notes?forum=...: the submission, its reviews and other replies, each
# content field wrapped in {"value": ...}.
V2_NOTES = [
    {"id": "forumB2", "forum": "forumB2", "number": 12, "invitations": ["NeurIPS.cc/2023/Conference/-/Submission"],
     "domain": "NeurIPS.cc/2023/Conference", "content": {"title": {"value": "Sparse experts"}}},
    {"id": "revB2a", "forum": "forumB2", "replyto": "forumB2", "number": 1,
     "invitations": ["NeurIPS.cc/2023/Conference/Submission12/-/Official_Review"],
     "domain": "NeurIPS.cc/2023/Conference",
     "signatures": ["NeurIPS.cc/2023/Conference/Submission12/Reviewer_Xy12"],
     "content": {"summary": {"value": "Routes tokens to experts."},
                 "soundness": {"value": "3 good"}, "presentation": {"value": "2 fair"},
                 "contribution": {"value": "3 good"},
                 "strengths": {"value": "Figure 3 shows clear gains."},
                 "weaknesses": {"value": "One model size only (Section 5)."},
                 "questions": {"value": "What is the routing cost?"},
                 "limitations": {"value": "Yes."},
                 "flag_for_ethics_review": {"value": ["No ethics review needed."]},
                 "rating": {"value": "6: Weak Accept: Technically solid paper."},
                 "confidence": {"value": "4: You are confident in your assessment."},
                 "code_of_conduct": {"value": "Yes"}}},
    {"id": "comB2", "forum": "forumB2", "replyto": "revB2a",
     "invitations": ["NeurIPS.cc/2023/Conference/Submission12/-/Official_Comment"],
     "signatures": ["NeurIPS.cc/2023/Conference/Submission12/Authors"], "content": {"comment": {"value": "Thanks."}}},
]
V2_RECORD = {
    "paper_id": "forumB2", "review_id": "revB2a", "reviewer_id": "Reviewer_Xy12", "venue": "NeurIPS", "year": 2023,
    "source": "human", "summary": "Routes tokens to experts.", "strengths": "Figure 3 shows clear gains.",
    "weaknesses": "One model size only (Section 5).", "questions": "What is the routing cost?",
    "limitations": "Yes.",
    "text": "Routes tokens to experts.\n\nFigure 3 shows clear gains.\n\nOne model size only (Section 5).\n\n"
            "What is the routing cost?\n\nYes.",
    "rating": 6, "confidence": 4, "subscores": {"soundness": 3, "presentation": 2, "contribution": 3},
    "parse_status": "given",
}

# API v1 (ICLR 2019): flat content, one invitation.
V1_NOTE = {"id": "revA1", "forum": "forumA1", "replyto": "forumA1",
           "invitation": "ICLR.cc/2019/Conference/-/Paper7/Official_Review",
           "signatures": ["ICLR.cc/2019/Conference/Paper7/AnonReviewer2"],
           "content": {"title": "Interesting but limited", "review": "The adapter helps. See Table 2.",
                       "rating": "6: Marginally above acceptance threshold",
                       "confidence": "3: The reviewer is fairly confident that the evaluation is correct"}}
V1_RECORD = {"paper_id": "forumA1", "review_id": "revA1", "reviewer_id": "AnonReviewer2", "venue": "ICLR",
             "year": 2019, "source": "human", "text": "The adapter helps. See Table 2.", "rating": 6, "confidence": 3,
             "parse_status": "given"}


def test_openreview_v2_and_v1_review_notes_are_the_records_of_their_mapping(tmp_path, caplog):
    notes = _write(tmp_path / "notes.json", {"notes": V2_NOTES + [V1_NOTE], "count": 4})  # as the API answers
    by_hand = _jsonl(tmp_path / "by-hand.jsonl", [V2_RECORD, V1_RECORD])
    with caplog.at_level(logging.WARNING):
        read = load_records(notes).to_list()
    assert read == load_records(by_hand).to_list()
    assert "left out 2 OpenReview note(s) that are no review (official comment 1, submission 1)" in caplog.text
    model = _jsonl(tmp_path / "model.jsonl", [{**AI_SCIENTIST_RECORD, "paper_id": "forumB2"},
                                             {**AI_SCIENTIST_RECORD, "paper_id": "forumA1"}])
    assert _results(model, notes) == _results(model, by_hand)


def test_openreview_notes_as_jsonl_name_the_line_of_a_bad_score(tmp_path):
    bad = {**V1_NOTE, "content": {**V1_NOTE["content"], "rating": "excellent"}}
    path = _jsonl(tmp_path / "notes.jsonl", [V1_NOTE, bad])
    with pytest.raises(RecordError, match=r"notes.jsonl: line 2: field 'rating': 'excellent' is no label"):
        load_records(path)


def _run(*args):
    result = CliRunner().invoke(main, [str(a) for a in args], prog_name="praib")
    assert "Traceback" not in result.output, result.output
    return result


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_source_names_the_reviews_of_a_file_without_a_source_column(tmp_path, suffix):
    rows = [{"paper_id": r["paper_id"], "rating": r["rating"] - 1, "text": r["text"] + " More experiments."}
            for r in HUMAN]
    if suffix == "csv":
        path = _write(tmp_path / "reviews.csv", "paper_id,rating,text\n" + "".join(
            f'{r["paper_id"]},{r["rating"]},"{r["text"]}"\n' for r in rows))
    else:
        path = _jsonl(tmp_path / "reviews.jsonl", rows)
    reference = _jsonl(tmp_path / "human.jsonl", HUMAN)
    refused = _run("evaluate", path, "--reference", reference)
    assert refused.exit_code == 1
    assert f"line {2 if suffix == 'csv' else 1}: field 'source': is required and missing; name whose reviews they " \
           "are with --source NAME" in refused.output
    named = _run("evaluate", path, "--source", "gpt-4o", "--reference", reference, "-o", tmp_path / "named.json")
    assert named.exit_code == 0, named.output
    by_hand = _jsonl(tmp_path / "by-hand.jsonl", [{**r, "source": "gpt-4o", "model": "gpt-4o"} for r in rows])
    assert _run("evaluate", by_hand, "--reference", reference, "-o", tmp_path / "hand.json").exit_code == 0
    named_groups = json.loads((tmp_path / "named.json").read_text())["groups"]
    assert named_groups == json.loads((tmp_path / "hand.json").read_text())["groups"]
    assert [g["label"] for g in named_groups] == ["human", "gpt-4o"]
    # A human source fills no model, and the reference's records that name no source are human.
    human = load_records(path, source_name="human").to_list()
    assert {(r["source"], r["model"]) for r in human} == {("human", None)}
    unnamed_reference = _jsonl(tmp_path / "reference.jsonl", [{k: v for k, v in r.items() if k != "source"}
                                                             for r in HUMAN])
    assert _run("evaluate", by_hand, "--reference", unnamed_reference, "-o", tmp_path / "unnamed.json").exit_code == 0
    assert json.loads((tmp_path / "unnamed.json").read_text())["groups"] == named_groups


def test_an_empty_source_name_is_refused():
    with pytest.raises(ValueError, match="the source name is empty"):
        load_records("unused.jsonl", source_name=" ")
