"""`praib counterfactual` (research logic, counterfactual papers, oracle reviews) and `praib meta-review`."""

from __future__ import annotations

from pathlib import Path

import click

from praib.cli.common import (failed_names, failure_log, judge_options, max_failures_option, model_options,
                              no_progress_option, output_option, seed_option, SOURCE, source_option,
                              stop_if_nothing_made, write_json)
from praib.api import load_papers
from praib.llm.judge import default_cache_dir

CRITICAL_CHOICES = ("finding", "conclusion", "result")
DEFAULT_EDITS = "finding,conclusion,result,spelling,voice,language-errors,layout"


def _errors():
    from praib.llm.backends import BackendError
    from praib.records import RecordError

    from praib.perturb.counterfactual import ProjectionError
    from praib.perturb.logic import LogicError

    return (BackendError, RecordError, LogicError, ProjectionError, ValueError, KeyError)


def _failed_papers(failures, papers, *others) -> str:
    """``; failed: p2, p5`` naming the papers (by paper_id) of the failed items, empty when none failed;
    ``others`` (reviews, rebuttals) count toward their paper."""
    from praib.perturb.rewrite import record_name

    if not failures.items:
        return ""
    owners = {str(paper_id): str(paper_id) for paper_id in papers["paper_id"]}
    for records in others:
        if records is not None:
            owners.update((record_name(row), str(row["paper_id"])) for row in records.to_list())
    return f"; failed: {failed_names(failures, owners)}"


_template_dir_option = click.option(
    "--template-dir", "templates", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
    help="Directory of .jinja files that override built-in prompts of the same name (logic_extract, ...).")


@click.group()
def counterfactual():
    """Research logic of papers, counterfactual papers with broken or intact soundness, oracle reviews."""


@counterfactual.command()
@click.argument("papers_source", metavar="PAPERS", type=SOURCE)
@output_option("Logic records: .jsonl, .parquet, or a directory (saved dataset).", default="logic.jsonl")
@click.option("--max-tries", type=click.IntRange(min=1), default=2, show_default=True,
              help="Answers asked per paper: an invalid answer is sent back with its problems until this many.")
@_template_dir_option
@judge_options
@max_failures_option
@no_progress_option
def extract(papers_source, output, max_tries, templates, judge_spec, cache_dir, max_failures, no_progress):
    """Extract the research logic (goal, ranked findings, conclusions, results, support links) of
    PAPERS. A paper whose logic is still invalid after --max-tries is recorded in
    OUTPUT.failures.jsonl and the others go on (exit status 3)."""
    from praib.generation.papers import PaperError
    from praib.records import save_records

    from praib.perturb.logic import extract_logic

    if not judge_spec.model:
        raise click.UsageError("this command needs a judge: give --judge MODEL")
    with failure_log(max_failures, output) as failures:
        try:
            papers = load_papers(papers_source)
            logic = extract_logic(papers, judge_spec.make(failures), max_retries=max_tries - 1,
                                  templates=templates, progress=not no_progress)
        except (PaperError, *_errors()) as err:
            raise click.ClickException(str(err)) from None
        stop_if_nothing_made(failures, len(logic), "no research logic extracted", output)
        save_records(logic, output)
        click.echo(f"extracted the research logic of {len(logic)} of {len(papers)} papers"
                   f"{_failed_papers(failures, papers)}; wrote {output}")


@counterfactual.command()
@click.argument("papers_source", metavar="PAPERS", type=SOURCE)
@output_option("Variant papers (.jsonl, .parquet or a directory); <stem>.logic.jsonl and "
               "<stem>.attempts.jsonl are written beside it.", default="variants.jsonl",
               beside=("praib.perturb.statistics:statistics_path", "praib.perturb.counterfactual:logic_path",
                       "praib.perturb.counterfactual:attempts_path"))
@click.option("--edits", default=DEFAULT_EDITS, show_default=True,
              help="Comma-separated: soundness-critical finding, conclusion, result; soundness-neutral "
                   "perturbations of the registry (spelling, voice, language-errors, layout).")
@click.option("--logic", "logic_source", type=click.Path(exists=True, path_type=Path),
              help="Logic records from `praib counterfactual extract`; the papers it lacks are extracted now "
                   "(default: extract them all now).")
@seed_option("Seed of the soundness-neutral edits' random choices.")
@click.option("--max-tries", type=click.IntRange(min=1), default=3, show_default=True,
              help="Findings tried, most relevant first, per paper and soundness-critical edit.")
