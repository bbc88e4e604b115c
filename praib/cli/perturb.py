"""``praib perturb``: apply one perturbation to paper, review or rebuttal records."""

from __future__ import annotations

import json
from pathlib import Path

import click

from praib.cli.common import (failed_names, failure_log, judge_options, key_values, max_failures_option,
                              no_progress_option, output_option, seed_option, SOURCE, source_option, split_option,
                              stop_if_nothing_made, write_json)
from praib.api import load_papers


def _option_values(pairs: tuple[str, ...]) -> dict:
    # Values are JSON where they parse (0.5, 3, [2, 3]), text otherwise.
    values = {}
    for key, raw in key_values(pairs, "--perturbation-arg").items():
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
        if isinstance(values[key], list):
            values[key] = tuple(values[key])
    return values


@click.command()
@click.argument("kind", metavar="PERTURBATION", required=False)
@click.argument("input_path", metavar="INPUT", required=False, type=SOURCE)
@source_option
@click.option("--list", "list_kinds", is_flag=True, help="List every perturbation and exit.")
@output_option("Where to write the perturbed records (.jsonl, .parquet, or a dataset directory).",
               default="perturbed.jsonl",
               beside=("praib.perturb.statistics:statistics_path", "praib.cli.perturb:claims_path"))
@seed_option("Seed of the random choices.")
@split_option
@click.option("--claims", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="false-claims: buckets of false claims, JSONL {paper_id, claims: [...]} or JSON {paper_id: [...]}.")
@click.option("--papers", metavar="FILE", default=None, type=SOURCE,
              help="false-claims without --claims: papers the judge writes claim buckets for "
                   "(saved to OUTPUT's name + .claims.jsonl).")
@click.option("--template", "template_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="A .jinja prompt of your own for an LLM or injection perturbation.")
@click.option("--perturbation-arg", "option_pairs", multiple=True, metavar="KEY=VALUE",
              help="An argument of the perturbation (repeatable), e.g. fraction=0.5 or widths=[2,4] (see docs/perturbations.md).")
@no_progress_option
@judge_options
@max_failures_option
def perturb(kind, input_path, source_name, list_kinds, output, seed, split, claims, papers, template_file,
            option_pairs, no_progress, judge_spec, cache_dir, max_failures):
    """Apply PERTURBATION (see --list) to every record of INPUT (JSONL, JSON, Parquet, dataset
    directory, Hub id) and write them to OUTPUT, each with a `perturbation` struct saying what
    changed. Originals and perturbed records pair by paper_id. A record the LLM gave no usable
    answer for is left out and recorded in OUTPUT.failures.jsonl (exit status 3)."""
    from praib.llm.backends import BackendError
    from praib.records import RecordError, load_records, save_records

    from praib.perturb.registry import apply_perturbation, get_perturbation, list_perturbations
    from praib.perturb.reviews import generate_claim_buckets, load_claim_buckets, save_claim_buckets
    from praib.perturb.statistics import (PERTURB, PerturbationStatistics, kind_statistics, llm_edit_counts,
                                          statistics_path, stopwatch)
    from praib.perturb.validation import EditTally

    if list_kinds:
        rows = [(p.name, p.component, p.category, "yes" if p.needs_llm else "no", p.summary)
                for p in list_perturbations()]
        widths = [max(len(r[i]) for r in rows + [("kind", "component", "category", "LLM", "")]) for i in range(4)]
        click.echo("  ".join(h.ljust(w) for h, w in zip(("kind", "component", "category", "LLM"), widths)) + "  what")
        for row in rows:
            click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[4])
        return
    if not (kind and input_path):
        raise click.UsageError("give PERTURBATION and INPUT (or --list)")
    tally = EditTally()
    with failure_log(max_failures, output) as failures:
        try:
            perturbation = get_perturbation(kind)
            # Before any LLM work (false-claim buckets): a file of the wrong record kind is a usage error.
            held = _held_kind(Path(input_path))
            if held and held != perturbation.component:
                raise click.UsageError(f"{input_path} holds {held} records; `{kind}` edits {perturbation.component} "
                                       "records")
            options = _option_values(option_pairs)
            if template_file:
                options["template_file"] = template_file
            # Every input is read before a judge model loads.
            records = (load_papers(input_path, split=split) if perturbation.component == "paper"
                       else load_records(input_path, perturbation.component, split, source_name=source_name))
            if kind == "false-claims" and claims:
                options["claims"] = load_claim_buckets(claims)
            claim_papers = (load_papers(papers, split=split)
                            if kind == "false-claims" and papers and not claims else None)
            if not judge_spec.model and (perturbation.needs_llm or (kind == "false-claims" and not claims)):
                raise click.UsageError(f"`{kind}` needs an LLM: give --judge MODEL"
                                       + (" (or --claims FILE)" if kind == "false-claims" else ""))
            if kind == "false-claims" and not claims and not papers:
                raise click.UsageError("false-claims needs --claims FILE, or --papers FILE to generate the claims")
            judge = judge_spec.make(failures)
            with stopwatch() as took:  # the edits' time, claim buckets written for them included
                if claim_papers is not None:
                    options["claims"] = generate_claim_buckets(claim_papers, judge, progress=not no_progress,
                                                               tally=tally)
                    save_claim_buckets(options["claims"], claims_path(output))
                    click.echo(f"wrote the generated false-claim buckets to {claims_path(output)}")
                perturbed = apply_perturbation(kind, records, seed=seed, judge=judge, progress=not no_progress,
                                               tally=tally, **options)
        except (RecordError, ValueError, BackendError) as err:
            raise click.ClickException(str(err)) from None
        stop_if_nothing_made(failures, len(perturbed), f"no {perturbation.component} record perturbed", output)
        save_records(perturbed, output)
        stats = kind_statistics(kind, perturbation.component, perturbation.category, records.to_list(),
                                perturbed.to_list(), llm_edits=llm_edit_counts(tally, kind), seconds=took[0])
        stats_path = statistics_path(output)
        write_json(PerturbationStatistics(PERTURB, str(input_path), str(output), seed, [stats]).to_dict(),
                   stats_path)
        named = _failed_records(failures, records)
        unchanged = (f" ({stats.unchanged} left unchanged, see their perturbation.description)" if stats.unchanged
                     else "")
        click.echo(f"{kind}: {stats.changed} of {len(records)} {perturbation.component} records changed{unchanged}"
                   f"{f'; {stats.left_out} left out (no usable LLM answer{named})' if stats.left_out else ''}"
                   f"{f'; LLM edits: {tally.describe()}' if tally.counts else ''}; {stats.describe()}; "
                   f"wrote {output} and {stats_path.name}")


