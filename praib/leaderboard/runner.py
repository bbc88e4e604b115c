"""The leaderboard runner: takes requests from a queue (:mod:`praib.leaderboard.queue`), scores each as
``praib leaderboard run`` does and publishes it into a results store.

A results store (a folder or a Hub dataset) holds what ``praib leaderboard run`` writes, so that
``praib leaderboard report`` and the app read it alike, and, beside that, what each runner writes on
its own:

``submissions/<name>.parquet``, ``details/<name>.json``, ``manifests/<name>.json``
    one submission's result rows (:data:`praib.leaderboard.run.RESULT_FEATURES`), written by the runner
    that scored it and by no other, so that concurrent runners never write one file;
``human.parquet``
    the human reference's rows (the same from every runner with the same settings);
``results.parquet``, ``results.jsonl``, ``run.json``, ``eras.json``
    recomputed from all of the above after each submission (:func:`recompute`): every row, with
    ``closest_to_human`` marked over every submission, and the run settings.

Scoring one submission alone gives the rows a run of many gives (each submission's bootstrap draws
its own seeded resamples), except ``closest_to_human``, which :func:`recompute` marks over all.
Every recomputation is a commit on the version it read, so the last one to land has read every
submission written before it. A killed runner leaves its request RUNNING until its lease runs out; the
next runner scores it again and overwrites the same files with the same rows, so a rerun after a kill at
any moment ends with each request settled once and no row twice.
"""

from __future__ import annotations

import datetime
import io
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Callable

from datasets import Dataset

from praib._version import __version__
from praib.leaderboard.queue import (FAILED, FINISHED, Request, claim, read_requests, runner_id, settle,
                                     submission_source)
from praib.leaderboard.provenance import records_sha256
from praib.leaderboard.run import RESULT_FEATURES, RESULT_FILES, mark_closest, score_submissions
from praib.leaderboard.stores import REPOSITORY_FILES, Store, StoreError
from praib.leaderboard.submission import SubmissionError, carried_validations, load_submission, validate_submission
from praib.records import HUMAN_SOURCE, RecordError

if TYPE_CHECKING:
    from praib.llm.judge import Judge

HUMAN_ROWS = "human.parquet"
SUBMISSION_ROWS = "submissions"
#: The files of a results store, as glob patterns (a Hub dataset also has its .gitattributes and card).
RESULTS_LAYOUT = (*RESULT_FILES, "details/*.json", "manifests/*.json", "eras.json", HUMAN_ROWS,
                  f"{SUBMISSION_ROWS}/*.parquet", *REPOSITORY_FILES)
#: The card of a results dataset: its default config is the whole table, not every Parquet file in it.
RESULTS_CARD = """---
configs:
- config_name: default
  data_files:
  - split: train
    path: results.parquet
tags:
- praib
- leaderboard
---
# praib leaderboard results

Written by `praib leaderboard process`: `results.parquet` holds a row per submission, metric and venue
(the human reference's rows included); `run.json` the settings; `details/` and `manifests/` one file per
submission; `submissions/` each submission's rows as its runner wrote them.
"""
#: The run.json entries that must agree for two runners to write into one results store.
SETTINGS = ("reference", "n_bootstrap", "seed", "judge")


def parquet_bytes(rows: list[dict]) -> bytes:
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(Dataset.from_list(rows, features=RESULT_FEATURES).data.table, buffer)
    return buffer.getvalue()


def parquet_rows(data: bytes, where: str) -> list[dict]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(io.BytesIO(data)).to_pylist()
    except (pa.ArrowException, OSError) as err:
        raise StoreError(f"{where}: not a Parquet file of result rows ({err})") from None


def _json_bytes(data) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def foreign_paths(paths, layout) -> list[str]:
    """The ``paths`` that match none of the ``layout`` glob patterns."""
    return [p for p in paths if not any(PurePosixPath(p).match(pattern) and
                                        len(PurePosixPath(p).parts) == len(PurePosixPath(pattern).parts)
                                        for pattern in layout)]


