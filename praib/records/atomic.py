"""Final files appear whole or not at all: written under a temporary name beside the destination,
then renamed into place.

A reader of the destination sees the previous file or the new one, never half of one, and a write
that fails (an exception, Ctrl-C) leaves the previous file as it was and removes the temporary one.
A file is swapped in by one atomic rename. A directory (a saved dataset) is swapped in by two: the
old one is moved aside, the new one into place, and the old one removed; between the two renames
the destination is briefly absent. Only a killed process leaves its temporary ``.<name>.*.tmp`` behind.

A command's output folder is written with :func:`replace_folder`, which knows the command's own files
by their names: a rerun leaves none of the earlier run's files behind, and moves whatever else the
folder holds into the new one rather than delete it.
"""

from __future__ import annotations

import os
import secrets
import shutil
from contextlib import contextmanager
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Iterator, Sequence


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


@contextmanager
def replace_folder(destination: str | Path, owned: Sequence[str]) -> Iterator[Path]:
    """Yield a new, empty folder beside ``destination`` for the block to write a command's files in; when
    the block succeeds, it takes ``destination``'s place whole. ``owned`` are the names of the files the
    command writes there, as glob patterns relative to the folder (``details/*.json``): the old folder's
    files that match them are gone with it, and its other entries (:func:`foreign_entries`) are moved
    into the new folder first. A block that fails leaves the old folder as it was."""
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    temporary = _sibling(destination, "tmp")
    temporary.mkdir()
    try:
        yield temporary
    except BaseException:
        _remove(temporary)
        raise
    moved: list[PurePosixPath] = []
    try:
        for entry in foreign_entries(destination, owned):
            target = temporary / entry
            if os.path.lexists(target):
                raise FileExistsError(f"{destination / entry}: the new output has an entry of that name too")
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(destination / entry, target)
            moved.append(entry)
        _swap_directory(temporary, destination)
    except BaseException:
        for entry in reversed(moved):
            os.replace(temporary / entry, destination / entry)
        _remove(temporary)
        raise


def foreign_entries(folder: str | Path, owned: Sequence[str]) -> list[PurePosixPath]:
    """The entries of ``folder`` that are not among the files ``owned`` (glob patterns, as for
    :func:`replace_folder`), relative to it: each other file, and each folder where no owned file can
    lie (as one entry, not file by file). Empty when ``folder`` is not a directory."""
    folder = Path(folder)
    if not folder.is_dir() or folder.is_symlink():
        return []
    patterns = [PurePosixPath(pattern).parts for pattern in owned]
    return list(_foreign(folder, PurePosixPath(), patterns))


def _foreign(folder: Path, relative: PurePosixPath, patterns: list[tuple[str, ...]]) -> Iterator[PurePosixPath]:
    for entry in sorted(folder.iterdir()):
        path = relative / entry.name
        if entry.is_dir() and not entry.is_symlink():
            if any(_leads_to(path.parts, pattern) for pattern in patterns):
                yield from _foreign(entry, path, patterns)
            else:
                yield path
        elif not any(_matches(path.parts, pattern) for pattern in patterns):
            yield path


def _matches(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(parts) == len(pattern) and all(map(fnmatchcase, parts, pattern))


def _leads_to(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    """Whether files matching ``pattern`` may lie inside the folder ``parts``."""
    return len(parts) < len(pattern) and _matches(parts, pattern[:len(parts)])


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
