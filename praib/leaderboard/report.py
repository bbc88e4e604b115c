"""The leaderboard report: tables and plots of a results directory, as one HTML page and Markdown.

A results directory is what ``praib leaderboard run`` writes (``results.parquet``,
``details/``, ``manifests/``, ``eras.json``, ``run.json``). The page lays the numbers
out like the papers do: Table 1 of PRAIB (readability, specificity, agreement, math
engagement) with 95% CIs and each metric's distance to the human reference, the
coverage and target/aspect tables, robustness verdicts and treatment effects, the
longitudinal era comparison of the human reviews, and the judges behind the judged metrics
with their validation against human labels (or the mark that they have none). The HTML is
self-contained (inline CSS, plots as PNG data URIs) and every name that comes from a
submission is escaped.
"""

from __future__ import annotations

import base64
import logging
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from praib.evaluation.judge_validity import FAMILIES as JUDGED_FAMILIES, VALIDATED_TASKS, family_of
from praib.leaderboard.plots import IntervalPanel, era_trends_png, metric_intervals_png, score_distribution_png
from praib.metrics.registry import TABLE_1, difference_digits, digits_of, label_of, lookup
from praib.records import HUMAN_SOURCE, RecordError, iter_jsonl, read_json, read_parquet_rows
from praib.records.atomic import ownership, write_text_atomically
from praib.records.duplicates import find_repeats
from praib.templates import TemplateSet

logger = logging.getLogger(__name__)

POOLED = "all"

ROW_COLUMNS = ("submission", "model", "metric", "venue", "value", "ci_low", "ci_high", "n_papers", "n_reviews",
               "human_value", "distance_to_human", "closest_to_human")


class ReportError(ValueError):
    """A results directory that cannot be reported on, with the file and what is wrong."""


@dataclass
class LeaderboardResults:
    """Everything a results directory holds; absent parts are empty or None."""

    directory: Path
    rows: list[dict]
    details: dict[str, dict] = field(default_factory=dict)
    manifests: dict[str, dict] = field(default_factory=dict)
    eras: dict | None = None
    run: dict | None = None
    #: The rows of comparisons.parquet and ranks.parquet (:mod:`praib.leaderboard.compare`); None for a run
    #: written before comparisons.
    comparisons: list[dict] | None = None
    ranks: list[dict] | None = None

    @property
    def submissions(self) -> list[str]:
        """The human reference first, then the submissions in the order of the results rows."""
        names = list(dict.fromkeys(row["submission"] for row in self.rows))
        return sorted(names, key=lambda name: name != HUMAN_SOURCE)

    def metrics(self, venue: str | None = None) -> list[str]:
        return list(dict.fromkeys(r["metric"] for r in self.rows if venue is None or r["venue"] == venue))

    def venues(self) -> list[str]:
        return sorted({r["venue"] for r in self.rows}, key=lambda v: (v != POOLED, v))

    def row(self, submission: str, metric: str, venue: str) -> dict | None:
        return self._index.get((submission, metric, venue))

    def has(self, metric: str, venue: str) -> bool:
        return (metric, venue) in self._pairs

    def __post_init__(self) -> None:
        self._index = {(r["submission"], r["metric"], r["venue"]): r for r in self.rows}
        self._pairs = {(r["metric"], r["venue"]) for r in self.rows}


def _read_json(path: Path) -> dict:
    try:
        data = read_json(path, what="data")
    except RecordError as err:
        raise ReportError(str(err)) from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def _read_rows(directory: Path) -> list[dict]:
    parquet, jsonl = directory / "results.parquet", directory / "results.jsonl"
    try:
        if parquet.exists():
            rows = [(f"{parquet}: row {number}", row) for number, row in enumerate(read_parquet_rows(parquet), 1)]
        elif jsonl.exists():
            rows = list(iter_jsonl(jsonl))
        else:
            raise ReportError(f"{directory}: no results.parquet or results.jsonl (is it a `praib leaderboard run` "
                              "output directory?)")
    except RecordError as err:
        raise ReportError(str(err)) from None
    for where, row in rows:
        if not isinstance(row, dict):
            raise ReportError(f"{where}: expected a JSON object, found {type(row).__name__}")
        missing = [c for c in ("submission", "metric", "venue", "value") if c not in row]
        if missing:
            raise ReportError(f"{where}: missing column(s) {', '.join(missing)}")
        for column in ROW_COLUMNS:
            row.setdefault(column, None)
        for column in ("value", "ci_low", "ci_high", "human_value", "distance_to_human"):
            row[column] = _finite(row[column], where, column)
    return _without_repeated_rows([row for _, row in rows], parquet if parquet.exists() else jsonl)


def _without_repeated_rows(rows: list[dict], where: Path) -> list[dict]:
    """A results table has one row per submission, metric and venue: two rows of one key with different
    values are an error, an exact repeat is dropped with a warning (the policy of every reader)."""
    repeats = find_repeats(rows, lambda row: (row["submission"], row["metric"], row["venue"]))
    if repeats.conflicting:
        raise ReportError(f"{where}: {repeats.conflict('submission/metric/venue key')}")
    if not repeats.exact:
        return rows
    logger.warning("%s: %s", where, repeats.dropped("submission/metric/venue key"))
    return repeats.without_exact(rows)


