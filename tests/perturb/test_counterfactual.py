"""Research-logic extraction and soundness-critical counterfactual papers, driven by a scripted stub model."""

from __future__ import annotations

import json
import re

import pytest

from praib.llm.cache import CachedBackend, CallCache
from praib.llm.judge import Judge
from praib.perturb.counterfactual import (ProjectionError, apply_edits, build_counterfactuals,
                                          critical_counterfactuals)
from praib.perturb.logic import extract_logic, split_paragraphs, validate_logic
from praib.records import coerce_record, records_to_dataset
from tests.doubles import StubBackend

PAPER = (
    "# Sparse Adapters for Low-Resource Translation\n"
    "\n"
    "## Abstract\n"
    "\n"
    "We study sparse adapters for low-resource machine translation.\n"
    "\n"
    "## Results\n"
    "\n"
    "Table 1: BLEU on two language pairs.\n"
    "| Pair | Baseline | Ours |\n"
    "|---|---|---|\n"
    "| en-sw | 21.3 | 24.8 |\n"
    "| en-yo | 12.0 | 15.1 |\n"
    "  \n"
    "Sparse adapters improve BLEU by 3.5 points on en-sw (Table 1).\n"
    "\n"
    "Adapter sparsity correlates with translation quality across all pairs.\n"
    "\n"
    "\n"
    "## Conclusion\n"
    "\n"
    "Sparse adapters help when training data is below 100k sentences.\n"
)
LOGIC = {
    "goal": {"summary": "Whether sparse adapters help low-resource translation.", "paragraphs": ["p3"]},
    "findings": [
        {"id": "F1", "summary": "Adapter sparsity correlates with translation quality.", "paragraphs": ["p7"],
         "conclusions": ["C1"]},
        {"id": "F2", "summary": "Sparse adapters help below 100k sentences.", "paragraphs": ["p9"],
         "conclusions": ["C1"]},
    ],
    "conclusions": [{"id": "C1", "summary": "Sparse adapters improve BLEU.", "paragraphs": ["p6"],
                     "results": ["R1"]}],
    "results": [{"id": "R1", "summary": "24.8 BLEU against 21.3 on en-sw.", "paragraphs": ["p5", "p6"]}],
}


def scripted(rules):
    """A stub backend that answers each request with the first rule whose key occurs in the prompt."""

    def answer(request):
        prompt = request.messages[-1][1]
        answer = next((a for key, a in rules if key in prompt), None)
        if answer is None:
            raise AssertionError(f"no scripted answer for prompt: {prompt[:200]}")
        return answer(prompt) if callable(answer) else answer

    return StubBackend(answer, name="scripted", model="scripted-model")


EXTRACT, REFINE = "reconstructs how their claims", "checks a colleague's reconstruction"
FINDING_EDIT, CONCLUSION_EDIT, RESULT_EDIT = ("rewrite one finding", "extend a conclusion",
                                             "change one result of a paper")
PROJECT, DESIDERATA = "fewest possible words", "meets three requirements"
ACCEPT = json.dumps({"relevant": True, "minimal": True, "plausible": True, "explanation": "fine"})


def _papers(text=PAPER):
    return records_to_dataset([coerce_record({
        "paper_id": "paper-1", "venue": "ICLR", "year": 2025, "title": "Sparse Adapters",
        "abstract": "We study sparse adapters for low-resource machine translation.", "text": text}, "paper", "test")],
        "paper")


def _logic_rules(draft=LOGIC, refined=LOGIC):
    return [(REFINE, json.dumps(refined)), (EXTRACT, json.dumps(draft))]


def test_paragraphs_are_split_at_blank_lines_and_numbered_in_order():
    paragraphs = split_paragraphs(PAPER)
    texts = [p.text_of(PAPER) for p in paragraphs]
    assert [p.id for p in paragraphs] == [f"p{i}" for i in range(1, 10)]
    assert texts[4] == ("Table 1: BLEU on two language pairs.\n| Pair | Baseline | Ours |\n|---|---|---|\n"
                        "| en-sw | 21.3 | 24.8 |\n| en-yo | 12.0 | 15.1 |")
    assert texts[6] == "Adapter sparsity correlates with translation quality across all pairs."
    assert texts[8] == "Sparse adapters help when training data is below 100k sentences."
    assert split_paragraphs("\n\n  \n") == []


