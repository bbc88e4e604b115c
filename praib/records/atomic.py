"""Final files appear whole or not at all: written under a temporary name beside the destination,
then renamed into place.

A reader of the destination sees the previous file or the new one, never half of one, and a write
that fails (an exception, Ctrl-C) leaves the previous file as it was and removes the temporary one.
A file is swapped in by one atomic rename. A directory (a saved dataset) is swapped in by two: the
old one is moved aside, the new one into place, and the old one removed; between the two renames
the destination is briefly absent. Only a killed process leaves its temporary ``.<name>.*.tmp`` behind.
"""

from __future__ import annotations

import os
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def replace_atomically(destination: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``destination`` (its folder created) for the block to write a
    file or a directory at; when the block succeeds, that takes ``destination``'s place."""
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    temporary = _sibling(destination, "tmp")
    try:
        yield temporary
        if temporary.is_dir():
            _swap_directory(temporary, destination)
        else:
            # Flushed before the rename, so that a power cut cannot leave the new name on empty data.
            with temporary.open("rb+") as handle:
                os.fsync(handle.fileno())
            os.replace(temporary, destination)
    except BaseException:
        _remove(temporary)
        raise


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` through :func:`replace_atomically`."""
    with replace_atomically(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def _sibling(path: Path, kind: str) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.{kind}")


def _swap_directory(new: Path, destination: Path) -> None:
    if not os.path.lexists(destination):
        os.replace(new, destination)
        return
    old = _sibling(destination, "old")
    os.replace(destination, old)
    try:
        os.replace(new, destination)
    except BaseException:
        os.replace(old, destination)
        raise
    _remove(old)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        path.unlink()
