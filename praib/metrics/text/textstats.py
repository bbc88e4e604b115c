"""Batch engine: every deterministic text metric of many reviews in one pass per chunk of texts.

:func:`score_texts` returns, for each text, the columns of :data:`TEXT_METRICS`:

``tkc``, ``ttr``, ``fre``, ``fkg``
    as :func:`praib.metrics.text.readability.readability` (rules in that module's docstring);
``xref``, ``xref_<type>``
    cross-reference mentions in total and per type, as :func:`praib.metrics.text.xref.xref_counts`;
``xref_per_100_tokens``
    ``100 * xref / tkc``;
``xref_paper``, ``xref_paper_<type>``
    mentions in total with PRAIB's own categories, as :func:`praib.metrics.text.xref.paper_xref_counts`,
    and of each category in which they differ from praib's
    (:data:`praib.metrics.text.xref.PAPER_DIFFERING_TYPES`);
``citations``
    number of formatted references, ``len(praib.metrics.text.citations.find_citations(text))``
    (:func:`praib.metrics.text.citations.count_citations`).

Values are identical to calling those functions text by text; missing values are NaN:
every column is NaN for a text that is ``None``, empty or only whitespace, and ``ttr``,
``fre``, ``fkg`` and ``xref_per_100_tokens`` are NaN for a text without any word (whose
``tkc`` is 0).

Speed: the texts of a chunk (:data:`CHUNK_SIZE` of them) are joined into one string and read
as an array of code points, each classed (letter, ``\\w``, ``\\s``, ``\\d``) by a table built
from the regular-expression engine itself, so that array operations decide what the expressions
of :mod:`~praib.metrics.text.readability` decide:

- *words* are the runs of letters and inner apostrophes; their lower-cased bytes become one Arrow
  binary array, dictionary-encoded in C++, and the chunk's distinct words are found in a hash table
  of the words learnt (by their bytes packed into two integers, for those of at most 16 letters)
  that numpy reads for all of them at once, so that Python sees only the new and the longer ones;
- what depends on a word alone is worked out once per distinct word in each process and kept for
  the life of the process, from one call to the next: its syllables (the CMU dictionary and
  Pyphen are consulted once per distinct word) and whether a cross-reference keyword begins in
  it; syllables and distinct words per text are then numpy reductions;
- *sentences*: the split expression never consumes a letter, so two neighbouring words are in
  different sentences exactly when the expression matches somewhere between them, and whether
  it matches at a character depends only on the few characters around it, which array
  operations test (a full stop closes an abbreviation when the run of letters before it is one
  of those, in each case, that the look-behinds of the expression itself take, found once);
- *cross-references*: the expression is tried only right before words in which a keyword
  begins (and before "§", see :data:`praib.metrics.text.xref.KEYWORD_RUN`), and before a word
  that is a whole keyword only where an identifier may follow it
  (:data:`praib.metrics.text.xref.WHOLE_KEYWORD_RUN`), over the joined chunk, whose separator no
  reference can cross; PRAIB's categories are derived from its matches
  (:data:`praib.metrics.text.xref.PAPER_TYPE_OF_GROUP`), their own expression tried only before
  the words in which a dataset or database can begin, and over the whole text where a match of
  one category set overlaps where the other's could begin;
- *citations*: the citation expressions run only on texts that contain a year-like number, from
  where the first reference could start given the first such number (the quoted-title one only at
  the opening quotes that a closing quote and a year-like number follow in its reach).

The calling process and worker processes forked for the call take chunks in turn from a shared
counter; the workers read the texts, the CMU dictionary and what has been learnt about words
from the memory they share with the calling process.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import multiprocessing.connection
import os
import re
import signal
from typing import Optional, Sequence

import numpy as np
import pyarrow as pa

from praib.metrics import summary as _summary
from praib.metrics.registry import READABILITY
from praib.metrics.summary import summarise
from praib.metrics.text import readability as _readability
from praib.metrics.text.citations import count_citations
from praib.metrics.text.xref import (GROUP_TYPES, KEYWORD_RUN, PAPER_DIFFERING_TYPES, PAPER_KEYWORD_RUN,
                                     PAPER_TYPE_OF_GROUP, PAPER_XREF_PATTERN, PAPER_XREF_TYPES, WHOLE_KEYWORD_RUN,
                                     XREF_PATTERN, XREF_TYPES)

__all__ = ["TEXT_METRICS", "CHUNK_SIZE", "score_texts", "readability_summary", "xref_summary"]

#: Column names of :func:`score_texts`, in order: the registered text metrics and the
#: cross-reference details.
TEXT_METRICS: tuple[str, ...] = (
    *READABILITY, "xref", "xref_per_100_tokens",
    *(f"xref_{t}" for t in XREF_TYPES),
    "xref_paper", *(f"xref_paper_{t}" for t in PAPER_DIFFERING_TYPES),
    "citations",
)
#: Texts per unit of work (a chunk) of a process. (The arrays of a larger chunk, a few MB each, are
#: mapped afresh by the allocator, next to a batch's records, at the cost of a page fault every 4 KB.)
CHUNK_SIZE = 200

_NAN = math.nan
_N_COLUMNS = len(TEXT_METRICS)
_COLUMN = {name: j for j, name in enumerate(TEXT_METRICS)}


# Capturing-group number of a match (``match.lastindex``) of XREF_PATTERN -> position in XREF_TYPES, and position in
# PAPER_XREF_TYPES of the type that PAPER_XREF_PATTERN gives the same match (-1: not one of its alternatives); of a
# match of PAPER_XREF_PATTERN -> position in PAPER_XREF_TYPES.
_TYPE_POSITION = np.zeros(XREF_PATTERN.groups + 1, dtype=np.int64)
_SHARED_TYPE_POSITION = np.full(XREF_PATTERN.groups + 1, -1, dtype=np.int64)
for _name, _number in XREF_PATTERN.groupindex.items():
    _TYPE_POSITION[_number] = XREF_TYPES.index(GROUP_TYPES[_name])
    if _name in PAPER_TYPE_OF_GROUP:
        _SHARED_TYPE_POSITION[_number] = PAPER_XREF_TYPES.index(PAPER_TYPE_OF_GROUP[_name])
_PAPER_TYPE_POSITION = np.zeros(PAPER_XREF_PATTERN.groups + 1, dtype=np.int64)
for _name, _number in PAPER_XREF_PATTERN.groupindex.items():
    _PAPER_TYPE_POSITION[_number] = PAPER_XREF_TYPES.index(_name.split("_")[0])
_PAPER_COLUMNS = [PAPER_XREF_TYPES.index(t) for t in PAPER_DIFFERING_TYPES]
#: Where a reference can begin: the keyword runs of praib's categories, then of PRAIB's.
_KEYWORD_RUNS = (KEYWORD_RUN, PAPER_KEYWORD_RUN)

# What this process has learnt about the words (lower-cased, as readability._tokens gives them)
# it has seen, kept for the life of the process (forked workers send back what they learn): each
# word's number, and by number the word, its syllables and the number of its entry in _XREF_OFFSETS:
# for each of _KEYWORD_RUNS, where in the word such a run begins (0, or after one of its apostrophes),
# and where only PRAIB's does (_OWN); entry 0, that of most words, is none.
class _Numbers(dict):
    def __missing__(self, word: bytes) -> int:
        return _learn(word)


_WORD_NUMBERS = _Numbers()
_WORDS: list[bytes] = []
_SYLLABLES = np.zeros(1 << 12, dtype=np.int64)
_WHOLE_KEYWORD = np.zeros(1 << 12, dtype=bool)  # whether the word is a WHOLE_KEYWORD_RUN
_XREF_ENTRIES = np.zeros(1 << 12, dtype=np.int32)
_PRAIB, _PAPER, _OWN = range(3)
_XREF_OFFSETS: list[tuple[tuple[int, ...], ...]] = [((), (), ())]
_XREF_ENTRY = {offsets[:_OWN]: entry for entry, offsets in enumerate(_XREF_OFFSETS)}
# By entry and kind of offsets: 0 none, 1 just (0,) (a keyword at the start), 2 others.
_OFFSETS_SHAPE = np.zeros((1 << 6, 3), dtype=np.int8)
# The words of at most 16 letters by their bytes, in an open-addressing hash table (linear probing) that numpy
# reads for all the distinct words of a chunk at once: each slot holds a word's key, its last 8 bytes and the bytes
# before them, each packed in an integer, the last byte lowest (word bytes are never 0, so the packed bytes also
# tell its length), then its number; a key of (0, 0) is an empty slot. Longer words are found in _WORD_NUMBERS.
_LONGEST_KEYED = 16
_TABLE = np.zeros((1 << 12, 3), dtype=np.uint64)
_HASH_MULTIPLIERS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))
_hash_shift = np.uint64(64 - 12)
_PROBES = 8  # slots of _TABLE read at once for the words that are not in their first
_keyed = 0  # words in _TABLE
# The non-ASCII characters that case-insensitive ASCII letters match in ``re`` ("ı" and "İ"
# match "i", "ſ" "s", the Kelvin sign "k"): keywords written with them are not ASCII words,
# so a text that contains one is searched everywhere.
_FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"


def _keyword_offsets(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Where in the word ``text`` a keyword run of each of _KEYWORD_RUNS begins: at 0 or after one of its
    apostrophes. (A run of PRAIB's categories that is none of praib's begins with "d": "data", "ds", "db".)"""
    praib, paper, offset = [], [], 0
    for part in text.split("'"):
        if KEYWORD_RUN.fullmatch(part):
            praib.append(offset)
            if PAPER_KEYWORD_RUN.fullmatch(part):
                paper.append(offset)
        elif part[:1] == "d" and PAPER_KEYWORD_RUN.fullmatch(part):
            paper.append(offset)
        offset += len(part) + 1
    return tuple(praib), tuple(paper)


