"""The counterfactual study's Tables 2 and 3 from `praib counterfactual stats` on papers, variants and logic whose
statistics are known by hand (those of tests/perturb/test_statistics.py), and from a build's statistics file."""

import json

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.tables import load_result, make_tables
from tests.paths import DEMO
from tests.tables.checks import assert_cells_are_their_results

PAPERS = [("a", "ACL", "x y z\nw v"), ("b", "ACL", "one two three"), ("c", "EMNLP", "p q r"), ("d", "EMNLP", "no variant")]
CRITICAL, NEUTRAL = "soundness-critical", "soundness-neutral"
VARIANTS = [("a", "x Y z\nw V", CRITICAL), ("a", "x y z\nw v extra words", NEUTRAL), ("b", "one TWO three", CRITICAL),
            ("c", "p q r s", NEUTRAL)]
LOGIC = [("a", "method", 3), ("b", "analysis", 1), ("c", "method", 2), ("d", "dataset", 0)]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def stats(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cf-stats")
    papers = write_jsonl(folder / "papers.jsonl", [{"paper_id": p, "venue": v, "year": 2023, "text": t}
                                                   for p, v, t in PAPERS])
    variants = write_jsonl(folder / "variants.jsonl", [
        {"paper_id": p, "venue": dict((q, v) for q, v, _ in PAPERS)[p], "year": 2023, "text": t,
         "perturbation": {"kind": "result-negated" if c == CRITICAL else "spelling", "category": c,
                          "component": "paper", "seed": 0, "description": "d"}} for p, t, c in VARIANTS])
    logic = write_jsonl(folder / "logic.jsonl", [
        {"paper_id": p, "goal": {"summary": "g", "paragraphs": ["p1"], "genre": genre}, "model": "m", "attempts": 1,
         "findings": [{"id": f"F{i}", "rank": i, "summary": "f", "paragraphs": ["p1"], "conclusions": []}
                      for i in range(1, n + 1)], "conclusions": [], "results": []} for p, genre, n in LOGIC])
    result = CliRunner().invoke(main, ["counterfactual", "stats", str(papers), str(variants), "--logic", str(logic),
                                       "-o", str(folder / "stats.json")])
    assert result.exit_code == 0, result.output
    return folder / "stats.json"


def texts(table):
    return [[cell.text() for cell in row] for row in table.rows]


def test_table_2_papers_by_venue_and_paper_type(stats):
    (table,) = make_tables([load_result(stats)], ["cf-2"])
    assert texts(table) == [
        ["Paper Distribution", ""], ["#papers", "3"], ["#papers p. conference", "1.50 ± 0.71"], ["  ACL", "2"],
        ["  EMNLP", "1"], ["#papers p. institution", "—"], ["Research Logic Distribution", ""],
        ["#paper types", "2"], ["#papers p. paper type", "1.50 ± 0.71"], ["  analysis", "1"], ["  method", "2"],
        ["#findings p. paper", "2.00 ± 1.00"]]
    assert table.needs == ["#papers p. institution: praib's paper records carry no affiliations (the study read the "
                           "last author's institution from OpenAlex)"]
    assert assert_cells_are_their_results([table]) == 12


def test_table_3_counterfactuals_their_edits_and_changed_words(stats):
    (table,) = make_tables([load_result(stats)], ["cf-3"])
    assert table.header == ["", "CFCR", "CFNE", "total"]
    # Critical: a (2 edits, 2 words), b (1, 1); neutral: a (1 edit, 2 words), c (1, 1); 3 papers with a variant.
    assert texts(table) == [["#CFs", "2", "2", "4"], ["#CFs / paper", "0.67", "0.67", "1.33"],
                            ["#edits / CF", "1.50 ± 0.71", "1.00 ± 0.00", "1.25 ± 0.50"],
                            ["diff. / CF", "1.50 ± 0.71", "1.50 ± 0.71", "1.50 ± 0.58"]]
    assert assert_cells_are_their_results([table]) == 3 + 3 + 6 + 6


def test_a_build_without_paper_types_or_logic_says_what_fills_them(tmp_path):
    result = CliRunner().invoke(main, ["counterfactual", "build", str(DEMO / "papers.jsonl"), "--edits",
                                       "language-errors", "-o", str(tmp_path / "v.jsonl"), "--no-progress"])
    assert result.exit_code == 0, result.output
    table_2, table_3 = make_tables([load_result(tmp_path / "v.jsonl.stats.json")], ["cf-2", "cf-3"])
    assert [need.split(":")[0] for need in table_2.needs] == ["#papers p. institution",
                                                              "#paper types, #papers p. paper type",
                                                              "#findings p. paper"]
    assert texts(table_3)[0] == ["#CFs", "0", "8", "8"]
    assert_cells_are_their_results([table_2, table_3])
