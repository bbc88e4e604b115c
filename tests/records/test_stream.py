"""Records read batch by batch (`praib.records.iter_record_batches`): every source `load_records` reads, in
flat memory, in batches with fixed indexes that shards partition, with load_records' checks and its policy
on repeats and empties."""

import json
import logging
import os
import random
import tracemalloc

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from praib.records import RecordError, coerce_record, iter_record_batches, load_records, save_records
from tests.paths import DEMO

DEMO_REVIEWS = DEMO / "reviews.jsonl"
RAW = [json.loads(line) for line in DEMO_REVIEWS.read_text().splitlines()]
# What every source must give back: each demo record through the schema check alone, no reader involved.
EXPECTED = [coerce_record(raw, "review", "demo") for raw in RAW]


def jsonl(rows) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def streamed(source, **options) -> list:
    return list(iter_record_batches(source, **options))


def rows_of(batches) -> list[dict]:
    return [row for batch in batches for row in batch.rows]


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, str]:
    """The demo reviews in every form load_records reads."""
    from praib.sources.publish import build_dataset_repo

    root = tmp_path_factory.mktemp("sources")
    records = load_records(DEMO_REVIEWS)
    (root / "reviews.json").write_text(json.dumps(RAW))
    (root / "wrapped.json").write_text(json.dumps({"records": RAW}))
    # Row groups of 7 rows: batches of 5 end at every row group, batches of 16 hold a whole one.
    pq.write_table(pq.read_table(save_records(records, root / "one.parquet")), root / "groups.parquet",
                   row_group_size=7)
    (root / "parquet-shards").mkdir()
    for name, (start, stop) in {"a": (0, 20), "b": (20, 21), "c": (21, 58)}.items():
        save_records(records.select(range(start, stop)), root / "parquet-shards" / f"{name}.parquet")
    (root / "jsonl-shards").mkdir()
    # A last line without its newline still counts as a line where another shard passes over it.
    (root / "jsonl-shards" / "a.jsonl").write_text(jsonl(RAW[:20]).removesuffix("\n"))
    (root / "jsonl-shards" / "b.jsonl").write_text("")  # an empty split's shard
    (root / "jsonl-shards" / "c.jsonl").write_text(jsonl(RAW[20:]))
    save_records(records, root / "saved")
    repo = build_dataset_repo({"reviews": str(DEMO_REVIEWS)}, root / "repo")
    return {"jsonl": str(DEMO_REVIEWS), "json": str(root / "reviews.json"), "json object": str(root / "wrapped.json"),
            "parquet": str(root / "groups.parquet"), "parquet shards": str(root / "parquet-shards"),
            "jsonl shards": str(root / "jsonl-shards"), "saved dataset": str(root / "saved"),
            "dataset repository": str(repo), "repository:config": f"{repo}:reviews"}


KINDS = ["jsonl", "json", "json object", "parquet", "parquet shards", "jsonl shards", "saved dataset",
         "dataset repository", "repository:config"]


@pytest.mark.parametrize("batch_rows", [1, 5, 16, 4096])
@pytest.mark.parametrize("kind", KINDS)
def test_every_source_streams_the_records_load_records_reads(sources, kind, batch_rows):
    batches = streamed(sources[kind], batch_rows=batch_rows)
    assert rows_of(batches) == EXPECTED
    assert rows_of(batches) == load_records(sources[kind]).to_list()
    assert [batch.index for batch in batches] == list(range(len(batches)))
    assert max(len(batch.rows) for batch in batches) <= batch_rows


