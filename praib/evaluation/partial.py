"""Evaluation in pieces that merge exactly: the data path of ``praib evaluate`` for any number of reviews.

Reviews are read batch by batch (:func:`praib.records.stream.iter_record_batches`), parsed and scored
(:func:`praib.metrics.text.columns.text_columns`), and what the metrics need of each review is kept in
compact columns, per group: codes of its paper and venue-year, its decision class, rating, confidence
and parse status, and the columns of its text metrics the registry names
(:func:`praib.metrics.registry.kept_columns`: the counts as integers, the scores as floats) and its place
in its batch: about 85 bytes a review, and never its text. The human reviews of an input that is its own
reference are kept once, in their groups: the reference is laid out from them, in input order. A
:class:`Partial` holds the columns of the batches it has seen.
Partials of disjoint batches merge (:meth:`Partial.merge`) into what one pass over all of them keeps,
so one process, a shard of an input (``praib evaluate --shard I/N``), a worker process or a Ray task
may each fold some batches. :meth:`Partial.result` lays every group's columns out in batch order and
summarises them with the same functions as ever, so the numbers are those of one pass over the
whole input, to the last bit.
"""

from __future__ import annotations

import io
import json
import operator
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from praib.metrics.registry import kept_columns
from praib.metrics.scores.distributions import decision_class
from praib.records import HUMAN_SOURCE, PARSE_FAILED, PARSE_GIVEN, PARSE_OK, PARSE_PARTIAL
from praib.records.io import ReadNotes

__all__ = ["Partial", "Columns", "INPUT", "REFERENCE"]

#: The two sides of an evaluation: the reviews evaluated, and the human reviews they are compared with.
INPUT, REFERENCE = "input", "reference"
STATUSES = (None, PARSE_OK, PARSE_PARTIAL, PARSE_FAILED, PARSE_GIVEN)
DECISIONS = (None, "accept", "reject")
_NO_COUNT = -1
_NO_SCORE = np.iinfo(np.int32).min  # a missing rating or confidence
_FORMAT = 3  # of a saved partial: one array per column
_FORMAT_BY_CHUNK = 2  # of a partial saved by earlier versions, each chunk's arrays apart (still read)


class Codes:
    """Values (paper ids, venue-year pairs) and their small integer codes, in order of first sight."""

    def __init__(self, values: Iterable = ()) -> None:
        self.values: list = []
        self._code: dict = {}
        for value in values:
            self.code(value)

    def code(self, value) -> int:
        found = self._code.get(value)
        if found is None:
            found = self._code[value] = len(self.values)
            self.values.append(value)
        return found

    def recode(self, other: "Codes") -> np.ndarray:
        """Where each of ``other``'s codes goes among these (other's values added as needed)."""
        return np.array([self.code(value) for value in other.values], dtype=np.int32)


@dataclass
class Chunk:
    """The compact columns of the reviews of one group (or of the reference) in one batch."""

    batch: int
    paper: np.ndarray        # int32 codes into Partial.papers
    venue_year: np.ndarray   # int32 codes into Partial.venue_years
    decision: np.ndarray     # int8 index into DECISIONS
    status: np.ndarray       # int8 index into STATUSES
    rating: np.ndarray       # int32, _NO_SCORE where missing
    confidence: np.ndarray   # int32, _NO_SCORE where missing
    counts: np.ndarray       # int16 or int32 (rows x count columns), _NO_COUNT where the review has no text
    scores: np.ndarray       # float64 (rows x score columns)
    row: np.ndarray          # int32: each review's place in its batch
    human: int               # how many of the rows are human reviews

    def __len__(self) -> int:
        return len(self.paper)