def _finite(value, where: str, column: str) -> float | None:
    if value is None:
        return None
    try:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError
        value = float(value)
    except (TypeError, OverflowError):
        raise ReportError(f"{where}: field '{column}': expected a number, found {value!r:.60}") from None
    return value if math.isfinite(value) else None


def load_results(directory: str | Path) -> LeaderboardResults:
    """Read a results directory written by ``praib leaderboard run``."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ReportError(f"{directory}: not a directory")

    # A folder `leaderboard run` wrote may hold files of the user's too (docs/cli.md, "an output folder"): then
    # only those its record lists are read.
    held = ownership(directory)

    def by_stem(folder: str) -> dict[str, dict]:
        path = directory / folder
        paths = sorted(path.glob("*.json")) if path.is_dir() else []
        return {p.stem: _read_json(p) for p in paths if not held.recorded or f"{folder}/{p.name}" in held.praib}

    eras, run = directory / "eras.json", directory / "run.json"
    from praib.leaderboard.compare import read_comparison_rows

    compared = read_comparison_rows(directory)
    return LeaderboardResults(
        directory=directory,
        rows=_read_rows(directory),
        details=by_stem("details"),
        manifests=by_stem("manifests"),
        eras=_read_json(eras) if eras.exists() else None,
        run=_read_json(run) if run.exists() else None,
        comparisons=compared[0] if compared else None,
        ranks=compared[1] if compared else None,
    )


# ----------------------------------------------------------------------------- formatting


def format_number(value: float | None, digits: int) -> str:
    """Fixed decimals, an en dash for a missing value, and no "-0"."""
    if value is None or not math.isfinite(value):
        return "–"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def format_p(p: float | None) -> str:
    if p is None:
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


# ----------------------------------------------------------------------------- tables


@dataclass
class Cell:
    """One table cell: its text, an optional 95% CI below it, whether it is marked closest to human, and
    whether it warns."""

    text: str
    ci: str | None = None
    closest: bool = False
    warning: bool = False  # e.g. a judge not validated


@dataclass
class Table:
    """A titled table; columns from ``numeric_from`` on hold numbers and are right-aligned."""

    title: str
    header: list[str]
    rows: list[list[Cell]]
    notes: list[str] = field(default_factory=list)
    numeric_from: int = 1


@dataclass
class Plot:
    title: str
    png: bytes
    caption: str = ""

    @property
    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


@dataclass
class Section:
    """A part of the report; ``note`` alone (no tables, no plots) says why it has nothing to show."""

    anchor: str
    title: str
    intro: str = ""
    tables: list[Table] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    note: str = ""


def _value_cell(row: dict | None, digits: int) -> Cell:
    if row is None:
        return Cell("–")
    ci = None
    if row["ci_low"] is not None and row["ci_high"] is not None:
        ci = f"[{format_number(row['ci_low'], digits)}, {format_number(row['ci_high'], digits)}]"
    return Cell(format_number(row["value"], digits), ci, bool(row["closest_to_human"]))


def _distance_cell(row: dict | None, digits: int) -> Cell:
    if row is None or row["submission"] == HUMAN_SOURCE:
        return Cell("–")
    return Cell(format_number(row["distance_to_human"], digits), None, bool(row["closest_to_human"]))


def metric_table(results: LeaderboardResults, title: str, columns: list[tuple[str, str]],
                 notes: list[str] | None = None) -> Table:
    """Rows are submissions (human first); each (metric, venue) column pair holds the value with
    its 95% CI and its distance to the human value, the submission closest to human marked."""
    # A venue goes into the column name only where the table mixes venues.
    mixed = len({venue for _, venue in columns}) > 1
    header = ["Submission"]
    for metric, venue in columns:
        name = label_of(metric) + (f" {venue}" if mixed and venue != POOLED else "")
        header += [name, f"Δ {name}"]
    rows = []
    for submission in results.submissions:
        if not any(results.row(submission, m, v) for m, v in columns):
            continue
        cells = [Cell(submission + (" (reference)" if submission == HUMAN_SOURCE else ""))]
        for metric, venue in columns:
            row = results.row(submission, metric, venue)
            cells += [_value_cell(row, digits_of(metric)), _distance_cell(row, digits_of(metric))]
        rows.append(cells)
    return Table(title, header, rows, notes or [])


VALUE_NOTE = ("Each cell: the value with its 95% bootstrap CI (papers resampled; a percentile interval, which "
              "need not contain the value for a statistic biased on few reviews, such as a total variation); "
              "Δ: distance to the human "
              "value (for a metric that is itself a distance, the metric). ★ marks the submission closest to "
              "human for that metric and venue.")

class Family(NamedTuple):
    """Metrics with a section of their own: those of the registry's ``families``."""

    anchor: str
    title: str
    families: tuple[str, ...]
    empty: str  # the note when a run has none of them: what computing them needs


NEEDS_JUDGE = "they need a judge: praib leaderboard run --judge MODEL"
DISTRIBUTIONS = Family("distributions", "Rating and confidence distributions",
                       ("score", "score gap", "score distribution"),
                       "No rating or confidence metrics in this run.")
COVERAGE = Family("coverage", "Coverage of the human strengths and weaknesses", ("coverage",),
                  f"No coverage metrics in this run ({NEEDS_JUDGE}).")