def test_batches_are_cut_at_fixed_places_in_each_kind_of_source(sources):
    jsonl_batches = streamed(sources["jsonl"], batch_rows=5)  # 58 lines
    assert [len(b.rows) for b in jsonl_batches] == [5] * 11 + [3]
    assert (jsonl_batches[1].where, jsonl_batches[11].where) == (f"{DEMO_REVIEWS}: lines 6-10",
                                                                 f"{DEMO_REVIEWS}: lines 56-58")
    # Eight row groups of 7 rows and one of 2: a batch of 5 never spans two row groups.
    parquet = streamed(sources["parquet"], batch_rows=5)
    assert [len(b.rows) for b in parquet] == [5, 2] * 8 + [2]
    assert parquet[2].where == f"{sources['parquet']}: rows 7-11"
    # Files of 20, 0 and 38 lines: the indexes run on from file to file.
    shards = streamed(sources["jsonl shards"], batch_rows=16)
    assert [(b.index, len(b.rows)) for b in shards] == [(0, 16), (1, 4), (2, 16), (3, 16), (4, 6)]
    assert shards[2].where == f"{sources['jsonl shards']}/c.jsonl: lines 1-16"
    assert [len(b.rows) for b in streamed(sources["saved dataset"], batch_rows=16)] == [16, 16, 16, 10]
    assert streamed(sources["json"], batch_rows=16)[1].where == f"{sources['json']}: records 16-31"
    assert streamed(sources["repository:config"], batch_rows=50)[1].where == \
        f"{sources['repository:config']} [train]: rows 50-57"


@pytest.mark.parametrize("batch_rows", [1, 7, 16])
@pytest.mark.parametrize("kind", KINDS)
def test_shards_partition_the_batches_with_the_indexes_of_the_whole(sources, kind, batch_rows):
    whole = streamed(sources[kind], batch_rows=batch_rows)
    for parts in range(1, 5):
        shards = [streamed(sources[kind], batch_rows=batch_rows, shard=(part, parts)) for part in range(parts)]
        for part, batches in enumerate(shards):
            assert all(batch.index % parts == part for batch in batches)
        assert sorted((batch for batches in shards for batch in batches), key=lambda b: b.index) == whole


def test_a_shard_does_not_parse_the_records_of_other_shards(tmp_path):
    good = json.dumps(RAW[0]) + "\n" + json.dumps(RAW[1]) + "\n"
    path = tmp_path / "reviews.jsonl"
    path.write_text(good + "{broken\n{broken\n" + good)  # batches of 2 lines: the second is bad
    assert [b.index for b in streamed(path, batch_rows=2, shard=(0, 2))] == [0, 2]
    with pytest.raises(RecordError, match=r"reviews.jsonl: line 3: not valid JSON"):
        streamed(path, batch_rows=2, shard=(1, 2))
    table = tmp_path / "reviews.parquet"
    pq.write_table(pa.table({"paper_id": ["p1", "p2", "p3", "p4"], "source": ["human"] * 4,
                             "rating": ["5", "seven", "6", "3"]}), table, row_group_size=1)
    assert [row["rating"] for row in rows_of(streamed(table, batch_rows=1, shard=(0, 2)))] == [5, 6]
    with pytest.raises(RecordError, match=r"reviews.parquet: row 1: field 'rating'"):
        streamed(table, batch_rows=1, shard=(1, 2))


def error_of(read) -> str:
    with pytest.raises(RecordError) as caught:
        read()
    return str(caught.value)


@pytest.mark.parametrize("tail, message", [
    ('{"paper_id": "p9", "source": "human", "rating": "seven"}\n',
     "line 59: field 'rating': expected an integer, got 'seven'"),
    ('{"paper_id": "p9", "sour', "line 59: the last line is cut off mid-record (and has no newline): "
                                 "the file looks truncated"),
    ("[1, 2]\n", "line 59: expected a JSON object, got list"),
], ids=["bad field", "cut-off line", "not an object"])
def test_an_error_in_a_late_batch_names_its_line_sharded_or_not(tmp_path, tail, message):
    path = tmp_path / "reviews.jsonl"
    path.write_text(DEMO_REVIEWS.read_text() + tail)
    assert error_of(lambda: load_records(path)) == f"{path}: {message}"
    # Line 59 is in batch 11 of 5 lines (lines 56-60), which shard 2 of 3 reads after passing over others.
    assert error_of(lambda: streamed(path, batch_rows=5)) == f"{path}: {message}"
    assert error_of(lambda: streamed(path, batch_rows=5, shard=(2, 3))) == f"{path}: {message}"


