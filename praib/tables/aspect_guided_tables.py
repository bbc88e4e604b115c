"""The aspect-guided perturbation study's tables (Tables 1-4, 7-9), laid out from ``praib robustness`` reports.

Rows are the study's perturbations: the component edited (paper, review, rebuttal) and the quality aspect, in
the paper's order. praib makes an aspect with one or more perturbation kinds (``praib perturb --list``: the
contribution aspect with ``overclaim-novelty`` and ``drop-citations``) and a report holds one result per kind,
so every kind found gets a row of its own under its aspect; an aspect no report holds keeps one row of "—".
Perturbations outside the paper's taxonomy (``rating-flip`` applied to a reviewer's own reviews, prompt
injections, counterfactual edits) follow the paper's rows.

Tables 1-2 are of LLM-as-Reviewer: reports of reviews, a block of rows per reviewer (the report's reviewer
label). Tables 3-4 and 7-9 are of LLM-as-Meta-Reviewer: reports of ``--record-kind meta_review``, with a
column (or group of columns) per chain-of-thought prompt setting. The setting is the last part of the
reviewer label, the meta-review prompt (``praib meta-review --prompt``): ``meta_review_dimensions`` is the
paper's Dimension CoT, ``meta_review_score`` its None CoT, ``meta_review_template`` its Template CoT. Every
table takes any number of reports together (one per setting, or one per perturbation); a reviewer and
perturbation found in two reports is read from the first one given.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Sequence

from praib.perturb.registry import list_perturbations
from praib.tables.layout import MISSING, Cell, Table, label
from praib.tables.registry import Numbers, Result, TableSpec, pointer, table

PAPER = "Aspect-guided perturbation"
REVIEWS, META_REVIEWS = "review", "meta_review"

#: The meta-review prompt of each of the paper's chain-of-thought settings, in the paper's column order.
SETTINGS = {"meta_review_dimensions": "Dimension", "meta_review_score": "None", "meta_review_template": "Template"}

#: How a verdict of ``praib robustness`` prints: the paper's arrows; "?" for praib's fourth verdict, inconclusive
#: (neither a significant change nor equivalence), which the paper's tables do not have.
ARROWS = {"increase": "↑", "decrease": "↓", "equivalent": "↔", "inconclusive": "?"}
TABLE_2_WORDS = (("increase", "(before < after)"), ("decrease", "(before > after)"), ("equivalent", "(NSD + Equiv)"),
                 ("inconclusive", "(inconclusive)"))
TABLE_4_WORDS = (("increase", "Increase"), ("decrease", "Decrease"), ("equivalent", "Invariance"),
                 ("inconclusive", "Inconclusive"))


@dataclass(frozen=True)
class Verdict(Cell):
    """A verdict of ``praib robustness`` (its JSON string: increase, decrease, equivalent or inconclusive), printed
    as the paper's arrow and the table's ``words`` for it."""

    words: tuple[tuple[str, str], ...] = ()

    def text(self) -> str:
        if self.value is None:
            return MISSING
        return f"{ARROWS.get(self.value, '')} {dict(self.words).get(self.value, self.value)}".strip()


@dataclass(frozen=True)
class Aspect:
    """One of the paper's perturbation aspects: its names in the paper, and praib's perturbation component and
    category that make it."""

    mode: str
    name: str
    component: str | None
    category: str | None

    @property
    def kinds(self) -> list[str]:
        return [p.name for p in list_perturbations() if (p.component, p.category) == (self.component, self.category)]


CONTRIBUTION = Aspect("Paper", "Contribution", "paper", "contribution")
SOUNDNESS = Aspect("Paper", "Soundness", "paper", "soundness")
PRESENTATION = Aspect("Paper", "Presentation", "paper", "presentation")
REVIEW_TONE = Aspect("Review", "Tone", "review", "tone")
FACTUAL = Aspect("Review", "Factual", "review", "factual-correctness")
CONCLUSION = Aspect("Review", "Conclusion", "review", "conclusion")
REBUTTAL_TONE = Aspect("Rebuttal", "Tone", "rebuttal", "tone")
COMPLETENESS = Aspect("Rebuttal", "Completeness", "rebuttal", "completeness")
REBUTTAL_PRESENTATION = Aspect("Rebuttal", "Presentation", "rebuttal", "presentation")
# Tables 3 and 8 call the factual-correctness aspect "Correctness" and order the aspects differently from 4, 7, 9.
BY_MODE = [CONTRIBUTION, SOUNDNESS, PRESENTATION, REVIEW_TONE, replace(FACTUAL, name="Correctness"), CONCLUSION,
           REBUTTAL_TONE, COMPLETENESS, REBUTTAL_PRESENTATION]
ALPHABETICAL = [CONTRIBUTION, PRESENTATION, SOUNDNESS, COMPLETENESS, REBUTTAL_PRESENTATION, REBUTTAL_TONE,
                CONCLUSION, FACTUAL, REVIEW_TONE]
NAMES = {(aspect.component, aspect.category): aspect.name for aspect in ALPHABETICAL}
# The ``praib meta-review --perturb-component`` value of each perturbation component.
CLI_COMPONENT = {"paper": "paper", "review": "reviews", "rebuttal": "rebuttal"}


@dataclass(frozen=True)
class Reviewer:
    """One reviewer (or meta-reviewer) of one report."""

    result: Result
    label: str

    @property
    def perturbations(self) -> dict:
        return self.result.data["reviewers"][self.label]["perturbations"]

    def path(self, kind: str, *path) -> tuple:
        return ("reviewers", self.label, "perturbations", kind, *path)


class ReviewerRuns:
    """A reviewer (by its label) across every report given; each perturbation is read from the first report that
    has it."""

    def __init__(self, label: str, reviewers: Sequence[Reviewer]):
        self.label = label
        self.reviewers = list(reviewers)

    def kinds(self) -> dict[str, tuple[str | None, str | None]]:
        """Each perturbation kind the reviewer's reports hold, with its component and category."""
        found: dict[str, tuple] = {}
        for reviewer in self.reviewers:
            for kind, entry in reviewer.perturbations.items():
                found.setdefault(kind, (entry.get("component"), entry.get("category")))
        return found

    def repeated(self) -> list[str]:
        counts = Counter(kind for reviewer in self.reviewers for kind in reviewer.perturbations)
        return [kind for kind, count in counts.items() if count > 1]

    def _of(self, kind: str | None) -> Reviewer | None:
        return next((r for r in self.reviewers if kind in r.perturbations), None) if kind else None

    def number(self, kind: str | None, *path, digits: int, scale: float = 1) -> Cell:
        """The number at ``path`` of the reviewer's result for ``kind``; a sourceless "—" where no report has it."""
        reviewer = self._of(kind)
        if reviewer is None:
            return Cell(None)
        cell = Numbers(reviewer.result).cell(*reviewer.path(kind, *path))
        return Cell(cell.value, cell.source, digits, scale=scale)

    def verdict(self, kind: str | None, score: str, words) -> Verdict:
        reviewer = self._of(kind)
        if reviewer is None:
            return Verdict(None, words=words)
        path = reviewer.path(kind, "scores", score, "verdict")
        value = Numbers(reviewer.result).get(*path)
        return Verdict(value if isinstance(value, str) else None, f"{reviewer.result.path}#{pointer(*path)}",
                       words=words)


