"""A judge checked against human labels: gold sets, the judge's answers on them, and the stored result.

Every judged metric rests on a judge model's labels. :func:`validate_judge` asks a judge about the
items of a gold set, exactly as the judged metrics ask it (same templates, same answer constraints,
so the call cache serves both), and scores its answers against the people's labels.

Tasks (:data:`TASKS`) and what the judge is asked:

* ``math``: does a review engage with the paper's mathematics (yes/no; template ``math_engagement``).
* ``aspect`` / ``target``: the aspect or target of a strength or weakness (templates
  ``aspect_strength``/``aspect_weakness``, ``target_strength``/``target_weakness``; the labels of
  :mod:`praib.metrics.judged.target_aspect`).
* ``polarity``: is a review passage a strength or a weakness (template ``polarity``).
* ``coverage``: does a target text hold information from a base text (yes/no; template ``coverage``).
* ``grounding``: RevUtil's grounding specificity of a review comment, 1-5 (template ``grounding_specificity``;
  :mod:`praib.metrics.judged.grounding`).
* ``atomic``: the atomic strengths and weaknesses of a review (templates ``atomic_human`` /
  ``atomic_generated``), scored as recall and precision of the gold atoms, an extracted atom and a
  gold atom of the same side being matched by the coverage judge.

A label task reports accuracy, macro-F1, Cohen's kappa and per-label precision and recall, each with
a 95% percentile bootstrap interval over the items (:func:`praib.metrics.judged.judge_quality.label_scores`),
the confusion table and the majority-class baseline. An item the judge gave no usable answer for
(a failed call, an answer that cannot be read) counts as wrong, and is counted.

The gold format (JSONL, one object a line; :func:`read_gold`)::

    {"id": "r12/w3", "task": "aspect", "kind": "weakness", "text": "The notation is confusing.",
     "label": "Clarity", "annotator": "A"}

``id`` (text) names the item; ``task`` is one of :data:`TASKS`; ``text`` is what the judge reads (the
review, the strength or weakness, the passage, the coverage target); ``context`` is the coverage
base, and elsewhere a note kept in the errors file; ``kind`` is ``strength``/``weakness`` for aspect
and target, ``human``/``generated`` for atomic (the review's extraction regime); ``label`` is one of
the task's labels (:data:`LABELS`, any case); for ``atomic``, ``labels`` is
``{"strengths": [...], "weaknesses": [...]}``; ``annotator`` (optional) names who labelled it. Several
rows of one id with different annotators are several people's labels of one item: the judge is
scored against their majority label (an item whose annotators tie is left out and counted), and
their agreement is reported as the ceiling (:func:`praib.metrics.judged.judge_quality.annotator_agreement`).
Rows of other tasks are skipped.

A :class:`ValidationResult` records the judge (model, revision, backend, the hash of the template
texts it used), the gold set and the scores. :func:`store_validation` keeps it in the validations
store beside the call cache, where :func:`find_validation` looks it up by judge and task.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from praib._version import __version__
from praib.llm.judge import JUDGE_TEMPLATES, Answer, default_cache_dir
from praib.metrics.judged import grounding, math_engagement
from praib.metrics.judged.atomic import ATOMIC_SCHEMA, TEMPLATES as ATOMIC_TEMPLATES, AtomicItems, parse_atomic
from praib.metrics.judged.coverage import CHOICES as COVERAGE_CHOICES, SIDES, judge_many
from praib.metrics.judged.judge_quality import (INVALID, Estimate, annotator_agreement, cohen_kappa, label_scores,
                                                percentile_bootstrap)
from praib.metrics.judged.target_aspect import ASPECTS, TARGETS
from praib.records.atomic import write_text_atomically
from praib.records.io import iter_jsonl, read_json
from praib.records.schema import RecordError

__all__ = ["TASKS", "LABELS", "GoldItem", "GoldSet", "read_gold", "validate_judge", "ValidationResult",
           "template_fingerprint", "store_validation", "find_validation", "validations_dir", "format_validation",
           "errors_path"]

TASKS = ("math", "aspect", "target", "polarity", "atomic", "coverage", "grounding")
POLARITY_LABELS = ("strength", "weakness")
#: The labels of each label task, in the order tables list them.
LABELS: dict[str, tuple[str, ...]] = {"math": ("yes", "no"), "aspect": ASPECTS, "target": TARGETS,
                                      "polarity": POLARITY_LABELS, "coverage": COVERAGE_CHOICES,
                                      "grounding": grounding.LABELS}
#: What ``kind`` says for the tasks that need one: which template asks about the item.
KINDS: dict[str, tuple[str, ...]] = {"aspect": POLARITY_LABELS, "target": POLARITY_LABELS,
                                     "atomic": tuple(ATOMIC_TEMPLATES)}
#: The built-in judge templates each task asks with (a ``--judge-template`` may replace any).
TASK_TEMPLATES: dict[str, tuple[str, ...]] = {
    "math": (math_engagement.TEMPLATE,),
    "aspect": ("aspect_strength", "aspect_weakness"),
    "target": ("target_strength", "target_weakness"),
    "polarity": ("polarity",),
    "coverage": ("coverage",),
    "atomic": (*sorted(ATOMIC_TEMPLATES.values()), "coverage"),
    "grounding": (grounding.TEMPLATE,),
}
GOLD_FIELDS = ("id", "task", "text", "context", "kind", "label", "labels", "annotator")
SCHEMA_VERSION = 1
STORE_FOLDER = "validations"


# ---------------------------------------------------------------------------------------------
# gold sets
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldItem:
    """One item of a gold set: what the judge reads (``text``, and ``context`` for coverage), which
    template asks about it (``kind``), and the gold answer: ``label``, or for ``atomic`` the gold
    ``atoms`` by side. ``annotations`` maps each named annotator to their label; ``label`` is their
    majority label, None where they tie (the item then counts only against each annotator)."""

    id: str
    text: str
    label: str | None = None
    atoms: Mapping[str, tuple[str, ...]] | None = None
    kind: str | None = None
    context: str | None = None
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass
class GoldSet:
    """The items of one task read from a gold source. ``name`` is how results name the set (a file's
    name, "DISAPERE"), ``source`` what was given to read it; ``left_out`` counts the labelled items
    that could not be used, by reason; ``summary`` holds what an adapter counted in its source."""

    name: str
    source: str
    task: str
    items: list[GoldItem]
    left_out: dict[str, int] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)

    def head(self, n: int) -> "GoldSet":
        """The set cut to its first ``n`` items."""
        return replace(self, items=self.items[:n])


def _text(row: dict, name: str, where: str, required: bool = True) -> str | None:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise RecordError(where, name, "is required and missing")
        return None
    if not isinstance(value, str):
        raise RecordError(where, name, f"expected text, got {type(value).__name__} {value!r:.60}")
    return value


def _one_of(value: str, allowed: Sequence[str], where: str, name: str) -> str:
    by_lower = {a.lower(): a for a in allowed}
    if value.strip().lower() not in by_lower:
        raise RecordError(where, name, f"expected one of {', '.join(allowed)}, found {value!r:.60}")
    return by_lower[value.strip().lower()]


def _atoms(value: Any, where: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict) or set(value) != set(SIDES) or not all(
            isinstance(side, list) and all(isinstance(atom, str) for atom in side) for side in value.values()):
        raise RecordError(where, "labels", 'expected {"strengths": [text, ...], "weaknesses": [text, ...]}, '
                                           f"found {json.dumps(value)[:60]}")
    return {side: tuple(atom.strip() for atom in value[side] if atom.strip()) for side in SIDES}


def _gold_row(row: Any, task: str, where: str) -> dict | None:
    """One row of a gold file checked: its fields in canonical form, or None for a row of another task."""
    if not isinstance(row, dict):
        raise RecordError(where, None, f"expected a JSON object, got {type(row).__name__}")
    unknown = set(row) - set(GOLD_FIELDS)
    if unknown:
        raise RecordError(where, None, f"unknown fields {', '.join(sorted(unknown))}; "
                                       f"a gold row has {', '.join(GOLD_FIELDS)}")
    row_task = _one_of(_text(row, "task", where), TASKS, where, "task")
    if row_task != task:
        return None
    item_id = row.get("id")
    if isinstance(item_id, int) and not isinstance(item_id, bool):
        item_id = str(item_id)
    out = {"id": _text({"id": item_id}, "id", where), "text": _text(row, "text", where),
           "context": _text(row, "context", where, required=task == "coverage"),
           "annotator": _text(row, "annotator", where, required=False), "kind": None}
    kind = _text(row, "kind", where, required=task in KINDS)
    if kind is not None:
        if task not in KINDS:
            raise RecordError(where, "kind", f"is for the tasks {', '.join(KINDS)}, not {task}")
        out["kind"] = _one_of(kind, KINDS[task], where, "kind")
    wanted, unwanted = ("labels", "label") if task == "atomic" else ("label", "labels")
    if row.get(unwanted) is not None:
        raise RecordError(where, unwanted, f"is not for the {task} task: give {wanted!r}")
    if task == "atomic":
        if row.get("labels") is None:
            raise RecordError(where, "labels", "is required and missing")
        out["atoms"] = _atoms(row["labels"], where)
    else:
        out["label"] = _one_of(_text(row, "label", where), LABELS[task], where, "label")
    return out


def read_gold(path: str | Path, task: str) -> GoldSet:
    """The ``task`` items of a gold JSONL file (the format is in the module's docstring). A row that
    breaks the format is a :class:`~praib.records.RecordError` naming the file, the line and the field."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; tasks: {', '.join(TASKS)}")
    path = Path(path)
    rows: dict[str, list[tuple[str, dict]]] = {}
    tasks_seen: Counter = Counter()
    for where, raw in iter_jsonl(path):
        row = _gold_row(raw, task, where)
        if row is None:
            tasks_seen[str(raw.get("task")).strip().lower()] += 1
            continue
        earlier = rows.setdefault(row["id"], [])
        if earlier:
            _same_item(row, earlier, where, task)
        earlier.append((where, row))
    if not rows:
        raise RecordError(str(path), None, f"holds no {task} items" + (
            f" (it holds {', '.join(f'{n} {t}' for t, n in sorted(tasks_seen.items()))})" if tasks_seen else ""))
    items = []
    for item_id, labelled in rows.items():
        first = labelled[0][1]
        annotations = {row["annotator"]: row.get("label") for _, row in labelled if row["annotator"] is not None}
        counts = Counter(row.get("label") for _, row in labelled).most_common()
        tie = len(counts) > 1 and counts[0][1] == counts[1][1]
        items.append(GoldItem(item_id, first["text"], None if tie else counts[0][0], first.get("atoms"), first["kind"],
                              first["context"], annotations if task != "atomic" else {}))
    return GoldSet(path.name, str(path), task, items)


