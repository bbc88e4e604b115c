"""Final files are replaced whole: a reader never sees half a file, and a write that fails mid-way
leaves the previous file byte for byte and no temporary file behind."""

import errno
import json
from pathlib import Path, PurePosixPath

import pytest
from datasets import Dataset

from praib.records import OutputWriteError, coerce_record, load_records, records_to_dataset, save_records
from praib.records import atomic
from praib.records.atomic import (RECORD, OutputClashError, ownership, replace_atomically, replace_folder,
                                  write_text_atomically)


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


def test_a_saved_dataset_directory_is_replaced_not_merged_and_keeps_a_file_praib_did_not_write(tmp_path):
    destination = tmp_path / "saved"
    save_records(reviews("a", "b", "c"), destination)
    (destination / "stray.arrow").write_bytes(b"a file of the user's")
    save_records(reviews("d"), destination)
    assert tree(destination)["stray.arrow"] == b"a file of the user's"
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


def write_folder(folder: Path, files: dict[str, str]) -> None:
    with replace_folder(folder) as new:
        for name, text in files.items():
            (new / name).parent.mkdir(parents=True, exist_ok=True)
            (new / name).write_text(text, encoding="utf-8")


def recorded(folder: Path) -> list[str]:
    return sorted(json.loads((folder / RECORD).read_text(encoding="utf-8"))["files"])


def test_a_rewrite_removes_the_files_praib_wrote_and_keeps_those_it_did_not_or_that_changed(tmp_path):
    folder = tmp_path / "results"
    write_folder(folder, {"results.jsonl": "old\n", "details/a.json": "{}", "details/b.json": "{}",
                          "manifests/b.json": "{}"})
    (folder / "details" / "notes.md").write_text("mine")
    (folder / "details" / "b.json").write_text('{"edited": "by the user"}')
    (folder / "figures").mkdir()
    (folder / "figures" / "plot.png").write_bytes(b"png")
    held = ownership(folder)
    assert held.recorded and sorted(held.praib) == ["details/a.json", "manifests/b.json", "results.jsonl"]
    assert [str(entry) for entry in held.users] == ["details/b.json", "details/notes.md", "figures"]

    write_folder(folder, {"results.jsonl": "new\n", "details/a.json": '{"new": 1}'})
    assert tree(folder) == {RECORD: (folder / RECORD).read_bytes(), "results.jsonl": b"new\n",
                            "details/a.json": b'{"new": 1}', "details/b.json": b'{"edited": "by the user"}',
                            "details/notes.md": b"mine", "figures/plot.png": b"png"}
    assert not (folder / "manifests").exists()  # emptied of praib's files, so removed
    assert recorded(folder) == ["details/a.json", "results.jsonl"]
    assert [p.name for p in tmp_path.iterdir()] == ["results"]


def test_a_folder_without_a_record_is_all_the_users_and_a_clash_changes_nothing(tmp_path):
    folder = tmp_path / "results"
    (folder / "details").mkdir(parents=True)
    (folder / "details" / "model-a.json").write_text("the user's")
    (folder / "results.jsonl").write_text("the user's too")
    before = tree(folder)
    assert ownership(folder) == atomic.Ownership({}, [PurePosixPath("details"), PurePosixPath("results.jsonl")],
                                                 False)
    write_folder(folder, {"details/model-b.json": "{}"})
    assert tree(folder) == {**before, "details/model-b.json": b"{}", RECORD: (folder / RECORD).read_bytes()}

    with pytest.raises(OutputClashError, match=r"results/results.jsonl: a file of yours"):
        write_folder(folder, {"results.jsonl": "new", "details/model-b.json": "{}"})
    assert tree(folder) == {**before, "details/model-b.json": b"{}", RECORD: (folder / RECORD).read_bytes()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_a_record_naming_files_outside_its_folder_is_not_followed(tmp_path):
    folder = tmp_path / "results"
    write_folder(folder, {"results.jsonl": "old"})
    outside = tmp_path / "thesis.tex"
    outside.write_text("mine")
    record = json.loads((folder / RECORD).read_text())
    digest = atomic.file_digest(outside)
    record["files"].update({"../thesis.tex": digest, str(outside): digest})
    (folder / RECORD).write_text(json.dumps(record))
    write_folder(folder, {"results.jsonl": "new"})
    assert outside.read_text() == "mine"


def test_a_folder_block_that_fails_leaves_the_old_folder_and_no_temporary_one(tmp_path):
    folder = tmp_path / "results"
    write_folder(folder, {"results.jsonl": "old"})
    (folder / "notes.md").write_text("mine")
    before = tree(folder)
    with pytest.raises(KeyboardInterrupt):
        with replace_folder(folder) as new:
            (new / "results.jsonl").write_text("half")
            raise KeyboardInterrupt
    assert tree(folder) == before
    assert [p.name for p in tmp_path.iterdir()] == ["results"]


def test_a_symbolic_link_is_written_through_to_its_target(tmp_path):
    (tmp_path / "real").mkdir()
    link = tmp_path / "run.json"
    link.symlink_to(tmp_path / "real" / "run.json")  # dangling until written
    write_text_atomically(link, "{}\n")
    write_text_atomically(link, '{"seed": 1}\n')
    assert link.is_symlink() and (tmp_path / "real" / "run.json").read_text() == '{"seed": 1}\n'

    folder_link = tmp_path / "results"
    folder_link.symlink_to(tmp_path / "real" / "results", target_is_directory=True)
    write_folder(folder_link, {"results.jsonl": "old", "details/a.json": "{}"})
    write_folder(folder_link, {"results.jsonl": "new"})
    assert folder_link.is_symlink()
    assert tree(tmp_path / "real" / "results") == {"results.jsonl": b"new",
                                                   RECORD: (folder_link / RECORD).read_bytes()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["real", "results", "run.json"]


def test_a_refused_write_in_a_folder_names_the_users_file_not_the_staging_one(tmp_path, monkeypatch):
    out = tmp_path / "records"
    write_folder(out, {"reviews.jsonl": "old"})

    def disk_full(self, path, **options):
        raise OSError(errno.ENOSPC, "No space left on device")  # as the system says it: no file named

    monkeypatch.setattr(Dataset, "to_json", disk_full)
    with pytest.raises(OutputWriteError) as full:
        with replace_folder(out) as folder:
            save_records(reviews("new"), folder / "papers.jsonl")
    assert str(full.value) == f"cannot write {out / 'papers.jsonl'}: No space left on device"
    with pytest.raises(OutputWriteError) as refused:
        with replace_folder(out) as folder:
            raise PermissionError(errno.EACCES, "Permission denied", str(folder / "data" / "x.parquet"))
    assert str(refused.value) == f"cannot write {out / 'data' / 'x.parquet'}: Permission denied"
    assert tree(out).keys() == {"reviews.jsonl", RECORD} and (out / "reviews.jsonl").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records"]


@pytest.mark.parametrize("error", [FileNotFoundError(errno.ENOENT, "No such file or directory", "/data/in.jsonl"),
                                   PermissionError(errno.EACCES, "Permission denied", "/data/in.jsonl"),
                                   ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")],
                         ids=["missing input", "unreadable input", "refused connection"])
def test_an_error_that_is_not_about_the_output_stays_as_it_is(tmp_path, error):
    for replacing in (replace_folder(tmp_path / "out"), replace_atomically(tmp_path / "out.json")):
        with pytest.raises(type(error)) as raised:
            with replacing:
                raise error
        assert raised.value is error