def claims_path(output: Path) -> Path:
    """Where `praib perturb false-claims --papers` writes the claim buckets it generated: ``OUTPUT.claims.jsonl``."""
    return output.with_name(output.name + ".claims.jsonl")


def _failed_records(failures, records) -> str:
    """``: p2, r7`` naming the records (a review or rebuttal by its own id) the failed items were for."""
    from praib.perturb.rewrite import record_name

    if not failures.items:
        return ""
    rows = records.to_list()
    owners = {str(row["paper_id"]): str(row["paper_id"]) for row in rows}  # a paper's false-claim bucket
    owners.update((record_name(row), record_name(row)) for row in rows)
    return f": {failed_names(failures, owners)}"


# Fields only one record kind has, to catch a file of the wrong kind before its fields are dropped.
_TELLTALE = (("rebuttal", {"rebuttal_id"}), ("meta_review", {"meta_review_id"}),
             ("review", {"strengths", "weaknesses", "rating", "reviewer_id", "summary"}),
             ("paper", {"title", "abstract", "keywords"}))


def _held_kind(path: Path) -> str | None:
    """The record kind the first record of a .jsonl/.json/.parquet file looks like, None when unsure."""
    fields: set[str] = set()
    try:
        if path.suffix == ".jsonl":
            with path.open(encoding="utf-8") as handle:
                first = next((line for line in handle if line.strip()), "{}")
            fields = set(json.loads(first))
        elif path.suffix == ".parquet":
            import pyarrow.parquet as pq

            fields = set(pq.read_schema(path).names)
    except (OSError, ValueError):
        return None  # load_records reports the problem with its file and line
    return next((kind for kind, telltale in _TELLTALE if fields & telltale), None)

