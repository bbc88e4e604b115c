"""`praib counterfactual` (research logic, counterfactual papers, oracle reviews) and `praib meta-review`."""

from __future__ import annotations

from pathlib import Path

import click

from praib.cli.common import judge_options
from praib.llm.judge import default_cache_dir, make_judge

CRITICAL_CHOICES = ("finding", "conclusion", "result")
DEFAULT_KINDS = "finding,conclusion,result,spelling,voice,language-errors,layout"


def _judge_or_none(judge_model, judge_backend, judge_base_url, judge_max_new_tokens, cache_dir):
    if not judge_model:
        return None
    return make_judge(judge_backend, judge_model, judge_base_url, judge_max_new_tokens, cache_dir)


def _hide_dataset_bars(no_progress: bool) -> None:
    if no_progress:
        import datasets

        datasets.disable_progress_bars()


def _errors():
    from praib.llm.backends import BackendError
    from praib.records import RecordError

    from praib.perturb.counterfactual import ProjectionError
    from praib.perturb.logic import LogicError

    return (BackendError, RecordError, LogicError, ProjectionError, ValueError, KeyError)


_templates_option = click.option(
    "--templates", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
    help="Directory of .jinja files that override built-in prompts of the same name (logic_extract, ...).")


@click.group()
def counterfactual():
    """Research logic of papers, counterfactual papers with broken or intact soundness, oracle reviews."""


@counterfactual.command()
@click.argument("papers_source", metavar="PAPERS")
@click.option("--output", "-o", required=True, type=click.Path(path_type=Path),
              help="Logic records: .jsonl, .parquet, or a directory (saved dataset).")
@click.option("--max-retries", type=click.IntRange(min=0), default=1, show_default=True,
              help="Times an invalid answer is sent back with its problems.")
@_templates_option
@judge_options
@click.option("--no-progress", is_flag=True, help="Hide progress output.")
def extract(papers_source, output, max_retries, templates, judge_model, judge_backend, judge_base_url,
            judge_max_new_tokens, cache_dir, no_progress):
    """Extract the research logic (goal, ranked findings, conclusions, results, support links) of PAPERS."""
    _hide_dataset_bars(no_progress)
    from praib.generation.papers import PaperError, load_papers
    from praib.records import save_records

    from praib.perturb.logic import extract_logic

    if not judge_model:
        raise click.UsageError("--judge MODEL is required")
    try:
        judge = make_judge(judge_backend, judge_model, judge_base_url, judge_max_new_tokens, cache_dir)
        logic = extract_logic(load_papers(papers_source), judge, max_retries=max_retries, templates=templates,
                              progress=not no_progress)
    except (PaperError, *_errors()) as err:
        raise click.ClickException(str(err)) from None
    save_records(logic, output)
    click.echo(f"extracted the research logic of {len(logic)} papers; wrote {output}")


@counterfactual.command()
@click.argument("papers_source", metavar="PAPERS")
@click.option("--output", "-o", required=True, type=click.Path(path_type=Path),
              help="Variant papers (.jsonl, .parquet or a directory); <stem>.logic.jsonl and "
                   "<stem>.attempts.jsonl are written beside it.")
@click.option("--kinds", default=DEFAULT_KINDS, show_default=True,
              help="Comma-separated: soundness-critical finding, conclusion, result; soundness-neutral "
                   "perturbations of the registry (spelling, voice, language-errors, layout).")
@click.option("--logic", "logic_source", type=click.Path(exists=True, path_type=Path),
              help="Logic records from `praib counterfactual extract` (default: extract them now).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--max-attempts", type=click.IntRange(min=1), default=3, show_default=True,
              help="Findings tried, most relevant first, per paper and soundness-critical edit.")
