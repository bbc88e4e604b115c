"""Records that share an identity: one policy for every reader.

Two records with the same identity and different content are an error that names the identities;
a record that repeats an earlier one exactly is dropped, with one warning that counts them.

A record's identity is its id (``review_id``, ``paper_id``, ``meta_review_id``, ``rebuttal_id``)
together with the ``kind`` and ``seed`` of its ``perturbation``: a perturbed record keeps the id of
its original (papers always; reviews and rebuttals edited by ``praib perturb`` too), so an original
and its variants, or the variants of two seeds, are different records that share an id.

Inputs reach a million records, so repeats are looked for in the id column alone (a set), and full
contents are compared only for the few records whose ids collide. A stream of records is checked by
:class:`StreamRepeats`, which keeps hashes of each identity and of its content, never the records.
"""

from __future__ import annotations

import json
import logging
import operator
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from praib.records.schema import SCHEMAS, RecordError

logger = logging.getLogger(__name__)

_LISTED = 5


@dataclass(frozen=True)
class Repeats:
    """``conflicting``: the identities used by records with different content, in order of first use;
    ``exact``: the positions of records that repeat an earlier record exactly."""

    conflicting: list[str]
    exact: list[int]

    def conflict(self, what: str) -> str:
        """One line naming the first few conflicting identities, e.g.
        ``2 review_ids repeat with different content: r1, r7``."""
        n = len(self.conflicting)
        listed = ", ".join(self.conflicting[:_LISTED]) + (f" and {n - _LISTED} more" if n > _LISTED else "")
        return f"{n} {what}{'s repeat' if n > 1 else ' repeats'} with different content: {listed}"

    def dropped(self, what: str) -> str:
        n = len(self.exact)
        return f"dropped {n} exact duplicate record{'s' if n > 1 else ''} (same {what} and content)"

    def without_exact(self, rows: Sequence[Any]) -> list:
        """``rows`` less the exact repeats."""
        dropped = set(self.exact)
        return [row for position, row in enumerate(rows) if position not in dropped]


def find_repeats(rows: Sequence[Any], id_of: Callable[[Any], Hashable],
                 qualifiers: Callable[[Any], tuple[str | None, ...]] = lambda row: ()) -> Repeats:
    """The repeats among ``rows``, whose identity is ``id_of(row)`` (a tuple id is shown joined by
    '/') plus the ``qualifiers(row)`` that are not None (shown in brackets)."""
    ids = [id_of(row) for row in rows]
    if len(set(ids)) == len(ids):
        return Repeats([], [])
    counts = Counter(ids)
    groups: dict[tuple, list[int]] = {}
    for position, (row, identity) in enumerate(zip(rows, ids)):
        if counts[identity] > 1:
            groups.setdefault((identity, *qualifiers(row)), []).append(position)
    conflicting, exact = [], []
    for key, positions in groups.items():
        if len(positions) < 2:
            continue
        if len({json.dumps(rows[p], sort_keys=True, default=str) for p in positions}) > 1:
            conflicting.append(_label(key))
        else:
            exact.extend(positions[1:])
    return Repeats(conflicting, sorted(exact))


def _label(key: tuple) -> str:
    identity, *qualifiers = key
    shown = [q for q in qualifiers if q is not None]
    name = "/".join(map(str, identity)) if isinstance(identity, tuple) else str(identity)
    return name + (f" ({', '.join(shown)})" if shown else "")


def _edit(row: dict) -> tuple[str | None, str | None]:
    edit = row.get("perturbation")
    if edit is None:
        return None, None
    return f"perturbation {edit.get('kind')}", f"seed {edit.get('seed')}"


def record_repeats(rows: Sequence[dict], kind: str) -> Repeats:
    """The repeats among records of ``kind`` (see the module docstring for their identity)."""
    id_field = SCHEMAS[kind][2]
    return find_repeats(rows, lambda row: row[id_field], _edit)


def drop_duplicates(rows: list[dict], kind: str, where: str) -> list[dict]:
    """``rows`` (records of ``kind``) without the exact repeats, which one warning counts; records of
    one identity with different content raise :class:`RecordError` naming ``where`` and the ids."""
    id_field = SCHEMAS[kind][2]
    repeats = record_repeats(rows, kind)
    if repeats.conflicting:
        raise RecordError(where, id_field, repeats.conflict("id"))
    if not repeats.exact:
        return rows
    logger.warning("%s: %s", where, repeats.dropped(id_field))
    return repeats.without_exact(rows)


