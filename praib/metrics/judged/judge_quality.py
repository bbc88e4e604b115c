"""How far a judge can be trusted: agreement between two judges, and accuracy on a labelled set.

Every judged metric can be re-run with a second judge; :func:`two_judge_agreement`
compares the two label lists (Cohen's kappa, Krippendorff's nominal alpha and raw
agreement). :func:`judge_accuracy` checks a judge against a small set of labels
written by people (the PRAIB seed reports 96.6% accuracy for the math-engagement
judge on 30 annotated papers; the labelled data comes from the user), and
:func:`label_scores` adds macro-F1, Cohen's kappa and per-label precision and recall,
each with a percentile bootstrap interval over the items (:func:`percentile_bootstrap`);
:func:`annotator_agreement` gives the agreement of several people labelling the same
items, the ceiling a judge is compared with.

:func:`cohen_kappa` is computed here from its definition, ``(p_o - p_e) / (1 - p_e)``
(the tests check it against scikit-learn and statsmodels); :func:`label_scores` and
:func:`annotator_agreement` use scikit-learn's metrics. Krippendorff's alpha comes from
the ``krippendorff`` package, which praib already uses for rating agreement.
"""

from __future__ import annotations

import itertools
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np


def _pairs(a: Sequence, b: Sequence) -> list[tuple[Any, Any]]:
    if len(a) != len(b):
        raise ValueError(f"label lists differ in length: {len(a)} != {len(b)}")
    return [(x, y) for x, y in zip(a, b) if x is not None and y is not None]


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' nominal labels; pairs with a None label are skipped.

    ``p_o`` is the share of items both raters label alike, ``p_e`` the agreement
    expected by chance from each rater's own label frequencies. None when there
    are no pairs, or when chance agreement is already 1 (both raters always give
    the same single label), where kappa is undefined.
    """
    pairs = _pairs(a, b)
    n = len(pairs)
    if not n:
        return None
    p_o = sum(x == y for x, y in pairs) / n
    count_a, count_b = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    p_e = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    if p_e >= 1.0:
        return None
    return float((p_o - p_e) / (1.0 - p_e))


def krippendorff_nominal(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Krippendorff's alpha (nominal) of two raters; pairs with a None label are skipped.
    None when there are no pairs or only one label value occurs (alpha is undefined)."""
    pairs = _pairs(a, b)
    codes: dict[Any, int] = {}
    for x, y in pairs:
        codes.setdefault(x, len(codes))
        codes.setdefault(y, len(codes))
    if not pairs or len(codes) < 2:
        return None
    import krippendorff

    data = np.array([[codes[x] for x, _ in pairs], [codes[y] for _, y in pairs]], dtype=float)
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def two_judge_agreement(labels_a: Sequence[Hashable], labels_b: Sequence[Hashable]) -> dict:
    """Agreement of two judges labelling the same items (in the same order).

    Returns ``cohen_kappa``, ``krippendorff_alpha`` (nominal), ``agreement`` (share of
    items labelled alike), ``n`` (items both judges labelled) and ``skipped`` (items
    where either label is None, e.g. an invalid judge answer).
    """
    pairs = _pairs(labels_a, labels_b)
    n = len(pairs)
    return {
        "cohen_kappa": cohen_kappa(labels_a, labels_b),
        "krippendorff_alpha": krippendorff_nominal(labels_a, labels_b),
        "agreement": sum(x == y for x, y in pairs) / n if n else None,
        "n": n,
        "skipped": len(labels_a) - n,
    }


def _key(label: Any) -> str:
    if label is None:
        return "invalid"
    if isinstance(label, bool):
        return "yes" if label else "no"
    return str(label)


def judge_accuracy(labels: Sequence[Hashable | None], gold: Sequence[Hashable | None]) -> dict:
    """A judge's labels checked against gold labels (same items, same order).

    Items without a gold label are left out. A judge label of None (an invalid
    answer) counts as wrong and is reported under ``invalid``. Returns ``accuracy``
    (correct / n), ``n``, ``correct``, ``invalid`` and ``confusion``:
    ``{gold label: {judge label: count}}`` with labels as strings (booleans as
    "yes"/"no", None as "invalid").
    """
    if len(labels) != len(gold):
        raise ValueError(f"label lists differ in length: {len(labels)} != {len(gold)}")
    kept = [(p, g) for p, g in zip(labels, gold) if g is not None]
    n = len(kept)
    correct = sum(p is not None and p == g for p, g in kept)
    confusion: dict[str, dict[str, int]] = {}
    for p, g in kept:
        row = confusion.setdefault(_key(g), {})
        row[_key(p)] = row.get(_key(p), 0) + 1
    return {
        "accuracy": correct / n if n else None,
        "n": n,
        "correct": correct,
        "invalid": sum(p is None for p, _ in kept),
        "confusion": confusion,
    }


