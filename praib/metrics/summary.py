"""One summary of a sample, computed one way for every metric, and its typed form in results."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np

from praib.metrics.text.xref import PAPER_DIFFERING_TYPES, XREF_TYPES


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


def _finite(value) -> float | None:
    return None if value is None or not math.isfinite(float(value)) else float(value)


@dataclass(frozen=True)
class Summary:
    """Mean, sample standard deviation (ddof=1) and count of a metric over the reviews of a group."""

    mean: float | None
    std: float | None
    n: int

    @classmethod
    def from_dict(cls, summary: Mapping[str, Any]) -> "Summary":
        return cls(_finite(summary["mean"]), _finite(summary["std"]), int(summary["n"]))

    def to_dict(self) -> dict:
        return {"mean": self.mean, "std": self.std, "n": self.n}


@dataclass(frozen=True)
class PaperXrefSummary(Summary):
    """Cross-references per review in PRAIB's own categories (:data:`praib.metrics.text.xref.PAPER_XREF_TYPES`),
    with the mean count of each category in which they differ from praib's
    (:data:`praib.metrics.text.xref.PAPER_DIFFERING_TYPES`)."""

    per_type: Mapping[str, float | None]

    def to_dict(self) -> dict:
        return {**super().to_dict(), "per_type": dict(self.per_type)}


@dataclass(frozen=True)
class XrefSummary(Summary):
    """Cross-references per review, with their rate per 100 tokens, the mean count of each type and ``paper``, the
    count in PRAIB's own categories (None where it was not computed)."""

    per_100_tokens: Summary
    per_type: Mapping[str, float | None]
    paper: PaperXrefSummary | None = None

    def to_dict(self) -> dict:
        out = {**super().to_dict(), "per_100_tokens": self.per_100_tokens.to_dict(), "per_type": dict(self.per_type)}
        if self.paper is not None:
            out["paper"] = self.paper.to_dict()
        return out


def mean_summary(values: Iterable[float]) -> Summary:
    """:func:`summarise` as a :class:`Summary`: how a per-review metric is summarised over a group."""
    return Summary.from_dict(summarise(values))


def xref_summary(columns: Mapping[str, np.ndarray]) -> XrefSummary:
    """The cross-references of a group's reviews, from the text kernel's ``xref``, ``xref_per_100_tokens``
    and ``xref_<type>`` columns, and in PRAIB's categories from ``xref_paper`` and ``xref_paper_<type>``."""
    paper = PaperXrefSummary(**summarise(columns["xref_paper"]),
                             per_type={t: summarise(columns[f"xref_paper_{t}"])["mean"] for t in PAPER_DIFFERING_TYPES})
    return XrefSummary(**summarise(columns["xref"]), per_100_tokens=mean_summary(columns["xref_per_100_tokens"]),
                       per_type={t: summarise(columns[f"xref_{t}"])["mean"] for t in XREF_TYPES}, paper=paper)
