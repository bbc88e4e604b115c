"""One policy for repeated ids and empty inputs in every reader: `praib.records.load_records` and
`praib.records.duplicates`, on the demo set's records."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from praib.records import RecordError, load_records
from praib.records.duplicates import find_repeats, record_repeats
from tests.paths import DEMO


def demo(name):
    return [json.loads(line) for line in (DEMO / f"{name}.jsonl").read_text().splitlines() if line.strip()]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def write_parquet(path, rows):
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.mark.parametrize("write", [write_jsonl, write_parquet], ids=["jsonl", "parquet"])
def test_one_review_id_with_two_contents_is_an_error_that_names_the_file_and_the_ids(tmp_path, write):
    reviews = demo("reviews")
    # Seven ids reused by another reviewer's review, in the file's order 3, 5, 10, ..., 40.
    changed = [{**reviews[i], "reviewer_id": "R9"} for i in (3, 5, 10, 20, 30, 35, 40)]
    path = write(tmp_path / f"reviews{'.jsonl' if write is write_jsonl else '.parquet'}", reviews + changed)
    ids = [reviews[i]["review_id"] for i in (3, 5, 10, 20, 30)]
    with pytest.raises(RecordError) as caught:
        load_records(path)
    assert str(caught.value) == (f"{path}: field 'review_id': 7 ids repeat with different content: "
                                 f"{', '.join(ids)} and 2 more")


def test_exact_repeats_are_dropped_with_one_warning_that_counts_them(tmp_path, caplog):
    reviews = demo("reviews")
    path = write_jsonl(tmp_path / "reviews.jsonl", reviews + reviews[:3] + [reviews[7]])
    loaded = load_records(path)
    assert loaded.to_list() == load_records(DEMO / "reviews.jsonl").to_list()
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [f"{path}: dropped 4 exact duplicate records (same review_id and content)"]


@pytest.mark.parametrize("kind, id_field, row", [
    ("meta_review", "meta_review_id", {"meta_review_id": "m1", "paper_id": "p1", "source": "human",
                                       "text": "The reviewers agree: accept."}),
    ("rebuttal", "rebuttal_id", {"rebuttal_id": "b1", "paper_id": "p1", "review_id": "r1",
                                 "text": "We added the ablation of Table 3."}),
])
def test_every_record_kind_has_the_policy(tmp_path, kind, id_field, row):
    path = write_jsonl(tmp_path / f"{kind}.jsonl", [row, row, {**row, "text": "Another text."}])
    with pytest.raises(RecordError, match=rf"{kind}.jsonl: field '{id_field}': 1 id repeats with different "
                                          rf"content: {row[id_field]}$"):
        load_records(path, kind)
    assert len(load_records(write_jsonl(tmp_path / "twice.jsonl", [row, row]), kind)) == 1


def test_variants_share_their_original_id_and_are_told_apart_by_kind_and_seed(tmp_path):
    papers, variants = demo("papers"), demo("critical_papers")
    reseeded = [{**v, "text": v["text"] + " (seed 1)", "perturbation": {**v["perturbation"], "seed": 1}}
                for v in variants]
    path = write_jsonl(tmp_path / "papers.jsonl", papers + variants + reseeded)
    assert len(load_records(path, "paper")) == 24
    clash = {**variants[2], "text": "Another edit of the same kind and seed."}
    write_jsonl(path, papers + variants + [clash])
    edit = variants[2]["perturbation"]
    with pytest.raises(RecordError, match=rf"1 id repeats with different content: {variants[2]['paper_id']} "
                                          rf"\(perturbation {edit['kind']}, seed {edit['seed']}\)$"):
        load_records(path, "paper")


def test_repeats_are_found_from_the_ids_and_only_colliding_rows_are_compared():
    compared = []

    class Rows(list):
        def __getitem__(self, position):
            compared.append(position)
            return super().__getitem__(position)

    rows = Rows({"id": f"r{i}", "text": f"text {i}"} for i in range(1000))
    rows.append({"id": "r7", "text": "text 7"})
    rows.append({"id": "r9", "text": "other"})
    repeats = find_repeats(rows, lambda row: row["id"])
    assert (repeats.conflicting, repeats.exact) == (["r9"], [1000])
    assert sorted(compared) == [7, 9, 1000, 1001]
    assert record_repeats(load_records(DEMO / "reviews.jsonl").to_list(), "review").exact == []


def test_an_input_without_records_is_an_error_unless_allowed(tmp_path):
    blank = tmp_path / "reviews.jsonl"
    blank.write_text("\n\n")
    with pytest.raises(RecordError, match=rf"^{blank}: empty: no records$"):
        load_records(blank)
    assert len(load_records(blank, allow_empty=True)) == 0
    rows = pa.Table.from_pylist(demo("reviews")).slice(0, 0)  # the columns, no row
    empty = tmp_path / "reviews.parquet"
    pq.write_table(rows, empty)
    with pytest.raises(RecordError, match=rf"^{empty}: holds no records$"):
        load_records(empty)
    allowed = load_records(empty, allow_empty=True)
    assert len(allowed) == 0 and allowed.features == load_records(DEMO / "reviews.jsonl").features