@dataclass(frozen=True)
class Columns:
    """The fields of some reviews that the metrics read, by column (:meth:`Partial.columns`): codes and numbers
    in arrays, no Python object per review (a million reviews' lists took a second to make and more to read)."""

    paper: np.ndarray          # intp: each review's paper, as its place in paper_ids
    #: Every paper id of the partial, sorted: the papers' places compare as their ids do (equal, and in order).
    paper_ids: list[str]
    venue_year: np.ndarray     # intp: each review's place in venue_years
    venue_years: list[tuple]   # (venue, year) pairs
    decision: np.ndarray       # int8: each review's place in DECISIONS
    status: np.ndarray         # int8: each review's place in STATUSES
    rating: np.ndarray         # float64, NaN where missing
    confidence: np.ndarray     # float64, NaN where missing

    def __len__(self) -> int:
        return len(self.paper)


def _concat(chunks: list[Chunk], name: str, empty: np.ndarray) -> np.ndarray:
    return np.concatenate([getattr(c, name) for c in chunks]) if chunks else empty


def _kept(count: bool) -> tuple[str, ...]:
    return tuple(column.name for column in kept_columns() if column.count == count)


def humans_apart(group_by: Sequence[str], separate_reference: bool) -> tuple[str, ...]:
    """The grouping an evaluation uses: ``group_by``, led by ``source`` when it lacks it and the human reference
    is the input's own human reviews, so that no group mixes human and model reviews and the human rows stay
    the reference (``--group-by venue,year`` groups by source, venue and year)."""
    group_by = tuple(group_by)
    return group_by if separate_reference or "source" in group_by else ("source", *group_by)