def refuse_foreign(store: Store, layout, command: str) -> None:
    """A store that holds files the command does not write is not its to write into."""
    foreign = foreign_paths(store.snapshot().paths, layout)
    if foreign:
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise StoreError(f"{store.label}: holds files that `{command}` does not write ({shown}); choose another")


@dataclass
class Runner:
    """Takes the queue's requests one at a time and publishes their results. ``say`` prints a line."""

    queue: Store
    results: Store
    reference: Dataset
    reference_label: str
    n_bootstrap: int = 1000
    seed: int = 0
    judge: "Judge | None" = None
    cache_dir: Path | None = None
    workers: int | None = None
    lease_seconds: float = 3600.0
    progress: bool = False
    say: Callable[[str], None] = print

    def __post_init__(self):
        self.id = runner_id()
        self._eras: dict | None = None

    @property
    def settings(self) -> dict:
        return {"reference": self.reference_label, "n_bootstrap": self.n_bootstrap, "seed": self.seed,
                "judge": self.judge.describe() if self.judge is not None else None}

    def check(self) -> None:
        """Refuse a queue or results store holding other files, and results scored with other settings."""
        from praib.leaderboard.queue import QUEUE_FILES

        refuse_foreign(self.queue, QUEUE_FILES, "praib leaderboard process")
        refuse_foreign(self.results, RESULTS_LAYOUT, "praib leaderboard process")
        run = self.results.read("run.json")
        if run is None:
            return
        recorded = json.loads(run)
        different = [f"{key} {recorded.get(key)!r} (here {value!r})" for key, value in self.settings.items()
                     if recorded.get(key) != value]
        if different:
            raise StoreError(f"{self.results.label}: its results were scored with other settings: "
                             + "; ".join(different) + "; give the same settings or another --results")

    def process_next(self) -> Request | None:
        """Claim the oldest claimable request and settle it: the request as this runner left it (still
        RUNNING when its lease ran out and another runner took it over), None when none was claimable."""
        request = claim(self.queue, self.id, self.lease_seconds)
        if request is None:
            return None
        self.say(f"{request.name}: taken by {self.id} (attempt {request.attempts}, lease until "
                 f"{request.lease_expires})")
        status, reason, problems = self._score_and_publish(request)
        settled = settle(self.queue, request, status, reason, problems)
        if settled is None:
            self.say(f"{request.name}: taken over by another runner after this one's lease ran out; left to it")
            return request
        self.say(f"{request.name}: {status}" + (f": {reason}" if reason else ""))
        return settled

    def run(self, watch: float | None = None) -> int:
        """Process requests until none is claimable (``watch`` None), or forever, looking again every
        ``watch`` seconds. Returns how many this runner settled."""
        settled = 0
        while True:
            while (request := self.process_next()) is not None:
                settled += request.status in (FINISHED, FAILED)
            if watch is None:
                return settled
            time.sleep(watch)

    def _score_and_publish(self, request: Request) -> tuple[str, str | None, list[str]]:
        """(status, reason, validation problems): FAILED for a submission that cannot be scored."""
        with tempfile.TemporaryDirectory(prefix="praib-runner-") as scratch:
            snapshot = self.queue.snapshot()
            source = submission_source(self.queue, request, snapshot, Path(scratch))
            report = validate_submission(source)
            if not report.valid:
                more = f" (and {len(report.problems) - 1} more)" if len(report.problems) > 1 else ""
                return FAILED, f"invalid submission: {report.problems[0]}{more}", report.problems
            try:
                submission = load_submission(source)
                submission.name = request.name
                if records_sha256(submission.reviews) != request.records_sha256:
                    return FAILED, ("its records changed since it was filed (sha256 "
                                    f"{request.records_sha256[:16]}); submit it again"), []
                rows, details = score_submissions([submission], self.reference, self.n_bootstrap, self.seed,
                                                  self.judge, self.workers, self.progress)
            except (SubmissionError, RecordError, ValueError) as err:
                return FAILED, str(err).splitlines()[0], []
        human = [row for row in rows if row["submission"] == HUMAN_SOURCE]
        own = [row for row in rows if row["submission"] != HUMAN_SOURCE]
        for row in own:
            row["closest_to_human"] = False  # marked over every submission by recompute
        self.results.commit({
            f"{SUBMISSION_ROWS}/{request.name}.parquet": parquet_bytes(own),
            f"details/{request.name}.json": _json_bytes(details[request.name]),
            f"manifests/{request.name}.json": _json_bytes(submission.manifest),
            HUMAN_ROWS: parquet_bytes(human),
        }, f"praib: results of {request.name}")
        recompute(self.results, self.queue, self.settings, self.cache_dir, self._era_analysis)
        return FINISHED, None, []

    def _era_analysis(self) -> dict | None:
        """The pre/post-LLM comparison of the human reference, when it spans both eras (computed once)."""
        from praib.leaderboard.eras import era_analysis, spans_both_eras
        from praib.leaderboard.run import select_rows

        if self._eras is None:
            human = select_rows(self.reference, lambda row: row["source"] == HUMAN_SOURCE)
            self._eras = era_analysis(human, workers=self.workers) if spans_both_eras(human) else {}
        return self._eras or None