def _runs(results: Sequence[Result], record_kind: str) -> list[ReviewerRuns]:
    by_label: dict[str, list[Reviewer]] = {}
    for result in _reports(results, record_kind):
        for name in result.data["reviewers"]:
            by_label.setdefault(name, []).append(Reviewer(result, name))
    return [ReviewerRuns(name, reviewers) for name, reviewers in by_label.items()]


def _reports(results: Sequence[Result], record_kind: str) -> list[Result]:
    return [result for result in results if result.data.get("kind") == record_kind]


def _rows(aspects: Sequence[Aspect], runs: Sequence[ReviewerRuns]) -> list[tuple[Aspect, str | None]]:
    """(aspect, perturbation kind) of each row: the paper's aspects in its order, a row per kind of the aspect the
    reports hold (kind None where they hold none), then the reports' perturbations of no paper aspect."""
    found: dict[str, tuple] = {}
    for run in runs:
        for kind, where in run.kinds().items():
            found.setdefault(kind, where)
    rows: list[tuple[Aspect, str | None]] = []
    for aspect in aspects:
        kinds = sorted(kind for kind, where in found.items() if where == (aspect.component, aspect.category))
        rows += [(aspect, kind) for kind in kinds] or [(aspect, None)]
    taken = {(aspect.component, aspect.category) for aspect in aspects}
    for kind, (component, category) in sorted(found.items(), key=lambda item: (str(item[1]), item[0])):
        if (component, category) not in taken:
            name = NAMES.get((component, category), str(category or MISSING))
            rows.append((Aspect(str(component or MISSING).capitalize(), name, component, category), kind))
    return rows


