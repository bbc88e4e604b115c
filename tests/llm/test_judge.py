import pytest

from praib.llm.judge import Judge
from tests.doubles import StubBackend


@pytest.fixture
def template(tmp_path):
    path = tmp_path / "verdict.jinja"
    path.write_text("Is this review about maths?\n{{ review }}\n")
    return path


def test_choose_sends_constrained_deterministic_requests_and_maps_loose_answers(template):
    backend = StubBackend(["yes", " No.", "I think yes", "maybe"])
    answers = Judge(backend).choose(template, [{"review": f"r{i}"} for i in range(4)], ["yes", "no"])
    assert answers == ["yes", "no", "yes", "maybe"]  # an answer outside the set is returned for counting
    first = backend.requests[0]
    assert first.choices == ("yes", "no") and first.sampling.temperature == 0.0
    assert first.messages == (("user", "Is this review about maths?\nr0\n"),)
    assert first.template == "judge:verdict"


def test_json_answers_are_decoded_or_none(template):
    backend = StubBackend(['{"strengths": ["a"], "weaknesses": []}', '```json\n[1, 2]\n```', "no json here"])
    answers = Judge(backend).json(template, [{"review": "x"}] * 3, {"type": "object"})
    assert answers == [{"strengths": ["a"], "weaknesses": []}, [1, 2], None]
    assert backend.requests[0].json_schema == '{"type":"object"}'


def test_text_answers_are_free_and_keyed_by_the_stage_label(template):
    backend = StubBackend(["An edit.", "Another."])
    judge = Judge(backend)
    assert judge.text(template, [{"review": "a"}, {"review": "b"}], label="perturb:verdict") == ["An edit.", "Another."]
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
