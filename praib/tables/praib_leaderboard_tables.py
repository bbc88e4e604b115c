"""PRAIB's tables from ``praib leaderboard`` results: Tables 4-6 (human reviews per year and before and after
the LLM era) from ``praib leaderboard eras``, and Table 1 (the benchmark) from a ``praib leaderboard run`` folder.

The eras result holds, per venue, the per-year summaries (``years``), the per-era summaries (``eras``) and one
Mann-Whitney U test per metric (``tests``); the run folder holds one row per submission, metric and venue,
with ``closest_to_human`` marking the submission nearest the human value (printed bold, as the paper does).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from praib.metrics.registry import BY_NAME
from praib.metrics.text.xref import PAPER_XREF_TYPES, XREF_TYPES
from praib.tables.layout import MISSING, Cell, Table, joined, label
from praib.tables.praib_tables import PAPER, TABLE_1_GROUPS, TABLE_1_NOTE, table_1_header
from praib.tables.registry import Numbers, Result, TableSpec, table

#: The significance level of the eras' tests (``praib.leaderboard.eras.SIGNIFICANCE``), as Table 6's header says.
SIGNIFICANCE = 0.05
#: A run's names for its pooled slice and its human reference (``praib.leaderboard.run.ALL_VENUES``,
#: ``praib.records.HUMAN_SOURCE``), kept here so that ``praib tables`` does not import the scoring code.
ALL_VENUES = "all"
HUMAN = "human"


@dataclass(frozen=True)
class PlusMinus(Cell):
    """A mean and its SD in one cell, ``538.28 ± 333.23``, as PRAIB Table 5 prints them (the mean may be bold);
    "—" alone where the era has no mean."""

    def text(self) -> str:
        return MISSING if self.value[0].missing else " ± ".join(part.text() for part in self.value)

    def marked(self, strong: Callable[[str], str], escape: Callable[[str], str] = str) -> str:
        if self.value[0].missing:
            return escape(MISSING)
        return escape(" ± ").join(part.marked(strong, escape) for part in self.value)


@dataclass(frozen=True)
class PValue(Cell):
    """A p-value as PRAIB Table 6 prints it: three decimals, ``< 0.001`` below that."""

    def text(self) -> str:
        if self.value is not None and self.value < 0.001:
            return "< 0.001"
        return super().text()


@dataclass(frozen=True)
class Verdict(Cell):
    """A test's ``significant`` flag as Table 6 prints it: "Yes" (bold) or "No"."""

    def text(self) -> str:
        return MISSING if self.value is None else "Yes" if self.value else "No"


class Eras:
    """The venues of one ``praib leaderboard eras`` result, with the JSON path of each number."""

    def __init__(self, result: Result):
        self.result = result
        self.numbers = Numbers(result)
        self.venues: dict[str, dict] = result.data["venues"]

    def cell(self, venue: str, *path: Any, digits: int = 2) -> Cell:
        return self.numbers.cell("venues", venue, *path, digits=digits)  # PRAIB Tables 4-6: two decimals by default

    def source(self, venue: str, *path: Any) -> str:
        return self.cell(venue, *path).source

    def boundaries(self, venue: str) -> tuple[str, str]:
        """The era headers of a venue, e.g. ``Pre-LLM (< 2024)``, ``Post-LLM (≥ 2024)``."""
        split = self.venues[venue]["split_year"]
        return f"Pre-LLM (< {split})", f"Post-LLM (≥ {split})"

    def notes(self) -> list[str]:
        boundaries = ", ".join(f"{venue} from {detail['split_year']}" for venue, detail in self.venues.items())
        notes = [f"Human reviews; post-LLM: {boundaries or 'no venue'} (the first review cycle after ChatGPT's "
                 "release, or `--split-year`)."]
        if self.result.data.get("n_skipped"):
            notes.append(f"{self.result.data['n_skipped']} review(s) without venue or year were left out.")
        return notes


