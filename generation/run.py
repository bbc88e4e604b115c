"""Generate reviews of many papers with one backend and one prompt, losing nothing.

:func:`generate_reviews` renders one request per paper, sends the requests to
the backend in batches, parses every output with :func:`praib.parsing.parse_review`
on the prompt's scale, and writes Review records (``praib.records.REVIEW_FEATURES``).

Nothing is lost on a crash or Ctrl-C, and one bad item never sinks a run:

* give it a :class:`praib.llm.cache.CachedBackend` (the CLI always does):
  every answer is stored on disk the moment it arrives, so a rerun of the same
  command sends only the requests the cache lacks, and a repeated run sends none;
* each record is appended to ``<output>.partial.jsonl`` as its answer arrives;
  the final file (.parquet, .jsonl or a saved dataset directory) is written at
  the end and the partial file removed. A partial file left by an interrupted
  run is appended to, never overwritten;
* a write the system refuses (a full disk, no permission) stops the run with an
  :class:`~praib.records.OutputWriteError` naming the file, once the answers of
  the batch in flight have arrived and are in the cache;
* a paper whose request still fails after the backend's retries is recorded in
  ``<output>.failures.jsonl`` (paper id, stage, error class, message, tries) and
  counted in the summary; the other papers go on, and a rerun retries it.

Raw outputs are always kept in ``text``; outputs that do not parse keep their
text with ``parse_status`` ``failed``/``partial`` and are counted in the summary.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator, Sequence

from datasets import Dataset

from praib.parsing import parse_review
from praib.records import (PARSE_FAILED, PARSE_OK, REVIEW_SECTIONS, OutputWriteError, coerce_record,
                           records_to_dataset, save_records)
from praib.records.ids import hash_id, record_id
from praib.records.locks import output_lock
from praib.scales import VenueScales, generic_scales, venue_scales

from praib.llm.backends import GenerationRequest, SamplingConfig, generate_each
from praib.llm.failures import PROMPT_TOO_LONG, CallFailure, FailedItem, FailureLog, failures_path
from praib.generation.papers import PAPERLESS, DEFAULT_TOKEN_BUDGET, approximate_tokens, fit_papers, tokenizer_counter
from praib.llm.budget import find_tokenizer, prompt_meter

logger = logging.getLogger(__name__)

#: --batch-size default of the CLI for backends that are not vLLM (vLLM gets every request at once).
DEFAULT_BATCH_SIZE = 16


@dataclass
class GenerationSummary:
    """What a run did; ``str()`` gives the one-paragraph report the CLI prints."""

    n_papers: int = 0
    n_generated: int = 0          # records written
    n_from_cache: int | None = None  # None when the backend has no cache
    n_backend_calls: int | None = None
    n_parsed: int = 0             # parse_status ok
    n_partial: int = 0
    n_unparsed: int = 0           # parse_status failed
    n_truncated: int = 0
    n_appendix_removed: int = 0
    output_tokens: int = 0        # of the raw outputs, counted like the paper tokens
    exact_tokens: bool = False    # counted with the model's tokenizer (else approximated)
    seconds: float = 0.0
    backend_seconds: float = 0.0  # inside backend.generate (cache lookups included)
    output: str | None = None
    unparsed_ids: list[str] = field(default_factory=list)
    failed: list[FailedItem] = field(default_factory=list)  # papers with no review: the request failed

    @property
    def reviews_per_second(self) -> float:
        return self.n_generated / self.seconds if self.seconds else 0.0

    @property
    def tokens_per_second(self) -> float:
        return self.output_tokens / self.seconds if self.seconds else 0.0

    def __str__(self) -> str:
        sent_and_failed = sum(item.tries > 0 for item in self.failed)
        cache = "" if self.n_from_cache is None else (
            f" ({self.n_from_cache} from cache, {self.n_backend_calls - sent_and_failed} generated now"
            + (f", {len(self.failed)} failed" if self.failed else "") + ")")
        approx = "" if self.exact_tokens else "~"
        lines = [
            f"{self.n_generated} reviews of {self.n_papers} papers{cache} in {self.seconds:.1f} s: "
            f"{self.reviews_per_second:.2f} reviews/s, {approx}{self.tokens_per_second:.0f} output tokens/s",
            f"parsed: {self.n_parsed} ok, {self.n_partial} partial, {self.n_unparsed} unparsed"
            + (f" ({', '.join(self.unparsed_ids[:5])}{', ...' if len(self.unparsed_ids) > 5 else ''})"
               if self.unparsed_ids else ""),
            f"papers truncated to the token budget: {self.n_truncated}; appendix removed: {self.n_appendix_removed}",
        ]
        if self.failed:
            where = failures_path(self.output) if self.output else "the run's failure log"
            lines.append(f"failed: {len(self.failed)} of {self.n_papers} papers got no review (why: {where}); "
                         "rerun the same command to retry them")
        if self.output:
            lines.append(f"wrote {self.output}")
        return "\n".join(lines)


@dataclass
class GenerationResult:
    records: Dataset
    summary: GenerationSummary


def partial_path(output: Path) -> Path:
    """Where a run appends finished records before the final file is written."""
    output = Path(output)
    return output.with_suffix(".partial.jsonl") if output.suffix else output.with_name(output.name + ".partial.jsonl")


def template_id(prompt: Any) -> str:
    """Prompt name plus a hash of its template source: which template, and which version of it."""
    return f"{prompt.spec.name}@{hash_id(prompt.source_text, length=12)}"


def prompt_scales(prompt: Any, venue: str | None, year: int | None) -> VenueScales:
    """The scales outputs of ``prompt`` are parsed on: the venue-year's, or the generic ones."""
    if prompt.spec.scale == "venue":
        if not venue or year is None:
            raise ValueError(f"prompt {prompt.spec.name!r} follows the venue's scales of a year: give a venue and "
                             "year (or papers that have them)")
        return venue_scales(venue, year)
    return generic_scales()


