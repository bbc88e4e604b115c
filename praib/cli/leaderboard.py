"""`praib leaderboard validate|run|compare|plan|push|report|eras`: check, score, compare, publish and report
submissions."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import click

from praib.cli.common import (failure_log, judge_options, max_failures_option, no_progress_option, output_option,
                              OutputPath, seed_option, SOURCE, split_option, write_json)

fdr_option = click.option("--fdr", type=click.FloatRange(0, 1, min_open=True), default=0.05, show_default=True,
                          help="False discovery rate of the comparisons' verdicts (Benjamini-Hochberg over every "
                               "pair, metric and venue).")

DEMO_REVIEWS = "data/demo/reviews.jsonl"
# "./": a path of that shape that does not exist yet would otherwise read as a Hub dataset id ORG/NAME.
DEFAULT_QUEUE, DEFAULT_RESULTS = "./leaderboard/requests", "./leaderboard/results"
STORE_HELP = "a local folder, or a Hub dataset id ORG/NAME"
token_option = click.option("--token", default=None,
                            help="Hub token. [default: $HF_TOKEN or the one saved by `hf auth login`]")


def _demo_reviews_path() -> str:
    return str(resources.files("praib").joinpath(DEMO_REVIEWS))


def check_options(command):
    """The options of a submission's check, the same on `validate` and `submit`."""
    for option in reversed([
        click.option("--benchmark-papers", type=click.Path(exists=True), metavar="FILE",
                     help="The benchmark's papers (Paper records): check that every one is reviewed."),
        click.option("--manifest", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
                     help="The manifest (default: manifest.json next to the reviews)."),
        click.option("--max-unparsed", type=click.FloatRange(0, 1), default=0.05, show_default=True,
                     help="Largest share of reviews that may fail to parse."),
        split_option,
    ]):
        command = option(command)
    return command


@click.group()
def leaderboard():
    """Check submissions, score them against the human reference, publish and report the results."""


@leaderboard.command()
@click.argument("submission", metavar="SUBMISSION")
@check_options
def validate(submission, benchmark_papers, manifest, max_unparsed, split):
    """Check a leaderboard SUBMISSION: a Hub dataset id, or a directory or JSONL/JSON/Parquet file of
    generated Review records with its manifest.json, and explain every problem. Exits with 0 when
    valid, 1 otherwise; publish a valid submission as a Hub dataset (reviews plus manifest.json) to enter it."""
    from praib.leaderboard.submission import validate_submission

    report = validate_submission(submission, benchmark_papers, manifest, split=split, max_unparsed=max_unparsed)
    click.echo(report.format())
    raise SystemExit(0 if report.valid else 1)


@leaderboard.command()
@click.argument("submission", metavar="SUBMISSION")
@click.option("--queue", default=DEFAULT_QUEUE, show_default=True, metavar="QUEUE", help=f"The queue: {STORE_HELP}.")
@check_options
@token_option
def submit(submission, queue, benchmark_papers, manifest, max_unparsed, split, token):
    """File SUBMISSION (as `praib leaderboard validate` takes it) into the leaderboard's QUEUE as a PENDING
    request, for `praib leaderboard process` to score. It is checked as `validate` checks it and refused
    with its problems when invalid, or when the queue holds the same model, revision, prompts and records
    already (unless that request failed)."""
    from praib.leaderboard.queue import SubmissionRefused, submit as file_request
    from praib.leaderboard.stores import StoreError, open_store
    from praib.leaderboard.submission import SubmissionError
    from praib.records import RecordError

    try:
        request = file_request(open_store(queue, token), submission, manifest, benchmark_papers, split,
                               max_unparsed)
    except SubmissionRefused as err:
        if err.report is not None:
            click.echo(err.report.format())
        raise click.ClickException(str(err)) from None
    except (StoreError, SubmissionError, RecordError) as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"filed {request.name} ({request.model}, {request.n_reviews} reviews, records "
               f"sha256:{request.records_sha256[:16]}) in {queue} as {request.status}")


@leaderboard.command()
@click.option("--queue", default=DEFAULT_QUEUE, show_default=True, metavar="QUEUE",
              help=f"The queue to take requests from: {STORE_HELP}.")
@click.option("--results", default=DEFAULT_RESULTS, show_default=True, metavar="RESULTS",
              help=f"Where the results go: {STORE_HELP}.")