@dataclass
class Partial:
    """The compact columns of the batches folded so far, per group of ``group_by`` on the input side
    and for the human reference; ``separate_reference`` when the reference is an input of its own
    (else it is the human reviews of the input, kept only as members of their groups: see
    :meth:`reference_chunks`)."""

    group_by: tuple[str, ...]
    scale: str
    separate_reference: bool
    papers: Codes = field(default_factory=Codes)
    venue_years: Codes = field(default_factory=Codes)
    groups: dict[tuple, list[Chunk]] = field(default_factory=dict)
    reference: list[Chunk] = field(default_factory=list)  # when separate_reference
    batches: dict[str, set[int]] = field(default_factory=lambda: {INPUT: set(), REFERENCE: set()})
    #: What the readers let pass (unknown fields, scores given with a label), by input: said once for the
    #: merged whole (:func:`praib.evaluation.evaluate.group_entries`), not once per shard.
    read_notes: dict[str, ReadNotes] = field(default_factory=dict)
    #: The text metrics' columns kept: counts as integers (-1 where the review has no text), the other
    #: scores as floats (NaN where undefined); by default those the registry names now.
    count_columns: tuple[str, ...] = field(default_factory=lambda: _kept(True))
    score_columns: tuple[str, ...] = field(default_factory=lambda: _kept(False))
    _papers_sorted: tuple[list, np.ndarray] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.group_by = humans_apart(self.group_by, self.separate_reference)

    # -- folding ----------------------------------------------------------------------------

    def note(self, source: str, notes: ReadNotes) -> None:
        """Keep what reading the input ``source`` noted (:class:`~praib.records.io.ReadNotes`)."""
        self.read_notes.setdefault(source, ReadNotes()).add(notes)

    def add(self, side: str, batch: int, rows: Sequence[dict], scores: dict[str, np.ndarray]) -> None:
        """Fold batch ``batch`` of ``side`` (INPUT or REFERENCE): parsed review ``rows`` and the columns
        :func:`~praib.metrics.text.columns.text_columns` gave for their texts."""
        if batch in self.batches[side]:
            raise ValueError(f"batch {batch} of the {side} was folded twice")
        self.batches[side].add(batch)
        if not rows:
            return
        # Each row is read once, for all the fields kept of it; the rest is done column by column.
        fields = (*self.group_by, *_FIELDS) if side == INPUT else _FIELDS
        columns = list(zip(*map(operator.itemgetter(*fields), rows)))
        if side == REFERENCE:
            members = {(): list(range(len(rows)))}
        else:
            members = {}
            for i, key in enumerate(zip(*columns[:len(self.group_by)])):
                members.setdefault(key, []).append(i)
        batch_columns = _BatchColumns(self, dict(zip(_FIELDS, columns[-len(_FIELDS):])), scores,
                                      [i for positions in members.values() for i in positions])
        chunks = [batch_columns.chunk(batch, positions) for positions in members.values()]
        if side == REFERENCE:
            self.reference.extend(chunks)
            return
        for key, chunk in zip(members, chunks):
            self.groups.setdefault(key, []).append(chunk)

    @classmethod
    def merged(cls, partials: Iterable["Partial"]) -> "Partial":
        """The partials (of disjoint batches of one evaluation) merged into the first of them."""
        partials = iter(partials)
        first = next(partials)
        for partial in partials:
            first.merge(partial)
        return first

    def merge(self, other: "Partial") -> "Partial":
        """Fold ``other`` (a partial of other batches of the same evaluation) into this one."""
        if (other.group_by, other.scale, other.separate_reference) != (self.group_by, self.scale,
                                                                       self.separate_reference):
            raise ValueError("cannot merge partials of different evaluations: they differ in grouping, scale or "
                             "reference")
        if (other.count_columns, other.score_columns) != (self.count_columns, self.score_columns):
            raise ValueError("cannot merge partials that keep different text metrics (made with different "
                             "registered metrics)")
        for side in (INPUT, REFERENCE):
            twice = sorted(self.batches[side] & other.batches[side])
            if twice:
                raise ValueError(f"both partials hold batch {twice[0]} of the {side}: shards must not overlap")
            self.batches[side] |= other.batches[side]
        papers, venue_years = self.papers.recode(other.papers), self.venue_years.recode(other.venue_years)

        def moved(chunk: Chunk) -> Chunk:
            return Chunk(chunk.batch, papers[chunk.paper], venue_years[chunk.venue_year], chunk.decision,
                         chunk.status, chunk.rating, chunk.confidence, chunk.counts, chunk.scores, chunk.row,
                         chunk.human)

        for key, chunks in other.groups.items():
            self.groups.setdefault(key, []).extend(moved(c) for c in chunks)
        self.reference.extend(moved(c) for c in other.reference)
        for source, notes in other.read_notes.items():
            self.note(source, notes)
        return self

    # -- the numbers ------------------------------------------------------------------------

    def text_scores(self, chunks: list[Chunk]) -> Mapping[str, np.ndarray]:
        """The text metrics of ``chunks``' reviews, in batch order, by name (NaN where undefined): each column
        made when it is read (those of a million reviews, all at once, would take 140 MB)."""
        chunks = sorted(chunks, key=lambda c: c.batch)
        return _TextScores(_concat(chunks, "counts", np.empty((0, len(self.count_columns)), dtype=np.int32)),
                           _concat(chunks, "scores", np.empty((0, len(self.score_columns)))),
                           self.count_columns, self.score_columns)

    def columns(self, chunks: list[Chunk]) -> "Columns":
        """The fields of ``chunks``' reviews, in batch order, as the metrics read them: by column, as arrays."""
        chunks = sorted(chunks, key=lambda c: c.batch)
        paper_ids, rank = self._paper_order()
        return Columns(
            paper=rank[_concat(chunks, "paper", _EMPTY_CODES)],
            paper_ids=paper_ids,
            venue_year=_concat(chunks, "venue_year", _EMPTY_CODES).astype(np.intp),
            venue_years=self.venue_years.values,
            decision=_concat(chunks, "decision", _EMPTY_SMALL_CODES),
            status=_concat(chunks, "status", _EMPTY_SMALL_CODES),
            rating=_scores(_concat(chunks, "rating", _EMPTY_CODES)),
            confidence=_scores(_concat(chunks, "confidence", _EMPTY_CODES)),
        )

    def _paper_order(self) -> tuple[list, np.ndarray]:
        """The paper ids sorted, and each paper code's place among them; kept until papers are added."""
        if self._papers_sorted is None or len(self._papers_sorted[0]) != len(self.papers.values):
            values = self.papers.values
            order = sorted(range(len(values)), key=values.__getitem__)
            rank = np.empty(len(values), dtype=np.intp)
            rank[order] = np.arange(len(values))
            self._papers_sorted = [values[code] for code in order], rank
        return self._papers_sorted

    def reference_chunks(self) -> list[Chunk]:
        """The chunks of the human reference, one a batch. An input that is its own reference keeps its
        human reviews in their groups only (all-human groups: see :func:`humans_apart`); each batch's are
        gathered from them here, in the order they had in the batch."""
        if self.separate_reference:
            return self.reference
        by_batch: dict[int, list[Chunk]] = {}
        for key, chunks in self.groups.items():
            if self.is_reference_group(key):
                for chunk in chunks:
                    by_batch.setdefault(chunk.batch, []).append(chunk)
        gathered = []
        for batch, chunks in by_batch.items():
            order = np.argsort(np.concatenate([c.row for c in chunks]), kind="stable")
            columns = [np.concatenate([getattr(c, name) for c in chunks])[order] for name in _ARRAYS]
            gathered.append(Chunk(batch, *columns, human=len(order)))
        return gathered

    def sizes(self) -> tuple[int, int]:
        """Reviews folded: (input, reference)."""
        reference = self.reference if self.separate_reference else [
            c for key, chunks in self.groups.items() if self.is_reference_group(key) for c in chunks]
        return sum(len(c) for chunks in self.groups.values() for c in chunks), sum(len(c) for c in reference)

    def is_reference_group(self, key: tuple) -> bool:
        """A group of the input that is all human reviews, when the reference is the input's own."""
        chunks = self.groups[key]
        return not self.separate_reference and sum(c.human for c in chunks) == sum(len(c) for c in chunks)

    # -- on disk ------------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        """Write this partial to ``path`` (``.npz``: numpy arrays and a JSON header, no pickle)."""
        from praib.records.atomic import replace_atomically

        with replace_atomically(path) as temporary:
            with open(temporary, "wb") as handle:
                self._write(handle)

    def dump(self, path: str | Path) -> None:
        """Write this partial to ``path`` as :meth:`save` does, in place: for a file of praib's own that nobody
        reads before it is whole (a worker process's hand-off)."""
        with open(path, "wb") as handle:
            self._write(handle)

    def to_bytes(self) -> bytes:
        """This partial as the bytes :meth:`save` writes (how Ray tasks hand theirs back)."""
        buffer = io.BytesIO()
        self._write(buffer)
        return buffer.getvalue()

    def _write(self, handle) -> None:
        # One array per column, the chunks one after another (their lengths in the header): a file of a few
        # arrays loads at once, where one of nine arrays per chunk (2,000 chunks a million reviews) took 0.5 s.
        # The columns are joined and written one at a time, as np.savez writes its arrays (an .npy member each,
        # stored): a worker holds one joined column besides its partial, not a second copy of all of it.
        owned = list(self._all_chunks())
        chunks = [chunk for _, chunk in owned]
        header = {"format": _FORMAT, "group_by": list(self.group_by), "scale": self.scale,
                  "separate_reference": self.separate_reference, "papers": self.papers.values,
                  "venue_years": [list(v) for v in self.venue_years.values],
                  "groups": [list(key) for key in self.groups],
                  "chunks": [[owner, chunk.batch, chunk.human, len(chunk)] for owner, chunk in owned],
                  "batches": {side: sorted(b) for side, b in self.batches.items()},
                  "count_columns": list(self.count_columns), "score_columns": list(self.score_columns),
                  "read_notes": {source: {"unknown_fields": sorted(notes.unknown_fields),
                                          "numbers_from_text": notes.numbers_from_text, "example": notes.example,
                                          "left_out_notes": dict(notes.left_out_notes)}
                                 for source, notes in self.read_notes.items()}}
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            for name in _ARRAYS:
                column = _concat(chunks, name, _empty(name, len(self.count_columns), len(self.score_columns)))
                with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, column, allow_pickle=False)
                del column
            with archive.open("header.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8),
                                          allow_pickle=False)

    def _all_chunks(self):
        keys = list(self.groups)
        for index, key in enumerate(keys):
            for chunk in self.groups[key]:
                yield index, chunk
        for chunk in self.reference:
            yield -1, chunk

    @classmethod
    def from_bytes(cls, data: bytes) -> "Partial":
        """The partial :meth:`to_bytes` gave."""
        return cls.load(io.BytesIO(data), "a partial's bytes")

    @classmethod
    def load(cls, path, label: str | None = None) -> "Partial":
        """A partial written by :meth:`save` (a path or a binary file); one that is not is a ValueError
        naming it (``label``, default the path)."""
        path_label = label or path
        try:
            with np.load(path, allow_pickle=False) as stored:
                arrays = {name: stored[name] for name in stored.files}
            header = json.loads(arrays.pop("header").tobytes().decode("utf-8"))
        except (OSError, ValueError, KeyError) as err:
            raise ValueError(f"{path_label}: not a partial result of `praib evaluate --shard` ({err})") from None
        if header.get("format") not in (_FORMAT_BY_CHUNK, _FORMAT):
            raise ValueError(f"{path_label}: a partial result of another praib version (format {header.get('format')})")
        partial = cls(tuple(header["group_by"]), header["scale"], header["separate_reference"],
                      Codes(header["papers"]), Codes(tuple(v) for v in header["venue_years"]))
        if "count_columns" in header:  # absent from partials of earlier versions, which kept the built-in ones
            partial.count_columns, partial.score_columns = (tuple(header["count_columns"]),
                                                            tuple(header["score_columns"]))
        keys = [tuple(key) for key in header["groups"]]
        for key in keys:
            partial.groups[key] = []
        for owner, chunk in _stored_chunks(header, arrays):
            (partial.reference if owner == -1 else partial.groups[keys[owner]]).append(chunk)
        partial.batches = {side: set(batches) for side, batches in header["batches"].items()}
        for source, notes in header.get("read_notes", {}).items():  # absent from partials of earlier versions
            partial.note(source, ReadNotes(set(notes["unknown_fields"]), notes["numbers_from_text"], notes["example"],
                                           Counter(notes.get("left_out_notes", {}))))
        return partial


