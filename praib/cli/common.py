"""Options and helpers shared by the commands of the ``praib`` command line.

Command modules import from here, never from ``praib.cli.main``, which imports them.
"""

from __future__ import annotations

import json
from pathlib import Path

import click


BACKENDS = ["vllm", "openai", "transformers"]
DEFAULT_BASE_URL = "http://localhost:8000/v1"
CACHE_DIR_HELP = "Call cache; a rerun resumes from it. [default: $PRAIB_CACHE or ~/.cache/praib/calls]"


def _apply(command, options):
    for option in reversed(options):
        command = option(command)
    return command


def output_option(help: str, default: str | None = None, file_okay: bool = True, dir_okay: bool = True):
    """-o/--output, the one spelling of where a command writes its result."""
    return click.option("--output", "-o", type=click.Path(file_okay=file_okay, dir_okay=dir_okay, path_type=Path),
                        default=default, show_default=default is not None, help=help)


def cache_dir_option(help: str = CACHE_DIR_HELP):
    return click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help=help)


no_progress_option = click.option("--no-progress", is_flag=True, help="Hide progress bars.")

split_option = click.option("--split", default="train", show_default=True,
                            help="Split to read from a dataset or Hub id.")


def seed_option(help: str):
    # Seeds are stored with the records as int64.
    return click.option("--seed", type=click.IntRange(-2**63, 2**63 - 1), default=0, show_default=True, help=help)


def judge_options(command):
    """The options that choose and run a judge model: the same on every command that takes a judge."""
    return _apply(command, [
        click.option("--judge", "judge_model", metavar="MODEL",
                     help="Model that judges or edits text: the judged metrics (math engagement, coverage, target/aspect), "
                          "LLM-driven perturbations and counterfactual edits."),
        click.option("--judge-backend", type=click.Choice(BACKENDS), default="transformers", show_default=True,
                     help="Backend that runs the judge model."),
        click.option("--judge-base-url", default=DEFAULT_BASE_URL, show_default=True,
                     help="OpenAI-compatible server of the judge (--judge-backend openai)."),
        click.option("--judge-max-new-tokens", type=click.IntRange(min=1), default=1024, show_default=True,
                     help="Longest judge answer, in tokens."),
        cache_dir_option("Call cache of the judge (and of the command's other model calls); a rerun resumes "
                         "from it. [default: $PRAIB_CACHE or ~/.cache/praib/calls]"),
    ])


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
    ])


def write_json(data, output: Path) -> None:
    """A command's results as indented UTF-8 JSON, creating the folder."""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


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