def _token_counter(backend: Any, tokenizer: Any | None) -> tuple[Callable[[str], int], bool]:
    tokenizer = tokenizer if tokenizer is not None else find_tokenizer(backend)
    if tokenizer is not None:
        return tokenizer_counter(tokenizer), True
    return approximate_tokens, False


def default_source(model: str) -> str:
    """The model's name as a review source: a local model directory is named by its folder,
    so that the records do not carry a machine-specific path; a Hub id stays as it is."""
    path = Path(model)
    return path.name if path.is_dir() and (path / "config.json").exists() else model


def _review_id(paper_id: str, source: str, prompt: str, venue: Any, year: Any, generation: dict,
               perturbation: dict | None) -> str:
    return record_id([paper_id, source, prompt, venue, year, generation] + ([perturbation] if perturbation else []))


def _revisions(backend: Any, batch: Sequence[GenerationRequest]) -> list[str | None]:
    """The model revision that produced each output: for a cached backend the one stored with the
    cached call (an OpenAI-compatible server reports its fingerprint only on calls that reach it),
    else the backend's current one."""
    current = getattr(backend, "model_revision", None)
    cache, inner = getattr(backend, "cache", None), getattr(backend, "inner", None)
    if cache is None or inner is None or not callable(getattr(cache, "metadata", None)):
        return [current] * len(batch)
    from praib.llm.cache import CallCache

    revisions = []
    for request in batch:
        meta = cache.metadata(CallCache.key(inner.name, inner.model, request)) or {}
        revisions.append(meta.get("model_revision") or current)
    return revisions


def _backend_counts(backend: Any) -> tuple[int, int] | None:
    hits, misses = getattr(backend, "hits", None), getattr(backend, "misses", None)
    if isinstance(hits, int) and isinstance(misses, int):
        return hits, misses
    return None


@dataclass(frozen=True)
class RunItem:
    """One request of a run: ``id`` names it where the run stops and in failure records (a paper id),
    ``request`` is rendered already."""

    id: str
    request: GenerationRequest


@dataclass
class RunOutcome:
    """What :func:`run_requests` made: one record per item that got an answer, in item order, with
    the raw outputs, and the items that failed."""

    records: list[dict[str, Any]]
    outputs: list[str]
    failed: list[FailedItem]
    n_from_cache: int | None     # None when the backend has no cache
    n_backend_calls: int | None
    backend_seconds: float       # inside backend.generate (cache lookups included)