class _TextScores(Mapping):
    """The text metrics of some reviews by name, each a float column made from the compact ones when read."""

    def __init__(self, counts: np.ndarray, scores: np.ndarray, count_columns: tuple[str, ...],
                 score_columns: tuple[str, ...]) -> None:
        self._counts, self._scores = counts, scores
        self._count_at = {name: j for j, name in enumerate(count_columns)}
        self._score_at = {name: j for j, name in enumerate(score_columns)}

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self._count_at:
            counts = self._counts[:, self._count_at[name]]
            return np.where(counts == _NO_COUNT, np.nan, counts.astype(np.float64))
        return self._scores[:, self._score_at[name]]

    def __iter__(self) -> Iterator[str]:
        return iter((*self._count_at, *self._score_at))

    def __len__(self) -> int:
        return len(self._count_at) + len(self._score_at)


_ARRAYS = ("paper", "venue_year", "decision", "status", "rating", "confidence", "counts", "scores", "row")
_EMPTY_CODES = np.empty(0, dtype=np.int32)
_EMPTY_SMALL_CODES = np.empty(0, dtype=np.int8)


def _empty(name: str, count_columns: int, score_columns: int) -> np.ndarray:
    """The column ``name`` of no review."""
    if name == "counts":
        return np.empty((0, count_columns), dtype=np.int16)
    if name == "scores":
        return np.empty((0, score_columns))
    return np.empty(0, dtype=np.int8 if name in ("decision", "status") else np.int32)


