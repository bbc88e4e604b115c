"""The judges of a leaderboard: `praib leaderboard run --judge` records the judge's validations in run.json (from
the validations store, else from a submission's manifest), a manifest's judge_validation is checked line by
line, and `praib leaderboard report` shows the Judges table, marking a judge that is not validated."""

import json
import re
from html import unescape

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.leaderboard.report import build_sections, load_results, render_markdown
from praib.leaderboard.submission import manifest_problems
from praib.metrics.judged.validation import store_validation
from tests.doubles import StubBackend
from tests.evaluation.predictable_judge import HUMAN, MODEL, predictable_answer
from tests.evaluation.stored_validation import SUMMARY, hand_made_validation
from tests.leaderboard.report_page import CHROMIUM, chromium, parse, table

MANIFEST = {"model": "lm", "revision": "v1", "backend": "demo", "prompts": ["guidelines"],
            "sampling": {"temperature": 0.0}, "date": "2025-06-01"}
COMMON = {"paper_id": "p1", "venue": "ICLR", "year": 2025, "decision": "Reject"}
JUDGES = "Judges and their validation against human labels"
HEADER = ["Judge", "Revision", "Task", "Metrics", "Gold set", "Found in", "n", "Accuracy", "κ"]


@pytest.fixture
def board(tmp_path, monkeypatch):
    """A judged leaderboard run: stub-judge validated on math in the store and on coverage by the submission's
    manifest, which also carries a validation of another judge; then its report."""
    monkeypatch.setattr("praib.llm.judge.make_backend",
                        lambda kind, model, **options: StubBackend(predictable_answer, model=model,
                                                                   model_revision=None))
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps({**COMMON, "review_id": f"h{r}", "source": "human", "text": HUMAN,
                                         "rating": r}) + "\n" for r in (3, 5)))
    submission = tmp_path / "lm"
    submission.mkdir()
    (submission / "reviews.jsonl").write_text(json.dumps({**COMMON, "review_id": "m1", "source": "lm", "model": "lm",
                                                          "prompt": "guidelines", "text": MODEL}) + "\n")
    carried = [hand_made_validation("coverage").to_dict(),
               hand_made_validation("aspect", model="other-judge").to_dict()]
    (submission / "manifest.json").write_text(json.dumps({**MANIFEST, "judge_validation": carried}))
    cache = tmp_path / "cache"
    store_validation(hand_made_validation("math"), cache)
    out = tmp_path / "out"
    ran = CliRunner().invoke(main, ["leaderboard", "run", str(submission), "--reference", str(human), "--judge",
                                    "stub-judge", "--cache-dir", str(cache), "--n-bootstrap", "5", "--workers", "1",
                                    "--output", str(out), "--no-progress"])
    assert ran.exit_code == 0, ran.output
    reported = CliRunner().invoke(main, ["leaderboard", "report", str(out), "--output", str(tmp_path / "r.html"),
                                         "--markdown", str(tmp_path / "r.md")])
    assert reported.exit_code == 0, reported.output
    return {"run": ran, "out": out, "html": (tmp_path / "r.html").read_text(), "md": (tmp_path / "r.md").read_text(),
            "page": tmp_path / "r.html"}


def test_run_json_records_the_validations_found(board):
    validation = json.loads((board["out"] / "run.json").read_text())["judge_validation"]
    assert (validation["math"]["summary"], validation["math"]["found_in"]) == (SUMMARY["math"], "validations store")
    assert (validation["coverage"]["summary"], validation["coverage"]["found_in"]) == (SUMMARY["coverage"],
                                                                                       "manifest of lm")
    # other-judge's aspect validation is not this judge's.
    assert [task for task, entry in validation.items() if entry is None] == ["target", "aspect", "atomic"]
    assert f"  Math, P(+|+), P(+|-) (math_engagement): {SUMMARY['math']}" in board["run"].stderr


def test_the_report_has_a_judges_table_that_marks_the_judge_not_validated(board):
    judges = table(parse(board["html"]), JUDGES)
    assert judges["rows"] == [
        HEADER,
        ["stub-judge", "–", "math", "math engagement", "gold-math.jsonl", "validations store", "30",
         "0.810 [0.750, 0.870]", "0.620 [0.550, 0.690]"],
        ["stub-judge", "–", "coverage", "coverage", "gold-coverage.jsonl", "manifest of lm", "30",
         "0.700 [0.600, 0.800]", "0.410 [0.300, 0.520]"],
        ["stub-judge", "–", "target", "target/aspect", "⚠ judge not validated", "–", "–", "–", "–"],
        ["stub-judge", "–", "aspect", "target/aspect", "⚠ judge not validated", "–", "–", "–", "–"],
        ["stub-judge", "–", "atomic", "atomic statistics", "⚠ judge not validated", "–", "–", "–", "–"],
        ["other-judge", "–", "aspect", "target/aspect", "gold-aspect.jsonl", "manifest of lm", "30",
         "0.300 [0.200, 0.400]", "0.050 [-0.100, 0.200]"],
    ]
    assert board["html"].count('class="text warning"') == 3
    assert "| stub-judge | – | target | target/aspect | ⚠ judge not validated | – | – | – | – |" \
        in board["md"]
    # The judged tables name their judge's validity beside the numbers.
    assert (f"Judge stub-judge (coverage: validated, {SUMMARY['coverage']}; see Judges)." in unescape(board["html"]))
    assert "Judge stub-judge (target: judge not validated; aspect: judge not validated; see Judges)." in board["md"]
    assert f"Judge stub-judge (math: validated, {SUMMARY['math']}; see Judges)." in unescape(board["html"])


