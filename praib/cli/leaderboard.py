"""`praib leaderboard validate|run|push|report|eras`: check, score, publish and report submissions."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import click

from praib.cli.common import (failure_log, judge_options, max_failures_option, no_progress_option, output_option,
                              seed_option, split_option, write_json)

DEMO_REVIEWS = "data/demo/reviews.jsonl"


def _demo_reviews_path() -> str:
    return str(resources.files("praib").joinpath(DEMO_REVIEWS))


@click.group()
def leaderboard():
    """Check submissions, score them against the human reference, publish and report the results."""


@leaderboard.command()
@click.argument("submission", metavar="SUBMISSION")
@click.option("--benchmark-papers", type=click.Path(exists=True), metavar="FILE",
              help="The benchmark's papers (Paper records): check that every one is reviewed.")
@click.option("--manifest", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
              help="The manifest (default: manifest.json next to the reviews).")
@click.option("--max-unparsed", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="Largest share of reviews that may fail to parse.")
@split_option
def validate(submission, benchmark_papers, manifest, max_unparsed, split):
    """Check a leaderboard SUBMISSION: a Hub dataset id, or a directory or JSONL/JSON/Parquet file of
    generated Review records with its manifest.json, and explain every problem. Exits with 0 when
    valid, 1 otherwise; publish a valid submission as a Hub dataset (reviews plus manifest.json) to enter it."""
    from praib.leaderboard.submission import validate_submission

    report = validate_submission(submission, benchmark_papers, manifest, split=split, max_unparsed=max_unparsed)
    click.echo(report.format())
    raise SystemExit(0 if report.valid else 1)


@leaderboard.command("run")
@click.argument("submissions", metavar="SUBMISSION...", nargs=-1)
@click.option("--reference", "reference_path", metavar="HUMAN",
              help="Human reviews to compare against (default with --demo: the demo set's human reviews).")
@click.option("--demo", is_flag=True, help="Use the demo set's human reviews as the reference.")
@click.option("--benchmark-papers", type=click.Path(exists=True), metavar="FILE",
              help="Score only the reviews of these papers (Paper records).")
@click.option("--n-bootstrap", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Cluster-bootstrap draws (papers resampled with all their reviews).")
@seed_option("Seed of the bootstrap draws.")
@judge_options
@output_option("Results directory (results.parquet/.jsonl, manifests/, details/, eras.json, run.json).",
               default="results", file_okay=False, layout="praib.leaderboard.run:RESULT_FILES")
@click.option("--workers", type=int, default=None, help="Processes for the text metrics (default: all cores).")
@max_failures_option
@no_progress_option
def run(submissions, reference_path, demo, benchmark_papers, n_bootstrap, seed, judge_spec, cache_dir, output, workers,
        max_failures, no_progress):
    """Score every SUBMISSION (a directory or JSONL/JSON/Parquet file of Review records with its
    manifest.json, or a Hub dataset id; check it first with `praib leaderboard validate`) with every
    metric against the human reference, with bootstrap 95% intervals per venue and pooled, and
    write the results directory (read it with `praib leaderboard report`). Judged metrics need --judge;
    perturbed records in a submission give robustness rows, and reviews of counterfactual papers
    (with --judge) treatment-effect rows."""
    if not submissions:
        raise click.UsageError("give at least one SUBMISSION")
    if reference_path is None and not demo:
        raise click.UsageError("give --reference HUMAN (or --demo)")
    reference_path = reference_path or _demo_reviews_path()
    with failure_log(max_failures, output) as failures:
        _run(submissions, reference_path, benchmark_papers, n_bootstrap, seed, judge_spec, failures, output,
             workers, no_progress)


def _run(submissions, reference_path, benchmark_papers, n_bootstrap, seed, judge_spec, failures, output, workers,
         no_progress):
    """The leaderboard run of `run`: every input read first, then the judge (if any) made, recording into
    the run's failure log."""
    from praib.llm.backends import BackendError

    from praib.records import HUMAN_SOURCE, RecordError, load_records, perturbation_kind
    from praib.leaderboard.run import run_leaderboard
    from praib.metrics.registry import JUDGED
    from praib.leaderboard.submission import SubmissionError, load_submission

    try:
        loaded = [load_submission(s) for s in submissions]
        reference = load_records(reference_path, "review", source_name=HUMAN_SOURCE)
        if benchmark_papers:
            ids = {p["paper_id"] for p in load_records(benchmark_papers, "paper") if perturbation_kind(p) is None}
            reference = _reviews_of(reference, ids, reference_path, benchmark_papers)
            for s in loaded:
                s.reviews = _reviews_of(s.reviews, ids, s.source, benchmark_papers)
        judge = judge_spec.make(failures)
        results = run_leaderboard(loaded, reference, output, reference_label=reference_path,
                                  n_bootstrap=n_bootstrap, seed=seed, judge=judge, workers=workers,
                                  progress=not no_progress, cache_dir=judge_spec.cache_dir)
    except (SubmissionError, RecordError, ValueError, BackendError) as err:
        raise click.ClickException(str(err)) from None
    shown = ("tkc", "fre", "krippendorff_alpha", "rating_tv")
    for row in (r for r in results.to_list() if r["venue"] == "all" and r["metric"] in shown):
        ci = "" if row["ci_low"] is None else f" [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
        value = "-" if row["value"] is None else f"{row['value']:.3f}"
        click.echo(f"{row['submission']:<24} {row['metric']:<20} {value}{ci}"
                   + ("  (closest to human)" if row["closest_to_human"] else ""))
    if judge is not None:
        from praib.evaluation.judge_validity import validity_lines

        validation = json.loads((output / "run.json").read_text(encoding="utf-8"))["judge_validation"]
        click.echo("\n".join(validity_lines(validation)), err=True)
        judged = {r["submission"] for r in results.to_list() if r["metric"] in JUDGED}
        for s in loaded:
            if s.name not in judged:
                invalid = json.loads((output / "details" / f"{s.name}.json").read_text(encoding="utf-8")
                                     ).get("invalid_judge_answers") or {}
                click.echo(f"warning: {s.name}: no judged metric is defined: the judge gave no usable answer "
                           f"(invalid answers: {', '.join(f'{k} {v}' for k, v in invalid.items()) or 'none'}; "
                           f"see {output / 'details' / (s.name + '.json')})", err=True)
    click.echo(f"wrote {len(results)} result rows to {output}")


