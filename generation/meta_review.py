"""LLM-as-meta-reviewer runs with exactly one input component perturbed (aspect-guided perturbation).

:func:`run_meta_reviews` gives a model each paper with its reviews and rebuttal(s) in one of the
three meta-review prompts (``meta_review_score``: score and decision only; ``meta_review_dimensions``:
dimension scores first; ``meta_review_template``: the venue's meta-review fields) and writes
MetaReview records (``praib.records.META_REVIEW_FEATURES``). With ``component`` and ``kind``, that
one component (the paper, the reviews or the rebuttals) is replaced by its perturbed version from
:func:`praib.perturb.registry.apply_perturbation`; the records then carry that component's
``perturbation`` and keep the paper's ``paper_id``, so they pair with the unperturbed run.

Runs lose nothing, like ``praib generate``: behind a ``CachedBackend`` a rerun sends only the
missing requests (an identical rerun none), and each finished batch is appended to
``<output>.partial.jsonl`` before the final file is written.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

COMPONENTS = ("paper", "reviews", "rebuttal")
META_REVIEW_PROMPTS = ("meta_review_score", "meta_review_dimensions", "meta_review_template")
_RECORD_KIND = {"paper": "paper", "reviews": "review", "rebuttal": "rebuttal"}

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

    def __str__(self) -> str:
        parsed = sum(1 for s in self.records["parse_status"] if s == "ok")
        cache = "" if self.n_from_cache is None else \
            f" ({self.n_from_cache} from cache, {self.n_backend_calls} generated now)"
        return (f"{len(self.records)} meta-reviews{cache}; {parsed} parsed (score and decision); "
                f"{self.n_skipped} paper(s) skipped")


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


def _perturbation_of(rows: list[dict], edited: set[str], id_field: str) -> dict | None:
    """The perturbation of the first record the edit really changed (a paper's reviews share one kind)."""
    return next((r["perturbation"] for r in rows if r[id_field] in edited), None)


def run_meta_reviews(papers: Any, reviews: Any, rebuttals: Any, backend: Any, prompt: Any, *,
                     component: str | None = None, kind: str | None = None, seed: int = 0, judge: Any = None,
                     output: str | Path | None = None, sampling: Any = None, token_budget: int | None = 50_000,
                     batch_size: int | None = None, source: str | None = None,
                     progress: bool = True) -> MetaReviewRun:
    """Meta-review every paper that has reviews; see the module docstring.

    ``papers``/``reviews``/``rebuttals``: PAPER/REVIEW/REBUTTAL_FEATURES Datasets (``rebuttals`` may be
    None); only unperturbed records are used as inputs. ``component`` (paper, reviews, rebuttal)
    and ``kind`` (a registry perturbation) perturb one input; ``seed`` and ``judge`` go to the
    perturbation. Papers whose perturbed component came back unchanged are skipped, so every record
    of a perturbed run really had one perturbed input.
    """
    from praib.llm.backends import GenerationRequest, SamplingConfig
    from praib.generation.papers import approximate_tokens, find_tokenizer, prepare_papers, tokenizer_counter
    from praib.generation.run import append_records, default_source, partial_path, prompt_scales, template_id
    from praib.records import coerce_record, records_to_dataset, save_records

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
    edited: set[str] = set()  # ids of the records the perturbation really changed
    id_field = None
    if component is not None:
        from praib.records import SCHEMAS
        from praib.records import records_to_dataset as to_dataset

        from praib.perturb.registry import apply_perturbation

        record_kind = _RECORD_KIND[component]
        id_field = SCHEMAS[record_kind][2]
        perturbed = apply_perturbation(kind, to_dataset(inputs[component], record_kind), seed=seed,
                                       judge=judge, progress=progress).to_list()
        # The registry returns records it could not edit unchanged (with a note); they do not count as perturbed.
        before = {row[id_field]: row for row in inputs[component]}
        for row in perturbed:
            original = before.get(row[id_field])
            if original is None or {**row, "perturbation": None} != original:
                edited.add(row[id_field])
        inputs[component] = perturbed
    papers_by_id = {p["paper_id"]: p for p in inputs["paper"]}
    reviews_of, rebuttals_of = _group(inputs["reviews"]), _group(inputs["rebuttal"])

    jobs, skipped = [], 0
    for paper_id, paper in papers_by_id.items():
        paper_reviews = [r for r in reviews_of.get(paper_id, []) if r.get("text")]
        perturbation = None
        if component is not None:
            touched = {"paper": [paper], "reviews": paper_reviews, "rebuttal": rebuttals_of.get(paper_id, [])}
            perturbation = _perturbation_of(touched[component], edited, id_field)
        if not paper_reviews or (component is not None and perturbation is None):
            skipped += 1
            continue
        jobs.append((paper, paper_reviews, rebuttals_of.get(paper_id, []), perturbation))

    tokenizer = find_tokenizer(backend)
    count_tokens = tokenizer_counter(tokenizer) if tokenizer is not None else approximate_tokens
    prepared = prepare_papers([paper["text"] or "" for paper, *_ in jobs], token_budget, count_tokens, False)
    template = template_id(prompt)
    requests, scales = [], []
    for (paper, paper_reviews, paper_rebuttals, _), text in zip(jobs, prepared):
        try:
            scales.append(prompt_scales(prompt, paper.get("venue"), paper.get("year")))
            messages = prompt.render(paper_text=text.text, venue=paper.get("venue"), year=paper.get("year"),
                                     reviews=[review_input(r) for r in paper_reviews],
                                     rebuttal=_rebuttal_input(paper_reviews, paper_rebuttals))
        except (ValueError, LookupError) as err:
            raise ValueError(f"paper {paper['paper_id']}: {err}") from None
        requests.append(GenerationRequest(messages=tuple((m["role"], m["content"]) for m in messages),
                                          sampling=sampling, template=prompt.spec.name))

    hits_before, misses_before = getattr(backend, "hits", None), getattr(backend, "misses", None)
    source = source or default_source(backend.model)
    partial = partial_path(Path(output)) if output is not None else None
    handle = None
    if partial is not None:
        partial.parent.mkdir(parents=True, exist_ok=True)
        handle = partial.open("a", encoding="utf-8")  # an interrupted run's records are kept
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(requests), unit="meta-review", desc=f"{source} / {prompt.spec.name}", file=sys.stderr)
    records = []
    size = batch_size or len(requests) or 1
    try:
        for start in range(0, len(requests), size):
            outputs = backend.generate(requests[start:start + size], progress=False)
            new = []
            for offset, raw in enumerate(outputs):
                index = start + offset
                paper, _, _, perturbation = jobs[index]
                new.append(coerce_record(_record(paper, raw, scales[index], prepared[index], perturbation,
                                                 backend=backend, source=source, prompt=prompt.spec.name,
                                                 template=template, sampling=sampling),
                                         "meta_review", f"meta-review of paper {paper['paper_id']}"))
            if handle is not None:
                append_records(handle, new)
            records.extend(new)
            if bar is not None:
                bar.update(len(new))
    finally:
        if bar is not None:
            bar.close()
        if handle is not None:
            handle.close()
    dataset = records_to_dataset(records, "meta_review")
    if output is not None:
        save_records(dataset, output)
        partial.unlink(missing_ok=True)
    from_cache = None if hits_before is None else backend.hits - hits_before
    calls = None if misses_before is None else backend.misses - misses_before
    return MetaReviewRun(dataset, from_cache, calls, skipped)


def _record(paper: dict, raw: str, scales: Any, prepared: Any, perturbation: dict | None, *, backend: Any,
            source: str, prompt: str, template: str, sampling: Any) -> dict:
    from praib.parsing import parse_review

    parsed = parse_review(raw, scales)
    decision = parse_decision(raw)
    missing = [name for name, value in (("overall score", parsed.rating), ("final decision", decision))
               if value is None]
    status = "ok" if not missing else ("failed" if len(missing) == 2 else "partial")
    generation = {
        "backend": backend.name, "model_revision": backend.model_revision, "template": template,
        "temperature": sampling.temperature, "top_p": sampling.top_p, "max_new_tokens": sampling.max_new_tokens,
        "seed": sampling.seed, "knowledge_cutoff": None, "paper_tokens": prepared.tokens,
        "paper_truncated": prepared.truncated, "appendix_removed": prepared.appendix_removed,
    }
    key = json.dumps([paper["paper_id"], source, prompt, generation, perturbation], sort_keys=True, default=str)
    return {
        "meta_review_id": hashlib.sha1(key.encode("utf-8")).hexdigest()[:16],
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
