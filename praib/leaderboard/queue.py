"""The submission queue: requests filed by anyone, taken by runners (:mod:`praib.leaderboard.runner`).

A queue is a store (:mod:`praib.leaderboard.stores`: a local folder, or a Hub dataset) holding

``<name>.json``
    one :class:`Request` per submission: what was submitted (model, revision, prompts, manifest, a
    content hash of its records), when, and where it stands: ``PENDING`` -> ``RUNNING`` (with the runner
    that holds it and until when) -> ``FINISHED`` or ``FAILED`` (with the reason, one line);
``submissions/<name>/reviews.parquet`` and ``manifest.json``
    the submission as filed, unless it was filed as a Hub dataset id (kept in the request's ``dataset``).

Every change is a commit on the version it read (:meth:`praib.leaderboard.stores.LocalStore.commit`):
two runners that claim the same request at once both write on one version, and the second commit is
refused, so that runner reads again and takes another request. A runner holds its request for a lease;
one whose lease ran out (its runner was killed) is taken again by the next runner, which counts
``attempts``. A request is settled only by the attempt that holds it.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
import secrets
import socket
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from praib.leaderboard.provenance import records_sha256
from praib.leaderboard.stores import REPOSITORY_FILES, Snapshot, Store, StoreError
from praib.leaderboard.submission import (DEFAULT_MAX_UNPARSED, MANIFEST_NAME, ValidationReport, is_hub_id,
                                          load_submission, submission_name, validate_submission)
from praib.records import save_records

logger = logging.getLogger(__name__)

PENDING, RUNNING, FINISHED, FAILED = "PENDING", "RUNNING", "FINISHED", "FAILED"
STATUSES = (PENDING, RUNNING, FINISHED, FAILED)
SUBMISSIONS = "submissions"
REVIEWS_FILE = "reviews.parquet"
#: The files of a queue, as glob patterns (what a queue folder may hold).
QUEUE_FILES = ("*.json", f"{SUBMISSIONS}/*/{REVIEWS_FILE}", f"{SUBMISSIONS}/*/{MANIFEST_NAME}", *REPOSITORY_FILES)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def now_utc() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def timestamp(moment: datetime.datetime) -> str:
    return moment.isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Request:
    """One filed submission and where it stands in the queue."""

    name: str                     # the submission's name in the results (unique in the queue)
    model: str
    revision: str | None
    prompts: list[str]
    manifest: dict
    records_sha256: str
    n_reviews: int
    submitted: str                # ISO time, UTC
    status: str = PENDING
    dataset: str | None = None    # the Hub dataset id it was filed as; None: copied into the queue
    runner: str | None = None     # the runner holding it (RUNNING) or that settled it
    started: str | None = None
    lease_expires: str | None = None
    attempts: int = 0
    finished: str | None = None
    reason: str | None = None     # why it FAILED
    problems: list[str] = field(default_factory=list)  # what validation found, when that made it fail

    @property
    def path(self) -> str:
        return f"{self.name}.json"

    @property
    def folder(self) -> str:
        """Where its copy lies in the queue."""
        return f"{SUBMISSIONS}/{self.name}"

    @property
    def label(self) -> str:
        """How published results name its input: the Hub dataset id, or the hash of its records."""
        return self.dataset or f"sha256:{self.records_sha256[:16]}"

    def same_submission(self, other: "Request") -> bool:
        return (self.model, self.revision, sorted(self.prompts), self.records_sha256) == \
            (other.model, other.revision, sorted(other.prompts), other.records_sha256)

    def claimable(self, moment: datetime.datetime) -> bool:
        """PENDING, or RUNNING under a lease that ran out (its runner died)."""
        if self.status == PENDING:
            return True
        return self.status == RUNNING and (self.lease_expires is None
                                           or datetime.datetime.fromisoformat(self.lease_expires) <= moment)

    def to_json(self) -> bytes:
        return (json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes, where: str) -> "Request":
        try:
            fields = json.loads(data)
            request = cls(**fields)
        except (ValueError, TypeError) as err:
            raise StoreError(f"{where}: not a request record ({err})") from None
        if request.status not in STATUSES or not _NAME.fullmatch(str(request.name)) \
                or where != request.path and not where.endswith("/" + request.path):
            raise StoreError(f"{where}: not a request record (status {request.status!r}, name {request.name!r})")
        return request


class SubmissionRefused(ValueError):
    """A submission not filed: its validation report's problems, or an earlier request of the same data."""

    def __init__(self, message: str, report: ValidationReport | None = None):
        super().__init__(message)
        self.report = report


def read_requests(store: Store, snapshot: Snapshot | None = None) -> tuple[Snapshot, list[Request]]:
    """The queue's requests, oldest first (by submission time, then name). A file that is no request
    record is left out with a warning: anyone may upload to a Hub queue, and one bad file must not stop it."""
    snapshot = snapshot or store.snapshot()
    requests = []
    for path in snapshot.under(".", ".json"):
        data = store.read(path, snapshot.version)
        try:
            requests.append(Request.from_json(data or b"", f"{store.label}/{path}"))
        except StoreError as err:
            logger.warning("%s; left out", err)
    return snapshot, sorted(requests, key=lambda r: (r.submitted, r.name))


