"""`praib evaluate --judge` and `praib score` print every judged metric with its judge's stored validation (or
"judge not validated") and a second judge's agreement beside it, and write them to their outputs. Stub judges
made through the real backend factory and call cache; validations stored by hand, and one end to end through
`praib judge validate` on a gold set the test writes."""

import json

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.metrics.judged.validation import store_validation
from tests.doubles import StubBackend
from tests.evaluation.predictable_judge import HUMAN, MODEL, predictable_answer
from tests.evaluation.stored_validation import SUMMARY, hand_made_validation

NOT_VALIDATED = "judge not validated (run `praib judge validate --task {} ...`)"
MATH_LINE = "  Math, P(+|+), P(+|-) (math_engagement): "
COVERAGE_LINE = "  Cov. S/W (coverage_*): "


def finds_maths_everywhere(request):
    if request.template == "judge:math_engagement":
        return json.dumps({"rationale": "r", "verdict": "yes"})
    return predictable_answer(request)


@pytest.fixture
def judges(monkeypatch):
    """Every judge model the commands make is a stub: "second-judge" finds maths in every review."""
    made = {}

    def make_backend(kind, model, **options):
        made[model] = StubBackend(finds_maths_everywhere if model == "second-judge" else predictable_answer,
                                  model=model, model_revision=None)
        return made[model]

    monkeypatch.setattr("praib.llm.judge.make_backend", make_backend)
    return made


@pytest.fixture
def reviews(tmp_path):
    common = {"paper_id": "p1", "venue": "ICLR", "year": 2025, "decision": "Reject"}
    rows = [{**common, "review_id": "h1", "source": "human", "text": HUMAN, "rating": 3},
            {**common, "review_id": "m1", "source": "lm", "model": "lm", "prompt": "guidelines", "text": MODEL}]
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def run(*args):
    return CliRunner().invoke(main, [*map(str, args), "--no-progress"])


def line(output, start):
    return next(text for text in output.splitlines() if text.startswith(start))


def test_evaluate_prints_and_writes_the_judges_validation(judges, reviews, tmp_path):
    cache = tmp_path / "cache"
    store_validation(hand_made_validation("math"), cache)
    store_validation(hand_made_validation("coverage", model="other-judge"), cache)
    out = tmp_path / "results.json"
    result = run("evaluate", reviews, "--judge", "stub-judge", "--cache-dir", cache, "-o", out)
    assert result.exit_code == 0, result.output
    assert line(result.stdout, MATH_LINE) == MATH_LINE + SUMMARY["math"]
    assert line(result.stdout, COVERAGE_LINE) == COVERAGE_LINE + NOT_VALIDATED.format("coverage")
    assert "  rejection_rate: needs no judge" in result.stdout
    validation = json.loads(out.read_text())["judge_validation"]
    assert validation["math"]["summary"] == SUMMARY["math"] and validation["math"]["gold"] == "gold-math.jsonl"
    assert {task for task, entry in validation.items() if entry is None} == {"coverage", "target", "aspect", "atomic"}

    # The coverage validation belongs to other-judge: with it as the judge, only coverage is validated.
    other = run("evaluate", reviews, "--judge", "other-judge", "--cache-dir", cache, "-o", out)
    assert line(other.stdout, COVERAGE_LINE) == COVERAGE_LINE + SUMMARY["coverage"]
    assert line(other.stdout, MATH_LINE) == MATH_LINE + NOT_VALIDATED.format("math")


def test_a_judge_template_replacement_is_not_the_validated_judge(judges, reviews, tmp_path):
    cache = tmp_path / "cache"
    store_validation(hand_made_validation("coverage"), cache)
    result = run("evaluate", reviews, "--judge", "stub-judge", "--cache-dir", cache,
                 "--judge-template", "coverage=coverage_strict")
    assert result.exit_code == 0, result.output
    assert line(result.stdout, COVERAGE_LINE) == COVERAGE_LINE + NOT_VALIDATED.format("coverage")
    plain = run("evaluate", reviews, "--judge", "stub-judge", "--cache-dir", cache)
    assert line(plain.stdout, COVERAGE_LINE) == COVERAGE_LINE + SUMMARY["coverage"]


