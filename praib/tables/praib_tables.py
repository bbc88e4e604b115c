"""PRAIB's tables (the behaviour benchmark), laid out from ``praib evaluate`` and ``praib leaderboard eras`` results.

Rows are the groups of an evaluation: the human reference, then one row per model (per model and
prompt where the table compares prompts). A table of one prompt (Table 1: the extended prompt) takes
the groups of that prompt when the evaluation was grouped by prompt, and says so.
"""

from __future__ import annotations

from typing import Any, Sequence

from praib.evaluation.table import out_of_scale_note
from praib.metrics.registry import compared_metrics, label_of
from praib.tables.layout import Cell, Table, heading, joined, label
from praib.tables.registry import Numbers, Result, TableSpec, table

PAPER = "PRAIB"
EXTENDED = "extended"
JUDGE_NEEDED = "add `--judge MODEL` to `praib evaluate` (math engagement, atomic items, coverage)"


class Groups:
    """The groups of one ``praib evaluate`` result, with the JSON path of each."""

    def __init__(self, result: Result):
        self.numbers = Numbers(result)
        self.result = result
        self.all = list(enumerate(result.data["groups"]))

    @property
    def reference(self) -> tuple[int, dict] | None:
        return next(((i, g) for i, g in self.all if g["is_reference"]), None)

    def models(self, prompt: str | None = None) -> list[tuple[int, dict]]:
        """The model groups, of ``prompt`` only when given and the groups have prompts."""
        found = [(i, g) for i, g in self.all if not g["is_reference"]]
        if prompt is not None and any(g["group"].get("prompt") == prompt for _, g in found):
            found = [(i, g) for i, g in found if g["group"].get("prompt") == prompt]
        return found

    def named(self, prompt: str | None = EXTENDED, reference: bool = False) -> list[tuple[int, dict, str]]:
        """The model groups of ``prompt`` (:meth:`models`), after the human reference when ``reference``, each
        with its row name: "Human", or the model's, with its prompt where the rows' prompts differ."""
        models = self.models(prompt)
        with_prompt = _prompts_differ(models)
        rows = ([self.reference] if reference and self.reference else []) + models
        return [(index, group, "Human" if group["is_reference"] else _name(group, with_prompt))
                for index, group in rows]

    def cell(self, index: int, *path: Any, **printed) -> Cell:
        """The number at ``path`` of group ``index``; ``printed``: the ``metric`` it is a value of, or the paper's
        ``digits``, and ``signed`` (:meth:`Numbers.cell`)."""
        return self.numbers.cell("groups", index, *path, **printed)

    def venues(self) -> list[str]:
        return sorted({venue for _, g in self.all for venue in (g.get("krippendorff_alpha") or {})})

    def judged(self) -> bool:
        return any(g.get("math_engagement") is not None for _, g in self.all)

    def out_of_scale_notes(self) -> list[str]:
        """The note counting the ratings and confidences off their scale, which α, the distributions and the
        gaps left out; none when there are none (or the result predates the count)."""
        groups = [g for _, g in self.all]
        return [out_of_scale_note(groups)] if any(sum((g.get("n_out_of_scale") or {}).values()) for g in groups) \
            else []


def model_name(group: dict) -> str:
    return str(group["group"].get("model") or group["group"].get("source") or group["label"])


def prompt_name(group: dict) -> str:
    prompt = group["group"].get("prompt")
    return str(prompt).replace("_", " ").capitalize() if prompt else "—"


def _first(results: Sequence[Result]) -> Groups:
    return Groups(results[0])


def _one_prompt_note(groups: Groups, prompt: str) -> list[str]:
    if any(g["group"].get("prompt") == prompt for _, g in groups.models()):
        return [f"Model rows: the `{prompt}` prompt."]
    return [f"The evaluation has no `{prompt}` prompt group: every model group is shown."]


def _name(group: dict, with_prompt: bool) -> str:
    return f"{model_name(group)} ({prompt_name(group)})" if with_prompt else model_name(group)


