"""Leaderboard submissions: generated reviews plus a manifest that says how they were made.

A submission is data only. Its reviews are Review records (:data:`praib.records.REVIEW_FEATURES`)
in a JSONL, JSON or Parquet file, a directory of such files or a saved dataset, or a Hub dataset
id; they are read through :func:`praib.records.load_records`, which never runs code from the
data (no loading scripts, no pickles, no ``trust_remote_code``). A submission's data lies inside it:
every data file of a folder (README ``configs`` -> ``data_files`` after globbing, symlinks after
resolving, the files of a saved dataset) and its manifest.json must resolve inside the folder, and a
Hub repository's ``data_files`` may not be URLs, absolute paths or climb out with '..'
(:func:`praib.records.io.paths_outside`); anything else is a problem naming the path. The manifest is a JSON object,
``manifest.json`` next to the data (in the directory, or beside the file, or at the root of the
Hub dataset repository) unless given explicitly. Its fields (:data:`MANIFEST_FIELDS`):

``model`` (str, required)
    the model's name; every record's ``model`` must equal it.
``revision`` (str or null)
    the model revision (commit hash or version) that generated the reviews.
``backend`` (str, required)
    what ran the model: ``vllm``, ``openai``, ``transformers``, an API name, ...
``prompts`` (non-empty list of str, required)
    the prompt names used; every record's ``prompt`` must be one of them.
``sampling`` (object, required)
    sampling parameters, e.g. ``{"temperature": 0.0, "top_p": 1.0, "max_new_tokens": 4096,
    "seed": 0}``: names to numbers (that a float can hold), strings, booleans or null.
``date`` (str, required)
    the generation date, ISO ``YYYY-MM-DD``.
``knowledge_cutoff`` (str or null)
    the model's knowledge cut-off, ``YYYY-MM`` or ``YYYY-MM-DD``.
``scale`` (str, optional, default ``"venue"``)
    ``venue`` when ratings are on each venue-year's own scale, ``generic`` for the 1-10 / 1-5 one.
``description`` (str, optional)
    free text.
``judge_validation`` (list, optional)
    validations of judges against human labels, each a stored result of ``praib judge validate``
    (:meth:`praib.metrics.judged.validation.ValidationResult.to_dict`, the JSON its ``--output``
    writes). ``praib leaderboard run --judge`` uses one that validates its judge (same model,
    revision, templates) on a task for which the validations store beside its call cache has none;
    the report lists them all in its Judges table.
"""

from __future__ import annotations

import datetime
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from datasets import Dataset

from praib.metrics.judged.validation import TASKS, ValidationResult
from praib.records import HUMAN_SOURCE, PARSE_FAILED, RecordError, load_records, perturbation_kind, read_json
from praib.records.duplicates import record_repeats
from praib.records.io import check_hub, hub_error, paths_outside

MANIFEST_NAME = "manifest.json"
SCALE_CHOICES = ("venue", "generic")
#: name -> (required, description of the expected value)
MANIFEST_FIELDS: dict[str, tuple[bool, str]] = {
    "model": (True, "a non-empty string"),
    "revision": (False, "a string or null"),
    "backend": (True, "a non-empty string"),
    "prompts": (True, "a non-empty list of strings"),
    "sampling": (True, "an object of parameter names to numbers (that a float can hold), strings, booleans or null"),
    "date": (True, "an ISO date YYYY-MM-DD"),
    "knowledge_cutoff": (False, "YYYY-MM, YYYY-MM-DD or null"),
    "scale": (False, "'venue' or 'generic'"),
    "description": (False, "a string"),
    "judge_validation": (False, "a list of judge validation results (the JSON `praib judge validate --output` "
                                "writes)"),
}
DEFAULT_MAX_UNPARSED = 0.05
_HUB_ID = re.compile(r"[\w.-]+/[\w.-]+(:[\w.-]+)?")
_LISTED = 5


class SubmissionError(ValueError):
    """A submission that cannot be read at all (as opposed to one with problems to report)."""


