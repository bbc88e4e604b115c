"""Directional and invariance tests of reviews (or meta-reviews) of perturbed inputs.

The aspect-guided perturbation seed edits a paper, a review or a rebuttal along one quality
aspect and compares the model's output on the perturbed input with its output on the original.
Here every perturbed record is paired with the original record of the same paper and reviewer
(``paper_id``, ``source`` and, when present, ``model``, ``prompt``, ``reviewer_id``); perturbed
records keep the original's ``paper_id`` and carry a ``perturbation`` struct naming the edit.

For every score the records hold (rating, confidence, each sub-score, and a numeric decision)
and every perturbation kind, :func:`robustness_report` gives a :func:`praib.metrics.perturbation.stats.verdict`:
a significant increase or decrease (one-sided Wilcoxon signed-rank tests), equivalence within
the seed's margin (TOST), or inconclusive. Where decisions exist it adds their transition
matrix, Cohen's kappa between the original and perturbed decisions, the change in the
acceptance rate and the change in the share of each decision category (the seed's Table 7).
:func:`format_robustness_table` prints the verdicts like the seed's Tables 2/4.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from datasets import Dataset

from praib.metrics.judged.judge_quality import cohen_kappa
from praib.records import perturbation_kind
from praib.records.ids import reviewer_label
from praib.scales import UnknownScaleError, generic_scales, venue_scales
from praib.metrics.perturbation.stats import (NARROW_MARGIN, acceptance_rate_change, category_shares,
                                              equivalence_margin, transition_matrix, verdict)

if TYPE_CHECKING:
    from praib.metrics.perturbation.treatment import TreatmentEffects

PAIR_FIELDS = {
    "review": ("paper_id", "source", "model", "prompt", "reviewer_id"),
    "meta_review": ("paper_id", "source", "model", "prompt"),
}

# Decisions as ordered levels, as the seed's meta-reviewer outcomes are ordered:
# reject < accept as poster < spotlight < oral. A plain "accept" counts as a poster.
DECISION_LEVELS = {0: "reject", 1: "accept (poster)", 2: "spotlight", 3: "oral"}
DECISION = "decision"
#: ICLR 2024's decisions, by level (the aspect-guided study's sampling frame, §4: 3,519 rejected, 1,808 posters,
#: 366 spotlights, 86 orals of 5,779 submissions).
ICLR_2024_DECISIONS = {0: 3519, 1: 1808, 2: 366, 3: 86}


def proportional_levels(counts: dict[int, int] = ICLR_2024_DECISIONS) -> dict[int, float]:
    """The study's "proportional mapping" of decisions (its Tables 14, 15 beside the "simple mapping" 0-3, which it
    names but does not define), as praib reads it: each category at the middle of its share of submissions
    (its mid-rank, or ridit), rescaled so reject is 0 and oral 3 like the simple mapping, so that the same ±0.5
    equivalence margin applies. A step between two categories then counts by how many submissions lie between
    them: reject → poster is 2.01, poster → oral 0.99."""
    total, below, ridits = sum(counts.values()), 0, {}
    for level in sorted(counts):
        ridits[level] = (below + counts[level] / 2) / total
        below += counts[level]
    low, high = ridits[min(ridits)], ridits[max(ridits)]
    return {level: 3 * (ridit - low) / (high - low) for level, ridit in ridits.items()}
_SYMBOLS = {"increase": "↑", "decrease": "↓", "equivalent": "≈", "inconclusive": "?"}


class PairingError(ValueError):
    """Original and perturbed records that cannot be paired one to one."""


def decision_level(recommendation: str | None) -> int | None:
    """The ordered decision level of a recommendation or final decision ("Reject",
    "Accept as Spotlight", "weak accept", ...); None when it names no decision."""
    if not recommendation:
        return None
    text = recommendation.lower()
    if "reject" in text:
        return 0
    for word, level in (("oral", 3), ("spotlight", 2), ("poster", 1), ("accept", 1)):
        if word in text:
            return level
    return None


def _rating_decisions(scale) -> dict[int, int] | None:
    """Decision levels of a rating scale whose every label is itself a decision ("Reject",
    "Weak Accept", ...; ICLR 2020). Scales with labels such as "marginally below the
    acceptance threshold" say nothing about the decision and give None."""
    levels = {}
    for value, label in scale.labels.items():
        head = label.split(":")[0].split(",")[0].strip().lower()
        words = head.split()
        if not words or len(words) > 2 or words[-1] not in ("accept", "reject"):
            return None
        levels[value] = 0 if words[-1] == "reject" else 1
    return levels


