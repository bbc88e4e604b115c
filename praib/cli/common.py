"""Options and helpers shared by the commands of the ``praib`` command line.

Command modules import from here, never from ``praib.cli.main``, which imports them.
"""

from __future__ import annotations

import json
from pathlib import Path

import click


def judge_options(command):
    """The options that choose and run a judge model, shared by `evaluate` and `score`."""
    options = [
        click.option("--judge", "judge_model", metavar="MODEL",
                     help="Model that judges or edits text: the judged metrics (math engagement, coverage, target/aspect), "
                          "LLM-driven perturbations and counterfactual edits."),
        click.option("--judge-backend", type=click.Choice(["vllm", "openai", "transformers"]),
                     default="transformers", show_default=True, help="Backend that runs the judge model."),
        click.option("--judge-base-url", default="http://localhost:8000/v1", show_default=True,
                     help="OpenAI-compatible server of the judge (--judge-backend openai)."),
        click.option("--judge-max-new-tokens", type=click.IntRange(min=1), default=1024, show_default=True),
        click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="Judge call cache; a rerun resumes from it. [default: $PRAIB_CACHE or ~/.cache/praib/calls]"),
    ]
    for option in reversed(options):
        command = option(command)
    return command


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
    """--param KEY=VALUE; VALUE '@file.txt' reads the file (venue guidelines are long)."""
    params = key_values(pairs, "--param")
    for key, value in params.items():
        if value.startswith("@"):
            try:
                params[key] = Path(value[1:]).read_text(encoding="utf-8")
            except OSError as err:
                raise click.BadParameter(f"{key}: cannot read {value[1:]}: {err.strerror}", param_hint="--param")
    return params
