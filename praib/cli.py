"""The ``praib`` command line."""

from __future__ import annotations

import json
import logging
import sys
from importlib import resources
from pathlib import Path

import click

DEMO_REVIEWS = "data/demo/reviews.jsonl"


@click.group()
@click.version_option(package_name="praib")
def main() -> None:
    """Measure how LLMs behave as scientific peer reviewers, against human reviewers."""
    logging.basicConfig(level=logging.WARNING, format="praib: %(message)s")


@main.command()
@click.argument("input_path", metavar="INPUT", required=False)
@click.option("--reference", "reference_path", metavar="HUMAN_INPUT",
              help="Human reviews to compare against (default: the records of INPUT whose source is 'human').")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the full results as JSON here.")
@click.option("--group-by", default="source,model,prompt", show_default=True,
              help="Comma-separated review fields that define the groups to compare.")
@click.option("--scale", type=click.Choice(["venue", "generic"]), default="venue", show_default=True,
              help="Validate scores against each venue-year's scale, or the generic 1-10 / 1-5 scales.")
@click.option("--split", default="train", show_default=True, help="Split to read from a dataset or Hub id.")
@click.option("--workers", type=int, default=None, help="Processes for the text metrics (default: all cores).")
@click.option("--demo", is_flag=True, help="Run on the illustrative demo set that ships with praib.")
@click.option("--no-progress", is_flag=True, help="Hide progress bars.")
def evaluate(input_path, reference_path, output, group_by, scale, split, workers, demo, no_progress):
    """Behavioural profile of every group of reviews in INPUT.

    INPUT is a JSONL, JSON or Parquet file of review records, a saved dataset
    directory, or a Hub dataset id ('org/name' or 'org/name:config').
    """
    from .evaluation import evaluate_reviews
    from .records import RecordError, load_records
    from .report import behaviour_table

    if demo == bool(input_path):
        raise click.UsageError("give either INPUT or --demo")
    source = str(resources.files("praib") / DEMO_REVIEWS) if demo else input_path
    try:
        reviews = load_records(source, "review", split=split)
        reference = load_records(reference_path, "review", split=split) if reference_path else None
        results = evaluate_reviews(reviews, reference, group_by=[c.strip() for c in group_by.split(",") if c.strip()],
                                   scale=scale, workers=workers, progress=not no_progress)
    except (RecordError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    results["input"] = "praib demo set (illustrative)" if demo else str(input_path)
    results["reference"] = reference_path
    click.echo(behaviour_table(results))
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        click.echo(f"\nWrote {output}", err=True)


if __name__ == "__main__":
    sys.exit(main())