def _same_item(row: dict, earlier: list[tuple[str, dict]], where: str, task: str) -> None:
    """A further row of an item already read: another annotator's label of the same item."""
    def line(place: str) -> str:  # "line N" of a place "FILE: line N"
        return place.rsplit(": ", 1)[-1]

    first_where, first = earlier[0]
    if task == "atomic":
        raise RecordError(where, "id", f"item {row['id']!r} is already on {line(first_where)}: an atomic item "
                                       "takes one row")
    for name in ("text", "context", "kind"):
        if row[name] != first[name]:
            raise RecordError(where, name, f"differs from the one of item {row['id']!r} on {line(first_where)}")
    for other_where, other in earlier:
        if row["annotator"] is None or other["annotator"] is None:
            raise RecordError(where, "annotator", f"item {row['id']!r} is already on {line(other_where)}: rows of "
                                                  "one item are the labels of several annotators, each named")
        if row["annotator"] == other["annotator"]:
            raise RecordError(where, "annotator", f"item {row['id']!r} already has a label of annotator "
                                                  f"{row['annotator']!r} on {line(other_where)}")


# ---------------------------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelScore:
    """Precision and recall of one label (for ``atomic``, of one side's atoms); ``gold`` and ``judged``
    count the items (atoms) the gold and the judge give it."""

    precision: Estimate
    recall: Estimate
    gold: int
    judged: int

    def to_dict(self) -> dict:
        return {"precision": self.precision.to_dict(), "recall": self.recall.to_dict(), "gold": self.gold,
                "judged": self.judged}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "LabelScore":
        return cls(Estimate.from_dict(data["precision"]), Estimate.from_dict(data["recall"]), data["gold"],
                   data["judged"])


