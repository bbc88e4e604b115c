"""One command run and measured with its process tree: wall time, CPU time and peak memory, for the benchmarks.

:func:`run_measured` runs a command (output into a log), polls the memory of its process and all its children
every 0.05 s, and gives the wall seconds, the CPU seconds of the tree (user and system, which other busy
processes stretch less than the wall time) and the peaks:

- ``rss_summed``: the RSS of every process of the tree, summed; pages a forked worker shares with its parent
  are counted once per process, so this is an upper bound;
- ``pss_summed`` (only with ``pss=True``): the PSS summed, each shared page split among the processes that
  share it, which is the memory the run takes; reading it (``/proc/PID/smaps_rollup``) costs more than the
  RSS, so it is asked for only where it is reported;
- ``rss_main``: the RSS of the command's own process.

Needs psutil (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

POLL_SECONDS = 0.05


@dataclass
class Measured:
    seconds: float
    cpu_seconds: float
    rss_summed: int
    pss_summed: int | None  # None: not sampled
    rss_main: int


def run_measured(command: list[str], log: Path, environment: dict | None = None, *, pss: bool = False,
                 cwd: Path | None = None) -> Measured:
    """Run ``command`` (stdout and stderr into ``log``) and measure it (see the module docstring). Exits with the
    log's tail when the command fails."""
    import psutil

    peaks = {"rss": 0, "pss": 0, "main": 0}
    done = threading.Event()

    def sample(process: psutil.Process) -> None:
        while not done.is_set():
            rss = shared = 0
            try:
                members = [process, *process.children(recursive=True)]
            except psutil.NoSuchProcess:
                members = []
            for member in members:
                try:
                    memory = member.memory_full_info() if pss else member.memory_info()
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                rss += memory.rss
                shared += memory.pss if pss else 0
                if member is process:
                    peaks["main"] = max(peaks["main"], memory.rss)
            peaks["rss"], peaks["pss"] = max(peaks["rss"], rss), max(peaks["pss"], shared)
            done.wait(POLL_SECONDS)

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, "wb") as out:
        started = time.perf_counter()
        process = psutil.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=environment, cwd=cwd)
        sampler = threading.Thread(target=sample, args=(process,), daemon=True)
        sampler.start()
        code = process.wait()
        seconds = time.perf_counter() - started
        done.set()
        sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the tree's, as each process was waited for
    if code != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-5:]
        sys.exit(f"Error: {' '.join(command)} exited with {code}; the end of {log}:\n" + "\n".join(tail))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(seconds, cpu, peaks["rss"], peaks["pss"] if pss else None, peaks["main"])
