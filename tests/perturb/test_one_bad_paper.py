"""One bad paper sinks nothing (issue 13, item 3): `praib counterfactual extract|build`, `praib perturb` with
an LLM kind and `praib meta-review` against a loopback OpenAI-compatible server on which every request
about one of three papers fails. The two other papers are finished and written, the failure is recorded
with its reason and named in the summary, the exit status is 3, and a rerun with the same cache sends
only the failed paper's requests. A run in which every paper fails is an error (exit 1, one line), and
`--max-failures 1` is the strict mode: the first failure stops the run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from praib.records import load_records
from tests.chat_server import ChatServer
from tests.runs import cached_answers, failures_of, invoke

PAPERS = ["P-101", "P-102", "P-103"]
BAD = "P-102"
MARKER = re.compile(r"\bP-10\d\b")
SHOWN = re.compile(r"^\[(p\d+)\] (.*)$", re.MULTILINE)
SERVER_ERROR = (500, {}, b"internal error")
NOT_JSON = "I am sorry, I cannot answer in JSON."
META_REVIEW = ("The reviewers agree that the evaluation is thorough.\n\nOverall score: 6\n\n"
               "Final decision: Accept as Poster")


def _paper(paper_id: str) -> dict:
    # Every paragraph names its paper, so that the server knows which paper any request is about.
    paragraphs = [
        f"We study sparse adapters for language models on the {paper_id} benchmark, where full fine-tuning is "
        "too costly for most labs and the adapters are trained on a single GPU.",
        f"Sparsity of the adapters correlates with accuracy on {paper_id}: the sparser adapters reach higher "
        "accuracy in all of our runs with five seeds each.",
        f"We conclude that sparse adapters generalise better than dense ones on {paper_id}, in the setting of "
        "small data and short training schedules.",
        f"Table 1 shows a gain of 2.1 points on {paper_id} over the dense adapter, averaged over five seeds with a "
        "standard deviation of 0.3 points.",
        f"The method is simple to implement on {paper_id} and adds no parameters at inference time, so that the "
        "model can be served as before.",
    ]
    return {"paper_id": paper_id, "venue": "ICLR", "year": 2025, "title": f"Sparse adapters ({paper_id})",
            "abstract": paragraphs[0], "text": "\n\n".join(paragraphs) + "\n"}


class OneBadPaperServer(ChatServer):
    """A judge and a meta-reviewer that answer every prompt of these commands; ``fault`` (a reply) is what
    the requests about the papers ``bad`` get instead: those of ``stages`` only (the JSON schemas' keys,
    "text" for free-text answers), all of them when ``stages`` is None."""

    def __init__(self):
        super().__init__(self._reply)
        self.bad, self.fault, self.stages = (BAD,), None, None

    def _reply(self, body):
        found = MARKER.search(body["messages"][-1]["content"])
        if self.fault is not None and found and found.group() in self.bad:
            if self.stages is None or _stage(body) in self.stages:
                return self.fault
        return _answer(body)

    def papers_asked(self, since: int = 0) -> list[str]:
        """The paper of every request from the ``since``-th on, in order (None when the prompt names none)."""
        return [(MARKER.search(b["messages"][-1]["content"]) or [None])[0] for b in self.bodies[since:]]


def _stage(body) -> str:
    properties = (body.get("structured_outputs") or {}).get("json", {}).get("properties", {})
    return next((key for key in ("goal", "claim_type", "edits", "relevant") if key in properties), "text")


def _answer(body) -> str:
    prompt = body["messages"][-1]["content"]
    stage = _stage(body)
    shown = SHOWN.findall(prompt)
    if stage == "goal":  # research logic: the finding in the second paragraph, its conclusion and result after it
        ids = [paragraph_id for paragraph_id, _ in shown]
        return json.dumps({
            "goal": {"summary": "Cheap fine-tuning with sparse adapters.", "paragraphs": [ids[0]]},
            "findings": [{"id": "F1", "summary": "Sparsity correlates with accuracy.", "paragraphs": [ids[1]],
                          "conclusions": ["C1"]}],
            "conclusions": [{"id": "C1", "summary": "Sparse adapters generalise better.", "paragraphs": [ids[2]],
                             "results": ["R1"]}],
            "results": [{"id": "R1", "summary": "A gain of 2.1 points.", "paragraphs": [ids[3]]}]})
    if stage == "claim_type":
        return json.dumps({"claim_type": "correlational", "edited_finding": "Sparsity causes higher accuracy."})
    if stage == "edits":
        return json.dumps({"reasoning": "The finding is stated once.", "edits": [
            {"paragraph": shown[0][0], "original": "correlates with", "replacement": "causes"}]})
    if stage == "relevant":
        return json.dumps({"relevant": True, "minimal": True, "plausible": True, "explanation": "One verb changed."})
    if body["model"] == "meta-model":
        return META_REVIEW
    # the voice edit: the paragraph with its active clauses made passive
    paragraph = prompt.rsplit("Paragraph:\n", 1)[1].strip()
    for active, passive in PASSIVE:
        paragraph = paragraph.replace(active, passive)
    return paragraph


PASSIVE = [("We study sparse adapters", "Sparse adapters are studied"),
           ("the sparser adapters reach higher accuracy", "higher accuracy is reached by the sparser adapters"),
           ("We conclude that", "It is concluded that"),
           ("Table 1 shows a gain of 2.1 points", "A gain of 2.1 points is shown in Table 1"),
           ("adds no parameters", "no parameters are added")]


@pytest.fixture
def server():
    s = OneBadPaperServer()
    yield s
    s.close()


@pytest.fixture
def papers(tmp_path) -> Path:
    path = tmp_path / "papers.jsonl"
    path.write_text("".join(json.dumps(_paper(paper_id)) + "\n" for paper_id in PAPERS))
    return path


@pytest.fixture
def reviews(tmp_path) -> Path:
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps({
        "review_id": f"{paper_id}-R{n}", "paper_id": paper_id, "venue": "ICLR", "year": 2025, "source": "human",
        "text": f"## Summary\nSparse adapters on {paper_id}.\n\n## Weaknesses\n- No ablation of the sparsity.\n\n"
                f"## Rating\n{5 + n}\n", "rating": 5 + n}) + "\n" for paper_id in PAPERS for n in (1, 2)))
    return path


def _judge(server, tmp_path) -> list[str]:
    return ["--judge", "judge-model", "--judge-backend", "openai", "--judge-base-url", server.url,
            "--judge-max-tries", "2", "--cache-dir", str(tmp_path / "cache"), "--no-progress"]


def extract(server, tmp_path, papers, *extra):
    return ["counterfactual", "extract", papers, "-o", tmp_path / "logic.jsonl", *_judge(server, tmp_path), *extra]


def build(server, tmp_path, papers, *extra):
    return ["counterfactual", "build", papers, "-o", tmp_path / "variants.jsonl", "--edits",
            "finding,whitespace,voice", *_judge(server, tmp_path), *extra]


def perturb(server, tmp_path, papers, *extra):
    return ["perturb", "voice", papers, "-o", tmp_path / "voiced.jsonl", *_judge(server, tmp_path), *extra]


def meta_review(server, tmp_path, papers, reviews, *extra):
    return ["meta-review", "meta-model", papers, reviews, "--backend", "openai", "--base-url", server.url,
            "--max-tries", "2", "-o", tmp_path / "meta.jsonl", "--cache-dir", tmp_path / "cache", "--no-progress",
            *extra]


def paper_ids(path: Path) -> list[str]:
    return [json.loads(line)["paper_id"] for line in path.read_text().splitlines()]


def test_extract_records_the_paper_whose_server_fails_and_the_rerun_sends_only_its_requests(
        tmp_path, server, papers):
    server.fault = SERVER_ERROR
    out = tmp_path / "logic.jsonl"
    first = invoke(extract(server, tmp_path, papers))
    assert first.exit_code == 3, first.output
    assert "extracted the research logic of 2 of 3 papers; failed: P-102; wrote" in first.output
    assert sorted(paper_ids(out)) == ["P-101", "P-103"]
    [failure] = failures_of(out)
    assert (failure["item_id"], failure["stage"], failure["error"], failure["raw"]) == (
        "P-102", "counterfactual:logic", "ServerError", None)
    assert failure["message"].startswith("the research logic is missing after 2 attempt(s): HTTP 500 from ")

    server.fault = None  # the server is mended: the rerun asks for P-102's extraction and refinement only
    sent = len(server.bodies)
    again = invoke(extract(server, tmp_path, papers))
    assert again.exit_code == 0, again.output
    assert server.papers_asked(since=sent) == ["P-102", "P-102"]
    assert sorted(paper_ids(out)) == PAPERS and failures_of(out) == []


def _kinds(path: Path) -> dict[str, list[str]]:
    kinds: dict[str, list[str]] = {}
    for row in load_records(path, "paper").to_list():
        kinds.setdefault(row["perturbation"]["kind"], []).append(row["paper_id"])
    return {kind: sorted(ids) for kind, ids in kinds.items()}


def test_build_goes_on_past_a_logic_that_is_not_json_and_writes_every_neutral_variant(tmp_path, server, papers):
    # The case: one paper's logic extraction answers no JSON, on every try.
    server.fault, server.stages = NOT_JSON, {"goal"}
    out = tmp_path / "variants.jsonl"
    first = invoke(build(server, tmp_path, papers))
    assert first.exit_code == 3, first.output
    assert "2 soundness-critical and 6 soundness-neutral variants; attempts: 2 accepted; failed: P-102" \
        in first.output
    assert _kinds(out) == {"finding-causal": ["P-101", "P-103"], "whitespace": PAPERS, "voice": PAPERS}
    assert paper_ids(tmp_path / "variants.logic.jsonl") == ["P-101", "P-103"]
    [failure] = failures_of(out)
    assert failure == {"item_id": "P-102", "stage": "counterfactual:logic", "error": "UnreadableAnswer",
                       "message": "the research logic is invalid after 2 attempt(s): the answer is not a JSON object",
                       "tries": 2, "raw": NOT_JSON}

    # Answers that arrived, the unreadable one included, are in the cache: the rerun asks nothing.
    sent = len(server.bodies)
    again = invoke(build(server, tmp_path, papers))
    assert again.exit_code == 3 and len(server.bodies) == sent
    assert _kinds(out) == {"finding-causal": ["P-101", "P-103"], "whitespace": PAPERS, "voice": PAPERS}


def test_build_records_the_paper_whose_server_fails_and_the_rerun_sends_only_its_requests(
        tmp_path, server, papers):
    server.fault, server.stages = SERVER_ERROR, {"goal"}
    out = tmp_path / "variants.jsonl"
    first = invoke(build(server, tmp_path, papers))
    assert first.exit_code == 3, first.output
    assert "failed: P-102" in first.output
    assert _kinds(out) == {"finding-causal": ["P-101", "P-103"], "whitespace": PAPERS, "voice": PAPERS}
    assert [(f["item_id"], f["error"]) for f in failures_of(out)] == [("P-102", "ServerError")]

    server.fault = None
    sent = len(server.bodies)
    again = invoke(build(server, tmp_path, papers))
    assert again.exit_code == 0, again.output
    # P-102's extraction, refinement, finding edit and projection; its verdict's prompt shows the edit, not
    # the paper, and is the one the other papers' identical edits were judged with: it comes from the cache
    assert server.papers_asked(since=sent) == ["P-102"] * 4
    assert _kinds(out) == {"finding-causal": PAPERS, "whitespace": PAPERS, "voice": PAPERS}
    assert failures_of(out) == []


def test_build_with_the_logic_of_a_partial_extract_extracts_the_missing_paper(tmp_path, server, papers):
    server.fault, server.stages = SERVER_ERROR, {"goal"}
    assert invoke(extract(server, tmp_path, papers)).exit_code == 3
    server.fault = None
    sent = len(server.bodies)
    result = invoke(build(server, tmp_path, papers, "--logic", tmp_path / "logic.jsonl", "--edits", "finding"))
    assert result.exit_code == 0, result.output
    assert server.papers_asked(since=sent).count("P-102") == 4  # its extraction and refinement, edit, projection
    assert sorted(paper_ids(tmp_path / "variants.logic.jsonl")) == PAPERS
    assert _kinds(tmp_path / "variants.jsonl") == {"finding-causal": PAPERS}


def test_perturb_leaves_out_the_paper_whose_server_fails_and_the_rerun_sends_only_its_requests(
        tmp_path, server, papers):
    server.fault = SERVER_ERROR
    out = tmp_path / "voiced.jsonl"
    first = invoke(perturb(server, tmp_path, papers))
    assert first.exit_code == 3, first.output
    assert "voice: 2 of 3 paper records changed; 1 left out (no usable LLM answer: P-102); LLM edits: voice:" in first.output
    assert paper_ids(out) == ["P-101", "P-103"]
    failures = failures_of(out)
    assert failures and all(f["item_id"].startswith("P-102/paragraph at ") and f["error"] == "ServerError"
                            and f["stage"] == "perturb:paper_voice" for f in failures)

    server.fault = None
    sent = len(server.bodies)
    again = invoke(perturb(server, tmp_path, papers))
    assert again.exit_code == 0, again.output
    assert server.papers_asked(since=sent) == ["P-102"] * len(failures)  # one request per failed paragraph
    assert paper_ids(out) == PAPERS and failures_of(out) == []


def test_meta_review_records_the_paper_whose_server_fails_and_the_rerun_sends_only_its_request(
        tmp_path, server, papers, reviews):
    server.fault = SERVER_ERROR
    out = tmp_path / "meta.jsonl"
    first = invoke(meta_review(server, tmp_path, papers, reviews))
    assert first.exit_code == 3, first.output
    assert "2 meta-reviews (0 from cache, 3 generated now)" in first.output
    assert "; failed: P-102; wrote" in first.output
    rows = load_records(out, "meta_review").to_list()
    assert [(r["paper_id"], r["rating"], r["recommendation"]) for r in rows] == [
        ("P-101", 6, "Accept as Poster"), ("P-103", 6, "Accept as Poster")]
    [failure] = failures_of(out)
    assert (failure["item_id"], failure["stage"], failure["error"], failure["tries"]) == (
        "P-102", "meta-review:meta_review_score", "ServerError", 2)
    assert cached_answers(tmp_path / "cache") == 2

    server.fault = None
    sent = len(server.bodies)
    again = invoke(meta_review(server, tmp_path, papers, reviews))
    assert again.exit_code == 0, again.output
    assert server.papers_asked(since=sent) == ["P-102"]
    assert sorted(paper_ids(out)) == PAPERS and failures_of(out) == []


def test_meta_review_names_the_paper_whose_perturbation_failed(tmp_path, server, papers, reviews):
    server.fault = SERVER_ERROR
    result = invoke(meta_review(server, tmp_path, papers, reviews, "--perturb-component", "paper",
                                "--perturbation", "voice", "--judge", "judge-model", "--judge-backend", "openai",
                                "--judge-base-url", server.url, "--judge-max-tries", "2"))
    assert result.exit_code == 3, result.output
    assert "2 meta-reviews" in result.output and "; failed: P-102; wrote" in result.output
    assert paper_ids(tmp_path / "meta.jsonl") == ["P-101", "P-103"]


@pytest.mark.parametrize("command, fault, said", [
    (extract, NOT_JSON, "Error: no research logic extracted: every item failed (3 failed items (3 UnreadableAnswer); "
                        "first: P-101: UnreadableAnswer: the research logic is invalid"),
    (build, NOT_JSON, "Error: no variant written: every item failed (3 failed items (3 UnreadableAnswer); first: "
                      "P-101: UnreadableAnswer: the research logic is invalid"),
    (perturb, SERVER_ERROR, "Error: stopped: none of the "),
    (meta_review, SERVER_ERROR, "Error: stopped: none of the 3 requests got an answer; is the server up?"),
], ids=["extract", "build", "perturb", "meta-review"])
def test_a_run_in_which_every_paper_fails_is_an_error_of_one_line(tmp_path, server, papers, reviews, command, fault,
                                                                  said):
    server.bad, server.fault = tuple(PAPERS), fault
    args = command(server, tmp_path, papers, reviews) if command is meta_review else command(server, tmp_path, papers)
    if command is build:
        args += ["--edits", "finding"]  # no rule-based edit that would make something all the same
    result = invoke(args)
    assert result.exit_code == 1, result.output
    # one line of error (a library's warning about what it left out may come before it)
    lines = result.output.splitlines()
    assert lines[-1].startswith(said) and sum(line.startswith("Error:") for line in lines) == 1, result.output
    output = Path(args[args.index("-o") + 1])
    assert {f["item_id"].split("/")[0] for f in failures_of(output)} == set(PAPERS)
    assert not output.exists()


def test_a_build_whose_every_logic_fails_still_writes_the_neutral_variants(tmp_path, server, papers):
    server.bad, server.fault, server.stages = tuple(PAPERS), NOT_JSON, {"goal"}
    result = invoke(build(server, tmp_path, papers, "--edits", "finding,whitespace"))
    assert result.exit_code == 3, result.output
    assert "0 soundness-critical and 3 soundness-neutral variants; attempts: no attempts; failed: P-101, P-102, " \
           "P-103" in result.output
    assert _kinds(tmp_path / "variants.jsonl") == {"whitespace": PAPERS}


@pytest.mark.parametrize("command", [extract, build, perturb, meta_review],
                         ids=["extract", "build", "perturb", "meta-review"])
def test_max_failures_1_is_the_strict_mode_the_first_failure_stops_the_run(tmp_path, server, papers, reviews,
                                                                           command):
    server.fault = SERVER_ERROR
    args = command(server, tmp_path, papers, reviews) if command is meta_review else command(server, tmp_path, papers)
    result = invoke([*args, "--max-failures", "1"])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: stopped: 1 item failed (--max-failures 1) (last: P-102")
    output = Path(args[args.index("-o") + 1])
    assert failures_of(output)[0]["item_id"].startswith("P-102")
    assert not output.exists()