def _either(kinds: Sequence[str]) -> str:
    quoted = [f"`{kind}`" for kind in kinds]
    if not quoted:
        return "a perturbation praib does not have yet"
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def _no_report(out: Table, record_kind: str) -> Table:
    option = " --record-kind meta_review" if record_kind == META_REVIEWS else ""
    what = "meta-reviews" if record_kind == META_REVIEWS else "reviews (not `--record-kind meta_review`)"
    out.needs.append(f"the whole table: a report of {what}: `praib robustness ORIGINAL PERTURBED...{option} "
                     "--output REPORT.json`")
    return out


def _absent_aspects(rows: Sequence[tuple[Aspect, str | None]], how) -> list[str]:
    return list(dict.fromkeys(f"{aspect.mode} / {aspect.name} rows: {how(aspect)}"
                              for aspect, kind in rows if kind is None))


def _missing_values(out: Table, first: int, why: str) -> list[str]:
    """A need for the columns (from ``first``) where a report holds the row's perturbation but not the value."""
    columns = [out.header[j] for j in range(first, len(out.header))
               if any(row[j].source is not None and row[j].value is None for row in out.rows)]
    return [f"{', '.join(columns)} where the report has the perturbation: {why}"] if columns else []


def _repeated_note(runs: Sequence[ReviewerRuns]) -> list[str]:
    repeated = sorted({f"{run.label} / {kind}" for run in runs for kind in run.repeated()})
    return [f"Found in several reports, read from the first given: {', '.join(repeated)}."] if repeated else []


# ---------------------------------------------------------------------------------------------------------------
# LLM-as-Reviewer: Tables 1 and 2
# ---------------------------------------------------------------------------------------------------------------

REVIEWER_SCORES = {"contribution": "Contr.", "soundness": "Sound.", "presentation": "Prese.", "rating": "Overall"}
# Table 2's score column names (the paper's, in its order); overall_score is praib's rating.
TABLE_2_SCORES = {"contribution": "contribution_score", "soundness": "soundness_score", "rating": "overall_score",
                  "presentation": "presentation_score"}
REVIEWER_SCORES_MISSING = ("the reviews have no such score (contribution, soundness and presentation are the ICLR "
                           "2024 review sub-scores; the report tests every score the records hold)")


def _reviewer_aspect(aspect: Aspect) -> str:
    return aspect.name if aspect.mode == "Paper" else f"{aspect.name} ({aspect.mode.lower()})"


def _reviewer_needs(aspect: Aspect) -> str:
    return (f"reviews of papers perturbed with {_either(aspect.kinds)}: `praib perturb KIND PAPERS --output "
            "PERTURBED.jsonl` (`--judge MODEL` for the kinds an LLM rewrites), `praib generate MODEL "
            "PERTURBED.jsonl`, then `praib robustness REVIEWS PERTURBED_REVIEWS`")


