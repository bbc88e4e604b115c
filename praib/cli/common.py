"""Options and helpers shared by the commands of the ``praib`` command line.

Command modules import from here, never from ``praib.cli.main``, which imports them.
"""

from __future__ import annotations

import contextlib
import functools
import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import click

from praib.llm.backends import DEFAULT_BASE_URL
from praib.llm.failures import EXIT_FAILED_ITEMS, FailureLog, TooManyFailures, parse_max_failures

BACKENDS = ["vllm", "openai", "transformers"]
CACHE_DIR_HELP = "Call cache; a rerun resumes from it. [default: $PRAIB_CACHE or ~/.cache/praib/calls]"


def _apply(command, options):
    for option in reversed(options):
        command = option(command)
    return command


def output_option(help: str, default: str | None = None, file_okay: bool = True, dir_okay: bool = True):
    """-o/--output, the one spelling of where a command writes its result. The command runs holding the
    output's lock (:func:`praib.records.locks.output_lock`), which also covers the files it writes beside
    the output: a second run on the same output is refused at once."""
    option = click.option("--output", "-o", type=click.Path(file_okay=file_okay, dir_okay=dir_okay, path_type=Path),
                          default=default, show_default=default is not None, help=help)
    return lambda command: option(_holding_output_lock(command))


def _holding_output_lock(command):
    # Taken when the command runs rather than while click parses, so that a usage error takes no lock.
    @functools.wraps(command)
    def run(**params):
        from praib.records.locks import OutputLockedError, output_lock

        with contextlib.ExitStack() as held:
            if params["output"] is not None:
                try:
                    held.enter_context(output_lock(params["output"]))
                except OutputLockedError as err:
                    raise click.ClickException(f"{err}; wait for it or choose another --output") from None
            return command(**params)
    return run


def cache_dir_option(help: str = CACHE_DIR_HELP):
    return click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help=help)


no_progress_option = click.option("--no-progress", is_flag=True, help="Hide progress bars.")

split_option = click.option("--split", default="train", show_default=True,
                            help="Split to read from a dataset or Hub id.")


def seed_option(help: str):
    # Seeds are stored with the records as int64.
    return click.option("--seed", type=click.IntRange(-2**63, 2**63 - 1), default=0, show_default=True, help=help)


@dataclass(frozen=True)
class JudgeSpec:
    """The judge a command's options chose; ``model`` None when none was given."""

    model: str | None
    backend: str
    base_url: str
    max_new_tokens: int
    timeout: float
    max_tries: int
    concurrency: int
    cache_dir: Path | None

    def make(self, failures: FailureLog):
        """The :class:`praib.llm.judge.Judge` (None without a model), recording into ``failures``."""
        if not self.model:
            return None
        from praib.llm.judge import make_judge

        return make_judge(self.backend, self.model, self.base_url, self.max_new_tokens, self.cache_dir,
                          timeout=self.timeout, max_tries=self.max_tries, concurrency=self.concurrency,
                          failures=failures)


def judge_options(command):
    """The options that choose and run a judge model, the same on every command that takes a judge;
    the command receives them as one ``judge_spec`` argument, a :class:`JudgeSpec` (and ``cache_dir``)."""
    @functools.wraps(command)
    def with_judge(*args, **kwargs):
        kwargs["judge_spec"] = JudgeSpec(
            model=kwargs.pop("judge_model"), backend=kwargs.pop("judge_backend"),
            base_url=kwargs.pop("judge_base_url"), max_new_tokens=kwargs.pop("judge_max_new_tokens"),
            timeout=kwargs.pop("judge_timeout"), max_tries=kwargs.pop("judge_max_tries"),
            concurrency=kwargs.pop("judge_concurrency"), cache_dir=kwargs.get("cache_dir"))
        return command(*args, **kwargs)

    return _apply(with_judge, [
        click.option("--judge", "judge_model", metavar="MODEL",
                     help="Model that judges or edits text: the judged metrics (math engagement, coverage, target/aspect), "
                          "LLM-driven perturbations and counterfactual edits."),
        click.option("--judge-backend", type=click.Choice(BACKENDS), default="transformers", show_default=True,
                     help="Backend that runs the judge model."),
        click.option("--judge-base-url", default=DEFAULT_BASE_URL, show_default=True,
                     help="OpenAI-compatible server of the judge (--judge-backend openai)."),
        click.option("--judge-max-new-tokens", type=click.IntRange(min=1), default=1024, show_default=True,
                     help="Longest judge answer, in tokens."),
        click.option("--judge-timeout", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True,
                     help="Seconds to wait for one judge answer (--judge-backend openai)."),
        click.option("--judge-max-tries", type=click.IntRange(min=1), default=5, show_default=True,
                     help="Attempts per judge request, with exponential backoff, before the item is recorded as "
                          "failed (--judge-backend openai)."),
        click.option("--judge-concurrency", type=click.IntRange(min=1), default=8, show_default=True,
                     help="Parallel requests to the judge's server (--judge-backend openai)."),
        cache_dir_option("Call cache of the judge (and of the command's other model calls); a rerun resumes "
                         "from it. [default: $PRAIB_CACHE or ~/.cache/praib/calls]"),
    ])


