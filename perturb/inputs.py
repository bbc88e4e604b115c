"""Which input of a meta-review is perturbed: the paper, its reviews or its rebuttals.

Aspect-guided perturbation changes exactly one component of what a meta-reviewer sees.
:func:`perturb_component` applies a registry perturbation to that component's records and keeps
which of them the edit really changed, so that a paper whose component came back unchanged can be
left out of the perturbed run (:func:`praib.generation.meta_review.run_meta_reviews`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from praib.records import SCHEMAS, records_to_dataset

from praib.perturb.registry import apply_perturbation

COMPONENTS = ("paper", "reviews", "rebuttal")
_RECORD_KIND = {"paper": "paper", "reviews": "review", "rebuttal": "rebuttal"}


@dataclass
class PerturbedComponent:
    records: list[dict]   # the component's records after the perturbation, edited or not
    edited: set[str]      # ids of the records the perturbation really changed
    id_field: str         # the record id column of the component's kind

    def perturbation_of(self, rows: Sequence[dict]) -> dict | None:
        """The perturbation of the first of ``rows`` the edit really changed (a paper's reviews share one kind)."""
        return next((r["perturbation"] for r in rows if r[self.id_field] in self.edited), None)


def perturb_component(records: list[dict], component: str, kind: str, *, seed: int = 0, judge: Any = None,
                      progress: bool = True) -> PerturbedComponent:
    """``records`` of ``component`` (one of :data:`COMPONENTS`) perturbed with registry perturbation ``kind``."""
    record_kind = _RECORD_KIND[component]
    id_field = SCHEMAS[record_kind][2]
    perturbed = apply_perturbation(kind, records_to_dataset(records, record_kind), seed=seed, judge=judge,
                                   progress=progress).to_list()
    # The registry returns records it could not edit unchanged (with a note); they do not count as perturbed.
    before = {row[id_field]: row for row in records}
    edited = set()
    for row in perturbed:
        original = before.get(row[id_field])
        if original is None or {**row, "perturbation": None} != original:
            edited.add(row[id_field])
    return PerturbedComponent(perturbed, edited, id_field)


__all__: Sequence[str] = ("COMPONENTS", "PerturbedComponent", "perturb_component")
