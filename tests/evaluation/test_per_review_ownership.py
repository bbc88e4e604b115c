"""`praib evaluate --per-review DIR` writes into a folder by ownership, not by names (issue 26): the parts
praib wrote there (recorded with their digests) are replaced, a file of the user's named like a part, or a
part changed since, is refused and never deleted; shards that write one folder at once each record their
own part."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner, Result

from praib.cli.main import main
from praib.evaluation.per_review import remove_parts
from praib.records.atomic import RECORD, file_digest
from tests.paths import ROOT

DEMO = str(resources.files("praib") / "data/demo/reviews.jsonl")
MINE = b"my own table, saved under the name praib gives its first part"


def per_review(folder: Path, *options) -> Result:
    return CliRunner().invoke(main, ["evaluate", "--demo", "--workers", "1", "--per-review", str(folder),
                                     *map(str, options)])


def recorded(folder: Path) -> dict[str, str]:
    return json.loads((folder / RECORD).read_text())["files"]


def test_a_users_file_named_like_a_part_is_refused_and_kept(tmp_path):
    folder = tmp_path / "rows"
    folder.mkdir()
    (folder / "part-00000-of-00001.parquet").write_bytes(MINE)
    refused = per_review(folder)
    assert refused.exit_code == 1
    assert refused.output.splitlines()[-1] == (
        f"Error: --per-review {folder}: part-00000-of-00001.parquet is a file of yours (praib did not write it "
        "there, or it changed since) where this evaluation writes its part; praib keeps your files: move it away "
        "or choose another folder")
    assert (folder / "part-00000-of-00001.parquet").read_bytes() == MINE
    assert sorted(p.name for p in folder.iterdir()) == ["part-00000-of-00001.parquet"]


def test_praibs_own_part_is_replaced_and_a_changed_one_refused(tmp_path):
    folder = tmp_path / "rows"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    assert per_review(folder).exit_code == 0
    part = folder / "part-00000-of-00001.parquet"
    assert recorded(folder) == {part.name: file_digest(part)} and pq.read_table(part).num_rows == 58
    again = per_review(folder)
    assert again.exit_code == 0, again.output
    assert recorded(folder) == {part.name: file_digest(part)}
    with part.open("ab") as handle:  # the user adds to praib's part: it is theirs now
        handle.write(b"\n")
    changed = part.read_bytes()
    refused = per_review(folder)
    assert refused.exit_code == 1 and "part-00000-of-00001.parquet is a file of yours" in refused.output
    assert part.read_bytes() == changed and (folder / "notes.txt").read_text() == "mine"


def test_shards_writing_one_folder_at_once_each_record_their_part(tmp_path):
    folder = tmp_path / "rows"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    shards = [subprocess.Popen([sys.executable, "-m", "praib.cli.main", "evaluate", DEMO, "--shard", f"{index}/3",
                                "--batch-rows", "10", "--per-review", str(folder), "-o", str(tmp_path / f"{index}.npz")],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for index in range(3)]
    outputs = [shard.communicate(timeout=300) for shard in shards]
    assert [shard.returncode for shard in shards] == [0, 0, 0], outputs
    parts = sorted(folder.glob("part-*.parquet"))
    assert [p.name for p in parts] == [f"part-0000{i}-of-00003.parquet" for i in range(3)]
    assert recorded(folder) == {p.name: file_digest(p) for p in parts}
    assert sum(pq.read_table(p).num_rows for p in parts) == 58
    # no lock left; the record of the three partials, each shard's output file (docs/cli.md, "an output file")
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD, "0.npz", "1.npz", "2.npz", "rows"]


def test_removing_the_parts_of_an_empty_input_leaves_a_users_file(tmp_path):
    folder = tmp_path / "rows"
    assert per_review(folder, "--batch-rows", 10).exit_code == 0
    mine = folder / "part-00001-of-00002.parquet"  # named like a part, not written by praib
    mine.write_bytes(MINE)
    remove_parts(folder)
    assert sorted(p.name for p in folder.iterdir()) == [mine.name]
    assert mine.read_bytes() == MINE
