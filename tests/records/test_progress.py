"""Progress off a terminal is plain lines, one per interval of a long stage and one at its end; on a
terminal it is a tqdm bar; with enabled=False nothing."""

from __future__ import annotations

import io

import pytest
from tqdm.std import tqdm

from praib.records import progress
from praib.records.progress import PlainProgress, progress_bar


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    return clock


def test_a_long_stage_prints_a_line_per_interval_and_one_at_its_end(clock):
    out = io.StringIO()
    counted = []
    for item in PlainProgress(range(10), desc="text metrics", stream=out, interval=30):
        clock.now += 8  # 8 s per item: past 30 s after the 4th item, past 60 s after the 8th
        counted.append(item)
    assert counted == list(range(10))
    assert out.getvalue().splitlines() == ["text metrics: 4/10 (40%) after 0:32",
                                           "text metrics: 8/10 (80%) after 1:04",
                                           "text metrics: 10/10 in 1:20"]


def test_a_stage_without_a_total_counts_and_an_hour_long_one_shows_hours(clock):
    out = io.StringIO()
    bar = PlainProgress(desc="reviews", stream=out, interval=1800)
    clock.now += 3725
    bar.update(4096)
    bar.close()
    bar.close()
    assert out.getvalue().splitlines() == ["reviews: 4096 after 1:02:05", "reviews: 4096 in 1:02:05"]


def test_a_short_stage_and_a_hidden_one_print_nothing(clock):
    out = io.StringIO()
    short = PlainProgress(range(3), desc="bootstrap", stream=out, interval=30)
    assert list(short) == [0, 1, 2]
    hidden = PlainProgress(desc="bootstrap", stream=None, interval=0)
    clock.now += 100
    hidden.update(5)
    hidden.close()
    assert out.getvalue() == "" and hidden.n == 5


@pytest.mark.parametrize("value, interval", [("0", 0.0), ("2.5", 2.5), ("", 30.0), ("soon", 30.0), ("-4", 0.0)])
def test_the_interval_comes_from_the_environment(monkeypatch, value, interval):
    monkeypatch.setenv("PRAIB_PROGRESS_INTERVAL", value)
    assert PlainProgress(desc="x", stream=io.StringIO()).interval == interval


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_a_tqdm_bar_anything_else_plain_lines_and_disabled_nothing(monkeypatch):
    monkeypatch.setattr("sys.stderr", Terminal())
    bar = progress_bar(range(2), desc="pdf", unit="paper")
    assert isinstance(bar, tqdm) and list(bar) == [0, 1]
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert isinstance(progress_bar(range(2), desc="pdf"), PlainProgress)
    monkeypatch.setattr("sys.stderr", Terminal())
    hidden = progress_bar(range(2), desc="pdf", enabled=False)
    assert isinstance(hidden, PlainProgress) and hidden.stream is None
