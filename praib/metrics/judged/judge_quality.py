"""How far a judge can be trusted: agreement between two judges, and accuracy on a labelled set.

Every judged metric can be re-run with a second judge; :func:`two_judge_agreement`
compares the two label lists (Cohen's kappa, Krippendorff's nominal alpha and raw
agreement). :func:`judge_accuracy` checks a judge against a small set of labels
written by people (the PRAIB seed reports 96.6% accuracy for the math-engagement
judge on 30 annotated papers; the labelled data comes from the user).

Cohen's kappa is computed here from its definition, ``(p_o - p_e) / (1 - p_e)``:
neither scikit-learn nor statsmodels is a dependency of praib, and pulling one in
for a two-line formula is not worth it (the tests check the result against
statsmodels when it is installed). Krippendorff's alpha comes from the
``krippendorff`` package, which praib already uses for rating agreement.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Hashable, Sequence

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