def test_extraction_refines_the_draft_and_saves_ranked_records():
    draft = {**LOGIC, "findings": LOGIC["findings"][:1]}
    backend = scripted(_logic_rules(draft=draft))
    logic = extract_logic(_papers(), Judge(backend), progress=False)
    assert len(backend.prompts) == 2
    assert "[p7] Adapter sparsity correlates" in backend.prompts[0]
    assert json.dumps(draft, indent=1) in backend.prompts[1]  # the model checks its own answer
    row = logic[0]
    assert [f["id"] for f in row["findings"]] == ["F1", "F2"]  # the refined answer, not the draft
    assert [f["rank"] for f in row["findings"]] == [1, 2]
    assert row["results"] == [{"id": "R1", "summary": "24.8 BLEU against 21.3 on en-sw.", "paragraphs": ["p5", "p6"],
                               "relevance": None, "conclusions": None, "evidences": None, "coreferences": None}]
    assert row["attempts"] == 1 and row["model"] == "scripted-model"
    # Logic praib extracted has none of the UKP release's blueprint fields.
    assert row["contributions"] is row["method"] is row["blueprint_extra"] is row["goal"]["genre"] is None


def test_validation_names_unknown_paragraphs_and_dangling_links():
    broken = json.loads(json.dumps(LOGIC))
    broken["findings"][0]["paragraphs"] = ["p99"]
    broken["conclusions"][0]["results"] = ["R7"]
    problems = validate_logic(broken, [f"p{i}" for i in range(1, 10)])
    assert problems == ["finding F1 cites paragraphs that do not exist: p99",
                        "conclusion C1 links to results that do not exist: R7"]
    assert validate_logic(None, ["p1"]) == ["the answer is not a JSON object"]


def test_an_invalid_answer_is_sent_back_with_its_problems():
    broken = {**LOGIC, "results": [{**LOGIC["results"][0], "paragraphs": ["p42"]}]}
    backend = scripted([("rejected for these problems", json.dumps(LOGIC)), *_logic_rules(refined=broken)])
    logic = extract_logic(_papers(), Judge(backend), progress=False)
    assert len(backend.prompts) == 3
    assert "- result R1 cites paragraphs that do not exist: p42" in backend.prompts[2]
    assert logic[0]["attempts"] == 2 and logic[0]["results"][0]["paragraphs"] == ["p5", "p6"]


def test_invalid_json_after_the_retries_is_a_failed_paper_and_the_others_go_on():
    backend = scripted([(REFINE, "I cannot answer in JSON."), (EXTRACT, json.dumps(LOGIC))])
    judge = Judge(backend)
    logic = extract_logic(_papers(), judge, max_retries=2, progress=False)
    assert len(logic) == 0
    [failed] = judge.failures.items
    assert (failed.item_id, failed.stage, failed.error, failed.tries, failed.raw) == (
        "paper-1", "counterfactual:logic", "UnreadableAnswer", 3, "I cannot answer in JSON.")
    assert failed.message == "the research logic is invalid after 3 attempt(s): the answer is not a JSON object"
    # the drafts and retries that the extraction settles itself are not failures of their own
    assert judge.failures.tried == 1


def test_one_paper_whose_logic_stays_invalid_does_not_stop_the_build_of_the_others():
    papers = records_to_dataset([coerce_record({"paper_id": paper_id, "venue": "ICLR", "year": 2025, "title": title,
                                                "text": PAPER.replace("Sparse Adapters", title)}, "paper", "test")
                                 for paper_id, title in (("good", "Sparse Adapters"), ("bad", "Broken Paper"))],
                                "paper")
    backend = scripted([("Broken Paper", "I cannot answer in JSON."), (EXTRACT, json.dumps(LOGIC)),
                        (REFINE, json.dumps(LOGIC)), *_edit_rules()])
    judge = Judge(backend)
    result = build_counterfactuals(papers, judge, families=["finding"], neutral_kinds=(), progress=False)
    assert list(result.logic["paper_id"]) == ["good"]
    assert [v["paper_id"] for v in result.papers.to_list()] == ["good"]
    assert [(f.item_id, f.stage) for f in judge.failures.items] == [("bad", "counterfactual:logic")]
    # The finding family was tried on the paper with logic only; its one variant replaces "correlates with" by
    # "drives": one edit of two words. One attempt, accepted.
    [finding] = result.kinds
    assert (finding.kind, finding.category, finding.records, finding.changed, finding.unchanged,
            finding.left_out) == ("finding", "soundness-critical", 1, 1, 0, 0)
    assert finding.edits == {"good": 1} and finding.words == {"good": 2}
    assert finding.llm_edits == {"unit": "attempt", "accepted": 1, "rejected": 0, "unanswered": 0}
    assert set(result.stages) == {"logic extraction", "soundness-critical edits"}


