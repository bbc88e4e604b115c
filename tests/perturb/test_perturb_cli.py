"""`praib perturb` end to end on the shipped demo set."""

import json
import re

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.llm.judge import Judge
from praib.records import load_records
from tests.doubles import StubBackend
from tests.paths import DEMO

# Accept-leaning values, by hand from the scale files: ICLR 2025 (1, 3, 5, 6, 8, 10), NeurIPS 2025 (1-6).
ACCEPT_LEANING = {"ICLR": {6, 8, 10}, "NeurIPS": {4, 5, 6}}


def run(*args):
    return CliRunner().invoke(main, ["perturb", *args, "--no-progress"], catch_exceptions=False)


def test_list_names_every_kind_with_component_category_and_llm():
    result = run("--list")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].split()[:4] == ["kind", "component", "category", "LLM"]
    rows = {line.split()[0]: line.split()[1:4] for line in lines[1:]}
    assert rows["rating-flip"] == ["review", "conclusion", "no"]
    assert rows["remove-details"] == ["paper", "soundness", "yes"]
    assert rows["rebuttal-completeness"] == ["rebuttal", "completeness", "yes"]
    assert len(rows) == 22


def test_rating_flip_on_the_demo_reviews(tmp_path):
    output = tmp_path / "flipped.jsonl"
    result = run("rating-flip", str(DEMO / "reviews.jsonl"), "--output", str(output))
    assert result.exit_code == 0, result.output
    original = load_records(DEMO / "reviews.jsonl")
    flipped = load_records(output)
    assert flipped["paper_id"] == original["paper_id"] and flipped["review_id"] == original["review_id"]
    for before, after in zip(original, flipped):
        assert after["perturbation"]["kind"] == "rating-flip"
        if before["source"] == "human":
            leaning = before["rating"] in ACCEPT_LEANING[before["venue"]]
            assert after["rating"] == (1 if leaning else before["rating"])
            assert after["perturbation"]["description"].startswith("rating" if leaning else "unchanged")
    changed = sum(a["text"] != b["text"] or a["rating"] != b["rating"] for a, b in zip(original, flipped))
    assert re.fullmatch(rf"rating-flip: {changed} of 58 review records changed \({58 - changed} left unchanged, see "
                        rf"their perturbation.description\); {changed} edits in 8 papers \(mean [0-9.]+ a paper, "
                        rf"[0-9]+-[0-9]+\); [0-9.]+ s; wrote {re.escape(str(output))} and flipped.jsonl.stats.json",
                        result.output.strip()), result.output
    # One edit a flipped review (its score line, or its rating field), counted per paper.
    flips: dict[str, int] = {}
    for before, after in zip(original, flipped):
        flips[before["paper_id"]] = flips.get(before["paper_id"], 0) + any(before[k] != after[k] for k in before if k != "perturbation")
    stats = json.loads((tmp_path / "flipped.jsonl.stats.json").read_text())
    assert stats["statistics_of"] == "praib perturb" and stats["input"] == str(DEMO / "reviews.jsonl")
    entry = stats["kinds"]["rating-flip"]
    assert (entry["records"], entry["changed"], entry["unchanged"], entry["left_out"]) == (58, changed, 58 - changed, 0)
    assert entry["edits_per_paper"] == flips
    assert entry["edits"] == {"sum": changed, "mean": changed / 8, "min": min(flips.values()),
                              "max": max(flips.values()), "papers": 8}
    assert entry["llm_edits"] is None and entry["seconds"] >= 0


