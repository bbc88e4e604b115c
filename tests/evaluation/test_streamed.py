"""Streamed evaluation (issue 19): however the inputs are cut (batches, worker processes, shards on
other machines, Ray Data), the result is the one of a single pass over all records in memory."""

import json
import re
import tempfile
from importlib import resources

import numpy as np
import pytest
from click.testing import CliRunner

from praib.cli.main import main
from praib.evaluation.evaluate import evaluate_reviews
from praib.evaluation.partial import Partial
from praib.evaluation.streamed import Inputs, fold, fold_shards, parse_shard
from praib.records import RecordError, load_records
from praib.records.atomic import RECORD

DEMO = str(resources.files("praib") / "data/demo/reviews.jsonl")


def in_memory(reviews: str, reference: str | None = None, **options) -> dict:
    loaded = load_records(reviews, "review")
    return evaluate_reviews(loaded, load_records(reference, "review") if reference else None, progress=False,
                            workers=1, **options).to_dict()


def streamed(inputs: Inputs, **options) -> dict:
    from praib.evaluation.evaluate import result_of

    return result_of(fold_shards(inputs, **options)).to_dict()


@pytest.fixture(scope="module")
def demo_result():
    return in_memory(DEMO)


@pytest.mark.parametrize("workers,batch_rows", [(1, 4096), (1, 7), (2, 5), (3, 4)])
def test_any_cut_of_the_demo_gives_the_in_memory_result(demo_result, workers, batch_rows):
    assert streamed(Inputs(DEMO, batch_rows=batch_rows), workers=workers) == demo_result


def test_a_separate_reference_and_another_grouping_stream_the_same(tmp_path):
    rows = [json.loads(line) for line in open(DEMO)]
    humans, models = tmp_path / "humans.jsonl", tmp_path / "models.jsonl"
    humans.write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] == "human"))
    models.write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] != "human"))
    expected = in_memory(str(models), str(humans), group_by=["model", "venue"], scale="generic")
    inputs = Inputs(str(models), str(humans), group_by=("model", "venue"), scale="generic", batch_rows=6)
    assert streamed(inputs, workers=2) == expected
    assert expected["n_reference_reviews"] == 26 and len(expected["groups"]) == 5  # the reference and 2 x 2


def test_shards_saved_loaded_and_merged_in_any_order_give_the_one_pass_partial(tmp_path, demo_result):
    from praib.evaluation.evaluate import result_of

    inputs = Inputs(DEMO, batch_rows=6)
    paths = []
    for index in (2, 0, 1):
        paths.append(tmp_path / f"part{index}.npz")
        fold(inputs, (index, 3)).save(paths[-1])
    merged = Partial.load(paths[0])
    for path in paths[1:]:
        merged.merge(Partial.from_bytes(Partial.load(path).to_bytes()))
    assert merged.sizes() == (58, 26)  # the input's own humans are its reference
    assert result_of(merged).to_dict() == demo_result


def test_a_partial_is_saved_as_one_array_per_column_and_one_saved_by_chunk_still_loads(tmp_path, demo_result):
    """A saved partial holds each column once (its chunks one after another): it loads at once, where one array
    per chunk and column took half a second at a million reviews. A partial of earlier versions (format 2, each
    chunk's arrays apart, written here as they wrote it) loads to the same result."""
    from praib.evaluation.evaluate import result_of
    from praib.evaluation.partial import _ARRAYS

    partial = fold(Inputs(DEMO, batch_rows=5))
    saved = tmp_path / "part.npz"
    partial.save(saved)
    with np.load(saved, allow_pickle=False) as stored:
        assert sorted(stored.files) == sorted([*_ARRAYS, "header"])
    header = json.loads(np.load(saved)["header"].tobytes())
    chunks = [chunk for key in partial.groups for chunk in partial.groups[key]]
    assert len(chunks) > 10 and header["format"] == 3
    old = {f"{n}.{name}": getattr(chunk, name) for n, chunk in enumerate(chunks) for name in _ARRAYS}
    header.update(format=2, chunks=[[owner, batch, human] for owner, batch, human, _ in header["chunks"]])
    old["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    by_chunk = tmp_path / "by-chunk.npz"
    np.savez(by_chunk, **old)
    for path in (saved, by_chunk):
        loaded = Partial.load(path)
        assert [c.counts.dtype for k in loaded.groups for c in loaded.groups[k]] == [c.counts.dtype for c in chunks]
        assert result_of(loaded).to_dict() == demo_result


def test_a_batch_merged_twice_or_partials_of_other_evaluations_are_refused():
    inputs = Inputs(DEMO, batch_rows=10)
    first = fold(inputs, (0, 2))
    with pytest.raises(ValueError, match="batch 0 of the input: shards must not overlap"):
        first.merge(fold(inputs, (0, 2)))
    with pytest.raises(ValueError, match="different evaluations"):
        first.merge(fold(Inputs(DEMO, batch_rows=10, scale="generic"), (1, 2)))


def test_a_shard_is_i_of_n():
    assert parse_shard("2/4") == (2, 4)
    for text in ("4/4", "-1/4", "1", "a/b", "1/0"):
        with pytest.raises(ValueError, match="shard"):
            parse_shard(text)


def test_a_bad_record_in_a_worker_process_is_the_one_line_error_of_one_process(tmp_path, monkeypatch):
    rows = [json.loads(line) for line in open(DEMO)]
    rows[40]["confidence"] = "very"
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    handed_over = tmp_path / "temporary"
    handed_over.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(handed_over))  # where the workers hand their partials back
    with pytest.raises(RecordError, match=r"reviews.jsonl: line 41: field 'confidence'"):
        fold_shards(Inputs(str(path), batch_rows=8), workers=2)
    assert list(handed_over.iterdir()) == []  # the other worker's partial too is gone
    fold_shards(Inputs(DEMO, batch_rows=8), workers=2)
    assert list(handed_over.iterdir()) == []