@_template_dir_option
@judge_options
@max_failures_option
@no_progress_option
def build(papers_source, output, edits, logic_source, seed, max_tries, templates, judge_spec, cache_dir,
          max_failures, no_progress):
    """Write soundness-critical and soundness-neutral counterfactual versions of PAPERS. A paper whose
    logic or edit the judge could not answer is recorded in OUTPUT.failures.jsonl and the others go
    on (exit status 3). What each edit changed and how long it took goes to OUTPUT.stats.json (the
    counterfactual study's Tables 2 and 3: `praib tables`)."""
    from praib.generation.papers import PaperError

    from praib.perturb.counterfactual import build_counterfactuals, describe_attempts
    from praib.perturb.logic import load_logic
    from praib.perturb.statistics import (COUNTERFACTUAL_BUILD, PerturbationStatistics, counterfactual_statistics,
                                          seconds, statistics_path)
    from praib.perturb.validation import EditTally

    chosen = [k.strip() for k in edits.split(",") if k.strip()]
    if not chosen:
        raise click.UsageError("--edits names no edit")
    families = [k for k in chosen if k in CRITICAL_CHOICES]
    neutral = [k for k in chosen if k not in CRITICAL_CHOICES]
    if families and not judge_spec.model:
        raise click.UsageError("soundness-critical edits need --judge MODEL")
    tally = EditTally()
    with failure_log(max_failures, output) as failures:
        try:
            papers, logic = load_papers(papers_source), load_logic(logic_source) if logic_source else None
            result = build_counterfactuals(
                papers, judge_spec.make(failures), logic=logic, families=families, neutral_kinds=neutral,
                max_attempts=max_tries, seed=seed, templates=templates, progress=not no_progress, tally=tally)
        except (PaperError, *_errors()) as err:
            raise click.ClickException(str(err)) from None
        stop_if_nothing_made(failures, len(result.papers), "no variant written", output)
        paths = result.save(output)
        stats_path = statistics_path(output)
        given = papers.to_list()
        write_json(PerturbationStatistics(
            COUNTERFACTUAL_BUILD, str(papers_source), str(output), seed, result.kinds, result.stages,
            counterfactual_statistics(given, result.papers.to_list(), result.logic.to_list())).to_dict(), stats_path)
        critical = sum(1 for p in result.papers["perturbation"] if p["category"] == "soundness-critical")
        click.echo(f"{critical} soundness-critical and {len(result.papers) - critical} soundness-neutral variants; "
                   f"attempts: {describe_attempts(result.attempts)}{_failed_papers(failures, papers)}"
                   + (f"; LLM edits: {tally.describe()}" if tally.counts else ""))
        click.echo("by edit: " + "; ".join(f"{k.kind} {k.changed} of {k.records} papers, {k.describe()}"
                                           for k in result.kinds)
                   + "".join(f"; {stage} {seconds(took)}" for stage, took in result.stages.items()))
        click.echo(f"wrote {paths['papers']}, {paths['logic']}, {paths['attempts']}, {stats_path}")


@counterfactual.command("stats")
@click.argument("papers_source", metavar="PAPERS", type=SOURCE)
@click.argument("variants_source", metavar="VARIANTS", type=SOURCE)
@click.option("--logic", "logic_source", type=click.Path(exists=True, path_type=Path),
              help="Research logic of the papers (paper types and findings per paper).")
