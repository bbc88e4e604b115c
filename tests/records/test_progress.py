"""Progress off a terminal is plain lines, one per interval of a long stage and one at its end; on a
terminal it is a tqdm bar; with enabled=False nothing. Both have one interface, and every caller keeps to it."""

from __future__ import annotations

import ast
import inspect
import io
from typing import Iterator

import pytest
from tqdm.std import tqdm

from praib.records import progress
from praib.records.progress import PlainProgress, Progress, progress_bar
from tests.paths import ROOT


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


def test_a_postfix_ends_each_line_after_it_is_set(clock):
    out = io.StringIO()
    bar = PlainProgress(desc="m / guidelines", total=4, stream=out, interval=0)
    bar.update(2)
    bar.set_postfix(cached=2, refresh=False)
    bar.update(2)
    bar.set_postfix({"cached": 3}, failed=" 1 ")
    bar.close()
    assert out.getvalue().splitlines() == ["m / guidelines: 2/4 (50%) after 0:00",
                                           "m / guidelines: 4/4 (100%) after 0:00, cached=2",
                                           "m / guidelines: 4/4 in 0:00, cached=3, failed=1"]


# --- One interface: what praib calls on a progress counter, whichever kind progress_bar made ---

INTERFACE = [name for name in vars(Progress) if not name.startswith("_") or name == "__iter__"]


def test_the_interface_is_tqdms_and_plain_progress_has_exactly_it():
    assert sorted(INTERFACE) == ["__iter__", "close", "set_postfix", "update"]
    assert isinstance(PlainProgress(desc="x"), Progress) and isinstance(tqdm(disable=True), Progress)
    for name in INTERFACE:
        wanted = inspect.signature(getattr(Progress, name)).parameters
        for kind in (tqdm, PlainProgress):
            given = inspect.signature(getattr(kind, name)).parameters
            # The same parameters, in the same order, of the same kind and with the same defaults.
            assert [(p.name, p.kind, p.default) for p in given.values()] == \
                   [(p.name, p.kind, p.default) for p in wanted.values()], (kind.__name__, name)
    assert "n" in Progress.__annotations__ and PlainProgress(desc="x").n == 0 == tqdm(disable=True).n


def _progress_uses(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, attribute) of every attribute read on a progress counter in ``tree``: a name bound to what
    progress_bar (or a wrapper of it named _progress) returns, in the function that binds it, or a
    parameter named ``bar``, the name praib passes a counter on under."""
    makers = {"progress_bar", "_progress"}
    for function in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        counters = {a.arg for a in function.args.args + function.args.kwonlyargs if a.arg == "bar"}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    getattr(node.value.func, "id", getattr(node.value.func, "attr", None)) in makers:
                counters.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in ast.walk(function):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in counters:
                yield node.lineno, node.attr


def test_every_caller_uses_only_the_interface():
    uses = {}
    for folder in ("praib", "generation", "perturb"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line, attribute in _progress_uses(ast.parse(path.read_text(encoding="utf-8"))):
                uses[f"{path.relative_to(ROOT)}:{line}"] = attribute
    assert {"update", "close", "n", "set_postfix"} <= set(uses.values())  # the scan sees the callers
    assert {where: name for where, name in uses.items() if name not in {*INTERFACE, "n"}} == {}