def _stored_chunks(header: dict, arrays: dict[str, np.ndarray]) -> Iterator[tuple[int, Chunk]]:
    """The chunks of a saved partial and their owners (a group's index, -1 for the reference)."""
    if header["format"] == _FORMAT_BY_CHUNK:
        for n, (owner, batch, human) in enumerate(header["chunks"]):
            yield owner, Chunk(batch, *(arrays[f"{n}.{name}"] for name in _ARRAYS), human=human)
        return
    start = 0
    for owner, batch, human, size in header["chunks"]:
        columns = {name: arrays[name][start:start + size] for name in _ARRAYS}
        # The counts of a chunk are as narrow as they fit, as they were folded (others widened the column).
        columns["counts"] = _compact_counts(columns["counts"])
        yield owner, Chunk(batch, **columns, human=human)
        start += size


#: The fields of a review that a chunk keeps something of.
_FIELDS = ("paper_id", "venue", "year", "decision", "parse_status", "rating", "confidence", "source")


class _BatchColumns:
    """The compact columns of a batch's reviews, made once for the whole batch from its ``fields`` (the values of
    :data:`_FIELDS`, by name), of which :meth:`chunk` takes a group's. Papers and venue-years are given their codes
    in the order the chunks are made (``order``: the rows of each group in turn), as row by row, so that the codes
    do not depend on how the rows were grouped."""

    def __init__(self, partial: Partial, fields: dict[str, tuple], scores: dict[str, np.ndarray], order: list[int]):
        self.paper = _codes(partial.papers, fields["paper_id"], order)
        self.venue_year = _codes(partial.venue_years, list(zip(fields["venue"], fields["year"])), order)
        self.decision = _indexes(fields["decision"], lambda value: DECISIONS.index(decision_class(value)))
        self.status = _indexes(fields["parse_status"], STATUSES.index)
        self.rating, self.confidence = (_scores_or_none(fields[name]) for name in ("rating", "confidence"))
        self.human = np.array(fields["source"], dtype=object) == HUMAN_SOURCE
        counts = np.stack([scores[m] for m in partial.count_columns], axis=1)
        self.counts = np.where(np.isfinite(counts), counts, _NO_COUNT)
        self.scores = np.stack([scores[m] for m in partial.score_columns], axis=1).astype(np.float64)

    def chunk(self, batch: int, positions: list[int]) -> Chunk:
        at = np.asarray(positions, dtype=np.intp)
        return Chunk(batch=batch, paper=self.paper[at], venue_year=self.venue_year[at], decision=self.decision[at],
                     status=self.status[at], rating=self.rating[at], confidence=self.confidence[at],
                     counts=_compact_counts(self.counts[at]), scores=self.scores[at], row=at.astype(np.int32),
                     human=int(np.count_nonzero(self.human[at])))


