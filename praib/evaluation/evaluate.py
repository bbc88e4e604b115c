"""The behavioural profile of each review source: the main job behind ``praib evaluate``.

Records flow one way: reviews are parsed (fields filled from raw text where the
data did not carry them), the deterministic text metrics are computed once per
review, and every group of reviews (by default one per source, model and
prompt) is summarised against the human reference: readability, cross-references
and citations (mean and standard deviation), Krippendorff's ordinal alpha per
venue (human panel alone, and with the group's ratings added), and rating and
confidence distributions with their distance to the human ones.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections import Counter, defaultdict
from itertools import combinations
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np
from datasets import Dataset

from praib._version import __version__
from praib.metrics.scores.agreement import (HumanPanels, alpha_by_venue, row_codes_by_first_appearance,
                                           self_agreement_by_venue)
from praib.metrics.scores.distributions import (confidence_gap_to_medians, distribution_difference_of_counts,
                                                normalised_distribution_of_counts, numbered_panel_medians)
from praib.records import HUMAN_SOURCE, PARSE_FAILED, PARSE_PARTIAL
from praib.scales import UnknownScaleError, generic_scales, venue_scales
from praib.evaluation.collector import fewer_collections
from praib.evaluation.partial import DECISIONS, INPUT, REFERENCE, STATUSES, Columns, Partial
from praib.evaluation.scored import SCORED_FIELDS, ScoredReviews
from praib.evaluation.results import (AcrossModels, EvaluationResult, GroupResult, InvalidJudgeAnswers, JudgedRun,
                                      PromptDelta, PromptSelfAgreement, RatiosToHuman, Skipped, Summary, json_ready)
from praib.metrics.registry import SPREAD_OVER_MODELS, compared_metrics, summarise_text_metric, text_metrics
from praib.metrics.summary import summarise

if TYPE_CHECKING:
    from praib.metrics.judged.coverage import EmbeddingPrefilter
    from praib.llm.judge import Judge
    from praib.sources.verification import Verifier

DEFAULT_GROUP_BY = ("source", "model", "prompt")

logger = logging.getLogger(__name__)


def text_metric_summary(scores: dict[str, np.ndarray]) -> dict[str, Summary]:
    """Summaries of the registered text metrics of a group's reviews, by metric name, from their columns
    (:func:`praib.metrics.text.columns.text_columns`), each summarised as the registry says."""
    return {name: summarise_text_metric(name, scores) for name in text_metrics()}


def _group_key(row: dict, group_by: Sequence[str]) -> tuple:
    return tuple(row[column] for column in group_by)


def _label(key: dict) -> str:
    """"source/model/prompt", leaving out empty values and a model named like its source; a model given as a
    local path is named by its folder, as its reviews' source is."""
    parts: list[str] = []
    for column, value in key.items():
        if value is None:
            continue
        text = str(value)
        if column == "model" and os.path.isabs(text):
            text = os.path.basename(text.rstrip("/\\")) or text
        if not parts or parts[-1] != text:
            parts.append(text)
    return "/".join(parts) or "(all)"


def scale_values(venue: str | None, year: int | None, kind: str, scale: str) -> tuple[int, ...]:
    """The values of the ``kind`` ("rating" or "confidence") scale of a venue-year: the generic scale's
    when ``scale`` is "generic", the venue is missing or no scale file knows the venue-year (see
    :func:`unknown_scales`, whose warning says so); none where the venue-year's scale has no such score
    (ICLR 2020 asked for no confidence)."""
    try:
        scales = generic_scales() if scale == "generic" or venue is None else venue_scales(venue, year)
    except UnknownScaleError:
        scales = generic_scales()
    chosen = scales.rating if kind == "rating" else scales.confidence
    return chosen.values if chosen else ()


def off_scale(columns: Mapping[str, Sequence], kind: str, scale: str) -> list[bool]:
    """Per review of ``columns`` (``venue``, ``year`` and ``kind`` lists): whether its ``kind`` score is given
    and is not a value of its venue-year's scale (:func:`scale_values`).

    The one rule for such scores (7 on ICLR 2022's 1, 3, 5, 6, 8, 10): they are left out of every metric
    alike (Krippendorff's alpha, the distributions, the gaps to the human median, the leaderboard's means),
    and they are counted (``n_out_of_scale``). A whole-number rating the parser reads off its scale from a
    review's text is kept in the record for this rule to count, as one given in a field is."""
    return _off_scale(columns, kind, scale).tolist()