def test_without_a_judge_or_a_carried_validation_the_judges_section_is_left_out(board, tmp_path):
    run = json.loads((board["out"] / "run.json").read_text())
    (board["out"] / "run.json").write_text(json.dumps({**run, "judge": None, "judge_validation": None}))
    sections = {s.anchor: s for s in build_sections(load_results(board["out"]))}
    # Only the validations the manifest carries, stub-judge's coverage no longer used by the run's judge.
    assert [(row[0].text, row[2].text) for row in sections["judges"].tables[0].rows] == [("stub-judge", "coverage"),
                                                                                         ("other-judge", "aspect")]
    (board["out"] / "manifests" / "lm.json").write_text(json.dumps(MANIFEST))
    sections = build_sections(load_results(board["out"]))
    judges = next(s for s in sections if s.anchor == "judges")
    assert not judges.tables and judges.note.startswith("No judge in this run and no submission carries")
    assert f"- Judges: {judges.note}" in render_markdown(sections, "t").replace("\\", "")


@pytest.mark.skipif(not CHROMIUM.exists(), reason="headless check needs Chromium at /usr/bin/chromium")
def test_the_judges_not_validated_stand_out_in_headless_chromium(board, tmp_path):
    script = """<script>
window.addEventListener("load", () => {
  const cells = Array.from(document.querySelectorAll("#judges td.warning"),
                           (c) => ({text: c.textContent, color: getComputedStyle(c).color}));
  const out = document.createElement("pre");
  out.id = "judges-check";
  out.textContent = JSON.stringify(cells);
  document.body.appendChild(out);
});
</script>"""
    checked = tmp_path / "checked.html"
    checked.write_text(board["html"].replace("</body>", script + "\n</body>"))
    dom = chromium("--virtual-time-budget=5000", "--dump-dom", checked.as_uri(), user_data_dir=tmp_path / "profile")
    found = re.search(r'<pre id="judges-check">(.*?)</pre>', dom.stdout)
    assert found, dom.stderr[-2000:]
    cells = json.loads(unescape(found.group(1)))
    assert [c["text"] for c in cells] == ["⚠ judge not validated"] * 3
    assert {c["color"] for c in cells} == {"rgb(160, 48, 10)"}


def test_a_manifests_judge_validation_is_checked_entry_by_entry():
    good = hand_made_validation("math").to_dict()
    assert manifest_problems({**MANIFEST, "judge_validation": [good]}) == []
    missing = {key: value for key, value in good.items() if key != "metrics"}
    for value, problem in [
        ({"task": "math"}, "must be a list of judge validation results, got dict"),
        ([good, "math"], "entry 2: expected a JSON object, got str"),
        ([missing], "entry 1: not a judge validation result (KeyError: 'metrics')"),
        ([{**good, "schema_version": 7}], "entry 1: not a judge validation result (ValueError: a validation result "
                                          "of schema version 7; this praib reads version 1)"),
        ([{**good, "task": "vibes"}], "entry 1: not a judge validation result (task 'vibes', judge_model "
                                      "'stub-judge')"),
    ]:
        assert manifest_problems({**MANIFEST, "judge_validation": value}) == [
            f"manifest: field 'judge_validation': {problem}"]


def test_leaderboard_validate_names_a_bad_judge_validation(tmp_path):
    folder = tmp_path / "lm"
    folder.mkdir()
    (folder / "reviews.jsonl").write_text(json.dumps({**COMMON, "review_id": "m1", "source": "lm", "model": "lm",
                                                      "prompt": "guidelines", "text": MODEL}) + "\n")
    (folder / "manifest.json").write_text(json.dumps({**MANIFEST, "judge_validation": [{"task": "math"}]}))
    result = CliRunner().invoke(main, ["leaderboard", "validate", str(folder)])
    assert result.exit_code == 1
    [problem] = [text for text in result.output.splitlines() if "judge_validation" in text]
    assert problem.startswith("  problem: manifest: field 'judge_validation': entry 1: not a judge validation result")
