"""``praib grounding``: RevUtil's grounding specificity of review comments against the cross-reference count."""

from __future__ import annotations

import click

from praib.cli.common import (failure_log, judge_options, max_failures_option, no_progress_option, output_option,
                              SOURCE, split_option, write_json)


@click.command()
@click.argument("input_path", metavar="INPUT", type=SOURCE)
@click.option("--reference", "reference_path", metavar="HUMAN_INPUT", type=SOURCE,
              help="Human reviews to add to INPUT's (default: the records of INPUT whose source is 'human').")
@output_option("Write the result as JSON here (`praib tables` lays out PRAIB's Tables 18-20 from it).",
               dir_okay=False)
@split_option
@judge_options
@max_failures_option
@no_progress_option
def grounding(input_path, reference_path, output, split, judge_spec, cache_dir, max_failures, no_progress):
    """Rate every weakness comment of the reviews in INPUT for RevUtil's grounding specificity (1-5:
    Not Grounded ... Fully Grounded and Specific) with --judge, and relate each review's mean rating
    to its cross-reference count: Spearman's ρ with the count and its density, and the mean by bin of
    the count (0, 1, 2-5, >5) with the gain over bin 0, for the human reviews, each model and all
    models together (PRAIB Appendix H.1).

    A review's comments are the items of its weaknesses section (its paragraphs where it has no list),
    those shorter than 50 characters left out. A RevUtil checkpoint serves as the judge (e.g. --judge
    boda/RevUtil_Llama-3.1-8B-Instruct_score_only --judge-backend vllm); check a judge first with
    `praib judge validate --task grounding`. A comment the judge gives no usable rating is recorded
    in OUTPUT.failures.jsonl and the others go on (exit status 3)."""
    from datasets import concatenate_datasets

    from praib.evaluation.grounding import FAMILY, MODELS, grounding_report
    from praib.evaluation.judge_validity import judge_validations, validity_lines
    from praib.llm.backends import BackendError
    from praib.metrics.judged.grounding import MIN_COMMENT_CHARS
    from praib.parsing import parse_reviews
    from praib.records import RecordError, load_records

    if not judge_spec.model:
        raise click.UsageError("this command needs a judge: give --judge MODEL")
    with failure_log(max_failures, output) as failures:
        try:
            reviews = load_records(input_path, "review", split=split)
            if reference_path:
                reviews = concatenate_datasets([reviews, load_records(reference_path, "review", split=split)])
            reviews = parse_reviews(reviews)
            judge = judge_spec.make(failures)
            result = grounding_report(reviews.to_list(), judge, progress=not no_progress)
            result.judge_validation = judge_validations(judge.describe(), cache_dir, tasks=FAMILY.tasks)
        except (RecordError, ValueError, BackendError) as err:
            raise click.ClickException(str(err)) from None
        result.input = str(input_path)
        for group in result.groups:
            click.echo(_line(group.label, group.summary))
        if result.pooled[MODELS] is not None and sum(not g.is_reference for g in result.groups) > 1:
            click.echo(_line("all models", result.pooled[MODELS]))
        if not any(group.summary.comments for group in result.groups):
            click.echo(f"warning: no review of {input_path} has a weakness comment to rate (a weaknesses section whose "
                       f"items or paragraphs have {MIN_COMMENT_CHARS} characters or more): every rating is missing",
                       err=True)
        click.echo("\n".join(validity_lines(result.judge_validation, families=[FAMILY])), err=True)
        if output:
            write_json(result.to_dict(), output)
            click.echo(f"wrote {output}")


def _line(label: str, summary) -> str:
    """``human: 26 reviews, 61 of 64 comments rated, mean 2.940; ρ(xref) 0.410, ρ(density) 0.380; by bin
    0/1/2-5/>5: 2.500 (n 4) / ...``: the ratings with the registry's decimals, ρ with PRAIB Table 18's."""
    from praib.evaluation.grounding import METRIC
    from praib.metrics.registry import digits_of

    def number(value, digits=None):
        return "—" if value is None else f"{value:.{digits_of(METRIC) if digits is None else digits}f}"

    bins = " / ".join(f"{number(entry['mean'])} (n {entry['n']})" for entry in summary.bins.values())
    return (f"{label}: {summary.reviews} reviews, {summary.comments_scored} of {summary.comments} comments rated, "
            f"mean {number(summary.score['mean'])}; ρ(xref) {number(summary.spearman['xref']['rho'], 3)}, "
            f"ρ(density) {number(summary.spearman['xref_density']['rho'], 3)}; by xref bin 0/1/2-5/>5: {bins}")
