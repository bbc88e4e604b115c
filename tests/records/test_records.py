import json
from importlib import resources

import pytest

from praib.records import REVIEW_FEATURES, RecordError, load_records, save_records


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


HUMAN = {"paper_id": "p1", "source": "human", "venue": "ICLR", "year": 2024, "decision": "Accept (poster)",
         "reviewer_id": "R1", "summary": "A method for X.", "strengths": "Clear writing.",
         "weaknesses": "Small benchmarks.", "rating": "6: marginally above the acceptance threshold",
         "confidence": "4: You are confident in your assessment", "soundness": 3, "presentation": "2 fair"}


def test_openreview_style_values_are_coerced_to_the_schema(tmp_path):
    records = load_records(write_jsonl(tmp_path / "r.jsonl", [HUMAN]))
    assert records.features == REVIEW_FEATURES
    row = records[0]
    assert (row["rating"], row["confidence"]) == (6, 4)
    assert row["subscores"] == [{"name": "soundness", "value": 3}, {"name": "presentation", "value": 2}]
    # The full text is composed from the sections when the record has none.
    assert row["text"] == "A method for X.\n\nClear writing.\n\nSmall benchmarks."
    assert len(row["review_id"]) == 16


def test_ratings_only_records_keep_no_text(tmp_path):
    row = {"paper_id": "p1", "source": "human", "rating": 3}
    assert load_records(write_jsonl(tmp_path / "r.jsonl", [row]))[0]["text"] is None


@pytest.mark.parametrize("bad, field, problem", [
    ({"paper_id": "p1", "source": "human", "rating": "seven"}, "rating", "expected an integer, got 'seven'"),
    ({"paper_id": "p1", "source": "human", "rating": 6.5}, "rating", "not a whole number"),
    ({"source": "human", "text": "x"}, "paper_id", "is required and missing"),
    ({"paper_id": "p1", "text": "x"}, "source", "is required and missing"),
    ({"paper_id": "p1", "source": "human", "summary": ["a", "b"]}, "summary", "expected text"),
    ({"paper_id": "p1", "source": "human", "year": "last year"}, "year", "expected an integer"),
])
def test_malformed_record_names_file_line_and_field(tmp_path, bad, field, problem):
    path = write_jsonl(tmp_path / "reviews.jsonl", [HUMAN, HUMAN, bad])
    with pytest.raises(RecordError) as err:
        load_records(path)
    assert str(err.value).startswith(f"{path}: line 3: field '{field}': ")
    assert problem in str(err.value)


