"""What ``praib evaluate --per-review DIR`` writes: one row per review of the input, with its parsed
fields and its text metrics, in Parquet parts written batch by batch; a judged evaluation adds each
per-review judged result as one :class:`~praib.metrics.item.Score` a review (a struct column of value,
answer, explanation and metadata, the metadata as JSON text).

Every process that folds a shard (:func:`praib.evaluation.streamed.fold`) writes the reviews of its
batches to ``DIR/part-I-of-N.parquet`` as it goes, so nothing but the current batch is held; the parts
of all shards together hold every review once. Read them with ``pandas.read_parquet(DIR)``,
``pyarrow.parquet.read_table(DIR)`` or ``datasets.load_dataset("parquet", data_dir=DIR)``.
Missing values (no score found, no text to measure) are nulls.

The folder is the user's as much as praib's: praib replaces or removes only the parts it wrote there,
recorded with their digests in the folder's record (:data:`praib.records.atomic.RECORD`), each process
adding its own part under the folder's lock. A file of the user's named like a part, or a part that
changed since praib wrote it, is refused and never deleted.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from praib.metrics.item import Score
from praib.metrics.registry import kept_columns
from praib.records.atomic import file_digest, record_written, written_by_praib
from praib.records.locks import output_lock

__all__ = ["SCORE_TYPE", "per_review_schema", "PerReviewWriter", "part_name", "check_folder", "remove_parts"]

_FIELDS = [("review_id", pa.string()), ("paper_id", pa.string()), ("venue", pa.string()), ("year", pa.int32()),
           ("decision", pa.string()), ("source", pa.string()), ("model", pa.string()), ("prompt", pa.string()),
           ("parse_status", pa.string()), ("parse_reason", pa.string()), ("rating", pa.int32()),
           ("confidence", pa.int32())]


#: A :class:`~praib.metrics.item.Score` in a per-review part.
SCORE_TYPE = pa.struct([("value", pa.float64()), ("answer", pa.string()), ("explanation", pa.string()),
                        ("metadata", pa.string())])


def per_review_schema(judged: Sequence[str] = ()) -> pa.Schema:
    """The columns of a per-review part: the review's fields, then the columns of its registered text metrics
    (:func:`praib.metrics.registry.kept_columns`; counts as integers), then a score of each ``judged`` result."""
    return pa.schema(_FIELDS + [(c.name, pa.int32() if c.count else pa.float64()) for c in kept_columns()]
                     + [(name, SCORE_TYPE) for name in judged])


def _score_row(score: Score | None) -> dict | None:
    if score is None:
        return None
    return {**score.to_dict(), "metadata": json.dumps(dict(score.metadata), ensure_ascii=False)}


_PART = re.compile(r"part-(\d+)-of-(\d+)\.parquet")
#: How long a shard waits for the others to record their parts (each holds the folder's lock for a moment).
LOCK_WAIT = 120.0


def part_name(shard: tuple[int, int]) -> str:
    return f"part-{shard[0]:05d}-of-{shard[1]:05d}.parquet"


def check_folder(folder: Path, shards: int, writes: Iterable[int] | None = None) -> None:
    """Refuse a folder that holds parts of an evaluation cut into another number of shards (mixed with this
    one's, they would count reviews twice), or a file of the user's (not written by praib, or changed since)
    where this evaluation writes a part: every part of ``shards``, or the parts numbered ``writes``."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--per-review {folder}: not a folder")
    if not folder.exists():
        return
    stale = sorted(p.name for p in folder.glob("part-*.parquet")
                   if (m := _PART.fullmatch(p.name)) is None or int(m.group(2)) != shards)
    if stale:
        raise ValueError(f"--per-review {folder}: holds parts of another evaluation ({', '.join(stale[:3])}"
                         f"{' ...' if len(stale) > 3 else ''}); remove them or choose another folder")
    for index in range(shards) if writes is None else writes:
        _refuse_users_file(folder / part_name((index, shards)))


def _refuse_users_file(path: Path) -> None:
    if os.path.lexists(path) and not written_by_praib(path):
        raise ValueError(f"--per-review {path.parent}: {path.name} is a file of yours (praib did not write it "
                         "there, or it changed since) where this evaluation writes its part; praib keeps your "
                         "files: move it away or choose another folder")


def remove_parts(folder: Path) -> None:
    """Remove the parts praib wrote in ``folder`` (recorded, unchanged; after :func:`check_folder`, all of the
    run at hand); a file of the user's named like one stays."""
    with output_lock(folder, wait=LOCK_WAIT):
        removed = {}
        for part in folder.glob("part-*.parquet"):
            if _PART.fullmatch(part.name) and written_by_praib(part):
                part.unlink()
                removed[part.name] = None
        record_written(folder, removed)


class PerReviewWriter:
    """Appends the reviews of each batch to ``folder/part-I-of-N.parquet``; the part appears, complete,
    when :meth:`close` is called (a part of a run that failed is never left looking whole). ``judged``: the
    judged results whose scores each batch brings (:meth:`write`)."""

    def __init__(self, folder: Path, shard: tuple[int, int], judged: Sequence[str] = ()) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / part_name(shard)
        self._temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self._columns, self._judged, self._schema = kept_columns(), tuple(judged), per_review_schema(judged)
        self._writer = pq.ParquetWriter(self._temporary, self._schema)

    def write(self, rows: Sequence[dict], scores: dict[str, np.ndarray],
              items: Mapping[str, Sequence[Score | None]] | None = None) -> None:
        """The batch's parsed review ``rows`` (a field they lack is null), their text metrics' columns and,
        by judged result, their :class:`~praib.metrics.item.Score` s."""
        columns = {name: pa.array([row.get(name) for row in rows], type=kind) for name, kind in _FIELDS}
        for column in self._columns:
            values = scores[column.name]
            missing = np.isnan(values)
            if column.count:
                values = np.where(missing, 0, values).astype(np.int32)
            columns[column.name] = pa.array(values, mask=missing, type=self._schema.field(column.name).type)
        for name in self._judged:
            columns[name] = pa.array([_score_row(score) for score in items[name]], type=SCORE_TYPE)
        self._writer.write_table(pa.table(columns, schema=self._schema))

    def close(self) -> None:
        """Move the part into place and record it, unless a file of the user's stands there (ValueError, the
        part discarded)."""
        self._writer.close()
        digest = file_digest(self._temporary)  # before the lock, which the other shards wait for
        try:
            with output_lock(self.path.parent, wait=LOCK_WAIT):
                _refuse_users_file(self.path)
                os.replace(self._temporary, self.path)
                record_written(self.path.parent, {self.path.name: digest})
        finally:
            self._temporary.unlink(missing_ok=True)

    def discard(self) -> None:
        self._writer.close()
        self._temporary.unlink(missing_ok=True)
