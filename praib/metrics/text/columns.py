"""Every registered per-review text metric of many texts: the columns of the batch text kernel
(:func:`praib.metrics.text.textstats.score_texts`) and those of the metrics a function of their own
computes (:class:`praib.metrics.registry.TextFunction`), by name."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from praib.metrics.registry import METRICS, TextFunction
from praib.metrics.text.textstats import score_texts

__all__ = ["text_columns"]


def text_columns(texts: Sequence[Optional[str]], workers: Optional[int] = None,
                 progress: bool = False) -> dict[str, np.ndarray]:
    """A float array per column, in input order, NaN where a metric is undefined or the text is missing:
    the kernel's columns (``workers`` and ``progress`` as :func:`score_texts` takes them), then each
    registered :class:`~praib.metrics.registry.TextFunction` metric's."""
    texts = list(texts)
    columns = score_texts(texts, workers=workers, progress=progress)
    for metric in METRICS:
        if isinstance(metric.compute, TextFunction):
            columns[metric.name] = _function_column(metric.name, metric.compute, texts)
    return columns


def _function_column(name: str, compute: TextFunction, texts: list) -> np.ndarray:
    present = [i for i, text in enumerate(texts) if not (text is None or not text or text.isspace())]
    chosen = [texts[i] for i in present]
    found = list(compute.function(chosen)) if compute.batch else [compute.function(text) for text in chosen]
    if len(found) != len(chosen):
        raise ValueError(f"metric {name}: its function gave {len(found)} values for {len(chosen)} texts")
    values = np.full(len(texts), np.nan)
    values[present] = [np.nan if value is None else float(value) for value in found]
    finite = values[np.isfinite(values)]
    if compute.count and not np.array_equal(finite, np.round(finite)):
        raise ValueError(f"metric {name} counts (count=True) but its function gave a value that is no whole number")
    return values