def test_invalid_json_line_is_reported_with_its_number(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text(json.dumps(HUMAN) + "\n\n{broken\n")
    with pytest.raises(RecordError, match=r"reviews.jsonl: line 3: not valid JSON"):
        load_records(path)


def test_malformed_parquet_row_is_reported_with_its_index(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = tmp_path / "reviews.parquet"
    pq.write_table(pa.table({"paper_id": ["p1", "p2"], "source": ["human", "gpt"], "rating": ["5", "high"]}), path)
    with pytest.raises(RecordError, match=r"reviews.parquet: row 1: field 'rating'"):
        load_records(path)


@pytest.mark.parametrize("name", ["out.jsonl", "out.parquet", "saved_dataset"])
def test_records_round_trip_through_every_format(tmp_path, name):
    records = load_records(write_jsonl(tmp_path / "r.jsonl", [HUMAN, {"paper_id": "p2", "source": "gpt-x",
                                                                       "text": "**Rating:** 8"}]))
    again = load_records(save_records(records, tmp_path / name))
    assert again.features == REVIEW_FEATURES
    assert again.to_list() == records.to_list()


def test_directory_of_parquet_files_is_read_as_one_set(tmp_path):
    records = load_records(write_jsonl(tmp_path / "r.jsonl", [HUMAN, {**HUMAN, "review_id": "r2"}]))
    (tmp_path / "shards").mkdir()
    save_records(records.select([0]), tmp_path / "shards" / "a.parquet")
    save_records(records.select([1]), tmp_path / "shards" / "b.parquet")
    assert len(load_records(tmp_path / "shards")) == 2


def test_a_dataset_repository_folder_is_read_by_config(tmp_path):
    from praib.sources.publish import build_dataset_repo

    demo = resources.files("praib") / "data" / "demo"
    repo = build_dataset_repo({"reviews": str(demo / "reviews.jsonl"), "papers": str(demo / "papers.jsonl")},
                              tmp_path / "praib")
    reviews = load_records(str(demo / "reviews.jsonl"))
    assert load_records(repo).to_list() == reviews.to_list()  # the default config
    assert load_records(f"{repo}:papers", "paper")["paper_id"] == load_records(str(demo / "papers.jsonl"),
                                                                               "paper")["paper_id"]
    with pytest.raises(RecordError, match="could not load the dataset"):
        load_records(f"{repo}:no-such-config")


def test_missing_path_that_is_not_a_hub_id_is_a_clear_error(tmp_path):
    with pytest.raises(RecordError, match="no such file or directory"):
        load_records(tmp_path / "nope.jsonl")


def test_hub_id_is_tried_offline_and_fails_with_the_cause():
    with pytest.raises(RecordError, match="could not load the dataset"):
        load_records("praib-org/no-such-dataset")


def test_paper_records_have_their_own_schema(tmp_path):
    path = write_jsonl(tmp_path / "papers.jsonl", [{"paper_id": "p1", "title": "T", "keywords": ["a", "b"],
                                                     "year": 2025}])
    papers = load_records(path, kind="paper")
    assert papers[0]["keywords"] == ["a", "b"] and papers[0]["text"] is None


def test_generation_metadata_is_validated_and_round_trips(tmp_path):
    row = {"paper_id": "p1", "source": "tiny-lm", "text": "**Rating:** 6",
           "generation": {"backend": "transformers", "temperature": "0.7", "max_new_tokens": 64, "seed": 3,
                          "paper_truncated": True}}
    records = load_records(write_jsonl(tmp_path / "r.jsonl", [row]))
    generation = records[0]["generation"]
    assert generation["temperature"] == 0.7 and generation["paper_truncated"] is True
    assert generation["template"] is None
    again = load_records(save_records(records, tmp_path / "r.parquet"))
    assert again[0]["generation"] == generation
    human = load_records(write_jsonl(tmp_path / "h.jsonl", [HUMAN]))
    assert human[0]["generation"] is None


def test_unknown_generation_key_is_rejected(tmp_path):
    row = {"paper_id": "p1", "source": "m", "generation": {"backend": "x", "colour": "red"}}
    with pytest.raises(RecordError, match=r"line 1: field 'generation': unknown keys colour"):
        load_records(write_jsonl(tmp_path / "r.jsonl", [row]))


RATED = {"paper_id": "p1", "source": "human", "rating": 6}


@pytest.mark.parametrize("value, accepted", [
    (2**31 - 1, True), (2**31, False), (-2**31, True), (-2**31 - 1, False), ("2147483648: above the bound", False),
    (1e300, False)])
def test_an_integer_beyond_int32_is_a_named_error(tmp_path, value, accepted):
    path = write_jsonl(tmp_path / "reviews.jsonl", [{**RATED, "rating": value}])
    if accepted:
        assert load_records(path)["rating"] == [value]
        return
    with pytest.raises(RecordError, match=r"reviews.jsonl: line 1: field 'rating': expected an integer from "
                                          r"-2147483648 to 2147483647 \(int32\), found "):
        load_records(path)


def test_an_integer_beyond_int64_is_a_named_error(tmp_path):
    path = write_jsonl(tmp_path / "reviews.jsonl", [{**RATED, "generation": {"seed": 2**63 - 1}},
                                                    {**RATED, "generation": {"seed": 2**63}}])
    with pytest.raises(RecordError) as err:
        load_records(path)
    assert str(err.value) == (f"{path}: line 2: field 'generation.seed': expected an integer from "
                              "-9223372036854775808 to 9223372036854775807 (int64), found 9223372036854775808")


def test_bytes_that_are_not_utf8_are_named_by_line_and_byte_offset(tmp_path):
    first = (json.dumps(RATED) + "\n").encode()
    path = tmp_path / "reviews.jsonl"
    path.write_bytes(first + b'{"paper_id": "p\xe92", "source": "human"}\n')
    # "p" starts at byte 15 of line 2 ('{"paper_id": "' is 14 bytes), so the 0xe9 after it is at 15.
    with pytest.raises(RecordError) as err:
        load_records(path)
    assert str(err.value) == f"{path}: line 2: not UTF-8: byte 0xe9 at byte offset {len(first) + 15} of the file"


def test_a_cut_off_last_line_is_told_apart_from_a_bad_one(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text(json.dumps(RATED) + '\n{"paper_id": "p2", "sour')
    with pytest.raises(RecordError, match="line 2: the last line is cut off mid-record"):
        load_records(path)
    path.write_text(json.dumps(RATED) + '\n{"paper_id": p2}')  # complete but not JSON: no truncation
    with pytest.raises(RecordError, match=r"line 2: not valid JSON \(Expecting value at column 14\)"):
        load_records(path)


@pytest.mark.parametrize("content", [b"", b"\n  \n\t\n"], ids=["0 bytes", "whitespace only"])
@pytest.mark.parametrize("name", ["reviews.jsonl", "reviews.json", "reviews.parquet"])
def test_an_empty_file_is_an_error(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if not name.endswith(".parquet") else b"")
    with pytest.raises(RecordError) as err:
        load_records(path)
    assert str(err.value) == f"{path}: empty: no records"


def test_a_byte_order_mark_is_dropped(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(RATED) + "\n").encode())
    assert load_records(path)["rating"] == [6]


def test_an_empty_shard_is_part_of_a_directory_of_shards(tmp_path):
    (tmp_path / "shards").mkdir()
    write_jsonl(tmp_path / "shards" / "a.jsonl", [RATED])
    (tmp_path / "shards" / "b.jsonl").write_text("")
    assert load_records(tmp_path / "shards")["rating"] == [6]


def test_a_file_that_is_not_parquet_is_named(tmp_path):
    path = tmp_path / "reviews.parquet"
    path.write_text("paper_id,source\np1,human\n")
    with pytest.raises(RecordError, match=r"reviews.parquet: not a readable Parquet file \(Parquet magic bytes"):
        load_records(path)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_with_their_line(tmp_path, constant):
    # Python's json reads these constants; JSON has none, and a NaN year used to become a silent null.
    lines = tmp_path / "reviews.jsonl"
    lines.write_text(json.dumps(RATED) + "\n" + json.dumps({**RATED, "year": 0}).replace("0}", constant + "}") + "\n")
    with pytest.raises(RecordError) as err:
        load_records(lines)
    assert str(err.value) == f"{lines}: line 2: {constant} is not valid JSON (use null)"
    # In a .json file the line is found past a string that holds the same word and a bracket.
    whole = tmp_path / "reviews.json"
    whole.write_text('[\n{"paper_id": "p1", "source": "human", "summary": "NaN [ Infinity"},\n'
                     f'{{"paper_id": "p2", "source": "human", "year": {constant}}}\n]')
    with pytest.raises(RecordError) as err:
        load_records(whole)
    assert str(err.value) == f"{whole}: line 3: {constant} is not valid JSON (use null)"


def test_a_nan_in_a_parquet_float_column_is_a_missing_value(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    # pandas stores an integer column with a gap as float64 with NaN: that NaN means "missing".
    path = tmp_path / "reviews.parquet"
    pq.write_table(pa.table({"paper_id": ["p1", "p2"], "source": ["human", "human"],
                             "rating": [6.0, float("nan")]}), path)
    assert load_records(path)["rating"] == [6, None]


def test_json_nested_too_deeply_is_named_by_line(tmp_path):
    lines = tmp_path / "reviews.jsonl"
    lines.write_text(json.dumps(RATED) + '\n{"paper_id": "p2", "venue": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(RecordError) as err:
        load_records(lines)
    assert str(err.value) == f"{lines}: line 2: nested too deeply"
    whole = tmp_path / "reviews.json"
    whole.write_text('[\n{"paper_id": "p1", "source": "human", "venue": [["a"]]},\n{"paper_id": "p2", "venue":\n'
                     + "[" * 100_000 + "]" * 100_000 + "}\n]")
    with pytest.raises(RecordError) as err:
        load_records(whole)
    assert str(err.value) == f"{whole}: line 4: nested too deeply"


@pytest.mark.parametrize("name, writer", [("out.jsonl", "to_json"), ("out.parquet", "to_parquet"),
                                          ("saved", "save_to_disk")])
def test_a_full_disk_is_one_line_naming_the_output(tmp_path, monkeypatch, name, writer):
    from datasets import Dataset

    from praib.records import OutputWriteError

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")  # as the system says it: no file named

    destination = tmp_path / name
    monkeypatch.setattr(Dataset, writer, full_disk)
    with pytest.raises(OutputWriteError) as failed:
        save_records(load_records(write_jsonl(tmp_path / "in.jsonl", [HUMAN])), destination)
    assert str(failed.value) == f"cannot write {destination}: No space left on device"
    assert (failed.value.errno, failed.value.filename) == (28, str(destination))
