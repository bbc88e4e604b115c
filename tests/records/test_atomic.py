"""Final files are replaced whole: a reader never sees half a file, and a write that fails mid-way
leaves the previous file byte for byte and no temporary file behind."""

from pathlib import Path

import pytest
from datasets import Dataset

from praib.records import coerce_record, load_records, records_to_dataset, save_records
from praib.records import atomic
from praib.records.atomic import foreign_entries, replace_atomically, replace_folder, write_text_atomically


def reviews(*texts):
    return records_to_dataset([coerce_record({"review_id": f"r{i}", "paper_id": "p1", "source": "human", "text": text},
                                             "review", f"review {i}") for i, text in enumerate(texts)], "review")


def tree(path: Path) -> dict:
    """Every file under ``path`` (or ``path`` itself) with its bytes."""
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {str(f.relative_to(path)): f.read_bytes() for f in sorted(path.rglob("*")) if f.is_file()}


WRITERS = {"out.jsonl": "to_json", "out.parquet": "to_parquet", "saved": "save_to_disk"}


def write_half_then_fail(failure, directory):
    """A writer that leaves half a file (or a directory with half a file) at its path, then fails."""
    def writer(self, path, *args, **kwargs):
        target = Path(path)
        if directory:
            target.mkdir(exist_ok=True)
            target = target / "data-00000-of-00001.arrow"
        target.write_bytes(b'{"review_id": "r0", "paper_id": "p1", "text": "half a rec')
        raise failure
    return writer


@pytest.mark.parametrize("name", WRITERS)
@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()],
                         ids=["disk-full", "ctrl-c"])
def test_a_write_that_fails_midway_leaves_the_old_output_and_no_temporary_file(tmp_path, monkeypatch, name,
                                                                                 failure):
    destination = tmp_path / name
    save_records(reviews("the first run's review"), destination)
    before = tree(destination)
    monkeypatch.setattr(Dataset, WRITERS[name], write_half_then_fail(failure, directory=name == "saved"))
    with pytest.raises(type(failure)):
        save_records(reviews("a second run's review", "and another"), destination)
    assert tree(destination) == before
    assert [p.name for p in tmp_path.iterdir()] == [name]
    monkeypatch.undo()
    assert load_records(destination)["text"] == ["the first run's review"]


@pytest.mark.parametrize("name", WRITERS)
def test_the_output_keeps_its_old_content_until_the_new_one_is_whole(tmp_path, monkeypatch, name):
    destination = tmp_path / name
    save_records(reviews("old"), destination)
    old = tree(destination)
    seen_while_writing = []
    real_writer = getattr(Dataset, WRITERS[name])

    def observed(self, path, *args, **kwargs):
        result = real_writer(self, path, *args, **kwargs)
        seen_while_writing.append(tree(destination))
        return result

    monkeypatch.setattr(Dataset, WRITERS[name], observed)
    save_records(reviews("new", "newer"), destination)
    assert seen_while_writing == [old]
    assert load_records(destination)["text"] == ["new", "newer"]
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_a_saved_dataset_directory_is_replaced_not_merged(tmp_path):
    destination = tmp_path / "saved"
    save_records(reviews("a", "b", "c"), destination)
    (destination / "stray.arrow").write_bytes(b"left by an older datasets version")
    save_records(reviews("d"), destination)
    assert "stray.arrow" not in tree(destination)
    assert load_records(destination)["text"] == ["d"]
    assert [p.name for p in tmp_path.iterdir()] == ["saved"]


def test_write_text_atomically_creates_the_folder_and_replaces_the_file(tmp_path):
    path = tmp_path / "results" / "run.json"
    write_text_atomically(path, "{}\n")
    write_text_atomically(path, '{"seed": 0}\n')
    assert path.read_text(encoding="utf-8") == '{"seed": 0}\n'
    assert [p.name for p in path.parent.iterdir()] == ["run.json"]


def test_an_open_reader_keeps_reading_the_file_it_opened(tmp_path):
    path = tmp_path / "report.html"
    write_text_atomically(path, "old report\n")
    with path.open(encoding="utf-8") as reader:
        write_text_atomically(path, "new report\n")
        assert reader.read() == "old report\n"
    assert path.read_text(encoding="utf-8") == "new report\n"


def test_a_block_that_writes_nothing_fails_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "results.parquet"
    path.write_bytes(b"old")
    with pytest.raises(FileNotFoundError):
        with replace_atomically(path):
            pass
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["results.parquet"]


RESULTS = ("results.jsonl", "details/*.json")


def results_folder(path: Path) -> Path:
    (path / "details").mkdir(parents=True)
    (path / "results.jsonl").write_text("old\n")
    (path / "details" / "model-a.json").write_text("{}")
    (path / "details" / "notes.md").write_text("mine")
    (path / "figures").mkdir()
    (path / "figures" / "plot.png").write_bytes(b"png")
    return path


def test_foreign_entries_are_the_files_no_pattern_names_and_folders_where_none_can_lie(tmp_path):
    folder = results_folder(tmp_path / "results")
    assert [str(e) for e in foreign_entries(folder, RESULTS)] == ["details/notes.md", "figures"]
    assert foreign_entries(tmp_path / "absent", RESULTS) == []


def test_a_folder_block_that_fails_leaves_the_old_folder_and_no_temporary_one(tmp_path):
    folder = results_folder(tmp_path / "results")
    before = tree(folder)
    with pytest.raises(KeyboardInterrupt):
        with replace_folder(folder, RESULTS) as new:
            (new / "results.jsonl").write_text("half")
            raise KeyboardInterrupt
    assert tree(folder) == before
    assert [p.name for p in tmp_path.iterdir()] == ["results"]


def test_a_swap_that_fails_puts_the_other_files_back(tmp_path, monkeypatch):
    folder = results_folder(tmp_path / "results")
    before = tree(folder)

    def refuse(new, destination):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(atomic, "_swap_directory", refuse)
    with pytest.raises(OSError):
        with replace_folder(folder, RESULTS) as new:
            (new / "results.jsonl").write_text("new\n")
    assert tree(folder) == before
    assert [p.name for p in tmp_path.iterdir()] == ["results"]