#: The label of an item the judge gave no usable answer for: always wrong, never a gold label.
INVALID = "invalid"


@dataclass(frozen=True)
class Estimate:
    """A number and its bootstrap interval (``low``, ``high``); any of them None where it is undefined
    (precision of a label the judge never gave, kappa when one label is all there is)."""

    value: float | None
    low: float | None = None
    high: float | None = None

    def to_dict(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Estimate":
        return cls(data.get("value"), data.get("low"), data.get("high"))


def percentile_bootstrap(statistic: Callable[[np.ndarray], Mapping[Hashable, float | None]], n: int,
                         resamples: int = 1000, seed: int = 0,
                         confidence: float = 0.95) -> dict[Hashable, tuple[float | None, float | None]]:
    """The percentile interval of every number ``statistic`` gives, over ``resamples`` resamples of
    ``n`` items drawn with replacement.

    ``statistic(indices)`` computes its numbers on the items at ``indices``. The draws are
    ``numpy.random.default_rng(seed).integers(0, n, size=(resamples, n))``, one row per resample,
    and the interval's bounds are ``numpy.percentile`` (linear) at ``(1 - confidence) / 2`` and
    ``(1 + confidence) / 2`` of the resamples where the number is defined (not None, not NaN);
    (None, None) where it is defined in none.
    """
    if n < 1:
        raise ValueError("a bootstrap needs at least one item")
    draws = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    values: dict[Hashable, list[float]] = {}
    for indices in draws:
        for key, value in statistic(indices).items():
            kept = values.setdefault(key, [])
            if value is not None and not np.isnan(value):
                kept.append(value)
    tails = [100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2]
    return {key: tuple(float(b) for b in np.percentile(kept, tails)) if kept else (None, None)
            for key, kept in values.items()}


def _defined(value: float) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


def _label_order(labels: Sequence[str] | None, used: set[str]) -> list[str]:
    order = [label for label in labels or () if label in used]
    return order + sorted(used - set(order))


def label_scores(predicted: Sequence[Hashable | None], gold: Sequence[Hashable], labels: Sequence[str] | None = None,
                 resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """A judge's labels scored against gold labels (same items, same order), each number with its
    :func:`percentile_bootstrap` interval over the items.

    A predicted None (no usable answer) is the label :data:`INVALID`: wrong on every item, a
    category of its own in kappa, the precision of no label. Labels are compared as strings
    (booleans as "yes"/"no"); ``labels`` orders them (the rest follow sorted).

    Returns ``n``, ``correct``, ``invalid`` (items without a usable answer), ``accuracy``,
    ``macro_f1`` (F1 averaged over the labels present in the gold items; a label never predicted
    has F1 0) and ``cohen_kappa`` (scikit-learn's, None where undefined) as :class:`Estimate`;
    ``per_label``: ``{label: {"precision": Estimate, "recall": Estimate, "gold": n, "judged": n}}``
    for every label in the gold or the answers (precision None for a label never predicted, recall
    None for one never in the gold); ``confusion``: ``{gold label: {judge label: count}}`` with
    every cell, the :data:`INVALID` column where there are invalid answers; ``majority``: the most
    frequent gold label (the first in order on a tie) and the accuracy of always answering it.
    """
    from sklearn.metrics import cohen_kappa_score, f1_score, precision_recall_fscore_support

    if len(predicted) != len(gold):
        raise ValueError(f"label lists differ in length: {len(predicted)} != {len(gold)}")
    if not gold:
        raise ValueError("no items to score")
    if any(label is None for label in gold):
        raise ValueError("every item needs a gold label")
    gold_keys, predicted_keys = [_key(g) for g in gold], [_key(p) for p in predicted]
    if INVALID in gold_keys:
        raise ValueError(f"{INVALID!r} cannot be a gold label: it stands for a judge answer that could not be read")
    order = _label_order(labels, set(gold_keys) | set(predicted_keys) - {INVALID})
    codes = {label: code for code, label in enumerate(order)}
    invalid_code = len(order)
    g = np.array([codes[k] for k in gold_keys])
    p = np.array([codes.get(k, invalid_code) for k in predicted_keys])
    every = list(range(len(order)))

    def scores(indices: np.ndarray) -> dict:
        gs, ps = g[indices], p[indices]
        with warnings.catch_warnings():  # one label in a resample: kappa is undefined, and None says so
            warnings.simplefilter("ignore")
            kappa = cohen_kappa_score(gs, ps)
            precision, recall, _, _ = precision_recall_fscore_support(gs, ps, labels=every, zero_division=np.nan)
            macro_f1 = f1_score(gs, ps, labels=np.unique(gs), average="macro", zero_division=0.0)
        out = {"accuracy": float(np.mean(gs == ps)), "macro_f1": float(macro_f1), "cohen_kappa": _defined(kappa)}
        for code, label in enumerate(order):
            out[("precision", label)] = _defined(precision[code])
            out[("recall", label)] = _defined(recall[code])
        return out

    point = scores(np.arange(len(g)))
    bounds = percentile_bootstrap(scores, len(g), resamples, seed, confidence)

    def estimate(key: Hashable) -> Estimate:
        return Estimate(point[key], *bounds[key]) if point[key] is not None else Estimate(None)

    columns = order + ([INVALID] if invalid_code in p else [])
    confusion = {label: {column: 0 for column in columns} for label in order if label in set(gold_keys)}
    for gold_key, predicted_key in zip(gold_keys, predicted_keys):
        confusion[gold_key][predicted_key if predicted_key in codes else INVALID] += 1
    counts = Counter(gold_keys)
    majority = max(order, key=lambda label: (counts[label], -codes[label]))
    return {
        "n": len(g),
        "correct": int(np.sum(g == p)),
        "invalid": int(np.sum(p == invalid_code)),
        **{name: estimate(name) for name in ("accuracy", "macro_f1", "cohen_kappa")},
        "per_label": {label: {"precision": estimate(("precision", label)), "recall": estimate(("recall", label)),
                              "gold": int(np.sum(g == code)), "judged": int(np.sum(p == code))}
                      for code, label in enumerate(order)},
        "confusion": confusion,
        "majority": {"label": majority, "accuracy": counts[majority] / len(g)},
    }


def annotator_agreement(labels: Mapping[str, Mapping[Hashable, Hashable]]) -> dict:
    """How far several people labelling the same items agree: ``labels[annotator][item] = label``.

    Returns ``annotators`` (how many), ``items`` (items with labels from at least two of them),
    ``krippendorff_alpha`` (nominal, over every annotator and item; None where only one label value
    occurs), ``pairwise_kappa`` (``{"a / b": Cohen's kappa on the items both labelled}``, None where
    undefined or they share no item) and ``mean_pairwise_kappa`` (over the defined ones).
    """
    from sklearn.metrics import cohen_kappa_score

    annotators = sorted(labels)
    items = sorted({item for given in labels.values() for item in given}, key=str)
    values = sorted({_key(label) for given in labels.values() for label in given.values()})
    codes = {value: code for code, value in enumerate(values)}
    data = np.full((len(annotators), len(items)), np.nan)
    for row, annotator in enumerate(annotators):
        for column, item in enumerate(items):
            if item in labels[annotator]:
                data[row, column] = codes[_key(labels[annotator][item])]
    alpha = None
    if len(values) > 1 and np.any(np.sum(~np.isnan(data), axis=0) > 1):
        import krippendorff

        alpha = _defined(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    pairwise = {}
    for a, b in itertools.combinations(annotators, 2):
        shared = [item for item in labels[a] if item in labels[b]]
        kappa = None
        if shared:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                kappa = _defined(cohen_kappa_score([_key(labels[a][i]) for i in shared],
                                                   [_key(labels[b][i]) for i in shared]))
        pairwise[f"{a} / {b}"] = kappa
    defined = [k for k in pairwise.values() if k is not None]
    return {
        "annotators": len(annotators),
        "items": int(np.sum(np.sum(~np.isnan(data), axis=0) > 1)),
        "krippendorff_alpha": alpha,
        "pairwise_kappa": pairwise,
        "mean_pairwise_kappa": float(np.mean(defined)) if defined else None,
    }
