"""Every perturbation of papers, reviews and rebuttals, by name, and :func:`apply_perturbation`.

The set follows the aspect-guided perturbation taxonomy (paper: contribution, soundness,
presentation; review: tone, factual correctness, conclusion; rebuttal: tone, presentation,
completeness), the soundness-neutral edits of the counterfactual-review study (voice, spelling,
language errors, layout) and prompt injection. Rule-based edits are exact under a seed; LLM-driven
ones go through a :class:`praib.llm.judge.Judge`'s backend and its call cache.
"""

from __future__ import annotations

import inspect
import logging
import random
from dataclasses import dataclass
from typing import Callable

from praib.records import NEUTRAL, REVIEW_SECTIONS

from praib.perturb import injection, reviews, rewrite, surface
from praib.perturb.text import aspect_section_types
from praib.perturb.validation import MAX_TRIES

logger = logging.getLogger(__name__)

_POSITIONAL = ("row", "rng", "rows", "rngs", "judge", "progress", "kind", "tally")
_ID_FIELD = {"paper": "paper_id", "review": "review_id", "rebuttal": "rebuttal_id"}


@dataclass(frozen=True)
class Perturbation:
    name: str
    component: str   # the record kind it edits: paper, review or rebuttal
    category: str
    needs_llm: bool
    summary: str
    # rule-based: (row, rng, **options) -> (row, description); LLM-driven: (rows, rngs, judge, progress, kind,
    # tally, **options), its edits checked against validation.EDIT_BOUNDS[kind] and counted in the tally
    run: Callable


def _llm_sections(template: str, aspect: str | None):
    def run(rows, rngs, judge, progress, kind, tally, template_file=None, max_tries: int = MAX_TRIES):
        types = aspect_section_types(aspect) if aspect else None
        return rewrite.edit_paper_sections(rows, judge, template, types, progress=progress, override=template_file,
                                           kind=kind, max_tries=max_tries, tally=tally)
    return run


def _llm_whole(template: str, fields: tuple[str, ...] = ()):
    def run(rows, rngs, judge, progress, kind, tally, template_file=None, max_tries: int = MAX_TRIES):
        return rewrite.edit_whole_texts(rows, judge, template, progress=progress, override=template_file, fields=fields,
                                        kind=kind, max_tries=max_tries, tally=tally)
    return run


def _voice(rows, rngs, judge, progress, kind, tally, template_file=None, fraction: float = 0.4,
           max_tries: int = MAX_TRIES):
    return rewrite.rewrite_voice(rows, rngs, judge, fraction=fraction, progress=progress, override=template_file,
                                 max_tries=max_tries, tally=tally)


def _injection(placement: str):
    def run(row, rng, template_file=None):
        return injection.inject(row, rng, placement, template_file)
    return run


_ALL = [
    # Paper: soundness-neutral surface edits (counterfactual-review study, section 4).
    Perturbation("spelling", "paper", NEUTRAL, False,
                 "American to British spelling in 40% of the paragraphs (word list in data/american_british.tsv)",
                 surface.spelling),
    Perturbation("whitespace", "paper", NEUTRAL, False,
                 "10% of the spaces between words widened to 2-3 spaces", surface.whitespace),
    Perturbation("layout", "paper", NEUTRAL, False,
                 "figures and tables with their captions moved into a closing Figures and Tables section, line "
                 "breaks between blocks multiplied by 1-3 (the UKP release's layout variant)", surface.layout),
    Perturbation("language-errors", "paper", NEUTRAL, False,
                 "two minor grammar slips in 20% of the paragraphs (rules in data/language_errors.tsv)",
                 surface.language_errors),
    Perturbation("voice", "paper", NEUTRAL, True,
                 "40% of the paragraphs rewritten between active and passive voice by the LLM", _voice),
    # Paper: aspect-guided degradations.
    Perturbation("typos", "paper", "presentation", False,
                 "two typos (swapped, dropped or doubled letters) in 20% of the paragraphs", surface.typos),
    Perturbation("presentation", "paper", "presentation", True,
                 "the LLM adds misspellings, disagreements and awkward run-on sentences to every section",
                 _llm_sections("paper_presentation", None)),
    Perturbation("contribution", "paper", "contribution", True,
                 "the LLM inflates novelty, drops citations of earlier work and adds unsupported comparisons in the "
                 "contribution sections, in one edit (the study's contribution perturbation)",
                 _llm_sections("paper_contribution", "contribution")),
    # The contribution perturbation's methods one at a time, as finer options.
    Perturbation("overclaim-novelty", "paper", "contribution", True,
                 "the LLM inflates novelty claims in the contribution sections (introduction, related work, ...)",
                 _llm_sections("paper_overclaim_novelty", "contribution")),
    Perturbation("drop-citations", "paper", "contribution", True,
                 "the LLM removes citations of close work from the contribution sections",
                 _llm_sections("paper_drop_citations", "contribution")),
    Perturbation("remove-details", "paper", "soundness", True,
                 "the LLM removes implementation and validation details from the method and experiment sections",
                 _llm_sections("paper_remove_details", "soundness")),
    # Paper: prompt injection.
    Perturbation("injection-white-text", "paper", "injection", False,
                 "hidden white-text instruction asking an LLM reviewer for the top rating",
                 _injection("white-text")),
    Perturbation("injection-comment", "paper", "injection", False,
                 "HTML-comment instruction asking an LLM reviewer for the top rating", _injection("comment")),
    Perturbation("injection-appendix", "paper", "injection", False,
                 "appendix instruction asking an LLM reviewer for the top rating", _injection("appendix")),
    # Review.
    Perturbation("review-tone", "review", "tone", True,
                 "the LLM makes the review dismissive and sarcastic (the study's review tone perturbation)",
                 _llm_whole("review_tone", REVIEW_SECTIONS)),
    # The review tone perturbation split in its two registers, as finer options.
    Perturbation("tone-dismissive", "review", "tone", True,
                 "the LLM makes the review harsh and dismissive", _llm_whole("review_tone_dismissive", REVIEW_SECTIONS)),
    Perturbation("tone-sarcastic", "review", "tone", True,
                 "the LLM makes the review sarcastic", _llm_whole("review_tone_sarcastic", REVIEW_SECTIONS)),
    Perturbation("false-claims", "review", "factual-correctness", False,
                 "three false claims from the paper's bucket (--claims, or generated by the LLM) added to Weaknesses",
                 reviews.false_claims),
    Perturbation("rating-flip", "review", "conclusion", False,
                 "an accept-leaning rating turned into strong reject (field and score lines)", reviews.rating_flip),
    # Rebuttal.
    Perturbation("rebuttal-tone", "rebuttal", "tone", True,
                 "the LLM makes the rebuttal dismissive and sarcastic", _llm_whole("rebuttal_tone")),
    Perturbation("rebuttal-presentation", "rebuttal", "presentation", True,
                 "the LLM adds misspellings and shuffles the rebuttal's statements", _llm_whole("rebuttal_presentation")),
    Perturbation("rebuttal-completeness", "rebuttal", "completeness", True,
                 "the LLM replaces answers to major concerns with vague promises", _llm_whole("rebuttal_completeness")),
]
_BY_NAME = {p.name: p for p in _ALL}


