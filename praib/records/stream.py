"""Records read batch by batch, in flat memory, from every source :func:`load_records` reads.

:func:`iter_record_batches` is the one reader of record sources: it yields :class:`RecordBatch` es
of validated records, and :func:`load_records` is the Dataset of all of them. A batch has a fixed
place in its input (its ``index``), so N processes or machines, each given one ``shard=(i, N)`` of
the same input, together read every record exactly once, in batches numbered as one process would.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, Any

import datasets
import pyarrow as pa
from datasets import Dataset

from praib.records.columns import coerce_batch
from praib.records.duplicates import StreamRepeats
from praib.records.io import (RECORD_FILES, ReadNotes, check_hub, coerce_record, hub_error, is_dataset_repo,
                              jsonl_batch, jsonl_values, load_saved_dataset, open_parquet, read_csv_rows,
                              read_json_list, record_files, records_table, records_to_dataset, table_dataset,
                              unreadable_parquet)
from praib.records.peer import RecordFormats, is_ai_scientist_review
from praib.records.schema import SCHEMAS, RecordError

logger = logging.getLogger(__name__)

BATCH_ROWS = 4096
_BLOCK = 1 << 20  # bytes read at a time to pass over the lines of other shards
# The read buffer of a JSONL file: with the default 8 KB, a review's line (about 3 KB) is often split over two
# refills, and reading lines cost about twice as much CPU.
_LINE_BUFFER = 1 << 16
# The JSONL records decoded, checked and hashed at a time, all three before the next ones: about 1 MB of reviews,
# which stays in the CPU's caches from one step to the next (a whole batch, about 20 MB, did not: 4 us a review).
_CHECKED_AT_ONCE = 256
_HUB_ID = re.compile(r"[\w.-]+/[\w.-]+(:[\w.-]+)?")

Owned = Callable[[int], bool]


@dataclass(frozen=True)
class RecordBatch:
    """One batch of records of a stream.

    ``index``: the batch's position among the batches of the whole input, from 0, the same for a given
    input and ``batch_rows`` whether the input is read whole or in shards; ``rows``: its records, each
    validated and coerced as :func:`~praib.records.io.coerce_record` does (column by column where the batch
    is already in the schema's form: :mod:`praib.records.columns`), less those that repeat an earlier
    record of the stream exactly; ``where``: the file (or dataset) and the lines, records or rows it
    was read from, e.g. ``reviews.jsonl: lines 4097-8192`` or ``part-1.parquet: rows 0-4095``.
    """

    index: int
    rows: tuple[dict, ...]
    where: str


@dataclass(frozen=True)
class _RawBatch:
    index: int
    where: str
    items: list[tuple[str, Any]] | _Decoded | _Lines  # (where, the record as stored)
    path: Path | None = None  # the file the records were read from

    @property
    def values(self) -> list:
        """The records as stored."""
        return self.items.values if isinstance(self.items, _Decoded) else [raw for _, raw in self.items]


@dataclass(frozen=True)
class _Lines:
    """The lines of a JSONL file from line ``first``, which starts at byte ``offset``, as read: decoded when their
    records are asked for (:meth:`decoded`, or iterating), so that a reader can decode and check a few at a time."""

    path: Path
    first: int
    offset: int
    lines: list[bytes]

    def decoded(self, start: int = 0) -> _Decoded | list[tuple[str, Any]]:
        """The (where, record) pairs of the non-blank lines from the ``start``-th on; raises :class:`RecordError`
        for the first that is not JSON."""
        lines = self.lines[start:]
        values = jsonl_batch(lines)
        if values is not None:
            return _Decoded(self.path, self.first + start, values)
        return list(jsonl_values(self.path, lines, self.first + start,
                                 self.offset + sum(map(len, self.lines[:start]))))

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return iter(self.decoded())


@dataclass(frozen=True)
class _Decoded:
    """The (where, record) pairs of the lines of a JSONL file from line ``first``, none blank: each where is made
    when it is asked for (by an error message), not for every line."""

    path: Path
    first: int
    values: list

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return ((f"{self.path}: line {line}", value) for line, value in enumerate(self.values, start=self.first))

    def __len__(self) -> int:
        return len(self.values)


def iter_record_batches(source: str | Path, kind: str = "review", split: str = "train", *,
                        batch_rows: int = BATCH_ROWS, shard: tuple[int, int] | None = None,
                        allow_empty: bool = False, notes: ReadNotes | None = None,
                        source_name: str | None = None) -> Iterator[RecordBatch]:
    """The records of ``kind`` in ``source``, any source :func:`load_records` reads, in batches of at
    most ``batch_rows`` records, holding about one batch at a time.

    - **JSONL** is read line by line; a batch is ``batch_rows`` lines (blank ones count, and are
      skipped). Fixed line counts, rather than byte ranges, make a batch the same size in records for
      every kind of source, and give every error its line number; another shard's lines are passed over
      by finding their newlines in large blocks read from the file, without splitting or decoding them, which
      costs little next to parsing.
    - A **JSON** file holding a list (or ``{"records": [...]}``, ``{"notes": [...]}``, or one AI-Scientist
      review) is read whole, as JSON cannot be read in parts, then batched.
    - **CSV**: a header of field names, one record a row, an empty cell a missing value; read whole.
    - **Parquet** is read with ``ParquetFile.iter_batches``, page by page; a batch never spans two row
      groups, so a shard skips the row groups that hold none of its batches unread, and a row group
      that is not a multiple of ``batch_rows`` ends with a shorter batch.
    - A **directory** of .parquet (else .jsonl, else .json) files is read file by file in name order, the
      batch indexes running on from one file to the next; a records folder (``papers.jsonl``,
      ``reviews.jsonl``, ... as `praib data collect` writes) gives its file of ``kind``; a saved dataset (``Dataset.save_to_disk``) is
      memory-mapped and sliced; a dataset repository (a folder with README configs, ``folder:config``)
      and a Hub id (``org/name``, ``org/name:config``) are streamed by
      ``datasets.load_dataset(..., streaming=True)``.

    ``shard=(i, n)`` yields only the batches whose ``index % n == i``, with the indexes they have in the
    whole input; the records of other batches are neither decoded to Python nor checked (their JSONL
    lines are only counted). Shards ``0..n-1`` of one input (read
    with the same ``batch_rows``) hold each record exactly once. A worker needs nothing but these
    arguments to read its shard: it opens the source itself.

    A malformed record raises :class:`RecordError` naming the file, the line (JSONL, JSON) or row, and
    the field, as :func:`load_records` does. Repeats follow :mod:`praib.records.duplicates` over the
    stream: a record that repeats an earlier one exactly is dropped, and one warning at the end counts
    them; two records of one identity with different content raise :class:`RecordError` listing the
    ids after the last batch. A stream without any record raises :class:`RecordError` at its end
    unless ``allow_empty`` (then it warns). With ``n > 1`` repeats are looked for within the shard only,
    and a shard without records is no error: whether the whole input is empty, or repeats a record
    across shards, is for whoever merges the shards to tell. Fields the schema does not know are named
    in one warning at the end of the stream, and so are the scores given as text with a label after their
    number (read as the number); given ``notes``, they are added to it instead, for a caller that reads
    an input in shards to say them once.

    Reviews in the formats other tools write (AI-Scientist review JSON, OpenReview notes) are read as review
    records (:mod:`praib.records.peer`), and ``source_name`` fills ``source`` where a record names none
    (and ``model`` too, for a source other than human).
    """
    if kind not in SCHEMAS:
        raise ValueError(f"unknown record kind {kind!r}; choose from {', '.join(SCHEMAS)}")
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be at least 1, got {batch_rows}")
    part, parts = (0, 1) if shard is None else shard
    if not 0 <= part < parts:
        raise ValueError(f"shard must be (i, n) with 0 <= i < n, got {shard!r}")
    whole = parts == 1
    formats = RecordFormats(kind, source_name)  # checks the name before anything is read
    batches, label = _raw_batches(source, split, batch_rows, lambda index: index % parts == part,
                                  empty_ok=allow_empty or not whole, kind=kind)
    return _record_batches(batches, kind, label, allow_empty=allow_empty, whole=whole, notes=notes,
                           formats=formats)


def load_records(source: str | Path, kind: str = "review", split: str = "train", *,
                 allow_empty: bool = False, source_name: str | None = None) -> Dataset:
    """Read and validate records of ``kind`` ('review', 'paper', 'meta_review' or
    'rebuttal') from a file, a directory or a Hub id ('org/name' or
    'org/name:config'), and return them as a Dataset with the kind's schema.

    Records that repeat an earlier one exactly are dropped with a warning; two records of one
    identity with different content, or (unless ``allow_empty``) no record at all, raise
    :class:`RecordError` (see :mod:`praib.records.duplicates`). The records are those of
    :func:`iter_record_batches`, all held at once; read a large input with that instead. ``source_name``
    fills ``source`` where a record names none (and ``model``, for a source other than human)."""
    batches = iter_record_batches(source, kind, split, allow_empty=allow_empty, source_name=source_name)
    # Each batch's records become a table of their own as they come: only one batch is ever held as Python
    # objects (a reference of 15,000 reviews took about 130 MB so), the table's columns being compact.
    tables = [records_table(list(batch.rows), kind) for batch in batches if batch.rows]
    if not tables:
        return records_to_dataset([], kind)
    return table_dataset(pa.concat_tables(tables))


def raw_rows(source: str | Path, split: str, empty_ok: bool = False) -> tuple[Iterator[tuple[str, Any]], str]:
    """The rows of ``source`` as stored, before any schema check: an iterator of (where, row) pairs,
    ``where`` naming the file and line or row for error messages, and a label of the source.
    Raises :class:`RecordError` when the source itself cannot be read (a blank JSONL file too,
    unless ``empty_ok``)."""
    batches, label = _raw_batches(source, split, BATCH_ROWS, lambda index: True, empty_ok)
    return (item for batch in batches for item in batch.items), label


def _record_batches(batches: Iterator[_RawBatch], kind: str, label: str, *, allow_empty: bool,
                    whole: bool, notes: ReadNotes | None, formats: RecordFormats) -> Iterator[RecordBatch]:
    found = ReadNotes()
    repeats = StreamRepeats(kind)
    seen = 0
    for batch in batches:
        if isinstance(batch.items, _Lines):
            counted, fresh = _checked_lines(batch, kind, formats, found, repeats)
        else:
            rows = _checked_rows(batch, kind, formats, found)
            counted, fresh = len(rows), repeats.fresh(rows)
        seen += counted
        yield RecordBatch(batch.index, tuple(fresh), batch.where)
    found.left_out_notes.update(formats.left_out)
    if notes is not None:
        notes.add(found)
    else:
        for line in found.warnings(label, kind):
            logger.warning("%s", line)
    if not seen and whole:
        if not allow_empty:
            raise RecordError(label, None, "holds no records")
        logger.warning("%s: holds no %s records", label, kind.replace("_", "-"))
    repeats.finish(label)


def _checked_lines(batch: _RawBatch, kind: str, formats: RecordFormats, found: ReadNotes,
                   repeats: StreamRepeats) -> tuple[int, list[dict]]:
    """The count of the records of a batch of JSONL lines, and those of them that ``repeats`` finds fresh, checked
    as :func:`_checked_rows` checks them: :data:`_CHECKED_AT_ONCE` lines at a time while they are all JSON records
    in praib's form, and from the first that are not, the rest of the batch as a whole, as ever (its lines decoded,
    then its records checked), which raises for them what it always raised."""
    lines: _Lines = batch.items
    counted, fresh = 0, []
    for start in range(0, len(lines.lines), _CHECKED_AT_ONCE):
        values = jsonl_batch(lines.lines[start:start + _CHECKED_AT_ONCE])
        rows = (coerce_batch(values, kind, found) if values is not None and formats.changes_none(values)
                else None)
        if rows is None:
            rows = _checked_rows(_RawBatch(batch.index, batch.where, lines.decoded(start), batch.path),
                                 kind, formats, found)
            return counted + len(rows), fresh + repeats.fresh(rows)
        counted += len(rows)
        fresh += repeats.fresh(rows)
    return counted, fresh


def _checked_rows(batch: _RawBatch, kind: str, formats: RecordFormats, found: ReadNotes) -> list[dict]:
    """The records of ``batch`` in praib's form (other tools' formats converted), checked against the schema of
    ``kind``: column by column (:func:`~praib.records.columns.coerce_batch`) when they are already in its form,
    else record by record, which raises for the first bad record what it always raised."""
    raws = batch.values
    if formats.changes_none(raws):
        prepared, failure = batch.items, None
    else:
        prepared, failure = _prepared(batch, formats)
        raws = [raw for _, raw in prepared]
    rows = None if failure else coerce_batch(raws, kind, found)
    if rows is None:
        rows = [coerce_record(raw, kind, where, found) for where, raw in prepared]
    if failure:
        raise failure
    return rows


def _prepared(batch: _RawBatch, formats: RecordFormats) -> tuple[list[tuple[str, Any]], Exception | None]:
    """The (where, record) pairs of ``batch`` that :meth:`RecordFormats.prepare` keeps, as it gives them, up to the
    first it refuses, and its error (None: none)."""
    prepared, failure = [], None
    for where, raw in batch.items:
        try:
            raw = formats.prepare(raw, batch.path, where)
        except Exception as error:  # noqa: BLE001 - raised after the errors of the records before it, as ever
            failure = error
            break
        if raw is not None:
            prepared.append((where, raw))
    return prepared, failure


def _raw_batches(source: str | Path, split: str, batch_rows: int, owned: Owned,
                 empty_ok: bool, kind: str | None = None) -> tuple[Iterator[_RawBatch], str]:
    """The batches ``owned`` (by index) of the records of ``source`` as stored, and a label of the
    source (of a records folder, its file of ``kind``). A source that does not exist, and a dataset that
    cannot be loaded, are a :class:`RecordError` at once; a file that cannot be read is one when its
    batches are read."""
    path = Path(source)
    folder, _, config = str(source).partition(":")
    if config and Path(folder).is_dir():  # a local dataset repository and one of its configs
        return _streamed_batches(folder, config, split, str(source), batch_rows, owned, empty_ok), str(source)
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix == ".jsonl":
            return _jsonl_batches(path, batch_rows, owned, 0, empty_ok), str(path)
        if suffix == ".json":
            return _json_batches(path, batch_rows, owned), str(path)
        if suffix == ".parquet":
            return _parquet_batches(path, batch_rows, owned, 0), str(path)
        if suffix == ".csv":
            return _csv_batches(path, batch_rows, owned), str(path)
        raise RecordError(str(path), None, f"unsupported file type; {ACCEPTED}")
    if path.is_dir():
        if (path / "dataset_info.json").exists() or (path / "state.json").exists():
            return _sliced_batches(load_saved_dataset(path, split), str(path), batch_rows, owned), str(path)
        if is_dataset_repo(path):  # e.g. written by `praib data build`: its default config
            return _streamed_batches(str(path), None, split, str(path), batch_rows, owned, empty_ok), str(path)
        files = record_files(path, kind)
        if files:
            return _file_batches(files, batch_rows, owned), str(path)
        if kind and record_files(path):  # a records folder without this kind's file
            raise RecordError(str(path), None, f"the records folder holds no {RECORD_FILES[kind]}")
        raise RecordError(str(path), None, f"the folder holds none of what praib reads; {ACCEPTED}")
    if _HUB_ID.fullmatch(str(source)) and not str(source).startswith("."):
        repo, _, config = str(source).partition(":")
        check_hub(str(source))
        return _streamed_batches(repo, config or None, split, str(source), batch_rows, owned, empty_ok,
                                 hub=True), str(source)
    raise RecordError(str(source), None, f"no such file or directory, and not a Hub dataset id; {ACCEPTED}")


#: What every command that reads records accepts, as its errors say.
ACCEPTED = ("give a .jsonl, .json, .parquet or .csv file, a folder of .parquet or .jsonl files, a saved dataset, "
            "a dataset folder (DIR or DIR:config, as `praib data build` writes) or a Hub dataset id (org/name)")


def _csv_batches(path: Path, batch_rows: int, owned: Owned) -> Iterator[_RawBatch]:
    """A comma-separated file with a header of field names, one record a row; an empty cell is a missing
    value. Read whole (as JSON is), then batched."""
    _, rows = read_csv_rows(path)
    items = [(f"{path}: line {line}", {k: (v if v != "" else None) for k, v in row.items()}) for line, row in rows]
    if not items:
        raise RecordError(str(path), None, "empty: no records")
    for index, start in enumerate(range(0, len(items), batch_rows)):
        if owned(index):
            chunk = items[start:start + batch_rows]
            yield _RawBatch(index, f"{chunk[0][0]}-{chunk[-1][0].rsplit(' ', 1)[-1]}", chunk, path)


def _file_batches(files: list[Path], batch_rows: int, owned: Owned) -> Iterator[_RawBatch]:
    index = 0
    for file in files:
        if file.suffix == ".jsonl":
            # A shard of an empty split is an empty file: fine as a part of the whole.
            index = yield from _jsonl_batches(file, batch_rows, owned, index, empty_ok=True)
        elif file.suffix == ".json":
            index = yield from _json_batches(file, batch_rows, owned, index)
        else:
            index = yield from _parquet_batches(file, batch_rows, owned, index)


def _jsonl_batches(path: Path, batch_rows: int, owned: Owned, index: int,
                   empty_ok: bool) -> Generator[_RawBatch, None, int]:
    """The owned batches of ``batch_rows`` lines of a JSONL file, numbered from ``index``; returns the
    index after the file's last batch. A file without a record is an error unless ``empty_ok``."""
    line, offset, empty = 1, 0, True
    with path.open("rb", buffering=_LINE_BUFFER) as handle:
        while True:
            if owned(index):
                lines = list(islice(handle, batch_rows))
                count, size = len(lines), sum(map(len, lines))
                if count:
                    empty = empty and not _holds_value(lines, line)
                    yield _RawBatch(index, f"{path}: lines {line}-{line + count - 1}",
                                    _Lines(path, line, offset, lines), path)
            else:
                count, size = _skip_lines(handle, batch_rows)
            if not count:
                break
            line, offset, index = line + count, offset + size, index + 1
            if count < batch_rows:
                break
    if empty and not empty_ok:
        raise RecordError(str(path), None, "empty: no records")
    return index


