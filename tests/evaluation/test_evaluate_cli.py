"""`praib evaluate` end to end, on hand-made records whose expected values are computed by hand
or with independent libraries (the `krippendorff` package, numpy), and on the shipped demo set."""

import json
import statistics
import subprocess
import sys

import krippendorff
import numpy as np
import pytest
from click.testing import CliRunner

from praib.cli.main import main

HUMAN_PANEL = [
    # paper, decision, ratings of three human reviewers, their confidences (ICLR 2025 scale)
    ("p1", "Accept (poster)", [8, 6, 8], [4, 3, 4]),
    ("p2", "Reject", [3, 5, 3], [3, 4, 4]),
    ("p3", "Reject", [5, 3, 1], [2, 3, 5]),
    ("p4", "Accept (oral)", [8, 8, 10], [5, 4, 4]),
]
MODEL_RATINGS = {"p1": (8, 4), "p2": (8, 5), "p3": (6, 4), "p4": (8, 4)}
HUMAN_TEXT = "The method is sound. Figure 2 is unclear and Eq. (3) has a sign error."


def model_review(rating, confidence):
    return (f"## Summary\nThe paper proposes a method.\n\n## Strengths\n- Clear writing.\n\n## Weaknesses\n"
            f"- Table 1 lacks baselines.\n\n## Final Recommendation\n**Decision:** {rating}\n\n"
            f"**Confidence:** {confidence}\n")


def records():
    rows = []
    for paper, decision, ratings, confidences in HUMAN_PANEL:
        for i, (rating, confidence) in enumerate(zip(ratings, confidences)):
            rows.append({"paper_id": paper, "venue": "ICLR", "year": 2025, "decision": decision, "source": "human",
                         "reviewer_id": f"R{i}", "text": HUMAN_TEXT if i == 0 else None,
                         "rating": rating, "confidence": confidence})
        rating, confidence = MODEL_RATINGS[paper]
        rows.append({"paper_id": paper, "venue": "ICLR", "year": 2025, "decision": decision, "source": "toy-lm",
                     "model": "toy-lm", "prompt": "extended", "text": model_review(rating, confidence)})
    rows.append({"paper_id": "p1", "venue": "ICLR", "year": 2025, "decision": "Accept (poster)", "source": "toy-lm",
                 "model": "toy-lm", "prompt": "extended", "text": "I cannot review this paper."})
    return rows


@pytest.fixture
def reviews_file(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records()))
    return path


def run(args):
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result


def groups_by_label(output):
    return {g["label"]: g for g in json.loads(output.read_text())["groups"]}


def test_evaluate_writes_one_entry_per_group_with_the_documented_keys(reviews_file, tmp_path):
    output = tmp_path / "results.json"
    result = run(["evaluate", str(reviews_file), "--output", str(output), "--no-progress"])
    assert result.exit_code == 0, result.output
    groups = groups_by_label(output)
    assert set(groups) == {"human", "toy-lm/extended"}
    for group in groups.values():
        for key in ("tkc", "ttr", "fre", "fkg", "xref", "citations"):
            assert {"mean", "std"} <= set(group[key])
        assert "ICLR" in group["krippendorff_alpha"]
        assert "n_unparsed" in group
    assert groups["human"]["is_reference"] and not groups["toy-lm/extended"]["is_reference"]
    # The printed table has a row per group and the alpha column.
    assert "α ICLR" in result.output and "toy-lm/extended" in result.output


def test_counts_unparsed_and_skipped_reviews(reviews_file, tmp_path):
    output = tmp_path / "results.json"
    run(["evaluate", str(reviews_file), "-o", str(output), "--no-progress"])
    groups = groups_by_label(output)
    human, model = groups["human"], groups["toy-lm/extended"]
    assert (human["n_reviews"], human["n_unparsed"]) == (12, 0)
    assert human["skipped"]["text_metrics"] == 8  # ratings-only reviewers
    assert (model["n_reviews"], model["n_unparsed"]) == (5, 1)
    assert model["skipped"]["rating"] == 1


def test_readability_and_xref_match_hand_counts(reviews_file, tmp_path):
    output = tmp_path / "results.json"
    run(["evaluate", str(reviews_file), "-o", str(output), "--no-progress"])
    human = groups_by_label(output)["human"]
    # HUMAN_TEXT: 13 words ("The method is sound" + "Figure is unclear and Eq has a sign error" = 4 + 9),
    # 12 distinct lower-cased types ("is" twice), 2 cross-references (Figure 2, Eq. (3)).
    assert human["tkc"]["mean"] == 13 and human["tkc"]["n"] == 4
    assert human["ttr"]["mean"] == pytest.approx(12 / 13)
    assert human["tkc"]["std"] == 0
    assert human["xref"]["mean"] == 2 and human["xref"]["per_type"]["figure"] == 1
    assert human["xref"]["per_100_tokens"]["mean"] == pytest.approx(200 / 13)
    assert human["citations"]["mean"] == 0