REVIEWER_NOTE = ("Rows: each reviewer of the reports; under each of the paper's aspects, one row per praib "
                 "perturbation kind that makes it (the paper pools an aspect's edits). Rows after the paper's: the "
                 "reports' other perturbations.")


VERDICT_NOTE = ("↑ significant increase, ↓ significant decrease (one-sided Wilcoxon signed-rank test at the "
                "report's `alpha`); ↔ no significant difference and equivalence within the margin (TOST; the "
                "report's `margins`: ±0.5 for 1-4 scores and decisions, ±1.0 for the 1-10 rating, as in the paper); "
                "? inconclusive: neither (praib's fourth verdict, which the paper's tables do not have).")


@table("agp-1", PAPER, 1, "LLM-as-Reviewer: average score differences (perturbed − baseline) by perturbation aspect "
       "and score", "robustness", combines=True)
def table_1(spec: TableSpec, results: Sequence[Result]) -> Table:
    runs = _runs(results, REVIEWS)
    out = spec.new(header=["Reviewer", "Aspect", "Perturbation", *REVIEWER_SCORES.values()],
                   sources=[r.path for r in _reports(results, REVIEWS)])
    if not runs:
        return _no_report(out, REVIEWS)
    rows = []
    for run in runs:
        for aspect, kind in _rows([CONTRIBUTION, SOUNDNESS, PRESENTATION], [run]):
            rows.append((aspect, kind))
            out.rows.append([label(run.label), label(_reviewer_aspect(aspect)), label(kind or MISSING),
                             *(run.number(kind, "scores", score, "mean_difference", digits=2)  # Table 1
                               for score in REVIEWER_SCORES)])
    out.notes = [REVIEWER_NOTE, "Each cell: the mean over the reviewer's pairs of perturbed − original score "
                 "(`mean_difference`). Dimension scores on their 1-4 scale, Overall on the 1-10 rating."]
    out.notes += _repeated_note(runs)
    out.needs = _absent_aspects(rows, _reviewer_needs) + _missing_values(out, 3, REVIEWER_SCORES_MISSING)
    return out


@table("agp-2", PAPER, 2, "LLM-as-Reviewer: directional (Wilcoxon) and invariance (TOST) test results by perturbation "
       "aspect and score", "robustness", combines=True)
def table_2(spec: TableSpec, results: Sequence[Result]) -> Table:
    runs = _runs(results, REVIEWS)
    out = spec.new(header=["Reviewer", "Aspect", "Perturbation", "Score Column", "Direction"],
                   sources=[r.path for r in _reports(results, REVIEWS)])
    if not runs:
        return _no_report(out, REVIEWS)
    rows = []
    for run in runs:
        for aspect, kind in _rows([CONTRIBUTION, PRESENTATION, SOUNDNESS], [run]):
            rows.append((aspect, kind))
            for score, name in TABLE_2_SCORES.items() if kind else [(None, MISSING)]:
                out.rows.append([label(run.label), label(_reviewer_aspect(aspect)), label(kind or MISSING),
                                 label(name), run.verdict(kind, score, TABLE_2_WORDS)])
    out.notes = [REVIEWER_NOTE, VERDICT_NOTE, "overall_score is praib's rating."] + _repeated_note(runs)
    out.needs = _absent_aspects(rows, _reviewer_needs) + _missing_values(out, 4, REVIEWER_SCORES_MISSING)
    return out


# ---------------------------------------------------------------------------------------------------------------
# LLM-as-Meta-Reviewer: Tables 3, 4, 7, 8 and 9
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Setting:
    """A column group of the meta-reviewer tables: a CoT prompt setting (its meta-reviewer), or one the paper
    has that no report holds (``meta_reviewer`` None)."""

    name: str
    prompt: str | None
    meta_reviewer: ReviewerRuns | None

    def number(self, kind: str | None, *path, digits: int, scale: float = 1) -> Cell:
        if self.meta_reviewer is None:
            return Cell(None)
        return self.meta_reviewer.number(kind, *path, digits=digits, scale=scale)  # the rounding of the caller's Table

    def verdict(self, kind: str | None, score: str, words) -> Verdict:
        if self.meta_reviewer is None:
            return Verdict(None, words=words)
        return self.meta_reviewer.verdict(kind, score, words)