@output_option("Where to write the statistics (JSON).", default="counterfactual-stats.json", dir_okay=False)
def stats(papers_source, variants_source, logic_source, output):
    """Dataset statistics of counterfactual VARIANTS of PAPERS (the counterfactual study's Tables 2 and 3):
    papers with a variant by venue, paper types and findings from --logic, and per category the
    variants, variants per paper and edits and changed words per variant. For variants made elsewhere
    (e.g. `praib data import-ukp`); `praib counterfactual build` writes the same beside its output."""
    from praib.records import RecordError, load_records

    from praib.perturb.logic import load_logic
    from praib.perturb.statistics import COUNTERFACTUAL_STATS, PerturbationStatistics, counterfactual_statistics

    try:
        papers = load_records(papers_source, "paper").to_list()
        variants = load_records(variants_source, "paper").to_list()
        logic = load_logic(logic_source).to_list() if logic_source else None
        if not any(row["perturbation"] for row in variants):
            raise ValueError(f"{variants_source}: no record has a perturbation (are these the originals?)")
        found = counterfactual_statistics([row for row in papers if row["perturbation"] is None],
                                          [row for row in variants if row["perturbation"]], logic)
    except (RecordError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    write_json(PerturbationStatistics(COUNTERFACTUAL_STATS, str(variants_source), str(output), None, [],
                                      extra=found).to_dict(), output)
    rows = found["counterfactuals"]
    click.echo(f"{found['papers']['with_variants']} of {found['papers']['given']} papers with a variant; "
               + ", ".join(f"{name} {rows[name]['variants']}" for name in rows) + f"; wrote {output}")


def originals_path(output: Path) -> Path:
    """Where `praib counterfactual oracle` writes the oracle reviews of the originals: ``<stem>.originals.jsonl``."""
    output = Path(output)
    return Path(f"{output.with_suffix('') if output.suffix else output}.originals.jsonl")


@counterfactual.command()
@click.argument("reviews_source", metavar="REVIEWS", type=SOURCE)
@click.argument("variants_source", metavar="VARIANTS", type=SOURCE)
@source_option
@output_option("Oracle reviews of the variants (.jsonl, .parquet or a directory); the oracle reviews of the "
               "originals go to <stem>.originals.jsonl beside it. Pass the two to `praib robustness` or "
               "`praib counterfactual effects` as ORIGINAL and PERTURBED/VARIANTS.", default="oracle.jsonl",
               beside=("praib.cli.counterfactual:originals_path",))
@seed_option("Fixes how far each rating is lowered.")
@_template_dir_option
@judge_options
@max_failures_option
@no_progress_option
def oracle(reviews_source, variants_source, source_name, output, seed, templates, judge_spec, cache_dir, max_failures,
           no_progress):
    """Oracle reviews of VARIANTS (counterfactual papers from `build`): each original review of REVIEWS restated (paraphrased by --judge, else verbatim),
    with a comment on the planted issue and a lower rating for soundness-critical variants."""
    from praib.records import load_records, save_records

    from praib.perturb.oracle import oracle_reviews

    with failure_log(max_failures, output) as failures:
        try:
            originals = load_records(reviews_source, "review", source_name=source_name)
            variants = load_records(variants_source, "paper")
            reviews = oracle_reviews(originals, variants, judge=judge_spec.make(failures), seed=seed,
                                     templates=templates, progress=not no_progress)
        except _errors() as err:
            raise click.ClickException(str(err)) from None
        output = Path(output)
        originals_file = originals_path(output)
        of_variants = reviews.filter(lambda r: r["perturbation"] is not None)
        of_originals = reviews.filter(lambda r: r["perturbation"] is None)
        save_records(of_variants, output)
        save_records(of_originals, originals_file)
        click.echo(f"{len(reviews)} oracle reviews ({len(of_originals)} of originals, {len(of_variants)} of "
                   f"variants); wrote {output} and {originals_file}")


@click.command("meta-review")
@click.argument("model", metavar="MODEL")
@click.argument("papers_source", metavar="PAPERS", type=SOURCE)
@click.argument("reviews_source", metavar="REVIEWS", type=SOURCE)
@click.option("--rebuttals", "rebuttals_source", metavar="REBUTTALS", type=SOURCE, help="Rebuttal records of the papers.")
@model_options
@click.option("--prompt", "prompt_name", default="meta_review_score", show_default=True,
              type=click.Choice(["meta_review_score", "meta_review_dimensions", "meta_review_template"]),
              help="The meta-review prompt (`praib prompts show NAME`).")
@click.option("--perturb-component", type=click.Choice(["paper", "reviews", "rebuttal"]),
              help="The one input to perturb (with --perturbation).")
@click.option("--perturbation", "kind", metavar="KIND", help="Registry perturbation applied to the component.")
@output_option("MetaReview records: .parquet, .jsonl, or a directory (saved dataset).",
               default="meta_reviews.jsonl")
@judge_options
@max_failures_option
@no_progress_option
def meta_review(model_spec, papers_source, reviews_source, rebuttals_source, max_new_tokens, temperature, top_p, seed,
                token_budget, batch_size, no_cache, source, prompt_name, perturb_component, kind, output, judge_spec,
                cache_dir, max_failures, no_progress):
    """Meta-review PAPERS from their REVIEWS (and --rebuttals) with MODEL, optionally with one input
    perturbed; resumable from the call cache (--cache-dir) like `praib generate`. --judge runs the
    perturbations that need a model."""
    from praib.llm.backends import SamplingConfig
    from praib.llm.cache import CachedBackend, CallCache
    from praib.generation.papers import PaperError
    from praib.generation.prompts import load_prompt
    from praib.generation.run import DEFAULT_BATCH_SIZE
    from praib.records import load_records

    from praib.generation.meta_review import run_meta_reviews

    if (perturb_component is None) != (kind is None):
        raise click.UsageError("--perturb-component and --perturbation go together")
    with failure_log(max_failures, output) as failures:
        try:
            papers, reviews = load_papers(papers_source), load_records(reviews_source, "review")
            rebuttals = load_records(rebuttals_source, "rebuttal", allow_empty=True) if rebuttals_source else None
            backend = model_spec.open()
            if not no_cache:
                backend = CachedBackend(backend, CallCache(cache_dir or default_cache_dir()))
            run = run_meta_reviews(
                papers, reviews, rebuttals, backend, load_prompt(prompt_name), component=perturb_component,
                kind=kind, seed=seed, judge=judge_spec.make(failures), output=output,
                sampling=SamplingConfig(max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p,
                                        seed=seed),
                token_budget=token_budget,
                batch_size=batch_size or (None if model_spec.kind == "vllm" else DEFAULT_BATCH_SIZE),
                source=source, progress=not no_progress, failures=failures)
        except (PaperError, *_errors()) as err:
            raise click.ClickException(str(err)) from None
        stop_if_nothing_made(failures, len(run.records), "no meta-review written", output)
        click.echo(f"{run}{_failed_papers(failures, papers, reviews, rebuttals)}; wrote {output}")