class _PartialFile:
    """``<output>.partial.jsonl``, appended to as answers arrive. A write the system refuses (a full disk,
    no permission) is kept in ``error``, naming the file, rather than raised from the callback of an
    answer: the answers still on their way then arrive, and are cached, before the run stops."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: OutputWriteError | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size:
            # An earlier run stopped here; keep its records (they matter most without a cache).
            logger.warning("%s exists (an earlier run was interrupted); appending to it", path)
        self._handle = path.open("a", encoding="utf-8")

    def append(self, record: dict[str, Any]) -> None:
        """The record as one line, flushed."""
        if self.error is None:
            with self._refusal_kept():
                self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
                self._handle.flush()

    def sync(self) -> None:
        if self.error is None:
            with self._refusal_kept():
                os.fsync(self._handle.fileno())

    def close(self) -> None:
        # Closing flushes what a refused write left in the buffer: refused again, and known already.
        with self._refusal_kept():
            self._handle.close()

    @contextmanager
    def _refusal_kept(self) -> Iterator[None]:
        try:
            yield
        except OSError as err:
            if self.error is None:
                self.error = OutputWriteError(err.errno, err.strerror, str(self.path))
                logger.warning("%s; the run stops once the answers on their way have arrived", self.error)


def run_requests(items: Sequence[RunItem], backend: Any, make_record: Callable[[int, str, str | None], dict], *,
                 output: str | Path | None, batch_size: int | None, progress: bool, unit: str,
                 description: str, failures: FailureLog | None = None, stage: str | None = None) -> RunOutcome:
    """Send every item's request to ``backend`` in batches and turn each answer into a record.

    ``make_record(index, raw_output, model_revision)`` builds the record of ``items[index]``; the
    revision is the one stored with the cached call (see :func:`_revisions`). Each record is appended
    to ``<output>.partial.jsonl`` as its answer arrives (flushed; fsynced after each batch). An item
    whose request fails (:class:`~praib.llm.failures.CallFailure`) becomes a failure record of
    ``stage`` in ``failures`` (a fresh log when None), and the run goes on until the log says stop.
    Behind a ``CachedBackend`` every answer is stored as it arrives, so a rerun sends only the failed
    and missing items. A write to the partial file that fails raises :class:`OutputWriteError` at the
    end of its batch (at once without a call cache, where later answers would be lost all the same).
    The caller writes the final file (:func:`finish_run`).
    """
    failures = failures if failures is not None else FailureLog()
    stage = stage or unit
    partial = _PartialFile(partial_path(output)) if output is not None else None
    counts_before = _backend_counts(backend)
    size = batch_size or len(items) or 1
    bar = None
    if progress:
        from praib.records.progress import progress_bar
        bar = progress_bar(total=len(items), unit=unit, desc=description)
    made: dict[int, tuple[dict[str, Any], str]] = {}
    failed: list[FailedItem] = []
    backend_seconds = 0.0
    try:
        for start in range(0, len(items), size):
            batch = [item.request for item in items[start:start + size]]
            revisions: list[str | None] | None = None

            def arrived(offset: int, reply: str | CallFailure) -> None:
                nonlocal revisions
                index = start + offset
                if bar is not None:
                    bar.update(1)
                if isinstance(reply, CallFailure):
                    item = FailedItem(items[index].id, stage, reply.error, reply.message, reply.tries)
                    failed.append(item)
                    failures.failed(item)  # raises TooManyFailures when the run should stop
                    return
                failures.succeeded()
                if revisions is None:
                    revisions = _revisions(backend, batch)
                record = make_record(index, reply, revisions[offset])
                made[index] = (record, reply)
                if partial is not None:
                    partial.append(record)
                    if partial.error is not None and counts_before is None:
                        raise partial.error

            tick = time.perf_counter()
            # One batch holding everything (vLLM): let the backend show its own progress.
            generate_each(backend, batch, arrived, progress=progress and batch_size is None and len(batch) > 1)
            backend_seconds += time.perf_counter() - tick
            if partial is not None:
                partial.sync()
                if partial.error is not None:
                    raise partial.error
            if bar is not None:
                counts = _backend_counts(backend)
                if counts and counts_before:
                    bar.set_postfix(cached=counts[0] - counts_before[0], refresh=False)
        failures.stop_if_none_answered()
        if partial is not None:
            partial.close()
            if partial.error is not None:
                raise partial.error
    except BaseException:
        if bar is not None:
            bar.close()
        if partial is not None:
            partial.close()
        kept = partial is not None and partial.error is None
        logger.warning("stopped after %d of %d %ss (%d failed)%s; %s", len(made), len(items), unit, len(failed),
                       f"; finished ones are in {partial.path}" if kept else "",
                       "rerun the same command to resume: every answer that arrived is in the call cache"
                       if counts_before is not None else "this backend has no call cache, so a rerun starts over")
        raise
    if bar is not None:
        bar.close()
    counts_after = _backend_counts(backend)
    from_cache = calls = None
    if counts_before and counts_after:
        from_cache, calls = counts_after[0] - counts_before[0], counts_after[1] - counts_before[1]
    done = [made[index] for index in sorted(made)]
    return RunOutcome([record for record, _ in done], [raw for _, raw in done], failed, from_cache, calls,
                      backend_seconds)


def finish_run(records: list[dict[str, Any]], kind: str, output: str | Path | None,
               failures: FailureLog | None = None) -> Dataset:
    """The records of a finished run as a Dataset of ``kind``, written to ``output`` (which replaces
    the partial file) when there is one, with the run's failure records beside it
    (``<output>.failures.jsonl``; a stale one is removed when nothing failed)."""
    dataset = records_to_dataset(records, kind)
    if output is not None:
        save_records(dataset, output)
        partial_path(output).unlink(missing_ok=True)
        if failures is not None:
            failures.write(output)
    return dataset


def run_generation(papers: Dataset, backend: Any, prompt: Any, *, venue: str | None, year: int | None,
                   output: str | Path | None, sampling: SamplingConfig | None = None,
                   knowledge_cutoff: str | None = None, token_budget: int | None = DEFAULT_TOKEN_BUDGET,
                   remove_appendix: bool = False, batch_size: int | None = None, progress: bool = True,
                   source: str | None = None, tokenizer: Any | None = None,
                   prompt_params: dict[str, Any] | None = None,
                   failures: FailureLog | None = None) -> GenerationResult:
    """:func:`generate_reviews`, returning the records together with a :class:`GenerationSummary`."""
    prompt.check_params(prompt_params or {})
    with locked(output):
        return _run_generation(papers, backend, prompt, venue=venue, year=year, output=output, sampling=sampling,
                               knowledge_cutoff=knowledge_cutoff, token_budget=token_budget,
                               remove_appendix=remove_appendix, batch_size=batch_size, progress=progress,
                               source=source, tokenizer=tokenizer, prompt_params=prompt_params,
                               failures=failures if failures is not None else FailureLog())


def locked(output: str | Path | None) -> ContextManager:
    """The output's lock (:func:`praib.records.locks.output_lock`) for a whole run; nothing without an output."""
    return output_lock(output) if output is not None else nullcontext()


