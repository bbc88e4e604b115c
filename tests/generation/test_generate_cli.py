"""`praib generate` and `praib prompts` end to end: the OpenAI-compatible backend against a canned
HTTP server on 127.0.0.1 started here, the transformers backend with the tiny random model, and
`praib evaluate` on what they write."""

from __future__ import annotations

import json
import re
import socket
from importlib import resources

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.records import load_records
from tests.chat_server import ChatServer

ICLR25_REVIEW = """## Review Summary
The paper {pid} studies sparse message passing with effective resistances.

## Strengths
- The method in Section 2 is simple.

## Weaknesses
- Table 1 has no error bars and Eq. (2) is not derived.

## Questions for Authors
- What is the cost of the resistance estimates?

## Numerical assessment
### Soundness:
{soundness}: good
### Presentation:
3: good
### Contribution:
2: fair

## Final Recommendation
**Decision:** {rating}
**Key Reason:** Useful but incremental.
**Confidence:** {confidence}
"""
UNPARSABLE = "As an AI language model I cannot review unpublished work."
CANNED = {
    "alpha": ICLR25_REVIEW.format(pid="alpha", soundness=3, rating=8, confidence=4),
    "beta": ICLR25_REVIEW.format(pid="beta", soundness=3, rating=3, confidence=5),
    "gamma": UNPARSABLE,
}


def paper_ids(server):
    return sorted(re.search(r"PAPER-ID (\w+)", b["messages"][-1]["content"]).group(1) for b in server.bodies)


@pytest.fixture
def server():
    """Answers from the paper id found in the prompt; the paper ``server.fail_on`` gets HTTP 400."""

    def answer(body):
        found = re.search(r"PAPER-ID (\w+)", body["messages"][-1]["content"])
        if found and found.group(1) == canned.fail_on:
            return 400, {}, b"bad request"
        return CANNED.get(found.group(1) if found else "", UNPARSABLE)

    canned = ChatServer(answer, fingerprint="fp-canned-1")
    canned.fail_on = None
    yield canned
    canned.close()


@pytest.fixture
def papers_dir(tmp_path):
    directory = tmp_path / "papers"
    directory.mkdir()
    for pid in CANNED:
        (directory / f"{pid}.md").write_text(f"# Paper {pid}\n\nPAPER-ID {pid}\n\n## 1 Introduction\n"
                                             f"We study sparse message passing.\n\n## References\n[1] A. B. 2020.\n\n"
                                             f"# A Appendix\nAPPENDIX-OF-{pid}\n")
    return directory


@pytest.fixture
def human_reviews(tmp_path):
    rows = []
    for pid, ratings in {"alpha": [8, 6, 8], "beta": [3, 5, 3], "gamma": [5, 5, 6]}.items():
        for i, rating in enumerate(ratings):
            rows.append({"paper_id": pid, "venue": "ICLR", "year": 2025, "source": "human", "reviewer_id": f"R{i}",
                         "rating": rating, "confidence": 3 + i % 2,
                         "text": "The method is sound, but Figure 2 is unclear and Table 1 lacks baselines."})
    path = tmp_path / "human.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def invoke(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def openai_args(server, papers_dir, output, cache):
    return ["generate", "canned-lm", papers_dir, "--backend", "openai", "--base-url", server.url,
            "--prompt", "extended", "--venue", "ICLR", "--year", "2025",
            "--output", output, "--cache-dir", cache, "--max-new-tokens", 300, "--temperature", 0.2,
            "--seed", 11, "--knowledge-cutoff", "2024-06", "--remove-appendix", "--no-progress"]


