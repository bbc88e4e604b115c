"""Results laid out as the papers' own tables (``praib tables``).

>>> from praib.tables import load_result, make_tables
>>> tables = make_tables([load_result("results.json")])          # doctest: +SKIP
>>> print(tables[0].to_markdown())                                 # doctest: +SKIP

Every number of a :class:`~praib.tables.layout.Table` is a cell that remembers the result file and
JSON pointer it came from; :data:`TABLES` lists every table with the result it needs.
"""

from __future__ import annotations

from typing import Sequence

from praib.tables.layout import Cell, Table
from praib.tables.registry import PRODUCED_BY, TABLES, Result, TableSpec, load_result, resolve
from praib.tables import praib_tables  # noqa: F401  (registers the tables)
from praib.tables import target_aspect_tables  # noqa: F401  (registers the tables)
from praib.tables import praib_leaderboard_tables  # noqa: F401  (registers the tables)
from praib.tables import aspect_guided_tables, counterfactual_tables  # noqa: F401  (registers the tables)
from praib.tables import comparison_tables  # noqa: F401  (registers the tables)
from praib.tables import praib_coverage_tables, praib_dataset_tables, praib_grounding_tables  # noqa: F401
from praib.tables import aspect_guided_model_tables, aspect_guided_statistics_tables  # noqa: F401
from praib.tables import counterfactual_dataset_tables, target_aspect_validation_tables  # noqa: F401

__all__ = ["Cell", "Table", "TABLES", "TableSpec", "Result", "PRODUCED_BY", "in_order", "load_result", "make_tables",
           "resolve", "unknown_tables"]


def in_order() -> list[TableSpec]:
    """Every table, by paper and number."""
    return sorted(TABLES.values(), key=lambda spec: (spec.paper, spec.number, spec.key))


def unknown_tables(keys: Sequence[str]) -> list[str]:
    return [key for key in keys if key not in TABLES]


def make_tables(results: Sequence[Result], keys: Sequence[str] | None = None) -> list[Table]:
    """The tables ``keys`` names (default: every table some result can build), in registry order: one per
    result of the table's kind, or one from all of them for a table that combines results.

    A named table whose result kind is absent comes back empty, with a note naming the command that
    produces its result."""
    if keys is not None and unknown_tables(keys):
        raise ValueError(f"no table {', '.join(unknown_tables(keys))}; `praib tables --list` names them")
    kinds = {result.kind for result in results}
    chosen = [spec for spec in in_order() if (spec.key in keys if keys is not None else spec.kind in kinds)]
    tables = []
    for spec in chosen:
        of_kind = [result for result in results if result.kind == spec.kind]
        if of_kind and spec.combines:
            tables += _build(spec, of_kind)
        elif of_kind:
            tables += [table for result in of_kind for table in _build(spec, [result])]
        else:
            tables.append(spec.new(header=[], needs=[f"the whole table: a result of `{spec.produced_by}`"]))
    return tables


def _build(spec: TableSpec, results: Sequence[Result]) -> list[Table]:
    """``spec``'s table (or tables) of ``results``; a result whose content is not laid out as praib writes it (a
    field of the wrong type, a missing one) is one error naming the files, not a failure inside a table builder."""
    try:
        built = spec.build(spec, results)
        return built if isinstance(built, list) else [built]
    except (KeyError, TypeError, AttributeError, IndexError) as err:
        files = ", ".join(result.path for result in results)
        command = spec.produced_by.split(" --")[0]
        raise ValueError(f"{files}: not laid out as `{command}` writes it ({spec.key} read "
                         f"{type(err).__name__}: {err})") from err
