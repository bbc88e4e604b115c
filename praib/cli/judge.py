"""`praib judge validate`: check a judge model against human labels before trusting its metrics."""

from __future__ import annotations

import json

import click

from praib.cli.common import (failure_log, judge_options, max_failures_option, no_progress_option, output_option,
                              seed_option, SOURCE, write_json)

# praib.metrics.judged.validation.TASKS, spelled out so that `--help` loads no judge code (a test keeps them equal).
TASKS = ("math", "aspect", "target", "polarity", "atomic", "coverage", "grounding")


@click.group()
def judge():
    """Check a judge model against human labels."""


@judge.command()
@click.option("--task", type=click.Choice(TASKS),
              help="What the judge is validated on: math (does a review engage with the mathematics), aspect or "
                   "target (of a strength or weakness), polarity (strength or weakness), atomic (extraction of "
                   "atomic strengths and weaknesses), coverage (does a text hold another's information), grounding "
                   "(RevUtil's grounding specificity of a review comment, 1-5).")
@click.option("--gold", metavar="FILE|disapere:PATH", type=SOURCE,
              help="The human labels: a gold JSONL file (docs/judge-validation.md), or disapere:PATH for a "
                   "local copy of DISAPERE (tasks aspect and polarity).")
@output_option("Write the validation result as JSON here; the items the judge got wrong go to "
               "OUTPUT.errors.jsonl, failed items to OUTPUT.failures.jsonl.", dir_okay=False,
               beside=("praib.metrics.judged.validation:errors_path",))
@click.option("--limit", type=click.IntRange(min=1), help="Validate on the first N items of the gold set only.")
@click.option("--bootstrap-resamples", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Resamples of the items for the 95% bootstrap intervals.")
@seed_option("Seed of the bootstrap resamples.")
@judge_options
@max_failures_option
@no_progress_option
def validate(task, gold, output, limit, bootstrap_resamples, seed, judge_spec, cache_dir, max_failures, no_progress):
    """Ask the judge about every item of a gold set and score its answers against the people's labels:
    accuracy, macro-F1, Cohen's κ and per-label precision and recall with bootstrap intervals, the
    confusion table and the majority-class baseline (for atomic: recall and precision of the gold
    atoms). An item the judge gives no usable answer for counts as wrong and is recorded in
    OUTPUT.failures.jsonl (exit status 3). The result is also stored beside the call cache, where
    judged commands find it for the same judge model, revision, templates and task.
    """
    from praib.llm.backends import BackendError
    from praib.metrics.judged.validation import (errors_path, format_validation, read_gold, store_validation,
                                                 validate_judge)
    from praib.records import RecordError
    from praib.records.atomic import write_text_atomically
    from praib.sources.disapere import PREFIX, read_disapere

    if not task:
        raise click.UsageError(f"give --task, one of {', '.join(TASKS)}")
    if not gold:
        raise click.UsageError("give the human labels: --gold FILE or --gold disapere:PATH")
    if not judge_spec.model:
        raise click.UsageError("this command needs a judge: give --judge MODEL")
    with failure_log(max_failures, output) as failures:
        try:
            gold_set = (read_disapere(gold.removeprefix(PREFIX), task) if gold.startswith(PREFIX)
                        else read_gold(gold, task))
            if limit:
                gold_set = gold_set.head(limit)
            made = judge_spec.make(failures)
            result, wrong = validate_judge(made, gold_set, resamples=bootstrap_resamples, seed=seed,
                                           progress=not no_progress)
        except (RecordError, ValueError, BackendError) as err:
            raise click.ClickException(str(err)) from None
        yielded = gold_set.summary.get("yielded")
        click.echo(format_validation(result, f"{result.gold} yields {sum(yielded.values())} {task} items in all: "
                                             + ", ".join(f"{label} {n}" for label, n in yielded.items())
                                     if yielded else None))
        stored = store_validation(result, cache_dir)
        click.echo(f"\nStored as {stored}", err=True)
        if output:
            write_json(result.to_dict(), output)
            errors = errors_path(output)
            if wrong:
                write_text_atomically(errors, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in wrong))
            else:
                errors.unlink(missing_ok=True)
            click.echo(f"Wrote {output}" + (f" and the {len(wrong)} items the judge got wrong to {errors}"
                                            if wrong else ""), err=True)
