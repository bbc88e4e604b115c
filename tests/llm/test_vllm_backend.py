"""The vLLM backend against a stand-in engine (the default run has no vLLM): answers reported as each
request finishes, a refused prompt failing alone, a cut JSON answer asked again with more room, the
context budget, and an engine shut down when the command that opened it ends, however it ends."""

from __future__ import annotations

import json
import sys
import types

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.llm.backends import GenerationRequest, SamplingConfig, make_backend
from praib.llm.failures import CallFailure
from praib.records import load_records

SCHEMA = json.dumps({"type": "object", "properties": {"verdict": {"type": "string"}}}, separators=(",", ":"))


class Recorder:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


class Engine:
    """``LLM.llm_engine``: finishes the queued requests in reverse order, one a step."""

    def __init__(self, llm):
        self.llm, self.queue, self.aborted = llm, [], []

    def has_unfinished_requests(self):
        return bool(self.queue)

    def step(self):
        if self.llm.fail_on_step is not None:
            raise self.llm.fail_on_step
        request_id, conversation, params = self.queue.pop()
        prompt = conversation[-1]["content"]
        answer, reason = self.llm.answer(prompt, params.kwargs)
        completion = types.SimpleNamespace(text=answer, finish_reason=reason)
        return [types.SimpleNamespace(request_id=request_id, finished=True, outputs=[completion],
                                      prompt_token_ids=[0] * len(prompt.split()))]

    def abort_request(self, request_ids):
        self.aborted.extend(request_ids)
        self.queue.clear()


class LLM:
    """A stand-in for ``vllm.LLM`` with the API the backend uses (vLLM >= 0.30)."""

    made: list = []
    refuse = "REFUSE"  # a prompt holding this word is refused at enqueue (too long, say)

    def __init__(self, model, structured_outputs_config=None, max_model_len=4096, **kwargs):
        self.model, self.kwargs = model, kwargs
        self.structured_outputs_config = structured_outputs_config
        self.model_config = types.SimpleNamespace(max_model_len=max_model_len)
        self.llm_engine = Engine(self)
        self.llm_engine.engine_core = types.SimpleNamespace(shutdown=self._shutdown)
        self.counter, self.shut_down, self.fail_on_step, self.sent = 0, 0, None, []
        self.answer = lambda prompt, params: (f"answer to {prompt}", "stop")
        LLM.made.append(self)

    def _shutdown(self):
        self.shut_down += 1

    def enqueue_chat(self, conversations, params, use_tqdm=True):
        [conversation] = conversations
        if self.refuse in conversation[-1]["content"]:
            raise ValueError("This model's maximum context length is 4096 tokens")
        self.counter += 1
        self.sent.append(conversation)
        self.llm_engine.queue.append((str(self.counter), conversation, params))
        return [f"{self.counter}-1a2b3c4d"]  # the internal id of vLLM >= 0.30


@pytest.fixture
def vllm(monkeypatch):
    module = types.SimpleNamespace(SamplingParams=type("SamplingParams", (Recorder,), {}), LLM=LLM,
                                   sampling_params=types.SimpleNamespace(
                                       StructuredOutputsParams=type("StructuredOutputsParams", (Recorder,), {})))
    LLM.made = []
    monkeypatch.setitem(sys.modules, "vllm", module)
    return module


def request(text, **constraint):
    return GenerationRequest(messages=(("user", text),), sampling=SamplingConfig(max_new_tokens=50), **constraint)


def test_each_answer_is_reported_the_moment_the_engine_finishes_it(vllm):
    backend = make_backend("vllm", "m")
    seen = []
    replies = backend.generate([request("a"), request("b"), request("c")], on_answer=lambda i, r: seen.append(i))
    assert replies == ["answer to a", "answer to b", "answer to c"]
    assert seen == [2, 1, 0]  # the engine finished them last first


def test_a_prompt_the_engine_refuses_fails_alone(vllm):
    replies = make_backend("vllm", "m").generate([request("a"), request("REFUSE b"), request("c")])
    assert replies[0] == "answer to a" and replies[2] == "answer to c"
    assert isinstance(replies[1], CallFailure) and replies[1].error == "BackendException"
    assert "maximum context length" in replies[1].message


def test_a_json_answer_cut_at_its_limit_is_asked_again_with_twice_the_limit(vllm):
    backend = make_backend("vllm", "m")
    limits = []

    def answer(prompt, params):
        limits.append(params["max_tokens"])
        return ('{"verdict":"ye', "length") if len(limits) == 1 else ('{"verdict":"yes"}', "stop")

    backend.llm.answer = answer
    assert backend.generate([request("judge", json_schema=SCHEMA)]) == ['{"verdict":"yes"}']
    assert limits == [50, 100]
    # free text cut at its limit is an answer as it is
    limits.clear()
    backend.llm.answer = lambda prompt, params: (limits.append(params["max_tokens"]) or "a long review", "length")
    assert backend.generate([request("review")]) == ["a long review"] and limits == [50]