@dataclass
class Submission:
    name: str              # short name used in results (file stem, directory or Hub repository name)
    source: str            # where the reviews came from
    reviews: Dataset       # Review records, as stored (not parsed)
    manifest: dict

    @property
    def scale(self) -> str:
        return self.manifest.get("scale") or "venue"


def is_hub_id(source: str) -> bool:
    return bool(_HUB_ID.fullmatch(source)) and not Path(source).exists() and not source.startswith(".")


def submission_name(source: str) -> str:
    if is_hub_id(source):
        return source.partition(":")[0].split("/")[1]
    path = Path(source)
    return path.name if path.is_dir() else path.stem


def manifest_location(source: str) -> Path:
    """Where the manifest of a local submission is expected."""
    path = Path(source)
    return path / MANIFEST_NAME if path.is_dir() else path.parent / MANIFEST_NAME


def read_manifest(source: str, manifest: str | Path | None = None) -> dict:
    """The manifest of the submission at ``source`` (or the file ``manifest``), as a dict.
    A Hub submission's manifest is downloaded as a plain JSON file from the dataset repository."""
    if manifest is not None:
        path = Path(manifest)
    elif is_hub_id(source):
        from huggingface_hub import hf_hub_download

        repo = source.partition(":")[0]
        try:
            check_hub(repo, f"download {MANIFEST_NAME}")
            path = Path(hf_hub_download(repo, MANIFEST_NAME, repo_type="dataset"))
        except RecordError as err:
            raise SubmissionError(str(err)) from None
        except Exception as err:  # the Hub client raises many unrelated types
            raise SubmissionError(str(hub_error(repo, err, f"download {MANIFEST_NAME}"))) from None
    else:
        path = manifest_location(source)
        folder = Path(source).resolve()
        if Path(source).is_dir() and path.exists() and not path.resolve().is_relative_to(folder):
            raise SubmissionError(f"{path} leads to {path.resolve()}, outside the submission folder {folder}")
    if not path.is_file():
        raise SubmissionError(f"{path}: no manifest (write {MANIFEST_NAME} next to the reviews or pass --manifest)")
    try:
        data = read_json(path, what="manifest")
    except RecordError as err:
        raise SubmissionError(str(err)) from None
    if not isinstance(data, dict):
        raise SubmissionError(f"{path}: the manifest must be a JSON object, got {type(data).__name__}")
    return data


def _is_date(text: str, formats: tuple[str, ...]) -> bool:
    for fmt in formats:
        try:
            datetime.datetime.strptime(text, fmt)
            return True
        except ValueError:
            pass
    return False


def _float_holds(value) -> bool:
    """A number that a float holds as a finite number (a 401-digit integer is none)."""
    if not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _field_ok(name: str, value) -> bool:
    if name in ("model", "backend"):
        return isinstance(value, str) and bool(value.strip())
    if name in ("revision", "description"):
        return value is None or isinstance(value, str)
    if name == "prompts":
        return isinstance(value, list) and bool(value) and all(isinstance(p, str) and p for p in value)
    if name == "sampling":
        return isinstance(value, dict) and all(isinstance(k, str) and (v is None or isinstance(v, (str, bool))
                                                                       or _float_holds(v)) for k, v in value.items())
    if name == "date":
        return isinstance(value, str) and _is_date(value, ("%Y-%m-%d",))
    if name == "knowledge_cutoff":
        return value is None or (isinstance(value, str) and _is_date(value, ("%Y-%m", "%Y-%m-%d")))
    if name == "scale":
        return value in SCALE_CHOICES
    raise KeyError(name)


def _judge_validation_problem(value) -> str | None:
    """What is wrong with a manifest's ``judge_validation``, None when every entry is a validation result."""
    if not isinstance(value, list):
        return f"must be a list of judge validation results, got {type(value).__name__}"
    for number, entry in enumerate(value, 1):
        if not isinstance(entry, dict):
            return f"entry {number}: expected a JSON object, got {type(entry).__name__}"
        try:
            result = ValidationResult.from_dict(entry)
        except (TypeError, KeyError, ValueError, AttributeError) as err:
            return f"entry {number}: not a judge validation result ({type(err).__name__}: {err})"
        if result.task not in TASKS or not isinstance(result.judge_model, str) or not result.judge_model:
            return (f"entry {number}: not a judge validation result (task {result.task!r}, judge_model "
                    f"{result.judge_model!r})")
    return None


