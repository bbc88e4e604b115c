"""The command line follows one grammar (docs/cli.md, "Command-line conventions") on every command."""

import re

import click
import pytest

from praib.cli.main import main

JUDGE_OPTIONS = {"--judge", "--judge-backend", "--judge-base-url", "--judge-max-new-tokens", "--judge-timeout",
                 "--judge-max-tries", "--judge-concurrency", "--cache-dir"}
# The same knobs for a server, whichever model it runs: the generator's and the judge's.
SERVER_OPTIONS = {"--timeout": "--judge-timeout", "--max-tries": "--judge-max-tries",
                  "--concurrency": "--judge-concurrency"}


def _commands(group=main, path=("praib",)):
    for name, command in group.commands.items():
        yield " ".join((*path, name)), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


COMMANDS = {"praib": main, **dict(_commands())}


def _options(command):
    return [p for p in command.params if isinstance(p, click.Option)]


def _names(command):
    return {name for option in _options(command) for name in option.opts + option.secondary_opts}


def test_the_tree_has_every_command_and_the_leaderboard_verbs_in_one_group():
    leaves = {path for path, command in COMMANDS.items() if not isinstance(command, click.Group)}
    assert leaves == {
        "praib evaluate run", "praib evaluate merge", "praib generate", "praib score", "praib prompts list", "praib prompts show",
        "praib perturb", "praib robustness", "praib meta-review",
        "praib counterfactual extract", "praib counterfactual build", "praib counterfactual oracle",
        "praib counterfactual effects", "praib counterfactual stats",
        "praib data collect", "praib data import-dump", "praib data import-ukp", "praib data export-ukp",
        "praib data sample", "praib data pdf", "praib data build",
        "praib data push", "praib data verify-citations",
        "praib leaderboard validate", "praib leaderboard run", "praib leaderboard compare", "praib leaderboard plan",
        "praib leaderboard push", "praib leaderboard report", "praib leaderboard eras", "praib leaderboard submit",
        "praib leaderboard process", "praib leaderboard app", "praib leaderboard space", "praib metrics export",
        "praib doctor", "praib tables", "praib judge validate", "praib grounding"}


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_command_and_option_is_explained_and_no_option_is_required(path):
    command = COMMANDS[path]
    assert command.help, f"{path} has no help text"
    for option in _options(command):
        if option.name == "help":
            continue
        assert option.help, f"{path} {option.opts[0]} has no help text"
        assert not option.required, f"{path} {option.opts[0]} is a mandatory option: make it an argument"


def test_every_command_that_takes_a_judge_has_the_same_judge_options():
    judged = {path: command for path, command in COMMANDS.items() if "--judge" in _names(command)}
    assert set(judged) == {"praib evaluate run", "praib score", "praib perturb", "praib meta-review",
                           "praib counterfactual extract", "praib counterfactual build",
                           "praib counterfactual oracle", "praib counterfactual effects", "praib leaderboard run",
                           "praib leaderboard process", "praib judge validate", "praib grounding"}
    reference = {o.opts[0]: o.to_info_dict() for o in _options(COMMANDS["praib score"]) if o.opts[0] in JUDGE_OPTIONS}
    assert set(reference) == JUDGE_OPTIONS
    for path, command in judged.items():
        options = {o.opts[0]: o.to_info_dict() for o in _options(command) if o.opts[0] in JUDGE_OPTIONS}
        assert options == reference, path


def test_evaluate_and_score_take_the_same_second_judge_options():
    second = {"--second-judge", "--second-judge-backend", "--second-judge-base-url"}
    options = {path: {o.opts[0]: o.to_info_dict() for o in _options(COMMANDS[path]) if o.opts[0] in second}
               for path in ("praib evaluate run", "praib score")}
    assert set(options["praib score"]) == second
    assert options["praib evaluate run"] == options["praib score"]
    assert {path for path, command in COMMANDS.items() if "--second-judge" in _names(command)} == set(options)


# A role and the one spelling allowed for it; a name matching the pattern must be one of the spellings.
ROLE_SPELLINGS = [
    (r"progress", {"--no-progress"}),
    (r"output|^--out$|^-o$", {"--output", "-o"}),
    (r"base.?url|baseurl|endpoint", {"--base-url", "--judge-base-url", "--second-judge-base-url", "--ocr-base-url"}),
    (r"cache", {"--cache-dir", "--no-cache"}),
    (r"tries|retries|attempts", {"--max-tries", "--judge-max-tries"}),
    (r"failures", {"--max-failures"}),
    (r"seed", {"--seed"}),
    (r"template", {"--template", "--template-dir", "--card-template", "--judge-template"}),
    (r"^--kinds?$", set()),
    (r"^--(param|option)s?$", set()),
]


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_each_role_has_one_spelling(path):
    command = COMMANDS[path]
    for option in _options(command):
        for name in option.opts + option.secondary_opts:
            for pattern, allowed in ROLE_SPELLINGS:
                if re.search(pattern, name):
                    assert name in allowed, f"{path}: {name} (use one of {sorted(allowed) or 'another name'})"
    names = _names(command)
    if "--output" in names:
        output = next(o for o in _options(command) if "--output" in o.opts)
        assert set(output.opts) == {"--output", "-o"}, f"{path}: --output without -o"
    assert "--no-progress" not in names or next(
        o for o in _options(command) if o.opts == ["--no-progress"]).help == "Hide progress bars."


def test_no_command_needs_a_flag_to_do_its_job():
    validate = COMMANDS["praib leaderboard validate"]
    assert not any(o.is_flag for o in _options(validate))


def test_every_command_that_calls_a_model_can_bound_its_failures_with_the_same_server_knobs():
    calling = {path: command for path, command in COMMANDS.items()
               if {"--judge", "--backend", "--ocr-model"} & _names(command)}
    assert {"praib generate", "praib meta-review", "praib data pdf", "praib score"} <= set(calling)
    for path, command in calling.items():
        assert "--max-failures" in _names(command), path
    for path in ("praib generate", "praib meta-review"):
        options = {o.opts[0]: o for o in _options(COMMANDS[path])}
        judge = {o.opts[0]: o for o in _options(COMMANDS["praib score"])}
        for own, judges in SERVER_OPTIONS.items():
            assert ((options[own].type.to_info_dict(), options[own].default)
                    == (judge[judges].type.to_info_dict(), judge[judges].default)), path


def test_evaluate_help_shows_the_command_a_user_types_every_input_and_merge():
    """`praib evaluate INPUT` runs the group's default command: its help and usage errors name
    `praib evaluate`, not the command (`run`) that the group routes to."""
    from click.testing import CliRunner

    shown = CliRunner().invoke(main, ["evaluate", "--help"], prog_name="praib")
    assert shown.exit_code == 0
    assert shown.output.startswith("Usage: praib evaluate [OPTIONS] INPUT\n")
    assert "evaluate run" not in shown.output
    text = " ".join(shown.output.split())
    assert "JSONL, JSON, Parquet or CSV file" in text and "Hub dataset id" in text
    assert "AI-Scientist review JSON and OpenReview notes are read as they are" in text
    assert "merge Combine the partial results (.npz) of --shard" in text
    assert "praib evaluate merge PARTS... --output FILE" in text
    wrong = CliRunner().invoke(main, ["evaluate", "--no-such-option"], prog_name="praib")
    assert wrong.exit_code == 2
    assert wrong.output.startswith("Usage: praib evaluate [OPTIONS] INPUT\nTry 'praib evaluate --help' for help.")