def test_alpha_matches_the_krippendorff_package(reviews_file, tmp_path):
    output = tmp_path / "results.json"
    run(["evaluate", str(reviews_file), "-o", str(output), "--no-progress"])
    groups = groups_by_label(output)
    human_matrix = np.array([ratings for _, _, ratings, _ in HUMAN_PANEL], dtype=float).T  # raters x papers
    expected_h = krippendorff.alpha(reliability_data=human_matrix, level_of_measurement="ordinal")
    with_model = np.vstack([human_matrix, [MODEL_RATINGS[p][0] for p, *_ in HUMAN_PANEL]])
    expected_hl = krippendorff.alpha(reliability_data=with_model, level_of_measurement="ordinal")
    assert groups["human"]["krippendorff_alpha"]["ICLR"] == pytest.approx(expected_h)
    detail = groups["toy-lm/extended"]["krippendorff"]["ICLR"]
    assert detail["alpha_human"] == pytest.approx(expected_h)
    assert detail["alpha_with_model"] == pytest.approx(expected_hl)
    assert detail["delta"] == pytest.approx(expected_hl - expected_h)


def test_rating_distribution_and_confidence_gap_by_hand(reviews_file, tmp_path):
    output = tmp_path / "results.json"
    run(["evaluate", str(reviews_file), "-o", str(output), "--no-progress"])
    model = groups_by_label(output)["toy-lm/extended"]
    ratings = model["rating_distribution"]["ICLR 2025"]
    # Model ratings 8, 8, 6, 8 -> 0.75 at 8, 0.25 at 6. Human: 12 ratings, 8 appears 4 times.
    assert ratings["diff_pp"]["8"] == pytest.approx(100 * (0.75 - 4 / 12))
    assert ratings["diff_pp"]["6"] == pytest.approx(100 * (0.25 - 1 / 12))
    human_shares = {1: 1, 3: 3, 5: 2, 6: 1, 8: 4, 10: 1}
    model_shares = {8: 3, 6: 1}
    expected_sum = sum(abs(model_shares.get(v, 0) / 4 - human_shares.get(v, 0) / 12) for v in (1, 3, 5, 6, 8, 10))
    assert ratings["sum_abs_diff_pp"] == pytest.approx(100 * expected_sum)
    assert ratings["total_variation"] == pytest.approx(expected_sum / 2)
    # Confidence gaps: model minus median human confidence per paper.
    gaps = [4 - statistics.median([4, 3, 4]), 5 - statistics.median([3, 4, 4]),
            4 - statistics.median([2, 3, 5]), 4 - statistics.median([5, 4, 4])]
    assert model["confidence_gap"]["mean"] == pytest.approx(statistics.mean(gaps))
    assert model["confidence_gap"]["by_decision"]["reject"]["mean"] == pytest.approx(statistics.mean(gaps[1:3]))


def test_separate_reference_file_gives_the_same_model_results(reviews_file, tmp_path):
    rows = records()
    human_file, model_file = tmp_path / "human.jsonl", tmp_path / "model.jsonl"
    human_file.write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] == "human"))
    model_file.write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] != "human"))
    combined, split = tmp_path / "combined.json", tmp_path / "split.json"
    run(["evaluate", str(reviews_file), "-o", str(combined), "--no-progress"])
    run(["evaluate", str(model_file), "--reference", str(human_file), "-o", str(split), "--no-progress"])
    a, b = groups_by_label(combined), groups_by_label(split)
    assert a["toy-lm/extended"]["krippendorff"] == b["toy-lm/extended"]["krippendorff"]
    assert a["toy-lm/extended"]["fre"] == b["toy-lm/extended"]["fre"]
    assert b["human"]["is_reference"]


def test_group_by_changes_the_groups(reviews_file, tmp_path):
    output = tmp_path / "results.json"
    run(["evaluate", str(reviews_file), "-o", str(output), "--group-by", "decision", "--no-progress"])
    # Grouped by source too, so the human reviews stay the reference (issue 14).
    assert set(groups_by_label(output)) == {f"{source}/{decision}" for source in ("human", "toy-lm")
                                            for decision in ("Accept (oral)", "Accept (poster)", "Reject")}
    # With a reference of its own, the input is grouped as asked.
    rows = records()
    model_file, human_file = tmp_path / "model.jsonl", tmp_path / "human.jsonl"
    model_file.write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] != "human"))
    human_file.write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] == "human"))
    run(["evaluate", str(model_file), "--reference", str(human_file), "-o", str(output), "--group-by", "decision",
         "--no-progress"])
    assert set(groups_by_label(output)) == {"human", "Accept (oral)", "Accept (poster)", "Reject"}


def test_bad_input_fails_with_file_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"paper_id": "p1", "source": "human", "confidence": "very"}\n')
    result = CliRunner().invoke(main, ["evaluate", str(path)])
    assert result.exit_code != 0
    assert f"{path}: line 1: field 'confidence'" in result.output