def _reviews_of(reviews, paper_ids: set, source: str, benchmark_papers: str):
    """The reviews of the benchmark papers; none is an error, not a submission left out."""
    from praib.leaderboard.run import select_rows

    kept = select_rows(reviews, lambda row: row["paper_id"] in paper_ids)
    if not len(kept):
        raise click.ClickException(f"{source}: none of its {len(reviews)} reviews is of one of the "
                                   f"{len(paper_ids)} papers of {benchmark_papers}")
    return kept


@leaderboard.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.argument("repo_id", metavar="REPO_ID")
@click.option("--token", default=None, help="Hub token. [default: $HF_TOKEN or the one saved by `hf auth login`]")
@click.option("--private", is_flag=True, help="Create the repository as private.")
def push(directory, repo_id, token, private):
    """Publish a results DIRECTORY written by `praib leaderboard run` as the Hub dataset REPO_ID (ORG/NAME)."""
    from praib.leaderboard.run import push_results
    from praib.records import RecordError

    try:
        push_results(directory, repo_id, token=token, private=private)
    except (FileNotFoundError, RecordError) as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"pushed {directory} to {repo_id}")


@leaderboard.command()
@click.argument("human_reviews", metavar="HUMAN_REVIEWS")
@click.option("--split-year", type=int, default=None,
              help="First post-LLM year for every venue [default: ICLR 2024, NeurIPS 2023, others 2023].")
@output_option("Write the analysis as JSON here.", dir_okay=False)
@split_option
@click.option("--workers", type=int, default=None, help="Processes for the text metrics (default: all cores).")
@no_progress_option
def eras(human_reviews, split_year, output, split, workers, no_progress):
    """Human reviews across years and before/after the LLM era: per-year means and Mann-Whitney U
    tests between eras, per venue (PRAIB Tables 4-6)."""
    from praib.records import HUMAN_SOURCE, RecordError, load_records
    from praib.leaderboard.eras import era_analysis, era_tables
    from praib.leaderboard.run import select_rows

    try:
        reviews = load_records(human_reviews, "review", split=split, source_name=HUMAN_SOURCE)
    except RecordError as err:
        raise click.ClickException(str(err)) from None
    reviews = select_rows(reviews, lambda row: row["source"] == HUMAN_SOURCE)
    if not len(reviews):
        raise click.ClickException(f"{human_reviews}: no human review (source 'human')")
    analysis = era_analysis(reviews, split_year=split_year, workers=workers, progress=not no_progress)
    click.echo(era_tables(analysis))
    if output:
        write_json(analysis, output)
        click.echo(f"wrote {output}")


@leaderboard.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@output_option("The HTML page to write (self-contained: styles and plots inline).", default="report.html",
               dir_okay=False)
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the report's tables as Markdown here.")
@click.option("--title", default="praib leaderboard", show_default=True, help="Title of the page.")
def report(directory, output, markdown, title):
    """Write the leaderboard report of DIRECTORY (written by `praib leaderboard run`): PRAIB's
    Table 1 with 95% CIs and distances to the human reference, coverage, target/aspect,
    robustness and treatment-effect tables when computed, score-distribution plots and the
    pre/post-LLM era comparison of the human reviews."""
    from praib.leaderboard.report import ReportError, write_report

    try:
        sections = write_report(directory, output, markdown, title)
    except ReportError as err:
        raise click.ClickException(str(err)) from None
    shown = [s.title for s in sections if s.tables or s.plots]
    left_out = [s.title for s in sections if not (s.tables or s.plots)]
    n_tables = sum(len(s.tables) for s in sections)
    n_plots = sum(len(s.plots) for s in sections)
    click.echo(f"wrote {output} ({n_tables} tables, {n_plots} plots)" + (f" and {markdown}" if markdown else ""))
    click.echo("sections: " + ", ".join(shown))
    if left_out:
        click.echo("left out (no data): " + ", ".join(left_out))
