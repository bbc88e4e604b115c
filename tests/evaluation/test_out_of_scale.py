"""One rule for a score off its venue-year's scale (issue 26, item 8): 7 on ICLR 2022's 1, 3, 5, 6, 8, 10 is
left out of Krippendorff's alpha, the distributions and the gaps alike, in `praib evaluate` (in memory and
streamed in shards) and in the leaderboard's bootstrap, and it is counted where a reader looks: the
group's `n_out_of_scale`, the table's "off scale" column and notes, and the notes of `praib tables`.

The golden alphas are computed here by the `krippendorff` package from the ratings listed by hand; the
gaps by hand."""

import json
import logging
import statistics

import krippendorff
import numpy as np
import pytest

from praib.evaluation.evaluate import evaluate_reviews, result_of
from praib.evaluation.scored import ScoredReviews
from praib.evaluation.streamed import Inputs, fold_shards
from praib.evaluation.table import behaviour_table
from praib.leaderboard.run import ALL_VENUES, ReviewTable, slice_metrics
from praib.records import load_records

# paper: (human ratings, human confidences, model rating, model confidence), all ICLR 2022.
PAPERS = {
    "a": ([8, 8], [3, 4], 8, 5),
    "b": ([3, 5], [2, 4], 7, 9),      # the model's 7 and 9 are on no ICLR 2022 scale
    "c": ([1, 3], [4, 4], 1, 4),
    "d": ([6, 8], [3, 5], 4, 2),      # 4 neither
    "e": ([5, 8, 7], [3, 3, 3], None, None),  # a human 7: off the scale too
}
ON_SCALE = {1, 3, 5, 6, 8, 10}


def rows():
    out = []
    for paper, (ratings, confidences, model_rating, model_confidence) in PAPERS.items():
        for i, (rating, confidence) in enumerate(zip(ratings, confidences)):
            out.append({"review_id": f"{paper}-h{i}", "paper_id": paper, "venue": "ICLR", "year": 2022,
                        "decision": "Reject", "source": "human", "text": f"Human review {i} of {paper}.",
                        "rating": rating, "confidence": confidence})
        if model_rating is not None:
            out.append({"review_id": f"{paper}-m", "paper_id": paper, "venue": "ICLR", "year": 2022,
                        "decision": "Reject", "source": "llm", "model": "llm", "text": f"A review of {paper}.",
                        "rating": model_rating, "confidence": model_confidence})
    return out


@pytest.fixture
def reviews(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows()))
    return path


def golden_alpha(panels: dict[str, list[int]]) -> float:
    """Ordinal alpha by the krippendorff package: one column per paper, one row per rating slot."""
    width = max(len(ratings) for ratings in panels.values())
    data = np.full((width, len(panels)), np.nan)
    for column, ratings in enumerate(panels.values()):
        data[:len(ratings), column] = ratings
    return krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")


def human_panels() -> dict[str, list[int]]:
    return {paper: [r for r in ratings if r in ON_SCALE] for paper, (ratings, *_) in PAPERS.items()}


def test_a_rating_off_the_scale_is_left_out_of_alpha_distributions_and_gaps_and_counted(reviews):
    result = evaluate_reviews(load_records(reviews), workers=1)
    human, model = result.reference, result.group("llm")
    assert human.n_out_of_scale == {"rating": 1, "confidence": 0}
    assert model.n_out_of_scale == {"rating": 2, "confidence": 1}

    panels = human_panels()
    with_model = {paper: panels[paper] + ([PAPERS[paper][2]] if PAPERS[paper][2] in ON_SCALE else [])
                  for paper in panels}
    assert human.krippendorff["ICLR"]["alpha"] == pytest.approx(golden_alpha(panels))
    assert model.krippendorff["ICLR"]["alpha_with_model"] == pytest.approx(golden_alpha(with_model))
    assert model.krippendorff["ICLR"]["alpha_human"] == pytest.approx(golden_alpha(panels))
    assert model.krippendorff["ICLR"]["n_model_ratings"] == 2

    # Confidence gap: a 5 - median(3, 4) = 1.5; b's 9 is off the 1-5 scale; c 4 - 4 = 0; d 2 - median(3, 5) = -2.
    gap = model.confidence_gap
    assert gap["mean"] == pytest.approx(statistics.mean([1.5, 0, -2]))
    assert (gap["n"], gap["n_skipped"]) == (3, 1)

    ratings = model.rating_distribution["ICLR 2022"]
    assert (ratings["n"], ratings["n_out_of_scale"]) == (2, 2)
    assert ratings["model"]["8"] == ratings["model"]["1"] == 0.5
    assert model.pooled_distributions["rating"]["n"] == 2


