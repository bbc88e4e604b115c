"""Where a leaderboard's queue and results live: a local folder (the default) or a Hub dataset, behind
one small interface so that the queue and the runner are written once for both.

A store holds files by relative POSIX path. Every change is a commit of whole files that may name the
version it was computed from (``parent``): the commit is refused (:meth:`Store.commit` returns False)
when the store changed since, and the caller reads again and retries. That compare-and-swap is what
makes a claim atomic between runners that never talk to each other:

- a local folder counts its commits in ``.praib-version``; a commit holds the folder's lock
  (``.praib-store.lock``, an operating-system lock through ``filelock``, dropped when its process dies
  however it dies) while it compares that count, writes its files (each whole, through
  :func:`praib.records.atomic.replace_atomically`) and counts one more;
- a Hub dataset is its git history: a commit through ``HfApi.create_commit(parent_commit=...)`` fails
  with HTTP 412 when the branch moved on, and reads name the commit they read
  (``HfApi.dataset_info``, ``hf_hub_download(revision=sha)``).

Only ``huggingface_hub`` speaks to the Hub, so ``HF_ENDPOINT`` and ``HF_TOKEN`` work as everywhere.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Mapping, Union

from praib.leaderboard.submission import is_hub_id
from praib.records import RecordError
from praib.records.atomic import replace_atomically

#: The files every Hub dataset repository has, whatever else it holds.
REPOSITORY_FILES = (".gitattributes", "README.md")
#: What a commit writes at a path: the bytes, or a local file to copy.
Content = Union[bytes, Path]


class StoreError(RuntimeError):
    """A store that cannot be read or written, in one line naming it."""


@dataclass(frozen=True)
class Snapshot:
    """The version of a store read at one moment and the files it held then."""

    version: str
    paths: tuple[str, ...]

    def under(self, folder: str, suffix: str = "") -> list[str]:
        """The paths directly inside ``folder`` ending in ``suffix``, sorted."""
        return sorted(p for p in self.paths if str(PurePosixPath(p).parent) == folder and p.endswith(suffix))


class LocalStore:
    """A folder on this machine (created by the first commit)."""

    VERSION, LOCK = ".praib-version", ".praib-store.lock"

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.label = str(folder)

    def snapshot(self) -> Snapshot:
        if self.folder.exists() and not self.folder.is_dir():
            raise StoreError(f"{self.folder}: not a folder")
        paths = [] if not self.folder.is_dir() else [
            p.relative_to(self.folder).as_posix() for p in self.folder.rglob("*")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(self.folder).parts)]
        return Snapshot(self._version(), tuple(sorted(paths)))

    def _version(self) -> str:
        path = self.folder / self.VERSION
        return path.read_text(encoding="utf-8").strip() if path.is_file() else "0"

    def read(self, path: str, version: str | None = None) -> bytes | None:
        """The file's bytes (None when absent). A folder keeps no history: ``version`` is not looked at."""
        file = self.folder / path
        return file.read_bytes() if file.is_file() else None

    def local_copy(self, folder: str, version: str, into: Path) -> Path:
        """A local folder holding the store's ``folder``; for a local store, that folder itself."""
        return self.folder / folder

    def commit(self, files: Mapping[str, Content], message: str, parent: str | None = None) -> bool:
        from filelock import FileLock

        self.folder.mkdir(parents=True, exist_ok=True)
        with FileLock(self.folder / self.LOCK):
            version = self._version()
            if parent is not None and version != parent:
                return False
            for path, content in files.items():
                with replace_atomically(self.folder / path) as temporary:
                    if isinstance(content, Path):
                        shutil.copyfile(content, temporary)
                    else:
                        temporary.write_bytes(content)
            with replace_atomically(self.folder / self.VERSION) as temporary:
                temporary.write_text(f"{int(version) + 1}\n", encoding="utf-8")
        return True


class HubStore:
    """A dataset repository on the Hugging Face Hub (it must exist: ``hf repo create ORG/NAME --repo-type
    dataset``). Writing needs a token with write access ($HF_TOKEN or ``hf auth login``)."""

    def __init__(self, repo_id: str, token: str | None = None):
        from huggingface_hub import HfApi

        self.repo_id = self.label = repo_id
        self.api = HfApi(token=token)

    def _fail(self, err: Exception, what: str) -> StoreError:
        from praib.records.io import hub_error

        return StoreError(str(hub_error(self.repo_id, err, what)))

    def snapshot(self) -> Snapshot:
        from huggingface_hub.errors import RepositoryNotFoundError

        from praib.records.io import check_hub

        try:
            check_hub(self.repo_id, "read the dataset")
            info = self.api.dataset_info(self.repo_id)
        except RecordError as err:
            raise StoreError(str(err)) from None
        except RepositoryNotFoundError:
            raise StoreError(f"{self.repo_id}: no such dataset on the Hub (create it with `hf repo create "
                             f"{self.repo_id} --repo-type dataset`; for a local folder write ./{self.repo_id})"
                             ) from None
        except Exception as err:  # the Hub client raises many unrelated types
            raise self._fail(err, "read the dataset") from None
        return Snapshot(info.sha, tuple(sorted(s.rfilename for s in info.siblings or ())))

    def read(self, path: str, version: str | None = None) -> bytes | None:
        from huggingface_hub.errors import RemoteEntryNotFoundError

        try:
            local = self.api.hf_hub_download(self.repo_id, path, repo_type="dataset", revision=version)
        except RemoteEntryNotFoundError:  # the Hub says it has no such file (not: it could not be asked)
            return None
        except Exception as err:
            raise self._fail(err, f"download {path}") from None
        return Path(local).read_bytes()

    def local_copy(self, folder: str, version: str, into: Path) -> Path:
        """The store's ``folder`` at ``version``, downloaded file by file into ``into``."""
        for path in Snapshot(version, self.snapshot_at(version)).under(folder):
            data = self.read(path, version)
            target = into / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data or b"")
        return into / folder

    def snapshot_at(self, version: str) -> tuple[str, ...]:
        try:
            info = self.api.dataset_info(self.repo_id, revision=version)
        except Exception as err:
            raise self._fail(err, "read the dataset") from None
        return tuple(sorted(s.rfilename for s in info.siblings or ()))

    def commit(self, files: Mapping[str, Content], message: str, parent: str | None = None) -> bool:
        from huggingface_hub import CommitOperationAdd
        from huggingface_hub.errors import HfHubHTTPError

        operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=content if isinstance(content, bytes)
                                         else str(content)) for path, content in files.items()]
        try:
            self.api.create_commit(self.repo_id, operations, commit_message=message, repo_type="dataset",
                                   parent_commit=parent)
        except HfHubHTTPError as err:
            if err.response is not None and err.response.status_code == 412:
                return False  # the branch moved on since ``parent``: read again
            raise self._fail(err, "commit to the dataset") from None
        except Exception as err:
            raise self._fail(err, "commit to the dataset") from None
        return True


Store = Union[LocalStore, HubStore]


def open_store(location: str | Path, token: str | None = None) -> Store:
    """A Hub dataset id (``ORG/NAME`` that is no existing local path) opens the Hub dataset; anything else,
    a local folder (write ``./ORG/NAME`` for a folder of that name that does not exist yet)."""
    location = str(location)
    return HubStore(location, token) if is_hub_id(location) else LocalStore(location)