TARGET_ASPECT = Family("target-aspect", "Target/aspect agreement", ("target/aspect",),
                       f"No target/aspect metrics in this run ({NEEDS_JUDGE}).")
ROBUSTNESS = Family("robustness", "Robustness to perturbations", ("robustness",),
                    "No robustness results: no submission included perturbed records.")
TREATMENT = Family("treatment", "Average treatment effects of research-logic edits", ("treatment",),
                   "No treatment effects: no submission included reviews of counterfactual papers "
                   f"({NEEDS_JUDGE}).")
FAMILIES = (DISTRIBUTIONS, COVERAGE, TARGET_ASPECT, ROBUSTNESS, TREATMENT)


def _family_metrics(results: LeaderboardResults, families: tuple[str, ...]) -> list[str]:
    return [m for m in results.metrics() if (metric := lookup(m)) is not None and metric.family in families]


def _venue_tables(results: LeaderboardResults, metrics: list[str], title: str) -> list[Table]:
    """One table per venue that has any of ``metrics``: pooled first, then each venue."""
    tables = []
    for venue in results.venues():
        columns = [(m, venue) for m in metrics if results.has(m, venue)]
        if columns:
            where = "all venues pooled" if venue == POOLED else venue
            tables.append(metric_table(results, f"{title}: {where}", columns))
    return tables


def _submissions_section(results: LeaderboardResults) -> Section:
    fields = ("model", "revision", "backend", "prompts", "sampling", "date", "knowledge_cutoff")
    rows = []
    for submission in results.submissions:
        manifest = results.manifests.get(submission, {})
        counts = [r for r in results.rows if r["submission"] == submission and r["venue"] == POOLED]
        n_reviews = max((r["n_reviews"] or 0 for r in counts), default=0)
        n_papers = max((r["n_papers"] or 0 for r in counts), default=0)
        rows.append([Cell(submission)] + [Cell(_plain(manifest.get(f))) for f in fields]
                    + [Cell(str(n_papers)), Cell(str(n_reviews))])
    header = ["Submission", "Model", "Revision", "Backend", "Prompts", "Sampling", "Date", "Knowledge cut-off",
              "Papers", "Reviews"]
    intro = ""
    if results.run:
        # The judge's validations have a table of their own (Judges).
        intro = "Run settings: " + "; ".join(f"{k} = {_plain(v)}" for k, v in results.run.items()
                                             if k != "judge_validation") + "."
    table = Table("Submissions and their manifests", header, rows, numeric_from=header.index("Papers"))
    return Section("submissions", "Submissions", intro, [table])