def _learn(word: bytes) -> int:
    text = word.decode("ascii")
    # (the word is its own word type: the memo of readability.count_syllables is not needed)
    return _remember(word, _readability._syllables_uncached(text), _keyword_offsets(text))


def _remember(word: bytes, syllables: int, offsets: tuple[tuple[int, ...], ...]) -> int:
    """Number ``word``, with its syllables and, per keyword run of _KEYWORD_RUNS, its keyword offsets."""
    global _SYLLABLES, _WHOLE_KEYWORD, _XREF_ENTRIES, _OFFSETS_SHAPE
    number = len(_WORDS)
    if number == len(_SYLLABLES):
        _SYLLABLES = np.concatenate((_SYLLABLES, np.zeros_like(_SYLLABLES)))
        _WHOLE_KEYWORD = np.concatenate((_WHOLE_KEYWORD, np.zeros_like(_WHOLE_KEYWORD)))
        _XREF_ENTRIES = np.concatenate((_XREF_ENTRIES, np.zeros_like(_XREF_ENTRIES)))
    _SYLLABLES[number] = syllables
    if len(word) <= _LONGEST_KEYED:
        _key(number, word)
    _WHOLE_KEYWORD[number] = WHOLE_KEYWORD_RUN.fullmatch(word.decode("ascii")) is not None
    if offsets not in _XREF_ENTRY:
        entry = _XREF_ENTRY[offsets] = len(_XREF_OFFSETS)
        # (where both can begin, praib's expression is tried; PRAIB's alone is tried where only it can)
        _XREF_OFFSETS.append((*offsets, tuple(o for o in offsets[_PAPER] if o not in offsets[_PRAIB])))
        if entry == len(_OFFSETS_SHAPE):
            _OFFSETS_SHAPE = np.concatenate((_OFFSETS_SHAPE, np.zeros_like(_OFFSETS_SHAPE)))
        _OFFSETS_SHAPE[entry] = [0 if not found else 1 if found == (0,) else 2 for found in _XREF_OFFSETS[entry]]
    _XREF_ENTRIES[number] = _XREF_ENTRY[offsets]
    _WORDS.append(word)
    _WORD_NUMBERS[word] = number
    return number


