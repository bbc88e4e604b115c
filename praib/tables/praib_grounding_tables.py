"""PRAIB's RevUtil tables (Tables 18-20), laid out from a ``praib grounding`` result.

"Gen" and "All LLMs (aggregated)" are the result's pooled model reviews, "OR" and "Human (OpenReview)" its human
reviews; Table 19's rows are its model groups. PRAIB rates the comments with RevUtil's model; praib with the judge
given to ``praib grounding`` (a RevUtil checkpoint for the paper's setting), whose validation the notes name.
"""

from __future__ import annotations

from typing import Sequence

from praib.evaluation.grounding import FAMILY, METRIC
from praib.evaluation.judge_validity import family_validity
from praib.metrics.judged.grounding import MIN_COMMENT_CHARS
from praib.metrics.registry import digits_of, label_of
from praib.tables.layout import Cell, Table, label
from praib.tables.registry import Numbers, Result, TableSpec, table

PAPER = "PRAIB"
KIND = "grounding"
#: The dimension praib rates, as the registry labels it: Table 18's "Grounding specificity".
RATED = label_of(METRIC)
#: RevUtil's four dimensions in Table 18's order; praib rates grounding specificity only.
DIMENSIONS = ("Actionability", RATED, "Helpfulness", "Verifiability")
BINS = (("0", "Bin 0"), ("1", "Bin 1"), ("2-5", "Bin 2–5"), (">5", "Bin >5"))
#: Tables 19 and 20: mean ratings and their gains with the registry's decimals (three, as the paper prints them).
DIGITS = digits_of(METRIC)
RHO_DIGITS = 3  # PRAIB Table 18 prints Spearman's ρ with three decimals (a correlation, no registered metric)
SETUP_NOTE = ("Each review's weakness comments (the items of its weaknesses section, or its paragraphs; those under "
              f"{MIN_COMMENT_CHARS} characters left out) rated 1-5 for RevUtil's grounding specificity by the judge, "
              "averaged per review; xref: the review's cross-reference count, density: per 100 word tokens.")


def _validity(result: Result) -> list[str]:
    """The judge and what its stored validations (``judge_validation``: task -> entry or None) say of it."""
    judge = (result.data.get("judge") or {}).get("model")
    return [f"Judge: {judge}; {FAMILY.label}: {family_validity(FAMILY, result.data.get('judge_validation') or {})}."]


def _unfilled(summary: dict | None, who: str) -> str | None:
    """Why a group's cells (``summary``: a group's or the pooled result, None where the input has no such reviews)
    are empty: no reviews, no comment to rate, or no usable rating; None where some comment is rated."""
    if summary is None:
        return f"{who} reviews in the input"
    if not summary["comments"]:
        return (f"a weakness comment to rate in the {who} reviews (a weaknesses section whose items or paragraphs "
                f"have {MIN_COMMENT_CHARS} characters or more)")
    if not summary["comments_scored"]:
        return f"a usable rating of the {who} reviews' comments (the judge gave none: see OUTPUT.failures.jsonl)"
    return None


@table("praib-18", PAPER, 18, "Spearman rank correlations between RevUtil quality dimensions and the cross-reference "
       "count and density, for model-generated (Gen) and human (OR) reviews", KIND)
def table_18(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    numbers = Numbers(result)
    out = spec.new(header=["Dimension", "Gen", "OR", "Gen", "OR"], sources=[result.path],
                   header_groups=[("", 1), ("xrefs_count", 2), ("xrefs_count_density", 2)])
    for dimension in DIMENSIONS:
        if dimension != RATED:
            out.rows.append([label(dimension), *[Cell(None)] * 4])
            continue
        out.rows.append([label(dimension), *(
            numbers.cell("pooled", pooled, "spearman", feature, "rho", digits=RHO_DIGITS)
            for feature in ("xref", "xref_density") for pooled in ("models", "human"))])
    out.notes = [SETUP_NOTE + " ρ: Spearman's rank correlation of the review's mean rating with its count (density) "
                 "over the reviews with a rated comment; Gen: all model reviews, OR: the human reviews.",
                 *_validity(result)]
    out.needs.append("Actionability, Helpfulness, Verifiability: praib rates grounding specificity only (RevUtil's "
                     "other dimensions are not implemented)")
    for pooled, column in (("models", "Gen"), ("human", "OR")):
        summary = numbers.get("pooled", pooled)
        reason = _unfilled(summary, "model" if pooled == "models" else "human")
        if reason:
            out.needs.append(f"{column}: {reason}")
        elif any(summary["spearman"][feature]["rho"] is None for feature in ("xref", "xref_density")):
            out.needs.append(f"{column}: ρ is undefined with fewer than 3 rated reviews or a constant rating, count "
                             "or density")
    return out


@table("praib-19", PAPER, 19, "Mean grounding specificity gain relative to the zero-cross-reference baseline (bin 0) "
       "for model-generated reviews", KIND)
def table_19(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    numbers = Numbers(result)
    models = [(i, g) for i, g in enumerate(result.data["groups"]) if not g["is_reference"]]
    out = spec.new(header=["Model", "Bin 0 (baseline)", "Bin 1 (Δ)", "Bin 2–5 (Δ)", "Bin >5 (Δ)"],
                   sources=[result.path])
    for index, group in models:
        out.rows.append([label(group["label"]), *(numbers.cell("groups", index, "bins", name, "gain", digits=DIGITS,
                                                               signed=name != "0") for name, _ in BINS)])
    out.notes = [SETUP_NOTE + " Δ: the model's mean rating of the reviews in the bin of the count minus its bin-0 "
                 "mean; —: no review in that bin (or none in bin 0).", *_validity(result)]
    if not models:
        out.needs.append("every cell: model reviews in the input")
    for _, group in models:
        reason = _unfilled(group, "model's")
        if reason:
            out.needs.append(f"{group['label']} row: {reason}")
    return out


@table("praib-20", PAPER, 20, "Mean grounding specificity by cross-reference bin for human reviews and aggregated "
       "over all models", KIND)
def table_20(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    numbers = Numbers(result)
    out = spec.new(header=["Source", *(stat for _ in BINS for stat in ("score", "Δ"))], sources=[result.path],
                   header_groups=[("", 1), *((name, 2) for _, name in BINS)])
    for pooled, name in (("human", "Human (OpenReview)"), ("models", "All LLMs (aggregated)")):
        out.rows.append([label(name), *(numbers.cell("pooled", pooled, "bins", bin_name, key, digits=DIGITS,
                                                     signed=key == "gain" and bin_name != "0")
                                        for bin_name, _ in BINS for key in ("mean", "gain"))])
    out.notes = [SETUP_NOTE + " score: the mean rating of the reviews in the bin; Δ: score minus the bin-0 score of "
                 "the same row; —: no review in that bin (Δ: or none in bin 0).", *_validity(result)]
    for pooled, row in (("human", "Human"), ("models", "All LLMs")):
        reason = _unfilled(numbers.get("pooled", pooled), "human" if pooled == "human" else "model")
        if reason:
            out.needs.append(f"{row} row: {reason}")
    return out
