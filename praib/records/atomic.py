"""Final files appear whole or not at all, and an output folder keeps every file praib did not write.

A file is written under a temporary name beside the destination and renamed into place: a reader sees
the previous file or the new one, never half of one, and a write that fails (an exception, Ctrl-C)
leaves the previous file as it was and removes the temporary one. A destination that is a symbolic
link is written through: the file it points to is replaced and the link stays. Only a killed process
leaves its temporary ``.<name>.*.tmp`` behind.

A command's output folder is written with :func:`replace_folder`, which decides by ownership, not by
names. Each folder it writes holds :data:`RECORD`, the names and SHA-256 digests of the files praib
wrote there. A file that record does not list, or one whose content changed since, is the user's: it
is never moved, overwritten or deleted (:func:`ownership` tells the two apart). The new files are
written in a staging folder beside the destination, then moved in one by one, each by an atomic
rename; the old files the record lists are removed, and the new record is written last. The staging
folder holds a marker naming its destination, so that praib removes only staging folders of its own,
and, from the first move on, a journal of the moves: a run killed at any moment leaves the user's
files where they were, and the next replacement of the folder (or a command's check of it,
:func:`finish_interrupted`) finishes the moves, or removes a staging folder whose moves never began,
and says so in one line.

A command's output file (``-o FILE``) is judged by the same record, that of its folder: the command line
records the file once written (:func:`record_written` with ``outputs``) and replaces only a file that
record lists unchanged (:func:`written_by_praib`). Such files are listed apart from those of an output
folder, so that replacing the folder keeps them.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterator, Mapping

logger = logging.getLogger(__name__)

#: The ownership record of a folder praib wrote: what it wrote there, with the SHA-256 of each file.
RECORD = ".praib-written.json"
_MARKER, _JOURNAL = ".praib-staging.json", ".praib-journal.json"
_ABOUT = ("The files praib wrote in this folder, each with the SHA-256 of its content. praib replaces or "
          "removes only these, and only while unchanged: every other file here is yours.")


class OutputClashError(FileExistsError):
    """The new output has a file where the output folder holds one of the user's."""