def _plain(value) -> str:
    """A manifest or settings value as one line of text."""
    if value is None:
        return "–"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_plain(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def review_spreads(results: LeaderboardResults) -> dict[tuple[str, str], tuple[float, float]]:
    """(mean, standard deviation) of the per-review values of each source and text metric, from the
    summaries of ``details/<submission>.json`` (the human reference from its reference group)."""
    spreads = {}
    for submission, details in results.details.items():
        for group in details.get("groups", []):
            source = HUMAN_SOURCE if group.get("is_reference") else submission
            for metric in TABLE_1:
                summary = group.get(metric)
                if isinstance(summary, dict) and summary.get("mean") is not None and summary.get("std") is not None:
                    spreads[(source, metric)] = (summary["mean"], summary["std"])
    return spreads


def _behaviour_section(results: LeaderboardResults) -> Section:
    section = Section("behaviour", "Behaviour (PRAIB Table 1)",
                      "Readability (TKC, TTR, FRE, FKG), specificity (citations and cross-references per review), "
                      "agreement of ratings with the human panel (Krippendorff's ordinal α; the human row is the "
                      "panel alone, the other rows the panel plus the submission) and math engagement (share of "
                      "reviews that engage with the maths; P(+|+) and P(+|−): that share on the papers whose human "
                      "reviews do and do not).")
    columns = []
    for metric in TABLE_1:
        if results.has(metric, POOLED):
            columns.append((metric, POOLED))
        else:  # computed per venue only, as PRAIB reports α for ICLR and NeurIPS separately
            columns += [(metric, v) for v in results.venues() if results.has(metric, v)]
    if not columns:
        section.note = "No behaviour metrics (readability, specificity, agreement) in this run."
        return section
    validity = _validity_note(results, [metric for metric, _ in columns])
    section.tables.append(metric_table(results, "Behaviour: all venues pooled", columns,
                                       [VALUE_NOTE, *([validity] if validity else [])]))
    present = [m for m in TABLE_1 if m in results.metrics()]
    section.tables += [t for t in _venue_tables(results, present, "Behaviour") if not t.title.endswith("pooled")]
    spreads = review_spreads(results)
    png = metric_intervals_png([
        IntervalPanel(label_of(metric), {s: r for s in results.submissions
                                         if (r := results.row(s, metric, POOLED)) and r["value"] is not None},
                      {source: spread for (source, of), spread in spreads.items() if of == metric})
        for metric, venue in columns if venue == POOLED])
    if png:
        section.plots.append(Plot("Metric values per source", png,
                                  "Each source's value with its 95% CI (thin bar) and the mean ± one standard "
                                  "deviation of its per-review values (wide pale bar, where the details hold it); "
                                  "the dashed line is the human value."))
    return section


JUDGES_INTRO = ("How far each judge behind the judged metrics agrees with human labels: its result of praib judge "
                "validate, found by judge model, revision and prompt templates (a changed template is a judge not "
                "yet validated). The numbers of a judge that is not validated have not been checked against "
                "people. The rejection rate needs no judge.")


def _judge_validations(results: LeaderboardResults) -> dict[str, dict | None] | None:
    """What run.json records of the run's judge validations (task -> entry or None); None without a judge."""
    run = results.run or {}
    return (run.get("judge_validation") or {}) if run.get("judge") else None


def _estimate_cell(metrics: dict, name: str) -> Cell:
    estimate = metrics.get(name) or {}
    ci = None
    if estimate.get("low") is not None and estimate.get("high") is not None:
        ci = f"[{format_number(estimate['low'], 3)}, {format_number(estimate['high'], 3)}]"
    return Cell(format_number(estimate.get("value"), 3), ci)


def _judge_row(model, revision, task: str, entry: dict | None, found_in: str, atomic_columns: bool) -> list[Cell]:
    used_by = ", ".join(family.name for family in JUDGED_FAMILIES if task in family.tasks)
    cells = [Cell(_plain(model)), Cell(_plain(revision)), Cell(str(task)), Cell(used_by or "–")]
    if entry is None:
        return cells + [Cell("judge not validated", warning=True), Cell(found_in),
                        *[Cell("–") for _ in range(5 if atomic_columns else 3)]]
    metrics = entry.get("metrics") or {}
    cells += [Cell(_plain(entry.get("gold"))), Cell(found_in), Cell(_count(entry.get("gold_size"))),
              _estimate_cell(metrics, "accuracy"), _estimate_cell(metrics, "cohen_kappa")]
    if atomic_columns:
        cells += [_estimate_cell(metrics, "recall"), _estimate_cell(metrics, "precision")]
    return cells


def _judges_section(results: LeaderboardResults) -> Section:
    """The run's judge on every validation task (validated, or marked as not), and the judge validations
    the submissions' manifests carry that the run did not use."""
    section = Section("judges", "Judges", JUDGES_INTRO)
    recorded = _judge_validations(results)
    listed = []  # (model, revision, task, entry, where found)
    if recorded is not None:
        judge = results.run["judge"]
        for task in VALIDATED_TASKS:
            entry = recorded.get(task)
            listed.append((judge.get("model"), judge.get("model_revision"), task, entry,
                           entry.get("found_in", "–") if entry else "–"))
    used = {_validation_key(entry) for *_, entry, _ in listed if entry}
    for submission, manifest in results.manifests.items():
        for entry in manifest.get("judge_validation") or []:
            if isinstance(entry, dict) and _validation_key(entry) not in used:
                listed.append((entry.get("judge_model"), entry.get("judge_revision"), entry.get("task"), entry,
                               f"manifest of {submission}"))
    if not listed:
        section.note = f"No judge in this run and no submission carries a judge validation ({NEEDS_JUDGE})."
        return section
    atomic = any(entry and entry.get("task") == "atomic" for *_, entry, _ in listed)
    header = ["Judge", "Revision", "Task", "Metrics", "Gold set", "Found in", "n", "Accuracy", "κ",
              *(["Atomic recall", "Atomic precision"] if atomic else [])]
    notes = ["Accuracy and Cohen's κ of the judge's labels against the gold labels, each with its 95% bootstrap "
             "interval over the items; κ 0 is chance agreement, and an interval that includes 0 cannot be told "
             "apart from chance. Found in: the validations store beside the run's call cache, or a submission's "
             "manifest."]
    if atomic:
        notes.append("Atomic recall and precision: of the gold atomic strengths and weaknesses, matched by the "
                     "coverage judge (accuracy and κ do not apply to an extraction).")
    section.tables.append(Table("Judges and their validation against human labels", header,
                                [_judge_row(*row, atomic_columns=atomic) for row in listed], notes,
                                numeric_from=header.index("n")))
    return section


def _validation_key(entry: dict) -> tuple:
    return tuple(entry.get(key) for key in ("judge_model", "judge_revision", "template_hash", "task", "gold", "date"))


def _validity_note(results: LeaderboardResults, metrics: list[str]) -> str | None:
    """The validity of the run's judge on the tasks ``metrics`` rest on, for the note under their table."""
    recorded = _judge_validations(results)
    families = list(dict.fromkeys(family for family in map(family_of, metrics) if family is not None
                                  and family.tasks))
    if recorded is None or not families:
        return None
    parts = [f"{task}: " + (f"validated, {recorded[task]['summary']}" if recorded.get(task) else "judge not validated")
             for family in families for task in family.tasks]
    return f"Judge {results.run['judge'].get('model')} ({'; '.join(parts)}; see Judges)."


def _family_section(results: LeaderboardResults, family: Family) -> Section:
    metrics = _family_metrics(results, family.families)
    section = Section(family.anchor, family.title)
    if not metrics:
        section.note = family.empty
        if family in (COVERAGE, TARGET_ASPECT) and (results.run or {}).get("judge"):
            section.note = (f"No {family.title[0].lower() + family.title[1:]} metrics: the judge gave no usable "
                            "answer (see invalid_judge_answers in details/<submission>.json).")
        return section
    section.tables = _venue_tables(results, metrics, family.title)
    section.tables[0].notes.append(VALUE_NOTE)
    validity = _validity_note(results, metrics)
    if validity:
        section.tables[0].notes.append(validity)
    return section


def _distribution_section(results: LeaderboardResults) -> Section:
    section = _family_section(results, DISTRIBUTIONS)
    for submission, details in results.details.items():
        if submission == HUMAN_SOURCE:
            continue
        for group in details.get("groups", []):
            if group.get("is_reference"):
                continue
            png = score_distribution_png(group)
            if png:
                section.plots.append(Plot(f"{submission}: rating and confidence distributions", png,
                                          "Share of reviews per scale value, per venue-year: the submission "
                                          f"({group.get('label', submission)}) against the human reviews."))
    if section.plots:
        section.note = ""
    elif not section.tables:
        section.note = DISTRIBUTIONS.empty + " No distribution details (details/<submission>.json) to plot."
    return section


def _verdicts(tree, path=()) -> list[tuple[tuple[str, ...], dict]]:
    """Every verdict dict (one with a "verdict" key) in a robustness result, with the keys leading to it."""
    if isinstance(tree, dict):
        if "verdict" in tree and isinstance(tree["verdict"], str):
            return [(path, tree)]
        return [found for key, value in tree.items() for found in _verdicts(value, path + (str(key),))]
    return []


# The symbols of praib.metrics.perturbation.robustness's printed table.
VERDICT_MARKS = {"increase": "↑", "decrease": "↓", "equivalent": "≈", "inconclusive": "?"}
# Keys of praib.metrics.perturbation.robustness.robustness_report that only nest its results, left out of row names.
_NESTING_KEYS = {"reviewers", "perturbations", "scores"}


def _verdict_table(submission: str, robustness: dict) -> Table | None:
    """Directional/invariance verdicts like Tables 2 and 4 of the aspect-guided perturbation study:
    rows are the perturbations, columns the scores."""
    found = [(path, v) for path, v in _verdicts(robustness) if path]
    if not found:
        return None
    scores = list(dict.fromkeys(path[-1] for path, _ in found))
    by_row: dict[str, dict[str, dict]] = {}
    for path, verdict in found:
        name = " / ".join(key for key in path[:-1] if key not in _NESTING_KEYS)
        by_row.setdefault(name or "all", {})[path[-1]] = verdict
    rows = []
    for name, cells in by_row.items():
        row = [Cell(name)]
        for score in scores:
            v = cells.get(score)
            if v is None:
                row.append(Cell("–"))
                continue
            p = {"increase": v.get("p_increase"), "decrease": v.get("p_decrease"),
                 "equivalent": v.get("p_equivalence")}.get(v["verdict"])
            detail = f"Δ {format_number(v.get('mean_difference'), 2)}"
            if p is not None:
                detail += f", p {format_p(p)}"
            row.append(Cell(f"{VERDICT_MARKS.get(v['verdict'], '')} {v['verdict']}", detail))
        rows.append(row)
    return Table(f"{submission}: directional and invariance tests", ["Perturbation"] + scores, rows,
                 ["↑/↓: significant increase/decrease (one-sided Wilcoxon signed-rank); ≈: no significant change "
                  "and equivalent within the margin (TOST); ?: inconclusive. Δ: mean change (perturbed − original), "
                  "p: the p-value behind the verdict."])


def _robustness_section(results: LeaderboardResults) -> Section:
    section = _family_section(results, ROBUSTNESS)
    for submission, details in results.details.items():
        table = _verdict_table(submission, details.get("robustness") or {})
        if table:
            section.tables.append(table)
    if section.tables:
        section.note = ""
    return section


def _effects_table(results: LeaderboardResults) -> Table | None:
    """Reviewers of every submission ranked by their ranking score z, as Table 4 of the
    counterfactual review-logic study, with each difference's ATEs and BH-corrected p-value
    (its Table 5) and review sensitivity (its Table 6) when computed."""
    entries = [(f"{submission} / {label}" if label != submission else submission, entry)
               for submission, details in results.details.items()
               for label, entry in ((details.get("treatment_effects") or {}).get("reviewers") or {}).items()]
    if not entries:
        return None
    differences = list(dict.fromkeys(name for _, entry in entries for name in entry.get("differences") or {}))
    entries.sort(key=lambda item: (item[1].get("ranking_score") is None, -(item[1].get("ranking_score") or 0.0)))
    header = ["Reviewer", "n critical", "n neutral", "z"]
    for name in differences:
        header += [f"ATE {name} critical", f"ATE {name} neutral", f"p {name} (BH)"]
    header += ["ROUGE-2", "Assertion Jaccard"]
    rows = []
    for label, entry in entries:
        cells = [Cell(label), Cell(_count(entry.get("n_critical"))), Cell(_count(entry.get("n_neutral"))),
                 Cell(format_number(entry.get("ranking_score"), 2))]
        for name in differences:
            effect = (entry.get("differences") or {}).get(name) or {}
            cells += [Cell(format_number(effect.get("ate_critical"), 3)),
                      Cell(format_number(effect.get("ate_neutral"), 3)),
                      Cell(format_p(effect.get("p_corrected")) + ("*" if effect.get("significant") else ""))]
        sensitivity = entry.get("sensitivity") or {}
        cells += [Cell(format_number((sensitivity.get(key) or {}).get("mean"), 3))
                  for key in ("rouge2", "assertion_jaccard")]
        rows.append(cells)
    return Table("Reviewers ranked by the effect of research-logic edits", header, rows,
                 ["z: the gap between the ATEs of soundness-critical and soundness-neutral edits in standard "
                  "deviations of the neutral effects, averaged over the differences; p: linear mixed model "
                  "(paper as random effect), Benjamini-Hochberg corrected across reviewers; * significant. "
                  "ROUGE-2 and assertion Jaccard: overlap of the reviews of original and neutral versions."])


def _treatment_section(results: LeaderboardResults) -> Section:
    section = _family_section(results, TREATMENT)
    table = _effects_table(results)
    if table:
        section.tables.insert(0, table)
        section.note = ""
    return section


def _other_section(results: LeaderboardResults) -> Section:
    known = set(TABLE_1) | {m for f in FAMILIES for m in _family_metrics(results, f.families)}
    metrics = [m for m in results.metrics() if m not in known]
    section = Section("other", "Other metrics")
    if not metrics:
        section.note = "No other metrics in this run."
        return section
    section.tables = _venue_tables(results, metrics, "Other metrics")
    return section


def _era_metrics(eras: dict) -> list[str]:
    return list(eras.get("metrics") or [])


def _eras_tables(name: str, venue: dict, metrics: list[str]) -> list[Table]:
    """Per-year means (PRAIB Table 4) and the pre/post-LLM comparison (Tables 5 and 6) of one venue."""
    years = list(venue.get("years") or {})
    by_year = [[Cell("Reviews"), *[Cell(_count(venue["years"][y].get("n_reviews"))) for y in years]]]
    for metric in metrics:
        by_year.append([Cell(label_of(metric)), *[
            Cell(format_number((venue["years"][y].get(metric) or {}).get("mean"), digits_of(metric)))
            for y in years]])
    boundary = venue.get("split_year")
    header = ["Metric", "Pre-LLM mean ± std", "n pre", "Post-LLM mean ± std", "n post", "U", "p",
              "Effect size r", "Direction", "Significant (0.05)"]
    comparison = []
    for metric in metrics:
        test = (venue.get("tests") or {}).get(metric) or {}
        eras = venue.get("eras") or {}
        cells = [Cell(label_of(metric))]
        for era in ("pre", "post"):
            summary = (eras.get(era) or {}).get(metric) or {}
            digits = digits_of(metric)
            text = format_number(summary.get("mean"), digits)
            if summary.get("std") is not None:
                text += f" ± {format_number(summary['std'], digits)}"
            cells += [Cell(text), Cell(_count(summary.get("n")))]
        significant = test.get("significant")
        cells += [Cell(format_number(test.get("u"), 1)), Cell(format_p(test.get("p"))),
                  Cell(format_number(test.get("effect_size"), 3)), Cell(test.get("direction") or "–"),
                  Cell("–" if significant is None else "yes" if significant else "no")]
        comparison.append(cells)
    era_years = {era: (venue.get("eras") or {}).get(era, {}).get("years") or [] for era in ("pre", "post")}
    per_year = Table(f"{name}: human review metrics per year (mean per review)", ["Metric", *years], by_year)
    if not (era_years["pre"] and era_years["post"]):
        missing = "pre-LLM" if not era_years["pre"] else "post-LLM"
        per_year.notes.append(f"No {missing} reviews of {name} (the post-LLM era starts in {boundary}): "
                              "no era comparison.")
        return [per_year]
    split = f"pre-LLM: {_plain(era_years['pre'])}; post-LLM (from {boundary}): {_plain(era_years['post'])}"
    return [per_year, Table(f"{name}: pre- vs post-LLM era (Mann-Whitney U)", header, comparison,
                            [f"Years {split}. Two-sided Mann-Whitney U of post- against pre-LLM per-review "
                             "values; effect size r: rank-biserial correlation, positive when post-LLM values "
                             "are larger."])]


def era_series(eras: dict) -> list[dict]:
    """The yearly means of each venue and metric, titled, for the trend plot."""
    series = []
    for name, venue in (eras.get("venues") or {}).items():
        for metric in _era_metrics(eras):
            # A year group such as "<=2018" is plotted at its last year.
            points = [(int(re.findall(r"\d{4}", year)[-1]), year, (entry.get(metric) or {}).get("mean"))
                      for year, entry in (venue.get("years") or {}).items()]
            points = [point for point in points if point[2] is not None]
            if len(points) < 2:
                continue
            p = ((venue.get("tests") or {}).get(metric) or {}).get("p")
            series.append({"venue": name, "metric": metric,
                           "title": f"{name}: {label_of(metric)}" + ("" if p is None else f" (MWU p {format_p(p)})"),
                           "years": [y for y, _, _ in points], "year_labels": [label for _, label, _ in points],
                           "means": [m for _, _, m in points], "first_post_year": venue.get("split_year"), "p": p})
    return series


def _eras_section(results: LeaderboardResults) -> Section:
    section = Section("eras", "Human reviews before and after LLMs",
                      "How the human reference changed across years, and a Mann-Whitney U test between the "
                      "pre-LLM and post-LLM eras (PRAIB Tables 4-6, Figure 2).")
    eras = results.eras or {}
    venues = eras.get("venues") or {}
    if not venues:
        section.note = "No era analysis: the human reference does not span both eras (no eras.json)."
        return section
    starts = ", ".join(f"{name} {venue.get('split_year')}" for name, venue in venues.items())
    section.intro += (f" The post-LLM era starts with the first review cycle after ChatGPT's release: {starts}.")
    for name, venue in venues.items():
        section.tables += _eras_tables(name, venue, _era_metrics(eras))
    png = era_trends_png(era_series(eras))
    if png:
        section.plots.append(Plot("Human review metrics per year", png,
                                  "Yearly means of the human reviews per venue; the shaded years are the "
                                  "post-LLM era; the title gives the Mann-Whitney p-value between eras."))
    return section


def _count(n) -> str:
    return "–" if n is None else str(int(n))


COMPARISONS_INTRO = ("Is one submission closer to the human reviewers than another, and would the answer survive "
                     "another sample of papers? Each pair is compared on the papers both reviewed: the difference "
                     "of their distances to human, with a paired cluster bootstrap (each draw resamples those "
                     "papers with all their reviews, human and of both submissions, and recomputes both distances). "
                     "Verdicts control the false discovery rate over every pair, metric and venue of the run "
                     "(Benjamini-Hochberg). Judged metrics have no bootstrap draws and are not compared; "
                     "`praib leaderboard compare` lists every comparison with the papers a study would need.")


def _comparisons_section(results: LeaderboardResults) -> Section:
    from praib.leaderboard.compare import comparison_of

    section = Section("comparisons", "Which submission is closer to human", COMPARISONS_INTRO)
    if results.comparisons is None:
        section.note = ("No comparisons: the run was written by a praib without them (no comparisons.parquet); "
                        "run `praib leaderboard run` again.")
        return section
    comparison = comparison_of(results)
    if not comparison.pairs:
        section.note = "No comparisons: the run has fewer than two submissions with reviews of the same papers."
        return section
    section.tables.append(_separable_table(comparison))
    section.tables += _rank_tables(results, comparison)
    section.tables += _pair_matrices(comparison)
    return section


def _separable_table(comparison) -> Table:
    """Per metric and venue: is the submission closest to human (★, rank 1) detectably closer than the next?"""
    rows = []
    for metric in comparison.metrics():
        for venue in comparison.venues():
            ranked = sorted((r for r in comparison.ranks if r.metric == metric and r.venue == venue
                             and r.rank is not None), key=lambda r: (r.rank, r.submission))
            if len(ranked) < 2:
                continue
            best, runner_up = ranked[0].submission, ranked[1].submission
            pair = comparison.between(best, runner_up, metric, venue)
            if pair is None:
                continue
            digits = difference_digits(metric)
            separable = pair.closer() == best
            tied = " (tied ★)" if ranked[1].rank == 1 else ""
            rows.append([Cell(label_of(metric)), Cell(venue), Cell(best, closest=True), Cell(runner_up + tied),
                         Cell(format_number(pair.difference, digits),
                              f"[{format_number(pair.ci_low, digits)}, {format_number(pair.ci_high, digits)}]"),
                         Cell(format_p(pair.p_adjusted)),
                         Cell("yes" if separable else "no: not separable", warning=not separable)])
    n_separable = sum(row[-1].text == "yes" for row in rows)
    return Table("Is the ★ separable from the runner-up?",
                 ["Metric", "Venue", "★ closest", "Runner-up", "Difference", "p (BH)", "Separable"], rows,
                 [f"Separable in {n_separable} of {len(rows)} metrics and venues. "
                  "Difference: the distance to human of the ★ minus that of the runner-up on the papers both "
                  "reviewed (negative: the ★ is closer), with its 95% paired-bootstrap interval; separable: the "
                  f"★ is detectably closer at a false discovery rate of {comparison.fdr:g}. Where it is not, "
                  "another sample of papers could put the runner-up first."], numeric_from=4)


def _rank_tables(results: LeaderboardResults, comparison) -> list[Table]:
    """Per venue: each submission's rank per metric with the interval of its ranks over the draws."""
    tables = []
    for venue in comparison.venues():
        ranks = {(r.submission, r.metric): r for r in comparison.ranks if r.venue == venue}
        metrics = list(dict.fromkeys(metric for _, metric in ranks))
        names = [name for name in results.submissions if any((name, m) in ranks for m in metrics)]
        rows = []
        for name in names:
            cells = [Cell(name)]
            for metric in metrics:
                rank = ranks.get((name, metric))
                if rank is None or rank.rank is None:
                    cells.append(Cell("–"))
                else:
                    interval = None if rank.rank_low is None else f"[{rank.rank_low}–{rank.rank_high}]"
                    cells.append(Cell(str(rank.rank), interval, closest=rank.rank == 1))
            rows.append(cells)
        where = "all venues pooled" if venue == POOLED else venue
        tables.append(Table(f"Rank intervals: {where}", ["Submission", *map(label_of, metrics)], rows,
                            ["Rank 1: closest to human by the point values (★). Below it, the range of 95% of the "
                             "submission's ranks over the bootstrap draws (ties share the better rank)."]
                            if venue == POOLED else []))
    return tables


def _pair_matrices(comparison) -> list[Table]:
    """Per metric (venues pooled): every submission against every other."""
    tables = []
    for metric in comparison.metrics():
        ranked = sorted((r for r in comparison.ranks if r.metric == metric and r.venue == POOLED),
                        key=lambda r: (r.rank is None, r.rank or 0, r.submission))
        names = [r.submission for r in ranked]
        digits = difference_digits(metric)
        rows = []
        for row_name in names:
            cells = [Cell(row_name)]
            for column_name in names:
                pair = comparison.between(row_name, column_name, metric) if row_name != column_name else None
                if pair is None:
                    cells.append(Cell("–"))
                    continue
                word = {row_name: " closer", column_name: " farther"}.get(pair.closer(), "")
                cells.append(Cell(format_number(pair.difference, digits) + word,
                                  f"[{format_number(pair.ci_low, digits)}, {format_number(pair.ci_high, digits)}]"))
            rows.append(cells)
        if len(names) > 1:
            tables.append(Table(f"{label_of(metric)}: row minus column, distance to human (all venues pooled)",
                                ["Submission", *names], rows))
    if tables:
        tables[0].notes.append(
            "Each cell: the row's distance to human minus the column's on the papers both reviewed (negative: the "
            "row is closer), with its 95% paired-bootstrap interval. closer / farther: a difference detected at a "
            f"false discovery rate of {comparison.fdr:g} (Benjamini-Hochberg over all {comparison.n_adjusted} "
            "comparisons of the run); no word: no detectable difference. Rows and columns in rank order.")
    return tables


def build_sections(results: LeaderboardResults) -> list[Section]:
    """The report's sections in page order; a section without data carries a one-line note instead."""
    sections = [_submissions_section(results), _behaviour_section(results), _comparisons_section(results),
                _distribution_section(results)]
    sections += [_family_section(results, COVERAGE), _family_section(results, TARGET_ASPECT)]
    sections += [_robustness_section(results), _treatment_section(results)]
    sections += [_other_section(results), _eras_section(results), _judges_section(results)]
    return sections


# ----------------------------------------------------------------------------- rendering

_MARKDOWN_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]{}<>|#!~$"} | {"&": "&amp;", "\n": " "})