class StreamRepeats:
    """The policy over a stream of records of ``kind``, batch by batch: :meth:`fresh` passes the records
    that repeat no earlier one exactly, and :meth:`finish` raises the error that names every identity
    used with different contents, or warns of the exact repeats dropped.

    Each record seen costs 24 bytes: a 64-bit hash of its identity, one of its content, and its position
    (to list identities in order of first use, as :func:`drop_duplicates` does), kept in sorted numpy
    runs that merge as they grow, and 4 to 8 bytes of a :class:`_SeenFilter` of the identity hashes, which
    spares looking up in the runs the identities never seen (nearly all). The hashes are Python's (fast,
    and the same within one process only). Two identities share a hash with a chance of about
    n**2 / 2**65 (3e-8 for a million records); such a pair would be reported as one id repeated with
    different content.
    """

    def __init__(self, kind: str):
        features, _, self._id_field = SCHEMAS[kind]
        # A record's content, hashed: its plain values, taken at once, and a hashable form of each list and mapping.
        nested = {name: _hashable_form(feature) for name, feature in features.items() if not hasattr(feature, "dtype")}
        self._plain = operator.itemgetter(*[name for name in features if name not in nested])
        self._nested = list(nested.items())
        self._edited = "perturbation" in features
        self._runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # sorted hashes, contents, positions
        self._seen = _SeenFilter(_SeenFilter.FIRST_CAPACITY)
        self._conflicting: dict[int, tuple[int, str]] = {}  # identity hash -> (first position, label)
        self._exact: list[int] = []
        self._position = 0

    def fresh(self, rows: Sequence[dict]) -> list[dict]:
        """``rows``, the next records of the stream (as :func:`~praib.records.io.coerce_record` gives them), less
        those that repeat an earlier record exactly."""
        if not rows:
            return []
        keys = self._identity_hashes(rows)
        # Each field's values taken column by column: a record's content is its plain values and the hashable
        # forms of its lists and mappings.
        nested = []
        for name, form in self._nested:
            values = list(map(operator.itemgetter(name), rows))
            # A mapping is most often missing from a whole batch (the generation of a human review): None, as is.
            nested.append(values if values.count(None) == len(values) else list(map(form, values)))
        contents = list(map(hash, zip(map(self._plain, rows), *nested)))
        earlier = self._earlier(keys)
        start, self._position = self._position, self._position + len(rows)
        order = np.argsort(keys)
        in_order = keys[order]
        if not earlier and not (in_order[1:] == in_order[:-1]).any():  # nearly always: no identity seen before
            self._add(in_order, np.array(contents, dtype=np.int64)[order], order + start)
            return list(rows)
        new: dict[int, tuple[int, int]] = {}  # identity hash -> (content, position) of the batch's new ones
        kept = []
        for offset, (row, key, content) in enumerate(zip(rows, keys.tolist(), contents)):
            position = start + offset
            first_content, first = earlier.get(key) or new.setdefault(key, (content, position))
            if first == position:
                kept.append(row)
            elif first_content == content:
                self._exact.append(position)
            else:
                self._conflicting.setdefault(key, (first, _label(self._identity(row))))
                kept.append(row)
        if new:
            keys = np.fromiter(new, dtype=np.int64, count=len(new))
            order = np.argsort(keys)
            self._add(keys[order],
                      np.fromiter((content for content, _ in new.values()), dtype=np.int64, count=len(new))[order],
                      np.fromiter((position for _, position in new.values()), dtype=np.int64, count=len(new))[order])
        return kept

    def _identity(self, row: dict) -> tuple:
        """A record's identity: its id, and the kind and seed of its perturbation (both None for an original)."""
        return (row[self._id_field], *_edit(row)) if self._edited else (row[self._id_field], None, None)

    def _identity_hashes(self, rows: Sequence[dict]) -> np.ndarray:
        """The hash of each record's identity: of its id alone for an original (no tuple to make), of the
        identity's tuple for a perturbed record."""
        ids = map(operator.itemgetter(self._id_field), rows)
        edits = list(map(operator.itemgetter("perturbation"), rows)) if self._edited else [None]
        if edits.count(None) == len(edits):
            return np.fromiter(map(hash, ids), dtype=np.int64, count=len(rows))
        return np.fromiter(map(_identity_hash, map(self._identity, rows)), dtype=np.int64, count=len(rows))

    def finish(self, where: str) -> None:
        """At the end of the stream: a :class:`RecordError` naming ``where`` and the identities used with
        different contents, else one warning counting the exact repeats dropped (if any)."""
        if self._conflicting:
            labels = [label for _, label in sorted(self._conflicting.values())]
            raise RecordError(where, self._id_field, Repeats(labels, []).conflict("id"))
        if self._exact:
            logger.warning("%s: %s", where, Repeats([], self._exact).dropped(self._id_field))

    def _earlier(self, keys: np.ndarray) -> dict[int, tuple[int, int]]:
        """(content, position) of the earlier record of each of ``keys`` seen before this batch."""
        maybe = self._seen.holds(keys)
        if not maybe.any():
            return {}
        keys = keys[maybe]
        found = {}
        for run_keys, run_contents, run_positions in self._runs:
            at = np.minimum(np.searchsorted(run_keys, keys), len(run_keys) - 1)
            hits = np.flatnonzero(run_keys[at] == keys)
            found.update(zip(keys[hits].tolist(), zip(run_contents[at[hits]].tolist(),
                                                      run_positions[at[hits]].tolist())))
        return found

    def _add(self, keys: np.ndarray, contents: np.ndarray, positions: np.ndarray) -> None:
        """Keep the identity hashes ``keys`` (sorted) of records seen for the first time, with their contents and
        positions."""
        self._runs.append((keys, contents, positions))
        # Runs merge like the digits of a binary counter: at most log2(records) of them.
        while len(self._runs) > 1 and len(self._runs[-2][0]) <= len(self._runs[-1][0]):
            older, newer = self._runs.pop(-2), self._runs.pop()
            at = np.searchsorted(older[0], newer[0])
            self._runs.append(tuple(np.insert(old, at, new) for old, new in zip(older, newer)))
        if not self._seen.add(keys):  # full: a new one of twice the capacity (or more), holding them all
            held = sum(len(run_keys) for run_keys, _, _ in self._runs)
            capacity = 2 * self._seen.capacity
            while capacity < held:
                capacity *= 2
            self._seen = _SeenFilter(capacity)
            for run_keys, _, _ in self._runs:
                self._seen.add(run_keys)


