"""RevUtil's grounding specificity (`praib grounding`, `praib judge validate --task grounding`): comments split and
rated, the per-review means against the cross-reference count, on a synthetic run known by hand."""

import json
import math
import re

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.metrics.judged.grounding import (ReviewGrounding, grounding_summary, parse_answer, spearman,
                                            weakness_comments, xref_bin)
from praib.metrics.text.textstats import score_texts
from praib.tables import load_result, make_tables
from tests.tables.grounding_results import grounding_run, review_rows, stub_judge


def test_weakness_comments_are_list_items_or_paragraphs_of_fifty_characters_or_more():
    listed = ("1. The method in Section 3 assumes convex losses, which Table 2 does not satisfy.\n"
              "2. Minor: typo.\n"
              "3. The comparison misses recent baselines such as X and Y, see Figure 4 for where.")
    assert weakness_comments(listed) == [
        "The method in Section 3 assumes convex losses, which Table 2 does not satisfy.",
        "The comparison misses recent baselines such as X and Y, see Figure 4 for where."]
    prose = ("A first paragraph that is long enough, more than fifty characters in all.\n\nToo short.\n\n"
             "A second paragraph, continued\non a second line, also long enough to stay.")
    assert weakness_comments(prose) == ["A first paragraph that is long enough, more than fifty characters in all.",
                                        "A second paragraph, continued on a second line, also long enough to stay."]
    assert weakness_comments(None) == [] and weakness_comments("  ") == []


@pytest.mark.parametrize("answer, score", [({"grounding_specificity_label": "4"}, 4),
                                           ({"grounding_specificity_label": 2}, 2),
                                           ({"grounding_specificity_label": "5: Fully Grounded and Specific"}, 5)])
def test_a_label_is_read_as_its_score(answer, score):
    assert parse_answer(answer) == score


@pytest.mark.parametrize("answer", [{"grounding_specificity_label": "X"}, {"grounding_specificity_label": "6"},
                                   {"label": "3"}, ["3"], {"grounding_specificity_label": True}])
def test_anything_else_is_refused_not_guessed(answer):
    with pytest.raises(ValueError):
        parse_answer(answer)


def test_bins_of_the_cross_reference_count_are_praibs():
    assert [xref_bin(n) for n in (0, 1, 2, 5, 6, 40)] == ["0", "1", "2-5", "2-5", ">5", ">5"]


def test_spearman_of_a_hand_computed_example_and_where_it_is_undefined():
    # ranks [1..5] against [2, 1, 4, 3, 5]: sum of squared rank differences 4, rho = 1 - 6 * 4 / (5 * 24) = 0.8
    assert spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])["rho"] == pytest.approx(0.8)
    assert spearman([1, 2, None, 4], [1, 2, 3, 4])["n"] == 3
    assert spearman([1, 2, 3], [5, 5, 5]) == {"rho": None, "p_value": None, "n": 3}
    assert spearman([1, 2], [1, 2])["rho"] is None


def test_a_summary_of_reviews_by_hand():
    reviews = [ReviewGrounding((1, 3), 0, 0.0), ReviewGrounding((4,), 3, 1.0), ReviewGrounding((None,), 9, 2.0),
               ReviewGrounding((), 0, None)]
    summary = grounding_summary(reviews)
    assert (summary.reviews, summary.reviews_scored, summary.comments, summary.comments_scored) == (4, 2, 4, 3)
    assert summary.score["mean"] == 3.0 and summary.score["n"] == 2
    assert summary.bins == {"0": {"mean": 2.0, "n": 1, "gain": 0.0}, "1": {"mean": None, "n": 0, "gain": None},
                            "2-5": {"mean": 4.0, "n": 1, "gain": 2.0}, ">5": {"mean": None, "n": 0, "gain": None}}