def test_an_empty_reference_is_named(tmp_path):
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n")
    with pytest.raises(RecordError, match="blank.jsonl: empty: no records"):
        fold_shards(Inputs(DEMO, str(blank)), workers=2)


def run(args):
    return CliRunner().invoke(main, args)


def test_evaluate_shards_on_the_command_line_merge_into_the_single_run(tmp_path):
    single = tmp_path / "single.json"
    assert run(["evaluate", "--demo", "--no-progress", "-o", str(single)]).exit_code == 0
    parts = []
    for index in range(3):
        parts.append(str(tmp_path / f"part{index}.npz"))
        result = run(["evaluate", DEMO, "--shard", f"{index}/3", "--batch-rows", "8", "-o", parts[-1]])
        assert result.exit_code == 0, result.output
        assert result.output.startswith(f"shard {index}/3: ") and "praib evaluate merge" in result.output
    merged = tmp_path / "merged.json"
    result = run(["evaluate", "merge", *parts, "-o", str(merged)])
    assert result.exit_code == 0, result.output
    assert "human (reference)" in result.output
    without_labels = [{k: v for k, v in json.loads(path.read_text()).items() if k != "input"}
                      for path in (single, merged)]
    assert without_labels[0] == without_labels[1]


def test_merge_and_shard_errors_are_one_line(tmp_path):
    part = tmp_path / "part.npz"
    assert run(["evaluate", DEMO, "--shard", "0/2", "-o", str(part)]).exit_code == 0
    result = run(["evaluate", "merge", str(part), str(part)])
    assert result.exit_code == 1 and result.output.startswith("Error: ") and "shards must not overlap" in result.output
    assert len(result.output.strip().splitlines()) == 1
    result = run(["evaluate", "merge", DEMO])
    assert result.exit_code == 1
    assert result.output.strip().startswith(f"Error: {DEMO}: not a partial result of `praib evaluate --shard`")
    result = run(["evaluate", DEMO, "--shard", "0/2"])
    assert result.exit_code == 2 and "give --output PART.npz" in result.output
    result = run(["evaluate", DEMO, "--shard", "2/2", "-o", str(part)])
    assert result.exit_code == 1 and "I must be at least 0 and below N" in result.output
    # A shard of a small input can hold no batch: merge says so when no shard holds a review.
    empty = tmp_path / "empty.npz"
    assert run(["evaluate", DEMO, "--shard", "5/6", "-o", str(empty)]).exit_code == 0
    result = run(["evaluate", "merge", str(empty)])
    assert result.exit_code == 1 and "hold no review" in result.output


