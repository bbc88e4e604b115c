"""The columnar check of a batch says what the record-by-record check says, on every bad input of the commands'
bad-input matrix and on bad records anywhere among good ones: the same error line (file, line and field), the
same rows and the same warnings (issue 32, item 3)."""

from __future__ import annotations

import json
import logging

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from praib.records import stream
from praib.records.schema import SCHEMAS
from praib.records.stream import iter_record_batches
from tests.bad_records import EVALUATE_CSV_CASES, GOOD, ID_FIELD, WRONG_TYPE, record_cases

KINDS = list(SCHEMAS)
CSV_CASES = EVALUATE_CSV_CASES
MATRIX = ([pytest.param(kind, "jsonl", content, id=f"{kind} | {case}") for kind in KINDS
           for case, content in record_cases(kind).items()]
          + [pytest.param("review", "csv", content, id=f"review csv | {case}") for case, content in CSV_CASES.items()])


def outcome(path, kind, caplog, by_column: bool, monkeypatch, batch_rows: int = stream.BATCH_ROWS) -> tuple:
    """What reading ``path`` gives: its rows, or the error line the command line prints; and the warnings."""
    with monkeypatch.context() as patch:
        if not by_column:
            patch.setattr(stream, "coerce_batch", lambda raws, kind, notes: None)
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            try:
                result = repr([row for batch in iter_record_batches(path, kind, batch_rows=batch_rows)
                               for row in batch.rows])
            except Exception as error:  # noqa: BLE001 - whatever it is, both paths must raise it alike
                result = f"{type(error).__name__}: {error}"
        return result, [record.getMessage() for record in caplog.records]


def write_case(tmp_path, suffix, content):
    if isinstance(content, tuple):
        suffix, content = content
    path = tmp_path / f"input.{suffix}"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    return path


@pytest.mark.parametrize("kind,suffix,content", MATRIX)
def test_the_bad_input_matrix_reads_alike_by_column_and_record_by_record(tmp_path, caplog, monkeypatch, kind,
                                                                         suffix, content):
    path = write_case(tmp_path, suffix, content)
    by_column = outcome(path, kind, caplog, True, monkeypatch)
    assert by_column == outcome(path, kind, caplog, False, monkeypatch)


def good_records(kind: str, count: int) -> list[dict]:
    return [{**GOOD[kind], ID_FIELD[kind]: f"x{i}", "paper_id": f"p{i}"} if kind != "paper"
            else {**GOOD[kind], "paper_id": f"p{i}"} for i in range(count)]


# Bad records of each kind, in the forms of the matrix and beyond: each is refused, converted or noted record by record.
def bad_records(kind: str) -> dict[str, object]:
    good = {**GOOD[kind], ID_FIELD[kind]: "bad", "paper_id": "bad"}
    cases = {
        "int32 overflow": {**good, "year": 99999999999}, "int64 overflow": {**good, "perturbation": {"seed": 2 ** 70}},
        "list for an object": ["p2", "human"], "wrong JSON type": {**good, **WRONG_TYPE[kind]},
        "zero-width space in the id": {**good, ID_FIELD[kind]: "x1\u200b"}, "bidi control": {**good, "paper_id": "p\u202e1"},
        "an id to put in NFC": {**good, "paper_id": "cafe\u0301"}, "paper id missing": {**good, "paper_id": None},
        "paper id empty": {**good, "paper_id": ""}, "a tab in the id": {**good, ID_FIELD[kind]: "x\t1"},
        "a year as text (converted)": {**good, "year": "2024"}, "a year as a whole float (converted)": {**good, "year": 2024.0},
        "a fractional year": {**good, "year": 2024.5}, "a boolean year": {**good, "year": True},
        "an unknown field (noted)": {**good, "mystery": 1}, "an unknown key of a struct": {**good, "perturbation": {"x": 1}},
        "a repeat with other content": {**good, ID_FIELD[kind]: "x1", "paper_id": "p1", "venue": "NeurIPS"},
        "an exact repeat (dropped)": good_records(kind, 2)[1],
    }
    if kind in ("review", "meta_review"):
        cases |= {"a rating out of another total": {**good, "rating": "7/10"}, "a rating with its label (noted)":
                  {**good, "rating": "6: accept"}, "a rating that is no number": {**good, "rating": "high"},
                  "a sub-score as text (noted)": {**good, "soundness": "3 good"}, "no source": {**good, "source": None},
                  "a sub-score out of range": {**good, "soundness": 2 ** 31}}
    return cases