def test_a_review_without_text_counts_in_no_bin_and_no_correlation():
    without_text = ReviewGrounding((5,), None, None)
    summary = grounding_summary([ReviewGrounding((1, 3), 0, 0.0), ReviewGrounding((4,), 3, 1.0), without_text])
    assert summary.reviews_scored == 3 and summary.score["mean"] == pytest.approx(11 / 3)
    assert [summary.bins[b]["n"] for b in ("0", "1", "2-5", ">5")] == [1, 0, 1, 0]
    assert summary.spearman["xref"]["n"] == 2 and summary.spearman["xref_density"]["n"] == 2


def test_the_command_goes_on_past_a_review_without_text(tmp_path, monkeypatch):
    """It stopped with "cannot convert float NaN to integer": an empty text has no cross-reference count."""
    rows = [*review_rows(), {"review_id": "h6", "paper_id": "p6", "source": "human", "venue": "ICLR", "year": 2025,
                             "text": "", "rating": 5}]
    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text("".join(json.dumps(row) + "\n" for row in rows))
    stub_judge(monkeypatch)
    output = tmp_path / "grounding.json"
    result = CliRunner().invoke(main, ["grounding", str(reviews), "--judge", "stub-revutil", "--cache-dir",
                                       str(tmp_path / "cache"), "-o", str(output), "--no-progress"])
    assert result.exit_code == 3, result.output  # b3's unreadable answer, as in the run without h6
    human = json.loads(output.read_text())["groups"][0]
    assert (human["reviews"], human["reviews_scored"], human["comments"]) == (6, 5, 9)
    assert [human["bins"][b]["mean"] for b in ("0", "1", "2-5", ">5")] == pytest.approx([1.75, 3, 4, 14 / 3])


def test_the_command_on_a_synthetic_run_known_by_hand(tmp_path, monkeypatch):
    output, result = grounding_run(tmp_path, monkeypatch)
    assert result.exit_code == 3, result.output  # b3's comment got no usable rating: recorded, the run finished
    data = json.loads(output.read_text())
    groups = {g["label"]: g for g in data["groups"]}
    assert list(groups) == ["human", "model-a/extended", "model-b/extended"]
    human, model_a, model_b = groups.values()
    assert human["is_reference"] and not model_a["is_reference"]
    assert model_a["group"] == {"source": "model-a", "model": "org/model-a", "prompt": "extended"}
    # h1's short comment is left out: 2 + 1 + 2 + 3 + 1 comments.
    assert (human["reviews"], human["comments"], human["comments_scored"]) == (5, 9, 9)
    assert [human["bins"][b]["mean"] for b in ("0", "1", "2-5", ">5")] == pytest.approx([1.75, 3, 4, 14 / 3])
    assert [human["bins"][b]["gain"] for b in ("0", "1", "2-5", ">5")] == pytest.approx([0, 1.25, 2.25, 14 / 3 - 1.75])
    assert human["spearman"]["xref"]["rho"] == pytest.approx(9.5 / math.sqrt(95))
    assert model_a["spearman"]["xref"]["rho"] == pytest.approx(0.5)
    assert [model_a["bins"][b]["gain"] for b in ("0", "1", "2-5", ">5")] == [0.0, -1.0, 1.0, None]
    assert (model_b["reviews"], model_b["reviews_scored"], model_b["comments"], model_b["comments_failed"]) == (3, 2, 3, 1)
    assert model_b["bins"]["1"] == {"mean": None, "n": 0, "gain": None} and model_b["bins"][">5"]["gain"] == 3.0
    models = data["pooled"]["models"]
    assert [models["bins"][b]["mean"] for b in ("0", "1", "2-5", ">5")] == [2.5, 2.0, 4.0, 5.0]
    assert models["spearman"]["xref"]["rho"] == pytest.approx(7.25 / 9.5)
    assert data["pooled"]["human"] == {k: v for k, v in human.items() if k not in ("label", "group", "is_reference")}
    # The density is the text metrics' cross-references per 100 word tokens.
    rows = [row for row in review_rows() if row["source"] == "human"]
    means = [1.5, 3, 4, 14 / 3, 2]
    density = score_texts([row["text"] for row in rows], workers=1)["xref_per_100_tokens"].tolist()
    assert human["spearman"]["xref_density"]["rho"] == pytest.approx(spearman(means, density)["rho"])
    assert data["judge"]["model"] == "stub-revutil" and data["judge_validation"] == {"grounding": None}
    assert data["grounding_specificity"]["scale"]["5"] == "Fully Grounded and Specific"
    # The mean with the registry's three decimals: (1.5 + 3 + 4 + 14/3 + 2) / 5 = 3.0333...
    assert "human: 5 reviews, 9 of 9 comments rated, mean 3.033" in result.output
    # The validity line of grounding specificity only: none of the families a judged evaluate computes.
    assert result.output.count("Judge validity") == 1 and "Math" not in result.output
    assert ("  Grounding specificity (grounding_specificity): judge not validated (run `praib judge validate --task "
            "grounding ...`)") in result.output
    [failure] = [json.loads(line) for line in (tmp_path / "grounding.json.failures.jsonl").read_text().splitlines()]
    assert failure["item_id"] == "b3/weakness 1/grounding"