max_failures_option = click.option(
    "--max-failures", metavar="N|SHARE", default=None,
    help="Stop the run once N items failed, or once more than SHARE (e.g. 0.1) of the items tried failed. "
         "[default: go on; stop only when none of the first 20 requests got an answer]")


@contextmanager
def failure_log(max_failures: str | None, output: Path | None) -> Iterator[FailureLog]:
    """The run's :class:`~praib.llm.failures.FailureLog`. When the block ends, the failed items are
    written to ``<output>.failures.jsonl`` (a stale file is removed) and counted on stderr, and the
    command exits with status 3 if there are any; a run stopped by ``--max-failures`` (or a server
    that never answers) ends with one line and status 1, its failures written all the same."""
    try:
        log = FailureLog(parse_max_failures(max_failures))
    except ValueError as err:
        raise click.BadParameter(str(err).removeprefix("--max-failures: "), param_hint="--max-failures") from None
    try:
        yield log
        log.stop_if_none_answered()
    except TooManyFailures as err:
        _write_failures(log, output)
        raise click.ClickException(str(err)) from None
    except BaseException:
        _write_failures(log, output)
        raise
    written = _write_failures(log, output)
    if log.items:
        click.echo(f"warning: {log.describe()}"
                   + (f"; written to {written}" if written else "; give --output to keep the failure records")
                   + "; rerun the same command to retry them", err=True)
        raise SystemExit(EXIT_FAILED_ITEMS)


def _write_failures(log: FailureLog, output: Path | None) -> Path | None:
    return log.write(output) if output is not None else None


def model_options(command):
    """The options that choose a model and how it samples, shared by `generate` and `meta-review`."""
    return _apply(command, [
        click.option("--backend", "backend_kind", type=click.Choice(BACKENDS), default="transformers",
                     show_default=True, help="vllm: offline engine (GPU); openai: any OpenAI-compatible server "
                                             "(e.g. `vllm serve`); transformers: CPU, small models."),
        click.option("--base-url", default=DEFAULT_BASE_URL, show_default=True,
                     help="OpenAI-compatible server (--backend openai); the API key is read from $OPENAI_API_KEY."),
        click.option("--max-new-tokens", type=click.IntRange(min=1), default=2048, show_default=True,
                     help="Longest output, in tokens."),
        click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True,
                     help="Sampling temperature; 0 is greedy."),
        click.option("--top-p", type=click.FloatRange(0, 1, min_open=True), default=1.0, show_default=True,
                     help="Nucleus sampling: keep the smallest token set with this probability mass."),
        seed_option("Seed of the sampling (and of the perturbation, when there is one)."),
        click.option("--token-budget", type=click.IntRange(min=1), default=50_000, show_default=True,
                     help="Truncate each paper to this many tokens (the model's tokenizer when the backend has one)."),
        click.option("--batch-size", type=click.IntRange(min=1), default=None,
                     help="Requests per backend call, written to disk after each. "
                          "[default: all at once for vllm, 16 otherwise]"),
        click.option("--no-cache", is_flag=True, help="Do not read or write the call cache."),
        click.option("--source", help="The records' source field. [default: the model name]"),
        click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True,
                     help="Parallel requests to the server (--backend openai)."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True,
                     help="Seconds to wait for one server response (--backend openai)."),
        click.option("--max-tries", type=click.IntRange(min=1), default=5, show_default=True,
                     help="Attempts per request, with exponential backoff, before the item is recorded as failed "
                          "(--backend openai)."),
    ])


def write_json(data, output: Path) -> None:
    """A command's results as indented UTF-8 JSON, creating the folder; written whole or not at all."""
    from praib.records.atomic import write_text_atomically

    write_text_atomically(output, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def key_values(pairs: tuple[str, ...], option: str) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint=option)
        out[key.strip()] = value
    return out


def param_values(pairs: tuple[str, ...]) -> dict[str, str]:
    """--prompt-arg KEY=VALUE; VALUE '@file.txt' reads the file (venue guidelines are long)."""
    from praib.records import RecordError, read_text

    params = key_values(pairs, "--prompt-arg")
    for key, value in params.items():
        if value.startswith("@"):
            try:
                params[key] = read_text(value[1:], what="text")
            except RecordError as err:
                raise click.BadParameter(f"{key}: {err}", param_hint="--prompt-arg") from None
    return params
