"""The progress of a long stage, shown as its output allows.

Every long stage of praib (scoring texts, a bootstrap, the requests to a model, pages of OpenReview)
counts its progress through :func:`progress_bar`:

- on a terminal (or in a notebook), a tqdm bar, one per stage: stages run one after another, never nested;
- anywhere else (a log file, a pipe, CI), plain lines that a log keeps readable: one every
  ``$PRAIB_PROGRESS_INTERVAL`` seconds (default 30) while the stage runs, and one when such a stage
  ends; a stage shorter than that prints nothing. No carriage return, no cursor movement;
- with ``enabled=False`` (``--no-progress``), nothing.

Both kinds have one interface, :class:`Progress`: the part of tqdm's that praib calls, and all a caller may
use (tests/records/test_progress.py checks both kinds against it, and every caller's uses).
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import IO, Any, Iterable, Iterator, Protocol, runtime_checkable

INTERVAL_VARIABLE = "PRAIB_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 30.0


@runtime_checkable
class Progress(Protocol):
    """A progress counter as praib's stages use one: tqdm's methods of these names, with tqdm's meaning."""

    #: How many items are counted so far.
    n: int

    def __iter__(self) -> Iterator:
        """The items of the iterable it was made with, each counted once it is done."""

    def update(self, n: int = 1) -> None:
        """Count ``n`` more items."""

    def set_postfix(self, ordered_dict: dict | None = None, refresh: bool = True, **kwargs: Any) -> None:
        """Show ``key=value`` pairs after the count from now on (e.g. ``cached=12``)."""

    def close(self) -> None:
        """End the stage; a second call does nothing."""


def shows_bars(stream: IO[str] | None = None) -> bool:
    """Whether progress on ``stream`` (default: standard error) is drawn as bars: a terminal, or a notebook."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) or "ipykernel" in sys.modules


def progress_bar(iterable: Iterable | None = None, *, desc: str, total: int | None = None, unit: str = "it",
                 enabled: bool = True) -> Progress:
    """A progress counter for one stage, on standard error: a tqdm bar on a terminal, else a
    :class:`PlainProgress`; use only what :class:`Progress` has."""
    if enabled and shows_bars():
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=desc, total=total, unit=unit, file=sys.stderr, dynamic_ncols=True)
    return PlainProgress(iterable, desc=desc, total=total, stream=sys.stderr if enabled else None)


def _interval() -> float:
    value = os.environ.get(INTERVAL_VARIABLE, "")
    try:
        return max(0.0, float(value)) if value.strip() else DEFAULT_INTERVAL
    except ValueError:
        return DEFAULT_INTERVAL


class PlainProgress:
    """Progress as plain lines on ``stream`` (none when it is None): ``desc: done/total (percent) after
    elapsed`` every ``interval`` seconds (default: ``$PRAIB_PROGRESS_INTERVAL``), and ``desc: done/total in
    elapsed`` when a stage that printed a line ends; each line ends with the postfix, if one is set
    (``, cached=12``)."""

    def __init__(self, iterable: Iterable | None = None, *, desc: str, total: int | None = None,
                 stream: IO[str] | None = None, interval: float | None = None) -> None:
        self.iterable = iterable
        self.desc = desc
        self.total = len(iterable) if total is None and hasattr(iterable, "__len__") else total
        self.stream = stream
        self.interval = (_interval() if interval is None else interval) if stream is not None else math.inf
        self.n = 0
        self._postfix = ""
        self._start = self._shown = time.monotonic()
        self._printed = self._closed = False

    def __iter__(self) -> Iterator:
        try:
            for item in self.iterable:
                yield item
                self.update()
        finally:
            self.close()

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self._shown >= self.interval:
            self._shown = now
            self._print(f"{self._count()}{self._share()} after {_clock(now - self._start)}")

    def set_postfix(self, ordered_dict: dict | None = None, refresh: bool = True, **kwargs: Any) -> None:
        # ``refresh`` redraws a bar at once; a plain line shows the postfix with the next count.
        pairs = {**(ordered_dict or {}), **kwargs}
        self._postfix = "".join(f", {key}={str(value).strip()}" for key, value in pairs.items())

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._printed:
            self._print(f"{self._count()} in {_clock(time.monotonic() - self._start)}")

    def _count(self) -> str:
        return f"{self.n}/{self.total}" if self.total is not None else str(self.n)

    def _share(self) -> str:
        return f" ({100 * self.n / self.total:.0f}%)" if self.total else ""

    def _print(self, text: str) -> None:
        self._printed = True
        print(f"{self.desc}: {text}{self._postfix}", file=self.stream, flush=True)


def _clock(seconds: float) -> str:
    """``seconds`` as h:mm:ss, or m:ss under an hour."""
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