def _holds_value(lines: list[bytes], first: int) -> bool:
    """Whether any of ``lines``, from line ``first`` of a JSONL file, is not blank as :func:`jsonl_values` tells (a
    byte-order mark at the start of the file counts as blank); most often known from the first line."""
    for number, raw in enumerate(lines, start=first):
        if raw.isspace():
            continue
        text = raw.decode("utf-8", "replace")  # a line that is not UTF-8 is an error when its records are read
        if (text.removeprefix("\ufeff") if number == 1 else text).strip():
            return True
    return False


def _skip_lines(handle: IO[bytes], count: int) -> tuple[int, int]:
    """Move ``handle`` past its next ``count`` lines (fewer at the end of the file) by finding their newlines
    in large blocks, without splitting or decoding the lines; the lines and bytes passed over. A newline is
    looked for with ``find`` (memchr, a few times faster than ``count`` over lines of a review's length)."""
    start, lines, open_line = handle.tell(), 0, False
    while block := handle.read(_BLOCK):
        end = block.find(b"\n")
        while end >= 0:
            lines += 1
            if lines == count:
                handle.seek(handle.tell() - len(block) + end + 1)
                return count, handle.tell() - start
            end = block.find(b"\n", end + 1)
        open_line = not block.endswith(b"\n")
    return lines + open_line, handle.tell() - start  # a last line without a newline is a line too