def test_generate_with_the_openai_backend_then_evaluate(tmp_path, server, papers_dir, human_reviews):
    out = tmp_path / "reviews.parquet"
    result = invoke(openai_args(server, papers_dir, out, tmp_path / "cache"))
    assert result.exit_code == 0, result.output
    assert "3 reviews of 3 papers (0 from cache, 3 generated now)" in result.output
    assert "2 ok, 0 partial, 1 unparsed (gamma)" in result.output
    assert "appendix removed: 3" in result.output

    # what the server received: one chat request per paper with the sampling parameters
    assert paper_ids(server) == ["alpha", "beta", "gamma"]
    body = server.bodies[0]
    assert (body["model"], body["max_tokens"], body["temperature"], body["top_p"], body["seed"]) == (
        "canned-lm", 300, 0.2, 1.0, 11)
    assert body["messages"][0]["role"] == "system" and "2024-06" in body["messages"][0]["content"]
    assert all("APPENDIX-OF-" not in b["messages"][-1]["content"] for b in server.bodies)

    records = load_records(out)
    by_id = {r["paper_id"]: r for r in records}
    assert set(by_id) == {"alpha", "beta", "gamma"}
    alpha = by_id["alpha"]
    assert (alpha["source"], alpha["model"], alpha["prompt"], alpha["venue"], alpha["year"]) == (
        "canned-lm", "canned-lm", "extended", "ICLR", 2025)
    assert (alpha["rating"], alpha["confidence"], alpha["parse_status"]) == (8, 4, "ok")
    assert alpha["text"] == CANNED["alpha"] and alpha["weaknesses"].startswith("- Table 1 has no error bars")
    assert by_id["beta"]["rating"] == 3
    gamma = by_id["gamma"]
    assert gamma["text"] == UNPARSABLE and gamma["parse_status"] == "failed"
    gen = alpha["generation"]
    assert gen["backend"] == "openai" and gen["model_revision"] == "fp-canned-1"
    assert (gen["temperature"], gen["max_new_tokens"], gen["seed"], gen["knowledge_cutoff"]) == (0.2, 300, 11, "2024-06")
    assert gen["appendix_removed"] is True and gen["paper_truncated"] is False and gen["paper_tokens"] > 0

    # an identical rerun is answered from the cache: no request reaches the server
    again = invoke(openai_args(server, papers_dir, tmp_path / "again.jsonl", tmp_path / "cache"))
    assert again.exit_code == 0, again.output
    assert "(3 from cache, 0 generated now)" in again.output
    assert len(server.bodies) == 3
    assert load_records(tmp_path / "again.jsonl").to_list() == records.to_list()

    evaluated = invoke(["evaluate", out, "--reference", human_reviews, "--no-progress", "--workers", 1,
                        "--output", tmp_path / "results.json"])
    assert evaluated.exit_code == 0, evaluated.output
    assert "canned-lm/extended" in evaluated.output and "human (reference)" in evaluated.output
    results = json.loads((tmp_path / "results.json").read_text())
    group = next(g for g in results["groups"] if g["label"] == "canned-lm/extended")
    assert (group["n_reviews"], group["n_unparsed"]) == (3, 1)
    assert group["krippendorff_alpha"]["ICLR"] is not None  # the parsed ratings joined the human panels


def test_a_failed_paper_is_recorded_the_others_written_and_the_rerun_retries_only_it(tmp_path, server, papers_dir):
    """The server refuses the second paper: the run finishes with the other two written, the failed one
    recorded with its reason (exit status 3), and the rerun asks the server only for that one."""
    cache, out = tmp_path / "cache", tmp_path / "all.jsonl"
    args = openai_args(server, papers_dir, out, cache) + ["--batch-size", 1, "--concurrency", 1, "--max-tries", 1]
    server.fail_on = "beta"
    first = CliRunner().invoke(main, [str(a) for a in args])
    assert first.exit_code == 3, first.output
    assert "Traceback" not in first.output
    # (not "3 reviews" alone: the throughput line may read "79.63 reviews/s")
    assert "3 reviews of 3 papers" not in first.output
    assert "2 reviews of 3 papers (0 from cache, 2 generated now, 1 failed)" in first.output
    assert "failed: 1 of 3 papers got no review" in first.output
    assert "warning: 1 failed item (1 RequestRejected); first: beta: RequestRejected: HTTP 400" in first.output
    assert paper_ids(server) == ["alpha", "beta", "gamma"]
    assert load_records(out)["paper_id"] == ["alpha", "gamma"]
    [failure] = [json.loads(line) for line in (tmp_path / "all.jsonl.failures.jsonl").read_text().splitlines()]
    assert {k: failure[k] for k in ("item_id", "stage", "error", "tries")} == {
        "item_id": "beta", "stage": "generate:extended", "error": "RequestRejected", "tries": 1}
    assert "HTTP 400" in failure["message"]
    assert not (tmp_path / "all.partial.jsonl").exists()

    server.fail_on = None
    rest = invoke(args)
    assert rest.exit_code == 0, rest.output
    assert "(2 from cache, 1 generated now)" in rest.output
    assert paper_ids(server) == ["alpha", "beta", "beta", "gamma"]
    assert load_records(out)["paper_id"] == ["alpha", "beta", "gamma"]
    assert not (tmp_path / "all.jsonl.failures.jsonl").exists()