def _slots(last: np.ndarray, before: np.ndarray) -> np.ndarray:
    """The first slot of _TABLE to look at for each key (``last``, ``before``)."""
    mixed = (last ^ (before * _HASH_MULTIPLIERS[0])) * _HASH_MULTIPLIERS[1]
    return (mixed >> _hash_shift).astype(np.int64)


def _key(number: int, word: bytes) -> None:
    """Put word ``number`` (at most _LONGEST_KEYED bytes) in _TABLE, which is doubled when a quarter full (few
    words are then more than a slot or two from their first)."""
    global _TABLE, _hash_shift, _keyed
    _keyed += 1
    entries = [(int.from_bytes(word[-8:], "big"), int.from_bytes(word[:-8], "big"), number)]
    if 4 * _keyed > len(_TABLE):
        entries += [(int(last), int(before), int(n)) for last, before, n in _TABLE[_TABLE[:, 0] != 0].tolist()]
        _TABLE = np.zeros((2 * len(_TABLE), 3), dtype=np.uint64)
        _hash_shift -= np.uint64(1)
    keys = np.array([entry[:2] for entry in entries], dtype=np.uint64)
    mask = len(_TABLE) - 1
    for entry, slot in zip(entries, _slots(keys[:, 0], keys[:, 1]).tolist()):
        while _TABLE[slot, 0] != 0:
            slot = (slot + 1) & mask
        _TABLE[slot] = entry


def _word_numbers(words: pa.Array) -> np.ndarray:
    """The number of each of the distinct ``words`` (an Arrow binary array without nulls), learning the new ones:
    Python sees the new ones and those longer than _LONGEST_KEYED."""
    offsets = np.frombuffer(words.buffers()[1], dtype=np.int32, count=len(words) + 1, offset=4 * words.offset)
    data = np.zeros(8 + int(offsets[-1]), dtype=np.uint8)  # (8 bytes before the first word: see _eight_before)
    data[8 + int(offsets[0]):] = np.frombuffer(words.buffers()[2], dtype=np.uint8, count=int(offsets[-1] - offsets[0]),
                                               offset=int(offsets[0]))
    ends = offsets[1:].astype(np.int64) + 8
    lengths = np.diff(offsets)
    last = _eight_before(data, ends) & _LOWEST_BYTES[np.minimum(lengths, 8)]
    before = np.zeros(len(lengths), dtype=np.uint64)
    longer = np.flatnonzero(lengths > 8)
    before[longer] = _eight_before(data, ends[longer] - 8) & _LOWEST_BYTES[np.minimum(lengths[longer] - 8, 8)]
    keyed = np.flatnonzero(lengths <= _LONGEST_KEYED)
    numbers = np.empty(len(lengths), dtype=np.int64)
    unknown = [np.flatnonzero(lengths > _LONGEST_KEYED)]
    # Each word's first slot, then, for those not there (a few), the next _PROBES slots at once, and so on.
    # (Words are only ever added: a word is in _TABLE if it is found before the first empty slot after its first.)
    found = np.take(_TABLE, _slots(last[keyed], before[keyed]), axis=0)
    same = (found[:, 0] == last[keyed]) & (found[:, 1] == before[keyed])
    numbers[keyed[same]] = found[same, 2].astype(np.int64)
    unknown.append(keyed[found[:, 0] == 0])
    pending = keyed[(found[:, 0] != 0) & ~same]
    probe = 1
    while len(pending):
        slots = (_slots(last[pending], before[pending])[:, None] + np.arange(probe, probe + _PROBES)) & (len(_TABLE) - 1)
        found = np.take(_TABLE, slots, axis=0)  # (word, probe, key and number)
        same = (found[:, :, 0] == last[pending, None]) & (found[:, :, 1] == before[pending, None])
        hit = same.any(axis=1)
        numbers[pending[hit]] = found[hit, same[hit].argmax(axis=1), 2].astype(np.int64)
        empty = ~hit & (found[:, :, 0] == 0).any(axis=1)
        unknown.append(pending[empty])
        pending = pending[~(hit | empty)]
        probe += _PROBES
    unknown = np.concatenate(unknown)
    if len(unknown):
        starts = ends - lengths
        numbers[unknown] = [_WORD_NUMBERS[data[start:end].tobytes()]
                            for start, end in zip(starts[unknown].tolist(), ends[unknown].tolist())]
    return numbers