def _year_label(year: str) -> str:
    return year.replace("<=", "≤")


#: The rows of Tables 4-6 in the paper's order, labelled as the era tables label them
#: (:attr:`praib.metrics.registry.Metric.era_label`) but where the paper prints another name.
TABLE_4_ROWS = ("tkc", "ttr", "fre", "fkg", "xref")
TABLE_5_ROWS = ("tkc", "ttr", "fkg", "fre", "xref")
TABLE_6_ROWS = ("tkc", "fre", "fkg", "xref")
PAPER_LABELS = {5: {"fkg": "F-KG"}, 6: {"fkg": "F-K"}}


def _rows(number: int, metrics: Sequence[str]) -> list[tuple[str, str]]:
    """(metric, row label) of PRAIB Table ``number``."""
    return [(metric, PAPER_LABELS.get(number, {}).get(metric, BY_NAME[metric].era_label)) for metric in metrics]


@table("praib-4", PAPER, 4, "Readability metrics for each year for both conferences", "eras")
def table_4(spec: TableSpec, results: Sequence[Result]) -> Table:
    eras = Eras(results[0])
    columns = [(venue, year) for venue, detail in eras.venues.items() for year in detail["years"]]
    out = spec.new(sources=[eras.result.path],
                   header_groups=[("", 1), *((venue, len(detail["years"])) for venue, detail in eras.venues.items())],
                   header=["Metric", *(_year_label(year) for _, year in columns)])
    for metric, name in _rows(4, TABLE_4_ROWS):
        out.rows.append([label(name), *(eras.cell(venue, "years", year, metric, "mean") for venue, year in columns)])
    out.notes = eras.notes() + ["Each cell: the mean per review of the venue's reviews of that year; editions "
                                "that share a rating scale form one column (ICLR ≤2018, as in the paper).",
                                _paper_xref_note(eras, columns)]
    if not columns:
        out.needs.append("every cell: human reviews with venue and year")
    return out


def _paper_xref_note(eras: Eras, columns: list[tuple[str, str]]) -> str:
    """How Xref. differs from PRAIB's own categories (Appendix C.1), and Xref. per column in both where the result
    holds the count in PRAIB's categories (``xref`` -> ``paper``, :class:`praib.metrics.summary.XrefSummary`)."""
    praib_only = ", ".join(f"{t}s" for t in XREF_TYPES if t not in PAPER_XREF_TYPES)
    paper_only = " and ".join(f"{t}s" for t in PAPER_XREF_TYPES if t not in XREF_TYPES)
    note = (f"Xref. is praib's count, in which {praib_only}, § and appendices (as sections) count and {paper_only} "
            f"do not; PRAIB's own expression (Appendix C.1) counts {paper_only} and leaves out {praib_only}, § and "
            "appendices")
    if columns and all("paper" in eras.venues[venue]["years"][year]["xref"] for venue, year in columns):
        per_venue = [f"{venue} " + ", ".join(
            f"{_year_label(year)} {eras.cell(venue, 'years', year, 'xref', 'mean').text()} / "
            f"{eras.cell(venue, 'years', year, 'xref', 'paper', 'mean').text()}"
            for name, year in columns if name == venue) for venue in dict.fromkeys(venue for venue, _ in columns)]
        return note + f". Per review, praib's / PRAIB's categories: {'; '.join(per_venue)}."
    return note + (". Both counts per venue and year: `praib evaluate HUMAN_REVIEWS --group-by venue,year` (each "
                   "group's `xref` and `xref.paper`).")


def _greater(first: Cell, second: Cell) -> tuple[Cell, Cell]:
    """The two cells with the greater value bold (neither when equal or one is missing)."""
    if first.missing or second.missing or first.value == second.value:
        return first, second
    return replace(first, bold=first.value > second.value), replace(second, bold=second.value > first.value)


