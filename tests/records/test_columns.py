"""A batch checked column by column gives exactly what coerce_record gives record by record, and hands every batch
with something to convert, note or refuse back to the per-record path (issue 32, item 3)."""

import json
import math

import pytest

from praib.records.columns import coerce_batch
from praib.records.io import ReadNotes, coerce_record
from tests.paths import ROOT

DEMO = ROOT / "praib" / "data" / "demo" / "reviews.jsonl"


def per_record(raws, kind="review"):
    notes = ReadNotes()
    return [coerce_record(raw, kind, f"line {i}", notes) for i, raw in enumerate(raws, 1)], notes


def demo():
    return [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]


CANONICAL = [
    # sub-scores as keys of their own, in two orders; a text joined from the sections; an id made from the content;
    # a source with spaces around it; unknown fields; a struct; a NaN in a float of a struct
    {"review_id": "r1", "paper_id": "p1", "venue": "ICLR", "year": 2024, "source": "human", "summary": "S.",
     "weaknesses": "W.", "rating": 6, "soundness": 3, "presentation": 2, "extra": [1, 2]},
    {"review_id": "r2", "paper_id": "p1", "venue": "ICLR", "year": 2024, "source": "human", "presentation": 4,
     "soundness": 1, "text": "Full text.", "rating": 8, "confidence": 4},
    {"paper_id": "p2", "source": " gpt ", "model": "gpt", "prompt": "guidelines", "text": "Model text.",
     "generation": {"backend": "vllm", "temperature": math.nan, "seed": 3}, "other": "x"},
    {"review_id": "r4", "paper_id": "p3", "source": "human", "rating": None, "subscores": None, "soundness": 2},
    # sub-scores as a field (a mapping, or as praib writes them) besides keys of their own
    {"review_id": "r5", "paper_id": "p3", "source": "human", "subscores": {"clarity": 3}, "soundness": 2},
    {"review_id": "r6", "paper_id": "p4", "source": "human", "subscores": [{"name": "clarity", "value": 1}]},
    {"review_id": "r7", "paper_id": "p4", "source": "human", "subscores": [{"name": "clarity", "value": None}]},
    # a sub-score key without a value (left out); the fields of r1 in another order
    {"review_id": "r8", "paper_id": "p5", "source": "human", "soundness": None, "clarity": 2},
    {"rating": 5, "presentation": 2, "soundness": 3, "weaknesses": "W.", "summary": "S.", "source": "human",
     "year": 2024, "venue": "ICLR", "paper_id": "p6", "review_id": "r9"},
    # a source of spaces alone: present when checked, empty once stripped, as ever
    {"review_id": "r10", "paper_id": "p7", "source": "  "},
]


@pytest.mark.parametrize("raws", [CANONICAL, demo(), demo() + CANONICAL], ids=["edge cases", "demo", "both"])
def test_canonical_batches_give_the_per_record_rows_and_notes(raws):
    notes = ReadNotes()
    rows = coerce_batch(raws, "review", notes)
    expected, expected_notes = per_record(raws)
    assert rows is not None
    # (repr: a NaN equals itself only as the same object, or written out)
    assert repr(rows) == repr(expected) and [list(r) for r in rows] == [list(r) for r in expected]
    assert notes == expected_notes


@pytest.mark.parametrize("change", [
    {"rating": "6"}, {"rating": "6: accept"}, {"rating": 6.0}, {"rating": True}, {"year": 2 ** 31},
    {"paper_id": None}, {"source": ""}, {"review_id": "café\u0301"}, {"paper_id": "p\u200b1"}, {"venue": 3},
    {"soundness": "3 good"}, {"subscores": [{"name": "clarity", "value": "3 good"}]}, {"soundness": 3.0}, {"soundness": 2 ** 40}, {"soundness": True},
    {"model": "a\tb"}, {"perturbation": {"kind": "typos", "seed": 2 ** 70}},
    {"generation": {"unknown": 1}}, {"generation": "vllm"}, {"text": math.nan},
])
def test_anything_to_convert_note_or_refuse_goes_record_by_record(change):
    raws = [dict(CANONICAL[0]), {**CANONICAL[1], **change}]
    notes = ReadNotes()
    assert coerce_batch(raws, "review", notes) is None
    assert notes == ReadNotes()  # nothing noted twice when the records are then read one by one


def test_records_that_are_not_mappings_go_record_by_record():
    assert coerce_batch([CANONICAL[0], ["not", "a", "record"]], "review", ReadNotes()) is None
    assert coerce_batch([], "review", ReadNotes()) is None


def test_a_required_field_missing_from_one_layout_goes_record_by_record():
    raws = [dict(CANONICAL[0]), {key: value for key, value in CANONICAL[1].items() if key != "source"}]
    assert coerce_batch(raws, "review", ReadNotes()) is None


PAPERS = [{"paper_id": "p1", "title": "T", "abstract": "A.", "venue": "ICLR", "year": 2024, "keywords": ["a", "b"]},
          {"paper_id": "p2", "title": "U", "keywords": None, "seed_unknown": 1, "text_truncated": False},
          {"paper_id": "p3", "perturbation": {"kind": "typos", "seed": 1}}]


def test_other_kinds():
    notes = ReadNotes()
    rows = coerce_batch(PAPERS, "paper", notes)
    expected, expected_notes = per_record(PAPERS, "paper")
    assert rows == expected and [list(r) for r in rows] == [list(r) for r in expected] and notes == expected_notes
    assert rows[1]["keywords"] == [] and rows[1]["keywords"] is not rows[2]["keywords"]  # a list of its own
    rebuttals = [{"paper_id": "p1", "review_id": "r1", "source": " human ", "text": "We thank."}]
    assert coerce_batch(rebuttals, "rebuttal", ReadNotes()) == per_record(rebuttals, "rebuttal")[0]


@pytest.mark.parametrize("change", [{"keywords": ["a", 3]}, {"keywords": "a; b"}, {"text_truncated": "true"},
                                    {"text_tokens": 12.0}, {"title": 3}])
def test_other_kinds_convert_record_by_record(change):
    assert coerce_batch([PAPERS[0], {**PAPERS[1], **change}], "paper", ReadNotes()) is None