def _scales(row: dict, cache: dict):
    key = (row.get("venue"), row.get("year"))
    if key not in cache:
        try:
            cache[key] = venue_scales(*key) if key[0] else generic_scales()
        except UnknownScaleError:
            cache[key] = generic_scales()
    return cache[key]


def record_scores(row: dict, scale_cache: dict | None = None) -> dict[str, float]:
    """Every score of one record by name: rating, confidence, each sub-score, and the
    decision level (from ``recommendation``, else from a rating scale made of decisions)."""
    scores: dict[str, float] = {}
    for name in ("rating", "confidence"):
        if row.get(name) is not None:
            scores[name] = row[name]
    for item in row.get("subscores") or []:
        if item.get("value") is not None:
            scores[item["name"]] = item["value"]
    level = decision_level(row.get("recommendation"))
    if level is None and row.get("rating") is not None:
        mapping = _rating_decisions(_scales(row, {} if scale_cache is None else scale_cache).rating)
        level = mapping.get(row["rating"]) if mapping else None
    if level is not None:
        scores[DECISION] = level
    return scores


def _scale_values(row: dict, name: str, cache: dict) -> tuple | None:
    if name == DECISION:
        return tuple(DECISION_LEVELS)
    scales = _scales(row, cache)
    if name == "rating":
        return scales.rating.values
    if name == "confidence":
        return scales.confidence.values if scales.confidence else None
    return scales.subscores[name].values if name in scales.subscores else None


def pair_key(row: dict, kind: str) -> tuple:
    return tuple(row.get(name) for name in PAIR_FIELDS[kind])


def _describe(key: tuple, kind: str) -> str:
    return ", ".join(f"{name}={value}" for name, value in zip(PAIR_FIELDS[kind], key) if value is not None)


def _problem(label: str, items: list[str]) -> str:
    shown = "; ".join(items[:5]) + (f"; ... ({len(items) - 5} more)" if len(items) > 5 else "")
    return f"{len(items)} {label}: {shown}"


def pair_records(original: Dataset, perturbed: Dataset, kind: str = "review") -> dict:
    """Pair each perturbed record with its original.

    Returns ``{"pairs": [{"key", "perturbation", "original", "perturbed"}, ...],
    "originals": [every original record]}``; originals that no perturbed record pairs with are
    legitimate (not every paper need be perturbed in every way) and are counted by the callers.
    Raises :class:`PairingError`, counting and naming every offending record, when an original
    carries a perturbation, a perturbed record carries none, a key occurs twice on either side
    (twice per perturbation kind among the perturbed), or a perturbed record has no original.
    """
    if kind not in PAIR_FIELDS:
        raise ValueError(f"cannot pair records of kind {kind!r}; choose from {', '.join(PAIR_FIELDS)}")
    problems = []
    originals: dict[tuple, dict] = {}
    duplicates, marked = [], []
    for index, row in enumerate(original.to_list()):
        key = pair_key(row, kind)
        if perturbation_kind(row):
            marked.append(f"original record {index} ({_describe(key, kind)}) has perturbation "
                          f"{perturbation_kind(row)!r}")
        if key in originals:
            duplicates.append(f"original record {index} ({_describe(key, kind)})")
        originals.setdefault(key, row)
    problems += [_problem("originals carrying a perturbation", marked)] if marked else []
    problems += [_problem("duplicate originals", duplicates)] if duplicates else []

    pairs, seen = [], set()
    unmarked, orphans, duplicates = [], [], []
    for index, row in enumerate(perturbed.to_list()):
        key, edit = pair_key(row, kind), perturbation_kind(row)
        where = f"perturbed record {index} ({_describe(key, kind)})"
        if not edit:
            unmarked.append(where)
        elif key not in originals:
            orphans.append(f"{where}, perturbation {edit!r}")
        elif (key, edit) in seen:
            duplicates.append(f"{where}, perturbation {edit!r}")
        else:
            seen.add((key, edit))
            pairs.append({"key": key, "perturbation": row["perturbation"], "original": originals[key],
                          "perturbed": row})
    problems += [_problem("perturbed records without a perturbation struct", unmarked)] if unmarked else []
    problems += [_problem("perturbed records without an original", orphans)] if orphans else []
    problems += [_problem("duplicate perturbed records", duplicates)] if duplicates else []
    if problems:
        raise PairingError("cannot pair original and perturbed records:\n  " + "\n  ".join(problems))
    return {"pairs": pairs, "originals": list(originals.values())}