@click.option("--reference", "reference_path", metavar="HUMAN",
              help="Human reviews to compare against (default with --demo: the demo set's human reviews).")
@click.option("--demo", is_flag=True, help="Use the demo set's human reviews as the reference.")
@click.option("--n-bootstrap", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Cluster-bootstrap draws (papers resampled with all their reviews).")
@seed_option("Seed of the bootstrap draws.")
@fdr_option
@judge_options
@click.option("--once", is_flag=True, help="Take requests until none is pending, then stop. [default]")
@click.option("--watch", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Keep running: look for new requests every SECONDS.")
@click.option("--lease", type=click.FloatRange(min=0, min_open=True), default=3600.0, show_default=True,
              metavar="SECONDS", help="How long a request is held; one whose runner died is taken again after "
                                      "it. Choose it longer than one submission takes.")
@click.option("--workers", type=int, default=None,
              help="Processes that parse the reviews and score their texts (default: all cores).")
@max_failures_option
@no_progress_option
@token_option
def process(queue, results, reference_path, demo, n_bootstrap, seed, fdr, judge_spec, cache_dir, once, watch, lease,
            workers, max_failures, no_progress, token):
    """Score the queue's pending requests, oldest first, into RESULTS: each submission as `praib leaderboard
    run` scores it (its rows and its per-review metrics in Parquet files of its own), then what spans
    submissions (closest to human, the paired comparisons and rank intervals) over every finished one; each
    request ends FINISHED, or FAILED with the reason. Runners on any number of machines may share one queue:
    each request is taken by one of them, under a lease."""
    from praib.llm.backends import BackendError

    from praib.leaderboard.provenance import input_label
    from praib.leaderboard.runner import Runner
    from praib.leaderboard.stores import LocalStore, StoreError, open_store
    from praib.records import HUMAN_SOURCE, RecordError, load_records

    if reference_path is None and not demo:
        raise click.UsageError("give --reference HUMAN (or --demo)")
    if once and watch is not None:
        raise click.UsageError("give --once or --watch, not both")
    reference_path = reference_path or _demo_reviews_path()
    results_store = open_store(results, token)
    log_beside = Path(results) if isinstance(results_store, LocalStore) else None
    with failure_log(max_failures, log_beside) as failures:
        try:
            runner = Runner(open_store(queue, token), results_store,
                            load_records(reference_path, "review", source_name=HUMAN_SOURCE),
                            input_label(reference_path), n_bootstrap, seed, fdr=fdr, judge=judge_spec.make(failures),
                            cache_dir=judge_spec.cache_dir, workers=workers, lease_seconds=lease,
                            progress=not no_progress, say=click.echo)
            runner.check()
            settled = runner.run(watch)
        except (StoreError, RecordError, BackendError) as err:
            raise click.ClickException(str(err)) from None
    click.echo(f"settled {settled} request{'s' if settled != 1 else ''}; none pending in {queue}")


@leaderboard.command()
@click.argument("results", metavar="RESULTS", default=DEFAULT_RESULTS)
@click.option("--queue", metavar="QUEUE", help=f"The queue the Submit tab files into: {STORE_HELP}. [default: no "
                                               "Submit tab]")
@click.option("--port", type=click.IntRange(1, 65535), default=7860, show_default=True, help="Port to serve on.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on (0.0.0.0: every interface, as in a Space).")
@token_option
def app(results, queue, port, host, token):
    """Serve the leaderboard of RESULTS (a folder or Hub dataset written by `praib leaderboard process`, or by
    `praib leaderboard run`) as a web app: the table with filters, each submission's page, the pairwise
    comparisons, the metrics, and a Submit tab filing requests into QUEUE. Needs `pip install 'praib[app]'`."""
    from importlib.util import find_spec

    if find_spec("gradio") is None:
        raise click.ClickException("the app needs gradio: pip install 'praib[app]'")
    from praib.leaderboard.app import launch

    click.echo(f"serving the leaderboard of {results} on http://{host}:{port} (Ctrl-C stops it)")
    launch(results, queue, port, host, token)


@leaderboard.command()
@click.argument("results", metavar="RESULTS")
@click.argument("queue", metavar="QUEUE")
@output_option("The Space's folder (app.py, requirements.txt, README.md).", default="space", file_okay=False,
               writes="praib.leaderboard.space:SPACE_FILES")
@click.option("--title", default="praib leaderboard", show_default=True, help="The Space's title.")
@click.option("--license", "license_id", default="apache-2.0", show_default=True, help="The Space's license.")
def space(results, queue, output, title, license_id):
    """Write a Hugging Face Space that serves `praib leaderboard app` over the Hub datasets RESULTS (results,
    ORG/NAME) and QUEUE (requests, ORG/NAME); its README says how to deploy it and run the runner."""
    from praib.leaderboard.space import SpaceError, write_space

    try:
        write_space(results, queue, output, title, license_id)
    except SpaceError as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"wrote {output} (app.py, requirements.txt, README.md); deploy it with "
               f"`hf upload ORG/SPACE {output} --repo-type space`")


@leaderboard.command("run")
@click.argument("submissions", metavar="SUBMISSION...", nargs=-1, type=SOURCE)
@click.option("--reference", "reference_path", metavar="HUMAN", type=SOURCE,
              help="Human reviews to compare against (default with --demo: the demo set's human reviews).")
@click.option("--demo", is_flag=True, help="Use the demo set's human reviews as the reference.")
@click.option("--benchmark-papers", type=click.Path(exists=True), metavar="FILE",
              help="Score only the reviews of these papers (Paper records).")
@click.option("--n-bootstrap", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Cluster-bootstrap draws (papers resampled with all their reviews).")
@seed_option("Seed of the bootstrap draws.")
@fdr_option
@judge_options
@output_option("Results directory (results.parquet/.jsonl, comparisons.parquet, ranks.parquet, manifests/, "
               "details/, eras.json, run.json).", default="results", file_okay=False,
               writes="praib.leaderboard.run:RESULT_FILES")
@click.option("--workers", type=int, default=None,
              help="Processes that parse the reviews and score their texts (default: all cores).")
@max_failures_option
@no_progress_option
def run(submissions, reference_path, demo, benchmark_papers, n_bootstrap, seed, fdr, judge_spec, cache_dir, output,
        workers, max_failures, no_progress):
    """Score every SUBMISSION (a directory or JSONL/JSON/Parquet file of Review records with its
    manifest.json, or a Hub dataset id; check it first with `praib leaderboard validate`) with every
    metric against the human reference, with bootstrap 95% intervals per venue and pooled, compare
    every pair of submissions (read them with `praib leaderboard compare`), and write the results
    directory (read it with `praib leaderboard report`). Judged metrics need --judge; perturbed records
    in a submission give robustness rows, and reviews of counterfactual papers (with --judge)
    treatment-effect rows."""
    if not submissions:
        raise click.UsageError("give at least one SUBMISSION")
    if reference_path is None and not demo:
        raise click.UsageError("give --reference HUMAN (or --demo)")
    reference_path = reference_path or _demo_reviews_path()
    with failure_log(max_failures, output) as failures:
        _run(submissions, reference_path, benchmark_papers, n_bootstrap, seed, fdr, judge_spec, failures, output,
             workers, no_progress)


def _run(submissions, reference_path, benchmark_papers, n_bootstrap, seed, fdr, judge_spec, failures, output,
         workers, no_progress):
    """The leaderboard run of `run`: every input read first, then the judge (if any) made, recording into
    the run's failure log."""
    from praib.llm.backends import BackendError

    from praib.records import HUMAN_SOURCE, RecordError, load_records, perturbation_kind
    from praib.leaderboard.provenance import input_label
    from praib.leaderboard.run import run_leaderboard
    from praib.metrics.registry import RUN_SUMMARY, judged_metrics
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
        results = run_leaderboard(loaded, reference, output, reference_label=input_label(reference_path),
                                  n_bootstrap=n_bootstrap, seed=seed, judge=judge, workers=workers,
                                  progress=not no_progress, cache_dir=judge_spec.cache_dir, fdr=fdr)
    except (SubmissionError, RecordError, ValueError, BackendError) as err:
        raise click.ClickException(str(err)) from None
    for row in (r for r in results.to_list() if r["venue"] == "all" and r["metric"] in RUN_SUMMARY):
        ci = "" if row["ci_low"] is None else f" [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
        value = "-" if row["value"] is None else f"{row['value']:.3f}"
        click.echo(f"{row['submission']:<24} {row['metric']:<20} {value}{ci}"
                   + ("  (closest to human)" if row["closest_to_human"] else ""))
    if judge is not None:
        from praib.evaluation.judge_validity import validity_lines

        validation = json.loads((output / "run.json").read_text(encoding="utf-8"))["judge_validation"]
        click.echo("\n".join(validity_lines(validation)), err=True)
        judged_names = set(judged_metrics())
        judged = {r["submission"] for r in results.to_list() if r["metric"] in judged_names}
        for s in loaded:
            if s.name not in judged:
                invalid = json.loads((output / "details" / f"{s.name}.json").read_text(encoding="utf-8")
                                     ).get("invalid_judge_answers") or {}
                click.echo(f"warning: {s.name}: no judged metric is defined: the judge gave no usable answer "
                           f"(invalid answers: {', '.join(f'{k} {v}' for k, v in invalid.items()) or 'none'}; "
                           f"see {output / 'details' / (s.name + '.json')})", err=True)
    if len(loaded) > 1:
        from praib.leaderboard.compare import load_comparison

        comparison = load_comparison(output)
        detected = sum(pair.closer() is not None for pair in comparison.pairs)
        click.echo(f"{len(comparison.pairs)} comparisons of two submissions (each pair, metric and venue): "
                   f"{detected} differences detected at a false discovery rate of {fdr:g} "
                   f"(praib leaderboard compare {output})")
        if comparison.resolution_note():
            click.echo("note: " + comparison.resolution_note(), err=True)
    click.echo(f"wrote {len(results)} result rows to {output}")


def _reviews_of(reviews, paper_ids: set, source: str, benchmark_papers: str):
    """The reviews of the benchmark papers; none is an error, not a submission left out."""
    from praib.leaderboard.run import select_rows

    kept = select_rows(reviews, lambda row: row["paper_id"] in paper_ids)
    if not len(kept):
        raise click.ClickException(f"{source}: none of its {len(reviews)} reviews is of one of the "
                                   f"{len(paper_ids)} papers of {benchmark_papers}")
    return kept


def _comparison(directory: Path, metric: str | None, venue: str | None):
    """The run's comparisons, of ``metric`` and ``venue`` where given; one that the run has not is an error
    naming those it has."""
    from praib.leaderboard.compare import load_comparison
    from praib.leaderboard.report import ReportError

    try:
        comparison = load_comparison(directory)
    except ReportError as err:
        raise click.ClickException(str(err)) from None
    for name, value, known in (("--metric", metric, comparison.metrics()), ("--venue", venue, comparison.venues())):
        if value is not None and value not in known:
            raise click.BadParameter(f"{value!r}: the run compared {', '.join(known) or 'nothing'}", param_hint=name)
    return comparison.select(metric, venue)


def _metric_and_venue(command):
    command = click.option("--venue", default=None, help="Only this venue ('all': venues pooled).")(command)
    return click.option("--metric", default=None, help="Only this metric (e.g. fre, krippendorff_alpha).")(command)


@leaderboard.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@_metric_and_venue
def compare(directory, metric, venue):
    """Which submission of a run is closer to the human reviewers, and is the difference real: every
    pair of submissions of DIRECTORY (written by `praib leaderboard run`) compared per metric and venue
    on the papers both reviewed (difference of their distances to human with its 95% paired-bootstrap
    interval, p-value, Benjamini-Hochberg adjusted p-value, verdict, the smallest difference detectable
    and the papers needed to detect the observed one), then each submission's rank interval."""
    from praib.leaderboard.compare import format_comparison

    click.echo(format_comparison(_comparison(directory, metric, venue)), nl=False)


@leaderboard.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--difference", type=click.FloatRange(min=0, min_open=True), default=None, metavar="D",
              help="The difference in distance to human the study must detect, in the metric's own units "
                   "(give --metric). [default: each pair's observed difference]")
@_metric_and_venue
def plan(directory, difference, metric, venue):
    """How many papers a study needs to tell two submissions apart: from the paired-bootstrap standard
    errors of the run in DIRECTORY, the papers needed to detect a difference D in distance to human with
    80% power at 0.05 (two-sided), per pair, metric and venue."""
    from praib.leaderboard.compare import format_plan

    click.echo(format_plan(_comparison(directory, metric, venue), difference), nl=False)


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
@click.argument("human_reviews", metavar="HUMAN_REVIEWS", type=SOURCE)
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
@click.option("--markdown", type=OutputPath(dir_okay=False, path_type=Path),
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