def _codes(codes: Codes, values: Sequence, order: list[int]) -> np.ndarray:
    """The codes of ``values`` among ``codes``, the new ones given in ``order``."""
    known = {value: codes.code(value) for value in dict.fromkeys(map(values.__getitem__, order))}
    return np.fromiter(map(known.__getitem__, values), np.int32, len(values))


def _indexes(values: Sequence, index: Callable[[Any], int]) -> np.ndarray:
    """``index(value)`` of each of ``values`` as int8, worked out once for each distinct value."""
    known = {value: index(value) for value in set(values)}
    return np.fromiter(map(known.__getitem__, values), np.int8, len(values))


def _scores_or_none(values: Sequence) -> np.ndarray:
    """Whole-number scores as int32, _NO_SCORE where missing."""
    return np.array([_NO_SCORE if value is None else value for value in values], dtype=np.int32)


def _compact_counts(counts: np.ndarray) -> np.ndarray:
    """The counts as int16 where they all fit (nearly always: a quarter of a review's bytes), else int32;
    chunks of both kinds concatenate to int32, and the missing mark (-1) is the same in both."""
    fits = not counts.size or counts.max() <= np.iinfo(np.int16).max
    return counts.astype(np.int16 if fits else np.int32, copy=False)


def _scores(values: np.ndarray) -> np.ndarray:
    """Ratings or confidences as floats, NaN where missing."""
    return np.where(values == _NO_SCORE, np.nan, values.astype(np.float64))
