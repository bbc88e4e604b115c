"""The counterfactual review-logic study's Tables 4-6, laid out from ``praib counterfactual effects`` results.

Rows are the reviewers (the paper's ARGs: automatic review generators), by the result's reviewer label
(source, model, prompt). The three review differences are the paper's: Aspects (soundness-related
assertions), Sentiment (share of positive assertions) and Score (the rating), each counterfactual minus
original. The seed text of the paper has lost its numbers, so its rounding cannot be read: praib prints z
with two decimals and p-values, ROUGE-2 and Jaccard with three. ``praib robustness`` also writes the score
effects of counterfactual variants (under ``treatment_effects``); these tables read the result of
``praib counterfactual effects``, which has all three differences and the sensitivity.
"""

from __future__ import annotations

from typing import Sequence

from praib.tables.layout import Cell, Table, label
from praib.tables.registry import Numbers, Result, TableSpec, table

PAPER = "Counterfactual review logic"
DIFFERENCES = {"aspect": "Aspects", "sentiment": "Sentiment", "score": "Score"}
JUDGE_NEEDED = "add `--judge MODEL` to `praib counterfactual effects` (the judge lists each review's assertions)"


def _cell(result: Result, *path, **printed) -> Cell:
    return Numbers(result).cell("reviewers", *path, **printed)


def _unjudged(result: Result) -> list[str]:
    measured = result.data.get("differences") or []
    return [DIFFERENCES[name] for name in DIFFERENCES if name not in measured]


@table("cf-4", PAPER, 4, "Reviewers ranked by the ATE gap between soundness-critical and soundness-neutral edits (z)",
       "effects")
def table_4(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    reviewers = result.data["reviewers"]
    ranked = sorted(reviewers, key=lambda name: (reviewers[name].get("ranking_score") is None,
                                                 -(reviewers[name].get("ranking_score") or 0.0)))
    out = spec.new(header=["ARG", "z"], sources=[result.path])
    for name in ranked:
        out.rows.append([label(name), _cell(result, name, "ranking_score", digits=2)])  # Table 4's z (see above)
    measured = ", ".join(DIFFERENCES[name] for name in result.data.get("differences") or [])
    out.notes = ["z: for each review difference, (ATE of critical edits − ATE of neutral edits) / the standard "
                 "deviation of the neutral differences, signed so that larger is better (Aspects up, Sentiment and "
                 f"Score down), averaged over the differences measured ({measured or 'none'}). Rows: highest z first."]
    if _unjudged(result):
        out.notes.append(f"Without a judge z is the Score term alone; {JUDGE_NEEDED} for the others.")
    for name in ranked:
        if reviewers[name].get("ranking_score") is None:
            out.needs.append(f"z of {name}: undefined for every difference ({_why_no_z(reviewers[name])})")
    return out


def _why_no_z(entry: dict) -> str:
    reasons = []
    for name, effect in (entry.get("differences") or {}).items():
        if effect.get("reason"):
            reasons.append(f"{DIFFERENCES.get(name, name)}: {effect['reason']}")
        elif not effect.get("std_neutral"):
            reasons.append(f"{DIFFERENCES.get(name, name)}: the neutral differences have no spread (SD 0 or one "
                           "difference), so the gap has no unit")
    return "; ".join(reasons) or "no difference was measured"


@table("cf-5", PAPER, 5, "p-values of the difference between the ATEs of critical and neutral edits, before and "
       "after Benjamini-Hochberg correction", "effects")
def table_5(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    out = spec.new(header=["ARG", *(["p-value", "corrected"] * len(DIFFERENCES))],
                   header_groups=[("", 1), *((name, 2) for name in DIFFERENCES.values())], sources=[result.path])
    for name in result.data["reviewers"]:
        row = [label(name)]
        for difference in DIFFERENCES:
            row += [_cell(result, name, "differences", difference, "p_value", digits=3),  # Table 5: p-values
                    _cell(result, name, "differences", difference, "p_corrected", digits=3)]  # Table 5
        out.rows.append(row)
    out.notes = ["p-value: the slope of condition (critical vs neutral) in the linear mixed-effects model "
                 "`difference ~ critical + (1 | paper)` per reviewer; corrected: Benjamini-Hochberg across the "
                 "result's reviewers, per difference (significant below the result's `alpha`). 0.000: below 0.0005."]
    if _unjudged(result):
        out.needs.append(f"{', '.join(_unjudged(result))}: {JUDGE_NEEDED}")
    failed = sorted({f"{name} / {DIFFERENCES.get(d, d)}: {effect['reason']}"
                     for name, entry in result.data["reviewers"].items()
                     for d, effect in (entry.get("differences") or {}).items() if effect.get("reason")})
    out.needs += [f"{failure} (the mixed model was not fitted)" for failure in failed]
    return out


@table("cf-6", PAPER, 6, "Sensitivity to the paper's surface form: ROUGE-2 and assertion Jaccard between the reviews "
       "of original and soundness-neutral versions", "effects")
def table_6(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    reviewers = result.data["reviewers"]
    out = spec.new(header=["ARG", "ROUGE-2", "Assertion Jaccard"], sources=[result.path])
    for name in reviewers:
        out.rows.append([label(name), _cell(result, name, "sensitivity", "rouge2", "mean", digits=3),  # Table 6
                         _cell(result, name, "sensitivity", "assertion_jaccard", "mean", digits=3)])  # Table 6
    out.notes = ["Means over the reviewer's pairs of an original review and a review of a soundness-neutral version: "
                 "ROUGE-2 F1 of the texts; Jaccard index of their assertions, two assertions being one element when "
                 "the judge aligns them."]
    if not any("sensitivity" in entry for entry in reviewers.values()):
        out.needs.append("every cell: run `praib counterfactual effects` without `--no-sensitivity`")
    elif result.data.get("judge") is None:
        out.needs.append(f"Assertion Jaccard: {JUDGE_NEEDED}")
    return out