def test_typos_on_the_demo_papers_are_fixed_by_the_seed(tmp_path):
    outputs = []
    for name, seed in (("a.jsonl", "3"), ("b.jsonl", "3"), ("c.jsonl", "4")):
        result = run("typos", str(DEMO / "papers.jsonl"), "--output", str(tmp_path / name),
                     "--seed", seed, "--perturbation-arg", "fraction=0.5")
        assert result.exit_code == 0, result.output
        assert result.output.startswith("typos: 8 of 8 paper records changed; ")
        outputs.append((tmp_path / name).read_text())
    assert outputs[0] == outputs[1] != outputs[2]
    records = load_records(tmp_path / "a.jsonl", "paper")
    assert records["paper_id"] == load_records(DEMO / "papers.jsonl", "paper")["paper_id"]
    assert {p["seed"] for p in records["perturbation"]} == {3}


def test_false_claims_from_a_claims_file(tmp_path):
    claims = tmp_path / "claims.json"
    paper_ids = load_records(DEMO / "papers.jsonl", "paper")["paper_id"]
    claims.write_text(json.dumps({pid: [f"{pid} claim {i}." for i in range(5)] for pid in paper_ids}))
    output = tmp_path / "out.parquet"
    result = run("false-claims", str(DEMO / "reviews.jsonl"), "--output", str(output),
                 "--claims", str(claims), "--seed", "1")
    assert result.exit_code == 0, result.output
    for row in load_records(output):
        if row["weaknesses"]:
            assert row["weaknesses"].count(f"- {row['paper_id']} claim ") == 3


def overclaim_first_sentence(request):
    """A span edit, in the registry's answer format, that claims novelty for the first sentence of the section asked about."""
    body = request.messages[-1][1].split("\nSection: ", 1)[1].split("\n", 1)[1]
    sentence = re.match(r"\s*([^\n]+?\.)(?:\s|$)", body).group(1)
    edited = ("We are the first to notice that dense graphs are slow." if sentence.startswith("Dense graphs") else
              "We are the first to show that " + sentence[0].lower() + sentence[1:])
    words = sentence.split()
    return (f"1. Text Span to Edit\n- Start Words: {' '.join(words[:2])}\n- Ending Words: {' '.join(words[-2:])}\n"
            f"2. Edited Text Span\n{edited}")


def test_llm_kind_through_the_judge_options(tmp_path, monkeypatch):
    backend = StubBackend(overclaim_first_sentence)
    monkeypatch.setattr("praib.llm.judge.make_judge", lambda *args, failures, **options: Judge(backend, failures=failures))
    output = tmp_path / "out.jsonl"
    result = run("overclaim-novelty", str(DEMO / "papers.jsonl"), "--output", str(output),
                 "--judge", "stub-model")
    assert result.exit_code == 0, result.output
    first = load_records(output, "paper")[0]
    assert "We are the first to notice that dense graphs are slow." in first["text"]
    assert "Dense graphs make message passing expensive" not in first["text"]


def test_errors(tmp_path):
    out = str(tmp_path / "x.jsonl")
    result = run("nope", str(DEMO / "papers.jsonl"), "--output", out)
    assert result.exit_code == 1 and "unknown perturbation 'nope'; known: spelling" in result.output
    result = run("voice", str(DEMO / "papers.jsonl"), "--output", out)
    assert result.exit_code == 2 and "`voice` needs an LLM: give --judge MODEL" in result.output
    result = run("spelling", str(DEMO / "reviews.jsonl"), "--output", out)
    assert result.exit_code == 2 and "holds review records; `spelling` edits paper records" in result.output
    # The wrong record kind is found before the judge writes any false-claim bucket.
    result = run("false-claims", str(DEMO / "papers.jsonl"), "--papers",
                 str(DEMO / "papers.jsonl"), "--judge", "never-called", "--output", out)
    assert result.exit_code == 2 and "holds paper records; `false-claims` edits review records" in result.output
    result = run("false-claims", str(DEMO / "reviews.jsonl"), "--output", out)
    assert result.exit_code == 2 and "give --judge MODEL (or --claims FILE)" in result.output
    result = run("spelling", "--output", out)
    assert result.exit_code == 2 and "give PERTURBATION and INPUT (or --list)" in result.output