def carried_validations(manifests: Mapping[str, dict]) -> list[tuple[str, ValidationResult]]:
    """The judge validations the submissions' manifests (by submission name) carry, each with where it
    came from (``"manifest of NAME"``)."""
    return [(f"manifest of {name}", ValidationResult.from_dict(entry)) for name, manifest in manifests.items()
            for entry in manifest.get("judge_validation") or []]


def manifest_problems(manifest: dict, path: str | Path | None = None) -> list[str]:
    """One line per missing, unknown or ill-typed manifest field (naming the manifest's ``path`` when
    given: a manifest from elsewhere than the submission)."""
    place = f"manifest: {path}: " if path is not None else "manifest: "
    problems = []
    for name, (required, expected) in MANIFEST_FIELDS.items():
        if name not in manifest:
            if required:
                problems.append(f"{place}field '{name}' is missing (expected {expected})")
        elif name == "judge_validation":
            problem = _judge_validation_problem(manifest[name])
            if problem:
                problems.append(f"{place}field '{name}': {problem}")
        elif not _field_ok(name, manifest[name]):
            problems.append(f"{place}field '{name}' must be {expected}, got {manifest[name]!r:.60}")
    for name in sorted(set(manifest) - set(MANIFEST_FIELDS)):
        problems.append(f"{place}unknown field '{name}' (known: {', '.join(MANIFEST_FIELDS)})")
    return problems


def load_submission(source: str, manifest: str | Path | None = None, split: str = "train") -> Submission:
    """Read a submission's reviews and manifest; raises :class:`SubmissionError` on a malformed
    record or manifest (:func:`validate_submission` reports every problem instead)."""
    if not is_hub_id(source) and not Path(source).exists():
        raise SubmissionError(f"{source}: no such file or directory (and not a Hub dataset id 'org/name')")
    data = read_manifest(source, manifest)
    problems = manifest_problems(data)
    if problems:
        raise SubmissionError(f"{source}: " + "; ".join(problems))
    outside = paths_outside(source)
    if outside:
        more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
        raise SubmissionError(f"{outside[0]}{more}; a submission's data files must lie inside it")
    try:
        # Reviews that name no source are the manifest's model's.
        reviews = load_records(source, "review", split=split, source_name=data["model"])
    except RecordError as err:
        raise SubmissionError(str(err)) from None
    return Submission(submission_name(source), source, reviews, data)


def _listed(items) -> str:
    items = sorted(items, key=str)
    text = ", ".join(str(i) for i in items[:_LISTED])
    return text + (f" and {len(items) - _LISTED} more" if len(items) > _LISTED else "")


@dataclass
class ValidationReport:
    source: str
    n_reviews: int = 0
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.problems

    def format(self) -> str:
        head = f"{self.source}: {'valid' if self.valid else 'INVALID'} ({self.n_reviews} reviews)"
        lines = [head, *(f"  ok: {line}" for line in self.checked), *(f"  warning: {w}" for w in self.warnings),
                 *(f"  problem: {p}" for p in self.problems)]
        return "\n".join(lines)