def test_an_edit_changes_only_its_span_inside_the_cited_paragraph():
    edited = apply_edits(PAPER, [{"paragraph": "p5", "original": "24.8", "replacement": "21.5"}], allowed=["p5", "p6"])
    assert edited == PAPER.replace("| en-sw | 21.3 | 24.8 |", "| en-sw | 21.3 | 21.5 |")
    # The same number outside p5 (none here) or a span in another paragraph is never touched.
    with pytest.raises(ProjectionError, match="paragraph p7 is not cited"):
        apply_edits(PAPER, [{"paragraph": "p7", "original": "correlates", "replacement": "x"}], allowed=["p5"])
    with pytest.raises(ProjectionError, match="occurs 0 times"):
        apply_edits(PAPER, [{"paragraph": "p6", "original": "4.5 points", "replacement": "x"}])
    with pytest.raises(ProjectionError, match="occurs 2 times"):
        apply_edits(PAPER, [{"paragraph": "p5", "original": "en-", "replacement": "x"}])


def _edit_rules(judge_answer=ACCEPT):
    return [
        (DESIDERATA, judge_answer),
        (PROJECT, lambda prompt: json.dumps({"reasoning": "r", "edits": [
            {"paragraph": "p7", "original": "correlates with", "replacement": "drives"}
            if "changed finding" in prompt and "F1 after" in prompt else
            {"paragraph": "p9", "original": "help when training data is below 100k sentences",
             "replacement": "help in every data regime"}
            if "changed finding" in prompt and "F2 after" in prompt else
            {"paragraph": "p5", "original": "24.8", "replacement": "21.5"}]})),
        (FINDING_EDIT, lambda prompt: json.dumps(
            {"claim_type": "correlational", "edited_finding": "Adapter sparsity causes better translation."}
            if "Finding F1:" in prompt else
            {"claim_type": "conditional", "edited_finding": "Sparse adapters help in every data regime."})),
        (RESULT_EDIT, json.dumps({"result_id": "R1", "change": "weakened", "edited_result": "21.5 against 21.3"})),
        (CONCLUSION_EDIT, json.dumps({"conclusion_id": "C1", "hypothetical_result": "gains on en-yo speech",
                                      "edited_conclusion": "x", "edited_finding": "y"})),
    ]


def _logic():
    return extract_logic(_papers(), Judge(scripted(_logic_rules())), progress=False)


def test_a_rejected_finding_edit_moves_on_to_the_next_finding():
    reject_f1 = lambda prompt: ACCEPT if "F2 after" in prompt else json.dumps(  # noqa: E731
        {"relevant": True, "minimal": False, "plausible": True, "explanation": "too broad"})
    backend = scripted(_edit_rules(judge_answer=reject_f1))
    variants, attempts = critical_counterfactuals(_papers(), _logic(), Judge(backend), families=["finding"],
                                                  seed=7, progress=False)
    assert [(a["attempt"], a["finding_id"], a["status"], a["kind"]) for a in attempts] == [
        (1, "F1", "rejected", "finding-causal"), (2, "F2", "accepted", "finding-unconditional")]
    assert attempts[0]["minimal"] is False and attempts[0]["problem"] == "the judge found the edit not minimal"
    [variant] = variants
    assert variant["paper_id"] == "paper-1"
    assert variant["text"] == PAPER.replace("help when training data is below 100k sentences",
                                            "help in every data regime")
    assert variant["perturbation"] == {
        "kind": "finding-unconditional", "category": "soundness-critical", "component": "paper", "seed": 7,
        "description": "finding F2 (conditional) restated; edits: p9: "
                       "'help when training data is below 100k sentences' -> 'help in every data regime'"}


def test_result_edits_change_the_table_number_and_unprojectable_edits_are_recorded():
    backend = scripted(_edit_rules())
    variants, attempts = critical_counterfactuals(_papers(), _logic(), Judge(backend),
                                                  families=["result", "conclusion"], progress=False)
    assert [v["perturbation"]["kind"] for v in variants] == ["result-weakened"]
    assert variants[0]["text"] == PAPER.replace("| 24.8 |", "| 21.5 |")
    # The conclusion edit's projection pointed at p5, which neither C1 nor F1/F2 cite: each finding is tried once.
    conclusion = [(a["finding_id"], a["status"]) for a in attempts if a["family"] == "conclusion"]
    assert conclusion == [("F1", "projection-failed"), ("F2", "projection-failed")]
    assert "not cited by the edited items" in attempts[-1]["problem"]


