"""A process that replaces an output folder (praib.records.atomic.replace_folder) and is killed with
SIGKILL at a chosen step: it counts the steps of one kind inside the folder and kills itself at the
step after ``count`` of them. The steps:

- ``staged``: a file renamed into place in the staging folder (while the command writes its output);
- ``journal``: just after the journal of the moves is written;
- ``remove``: a file of the folder unlinked (an old file of praib's);
- ``move``: a file renamed into the folder;
- ``record``: the ownership record renamed into the folder (the last step).

It runs either `praib ARGS...` or, with ``write``, :func:`write_layout` of ``tag`` into the folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from praib.records.atomic import replace_folder, write_text_atomically

CHILD = """
import os, signal, sys
from pathlib import Path

event, count, destination, mode, *rest = sys.argv[1:]
count, destination = int(count), os.path.realpath(destination)
staging = os.path.join(os.path.dirname(destination), "." + os.path.basename(destination) + ".praib-")
seen = 0
real_replace, real_unlink = os.replace, Path.unlink


def step(kind):
    global seen
    if kind == event:
        if seen == count:
            os.kill(os.getpid(), signal.SIGKILL)
        seen += 1


def replace(source, target, **options):
    target_path = os.path.abspath(target)
    if os.path.basename(target_path) == ".praib-journal.json":
        real_replace(source, target, **options)
        return step("journal")
    if target_path.startswith(staging):
        step("staged")
    elif target_path == os.path.join(destination, ".praib-written.json"):
        step("record")
    elif target_path.startswith(destination + os.sep):
        step("move")
    return real_replace(source, target, **options)


def unlink(self, missing_ok=False):
    if os.path.abspath(self).startswith(destination + os.sep):
        step("remove")
    return real_unlink(self, missing_ok=missing_ok)


os.replace, Path.unlink = replace, unlink
if mode == "write":
    from tests.killed_writer import write_layout
    write_layout(destination, rest[0], int(rest[1]))
else:
    from praib.cli.main import main
    sys.argv = ["praib", mode, *rest]
    main()
"""


def layout(tag: str, files: int) -> dict[str, str]:
    """The files of an output: a results file, two details and ``files`` parts, each holding ``tag``."""
    names = ["results.jsonl", "details/a.json", "details/b.json", *(f"parts/{i:05d}.txt" for i in range(files))]
    return {name: f"{tag} {name}\n" for name in names}


def write_layout(destination: str | Path, tag: str, files: int, extra: dict[str, str] | None = None) -> None:
    with replace_folder(destination) as folder:
        for name, text in {**layout(tag, files), **(extra or {})}.items():
            if name.startswith("parts/"):
                (folder / name).parent.mkdir(exist_ok=True)
                (folder / name).write_text(text, encoding="utf-8")
            else:  # as a command writes its JSON files
                write_text_atomically(folder / name, text)


def start_killed(event: str, count: int, destination: str | Path, *command: str) -> subprocess.Popen:
    """Start the process; ``command`` is ``("write", TAG, FILES)`` or the arguments of `praib`."""
    root = Path(__file__).resolve().parent.parent
    return subprocess.Popen([sys.executable, "-c", CHILD, event, str(count), str(destination), *command],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_killed(event: str, count: int, destination: str | Path, *command: str) -> subprocess.CompletedProcess:
    child = start_killed(event, count, destination, *command)
    stdout, stderr = child.communicate(timeout=300)
    return subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
