"""What a command run left behind, for the tests of failing runs: its one-line output, its failure records and
the answers in its call cache."""

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from praib.cli.main import main


def invoke(args):
    """``praib ARGS`` in this process; whatever it says, it says without a traceback."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    return result


def failures_of(output: Path) -> list[dict]:
    """The records of ``<output>.failures.jsonl``; none when the run wrote no such file."""
    path = output.with_name(output.name + ".failures.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def cached_answers(cache: Path) -> int:
    with sqlite3.connect(cache / "calls.sqlite3") as connection:
        return connection.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