def test_validate_a_judge_on_grounding_ratings_and_find_it_from_the_command(tmp_path, monkeypatch):
    # Six rated comments: the stub rates each as its [gs=N] says; the gold disagrees on two of them.
    gold = tmp_path / "gold.jsonl"
    items = [("c1", 1, "1"), ("c2", 2, "2"), ("c3", 3, "3"), ("c4", 4, "5"), ("c5", 5, "5"), ("c6", 2, "4")]
    gold.write_text("".join(json.dumps({"id": i, "task": "grounding", "label": label,
                                        "text": f"The analysis [gs={rated}] is incomplete."}) + "\n"
                            for i, rated, label in items))
    stub_judge(monkeypatch)
    validated = CliRunner().invoke(main, ["judge", "validate", "--task", "grounding", "--gold", str(gold), "--judge",
                                          "stub-revutil", "--cache-dir", str(tmp_path / "cache"),
                                          "--bootstrap-resamples", "50", "--no-progress"])
    assert validated.exit_code == 0, validated.output
    # 4 of 6 right; chance agreement from the marginals (1,1,1,1,2 gold; 1,2,1,1,1 judged) is 7/36, so
    # kappa = (24/36 - 7/36) / (29/36) = 17/29.
    assert re.search(r"accuracy +0.667", validated.output) and re.search(r"Cohen's κ +0.586", validated.output)
    output, result = grounding_run(tmp_path, monkeypatch)
    data = json.loads(output.read_text())
    found = data["judge_validation"]["grounding"]
    assert found["task"] == "grounding" and found["gold_size"] == 6 and found["found_in"] == "validations store"
    assert "  Grounding specificity (grounding_specificity): κ 0.586" in result.output
    (table_18,) = make_tables([load_result(output)], ["praib-18"])
    assert f"Judge: stub-revutil; Grounding specificity (grounding_specificity): {found['summary']}." in table_18.notes


def test_the_command_warns_when_no_review_has_a_comment_to_rate(tmp_path, monkeypatch):
    rows = [{**row, "weaknesses": None, "text": "A review in prose, with no sections at all."}
            for row in review_rows() if row["source"] == "human"]
    output, result = grounding_run(tmp_path, monkeypatch, rows)
    assert result.exit_code == 0, result.output
    assert (f"warning: no review of {tmp_path / 'grounding-reviews.jsonl'} has a weakness comment to rate (a "
            "weaknesses section whose items or paragraphs have 50 characters or more): every rating is missing"
            in result.output)


def test_the_command_needs_a_judge(tmp_path):
    refused = CliRunner().invoke(main, ["grounding", str(tmp_path / "x.jsonl")])
    assert refused.exit_code == 2