def test_false_claims_generated_by_the_judge_are_saved_beside_the_output(tmp_path, monkeypatch):
    answer = "".join(f"False Claim: Claim {i}.\nWhy the claim is false: a\nWhy the claim is weakness: b\n"
                     for i in range(5))
    backend = StubBackend([answer])
    monkeypatch.setattr("praib.llm.judge.make_judge", lambda *args, failures, **options: Judge(backend, failures=failures))
    output = tmp_path / "out.jsonl"
    result = run("false-claims", str(DEMO / "reviews.jsonl"), "--output", str(output),
                 "--papers", str(DEMO / "papers.jsonl"), "--judge", "stub-model")
    assert result.exit_code == 0, result.output
    assert len(backend.requests) == 8  # one bucket per demo paper
    saved = [json.loads(line) for line in (tmp_path / "out.jsonl.claims.jsonl").read_text().splitlines()]
    assert len(saved) == 8 and all(s["claims"] == [f"Claim {i}." for i in range(5)] for s in saved)
    assert "wrote the generated false-claim buckets to" in result.output


BROKEN_TEMPLATES = {
    "syntax.jinja": (b"Rewrite:\n{% for %}\n{{ text }}", "line 2: not a valid Jinja template"),
    "latin1.jinja": ("R\xe9\xe9cris {{ text }}".encode("latin-1"), "not UTF-8 text (byte 0xe9 at offset 1)"),
    "filter.jinja": (b"{{ text | shout }}", "line 1: not a valid Jinja template: No filter named 'shout'"),
    "escape.jinja": (b"{{ cycler.__init__.__globals__.os.popen('id').read() }}", "unsafe template"),
    "undefined.jinja": (b"Rewrite for {{ audience }}: {{ text }}", "'audience' is undefined"),
}


@pytest.mark.parametrize("kind", ["injection-appendix", "overclaim-novelty"])
@pytest.mark.parametrize("name", sorted(BROKEN_TEMPLATES))
def test_a_broken_template_file_is_one_line_naming_it(tmp_path, monkeypatch, kind, name):
    template = tmp_path / name
    template.write_bytes(BROKEN_TEMPLATES[name][0])
    backend = StubBackend(["never sent"])
    monkeypatch.setattr("praib.llm.judge.make_judge", lambda *args, failures, **options: Judge(backend, failures=failures))
    output = tmp_path / "out.jsonl"
    result = run(kind, str(DEMO / "papers.jsonl"), "--output", str(output), "--template", str(template),
                 "--judge", "stub-model")
    assert result.exit_code == 1 and "Traceback" not in result.output
    error = [line for line in result.output.splitlines() if "Error:" in line]
    assert len(error) == 1 and template.name in error[0] and BROKEN_TEMPLATES[name][1] in error[0], result.output
    assert backend.requests == [] and not output.exists()


def test_perturb_and_generate_read_repeated_paper_ids_alike(tmp_path, caplog):
    from praib.generation.papers import load_papers
    from praib.records import RecordError

    papers = [json.loads(line) for line in (DEMO / "papers.jsonl").read_text().splitlines()]
    path = tmp_path / "papers.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in papers + [papers[1]]))
    result = run("spelling", str(path), "--output", str(tmp_path / "out.jsonl"))
    assert result.exit_code == 0, result.output
    assert len(load_records(tmp_path / "out.jsonl", "paper")) == len(load_papers(path)) == 8
    assert caplog.text.count(f"{path}: dropped 1 exact duplicate record (same paper_id and content)") == 2

    path.write_text("".join(json.dumps(p) + "\n" for p in papers + [{**papers[1], "title": "Another title"}]))
    error = f"{path}: field 'paper_id': 1 id repeats with different content: {papers[1]['paper_id']}"
    result = run("spelling", str(path), "--output", str(tmp_path / "again.jsonl"))
    assert result.exit_code == 1 and result.output.strip() == f"Error: {error}"
    with pytest.raises(RecordError) as caught:
        load_papers(path)
    assert str(caught.value) == error
