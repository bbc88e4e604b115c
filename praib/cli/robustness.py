"""`praib robustness` (directional and invariance tests of perturbed inputs) and the `effects`
command (ATEs of counterfactual edits), which the main CLI attaches as `praib counterfactual effects`."""

from __future__ import annotations

import click

from praib.cli.common import (failure_log, judge_options, key_values, max_failures_option, no_progress_option,
                              output_option, SOURCE, source_option, split_option, write_json)


def _nonempty(records, path):
    if not len(records):
        raise click.ClickException(f"{path}: holds no records")
    return records


def _margins(pairs: tuple[str, ...]) -> dict[str, float]:
    margins = {}
    for name, value in key_values(pairs, "--margin").items():
        try:
            margins[name] = float(value)
        except ValueError:
            raise click.BadParameter(f"{name}: margin {value!r} is not a number", param_hint="--margin") from None
        if margins[name] <= 0:
            raise click.BadParameter(f"{name}: the margin must be positive", param_hint="--margin")
    return margins


_alpha_option = click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
                             show_default=True, help="Significance level of the tests.")


@click.command()
@click.argument("original", metavar="ORIGINAL", type=SOURCE)
@click.argument("perturbed_paths", metavar="PERTURBED...", nargs=-1, required=True, type=SOURCE)
@source_option
@click.option("--record-kind", "kind", type=click.Choice(["review", "meta_review"]), default="review",
              show_default=True, help="The records ORIGINAL and PERTURBED hold.")
@_alpha_option
@click.option("--margin", "margin_pairs", multiple=True, metavar="SCORE=VALUE",
              help="Equivalence margin of a score (rating, confidence, a sub-score, decision). "
                   "[default: 0.5 for scales spanning less than 5 points and decisions, 1.0 otherwise]")
@split_option
@output_option("Write the report as JSON here.", dir_okay=False)
def robustness(original, perturbed_paths, source_name, kind, alpha, margin_pairs, split, output):
    """Test whether perturbing the input changed each score of the outputs, ORIGINAL being the reviews
    (or meta-reviews) of the original inputs and PERTURBED the reviews of perturbed inputs, with a
    `perturbation` struct (one file or several): a significant
    increase or decrease (one-sided Wilcoxon signed-rank), equivalence within a margin (TOST),
    or inconclusive; with decision transitions, kappa and acceptance-rate change.

    When the perturbed reviews are of counterfactual papers (perturbation categories
    soundness-critical and soundness-neutral), the table of average treatment effects on the
    score follows; `praib counterfactual effects --judge` adds the aspect and sentiment effects."""
    from datasets import concatenate_datasets

    from praib.parsing import parse_reviews
    from praib.records import RecordError, load_records
    from praib.metrics.perturbation.robustness import format_robustness_table, robustness_report
    from praib.metrics.perturbation.treatment import CRITICAL, NEUTRAL, counterfactual_effects, format_effects_table

    margins = _margins(margin_pairs)
    try:
        before = _nonempty(load_records(original, kind, split=split, source_name=source_name), original)
        after = concatenate_datasets([_nonempty(load_records(path, kind, split=split, source_name=source_name), path)
                                      for path in perturbed_paths])
        if kind == "review":
            before, after = parse_reviews(before), parse_reviews(after)
        report = robustness_report(before, after, kind=kind, alpha=alpha, margins=margins)
        categories = set() if kind != "review" else {(p or {}).get("category") for p in after["perturbation"]}
        if {CRITICAL, NEUTRAL} <= categories:
            counterfactual = after.filter(lambda row: row["perturbation"]["category"] in (CRITICAL, NEUTRAL))
            report.treatment_effects = counterfactual_effects(before, counterfactual, alpha=alpha)
    except (RecordError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    report.inputs = {"original": str(original), "perturbed": [str(p) for p in perturbed_paths]}
    click.echo(format_robustness_table(report))
    if report.treatment_effects is not None:
        click.echo("\nAverage treatment effects of soundness-critical versus soundness-neutral edits\n"
                   + format_effects_table(report.treatment_effects))
    if output:
        write_json(report.to_dict(), output)
        click.echo(f"wrote {output}")


@click.command()
@click.argument("original", metavar="ORIGINAL", type=SOURCE)
@click.argument("variants", metavar="VARIANTS", type=SOURCE)
@source_option
@_alpha_option
@click.option("--no-sensitivity", is_flag=True, help="Skip ROUGE-2 and assertion Jaccard of neutral versions.")
@split_option
@judge_options
@max_failures_option
@output_option("Write the effects as JSON here.", dir_okay=False)
@no_progress_option
def effects(original, variants, source_name, alpha, no_sensitivity, split, judge_spec, cache_dir, max_failures, output,
            no_progress):
    """Average treatment effects of soundness-critical versus soundness-neutral paper edits on
    each reviewer's reviews (soundness aspects, sentiment, score), with a mixed model per
    reviewer, Benjamini-Hochberg correction, the ranking score and review sensitivity.
    ORIGINAL holds the reviews of the original papers, VARIANTS the reviews of counterfactual
    papers (perturbation category soundness-critical or soundness-neutral).

    The aspect and sentiment differences and the assertion Jaccard need --judge; without one,
    the score difference and ROUGE-2 are measured."""
    from praib.llm.backends import BackendError

    from praib.parsing import parse_reviews
    from praib.records import RecordError, load_records
    from praib.metrics.perturbation.treatment import counterfactual_effects, format_effects_table

    with failure_log(max_failures, output) as failures:
        try:
            before = parse_reviews(_nonempty(load_records(original, "review", split=split, source_name=source_name),
                                             original))
            after = parse_reviews(_nonempty(load_records(variants, "review", split=split, source_name=source_name),
                                            variants))
            result = counterfactual_effects(before, after, judge_spec.make(failures), alpha=alpha,
                                            sensitivity=not no_sensitivity, progress=not no_progress)
        except (RecordError, ValueError, BackendError) as err:
            raise click.ClickException(str(err)) from None
        result.inputs = {"original": str(original), "variants": str(variants)}
        click.echo(format_effects_table(result))
        if output:
            write_json(result.to_dict(), output)
            click.echo(f"wrote {output}")
