"""The comparisons of a ``praib leaderboard run`` folder as tables for a paper: every pair of submissions per metric
(venues pooled) with the difference of their distances to human, its interval, adjusted p-value and verdict, and each
submission's rank interval per metric.

The folder's ``comparisons.parquet`` and ``ranks.parquet`` are read as :func:`praib.tables.load_result` reads a run
folder (``comparisons`` and ``ranks`` beside ``rows``); a folder written before comparisons has neither, and the
tables then say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from praib.metrics.registry import label_of
from praib.tables.layout import MISSING, Cell, Table, joined, label
from praib.tables.praib_leaderboard_tables import ALL_VENUES
from praib.tables.registry import Numbers, Result, TableSpec, table

PAPER = "praib leaderboard"
#: The verdicts of praib.leaderboard.compare (kept here so that praib tables does not import the scoring code).
A_CLOSER, B_CLOSER = "A closer", "B closer"
NO_COMPARISONS = ("every cell: a run folder with comparisons.parquet and ranks.parquet (`praib leaderboard run` "
                  "writes them since comparisons were added: run it again)")
POOLED_NOTE = ("Venues pooled (the run's `all` slice); `praib leaderboard compare RESULTS_DIR --venue VENUE` and "
               "comparisons.parquet / ranks.parquet hold each venue.")


@dataclass(frozen=True)
class RankCell(Cell):
    """A rank with the interval of its draws, ``2 [1–3]``; bold at rank 1 (closest to human)."""

    def text(self) -> str:
        rank, low, high = self.value
        if rank.missing:
            return MISSING
        return rank.text() + ("" if low.missing else f" [{low.text()}–{high.text()}]")

    def marked(self, strong: Callable[[str], str], escape: Callable[[str], str] = str) -> str:
        text = escape(self.text())
        return strong(text) if self.bold else text


def _pooled(result: Result, name: str, out: Table) -> list[tuple[int, dict]]:
    """The rows of the pooled slice in the folder's ``name`` file, with their positions; none, and what the
    table needs said in ``out``, where the folder has no such file."""
    rows = result.data.get(name)
    if rows is None:
        out.needs.append(NO_COMPARISONS)
        return []
    return [(i, row) for i, row in enumerate(rows) if row["venue"] == ALL_VENUES]


@table("leaderboard-comparisons", PAPER, 1, "Paired comparisons of the submissions' distances to human",
       "leaderboard")
def comparisons_table(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    numbers = Numbers(result)
    out = spec.new(sources=[result.path], header=["Metric", "A", "B", "Papers", "A − B", "95% CI", "p (BH)",
                                                  "Verdict", "Min. detectable", "Papers needed"])
    for i, row in _pooled(result, "comparisons", out):
        metric = row["metric"]
        closer = {A_CLOSER: row["submission_a"], B_CLOSER: row["submission_b"]}.get(row["verdict"])
        verdict = Cell(row["verdict"], f"{result.path}#/comparisons/{i}/verdict", bold=closer is not None)
        out.rows.append([
            label(label_of(metric)), label(row["submission_a"]), label(row["submission_b"]),
            numbers.cell("comparisons", i, "n_papers"),
            numbers.cell("comparisons", i, "difference", difference_of=metric),
            joined(numbers.cell("comparisons", i, "ci_low", difference_of=metric),
                   numbers.cell("comparisons", i, "ci_high", difference_of=metric), separator=", "),
            numbers.cell("comparisons", i, "p_adjusted", digits=3), verdict,  # praib leaderboard Table 1: p-values
            numbers.cell("comparisons", i, "min_detectable_difference", difference_of=metric),
            numbers.cell("comparisons", i, "papers_needed")])
    fdr = (result.data["run"] or {}).get("fdr", 0.05)
    out.notes = [
        "A − B: A's distance to human minus B's (the leaderboard's distance of each metric), on the papers both "
        "reviewed; negative: A is closer. 95% CI: paired cluster bootstrap over those papers (each draw resamples "
        "papers with all their reviews, human and of both submissions), its draws re-centred on the observed "
        "difference. p (BH): the bootstrap p-value, Benjamini-Hochberg adjusted over every pair, metric and venue "
        f"of the run; the verdict (bold where a difference is detected) at a false discovery rate of {fdr:g}.",
        "Min. detectable: the difference a two-sided test at 0.05 detects with 80% power on these papers, "
        "(z_0.975 + z_0.8) × the bootstrap standard error; papers needed: the shared papers that would detect the "
        "observed difference with 80% power, the standard error scaled as 1/√n (an approximation).",
        POOLED_NOTE]
    if result.data.get("comparisons") == []:
        out.needs.append("every cell: two or more submissions with reviews of the same papers")
    return out


@table("leaderboard-ranks", PAPER, 2, "Rank of each submission by distance to human, with its 95% interval",
       "leaderboard")
def ranks_table(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    numbers = Numbers(result)
    out = spec.new(sources=[result.path], header=["Submission"])
    found = _pooled(result, "ranks", out)
    metrics = list(dict.fromkeys(row["metric"] for _, row in found))
    names = list(dict.fromkeys(row["submission"] for _, row in found))
    out.header += [label_of(metric) for metric in metrics]
    index = {(row["submission"], row["metric"]): i for i, row in found}
    for name in sorted(names):
        cells = [label(name)]
        for metric in metrics:
            i = index.get((name, metric))
            if i is None:
                cells.append(Cell(None))
                continue
            rank = numbers.cell("ranks", i, "rank")
            cells.append(RankCell((rank, numbers.cell("ranks", i, "rank_low"), numbers.cell("ranks", i, "rank_high")),
                                  bold=rank.value == 1))
        out.rows.append(cells)
    out.notes = ["Rank 1 (bold): closest to human by the point values, as the leaderboard's ★; in brackets, the range "
                 "of 95% of the submission's ranks over the bootstrap draws (ties share the better rank).",
                 POOLED_NOTE]
    return out
