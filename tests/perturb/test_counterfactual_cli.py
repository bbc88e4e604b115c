"""`praib counterfactual extract/build/oracle` end to end on the demo papers and reviews, with a scripted model."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.perturb.logic import split_paragraphs
from praib.records import load_records
from tests.doubles import StubBackend

DEMO = "praib/data/demo"
_SHOWN = re.compile(r"^\[(p\d+)\] (.*)$", re.MULTILINE)


def demo_answer(request):
    """Answers every prompt of the pipeline from what the prompt shows (paragraph ids and texts)."""
    prompt = request.messages[-1][1]
    shown = _SHOWN.findall(prompt)
    if "reconstruction of a paper" in prompt or "reconstructs how their claims" in prompt:
        ids = [pid for pid, _ in shown]
        return json.dumps({
            "goal": {"summary": "goal", "paragraphs": ids[:1]},
            "findings": [{"id": "F1", "summary": "Sparsity correlates with accuracy.", "paragraphs": [ids[3]],
                          "conclusions": ["C1"]}],
            "conclusions": [{"id": "C1", "summary": "c", "paragraphs": [ids[4]], "results": ["R1"]}],
            "results": [{"id": "R1", "summary": "r", "paragraphs": [ids[5]]}]})
    if "rewrite one finding" in prompt:
        return json.dumps({"claim_type": "correlational", "edited_finding": "Sparsity causes accuracy."})
    if "change one result of a paper" in prompt:
        return json.dumps({"result_id": "R1", "change": "negated", "edited_result": "no gain"})
    if "fewest possible words" in prompt:
        pid, first_line = shown[0]
        return json.dumps({"reasoning": "r", "edits": [
            {"paragraph": pid, "original": first_line[:40], "replacement": first_line[:40] + " [edited]"}]})
    if "meets three requirements" in prompt:
        return json.dumps({"relevant": True, "minimal": True, "plausible": True, "explanation": "ok"})
    if "paraphrase the review" in prompt:
        return "Paraphrased."
    raise AssertionError(prompt[:300])


@pytest.fixture
def model(monkeypatch):
    stub = StubBackend(demo_answer, name="scripted", model="scripted-model")
    monkeypatch.setattr("praib.llm.judge.make_backend", lambda kind, name, **options: stub)
    return stub


def _run(args):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_extract_build_and_oracle_on_the_demo_set(tmp_path, model):
    judge = ["--judge", "stub-model", "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    out = _run(["counterfactual", "extract", f"{DEMO}/papers.jsonl", "-o", str(tmp_path / "logic.jsonl"), *judge])
    assert "extracted the research logic of 8 of 8 papers" in out
    build = ["counterfactual", "build", f"{DEMO}/papers.jsonl", "-o", str(tmp_path / "variants.jsonl"),
             "--edits", "finding,result", "--logic", str(tmp_path / "logic.jsonl"), "--seed", "5", *judge]
    out = _run(build)
    assert "16 soundness-critical and 0 soundness-neutral variants; attempts: 16 accepted" in out
    calls = len(model.prompts)
    assert "16 soundness-critical" in _run(build) and len(model.prompts) == calls  # all from the cache

    variants = load_records(tmp_path / "variants.jsonl", "paper")
    originals = {p["paper_id"]: p for p in load_records(f"{DEMO}/papers.jsonl", "paper").to_list()}
    for variant in variants.to_list():
        original = originals[variant["paper_id"]]["text"]
        before, after = split_paragraphs(original), split_paragraphs(variant["text"])
        changed = [b.id for b, a in zip(before, after) if b.text_of(original) != a.text_of(variant["text"])]
        assert len(changed) == 1 and changed[0] in variant["perturbation"]["description"]
        assert variant["text"].replace(" [edited]", "", 1) == original  # nothing else moved
        assert variant["perturbation"]["kind"] in ("finding-causal", "result-negated")
    attempts = [json.loads(line) for line in (tmp_path / "variants.attempts.jsonl").read_text().splitlines()]
    assert len(attempts) == 16 and all(a["relevant"] and a["minimal"] and a["plausible"] for a in attempts)

    # Every variant inserts " [edited]" after its paragraph's 40th character: one edit, of one word, or of two where
    # that splits a word ("training" -> "train", "[edited]ing"). Both families made one per paper.
    words = []
    for variant in variants.to_list():
        at = variant["text"].index(" [edited]")
        before, after = variant["text"][at - 1], variant["text"][at + len(" [edited]"):][:1]
        words.append(2 if not before.isspace() and after and not after.isspace() else 1)
    stats = json.loads((tmp_path / "variants.jsonl.stats.json").read_text())
    assert stats["statistics_of"] == "praib counterfactual build" and stats["seed"] == 5
    assert set(stats["kinds"]) == {"finding", "result"} and set(stats["stages"]) == {"soundness-critical edits"}
    for family in stats["kinds"].values():
        assert (family["records"], family["changed"], family["left_out"]) == (8, 8, 0)
        assert family["edits"] == {"sum": 8, "mean": 1.0, "min": 1, "max": 1, "papers": 8}
        assert family["llm_edits"] == {"unit": "attempt", "accepted": 8, "rejected": 0, "unanswered": 0}
    venues = {}
    for paper in originals.values():
        venues[paper["venue"]] = venues.get(paper["venue"], 0) + 1
    assert stats["papers"] == {"given": 8, "with_variants": 8, "by_venue": venues, "per_venue": {"mean": 4.0, "std": 0.0,
                                                                                                  "n": 2},
                               "with_logic": 8, "paper_types": None, "by_paper_type": None, "per_paper_type": None,
                               "findings_per_paper": {"mean": 1.0, "std": 0.0, "n": 8}}
    critical = stats["counterfactuals"]["soundness-critical"]
    assert (critical["variants"], critical["per_paper"], critical["edits"]) == (16, 2.0, {"mean": 1.0, "std": 0.0})
    assert critical["words"]["mean"] == pytest.approx(sum(words) / 16) and 1 in words and 2 in words
    assert stats["counterfactuals"]["soundness-neutral"]["variants"] == 0
    assert re.search(r"by edit: finding 8 of 8 papers, 8 edits in 8 papers \(1 a paper\); result 8 of 8 papers, "
                     r"8 edits in 8 papers \(1 a paper\); soundness-critical edits [0-9.]+ s", out), out

    # The same statistics from the files, for variants made elsewhere.
    out = _run(["counterfactual", "stats", f"{DEMO}/papers.jsonl", str(tmp_path / "variants.jsonl"), "--logic",
                str(tmp_path / "logic.jsonl"), "-o", str(tmp_path / "stats.json")])
    assert out == (f"8 of 8 papers with a variant; soundness-critical 16, soundness-neutral 0, total 16; "
                   f"wrote {tmp_path / 'stats.json'}\n")
    again = json.loads((tmp_path / "stats.json").read_text())
    assert again["statistics_of"] == "praib counterfactual stats" and again["kinds"] == {}
    assert (again["papers"], again["counterfactuals"]) == (stats["papers"], stats["counterfactuals"])

    out = _run(["counterfactual", "oracle", f"{DEMO}/reviews.jsonl", str(tmp_path / "variants.jsonl"), "-o", str(tmp_path / "oracle.jsonl"), "--no-progress"])
    assert "174 oracle reviews (58 of originals, 116 of variants)" in out
    oracle = load_records(tmp_path / "oracle.jsonl", "review")
    restated = load_records(tmp_path / "oracle.originals.jsonl", "review")
    assert set(oracle["source"]) == set(restated["source"]) == {"oracle"}
    assert (len(restated), len(oracle)) == (58, 116) and set(restated["perturbation"]) == {None}

    # The two files pair one to one, model reviews (no reviewer_id) included, and the oracle's lowered
    # ratings come out as a significant decrease for both soundness-critical edits.
    _run(["robustness", str(tmp_path / "oracle.originals.jsonl"), str(tmp_path / "oracle.jsonl"), "-o", str(tmp_path / "robustness.json")])
    report = json.loads((tmp_path / "robustness.json").read_text())
    edits = report["reviewers"]["oracle"]["perturbations"]
    assert sorted(edits) == ["finding-causal", "result-negated"]
    for edit in edits.values():
        assert edit["n_pairs"] == 58 and edit["scores"]["rating"]["verdict"] == "decrease"


def test_build_needs_a_judge_for_soundness_critical_edits(tmp_path):
    result = CliRunner().invoke(main, ["counterfactual", "build", f"{DEMO}/papers.jsonl", "-o",
                                       str(tmp_path / "v.jsonl"), "--edits", "finding"])
    assert result.exit_code != 0 and "soundness-critical edits need --judge MODEL" in result.output


def test_build_writes_rule_based_neutral_variants_without_a_judge(tmp_path):
    out = _run(["counterfactual", "build", f"{DEMO}/papers.jsonl", "-o", str(tmp_path / "neutral.parquet"),
                "--edits", "language-errors,spelling", "--seed", "2", "--no-progress"])
    variants = load_records(tmp_path / "neutral.parquet", "paper")
    # The demo papers use no American spellings the list knows, so only the language errors give variants.
    assert {(p["kind"], p["category"]) for p in variants["perturbation"]} == {("language-errors", "soundness-neutral")}
    assert f"0 soundness-critical and {len(variants)} soundness-neutral variants; attempts: no attempts" in out
    assert len(variants) == 8
    assert "changed nothing, left out: spelling 8 of 8 papers" in out  # said even with --no-progress


@pytest.mark.parametrize("override, expected", [
    (None, "logic_extract.jinja: is a directory, not a perturbation template file"),
    (b"{% if %}{{ paragraphs }}", "logic_extract.jinja: line 1: not a valid Jinja template"),
    (b"\xff{{ paragraphs }}", "logic_extract.jinja: not UTF-8 text (byte 0xff at offset 0)"),
])
def test_a_broken_override_in_the_template_dir_is_one_line_naming_it(tmp_path, model, override, expected):
    templates = tmp_path / "templates"
    templates.mkdir()
    if override is None:
        (templates / "logic_extract.jinja").mkdir()
    else:
        (templates / "logic_extract.jinja").write_bytes(override)
    result = CliRunner().invoke(main, ["counterfactual", "extract", f"{DEMO}/critical_papers.jsonl", "--output",
                                       str(tmp_path / "logic.jsonl"), "--template-dir", str(templates),
                                       "--judge", "scripted-model", "--cache-dir", str(tmp_path / "cache"),
                                       "--no-progress"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.count("Error:") == 1 and f"{templates}/{expected}" in result.output, result.output
    assert model.requests == []