def list_perturbations() -> list[Perturbation]:
    return list(_ALL)


def get_perturbation(kind: str) -> Perturbation:
    if kind not in _BY_NAME:
        raise ValueError(f"unknown perturbation {kind!r}; known: {', '.join(_BY_NAME)}")
    return _BY_NAME[kind]


def record_rng(seed: int, kind: str, record_id: str) -> random.Random:
    """The random stream of one record: independent of the other records and of their order."""
    return random.Random(f"{seed}/{kind}/{record_id}")


def apply_perturbation(kind: str, records, *, seed: int = 0, judge=None, progress: bool = False, tally=None,
                       **options):
    """``records`` (a Dataset of the kind's component) with the edit ``kind`` applied to each.

    Every returned record keeps its ``paper_id`` (and id) and gets the ``perturbation`` struct:
    kind, category, component, a description of what changed in it, and the seed. Records the edit
    does not apply to (e.g. a review that is not accept-leaning, for ``rating-flip``) are returned
    unchanged with a description that says why. Records the edit could not be made for (the LLM gave
    no answer for them: see ``judge.failures``; no false claims for their paper) are left out, with a
    warning that counts them. LLM-driven kinds need ``judge``; each of their edits is checked
    (:mod:`praib.perturb.validation`), a rejected one is left undone and said in the description, and
    ``tally`` (an :class:`~praib.perturb.validation.EditTally`) counts them. Options:
    ``fraction``/``per_paragraph``/``rate``/``widths`` for the surface edits, ``claims`` (paper id ->
    list of claims) for ``false-claims``, ``template_file`` (a .jinja path) for the LLM and
    injection kinds, ``max_tries`` (answers asked per edit, default 2) for the LLM kinds.
    """
    from praib.records import records_to_dataset
    from praib.records.progress import progress_bar

    perturbation = get_perturbation(kind)
    component = perturbation.component
    if set(records.column_names) != set(_component_columns(component)):
        found = next((k for k in _ID_FIELD if set(records.column_names) == set(_component_columns(k))), "unknown")
        raise ValueError(f"`{kind}` edits {component} records; these are {found} records")
    if perturbation.needs_llm and judge is None:
        raise ValueError(f"`{kind}` is rewritten by an LLM: pass a judge (praib.llm.judge.Judge; "
                         "on the command line --judge MODEL)")
    accepted = inspect.signature(perturbation.run).parameters
    allowed = [name for name in accepted if name not in _POSITIONAL]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"`{kind}` takes no option {', '.join(unknown)}; its options: {', '.join(allowed) or 'none'}")
    rows = records.to_list()
    rngs = [record_rng(seed, kind, row[_ID_FIELD[component]] or row["paper_id"]) for row in rows]
    if perturbation.needs_llm:
        edited = perturbation.run(rows, rngs, judge, progress, kind, tally, **options)
    else:
        edited = [perturbation.run(row, rng, **options)
                  for row, rng in progress_bar(list(zip(rows, rngs)), desc=kind, unit="record", enabled=progress)]
    out, left_out = [], []
    for row, (new, description) in zip(rows, edited):
        if new is None:
            left_out.append(f"{row[_ID_FIELD[component]] or row['paper_id']} ({description})")
            continue
        out.append({**new, "perturbation": {"kind": kind, "category": perturbation.category, "component": component,
                                            "description": description, "seed": seed}})
    if left_out:
        logger.warning("%s: %d of %d %s records left out: %s%s", kind, len(left_out), len(rows), component,
                       "; ".join(left_out[:3]), "; ..." if len(left_out) > 3 else "")
    return records_to_dataset(out, component)


def _component_columns(component: str) -> list[str]:
    from praib.records import SCHEMAS

    return list(SCHEMAS[component][0])