def _prompt(reviewer_label: str) -> str:
    return reviewer_label.rsplit("/", 1)[-1]


def _settings(runs: Sequence[ReviewerRuns]) -> list[Setting]:
    """The paper's three settings in its order (one per meta-reviewer when several models share a prompt; absent
    ones too), then every other meta-reviewer of the reports, named by its label."""
    settings = []
    for prompt, name in SETTINGS.items():
        mine = [run for run in runs if _prompt(run.label) == prompt]
        if len(mine) > 1:
            settings += [Setting(f"{name} ({run.label.rsplit('/', 1)[0]})", prompt, run) for run in mine]
        else:
            settings.append(Setting(name, prompt, mine[0] if mine else None))
    return settings + [Setting(run.label, None, run) for run in runs
                       if _prompt(run.label) not in SETTINGS]


def _meta_needs(aspect: Aspect) -> str:
    component = CLI_COMPONENT.get(aspect.component or "", aspect.component)
    return (f"meta-reviews with `praib meta-review ... --perturb-component {component} --perturbation KIND` "
            f"(KIND {_either(aspect.kinds)}), in the report of each setting")


def _absent_settings(settings: Sequence[Setting]) -> list[str]:
    return [f"{setting.name} column: meta-reviews with `praib meta-review MODEL PAPERS REVIEWS --prompt "
            f"{setting.prompt}` (and of the perturbed inputs), in a `praib robustness ... --record-kind "
            "meta_review` report" for setting in settings if setting.meta_reviewer is None]


def _setting_needs(rows: Sequence[tuple[Aspect, str | None]], settings: Sequence[Setting]) -> list[str]:
    """What a meta-reviewer table lacks: settings without a report, aspects no report holds, and perturbations
    some settings' reports lack."""
    return _absent_settings(settings) + _absent_aspects(rows, _meta_needs) + _gaps(rows, settings)


def _meta_sources(results: Sequence[Result]) -> list[str]:
    return [report.path for report in _reports(results, META_REVIEWS)]


def _gaps(rows: Sequence[tuple[Aspect, str | None]], settings: Sequence[Setting]) -> list[str]:
    """A need where a setting's reports lack a perturbation another setting's have."""
    lacking = sorted({f"{setting.name} / {kind}" for _, kind in rows if kind for setting in settings
                      if setting.meta_reviewer is not None and kind not in setting.meta_reviewer.kinds()})
    if not lacking:
        return []
    return [f"{', '.join(lacking)}: that setting's reports lack the perturbation (meta-review the perturbed input "
            "with that prompt and add the meta-reviews to the setting's report)"]


SETTINGS_NOTE = ("Columns: the CoT prompt settings, from the meta-reviewer label's prompt (Dimension: "
                 "`meta_review_dimensions`, None: `meta_review_score`, Template: `meta_review_template`). Each "
                 "setting's report: `praib meta-review MODEL PAPERS REVIEWS --rebuttals REBUTTALS --prompt PROMPT` "
                 "for the baseline and the same with `--perturb-component paper|reviews|rebuttal --perturbation "
                 "KIND` for each perturbation, then `praib robustness BASELINE PERTURBED... --record-kind "
                 "meta_review --output REPORT.json` (one report per setting, or one for all: meta-reviews pair by "
                 "paper, model and prompt).")
META_ROWS_NOTE = ("Rows: the paper's perturbation modes and aspects; one row per praib perturbation kind that makes "
                  "an aspect (the paper pools an aspect's edits). Rows after the paper's: the reports' other "
                  "perturbations.")
DECISION_MISSING = ("the meta-reviews have no final decision (praib reads `Final Decision: Reject | Accept as "
                    "Poster | Accept as Spotlight | Accept as Oral` from the meta-review)")