def test_evaluate_puts_the_second_judges_agreement_beside_the_validation(judges, reviews, tmp_path):
    cache = tmp_path / "cache"
    store_validation(hand_made_validation("math"), cache)
    result = run("evaluate", reviews, "--judge", "stub-judge", "--second-judge", "second-judge", "--cache-dir",
                 cache)
    assert result.exit_code == 0, result.output
    # Math: the first judge says (yes, no), the second (yes, yes): agreement 1/2, p_e = 1/2 -> kappa 0.
    assert line(result.stdout, MATH_LINE) == (MATH_LINE + SUMMARY["math"] + "; second judge second-judge: "
                                              "math engagement: κ 0.00, agreement 0.50 (n 2)")
    # Both judges answer every coverage pair alike, "yes" to 2 of the 3: kappa 1.
    assert line(result.stdout, COVERAGE_LINE).endswith("second judge second-judge: coverage pairs: κ 1.00, "
                                                       "agreement 1.00 (n 3)")


def test_score_prints_the_lines_on_stderr_and_writes_them_beside_the_judgements(judges, reviews, tmp_path):
    cache = tmp_path / "cache"
    store_validation(hand_made_validation("math"), cache)
    store_validation(hand_made_validation("aspect"), cache)
    out = tmp_path / "judgements.jsonl"
    result = run("score", reviews, "--judge", "stub-judge", "--second-judge", "second-judge", "--cache-dir", cache,
                 "-o", out)
    assert result.exit_code == 0, result.output
    assert MATH_LINE not in result.stdout
    assert line(result.stderr, MATH_LINE) == (MATH_LINE + SUMMARY["math"] + "; second judge second-judge: "
                                              "math engagement: κ 0.00, agreement 0.50 (n 2)")
    assert line(result.stderr, "  T/A F1").startswith(
        f"  T/A F1 (target_aspect_*): target: {NOT_VALIDATED.format('target')}; aspect: {SUMMARY['aspect']}; "
        "second judge second-judge: target strength: κ undefined (one label is all there is), agreement 1.00 (n 2)")
    assert result.stdout.strip().endswith(f"wrote {out} and judgements.jsonl.judge.json")
    sidecar = json.loads((tmp_path / "judgements.jsonl.judge.json").read_text())
    assert sidecar["judge"]["model"] == "stub-judge"
    assert sidecar["judge_validation"]["math"]["summary"] == SUMMARY["math"]
    assert sidecar["judge_validation"]["coverage"] is None
    assert sidecar["second_judge"]["judge"]["model"] == "second-judge"
    assert sidecar["second_judge"]["math_engagement"]["agreement"] == 0.5
    # Without --second-judge the sidecar says so.
    again = run("score", reviews, "--judge", "stub-judge", "--cache-dir", cache, "-o", out)
    assert json.loads((tmp_path / "judgements.jsonl.judge.json").read_text())["second_judge"] is None
    assert "second judge" not in again.stderr


def test_a_judge_validated_through_the_command_is_found_by_evaluate(judges, reviews, tmp_path):
    # Four math items; the judge finds maths where it reads "HUMAN REVIEW": right on r1-r3, wrong on r4.
    # p_o = 3/4; the judge says yes 3/4, the gold yes 2/4: p_e = 3/4 * 1/2 + 1/4 * 1/2 = 1/2; kappa = 1/2.
    gold = tmp_path / "math-gold.jsonl"
    items = [("r1", "HUMAN REVIEW one.", "yes"), ("r2", "HUMAN REVIEW two.", "yes"), ("r3", "Plain three.", "no"),
             ("r4", "HUMAN REVIEW four.", "no")]
    gold.write_text("".join(json.dumps({"id": i, "task": "math", "text": t, "label": g}) + "\n" for i, t, g in items))
    cache = tmp_path / "cache"
    validated = run("judge", "validate", "--task", "math", "--gold", gold, "--judge", "stub-judge", "--cache-dir",
                    cache, "--bootstrap-resamples", "200", "-o", tmp_path / "math.json")
    assert validated.exit_code == 0, validated.output
    stored = json.loads((tmp_path / "math.json").read_text())
    assert stored["metrics"]["accuracy"]["value"] == 0.75 and stored["metrics"]["cohen_kappa"]["value"] == 0.5
    out = tmp_path / "results.json"
    result = run("evaluate", reviews, "--judge", "stub-judge", "--cache-dir", cache, "-o", out)
    assert result.exit_code == 0, result.output
    math = line(result.stdout, MATH_LINE)
    assert math.startswith(MATH_LINE + "κ 0.500 [") and ", accuracy 0.750 [" in math
    assert math.endswith("] on math-gold.jsonl (4 items)")
    assert json.loads(out.read_text())["judge_validation"]["math"]["metrics"] == stored["metrics"]
