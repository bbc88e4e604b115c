"""A run killed while it replaces an output folder never costs the user a file: their files stay where
they were at every step, and the next run finishes the replacement (or drops an output that was never
moved in), says so in one line and leaves no temporary folder (issue 26, item 3)."""

from __future__ import annotations

import json
import logging
import random
import re
import signal
import time
from pathlib import Path

import pytest

from praib.records.atomic import RECORD, finish_interrupted
from tests.killed_writer import layout, run_killed, start_killed, write_layout

PARTS = 12
USERS = {"notes.md": "my notes\n", "details/mine.json": '{"mine": true}\n', "parts/README": "what parts are\n",
         **{f"plots/{i:03d}.png": f"png {i}" for i in range(40)}}
GONE = {"details/gone.json": "old details/gone.json\n"}  # in the old output only: removed by the new one


def files(folder: Path) -> dict[str, str]:
    return {f.relative_to(folder).as_posix(): f.read_text(encoding="utf-8") for f in sorted(folder.rglob("*"))
            if f.is_file() and f.name != RECORD}


def recorded(folder: Path) -> set[str]:
    return set(json.loads((folder / RECORD).read_text(encoding="utf-8"))["files"])


def output_with_users_files(tmp_path: Path, parts: int = PARTS) -> Path:
    folder = tmp_path / "results"
    write_layout(folder, "old", parts, GONE)
    for name, text in USERS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def users_files_in_place(folder: Path) -> bool:
    return {name: text for name, text in files(folder).items() if name in USERS} == USERS


STEPS = [("staged", 0), ("staged", 1), ("journal", 0), ("remove", 0), ("move", 0), ("move", 7), ("record", 0)]


@pytest.mark.parametrize("event,count", STEPS, ids=[f"{event} {count}" for event, count in STEPS])
def test_a_run_killed_at_any_step_keeps_the_users_files_and_the_next_run_finishes_it(tmp_path, caplog, event,
                                                                                   count):
    folder = output_with_users_files(tmp_path)
    killed = run_killed(event, count, folder, "write", "new", str(PARTS))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert users_files_in_place(folder)
    [staging] = [p for p in tmp_path.iterdir() if p.name.startswith(".results.praib-")]

    with caplog.at_level(logging.WARNING):
        finish_interrupted(folder)
    [line] = caplog.messages
    if event == "staged":  # killed while writing: its output was never moved in
        assert re.fullmatch(rf"removed {re.escape(str(staging))}, " + (
            "left by a praib run killed as it began writing " if count == 0 else  # before its marker was written
            r"the unfinished output of a praib run \(pid \d+\) killed while writing ") + re.escape(str(folder)), line)
        assert files(folder) == {**layout("old", PARTS), **GONE, **USERS}
        assert recorded(folder) == set(layout("old", PARTS)) | set(GONE)
    else:
        assert re.fullmatch(rf"finished replacing {re.escape(str(folder))}, which a praib run \(pid \d+\) was killed "
                            r"in the middle of", line)
        assert files(folder) == {**layout("new", PARTS), **USERS}
        assert recorded(folder) == set(layout("new", PARTS))
    assert [p.name for p in tmp_path.iterdir()] == ["results"]

    caplog.clear()
    write_layout(folder, "newer", PARTS)  # the next replacement has nothing left to finish
    assert caplog.messages == []
    assert files(folder) == {**layout("newer", PARTS), **USERS}


def test_kills_at_random_moments_never_lose_a_users_file(tmp_path):
    """SIGKILL races: each kill lands somewhere in a replacement of 1,000 files, while it writes them (the
    odd rounds) or moves them in (the even ones, killed within 0.05 s of its journal); after each, the
    user's files are in place, and the next check leaves the old output or the new one, whole."""
    parts = 1000
    folder = output_with_users_files(tmp_path, parts)
    draw = random.Random(26)

    def staging(journal: bool) -> bool:
        return any(p.name.startswith(".results.praib-") and (not journal or (p / ".praib-journal.json").exists())
                   for p in tmp_path.iterdir())

    for round, tag in enumerate(("new", "newer", "newest", "latest")):
        before = {name: text for name, text in files(folder).items() if name not in USERS}
        child = start_killed("never", 0, folder, "write", tag, str(parts))
        while not staging(journal=round % 2 == 1) and child.poll() is None:
            time.sleep(0.001)
        time.sleep(draw.uniform(0, 0.05 if round % 2 else 0.3))
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=60)
        assert users_files_in_place(folder)
        finish_interrupted(folder)
        assert [p.name for p in tmp_path.iterdir()] == ["results"]
        assert users_files_in_place(folder)
        produced = {name: text for name, text in files(folder).items() if name not in USERS}
        assert produced in (before, layout(tag, parts)), f"{tag}: neither the old output nor the new"