def _schema_rows(source: str, split: str, report: ValidationReport, model: str | None) -> list[dict]:
    """Every row through :func:`praib.records.coerce_record`, as the loader reads it (rows without a source
    are ``model``'s); each bad row is one problem line."""
    from praib.records import coerce_record, raw_rows
    from praib.records.peer import RecordFormats

    rows, errors = [], []
    formats = RecordFormats("review", model if isinstance(model, str) and model.strip() else None)
    try:
        for where, raw in raw_rows(source, split)[0]:
            try:
                prepared = formats.prepare(raw, None, where)
                if prepared is not None:
                    rows.append(coerce_record(prepared, "review", where))
            except RecordError as err:
                errors.append(str(err))
    except RecordError as err:  # the file or dataset itself cannot be read
        report.problems.append(f"schema: {err}")
        return []
    report.problems.extend(f"schema: {e}" for e in errors[:_LISTED])
    if len(errors) > _LISTED:
        report.problems.append(f"schema: {len(errors) - _LISTED} more rows do not fit the Review schema")
    if not errors and rows:
        report.checked.append(f"schema: all {len(rows)} rows are Review records")
    return rows


def _without_repeated_ids(rows: list[dict], report: ValidationReport) -> list[dict]:
    """The rows as :func:`load_submission` reads them: a review_id used by different reviews is a
    problem line; exact repeats are dropped, as ``leaderboard run`` drops them, with a warning line."""
    repeats = record_repeats(rows, "review")
    if repeats.conflicting:
        report.problems.append(f"ids: {repeats.conflict('review_id')}")
    if repeats.exact:
        report.warnings.append(f"ids: {repeats.dropped('review_id')}, as `leaderboard run` drops them: "
                               f"{_listed(rows[i]['review_id'] for i in repeats.exact)}")
    if not repeats.conflicting and not repeats.exact:
        report.checked.append("ids: every review_id is used once")
    return repeats.without_exact(rows)


def _scale_problems(rows: list[dict], scale: str) -> list[str]:
    from praib.scales import UnknownScaleError, generic_scales, venue_scales

    outside: dict[str, list[str]] = defaultdict(list)
    unknown_scale: Counter = Counter()
    for row in rows:
        if row["rating"] is None and row["confidence"] is None:
            continue
        try:
            scales = generic_scales() if scale == "generic" else venue_scales(row["venue"], row["year"])
        except UnknownScaleError:
            unknown_scale[f"{row['venue']} {row['year']}"] += 1
            continue
        for kind, chosen in (("rating", scales.rating), ("confidence", scales.confidence)):
            value = row[kind]
            if value is not None and chosen is not None and value not in chosen.values:
                place = "generic scale" if scale == "generic" else f"{row['venue']} {row['year']}"
                outside[kind].append(f"{row['review_id']} ({value} not in {list(chosen.values)} of {place})")
    problems = [f"scale: {len(items)} {kind}s outside the venue scale: {_listed(items)}"
                for kind, items in outside.items()]
    if unknown_scale:
        problems.append(f"scale: no rating scale for {_listed(unknown_scale)} "
                        f"({sum(unknown_scale.values())} reviews cannot be checked)")
    return problems