def test_an_input_or_split_without_reviews_is_an_error_not_an_empty_table(reviews_file, tmp_path):
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n")
    result = CliRunner().invoke(main, ["evaluate", str(blank), "--no-progress"])
    assert result.exit_code == 1 and result.output.strip() == f"Error: {blank}: empty: no records"
    # A dataset repository whose test split holds no review.
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "data" / "train.jsonl").write_text(reviews_file.read_text())
    (repo / "data" / "test.jsonl").write_text("\n")
    (repo / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n"
                                    "  - split: train\n    path: data/train.jsonl\n"
                                    "  - split: test\n    path: data/test.jsonl\n---\n")
    assert CliRunner().invoke(main, ["evaluate", str(repo), "--no-progress"]).exit_code == 0
    result = CliRunner().invoke(main, ["evaluate", str(repo), "--split", "test", "--no-progress"])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: {repo}: ") and '"test"' in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_review_id_used_by_two_reviews_is_an_error(reviews_file):
    rows = [json.loads(line) for line in reviews_file.read_text().splitlines()]
    rows = [{**row, "review_id": f"r{i}"} for i, row in enumerate(rows)]
    reviews_file.write_text("".join(json.dumps(r) + "\n" for r in rows + [{**rows[4], "rating": 1}]))
    result = CliRunner().invoke(main, ["evaluate", str(reviews_file), "--no-progress"])
    assert result.exit_code == 1
    assert result.output.strip() == (f"Error: {reviews_file}: field 'review_id': 1 id repeats with different "
                                     "content: r4")


def test_unknown_group_by_field_is_a_clear_error(reviews_file):
    result = CliRunner().invoke(main, ["evaluate", str(reviews_file), "--group-by", "colour"])
    assert result.exit_code != 0 and "cannot group by colour" in result.output


def test_demo_runs_through_the_installed_entry_point(tmp_path):
    output = tmp_path / "demo.json"
    completed = subprocess.run([sys.executable, "-m", "praib.cli.main", "evaluate", "--demo", "--output", str(output),
                                "--no-progress"], capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    results = json.loads(output.read_text())
    labels = {g["label"] for g in results["groups"]}
    assert "human" in labels and any(label.startswith("demo-model-a") for label in labels)
    human = next(g for g in results["groups"] if g["label"] == "human")
    assert human["krippendorff_alpha"]["ICLR"] is not None and human["krippendorff_alpha"]["NeurIPS"] is not None
    assert sum(g["n_unparsed"] for g in results["groups"]) >= 1
    for group in results["groups"]:
        assert group["tkc"]["mean"] > 0 and group["fre"]["mean"] is not None


def test_without_human_reviews_the_report_says_why_comparisons_are_missing(tmp_path):
    path = tmp_path / "models.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records() if r["source"] != "human"))
    output = tmp_path / "results.json"
    result = run(["evaluate", str(path), "-o", str(output), "--no-progress"])
    assert result.exit_code == 0 and "No human reviews found" in result.output
    model = groups_by_label(output)["toy-lm/extended"]
    assert model["krippendorff_alpha"] == {} and model["confidence_gap"] is None
    assert model["rating_distribution"]["ICLR 2025"]["distribution"]["8"] == 0.75


def test_grouping_without_source_keeps_the_human_reviews_the_reference(tmp_path):
    """--group-by venue,year used to put human and model reviews in one group with no reference row."""
    output = tmp_path / "results.json"
    result = run(["evaluate", "--demo", "--group-by", "venue,year", "--output", str(output), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "Grouping by source,venue,year: the human reviews of INPUT are the reference" in result.output
    data = json.loads(output.read_text())
    assert data["group_by"] == ["source", "venue", "year"]
    references = {g["label"]: g for g in data["groups"] if g["is_reference"]}
    assert set(references) == {"human/ICLR/2025", "human/NeurIPS/2025"}
    assert all(g["n_reviews"] == 13 for g in references.values())
    assert all(not g["label"].startswith("human") for g in data["groups"] if not g["is_reference"])


def test_a_human_row_per_venue_has_only_its_own_venues_alpha(tmp_path):
    output = tmp_path / "results.json"
    assert run(["evaluate", "--demo", "--group-by", "source,venue", "--output", str(output),
                "--no-progress"]).exit_code == 0
    groups = groups_by_label(output)
    iclr, neurips = groups["human/ICLR"], groups["human/NeurIPS"]
    assert set(iclr["krippendorff_alpha"]) == {"ICLR"} and set(neurips["krippendorff_alpha"]) == {"NeurIPS"}
    # The same alpha as the ICLR column of the whole human panel.
    assert run(["evaluate", "--demo", "--no-progress", "--output", str(tmp_path / "all.json")]).exit_code == 0
    human = next(g for g in json.loads((tmp_path / "all.json").read_text())["groups"] if g["is_reference"])
    assert iclr["krippendorff_alpha"]["ICLR"] == human["krippendorff_alpha"]["ICLR"]


def test_a_model_given_as_a_local_path_is_labelled_by_its_folder(tmp_path):
    rows = [{**r, "model": str(tmp_path / "models" / "toy-lm")} if r["source"] == "toy-lm" else r for r in records()]
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    output = tmp_path / "results.json"
    assert run(["evaluate", str(path), "--output", str(output), "--no-progress"]).exit_code == 0
    assert set(groups_by_label(output)) == {"human", "toy-lm/extended"}
