"""Target / aspect annotation of strengths and weaknesses, and model-expert agreement on them.

Follows the target-aspect agreement study (``shared/seeds/target-aspect-agreement.txt``,
"Automatically Evaluating the Paper Reviewing Capability of Large Language Models"):

* every strength or weakness gets one **target** (which part of the paper it is about) and one
  **aspect** (which quality of it), from the coding scheme of the seed's Table 1, by a judge with
  four prompts, target/aspect x strength/weakness (``praib/llm/templates/
  {target,aspect}_{strength,weakness}.jinja``), answers constrained to the label set;
* for each paper the model's and the experts' label sets are compared with precision, recall and
  F1 (:func:`label_set_agreement`), overall, for strengths and weaknesses, per target and per
  aspect (:func:`agreement_report`; the seed's Tables 3, 4 and 7-12);
* label shares (:func:`label_distribution`), and the share of model reviews recommending
  rejection of papers that were rejected (:func:`rejection_rate`, the seed's Table 5);
* optionally, the experts' side built from a meta-review with the seed's three-step chain
  (:func:`restructure_meta_review`).

Definitions (the seed says the metrics compare "the (target, aspect) set" of the two reviews and
does not spell out more; these are the choices made here):

* A paper's label set for one kind is the **set of distinct (target, aspect) pairs** of its items
  of that kind; duplicates count once; items whose target or aspect is None (an invalid judge
  answer) are dropped. For "overall" the set is the set of (kind, target, aspect) triples, so a
  strength never matches a weakness.
* With M the model set and E the expert set: precision = |M & E| / |M|, recall = |M & E| / |E|,
  F1 = 2PR / (P + R) (0 when P + R = 0). Empty sets: if both are empty the paper has nothing to
  compare and all three are None (left out of the averages); if only M is empty, precision is 0
  (nothing correct was said) and recall 0; if only E is empty, precision 0 and recall 0. So a
  paper counts as soon as either side has a label, and F1 is then 0 unless both sides share one.
* Per target T: the same, with both sets restricted to the pairs whose target is T (a paper is
  counted for T only when at least one side has a T pair). Per aspect likewise.
* Aggregation: ``macro`` is the mean (and sample std) of the per-paper values over the papers
  counted (``praib.evaluation.evaluate.summarise``); ``micro`` pools true positives, |M| and |E| over
  papers first. The seed reports one number per cell without saying which; its per-paper framing
  ("for each paper ... compared") matches ``macro``, which is what ``target_aspect_f1`` reports.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

from praib.metrics.scores.distributions import decision_class
from praib.metrics.summary import summarise

TARGETS = ("Problem", "Prior Research", "Method", "Theory", "Experiment", "Conclusion", "Paper")
ASPECTS = ("Impact", "Novelty", "Clarity", "Validity", "Not-specific")
KINDS = ("strength", "weakness")

Label = tuple  # (target | None, aspect | None)


class LabelledItems(list):
    """The (target, aspect) of each item, in order; ``invalid`` counts judge answers outside the
    label set (``{"target": n, "aspect": n}``) which were replaced by None."""

    def __init__(self, labels: Iterable[Label] = (), invalid: Mapping[str, int] | None = None):
        super().__init__(labels)
        self.invalid = dict(invalid or {"target": 0, "aspect": 0})


def _kind(kind: str) -> str:
    key = {"strengths": "strength", "weaknesses": "weakness"}.get(kind.lower(), kind.lower())
    if key not in KINDS:
        raise ValueError(f"kind must be 'strength' or 'weakness', not {kind!r}")
    return key


def label_items(items: Sequence[str], kind: str, judge: Any, progress: bool = False,
                ids: Sequence[str] | None = None) -> LabelledItems:
    """One target and one aspect per strength or weakness in ``items``.

    Two judge calls per item, ``target_<kind>`` and ``aspect_<kind>``, each a constrained choice
    among :data:`TARGETS` / :data:`ASPECTS`. A failed call or an answer outside the set becomes None,
    is counted in the result's ``invalid`` and recorded as a failure named by ``ids``.
    """
    kind = _kind(kind)
    rows = [{"item": text} for text in items]
    if not rows:
        return LabelledItems()
    targets = [a.value for a in judge.choose(f"target_{kind}", rows, TARGETS, progress=progress,
                                             ids=[f"{i}/target" for i in ids] if ids is not None else None)]
    aspects = [a.value for a in judge.choose(f"aspect_{kind}", rows, ASPECTS, progress=progress,
                                             ids=[f"{i}/aspect" for i in ids] if ids is not None else None)]
    invalid = {"target": sum(t is None for t in targets), "aspect": sum(a is None for a in aspects)}
    return LabelledItems(list(zip(targets, aspects)), invalid)


def _pairs(labels: Iterable[Sequence]) -> set[tuple]:
    return {tuple(label) for label in labels if all(part is not None for part in label)}


def _counts(model: set, expert: set) -> tuple[int, int, int]:
    return len(model & expert), len(model), len(expert)


def _prf(tp: int, n_model: int, n_expert: int) -> dict[str, float | None]:
    if n_model == 0 and n_expert == 0:
        return {"precision": None, "recall": None, "f1": None}
    precision = tp / n_model if n_model else 0.0
    recall = tp / n_expert if n_expert else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def label_set_agreement(model_labels: Iterable[Sequence], expert_labels: Iterable[Sequence]) -> dict[str, float | None]:
    """Precision, recall and F1 of one paper's model label set against its expert label set.

    Labels are tuples (usually (target, aspect)); each side is reduced to its set of distinct
    labels, dropping those with a None part. Both sets empty: all None; one empty: 0, 0, 0.
    """
    return _prf(*_counts(_pairs(model_labels), _pairs(expert_labels)))


def _summaries(values: dict[str, list], counts: dict[str, list[int]]) -> dict:
    tp, n_model, n_expert = (sum(c[i] for c in counts) for i in range(3)) if counts else (0, 0, 0)
    return {"macro": {key: summarise(values[key]) for key in ("precision", "recall", "f1")},
            "micro": _prf(tp, n_model, n_expert), "n_papers": len(counts)}


def _aggregate(units: Iterable[tuple[set, set]]) -> dict:
    values: dict[str, list] = {"precision": [], "recall": [], "f1": []}
    counts = []
    for model, expert in units:
        c = _counts(model, expert)
        if c[1] == 0 and c[2] == 0:
            continue
        for key, value in _prf(*c).items():
            values[key].append(value)
        counts.append(c)
    return _summaries(values, counts)


def agreement_report(per_paper: Sequence[Mapping[str, Any]]) -> dict:
    """Agreement between model and expert labels, from one entry per (paper, kind):
    ``{"paper_id", "kind": "strength"|"weakness", "model": [(t, a), ...], "expert": [(t, a), ...]}``.

    Returns ``overall``, ``by_kind`` (strength/weakness), ``by_target`` and ``by_aspect`` (each
    over both kinds, as the seed's Tables 7 and 10) and ``by_kind_target`` / ``by_kind_aspect``
    (Tables 8, 9, 11, 12). Every cell holds ``macro`` (mean/std/n over papers of per-paper
    precision, recall, F1), ``micro`` (pooled counts) and ``n_papers``. ``target_aspect_f1`` is
    the overall macro mean F1. Entries for the same paper and kind are merged.
    """
    sides: dict[tuple, dict[str, set]] = {}
    for entry in per_paper:
        key = (entry["paper_id"], _kind(entry["kind"]))
        side = sides.setdefault(key, {"model": set(), "expert": set()})
        side["model"] |= _pairs(entry.get("model") or ())
        side["expert"] |= _pairs(entry.get("expert") or ())

    papers = list(dict.fromkeys(paper for paper, _ in sides))

    def tagged(paper: Any, side: str, kinds: Sequence[str], keep=lambda label: True) -> set:
        return {(kind, *label) for kind in kinds for label in sides.get((paper, kind), {}).get(side, ()) if keep(label)}

    def cell(kinds: Sequence[str], keep=lambda label: True) -> dict:
        return _aggregate((tagged(p, "model", kinds, keep), tagged(p, "expert", kinds, keep)) for p in papers)

    def by_label(kinds: Sequence[str], position: int, names: Sequence[str]) -> dict:
        return {name: cell(kinds, lambda label, name=name: label[position] == name) for name in names}

    report = {
        "overall": cell(KINDS),
        "by_kind": {kind: cell((kind,)) for kind in KINDS},
        "by_target": by_label(KINDS, 0, TARGETS),
        "by_aspect": by_label(KINDS, 1, ASPECTS),
        "by_kind_target": {kind: by_label((kind,), 0, TARGETS) for kind in KINDS},
        "by_kind_aspect": {kind: by_label((kind,), 1, ASPECTS) for kind in KINDS},
    }
    report["target_aspect_f1"] = report["overall"]["macro"]["f1"]["mean"]
    return report


def label_distribution(labels: Iterable[Sequence]) -> dict:
    """Share of items per target and per aspect (every label present, zeros included).

    Shares are over the items that have that part labelled (a None target is left out of the
    target shares only), so each side sums to 1 when anything was labelled; ``n`` counts all
    items and ``unlabelled`` the None parts.
    """
    labels = [tuple(label) for label in labels]
    result: dict[str, Any] = {"n": len(labels), "unlabelled": {}}
    for position, part, names in ((0, "targets", TARGETS), (1, "aspects", ASPECTS)):
        counts = Counter(label[position] for label in labels if label[position] is not None)
        total = sum(counts.values())
        result[part] = {name: (counts[name] / total if total else 0.0) for name in names}
        result["unlabelled"][part] = len(labels) - total
    return result


def _recommends_reject(recommendation: Any) -> bool | None:
    if not isinstance(recommendation, str):
        return None
    text = recommendation.strip().lower()
    if text.startswith("reject"):
        return True
    if text.startswith("accept"):
        return False
    return None


def rejection_rate(recommendations: Sequence[str | None], decisions: Sequence[str | None]) -> dict:
    """Share of model reviews recommending rejection, among papers the venue rejected
    (``decision_class(decision) == "reject"``): the seed's Table 5, where 100% is best.

    ``recommendations`` are the reviews' ``recommendation`` ("accept"/"reject", case and trailing
    text ignored), parallel to ``decisions``. Reviews without a usable recommendation are left
    out and counted in ``unparsed``. ``accepted`` gives the same share among accepted papers for
    contrast (there 0% is best).
    """
    if len(recommendations) != len(decisions):
        raise ValueError("recommendations and decisions must be parallel")
    groups: dict[str, list[bool]] = {"reject": [], "accept": []}
    unparsed = {"reject": 0, "accept": 0}
    for recommendation, decision in zip(recommendations, decisions):
        cls = decision_class(decision)
        if cls is None:
            continue
        says = _recommends_reject(recommendation)
        if says is None:
            unparsed[cls] += 1
        else:
            groups[cls].append(says)

    def rate(values: list[bool]) -> float | None:
        return sum(values) / len(values) if values else None

    return {"rate": rate(groups["reject"]), "n": len(groups["reject"]), "unparsed": unparsed["reject"],
            "accepted": {"rate": rate(groups["accept"]), "n": len(groups["accept"]), "unparsed": unparsed["accept"]}}


# The seed's chain for the experts' side: (1) restructure the meta-review into summary,
# strengths, weaknesses and judgement, keeping its wording; (2) add detail to each point from the
# individual reviews; (3) rewrite the point headers so they summarise their bodies and strip
# mentions of reviewers. Each step here asks for JSON of this shape.
_REVIEW_SCHEMA = {
    "type": "object",
    "properties": {
        "summary": {"type": "string", "maxLength": 2000},
        "strengths": {"type": "array", "items": {"type": "string", "maxLength": 600}, "maxItems": 25},
        "weaknesses": {"type": "array", "items": {"type": "string", "maxLength": 600}, "maxItems": 25},
        "judgement": {"type": "string", "maxLength": 2000},
    },
    "required": ["summary", "strengths", "weaknesses", "judgement"],
}


def _read_review(value: Any) -> dict:
    if not (isinstance(value, dict) and all(isinstance(value.get(k), list) for k in ("strengths", "weaknesses"))
            and all(isinstance(x, str) for k in ("strengths", "weaknesses") for x in value[k])):
        raise ValueError("expected a JSON object with lists of strings 'strengths' and 'weaknesses'")
    return value


def restructure_meta_review(text: str, judge: Any, reviews: Sequence[str] | None = None,
                            item_id: str | None = None) -> dict:
    """Strengths and weaknesses of a paper from its meta-review, by the seed's three-step chain
    (templates ``meta_review_restructure``, ``meta_review_augment``, ``meta_review_paraphrase``).

    ``reviews``: the individual (non-meta) reviews used by step 2 to make each point
    self-contained; without them step 2 is skipped. A step whose answer is not valid JSON of the
    expected shape keeps the previous step's result (and ``failed_steps`` names it); if step 1
    fails, strengths and weaknesses are empty. ``item_id`` names the meta-review in failure records.
    Returns ``{"strengths": [...], "weaknesses": [...], "summary", "judgement", "failed_steps"}``.
    """
    failed: list[str] = []
    ids = [item_id] if item_id is not None else None
    step1 = judge.json("meta_review_restructure", [{"meta_review": text}], _REVIEW_SCHEMA, ids=ids,
                       parse=_read_review)[0]
    if not step1.ok:
        return {"strengths": [], "weaknesses": [], "summary": "", "judgement": "", "failed_steps": ["restructure"]}
    current = step1.value
    if reviews:
        step2 = judge.json("meta_review_augment", [{"reviews": list(reviews), "restructured": current}],
                           _REVIEW_SCHEMA, ids=ids, parse=_read_review)[0]
        if step2.ok:
            current = step2.value
        else:
            failed.append("augment")
    step3 = judge.json("meta_review_paraphrase", [{"restructured": current}], _REVIEW_SCHEMA, ids=ids,
                       parse=_read_review)[0]
    if step3.ok:
        current = step3.value
    else:
        failed.append("paraphrase")
    return {"strengths": list(current["strengths"]), "weaknesses": list(current["weaknesses"]),
            "summary": str(current.get("summary", "")), "judgement": str(current.get("judgement", "")),
            "failed_steps": failed}


def item_label_agreement(paper_ids: Sequence[str], kinds: Sequence[str], sides: Sequence[str],
                         targets: Sequence[str | None], aspects: Sequence[str | None]) -> dict:
    """:func:`agreement_report` of labelled items given one per row (``sides``: "model" or "expert"),
    with ``distribution``: the :func:`label_distribution` of each side."""
    entries, labels = {}, {"model": [], "expert": []}
    for paper, kind, side, target, aspect in zip(paper_ids, kinds, sides, targets, aspects):
        if side not in labels:
            raise ValueError(f"side must be 'model' or 'expert', not {side!r}")
        entry = entries.setdefault((paper, kind), {"paper_id": paper, "kind": kind, "model": [], "expert": []})
        entry[side].append((target, aspect))
        labels[side].append((target, aspect))
    report = agreement_report(list(entries.values()))
    report["distribution"] = {side: label_distribution(values) for side, values in labels.items()}
    return report