def test_a_partial_holds_compact_columns_not_texts(tmp_path):
    rows = [json.loads(line) for line in open(DEMO)]
    many = tmp_path / "many.jsonl"
    with open(many, "w") as handle:
        for copy in range(50):
            for row in rows:
                copied = {"paper_id": f"{row['paper_id']}-{copy}", "review_id": f"{row['review_id']}-{copy}"}
                handle.write(json.dumps({**row, **copied}) + "\n")
    stored = tmp_path / "part.npz"
    partial = fold(Inputs(str(many)))
    partial.save(stored)
    with np.load(stored, allow_pickle=False) as arrays:
        assert all(arrays[name].dtype != object for name in arrays.files)
    # a review's columns take about 85 bytes, its human reviews kept once (in their groups, not again as
    # the reference); its texts alone take 1.2 KB
    assert partial.reference == [] and partial.sizes() == (50 * len(rows), 50 * sum(r["source"] == "human" for r in rows))
    assert stored.stat().st_size / (50 * len(rows)) < 110


def test_the_reference_laid_out_from_its_groups_keeps_the_input_order(demo_result, tmp_path):
    """Grouped by venue and year, the human reviews of a batch fall into several groups; the reference gathered
    from them is in input order, so the numbers are the in-memory evaluation's to the last bit."""
    expected = in_memory(DEMO, group_by=["venue", "year"])
    for workers, batch_rows in ((1, 4096), (2, 5)):
        partial = fold_shards(Inputs(DEMO, group_by=("venue", "year"), batch_rows=batch_rows), workers=workers)
        humans = [json.loads(line) for line in open(DEMO)]
        humans = [r["paper_id"] for r in humans if r["source"] == "human"]
        columns = partial.columns(partial.reference_chunks())
        assert [columns.paper_ids[paper] for paper in columns.paper.tolist()] == humans
        assert len({key[1:] for key in partial.groups if key[0] == "human"}) > 1  # not vacuous
        assert streamed(Inputs(DEMO, group_by=("venue", "year"), batch_rows=batch_rows), workers=workers) == expected