def _identity_hash(identity: tuple) -> int:
    return hash(identity[0]) if identity[1:] == (None, None) else hash(identity)


class _SeenFilter:
    """A Bloom filter of identity hashes (3 bit positions a hash, 32 bits a hash it holds at most): says which
    hashes may have been added, never missing one that was; of the others it lets through fewer than one in a
    thousand, so most batches of 256 never search the runs.

    Written here, not taken from a library: it works on a numpy array of hashes at once and needs only the
    three vectorised operations below."""

    FIRST_CAPACITY = 2 ** 16
    _BITS_A_HASH = 32
    # Odd 64-bit multipliers: each bit position is the top bits of the hash times one of them (multiply-shift).
    _MULTIPLIERS = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)
    _BIT = np.array([1 << shift for shift in range(8)], dtype=np.uint8)

    def __init__(self, capacity: int):
        self.capacity = capacity
        bits = capacity * self._BITS_A_HASH
        self._shift = np.uint64(64 - (bits.bit_length() - 1))
        self._bytes = np.zeros(bits // 8, dtype=np.uint8)
        self._count = 0

    def _bits(self, keys: np.ndarray) -> np.ndarray:
        return (keys.view(np.uint64)[:, None] * self._MULTIPLIERS) >> self._shift

    def holds(self, keys: np.ndarray) -> np.ndarray:
        """For each of ``keys``, False where it was never added."""
        bits = self._bits(keys)
        return (self._bytes[bits >> np.uint64(3)] & self._BIT[bits & np.uint64(7)]).all(axis=1)

    def add(self, keys: np.ndarray) -> bool:
        """Adds ``keys``; False (and nothing added) when that would pass the capacity."""
        if self._count + len(keys) > self.capacity:
            return False
        self._count += len(keys)
        bits = self._bits(keys).ravel()
        np.bitwise_or.at(self._bytes, bits >> np.uint64(3), self._BIT[bits & np.uint64(7)])
        return True


_SUBSCORE = operator.itemgetter("name", "value")


def _hashable_form(feature: Any) -> Callable[[Any], Hashable]:
    """A function giving a hashable form of a value of ``feature`` (a list or a mapping, as coerce_record gives
    it) that is equal for equal values: a tuple of the sub-scores' (name, value) pairs, a tuple of a list of
    strings; the repr of a mapping (in which a NaN, as its floats may hold, equals itself), None for none."""
    if isinstance(feature, dict):
        return lambda value: None if value is None else repr(value)
    if isinstance(getattr(feature, "feature", None), dict):  # the sub-scores: a list of {name, value}
        return lambda value: tuple(map(_SUBSCORE, value))
    return tuple
