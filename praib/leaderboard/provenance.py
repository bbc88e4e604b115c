"""How published results name their inputs: never by a path of the machine that ran them.

A Hub dataset id names itself; a local file or folder is named by its file name and a hash of its
content (``reviews.jsonl (sha256:1a2b3c4d5e6f7a8b)``), which anyone holding the same data can check
and which says nothing of where it lay.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from datasets import Dataset

from praib.leaderboard.submission import is_hub_id

_SHOWN_HEX = 16


def content_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, or of a folder's files (their relative paths and bytes, sorted by
    path; hidden entries left out)."""
    digest = hashlib.sha256()
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file()
                       and not any(part.startswith(".") for part in p.relative_to(path).parts))
        for file in files:
            digest.update(file.relative_to(path).as_posix().encode("utf-8") + b"\0")
            digest.update(hashlib.sha256(file.read_bytes()).digest())
    else:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def input_label(source: str | Path) -> str:
    """``source`` as published results name it: a Hub dataset id as it is, a local file or folder by its
    name and content hash."""
    path = Path(source)
    if is_hub_id(str(source)) or not path.exists():  # not a local input (e.g. records held in memory)
        return str(source)
    return f"{path.name}{'/' if path.is_dir() else ''} (sha256:{content_sha256(path)[:_SHOWN_HEX]})"


def records_sha256(reviews: Dataset) -> str:
    """A hash of a submission's records, whatever file format or row order they came in: the sorted
    canonical JSON lines of its rows."""
    lines = sorted(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str) for row in reviews.to_list())
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8") + b"\n")
    return digest.hexdigest()
