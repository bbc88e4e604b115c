"""Records that share an identity: one policy for every reader.

Two records with the same identity and different content are an error that names the identities;
a record that repeats an earlier one exactly is dropped, with one warning that counts them.

A record's identity is its id (``review_id``, ``paper_id``, ``meta_review_id``, ``rebuttal_id``)
together with the ``kind`` and ``seed`` of its ``perturbation``: a perturbed record keeps the id of
its original (papers always; reviews and rebuttals edited by ``praib perturb`` too), so an original
and its variants, or the variants of two seeds, are different records that share an id.

Inputs reach a million records, so repeats are looked for in the id column alone (a set), and full
contents are compared only for the few records whose ids collide.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

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