@dataclass(frozen=True)
class ValidationResult:
    """How far one judge agrees with human labels on one task (the JSON schema is in docs/judge-validation.md,
    "The stored result"; :meth:`to_dict` / :meth:`from_dict`).

    ``metrics``: for a label task ``accuracy``, ``macro_f1`` and ``cohen_kappa``; for ``atomic``
    ``recall``, ``precision`` and ``f1`` of the gold atoms. ``per_label``: per label (per side for
    atomic). ``confusion``: ``{gold label: {judge label: count}}`` (None for atomic). ``counts``:
    ``items``, ``failed`` (items without a usable answer, counted as wrong), ``failed_by_error``,
    ``left_out`` (labelled items the gold source could not use, by reason) and per task ``correct``
    or the atom counts. ``baseline``: the majority class and its accuracy (None for atomic).
    ``annotators``: the people's own agreement, where several labelled the items (else None).
    """

    task: str
    gold: str
    gold_source: str
    gold_size: int
    judge_model: str
    judge_revision: str | None
    judge_backend: str
    judge_settings: dict[str, Any]
    templates: dict[str, dict[str, str]]
    template_hash: str
    metrics: dict[str, Estimate]
    per_label: dict[str, LabelScore]
    confusion: dict[str, dict[str, int]] | None
    counts: dict[str, Any]
    baseline: dict[str, Any] | None
    annotators: dict[str, Any] | None
    bootstrap: dict[str, Any]
    date: str
    praib_version: str
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict:
        data = asdict(self)
        data["metrics"] = {name: estimate.to_dict() for name, estimate in self.metrics.items()}
        data["per_label"] = {label: score.to_dict() for label, score in self.per_label.items()}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ValidationResult":
        if data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"a validation result of schema version {data.get('schema_version')!r}; this praib "
                             f"reads version {SCHEMA_VERSION}")
        return cls(**{**data, "metrics": {name: Estimate.from_dict(e) for name, e in data["metrics"].items()},
                      "per_label": {label: LabelScore.from_dict(s) for label, s in data["per_label"].items()}})

    def summary(self) -> str:
        """One line to print beside a judged metric, e.g. ``κ 0.62 [0.55, 0.69], accuracy 0.81 on
        DISAPERE (4037 items)``."""
        shown = (("recall", "recall"), ("precision", "precision")) if self.task == "atomic" else (
            ("κ", "cohen_kappa"), ("accuracy", "accuracy"))
        parts = [f"{word} {_estimate(self.metrics[name])}" for word, name in shown]
        return f"{', '.join(parts)} on {self.gold} ({self.gold_size} items)"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _estimate(estimate: Estimate) -> str:
    if estimate.value is None:
        return "n/a"
    if estimate.low is None:
        return _number(estimate.value)
    return f"{_number(estimate.value)} [{_number(estimate.low)}, {_number(estimate.high)}]"


