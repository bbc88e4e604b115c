"""Batch engine: every deterministic text metric of many reviews in one pass per text.

:func:`score_texts` returns, for each text, the columns of :data:`TEXT_METRICS`:

``tkc``, ``ttr``, ``fre``, ``fkg``
    as :func:`praib.metrics.text.readability.readability` (rules in that module's docstring);
``xref``, ``xref_<type>``
    cross-reference mentions in total and per type, as :func:`praib.metrics.text.xref.xref_counts`;
``xref_per_100_tokens``
    ``100 * xref / tkc``;
``citations``
    number of formatted references, ``len(praib.metrics.text.citations.find_citations(text))``
    (:func:`praib.metrics.text.citations.count_citations`).

Values are identical to calling those functions text by text; missing values are NaN:
every column is NaN for a text that is ``None``, empty or only whitespace, and ``ttr``,
``fre``, ``fkg`` and ``xref_per_100_tokens`` are NaN for a text without any word (whose
``tkc`` is 0).

Speed: the texts of a chunk (:data:`CHUNK_SIZE` of them) are tokenised together, into
lower-cased word tokens that serve all four readability scores and the search for
cross-references; counts per text come from numpy over the whole chunk. What depends on a
word alone is worked out once per distinct word in each process and kept for the life of the
process, from one call to the next: its syllables (so the CMU dictionary and Pyphen are
consulted once per distinct word) and whether a cross-reference keyword begins in it. The
cross-reference expression is then tried only right before such words (and before "§", see
:data:`praib.metrics.text.xref.KEYWORD_RUN`) instead of at every non-word character, and the
citation expressions run only on texts that contain a year-like number. The calling process
and worker processes forked for the call take chunks in turn from a shared counter; the
workers read the texts, the CMU dictionary and what has been learnt about words from the
memory they share with the calling process.
"""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.connection
import os
import signal
from typing import Optional, Sequence

import numpy as np

from praib.metrics.registry import READABILITY
from praib.metrics.summary import summarise
from praib.metrics.text import readability as _readability
from praib.metrics.text.citations import count_citations
from praib.metrics.text.xref import GROUP_TYPES, KEYWORD_RUN, XREF_PATTERN, XREF_TYPES

__all__ = ["TEXT_METRICS", "CHUNK_SIZE", "score_texts", "readability_summary", "xref_summary"]

#: Column names of :func:`score_texts`, in order: the registered text metrics and the
#: cross-reference details.
TEXT_METRICS: tuple[str, ...] = (
    *READABILITY, "xref", "xref_per_100_tokens",
    *(f"xref_{t}" for t in XREF_TYPES),
    "citations",
)
#: Texts per unit of work (a chunk) of a process.
CHUNK_SIZE = 100

_NAN = math.nan
_N_COLUMNS = len(TEXT_METRICS)
_COLUMN = {name: j for j, name in enumerate(TEXT_METRICS)}
# Capturing-group number of an xref match (``match.lastindex``) -> position in XREF_TYPES.
_TYPE_POSITION = [0] * (XREF_PATTERN.groups + 1)
for _name, _number in XREF_PATTERN.groupindex.items():
    _TYPE_POSITION[_number] = XREF_TYPES.index(GROUP_TYPES[_name])

# What this process has learnt about the word tokens (of readability._tokens) it has seen,
# kept for the life of the process (forked workers send back what they learn): each token's
# number, and by number the token, its syllables and, for a token in which a cross-reference
# keyword begins, the number of its entry in _XREF_OFFSETS: where in the token the keywords
# begin (0, or after one of its apostrophes).
class _Numbers(dict):
    def __missing__(self, word: bytes) -> int:
        return _learn(word)


_WORD_NUMBERS = _Numbers()
_WORDS: list[bytes] = []
_SYLLABLES = np.zeros(1 << 12, dtype=np.int64)
_XREF_ENTRIES = np.zeros(1 << 12, dtype=np.int64)
_XREF_OFFSETS: list[tuple[int, ...]] = [()]
# The non-ASCII characters that case-insensitive ASCII letters match in ``re`` ("ı" and "İ"
# match "i", "ſ" "s", the Kelvin sign "k"): keywords written with them are not ASCII words,
# so a text that contains one is searched everywhere.
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")


def _learn(word: bytes) -> int:
    text = word.decode("ascii")
    offsets, offset = [], 0
    for part in text.split("'"):
        if KEYWORD_RUN.fullmatch(part):
            offsets.append(offset)
        offset += len(part) + 1
    # (the token is its own word type: the memo of readability.count_syllables is not needed)
    return _remember(word, _readability._syllables_uncached(text), tuple(offsets))