@table("praib-5", PAPER, 5, "Mean metrics before and after the LLM era across ICLR and NeurIPS conferences", "eras")
def table_5(spec: TableSpec, results: Sequence[Result]) -> Table:
    eras = Eras(results[0])
    venues = list(eras.venues)
    out = spec.new(sources=[eras.result.path], header_groups=[("", 1), *((venue, 2) for venue in venues)],
                   header=["Metric", *(name for venue in venues for name in eras.boundaries(venue))])
    for metric, name in _rows(5, TABLE_5_ROWS):
        row = [label(name)]
        for venue in venues:
            pre, post = _greater(eras.cell(venue, "eras", "pre", metric, "mean"),
                                 eras.cell(venue, "eras", "post", metric, "mean"))
            row += [PlusMinus((pre, eras.cell(venue, "eras", "pre", metric, "std"))),
                    PlusMinus((post, eras.cell(venue, "eras", "post", metric, "std")))]
        out.rows.append(row)
    out.notes = eras.notes() + [
        "Each cell: mean ± SD (sample SD, ddof=1) per review over the era's reviews. Bold: the greater mean of a "
        "conference and metric (compared unrounded; neither when they are equal)."]
    out.needs += _empty_eras(eras)
    return out


def _empty_eras(eras: Eras) -> list[str]:
    needs = []
    for venue, detail in eras.venues.items():
        for era, side in (("pre", "before"), ("post", "from")):
            if not detail["eras"][era]["n_reviews"]:
                needs.append(f"{venue}'s {era}-LLM column: human reviews of {venue} {side} {detail['split_year']}")
    return needs


@table("praib-6", PAPER, 6, "Statistical comparison of review metrics (pre- vs. post-LLM era)", "eras")
def table_6(spec: TableSpec, results: Sequence[Result]) -> Table:
    eras = Eras(results[0])
    out = spec.new(sources=[eras.result.path],
                   header=["Conference", "Metric", "Pre-Mean", "Post-Mean", "p-value", f"Significant ({SIGNIFICANCE})"])
    for venue in eras.venues:
        for position, (metric, name) in enumerate(_rows(6, TABLE_6_ROWS)):
            test = eras.venues[venue]["tests"][metric]
            p = eras.cell(venue, "tests", metric, "p", digits=3)  # PRAIB Table 6: p-values
            significant = test["significant"]
            out.rows.append([
                label(venue if position == 0 else ""), label(name),
                eras.cell(venue, "eras", "pre", metric, "mean"), eras.cell(venue, "eras", "post", metric, "mean"),
                PValue(p.value, p.source, digits=3),  # PRAIB Table 6
                Verdict(significant, eras.source(venue, "tests", metric, "significant"), bold=bool(significant)),
            ])
    out.notes = eras.notes() + [
        "Two-sided Mann-Whitney U test of the post- against the pre-LLM per-review values (scipy); significant: "
        f"p < {SIGNIFICANCE}. The result also holds each test's U, its rank-biserial effect size and the reviews "
        "per era (`tests` of each venue)."]
    out.needs += _empty_eras(eras)
    undefined = [f"{venue} {name}" for venue, detail in eras.venues.items() for metric, name in _rows(6, TABLE_6_ROWS)
                 if detail["tests"][metric]["p"] is None and all(era["n_reviews"] for era in detail["eras"].values())]
    if undefined:
        out.needs.append(f"p-value of {', '.join(undefined)}: the test is undefined (a side without a value, or "
                         "every value equal)")
    if not eras.venues:
        out.needs.append("every cell: human reviews with venue and year")
    return out