def test_bytes_that_are_not_utf8_are_found_at_their_offset_after_batches_passed_over(tmp_path):
    lines = [json.dumps(raw).encode() + b"\n" for raw in RAW]
    lines[39] = lines[39].replace(b'"source": "', b'"source": "\xff', 1)
    path = tmp_path / "reviews.jsonl"
    path.write_bytes(b"".join(lines))
    offset = b"".join(lines).index(b"\xff")
    expected = f"{path}: line 40: not UTF-8: byte 0xff at byte offset {offset} of the file"
    assert error_of(lambda: load_records(path)) == expected
    assert error_of(lambda: streamed(path, batch_rows=16, shard=(2, 3))) == expected  # lines 33-48


@pytest.mark.parametrize("bad_lines, message", [
    ({2: '{"paper_id": "p9", "source": "human", "rating": "seven"}', 15: '{"paper_id": "p9",'},
     "line 15: not valid JSON (Expecting property name enclosed in double quotes at column 1)"),
    ({9: '{"paper_id": "p9", "source": "human", "rating": "seven"}', 17: "\u00a0"},
     "line 9: field 'rating': expected an integer, got 'seven'"),
    ({3: "", 11: "[1, 2]"}, "line 11: expected a JSON object, got list"),
], ids=["JSON before record", "record after checked lines", "blank, then not an object"])
def test_a_batch_checked_a_few_lines_at_a_time_fails_as_one_decoded_then_checked(tmp_path, monkeypatch,
                                                                                 bad_lines, message):
    # The lines of a batch are decoded and checked 4 at a time here: a JSON error anywhere in the batch still comes
    # before a bad record earlier in it, and a bad record after lines already checked is named as ever.
    import praib.records.stream as stream

    monkeypatch.setattr(stream, "_CHECKED_AT_ONCE", 4)
    lines = [json.dumps(raw) for raw in RAW[:20]]
    for number, line in bad_lines.items():
        lines[number - 1] = line
    path = tmp_path / "reviews.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert error_of(lambda: streamed(path, batch_rows=20)) == f"{path}: {message}"


def test_lines_of_unicode_whitespace_or_a_byte_order_mark_are_blank(tmp_path):
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\ufeff\n\u00a0\u2003\n\n", encoding="utf-8")
    assert error_of(lambda: streamed(blank)) == f"{blank}: empty: no records"
    blank.write_text("\ufeff\n\u00a0\n" + jsonl(RAW[:1]), encoding="utf-8")
    assert rows_of(streamed(blank)) == EXPECTED[:1]


def test_lines_passed_over_across_the_blocks_read_are_counted_as_read(tmp_path, monkeypatch):
    # Blocks of 4 KB: the lines of other shards (some longer than a block) cross their edges, and the last
    # line has no newline; every shard must still read its own records, and name the bad line exactly.
    import praib.records.stream as stream

    monkeypatch.setattr(stream, "_BLOCK", 4096)
    rng = random.Random(7)
    raws = [{"review_id": f"r{i}", "paper_id": f"p{i}", "source": "human",
             "text": "word " * rng.choice([1, 300, 900, 2000])} for i in range(40)]
    path = tmp_path / "reviews.jsonl"
    path.write_text("\n".join(json.dumps(raw) for raw in raws))  # (no newline after the last)
    whole = [row["review_id"] for row in rows_of(streamed(path, batch_rows=3))]
    assert whole == [raw["review_id"] for raw in raws]
    for parts in (2, 3, 5):
        read = [row["review_id"] for part in range(parts)
                for row in rows_of(streamed(path, batch_rows=3, shard=(part, parts)))]
        assert sorted(read) == sorted(whole)
    path.write_text("\n".join(json.dumps(raw) for raw in raws[:37]) + '\n{"paper_id": "p", "rating": "x"}\n')
    message = f"{path}: line 38: field 'rating': expected an integer, got 'x'"
    assert error_of(lambda: streamed(path, batch_rows=3, shard=(0, 2))) == message  # batch 12: lines 37-39


def test_a_parquet_error_names_the_row_across_row_groups(tmp_path):
    path = tmp_path / "reviews.parquet"
    ratings = [str(i % 9 + 1) for i in range(20)]
    ratings[12] = "high"
    pq.write_table(pa.table({"paper_id": [f"p{i}" for i in range(20)], "source": ["human"] * 20,
                             "rating": ratings}), path, row_group_size=7)
    assert error_of(lambda: streamed(path, batch_rows=5)) == \
        f"{path}: row 12: field 'rating': expected an integer, got 'high'"