def test_compact_json_is_the_engine_default_where_vllm_has_the_setting(vllm, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "xgrammar" else real(name, *a))
    assert make_backend("vllm", "m").llm.structured_outputs_config == {"backend": "xgrammar",
                                                                      "disable_any_whitespace": True}
    mine = {"backend": "guidance", "disable_any_whitespace": True}
    assert make_backend("vllm", "m", structured_outputs_config=mine).llm.structured_outputs_config == mine


def test_the_context_is_the_engines_and_close_shuts_it_down_once(vllm):
    with make_backend("vllm", "m", max_model_len=1234) as backend:
        assert backend.context_length == 1234
        engine = backend.llm
    assert engine.shut_down == 1
    backend.close()
    assert engine.shut_down == 1


@pytest.fixture
def papers(tmp_path):
    path = tmp_path / "papers.jsonl"
    rows = [{"paper_id": f"p{i}", "venue": "ICLR", "year": 2025, "title": f"Paper {i}",
             "text": f"# Paper {i}\n\n" + "We study sparse adapters. " * (40 if i == 2 else 5)} for i in (1, 2, 3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def generate(tmp_path, papers, *extra):
    return CliRunner().invoke(main, ["generate", "m", str(papers), "--backend", "vllm", "--prompt", "guidelines",
                                     "-o", str(tmp_path / "reviews.jsonl"), "--cache-dir", str(tmp_path / "cache"),
                                     "--no-progress", *extra])


@pytest.mark.parametrize("fault, status", [(None, 0), (RuntimeError("the engine died"), 1), (KeyboardInterrupt(), 130)],
                         ids=["success", "error", "ctrl-c"])
def test_every_command_shuts_the_engine_down_however_it_ends(tmp_path, vllm, papers, monkeypatch, fault, status):
    original = LLM.__init__

    def failing(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.fail_on_step = fault

    monkeypatch.setattr(LLM, "__init__", failing)
    result = generate(tmp_path, papers)
    assert result.exit_code == status, result.output
    assert [llm.shut_down for llm in LLM.made] == [1]


def test_the_judge_engine_is_shut_down_too(tmp_path, vllm):
    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text(json.dumps({"review_id": "r1", "paper_id": "p1", "source": "human",
                                   "text": "The proof of Lemma 2 is wrong."}) + "\n")
    result = CliRunner().invoke(main, ["score", str(reviews), "--judge", "j", "--judge-backend", "vllm",
                                       "--judge-engine-arg", "max_model_len=4096", "-o", str(tmp_path / "j.jsonl"),
                                       "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    assert result.exit_code == 3, result.output  # the stand-in's answers are no JSON
    [judge] = LLM.made
    assert judge.shut_down == 1 and judge.model_config.max_model_len == 4096


def test_papers_are_cut_to_the_context_and_a_prompt_that_cannot_fit_is_a_failed_item(tmp_path, vllm, papers,
                                                                                     tiny_model_dir, monkeypatch):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    monkeypatch.setattr(LLM, "get_tokenizer", lambda self: tokenizer, raising=False)
    from praib.generation.prompts import load_prompt

    def tokens(conversation):
        return len(tokenizer.apply_chat_template(conversation, add_generation_prompt=True, tokenize=True,
                                                 return_dict=True)["input_ids"])

    bare = tokens(load_prompt("guidelines").render(paper_text=".", venue="ICLR", year=2025))
    sizes = [len(tokenizer(row["text"], add_special_tokens=False)["input_ids"]) for row in load_records(papers, "paper")]
    room = max(sizes[0], sizes[2]) + 10  # papers 1 and 3 fit, paper 2 (eight times longer) is cut
    context, answer = bare + room + 40, 40
    result = generate(tmp_path, papers, "--engine-arg", f"max_model_len={context}", "--max-new-tokens", str(answer))
    assert result.exit_code == 0, result.output
    records = {r["paper_id"]: r for r in load_records(tmp_path / "reviews.jsonl").to_list()}
    assert [records[p]["generation"]["paper_truncated"] for p in ("p1", "p2", "p3")] == [False, True, False]
    assert records["p2"]["generation"]["paper_tokens"] <= room < sizes[1]
    [engine] = LLM.made
    assert len(engine.sent) == 3 and engine.shut_down == 1
    for conversation in engine.sent:  # every prompt sent fits with its answer
        assert tokens(conversation) + answer <= context

    result = generate(tmp_path, papers, "--engine-arg", f"max_model_len={bare + 30}", "--max-new-tokens", str(answer))
    assert result.exit_code == 3, result.output  # the run ends with every paper recorded as failed
    failures = [json.loads(line) for line in (tmp_path / "reviews.jsonl.failures.jsonl").read_text().splitlines()]
    assert [f["error"] for f in failures] == ["PromptTooLong"] * 3
    assert failures[0]["message"] == (f"the prompt without the paper takes {bare} tokens and the answer up to "
                                      f"{answer}: {bare + answer} > the model's context of {bare + 30} tokens")