def _learnt_since(number: int) -> list[tuple[bytes, int, tuple[tuple[int, ...], ...]]]:
    """(word, syllables, keyword offsets per keyword run) of the words learnt since word ``number``."""
    return [(word, int(_SYLLABLES[n]), _XREF_OFFSETS[_XREF_ENTRIES[n]][:_OWN])
            for n, word in enumerate(_WORDS[number:], number)]


# The texts of a chunk are joined with this separator, and _PAD of them before the first and
# after the last text (so that looking a few characters behind or ahead stays in the string).
# No cross-reference can cross it or end differently before it than at the end of a text: it is
# neither a letter, a digit, an underscore, a space nor a joiner of identifiers, and the one
# look-ahead that accepts the end of a text (a Roman "I") also accepts ";" (see _xref_matches).
_SEPARATOR = ";"
_PAD = 8
_EMPTY_PAD = ("",) * _PAD

# Classes of characters by code point (flags), as Python's ``re`` reads them: _classes() builds
# the table from the regular-expression engine itself, so that array tests of a class agree with
# the expressions (Unicode letters are \w, Unicode digits \d, and so on).
_LETTER, _WORD, _SPACE, _DIGIT = 1, 2, 4, 8  # _LETTER: an ASCII letter, [A-Za-z]
(_MARK, _CLOSER, _APOSTROPHE, _FOLD, _SPACE_TAB, _BULLET, _HASH, _SECTION_SIGN, _NEWLINE, _ONE_OR_TWO,
 _RARE) = (1 << k for k in range(4, 15))
_MEMBERS = {_LETTER: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", _MARK: ".!?", _CLOSER: "\"'”’)]",
            _APOSTROPHE: "'’", _FOLD: _FOLDS_TO_ASCII, _SPACE_TAB: " \t", _BULLET: "-*+•", _HASH: "#",
            _SECTION_SIGN: "§", _NEWLINE: "\n", _ONE_OR_TWO: "12"}
# The characters whose positions are looked at one by one (_RARE, the highest flag, is set for them):
# they are found in one pass.
_RARE_CLASSES = _MARK | _APOSTROPHE | _FOLD | _SECTION_SIGN | _NEWLINE | _ONE_OR_TWO
_CLASSES = np.zeros(0x110000, dtype=np.uint16)
_CLASSIFIED = np.zeros(0x110000, dtype=bool)


def _classify(code_points: np.ndarray) -> None:
    """Fill the table of classes for ``code_points`` (distinct, not yet classified)."""
    characters = "".join(map(chr, code_points.tolist()))
    found = np.zeros(len(code_points), dtype=np.uint16)
    for flag, pattern in ((_WORD, r"\w"), (_SPACE, r"\s"), (_DIGIT, r"\d")):
        found[[m.start() for m in re.finditer(pattern, characters)]] |= flag
    for flag, members in _MEMBERS.items():
        found[np.isin(code_points, [ord(c) for c in members])] |= flag
    found[(found & _RARE_CLASSES) != 0] |= _RARE
    _CLASSES[code_points] = found
    _CLASSIFIED[code_points] = True


def _classes() -> np.ndarray:
    """The table of classes, filled for the Basic Multilingual Plane (others as texts bring them)."""
    if not _CLASSIFIED[0]:
        _classify(np.arange(0x10000))
    return _CLASSES


def _code_points(text: str) -> np.ndarray:
    """The code points of ``text``, one per character (as its indexes count them)."""
    units = np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype="<u2")
    if len(units) == len(text):  # no character beyond the Basic Multilingual Plane
        return units
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    beyond = np.unique(codes[codes > 0xFFFF])
    beyond = beyond[~_CLASSIFIED[beyond]]
    if len(beyond):
        _classify(beyond)
    return codes


def _run_end(classes: np.ndarray, flag: int, positions: np.ndarray) -> np.ndarray:
    """For each of ``positions``, the first position at or after it whose class is not ``flag``
    (the joined chunk ends with separators, whose class is none). Runs are short: they are
    followed a step at a time, the few long ones found at once."""
    ends = positions.copy()
    moving = np.flatnonzero(classes[ends] & flag)
    for _ in range(8):
        if not len(moving):
            return ends
        ends[moving] += 1
        moving = moving[(classes[ends[moving]] & flag) != 0]
    outside = np.flatnonzero((classes & flag) == 0)
    ends[moving] = outside[np.searchsorted(outside, ends[moving])]
    return ends


# A full stop ends a sentence unless one of these look-behinds of SENTENCE_SPLIT_RE matches
# (tried at the position after it).
_NOT_AFTER_ABBREVIATION = re.compile("".join(f"(?<!{a})" for a in _readability._NO_BREAK_AFTER))
#: Every abbreviation of readability's sentence rule is a whole run of ASCII letters before its
#: full stop (it starts at a word boundary), lower-cased one of these, or a letter after "x." (as
#: in "e.g.", "w.r.t."); the abbreviation look-behinds are tried only after such runs (a test
#: checks that these cover the rule's list).
ABBREVIATION_RUNS = ("p", "l", "al", "cf", "vs", "eq", "pp", "ll", "fig", "eqs", "eqn", "sec", "tab", "thm",
                     "def", "ref", "lem", "cor", "vol", "figs", "sect", "secs", "tabs", "eqns", "defn", "refs",
                     "prop", "coro", "appx", "resp", "approx")
_LONGEST_ABBREVIATION = max(map(len, ABBREVIATION_RUNS))


