"""The command line starts without the heavy libraries: every ``--help`` (of the tree of commands) imports none of
``datasets``, ``pyarrow``, ``evaluate``, ``torch`` (nor ``pandas``, ``transformers``) and no metric code; the
commands import them when they run (issue 32, item 6)."""

import json
import subprocess
import sys

from tests.paths import ROOT

HEAVY = ("datasets", "pyarrow", "evaluate", "torch", "pandas", "transformers")

# In a fresh interpreter: every command's --help, one after the other, and which heavy modules each brought
# (modules stay imported, so the first help that imports one is the one named).
PROBE = """
import json, sys
import click
from praib.cli.main import main

def commands(group, path):
    for name, command in group.commands.items():
        yield [*path, name]
        if isinstance(command, click.Group):
            yield from commands(command, [*path, name])

heavy = set(sys.argv[1:])
def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in heavy or m.startswith("praib.metrics"))

found = {"praib": loaded()}
for path in [[]] + list(commands(main, [])):
    try:
        main([*path, "--help"], standalone_mode=False)
    except SystemExit:
        pass
    found[" ".join(["praib", *path])] = loaded()
print(json.dumps(found))
"""


def test_every_help_imports_no_heavy_library_and_no_metric():
    done = subprocess.run([sys.executable, "-c", PROBE, *HEAVY], capture_output=True, text=True, check=True,
                          cwd=ROOT)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(found) > 40 and "praib evaluate run" in found and "praib leaderboard run" in found  # the whole tree
    assert {command: modules for command, modules in found.items() if modules} == {}


def test_a_command_that_reads_records_still_has_them(tmp_path):
    """The libraries come when a command needs them, quieted as before: a datasets warning is one 'praib:' line."""
    script = ("import logging, sys\nfrom praib.cli.common import configure_output\nconfigure_output()\n"
              "import datasets\nlogging.getLogger('datasets.builder').warning('one line')\n"
              "from datasets.utils.tqdm import are_progress_bars_disabled\nprint(are_progress_bars_disabled())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stderr.splitlines() == ["praib: one line"] and done.stdout.strip() == "True"