@_templates_option
@judge_options
@click.option("--no-progress", is_flag=True, help="Hide progress output.")
def build(papers_source, output, kinds, logic_source, seed, max_attempts, templates, judge_model, judge_backend,
          judge_base_url, judge_max_new_tokens, cache_dir, no_progress):
    """Write soundness-critical and soundness-neutral counterfactual versions of PAPERS."""
    _hide_dataset_bars(no_progress)
    from praib.generation.papers import PaperError, load_papers

    from praib.perturb.counterfactual import build_counterfactuals, describe_attempts
    from praib.perturb.logic import load_logic

    chosen = [k.strip() for k in kinds.split(",") if k.strip()]
    if not chosen:
        raise click.UsageError("--kinds names no edit")
    families = [k for k in chosen if k in CRITICAL_CHOICES]
    neutral = [k for k in chosen if k not in CRITICAL_CHOICES]
    if families and not judge_model:
        raise click.UsageError("soundness-critical edits need --judge MODEL")
    try:
        judge = _judge_or_none(judge_model, judge_backend, judge_base_url, judge_max_new_tokens, cache_dir)
        result = build_counterfactuals(
            load_papers(papers_source), judge, logic=load_logic(logic_source) if logic_source else None,
            families=families, neutral_kinds=neutral, max_attempts=max_attempts, seed=seed, templates=templates,
            progress=not no_progress)
    except (PaperError, *_errors()) as err:
        raise click.ClickException(str(err)) from None
    paths = result.save(output)
    critical = sum(1 for p in result.papers["perturbation"] if p["category"] == "soundness-critical")
    click.echo(f"{critical} soundness-critical and {len(result.papers) - critical} soundness-neutral variants; "
               f"attempts: {describe_attempts(result.attempts)}")
    click.echo(f"wrote {paths['papers']}, {paths['logic']}, {paths['attempts']}")


@counterfactual.command()
@click.option("--reviews", "reviews_source", required=True, help="Reviews of the original papers.")
@click.option("--variants", "variants_source", required=True, help="Counterfactual papers from `build`.")
@click.option("--output", "-o", required=True, type=click.Path(path_type=Path),
              help="Oracle reviews of the variants (.jsonl, .parquet or a directory); the oracle reviews of the "
                   "originals go to <stem>.originals.jsonl beside it. Pass the two to `praib robustness` or "
                   "`praib counterfactual effects` as --perturbed/--variants and --original.")
@click.option("--seed", type=int, default=0, show_default=True, help="Fixes how far each rating is lowered.")
@_templates_option
@judge_options
@click.option("--no-progress", is_flag=True, help="Hide progress output.")
def oracle(reviews_source, variants_source, output, seed, templates, judge_model, judge_backend, judge_base_url,
           judge_max_new_tokens, cache_dir, no_progress):
    """Oracle reviews of the variants: each original review restated (paraphrased by --judge, else verbatim),
    with a comment on the planted issue and a lower rating for soundness-critical variants."""
    _hide_dataset_bars(no_progress)
    from praib.records import load_records, save_records

    from praib.perturb.oracle import oracle_reviews

    try:
        judge = _judge_or_none(judge_model, judge_backend, judge_base_url, judge_max_new_tokens, cache_dir)
        reviews = oracle_reviews(load_records(reviews_source, "review"), load_records(variants_source, "paper"),
                                 judge=judge, seed=seed, templates=templates, progress=not no_progress)
    except _errors() as err:
        raise click.ClickException(str(err)) from None
    output = Path(output)
    originals_path = Path(f"{output.with_suffix('') if output.suffix else output}.originals.jsonl")
    of_variants = reviews.filter(lambda r: r["perturbation"] is not None)
    of_originals = reviews.filter(lambda r: r["perturbation"] is None)
    save_records(of_variants, output)
    save_records(of_originals, originals_path)
    click.echo(f"{len(reviews)} oracle reviews ({len(of_originals)} of originals, {len(of_variants)} of variants);"
               f" wrote {output} and {originals_path}")


