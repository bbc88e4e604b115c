"""The aspect-guided perturbation study's Tables 10-17: its main results repeated for a second model (Gemini-2.0-flash
beside GPT-4o), laid out by praib once per model of the ``praib robustness`` reports given.

A model is a reviewer (Tables 10 and 11) or meta-reviewer (Tables 12-17) of the reports without its prompt: the
reviewer label less its last part (``gpt-4o/meta_review_dimensions`` is model ``gpt-4o`` in its Dimension CoT
setting). Tables 10-13 and 17 are Tables 2, 1, 8, 7 and 9 of that model's reports; Tables 14-16 are the verdicts
of Table 4 one outcome at a time: the final decision under the simple mapping (reject 0, poster 1, spotlight 2,
oral 3; Table 14), under the proportional mapping (each decision at the middle of its share of ICLR 2024's
submissions, rescaled to 0-3; Table 15) and the overall score (Table 16).

Several runs of one model go in as one source each (``praib generate ... --source gpt-4o-run2``): each run is then
a reviewer of its own, with its own tables here.
"""

from __future__ import annotations

from typing import Sequence

from praib.tables.aspect_guided_tables import (ALPHABETICAL, META_REVIEWS, REVIEWS, SETTINGS_NOTE, META_ROWS_NOTE,
                                               DECISION_MISSING, Verdict, _meta_sources, _missing_values, _mode_cells,
                                               _no_report, _repeated_note, _reports, _rows, _runs, _settings,
                                               _setting_needs, table_1, table_2, table_7, table_8, table_9)
from praib.tables.layout import Table
from praib.tables.registry import Numbers, Result, TableSpec, pointer, table

PAPER = "Aspect-guided perturbation"
#: How Tables 14-16 print a verdict (the study's words, with "?" for praib's inconclusive verdict).
VERDICT_WORDS = (("increase", "(before < after)"), ("decrease", "(before > after)"), ("equivalent", "(NSD + Equiv.)"),
                 ("inconclusive", "(inconclusive)"))
#: Where each of Tables 14-16 reads its verdict in a perturbation's result, and what it is.
OUTCOMES = {14: (("scores", "decision", "verdict"), "the final decision, simple mapping (reject 0, poster 1, "
                 "spotlight 2, oral 3; equivalence margin ±0.5)"),
            15: (("decision", "proportional", "verdict"), "the final decision, proportional mapping (each decision at "
                 "the middle of its share of ICLR 2024's submissions, rescaled to 0-3: reject 0, poster 2.01, "
                 "spotlight 2.76, oral 3; margin ±0.5)"),
            16: (("scores", "rating", "verdict"), "the overall score (the rating, 1-10; margin ±1.0)")}


def model_of(reviewer_label: str) -> str:
    """The model of a reviewer label: the label less its prompt (its last part), the label itself when it has one
    part only."""
    return reviewer_label.rsplit("/", 1)[0] if "/" in reviewer_label else reviewer_label


def by_model(results: Sequence[Result], record_kind: str) -> dict[str, list[Result]]:
    """The reports of ``record_kind``, per model: each report cut to that model's reviewers (their JSON pointers stay
    those of the report's file)."""
    models: dict[str, list[Result]] = {}
    for result in _reports(results, record_kind):
        for label in result.data["reviewers"]:
            models.setdefault(model_of(label), [])
    for model, cut in models.items():
        for result in _reports(results, record_kind):
            mine = {label: entry for label, entry in result.data["reviewers"].items() if model_of(label) == model}
            if mine:
                cut.append(Result(result.kind, result.path, {**result.data, "reviewers": mine}))
    return models


def _per_model(spec: TableSpec, results: Sequence[Result], record_kind: str, build) -> list[Table]:
    models = by_model(results, record_kind)
    if not models:
        return [_no_report(spec.new(header=[]), record_kind)]
    return [build(spec.of(model), cut) for model, cut in sorted(models.items())]


@table("agp-10", PAPER, 10, "LLM-as-Reviewer per model: directional (Wilcoxon) and invariance (TOST) test results by "
       "perturbation aspect and score", "robustness", combines=True)
def table_10(spec: TableSpec, results: Sequence[Result]) -> list[Table]:
    return _per_model(spec, results, REVIEWS, table_2)


