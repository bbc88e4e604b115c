"""Other processes around an output's lock (praib.records.locks): one that holds it until told to let go,
and one that only tries to take it."""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

HOLD = """
import sys
from praib.records.locks import output_lock
with output_lock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""

TRY = """
import sys
from praib.records.locks import OutputLockedError, output_lock
try:
    with output_lock(sys.argv[1]):
        print("took")
except OutputLockedError:
    print("refused")
"""


@contextmanager
def lock_held_elsewhere(output: str | Path, *arguments: str):
    """A python process holding the lock of ``output`` for the block (unless the block kills it); ``arguments``
    follow ``output`` on its command line."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(output), *arguments], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        yield holder
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
        holder.stdout.close()


def try_elsewhere(output: str | Path) -> str:
    """'took' or 'refused': what another process gets when it asks for the lock of ``output``."""
    return subprocess.run([sys.executable, "-c", TRY, str(output)], capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()
