"""PRAIB Tables 3, 7 and 8 from the statistics.json of `praib data build` on records whose counts are known by hand,
and the Table 7 and 8 of the demo set."""

import json

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.tables import load_result, make_tables
from tests.paths import DEMO
from tests.tables.checks import assert_cells_are_their_results

# ICLR 2017 and 2018 (one year group), 2019; NeurIPS 2021. (venue, year, decision, human reviews)
PAPERS = [("ICLR", 2017, "Accept (Oral)", 3), ("ICLR", 2018, "Reject", 2), ("ICLR", 2018, "Withdrawn", 0),
          ("ICLR", 2019, "Accept (Poster)", 4), ("ICLR", 2019, "Reject", 3), ("NeurIPS", 2021, "Accept", 5)]
# Model reviews of the 2019 papers: model m1 under two prompts, model m2 under one.
GENERATED = [("m1", "extended"), ("m1", "guidelines"), ("m2", "extended")]


def build(folder, *configs):
    papers, reviews, generated = (folder / name for name in ("papers.jsonl", "reviews.jsonl", "generated.jsonl"))
    papers.write_text("".join(json.dumps({"paper_id": f"p{i}", "venue": v, "year": y, "decision": d}) + "\n"
                              for i, (v, y, d, _) in enumerate(PAPERS)))
    reviews.write_text("".join(json.dumps({"paper_id": f"p{i}", "review_id": f"p{i}-r{k}", "venue": v, "year": y,
                                           "source": "human", "rating": 5}) + "\n"
                               for i, (v, y, _, n) in enumerate(PAPERS) for k in range(n)))
    generated.write_text("".join(json.dumps({"paper_id": f"p{i}", "review_id": f"p{i}-{m}-{p}", "venue": "ICLR",
                                             "year": 2019, "source": m, "model": m, "prompt": p, "rating": 5}) + "\n"
                                 for i in (3, 4) for m, p in GENERATED))
    files = {"papers": papers, "reviews": reviews, "generated-reviews": generated}
    args = [arg for config in configs for arg in (f"--{config}", str(files[config]))]
    result = CliRunner().invoke(main, ["data", "build", *args, "-o", str(folder / "dataset")])
    assert result.exit_code == 0, result.output
    return folder / "dataset"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build(tmp_path_factory.mktemp("dataset"), "papers", "reviews", "generated-reviews")


def tables(path, keys):
    return {table.key: table for table in make_tables([load_result(path)], keys)}


def texts(table):
    return [[cell.text() for cell in row] for row in table.rows]


def test_table_3_counts_papers_by_decision_and_reviews_per_year_group(built):
    table = tables(built, ["praib-3"])["praib-3"]  # the folder itself, read through its statistics.json
    assert table.header == ["", "<=2018", "2019", "2021", "Total"]
    assert texts(table) == [
        ["ICLR", "", "", "", ""],
        ["Papers", "3", "2", "-", "5"], ["Accept", "1", "1", "-", "2"], ["Reject", "1", "1", "-", "2"],
        ["Withdrawn", "1", "0", "-", "1"], ["Reviews", "5", "7", "-", "12"],
        ["NeurIPS", "", "", "", ""],
        ["Papers", "-", "-", "1", "1"], ["Accept", "-", "-", "1", "1"], ["Reject", "-", "-", "0", "0"],
        ["Withdrawn", "-", "-", "0", "0"], ["Reviews", "-", "-", "5", "5"]]
    assert not table.needs and assert_cells_are_their_results([table]) == 5 * 3 + 5 * 2


def test_table_7_reviews_per_venue_and_year_with_their_total(built):
    table = tables(built / "statistics.json", ["praib-7"])["praib-7"]
    assert texts(table) == [["ICLR", "<=2018", "5"], ["ICLR", "2019", "7"], ["NeurIPS", "2021", "5"],
                            ["Total", "", "17"]]
    assert table.rows[-1][2].bold and "**17**" in table.to_markdown()
    assert_cells_are_their_results([table])


def test_table_8_model_reviews_per_model_with_the_prompts_side_by_side(built):
    table = tables(built, ["praib-8"])["praib-8"]
    assert table.header == ["Conference", "Year", "m1", "m2"]
    assert texts(table) == [["ICLR", "2019", "2 / 2", "2"]]
    assert "m1: extended / guidelines; m2: extended" in table.notes[0]
    assert_cells_are_their_results([table])


def test_counts_of_configs_not_built_are_missing_not_zero(tmp_path):
    folder = build(tmp_path, "reviews")
    table_3, table_8 = tables(folder, ["praib-3", "praib-8"]).values()
    assert texts(table_3)[1] == ["Papers", "—", "—", "-", "—"]  # ICLR has no 2021
    assert table_3.needs == ["Papers, Accept, Reject, Withdrawn: build with `--papers` (the collected paper records)"]
    assert not table_8.rows and table_8.needs == [
        "every cell: build with `--generated-reviews` (the models' reviews of the sampled papers)"]


def test_the_demo_set(tmp_path):
    result = CliRunner().invoke(main, ["data", "build", "--papers", str(DEMO / "papers.jsonl"), "--reviews",
                                       str(DEMO / "reviews.jsonl"), "-o", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    rendered = CliRunner().invoke(main, ["tables", str(tmp_path / "demo"), "-t", "praib-7", "-t", "praib-8"])
    assert rendered.exit_code == 0, rendered.output
    # 26 human reviews (13 ICLR, 13 NeurIPS), and 8 reviews of each model under each prompt, 4 per venue.
    assert "| ICLR | 2025 | 13 |" in rendered.output and "| Total |  | **26** |" in rendered.output
    assert "| ICLR | 2025 | 4 / 4 | 4 / 4 |" in rendered.output
