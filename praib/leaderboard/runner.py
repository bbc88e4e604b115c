"""The leaderboard runner: takes requests from a queue (:mod:`praib.leaderboard.queue`), scores each as
``praib leaderboard run`` does and publishes it into a results store.

A results store (a folder or a Hub dataset) holds what ``praib leaderboard run`` writes, so that
``praib leaderboard report`` and the app read it alike, and, beside that, what each runner writes on
its own:

``submissions/<name>.parquet``, ``scored/<name>.parquet``, ``details/<name>.json``, ``manifests/<name>.json``
    one submission's result rows (:data:`praib.leaderboard.run.RESULT_FEATURES`) and its per-review table as
    the bootstrap reads it (:func:`praib.leaderboard.run.review_table_features`), written by the runner that
    scored it and by no other, so that concurrent runners never write one file;
``human.parquet``
    the human reference's rows (the same from every runner with the same settings);
``results.parquet``, ``results.jsonl``, ``comparisons.parquet``, ``ranks.parquet``, ``run.json``, ``eras.json``
    recomputed from all of the above after each submission (:func:`recompute`): every row, with
    ``closest_to_human`` marked over every submission, the paired comparisons and rank intervals of every
    finished submission (:func:`praib.leaderboard.compare.compare_tables`, on the stored per-review tables:
    no text is scored again), and the run settings.

Scoring one submission alone gives the rows a run of many gives (each submission's bootstrap draws
its own seeded resamples), except ``closest_to_human``, which :func:`recompute` marks over all; the
comparisons are drawn over the stored tables with the run's seed, so they equal those of a run of the same
submissions. A runner scores the human reference once (:func:`praib.leaderboard.run.score_reference`), for
every request it takes. Every recomputation is a commit on the version it read, so the last one to land has
read every submission written before it. A killed runner leaves its request RUNNING until its lease runs out;
the next runner scores it again and overwrites the same files with the same rows, so a rerun after a kill at
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
from praib.leaderboard.compare import DEFAULT_FDR, comparison_tables, compare_tables
from praib.leaderboard.run import (RESULT_FEATURES, RESULT_FILES, ReviewTable, ScoredReference, mark_closest,
                                   reference_eras, review_table_features, score_reference, score_run)
from praib.leaderboard.stores import REPOSITORY_FILES, Store, StoreError
from praib.leaderboard.submission import SubmissionError, carried_validations, load_submission, validate_submission
from praib.records import HUMAN_SOURCE, RecordError

if TYPE_CHECKING:
    from praib.llm.judge import Judge

HUMAN_ROWS = "human.parquet"
SUBMISSION_ROWS, SCORED_REVIEWS = "submissions", "scored"
#: The files of a results store, as glob patterns (a Hub dataset also has its .gitattributes and card).
RESULTS_LAYOUT = (*RESULT_FILES, "details/*.json", "manifests/*.json", "eras.json", HUMAN_ROWS,
                  f"{SUBMISSION_ROWS}/*.parquet", f"{SCORED_REVIEWS}/*.parquet", *REPOSITORY_FILES)
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
(the human reference's rows included); `comparisons.parquet` every pair of submissions compared per metric
and venue (the difference of their distances to human, its paired-bootstrap interval, p-values and verdict);
`ranks.parquet` each submission's rank per metric and venue with its interval; `run.json` the settings;
`details/` and `manifests/` one file per submission; `submissions/` each submission's rows as its runner
wrote them, and `scored/` its reviews' metrics, from which the comparisons are drawn.
"""


def _parquet(table) -> bytes:
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def parquet_bytes(rows: list[dict]) -> bytes:
    return _parquet(Dataset.from_list(rows, features=RESULT_FEATURES).data.table)


def review_table_bytes(table: ReviewTable) -> bytes:
    """``table`` as a Parquet file of :func:`praib.leaderboard.run.review_table_features`."""
    import pyarrow as pa

    return _parquet(pa.Table.from_pydict(table.columns(), schema=review_table_features().arrow_schema))