def test_the_table_shows_the_count_in_its_row_and_a_note(reviews):
    table = behaviour_table(evaluate_reviews(load_records(reviews), workers=1))
    header, _, human, model, *_ = table.splitlines()
    assert header.split()[:5] == ["Source", "n", "unparsed", "off", "scale"]
    assert human.split()[2:5] == ["11", "0", "1"] and model.split()[1:4] == ["4", "0", "3"]
    assert ("3 rating(s) and 1 confidence(s) were not on their venue-year's scale: left out of α, the distributions "
            "and the gaps alike (`n_out_of_scale` of each group).") in table


def test_a_run_without_such_scores_has_no_column(reviews):
    on_scale = [row for row in rows() if row["rating"] in (None, *ON_SCALE) and row["confidence"] in range(1, 6)]
    reviews.write_text("".join(json.dumps(row) + "\n" for row in on_scale))
    table = behaviour_table(evaluate_reviews(load_records(reviews), workers=1))
    assert "off scale" not in table and "venue-year's scale" not in table


def test_shards_merge_into_the_same_counts_and_numbers(reviews):
    expected = evaluate_reviews(load_records(reviews), workers=1).to_dict()
    streamed = result_of(fold_shards(Inputs(str(reviews), batch_rows=3), workers=3)).to_dict()
    assert streamed == expected


def test_the_leaderboard_bootstrap_applies_the_same_rule(reviews):
    records = load_records(reviews)
    human = ScoredReviews.score(records.filter(lambda row: row["source"] == "human"), workers=1)
    model = ScoredReviews.score(records.filter(lambda row: row["source"] != "human"), workers=1)
    metrics, _, n_reviews, _ = slice_metrics(ReviewTable.from_scored(model), ReviewTable.from_scored(human),
                                             ALL_VENUES, 0, 0)
    evaluated = evaluate_reviews(model, human, group_by=("source",), workers=1).group("llm")
    assert metrics["krippendorff_alpha"]["value"] == pytest.approx(evaluated.krippendorff["ICLR"]["alpha_with_model"])
    assert metrics["rating"]["value"] == pytest.approx((8 + 1) / 2)  # 7 and 4 left out
    # a: 8 - median(8, 8) = 0; c: 1 - median(1, 3) = -1
    assert metrics["rating_gap"]["value"] == pytest.approx(-0.5)
    assert metrics["confidence"]["value"] == pytest.approx((5 + 4 + 2) / 3)  # 9 left out
    assert n_reviews == 4


def test_a_venue_or_year_without_a_scale_file_is_named_once_and_read_on_the_generic_scale(tmp_path, caplog):
    unknown = [{**row, "venue": venue, "year": year} for venue, year in (("FOOCONF", 1999), ("ICLR", 2031))
               for row in rows()]
    for row in unknown:
        row["review_id"] += f"-{row['venue']}"
        if row["source"] == "llm" and row["paper_id"] == "a":
            row["rating"] = 11  # off the generic 1-10 scale; 7 and 4 are on it
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in unknown))
    with caplog.at_level(logging.WARNING):
        result = result_of(fold_shards(Inputs(str(path), batch_rows=4), workers=2))
    warnings = [r.getMessage() for r in caplog.records if "scale" in r.getMessage()]
    assert warnings == ["no scale file knows FOOCONF 1999, ICLR 2031: their ratings and confidences are read and "
                        "checked on the generic scale (rating 1-10, confidence 1-5); add a scale file to a folder in "
                        "PRAIB_SCALES_PATH to use the venue's own"]
    model = result.group("llm")
    assert model.n_out_of_scale == {"rating": 2, "confidence": 2}  # 11 twice; 9 twice
    assert model.rating_distribution["FOOCONF 1999"]["n"] == 3


