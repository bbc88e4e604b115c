"""A stub judge whose answers depend on the judge template and the text it is shown, so that every judged
number is known by hand (the evaluation and the leaderboard tests share it)."""

import json

from tests.doubles import StubBackend

HUMAN = "HUMAN REVIEW. The loss in Eq. (3) is wrong. Strengths: clear. Weaknesses: small data; no ablation."
MODEL = ("**Summary:** A method.\n**Strengths:** clear writing.\n**Weaknesses:** small data.\n"
         "**Rating:** 3\n**Confidence:** 4\nFinal judgement: Reject")


def predictable_answer(request):
    """Answers like a perfectly predictable judge."""
    template, prompt = request.template, request.messages[-1][1]
    if template == "judge:math_engagement":
        return json.dumps({"rationale": "r", "verdict": "yes" if "HUMAN REVIEW" in prompt else "no"})
    if template == "judge:atomic_human":
        return json.dumps({"strengths": ["hs1 clear"], "weaknesses": ["hw1 small data", "hw2 no ablation"]})
    if template == "judge:atomic_generated":
        return json.dumps({"strengths": ["gs1 clear writing"], "weaknesses": ["gw1 small data"]})
    if template == "judge:coverage":
        covered = ("hw1" in prompt and "gw1" in prompt) or ("hs1" in prompt and "gs1" in prompt)
        return "yes" if covered else "no"
    if template.startswith("judge:target_"):
        return "Method"
    if template.startswith("judge:aspect_"):
        return "Validity"
    raise AssertionError(f"unexpected judge template {template}")


def predictable_judge(answer=predictable_answer, **options):
    return StubBackend(answer, model_revision=None, **options)