def recompute(results: Store, queue: Store, settings: dict, cache_dir: Path | None,
              eras: Callable[[], dict | None]) -> None:
    """Rewrite what spans submissions from every submission's rows in ``results``: ``results.parquet``
    and ``results.jsonl`` (human rows first, then the submissions in the order they were filed, with
    ``closest_to_human`` marked over all), ``run.json`` (``settings``, each submission named by its
    request's label, the judge's validations) and ``eras.json``. Retried until it lands on the version it
    read."""
    from praib.evaluation.judge_validity import judge_validations

    while True:
        snapshot = results.snapshot()
        _, requests = read_requests(queue)
        filed = {r.name: number for number, r in enumerate(requests)}
        labels = {r.name: r.label for r in requests}
        paths = sorted(snapshot.under(SUBMISSION_ROWS, ".parquet"),
                       key=lambda p: (filed.get(PurePosixPath(p).stem, len(filed)), p))
        rows = parquet_rows(results.read(HUMAN_ROWS, snapshot.version), HUMAN_ROWS)
        for path in paths:
            rows += parquet_rows(results.read(path, snapshot.version), path)
        mark_closest(rows)
        names = [PurePosixPath(p).stem for p in paths]
        manifests = {name: json.loads(results.read(f"manifests/{name}.json", snapshot.version) or b"{}")
                     for name in names}
        judge = settings["judge"]
        files = {
            "results.parquet": parquet_bytes(rows),
            "results.jsonl": "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8"),
            "run.json": _json_bytes({
                **settings,
                "submissions": {name: labels.get(name, name) for name in names},
                "judge_validation": judge_validations(judge, cache_dir, carried_validations(manifests))
                if judge is not None else None,
                "praib_version": __version__,
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            }),
        }
        if "README.md" not in snapshot.paths:  # a card of the owner's own is kept
            files["README.md"] = RESULTS_CARD.encode("utf-8")
        era_results = eras() if "eras.json" not in snapshot.paths else None
        if era_results:
            files["eras.json"] = _json_bytes(era_results)
        files.update(spanning_results(rows))
        if results.commit(files, f"praib: leaderboard of {len(names)} submissions", parent=snapshot.version):
            return


def spanning_results(rows: list[dict]) -> dict[str, bytes]:
    """The files computed across submissions besides ``closest_to_human``: where the paired comparisons
    and rank intervals (``comparisons.parquet``, ``ranks.parquet``) of the leaderboard run join the
    runner once that computation is part of praib.leaderboard; none yet."""
    return {}