def _off_scale(columns: Mapping[str, Sequence], kind: str, scale: str) -> np.ndarray:
    """:func:`off_scale` by column: each venue-year's scale looked up once, its reviews' scores tested at once."""
    venue_years, codes = row_codes_by_first_appearance(columns["venue"], columns["year"])
    return _off_their_scale(np.array(columns[kind], dtype=float), codes, venue_years, kind, scale)  # None is NaN


def _off_their_scale(values: np.ndarray, codes: np.ndarray, venue_years: Sequence[tuple], kind: str,
                     scale: str) -> np.ndarray:
    """Whether each of the ``kind`` scores ``values`` (NaN: none) is off the scale of its venue-year (its place
    ``codes`` in ``venue_years``)."""
    found = np.zeros(len(values), dtype=bool)
    given = np.flatnonzero(~np.isnan(values))
    codes = codes[given]
    for code in np.flatnonzero(np.bincount(codes, minlength=len(venue_years))).tolist():
        venue, year = venue_years[code]
        rows = given[codes == code]
        found[rows] = ~np.isin(values[rows], scale_values(venue, year, kind, scale))
    return found


def on_scale(columns: dict, scale: str) -> tuple[dict, dict[str, int]]:
    """``columns`` with every rating and confidence that is :func:`off_scale` set to None, and how many of
    each kind were."""
    kept, counts = dict(columns), {}
    for kind in ("rating", "confidence"):
        off = _off_scale(columns, kind, scale)
        counts[kind] = int(np.count_nonzero(off))
        if counts[kind]:
            kept[kind] = [None if out else value for value, out in zip(columns[kind], off.tolist())]
    return kept, counts


def _kept_on_scale(columns: Columns, scale: str) -> tuple[Columns, dict[str, int]]:
    """:func:`on_scale` of a partial's columns: the scores off their scale set to NaN."""
    kept, counts = {}, {}
    for kind in ("rating", "confidence"):
        scores = getattr(columns, kind)
        off = _off_their_scale(scores, columns.venue_year, columns.venue_years, kind, scale)
        counts[kind] = int(np.count_nonzero(off))
        if counts[kind]:
            kept[kind] = np.where(off, np.nan, scores)
    return replace(columns, **kept), counts


def unknown_scales(venue_years: Iterable[tuple], scale: str) -> str | None:
    """The one warning naming every venue-year of ``venue_years`` that no scale file knows, and the scale
    used instead (:func:`scale_values`); None when every one is known (or ``scale`` is "generic")."""
    if scale == "generic":
        return None
    unknown = []
    for venue, year in sorted({(v, y) for v, y in venue_years if v is not None}, key=lambda vy: (vy[0], vy[1] or 0)):
        try:
            venue_scales(venue, year)
        except UnknownScaleError:
            unknown.append(f"{venue} {year}")
    if not unknown:
        return None
    generic = generic_scales()
    return (f"no scale file knows {', '.join(unknown)}: their ratings and confidences are read and checked on the "
            f"generic scale (rating {_span(generic.rating.values)}, confidence {_span(generic.confidence.values)}); "
            "add a scale file to a folder in PRAIB_SCALES_PATH to use the venue's own")


def _span(values: Sequence[int]) -> str:
    """``1-10`` for a run of whole numbers, else the values listed."""
    if list(values) == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}-{values[-1]}"
    return ", ".join(map(str, values))


def year_group_of(venue: str | None, year: int | None) -> str:
    """The venue's year group of ``year`` (editions that share one rating scale, e.g. ICLR up to
    2018), or the year itself where the venue has no known scale."""
    try:
        return venue_scales(venue, year).year_group
    except UnknownScaleError:
        return str(year)


def _by_venue_year(columns: Columns, kind: str) -> dict[tuple, tuple[np.ndarray, np.ndarray]]:
    """The ``kind`` scores of the reviews that have one and their decision classes (places in DECISIONS), per
    (venue, year), as arrays (the venue-years in the order of their first score)."""
    values = getattr(columns, kind)
    scored = np.flatnonzero(~np.isnan(values))
    codes = columns.venue_year[scored]
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=len(columns.venue_years))
    starts = np.cumsum(sizes) - sizes
    present = np.flatnonzero(sizes)
    present = present[np.argsort(order[starts[present]])]  # by first score: a stable sort keeps it first
    taken = {}
    for code, start, size in zip(present.tolist(), starts[present].tolist(), sizes[present].tolist()):
        rows = scored[order[start:start + size]]
        taken[columns.venue_years[code]] = values[rows], columns.decision[rows]
    return taken