def warnings_of(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]


def test_exact_repeats_in_later_batches_are_dropped_with_one_warning_at_the_end(tmp_path, caplog):
    path = tmp_path / "reviews.jsonl"
    path.write_text(jsonl(RAW + RAW[:3] + [RAW[7]]))  # 62 lines
    batches = streamed(path, batch_rows=5)
    assert rows_of(batches) == EXPECTED
    # Lines 56-60 hold the last three demo records and two repeats; lines 61-62 only repeats.
    assert [(b.index, len(b.rows)) for b in batches[-2:]] == [(11, 3), (12, 0)]
    assert warnings_of(caplog) == [f"{path}: dropped 4 exact duplicate records (same review_id and content)"]


def test_one_identity_with_two_contents_in_different_batches_fails_after_the_last_batch(tmp_path):
    changed = [{**RAW[i], "reviewer_id": "R9"} for i in (40, 3, 5, 10, 20, 30, 35)]
    path = tmp_path / "reviews.jsonl"
    path.write_text(jsonl(RAW + changed))
    read = []
    with pytest.raises(RecordError) as caught:
        for batch in iter_record_batches(path, batch_rows=4):
            read.append(batch.index)
    assert read == list(range(17))  # 65 lines: every batch came before the error
    # Listed in order of first use, as load_records lists them, not in the order the repeats came.
    first_five = ", ".join(RAW[i]["review_id"] for i in (3, 5, 10, 20, 30))
    assert str(caught.value) == (f"{path}: field 'review_id': 7 ids repeat with different content: {first_five} "
                                 "and 2 more")
    assert error_of(lambda: load_records(path)) == str(caught.value)


def test_repeats_are_told_apart_by_nested_and_float_fields_with_nan_equal_to_itself(tmp_path, caplog):
    # pandas writes a missing float as NaN; two copies of one record are still one record.
    sampled = {"review_id": "r1", "paper_id": "p1", "source": "lm", "generation": {"temperature": float("nan")},
               "subscores": None}
    scored = {"review_id": "r2", "paper_id": "p1", "source": "human", "generation": None,
              "subscores": {"soundness": 3, "clarity": 2}}
    path = tmp_path / "reviews.parquet"
    pq.write_table(pa.Table.from_pylist([sampled, scored, sampled, scored]), path, row_group_size=1)
    assert [row["review_id"] for row in rows_of(streamed(path, batch_rows=1))] == ["r1", "r2"]
    assert warnings_of(caplog) == [f"{path}: dropped 2 exact duplicate records (same review_id and content)"]
    rescored = {**scored, "subscores": {"soundness": 3, "clarity": 1}}
    pq.write_table(pa.Table.from_pylist([sampled, scored, sampled, rescored]), path, row_group_size=1)
    assert error_of(lambda: streamed(path, batch_rows=1)) == \
        f"{path}: field 'review_id': 1 id repeats with different content: r2"