ROWS, BATCH = 40, 16
POSITIONS = (0, 1, BATCH - 1, BATCH, ROWS - 1)


def write_records(path, records: list) -> None:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    else:
        path.write_text(json.dumps(records), encoding="utf-8")


@pytest.mark.parametrize("suffix", ["jsonl", "json"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_record_anywhere_among_good_ones_reads_alike(tmp_path, caplog, monkeypatch, kind, suffix):
    for case, bad in bad_records(kind).items():
        for position in POSITIONS:
            records = good_records(kind, ROWS)
            records[position] = bad
            path = tmp_path / f"{case}-{position}.{suffix}"
            write_records(path, records)
            by_column = outcome(path, kind, caplog, True, monkeypatch, BATCH)
            assert by_column == outcome(path, kind, caplog, False, monkeypatch, BATCH), (case, position)


def test_the_error_names_the_bad_records_line(tmp_path, caplog, monkeypatch):
    records = good_records("review", 5000)
    records[4500] = {**records[4500], "year": 99999999999}
    path = tmp_path / "reviews.jsonl"
    write_records(path, records)
    error, _ = outcome(path, "review", caplog, True, monkeypatch)
    assert error == (f"RecordError: {path}: line 4501: field 'year': expected an integer from -2147483648 to "
                     "2147483647 (int32), found 99999999999")


def test_scores_given_as_text_in_several_batches_and_layouts_are_noted_alike(tmp_path, caplog, monkeypatch):
    records = good_records("review", 40)
    for position, score in ((3, "2 fair"), (20, "4 good"), (21, "3 good"), (35, "1 poor")):
        records[position] = {"subscores": {"clarity": score}, **records[position]}  # another layout
    records[30] = {**records[30], "subscores": [{"name": "soundness", "value": "2: fair"}]}
    path = tmp_path / "reviews.jsonl"
    write_records(path, records)
    by_column = outcome(path, "review", caplog, True, monkeypatch, BATCH)
    assert by_column == outcome(path, "review", caplog, False, monkeypatch, BATCH)
    assert "e.g. subscores.clarity '2 fair' as 2" in by_column[1][-1]


def test_good_batches_are_checked_by_column_alone(tmp_path, caplog, monkeypatch):
    path = tmp_path / "reviews.jsonl"
    write_records(path, [{**record, "soundness": 3} for record in good_records("review", 300)])

    def refuse(*args):
        raise AssertionError("a good record was checked on its own")

    monkeypatch.setattr(stream, "coerce_record", refuse)
    rows = [row for batch in iter_record_batches(path, batch_rows=100) for row in batch.rows]
    assert len(rows) == 300 and rows[0]["subscores"] == [{"name": "soundness", "value": 3}]


PARQUET_CASES = {
    "a year beyond int32": pa.table({"paper_id": ["p1", "p2"], "source": ["human", "human"],
                                     "year": pa.array([2024, 2 ** 40], pa.int64())}),
    "a zero-width space in an id": pa.table({"paper_id": ["p1", "p\u200b2"], "source": ["human", "human"]}),
    "no paper id": pa.table({"paper_id": ["p1", None], "source": ["human", "human"]}),
    "a rating as text": pa.table({"paper_id": ["p1", "p2"], "source": ["human", "human"], "rating": ["6", "7: ok"]}),
    "a rating as a float": pa.table({"paper_id": ["p1", "p2"], "source": ["human", "human"], "rating": [6.0, None]}),
    "sub-scores with a missing value": pa.table({"paper_id": ["p1"], "source": ["human"], "subscores": pa.array(
        [[{"name": "clarity", "value": None}, {"name": "soundness", "value": 3}]],
        pa.list_(pa.struct({"name": pa.string(), "value": pa.int32()})))}),
    "praib's own columns": pa.Table.from_pylist(good_records("review", 3), schema=SCHEMAS["review"][0].arrow_schema),
}


@pytest.mark.parametrize("case", PARQUET_CASES)
def test_parquet_reads_alike(tmp_path, caplog, monkeypatch, case):
    path = tmp_path / "reviews.parquet"
    pq.write_table(PARQUET_CASES[case], path)
    assert outcome(path, "review", caplog, True, monkeypatch) == outcome(path, "review", caplog, False, monkeypatch)