def _counts_on(scores: np.ndarray, values: Sequence[int]) -> dict[int, int]:
    """How many of ``scores`` are each of ``values``."""
    return {value: int(np.count_nonzero(scores == value)) for value in values}


def _distributions(group: dict[tuple, tuple[np.ndarray, np.ndarray]], human: "_Reference", kind: str, scale: str,
                   is_reference: bool) -> dict:
    """Rating or confidence distributions per venue-year (scores from :func:`_by_venue_year`), with the
    difference from the reference distribution of the same venue-year, overall and by paper decision."""
    result = {}
    for venue, year in sorted(group, key=lambda vy: (str(vy[0]), vy[1] or 0)):
        scores, decisions = group[(venue, year)]
        values = scale_values(venue, year, kind, scale)
        name = f"{venue or 'unknown venue'} {year_group_of(venue, year) if venue else year}"
        entry = _compare(scores, human.on_scale(kind, (venue, year), None, values), values, is_reference)
        entry["by_decision"] = {
            decision: _compare(scores[decisions == DECISIONS.index(decision)],
                               human.on_scale(kind, (venue, year), decision, values), values, is_reference)
            for decision in ("accept", "reject")
        }
        result[name] = entry
    return result


def _pooled(group: dict[tuple, tuple[np.ndarray, np.ndarray]], human: "_Reference", kind: str, scale: str,
            is_reference: bool) -> dict:
    """The distribution pooled over the group's venue-years, on the union of their scales (PRAIB Tables
    16, 17), against the human scores of the same venue-years; each score counted only where it is on
    its own venue-year's scale. ``sum_abs_diff_pp`` is the paper's Σ|Δ| in percentage points,
    ``total_variation`` the same distance on a 0-1 scale (half of Σ|Δ| over 100)."""
    pooled_group, pooled_human, values = Counter(), Counter(), set()
    for venue, year in group:
        allowed = scale_values(venue, year, kind, scale)
        values.update(allowed)
        pooled_group.update(_counts_on(group[(venue, year)][0], allowed))
        pooled_human.update(human.on_scale(kind, (venue, year), None, allowed)[1])
    values = sorted(values)
    n_group = sum(pooled_group.values())
    if not n_group:
        entry = {"distribution": None}
    elif is_reference or not sum(pooled_human.values()):
        entry = {"distribution": normalised_distribution_of_counts(pooled_group, values)}
    else:
        entry = distribution_difference_of_counts(pooled_group, pooled_human, values)
    return {"values": values, "venue_years": [f"{venue} {year}" for venue, year in sorted(group, key=str)], **entry,
            "n": n_group}


def _compare(group: np.ndarray, human: tuple[bool, dict], values: Sequence[int], is_reference: bool) -> dict:
    """``group``'s scores against ``human`` (:meth:`_Reference.on_scale`)."""
    counts = _counts_on(group, values)
    on_scale = sum(counts.values())
    any_human, human_counts = human
    if is_reference or not any_human:
        entry = {"distribution": normalised_distribution_of_counts(counts, values) if on_scale else None}
    else:
        entry = distribution_difference_of_counts(counts, human_counts, values)
    entry["n"] = on_scale
    entry["n_out_of_scale"] = len(group) - on_scale
    return entry


def _venues(columns: Columns) -> np.ndarray:
    """Each review's venue (an object array)."""
    return np.array([venue for venue, _ in columns.venue_years] or [None], dtype=object)[columns.venue_year]


def _gap(group: Columns, human: "_Reference", kind: str) -> dict:
    group_venues, papers = _venues(group), human.papers_of(group)

    def pick(columns, papers, venues, by=None, wanted=None):
        if by is None:
            return papers, getattr(columns, kind)
        at = columns.decision == DECISIONS.index(wanted) if by == "decision" else venues == wanted
        return papers[at], getattr(columns, kind)[at]

    def gap(by=None, wanted=None):
        medians = human.once(("medians", kind, by, wanted), lambda: numbered_panel_medians(
            *pick(human.columns, human.columns.paper, _venues(human.columns), by, wanted),
            len(human.columns.paper_ids)))
        return confidence_gap_to_medians(*pick(group, papers, group_venues, by, wanted), medians)

    overall = gap()
    overall["by_decision"] = {d: gap("decision", d) for d in ("accept", "reject")}
    # PRAIB Table 14 reports the gap per conference.
    present = np.flatnonzero(np.bincount(group.venue_year, minlength=len(group.venue_years))).tolist()
    overall["by_venue"] = {venue: gap("venue", venue)
                           for venue in sorted({group.venue_years[code][0] for code in present} - {None})}
    return overall


