"""Target / aspect annotation of strengths and weaknesses, and model-expert agreement on them.

Follows the target-aspect agreement study (``shared/seeds/target-aspect-agreement.txt``,
"Automatically Evaluating the Paper Reviewing Capability of Large Language Models"):

* every strength or weakness gets one **target** (which part of the paper it is about) and one
  **aspect** (which quality of it), from the coding scheme of the seed's Table 1, by a judge with
  four prompts, target/aspect x strength/weakness (``praib/llm/templates/
  {target,aspect}_{strength,weakness}.jinja``), answers constrained to the label set;
* the model's and the experts' label sets are compared with precision, recall and F1, overall, for
  strengths and weaknesses, per target and per aspect (:func:`agreement_report`; the seed's Tables 3,
  4 and 7-12), computed the way the published cells are (see below);
* label shares (:func:`label_distribution`), and the share of model reviews recommending
  rejection of papers that were rejected (:func:`rejection_rate`, the seed's Table 5);
* optionally, the experts' side built from a meta-review with the seed's three-step chain
  (:func:`restructure_meta_review`).

Definitions (the seed names the compared sets; the aggregation is read off its tables):

* A paper's label set for one kind is the **set of distinct (target, aspect) pairs** of its items
  of that kind; duplicates count once; items whose target or aspect is None (an invalid judge
  answer) are dropped. For "overall" the set is the set of (kind, target, aspect) triples, so a
  strength never matches a weakness.
* Overall and per kind: precision = sum TP / sum |M| and recall = sum TP / sum |E| over the papers
  where either side has a label, F1 = 2PR / (P + R) of those (Table 3: DeepSeek-R1 0.373 from
  P 0.314 and R 0.460). The mean of the per-paper values is kept as ``per_paper_mean``.
* Per target T (per aspect likewise) and kind: the presence of T, i.e. whether any of the paper's
  items of that kind on each side has target T; then P, R and F1 as above over the papers where
  either side names T (Tables 8, 9, 11, 12). Over both kinds (Tables 7, 10): the mean of the
  strength and weakness cells (Validity 0.775 = mean(0.599, 0.951)).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

from praib.metrics.scores.distributions import decision_class
from praib.metrics.summary import summarise

TARGETS = ("Problem", "Prior Research", "Method", "Theory", "Experiment", "Conclusion", "Paper", "Review process")
ASPECTS = ("Impact", "Novelty", "Clarity", "Validity", "Not-specific", "Irrelevant")
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


def _cell(counts: Sequence[tuple[int, int, int]], values: dict[str, list] | None = None) -> dict:
    """One cell of the study's tables from the per-paper (TP, |M|, |E|) of the papers counted:
    precision and recall of the summed counts and F1 = 2PR / (P + R) of those (Table 3's cells
    satisfy this: DeepSeek-R1 0.373 from P 0.314, R 0.460). ``values``: the per-paper P, R and
    F1, whose means are kept beside it as ``per_paper_mean``."""
    tp, n_model, n_expert = (sum(c[i] for c in counts) for i in range(3))
    cell = {**_prf(tp, n_model, n_expert), "n_papers": len(counts)}
    if values is not None:
        cell["per_paper_mean"] = {key: summarise(values[key]) for key in ("precision", "recall", "f1")}
    return cell


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
    return _cell(counts, values)


def _presence(units: Iterable[tuple[bool, bool]]) -> dict:
    """A per-label cell: each paper counts whether the model and the experts name the label at all."""
    return _cell([(int(model and expert), int(model), int(expert)) for model, expert in units if model or expert])


def _mean_of_kinds(strength: dict, weakness: dict) -> dict:
    """A per-label cell over both kinds, as Tables 7 and 10 give it: the mean of the strength and the
    weakness cells (Validity 0.775 = mean(0.599, 0.951)); the defined one where only one is."""
    mean = {}
    for key in ("precision", "recall", "f1"):
        defined = [cell[key] for cell in (strength, weakness) if cell[key] is not None]
        mean[key] = sum(defined) / len(defined) if defined else None
    return mean


def agreement_report(per_paper: Sequence[Mapping[str, Any]]) -> dict:
    """Agreement between model and expert labels, from one entry per (paper, kind):
    ``{"paper_id", "kind": "strength"|"weakness", "model": [(t, a), ...], "expert": [(t, a), ...]}``.

    ``overall`` (both kinds, labels tagged with their kind) and ``by_kind`` compare the
    (target, aspect) sets: precision and recall of the counts summed over papers, F1 from them,
    and ``per_paper_mean`` (mean/std/n of the per-paper values) as an extra. ``by_kind_target`` /
    ``by_kind_aspect`` (the study's Tables 8, 9, 11, 12) score the presence of each label: per
    paper, whether the model's and the experts' items of that kind name it. ``by_target`` /
    ``by_aspect`` (Tables 7, 10) are the mean of the strength and weakness cells.
    ``target_aspect_f1`` is the overall F1 (Table 3). Entries for the same paper and kind are merged.
    """
    sides: dict[tuple, dict[str, set]] = {}
    for entry in per_paper:
        key = (entry["paper_id"], _kind(entry["kind"]))
        side = sides.setdefault(key, {"model": set(), "expert": set()})
        side["model"] |= _pairs(entry.get("model") or ())
        side["expert"] |= _pairs(entry.get("expert") or ())

    papers = list(dict.fromkeys(paper for paper, _ in sides))

    def tagged(paper: Any, side: str, kinds: Sequence[str]) -> set:
        return {(kind, *label) for kind in kinds for label in sides.get((paper, kind), {}).get(side, ())}

    def cell(kinds: Sequence[str]) -> dict:
        return _aggregate((tagged(p, "model", kinds), tagged(p, "expert", kinds)) for p in papers)

    def names(paper: Any, side: str, kind: str, position: int) -> set:
        return {label[position] for label in sides.get((paper, kind), {}).get(side, ())}

    def by_label(kind: str, position: int, labels: Sequence[str]) -> dict:
        named = [(names(p, "model", kind, position), names(p, "expert", kind, position)) for p in papers]
        return {label: _presence((label in model, label in expert) for model, expert in named) for label in labels}

    by_kind_target = {kind: by_label(kind, 0, TARGETS) for kind in KINDS}
    by_kind_aspect = {kind: by_label(kind, 1, ASPECTS) for kind in KINDS}
    report = {
        "overall": cell(KINDS),
        "by_kind": {kind: cell((kind,)) for kind in KINDS},
        "by_target": {t: _mean_of_kinds(*(by_kind_target[k][t] for k in KINDS)) for t in TARGETS},
        "by_aspect": {a: _mean_of_kinds(*(by_kind_aspect[k][a] for k in KINDS)) for a in ASPECTS},
        "by_kind_target": by_kind_target,
        "by_kind_aspect": by_kind_aspect,
    }
    report["target_aspect_f1"] = report["overall"]["f1"]
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
