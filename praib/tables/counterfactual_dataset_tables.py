"""The counterfactual review-logic study's dataset tables (Tables 2 and 3), laid out from the statistics of ``praib
counterfactual build`` (``VARIANTS.stats.json``) or ``praib counterfactual stats``.

The seed text of the paper has lost its numbers, so its rounding cannot be read: praib prints counts as they are,
means and SDs with two decimals. The dataset is the papers with at least one counterfactual (the study leaves out
papers without empirical findings, which get none).
"""

from __future__ import annotations

from typing import Sequence

from praib.tables.layout import Cell, Table, joined, label
from praib.tables.registry import Numbers, Result, TableSpec, table

PAPER = "Counterfactual review logic"
KIND = "counterfactual-statistics"
#: Table 3's columns: the study's names of the soundness-critical and soundness-neutral counterfactuals.
COLUMNS = (("soundness-critical", "CFCR"), ("soundness-neutral", "CFNE"), ("total", "total"))
DIGITS = 2  # Counterfactual Tables 2, 3: means and SDs (dataset statistics, no registered metric)


def _mean_sd(numbers: Numbers, *path) -> Cell:
    return joined(numbers.cell(*path, "mean", digits=DIGITS), numbers.cell(*path, "std", digits=DIGITS),
                  separator=" ± ")


@table("cf-2", PAPER, 2, "Statistics of the papers of the counterfactual dataset", KIND)
def table_2(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    numbers = Numbers(result)
    papers = result.data["papers"]
    out = spec.new(header=["Statistic", "Value"], sources=[result.path])
    out.rows += [[label("Paper Distribution"), label("")],
                 [label("#papers"), numbers.cell("papers", "with_variants")],
                 [label("#papers p. conference"), _mean_sd(numbers, "papers", "per_venue")],
                 *([label(f"  {venue}"), numbers.cell("papers", "by_venue", venue)] for venue in papers["by_venue"]),
                 [label("#papers p. institution"), Cell(None)],
                 [label("Research Logic Distribution"), label("")],
                 [label("#paper types"), numbers.cell("papers", "paper_types")],
                 [label("#papers p. paper type"), _mean_sd(numbers, "papers", "per_paper_type")],
                 *([label(f"  {genre}"), numbers.cell("papers", "by_paper_type", genre)]
                   for genre in papers.get("by_paper_type") or {}),
                 [label("#findings p. paper"), _mean_sd(numbers, "papers", "findings_per_paper")]]
    out.notes = ["#papers: papers with at least one counterfactual (of "
                 f"{papers['given']} given); per conference (venue), per paper type: mean ± SD over the venues "
                 "(types), then each; #findings p. paper: the research logic's findings, mean ± SD over the papers."]
    out.needs.append("#papers p. institution: praib's paper records carry no affiliations (the study read the last "
                     "author's institution from OpenAlex)")
    if not papers.get("paper_types"):
        out.needs.append("#paper types, #papers p. paper type: logic records with the paper's genre (the UKP "
                         "release's blueprints: `praib data import-ukp`; praib's own extraction gives none)")
    if not papers.get("with_logic"):
        out.needs.append("#findings p. paper: the research logic of the papers (`--logic` of `praib counterfactual "
                         "stats`, or a build with soundness-critical edits)")
    return out


@table("cf-3", PAPER, 3, "Statistics of the counterfactuals: soundness-critical (CFCR) and soundness-neutral (CFNE)",
       KIND)
def table_3(spec: TableSpec, results: Sequence[Result]) -> Table:
    result = results[0]
    numbers = Numbers(result)
    out = spec.new(header=["", *(name for _, name in COLUMNS)], sources=[result.path])
    rows = (("#CFs", ("variants",), False, None), ("#CFs / paper", ("per_paper",), False, DIGITS),
            ("#edits / CF", ("edits",), True, None), ("diff. / CF", ("words",), True, None))
    for name, path, spread, digits in rows:
        out.rows.append([label(name), *(
            _mean_sd(numbers, "counterfactuals", category, *path) if spread else
            numbers.cell("counterfactuals", category, *path, digits=digits)  # Table 3
            for category, _ in COLUMNS)])
    out.notes = ["Per paper: over the papers with at least one counterfactual. #edits: the changed places of a "
                 "counterfactual's text against its original (runs of changed words; a whole line added or removed "
                 "counts once); diff.: the words they change (per edit, the larger of the words removed and added); "
                 "mean ± SD over the counterfactuals."]
    return out