def test_a_shard_looks_for_repeats_among_its_own_batches_only(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text(jsonl(RAW + [{**RAW[0], "reviewer_id": "R9"}]))  # line 59: in batch 1 of 58 lines
    assert len(rows_of(streamed(path, batch_rows=58, shard=(0, 2)))) == 58
    assert len(rows_of(streamed(path, batch_rows=58, shard=(1, 2)))) == 1
    with pytest.raises(RecordError, match="1 id repeats with different content"):
        streamed(path, batch_rows=58)


def test_an_input_without_records_is_an_error_unless_allowed_and_no_shard_judges_it(tmp_path, caplog):
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n  \n")
    assert error_of(lambda: streamed(blank)) == f"{blank}: empty: no records"
    allowed = streamed(blank, allow_empty=True)
    assert [(b.index, b.rows) for b in allowed] == [(0, ())]
    assert warnings_of(caplog) == [f"{blank}: holds no review records"]
    caplog.clear()
    empty_list = tmp_path / "reviews.json"
    empty_list.write_text("[]")
    assert error_of(lambda: streamed(empty_list)) == f"{empty_list}: holds no records"
    # Only whoever merges the shards knows whether all of them are empty.
    assert [streamed(blank, shard=(part, 2)) for part in range(2)] == [[next(iter(allowed))], []]
    assert streamed(empty_list, shard=(0, 2)) == []
    assert streamed(DEMO_REVIEWS, batch_rows=29, shard=(3, 4)) == []  # two batches, four shards
    assert warnings_of(caplog) == []


def test_an_empty_split_of_a_dataset_repository_is_named(tmp_path, caplog):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.jsonl").write_text(jsonl(RAW[:3]))
    (tmp_path / "data" / "test.jsonl").write_text("\n")
    (tmp_path / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n"
                                        "  - split: train\n    path: data/train.jsonl\n"
                                        "  - split: test\n    path: data/test.jsonl\n---\n")
    assert len(rows_of(streamed(tmp_path))) == 3
    assert error_of(lambda: streamed(tmp_path, split="test")) == f'{tmp_path}: split "test" holds no records'
    assert streamed(tmp_path, split="test", shard=(0, 2)) == []
    assert streamed(tmp_path, split="test", allow_empty=True) == []
    assert warnings_of(caplog) == [f"{tmp_path}: holds no review records"]


def test_fields_the_schema_does_not_know_are_named_in_one_warning_for_the_stream(tmp_path, caplog):
    path = tmp_path / "reviews.jsonl"
    path.write_text(jsonl([{**RAW[0], "colour": "red"}, *RAW[1:30], {**RAW[30], "size": 3}]))
    assert len(streamed(path, batch_rows=4)) == 8
    assert warnings_of(caplog) == [f"{path}: ignored fields not in the review schema: colour, size"]


@pytest.mark.parametrize("options", [{"shard": (2, 2)}, {"shard": (-1, 2)}, {"batch_rows": 0}, {"kind": "essay"}])
def test_impossible_options_are_refused(options):
    with pytest.raises(ValueError):
        iter_record_batches(DEMO_REVIEWS, **options)


def test_a_large_jsonl_file_is_read_in_flat_memory(tmp_path):
    rng = random.Random(7)
    words = [text for raw in RAW for text in (raw.get("weaknesses") or "").split()]
    path = tmp_path / "reviews.jsonl"
    with path.open("w") as out:  # 10,000 reviews of about 2 KB: 22 MB
        for number in range(10_000):
            out.write(json.dumps({"review_id": f"r{number}", "paper_id": f"p{number // 4}", "source": "human",
                                  "rating": number % 10 + 1, "text": " ".join(rng.choices(words, k=330))}) + "\n")
    tracemalloc.start()
    try:
        count = sum(len(batch.rows) for batch in iter_record_batches(path, batch_rows=128))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 10_000
    assert peak < os.path.getsize(path) / 8


def test_load_records_holds_one_batch_of_python_records_at_a_time(tmp_path):
    """The Dataset is built batch by batch, and fingerprinted from its Arrow buffers: neither all records as Python
    objects nor a serialised copy of the table (which datasets makes to hash one) are ever held at once."""
    rng = random.Random(7)
    words = [text for raw in RAW for text in (raw.get("weaknesses") or "").split()]
    path = tmp_path / "reviews.jsonl"
    with path.open("w") as out:  # 10,000 reviews of about 2 KB: 22 MB, three batches
        for number in range(10_000):
            out.write(json.dumps({"review_id": f"r{number}", "paper_id": f"p{number // 4}", "source": "human",
                                  "rating": number % 10 + 1, "text": " ".join(rng.choices(words, k=330))}) + "\n")
    tracemalloc.start()
    try:
        records = load_records(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(records) == 10_000 and records[9_999]["review_id"] == "r9999"
    assert peak < 2.5 * os.path.getsize(path)  # all records at once, and the copy hashed: more than 4 times
    # The fingerprint is the same for the same records, and another for others.
    assert load_records(path)._fingerprint == records._fingerprint
    path.write_text(path.read_text().replace('"rating": 1,', '"rating": 2,', 1))
    assert load_records(path)._fingerprint != records._fingerprint