def test_unreachable_server_is_a_clear_error(tmp_path, papers_dir):
    with socket.socket() as sock:  # a port on loopback that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = CliRunner().invoke(main, ["generate", "m", str(papers_dir), "--backend", "openai",
                                       "--base-url", f"http://127.0.0.1:{port}/v1", "--prompt", "extended",
                                       "--venue", "ICLR", "--year", "2025", "--output", str(tmp_path / "r.jsonl"),
                                       "--cache-dir", str(tmp_path / "cache"), "--max-tries", "1", "--no-progress"])
    assert result.exit_code == 1
    # Nothing listens on this machine's port: no request can succeed, so none is retried or recorded as failed.
    assert result.output.splitlines() == [
        f"Error: cannot reach http://127.0.0.1:{port}/v1/chat/completions: nothing listens on 127.0.0.1:{port} "
        "(connection refused); start the server, or give the address of a running one"]
    assert not (tmp_path / "r.jsonl").exists()
    assert not (tmp_path / "r.jsonl.failures.jsonl").exists()


@pytest.mark.parametrize("change, message", [
    ({"PAPERS": "nowhere"}, "no such file or directory"),
    ({"--prompt": "no-such-prompt"}, "unknown prompt 'no-such-prompt'; available prompts:"),
    ({"--venue": "NoVenue"}, "no scale file for venue 'NoVenue'"),
    ({"--year": "1999"}, "has no scale for year 1999"),
])
def test_clear_errors(tmp_path, papers_dir, change, message):
    args = {"--backend": "openai", "--prompt": "extended", "--venue": "ICLR", "--year": "2025",
            "--output": str(tmp_path / "r.jsonl"), "--cache-dir": str(tmp_path / "c")}
    papers = change.pop("PAPERS", str(papers_dir))
    args.update(change)
    result = CliRunner().invoke(main, ["generate", "m", papers, *[x for kv in args.items() for x in kv],
                                       "--no-progress"])
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output