def template_fingerprint(task: str, overrides: Mapping[str, str | Path] | None = None) -> tuple[dict, str]:
    """The templates ``task`` asks with, given the judge's replacements (``Judge.templates``, or the
    ``templates`` entry of ``Judge.describe()``): ``{role: {"template": what was used, "sha256": of
    its text}}``, and one hash of them all, the ``template_hash`` results are looked up by."""
    used = {}
    for role in TASK_TEMPLATES[task]:
        template = (overrides or {}).get(role, role)
        used[role] = {"template": str(template),
                      "sha256": hashlib.sha256(JUDGE_TEMPLATES.path(template).read_bytes()).hexdigest()}
    combined = "".join(f"{role}={entry['sha256']}\n" for role, entry in sorted(used.items()))
    return used, hashlib.sha256(combined.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# asking the judge
# ---------------------------------------------------------------------------------------------


def _failed_by_error(answers: Sequence[Answer]) -> dict[str, int]:
    return dict(sorted(Counter(a.error for a in answers if not a.ok).items()))


def _label_answers(judge, gold: GoldSet, progress: bool) -> list[Answer]:
    """The judge's answer to every item, asked as the judged metrics ask; a usable answer's value is
    the label. Items are asked in groups of one template each."""
    task, items = gold.task, gold.items
    answers: list[Answer | None] = [None] * len(items)
    groups: dict[str | None, list[int]] = {}
    for position, item in enumerate(items):
        groups.setdefault(item.kind, []).append(position)
    for kind, positions in groups.items():
        group = [items[i] for i in positions]
        ids = [f"{item.id}/{task}" for item in group]
        if task == "math":
            # The same call and reading as math_engagement.judge_math_engagement, keeping the raw answer.
            asked = judge.json(math_engagement.TEMPLATE, [{"review": item.text} for item in group],
                               math_engagement.ANSWER_SCHEMA, progress=progress, ids=ids,
                               parse=math_engagement._parse_answer)
            asked = [replace(a, value="yes" if a.value.engages else "no") if a.ok else a for a in asked]
        elif task == "coverage":
            asked = judge.choose("coverage", [{"base": item.context, "target": item.text} for item in group],
                                 COVERAGE_CHOICES, progress=progress, ids=ids)
        elif task == "grounding":
            # The same call and reading as grounding.judge_grounding; the score as its label.
            asked = [replace(a, value=str(a.value)) if a.ok else a
                     for a in grounding.judge_grounding([item.text for item in group], judge, progress=progress,
                                                        ids=[item.id for item in group])]
        else:
            template = "polarity" if task == "polarity" else f"{task}_{kind}"
            asked = judge.choose(template, [{"item": item.text} for item in group], LABELS[task],
                                 progress=progress, ids=ids)
        for position, answer in zip(positions, asked):
            answers[position] = answer
    return answers


def _extracted(value: Any) -> AtomicItems:
    items = parse_atomic(value)
    if not items.valid:
        raise ValueError(items.error)
    return items


def _atomic_answers(judge, gold: GoldSet, progress: bool) -> tuple[list[Answer], list[dict[str, np.ndarray]], int]:
    """Each review's extraction, and per side which gold atoms some extracted atom matches and which
    extracted atoms match some gold atom (by the coverage judge); also the match answers that could
    not be read (taken as "no match")."""
    items = gold.items
    answers: list[Answer | None] = [None] * len(items)
    for regime, template in ATOMIC_TEMPLATES.items():
        positions = [i for i, item in enumerate(items) if item.kind == regime]
        asked = judge.json(template, [{"review": items[i].text} for i in positions], ATOMIC_SCHEMA,
                           progress=progress, ids=[f"{items[i].id}/atomic" for i in positions], parse=_extracted)
        for position, answer in zip(positions, asked):
            answers[position] = answer
    pairs, names, where = [], [], []
    for position, (item, answer) in enumerate(zip(items, answers)):
        for side in SIDES:
            extracted = answer.value.side(side) if answer.ok else []
            pairs.append((list(item.atoms[side]), extracted))
            names.append(f"{item.id}/atomic ({side})")
            where.append((position, side))
    matches: list[dict[str, Any]] = [{} for _ in items]
    matrices = judge_many(pairs, judge, progress=progress, names=names)
    for (position, side), matrix in zip(where, matrices):
        matches[position][side] = matrix.yes
    return answers, matches, sum(matrix.invalid for matrix in matrices)


# ---------------------------------------------------------------------------------------------
# scoring
# ---------------------------------------------------------------------------------------------


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def _f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _atom_scores(counts: np.ndarray, resamples: int, seed: int, confidence: float) -> tuple[dict, dict]:
    """Recall and precision of the gold atoms from per-item counts ``counts[item, side, k]`` with k:
    gold atoms, gold atoms matched, extracted atoms, extracted atoms matched; summed over the items
    (and sides), each with its bootstrap interval over the items."""
    def scores(indices: np.ndarray) -> dict:
        by_side = counts[indices].sum(axis=0)
        out = {}
        for name, (gold, gold_matched, extracted, extracted_matched) in [("all", by_side.sum(axis=0)),
                                                                           *zip(SIDES, by_side)]:
            recall, precision = _ratio(gold_matched, gold), _ratio(extracted_matched, extracted)
            out.update({("recall", name): recall, ("precision", name): precision, ("f1", name): _f1(precision, recall)})
        return out

    point = scores(np.arange(len(counts)))
    bounds = percentile_bootstrap(scores, len(counts), resamples, seed, confidence)

    def estimate(key) -> Estimate:
        return Estimate(point[key], *bounds[key]) if point[key] is not None else Estimate(None)

    metrics = {name: estimate((name, "all")) for name in ("recall", "precision", "f1")}
    totals = counts.sum(axis=0)
    per_side = {side: LabelScore(estimate(("precision", side)), estimate(("recall", side)), int(totals[s, 0]),
                                 int(totals[s, 2]))
                for s, side in enumerate(SIDES)}
    return metrics, per_side


def validate_judge(judge, gold: GoldSet, resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
                   progress: bool = False) -> tuple[ValidationResult, list[dict]]:
    """Ask ``judge`` (a :class:`praib.llm.judge.Judge`) about every item of ``gold`` and score its
    answers. Returns the :class:`ValidationResult` and the items it got wrong (one dict each, with the
    gold, the judge's label or atoms, its raw answer and, when it gave no usable answer, why); failed
    items are also in the judge's failure log."""
    if not gold.items:
        raise ValueError(f"{gold.source}: no {gold.task} items to validate on")
    bootstrap = {"resamples": resamples, "seed": seed, "confidence": confidence}
    if gold.task == "atomic":
        answers, matches, match_failures = _atomic_answers(judge, gold, progress)
        counts = np.array([[[len(item.atoms[side]), int(match[side].any(axis=1).sum()),
                             match[side].shape[1], int(match[side].any(axis=0).sum())] for side in SIDES]
                           for item, match in zip(gold.items, matches)])
        metrics, per_label = _atom_scores(counts, resamples, seed, confidence)
        totals = counts.sum(axis=(0, 1))
        tally = {"gold_atoms": int(totals[0]), "gold_atoms_matched": int(totals[1]),
                 "extracted_atoms": int(totals[2]), "extracted_atoms_matched": int(totals[3]),
                 "match_failures": match_failures}
        confusion = baseline = annotators = None
        wrong = [_atomic_error(item, answer, match) for item, answer, match in zip(gold.items, answers, matches)
                 if not answer.ok or any(not m.any(axis=1).all() or not m.any(axis=0).all() for m in match.values())]
    else:
        scored = [item for item in gold.items if item.label is not None]
        if not scored:
            raise ValueError(f"{gold.source}: no {gold.task} item has a majority label (its annotators tie on each)")
        asked = _label_answers(judge, gold, progress)
        predicted = [a.value if a.ok else None for a in asked]
        annotators = _annotators(gold.items, predicted)
        answers = [answer for item, answer in zip(gold.items, asked) if item.label is not None]
        scores = label_scores([a.value if a.ok else None for a in answers], [item.label for item in scored],
                              LABELS[gold.task], resamples, seed, confidence)
        metrics = {name: scores[name] for name in ("accuracy", "macro_f1", "cohen_kappa")}
        per_label = {label: LabelScore(**score) for label, score in scores["per_label"].items()}
        confusion, baseline = scores["confusion"], scores["majority"]
        tally = {"correct": scores["correct"], "no_majority": len(gold.items) - len(scored)}
        wrong = [_label_error(item, answer) for item, answer in zip(scored, answers) if answer.value != item.label]
    description = judge.describe()
    templates, template_hash = template_fingerprint(gold.task, description.get("templates"))
    result = ValidationResult(
        task=gold.task, gold=gold.name, gold_source=gold.source, gold_size=len(answers),
        judge_model=description["model"], judge_revision=description["model_revision"],
        judge_backend=description["backend"],
        judge_settings={k: v for k, v in description.items() if k not in ("model", "model_revision", "backend")},
        templates=templates, template_hash=template_hash, metrics=metrics, per_label=per_label, confusion=confusion,
        counts={"items": len(answers), **tally, "failed": sum(not a.ok for a in answers),
                "failed_by_error": _failed_by_error(answers), "left_out": dict(gold.left_out)},
        baseline=baseline, annotators=annotators, bootstrap=bootstrap,
        date=datetime.now(timezone.utc).isoformat(timespec="seconds"), praib_version=__version__)
    return result, wrong


def _annotators(items: Sequence[GoldItem], predicted: Sequence[str | None]) -> dict | None:
    """The annotators' own agreement and the judge's kappa against each of them, where items carry
    the labels of at least two named annotators."""
    by_annotator: dict[str, dict[str, str]] = {}
    for item in items:
        for annotator, label in item.annotations.items():
            by_annotator.setdefault(annotator, {})[item.id] = label
    agreement = annotator_agreement(by_annotator) if len(by_annotator) > 1 else None
    if agreement is None or not agreement["items"]:
        return None
    judged = {item.id: label if label is not None else INVALID for item, label in zip(items, predicted)}
    judge_kappa = {annotator: cohen_kappa([judged[i] for i in labels], list(labels.values()))
                   for annotator, labels in by_annotator.items()}
    defined = [k for k in judge_kappa.values() if k is not None]
    return {**agreement, "judge_kappa": judge_kappa,
            "mean_judge_kappa": float(np.mean(defined)) if defined else None}


def _label_error(item: GoldItem, answer: Answer) -> dict:
    return {"id": item.id, "kind": item.kind, "text": item.text, "context": item.context, "gold": item.label,
            "judge": answer.value, "raw": answer.raw, "error": None if answer.ok else f"{answer.error}: {answer.reason}",
            **({"annotations": dict(item.annotations)} if item.annotations else {})}


def _atomic_error(item: GoldItem, answer: Answer, match: Mapping[str, np.ndarray]) -> dict:
    extracted = {side: answer.value.side(side) for side in SIDES} if answer.ok else None
    return {"id": item.id, "kind": item.kind, "text": item.text,
            "missed": {side: [atom for atom, hit in zip(item.atoms[side], match[side].any(axis=1)) if not hit]
                       for side in SIDES},
            "unmatched": {side: [atom for atom, hit in zip(extracted[side], match[side].any(axis=0)) if not hit]
                          for side in SIDES} if extracted else None,
            "gold": {side: list(item.atoms[side]) for side in SIDES}, "judge": extracted, "raw": answer.raw,
            "error": None if answer.ok else f"{answer.error}: {answer.reason}"}


def errors_path(output: str | Path) -> Path:
    """Where the items a judge got wrong go, beside ``output``: ``<output>.errors.jsonl``."""
    output = Path(output)
    return output.with_name(output.name + ".errors.jsonl")


# ---------------------------------------------------------------------------------------------
# the store
# ---------------------------------------------------------------------------------------------


def validations_dir(cache_dir: str | Path | None = None) -> Path:
    """The validations store: ``validations/`` in the call cache's folder (``cache_dir``, default
    :func:`praib.llm.judge.default_cache_dir`), one JSON file per judge, task and gold set."""
    return Path(cache_dir or default_cache_dir()) / STORE_FOLDER


def _judge_key(model: str, revision: str | None, template_hash: str, task: str) -> str:
    return hashlib.sha256(json.dumps([model, revision, template_hash, task]).encode()).hexdigest()[:24]


def store_validation(result: ValidationResult, cache_dir: str | Path | None = None) -> Path:
    """Keep ``result`` in the validations store (replacing the earlier result of the same judge, task
    and gold source); returns its file."""
    key = _judge_key(result.judge_model, result.judge_revision, result.template_hash, result.task)
    gold = hashlib.sha256(json.dumps([result.gold, result.gold_source, result.gold_size]).encode()).hexdigest()[:12]
    path = validations_dir(cache_dir) / result.task / f"{key}-{gold}.json"
    write_text_atomically(path, json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    return path


def find_validation(judge_description: Mapping[str, Any], task: str,
                    cache_dir: str | Path | None = None) -> ValidationResult | None:
    """The latest stored validation of this judge on ``task``, None when there is none.

    ``judge_description`` is :meth:`praib.llm.judge.Judge.describe` (as the results of a judged run
    record it): a result matches when its judge model, revision (None matches only None) and
    ``template_hash`` (of the templates the description's replacements make the task use, read now)
    are the description's. A description whose template file is gone matches nothing. Of several gold
    sets, the result with the latest ``date`` is returned. A store file that is not a validation result
    is a :class:`~praib.records.RecordError` naming it.
    """
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; tasks: {', '.join(TASKS)}")
    try:
        _, template_hash = template_fingerprint(task, judge_description.get("templates"))
    except ValueError:
        return None
    model, revision = judge_description.get("model"), judge_description.get("model_revision")
    key = _judge_key(model, revision, template_hash, task)
    found = []
    for path in sorted((validations_dir(cache_dir) / task).glob(f"{key}-*.json")):
        data = read_json(path, what="validation result")
        try:
            result = ValidationResult.from_dict(data)
        except (TypeError, KeyError, ValueError, AttributeError) as err:
            raise RecordError(str(path), None, f"not a validation result ({type(err).__name__}: {err})") from None
        if (result.judge_model, result.judge_revision, result.template_hash, result.task) == (
                model, revision, template_hash, task):
            found.append(result)
    return max(found, key=lambda r: r.date) if found else None


# ---------------------------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------------------------

# Landis and Koch (1977): the usual words for kappa's ranges.
KAPPA_WORDS = ((0.0, "no better than chance"), (0.2, "slight"), (0.4, "fair"), (0.6, "moderate"),
               (0.8, "substantial"), (1.0, "almost perfect"))


def kappa_words(kappa: float) -> str:
    """Landis and Koch's word for a kappa: up to 0 no better than chance, then slight (to 0.2), fair
    (0.4), moderate (0.6), substantial (0.8) and almost perfect agreement."""
    return next(words for bound, words in KAPPA_WORDS if kappa <= bound)


def _table(rows: Sequence[Sequence[str]], right: int = 1) -> list[str]:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) if c < right else cell.rjust(w) for c, (cell, w) in enumerate(zip(row, widths)))
            .rstrip() for row in rows]


