"""A batch of records checked column by column: the common case of :func:`~praib.records.io.coerce_record`
without its per-record dispatch.

:func:`coerce_batch` takes the raw records of a batch (the dicts a reader decoded, or the rows of an Arrow
table) and returns what ``coerce_record`` returns for each of them when every record is already in the
schema's form: each value None or of the field's exact type (a string for text, an int in range for a whole
number, a list of strings for a list), every required field present, the ids plain printable ASCII,
sub-scores whole numbers in range. Each field is checked over the whole batch at once (the set of the
types in a column, its least and greatest number, whether it holds a None or an empty string), and the
per-record work left is what the records' layouts ask: the records that share their keys, in one order,
share the sub-scores they give as keys of their own (``"soundness": 3``) and the unknown fields they hold.
Anything else (a number given as text, a score out of range, a missing field, an id to normalise) makes it
return None, and the caller reads the batch record by record, which names the first bad record in the same
words as ever.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, repeat
from typing import Any

from praib.records.io import ReadNotes, _as_struct, _as_subscores, _review_id
from praib.records.ids import record_id
from praib.records.schema import IDENTITY_FIELDS, REVIEW_SECTIONS, SCHEMAS, RecordError
from praib.scales import subscore_names

__all__ = ["coerce_batch"]

_NONE = type(None)
# The Python types a value of each dtype already has when coerce_record keeps it as it is.
_KEPT_AS_IS = {"string": {str, _NONE}, "int32": {int, _NONE}, "int64": {int, _NONE}, "bool": {bool, _NONE}}
_INT_BITS = {"int32": 32, "int64": 64}
_SUBSCORE_BOUND = 2 ** 31  # their values are int32


class _NotCanonical(Exception):
    """A value the per-record path would convert, note or refuse."""


def coerce_batch(raws: list[Any], kind: str, notes: ReadNotes) -> list[dict] | None:
    """``[coerce_record(raw, kind, where, notes) for raw in raws]`` when every record is already in the schema's
    form (see the module docstring), else None, with ``notes`` untouched."""
    if not raws or set(map(type, raws)) != {dict}:
        return None
    layouts: dict[tuple, list[int]] = {}  # the keys of some records, in their order -> their positions
    for position, layout in enumerate(map(tuple, raws)):
        layouts.setdefault(layout, []).append(position)
    subscore_keys = subscore_names() if "subscores" in SCHEMAS[kind][0] else frozenset()
    found = ReadNotes()
    rows: list[Any] = [None] * len(raws)
    try:
        for layout, positions in layouts.items():
            group = [raws[position] for position in positions]
            for position, row in zip(positions, _layout_rows(_plan(kind, layout, subscore_keys), group, found)):
                rows[position] = row
    except (_NotCanonical, RecordError):  # whatever the per-record path says, it says for the right record
        return None
    notes.add(found)
    return rows


@dataclass(frozen=True)
class _Plan:
    """What checking the records of one layout (their keys, in one order) asks, worked out once for the layout."""

    kind: str
    present: tuple[str, ...]  # the schema's fields the records give, in their order
    values: Callable[[dict], tuple]  # a record's values of ``present``
    plain: tuple[tuple[str, str, bool], ...]  # (field, dtype, whether an id) of each plain field given
    required: tuple[str, ...]  # the required fields (all of them given)
    extra: tuple[str, ...]  # the keys the schema does not know
    folded: tuple[str, ...]  # those that are sub-scores, in their order
    unknown: tuple[str, ...]  # the others
    template: dict  # the schema's fields in its order, each None


@lru_cache(maxsize=256)
def _plan(kind: str, layout: tuple, subscore_keys: frozenset) -> _Plan | None:
    """The plan of ``layout``; None when it lacks a required field."""
    features, required, _ = SCHEMAS[kind]
    present = tuple(key for key in layout if key in features)
    if any(name not in present for name in required):
        return None
    extra = tuple(key for key in layout if key not in features)
    plain = tuple((name, features[name].dtype, name in IDENTITY_FIELDS) for name in present
                  if name != "subscores" and not isinstance(features[name], dict) and hasattr(features[name], "dtype"))
    return _Plan(kind, present, _values_of(present), plain, required, extra,
                 tuple(key for key in extra if key in subscore_keys),
                 tuple(key for key in extra if key not in subscore_keys), dict.fromkeys(features))


def _layout_rows(plan: _Plan | None, raws: list[dict], found: ReadNotes) -> list[dict]:
    """The rows of ``raws``, records of one layout planned by ``plan``, each field checked and completed over all
    of them at once, each row made once from its columns; raises :class:`_NotCanonical` where coerce_record would
    convert, note or refuse a value."""
    if plan is None:
        raise _NotCanonical("required")
    kind = plan.kind
    features, _, id_field = SCHEMAS[kind]
    found.unknown_fields.update(plan.unknown)
    columns: dict[str, Any] = dict(zip(plan.present, zip(*map(plan.values, raws))))
    for name in plan.required:
        column = columns[name]
        if None in column or "" in column:
            raise _NotCanonical(name)
    for name, dtype, is_id in plan.plain:
        column = columns[name]
        _check_plain(column, dtype)
        if is_id:
            ids = "".join(filter(None, column))
            if not (ids.isascii() and ids.isprintable()):  # canonical_id would normalise or refuse them
                raise _NotCanonical(name)
    # Each row is the schema's fields in its order, None where the record gives none, merged with the record (a
    # copy made in C, row by row); its keys the schema does not know are dropped, and the columns that checking
    # changes are set anew.
    rows = list(map(plan.template.__or__, raws))
    for key in plan.extra:
        list(map(operator.delitem, rows, repeat(key)))
    changed: dict[str, Any] = {}
    if "source" in columns and kind in ("review", "meta_review"):
        changed["source"] = [source.strip() for source in columns["source"]]
    for name, feature in features.items():
        if name == "subscores":
            given = columns.get(name, ())
            own = _own_subscores(raws, plan.folded)
            changed[name] = (own if set(map(type, given)) <= {_NONE}
                             else [_given_subscores(value) + scores for value, scores in zip(given, own)])
        elif isinstance(feature, dict):
            if name in columns and set(map(type, columns[name])) != {_NONE}:
                changed[name] = [_as_struct(value, feature, "", name) for value in columns[name]]
        elif not hasattr(feature, "dtype"):  # a list of strings
            given = columns.get(name, (None,) * len(raws))
            _check_string_lists(given)
            if None in given:
                changed[name] = [[] if value is None else value for value in given]
    texts = columns.get("text", (None,) * len(raws))
    if kind == "review" and None in texts:
        # As coerce_record: the text of a record that only carries sections.
        sections = [columns[name] for name in REVIEW_SECTIONS if name in columns]
        if "text" not in columns and sections and not any(None in parts or "" in parts for parts in sections):
            changed["text"] = list(map("\n\n".join, zip(*sections)))  # every record's sections, all given
        else:
            changed["text"] = [text if text is not None else "\n\n".join(filter(None, parts)) or None
                               for text, *parts in zip(texts, *sections)]
    for name, values in changed.items():
        list(map(operator.setitem, rows, repeat(name), values))
    if None in columns.get(id_field, (None,)):
        for row in rows:
            if row[id_field] is None:
                row[id_field] = _review_id(row) if kind == "review" else record_id(row)
    return rows


def _given_subscores(value: Any) -> list[dict]:
    """The sub-scores of a ``subscores`` field, read as coerce_record reads them; raises where it would note one
    given as text (the first noted in the input is the example its warning shows)."""
    noted = ReadNotes()
    scores = _as_subscores(value, "", noted)
    if noted.numbers_from_text:
        raise _NotCanonical("subscores")
    return scores


def _check_plain(column: tuple, dtype: str) -> None:
    """Raises unless every value of ``column`` is None or of ``dtype``'s type already, in its range."""
    types = set(map(type, column))
    if not types <= _KEPT_AS_IS.get(dtype, set()):
        raise _NotCanonical(dtype)
    if dtype in _INT_BITS and int in types:
        _check_range([value for value in column if value is not None] if _NONE in types else column,
                     2 ** (_INT_BITS[dtype] - 1))