@click.command("meta-review")
@click.option("--papers", "papers_source", required=True, metavar="PAPERS")
@click.option("--reviews", "reviews_source", required=True, metavar="REVIEWS")
@click.option("--rebuttals", "rebuttals_source", metavar="REBUTTALS", help="Rebuttal records (optional).")
@click.option("--prompt", "prompt_name", required=True,
              type=click.Choice(["meta_review_score", "meta_review_dimensions", "meta_review_template"]))
@click.option("--perturb-component", type=click.Choice(["paper", "reviews", "rebuttal"]),
              help="The one input to perturb (with --perturbation).")
@click.option("--perturbation", "kind", metavar="KIND", help="Registry perturbation applied to the component.")
@click.option("--backend", "backend_kind", type=click.Choice(["vllm", "openai", "transformers"]), required=True)
@click.option("--model", required=True, help="Model name (Hub id, server model name) or local directory.")
@click.option("--base-url", default="http://localhost:8000/v1", show_default=True,
              help="OpenAI-compatible server (--backend openai).")
@click.option("--output", "-o", required=True, type=click.Path(path_type=Path),
              help="MetaReview records: .parquet, .jsonl, or a directory (saved dataset).")
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=2048, show_default=True)
@click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True)
@click.option("--top-p", type=click.FloatRange(0, 1, min_open=True), default=1.0, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Sampling and perturbation seed.")
@click.option("--token-budget", type=click.IntRange(min=1), default=50_000, show_default=True,
              help="Paper tokens kept (the rest is cut at the end).")
@click.option("--batch-size", type=click.IntRange(min=1), default=None,
              help="Requests per backend call. [default: all at once for vllm, else 16]")
@click.option("--no-cache", is_flag=True, help="Do not read or write the call cache.")
@click.option("--source", help="The records' source field. [default: the model name]")
@judge_options
@click.option("--no-progress", is_flag=True, help="Hide the progress bar.")
def meta_review(papers_source, reviews_source, rebuttals_source, prompt_name, perturb_component, kind,
                backend_kind, model, base_url, output, max_new_tokens, temperature, top_p, seed, token_budget,
                batch_size, no_cache, source, judge_model, judge_backend, judge_base_url, judge_max_new_tokens,
                cache_dir, no_progress):
    """Meta-review PAPERS from their REVIEWS (and REBUTTALS) with a model, optionally with one input
    perturbed; resumable from the call cache (--cache-dir) like `praib generate`. --judge runs the
    perturbations that need a model."""
    _hide_dataset_bars(no_progress)
    from praib.llm.backends import SamplingConfig, make_backend
    from praib.llm.cache import CachedBackend, CallCache
    from praib.generation.papers import PaperError, load_papers
    from praib.generation.prompts import load_prompt
    from praib.generation.run import DEFAULT_BATCH_SIZE
    from praib.records import load_records

    from praib.generation.meta_review import run_meta_reviews

    if (perturb_component is None) != (kind is None):
        raise click.UsageError("--perturb-component and --perturbation go together")
    try:
        backend = make_backend(backend_kind, model, **({"base_url": base_url} if backend_kind == "openai" else {}))
        if not no_cache:
            backend = CachedBackend(backend, CallCache(cache_dir or default_cache_dir()))
        judge = _judge_or_none(judge_model, judge_backend, judge_base_url, judge_max_new_tokens, cache_dir)
        run = run_meta_reviews(
            load_papers(papers_source), load_records(reviews_source, "review"),
            load_records(rebuttals_source, "rebuttal") if rebuttals_source else None, backend,
            load_prompt(prompt_name), component=perturb_component, kind=kind, seed=seed, judge=judge, output=output,
            sampling=SamplingConfig(max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, seed=seed),
            token_budget=token_budget,
            batch_size=batch_size or (None if backend_kind == "vllm" else DEFAULT_BATCH_SIZE),
            source=source, progress=not no_progress)
    except KeyboardInterrupt:
        raise click.ClickException("interrupted; run the same command again to resume from the call cache") from None
    except (PaperError, *_errors()) as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"{run}; wrote {output}")