def format_validation(result: ValidationResult, gold_summary: str | None = None) -> str:
    """The result as text: the judge, the gold set, the metrics with their intervals and, beside them,
    what chance and the majority class would score, then per label, the confusion table, the
    failures and a plain reading of kappa."""
    templates = ", ".join(entry["template"] for entry in result.templates.values())
    lines = [f"Judge validation, task {result.task}: judge {result.judge_model} ({result.judge_backend}"
             + (f", revision {result.judge_revision}" if result.judge_revision else "") + ")",
             f"Templates: {templates} (hash {result.template_hash[:12]})",
             f"Gold: {result.gold} ({result.gold_source}), {result.gold_size} items"
             + "".join(f"; {n} left out: {why}" for why, n in result.counts["left_out"].items())]
    if gold_summary:
        lines.append(gold_summary)
    b = result.bootstrap
    lines += ["", f"{round(b['confidence'] * 100)}% intervals: percentiles of {b['resamples']} bootstrap "
                  f"resamples of the items (seed {b['seed']})", ""]
    names = ({"recall": "recall of gold atoms", "precision": "precision", "f1": "F1"} if result.task == "atomic"
             else {"accuracy": "accuracy", "macro_f1": "macro-F1", "cohen_kappa": "Cohen's κ"})
    rows = [("", "value", "interval")]
    for name, label in names.items():
        estimate = result.metrics[name]
        interval = f"[{_number(estimate.low)}, {_number(estimate.high)}]" if estimate.low is not None else ""
        rows.append((label, _number(estimate.value), interval))
        if name == "accuracy":
            rows.append((f"  majority class ({result.baseline['label']})", _number(result.baseline["accuracy"]), ""))
        if name == "cohen_kappa":
            rows.append(("  chance", "0.000", ""))
    lines += _table(rows, right=1)
    lines += ["", *_table([("side" if result.task == "atomic" else "label",
                            "gold atoms" if result.task == "atomic" else "gold",
                            "extracted" if result.task == "atomic" else "judged", "precision", "recall")]
                          + [(label, str(s.gold), str(s.judged), _estimate(s.precision), _estimate(s.recall))
                             for label, s in result.per_label.items()], right=1)]
    if result.confusion is not None:
        columns = list(next(iter(result.confusion.values())))
        lines += ["", "confusion (rows: gold, columns: judge)",
                  *_table([("", *columns)] + [(gold, *(str(row[c]) for c in columns))
                                              for gold, row in result.confusion.items()], right=1)]
    counts = result.counts
    if counts.get("no_majority"):
        lines += ["", f"{counts['no_majority']} items whose annotators tie: left out of the scores above, in the "
                      "judge's κ against each annotator below"]
    lines += ["", f"{counts['failed']} {'item' if counts['failed'] == 1 else 'items'} without a usable answer, "
                  "counted as wrong"
              + (f" ({', '.join(f'{n} {e}' for e, n in counts['failed_by_error'].items())})" if counts["failed"] else "")
              + (f"; {counts['match_failures']} match answers unreadable, counted as no match"
                 if counts.get("match_failures") else "")]
    if result.annotators:
        a = result.annotators
        lines.append(f"Annotators (the ceiling): {a['annotators']} on {a['items']} shared items; Krippendorff's α "
                     f"{_number(a['krippendorff_alpha'])}, mean pairwise κ {_number(a['mean_pairwise_kappa'])}; "
                     f"the judge's mean κ against each {_number(a['mean_judge_kappa'])}")
    lines += _reading(result)
    return "\n".join(lines)


def _reading(result: ValidationResult) -> list[str]:
    if result.task == "atomic":
        return []
    kappa, accuracy = result.metrics["cohen_kappa"], result.metrics["accuracy"]
    notes = []
    if kappa.value is None:
        notes.append("κ is undefined here (one label is all there is): read accuracy against the majority class")
    elif kappa.low is not None and kappa.low <= 0:
        notes.append(f"κ's {round(result.bootstrap['confidence'] * 100)}% interval includes 0: on this gold set the "
                     "judge's agreement with the people cannot be told apart from chance")
    else:
        notes.append(f"κ {kappa.value:.2f}: {kappa_words(kappa.value)} agreement beyond chance (Landis and Koch)")
    if accuracy.value is not None and accuracy.value <= result.baseline["accuracy"]:
        notes.append(f"accuracy is not above the majority class's {result.baseline['accuracy']:.3f} "
                     f"(always {result.baseline['label']!r})")
    return ["Reading: " + "; ".join(notes) + "."]
