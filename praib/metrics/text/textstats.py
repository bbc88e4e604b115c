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

Speed: each text is tokenised once, into lower-cased word tokens that serve all four
readability scores and the search for cross-references. What depends on a word alone is
worked out once per distinct word in each process and kept for the whole run, from one call
to the next: its syllables (so the CMU dictionary and Pyphen are consulted once per distinct
word) and whether a cross-reference keyword begins in it. The cross-reference expression is
then tried only right before such words (and before "§", see
:data:`praib.metrics.text.xref.KEYWORD_RUN`) instead of at every non-word character, and
the citation expressions run only on texts that contain a year-like number. Chunks of
:data:`CHUNK_SIZE` texts are shared between the calling process and worker processes, which
a :class:`TextScorer` keeps from one call to the next.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import re
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from itertools import chain
from typing import Iterable, Optional, Sequence

import numpy as np

from praib.metrics.registry import READABILITY
from praib.metrics.summary import summarise
from praib.metrics.text import readability as _readability
from praib.metrics.text.citations import find_citations
from praib.metrics.text.xref import GROUP_TYPES, KEYWORD_RUN, XREF_PATTERN, XREF_TYPES

__all__ = ["TEXT_METRICS", "CHUNK_SIZE", "TextScorer", "score_texts", "readability_summary", "xref_summary"]

#: Column names of :func:`score_texts`, in order: the registered text metrics and the
#: cross-reference details.
TEXT_METRICS: tuple[str, ...] = (
    *READABILITY, "xref", "xref_per_100_tokens",
    *(f"xref_{t}" for t in XREF_TYPES),
    "citations",
)
#: Texts per unit of work sent to a worker process.
CHUNK_SIZE = 250

_NAN = math.nan
_N_COLUMNS = len(TEXT_METRICS)
# Capturing-group number of an xref match (``match.lastindex``) -> position in XREF_TYPES.
_TYPE_POSITION = [0] * (XREF_PATTERN.groups + 1)
for _name, _number in XREF_PATTERN.groupindex.items():
    _TYPE_POSITION[_number] = XREF_TYPES.index(GROUP_TYPES[_name])

# What this process has learnt about the word tokens (of readability._tokens) it has seen,
# kept for the life of the process: token -> its syllables, plus, for a token in which a
# cross-reference keyword begins, ``n << _ENTRY_SHIFT`` where _XREF_OFFSETS[n] gives where in
# the token (0, or after one of its apostrophes).
_WORDS: dict[bytes, int] = {}
_XREF_OFFSETS: list[tuple[int, ...]] = [()]
_ENTRY_SHIFT = 32
_SYLLABLE_MASK = (1 << _ENTRY_SHIFT) - 1
# The non-ASCII characters that case-insensitive ASCII letters match in ``re`` ("ı" and "İ"
# match "i", "ſ" "s", the Kelvin sign "k"): keywords written with them are not ASCII words,
# so a text that contains one is searched everywhere.
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


def _learn(words: Iterable[bytes]) -> None:
    for word in words:
        value = _readability.count_syllables(word.decode("ascii"))
        offsets, offset = [], 0
        for part in word.decode("ascii").split("'"):
            if KEYWORD_RUN.fullmatch(part):
                offsets.append(offset)
            offset += len(part) + 1
        if offsets:
            value += len(_XREF_OFFSETS) << _ENTRY_SHIFT
            _XREF_OFFSETS.append(tuple(offsets))
        _WORDS[word] = value


def _xref_counts(text: str, starts: list[int]) -> list[int]:
    """Mentions per type in XREF_TYPES order, given where in ``" " + text`` a reference can
    start before each ASCII keyword of ``text`` (see _score_chunk)."""
    per_type = [0] * len(XREF_TYPES)
    spaced = " " + text  # see praib.metrics.text.xref.iter_xref_matches
    if not text.isascii():
        if any(char in text for char in _FOLDS_TO_ASCII):  # (faster than one regex search)
            for match in XREF_PATTERN.finditer(spaced):
                per_type[_TYPE_POSITION[match.lastindex]] += 1
            return per_type
        i = text.find("§")
        while i >= 0:
            starts.append(i)
            i = text.find("§", i + 1)
    # Trying the expression at each possible start in order, after the end of the previous
    # match, finds what finditer finds.
    starts.sort()
    end = 0
    for start in starts:
        if start >= end:
            match = XREF_PATTERN.match(spaced, start)
            if match is not None:
                per_type[_TYPE_POSITION[match.lastindex]] += 1
                end = match.end()
    return per_type


