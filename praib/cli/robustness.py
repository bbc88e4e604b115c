"""`praib robustness` (directional and invariance tests of perturbed inputs) and the `effects`
command (ATEs of counterfactual edits), which the main CLI attaches as `praib counterfactual effects`."""

from __future__ import annotations

from pathlib import Path

import click

from praib.cli.common import judge_options, key_values, write_json
from praib.llm.judge import make_judge


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


@click.command()
@click.option("--original", required=True, help="Reviews (or meta-reviews) of the original inputs.")
@click.option("--perturbed", "perturbed_paths", required=True, multiple=True,
              help="Reviews of perturbed inputs, with a `perturbation` struct; repeat for several files.")
@click.option("--kind", type=click.Choice(["review", "meta_review"]), default="review", show_default=True)
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option("--margin", "margin_pairs", multiple=True, metavar="SCORE=VALUE",
              help="Equivalence margin of a score (rating, confidence, a sub-score, decision). "
                   "[default: 0.5 for scales spanning less than 5 points and decisions, 1.0 otherwise]")
@click.option("--split", default="train", show_default=True, help="Split to read from a dataset or Hub id.")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path))
def robustness(original, perturbed_paths, kind, alpha, margin_pairs, split, output):
    """Test whether perturbing the input changed each score of the outputs: a significant
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
        before = _nonempty(load_records(original, kind, split=split), original)
        after = concatenate_datasets([_nonempty(load_records(path, kind, split=split), path)
                                      for path in perturbed_paths])
        if kind == "review":
            before, after = parse_reviews(before), parse_reviews(after)
        report = robustness_report(before, after, kind=kind, alpha=alpha, margins=margins)
        categories = set() if kind != "review" else {(p or {}).get("category") for p in after["perturbation"]}
        if {CRITICAL, NEUTRAL} <= categories:
            counterfactual = after.filter(lambda row: row["perturbation"]["category"] in (CRITICAL, NEUTRAL))
            report["treatment_effects"] = counterfactual_effects(before, counterfactual, alpha=alpha)
    except (RecordError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    report["inputs"] = {"original": str(original), "perturbed": [str(p) for p in perturbed_paths]}
    click.echo(format_robustness_table(report))
    if "treatment_effects" in report:
        click.echo("\nAverage treatment effects of soundness-critical versus soundness-neutral edits\n"
                   + format_effects_table(report["treatment_effects"]))
    write_json(report, output)
    click.echo(f"wrote {output}")


@click.command()
@click.option("--original", required=True, help="Reviews of the original papers.")
@click.option("--variants", required=True,
              help="Reviews of counterfactual papers (perturbation category soundness-critical or soundness-neutral).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option("--no-sensitivity", is_flag=True, help="Skip ROUGE-2 and assertion Jaccard of neutral versions.")
@click.option("--split", default="train", show_default=True, help="Split to read from a dataset or Hub id.")
@judge_options
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--no-progress", is_flag=True, help="Hide progress bars.")
def effects(original, variants, alpha, no_sensitivity, split, judge_model, judge_backend, judge_base_url,
            judge_max_new_tokens, cache_dir, output, no_progress):
    """Average treatment effects of soundness-critical versus soundness-neutral paper edits on
    each reviewer's reviews (soundness aspects, sentiment, score), with a mixed model per
    reviewer, Benjamini-Hochberg correction, the ranking score and review sensitivity.

    The aspect and sentiment differences and the assertion Jaccard need --judge; without one,
    the score difference and ROUGE-2 are measured."""
    from praib.llm.backends import BackendError

    from praib.parsing import parse_reviews
    from praib.records import RecordError, load_records
    from praib.metrics.perturbation.treatment import counterfactual_effects, format_effects_table

    try:
        before = parse_reviews(_nonempty(load_records(original, "review", split=split), original))
        after = parse_reviews(_nonempty(load_records(variants, "review", split=split), variants))
        judge = make_judge(judge_backend, judge_model, judge_base_url, judge_max_new_tokens, cache_dir) \
            if judge_model else None
        result = counterfactual_effects(before, after, judge, alpha=alpha, sensitivity=not no_sensitivity,
                                        progress=not no_progress)
    except (RecordError, ValueError, BackendError) as err:
        raise click.ClickException(str(err)) from None
    result["inputs"] = {"original": str(original), "variants": str(variants)}
    click.echo(format_effects_table(result))
    write_json(result, output)
    click.echo(f"wrote {output}")