def test_praib_tables_notes_count_them_in_every_table_of_ratings_or_confidences(reviews, tmp_path):
    from praib.tables import load_result, make_tables

    path = tmp_path / "results.json"
    path.write_text(json.dumps(evaluate_reviews(load_records(reviews), workers=1).to_dict()))
    note = ("3 rating(s) and 1 confidence(s) were not on their venue-year's scale: left out of α, the distributions "
            "and the gaps alike (`n_out_of_scale` of each group).")
    tables = {table.key: table for table in make_tables([load_result(str(path))])}
    for key in ("praib-1", "praib-9", "praib-14", "praib-15", "praib-16", "praib-17"):
        assert note in tables[key].notes, key
    assert note not in tables["praib-11"].notes  # text metrics only


def model_review_text(rating: int, confidence: int) -> str:
    return (f"**Summary:** A method for the task.\n**Strengths:** Clear writing.\n**Weaknesses:** Small data.\n"
            f"**Rating:** {rating}\n**Confidence:** {confidence}\n")


def iclr_2025_rows(ratings_in_text: bool, confidence_cap: int = 5) -> list[dict]:
    """The reviews of PAPERS on ICLR 2025 (whose rating scale is ICLR 2022's), the model's confidences up to
    ``confidence_cap`` (on the 1-5 scale by default), and its ratings (7 and 4 off the scale) given in fields or
    written in its review texts."""
    out = []
    for row in rows():
        row = {**row, "year": 2025}
        if row["source"] != "human":
            row["confidence"] = min(row["confidence"], confidence_cap)
            if ratings_in_text:
                row["text"] = model_review_text(row.pop("rating"), row.pop("confidence"))
        out.append(row)
    return out


def counted(result) -> list[dict]:
    """What each group counts and every score metric, not the text metrics (the texts differ)."""
    keys = ("label", "n_reviews", "n_unparsed", "n_partially_parsed", "n_out_of_scale", "krippendorff",
            "rating_distribution", "confidence_distribution", "pooled_distributions", "confidence_gap")
    return [{key: group[key] for key in keys} for group in result.to_dict()["groups"]]


def test_a_rating_off_the_scale_read_from_a_text_counts_as_one_given_in_a_field(tmp_path):
    paths = {}
    for in_text in (False, True):
        paths[in_text] = tmp_path / f"reviews-{in_text}.jsonl"
        paths[in_text].write_text("".join(json.dumps(row) + "\n" for row in iclr_2025_rows(in_text)))
    given, read = (evaluate_reviews(load_records(paths[in_text]), workers=1) for in_text in (False, True))
    model = read.group("llm")
    # Read from "**Rating:** 7": off scale, not "parsed partially" (it was, and the 7 and 4 went uncounted).
    assert (model.n_partially_parsed, model.n_unparsed, model.n_out_of_scale) == (0, 0, {"rating": 2, "confidence": 0})
    assert counted(read) == counted(given)
    streamed = result_of(fold_shards(Inputs(str(paths[True]), batch_rows=3), workers=2))
    assert counted(streamed) == counted(given)
    # The table's counts (source, n, unparsed, off scale) and note alike.
    tables = {in_text: behaviour_table(result).splitlines() for in_text, result in ((False, given), (True, read))}
    counts = {in_text: [line.split()[:5 - (" (reference)" not in line)] for line in table[2:4]]
              for in_text, table in tables.items()}
    assert counts[True] == counts[False] == [["human", "(reference)", "11", "0", "1"], ["llm", "4", "0", "2"]]
    note = "3 rating(s) and 0 confidence(s) were not on their venue-year's scale"
    assert [line for line in tables[True] if note in line] == [line for line in tables[False] if note in line] != []


def test_a_confidence_off_the_scale_read_from_a_text_counts_as_one_given_in_a_field(tmp_path):
    paths = {}
    for in_text in (False, True):
        paths[in_text] = tmp_path / f"reviews-{in_text}.jsonl"
        rows_ = iclr_2025_rows(in_text, confidence_cap=9)
        paths[in_text].write_text("".join(json.dumps(row) + "\n" for row in rows_))
    given, read = (evaluate_reviews(load_records(paths[in_text]), workers=1) for in_text in (False, True))
    # The model's confidence of 9 (b's) is off the 1-5 scale whether given in a field or written in its text.
    assert read.group("llm").n_out_of_scale == given.group("llm").n_out_of_scale == {"rating": 2, "confidence": 1}
    assert (read.group("llm").n_partially_parsed, read.group("llm").n_unparsed) == (0, 0)
    assert counted(read) == counted(given)