def markdown_escape(text: str) -> str:
    """Text from users (submission names, manifest fields) as literal Markdown: no emphasis,
    links, table breaks or inline HTML."""
    return text.translate(_MARKDOWN_SPECIAL)


def _markdown_cell(cell: Cell) -> str:
    text = markdown_escape(cell.text) + (f" {markdown_escape(cell.ci)}" if cell.ci else "")
    if cell.warning:
        return f"⚠ {text}"
    return f"**{text} ★**" if cell.closest else text


def _shown_and_left_out(sections: list[Section]) -> tuple[list[Section], list[Section]]:
    """The sections with something to show, and those without: these are not rendered, only named at the end
    with what would produce them."""
    return ([s for s in sections if s.tables or s.plots], [s for s in sections if not (s.tables or s.plots)])


def render_markdown(sections: list[Section], title: str) -> str:
    lines = [f"# {markdown_escape(title)}", ""]
    sections, left_out = _shown_and_left_out(sections)
    for section in sections:
        lines += [f"## {section.title}", ""]
        if section.intro:
            lines += [markdown_escape(section.intro), ""]
        if section.note:
            lines += [f"_{markdown_escape(section.note)}_", ""]
        for table in section.tables:
            lines += [f"**{markdown_escape(table.title)}**", "",
                      "| " + " | ".join(markdown_escape(h) for h in table.header) + " |",
                      "|" + "|".join("---:" if i >= table.numeric_from else "---"
                                     for i in range(len(table.header))) + "|"]
            lines += ["| " + " | ".join(_markdown_cell(c) for c in row) + " |" for row in table.rows]
            lines.append("")
            lines += [markdown_escape(note) for note in table.notes]
            if table.notes:
                lines.append("")
        if section.plots:
            lines += [f"_{len(section.plots)} plot(s) in the HTML report: "
                      + "; ".join(markdown_escape(p.title) for p in section.plots) + "._", ""]
    if left_out:
        lines += ["## Not in this report", ""]
        lines += [f"- {section.title}: {markdown_escape(section.note)}" for section in left_out]
    return "\n".join(lines).rstrip() + "\n"


REPORT_TEMPLATES = TemplateSet("report", Path(__file__).parent / "templates", autoescape=True, trim_blocks=True,
                               lstrip_blocks=True)


def render_html(sections: list[Section], title: str) -> str:
    shown, left_out = _shown_and_left_out(sections)
    return REPORT_TEMPLATES.template("report.html").render(title=title, sections=shown, left_out=left_out)


def write_report(directory: str | Path, html_path: str | Path, markdown_path: str | Path | None = None,
                 title: str = "praib leaderboard") -> list[Section]:
    """Read a results directory and write the HTML report (and the Markdown tables when asked)."""
    sections = build_sections(load_results(directory))
    for path, render in ((html_path, render_html), (markdown_path, render_markdown)):
        if path is not None:
            write_text_atomically(path, render(sections, title))
    return sections