def _margins(pairs: list[dict], names: set[str], overrides: dict[str, float], cache: dict) -> dict[str, float]:
    margins = {}
    for name in sorted(names):
        if name in overrides:
            margins[name] = float(overrides[name])
            continue
        values = {v for pair in pairs for v in (_scale_values(pair["original"], name, cache) or ())}
        if not values:
            # A sub-score no scale file describes: the values it was given are all we know.
            values = {s[name] for pair in pairs for s in (pair["original_scores"], pair["perturbed_scores"])
                      if name in s}
        margins[name] = equivalence_margin(values) if values else NARROW_MARGIN
    return margins


def _decision_summary(pairs: list[dict], margin: float, alpha: float) -> dict | None:
    known = [(p["original_scores"].get(DECISION), p["perturbed_scores"].get(DECISION)) for p in pairs]
    known = [(a, b) for a, b in known if a is not None and b is not None]
    if not known:
        return None
    before, after = [a for a, _ in known], [b for _, b in known]
    proportional = proportional_levels()
    matrix = transition_matrix(before, after, list(DECISION_LEVELS))
    matrix["labels"] = list(DECISION_LEVELS.values())
    return {
        "n": len(known),
        "transition": matrix,
        "cohen_kappa": cohen_kappa(before, after),
        "acceptance_rate": acceptance_rate_change([a >= 1 for a in before], [b >= 1 for b in after]),
        "category_shares": {DECISION_LEVELS[level]: shares
                            for level, shares in category_shares(before, after, DECISION_LEVELS).items()},
        "proportional": {**verdict([proportional[a] for a in before], [proportional[b] for b in after], margin, alpha),
                         "levels": {DECISION_LEVELS[level]: value for level, value in proportional.items()}},
    }


@dataclass
class RobustnessReport:
    """The verdicts of :func:`robustness_report`: the record ``kind``, the significance level, each score's
    equivalence margin and the pairs tested, and per reviewer label its ``{"perturbations": {kind: result}}``
    (each result's n, category, component, per-score verdicts and decision summary as the JSON-ready
    mappings of :mod:`praib.metrics.perturbation.stats`); ``treatment_effects`` where the records include
    counterfactual variants and they were estimated (``praib robustness``); ``inputs``: where the records
    came from, when the caller says. :meth:`to_dict` gives the JSON ``praib robustness --output`` writes."""

    kind: str
    alpha: float
    margins: dict[str, float]
    n_pairs: int
    reviewers: dict[str, dict]
    treatment_effects: "TreatmentEffects | None" = None
    inputs: dict | None = None

    def to_dict(self) -> dict:
        out = {"kind": self.kind, "alpha": self.alpha, "margins": dict(self.margins), "n_pairs": self.n_pairs,
               "reviewers": self.reviewers}
        if self.treatment_effects is not None:
            out["treatment_effects"] = self.treatment_effects.to_dict()
        if self.inputs is not None:
            out["inputs"] = self.inputs
        return out