def _run_generation(papers: Dataset, backend: Any, prompt: Any, *, venue: str | None, year: int | None,
                    output: str | Path | None, sampling: SamplingConfig | None, knowledge_cutoff: str | None,
                    token_budget: int | None, remove_appendix: bool, batch_size: int | None, progress: bool,
                    source: str | None, tokenizer: Any | None, prompt_params: dict[str, Any] | None,
                    failures: FailureLog) -> GenerationResult:
    started = time.perf_counter()
    sampling = sampling or SamplingConfig()
    if prompt.spec.output != "review":
        raise ValueError(f"prompt {prompt.spec.name!r} writes {prompt.spec.output.replace('_', '-')}s; "
                         "generate_reviews needs a review prompt (see `praib prompts list`)")
    missing_inputs = [i for i in prompt.spec.inputs if i != "paper"]
    if missing_inputs:
        raise ValueError(f"prompt {prompt.spec.name!r} also needs {' and '.join(missing_inputs)}, "
                         "which review generation does not provide")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be positive or None, got {batch_size}")
    scales_of: dict[tuple[Any, Any], VenueScales] = {}
    count_tokens, exact = _token_counter(backend, tokenizer)
    source = source or default_source(backend.model)
    template = template_id(prompt)
    summary = GenerationSummary(n_papers=len(papers), exact_tokens=exact,
                                output=str(output) if output is not None else None)

    # Render every request first: a scale or template error surfaces before any generation.
    rows = papers.to_list()
    contexts: list[tuple[Any, Any]] = []  # (venue, year) of each review: the arguments, else the paper's own
    for paper in rows:
        context = (venue if venue is not None else paper.get("venue"), year if year is not None else paper.get("year"))
        if context not in scales_of:
            try:
                scales_of[context] = prompt_scales(prompt, *context)
            except (ValueError, LookupError) as err:  # LookupError: UnknownScaleError
                raise ValueError(f"paper {paper['paper_id']}: {err}") from None
        contexts.append(context)

    @functools.lru_cache(maxsize=None)
    def render_for(context: tuple, paper_text: str) -> tuple[tuple[str, str], ...]:
        messages = prompt.render(paper_text=paper_text, venue=context[0], year=context[1],
                                 knowledge_cutoff=knowledge_cutoff, **(prompt_params or {}))
        return tuple((m["role"], m["content"]) for m in messages)

    def render(index: int, paper_text: str) -> tuple[tuple[str, str], ...]:
        # The prompt without its paper is the same for every paper of a venue-year: rendered once.
        return render_for(contexts[index], paper_text) if paper_text == PAPERLESS else \
            render_for.__wrapped__(contexts[index], paper_text)

    # Each paper gets what its prompt and the answer leave of the model's context (when it is known).
    prepared_papers, too_long = fit_papers([paper["text"] or "" for paper in rows], render,
                                           prompt_meter(backend, tokenizer), sampling.max_new_tokens, token_budget,
                                           count_tokens, remove_appendix)
    stage = f"generate:{prompt.spec.name}"
    items: list[RunItem] = []
    positions: list[int] = []  # the paper of each item
    for index, (paper, prepared) in enumerate(zip(rows, prepared_papers)):
        if prepared is None:
            item = FailedItem(paper["paper_id"], stage, PROMPT_TOO_LONG, too_long[index], 0)
            summary.failed.append(item)
            failures.failed(item)
            continue
        items.append(RunItem(paper["paper_id"], GenerationRequest(messages=render(index, prepared.text),
                                                                  sampling=sampling, template=prompt.spec.name)))
        positions.append(index)
        summary.n_truncated += prepared.truncated
        summary.n_appendix_removed += prepared.appendix_removed

    def review_record(item: int, raw: str, model_revision: str | None) -> dict[str, Any]:
        index = positions[item]
        paper_venue, paper_year = contexts[index]
        return _review_record(rows[index], prepared_papers[index], raw, scales_of[contexts[index]], backend=backend,
                              source=source, prompt=prompt.spec.name, venue=paper_venue, year=paper_year,
                              model_revision=model_revision, template=template, sampling=sampling,
                              knowledge_cutoff=knowledge_cutoff)

    done = run_requests(items, backend, review_record, output=output, batch_size=batch_size, progress=progress,
                        unit="review", description=f"{source} / {prompt.spec.name}", failures=failures, stage=stage)
    records = done.records
    summary.failed += done.failed
    summary.backend_seconds = done.backend_seconds
    outputs = [raw or "" for raw in done.outputs]
    count_many = getattr(count_tokens, "count_many", None)
    summary.output_tokens = sum(count_many(outputs)) if count_many is not None else sum(map(count_tokens, outputs))

    for record in records:
        status = record["parse_status"]
        if status == PARSE_OK:
            summary.n_parsed += 1
        elif status == PARSE_FAILED:
            summary.n_unparsed += 1
            summary.unparsed_ids.append(record["paper_id"])
        else:
            summary.n_partial += 1
    summary.n_generated = len(records)
    summary.n_from_cache, summary.n_backend_calls = done.n_from_cache, done.n_backend_calls
    dataset = finish_run(records, "review", output, failures)
    summary.seconds = time.perf_counter() - started
    if summary.n_unparsed:
        logger.warning("%d of %d outputs could not be parsed; their raw text is kept (parse_status 'failed')",
                       summary.n_unparsed, summary.n_generated)
    logger.info("%s", summary)
    return GenerationResult(dataset, summary)


