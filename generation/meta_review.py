"""LLM-as-meta-reviewer runs with exactly one input component perturbed (aspect-guided perturbation).

:func:`run_meta_reviews` gives a model each paper with its reviews and rebuttal(s) in one of the
three meta-review prompts (``meta_review_score``: score and decision only; ``meta_review_dimensions``:
dimension scores first; ``meta_review_template``: the venue's meta-review fields) and writes
MetaReview records (``praib.records.META_REVIEW_FEATURES``). With ``component`` and ``kind``, that
one component (the paper, the reviews or the rebuttals) is replaced by its perturbed version from
:func:`praib.perturb.inputs.perturb_component`; the records then carry that component's
``perturbation`` and keep the paper's ``paper_id``, so they pair with the unperturbed run.

Runs go through the run loop of ``praib generate`` (:func:`praib.generation.run.run_requests`), so they
lose nothing: behind a ``CachedBackend`` a rerun sends only the missing requests (an identical rerun
none), and each finished batch is appended to ``<output>.partial.jsonl`` before the final file is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

from praib.generation.papers import approximate_tokens, fit_papers, tokenizer_counter
from praib.llm.budget import find_tokenizer, prompt_meter
from praib.generation.run import (RunItem, default_source, finish_run, locked, prompt_scales, run_requests,
                                  template_id)
from praib.llm.backends import GenerationRequest, SamplingConfig
from praib.llm.failures import PROMPT_TOO_LONG, FailedItem, FailureLog
from praib.parsing import parse_review
from praib.perturb.inputs import COMPONENTS, perturb_component
from praib.records import PARSE_FAILED, PARSE_OK, PARSE_PARTIAL, coerce_record
from praib.records.ids import record_id
from praib.scales import VenueScales, generic_scales

META_REVIEW_PROMPTS = ("meta_review_score", "meta_review_dimensions", "meta_review_template")

_DECISION = re.compile(r"final\s+decision\W*?\s*(reject|accept\s+as\s+(?:poster|spotlight|oral))", re.IGNORECASE)


def parse_decision(text: str) -> str | None:
    """The final decision of a meta-review ("Reject", "Accept as Poster", ...), None when absent."""
    found = _DECISION.findall(text or "")
    if not found:
        return None
    words = found[-1].split()
    return " ".join([words[0].capitalize(), *words[1:-1], words[-1].capitalize()]) if len(words) > 1 \
        else words[0].capitalize()


@dataclass
class MetaReviewRun:
    records: Any                 # META_REVIEW_FEATURES Dataset
    n_from_cache: int | None     # None when the backend has no cache
    n_backend_calls: int | None
    n_skipped: int               # papers without reviews, or whose component the perturbation left unchanged
    n_failed: int = 0            # papers whose request failed (see the run's failure log)

    def __str__(self) -> str:
        parsed = sum(1 for s in self.records["parse_status"] if s == PARSE_OK)
        cache = "" if self.n_from_cache is None else \
            f" ({self.n_from_cache} from cache, {self.n_backend_calls} generated now)"
        failed = f"; {self.n_failed} failed (rerun the same command to retry them)" if self.n_failed else ""
        return (f"{len(self.records)} meta-reviews{cache}; {parsed} parsed (score and decision); "
                f"{self.n_skipped} paper(s) skipped{failed}")


_SCORE_LINE = re.compile(r"^\W*(rating|overall score|score)\W*:", re.IGNORECASE | re.MULTILINE)


def review_input(review: dict) -> str:
    """A review as the meta-reviewer sees it: its text, plus its rating and confidence when the text
    does not state them (human reviews often keep their scores in fields only)."""
    text = (review.get("text") or "").rstrip()
    if review.get("rating") is None or _SCORE_LINE.search(text):
        return text
    scores = [f"Rating: {review['rating']}"]
    if review.get("confidence") is not None:
        scores.append(f"Confidence: {review['confidence']}")
    return text + "\n\n" + "\n".join(scores)


def _group(rows: list[dict]) -> dict[str, list[dict]]:
    grouped: dict[str, list[dict]] = {}
    for row in rows:
        grouped.setdefault(row["paper_id"], []).append(row)
    return grouped


def _rebuttal_input(reviews: list[dict], rebuttals: list[dict]) -> list[str | None] | str | None:
    """One rebuttal per review when the rebuttals name their reviews, else one joined text."""
    if not rebuttals:
        return None
    by_review = {r["review_id"]: r["text"] for r in rebuttals if r.get("review_id")}
    if by_review and all(r.get("review_id") for r in rebuttals):
        return [by_review.get(review["review_id"]) for review in reviews]
    return "\n\n".join(r["text"] for r in rebuttals if r.get("text"))


def run_meta_reviews(papers: Any, reviews: Any, rebuttals: Any, backend: Any, prompt: Any, *,
                     component: str | None = None, kind: str | None = None, seed: int = 0, judge: Any = None,
                     output: str | Path | None = None, sampling: Any = None, token_budget: int | None = 50_000,
                     batch_size: int | None = None, source: str | None = None,
                     progress: bool = True, failures: FailureLog | None = None) -> MetaReviewRun:
    """Meta-review every paper that has reviews; see the module docstring. The run holds ``output``'s lock.

    ``papers``/``reviews``/``rebuttals``: PAPER/REVIEW/REBUTTAL_FEATURES Datasets (``rebuttals`` may be
    None); only unperturbed records are used as inputs. ``component`` (paper, reviews, rebuttal)
    and ``kind`` (a registry perturbation) perturb one input; ``seed`` and ``judge`` go to the
    perturbation. Papers whose perturbed component came back unchanged are skipped, so every record
    of a perturbed run really had one perturbed input.
    """
    if prompt.spec.output != "meta_review":
        raise ValueError(f"prompt {prompt.spec.name!r} does not write meta-reviews; use one of "
                         f"{', '.join(META_REVIEW_PROMPTS)} or a template with 'output: meta_review'")
    if (component is None) != (kind is None):
        raise ValueError("give both the component to perturb and the perturbation kind, or neither")
    if component is not None and component not in COMPONENTS:
        raise ValueError(f"unknown component {component!r}; choose from {', '.join(COMPONENTS)}")
    sampling = sampling or SamplingConfig()
    inputs = {
        "paper": [p for p in papers.to_list() if p.get("perturbation") is None],
        "reviews": [r for r in reviews.to_list() if r.get("perturbation") is None],
        "rebuttal": [r for r in rebuttals.to_list() if r.get("perturbation") is None] if rebuttals is not None else [],
    }
    if component == "rebuttal" and not inputs["rebuttal"]:
        raise ValueError("no rebuttals to perturb")
    perturbed = None
    if component is not None:
        perturbed = perturb_component(inputs[component], component, kind, seed=seed, judge=judge, progress=progress)
        inputs[component] = perturbed.records
    papers_by_id = {p["paper_id"]: p for p in inputs["paper"]}
    reviews_of, rebuttals_of = _group(inputs["reviews"]), _group(inputs["rebuttal"])

    jobs, skipped = [], 0
    for paper_id, paper in papers_by_id.items():
        paper_reviews = [r for r in reviews_of.get(paper_id, []) if r.get("text")]
        perturbation = None
        if perturbed is not None:
            touched = {"paper": [paper], "reviews": paper_reviews, "rebuttal": rebuttals_of.get(paper_id, [])}
            perturbation = perturbed.perturbation_of(touched[component])
        if not paper_reviews or (perturbed is not None and perturbation is None):
            skipped += 1
            continue
        jobs.append((paper, paper_reviews, rebuttals_of.get(paper_id, []), perturbation))

    tokenizer = find_tokenizer(backend)
    count_tokens = tokenizer_counter(tokenizer) if tokenizer is not None else approximate_tokens
    template = template_id(prompt)
    scales = []
    for paper, *_ in jobs:
        try:
            scales.append(with_study_dimensions(prompt_scales(prompt, paper.get("venue"), paper.get("year"))))
        except (ValueError, LookupError) as err:
            raise ValueError(f"paper {paper['paper_id']}: {err}") from None

    def render(index: int, paper_text: str) -> tuple[tuple[str, str], ...]:
        paper, paper_reviews, paper_rebuttals, _ = jobs[index]
        try:
            messages = prompt.render(paper_text=paper_text, venue=paper.get("venue"), year=paper.get("year"),
                                     reviews=[review_input(r) for r in paper_reviews],
                                     rebuttal=_rebuttal_input(paper_reviews, paper_rebuttals))
        except (ValueError, LookupError) as err:
            raise ValueError(f"paper {paper['paper_id']}: {err}") from None
        return tuple((m["role"], m["content"]) for m in messages)

    # Each paper gets what its prompt (with its reviews) and the answer leave of the model's context.
    prepared, too_long = fit_papers([paper["text"] or "" for paper, *_ in jobs], render, prompt_meter(backend),
                                    sampling.max_new_tokens, token_budget, count_tokens, False)
    failures = failures if failures is not None else FailureLog()
    stage = f"meta-review:{prompt.spec.name}"
    items, positions = [], []
    for index, ((paper, *_), text) in enumerate(zip(jobs, prepared)):
        if text is None:
            failures.failed(FailedItem(paper["paper_id"], stage, PROMPT_TOO_LONG, too_long[index], 0))
            continue
        items.append(RunItem(paper["paper_id"], GenerationRequest(messages=render(index, text.text), sampling=sampling,
                                                                  template=prompt.spec.name)))
        positions.append(index)
    source = source or default_source(backend.model)

    def meta_review_record(item: int, raw: str, model_revision: str | None) -> dict:
        index = positions[item]
        paper, _, _, perturbation = jobs[index]
        return coerce_record(_record(paper, raw, scales[index], prepared[index], perturbation, backend=backend,
                                     source=source, prompt=prompt.spec.name, template=template, sampling=sampling,
                                     model_revision=model_revision),
                             "meta_review", f"meta-review of paper {paper['paper_id']}")

    with locked(output):
        done = run_requests(items, backend, meta_review_record, output=output, batch_size=batch_size,
                            progress=progress, unit="meta-review", description=f"{source} / {prompt.spec.name}",
                            failures=failures, stage=stage)
        return MetaReviewRun(finish_run(done.records, "meta_review", output, failures), done.n_from_cache,
                             done.n_backend_calls, skipped, len(done.failed) + len(too_long))


#: The aspect-guided study's dimensions, which its Dimension CoT prompt asks for on a 1-4 scale.
STUDY_DIMENSIONS = ("contribution", "soundness", "presentation")


def with_study_dimensions(scales: VenueScales) -> VenueScales:
    """``scales``, with the study's dimension scales (:data:`STUDY_DIMENSIONS`, 1-4) where the venue-year has no
    sub-score scale of its own: the Dimension CoT prompt asks for them there too, and their scores are kept."""
    if scales.subscores:
        return scales
    generic = generic_scales()
    return replace(scales, subscores={name: generic.subscores[name] for name in STUDY_DIMENSIONS})


def _record(paper: dict, raw: str, scales: Any, prepared: Any, perturbation: dict | None, *, backend: Any,
            source: str, prompt: str, template: str, sampling: Any, model_revision: str | None) -> dict:
    parsed = parse_review(raw, scales)
    decision = parse_decision(raw)
    missing = [name for name, value in (("overall score", parsed.rating), ("final decision", decision))
               if value is None]
    status = PARSE_OK if not missing else (PARSE_FAILED if len(missing) == 2 else PARSE_PARTIAL)
    generation = {
        "backend": backend.name, "model_revision": model_revision, "template": template,
        "temperature": sampling.temperature, "top_p": sampling.top_p, "max_new_tokens": sampling.max_new_tokens,
        "seed": sampling.seed, "knowledge_cutoff": None, "paper_tokens": prepared.tokens,
        "paper_truncated": prepared.truncated, "appendix_removed": prepared.appendix_removed,
    }
    return {
        "meta_review_id": record_id([paper["paper_id"], source, prompt, generation, perturbation]),
        "paper_id": paper["paper_id"], "venue": paper.get("venue"), "year": paper.get("year"),
        "source": source, "model": backend.model, "prompt": prompt, "text": raw,
        "rating": parsed.rating, "confidence": parsed.confidence,
        "subscores": [{"name": k, "value": v} for k, v in parsed.subscores.items()],
        "recommendation": decision, "parse_status": status,
        "parse_reason": f"no {' and no '.join(missing)} found" if missing else None,
        "generation": generation, "perturbation": perturbation,
    }


__all__: Sequence[str] = ("COMPONENTS", "META_REVIEW_PROMPTS", "MetaReviewRun", "parse_decision", "review_input",
                          "run_meta_reviews")