def _check_range(numbers: Any, bound: int) -> None:
    if min(numbers) < -bound or max(numbers) >= bound:
        raise _NotCanonical("range")


def _check_string_lists(column: tuple) -> None:
    """Raises unless every value of a list-of-strings column is None or a list of strings (or Nones)."""
    if not set(map(type, column)) <= {list, _NONE}:
        raise _NotCanonical("list")
    if not set(map(type, [item for value in column if value for item in value])) <= {str, _NONE}:
        raise _NotCanonical("list item")


def _own_subscores(raws: list[dict], keys: tuple[str, ...]) -> list[list[dict]]:
    """The sub-scores each record gives as keys of their own (``keys``, in its order), without the missing ones;
    raises unless they are whole numbers in range."""
    if not keys:
        return [[] for _ in raws]
    columns = list(zip(*map(_values_of(keys), raws)))
    types = set(map(type, chain.from_iterable(columns)))
    if not types <= {int, _NONE}:
        raise _NotCanonical("subscores")
    if int in types:
        _check_range([score for score in chain.from_iterable(columns) if score is not None] if _NONE in types
                     else list(chain.from_iterable(columns)), _SUBSCORE_BOUND)
    if _NONE not in types:  # each record gives every one: made key by key, then gathered record by record
        scores = [[{"name": key, "value": score} for score in column] for key, column in zip(keys, columns)]
        return list(map(list, zip(*scores)))
    return [[{"name": key, "value": score} for key, score in zip(keys, record) if score is not None]
            for record in zip(*columns)]


def _values_of(keys: tuple[str, ...]):
    """A function giving a record's values of ``keys`` as a tuple."""
    if not keys:
        return lambda raw: ()
    getter = operator.itemgetter(*keys)
    return getter if len(keys) > 1 else lambda raw: (getter(raw),)