def _rated(columns: Columns) -> np.ndarray:
    """The positions of the reviews with a rating and a venue."""
    with_venue = np.array([venue is not None for venue, _ in columns.venue_years] or [False])
    return np.flatnonzero(~np.isnan(columns.rating) & with_venue[columns.venue_year])


def _rated_by_year_group(columns: Columns) -> tuple[np.ndarray, ...]:
    """Papers, ratings, venues and year groups of the rated reviews with a venue, as arrays: the human side of
    :func:`panel_agreement`, or one run of :func:`self_agreement_by_venue`."""
    rated = _rated(columns)
    codes = columns.venue_year[rated]
    present = np.flatnonzero(np.bincount(codes, minlength=len(columns.venue_years))).tolist()
    year_groups = np.empty(max(len(columns.venue_years), 1), dtype=object)
    for code in present:  # once per venue-year, not per review
        year_groups[code] = year_group_of(*columns.venue_years[code])
    return columns.paper[rated], columns.rating[rated], _venues(columns)[rated], year_groups[codes]


def _agreement(group: Columns, human: "_Reference", is_reference: bool) -> dict:
    if is_reference:
        # A human group's own panels: grouped by venue, the ICLR row has no NeurIPS alpha.
        return alpha_by_venue(*(human.panels if group is human.columns else _rated_by_year_group(group)))
    model = _rated(group)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        panels = human.once("panels", lambda: HumanPanels(*human.panels))
        agreement = panels.agreement(human.papers_of(group)[model], group.rating[model])
    # Ratings of papers without a human panel cannot join one; say so in the results, not on stderr.
    notes = [str(w.message) for w in caught]
    for detail in agreement.values():
        detail["notes"] = notes
    return agreement


