"""The aspect-guided perturbation study's Tables 5 and 6 from the statistics `praib perturb` writes: a rule-based
kind on the demo reviews and an LLM kind whose edits a stub judge makes, both known by hand."""

import json

import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.llm.judge import Judge
from praib.records import load_records
from praib.tables import load_result, make_tables
from tests.doubles import StubBackend
from tests.paths import DEMO
from tests.tables.checks import assert_cells_are_their_results

PAPER = ("# Fast Graphs\n\n## 1 Introduction\nWe study sparse graphs.\n\n## 2 Method\n"
         "We train a 5-layer CNN with batch size 64 and seed 3. The loss is cross-entropy.\n\n"
         "## 3 Experiments\nWe report the mean over 5 runs with a paired t-test.\n")
METHOD = "1. Text Span to Edit\n- Start Words: We train a\n- Ending Words: and seed 3.\n2. Edited Text Span\n" \
         "We train a deep network.\n"


def perturb(*args, monkeypatch=None, backend=None):
    if backend is not None:
        monkeypatch.setattr("praib.llm.judge.make_judge",
                            lambda *a, failures, **options: Judge(backend, failures=failures))
    return CliRunner().invoke(main, ["perturb", *map(str, args), "--no-progress"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("perturb-stats")
    flipped = perturb("rating-flip", DEMO / "reviews.jsonl", "-o", folder / "flipped.jsonl")
    assert flipped.exit_code == 0, flipped.output
    papers = folder / "papers.jsonl"
    papers.write_text(json.dumps({"paper_id": "p1", "venue": "ICLR", "year": 2025, "title": "Fast Graphs",
                                  "text": PAPER}) + "\n")
    # The Method section's edit is accepted; the Experiments section gets an answer naming no span, twice: rejected.
    backend = StubBackend(lambda request: METHOD if "## 2 Method" in request.messages[-1][1]
                          or "Section: 2 Method" in request.messages[-1][1] else "no spans here")
    monkeypatch = pytest.MonkeyPatch()
    try:
        details = perturb("remove-details", papers, "-o", folder / "details.jsonl", "--judge", "stub",
                          "--cache-dir", folder / "cache", monkeypatch=monkeypatch, backend=backend)
    finally:
        monkeypatch.undo()
    assert details.exit_code == 3, details.output  # the rejected section is a recorded failure
    return folder


def load(folder, *names):
    return [load_result(folder / name) for name in names]


def row(table, kind):
    (found,) = [r for r in table.rows if r[2].text() == kind]
    return found


def test_table_5_counts_the_edits_per_paper(runs):
    (built,) = make_tables(load(runs, "flipped.jsonl.stats.json", "details.jsonl.stats.json"), ["agp-5"])
    assert built.header == ["Mode", "Aspect", "Perturbation", "Sum", "Mean", "Min", "Max", "Seconds"]
    # rating-flip: one edit (the score line, or the rating field) per flipped review, summed per paper.
    original, flipped = load_records(DEMO / "reviews.jsonl"), load_records(runs / "flipped.jsonl")
    per_paper: dict[str, int] = {}
    for before, after in zip(original, flipped):
        changed = any(before[k] != after[k] for k in before if k != "perturbation")
        per_paper[before["paper_id"]] = per_paper.get(before["paper_id"], 0) + changed
    flip = row(built, "rating-flip")
    assert [c.text() for c in flip[:2]] == ["Review", "Conclusion"]
    assert [c.value for c in flip[3:7]] == [sum(per_paper.values()), sum(per_paper.values()) / 8,
                                            min(per_paper.values()), max(per_paper.values())]
    # remove-details: "5-layer CNN with batch size 64 and seed 3." -> "deep network.": one edit in one paper.
    details = row(built, "remove-details")
    assert [c.text() for c in details[:2]] == ["Paper", "Soundness"]
    assert [c.text() for c in details[3:7]] == ["1", "1.00", "1", "1"] and details[7].value >= 0
    assert [r[1].text() for r in built.rows[:3]] == ["Contribution", "Soundness", "Presentation"]
    assert any(need.startswith("Paper / Contribution row: the statistics of `praib perturb KIND") for need in built.needs)
    assert assert_cells_are_their_results([built]) == 10


def test_table_6_success_rate_is_the_share_of_llm_edits_accepted(runs):
    (built,) = make_tables(load(runs, "details.jsonl.stats.json", "flipped.jsonl.stats.json"), ["agp-6"])
    details = row(built, "remove-details")
    # Two sections asked, one accepted and one rejected: 50%; the one paper came out changed: 100%.
    assert [c.text() for c in details[3:]] == ["NO", "YES", "50", "100"]
    assert details[5].source.endswith("/kinds/remove-details/llm_accepted_share")
    assert all(r[2].text() != "rating-flip" for r in built.rows)  # the conclusion edit is rule-based, not in Table 6
    assert [(r[0].text(), r[1].text()) for r in built.rows] == [
        ("Paper", "Contribution"), ("Paper", "Soundness"), ("Paper", "Presentation"), ("Review", "Tone"),
        ("Review", "Correctness"), ("Rebuttal", "Tone"), ("Rebuttal", "Completeness"), ("Rebuttal", "Presentation")]
    assert_cells_are_their_results([built])


def test_a_kind_in_two_files_is_read_from_the_first(runs):
    (built,) = make_tables(load(runs, "flipped.jsonl.stats.json", "flipped.jsonl.stats.json"), ["agp-5"])
    assert "Found in several files, read from the first given: rating-flip." in built.notes


def test_the_cli_reads_the_statistics_files(runs):
    rendered = CliRunner().invoke(main, ["tables", str(runs / "details.jsonl.stats.json"), "-t", "agp-6"])
    assert rendered.exit_code == 0, rendered.output
    assert "| Paper | Soundness | remove-details | NO | YES | 50 | 100 |" in rendered.output