def test_empty_papers_directory(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["generate", "m", str(tmp_path / "empty"), "--backend", "openai",
                                       "--prompt", "guidelines", "--output", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 1 and "no .md or .txt papers" in result.output


def test_generate_with_the_transformers_backend_on_the_demo_papers(tmp_path, tiny_model_dir, monkeypatch):  # noqa: F811
    monkeypatch.setenv("PRAIB_CACHE", str(tmp_path / "env-cache"))
    demo = resources.files("praib") / "data/demo/papers.jsonl"
    out = tmp_path / "tiny-reviews"  # no suffix: a saved dataset directory
    args = ["generate", tiny_model_dir, demo, "--backend", "transformers", "--prompt", "guidelines", "--limit", 3, "--output", out, "--max-new-tokens", 12, "--token-budget", 200,
            "--source", "tiny", "--no-progress"]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    assert "3 reviews of 3 papers (0 from cache, 3 generated now)" in result.output
    assert "papers truncated to the token budget: 3" in result.output
    assert (tmp_path / "env-cache" / "calls.sqlite3").exists()  # $PRAIB_CACHE is the default cache
    records = load_records(out)
    assert records["source"] == ["tiny"] * 3 and records["model"] == [str(tiny_model_dir)] * 3
    assert records["venue"] == ["ICLR"] * 3 and records["year"] == [2025] * 3  # the papers' own
    assert all(r["generation"]["backend"] == "transformers" and r["generation"]["paper_tokens"] <= 200
               and r["generation"]["max_new_tokens"] == 12 for r in records)
    assert all(isinstance(t, str) for t in records["text"])
    repeat = invoke(args)
    assert "(3 from cache, 0 generated now)" in repeat.output

    evaluated = invoke(["evaluate", out, "--no-progress", "--workers", 1])  # no human reference: still runs
    assert evaluated.exit_code == 0, evaluated.output


# ------------------------------------------------------------------------------------------ prompts

def test_prompts_list():
    result = invoke(["prompts", "list"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].split()[:5] == ["name", "output", "scale", "parameters", "source"]
    rows = {line.split()[0]: line.split()[1:3] for line in lines[2:] if line.strip() and not line.startswith("Show")}
    assert rows["extended"] == ["review", "venue"] and rows["guidelines"] == ["review", "generic"]
    # Each template's --prompt-arg parameters, with whether they are required.
    zero_guide = next(line for line in lines if line.startswith("zero_guide "))
    assert "venue_description (optional), venue_guidelines (required)" in zero_guide
    assert next(line for line in lines if line.startswith("extended ")).split()[3] == "-"


@pytest.mark.parametrize("args, message", [
    (["--prompt-arg", "guidelines=x"], "unknown parameter guidelines; its parameters: venue_description (optional), "
                                       "venue_guidelines (required)"),
    ([], "missing parameter venue_guidelines: give it with --prompt-arg venue_guidelines=VALUE"),
])
def test_generate_refuses_unknown_and_missing_prompt_parameters_before_the_model_loads(monkeypatch, args, message):
    from praib.cli.common import BackendSpec

    def no_model(self):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(BackendSpec, "open", no_model)
    result = CliRunner().invoke(main, ["generate", "some/model", "praib/data/demo/papers.jsonl", "--prompt",
                                       "zero_guide", *args])
    assert result.exit_code == 1 and message in result.output, result.output


def test_prompts_show_source_and_rendered():
    source = invoke(["prompts", "show", "extended"])
    assert source.exit_code == 0 and ("{{" in source.output or "{%" in source.output)

    iclr = invoke(["prompts", "show", "extended", "--venue", "ICLR", "--year", "2025"])
    assert iclr.exit_code == 0
    assert "===== user =====" in iclr.output and "<Paper title>" in iclr.output
    assert "8: accept, good paper" in iclr.output
    old = invoke(["prompts", "show", "extended", "--venue", "ICLR", "--year", "2019"])
    assert old.exit_code == 0 and "8: accept, good paper" not in old.output  # ICLR 2019 had a 1-10 scale
    assert "7: Good paper, accept" in old.output

    guide = invoke(["prompts", "show", "zero_guide", "--venue", "ICLR", "--year", "2025"])
    assert guide.exit_code == 0, guide.output


def test_prompts_show_errors(tmp_path):
    unknown = CliRunner().invoke(main, ["prompts", "show", "nope"])
    assert unknown.exit_code == 1 and "unknown prompt 'nope'" in unknown.output
    no_year = CliRunner().invoke(main, ["prompts", "show", "extended", "--venue", "ICLR"])
    assert no_year.exit_code == 1 and "year" in no_year.output
    own = tmp_path / "mine.jinja"
    own.write_text("Review for {{ venue }}:\n{{ paper_text }}\n")
    shown = invoke(["prompts", "show", own, "--venue", "ICLR", "--year", "2024"])
    assert shown.exit_code == 0 and "Review for ICLR:" in shown.output