def _mode_cells(aspect: Aspect, kind: str | None) -> list[Cell]:
    return [label(aspect.mode), label(aspect.name), label(kind or MISSING)]


@table("agp-3", PAPER, 3, "LLM-as-Meta-Reviewer: average overall score differences (perturbed − baseline) by "
       "perturbation and CoT prompt setting", "robustness", combines=True)
def table_3(spec: TableSpec, results: Sequence[Result]) -> Table:
    runs = _runs(results, META_REVIEWS)
    settings = _settings(runs)
    out = spec.new(header=["Mode", "Aspect", "Perturbation", *(s.name for s in settings)],
                   sources=_meta_sources(results))
    if not runs:
        return _no_report(out, META_REVIEWS)
    rows = _rows(BY_MODE, runs)
    for aspect, kind in rows:
        out.rows.append([*_mode_cells(aspect, kind),
                         *(s.number(kind, "scores", "rating", "mean_difference", digits=2)  # Tables 3, 8
                           for s in settings)])
    out.notes = [META_ROWS_NOTE, SETTINGS_NOTE, "Each cell: the mean over the meta-reviewer's pairs of perturbed − "
                 "original overall score (the rating, 1-10; `mean_difference`)."] + _repeated_note(runs)
    out.needs = (_setting_needs(rows, settings)
                 + _missing_values(out, 3, "the meta-reviews have no overall score"))
    return out


@table("agp-4", PAPER, 4, "LLM-as-Meta-Reviewer: test results of the final decision and the overall score by "
       "perturbation and CoT prompt setting", "robustness", combines=True)
def table_4(spec: TableSpec, results: Sequence[Result]) -> Table:
    runs = _runs(results, META_REVIEWS)
    settings = _settings(runs)
    out = spec.new(header=["Mode", "Perturb Aspect", "Perturbation",
                           *(["Final Decision", "Overall Score"] * len(settings))],
                   header_groups=[("", 3)] + [(s.name, 2) for s in settings],
                   sources=_meta_sources(results))
    if not runs:
        return _no_report(out, META_REVIEWS)
    rows = _rows(ALPHABETICAL, runs)
    for aspect, kind in rows:
        cells = _mode_cells(aspect, kind)
        for setting in settings:
            cells += [setting.verdict(kind, "decision", TABLE_4_WORDS), setting.verdict(kind, "rating", TABLE_4_WORDS)]
        out.rows.append(cells)
    out.notes = [META_ROWS_NOTE, SETTINGS_NOTE, VERDICT_NOTE,
                 "Final Decision: the decision as ordered levels (reject 0 < poster 1 < spotlight 2 < oral 3), tested "
                 "like a score with the margin ±0.5; Overall Score: the rating."] + _repeated_note(runs)
    out.needs = (_setting_needs(rows, settings)
                 + _missing_values(out, 3, DECISION_MISSING + ", or no overall score"))
    return out


# The decision categories in Table 7's column order, by their name in the report's ``category_shares``.
DECISION_COLUMNS = {"accept (poster)": "Accept as Poster (pp)", "reject": "Reject (pp)", "oral": "Accept as Oral (pp)",
                    "spotlight": "Accept as Spotlight (pp)"}


@table("agp-7", PAPER, 7, "LLM-as-Meta-Reviewer: change in the distribution of final decision categories "
       "(perturbed − baseline)", "robustness", combines=True)
def table_7(spec: TableSpec, results: Sequence[Result]) -> Table:
    runs = _runs(results, META_REVIEWS)
    settings = _settings(runs)
    out = spec.new(header=["Mode", "Perturb Aspect", "Perturbation", "Prompt Setting", *DECISION_COLUMNS.values()],
                   sources=_meta_sources(results))
    if not runs:
        return _no_report(out, META_REVIEWS)
    rows = _rows(ALPHABETICAL, runs)
    for aspect, kind in rows:
        for setting in settings:
            out.rows.append([*_mode_cells(aspect, kind), label(setting.name),
                             *(setting.number(kind, "decision", "category_shares", category, "change",
                                              digits=2,  # Table 7
                                              scale=100) for category in DECISION_COLUMNS)])
    out.notes = [META_ROWS_NOTE, SETTINGS_NOTE, "Each cell: the share of the pairs' perturbed meta-reviews with that "
                 "final decision minus the share of their baseline ones, in percentage points (the paper's %; "
                 "`decision.category_shares`)."] + _repeated_note(runs)
    out.needs = (_setting_needs(rows, settings)
                 + _missing_values(out, 4, DECISION_MISSING))
    return out