def _prompts_differ(rows: list[tuple[int, dict]]) -> bool:
    return len({g["group"].get("prompt") for _, g in rows}) > 1


#: Table 1's column groups and columns, shared by its ``praib evaluate`` and ``praib leaderboard run`` versions.
TABLE_1_GROUPS = [("", 1), ("Read.", 4), ("Spec.", 3), ("Agree.", 1), ("Math C.", 2)]
TABLE_1_NOTE = ("Cit.: mean verified / mean total references per review. α_r: ordinal Krippendorff's alpha per "
                "venue, of the human panel (Human) or of the panel with the model added.")


def table_1_header(venues: Sequence[str]) -> list[str]:
    return ["Source", "TKC ↓", "TTR ↑", "FRE ↑", "FKG ↓", "Cit.", "Xref.", "Math",
            f"α_r ({'/'.join(venues) or 'venue'})", "P(+|+)", "P(+|−)"]


@table("praib-1", PAPER, 1, "Benchmark results for the extended prompt (human baseline and each model)", "evaluate")
def table_1(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    venues = groups.venues()
    out = spec.new(sources=[groups.result.path], header_groups=TABLE_1_GROUPS, header=table_1_header(venues))
    rows = groups.named(reference=True)
    for index, group, name in rows:
        is_human = group["is_reference"]
        cit = joined(groups.cell(index, "verified_citations", "verified", "mean", digits=3),  # PRAIB Table 1
                     groups.cell(index, "citations", "mean", metric="citations"))
        # The reference group's entry holds the panel's own alpha; a model group's, the panel with the model.
        alpha_key = "alpha" if is_human else "alpha_with_model"
        out.rows.append([
            label(name),
            *(groups.cell(index, metric, "mean", metric=metric) for metric in ("tkc", "ttr", "fre", "fkg")),
            cit, groups.cell(index, "xref", "mean", metric="xref"),
            groups.cell(index, "math_engagement", "mean", metric="math_engagement"),
            joined(*(groups.cell(index, "krippendorff", venue, alpha_key, metric="krippendorff_alpha")
                     for venue in venues)),
            label("—") if is_human else groups.cell(index, "math_engagement", "p_pos_given_pos",
                                                    metric="math_p_pos_given_pos"),
            label("—") if is_human else groups.cell(index, "math_engagement", "p_pos_given_neg",
                                                    metric="math_p_pos_given_neg"),
        ])
    out.notes = _one_prompt_note(groups, EXTENDED) + [
        f"{TABLE_1_NOTE} P(+|+), P(+|−): over all venues together (the paper splits them by venue; group by "
        "venue to get that split)."] + groups.out_of_scale_notes()
    if not any(g.get("verified_citations") for _, g, _ in rows):
        out.needs.append("Cit.'s verified count: add `--verify-citations` to `praib evaluate`")
    if not groups.judged():
        out.needs.append(f"Math, P(+|+), P(+|−): {JUDGE_NEEDED}")
    return out


@table("praib-9", PAPER, 9, "Krippendorff's ordinal alpha of the rating, human panel with and without the model "
       "(extended prompt), per venue and year", "evaluate")
def table_9(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    models = groups.models(EXTENDED)
    with_prompt = _prompts_differ(models)
    out = spec.new(sources=[groups.result.path], header=["Conference", "Year", "α_H", "α_H+L", "Δ"])
    for index, group in models:
        rows = []
        for venue, detail in sorted((group.get("krippendorff") or {}).items()):
            for year in sorted(detail.get("per_year") or {}):
                path = ("krippendorff", venue, "per_year", year)
                rows.append([label(venue), label(year),  # α with three decimals, not Table 1's two:
                             groups.cell(index, *path, "alpha_human", digits=3),  # PRAIB Table 9
                             groups.cell(index, *path, "alpha_with_model", digits=3),  # PRAIB Table 9
                             groups.cell(index, *path, "delta", digits=3, signed=True)])  # PRAIB Table 9
        if rows:  # the model's italic heading, with its prompt as the records name it where the prompts differ
            prompt = group["group"].get("prompt")
            name = f"{model_name(group)} ({prompt or '—'})" if with_prompt else model_name(group)
            out.rows += [heading(name, len(out.header)), *rows]
    out.notes = _one_prompt_note(groups, EXTENDED) + [
        "α_H: the human panel alone; α_H+L: with the model's rating added as one more annotator; "
        "Δ = α_H+L − α_H. Year: the year group praib pools (PRAIB pools early ICLR years)."] \
        + groups.out_of_scale_notes()
    if not out.rows:
        out.needs.append("every cell: human and model ratings of the same papers with venue and year")
    return out


def _mean_sd(groups: Groups, index: int, *path: Any, **printed) -> Cell:
    return joined(groups.cell(index, *path, "mean", **printed), groups.cell(index, *path, "std", **printed),
                  separator=" ± ")


@table("praib-11", PAPER, 11, "Metrics by model and prompt (mean ± SD)", "evaluate")
def table_11(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    out = spec.new(sources=[groups.result.path],
                header=["Model", "Prompt", "Tokens", "TTR", "FRE", "Xref.", "Citations", "Verified", "Math"])
    rows = ([groups.reference] if groups.reference else []) + groups.models()
    for index, group in rows:
        out.rows.append([
            label("Human" if group["is_reference"] else model_name(group)),
            label("Human" if group["is_reference"] else prompt_name(group)),
            _mean_sd(groups, index, "tkc", digits=2), _mean_sd(groups, index, "ttr", metric="ttr"),  # PRAIB Table 11
            _mean_sd(groups, index, "fre", digits=2), _mean_sd(groups, index, "xref", metric="xref"),  # PRAIB Table 11
            _mean_sd(groups, index, "citations", metric="citations"),
            _mean_sd(groups, index, "verified_citations", "verified", digits=2),  # PRAIB Table 11
            _mean_sd(groups, index, "math_engagement", digits=2),  # PRAIB Table 11
        ])
    out.notes = ["Each cell: mean ± SD (sample SD, ddof=1) over the group's reviews."]
    if not any(g.get("verified_citations") for _, g in rows):
        out.needs.append("Verified: add `--verify-citations` to `praib evaluate`")
    if not groups.judged():
        out.needs.append(f"Math: {JUDGE_NEEDED}")
    return out


@table("praib-14", PAPER, 14, "Mean confidence difference (model − human median of the paper) by conference, "
       "model and prompt", "evaluate")
def table_14(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    venues = sorted({venue for _, g in groups.models() for venue in ((g.get("confidence_gap") or {}).get("by_venue")
                                                                   or {})})
    out = spec.new(sources=[groups.result.path],
                header=["Model", "Prompt", *venues])
    for index, group in sorted(groups.models(), key=lambda item: (model_name(item[1]), prompt_name(item[1]))):
        out.rows.append([label(model_name(group)), label(prompt_name(group)),
                         *(groups.cell(index, "confidence_gap", "by_venue", venue, "mean", metric="confidence_gap",
                                       signed=True)
                           for venue in venues)])
    out.notes = ["Δ = the model's confidence − the median human confidence of the same paper, averaged over the "
                 "model's reviews of papers with a human confidence; positive: over-confident."] \
        + groups.out_of_scale_notes()
    if not venues:
        out.needs.append("every cell: model and human confidences of the same papers")
    return out


def _distribution_table(spec: TableSpec, results: Sequence[Result], kind: str, human: bool = True) -> Table:
    """Tables 15 and 16: a score's distribution per model, prompts side by side (``a / b``) in one cell, after the
    human one when ``human``."""
    groups = _first(results)
    by_model: dict[str, list[tuple[int, dict]]] = {}
    for index, group in groups.models():
        by_model.setdefault(model_name(group), []).append((index, group))
    reference = groups.reference if human else None
    values = sorted({int(v) for _, g in groups.all for v in
                     ((g.get("pooled_distributions") or {}).get(kind, {}).get("values") or [])})
    header = ["Score", *(["Human"] if reference else []), *by_model]
    out = spec.new(header=header, sources=[groups.result.path])
    for value in values:
        row = [label(str(value))]
        if reference:
            row.append(groups.cell(reference[0], *_pooled_shares(groups, reference[0], kind), str(value),
                                   digits=3))  # PRAIB Tables 15, 16: shares
        for members in by_model.values():
            row.append(joined(*(groups.cell(index, *_pooled_shares(groups, index, kind), str(value),
                                            digits=3)  # PRAIB Tables 15, 16: shares
                                for index, _ in members)))
        out.rows.append(row)
    prompts = {name: " / ".join(prompt_name(g) for _, g in members) for name, members in by_model.items()}
    out.notes = [f"Shares of the {kind} scores pooled over every venue-year of the group; each column sums to 1. "
                 "Prompts within a cell: " + "; ".join(f"{name}: {order}" for name, order in prompts.items()) + "."]
    out.notes += groups.out_of_scale_notes()
    if not values:
        out.needs.append(f"every cell: reviews with a {kind}")
        return out
    shown = ([("Human", reference[0], "the human reviews")] if reference else []) + [
        (_name(group, bool(group["group"].get("prompt"))), index, "its reviews")
        for members in by_model.values() for index, group in members]
    for name, index, whose in shown:
        if groups.numbers.get("groups", index, *_pooled_shares(groups, index, kind)) is None:
            out.needs.append(f"{name}: {whose} with a {kind}")
    return out


def _pooled_shares(groups: Groups, index: int, kind: str) -> tuple[str, ...]:
    """The path of a group's pooled ``kind`` shares: ``model`` beside the human shares it was compared with,
    else ``distribution`` (the reference, and a model group whose reference has no such scores)."""
    entry = groups.numbers.get("groups", index, "pooled_distributions", kind) or {}
    return ("pooled_distributions", kind, "model" if "model" in entry else "distribution")


@table("praib-15", PAPER, 15, "Normalised confidence distribution per model and prompt, and the human one",
       "evaluate")
def table_15(spec: TableSpec, results: Sequence[Result]) -> Table:
    return _distribution_table(spec, results, "confidence")


@table("praib-16", PAPER, 16, "Normalised rating distributions per model and prompt", "evaluate")
def table_16(spec: TableSpec, results: Sequence[Result]) -> Table:
    return _distribution_table(spec, results, "rating", human=False)   # the paper's Table 17 gives the human one


@table("praib-17", PAPER, 17, "Rating distribution differences, model (extended prompt) − human, in percentage "
       "points", "evaluate")
def table_17(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    models = groups.named()
    reference = groups.reference
    values = sorted({int(v) for _, g in groups.all for v in
                     ((g.get("pooled_distributions") or {}).get("rating", {}).get("values") or [])})
    out = spec.new(sources=[groups.result.path],
                header=["Score", "Human (%)", *(name for _, _, name in models)])
    for value in values:
        human = (Cell(None) if reference is None else
                 _percent(groups, reference[0], "pooled_distributions", "rating", "distribution", str(value)))
        out.rows.append([label(str(value)), human,
                         *(groups.cell(index, "pooled_distributions", "rating", "diff_pp", str(value),
                                       digits=2,  # PRAIB Table 17: percentage points
                                       signed=True) for index, _, _ in models)])
    out.rows.append([label("Σ|Δ|"), label("—"),
                     *(groups.cell(index, "pooled_distributions", "rating", "sum_abs_diff_pp",
                                   digits=1)  # PRAIB Table 17
                       for index, _, _ in models)])
    out.notes = _one_prompt_note(groups, EXTENDED) + [
        "Ratings pooled over venues and years. Σ|Δ|: the sum of the absolute differences in percentage points "
        "(the paper's total-variation figure; praib's `total_variation` is half of it on a 0-1 scale)."] \
        + groups.out_of_scale_notes()
    return out


def _percent(groups: Groups, index: int, *path: Any) -> Cell:
    """A share printed in percent: the JSON holds the share, the cell shows it ×100."""
    cell = groups.cell(index, *path)
    return Cell(cell.value, cell.source, digits=2, scale=100)  # PRAIB Table 17: percent with two decimals


#: Where PRAIB Tables 12 and 13 print the compared metrics (:func:`praib.metrics.registry.compared_metrics`)
#: otherwise than the registry: Table 12's decimals of the differences, Table 13's names.
_TABLE_12_DIGITS = {"tkc": 1, "math_engagement": 2}
_TABLE_13_LABELS = {"tkc": "Tokens"}


@table("praib-12", PAPER, 12, "Change in mean metrics between prompts (extended − guidelines) per model", "evaluate")
def table_12(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    deltas = list(enumerate(groups.result.data.get("prompt_deltas") or []))
    other_pairs = any(d["prompts"] != [EXTENDED, "guidelines"] for _, d in deltas)
    compared = compared_metrics()
    out = spec.new(header=["Model", *(["Prompts"] if other_pairs else []), *(f"Δ {label_of(m)}" for m in compared)],
                   sources=[groups.result.path])
    for index, delta in deltas:
        out.rows.append([label(delta["reviewer"]), *([label(" − ".join(delta["prompts"]))] if other_pairs else []),
                         *(groups.numbers.cell("prompt_deltas", index, "delta", metric, metric=metric,
                                               digits=_TABLE_12_DIGITS.get(metric), signed=True)  # PRAIB Table 12
                           for metric in compared)])
    out.notes = ["Δ = the model's mean under the first prompt − its mean under the second (names in sorted order: "
                 "extended − guidelines, as in the paper)."]
    if not deltas:
        out.needs.append("every cell: a model with reviews under two prompts, evaluated grouped by prompt "
                         "(`praib evaluate`'s default grouping)")
    if not groups.judged():
        out.needs.append(f"Δ Math: {JUDGE_NEEDED}")
    return out


@table("praib-13", PAPER, 13, "Mean metrics of each model (extended prompt) as ratios to the human baseline",
       "evaluate")
def table_13(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    ratios = groups.result.data.get("ratios_to_human") or {}
    models = groups.named()
    compared = compared_metrics()
    out = spec.new(header=["Model", *(_TABLE_13_LABELS.get(m, label_of(m)) for m in compared)],
                   sources=[groups.result.path])
    for _, group, name in models:
        out.rows.append([label(name),
                         *(groups.numbers.cell("ratios_to_human", "by_group", group["label"], metric,
                                               digits=2)  # PRAIB Table 13: ratios with two decimals
                           for metric in compared)])
    prompts = [p for p in (EXTENDED, "all") if p in (ratios.get("by_prompt") or {})]
    if prompts:
        by_prompt = ("ratios_to_human", "by_prompt", prompts[0])
        out.rows.append([label("Mean ± Std"), *(
            joined(groups.numbers.cell(*by_prompt, metric, "mean", digits=2),  # PRAIB Table 13
                   groups.numbers.cell(*by_prompt, metric, "std", digits=2),  # PRAIB Table 13
                   separator=" ± ") for metric in compared)])
    out.notes = _one_prompt_note(groups, EXTENDED) + [
        "Each cell: the model's mean over the human reference's mean; the last row: mean ± SD (ddof=1) over the "
        "models."]
    if not ratios:
        out.needs.append("every cell: human reviews in the evaluation (the reference)")
    if not groups.judged():
        out.needs.append(f"Math: {JUDGE_NEEDED}")
    return out


_ATOMIC = ("atomic", "statistics")


def _judged_needs(out: Table, groups: Groups) -> Table:
    if not groups.judged():
        out.needs.append(f"every cell: {JUDGE_NEEDED}")
    return out


@table("praib-21", PAPER, 21, "Descriptive statistics of the atomic items of the human reviews", "evaluate")
def table_21(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    out = spec.new(header=["Metric", "Mean", "Std", "Min", "Q1", "Median", "Q3", "Max"], sources=[groups.result.path])
    reference = groups.reference
    blocks = (("Component counts", (("Atomic weaknesses", "weakness_count"), ("Atomic strengths", "strength_count"),
                                    ("Total atomic points", "total_count"))),
              ("Text length (chars)", (("Weakness descriptions", "weakness_chars"),
                                       ("Strength descriptions", "strength_chars"),
                                       ("Total review length", "total_chars"))))
    for block, rows in blocks:
        out.rows.append([label(block)] + [label("")] * 7)
        for name, key in rows:
            out.rows.append([label(name), *(
                Cell(None) if reference is None else
                groups.cell(reference[0], *_ATOMIC, "all", key, stat, digits=2)  # PRAIB Table 21
                for stat in ("mean", "std", "min", "q1", "median", "q3", "max"))])
    out.notes = ["Per human review: the number of atomic weaknesses, strengths and both, and the characters of "
                 "their items; quartiles interpolate linearly between order statistics (as pandas' describe)."]
    if reference is None:
        out.needs.append("every cell: human reviews in the evaluation (the reference)")
    return _judged_needs(out, groups)


#: PRAIB Tables 22 and 24: mean counts with two decimals, mean lengths in whole characters.
_COUNTS_AND_LENGTHS = (("weakness_count", 2), ("strength_count", 2), ("weakness_chars", 0), ("strength_chars", 0))


@table("praib-22", PAPER, 22, "Mean atomic counts and section lengths of the human reviews by decision and "
       "conference", "evaluate")
def table_22(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    out = spec.new(header=["Split", "Group", "W count", "S count", "Len W", "Len S"], sources=[groups.result.path])
    reference = groups.reference
    if reference is not None:
        index, group = reference
        statistics = ((group.get("atomic") or {}).get("statistics") or {})
        splits = [("Decision", name.capitalize(), (name,)) for name in ("accept", "reject")]
        splits += [("Conference", venue, ("by_venue", venue)) for venue in sorted(statistics.get("by_venue") or {})]
        for split, name, path in splits:
            out.rows.append([label(split), label(name), *(
                groups.cell(index, *_ATOMIC, *path, key, "mean", digits=digits)  # PRAIB Table 22
                for key, digits in _COUNTS_AND_LENGTHS)])
    out.notes = ["W = weaknesses, S = strengths; lengths in characters (the sum over a review's items)."]
    return _judged_needs(out, groups)


_COUNT_COLUMNS = (("W count", "weakness_count"), ("S count", "strength_count"), ("Total count", "total_count"),
                  ("Len W (chars)", "weakness_chars"), ("Len S (chars)", "strength_chars"),
                  ("Total len (chars)", "total_chars"))


@table("praib-23", PAPER, 23, "Mean (± std) atomic counts and section lengths of the model reviews (extended "
       "prompt) and the human baseline", "evaluate")
def table_23(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    out = spec.new(header=["Source", *(stat for _ in _COUNT_COLUMNS for stat in ("Mean", "Std"))],
                   header_groups=[("", 1), *((name, 2) for name, _ in _COUNT_COLUMNS)], sources=[groups.result.path])
    for index, _, name in groups.named(reference=True):
        out.rows.append([label(name), *(
            groups.cell(index, *_ATOMIC, "all", key, stat, digits=2 if "count" in key else 0)  # PRAIB Table 23
            for _, key in _COUNT_COLUMNS for stat in ("mean", "std"))])
    out.notes = _one_prompt_note(groups, EXTENDED) + ["Per review; lengths in characters."]
    return _judged_needs(out, groups)


@table("praib-24", PAPER, 24, "Mean atomic counts and section lengths of the model reviews by paper decision",
       "evaluate")
def table_24(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    models = groups.named()
    out = spec.new(header=["Model", "Decision", "W count", "S count", "Len W", "Len S"], sources=[groups.result.path])
    for index, _, name in models:
        for decision in ("accept", "reject"):
            out.rows.append([label(name), label(decision.capitalize()), *(
                groups.cell(index, *_ATOMIC, decision, key, "mean", digits=digits)  # PRAIB Table 24
                for key, digits in _COUNTS_AND_LENGTHS)])
    out.notes = _one_prompt_note(groups, EXTENDED) + ["Lengths in characters."]
    return _judged_needs(out, groups)


_SIDES = (("W", "weaknesses"), ("S", "strengths"), ("Total", "total"))


@table("praib-25", PAPER, 25, "Ratio of model to human atomic counts per matched pair (mean / median / std)",
       "evaluate")
def table_25(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    models = groups.named()
    out = spec.new(header=["Model", *(stat for _ in _SIDES for stat in ("Mean", "Med", "Std"))],
                   header_groups=[("", 1), *((f"Ratio {name}", 3) for name, _ in _SIDES)],
                   sources=[groups.result.path])
    for index, _, name in models:
        out.rows.append([label(name), *(
            groups.cell(index, "atomic", "paired_with_human", side, "ratio", stat, digits=2)  # PRAIB Table 25
            for _, side in _SIDES for stat in ("mean", "median", "std"))])
    out.notes = _one_prompt_note(groups, EXTENDED) + [
        "A matched pair: a model review and a human review of the same paper (every such pair; one per human "
        "review when the model wrote one review per paper, as in the paper). Pairs whose human count is 0 have "
        "no ratio."]
    return _judged_needs(out, groups)


@table("praib-26", PAPER, 26, "Signed difference in atomic counts, model − human (mean and median)", "evaluate")
def table_26(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    models = groups.named()
    sides = (("Weaknesses", "weaknesses"), ("Strengths", "strengths"))
    out = spec.new(header=["Model", *(stat for _ in sides for stat in ("Δ Mean", "Δ Median"))],
                   header_groups=[("", 1), *((name, 2) for name, _ in sides)], sources=[groups.result.path])
    for index, _, name in models:
        out.rows.append([label(name), *(
            groups.cell(index, "atomic", "paired_with_human", side, "difference", stat, digits=2,  # PRAIB Table 26
                        signed=True)
            for _, side in sides for stat in ("mean", "median"))])
    out.notes = _one_prompt_note(groups, EXTENDED) + ["Over the matched pairs of Table 25; positive: the model "
                                                      "writes more items."]
    return _judged_needs(out, groups)


@table("praib-27", PAPER, 27, "Per-review weakness-to-strength ratio (reviews with at least one strength)",
       "evaluate")
def table_27(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    out = spec.new(header=["Source", "Mean", "Median", "Std", "n"], sources=[groups.result.path])
    for index, _, name in groups.named(reference=True):
        out.rows.append([label(name),
                         *(groups.cell(index, *_ATOMIC, "all", "ws_ratio", stat, digits=2)  # PRAIB Table 27
                           for stat in ("mean", "median", "std")),
                         groups.cell(index, *_ATOMIC, "all", "ws_ratio", "n", digits=0)])  # PRAIB Table 27
    out.notes = _one_prompt_note(groups, EXTENDED) + ["W/S per review; values below 1: more strengths than "
                                                      "weaknesses."]
    return _judged_needs(out, groups)


@table("praib-28", PAPER, 28, "Intra-review overlap of atomic items (ROUGE-L and containment)", "evaluate")
def table_28(spec: TableSpec, results: Sequence[Result]) -> Table:
    groups = _first(results)
    sides = (("Weaknesses", "weaknesses"), ("Strengths", "strengths"))
    out = spec.new(header=["Source", *(stat for _ in sides for stat in ("ROUGE-L", "Contained"))],
                   header_groups=[("", 1), *((name, 2) for name, _ in sides)], sources=[groups.result.path])
    for index, _, name in groups.named(reference=True):
        out.rows.append([label(name), *(
            groups.cell(index, "atomic", "overlap", side, key, "mean", digits=3)  # PRAIB Table 28
            for _, side in sides for key in ("rouge_l", "containment"))])
    out.notes = _one_prompt_note(groups, EXTENDED) + [
        "ROUGE-L: mean over a review's pairs of items of their ROUGE-L F-measure; Contained: the share of a "
        "review's items whose every token appears in another item of the same review; reviews with two or more "
        "items, averaged."]
    return _judged_needs(out, groups)