def robustness_report(original: Dataset, perturbed: Dataset, kind: str = "review", alpha: float = 0.05,
                      margins: dict[str, float] | None = None) -> RobustnessReport:
    """Verdicts of every score under every perturbation, per reviewer.

    ``margins`` overrides the equivalence margin of named scores (``{"rating": 1.5}``);
    otherwise a score's margin follows the span of its scale (:func:`praib.metrics.perturbation.stats.equivalence_margin`).
    """
    paired = pair_records(original, perturbed, kind)
    cache: dict = {}
    for pair in paired["pairs"]:
        pair["original_scores"] = record_scores(pair["original"], cache)
        pair["perturbed_scores"] = record_scores(pair["perturbed"], cache)
    names = {name for pair in paired["pairs"] for name in (*pair["original_scores"], *pair["perturbed_scores"])}
    unknown = set(margins or {}) - names
    if unknown:
        raise ValueError(f"margin given for scores the records do not have: {', '.join(sorted(unknown))}; "
                         f"scores present: {', '.join(sorted(names)) or 'none'}")
    chosen = _margins(paired["pairs"], names, margins or {}, cache)

    groups: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for pair in paired["pairs"]:
        groups[reviewer_label(pair["original"])][pair["perturbation"]["kind"]].append(pair)
    originals_per_reviewer = Counter(reviewer_label(row) for row in paired["originals"])
    reviewers = {}
    for label, by_edit in sorted(groups.items()):
        results = {}
        for edit, pairs in sorted(by_edit.items()):
            scores = {}
            for name in sorted(names):
                before = [p["original_scores"].get(name) for p in pairs]
                after = [p["perturbed_scores"].get(name) for p in pairs]
                if all(a is None or b is None for a, b in zip(before, after)):
                    continue
                entry = verdict(before, after, chosen[name], alpha)
                observed = sorted({v for v in before + after if v is not None})
                entry["transition"] = transition_matrix(before, after, observed)
                scores[name] = entry
            first = pairs[0]["perturbation"]
            results[edit] = {"category": first.get("category"), "component": first.get("component"),
                             "n_pairs": len(pairs), "n_unperturbed": originals_per_reviewer[label] - len(pairs),
                             "scores": scores,
                             "decision": _decision_summary(pairs, chosen.get(DECISION, 0.5), alpha)}
        reviewers[label] = {"perturbations": results}
    return RobustnessReport(kind, alpha, chosen, len(paired["pairs"]), reviewers)


def format_robustness_table(report: RobustnessReport) -> str:
    """The verdicts as text tables, one per reviewer: rows are perturbation kinds, columns
    scores; a cell is ↑/↓ with the one-sided Wilcoxon p-value, ≈ with the TOST p-value, or ?
    (inconclusive) with the TOST p-value; blank where the score is missing."""
    lines = []
    for label, entry in report.reviewers.items():
        perturbations = entry["perturbations"]
        names = sorted({name for result in perturbations.values() for name in result["scores"]},
                       key=lambda n: (n == DECISION, {"rating": 0, "confidence": 1}.get(n, 2), n))
        header = ["Perturbation", "n", *names]
        rows = []
        for edit, result in perturbations.items():
            cells = [edit, str(result["n_pairs"])]
            for name in names:
                score = result["scores"].get(name)
                cells.append(_cell(score) if score else "")
            rows.append(cells)
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines.append(f"{label}")
        lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        lines.append("  ".join("-" * w for w in widths))
        lines.extend("  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows)
        if not names:
            lines.append("(no score is known on both sides of any pair: nothing to test; check parse_status)")
        lines.append("")
    margins = ", ".join(f"{name} ±{margin:g}" for name, margin in report.margins.items()) or "none"
    lines.append(f"↑/↓ significant increase/decrease (one-sided Wilcoxon, p < {report.alpha:g}); "
                 f"≈ equivalent (TOST); ? inconclusive. Margins: {margins}.")
    return "\n".join(lines)


def _cell(score: dict[str, Any]) -> str:
    label = score["verdict"]
    if label == "increase":
        p = score["p_increase"]
    elif label == "decrease":
        p = score["p_decrease"]
    else:
        p = score["p_equivalence"]
    if p is None:
        return _SYMBOLS[label]
    return f"{_SYMBOLS[label]} p<0.001" if p < 0.001 else f"{_SYMBOLS[label]} p={p:.3f}"