OVERALL_SHORT = {"Dimension": "Ov. Dim.", "None": "Ov. None", "Template": "Ov. Temp."}


@table("agp-8", PAPER, 8, "LLM-as-Meta-Reviewer: average score differences (perturbed − baseline) by perturbation, "
       "dimension score and CoT prompt setting", "robustness", combines=True)
def table_8(spec: TableSpec, results: Sequence[Result]) -> Table:
    runs = _runs(results, META_REVIEWS)
    settings = _settings(runs)
    dimension = [s for s in settings if s.prompt == "meta_review_dimensions"]
    scores = {"contribution": "Contribution", "soundness": "Soundness", "presentation": "Presentation"}
    dimension_header = [name if len(dimension) == 1 else f"{name} ({setting.name})"
                        for setting in dimension for name in scores.values()]
    out = spec.new(header=["Mode", "Aspect", "Perturbation", *dimension_header,
                           *(OVERALL_SHORT.get(s.name, f"Ov. {s.name}") for s in settings)],
                   sources=_meta_sources(results))
    if not runs:
        return _no_report(out, META_REVIEWS)
    rows = _rows(BY_MODE, runs)
    for aspect, kind in rows:
        out.rows.append([*_mode_cells(aspect, kind),
                         *(s.number(kind, "scores", score, "mean_difference", digits=2)  # Table 8
                           for s in dimension for score in scores),
                         *(s.number(kind, "scores", "rating", "mean_difference", digits=2)  # Tables 3, 8
                           for s in settings)])
    out.notes = [META_ROWS_NOTE, SETTINGS_NOTE, "Each cell: the mean over the pairs of perturbed − original score "
                 "(`mean_difference`); Contribution, Soundness, Presentation (1-4): the Dimension CoT meta-reviewer's "
                 "dimension scores; Ov.: the overall score (1-10) of each setting."] + _repeated_note(runs)
    out.needs = (_setting_needs(rows, settings)
                 + _missing_values(out, 3, "the meta-reviews have no such score (the Dimension CoT prompt asks for "
                                   "contribution, soundness and presentation, or the venue's own sub-scores)"))
    return out


@table("agp-9", PAPER, 9, "LLM-as-Meta-Reviewer: Cohen's kappa of the final decisions (baseline vs perturbed) by "
       "CoT prompt setting", "robustness", combines=True)
def table_9(spec: TableSpec, results: Sequence[Result]) -> Table:
    runs = _runs(results, META_REVIEWS)
    settings = _settings(runs)
    out = spec.new(header=["Mode", "Perturb Aspect", "Perturbation", *(s.name for s in settings)],
                   sources=_meta_sources(results))
    if not runs:
        return _no_report(out, META_REVIEWS)
    rows = _rows(ALPHABETICAL, runs)
    for aspect, kind in rows:
        out.rows.append([*_mode_cells(aspect, kind),
                         *(s.number(kind, "decision", "cohen_kappa", digits=3) for s in settings)])  # Table 9
    out.notes = [META_ROWS_NOTE, SETTINGS_NOTE, "Each cell: Cohen's kappa (unweighted) between the baseline and the "
                 "perturbed final decisions of the same papers (reject, poster, spotlight, oral; "
                 "`decision.cohen_kappa`)."] + _repeated_note(runs)
    out.needs = (_setting_needs(rows, settings)
                 + _missing_values(out, 3, DECISION_MISSING + " (or every decision on both sides is the same one: "
                                   "kappa is then undefined)"))
    return out