def _remember(word: bytes, syllables: int, offsets: tuple[int, ...]) -> int:
    global _SYLLABLES, _XREF_ENTRIES
    number = len(_WORDS)
    if number == len(_SYLLABLES):
        _SYLLABLES = np.concatenate((_SYLLABLES, np.zeros_like(_SYLLABLES)))
        _XREF_ENTRIES = np.concatenate((_XREF_ENTRIES, np.zeros_like(_XREF_ENTRIES)))
    _SYLLABLES[number] = syllables
    if offsets:
        _XREF_ENTRIES[number] = len(_XREF_OFFSETS)
        _XREF_OFFSETS.append(offsets)
    _WORDS.append(word)
    _WORD_NUMBERS[word] = number
    return number


def _learnt_since(number: int) -> list[tuple[bytes, int, tuple[int, ...]]]:
    """(token, syllables, keyword offsets) of the tokens learnt since token ``number``."""
    return [(word, int(_SYLLABLES[n]), _XREF_OFFSETS[_XREF_ENTRIES[n]])
            for n, word in enumerate(_WORDS[number:], number)]


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
    # The texts one after the other, a space between them, as ASCII (one byte a character)
    # and with only their words (see readability._tokens).
    ascii_joined = _readability._ascii(" ".join(present))
    joined = _readability._word_bytes(ascii_joined)
    words = joined.split()
    numbers = np.fromiter(map(_WORD_NUMBERS.__getitem__, words), np.int64, len(words))

    # Each word's start in ``joined`` and the first word of each text.
    letters = np.frombuffer(joined, dtype=np.uint8) != 32
    first = letters.copy()
    first[1:] &= ~letters[:-1]
    word_starts = np.flatnonzero(first)
    text_starts = np.concatenate(([0], np.cumsum([len(text) + 1 for text in present])))
    word_bounds = np.searchsorted(word_starts, text_starts)
    n_words = np.diff(word_bounds)
    text_of_word = np.repeat(np.arange(len(present)), n_words)

    syllable_sums = np.concatenate(([0], np.cumsum(_SYLLABLES[numbers])))
    syllables = syllable_sums[word_bounds[1:]] - syllable_sums[word_bounds[:-1]]
    # Distinct words per text: distinct (text, word number) pairs.
    pairs = np.sort((text_of_word << 32) | numbers)
    distinct = np.ones(len(pairs), dtype=bool)
    distinct[1:] = pairs[1:] != pairs[:-1]
    n_types = np.bincount(pairs[distinct] >> 32, minlength=len(present))

    # Where a reference can start in each " " + text: right before a keyword token (a token
    # that starts at i in the text starts at i + 1 there), or after one of its apostrophes.
    keyword_starts: list[list[int]] = [[] for _ in present]
    entries = _XREF_ENTRIES[numbers]
    keyword_words = np.flatnonzero(entries)
    texts_of = text_of_word[keyword_words]
    token_starts = word_starts[keyword_words] - text_starts[texts_of]
    for j, start, entry in zip(texts_of.tolist(), token_starts.tolist(), entries[keyword_words].tolist()):
        keyword_starts[j].extend([start + offset for offset in _XREF_OFFSETS[entry]])

    # Every formatted citation has a year, 18xx, 19xx or 20xx (praib.metrics.text.citations;
    # its last two digits may be non-ASCII ones, "?" here): texts without one have none.
    codes = np.frombuffer(ascii_joined, dtype=np.uint8)
    digit = ((codes >= ord("0")) & (codes <= ord("9"))) | (codes == ord("?"))
    first_two = (((codes[:-3] == ord("1")) & ((codes[1:-2] == ord("8")) | (codes[1:-2] == ord("9"))))
                 | ((codes[:-3] == ord("2")) & (codes[1:-2] == ord("0"))))
    years = np.flatnonzero(first_two & digit[2:-1] & digit[3:])
    may_cite = np.zeros(len(present), dtype=bool)
    may_cite[np.searchsorted(text_starts, years, side="right") - 1] = True

    per_type, n_sentences, n_citations = [], [], []
    for text, count, starts, cites in zip(present, n_words.tolist(), keyword_starts, may_cite.tolist()):
        per_type.append(_xref_counts(text, starts))
        n_sentences.append(_readability.count_sentences(text) if count else 0)
        n_citations.append(count_citations(text) if cites else 0)

    scores = np.full((len(present), _N_COLUMNS), _NAN)
    xref = np.array(per_type, dtype=np.float64)
    scores[:, _COLUMN["tkc"]] = n_words
    scores[:, _COLUMN["xref"]] = xref.sum(axis=1)
    scores[:, [_COLUMN[f"xref_{t}"] for t in XREF_TYPES]] = xref
    scores[:, _COLUMN["citations"]] = n_citations
    has_words = n_words > 0  # the other scores are undefined without a word
    for name, values in zip(("ttr", "fre", "fkg"), _readability._scores(
            n_words[has_words], n_types[has_words], np.array(n_sentences)[has_words], syllables[has_words])):
        scores[has_words, _COLUMN[name]] = values
    scores[has_words, _COLUMN["xref_per_100_tokens"]] = 100 * scores[has_words, _COLUMN["xref"]] / n_words[has_words]
    table[rows] = scores
    return table