def _review_record(paper: dict, prepared: Any, raw: str, scales: VenueScales, *, backend: Any, source: str,
                   prompt: str, venue: str | None, year: int | None, model_revision: str | None, template: str,
                   sampling: SamplingConfig, knowledge_cutoff: str | None) -> dict[str, Any]:
    parsed = parse_review(raw, scales)
    generation = {
        "backend": backend.name,
        "model_revision": model_revision,
        "template": template,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "max_new_tokens": sampling.max_new_tokens,
        "seed": sampling.seed,
        "knowledge_cutoff": knowledge_cutoff,
        "paper_tokens": prepared.tokens,
        "paper_truncated": prepared.truncated,
        "appendix_removed": prepared.appendix_removed,
    }
    row = {
        "review_id": _review_id(paper["paper_id"], source, prompt, venue, year, generation, paper.get("perturbation")),
        "paper_id": paper["paper_id"],
        "venue": venue,
        "year": year,
        "decision": paper.get("decision"),
        "source": source,
        "model": backend.model,
        "prompt": prompt,
        "reviewer_id": None,
        **{name: parsed.sections.get(name) for name in REVIEW_SECTIONS},
        "text": raw,
        "rating": parsed.rating,
        "confidence": parsed.confidence,
        "subscores": [{"name": k, "value": v} for k, v in parsed.subscores.items()],
        "recommendation": parsed.recommendation,
        "parse_status": parsed.status,
        "parse_reason": parsed.reason,
        "generation": generation,
        "perturbation": paper.get("perturbation"),
    }
    return coerce_record(row, "review", f"review of paper {paper['paper_id']}")


