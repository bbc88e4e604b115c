"""A full disk under a command's output is one line naming the output, and the previous output stays whole
(issue 26, item 12): `evaluate --output` and `data build`, whose files are written through
praib.records.atomic. The disk is /dev/full, where every write fails with ENOSPC as on a full disk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from praib.records import atomic
from tests.paths import DEMO, ROOT
from tests.runs import invoke

pytestmark = pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="no /dev/full to fill a disk with")
FULL = "No space left on device"


def test_evaluate_output_on_a_full_disk_names_the_file_and_keeps_the_previous_one(tmp_path, monkeypatch):
    out = tmp_path / "results.json"
    out.write_text('{"mine": "the previous results"}\n')
    # The temporary file the results are written to (named without randomness here) is on the full disk.
    monkeypatch.setattr(atomic, "secrets", SimpleNamespace(token_hex=lambda n: "f" * 2 * n))
    temporary = tmp_path / f".{out.name}.{os.getpid()}-ffffffff.tmp"
    temporary.symlink_to("/dev/full")
    # --overwrite: the previous results are a file praib has no record of writing (docs/cli.md, "an output file")
    result = invoke(["evaluate", "--demo", "--workers", "1", "--no-progress", "--output", out, "--overwrite"])
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == f"Error: cannot write {out}: {FULL}"
    assert out.read_text() == '{"mine": "the previous results"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]
    assert Path("/dev/full").is_char_device()


# In a fresh interpreter: a Parquet write that fails on a full disk leaves this Python (3.11.7, with pyarrow)
# unable to parse code afterwards ("AST constructor recursion depth mismatch"), which would fail the session.
BUILD_ON_A_FULL_DISK = """
import sys
from datasets import Dataset
from praib.cli.main import main

to_parquet = Dataset.to_parquet
Dataset.to_parquet = lambda self, path, **options: to_parquet(self, sys.argv[1], **options)
main(sys.argv[2:])
"""


def test_data_build_on_a_full_disk_names_the_folder_and_keeps_the_previous_build(tmp_path):
    out = tmp_path / "dataset"
    assert invoke(["data", "build", "--reviews", DEMO / "reviews.jsonl", "-o", out]).exit_code == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    full = tmp_path / "full-disk"
    full.symlink_to("/dev/full")  # every Parquet file the build writes goes there
    result = subprocess.run([sys.executable, "-c", BUILD_ON_A_FULL_DISK, str(full), "data", "build", "--reviews",
                             str(DEMO / "reviews.jsonl"), "-o", str(out)], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == f"Error: cannot write {out}: {FULL}"
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dataset", "full-disk"]  # no staging folder left
    assert Path("/dev/full").is_char_device()