def _json_batches(path: Path, batch_rows: int, owned: Owned, index: int = 0) -> Generator[_RawBatch, None, int]:
    """The owned batches of the records a .json file holds, numbered from ``index``; returns the index after
    its last batch."""
    records = read_json_list(path, ("records", "data", "notes"),
                             "a .json file must hold a list of records or one AI-Scientist review",
                             single=is_ai_scientist_review)
    for start in range(0, len(records), batch_rows):
        if owned(index):
            chunk = records[start:start + batch_rows]
            yield _RawBatch(index, f"{path}: records {start}-{start + len(chunk) - 1}",
                            [(f"{path}: record {start + offset}", item) for offset, item in enumerate(chunk)], path)
        index += 1
    return index


def _table_batch(index: int, label: str, first_row: int, table: Any) -> _RawBatch:
    """A batch of the rows of an Arrow table or record batch, the rows from ``first_row`` of ``label``."""
    rows = table.to_pylist()
    return _RawBatch(index, f"{label}: rows {first_row}-{first_row + len(rows) - 1}",
                     [(f"{label}: row {first_row + offset}", row) for offset, row in enumerate(rows)])


def _parquet_batches(path: Path, batch_rows: int, owned: Owned, index: int) -> Generator[_RawBatch, None, int]:
    """The owned batches of a Parquet file, numbered from ``index``: each row group cut into batches of
    ``batch_rows``; returns the index after the file's last batch."""
    import pyarrow as pa

    parquet = open_parquet(path)
    row = 0
    try:
        for group in range(parquet.metadata.num_row_groups):
            size = parquet.metadata.row_group(group).num_rows
            count = -(-size // batch_rows)
            if not any(owned(i) for i in range(index, index + count)):
                index, row = index + count, row + size
                continue
            for batch in parquet.iter_batches(batch_size=batch_rows, row_groups=[group]):
                if owned(index):
                    yield _table_batch(index, str(path), row, batch)
                index, row = index + 1, row + batch.num_rows
    except (pa.ArrowException, OSError) as err:
        raise unreadable_parquet(path, err) from None
    return index


def _sliced_batches(dataset: Dataset, label: str, batch_rows: int, owned: Owned) -> Iterator[_RawBatch]:
    table = dataset.with_format("arrow")  # slices of the memory-mapped table, converted one at a time
    for index, start in enumerate(range(0, len(dataset), batch_rows)):
        if owned(index):
            yield _table_batch(index, label, start, table[start:start + batch_rows])


def _streamed_batches(repo: str, config: str | None, split: str, label: str, batch_rows: int, owned: Owned,
                      empty_ok: bool, hub: bool = False) -> Iterator[_RawBatch]:
    """The owned batches of a dataset repository's (or, ``hub``, a Hub dataset's) ``config``, streamed; one
    that cannot be found or loaded is a :class:`RecordError` at once, or when its data fails to stream,
    and so is an empty ``split`` unless ``empty_ok``."""
    try:
        stream = datasets.load_dataset(repo, config, split=split, streaming=True)
    except Exception as err:  # the Hub client and the builders raise many unrelated types
        if hub:
            raise hub_error(label, err) from err
        raise RecordError(label, None, f"could not load the dataset ({type(err).__name__}: {err})") from err
    return _stream_batches(stream, label, split, batch_rows, owned, empty_ok)


def _stream_batches(stream: datasets.IterableDataset, label: str, split: str, batch_rows: int, owned: Owned,
                    empty_ok: bool) -> Iterator[_RawBatch]:
    row = 0
    try:
        for index, table in enumerate(stream.with_format("arrow").iter(batch_size=batch_rows)):
            if owned(index):
                yield _table_batch(index, f"{label} [{split}]", row, table)
            row += table.num_rows
    except Exception as err:  # as when loading: the data files are only read now
        raise RecordError(label, None, f"could not load the dataset ({type(err).__name__}: {err})") from err
    if not row and not empty_ok:
        raise RecordError(label, None, f'split "{split}" holds no records')