def _claim(next_chunk, n_chunks: int):
    """Chunk numbers taken from the counter shared by the processes of a call, until none is left."""
    while True:
        with next_chunk.get_lock():
            number = next_chunk.value
            next_chunk.value = number + 1
        if number >= n_chunks:
            return
        yield number


def _chunk(texts: list, number: int) -> list:
    return texts[number * CHUNK_SIZE:(number + 1) * CHUNK_SIZE]


def _work(texts: list, next_chunk, n_chunks: int, connection) -> None:
    """A forked worker process: scores chunks until none is left, sending ("rows", number,
    rows) for each, then ("done", what it has learnt about words), or ("error", exception)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the calling process handles Ctrl-C and stops it
    known = len(_WORDS)
    try:
        for number in _claim(next_chunk, n_chunks):
            connection.send(("rows", number, _score_chunk(_chunk(texts, number))))
        connection.send(("done", _learnt_since(known)))
    except Exception as error:  # sent to the calling process, which raises it
        connection.send(("error", error))
    finally:
        connection.close()


def _score_forked(texts: list, n_chunks: int, workers: int, bar) -> list[np.ndarray]:
    """Rows of every chunk, scored by this process and ``workers - 1`` forked ones, which
    take chunks from a shared counter and read the texts from the memory they share."""
    context = multiprocessing.get_context("fork")
    _readability._load()  # before forking, so that the workers have it too
    next_chunk = context.Value("q", 0)
    results: list = [None] * n_chunks
    processes, connections = [], []

    def receive(timeout: Optional[float]) -> None:
        for connection in multiprocessing.connection.wait(connections, timeout):
            try:
                kind, *content = connection.recv()
            except EOFError:
                raise RuntimeError("a worker process scoring text metrics stopped without a result") from None
            if kind == "error":
                raise content[0]
            if kind == "done":
                connections.remove(connection)
                for word, syllables, offsets in content[0]:
                    if word not in _WORD_NUMBERS:
                        _remember(word, syllables, offsets)
            else:
                number, rows = content
                results[number] = rows
                if bar is not None:
                    bar.update(len(rows))

    try:
        for _ in range(workers - 1):
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(target=_work, args=(texts, next_chunk, n_chunks, sender), daemon=True)
            process.start()
            sender.close()
            processes.append(process)
            connections.append(receiver)
        for number in _claim(next_chunk, n_chunks):
            results[number] = _score_chunk(_chunk(texts, number))
            if bar is not None:
                bar.update(len(results[number]))
            receive(timeout=0)
        while connections:
            receive(timeout=None)
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join()
    return results


def score_texts(texts: Sequence[Optional[str]], workers: Optional[int] = None,
                progress: bool = False) -> dict[str, np.ndarray]:
    """All :data:`TEXT_METRICS` for ``texts``: a float array per metric, in input order.

    ``workers``: processes to use, this one included (default ``os.cpu_count()``, never more
    than the number of chunks of :data:`CHUNK_SIZE` texts); 1 computes in this process. The
    others are forked for the call: they share the texts and what this process has learnt
    about words with it, so that nothing is copied to them. (Where processes cannot be
    forked, this process scores alone.) ``progress`` shows the texts scored (:mod:`praib.records.progress`).

    A caller that streams batches calls this once per batch: what the process learns about
    words in one call serves the next. (Calls are not meant to run at once in several threads
    of a process: each call already uses the cores it is given.)
    """
    texts = list(texts)
    n_chunks = -(-len(texts) // CHUNK_SIZE)
    if workers is None:
        workers = os.cpu_count() or 1
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    workers = min(workers, n_chunks)
    bar = None
    if progress:
        from praib.records.progress import progress_bar

        bar = progress_bar(total=len(texts), desc="text metrics", unit="text")
    try:
        if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
            results = _score_forked(texts, n_chunks, workers, bar)
        else:
            results = []
            for number in range(n_chunks):
                results.append(_score_chunk(_chunk(texts, number)))
                if bar is not None:
                    bar.update(len(results[-1]))
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
