import pytest

from praib.llm.failures import CallFailure, FailureLog
from praib.llm.judge import Answer, Judge
from tests.doubles import StubBackend


@pytest.fixture
def template(tmp_path):
    path = tmp_path / "verdict.jinja"
    path.write_text("Is this review about maths?\n{{ review }}\n")
    return path


def test_choose_sends_constrained_deterministic_requests_and_maps_loose_answers(template):
    backend = StubBackend(["yes", " No.", "I think yes", "maybe"])
    judge = Judge(backend)
    answers = judge.choose(template, [{"review": f"r{i}"} for i in range(4)], ["yes", "no"], ids=["a", "b", "c", "d"])
    assert [a.value for a in answers] == ["yes", "no", "yes", None]
    assert answers[3] == Answer(None, "maybe", "UnreadableAnswer", "the answer 'maybe' is none of: yes, no")
    # the unreadable answer is a failed item of the run, named by its id, with what the model said
    [failed] = judge.failures.items
    assert (failed.item_id, failed.stage, failed.error, failed.raw) == ("d", "judge:verdict", "UnreadableAnswer", "maybe")
    first = backend.requests[0]
    assert first.choices == ("yes", "no") and first.sampling.temperature == 0.0
    assert first.messages == (("user", "Is this review about maths?\nr0\n"),)
    assert first.template == "judge:verdict"


def test_json_answers_are_decoded_or_none(template):
    backend = StubBackend(['{"strengths": ["a"], "weaknesses": []}', '```json\n[1, 2]\n```', "no json here"])
    answers = Judge(backend).json(template, [{"review": "x"}] * 3, {"type": "object"})
    assert [a.value for a in answers] == [{"strengths": ["a"], "weaknesses": []}, [1, 2], None]
    assert answers[2].reason == "the answer is not JSON: 'no json here'"
    assert backend.requests[0].json_schema == '{"type":"object"}'


def test_text_answers_are_free_and_keyed_by_the_stage_label(template):
    backend = StubBackend(["An edit.", "Another."])
    judge = Judge(backend)
    answers = judge.text(template, [{"review": "a"}, {"review": "b"}], label="perturb:verdict")
    assert [a.value for a in answers] == ["An edit.", "Another."] and all(a.ok for a in answers)
    first = backend.requests[0]
    assert (first.template, first.choices, first.json_schema) == ("perturb:verdict", None, None)
    assert first.messages == (("user", "Is this review about maths?\na\n"),)
    judge.text(template, [{"review": "c"}])
    assert backend.requests[-1].template == "judge:verdict"
    assert judge.text(template, []) == [] and len(backend.requests) == 3


def test_missing_variable_and_unknown_template_are_clear_errors(template):
    judge = Judge(StubBackend(["x"]))
    with pytest.raises(ValueError, match="'review' is undefined"):
        judge.render(template)
    with pytest.raises(ValueError, match="no judge template 'nope'"):
        judge.render("nope")


def test_describe_records_the_judge_and_its_parameters():
    assert Judge(StubBackend(["x"])).describe() == {
        "backend": "stub", "model": "stub-judge", "model_revision": "rev1", "temperature": 0.0, "top_p": 1.0,
        "max_new_tokens": 512, "seed": 0}


def test_json_parse_refusal_and_call_failures_carry_their_reason_and_the_others_go_on(template):
    def parse(value):
        if "verdict" not in value:
            raise ValueError("no verdict")
        return value["verdict"]

    failure = CallFailure("ServerError", "HTTP 500 from http://x/v1/chat/completions: b'down' (after 5 tries)", 5)
    backend = StubBackend(['{"verdict": "yes"}', failure, '{"other": 1}'])
    judge = Judge(backend, failures=FailureLog())
    answers = judge.json(template, [{"review": r} for r in "abc"], {"type": "object"}, ids=["r1", "r2", "r3"],
                         parse=parse)
    assert answers == [Answer("yes", '{"verdict": "yes"}'),
                       Answer(None, None, "ServerError", failure.message),
                       Answer(None, '{"other": 1}', "UnreadableAnswer", "no verdict")]
    assert [(f.item_id, f.error, f.tries) for f in judge.failures.items] == [("r2", "ServerError", 5),
                                                                          ("r3", "UnreadableAnswer", 1)]
    assert judge.failures.tried == 3


def test_intermediate_steps_are_left_to_the_caller(template):
    judge = Judge(StubBackend(["not json"]))
    [answer] = judge.json(template, [{"review": "a"}], {"type": "object"}, final=False)
    assert not answer.ok and judge.failures.items == [] and judge.failures.tried == 0


def test_a_prompt_the_judges_context_cannot_hold_is_a_failed_item_never_sent(template, tiny_model_dir):
    from transformers import AutoTokenizer

    backend = StubBackend(['{"verdict": "yes"}'])
    backend.tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    short, long = "A review.", "A review that goes on and on. " * 40
    counts = [len(backend.tokenizer.apply_chat_template(
        [{"role": "user", "content": f"Is this review about maths?\n{text}\n"}], add_generation_prompt=True,
        tokenize=True, return_dict=True)["input_ids"]) for text in (short, long)]
    backend.context_length = counts[0] + 512  # the judge's answer gets 512 tokens: the short prompt fits exactly
    judge = Judge(backend)
    answers = judge.json(template, [{"review": short}, {"review": long}], {"type": "object"}, ids=["r1", "r2"])
    assert answers[0].value == {"verdict": "yes"}
    assert answers[1] == Answer(None, None, "PromptTooLong",
                                f"the prompt takes {counts[1]} tokens and the answer up to 512: {counts[1] + 512} > "
                                f"the model's context of {counts[0] + 512} tokens")
    assert len(backend.requests) == 1  # never sent
    [failed] = judge.failures.items
    assert (failed.item_id, failed.error, failed.tries) == ("r2", "PromptTooLong", 0)


def test_a_judge_template_can_be_replaced_by_name_and_the_results_say_so(tmp_path):
    pair = {"base": "The baselines are weak.", "target": "Stronger baselines are needed."}
    default = Judge(StubBackend(["yes"])).render("coverage", **pair)
    # The paper's coverage criterion (Appendix J) by default; the stricter one on request.
    assert "substantive piece of information from the base text" in default and "wording" not in default
    strict = Judge(StubBackend(["yes"]), templates={"coverage": "coverage_strict"})
    assert "Shared wording alone does not count" in strict.render("coverage", **pair)
    assert strict.describe()["templates"] == {"coverage": "coverage_strict"}
    own = tmp_path / "mine.jinja"
    own.write_text("Same point? {{ base }} / {{ target }}")
    assert Judge(StubBackend(["yes"]), templates={"coverage": own}).render("coverage", **pair) == (
        "Same point? The baselines are weak. / Stronger baselines are needed.")
    with pytest.raises(ValueError, match="no judge template 'covrage' to replace"):
        Judge(StubBackend(["yes"]), templates={"covrage": "coverage_strict"})
    with pytest.raises(ValueError, match="no judge template 'nope'"):
        Judge(StubBackend(["yes"]), templates={"coverage": "nope"})