def evaluate_reviews(
    reviews: Dataset | ScoredReviews,
    reference: Dataset | ScoredReviews | None = None,
    group_by: Sequence[str] = DEFAULT_GROUP_BY,
    scale: str = "venue",
    workers: int | None = None,
    progress: bool = False,
    judge: "Judge | None" = None,
    prefilter: "EmbeddingPrefilter | None" = None,
    second_judge: "Judge | None" = None,
    meta_reviews: Dataset | None = None,
    citation_verifier: "Verifier | None" = None,
    per_review: Path | None = None,
) -> EvaluationResult:
    """Score every group of ``reviews`` against the human reference.

    ``reference`` holds the human reviews; without it, the records whose source
    is ``"human"`` are the reference. ``scale`` is ``"venue"`` (each review is
    parsed and its scores validated against its venue-year scale) or
    ``"generic"`` (1-10 rating, 1-5 confidence, for prompts that ask for it).
    With a ``judge`` (:class:`praib.llm.judge.Judge`), the judged metrics of
    :mod:`praib.evaluation.judged` are added to every group (math engagement, coverage of
    the human atomic items, target/aspect agreement, rejection rate), with the
    judge and its parameters recorded under ``"judge"``; ``prefilter`` skips
    coverage pairs whose embeddings are far apart (its savings and an audit of
    the skipped pairs are reported); ``second_judge`` re-judges the same inputs
    and reports the two judges' agreement under ``"second_judge"``; with
    ``meta_reviews`` (MetaReview records) the expert side of the target/aspect
    agreement is each paper's restructured meta-review instead of its human reviews.
    With a ``citation_verifier`` (:class:`praib.sources.verification.Verifier`), every formatted
    reference is checked and each group gets ``verified_citations`` (Table 1's "Cit.": the
    per-review share verified, and verified/total counts per review).
    With ``per_review`` (a folder), every input review's parsed fields, text metrics and (with a judge)
    judged per-review scores are written there (:mod:`praib.evaluation.per_review`, one part).
    ``reviews`` and ``reference`` may be :class:`~praib.evaluation.scored.ScoredReviews` a caller
    already has (parsed on ``scale``, with the ``group_by`` fields): a reference shared by many
    calls is then parsed and scored once.
    Returns an :class:`~praib.evaluation.results.EvaluationResult` with one group per source
    (``to_dict()`` gives the JSON ``praib evaluate`` writes).
    """
    def scored(records: Dataset | ScoredReviews, extra_fields: Sequence[str]) -> ScoredReviews:
        if isinstance(records, ScoredReviews):
            missing = [c for c in (*SCORED_FIELDS, *extra_fields) if c not in records.columns]
            if missing or records.scale != scale:
                raise ValueError(f"scored reviews on the {records.scale} scale without {', '.join(missing)} "
                                 f"cannot be evaluated on the {scale} scale grouped by {', '.join(group_by)}")
            return records
        return ScoredReviews.score(records, scale, extra_fields, workers=workers, progress=progress)

    fields = group_by if per_review is None else tuple(dict.fromkeys((*group_by, *PER_REVIEW_FIELDS)))
    table = scored(reviews, fields)
    n_input = len(table)
    partial = Partial(tuple(group_by), scale, separate_reference=reference is not None)
    group_by = partial.group_by
    partial.add(INPUT, 0, table.rows(), table.text_scores)
    taken = None
    if reference is not None:
        human = scored(reference, group_by)
        partial.add(REFERENCE, 0, human.rows(), human.text_scores)
        table = table.concat(human)
        # What is taken of the reference is the same for every evaluation against it (a leaderboard's submissions).
        taken = human.as_reference.setdefault((scale, group_by), {})
    entries = group_entries(partial, taken)
    columns, scores = table.columns, table.text_scores
    positions = np.arange(len(table))
    if reference is not None:
        reference_rows, input_rows = positions[n_input:], positions[:n_input]
    else:
        reference_rows = np.array([i for i in positions if columns["source"][i] == HUMAN_SOURCE], dtype=int)
        input_rows = positions
    # Where each entry's reviews are in the table, for the metrics that read their texts (in entry order).
    members: dict[tuple, list[int]] = defaultdict(list)
    for i in input_rows:
        members[_group_key({c: columns[c][i] for c in group_by}, group_by)].append(int(i))
    positions_of = [reference_rows if entry["key"] is None else np.asarray(members[entry["key"]], dtype=int)
                    for entry in entries]
    if citation_verifier is not None:
        from praib.sources.verification import check_texts, verification_summary

        checks = check_texts(columns["text"], citation_verifier, progress=progress)
        for entry, rows_array in zip(entries, positions_of):
            entry["verified_citations"] = verification_summary(
                [checks[i] if np.isfinite(scores["tkc"][i]) else None for i in rows_array])
    judgements = None
    if judge is not None:
        from praib.evaluation.judged import ReviewJudgements, group_judged_metrics

        judgements = ReviewJudgements(columns, judge, progress=progress)
        expert_labels = None
        if meta_reviews is not None:
            from praib.evaluation.judged import meta_review_expert_labels

            human_texts: dict = defaultdict(list)
            for i in reference_rows:
                if columns["text"][i]:
                    human_texts[columns["paper_id"][i]].append(columns["text"][i])
            expert_labels = meta_review_expert_labels(
                {row["paper_id"]: row["text"] for row in meta_reviews if row["text"]}, human_texts, judge,
                progress=progress)
        for entry, rows_array in zip(entries, positions_of):
            entry["judged"] = json_ready(group_judged_metrics(
                columns, rows_array.tolist(), reference_rows.tolist(), entry["is_reference"], judgements, judge,
                prefilter, expert_labels))
        second = None
        if second_judge is not None:
            from praib.evaluation.judged import second_judge_agreement

            second = json_ready(second_judge_agreement(columns, judgements, judge, second_judge,
                                                       reference_rows.tolist(), progress=progress))
        judged = JudgedRun(
            judge=judge.describe(),
            target_aspect_expert="meta_reviews" if meta_reviews is not None else "human_reviews",
            invalid_judge_answers=InvalidJudgeAnswers(
                math_engagement=sum(judgements.math[i] is None for i in judgements.rows),
                atomic_extraction=sum(not judgements.atomic[i].valid for i in judgements.rows
                                      if judgements.atomic[i] is not None),
                target_aspect_labels=judgements.invalid_labels,
                of_reviews=len(judgements.rows)),
            coverage_prefilter=None if prefilter is None else json_ready(
                {**prefilter.stats(), "audit": prefilter.audit(sample_size=50, seed=0)}),
            second_judge=second,
        )
    if per_review is not None:
        _write_per_review(per_review, table, input_rows, judgements)
    return result_of(partial, entries, None if judge is None else judged)


#: The review fields a per-review part holds beside those the metrics read (:data:`SCORED_FIELDS`).
PER_REVIEW_FIELDS = ("model", "prompt", "parse_reason")


