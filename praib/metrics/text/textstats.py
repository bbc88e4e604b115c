"""Batch engine: every deterministic text metric of many reviews in one pass per text.

:func:`score_texts` returns, for each text, the columns of :data:`TEXT_METRICS`:

``tkc``, ``ttr``, ``fre``, ``fkg``
    as :func:`praib.metrics.text.readability.readability` (rules in that module's docstring);
``xref``, ``xref_<type>``
    cross-reference mentions in total and per type, as :func:`praib.metrics.text.xref.xref_counts`;
``xref_per_100_tokens``
    ``100 * xref / tkc``;
``citations``
    number of formatted references, ``len(praib.metrics.text.citations.find_citations(text))``.

Values are identical to calling those functions text by text; missing values are NaN:
every column is NaN for a text that is ``None``, empty or only whitespace, and ``ttr``,
``fre``, ``fkg`` and ``xref_per_100_tokens`` are NaN for a text without any word (whose
``tkc`` is 0).

Speed: each text is tokenised once for all four readability scores; syllable counts are
memoised per distinct word token in a dictionary shared by all texts of a process (so the
CMU dictionary and Pyphen are consulted once per distinct word); the cross-reference
expression runs once per text and the citation expressions only on texts that contain a
year-like number. Chunks of :data:`CHUNK_SIZE` texts are spread over worker processes.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from typing import Optional, Sequence

import numpy as np

from praib.metrics.registry import READABILITY
from praib.metrics.summary import summarise
from praib.metrics.text import readability as _readability
from praib.metrics.text.citations import find_citations
from praib.metrics.text.xref import GROUP_TYPES, XREF_PATTERN, XREF_TYPES

__all__ = ["TEXT_METRICS", "CHUNK_SIZE", "score_texts", "readability_summary", "xref_summary"]

#: Column names of :func:`score_texts`, in order: the registered text metrics and the
#: cross-reference details.
TEXT_METRICS: tuple[str, ...] = (
    *READABILITY, "xref", "xref_per_100_tokens",
    *(f"xref_{t}" for t in XREF_TYPES),
    "citations",
)
#: The readability columns of :func:`score_texts`.
#: Texts per unit of work sent to a worker process.
CHUNK_SIZE = 250

_NAN = math.nan
_N_COLUMNS = len(TEXT_METRICS)
_MISSING_ROW = (_NAN,) * _N_COLUMNS
# Capturing-group number of an xref match (``match.lastindex``) -> position in XREF_TYPES.
_TYPE_POSITION = [0] * (XREF_PATTERN.groups + 1)
for _name, _number in XREF_PATTERN.groupindex.items():
    _TYPE_POSITION[_number] = XREF_TYPES.index(GROUP_TYPES[_name])


def _score_one(text: Optional[str]) -> tuple:
    """One row of :data:`TEXT_METRICS` for ``text``."""
    if text is None or not text or text.isspace():
        return _MISSING_ROW
    words = _readability._tokens(text)
    n_words = len(words)

    per_type = [0] * len(XREF_TYPES)
    for match in XREF_PATTERN.finditer(" " + text):  # see praib.metrics.text.xref.iter_xref_matches
        per_type[_TYPE_POSITION[match.lastindex]] += 1
    n_xref = sum(per_type)
    n_citations = len(find_citations(text))

    if n_words:
        ttr, fre, fkg = _readability._scores(
            n_words, len(set(words)), _readability.count_sentences(text),
            _readability._syllable_total(words))
        per_100 = 100 * n_xref / n_words
    else:
        ttr = fre = fkg = per_100 = _NAN
    return (n_words, ttr, fre, fkg, n_xref, per_100, *per_type, n_citations)


def _score_chunk(texts: Sequence[Optional[str]]) -> np.ndarray:
    out = np.empty((len(texts), _N_COLUMNS), dtype=np.float64)
    for i, text in enumerate(texts):
        out[i] = _score_one(text)
    return out


def _pool_context():
    # fork shares the already loaded CMU dictionary and syllable memo with the workers.
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def score_texts(texts: Sequence[Optional[str]], workers: Optional[int] = None,
                progress: bool = False) -> dict[str, np.ndarray]:
    """All :data:`TEXT_METRICS` for ``texts``: a float array per metric, in input order.

    ``workers``: processes to use (default ``os.cpu_count()``, never more than the number
    of chunks of :data:`CHUNK_SIZE` texts); 1 computes in this process. ``progress`` shows
    a tqdm bar counting texts.
    """
    texts = list(texts)
    n = len(texts)
    chunks = [texts[i:i + CHUNK_SIZE] for i in range(0, n, CHUNK_SIZE)]
    if workers is None:
        workers = os.cpu_count() or 1
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    workers = min(workers, len(chunks)) or 1

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=n, desc="text metrics", unit="text")
    try:
        if workers == 1:
            results = []
            for chunk in chunks:
                results.append(_score_chunk(chunk))
                if bar is not None:
                    bar.update(len(chunk))
        else:
            _readability._load()  # once in the parent; forked workers inherit it
            with ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context()) as pool:
                results = []
                for chunk, result in zip(chunks, pool.map(_score_chunk, chunks)):
                    results.append(result)
                    if bar is not None:
                        bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()

    table = np.concatenate(results) if results else np.empty((0, _N_COLUMNS), dtype=np.float64)
    return {name: np.ascontiguousarray(table[:, j]) for j, name in enumerate(TEXT_METRICS)}


def readability_summary(texts: Sequence[Optional[str]], return_per_review: bool = False) -> dict:
    """Mean / std / n of each readability score over ``texts``, and ``skipped``: the texts without a word.

    With ``return_per_review`` also ``per_review``: each score's list of values, NaN where missing.
    """
    scores = score_texts(texts)
    result = {key: summarise(scores[key]) for key in READABILITY}
    result["skipped"] = len(scores["tkc"]) - result["tkc"]["n"]
    if return_per_review:
        result["per_review"] = {key: scores[key].tolist() for key in READABILITY}
    return result


def xref_summary(texts: Sequence[Optional[str]]) -> dict:
    """Cross-references per review over ``texts``: in total and per 100 word tokens (mean / std / n),
    and the mean mentions per review of each element type."""
    scores = score_texts(texts)
    return {
        "xref": summarise(scores["xref"]),
        "per_100_tokens": summarise(scores["xref_per_100_tokens"]),
        "per_type": {t: summarise(scores[f"xref_{t}"])["mean"] for t in XREF_TYPES},
    }
