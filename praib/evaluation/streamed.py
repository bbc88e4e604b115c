"""``praib evaluate`` over inputs of any size: the inputs are read batch by batch, and each batch is
parsed, scored and folded into a :class:`~praib.evaluation.partial.Partial`.

The unit of work is a shard: every ``n``-th batch of the inputs, from the ``i``-th (:func:`fold`).
One process folds shard ``(0, 1)``; ``workers`` processes fold shards ``(0, n) .. (n-1, n)`` side by
side (:func:`fold_shards`); ``praib evaluate --shard I/N`` folds one on this machine and writes it to
disk for ``praib evaluate merge``; with ``engine="ray"`` the shards are mapped over a Ray Data
dataset on a local or remote Ray cluster. The partials merge into what one pass keeps, so every way gives the same numbers.
Memory stays flat: a process holds one batch of records (and its texts) at a time, plus the compact
columns of the reviews folded (about 80 bytes a review).
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import shutil
import tempfile
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

from praib.evaluation.collector import fewer_collections
from praib.evaluation.partial import INPUT, REFERENCE, Partial
from praib.evaluation.per_review import PerReviewWriter, check_folder, remove_parts
from praib.metrics.text.columns import text_columns
from praib.parsing import ReviewParser
from praib.records import HUMAN_SOURCE, REVIEW_FEATURES, RecordError
from praib.records.io import ReadNotes
from praib.records.stream import BATCH_ROWS, iter_record_batches

__all__ = ["Inputs", "fold", "fold_shards", "parse_shard"]


@dataclass(frozen=True)
class Inputs:
    """What an evaluation reads: the reviews (any record source), the human reference (None: the
    human reviews of the input), the split of a dataset, how reviews are grouped and parsed, and the
    records per batch (a batch's index, and so a shard, depends on it)."""

    reviews: str
    reference: str | None = None
    split: str = "train"
    group_by: tuple[str, ...] = ("source", "model", "prompt")
    scale: str = "venue"
    batch_rows: int = BATCH_ROWS
    #: The source of the input's reviews that name none (the reference's are human).
    source_name: str | None = None

    def __post_init__(self) -> None:
        unknown = [c for c in self.group_by if c not in REVIEW_FEATURES]
        if unknown:
            raise ValueError(f"cannot group by {', '.join(unknown)}: not a review field "
                             f"({', '.join(REVIEW_FEATURES)})")
        if self.scale not in ("venue", "generic"):
            raise ValueError(f"unknown scale {self.scale!r}; use 'venue' or 'generic'")

    def empty(self) -> Partial:
        return Partial(self.group_by, self.scale, separate_reference=self.reference is not None)


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` (the I-th of N shards, from 0) as ``(I, N)``; a ValueError says what is wrong."""
    index, _, count = text.partition("/")
    try:
        shard = int(index), int(count)
    except ValueError:
        raise ValueError(f"a shard is I/N, e.g. 0/4 for the first of four; got {text!r}") from None
    if not 0 <= shard[0] < shard[1]:
        raise ValueError(f"shard {text}: I must be at least 0 and below N")
    return shard


def fold(inputs: Inputs, shard: tuple[int, int] = (0, 1),
         progress: Callable[[int], None] | None = None, per_review: Path | None = None) -> Partial:
    """The partial of one shard of ``inputs``: its batches parsed, scored (in this process) and folded.
    ``progress(n)`` is told of every batch of ``n`` reviews done. With ``per_review`` (a folder), the
    shard's input reviews are written there batch by batch (:mod:`praib.evaluation.per_review`)."""
    partial = inputs.empty()
    parser = ReviewParser(inputs.scale, warn_unknown=False)  # the merged result names them once
    writer = PerReviewWriter(per_review, shard) if per_review is not None else None
    try:
        with fewer_collections():
            _fold_batches(inputs, shard, partial, parser, writer, progress)
    except BaseException:
        if writer is not None:
            writer.discard()
        raise
    if writer is not None:
        writer.close()
    return partial


def _fold_batches(inputs: Inputs, shard: tuple[int, int], partial: Partial, parser: ReviewParser,
                  writer: PerReviewWriter | None, progress: Callable[[int], None] | None) -> None:
    """Fold every batch of ``shard`` of ``inputs`` into ``partial`` (:func:`fold`)."""
    for side, source in ((INPUT, inputs.reviews), (REFERENCE, inputs.reference)):
        if source is None:
            continue
        # A shard may hold no batch of a small input: whether the input is empty is told after the merge,
        # and so is what the reader noted.
        notes = ReadNotes()
        named = inputs.source_name if side == INPUT else HUMAN_SOURCE
        batches = iter_record_batches(source, "review", inputs.split, batch_rows=inputs.batch_rows, shard=shard,
                                      allow_empty=True, notes=notes, source_name=named)
        for folded, batch in enumerate(batches, start=1):
            rows = parser.parse(batch.rows)
            scores = text_columns([row["text"] for row in rows], workers=1)
            partial.add(side, batch.index, rows, scores)
            if writer is not None and side == INPUT:
                writer.write(rows, scores)
            if progress is not None:
                progress(len(rows))
            del rows, scores, batch
            # Freed memory is handed back every few batches, not after each: the pages handed back are faulted in
            # again by the next batch (at 1M reviews, trimming after every batch cost 4 of 7 system CPU seconds).
            if folded % _BATCHES_PER_TRIM == 0:
                release_freed_memory()
        partial.note(str(source), notes)


def check_not_empty(inputs: Inputs, partial: Partial) -> Partial:
    """``partial`` of all of ``inputs``; an input without any review is a RecordError naming it."""
    for source, named, size in zip((inputs.reviews, inputs.reference), (inputs.source_name, HUMAN_SOURCE),
                                   partial.sizes()):
        if source is not None and not size:
            # Read whole, an empty source says in its own words why it is empty (a blank file, an empty split).
            for _ in iter_record_batches(source, "review", inputs.split, batch_rows=inputs.batch_rows,
                                         source_name=named):
                pass
            raise RecordError(str(source), None, "holds no records")
    return partial


#: Batches folded between two hand-backs of freed memory (:func:`release_freed_memory`).
_BATCHES_PER_TRIM = 8
_done = None  # reviews folded so far, shared with the worker processes (set by _start_worker)


def _start_worker(counter) -> None:
    global _done
    _done = counter


def _count(n: int) -> None:
    with _done.get_lock():
        _done.value += n


def _fold_to_file(inputs: Inputs, shard: tuple[int, int], per_review: Path | None, folder: Path) -> Path:
    """Fold ``shard`` in a worker process and hand its partial back as a file in ``folder``: written array by
    array, where a pickled partial would be a second copy of it in the worker, as large as the partial itself."""
    path = folder / f"part-{shard[0]}.npz"
    fold(inputs, shard, _count, per_review).dump(path)
    gc.collect()
    release_freed_memory()  # the worker waits, idle, for the others: it holds no more than it needs
    return path


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)  # the C library's symbols, where it has them
    except (OSError, TypeError):  # no such handle (Windows)
        return None


def release_freed_memory() -> None:
    """Give the system back the memory this process freed. A batch's records and texts are freed once folded,
    but glibc's allocator keeps the pages for later (a worker grew by about 30 MB over 125,000 reviews; reading a
    leaderboard's inputs leaves hundreds of MB so, which every process it forks would start with);
    ``malloc_trim`` returns them. Nothing where the C library has no such function."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def fold_shards(inputs: Inputs, workers: int | None = None, engine: str = "local", progress: bool = False,
                per_review: Path | None = None) -> Partial:
    """The partial of all of ``inputs``, folded by ``workers`` processes (default: every core), each
    taking one shard, and merged; ``engine="ray"`` maps the shards over a Ray Data dataset instead (on
    the cluster ``ray.init()`` connects to: ``RAY_ADDRESS``, else a local one; default one shard per
    CPU of the cluster). With ``per_review`` (a folder) every shard writes its reviews' rows there."""
    if engine == "ray":
        partial = _fold_with_ray(inputs, workers, per_review)
    elif engine == "local":
        partial = _fold_locally(inputs, workers or os.cpu_count() or 1, progress, per_review)
    else:
        raise ValueError(f"unknown engine {engine!r}; use 'local' or 'ray'")
    try:
        return check_not_empty(inputs, partial)
    except RecordError:
        if per_review is not None:
            remove_parts(per_review)  # the empty parts of an empty input are no result
        raise


def _fold_locally(inputs: Inputs, workers: int, progress: bool, per_review: Path | None) -> Partial:
    if per_review is not None:
        check_folder(per_review, workers)
    bar = None
    if progress:
        from praib.records.progress import progress_bar

        bar = progress_bar(desc="reviews", unit="review")
    try:
        if workers == 1:
            return fold(inputs, (0, 1), bar.update if bar is not None else None, per_review)
        return _fold_in_processes(inputs, workers, bar, per_review)
    finally:
        if bar is not None:
            bar.close()


def _fold_in_processes(inputs: Inputs, workers: int, bar, per_review: Path | None) -> Partial:
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    counter = context.Value("q", 0)
    folder = Path(tempfile.mkdtemp(prefix="praib-evaluate-"))
    try:
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker, initargs=(counter,)) as pool:
            pending = {pool.submit(_fold_to_file, inputs, (i, workers), per_review, folder) for i in range(workers)}
            merged = None
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                # Merged as they come, so that only one worker's partial is held besides the merge; the order
                # does not matter: the batches are laid out by their index at the end.
                for future in done:
                    path = future.result()
                    part = Partial.load(path)
                    path.unlink()
                    merged = part if merged is None else merged.merge(part)
                if bar is not None:
                    bar.update(counter.value - bar.n)
        return merged
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _fold_with_ray(inputs: Inputs, shards: int | None, per_review: Path | None) -> Partial:
    try:
        import ray
    except ImportError:
        raise ValueError("--engine ray needs Ray Data: pip install 'praib[ray]'") from None
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)  # RAY_ADDRESS names a remote cluster
    shards = shards or max(1, int(ray.cluster_resources().get("CPU", 1)))
    if per_review is not None:
        check_folder(per_review, shards)
    # The unit a task maps is a shard, read by praib's own reader on the worker, so a record is checked
    # and numbered as in one process and the merge is exact; the input must be readable there (a path on
    # a shared file system, or a Hub dataset).
    table = ray.data.from_items([{"shard": i} for i in range(shards)], override_num_blocks=shards)
    folded = table.map(_RayShard(inputs, shards, per_review), num_cpus=1)
    return Partial.merged(Partial.from_bytes(row["partial"]) for row in folded.take_all())


@dataclass(frozen=True)
class _RayShard:
    inputs: Inputs
    count: int
    per_review: Path | None  # on a file system the nodes share

    def __call__(self, row: dict) -> dict:
        return {"partial": fold(self.inputs, (int(row["shard"]), self.count), per_review=self.per_review).to_bytes()}