def _write_per_review(folder: Path, table: ScoredReviews, rows: np.ndarray, judgements) -> None:
    """The input reviews at ``rows`` of ``table`` (and their judged scores) as the one part of ``folder``."""
    from praib.evaluation.per_review import PerReviewWriter

    items = {} if judgements is None else judgements.item_scores()
    writer = PerReviewWriter(folder, (0, 1), judged=tuple(items))
    try:
        columns = table.columns
        writer.write([{name: columns[name][i] for name in columns} for i in rows.tolist()],
                     {name: values[rows] for name, values in table.text_scores.items()},
                     {name: [scores[i] for i in rows.tolist()] for name, scores in items.items()})
    except BaseException:
        writer.discard()
        raise
    writer.close()


def result_of(partial: Partial, entries: list[dict] | None = None, judged: JudgedRun | None = None) -> EvaluationResult:
    """The evaluation result of everything ``partial`` folded (its group ``entries`` when computed already)."""
    with fewer_collections():  # the layout's lists and tuples of every review hold no cycles
        return _result_of(partial, entries, judged)


def _result_of(partial: Partial, entries: list[dict] | None, judged: JudgedRun | None) -> EvaluationResult:
    n_input, n_reference = partial.sizes()
    groups = [GroupResult(**{k: v for k, v in entry.items() if k != "key"})
              for entry in (group_entries(partial) if entries is None else entries)]
    return EvaluationResult(
        praib_version=__version__,
        group_by=list(partial.group_by),
        scale=partial.scale,
        n_reviews=n_input,
        n_reference_reviews=n_reference,
        groups=groups,
        judged=judged,
        prompt_self_agreement=prompt_self_agreement(partial),
        prompt_deltas=prompt_deltas(groups),
        ratios_to_human=ratios_to_human(groups),
        across_models=across_models(groups),
    )


def _difference(first: float | None, second: float | None) -> float | None:
    return None if first is None or second is None else first - second


def prompt_deltas(groups: Sequence[GroupResult]) -> list[PromptDelta]:
    """For every reviewer (a group's values but its prompt) with two or more prompts and every pair of them,
    the differences of the means of the registry's :func:`~praib.metrics.registry.compared_metrics` (PRAIB
    Table 12)."""
    by_reviewer: dict[str, dict[str, GroupResult]] = defaultdict(dict)
    for group in groups:
        if not group.is_reference and group.group.get("prompt") is not None:
            reviewer = _label({k: v for k, v in group.group.items() if k != "prompt"})
            by_reviewer[reviewer][str(group.group["prompt"])] = group
    return [PromptDelta(reviewer, [first, second],
                        {metric: _difference(prompts[first].value(metric), prompts[second].value(metric))
                         for metric in compared_metrics()})
            for reviewer, prompts in sorted(by_reviewer.items())
            for first, second in combinations(sorted(prompts), 2)]


def ratios_to_human(groups: Sequence[GroupResult]) -> RatiosToHuman | None:
    """Every model group's means of the registry's :func:`~praib.metrics.registry.compared_metrics` over the
    human reference's (PRAIB Table 13), and their mean and standard deviation over the model groups of each
    prompt."""
    reference = next((g for g in groups if g.is_reference), None)
    if reference is None:
        return None

    def ratio(group: GroupResult, metric: str) -> float | None:
        value, human = group.value(metric), reference.value(metric)
        return None if value is None or not human else value / human

    models = [g for g in groups if not g.is_reference]
    compared = compared_metrics()
    by_group = {g.label: {metric: ratio(g, metric) for metric in compared} for g in models}
    by_prompt: dict[str, list[GroupResult]] = defaultdict(list)
    for group in models:
        prompt = group.group.get("prompt")
        by_prompt["all" if prompt is None else str(prompt)].append(group)
    return RatiosToHuman(by_group, {
        prompt: {metric: Summary.from_dict(summarise(by_group[g.label][metric] for g in members))
                 for metric in compared}
        for prompt, members in sorted(by_prompt.items())})


def across_models(groups: Sequence[GroupResult]) -> AcrossModels | None:
    """Per prompt ("all" for groups without one), the mean and standard deviation over its model groups of each
    group's mean and standard deviation of every judged result of the registry's
    :data:`~praib.metrics.registry.SPREAD_OVER_MODELS` (PRAIB Tables 2, 29, 30);
    None where no model group has any of them (a run without a judge)."""
    def summary_of(group: GroupResult, path: tuple[str, ...]) -> Mapping:
        value = group.judged
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        return value if isinstance(value, Mapping) else {}

    by_prompt: dict[str, list[GroupResult]] = defaultdict(list)
    for group in groups:
        if not group.is_reference:
            prompt = group.group.get("prompt")
            by_prompt["all" if prompt is None else str(prompt)].append(group)
    spread = {prompt: {metric: {stat: Summary.from_dict(summarise(summary_of(g, path).get(stat) for g in members))
                                for stat in ("mean", "std")}
                       for metric, path in SPREAD_OVER_MODELS.items()}
              for prompt, members in sorted(by_prompt.items())}
    if not any(s.n for metrics in spread.values() for stats in metrics.values() for s in stats.values()):
        return None
    return AcrossModels(spread)