def _score_chunk(texts: Sequence[Optional[str]]) -> np.ndarray:
    """Rows of :data:`TEXT_METRICS` for ``texts``."""
    table = np.full((len(texts), _N_COLUMNS), _NAN)
    rows = [i for i, text in enumerate(texts) if not (text is None or not text or text.isspace())]
    if not rows:
        return table
    present = [texts[i] for i in rows]
    datas = [_readability._token_bytes(text) for text in present]
    words = [data.split() for data in datas]
    types = [set(tokens) for tokens in words]
    n_words = np.array([len(tokens) for tokens in words])
    word_bounds = np.concatenate(([0], np.cumsum(n_words)))
    try:
        values = np.fromiter(map(_WORDS.__getitem__, chain.from_iterable(words)), np.int64, word_bounds[-1])
    except KeyError:
        _learn(set().union(*types).difference(_WORDS))
        values = np.fromiter(map(_WORDS.__getitem__, chain.from_iterable(words)), np.int64, word_bounds[-1])
    syllable_sums = np.concatenate(([0], np.cumsum(values & _SYLLABLE_MASK)))
    syllables = (syllable_sums[word_bounds[1:]] - syllable_sums[word_bounds[:-1]]).tolist()

    # Where a reference can start in each " " + text: right before a learnt keyword token
    # (a token at i in the text's data is at i + 1 there), or after one of its apostrophes.
    keyword_starts: list[list[int]] = [[] for _ in present]
    keyword_tokens = np.flatnonzero(values >> _ENTRY_SHIFT)
    if len(keyword_tokens):
        letters = np.frombuffer(b" ".join(datas), dtype=np.uint8) != 32
        first = letters.copy()
        first[1:] &= ~letters[:-1]
        text_of = np.searchsorted(word_bounds, keyword_tokens, side="right") - 1
        data_bounds = np.concatenate(([0], np.cumsum([len(data) + 1 for data in datas])))
        token_starts = np.flatnonzero(first)[keyword_tokens] - data_bounds[text_of]
        entries = values[keyword_tokens] >> _ENTRY_SHIFT
        for j, start, entry in zip(text_of.tolist(), token_starts.tolist(), entries.tolist()):
            keyword_starts[j].extend([start + offset for offset in _XREF_OFFSETS[entry]])

    scored = []
    for text, count, n_types, n_syllables, starts in zip(present, n_words.tolist(), map(len, types),
                                                          syllables, keyword_starts):
        per_type = _xref_counts(text, starts)
        n_xref = sum(per_type)
        if count:
            ttr, fre, fkg = _readability._scores(count, n_types, _readability.count_sentences(text), n_syllables)
            per_100 = 100 * n_xref / count
        else:
            ttr = fre = fkg = per_100 = _NAN
        scored.append((count, ttr, fre, fkg, n_xref, per_100, *per_type, len(find_citations(text))))
    table[rows] = scored
    return table


def _pool_context():
    # fork shares the already loaded CMU dictionary with the workers.
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


class TextScorer:
    """Scores batches of texts with :meth:`score`, keeping its worker processes, and what each
    process has learnt about words, from one call to the next (for callers that stream
    batches through the metrics).

    ``workers``: processes that score, this one included (default ``os.cpu_count()``): with
    2, this process and one worker process share the chunks of a batch. Worker processes
    start on the first batch of more than one chunk; :meth:`close` (or leaving a ``with``
    block) stops them.
    """

    def __init__(self, workers: Optional[int] = None):
        if workers is None:
            workers = os.cpu_count() or 1
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self._pool: Optional[ProcessPoolExecutor] = None

    def __enter__(self) -> "TextScorer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the worker processes (a later :meth:`score` starts new ones)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def score(self, texts: Sequence[Optional[str]], progress: bool = False) -> dict[str, np.ndarray]:
        """All :data:`TEXT_METRICS` for ``texts``: a float array per metric, in input order.
        ``progress`` shows a tqdm bar counting texts."""
        texts = list(texts)
        chunks = [texts[i:i + CHUNK_SIZE] for i in range(0, len(texts), CHUNK_SIZE)]
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc="text metrics", unit="text")
        try:
            if self.workers == 1 or len(chunks) < 2:
                results = []
                for chunk in chunks:
                    results.append(_score_chunk(chunk))
                    if bar is not None:
                        bar.update(len(chunk))
            else:
                results = self._score_shared(chunks, bar)
        finally:
            if bar is not None:
                bar.close()
        table = np.concatenate(results) if results else np.empty((0, _N_COLUMNS), dtype=np.float64)
        return {name: np.ascontiguousarray(table[:, j]) for j, name in enumerate(TEXT_METRICS)}

    def _score_shared(self, chunks: list[list], bar) -> list[np.ndarray]:
        if self._pool is None:
            _readability._load()  # before the workers fork, so that they inherit it
            self._pool = ProcessPoolExecutor(max_workers=self.workers - 1, mp_context=_pool_context())
        results: list = [None] * len(chunks)
        pending: dict = {}
        # Two chunks queued per worker keep it busy while this process scores a chunk.
        queued = 2 * (self.workers - 1)
        following = 0
        try:
            while following < len(chunks) or pending:
                while following < len(chunks) and len(pending) < queued:
                    pending[self._pool.submit(_score_chunk, chunks[following])] = following
                    following += 1
                if following < len(chunks):
                    results[following] = _score_chunk(chunks[following])
                    if bar is not None:
                        bar.update(len(chunks[following]))
                    following += 1
                    done = [future for future in pending if future.done()]
                else:
                    done = wait(pending, return_when=FIRST_COMPLETED).done
                for future in done:
                    i = pending.pop(future)
                    results[i] = future.result()
                    if bar is not None:
                        bar.update(len(chunks[i]))
        except BaseException:
            # A failed chunk or an interrupt: drop the workers (with what is still queued).
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            raise
        return results


# One scorer per number of workers, for the life of the process (see score_texts).
_SCORERS: dict[int, TextScorer] = {}


def score_texts(texts: Sequence[Optional[str]], workers: Optional[int] = None,
                progress: bool = False) -> dict[str, np.ndarray]:
    """All :data:`TEXT_METRICS` for ``texts``: a float array per metric, in input order.

    ``workers``: processes to use, this one included (default ``os.cpu_count()``); 1
    computes in this process. Calls with the same ``workers`` share one :class:`TextScorer`,
    so worker processes start once per process, not once per call. ``progress`` shows a
    tqdm bar counting texts.
    """
    if workers is None:
        workers = os.cpu_count() or 1
    scorer = _SCORERS.get(workers)
    if scorer is None:
        scorer = TextScorer(workers)  # raises for workers < 1
        _SCORERS[workers] = scorer
    return scorer.score(texts, progress)


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