def _packed(run: str) -> int:
    """The bytes of an ASCII ``run``, the last one lowest, in one integer."""
    return sum(ord(c) << (8 * k) for k, c in enumerate(reversed(run)))


# The runs, packed, in each mix of upper and lower case that the look-behinds take as an abbreviation
# after a space (that is, at a word boundary): the expression itself decides, once.
_ABBREVIATIONS_PACKED = np.sort(np.array(
    [_packed(written) for run in ABBREVIATION_RUNS
     for written in map("".join, itertools.product(*((c, c.upper()) for c in run)))
     if _NOT_AFTER_ABBREVIATION.match(f" {written}.", len(written) + 2) is None], dtype=np.uint64))
# By k: the lowest bit of the k-th lowest byte of an integer (k below 8), and the mask of the k lowest bytes (k to 8).
_LOWEST_BIT_OF_BYTE = np.array([1 << (8 * k) for k in range(8)], dtype=np.uint64)
_LOWEST_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
_ONE_PER_BYTE = np.uint64(0x0101010101010101)


def _eight_before(array: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The 8 bytes before each of ``positions`` in the byte ``array``, the last one lowest, in one integer."""
    windows = np.ndarray((len(array) - 7,), dtype=">u8", buffer=array, strides=(1,))
    return windows[positions - 8].astype(np.uint64)


def _after_abbreviation(codes: np.ndarray, low_bytes: np.ndarray, letters: np.ndarray, classes: np.ndarray,
                        stops: np.ndarray) -> np.ndarray:
    """Whether each full stop at ``stops`` closes an abbreviation of the look-behinds: the whole run of
    ASCII letters before it is one (as written, see _ABBREVIATIONS_PACKED), or it is "x.y." (as in
    "e.g."), and what comes before is no \\w character (the look-behinds' word boundary). ``low_bytes``:
    the low byte of each code point (the character where it is ASCII); ``letters``: whether each is an
    ASCII letter."""
    # The letters right before each stop (at most 7, more than the longest), from the 8 characters before it.
    not_letters = (_eight_before(letters.view(np.uint8), stops) ^ _ONE_PER_BYTE) | _LOWEST_BIT_OF_BYTE[7]
    run = np.searchsorted(_LOWEST_BIT_OF_BYTE, not_letters & (~not_letters + np.uint64(1)))  # its lowest set bit
    packed = _eight_before(low_bytes, stops) & _LOWEST_BYTES[run]
    known = _ABBREVIATIONS_PACKED[np.minimum(np.searchsorted(_ABBREVIATIONS_PACKED, packed),
                                             len(_ABBREVIATIONS_PACKED) - 1)] == packed
    after = (run <= _LONGEST_ABBREVIATION) & known & ((classes[stops - run - 1] & _WORD) == 0)
    after |= ((run == 1) & (codes[stops - 2] == ord(".")) & ((classes[stops - 3] & _LETTER) != 0)
              & ((classes[stops - 4] & _WORD) == 0))
    return after


def _sentence_cuts(codes: np.ndarray, low_bytes: np.ndarray, letters: np.ndarray, classes: np.ndarray,
                   marks: np.ndarray, breaks: np.ndarray, text_ends: np.ndarray) -> np.ndarray:
    """Positions in the joined chunk where a match of SENTENCE_SPLIT_RE starts in the text alone (those at
    marks, then those at line breaks, each in order):
    each position is tested on its own, which finds every match the expression finds when it
    scans the text, and possibly positions inside a longer match, which does not change which
    words a match separates (see _score_present). ``marks``: the positions of [.!?]; ``breaks``:
    of line breaks (``low_bytes``, ``letters``: see _after_abbreviation)."""
    # [.!?], more of them and closing marks, then a space or the end of the text (?=\s|\Z).
    after = _run_end(classes, _CLOSER, _run_end(classes, _MARK, marks + 1))
    ends = (classes[after] & _SPACE) != 0
    ends |= text_ends[np.minimum(np.searchsorted(text_ends, after), len(text_ends) - 1)] == after
    stops = np.flatnonzero(ends & (codes[marks] == ord(".")))  # (of marks)
    ends[stops] = ~_after_abbreviation(codes, low_bytes, letters, classes, marks[stops])

    # A line break before a blank line, a list item or a Markdown header.
    line = _run_end(classes, _SPACE_TAB, breaks + 1)  # where the next line's text starts
    first = codes[line]
    digits = _run_end(classes, _DIGIT, line) - line
    hashes = _run_end(classes, _HASH, line)
    cut = ((first == ord("\n"))
           | ((classes[line] & _BULLET != 0) & (classes[line + 1] & _SPACE_TAB != 0))
           | ((digits >= 1) & (digits <= 3) & ((codes[line + digits] == ord(".")) | (codes[line + digits] == ord(")")))
              & (classes[line + digits + 1] & _SPACE_TAB != 0))
           | ((hashes - line >= 1) & (hashes - line <= 6) & (classes[hashes] & _SPACE_TAB != 0)))
    return np.concatenate((marks[ends], breaks[cut]))


def _candidates(word_starts: np.ndarray, entries: np.ndarray, kind: int, section_signs: np.ndarray,
                text_starts: np.ndarray, searched_whole: np.ndarray) -> np.ndarray:
    """Where (sorted) a reference can start, the character before it: at the offsets of ``kind`` (_PRAIB, _PAPER,
    _OWN) of the words with a keyword run, given their start in the joined chunk and their ``entries`` in
    _XREF_OFFSETS, and before each of ``section_signs``; none in the texts ``searched_whole``."""
    shape = _OFFSETS_SHAPE[entries, kind]
    elsewhere = shape == 2
    candidates = np.concatenate((
        word_starts[shape == 1] - 1,
        section_signs - 1,
        np.array([start - 1 + offset
                  for start, entry in zip(word_starts[elsewhere].tolist(), entries[elsewhere].tolist())
                  for offset in _XREF_OFFSETS[entry][kind]], dtype=np.int64)))
    candidates.sort()
    if len(searched_whole):
        candidates = candidates[~np.isin(_owners(text_starts, candidates), searched_whole)]
    return candidates


def _identifier_may_follow(codes: np.ndarray, classes: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Whether an optional full stop, at most three spaces or "~", then a digit, a capital ASCII letter or "("
    (where a cross-reference's identifier begins) follow each of ``ends`` (see WHOLE_KEYWORD_RUN)."""
    at = ends + (codes[ends] == ord("."))
    for _ in range(3):
        at += ((classes[at] & _SPACE) != 0) | (codes[at] == ord("~"))
    first = codes[at]
    return ((classes[at] & _DIGIT) != 0) | ((first >= ord("A")) & (first <= ord("Z"))) | (first == ord("("))


def _owners(text_starts: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The text of each reference that starts (its character before) at ``starts``."""
    return np.searchsorted(text_starts, starts + 1, side="right") - 1


def _xref_matches(pattern: re.Pattern, joined: str, candidates: np.ndarray,
                  greedy: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each of ``pattern``'s cross-references of ``joined`` starts and ends and its capturing-group number
    (``match.lastindex``), given (sorted) where one can start: right before each ASCII keyword (and each "§").
    Trying the expression at each possible start in order, after the end of the previous match, finds what finditer
    finds text by text: no match crosses the separator, and the expression reads ";" before and after a text as it
    reads the start and the end of a text (see _SEPARATOR). Not ``greedy``: at each candidate, whatever was found
    before it."""
    starts, numbers, ends = [], [], []
    match = pattern.match
    end = 0
    for start in candidates.tolist():
        if start >= end:
            found = match(joined, start)
            if found is not None:
                starts.append(start)
                numbers.append(found.lastindex)
                ends.append(found.end())
                if greedy:
                    end = ends[-1]
    return (np.array(starts, dtype=np.int64), np.array(numbers, dtype=np.int64), np.array(ends, dtype=np.int64))


def _covers(starts: np.ndarray, ends: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """Whether each span from ``starts`` to ``ends`` holds one of (sorted) ``positions`` after its start."""
    if not len(positions):
        return np.zeros(len(starts), dtype=bool)
    after = np.searchsorted(positions, starts, side="right")
    return (after < len(positions)) & (positions[np.minimum(after, len(positions) - 1)] < ends)


# The farthest from where a dataset or database reference of PAPER_XREF_PATTERN starts (its character before) that
# its identifier can begin: after "databases" or "data sets" (1 + 9 characters), a full stop and 3 spaces.
_OWN_IDENTIFIER_REACH = 1 + 9 + 1 + 3


def _may_name_one(codes: np.ndarray, classes: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Whether a dataset or database reference can start at each of ``own``: its identifier begins with a capital
    ASCII letter or a digit (praib.metrics.text.xref: a number, a letter prefix, a Roman numeral), at most
    _OWN_IDENTIFIER_REACH characters on, after the keyword's first letter."""
    window = np.minimum(own[:, None] + np.arange(2, _OWN_IDENTIFIER_REACH + 1), len(codes) - 1)
    ahead = codes[window]
    return (((ahead >= ord("A")) & (ahead <= ord("Z"))) | ((classes[window] & _DIGIT) != 0)).any(axis=1)


def _inside(positions: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Whether each of ``positions`` lies after the start of one of the spans from (sorted, disjoint) ``starts`` to
    ``ends``, before its end."""
    if not len(starts):
        return np.zeros(len(positions), dtype=bool)
    before = np.searchsorted(starts, positions) - 1  # the span that begins last before each
    return (before >= 0) & (ends[np.maximum(before, 0)] > positions)


def _paper_xref_counts(texts: list[str], joined: str, codes: np.ndarray, classes: np.ndarray, text_starts: np.ndarray,
                       paper_candidates: np.ndarray, own: np.ndarray, starts: np.ndarray, numbers: np.ndarray,
                       ends: np.ndarray, searched_whole: np.ndarray) -> np.ndarray:
    """Mentions of each of PAPER_XREF_TYPES (columns) in each text (rows), from the matches of XREF_PATTERN
    (``starts``, ``ends``, ``numbers``) found where it can begin, where PAPER_XREF_PATTERN can begin
    (``paper_candidates``) and where only it can (``own``: before "data", "dataset", "database", "DS", "DB").
    Its matches are the shared ones of XREF_PATTERN (see PAPER_TYPE_OF_GROUP) and its own at ``own`` (tried
    where _may_name_one), unless the two scans part: a match of XREF_PATTERN's alone (a line, an appendix, §)
    holds a place where PAPER_XREF_PATTERN can begin, or one of its own matches holds such a place or begins
    inside a shared match; such texts (rare) are searched whole, as are ``searched_whole``."""
    n, n_types = len(texts), len(PAPER_XREF_TYPES)
    shared_types = _SHARED_TYPE_POSITION[numbers]
    shared = shared_types >= 0
    own = own[_may_name_one(codes, classes, own)]
    own_starts, own_numbers, own_ends = _xref_matches(PAPER_XREF_PATTERN, joined, own, greedy=False)
    shared_starts = starts[shared]
    parted = np.concatenate((
        starts[~shared][_covers(starts[~shared], ends[~shared], paper_candidates)],
        own_starts[_covers(own_starts, own_ends, paper_candidates)],
        own_starts[_inside(own_starts, shared_starts, ends[shared])]))
    counts = np.bincount(
        np.concatenate((_owners(text_starts, shared_starts) * n_types + shared_types[shared],
                        _owners(text_starts, own_starts) * n_types + _PAPER_TYPE_POSITION[own_numbers])),
        minlength=n * n_types).reshape(n, n_types).astype(np.float64)
    for j in np.union1d(_owners(text_starts, parted), searched_whole).tolist():
        counts[j] = 0
        for found in PAPER_XREF_PATTERN.finditer(" " + texts[j]):
            counts[j, _PAPER_TYPE_POSITION[found.lastindex]] += 1
    return counts


_PAIRS_SEEN = np.zeros(1 << 22, dtype=bool)  # (4 MB kept from call to call: fresh ones would be mapped afresh)


def _distinct_per_group(groups: np.ndarray, values: np.ndarray, n_values: int, n_groups: int) -> np.ndarray:
    """The number of distinct ``values`` (from 0 to ``n_values - 1``) in each group, given the group
    of each value in ascending order."""
    if n_values * n_groups <= len(_PAIRS_SEEN):  # a flag per (group, value) pair, counted by group
        seen = _PAIRS_SEEN[:n_values * n_groups]
        seen[:] = False
        seen[groups * n_values + values] = True
        return np.count_nonzero(seen.reshape(n_groups, n_values), axis=1)
    if n_values <= 1 << 16:  # a stable sort of 16-bit keys is a radix sort
        order = np.argsort(values.astype(np.uint16), kind="stable")
        sorted_groups, sorted_values = groups[order], values[order]
        new = np.empty(len(order), dtype=bool)
        new[:1] = True
        np.not_equal(sorted_groups[1:], sorted_groups[:-1], out=new[1:])
        new[1:] |= sorted_values[1:] != sorted_values[:-1]
        return np.bincount(sorted_groups[new], minlength=n_groups)
    pairs = np.sort(groups * n_values + values)
    new = np.ones(len(pairs), dtype=bool)
    new[1:] = pairs[1:] != pairs[:-1]
    return np.bincount(pairs[new] // n_values, minlength=n_groups)


def _score_chunk(texts: Sequence[Optional[str]]) -> np.ndarray:
    """Rows of :data:`TEXT_METRICS` for ``texts``."""
    table = np.full((len(texts), _N_COLUMNS), _NAN)
    rows = [i for i, text in enumerate(texts) if not (text is None or not text or text.isspace())]
    if rows:
        table[rows] = _score_present([texts[i] for i in rows])
    return table


def _score_present(texts: list[str]) -> np.ndarray:
    """Rows of :data:`TEXT_METRICS` for ``texts``, none of them blank."""
    n = len(texts)
    joined = _SEPARATOR.join([*_EMPTY_PAD, *texts, *_EMPTY_PAD])  # (_PAD separators before and after: one copy)
    codes = _code_points(joined)
    classes = np.take(_classes(), codes)  # (take: about twice as fast as indexing here)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    text_starts = _PAD + np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
    text_ends = text_starts + lengths  # where the separator after each text is

    # Words (readability.WORD_RE): runs of ASCII letters with the apostrophes between two letters.
    rare = np.flatnonzero(classes >= _RARE)
    rare_classes = classes[rare]
    letters = (classes & _LETTER) != 0
    in_word = letters.copy()
    apostrophes = rare[(rare_classes & _APOSTROPHE) != 0]
    in_word[apostrophes[in_word[apostrophes - 1] & in_word[apostrophes + 1]]] = True
    edges = np.flatnonzero(in_word[1:] != in_word[:-1]) + 1
    word_starts, word_ends = edges[0::2], edges[1::2]
    n_tokens = len(word_starts)
    # Each word lower-cased, "’" as "'", as the bytes of one Arrow array: dictionary-encoded,
    # each distinct word of the chunk is looked up once. (Word characters are ASCII but "’", whose
    # low byte is fixed after; compress is faster than indexing by a mask.)
    offsets = np.zeros(n_tokens + 1, dtype=np.int32)
    np.cumsum(word_ends - word_starts, out=offsets[1:])
    low_bytes = codes.astype(np.uint8)
    data = np.compress(in_word, low_bytes | 32)
    curly = apostrophes[codes[apostrophes] == ord("’")]
    curly = curly[in_word[curly]]
    if len(curly):
        word = np.searchsorted(word_starts, curly, side="right") - 1
        data[offsets[word] + (curly - word_starts[word])] = ord("'")
    encoded = pa.Array.from_buffers(pa.binary(), n_tokens, [None, pa.py_buffer(offsets), pa.py_buffer(data)]
                                    ).dictionary_encode()
    indices = encoded.indices  # int32 without nulls: read from its buffer (to_numpy would import pandas)
    local = np.frombuffer(indices.buffers()[1], dtype=np.int32, count=len(indices), offset=4 * indices.offset)
    n_distinct = len(encoded.dictionary)
    numbers = _word_numbers(encoded.dictionary)  # (of each distinct word: what the words' numbers give is read
    # by ``local`` from arrays as long as the chunk's vocabulary)

    word_bounds = np.append(np.searchsorted(word_starts, text_starts), n_tokens)
    n_words = np.diff(word_bounds)
    text_of_word = np.repeat(np.arange(n), n_words)
    syllable_sums = np.concatenate(([0], np.cumsum(np.take(_SYLLABLES[numbers], local))))
    syllables = syllable_sums[word_bounds[1:]] - syllable_sums[word_bounds[:-1]]
    n_types = _distinct_per_group(text_of_word, local, n_distinct, n)

    # Sentences with a word: a word starts one when it is the first of its text, or when the
    # split expression matches between it and the word before (a match never takes a letter,
    # so each piece of the split holds whole words, and a piece without a word is dropped).
    cuts = _sentence_cuts(codes, low_bytes, letters, classes, rare[(rare_classes & _MARK) != 0],
                          rare[(rare_classes & _NEWLINE) != 0], text_ends)
    new_sentence = np.zeros(n_tokens + 1, dtype=bool)
    new_sentence[np.searchsorted(word_starts, cuts)] = True  # the word after each cut
    new_sentence[word_bounds[:-1]] = True
    new_sentence = new_sentence[:-1]
    n_sentences = np.bincount(text_of_word[new_sentence], minlength=n)

    # Cross-references: tried right before keyword words and "§"; texts with the non-ASCII
    # characters that case-insensitive ASCII letters match ("ı" matches "i") are searched whole.
    special = rare[(rare_classes & (_SECTION_SIGN | _FOLD)) != 0]
    section_signs = special[codes[special] == ord("§")]
    searched_whole = np.unique(np.searchsorted(text_starts, special[codes[special] != ord("§")], side="right") - 1)
    keyword_words = np.flatnonzero(np.take(_XREF_ENTRIES[numbers], local))
    keywords = numbers[local[keyword_words]]
    entries, keyword_starts = _XREF_ENTRIES[keywords], word_starts[keyword_words]
    # (before a whole keyword, only where an identifier may follow it)
    tried = ~_WHOLE_KEYWORD[keywords] | _identifier_may_follow(codes, classes, word_ends[keyword_words])
    candidates = _candidates(keyword_starts[tried], entries[tried], _PRAIB, section_signs, text_starts, searched_whole)
    starts, group_numbers, ends = _xref_matches(XREF_PATTERN, joined, candidates)
    xref = np.bincount(_owners(text_starts, starts) * len(XREF_TYPES) + _TYPE_POSITION[group_numbers],
                       minlength=n * len(XREF_TYPES)).reshape(n, len(XREF_TYPES)).astype(np.float64)
    for j in searched_whole.tolist():
        for found in XREF_PATTERN.finditer(" " + texts[j]):
            xref[j, _TYPE_POSITION[found.lastindex]] += 1
    paper_candidates, own = (_candidates(keyword_starts, entries, kind, np.empty(0, dtype=np.int64), text_starts,
                                         searched_whole) for kind in (_PAPER, _OWN))
    paper = _paper_xref_counts(texts, joined, codes, classes, text_starts, paper_candidates, own, starts, group_numbers,
                               ends, searched_whole)

    # Every formatted citation has a year, 18xx, 19xx or 20xx (praib.metrics.text.citations;
    # its last two digits are any \d): texts without one have none.
    ones_and_twos = rare[(rare_classes & _ONE_OR_TWO) != 0]
    second = codes[ones_and_twos + 1]
    century = np.where(codes[ones_and_twos] == ord("1"), (second == ord("8")) | (second == ord("9")), second == ord("0"))
    years = ones_and_twos[century & (classes[ones_and_twos + 2] & _DIGIT != 0)
                          & (classes[ones_and_twos + 3] & _DIGIT != 0)]
    n_citations = np.zeros(n)
    with_years, first = np.unique(np.searchsorted(text_starts, years, side="right") - 1, return_index=True)
    for j, first_year in zip(with_years.tolist(), (years[first] - text_starts[with_years]).tolist()):
        n_citations[j] = count_citations(texts[j], first_year)

    scores = np.full((n, _N_COLUMNS), _NAN)
    scores[:, _COLUMN["tkc"]] = n_words
    has_words = n_words > 0  # the other scores are undefined without a word
    scores[:, _COLUMN["xref"]] = xref.sum(axis=1)
    scores[:, [_COLUMN[f"xref_{t}"] for t in XREF_TYPES]] = xref
    scores[:, _COLUMN["xref_paper"]] = paper.sum(axis=1)
    scores[:, [_COLUMN[f"xref_paper_{t}"] for t in PAPER_DIFFERING_TYPES]] = paper[:, _PAPER_COLUMNS]
    scores[:, _COLUMN["citations"]] = n_citations
    for name, values in zip(("ttr", "fre", "fkg"), _readability._scores(
            n_words[has_words], n_types[has_words], n_sentences[has_words], syllables[has_words])):
        scores[has_words, _COLUMN[name]] = values
    scores[has_words, _COLUMN["xref_per_100_tokens"]] = 100 * scores[has_words, _COLUMN["xref"]] / n_words[has_words]
    return scores


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
    _readability._load()  # before forking, so that the workers have them too
    _classes()
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
    and the mean mentions per review of each element type; ``paper``: the count in PRAIB's categories
    (:class:`praib.metrics.summary.PaperXrefSummary`)."""
    scores = score_texts(texts)
    return {
        "xref": summarise(scores["xref"]),
        "per_100_tokens": summarise(scores["xref_per_100_tokens"]),
        "per_type": {t: summarise(scores[f"xref_{t}"])["mean"] for t in XREF_TYPES},
        "paper": _summary.xref_summary(scores).paper.to_dict(),
    }
