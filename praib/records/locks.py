"""One run per output: a run holds its output's lock for as long as it writes there.

``with output_lock(path):`` holds ``<path>.lock`` (beside the output). The lock guards the output and
the files named after it (``<output>.partial.jsonl``, the side outputs a command writes next to its
main one). A second holder, in another process, is refused at once with :class:`OutputLockedError`,
which names the holder (pid, start time and command line, read from the lock file). Within one
process the lock is re-entrant, so the library's run loop may take it inside a command that already
holds it. It is an operating-system lock (``flock`` on POSIX): the system drops it when the holding
process ends, however it ends, so a killed run never blocks the next one. A run that ends normally
removes the ``.lock`` file; one left by a killed run is held by no process, and the next run takes it.

Built on ``filelock`` (already installed with ``datasets``) rather than on ``fcntl.flock`` by hand:
it gives per-process re-entrancy by path (``is_singleton``), opens the lock file without truncating
the holder's details and writes them through a hook run once the lock is held (``on_acquired``), and
handles what a hand-written lock tends to get wrong: a lock file unlinked between a contender's
open and its lock, descriptors inherited across ``fork``, Windows. Where the filesystem has no
``flock`` it fails with an ``OSError`` rather than run unlocked.
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import socket
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from filelock import FileLock, Timeout

from praib.http_retry import redact_credentials


class OutputLockedError(RuntimeError):
    """Another process holds the lock of ``output``; ``holder`` is what it recorded (None when unreadable)."""

    def __init__(self, output: str | Path, holder: dict | None) -> None:
        self.output, self.holder = output, holder
        super().__init__(f"{output} is being written by another praib run{_describe(holder)}")


def lock_path(output: str | Path) -> Path:
    """The lock file of ``output``: ``<output>.lock`` beside it (symbolic links followed, so two
    names of one output share one lock)."""
    output = Path(output).resolve()
    return output.with_name(output.name + ".lock")


@contextmanager
def output_lock(output: str | Path, wait: float = 0) -> Iterator[None]:
    """Hold the lock of ``output`` for the block; raise :class:`OutputLockedError` when another process
    holds it: at once, or after waiting up to ``wait`` seconds for it to let go (for an output that several
    processes of one run update in turn, each for a moment: the parts of a sharded evaluation). Re-entrant
    within a process."""
    path = lock_path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, timeout=0, thread_local=False, is_singleton=True, on_acquired=_record_holder)
    _acquire(lock, output, path, time.monotonic() + wait)
    try:
        yield
    finally:
        if lock.lock_counter == 1:
            # Removed while still held, so that no lock file outlives a run that ends normally; a contender
            # that opened it just before finds it unlinked once it gets the lock, and is refused.
            path.unlink(missing_ok=True)
        lock.release()


def _acquire(lock: FileLock, output: str | Path, path: Path, deadline: float) -> None:
    """Take ``lock``, trying until ``deadline`` (a ``time.monotonic()``), or raise :class:`OutputLockedError`
    naming its holder. A holder read in the moment it takes the lock (its details not yet written) or lets
    it go (its file unlinked) names nobody: look again for a moment, taking the lock if it came free."""
    looks = 0
    while True:
        try:
            lock.acquire()
            return
        except Timeout:
            if time.monotonic() >= deadline:
                looks += 1
                holder = _read_holder(path)
                if holder or looks == _LOOKS:
                    raise OutputLockedError(output, holder) from None
        time.sleep(_LOOK_INTERVAL)


#: How often and how far apart a refused run looks again for the holder's details (half a second in all).
_LOOKS, _LOOK_INTERVAL = 25, 0.02


def _record_holder(descriptor: int) -> None:
    holder = {"pid": os.getpid(), "host": socket.gethostname(),
              "started": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
              "command": redact_credentials(shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]]))}
    try:
        os.ftruncate(descriptor, 0)
        os.lseek(descriptor, 0, os.SEEK_SET)
        os.write(descriptor, json.dumps(holder).encode("utf-8"))
    except OSError:
        # A full disk: the lock holds all the same, and a refused contender names no holder (as while
        # these details are being written); the run's own writes say what is wrong, naming the file.
        pass


def _read_holder(path: Path) -> dict | None:
    # Empty while the holder is between taking the lock and writing its details.
    try:
        holder = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return holder if isinstance(holder, dict) else None


def _describe(holder: dict | None) -> str:
    if not holder:
        return ""
    host = f" on {holder.get('host')}" if holder.get("host") != socket.gethostname() else ""
    return f" (pid {holder.get('pid')}{host}, started {holder.get('started')}: {holder.get('command')})"