def test_a_finding_of_no_claim_type_gives_no_counterfactual():
    rules = [(FINDING_EDIT, json.dumps({"claim_type": "none", "edited_finding": ""})), *_edit_rules()]
    variants, attempts = critical_counterfactuals(_papers(), _logic(), Judge(scripted(rules)),
                                                  families=["finding"], max_attempts=1, progress=False)
    assert variants == [] and [a["status"] for a in attempts] == ["no-claim-type"]


def test_an_identical_rerun_is_answered_from_the_cache(tmp_path):
    inner = scripted(_logic_rules() + _edit_rules())
    calls = []
    for _ in range(2):
        before = len(inner.prompts)
        judge = Judge(CachedBackend(inner, CallCache(tmp_path / "cache")))
        result = build_counterfactuals(_papers(), judge, families=["finding", "result"], neutral_kinds=[],
                                       progress=False)
        calls.append(len(inner.prompts) - before)
        assert sorted(result.papers["perturbation"], key=lambda p: p["kind"])[0]["kind"] == "finding-causal"
    assert calls[0] > 0 and calls[1] == 0
    paths = result.save(tmp_path / "variants.jsonl")
    assert [json.loads(line)["kind"] for line in paths["attempts"].read_text().splitlines()] == [
        "finding-causal", "result-weakened"]
    assert json.loads(paths["logic"].read_text())["findings"][0]["id"] == "F1"


def test_unknown_families_are_refused():
    with pytest.raises(ValueError, match="unknown soundness-critical edit method"):
        critical_counterfactuals(_papers(), _logic(), Judge(scripted([])), families=["method"])


def test_prompts_show_only_the_cited_paragraphs():
    backend = scripted(_edit_rules())
    critical_counterfactuals(_papers(), _logic(), Judge(backend), families=["result"], progress=False)
    project = next(p for p in backend.prompts if PROJECT in p)
    assert re.findall(r"^\[(p\d+)\]", project, flags=re.MULTILINE) == ["p5", "p6"]


def test_neutral_variants_come_from_the_registry_and_unchanged_ones_are_left_out():
    from praib.perturb.registry import apply_perturbation

    text = PAPER.replace("We study sparse adapters", "We analyze the behavior of sparse adapters")
    papers = records_to_dataset([*_papers(text).to_list(), {**_papers().to_list()[0], "paper_id": "paper-2"}],
                                "paper")
    result = build_counterfactuals(papers, None, families=[], neutral_kinds=["spelling", "layout"], seed=4,
                                   progress=False)
    # paper-2 has no American spelling: its identical "variant" is left out.
    assert [(p["paper_id"], p["perturbation"]["kind"]) for p in result.papers] == [
        ("paper-1", "spelling"), ("paper-1", "layout"), ("paper-2", "layout")]
    spelling = result.papers[0]
    assert spelling["text"] == text.replace("analyze the behavior", "analyse the behaviour")
    assert spelling == apply_perturbation("spelling", papers, seed=4)[0]
    assert result.papers[2] == apply_perturbation("layout", papers, seed=4)[1]
    assert set(p["category"] for p in result.papers["perturbation"]) == {"soundness-neutral"}
    assert len(result.attempts) == 0 and len(result.logic) == 0
    # "analyze the behavior" -> "analyse the behaviour": two edits of one word in paper-1, none in paper-2.
    spelling_stats, layout_stats = result.kinds
    assert (spelling_stats.kind, spelling_stats.records, spelling_stats.changed, spelling_stats.unchanged) == (
        "spelling", 2, 1, 1)
    assert spelling_stats.edits == {"paper-1": 2, "paper-2": 0} and spelling_stats.words == {"paper-1": 2, "paper-2": 0}
    assert (layout_stats.kind, layout_stats.changed, layout_stats.unchanged) == ("layout", 2, 0)
    assert all(k.seconds is not None and k.llm_edits is None for k in result.kinds) and not result.stages
    with pytest.raises(ValueError, match="typos: not a soundness-neutral paper perturbation"):
        build_counterfactuals(papers, None, families=[], neutral_kinds=["typos"], progress=False)