def prompt_self_agreement(partial: Partial) -> list[PromptSelfAgreement]:
    """For every reviewer (the values of a group but its prompt) with reviews under two or more prompts,
    and every pair of those prompts: :func:`self_agreement_by_venue` (PRAIB §7). Empty unless the
    groups are by prompt."""
    if "prompt" not in partial.group_by:
        return []
    at = partial.group_by.index("prompt")
    prompts_of: dict[tuple, dict] = defaultdict(dict)
    for key in partial.groups:
        if key[at] is not None and not partial.is_reference_group(key):
            prompts_of[key[:at] + key[at + 1:]][key[at]] = key
    found = []
    for reviewer in sorted(prompts_of, key=lambda k: tuple(str(v) for v in k)):
        keys = prompts_of[reviewer]
        ratings = {prompt: _rated_by_year_group(_kept_on_scale(partial.columns(partial.groups[key]), partial.scale)[0])
                   for prompt, key in keys.items()}
        label = _label(dict(zip([c for c in partial.group_by if c != "prompt"], reviewer)))
        for first, second in combinations(sorted(keys, key=str), 2):
            by_venue = self_agreement_by_venue(*ratings[first], *ratings[second])
            found.append(PromptSelfAgreement(label, [str(first), str(second)],
                                             {venue: v["alpha"] for venue, v in by_venue.items()},
                                             {venue: v["per_year"] for venue, v in by_venue.items()}))
    return found


def group_entries(partial: Partial, taken: dict | None = None) -> list[dict]:
    """Every group's entry (as :class:`GroupResult` fields, plus ``key``: the group's values, None for
    a reference of its own), from the columns ``partial`` kept: the reference first, then the groups
    by label. What the readers of a streamed evaluation noted, and the venue-years no scale file knows
    (:func:`unknown_scales`), are said in one warning each. ``taken``: where what is taken of a reference of its
    own (what every group is compared with, and its entry) is kept for the next call with the same reference,
    and taken from when a call before kept it there."""
    for source, notes in partial.read_notes.items():
        for line in notes.warnings(source, "review"):
            logger.warning("%s", line)
    unknown = unknown_scales(partial.venue_years.values, partial.scale)
    if unknown:
        logger.warning("%s", unknown)
    if taken is None or "human" not in taken:
        reference_chunks = partial.reference_chunks()
        reference = partial.columns(reference_chunks)
        kept, out_of_scale = _kept_on_scale(reference, partial.scale)
        # What every group is compared with, gathered once: the distributions leave scores off the scale out
        # themselves (and count them per venue-year); the panels and the gaps take the scores on the scale.
        human = _Reference(kept, {kind: _by_venue_year(reference, kind) for kind in ("rating", "confidence")},
                           _rated_by_year_group(kept) if len(reference) else None, reference, out_of_scale)
        reference_entry = None
        if partial.separate_reference and len(reference):
            key = {"source": HUMAN_SOURCE, **{c: None for c in partial.group_by if c != "source"}}
            reference_entry = {**_group_entry(key, reference, partial.text_scores(reference_chunks), human, True,
                                              partial.scale), "key": None}
        if taken is not None:
            taken.update(human=human, entry=reference_entry)
    else:
        human, reference_entry = taken["human"], taken["entry"]
        reference = human.given
    entries = [] if reference_entry is None else [dict(reference_entry)]  # a copy: a caller adds to its entries
    human_groups = [key for key in partial.groups if partial.is_reference_group(key)]
    for key in sorted(partial.groups, key=lambda k: tuple("" if v is None else str(v) for v in k)):
        chunks = partial.groups[key]
        # The one human group of an input that is its own reference holds the reference's reviews, in its order.
        columns = reference if human_groups == [key] else partial.columns(chunks)
        entry = _group_entry(dict(zip(partial.group_by, key)), columns, partial.text_scores(chunks),
                             human, partial.is_reference_group(key), partial.scale)
        entries.append({**entry, "key": key})
    entries.sort(key=lambda e: (not e["is_reference"], e["label"]))
    return entries


