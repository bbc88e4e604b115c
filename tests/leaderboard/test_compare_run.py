"""The comparisons of a `praib leaderboard run` on the demo: comparisons.parquet and ranks.parquet as typed, the run's
own draws giving what fresh draws give, rank 1 where the results mark the submission closest to human, and
`praib leaderboard compare` / `plan` as a user runs them (every pair printed; a copy of a submission no different
from it; bad input one line), and the report's comparison section."""

import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from datasets import Dataset

from praib.cli.main import main
from praib.leaderboard.compare import (COMPARISON_FEATURES, NO_DIFFERENCE, POWER_Z, RANK_FEATURES, compare_run,
                                       compare_tables, load_comparison)
from praib.leaderboard.report import load_results, write_report
from praib.leaderboard.run import score_run
from praib.leaderboard.submission import load_submission
from praib.records import load_records
from tests.leaderboard.report_page import parse, table
from tests.paths import DEMO

N_BOOTSTRAP = 200
MANIFEST = {"backend": "hand-written", "prompts": ["extended"], "sampling": {"temperature": 0.0}, "date": "2026-01-05"}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="praib")


def submission(root: Path, name: str, model: str) -> Path:
    """The demo's extended-prompt reviews of ``model`` as the submission folder ``name``."""
    folder = root / name
    folder.mkdir()
    rows = [line for line in (DEMO / "reviews.jsonl").read_text(encoding="utf-8").splitlines()
            if json.loads(line).get("model") == model and json.loads(line).get("prompt") == "extended"]
    (folder / "reviews.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({"model": model, **MANIFEST}), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """demo-model-a, an exact copy of it under another name, and demo-model-b, run from the command line."""
    root = tmp_path_factory.mktemp("compare")
    folders = [submission(root, "model-a", "demo-model-a"), submission(root, "model-a-copy", "demo-model-a"),
               submission(root, "model-b", "demo-model-b")]
    ran = invoke("leaderboard", "run", *folders, "--demo", "--n-bootstrap", N_BOOTSTRAP, "--no-progress",
                 "-o", root / "results")
    assert ran.exit_code == 0, ran.output
    return root, folders, ran.output


def test_the_run_writes_typed_comparisons_and_ranks_and_says_how_many_differences_it_found(demo):
    root, _, output = demo
    out = root / "results"
    comparisons, ranks = pq.read_table(out / "comparisons.parquet"), pq.read_table(out / "ranks.parquet")
    assert comparisons.column_names == list(COMPARISON_FEATURES) and ranks.column_names == list(RANK_FEATURES)
    # Hub-friendly: datasets reads them back with their features.
    assert Dataset.from_parquet(str(out / "comparisons.parquet")).features == COMPARISON_FEATURES
    assert Dataset.from_parquet(str(out / "ranks.parquet")).features == RANK_FEATURES
    # 3 pairs x 12 metrics x (pooled, ICLR, NeurIPS); 3 submissions x 12 metrics x 3 slices.
    assert (comparisons.num_rows, ranks.num_rows) == (108, 108)
    detected = sum(row["verdict"] != NO_DIFFERENCE for row in comparisons.to_pylist())
    assert (f"108 comparisons of two submissions (each pair, metric and venue): {detected} differences detected at "
            f"a false discovery rate of 0.05 (praib leaderboard compare {out})") in output
    assert json.loads((out / "run.json").read_text())["fdr"] == 0.05


def test_in_memory_comparisons_are_those_the_run_wrote_and_the_runs_draws_are_fresh_draws(demo):
    root, folders, _ = demo
    import praib.leaderboard

    submissions = [load_submission(str(folder)) for folder in folders]
    reference = load_records(DEMO / "reviews.jsonl", "review")
    # As Python users reach them: from praib.leaderboard, on a run folder or on submissions in memory.
    written = praib.leaderboard.load_comparison(root / "results")
    in_memory = praib.leaderboard.compare_submissions(submissions, reference, N_BOOTSTRAP, seed=0, workers=1)
    assert isinstance(written, praib.leaderboard.Comparison) and in_memory.to_dict() == written.to_dict()
    scored = score_run(submissions, reference, N_BOOTSTRAP, 0, workers=1)
    redrawn = compare_tables(scored.human, scored.tables, N_BOOTSTRAP, 0)
    assert compare_run(scored).to_dict() == redrawn.to_dict()


def test_rank_one_is_where_the_results_mark_the_submission_closest_to_human(demo):
    root, _, _ = demo
    results = load_results(root / "results")
    ranks = {(r.submission, r.metric, r.venue): r for r in load_comparison(root / "results").ranks}
    assert len(ranks) == 108
    for (name, metric, venue), rank in ranks.items():
        row = results.row(name, metric, venue)
        assert rank.distance_to_human == row["distance_to_human"]
        assert (rank.rank == 1) == row["closest_to_human"], (name, metric, venue)
        assert rank.rank_low <= rank.rank <= rank.rank_high or rank.rank_low <= rank.rank_high


def test_compare_prints_every_pair_and_a_copy_differs_from_itself_by_nothing(demo):
    root, _, _ = demo
    printed = invoke("leaderboard", "compare", root / "results")
    assert printed.exit_code == 0, printed.output
    rows = [line.split() for line in printed.output.splitlines() if line.split()[:1] and line.split()[0] in
            {m for m in load_comparison(root / "results").metrics()} and len(line.split()) > 8]
    assert len(rows) == 108
    pairs = {(row[2], row[3]) for row in rows}
    assert pairs == {("model-a", "model-a-copy"), ("model-a", "model-b"), ("model-a-copy", "model-b")}
    copies = [row for row in rows if (row[2], row[3]) == ("model-a", "model-a-copy")]
    assert len(copies) == 36
    for row in copies:
        # metric venue A B papers difference [low, high] p p(BH) verdict...
        assert row[4] == ("8" if row[1] == "all" else "4")
        assert float(row[5]) == 0 and row[6:8] == [f"[{row[5]},", f"{row[5]}]"] or row[5] == "–", row
        assert " ".join(row[10:13]) == "no detectable difference", row
    # model-a and model-b differ in readability: FRE pooled, model-b (45.7 against the human 56.2) is closer.
    fre = next(row for row in rows if row[:4] == ["fre", "all", "model-a", "model-b"])
    assert fre[10:12] == ["model-b", "closer"]
    assert "Rank intervals" in printed.output


def test_compare_takes_one_metric_and_venue_and_names_what_the_run_has(demo):
    root, _, _ = demo
    one = invoke("leaderboard", "compare", root / "results", "--metric", "fre", "--venue", "all")
    assert one.exit_code == 0, one.output
    lines = one.output.splitlines()
    assert sum(line.startswith("fre     all") for line in lines) == 3 + 3  # 3 pairs, then 3 ranks
    # The adjustment was over the run's 108 comparisons, whatever the table shows.
    assert "(Benjamini-Hochberg over all 108 comparisons of the run)" in lines[0]
    bad = invoke("leaderboard", "compare", root / "results", "--metric", "fres")
    assert bad.exit_code == 2
    assert "Invalid value for --metric: 'fres': the run compared tkc, ttr, fre" in bad.output


def test_plan_gives_the_papers_for_a_difference_from_the_runs_standard_errors(demo):
    root, _, _ = demo
    fre = load_comparison(root / "results").between("model-a", "model-b", "fre")
    planned = invoke("leaderboard", "plan", root / "results", "--difference", 2, "--metric", "fre", "--venue", "all")
    assert planned.exit_code == 0, planned.output
    row = next(line.split() for line in planned.output.splitlines() if line.startswith("fre") and "model-b" in line
               and "model-a " in line + " ")
    # n x ((z_0.975 + z_0.8) x SE / 2)^2 on the 8 papers both reviewed.
    assert row[-1] == str(math.ceil(8 * (POWER_Z * fre.standard_error / 2) ** 2))
    observed = invoke("leaderboard", "plan", root / "results", "--metric", "fre", "--venue", "all")
    row = next(line.split() for line in observed.output.splitlines() if line.startswith("fre") and "model-b" in line
               and line.split()[2] == "model-a")
    assert row[-1] == str(fre.papers_needed)
    assert "each pair's observed difference" in observed.output


def test_a_folder_without_comparisons_or_with_a_damaged_file_is_one_line(demo, tmp_path):
    root, _, _ = demo
    old = tmp_path / "old"
    old.mkdir()
    for name in ("results.parquet", "run.json"):
        (old / name).write_bytes((root / "results" / name).read_bytes())
    refused = invoke("leaderboard", "compare", old)
    assert refused.exit_code == 1
    assert refused.output == (f"Error: {old}: no comparisons.parquet (`praib leaderboard run` writes it; this run is "
                              "from a version without comparisons: run it again)\n")
    (old / "ranks.parquet").write_bytes((root / "results" / "ranks.parquet").read_bytes())
    half = invoke("leaderboard", "plan", old)
    assert half.output.startswith(f"Error: {old / 'comparisons.parquet'}: missing, beside ranks.parquet")
    (old / "comparisons.parquet").write_text("not parquet", encoding="utf-8")
    damaged = invoke("leaderboard", "compare", old)
    assert damaged.exit_code == 1 and damaged.output.startswith(f"Error: {old / 'comparisons.parquet'}:")
    assert len(damaged.output.splitlines()) == 1
    # The report still reads the old folder, and says the comparisons are what it lacks.
    (old / "comparisons.parquet").unlink()
    (old / "ranks.parquet").unlink()
    report = invoke("leaderboard", "report", old, "-o", tmp_path / "old.html")
    assert report.exit_code == 0 and "Which submission is closer to human" in report.output.splitlines()[-1]


def test_the_report_shows_whether_each_star_is_separable_rank_intervals_and_a_matrix_per_metric(demo, tmp_path):
    root, _, _ = demo
    write_report(root / "results", tmp_path / "report.html", tmp_path / "report.md")
    page = parse((tmp_path / "report.html").read_text(encoding="utf-8"))
    comparison = load_comparison(root / "results")
    separable = table(page, "Is the ★ separable from the runner-up?")
    header, *rows = separable["rows"]
    assert header == ["Metric", "Venue", "★ closest", "Runner-up", "Difference", "p (BH)", "Separable"]
    by_slice = {(row[0], row[1]): row for row in rows}
    assert len(by_slice) == 36
    # FRE pooled: model-b is first, then the tied model-a and its copy; model-b is detectably closer.
    fre = by_slice[("FRE", "all")]
    pair = comparison.between("model-b", fre[3].strip(), "fre")
    assert fre[2].strip().startswith("model-b") and fre[3].strip() in ("model-a", "model-a-copy")
    assert fre[6].strip() == ("yes" if pair.closer() == "model-b" else "no: not separable")
    # Xref. pooled: model-a and its copy tie for ★, so the ★ cannot be separable.
    xref = by_slice[("Xref.", "all")]
    assert xref[3].strip() == "model-a-copy (tied ★)" and "not separable" in xref[6]
    ranks = table(page, "Rank intervals: all venues pooled")
    assert ranks["rows"][0][:4] == ["Submission", "TKC", "TTR", "FRE"]
    matrix = table(page, "FRE: row minus column, distance to human (all venues pooled)")
    assert [row[0].strip() for row in matrix["rows"][1:]] == ["model-b", "model-a", "model-a-copy"]
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Which submission is closer to human" in markdown
