"""Many records of a few layouts, as a JSONL file of reviews holds them, checked column by column give what
coerce_record gives record by record: the text joined from sections (every section given, or some empty or None),
sub-scores given as keys of their own (every one given, or some None), and the same layout in batch after batch."""

import random

import pytest

from praib.records.columns import coerce_batch
from praib.records.io import ReadNotes, coerce_record

SECTIONS = ("summary", "strengths", "weaknesses", "questions")
SUBSCORES = ("soundness", "presentation", "contribution")


def review(rng, i, missing):
    raw = {"review_id": f"r{i}", "paper_id": f"p{i // 3}", "venue": "ICLR", "year": 2024, "source": "human",
           "reviewer_id": f"R{i % 3}"}
    for name in SECTIONS:
        raw[name] = rng.choice(["", None]) if rng.random() < missing else f"{name.title()} of review {i} — ü."[
            :rng.randint(3, 40)]
    raw.update(rating=rng.randint(1, 10), confidence=rng.randint(1, 5))
    for name in SUBSCORES:
        raw[name] = None if rng.random() < missing else rng.randint(1, 4)
    return raw


def model_review(i):
    return {"review_id": f"m{i}", "paper_id": f"p{i // 3}", "venue": "ICLR", "year": 2024, "source": "gpt",
            "model": "gpt-4o", "prompt": "guidelines", "text": f"## Summary\nModel review {i}."}


@pytest.mark.parametrize("missing", [0.0, 0.02, 0.3])
@pytest.mark.parametrize("seed", range(3))
def test_batches_of_layouts_give_the_per_record_rows(seed, missing):
    rng = random.Random(seed)
    raws = [review(rng, i, missing) if rng.random() < 0.7 else model_review(i) for i in range(2000)]
    for start in range(0, len(raws), 256):
        batch = raws[start:start + 256]
        notes, expected_notes = ReadNotes(), ReadNotes()
        rows = coerce_batch(batch, "review", notes)
        expected = [coerce_record(raw, "review", "", expected_notes) for raw in batch]
        assert rows == expected
        assert [list(row) for row in rows] == [list(row) for row in expected]
        assert notes == expected_notes


def test_an_empty_or_missing_section_is_left_out_of_the_text_as_ever():
    given = [{"paper_id": "p", "source": "human", "summary": "S.", "strengths": "G.", "weaknesses": value}
             for value in ("W.", "", None, "X.")]
    rows = coerce_batch(given, "review", ReadNotes())
    assert [row["text"] for row in rows] == ["S.\n\nG.\n\nW.", "S.\n\nG.", "S.\n\nG.", "S.\n\nG.\n\nX."]
    alone = coerce_batch([{"paper_id": "p", "source": "human", "summary": ""}], "review", ReadNotes())
    assert alone[0]["text"] is None