class Run:
    """The rows of one ``praib leaderboard run`` folder, found by submission, metric and venue."""

    def __init__(self, result: Result):
        self.result = result
        self.numbers = Numbers(result)
        self.index = {(row["submission"], row["metric"], row["venue"]): i
                      for i, row in enumerate(result.data["rows"])}
        self.submissions = list(dict.fromkeys(row["submission"] for row in result.data["rows"]
                                              if row["submission"] != HUMAN))
        self.models = {row["submission"]: row["model"] for row in result.data["rows"]}

    def row(self, submission: str, metric: str, venue: str = ALL_VENUES) -> dict | None:
        index = self.index.get((submission, metric, venue))
        return None if index is None else self.result.data["rows"][index]

    def cell(self, submission: str, metric: str, venue: str = ALL_VENUES, field: str = "value") -> Cell:
        """The metric's value (or ``field``) with the paper's digits, bold where it is closest to human;
        "—" where the run has no such row."""
        index = self.index.get((submission, metric, venue))
        if index is None:
            return Cell(None)
        cell = self.numbers.cell("rows", index, field, metric=metric)
        return replace(cell, bold=field == "value" and bool(self.result.data["rows"][index]["closest_to_human"]))

    def human_math(self) -> Cell:
        """The human share of reviews engaging with the maths: the run keeps it beside each submission's value."""
        return next((self.cell(submission, "math_engagement", field="human_value") for submission in self.submissions
                     if self.row(submission, "math_engagement")), Cell(None))

    def venues(self) -> list[str]:
        return sorted({venue for (_, metric, venue) in self.index if metric == "krippendorff_alpha"} - {ALL_VENUES})

    def name(self, submission: str) -> str:
        """The submission's model, with the submission's name where two submissions share a model."""
        model = self.models[submission]
        shared = sum(self.models[other] == model for other in self.submissions) > 1
        return f"{model} ({submission})" if shared else model


@table("praib-1-leaderboard", PAPER, 1, "Benchmark results of a leaderboard run (human baseline and each "
       "submission)", "leaderboard")
def table_1_leaderboard(spec: TableSpec, results: Sequence[Result]) -> Table:
    run = Run(results[0])
    venues = run.venues()
    out = spec.new(sources=[run.result.path], header_groups=TABLE_1_GROUPS, header=table_1_header(venues))
    for submission in [HUMAN, *run.submissions]:
        is_human = submission == HUMAN
        out.rows.append([
            label("Human" if is_human else run.name(submission)),
            *(run.cell(submission, metric) for metric in ("tkc", "ttr", "fre", "fkg")),
            joined(Cell(None), run.cell(submission, "citations")), run.cell(submission, "xref"),
            run.human_math() if is_human else run.cell(submission, "math_engagement"),
            joined(*(run.cell(submission, "krippendorff_alpha", venue) for venue in venues)),
            *((label(MISSING), label(MISSING)) if is_human else
              (run.cell(submission, "math_p_pos_given_pos"), run.cell(submission, "math_p_pos_given_neg"))),
        ])
    out.notes = [
        "Rows: the human reference and each submission as submitted (the paper's Table 1 is the extended prompt). "
        "Values pooled over venues (the run's `all` slice); the run's 95% bootstrap intervals are not printed "
        "(`praib leaderboard report` shows them).",
        f"{TABLE_1_NOTE} P(+|+), P(+|−): over all venues together (the run computes them on the pooled slice only; "
        "the paper splits them by venue).",
        "Bold: the submission closest to the human value for that metric and venue (`closest_to_human`; α_r: the "
        "least change of the panels' alpha); P(+|+) and P(+|−) have no human value, so none is bold."]
    out.needs.append("Cit.'s verified count: `praib leaderboard run` does not verify citations "
                     "(`praib evaluate --verify-citations` does, for praib-1)")
    if run.result.data["run"].get("judge") is None:
        out.needs.append("Math, P(+|+), P(+|−): add `--judge MODEL` to `praib leaderboard run`")
    elif any(row[out.header.index(name)].missing for row in out.rows for name in ("Math", "P(+|+)", "P(+|−)")):
        out.needs.append("a judged cell: the judge gave no usable answer, or no paper qualifies (P(+|+) needs "
                         "papers whose human reviews engage with the maths, P(+|−) papers whose reviews do not)")
    return out
