"""Plain-text tables of evaluation results, laid out like Table 1 of the PRAIB paper."""

from __future__ import annotations

from praib.evaluation.judge_validity import validity_lines
from praib.evaluation.results import EvaluationResult, GroupResult, Summary
from praib.metrics.registry import BY_NAME, evaluate_table, text_metrics


def _text_columns() -> tuple[str, ...]:
    """The table's text metrics, shown as mean ± std (then alpha per venue, then the judged metrics)."""
    text = set(text_metrics())
    return tuple(m for m in evaluate_table() if m in text)


def _judged_columns() -> tuple[str, ...]:
    return tuple(m for m in evaluate_table() if BY_NAME[m].judged)


def _mean_std(summary: Summary, digits: int) -> str:
    if summary.mean is None:
        return "-"
    text = f"{summary.mean:.{digits}f}"
    if summary.std is not None:
        text += f" ± {summary.std:.{digits}f}"
    return text


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _judged_cells(group: GroupResult) -> list[str]:
    return [_number(group.value(m), BY_NAME[m].table_digits) for m in _judged_columns()]


def behaviour_table(results: EvaluationResult) -> str:
    """One row per group: counts, readability (TKC, TTR, FRE, FKG), specificity
    (citations and cross-references per review) and Krippendorff's alpha per venue
    (human panel for the reference row, panel plus the group's ratings otherwise)."""
    venues = sorted({v for g in results.groups for v in g.krippendorff_alpha})
    text_columns, judged_columns = _text_columns(), _judged_columns()
    judged = results.judged is not None
    # Shown when some score is off its scale, as the judged columns are when there is a judge.
    off_scale = any(sum(g.n_out_of_scale.values()) for g in results.groups)
    header = ["Source", "n", "unparsed", *(["off scale"] if off_scale else []),
              *[BY_NAME[m].table_column for m in text_columns],
              *[f"{BY_NAME['krippendorff_alpha'].table_column} {v}" for v in venues],
              *([BY_NAME[m].table_column for m in judged_columns] if judged else [])]
    rows = [header]
    for group in results.groups:
        rows.append([
            group.label + (" (reference)" if group.is_reference else ""),
            str(group.n_reviews),
            str(group.n_unparsed),
            *([str(sum(group.n_out_of_scale.values()))] if off_scale else []),
            *[_mean_std(group.text_metrics[m], BY_NAME[m].table_digits) for m in text_columns],
            *[_number(group.krippendorff_alpha.get(v), BY_NAME["krippendorff_alpha"].table_digits)
              for v in venues],
            *(_judged_cells(group) if judged else []),
        ])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"{'/'.join(BY_NAME[m].table_column for m in text_columns)}: mean ± std per review. "
             "α: Krippendorff's ordinal alpha of ratings, per venue-year then averaged per venue; reference row = "
             "human panel only, other rows = human panel plus that group's ratings."]
    if not results.n_reference_reviews:
        notes.append("No human reviews found (no record with source 'human' and no --reference): agreement and "
                     "comparisons with humans are left out.")
    if judged:
        judge = results.judged.judge
        notes.append(f"Judged by {judge['model']} ({judge['backend']}, temperature {judge['temperature']}): Math = "
                     "share of reviews engaging with the mathematics, P(+|+)/P(+|-) given the human reviews of the "
                     "paper did / did not; Cov. S/W = atomic recall of the human strengths/weaknesses; T/A F1 = "
                     "target/aspect label-set agreement with the human reviews.")
        invalid = results.judged.invalid_judge_answers
        if invalid.math_engagement or invalid.atomic_extraction or invalid.target_aspect_labels:
            notes.append(f"Unreadable judge answers (left out, never guessed): math {invalid.math_engagement} "
                         f"and atomic extraction {invalid.atomic_extraction} of {invalid.of_reviews} reviews, "
                         f"{invalid.target_aspect_labels} target/aspect labels.")
        if results.judged.validation is not None:
            notes += validity_lines(results.judged.validation, results.judged.second_judge)
    skipped = sum(g.skipped.text_metrics for g in results.groups)
    if skipped:
        notes.append(f"{skipped} review(s) without text were skipped by the text metrics.")
    unparsed = sum(g.n_unparsed for g in results.groups)
    partial = sum(g.n_partially_parsed for g in results.groups)
    if unparsed or partial:
        notes.append(f"{unparsed} review(s) could not be parsed and {partial} were parsed partially; "
                     "their raw text is kept and scored, their missing scores are skipped.")
    if off_scale:
        notes.append(out_of_scale_note(results.groups))
    for agreement in results.prompt_self_agreement:
        per_venue = ", ".join(f"{venue} {'n/a' if alpha is None else f'{alpha:.2f}'}"
                              for venue, alpha in agreement.alpha.items())
        notes.append(f"Prompt self-consistency of {agreement.reviewer} ({' vs '.join(agreement.prompts)}): "
                     f"α {per_venue or 'n/a (no paper rated under both)'}.")
    return "\n".join(lines + [""] + notes)


def out_of_scale_note(groups) -> str:
    """The note counting the scores off their venue-year's scale of ``groups`` (:class:`GroupResult` s or
    their JSON), which every metric left out."""
    counts = [g.n_out_of_scale if isinstance(g, GroupResult) else (g.get("n_out_of_scale") or {}) for g in groups]
    ratings, confidences = (sum(c.get(kind, 0) for c in counts) for kind in ("rating", "confidence"))
    return (f"{ratings} rating(s) and {confidences} confidence(s) were not on their venue-year's scale: left out of "
            "α, the distributions and the gaps alike (`n_out_of_scale` of each group).")


def verification_lines(results: EvaluationResult) -> list[str]:
    """Plain-text lines of the ``verified_citations`` of each group, one per group that has them."""
    lines = ["Verified citations (share of checked references per review, mean ± std over reviews with one; "
             "verified/total references per review):"]
    for group in results.groups:
        summary = group.verified_citations
        if summary is None:
            continue
        share = summary["share"]
        share_text = "-" if share["mean"] is None else f"{share['mean']:.2f}" + (
            f" ± {share['std']:.2f}" if share["std"] is not None else "")
        ratio = "-/-" if summary["verified"]["mean"] is None else \
            f"{summary['verified']['mean']:.3f}/{summary['citations']['mean']:.3f}"
        lines.append(f"  {group.label}: share {share_text} (n={share['n']}), {ratio}; "
                     f"{summary['n_verified']} of {summary['n_citations']} verified, "
                     f"{summary['n_unchecked']} unchecked")
    return lines
