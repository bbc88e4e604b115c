"""Ids that look the same are one id, and scores given as text follow one rule (issue 26, items 7 and 8).

Ids and the fields that group records are put in Unicode NFC, and one holding a character a reader cannot
see (a zero-width space, a bidi control, ...) is refused with one line listing it. A score given as text is
read by its leading number when a label follows (OpenReview's "6: label"), counted in one warning; a score
out of another total ("7/10") is refused.
"""

import json
import logging
import unicodedata

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from praib.records import RecordError, load_records
from praib.records.stream import iter_record_batches

NFC, NFD = "caf\u00e9", "cafe\u0301"


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def review(**fields):
    return {"paper_id": "p1", "source": "human", "venue": "ICLR", "year": 2022, "text": "Fine.", **fields}


@pytest.mark.parametrize("field, value, listed", [
    ("review_id", "r1\u200b", "U+200B ZERO WIDTH SPACE"),
    ("review_id", "r\u202e1", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("paper_id", "\u2066p1\u2069", "U+2066 LEFT-TO-RIGHT ISOLATE, U+2069 POP DIRECTIONAL ISOLATE"),
    ("paper_id", "p\u200d1", "U+200D ZERO WIDTH JOINER"),
    ("paper_id", "\ufeffp1", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ("reviewer_id", "R\u00ad1", "U+00AD SOFT HYPHEN"),
    ("source", "hu\u2060man", "U+2060 WORD JOINER"),
    ("model", "m\ufe0f", "U+FE0F VARIATION SELECTOR-16"),
    ("paper_id", "p\t1", "U+0009 CONTROL"),
])
def test_an_id_holding_a_character_nobody_sees_is_one_error_listing_it(tmp_path, field, value, listed):
    path = write_jsonl(tmp_path / "reviews.jsonl", [review(review_id="r0"), review(**{field: value})])
    with pytest.raises(RecordError) as err:
        load_records(path)
    message = str(err.value)
    assert message.startswith(f"{path}: line 2: field '{field}': ")
    assert f"({listed})" in message
    # The id is shown escaped, so the line itself holds nothing a reader cannot see.
    assert repr(value) in message and message.isprintable()


def test_the_same_id_in_two_unicode_forms_is_one_id(tmp_path):
    # Two reviews of one paper, its id typed once composed and once decomposed: one paper, in NFC.
    path = write_jsonl(tmp_path / "reviews.jsonl", [review(review_id="r1", paper_id=NFC),
                                                    review(review_id="r2", paper_id=NFD)])
    assert load_records(path)["paper_id"] == [NFC, NFC]
    # Papers: the same id in both forms, with different content, is one id used twice.
    papers = write_jsonl(tmp_path / "papers.jsonl", [{"paper_id": NFC, "title": "A"}, {"paper_id": NFD, "title": "B"}])
    with pytest.raises(RecordError, match=f"field 'paper_id': 1 id repeats with different content: {NFC}"):
        load_records(papers, "paper")


def test_review_ids_in_two_forms_repeat_exactly_and_one_is_dropped(tmp_path, caplog):
    path = write_jsonl(tmp_path / "reviews.jsonl", [review(review_id=f"r-{NFC}"), review(review_id=f"r-{NFD}")])
    with caplog.at_level(logging.WARNING):
        records = load_records(path)
    assert records["review_id"] == [f"r-{NFC}"]
    assert "dropped 1 exact duplicate record (same review_id and content)" in caplog.text


def test_a_parquet_source_read_in_batches_gives_the_same_ids(tmp_path):
    # The streamed path of `praib evaluate` reads Parquet row groups through the same check.
    path = tmp_path / "reviews.parquet"
    pq.write_table(pa.table({"paper_id": [NFD, "p2", "p3\u200b"], "source": ["human"] * 3}), path)
    batches = iter_record_batches(path, batch_rows=2)
    assert [row["paper_id"] for row in next(batches).rows] == [NFC, "p2"]
    assert unicodedata.is_normalized("NFC", NFC)
    with pytest.raises(RecordError, match=r"reviews.parquet: row 2: field 'paper_id': .*U\+200B ZERO WIDTH SPACE"):
        next(batches)


@pytest.mark.parametrize("value", ["7/10", "7 / 10", "7 out of 10", "8 of 10", "3/5"])
def test_a_score_out_of_another_total_is_refused_in_one_line(tmp_path, value):
    path = write_jsonl(tmp_path / "reviews.jsonl", [review(rating=6), review(review_id="r2", rating=value)])
    with pytest.raises(RecordError) as err:
        load_records(path)
    assert str(err.value) == (f"{path}: line 2: field 'rating': {value!r} is a score out of another total: give the "
                              "value on the venue's scale itself (praib does not convert between scales)")


@pytest.mark.parametrize("value, read", [("8: accept", 8), ("6: marginally above the acceptance threshold", 6),
                                         ("4 (Borderline Accept)", 4), ("3 good", 3), ("7 - accept", 7)])
def test_a_score_with_a_label_is_read_as_its_number_and_counted_in_one_warning(tmp_path, caplog, value, read):
    path = write_jsonl(tmp_path / "reviews.jsonl", [review(review_id=f"r{i}", rating=value, confidence="4")
                                                    for i in range(3)])
    with caplog.at_level(logging.WARNING):
        records = load_records(path)
    assert records["rating"] == [read] * 3 and records["confidence"] == [4] * 3
    warnings = [r.getMessage() for r in caplog.records if "given as text" in r.getMessage()]
    # A bare number ("4", as every CSV cell is) is no label and is not counted.
    assert warnings == [f"{path}: read 3 score(s) given as text by their leading number, e.g. rating {value!r} as "
                        f"{read} (the label after the number is not checked)"]


@pytest.mark.parametrize("value", ["7/", "3good", "6-7", "6.5", "seven"])
def test_other_text_is_still_no_score(tmp_path, value):
    path = write_jsonl(tmp_path / "reviews.jsonl", [review(rating=value)])
    with pytest.raises(RecordError, match=r"line 1: field 'rating': (expected an integer|.* not a whole number)"):
        load_records(path)