def _unique_name(wanted: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", wanted).strip("-._") or "submission"
    name, number = base, 1
    while name in taken or name == "human":
        number += 1
        name = f"{base}-{number}"
    return name


def submit(store: Store, source: str, manifest: str | Path | None = None, benchmark_papers: str | Path | None = None,
           split: str = "train", max_unparsed: float = DEFAULT_MAX_UNPARSED) -> Request:
    """Validate ``source`` as ``praib leaderboard validate`` does and file it as a PENDING request: a copy
    of its records and manifest in the queue (a Hub dataset id is kept as it is). Raises
    :class:`SubmissionRefused` for an invalid submission, or one whose model, revision, prompts and
    records an earlier request (not failed) already holds."""
    report = validate_submission(source, benchmark_papers, manifest, split=split, max_unparsed=max_unparsed)
    if not report.valid:
        raise SubmissionRefused(f"{source}: invalid submission, not filed", report)
    submission = load_submission(source, manifest, split=split)
    data = submission.manifest
    with tempfile.TemporaryDirectory(prefix="praib-submit-") as scratch:
        copy = Path(scratch) / REVIEWS_FILE
        if not is_hub_id(source):
            save_records(submission.reviews, copy)
        while True:
            snapshot, requests = read_requests(store)
            request = Request(name=_unique_name(submission_name(source), {r.name for r in requests}),
                              model=data["model"], revision=data.get("revision"), prompts=list(data["prompts"]),
                              manifest=data, records_sha256=records_sha256(submission.reviews),
                              n_reviews=len(submission.reviews), submitted=timestamp(now_utc()),
                              dataset=source if is_hub_id(source) else None)
            first = next((r for r in requests if r.status != FAILED and r.same_submission(request)), None)
            if first is not None:
                raise SubmissionRefused(
                    f"{source}: already filed as {first.name} on {first.submitted} ({first.status}): same model "
                    f"{first.model!r}, revision {first.revision!r}, prompts {', '.join(first.prompts)} and records "
                    f"(sha256:{first.records_sha256[:16]})")
            files = {} if request.dataset else {
                f"{request.folder}/{REVIEWS_FILE}": copy,
                f"{request.folder}/{MANIFEST_NAME}": (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()}
            files[request.path] = request.to_json()  # last: the request appears once its copy is whole
            if store.commit(files, f"praib: submit {request.name} ({request.model})", parent=snapshot.version):
                return request


def runner_id() -> str:
    """This process, as a request's ``runner`` names it."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"


def claim(store: Store, runner: str, lease_seconds: float) -> Request | None:
    """Take the oldest claimable request (:meth:`Request.claimable`) for ``runner``, RUNNING under a lease
    of ``lease_seconds``; None when there is none. A claim that loses a race reads again."""
    while True:
        snapshot, requests = read_requests(store)
        moment = now_utc()
        candidate = next((r for r in requests if r.claimable(moment)), None)
        if candidate is None:
            return None
        taken = replace(candidate, status=RUNNING, runner=runner, started=timestamp(moment),
                        lease_expires=timestamp(moment + datetime.timedelta(seconds=lease_seconds)),
                        attempts=candidate.attempts + 1, reason=None, problems=[])
        if store.commit({taken.path: taken.to_json()}, f"praib: {runner} takes {taken.name}",
                        parent=snapshot.version):
            return taken


def settle(store: Store, request: Request, status: str, reason: str | None = None,
           problems: list[str] | None = None) -> Request | None:
    """Mark the attempt ``request`` (as :func:`claim` returned it) FINISHED or FAILED; None when another
    attempt holds the request now (this one's lease ran out and it was taken again)."""
    while True:
        snapshot, requests = read_requests(store)
        current = next((r for r in requests if r.name == request.name), None)
        if current is None or (current.attempts, current.runner) != (request.attempts, request.runner) \
                or current.status != RUNNING:
            return None
        settled = replace(current, status=status, finished=timestamp(now_utc()), lease_expires=None,
                          reason=reason, problems=list(problems or []))
        if store.commit({settled.path: settled.to_json()}, f"praib: {settled.name} {status}",
                        parent=snapshot.version):
            return settled


def submission_source(store: Store, request: Request, snapshot: Snapshot, scratch: Path) -> str:
    """Where to read the request's submission: its Hub dataset id, or its copy in the queue (downloaded
    into ``scratch`` from a Hub queue)."""
    if request.dataset:
        return request.dataset
    folder = store.local_copy(request.folder, snapshot.version, scratch)
    if not folder.is_dir():
        raise StoreError(f"{store.label}/{request.folder}: the request's copy of its submission is missing")
    return str(folder)