def validate_submission(source: str, benchmark_papers: str | Path | None = None,
                        manifest: str | Path | None = None, split: str = "train",
                        max_unparsed: float = DEFAULT_MAX_UNPARSED) -> ValidationReport:
    """Check a submission and explain every problem in one line: the manifest (fields and
    types), the Review schema of every row, repeated review ids (one used by different reviews,
    exact repeats), coverage of the benchmark's paper ids (missing per prompt, unknown), the
    share of reviews that do not parse (at most ``max_unparsed``), duplicates (same paper,
    model, prompt, perturbation and text), ratings and confidences
    outside the venue-year scale, human records and records whose model or prompt the manifest
    does not name."""
    from praib.parsing import parse_reviews
    from praib.records import records_to_dataset

    report = ValidationReport(source)
    try:
        data = read_manifest(source, manifest)
    except SubmissionError as err:
        report.problems.append(f"manifest: {err}")
        data = {}
    else:
        manifest_issues = manifest_problems(data, manifest)
        report.problems.extend(manifest_issues)
        if not manifest_issues:
            report.checked.append("manifest: all fields present and well typed")
    outside = paths_outside(source)
    if outside:  # not read: its data would come from outside the submission
        report.problems.extend(f"data: {line}" for line in outside)
        return report
    if Path(source).is_dir() or is_hub_id(source):
        report.checked.append("data: every data file lies inside the submission")
    rows = _schema_rows(source, split, report, data.get("model"))
    report.n_reviews = len(rows)
    if not rows:
        if not any(p.startswith("schema:") for p in report.problems):
            report.problems.append("schema: the submission holds no review")
        return report
    rows = _without_repeated_ids(rows, report)
    report.n_reviews = len(rows)

    humans = [r["review_id"] for r in rows if r["source"] == HUMAN_SOURCE]
    if humans:
        report.problems.append(f"source: {len(humans)} records have source 'human'; a submission holds "
                               f"model reviews only: {_listed(humans)}")
    if isinstance(data.get("model"), str):
        other_models = Counter(r["model"] for r in rows if r["model"] != data["model"])
        if other_models:
            report.problems.append(f"model: {sum(other_models.values())} records name a model other than the "
                                   f"manifest's {data['model']!r}: {_listed(other_models)}")
    if isinstance(data.get("prompts"), list):
        other_prompts = Counter(r["prompt"] for r in rows if r["prompt"] not in data["prompts"])
        if other_prompts:
            report.problems.append(f"prompt: {sum(other_prompts.values())} records use a prompt the manifest "
                                   f"does not list: {_listed(other_prompts)}")

    originals = [r for r in rows if perturbation_kind(r) is None]
    if benchmark_papers is not None:
        try:
            papers = load_records(benchmark_papers, "paper")
        except RecordError as err:
            report.problems.append(f"coverage: cannot read the benchmark papers: {err}")
        else:
            benchmark = {p["paper_id"] for p in papers if perturbation_kind(p) is None}
            by_prompt: dict = defaultdict(set)
            for row in originals:
                by_prompt[row["prompt"]].add(row["paper_id"])
            for prompt, covered in sorted(by_prompt.items(), key=lambda kv: str(kv[0])):
                missing = benchmark - covered
                if missing:
                    report.problems.append(f"coverage: prompt {prompt!r} has no review of {len(missing)} of "
                                           f"{len(benchmark)} benchmark papers: {_listed(missing)}")
            unknown = Counter(r["paper_id"] for r in rows if r["paper_id"] not in benchmark)
            if unknown:
                report.problems.append(f"coverage: {sum(unknown.values())} reviews are of {len(unknown)} paper ids "
                                       f"not in the benchmark: {_listed(unknown)}")
            if not any(p.startswith("coverage:") for p in report.problems):
                report.checked.append(f"coverage: every prompt reviews all {len(benchmark)} benchmark papers")
    else:
        report.checked.append("coverage: not checked (no --benchmark-papers)")

    scale = data.get("scale") if data.get("scale") in SCALE_CHOICES else "venue"
    parsed = parse_reviews(records_to_dataset(rows, "review"), scale=scale).to_list()
    failed = [r["review_id"] for r in parsed if r["parse_status"] == PARSE_FAILED]
    share = len(failed) / len(parsed)
    if share > max_unparsed:
        report.problems.append(f"parse rate: {len(failed)} of {len(parsed)} reviews ({share:.1%}) did not parse, "
                               f"more than the {max_unparsed:.0%} allowed: {_listed(failed)}")
    else:
        report.checked.append(f"parse rate: {len(failed)} of {len(parsed)} reviews did not parse")

    keys = Counter((r["paper_id"], r["model"], r["prompt"], perturbation_kind(r), r["text"])
                   for r in rows if r["text"])
    duplicates = {k: n for k, n in keys.items() if n > 1}
    if duplicates:
        report.problems.append(f"duplicates: {sum(duplicates.values()) - len(duplicates)} reviews repeat another "
                               f"of the same paper, model and prompt word for word: "
                               + _listed(f"{k[0]} ({k[2]}) x{n}" for k, n in duplicates.items()))
    scale_issues = _scale_problems(parsed, scale)
    report.problems.extend(scale_issues)
    if not scale_issues:
        report.checked.append(f"scale: every rating and confidence is on the {scale} scale")
    return report
