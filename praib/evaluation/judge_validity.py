"""How far the judge behind each judged metric can be trusted: its stored validations against human labels.

A judged metric rests on judge decisions of one or two kinds, each checked by a task of
``praib judge validate`` (:mod:`praib.metrics.judged.validation`). The registry says which: each
metric's family (:class:`praib.metrics.registry.Family`) names the validation tasks of its judged
results (math engagement: ``math``; coverage: ``coverage``; target/aspect: ``target`` and ``aspect``;
atomic statistics: ``atomic``; RevUtil's grounding specificity: ``grounding``; the rejection rate needs
none, as it reads the reviews' own recommendations and the papers' decisions), how the printed lines name
them and which entries of the two-judge agreement re-judge them. Judged ``evaluate`` and leaderboard runs
look up and print the families they compute (:data:`FAMILIES`); a family with a command of its own
(grounding specificity, ``praib grounding``) is looked up and printed by that command alone.

:func:`judge_validations` finds, for a judge (its ``Judge.describe()``), the stored validation of
every task: in the validations store beside the call cache, else among validations carried with
the data (a leaderboard submission's manifest). :func:`validity_lines` prints one line per family:
the judge's validated κ or accuracy and the gold set, or "judge not validated", and beside it the
agreement of a second judge where one ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from praib.metrics.judged.validation import ValidationResult, find_validation, template_fingerprint
from praib.metrics.registry import FAMILIES as METRIC_FAMILIES, lookup

__all__ = ["JudgedFamily", "ALL_FAMILIES", "FAMILIES", "VALIDATED_TASKS", "family_of", "validates", "validation_entry",
           "judge_validations", "family_validity", "validity_lines"]

STORE = "validations store"


@dataclass(frozen=True)
class JudgedFamily:
    """Judged results that rest on the same judge decisions: those of the registry's ``family``, how a
    printed line names them, and the validation tasks of those decisions. ``second_judge`` names the
    entries of the two-judge agreement (:func:`praib.evaluation.judged.second_judge_agreement`) that
    re-judge them."""

    name: str
    label: str
    tasks: tuple[str, ...]
    family: str
    second_judge: tuple[str, ...] = ()
    command: str | None = None

    def holds(self, metric: str) -> bool:
        found = lookup(metric)
        return found is not None and found.family == self.family


#: The registry's families of judged results, in its order.
ALL_FAMILIES: tuple[JudgedFamily, ...] = tuple(
    JudgedFamily(family.title, family.validity_label, family.validation, family.name, family.second_judge,
                 family.command)
    for family in METRIC_FAMILIES if family.validation is not None)
#: Those judged ``evaluate`` and leaderboard runs compute (no command of their own).
FAMILIES: tuple[JudgedFamily, ...] = tuple(family for family in ALL_FAMILIES if family.command is None)
#: The tasks whose validation a judged run looks up, in the order lines and tables list them.
VALIDATED_TASKS: tuple[str, ...] = tuple(dict.fromkeys(task for family in FAMILIES for task in family.tasks))


def family_of(metric: str) -> JudgedFamily | None:
    """The family of a judged metric's result key (``coverage_recall_strengths`` -> coverage), None
    for a key of no judged family (or none the registry describes)."""
    return next((family for family in ALL_FAMILIES if family.holds(metric)), None)


def validates(result: ValidationResult, judge_description: Mapping[str, Any]) -> bool:
    """Whether ``result`` is a validation of the judge ``judge_description`` describes: the same model,
    revision and templates (their hash, with the description's replacements read now)."""
    try:
        _, template_hash = template_fingerprint(result.task, judge_description.get("templates"))
    except ValueError:  # a replacement template that is gone validates nothing
        return False
    return (result.judge_model, result.judge_revision, result.template_hash) == (
        judge_description.get("model"), judge_description.get("model_revision"), template_hash)


def validation_entry(result: ValidationResult, found_in: str) -> dict:
    """What a judged run records of the validation it found: the judge, the gold set, the scores with
    their intervals, the majority-class baseline, the line :meth:`ValidationResult.summary` prints,
    and where it was found (``found_in``)."""
    return {"task": result.task, "judge_model": result.judge_model, "judge_revision": result.judge_revision,
            "template_hash": result.template_hash, "gold": result.gold, "gold_source": result.gold_source,
            "gold_size": result.gold_size,
            "metrics": {name: estimate.to_dict() for name, estimate in result.metrics.items()},
            "baseline": result.baseline, "date": result.date, "summary": result.summary(), "found_in": found_in}


def judge_validations(judge_description: Mapping[str, Any], cache_dir: str | Path | None = None,
                      carried: Iterable[tuple[str, ValidationResult]] = (),
                      tasks: Iterable[str] = VALIDATED_TASKS) -> dict[str, dict | None]:
    """Per task of ``tasks`` (default :data:`VALIDATED_TASKS`, those of judged runs): the
    :func:`validation_entry` of the judge's latest stored validation (the store in ``cache_dir``, default
    the call cache's folder), else of the latest matching one of ``carried`` ((where it came from, result)
    pairs, e.g. ``"manifest of NAME"``); None where the judge is not validated on the task."""
    carried = list(carried)
    found = {}
    for task in tasks:
        result, where = find_validation(judge_description, task, cache_dir), STORE
        if result is None:
            matching = [(origin, r) for origin, r in carried if r.task == task and validates(r, judge_description)]
            if matching:
                where, result = max(matching, key=lambda pair: pair[1].date)
        found[task] = None if result is None else validation_entry(result, where)
    return found


def _agreement(name: str, agreement: Mapping[str, Any]) -> str:
    """One entry of the two-judge agreement, or why there is no κ."""
    words = name.replace("_", " ")
    if not agreement.get("n"):
        return f"{words}: no item judged by both"
    kappa = agreement.get("cohen_kappa")
    reading = (f"κ {kappa:.2f}" if kappa is not None else "κ undefined (one label is all there is)")
    return f"{words}: {reading}, agreement {agreement['agreement']:.2f} (n {agreement['n']})"


def family_validity(family: JudgedFamily, validation: Mapping[str, dict | None]) -> str:
    """What ``validation`` (task -> entry or None) says of the judge behind ``family``'s results: per task
    its validated κ and accuracy on the named gold set, or "judge not validated" with the command that
    validates it."""
    return "; ".join((f"{task}: " if len(family.tasks) > 1 else "")
                     + (validation[task]["summary"] if validation.get(task) else
                        f"judge not validated (run `praib judge validate --task {task} ...`)")
                     for task in family.tasks)


def validity_lines(validation: Mapping[str, dict | None],
                   second_judge: Mapping[str, Any] | None = None,
                   families: Iterable[JudgedFamily] = FAMILIES) -> list[str]:
    """One line per judged metric family of ``families`` (default: those of judged runs): its judge's
    validated κ and accuracy (recall and precision of the gold atoms for the atomic statistics) on the
    named gold set, or "judge not validated" with the command that validates it
    (:func:`family_validity`); with a second judge, the two judges' agreement beside it."""
    lines = ["Judge validity (stored `praib judge validate` results for this judge model, revision and templates):"]
    for family in families:
        if not family.tasks:
            lines.append(f"  {family.label}: needs no judge (the reviews' recommendations and the papers' "
                         "decisions)")
            continue
        parts = [family_validity(family, validation)]
        if second_judge is not None:
            model = (second_judge.get("judge") or {}).get("model")
            compared = [_agreement(name, second_judge[name]) for name in family.second_judge if name in second_judge]
            parts.append(f"second judge {model}: " + ("; ".join(compared) if compared else
                                                      "not compared (it re-judges the first judge's atomic items, "
                                                      "not their extraction)"))
        lines.append(f"  {family.label}: " + "; ".join(parts))
    return lines
