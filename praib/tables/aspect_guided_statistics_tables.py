"""The aspect-guided perturbation study's Tables 5 and 6 (its edits and how often they came out as intended), laid
out from the statistics ``praib perturb`` writes beside its output (``PERTURBED.stats.json``, one per kind; any
number of them together).

Rows are the study's aspects in Table 5's order, one row per praib perturbation kind that makes an aspect (a kind
found in two files is read from the first given). Table 5's "manipulation times" are counts of edits: per paper,
the edits made to it and its reviews or rebuttal (:mod:`praib.perturb.statistics`), summed, averaged and their
extremes over the papers. Table 6's success rate is the study's manual check of 100 edits per aspect; praib's is
the share of the LLM's answers that passed its automatic checks (``praib perturb``'s edit validation). Table 6
leaves out the conclusion aspect, a rule-based edit, as the study does.
"""

from __future__ import annotations

from typing import Sequence

from praib.tables.aspect_guided_tables import BY_MODE, MISSING, NAMES, Aspect, _either
from praib.tables.layout import Cell, Table, label
from praib.tables.registry import Numbers, Result, TableSpec, table

PAPER = "Aspect-guided perturbation"
KIND = "perturb-statistics"
#: Table 6: which aspects the study counts as expressive and which as semantic edits.
EXPRESSIVE = {("paper", "contribution"): False, ("paper", "soundness"): False, ("paper", "presentation"): True,
              ("review", "tone"): True, ("review", "factual-correctness"): False, ("rebuttal", "tone"): True,
              ("rebuttal", "completeness"): False, ("rebuttal", "presentation"): True}


class Kinds:
    """Every perturbation kind of the statistics files given, with the file it is read from (the first that has
    it)."""

    def __init__(self, results: Sequence[Result]):
        self.where: dict[str, Result] = {}
        self.repeated: list[str] = []
        for result in results:
            for kind in result.data.get("kinds") or {}:
                if kind in self.where:
                    self.repeated.append(kind)
                else:
                    self.where[kind] = result

    def entry(self, kind: str) -> dict:
        return self.where[kind].data["kinds"][kind]

    def cell(self, kind: str | None, *path, digits: int | None = None, scale: float = 1) -> Cell:
        if kind is None:
            return Cell(None)
        cell = Numbers(self.where[kind]).cell("kinds", kind, *path)
        return Cell(cell.value, cell.source, digits, scale=scale)

    def rows(self, aspects: Sequence[Aspect], left_out: Sequence[Aspect] = ()) -> list[tuple[Aspect, str | None]]:
        """(aspect, kind) per row: the aspects in order, a row per kind of each (kind None where no file has one),
        then the kinds of no aspect of the study (the kinds of ``left_out`` aspects are not shown)."""
        found = {kind: (self.entry(kind)["component"], self.entry(kind)["category"]) for kind in self.where}
        rows: list[tuple[Aspect, str | None]] = []
        for aspect in aspects:
            kinds = sorted(kind for kind, where in found.items() if where == (aspect.component, aspect.category))
            rows += [(aspect, kind) for kind in kinds] or [(aspect, None)]
        taken = {(aspect.component, aspect.category) for aspect in [*aspects, *left_out]}
        for kind, (component, category) in sorted(found.items(), key=lambda item: (str(item[1]), item[0])):
            if (component, category) not in taken:
                rows.append((Aspect(str(component).capitalize(), NAMES.get((component, category), str(category)),
                                    component, category), kind))
        return rows

    def notes(self) -> list[str]:
        repeated = sorted(set(self.repeated))
        return [f"Found in several files, read from the first given: {', '.join(repeated)}."] if repeated else []


def _absent(rows: Sequence[tuple[Aspect, str | None]]) -> list[str]:
    return list(dict.fromkeys(
        f"{aspect.mode} / {aspect.name} row: the statistics of `praib perturb KIND ... --output PERTURBED` "
        f"(PERTURBED.stats.json) with KIND {_either(aspect.kinds)}" for aspect, kind in rows if kind is None))


def _row_labels(aspect: Aspect, kind: str | None) -> list[Cell]:
    return [label(aspect.mode), label(aspect.name), label(kind or MISSING)]


@table("agp-5", PAPER, 5, "Statistics of the textual perturbation edits (edits per paper and its reviews or "
       "rebuttal)", KIND, combines=True)
def table_5(spec: TableSpec, results: Sequence[Result]) -> Table:
    kinds = Kinds(results)
    out = spec.new(header=["Mode", "Aspect", "Perturbation", "Sum", "Mean", "Min", "Max", "Seconds"],
                   sources=[result.path for result in results])
    rows = kinds.rows(BY_MODE)
    for aspect, kind in rows:
        out.rows.append([*_row_labels(aspect, kind), kinds.cell(kind, "edits", "sum"),
                         kinds.cell(kind, "edits", "mean", digits=2),  # Table 5 (the seed text lost its numbers)
                         kinds.cell(kind, "edits", "min"), kinds.cell(kind, "edits", "max"),
                         kinds.cell(kind, "seconds", digits=2)])  # praib's own column (Table 5 has no times)
    out.notes = ["Edits: the changed places of a record's text against its original (a run of changed words; a "
                 "whole line added or removed counts once; a changed field of a record without text changes counts "
                 "once), summed over each paper's records (the paper, its reviews or its rebuttal); Sum, Mean, Min, "
                 "Max over the papers given, those the edit left unchanged included. Seconds: the run's wall time for "
                 "the kind (praib's own; the study reports none).", *kinds.notes()]
    out.needs = _absent(rows)
    return out


@table("agp-6", PAPER, 6, "Success rates of the LLM-driven textual perturbations", KIND, combines=True)
def table_6(spec: TableSpec, results: Sequence[Result]) -> Table:
    kinds = Kinds(results)
    aspects = [aspect for aspect in BY_MODE if (aspect.component, aspect.category) in EXPRESSIVE]
    out = spec.new(header=["Mode", "Aspect", "Perturbation", "Expressive", "Semantic", "Success Rate (%)",
                           "Records changed (%)"], sources=[result.path for result in results])
    rows = kinds.rows(aspects, left_out=[aspect for aspect in BY_MODE if aspect not in aspects])
    for aspect, kind in rows:
        expressive = EXPRESSIVE.get((aspect.component, aspect.category))
        out.rows.append([*_row_labels(aspect, kind),
                         label("—" if expressive is None else "YES" if expressive else "NO"),
                         label("—" if expressive is None else "NO" if expressive else "YES"),
                         kinds.cell(kind, "llm_accepted_share", digits=0, scale=100),  # Table 6: whole percent
                         kinds.cell(kind, "changed_share", digits=0, scale=100)])  # as Table 6
    out.notes = ["Success Rate: the share of the LLM's edits (one a paper section, review, rebuttal or paragraph, "
                 "as the kind edits) that passed praib's checks (length and word-overlap bounds, protected spans, a "
                 "real change), asked again once when rejected; the study's rates come from a manual check of 100 "
                 "samples per aspect. Records changed: the records given that came out changed. Expressive, "
                 "Semantic: the study's kinds of edit.", *kinds.notes()]
    out.needs = _absent(rows)
    rule_based = [kind for _, kind in rows if kind and kinds.entry(kind).get("llm_edits") is None]
    if rule_based:
        out.needs.append(f"Success Rate of {', '.join(rule_based)}: a rule-based edit, no LLM answer to check")
    return out