def test_ray_data_folds_the_shards_to_the_single_result(demo_result):
    ray = pytest.importorskip("ray", reason="needs Ray Data: pip install 'praib[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert streamed(Inputs(DEMO, batch_rows=5), workers=3, engine="ray") == demo_result
    finally:
        ray.shutdown()


def read_parts(folder) -> list[dict]:
    import pyarrow.parquet as pq

    return sorted(pq.read_table(folder).to_pylist(), key=lambda row: row["review_id"])


def test_per_review_rows_are_the_same_however_the_input_is_cut(tmp_path):
    one, three = tmp_path / "one", tmp_path / "three"
    fold_shards(Inputs(DEMO, batch_rows=5), workers=1, per_review=one)
    fold_shards(Inputs(DEMO, batch_rows=5), workers=3, per_review=three)
    assert sorted(p.name for p in three.iterdir() if p.name != RECORD) == [f"part-0000{i}-of-00003.parquet"
                                                                             for i in range(3)]
    rows = read_parts(one)
    assert read_parts(three) == rows
    records = {r["review_id"]: r for r in map(json.loads, open(DEMO))}
    assert [r["review_id"] for r in rows] == sorted(records)
    human = next(r for r in rows if r["review_id"] == "demo-iclr25-01-R1")
    given = records["demo-iclr25-01-R1"]
    assert (human["rating"], human["confidence"], human["parse_status"]) == (given["rating"], given["confidence"],
                                                                           "given")
    # A model review is parsed from its text ("**Decision:** 8: accept, good paper ... **Confidence:** 4: ...").
    model = next(r for r in rows if r["review_id"] == "demo-iclr25-01-demo-model-a-extended")
    assert (model["rating"], model["confidence"], model["parse_status"]) == (8, 4, "ok")
    assert isinstance(model["tkc"], int) and model["tkc"] > 50 and 0 < model["ttr"] <= 1


def test_per_review_refuses_a_folder_of_another_cut_and_leaves_no_part_of_a_failed_run(tmp_path):
    folder = tmp_path / "rows"
    fold_shards(Inputs(DEMO), workers=2, per_review=folder)
    with pytest.raises(ValueError, match=r"holds parts of another evaluation \(part-00000-of-00002.parquet"):
        fold_shards(Inputs(DEMO), workers=3, per_review=folder)
    broken = tmp_path / "broken.jsonl"
    lines = open(DEMO).read().splitlines()
    broken.write_text("\n".join(lines[:20] + ['{"review_id": "x", "rating": "high"}'] + lines[20:]) + "\n")
    with pytest.raises(RecordError, match="line 21"):
        fold(Inputs(str(broken), batch_rows=10), per_review=tmp_path / "failed")
    assert list((tmp_path / "failed").iterdir()) == []
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(RecordError, match="empty"):
        fold_shards(Inputs(str(empty)), workers=2, per_review=tmp_path / "empty-rows")
    assert list((tmp_path / "empty-rows").iterdir()) == []


def test_cli_per_review_with_shards(tmp_path):
    runner = CliRunner()
    for index in range(2):
        result = runner.invoke(main, ["evaluate", DEMO, "--shard", f"{index}/2", "--batch-rows", "10",
                                      "--per-review", str(tmp_path / "rows"), "-o", str(tmp_path / f"p{index}.npz")])
        assert result.exit_code == 0, result.output
    assert len(read_parts(tmp_path / "rows")) == 58
    result = runner.invoke(main, ["evaluate", DEMO, "--judge", "some/model", "--shard", "0/2", "-o", "p.npz"])
    assert result.exit_code == 2 and "--shard and --engine are for evaluations without --judge" in result.output


def test_cli_evaluate_of_ten_reviews_imports_no_heavy_library(tmp_path):
    import subprocess
    import sys

    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text("".join(open(DEMO).readlines()[:10]))
    heavy = ("torch", "transformers", "evaluate", "sentence_transformers", "openreview", "vllm", "ray")
    script = ("import sys\nfrom praib.cli.main import main\n"
              f"main(['evaluate', {str(reviews)!r}, '--no-progress', '--workers', '1'], standalone_mode=False)\n"
              f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert "human (reference)" in done.stdout


def test_what_the_reader_notes_is_said_once_for_the_merged_shards(tmp_path, caplog):
    """Scores given with a label ("8: accept") and fields the schema does not know are counted over the whole
    input in one warning each, however many shards, processes or saved partials read it (issue 26, item 8)."""
    from praib.evaluation.evaluate import result_of

    rows = [json.loads(line) for line in open(DEMO)]
    labelled = 0
    for row in rows:
        row["mood"] = "calm"
        if row.get("rating") is not None:
            row["rating"] = f"{row['rating']}: as the form words it"
            labelled += 1
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    inputs = Inputs(str(path), batch_rows=5)
    parts = [tmp_path / f"part{index}.npz" for index in range(3)]
    for index, part in enumerate(parts):
        fold(inputs, (index, 3)).save(part)
    with caplog.at_level("WARNING"):
        for partial in (fold_shards(inputs, workers=2), Partial.merged(Partial.load(part) for part in parts)):
            caplog.clear()
            result_of(partial)
            said = [r.getMessage() for r in caplog.records]
            assert said[0] == f"{path}: ignored fields not in the review schema: mood" and len(said) == 2
            assert re.fullmatch(rf"{path}: read {labelled} score\(s\) given as text by their leading number, e\.g\. "
                                r"rating '(\d): as the form words it' as \1 \(the label after the number is not "
                                r"checked\)", said[1])
    assert labelled == 26


def test_the_layout_of_the_groups_collects_cycles_less_often_and_leaves_the_collector_as_it_was(monkeypatch):
    """The groups' layout makes lists and tuples of every review, none holding a cycle: result_of raises the
    collector's thresholds while it lays them out and puts them back after, also after an error."""
    import gc

    from praib.evaluation import evaluate
    from praib.evaluation.collector import FOLD_GC_THRESHOLDS

    partial, before, during = fold(Inputs(DEMO)), gc.get_threshold(), []
    laid_out = evaluate.group_entries

    def recording(*args, **kwargs):
        during.append(gc.get_threshold())
        return laid_out(*args, **kwargs)

    monkeypatch.setattr(evaluate, "group_entries", recording)
    evaluate.result_of(partial)
    assert during == [FOLD_GC_THRESHOLDS] != [before]
    assert gc.get_threshold() == before
    monkeypatch.setattr(evaluate, "group_entries", lambda *args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        evaluate.result_of(partial)
    assert gc.get_threshold() == before


def test_a_fold_collects_cycles_less_often_and_leaves_the_collector_as_it_was():
    """A batch's records hold no cycles: the fold raises the collector's thresholds while it runs (a tenth of its
    time went to walking a batch's objects again and again), and puts them back after, also after an error."""
    import gc

    from praib.evaluation.collector import FOLD_GC_THRESHOLDS

    before = gc.get_threshold()
    during = []
    fold(Inputs(DEMO, batch_rows=10), progress=lambda n: during.append(gc.get_threshold()))
    assert during and set(during) == {FOLD_GC_THRESHOLDS} != {before}
    assert gc.get_threshold() == before
    with pytest.raises(RecordError):
        fold(Inputs(str(resources.files("praib") / "no-such-file.jsonl")))
    assert gc.get_threshold() == before
