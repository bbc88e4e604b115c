"""PRAIB's dataset tables (Tables 3, 7 and 8), laid out from the ``statistics.json`` of ``praib data build``.

Table 3 counts what was collected (every paper of a venue-year, by decision, and its reviews): the statistics of
a build of ``praib data collect``'s records. Table 7 counts the human reviews of the sample (a build of ``praib
data sample``'s folder), Table 8 the model-written reviews of the sample's papers per model and prompt (a build
with ``--generated-reviews``). Years are the venues' year groups: ICLR up to 2018 is one, "<=2018".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from praib.sources.dataset_statistics import year_order
from praib.tables.layout import Table, joined, label
from praib.tables.registry import Numbers, Result, TableSpec, table

PAPER = "PRAIB"
KIND = "data-statistics"
#: Table 3's rows of paper counts (the statistics' names) and how the paper names them.
PAPER_ROWS = (("papers", "Papers"), ("accepted", "Accept"), ("rejected", "Reject"), ("withdrawn", "Withdrawn"))
#: The paper's prompt order within a Table 8 cell (EXT / GUIDE / OR); other prompts follow in name order.
PROMPT_ORDER = ("extended", "guidelines", "open_reviewer")
ABSENT = "-"  # a venue without that year, as the paper prints it


def _venues(result: Result) -> dict:
    return result.data.get("venues") or {}


def _built(result: Result, config: str) -> bool:
    return config in (result.data.get("configs") or [])


@table("praib-3", PAPER, 3, "Dataset statistics for ICLR and NeurIPS: papers by decision and reviews per year",
       KIND)
def table_3(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    numbers = Numbers(result)
    venues = _venues(result)
    years = sorted({group for entry in venues.values() for group in entry["years"]}, key=year_order)
    out = spec.new(header=["", *years, "Total"], sources=[result.path])
    for venue, entry in venues.items():
        out.rows.append([label(venue), *[label("")] * (len(years) + 1)])
        rows = [*PAPER_ROWS, ("undecided", "Undecided")] if any(
            counts.get("undecided") for counts in entry["years"].values()) else list(PAPER_ROWS)
        rows.append(("reviews", "Reviews"))
        for name, shown in rows:
            out.rows.append([label(shown), *(numbers.cell("venues", venue, "years", year, name)
                                             if year in entry["years"] else label(ABSENT) for year in years),
                             numbers.cell("venues", venue, "total", name)])
    out.notes = ["Counts of the original records built (variants left out); a paper's decision read from its "
                 "record (withdrawn and desk-rejected papers under Withdrawn; Undecided: a decision that is none of "
                 "these, shown only where there is one). Reviews: human reviews. Years: the venue's year groups "
                 f"(ICLR up to 2018 pooled, as in the paper); {ABSENT}: the venue has no such year."]
    if not _built(result, "papers"):
        out.needs.append("Papers, Accept, Reject, Withdrawn: build with `--papers` (the collected paper records)")
    if not _built(result, "reviews"):
        out.needs.append("Reviews: build with `--reviews` (the collected human reviews)")
    if not venues:
        out.needs.append("every cell: a build with `--papers` and `--reviews`")
    return out


@table("praib-7", PAPER, 7, "Number of reviews sampled per conference and year", KIND)
def table_7(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    numbers = Numbers(result)
    out = spec.new(header=["Conference", "Year", "# Reviews"], sources=[result.path])
    for venue, entry in _venues(result).items():
        for year in entry["years"]:
            out.rows.append([label(venue), label(year), numbers.cell("venues", venue, "years", year, "reviews")])
    out.rows.append([label("Total"), label(""), replace(numbers.cell("total", "reviews"), bold=True)])
    out.notes = ["Human reviews of the sample: `praib data sample` (100 papers per venue-year, half accepted, half "
                 "rejected, in PRAIB), then `praib data build --reviews SAMPLE/reviews.jsonl`."]
    if not _built(result, "reviews"):
        out.needs.append("every cell: build with `--reviews` (the sample's human reviews)")
    return out


def _prompts(found: set[str]) -> list[str]:
    return [p for p in PROMPT_ORDER if p in found] + sorted(found - set(PROMPT_ORDER))


@table("praib-8", PAPER, 8, "Number of generated reviews per conference, year, model and prompt", KIND)
def table_8(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    numbers = Numbers(result)
    venues = _venues(result)
    by_model: dict[str, set[str]] = {}
    for entry in venues.values():
        for counts in entry["years"].values():
            for model, prompts in (counts.get("by_model") or {}).items():
                by_model.setdefault(model, set()).update(prompts)
    models = sorted(by_model)
    out = spec.new(header=["Conference", "Year", *models], sources=[result.path],
                   header_groups=[("", 2), ("Reviews per model (prompts as in the note)", len(models))]
                   if models else None)
    for venue, entry in venues.items():
        for year, counts in entry["years"].items():
            if not counts.get("generated_reviews"):
                continue
            out.rows.append([label(venue), label(year), *(
                joined(*(numbers.cell("venues", venue, "years", year, "by_model", model, prompt)
                         for prompt in _prompts(by_model[model])), separator=" / ") for model in models)])
    out.notes = ["Model-written reviews (`--generated-reviews`, and the model reviews of `--reviews`) per model and "
                 "prompt; within a cell the prompts are, per model: "
                 + "; ".join(f"{model}: {' / '.join(_prompts(by_model[model]))}" for model in models) + "."]
    if not models:
        out.needs.append("every cell: build with `--generated-reviews` (the models' reviews of the sampled papers)")
    elif any(cell.missing for cell in out.cells()):
        out.needs.append("a model's prompt without reviews in that venue-year")
    return out

