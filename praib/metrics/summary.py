"""One summary of a sample, computed one way for every metric."""

from __future__ import annotations

from typing import Iterable

import numpy as np


def summarise(values: Iterable[float]) -> dict:
    """Mean, sample standard deviation (ddof=1, as pandas reports it) and count of
    the finite values; mean and std are None when there is nothing to summarise."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "fiu":
        array = values.astype(float, copy=False)  # no None to drop: skip a Python pass over a long column
    else:
        array = np.asarray([v for v in values if v is not None], dtype=float)
    array = array[np.isfinite(array)]
    n = int(array.size)
    return {
        "mean": float(array.mean()) if n else None,
        "std": float(array.std(ddof=1)) if n > 1 else None,
        "n": n,
    }


def describe(values: Iterable[float]) -> dict:
    """:func:`summarise` plus minimum, quartiles (linear interpolation between order statistics, as numpy
    and pandas' ``describe`` compute them) and maximum, as PRAIB Table 21 reports a sample; None where
    there is nothing to describe."""
    array = np.asarray([v for v in values if v is not None], dtype=float)
    array = array[np.isfinite(array)]
    quantiles = np.quantile(array, [0.0, 0.25, 0.5, 0.75, 1.0]).tolist() if array.size else [None] * 5
    return {**summarise(array), **dict(zip(("min", "q1", "median", "q3", "max"), quantiles))}