def read_review_table(data: bytes | None, where: str) -> ReviewTable:
    """The :class:`praib.leaderboard.run.ReviewTable` a Parquet file of :func:`review_table_bytes` holds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if data is None:
        raise StoreError(f"{where}: missing (the per-review table of a finished submission)")
    try:
        return ReviewTable.from_columns(pq.read_table(io.BytesIO(data)).to_pydict())
    except (pa.ArrowException, OSError, ValueError) as err:
        raise StoreError(f"{where}: not a Parquet table of scored reviews ({err})") from None


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
    fdr: float = DEFAULT_FDR
    judge: "Judge | None" = None
    cache_dir: Path | None = None
    workers: int | None = None
    lease_seconds: float = 3600.0
    progress: bool = False
    say: Callable[[str], None] = print

    def __post_init__(self):
        self.id = runner_id()
        self._eras: dict | None = None
        self._scored_reference: ScoredReference | None = None

    @property
    def settings(self) -> dict:
        """What run.json records, and what every runner writing into one results store must agree on."""
        return {"reference": self.reference_label, "n_bootstrap": self.n_bootstrap, "seed": self.seed,
                "fdr": self.fdr, "judge": self.judge.describe() if self.judge is not None else None}

    def check(self) -> None:
        """Refuse a queue or results store holding other files, results without the per-review tables the
        comparisons are drawn from, and results scored with other settings."""
        from praib.leaderboard.queue import QUEUE_FILES

        refuse_foreign(self.queue, QUEUE_FILES, "praib leaderboard process")
        refuse_foreign(self.results, RESULTS_LAYOUT, "praib leaderboard process")
        snapshot = self.results.snapshot()
        unscored = [p for p in snapshot.under(SUBMISSION_ROWS, ".parquet")
                    if f"{SCORED_REVIEWS}/{PurePosixPath(p).name}" not in snapshot.paths]
        if unscored:
            raise StoreError(f"{self.results.label}: {', '.join(unscored)} without a per-review table in "
                             f"{SCORED_REVIEWS}/ (written by a praib before comparisons): file the submissions "
                             "again into a new queue and results store")
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
                scored = score_run([submission], self._reference(), self.n_bootstrap, self.seed, self.judge,
                                   self.workers, self.progress)
            except (SubmissionError, RecordError, ValueError) as err:
                return FAILED, str(err).splitlines()[0], []
        human = [row for row in scored.rows if row["submission"] == HUMAN_SOURCE]
        own = [row for row in scored.rows if row["submission"] != HUMAN_SOURCE]
        for row in own:
            row["closest_to_human"] = False  # marked over every submission by recompute
        self.results.commit({
            f"{SUBMISSION_ROWS}/{request.name}.parquet": parquet_bytes(own),
            f"{SCORED_REVIEWS}/{request.name}.parquet": review_table_bytes(scored.tables[request.name]),
            f"details/{request.name}.json": _json_bytes(scored.details[request.name]),
            f"manifests/{request.name}.json": _json_bytes(submission.manifest),
            HUMAN_ROWS: parquet_bytes(human),
        }, f"praib: results of {request.name}")
        recompute(self.results, self.queue, self.settings, self.cache_dir, self._era_analysis, self._reference())
        return FINISHED, None, []

    def _reference(self) -> ScoredReference:
        """The human reference scored and drawn once for every request this runner takes."""
        if self._scored_reference is None:
            self._scored_reference = score_reference(self.reference, self.n_bootstrap, self.seed, self.workers,
                                                     self.progress, keep_texts=self.judge is not None)
        return self._scored_reference

    def _era_analysis(self) -> dict | None:
        """The pre/post-LLM comparison of the human reference, when it spans both eras (computed once)."""
        if self._eras is None:
            self._eras = reference_eras(self.reference, self._reference(), self.workers) or {}
        return self._eras or None


def recompute(results: Store, queue: Store, settings: dict, cache_dir: Path | None,
              eras: Callable[[], dict | None], reference: ScoredReference) -> None:
    """Rewrite what spans submissions from every submission's files in ``results``: ``results.parquet``
    and ``results.jsonl`` (human rows first, then the submissions in the order they were filed, with
    ``closest_to_human`` marked over all), ``comparisons.parquet`` and ``ranks.parquet`` (every finished
    submission's stored per-review table compared against the scored human ``reference``, with the
    settings' draws, seed and false discovery rate), ``run.json`` (``settings``, each submission named by
    its request's label, the judge's validations) and ``eras.json``. Retried until it lands on the version it
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
        tables = {}
        for name in names:
            path = f"{SCORED_REVIEWS}/{name}.parquet"
            tables[name] = read_review_table(results.read(path, snapshot.version), path)
        comparison = compare_tables(reference.table, tables, settings["n_bootstrap"], settings["seed"],
                                    settings["fdr"], reference.draws)
        judge = settings["judge"]
        files = {
            "results.parquet": parquet_bytes(rows),
            "results.jsonl": "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8"),
            **{name: _parquet(table) for name, table in comparison_tables(comparison).items()},
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
        if results.commit(files, f"praib: leaderboard of {len(names)} submissions", parent=snapshot.version):
            return