@contextmanager
def replace_atomically(destination: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``destination`` (its folder created) for the block to write a
    file at; when the block succeeds, that file takes ``destination``'s place (or, when
    ``destination`` is a symbolic link, the place of the file it points to). A write the system refuses
    (a full disk, no permission) raises :class:`praib.records.schema.OutputWriteError` naming
    ``destination`` (:func:`output_error`)."""
    named, destination = Path(destination), Path(os.path.realpath(destination))
    temporary = destination.with_name(f".{destination.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        yield temporary
        # Flushed before the rename, so that a power cut cannot leave the new name on empty data.
        with temporary.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, destination)
    except BaseException as err:
        _remove(temporary)
        _raise_as_output_error(err, {temporary: named, destination: named})
        raise


#: The errors of a write that name no file: no space, over quota, too large, a read-only file system, the disk.
_REFUSED_WRITES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})


def _raise_as_output_error(err: BaseException, written: Mapping[Path, Path]) -> None:
    """Raise :func:`output_error` of ``err`` where it is another error; return where ``err`` stays as it is."""
    if isinstance(err, OSError) and (converted := output_error(err, written)) is not err:
        raise converted from err


def output_error(err: OSError, written: Mapping[Path, Path]) -> OSError:
    """``err`` as an :class:`praib.records.schema.OutputWriteError` (one line: ``cannot write FILE: why``)
    where it is the system refusing to write an output: an error that names one of the ``written`` paths,
    a file inside one of them or a folder above one, or one that names no file and says what a refused
    write says (:data:`_REFUSED_WRITES`: a write to a full disk names none); the file is named as the user
    named it, ``written`` mapping each path praib writes (a temporary one among them) to that name. Any
    other error (an input that cannot be read, a connection refused, a file the block did not write) is
    ``err`` itself."""
    from praib.records.schema import OutputWriteError

    if err.errno is None or err.errno == errno.ENOENT:
        return err
    why = err.strerror or os.strerror(err.errno)
    if not isinstance(err.filename, (str, os.PathLike)):
        if err.errno not in _REFUSED_WRITES:
            return err
        return OutputWriteError(err.errno, why, str(next(iter(written.values()))))
    path = Path(os.path.abspath(err.filename))
    for place, named in written.items():
        if path == place or place in path.parents:
            return OutputWriteError(err.errno, why, str(named / path.relative_to(place)))
        if path in place.parents:  # a folder on the way could not be made
            return OutputWriteError(err.errno, why, str(path))
    return err


def write_text_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` through :func:`replace_atomically`."""
    with replace_atomically(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


@dataclass(frozen=True)
class Ownership:
    """Who owns what a folder holds. ``praib``: the files its :data:`RECORD` lists, unchanged, with their
    digests; ``users``: every other entry, a folder that holds none of praib's files as one entry;
    ``recorded``: whether the folder has a record at all (a folder without one, written by another
    program or by a praib before the records, is all the user's); ``outputs``: those of ``praib`` that
    commands wrote as their output files (``-o FILE``), not as files of an output folder
    (:func:`record_written`)."""

    praib: dict[str, str]
    users: list[PurePosixPath]
    recorded: bool
    outputs: frozenset[str] = frozenset()

    @property
    def folders(self) -> dict[str, str]:
        """The files of ``praib`` that its output folders wrote: those a replacement of the folder replaces."""
        return {name: digest for name, digest in self.praib.items() if name not in self.outputs}


def ownership(folder: str | Path) -> Ownership:
    """What of ``folder`` (symbolic links followed) is praib's and what the user's; empty when it is
    not a folder."""
    folder = Path(os.path.realpath(folder))
    if not folder.is_dir():
        return Ownership({}, [], False)
    record = _read_sections(folder)
    listed = {**record[0], **record[1]} if record else {}
    praib = {name: digest for name, digest in listed.items() if file_digest(folder / name) == digest}
    holding = {str(parent) for name in praib for parent in PurePosixPath(name).parents}
    return Ownership(praib, list(_users(folder, PurePosixPath(), praib, holding)), record is not None,
                     frozenset(record[1]) & praib.keys() if record else frozenset())


def _users(folder: Path, relative: PurePosixPath, praib: dict[str, str], holding: set[str]):
    for entry in sorted(os.scandir(folder), key=lambda entry: entry.name):
        path = relative / entry.name
        if str(path) in (RECORD, RECORD_LOCK):
            continue
        if entry.is_dir(follow_symlinks=False) and str(path) in holding:
            yield from _users(Path(entry.path), path, praib, holding)
        elif str(path) not in praib:
            yield path


def written_by_praib(path: str | Path) -> bool:
    """Whether the file at ``path`` is one praib wrote there: its folder's record lists it with the digest
    of its content now."""
    path = Path(os.path.realpath(path))
    digest = (_read_record(path.parent) or {}).get(path.name)
    return digest is not None and digest == file_digest(path)


def record_written(folder: str | Path, written: Mapping[str, str | None], outputs: bool = False) -> None:
    """Merge ``written`` into the record of ``folder``: each name with the digest (:func:`file_digest`) of the
    file praib has just written there, or None for one praib has removed. ``outputs``: the files are
    commands' output files (``-o FILE``), listed apart from the files of the folder's own output (when it is
    one), so that a replacement of the folder (:func:`replace_folder`) keeps them and their entries, and a
    command reading the folder does not count them among its files. The other entries stay, so that
    processes that write files of one folder in turn each add their own; the caller holds the folder's lock
    (:func:`praib.records.locks.output_lock`) from reading what it replaces to this update. The update
    itself, a read, a merge and a write, holds the record's own lock (:data:`RECORD_LOCK`, waiting up to
    :data:`RECORD_WAIT` seconds for it): runs that write different files of one folder at the same time,
    each under its own output's lock, keep each other's entries. A record left empty is removed."""
    from praib.records.locks import output_lock

    folder = Path(os.path.realpath(folder))
    for name in written:
        if not _inside(name):
            raise ValueError(f"{name!r}: not a file name inside {folder}")
    with output_lock(folder / RECORD, wait=RECORD_WAIT):
        files, output_files = _read_sections(folder) or ({}, {})
        for name, digest in written.items():
            files.pop(name, None)
            output_files.pop(name, None)
            if digest is not None:
                (output_files if outputs else files)[name] = digest
        _write_record(folder, files, output_files)


def _write_record(folder: Path, files: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    """Write the record of ``folder`` (removed when it lists nothing); the caller holds its lock."""
    if files or outputs:
        _write_json(folder / RECORD, {"about": _ABOUT, "files": dict(files),
                                      **({"outputs": dict(outputs)} if outputs else {})})
    else:
        _remove(folder / RECORD)


#: The lock file of a folder's record (:func:`praib.records.locks.lock_path` of it), there only while an
#: update of the record holds it; never one of the user's files.
RECORD_LOCK = f"{RECORD}.lock"
#: How long an update of a record waits for another to finish (each holds the lock for a read and a write).
RECORD_WAIT = 60.0


@contextmanager
def replace_folder(destination: str | Path) -> Iterator[Path]:
    """Yield a new, empty folder for the block to write a command's files in; when the block succeeds,
    its files replace those praib wrote in ``destination`` (symbolic links followed) before, which
    keeps every file of the user's. Raises :class:`OutputClashError`, changing nothing, when the new
    output has a file where the user has one. A block that fails leaves ``destination`` as it was.
    Holds the destination's lock (:func:`praib.records.locks.output_lock`) throughout. A write the system
    refuses (a full disk, no permission), in the block or in the moves, raises
    :class:`praib.records.schema.OutputWriteError` naming the file in ``destination`` (:func:`output_error`)."""
    from praib.records.locks import output_lock

    named, destination = Path(destination), Path(os.path.realpath(destination))
    with output_lock(destination):
        finish_interrupted(destination)
        if os.path.lexists(destination) and not destination.is_dir():
            raise NotADirectoryError(f"{destination}: not a folder")
        staging = destination.with_name(f".{destination.name}.praib-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            staging.mkdir(parents=True)
            _write_json(staging / _MARKER, {"destination": destination.name, "pid": os.getpid()})
            yield staging
            _commit(staging, destination)
        except BaseException as err:
            if staging.is_dir() and not (staging / _JOURNAL).exists():  # with a journal, the next run finishes
                _remove(staging)
            _raise_as_output_error(err, {staging: named, destination: named})
            raise


def finish_interrupted(destination: str | Path) -> None:
    """Finish what a killed run left of a replacement of ``destination``, saying so in one line each: a
    staging folder of praib's beside it is moved in when its moves had begun, else removed. A
    temporary folder left by a praib before these records, which may hold the user's files, is named
    in a warning and left alone."""
    from praib.records.locks import output_lock

    destination = Path(os.path.realpath(destination))
    if not destination.parent.is_dir():
        return
    prefix = f".{destination.name}."
    with output_lock(destination):
        for entry in sorted(os.scandir(destination.parent), key=lambda entry: entry.name):
            if not entry.name.startswith(prefix) or not entry.is_dir(follow_symlinks=False):
                continue
            rest = entry.name[len(prefix):]
            if _STAGING.fullmatch(rest):
                _finish_staging(Path(entry.path), destination)
            elif _OLD_STAGING.fullmatch(rest) and entry.path not in _named:
                _named.add(entry.path)
                logger.warning("%s: a folder left by a praib run killed while it replaced %s (before praib kept "
                               "a record of its files); it may hold files of yours: look through it, then delete "
                               "it", entry.path, destination)


_STAGING = re.compile(r"praib-\d+-[0-9a-f]+")
# What replace_folder named its temporary folders before the records (`.NAME.PID-HEX.tmp` and `.old`).
_OLD_STAGING = re.compile(r"\d+-[0-9a-f]{8}\.(tmp|old)")
_named: set[str] = set()
_MARKER_TEMPORARY = re.compile(re.escape(f".{_MARKER}.") + r"\d+-[0-9a-f]+\.tmp")


def _finish_staging(staging: Path, destination: Path) -> None:
    marker = _read_json(staging / _MARKER)
    if marker is None:
        # Killed between making it and marking it: it holds nothing, or the marker's temporary file.
        if all(_MARKER_TEMPORARY.fullmatch(entry.name) for entry in staging.iterdir()):
            shutil.rmtree(staging)
            logger.warning("removed %s, left by a praib run killed as it began writing %s", staging, destination)
        return
    if not isinstance(marker, dict) or marker.get("destination") != destination.name:
        return
    run = f"a praib run (pid {marker.get('pid')})"
    if not (staging / _JOURNAL).exists():
        shutil.rmtree(staging)
        logger.warning("removed %s, the unfinished output of %s killed while writing %s", staging, run, destination)
        return
    journal = _read_journal(staging / _JOURNAL)
    if journal is None:
        logger.warning("%s: the journal of %s killed while replacing %s cannot be read; nothing was changed",
                       staging, run, destination)
        return
    kept = _apply(staging, destination, journal)
    logger.warning("finished replacing %s, which %s was killed in the middle of%s", destination, run,
                   f"; kept the files of yours that appeared since at {', '.join(kept)}" if kept else "")


def _commit(staging: Path, destination: Path) -> None:
    new = {name: file_digest(staging / name) for name in _files(staging)}
    held = ownership(destination)
    clashes = [name for name in new if _blocked(destination, name, held.praib)]
    if clashes:
        raise OutputClashError(
            f"{destination / clashes[0]}: a file of yours (praib did not write it there, or it changed since) where "
            f"the new output has one{f' (and {len(clashes) - 1} more)' if len(clashes) > 1 else ''}; "
            "praib keeps your files: move it away or choose another output")
    journal = {"move": new, "replace": {name: held.praib[name] for name in new if name in held.praib},
               "remove": {name: digest for name, digest in held.folders.items() if name not in new}}
    _write_json(staging / _JOURNAL, journal)
    _apply(staging, destination, journal)


def _blocked(destination: Path, name: str, praib: dict[str, str]) -> bool:
    """Whether a file of the user's (or a link) stands at ``name`` or where ``name`` needs a folder."""
    if os.path.lexists(destination / name) and name not in praib:
        return True
    for parent in PurePosixPath(name).parents:
        where = destination / parent
        if str(parent) != "." and os.path.lexists(where) and str(parent) not in praib \
                and (where.is_symlink() or not where.is_dir()):
            return True
    return False


def _apply(staging: Path, destination: Path, journal: dict) -> list[str]:
    """Carry out ``journal``; each step checks the file it touches, so that running it again after a
    kill finishes it. Returns the names where a file of the user's turned up (kept, the new one dropped)."""
    from praib.records.locks import output_lock

    for name, digest in journal["remove"].items():
        if file_digest(destination / name) == digest:
            (destination / name).unlink()
    _prune(destination, journal["remove"])
    kept = []
    for name, digest in journal["move"].items():
        source, target = staging / name, destination / name
        if not os.path.lexists(source):  # moved before the kill
            continue
        if os.path.lexists(target) and file_digest(target) not in (journal["replace"].get(name), digest):
            kept.append(name)
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            kept.append(name)
            continue
        os.replace(source, target)
    with output_lock(destination / RECORD, wait=RECORD_WAIT):
        # The output files commands wrote here stay listed, but for one the new output replaced.
        outputs = {name: digest for name, digest in ((_read_sections(destination) or ({}, {}))[1]).items()
                   if name not in journal["move"] or name in kept}
        # Written in the staging folder, which the next run clears, so that a kill leaves no temporary file here.
        _write_json(staging / RECORD, {"about": _ABOUT, "files": {
            name: digest for name, digest in journal["move"].items() if name not in kept},
            **({"outputs": outputs} if outputs else {})})
        os.replace(staging / RECORD, destination / RECORD)
    _discard(staging)
    return kept


def _discard(staging: Path) -> None:
    """Remove a staging folder whose journal is carried out, the marker last: a kill on the way leaves
    one that the next run removes (marked, without a journal) rather than one it cannot prove its own."""
    (staging / _JOURNAL).unlink()
    for entry in os.scandir(staging):
        if entry.name != _MARKER:
            _remove(Path(entry.path))
    (staging / _MARKER).unlink()
    staging.rmdir()


def _prune(destination: Path, removed) -> None:
    """Remove the folders that removing ``removed`` left empty."""
    for name in removed:
        for parent in PurePosixPath(name).parents:
            if str(parent) == ".":
                break
            try:
                (destination / parent).rmdir()
            except OSError:
                break


def _files(staging: Path) -> list[str]:
    names = []
    for root, _, files in os.walk(staging):
        relative = PurePosixPath(Path(root).relative_to(staging).as_posix())
        names += [str(relative / name) for name in files if not (root == str(staging) and name == _MARKER)]
    return sorted(names)


_digests: dict[tuple[int, int, int, int], str] = {}


def file_digest(path: str | Path) -> str | None:
    """``sha256:HEX`` of the regular file at ``path`` (a link is not one), as records hold it; None when there
    is none. Each version of a file is read once a process (known by its inode, size and modification
    time)."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    key = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
    if key not in _digests:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
        _digests[key] = f"sha256:{digest.hexdigest()}"
    return _digests[key]


def _read_record(folder: Path) -> dict[str, str] | None:
    """The files the record of ``folder`` lists (names inside the folder only), or None without one."""
    sections = _read_sections(folder)
    return {**sections[0], **sections[1]} if sections else None


def _read_sections(folder: Path) -> tuple[dict[str, str], dict[str, str]] | None:
    """The files of its output folders and the output files that the record of ``folder`` lists, each with
    its digest (names inside the folder only), or None without a record."""
    path = folder / RECORD
    if not os.path.lexists(path):
        return None
    data = _read_json(path)
    files = data.get("files") if isinstance(data, dict) else None
    outputs = data.get("outputs", {}) if isinstance(data, dict) else None
    if not isinstance(files, dict) or not isinstance(outputs, dict):
        logger.warning("%s: not a record of praib's files, so every file in %s counts as yours", path, folder)
        return None
    return tuple({name: digest for name, digest in part.items() if _inside(name) and isinstance(digest, str)}
                 for part in (files, outputs))


def _read_journal(path: Path) -> dict | None:
    data = _read_json(path)
    if not isinstance(data, dict) or set(data) != {"move", "replace", "remove"}:
        return None
    if not all(isinstance(part, dict) and all(_inside(name) and isinstance(digest, str)
                                              for name, digest in part.items()) for part in data.values()):
        return None
    return data


def _inside(name) -> bool:
    """Whether ``name`` is a plain relative path that stays inside its folder."""
    if not isinstance(name, str) or name.startswith("/") or name == RECORD:
        return False
    parts = name.split("/")
    return all(part not in ("", ".", "..") for part in parts)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_json(path: Path, data) -> None:
    with replace_atomically(path) as temporary:
        temporary.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        path.unlink()