@dataclass(frozen=True)
class _Reference:
    """The human reference's columns (scores off their scale left out, :func:`on_scale`), its scores per
    venue-year by kind, and its panels (None: no reference); what the groups are compared with is taken from
    them once, for all groups (:meth:`once`)."""

    columns: Columns
    by_venue_year: dict[str, dict[tuple, tuple[np.ndarray, np.ndarray]]]
    panels: tuple[np.ndarray, ...] | None
    #: The columns as given (scores off their scale kept) and how many scores of each kind were off it: the
    #: reference's own group entry takes them as they are.
    given: Columns
    out_of_scale: dict[str, int]
    _taken: dict = field(default_factory=dict)

    def once(self, key: Hashable, take: Callable[[], Any]) -> Any:
        """``take()``, computed the first time ``key`` is asked for."""
        if key not in self._taken:
            self._taken[key] = take()
        return self._taken[key]

    def on_scale(self, kind: str, venue_year: tuple, decision: str | None, values: Sequence[int]) -> tuple[bool, dict]:
        """Whether the reference has ``kind`` scores of ``venue_year`` (of papers of ``decision``, when given),
        and how many of them are each value of the scale ``values``."""
        def take() -> tuple[bool, dict]:
            scores, decisions = self.by_venue_year[kind].get(venue_year, (np.empty(0), np.empty(0, dtype=np.int8)))
            if decision is not None:
                scores = scores[decisions == DECISIONS.index(decision)]
            return bool(len(scores)), _counts_on(scores, values)

        return self.once(("on scale", kind, venue_year, decision, tuple(values)), take)

    def papers_of(self, columns: Columns) -> np.ndarray:
        """The papers of ``columns`` as this reference's columns number them: the same numbers where they come from
        the same partial, else each looked up by its id (-1: a paper the reference has no review of), as when a
        reference taken once is compared with each submission of a leaderboard."""
        if columns.paper_ids is self.given.paper_ids:
            return columns.paper
        place = self.once("paper places", lambda: dict(zip(self.given.paper_ids, range(len(self.given.paper_ids)))))
        ids = columns.paper_ids
        return np.fromiter((place.get(ids[paper], -1) for paper in columns.paper.tolist()), dtype=np.intp,
                           count=len(columns))


def _group_entry(key: dict, columns: Columns, scores: dict, human: _Reference, is_reference: bool,
                 scale: str) -> dict:
    n = len(columns)
    with_text = int(np.isfinite(scores["tkc"]).sum())
    if columns is human.given:  # the reference's own entry: what was taken of it for every group
        kept, out_of_scale, given = human.columns, human.out_of_scale, human.by_venue_year
    else:
        kept, out_of_scale = _kept_on_scale(columns, scale)
        given = {kind: _by_venue_year(columns, kind) for kind in ("rating", "confidence")}
    agreement = _agreement(kept, human, is_reference) if human.panels is not None else {}
    alpha_key = "alpha" if is_reference else "alpha_with_model"
    distributions = {kind: json_ready(_distributions(given[kind], human, kind, scale, is_reference))
                     for kind in ("rating", "confidence")}
    pooled = {kind: json_ready(_pooled(given[kind], human, kind, scale, is_reference))
              for kind in ("rating", "confidence")}
    entry = {
        "group": key,
        "label": _label(key),
        "is_reference": is_reference,
        "n_reviews": n,
        "n_unparsed": int(np.count_nonzero(columns.status == STATUSES.index(PARSE_FAILED))),
        "n_partially_parsed": int(np.count_nonzero(columns.status == STATUSES.index(PARSE_PARTIAL))),
        "n_out_of_scale": out_of_scale,
        "text_metrics": text_metric_summary(scores),
        "krippendorff_alpha": json_ready({venue: detail.get(alpha_key) for venue, detail in agreement.items()}),
        "krippendorff": json_ready(agreement),
        "rating_distribution": distributions["rating"],
        "confidence_distribution": distributions["confidence"],
        "pooled_distributions": pooled,
        "confidence_gap": None if is_reference or human.panels is None
        else json_ready(_gap(kept, human, "confidence")),
        "skipped": Skipped(
            text_metrics=n - with_text,
            rating=int(np.count_nonzero(np.isnan(columns.rating))),
            confidence=int(np.count_nonzero(np.isnan(columns.confidence))),
        ),
    }
    return entry