def generate_reviews(papers: Dataset, backend: Any, prompt: Any, *, venue: str | None, year: int | None,
                     output: str | Path | None, sampling: SamplingConfig | None = None,
                     knowledge_cutoff: str | None = None, token_budget: int | None = DEFAULT_TOKEN_BUDGET,
                     remove_appendix: bool = False, batch_size: int | None = None, progress: bool = True,
                     source: str | None = None, tokenizer: Any | None = None,
                     prompt_params: dict[str, Any] | None = None, failures: FailureLog | None = None) -> Dataset:
    """Review every paper of ``papers`` with ``backend`` and ``prompt``; return (and write) Review records.

    * ``papers``: a Dataset with ``PAPER_FEATURES`` (see :func:`praib.generation.papers.load_papers`).
    * ``backend``: any object with ``name``, ``model``, ``model_revision`` and
      ``generate(requests, progress=False) -> list[str]``; wrap it in a
      ``CachedBackend`` to resume interrupted runs.
    * ``venue``/``year``: what the prompt is rendered and parsed for; None takes each
      paper's own venue / year.
    * ``prompt``: a loaded prompt (:func:`praib.generation.prompts.load_prompt`); its
      scale decides how outputs are parsed (``venue``: ``venue_scales(venue, year)``;
      ``generic``/``none``: the generic 1-10 / 1-5 scales).
    * ``output``: .parquet, .jsonl, or any other path for a saved dataset directory
      (None writes nothing). Finished batches go to ``<output>.partial.jsonl`` first.
    * ``token_budget``/``remove_appendix``: see :func:`praib.generation.papers.prepare_paper_text`;
      tokens are counted with the backend's tokenizer when it has one (or ``tokenizer``),
      else approximated.
    * ``batch_size``: requests per backend call; None sends all at once (what vLLM wants).
    * ``source``: the records' ``source`` (default: the backend's model name; the folder name
      for a local model directory).
    * ``prompt_params``: extra template parameters (e.g. venue guidelines of Zero-Guide).
    * ``failures``: the run's :class:`~praib.llm.failures.FailureLog` (``max_failures`` decides
      when to stop); papers whose request failed get no record and are listed there and in
      ``<output>.failures.jsonl``.

    The records are in the order of ``papers``; each keeps the raw output in
    ``text``, the parsed sections and scores, ``parse_status``/``parse_reason`` and
    the ``generation`` struct (backend, model revision, template, sampling,
    knowledge cut-off, paper tokens, truncation, appendix removal). A summary is
    logged at INFO level and printed to stderr when ``progress`` is on.
    """
    result = run_generation(papers, backend, prompt, venue=venue, year=year, output=output, sampling=sampling,
                            knowledge_cutoff=knowledge_cutoff, token_budget=token_budget,
                            remove_appendix=remove_appendix, batch_size=batch_size, progress=progress,
                            source=source, tokenizer=tokenizer, prompt_params=prompt_params, failures=failures)
    if progress:
        print(result.summary, file=sys.stderr)
    return result.records


__all__: Sequence[str] = ("DEFAULT_BATCH_SIZE", "GenerationResult", "GenerationSummary", "RunItem", "RunOutcome",
                          "finish_run", "generate_reviews", "partial_path", "prompt_scales", "run_generation",
                          "run_requests", "template_id")