@table("agp-11", PAPER, 11, "LLM-as-Reviewer per model: average score differences (perturbed − baseline) by "
       "perturbation aspect and score", "robustness", combines=True)
def table_11(spec: TableSpec, results: Sequence[Result]) -> list[Table]:
    return _per_model(spec, results, REVIEWS, table_1)


@table("agp-12", PAPER, 12, "LLM-as-Meta-Reviewer per model: average score differences (perturbed − baseline) by "
       "perturbation, dimension score and CoT prompt setting", "robustness", combines=True)
def table_12(spec: TableSpec, results: Sequence[Result]) -> list[Table]:
    return _per_model(spec, results, META_REVIEWS, table_8)


@table("agp-13", PAPER, 13, "LLM-as-Meta-Reviewer per model: change in the distribution of final decision "
       "categories (perturbed − baseline)", "robustness", combines=True)
def table_13(spec: TableSpec, results: Sequence[Result]) -> list[Table]:
    return _per_model(spec, results, META_REVIEWS, table_7)


def _verdicts(spec: TableSpec, results: Sequence[Result]) -> Table:
    """One of Tables 14-16 of one model's meta-review reports."""
    path, what = OUTCOMES[spec.number]
    runs = _runs(results, META_REVIEWS)
    settings = _settings(runs)
    out = spec.new(header=["Mode", "Perturb Aspect", "Perturbation", *(s.name for s in settings)],
                   sources=_meta_sources(results))
    rows = _rows(ALPHABETICAL, runs)
    for aspect, kind in rows:
        cells = _mode_cells(aspect, kind)
        for setting in settings:
            reviewer = next((r for r in setting.meta_reviewer.reviewers if kind in r.perturbations), None) \
                if setting.meta_reviewer is not None and kind else None
            if reviewer is None:
                cells.append(Verdict(None, words=VERDICT_WORDS))
                continue
            found = Numbers(reviewer.result).get(*reviewer.path(kind, *path))
            cells.append(Verdict(found if isinstance(found, str) else None,
                                 f"{reviewer.result.path}#{pointer(*reviewer.path(kind, *path))}", words=VERDICT_WORDS))
        out.rows.append(cells)
    out.notes = [META_ROWS_NOTE, SETTINGS_NOTE,
                 f"Each cell: the verdict of {what}: ↑ significant increase, ↓ significant decrease (one-sided "
                 "Wilcoxon signed-rank test at the report's `alpha`), ↔ no significant difference and equivalence "
                 "within the margin (TOST), ? inconclusive (praib's fourth verdict)."] + _repeated_note(runs)
    out.needs = _setting_needs(rows, settings) + _missing_values(
        out, 3, DECISION_MISSING if spec.number in (14, 15) else "the meta-reviews have no overall score")
    return out


@table("agp-14", PAPER, 14, "LLM-as-Meta-Reviewer per model: final decision test results, simple mapping, by CoT "
       "prompt setting", "robustness", combines=True)
def table_14(spec: TableSpec, results: Sequence[Result]) -> list[Table]:
    return _per_model(spec, results, META_REVIEWS, _verdicts)


@table("agp-15", PAPER, 15, "LLM-as-Meta-Reviewer per model: final decision test results, proportional mapping, by "
       "CoT prompt setting", "robustness", combines=True)
def table_15(spec: TableSpec, results: Sequence[Result]) -> list[Table]:
    return _per_model(spec, results, META_REVIEWS, _verdicts)


@table("agp-16", PAPER, 16, "LLM-as-Meta-Reviewer per model: overall score test results by CoT prompt setting",
       "robustness", combines=True)
def table_16(spec: TableSpec, results: Sequence[Result]) -> list[Table]:
    return _per_model(spec, results, META_REVIEWS, _verdicts)


@table("agp-17", PAPER, 17, "LLM-as-Meta-Reviewer per model: Cohen's kappa of the final decisions (baseline vs "
       "perturbed) by CoT prompt setting", "robustness", combines=True)
def table_17(spec: TableSpec, results: Sequence[Result]) -> list[Table]:
    return _per_model(spec, results, META_REVIEWS, table_9)
